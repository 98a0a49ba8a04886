#!/usr/bin/env bash
# Test of the gudcanny tool (tools/cli/gudcanny.cpp), registered as CTest gudcanny_tool (label unit) by
# tests/tools/CMakeLists.txt. usage: gudcanny_test.sh GUDCANNY GUDCANNY_REF png|nopng cuda|nocuda
# With cuda (a CUDA build): --backend cuda must give the CPU's bytes where a GPU is usable, else exit 2
# with the CUDA error (the machine has no GPU).
# Images are generated here (python3); gudcanny_ref (tests/tools/gudcanny_ref.cpp) calls detect_edges_ref
# directly, so the tool's edge maps are compared with the library's own.
set -u
TOOL=$1 REF=$2 PNG=${3:-nopng} CUDA=${4:-nocuda}
. "$(dirname "$0")/checks.sh"

python3 - "$T" <<'PY'
import struct, sys, zlib
t = sys.argv[1]
def pgm(name, w, h, px, header=None):
    with open(f"{t}/{name}", "wb") as f:
        f.write(header if header is not None else f"P5\n{w} {h}\n255\n".encode())
        f.write(bytes(px))
# vertical step: columns < 20 dark, >= 20 bright
W, H = 64, 24
step = [40 if x < 20 else 200 for y in range(H) for x in range(W)]
pgm("step.pgm", W, H, step)
# 70 x 50 (strips 32, 32, 6): two discs, a ramp and LCG noise
W2, H2, s, px = 70, 50, 12345, []
for y in range(H2):
    for x in range(W2):
        s = (s * 1103515245 + 12345) & 0x7fffffff
        v = 30 + x + ((s >> 16) % 17)
        if (x - 20) ** 2 + (y - 25) ** 2 < 144: v = 190 + ((s >> 16) % 9)
        if (x - 55) ** 2 + (y - 15) ** 2 < 64: v = 10
        px.append(min(255, v))
pgm("scene.pgm", W2, H2, px)
pgm("scene_comments.pgm", W2, H2, px, b"P5\n# a comment\n70 # width\n50\n# maxval next\n255\n")
pgm("one.pgm", 1, 1, [77])
pgm("truncated.pgm", W, H, step[:100])
pgm("truncated_header.pgm", 0, 0, [], b"P5\n64 24\n")
pgm("maxval16.pgm", W, H, step * 2, f"P5\n{W} {H}\n65535\n".encode())
pgm("zero_width.pgm", 0, 0, [], b"P5\n0 24\n255\n")
pgm("ascii.pgm", 0, 0, [], ("P2\n2 2\n255\n0 255\n255 0\n").encode())
pgm("garbage.pgm", 0, 0, [], b"hello world\n")
pgm("empty.pgm", 0, 0, [], b"")
# y4m, 4:2:0, two frames: frame 0 flat, frame 1 the step image
with open(f"{t}/two.y4m", "wb") as f:
    f.write(f"YUV4MPEG2 W{W} H{H} F25:1 Ip A1:1 C420jpeg\n".encode())
    chroma = bytes([128]) * (2 * (W // 2) * (H // 2))
    f.write(b"FRAME\n" + bytes([90]) * (W * H) + chroma)
    f.write(b"FRAME\n" + bytes(step) + chroma)
with open(f"{t}/short.y4m", "wb") as f:
    f.write(f"YUV4MPEG2 W{W} H{H} C420jpeg\nFRAME\n".encode() + bytes(100))
# PNG: 8-bit gray (the step image), 16-bit gray, RGB
def png(name, w, h, depth, ctype, rows):
    def chunk(k, d): return struct.pack(">I", len(d)) + k + d + struct.pack(">I", zlib.crc32(k + d))
    raw = b"".join(b"\0" + r for r in rows)
    with open(f"{t}/{name}", "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, ctype, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
png("step.png", W, H, 8, 0, [bytes(step[y * W:(y + 1) * W]) for y in range(H)])
png("step16.png", W, H, 16, 0, [b"".join(struct.pack(">H", v * 257) for v in step[y * W:(y + 1) * W]) for y in range(H)])
png("rgb.png", W, H, 8, 2, [bytes(v for v in step[y * W:(y + 1) * W] for _ in range(3)) for y in range(H)])
with open(f"{t}/cands_good.txt", "w") as f:
    f.write("# low high\n0.02 0.10\n\n0.05 0.20\n0.10 0.25\n0.20 1.00\n")
with open(f"{t}/cands_bad.txt", "w") as f:
    f.write("0.02 0.10\n0.05 0.2\n")
with open(f"{t}/cands_order.txt", "w") as f:
    f.write("0.02 0.10\n# c\n0.20 0.05\n")
PY

# pgm_check FILE W H: a P5 file of W x H with values 0/255 only; prints the number of 255 pixels
pgm_check() {
  python3 - "$@" <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
head = d.split(b"\n", 3)
assert head[0] == b"P5" and head[1] == f"{sys.argv[2]} {sys.argv[3]}".encode() and head[2] == b"255", head[:3]
px = head[3]
assert len(px) == int(sys.argv[2]) * int(sys.argv[3]), len(px)
assert set(px) <= {0, 255}, set(px)
print(px.count(255))
PY
}

# ---- usage and input errors
expect 0 "--help"                     -- "$TOOL" --help
grep -q -- "--candidates" "$T/out" && grep -q "exit codes" "$T/out" && ok "--help documents options and exit codes" || bad "--help text"
expect 1 "no arguments"               -- "$TOOL"
expect 1 "one argument"               -- "$TOOL" "$T/step.pgm"
expect 1 "unknown option"             -- "$TOOL" --bogus "$T/step.pgm" "$T/o.pgm"
expect 1 "--sigma 3"                  -- "$TOOL" --sigma 3 "$T/step.pgm" "$T/o.pgm"
expect 1 "--sigma abc"                -- "$TOOL" --sigma abc "$T/step.pgm" "$T/o.pgm"
expect 1 "--step 0.02"                -- "$TOOL" --step 0.02 "$T/step.pgm" "$T/o.pgm"
expect 1 "--fixed 0.3,0.2"            -- "$TOOL" --fixed 0.3,0.2 "$T/step.pgm" "$T/o.pgm"
expect 1 "--fixed 0.1,0.2 (one decimal)" -- "$TOOL" --fixed 0.1,0.2 "$T/step.pgm" "$T/o.pgm"
expect 1 "--backend opencl"           -- "$TOOL" --backend opencl "$T/step.pgm" "$T/o.pgm"
expect 1 "--threads 257"              -- "$TOOL" --threads 257 "$T/step.pgm" "$T/o.pgm"
expect 1 "--threads -1"               -- "$TOOL" --threads -1 "$T/step.pgm" "$T/o.pgm"
expect 1 "--threads two"              -- "$TOOL" --threads two "$T/step.pgm" "$T/o.pgm"
if [ "$CUDA" = cuda ]; then
  for mode in "" "--frame-level" "--step 0.01" "--fixed 0.10,0.20" "--sigma 2.0"; do
    # shellcheck disable=SC2086
    "$TOOL" -q $mode --json "$T/cpu.json" "$T/step.pgm" "$T/cpu.pgm" 2>"$T/err" || bad "cpu run ($mode)"
    # shellcheck disable=SC2086
    "$TOOL" -q --backend cuda $mode --json "$T/cuda.json" "$T/step.pgm" "$T/cuda.pgm" 2>"$T/err"; rc=$?
    if [ "$rc" = 0 ]; then
      cmp -s "$T/cpu.pgm" "$T/cuda.pgm" && ok "cuda edge map == cpu ($mode)" || bad "cuda edge map differs ($mode)"
      # the JSON differs only in the backend line
      diff <(grep -v '"backend"' "$T/cpu.json") <(grep -v '"backend"' "$T/cuda.json") >/dev/null &&
        ok "cuda thresholds == cpu ($mode)" || bad "cuda JSON differs ($mode)"
    elif [ "$rc" = 2 ] && grep -q -- "--backend cuda:" "$T/err"; then
      ok "cuda unusable here, exit 2 with the reason: $(head -1 "$T/err")"
      break
    else
      bad "--backend cuda ($mode): exit $rc: $(cat "$T/err")"
    fi
  done
else
  expect 2 "--backend cuda (no CUDA in the build)" -- "$TOOL" --backend cuda "$T/step.pgm" "$T/o.pgm"
  stderr_has "no CUDA" "cuda message says the build has no CUDA"
fi
refused 2 "$TOOL" @ "$T/o.pgm" <<'EOF'
nonexistent.pgm      | missing file
truncated.pgm        | truncated PGM raster | truncated
truncated_header.pgm | truncated PGM header
ascii.pgm            | P2 ascii             | P2
maxval16.pgm         | maxval 65535         | 16-bit
zero_width.pgm       | zero width
garbage.pgm          | garbage
empty.pgm            | empty file
EOF
expect 2 "unwritable OUT"             -- "$TOOL" -q "$T/step.pgm" "$T/no/such/dir/o.pgm"
expect 2 "candidates: bad line"       -- "$TOOL" --candidates "$T/cands_bad.txt" "$T/step.pgm" "$T/o.pgm"
stderr_has "cands_bad.txt:2:" "bad candidate line number reported"
expect 2 "candidates: low >= high"    -- "$TOOL" --candidates "$T/cands_order.txt" "$T/step.pgm" "$T/o.pgm"
stderr_has "cands_order.txt:3:" "low>=high line number reported"
expect 2 "candidates: missing file"   -- "$TOOL" --candidates "$T/nonexistent.txt" "$T/step.pgm" "$T/o.pgm"
expect 1 "--frame on PGM input"       -- "$TOOL" --frame 1 "$T/step.pgm" "$T/o.pgm"

# ---- the step edge: exactly one edge column, all rows
expect 0 "step.pgm"                   -- "$TOOL" --json "$T/step.json" "$T/step.pgm" "$T/step_out.pgm"
stderr_has "edge pixels" "summary line on stderr"
n=$(pgm_check "$T/step_out.pgm" 64 24) && ok "step output is a 64x24 0/255 PGM" || bad "step output not a valid PGM"
python3 - "$T/step_out.pgm" <<'PY' && ok "vertical step gives exactly one full edge column" || bad "step edge columns"
import sys
d = open(sys.argv[1], "rb").read().split(b"\n", 3)[3]
cols = {i % 64 for i, v in enumerate(d) if v}
assert len(cols) == 1 and sum(1 for v in d if v) == 24, (cols, sum(1 for v in d if v))
PY
expect 0 "quiet run"                  -- "$TOOL" -q "$T/step.pgm" "$T/q.pgm"
[ ! -s "$T/err" ] && [ ! -s "$T/out" ] && ok "-q prints nothing" || bad "-q printed something"

# ---- equality with the library (gudcanny_ref)
for args in "strip 3 1.0" "strip 1 1.0" "frame 3 1.0" "frame 1 1.5" "strip 3 0.5" "fixed 3 2.0"; do
  set -- $args
  opts=(--sigma "$3" --step "0.0$2")
  [ "$1" = frame ] && opts+=(--frame-level)
  [ "$1" = fixed ] && opts=(--sigma "$3" --fixed 0.10,0.20)
  for img in scene step one; do
    for threads in 0 1 3; do  # the cpu backend's thread count changes nothing
      "$REF" "$1" "$2" "$3" "$T/$img.pgm" "$T/ref.pgm" &&
        "$TOOL" -q --threads "$threads" "${opts[@]}" "$T/$img.pgm" "$T/tool.pgm" &&
        cmp -s "$T/ref.pgm" "$T/tool.pgm" && ok "$img, $1 step 0.0$2 sigma $3, --threads $threads equals detect_edges_ref" ||
        bad "$img, $1 step 0.0$2 sigma $3, --threads $threads differs from detect_edges_ref"
    done
  done
done
"$TOOL" -q "$T/scene_comments.pgm" "$T/c.pgm" && "$TOOL" -q "$T/scene.pgm" "$T/s.pgm" && cmp -s "$T/c.pgm" "$T/s.pgm" &&
  ok "PGM header comments" || bad "PGM header comments"
n=$(pgm_check "$T/s.pgm" 70 50) && [ "$n" -gt 0 ] && ok "scene output is a 70x50 0/255 PGM with $n edge pixels" || bad "scene output"

# ---- JSON
expect 0 "scene --json"               -- "$TOOL" -q --json "$T/scene.json" "$T/scene.pgm" "$T/s.pgm"
python3 -m json.tool "$T/scene.json" >/dev/null && ok "JSON is valid (json.tool)" || bad "JSON invalid"
python3 - "$T/scene.json" "$n" <<'PY' && ok "JSON: 3 strips (strip_count(70)), 36 candidates, edge count" || bad "JSON content"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["width"] == 70 and j["height"] == 50 and j["mode"] == "strip" and j["sigma"] == 1.0
assert len(j["strips"]) == 3 and [s["x1"] for s in j["strips"]] == [32, 64, 70]
assert j["candidates"]["count"] == 36 == len(j["candidates"]["pairs"])
assert all(0 < s["low"] <= s["high"] <= 1 and isinstance(s["found"], bool) for s in j["strips"])
assert j["edge_pixels"] == int(sys.argv[2])
PY
"$TOOL" -q --json - "$T/scene.pgm" "$T/s.pgm" > "$T/stdout.json" && python3 -m json.tool "$T/stdout.json" >/dev/null &&
  ok "--json - writes valid JSON to stdout" || bad "--json -"
expect 0 "--frame-level --json"       -- "$TOOL" -q --frame-level --step 0.01 --json "$T/frame.json" "$T/scene.pgm" "$T/f.pgm"
python3 - "$T/frame.json" <<'PY' && ok "--frame-level: equal pairs in every strip" || bad "--frame-level pairs"
import json, sys
j = json.load(open(sys.argv[1]))
p = {(s["low"], s["high"], s["found"]) for s in j["strips"]}
assert j["mode"] == "frame" and len(j["strips"]) == 3 and len(p) == 1 and j["candidates"]["count"] == 300, p
PY
expect 0 "--fixed --json"             -- "$TOOL" -q --fixed 0.05,0.25 --json "$T/fixed.json" "$T/scene.pgm" "$T/x.pgm"
python3 - "$T/fixed.json" <<'PY' && ok "--fixed: the pair in every strip, candidates null" || bad "--fixed JSON"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["mode"] == "fixed" and j["candidates"] is None
assert all((s["low"], s["high"]) == (0.05, 0.25) for s in j["strips"])
PY
expect 0 "--candidates file"          -- "$TOOL" -q --candidates "$T/cands_good.txt" --json "$T/cand.json" "$T/scene.pgm" "$T/x.pgm"
python3 - "$T/cand.json" <<'PY' && ok "--candidates: 4 pairs in the JSON" || bad "--candidates JSON"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["candidates"]["pairs"] == [[0.02, 0.10], [0.05, 0.20], [0.10, 0.25], [0.20, 1.00]], j["candidates"]
PY

# ---- y4m (luma of frame 0 or --frame N)
"$TOOL" -q --frame 1 "$T/two.y4m" "$T/y1.pgm" && cmp -s "$T/y1.pgm" "$T/step_out.pgm" &&
  ok "y4m --frame 1 equals the PGM of the same luma" || bad "y4m --frame 1"
"$TOOL" -q "$T/two.y4m" "$T/y0.pgm" && [ "$(pgm_check "$T/y0.pgm" 64 24)" = 0 ] &&
  ok "y4m frame 0 (flat) has no edges" || bad "y4m frame 0"
expect 2 "y4m --frame 5 (2 frames)"   -- "$TOOL" --frame 5 "$T/two.y4m" "$T/o.pgm"
stderr_has "out of range" "--frame out of range message"
if command -v xz >/dev/null; then
  xz -k "$T/two.y4m" && "$TOOL" -q --frame 1 "$T/two.y4m.xz" "$T/yx.pgm" && cmp -s "$T/yx.pgm" "$T/step_out.pgm" &&
    ok "y4m.xz --frame 1 equals the PGM" || bad "y4m.xz --frame 1"
else
  echo "skip y4m.xz (no xz)"
fi
expect 2 "truncated y4m"              -- "$TOOL" "$T/short.y4m" "$T/o.pgm"

# ---- PNG
if [ "$PNG" = png ]; then
  "$TOOL" -q "$T/step.png" "$T/p.pgm" && cmp -s "$T/p.pgm" "$T/step_out.pgm" &&
    ok "8-bit gray PNG equals the PGM" || bad "8-bit gray PNG"
  expect 2 "16-bit PNG"               -- "$TOOL" "$T/step16.png" "$T/o.pgm"
  expect 2 "RGB PNG"                  -- "$TOOL" "$T/rgb.png" "$T/o.pgm"
else
  expect 2 "PNG without libpng"       -- "$TOOL" "$T/step.png" "$T/o.pgm"
fi

finish
