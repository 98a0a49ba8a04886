#!/usr/bin/env bash
# Test of canny-eval (tools/cli/canny_eval.cpp), registered as CTest canny_eval_tool (label unit) by
# tests/tools/CMakeLists.txt. usage: canny_eval_test.sh CANNY_EVAL
# Tiny hand-made maps with known precision / recall / MSE (exact match, 1-px shift inside the tolerance, shift
# outside it, the one-to-one rule, an instance that needs an augmenting path, several annotations, empty
# maps), every input format, every error exit code, and random maps against a brute-force matching (python3,
# standard library only).
set -u
TOOL=$1
. "$(dirname "$0")/checks.sh"

# result DESCRIPTION "P R F MSE" ARGS...: run canny-eval --json - and compare P, R, F, MSE (6 decimals)
result() {
  local what=$1 want=$2; shift 2
  if ! "$TOOL" --json - "$@" >"$T/res.json" 2>"$T/err"; then bad "$what: exit $?: $(cat "$T/err")"; return; fi
  local got
  got=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print("%.6f %.6f %.6f %.6f" % (j["precision"], j["recall"], j["f"], j["mse"]))' "$T/res.json")
  local norm
  norm=$(python3 -c 'import sys; print(" ".join("%.6f" % eval(v) for v in sys.argv[1].split()))' "$want")
  if [ "$got" = "$norm" ]; then ok "$what: P R F MSE = $got"; else bad "$what: got $got, want $norm"; fi
}

# Maps are written from lists of (x, y) points: pgm NAME W H POINTS (P5 0/255), pbm NAME W H POINTS (P4).
python3 - "$T" <<'PY'
import sys
t = sys.argv[1]
def raster(w, h, pts):
    px = bytearray(w * h)
    for x, y in pts: px[y * w + x] = 1
    return px
def pgm(name, w, h, pts, maxval=255, header=None):
    px = raster(w, h, pts)
    with open(f"{t}/{name}", "wb") as f:
        f.write(header if header is not None else f"P5\n{w} {h}\n{maxval}\n".encode())
        if maxval > 255: f.write(b"".join((b"\x01\x02" if v else b"\0\0") for v in px))
        else: f.write(bytes(maxval if v else 0 for v in px))
def pbm(name, w, h, pts):
    px = raster(w, h, pts)
    rb = (w + 7) // 8
    out = bytearray()
    for y in range(h):
        row = bytearray(rb)
        for x in range(w):
            if px[y * w + x]: row[x >> 3] |= 0x80 >> (x & 7)
        out += row
    with open(f"{t}/{name}", "wb") as f:
        f.write(f"P4\n# comment\n{w} {h}\n".encode() + bytes(out))
def raw(name, data):
    with open(f"{t}/{name}", "wb") as f: f.write(data)
W, H = 20, 12
line = [(x, 5) for x in range(3, 13)]                       # 10 px horizontal line, row 5
pgm("line.pgm", W, H, line); pbm("line.pbm", W, H, line)
pgm("line_down1.pgm", W, H, [(x, 6) for x in range(3, 13)])  # shifted by 1 row
pgm("line_down3.pgm", W, H, [(x, 8) for x in range(3, 13)])  # shifted by 3 rows
pbm("big.pbm", 200, 120, [(x, 60) for x in range(50, 100)])
pgm("big_down1.pgm", 200, 120, [(x, 61) for x in range(50, 100)])
pgm("big_down2.pgm", 200, 120, [(x, 62) for x in range(50, 100)])
pgm("empty.pgm", W, H, []); pbm("empty.pbm", W, H, [])
pbm("dot.pbm", W, H, [(10, 5)])
pgm("two_by_dot.pgm", W, H, [(9, 5), (11, 5)])               # two detections next to one boundary pixel
# augmenting path: greedy (closest first) pairs d1-b1 and strands d2; the maximum matching is 2
pgm("aug_d.pgm", W, H, [(2, 1), (4, 0)]); pbm("aug_b.pbm", W, H, [(2, 0), (2, 3)])
# several annotations
pbm("gtA.pbm", W, H, [(2, 2)]); pbm("gtB.pbm", W, H, [(15, 9)]); pbm("gtAB.pbm", W, H, [(2, 2), (15, 9)])
pgm("detA.pgm", W, H, [(2, 2)]); pgm("detAB.pgm", W, H, [(2, 2), (15, 9)])
# MSE: 4x4, edges {(0,0),(1,1)}, GT {(1,1),(2,2),(3,3)}: 3 of 16 pixels differ
pgm("m_e.pgm", 4, 4, [(0, 0), (1, 1)]); pbm("m_g.pbm", 4, 4, [(1, 1), (2, 2), (3, 3)]); pbm("m_g2.pbm", 4, 4, [(0, 0), (1, 1)])
# a diagonal neighbour at distance sqrt(2) in a 10x10 image (diagonal 14.142)
pgm("d_e.pgm", 10, 10, [(4, 4)]); pbm("d_g.pbm", 10, 10, [(5, 5)])
# formats: the line as P1 (with and without spaces), P2, 16-bit P5, P4 of odd width
p1 = "\n".join(" ".join("1" if (x, y) in line else "0" for x in range(W)) for y in range(H))
raw("line_p1.pbm", f"P1\n# c\n{W} {H}\n{p1}\n".encode())
p1c = "".join("1" if (x, y) in line else "0" for y in range(H) for x in range(W))
raw("line_p1c.pbm", f"P1 {W} {H}\n{p1c}".encode())
p2 = "\n".join(" ".join("7" if (x, y) in line else "0" for x in range(W)) for y in range(H))
raw("line_p2.pgm", f"P2\n{W} {H}\n7\n{p2}\n".encode())
pgm("line16.pgm", W, H, line, maxval=1000)
pbm("odd.pbm", 13, 3, [(12, 0), (0, 2), (8, 1)]); pgm("odd.pgm", 13, 3, [(12, 0), (0, 2), (8, 1)])
# errors
pgm("small.pgm", 10, 12, [])
raw("trunc.pgm", b"P5\n20 12\n255\n" + bytes(100))
raw("trunc.pbm", b"P4\n20 12\n" + bytes(20))
raw("trunc_head.pgm", b"P5\n20 ")
raw("ppm.ppm", b"P6\n2 2\n255\n" + bytes(12))
raw("garbage.pgm", b"hello")
raw("emptyfile.pgm", b"")
raw("p1bad.pbm", b"P1\n2 2\n0 1\n2 0\n")
raw("maxval0.pgm", b"P5\n2 2\n0\n" + bytes(4))
raw("above.pgm", b"P5\n2 2\n1\n\x00\x02\x00\x00")
raw("zero.pgm", b"P5\n0 2\n255\n")
PY

# ---- usage and errors
expect 0 "--help"                        -- "$TOOL" --help
grep -q -- "--tolerance" "$T/out" && grep -q "exit codes" "$T/out" && grep -q "MSE" "$T/out" &&
  ok "--help documents options, MSE and exit codes" || bad "--help text"
expect 1 "no arguments"                  -- "$TOOL"
expect 1 "edge map only"                 -- "$TOOL" "$T/line.pgm"
expect 1 "unknown option"                -- "$TOOL" --bogus "$T/line.pgm" "$T/line.pbm"
expect 1 "--tolerance abc"               -- "$TOOL" --tolerance abc "$T/line.pgm" "$T/line.pbm"
expect 1 "--tolerance 1 (fraction >= 1)" -- "$TOOL" --tolerance 1 "$T/line.pgm" "$T/line.pbm"
expect 1 "--tolerance -1px"              -- "$TOOL" --tolerance -1px "$T/line.pgm" "$T/line.pbm"
expect 1 "--tolerance 500px"             -- "$TOOL" --tolerance 500px "$T/line.pgm" "$T/line.pbm"
expect 1 "--tolerance without value"     -- "$TOOL" "$T/line.pgm" "$T/line.pbm" --tolerance
expect 2 "missing GT file"               -- "$TOOL" "$T/line.pgm" "$T/nonexistent.pbm"
expect 2 "size mismatch"                 -- "$TOOL" "$T/line.pgm" "$T/line.pbm" "$T/small.pgm"
stderr_has "10x12 differs" "size mismatch message names both sizes"
expect 2 "truncated P4 raster"           -- "$TOOL" "$T/line.pgm" "$T/trunc.pbm"
# A bad edge file against a good GT file.
refused 2 "$TOOL" @ "$T/line.pbm" <<'EOF'
nonexistent.pgm | missing edge file
trunc.pgm       | truncated P5 raster | truncated
trunc_head.pgm  | truncated header
ppm.ppm         | PPM
garbage.pgm     | garbage
emptyfile.pgm   | empty file
EOF
# A bad file as both.
refused 2 "$TOOL" @ @ <<'EOF'
p1bad.pbm   | P1 with a '2'
maxval0.pgm | maxval 0
above.pgm   | value above maxval
zero.pgm    | zero width
EOF
expect 2 "unwritable JSON"               -- "$TOOL" --json "$T/no/such/dir/x.json" "$T/line.pgm" "$T/line.pbm"

# ---- known answers (P R F MSE)
n=$((20 * 12))
result "exact match"                     "1 1 1 0"                       "$T/line.pgm" "$T/line.pbm"
result "1-px shift, tolerance 1px"       "1 1 1 20/$n"                   --tolerance 1px "$T/line_down1.pgm" "$T/line.pbm"
result "1-px shift, tolerance 0px"       "0 0 0 20/$n"                   --tolerance 0px "$T/line_down1.pgm" "$T/line.pbm"
result "1-px shift, default tolerance (0.17 px at 20x12)" "0 0 0 20/$n"  "$T/line_down1.pgm" "$T/line.pbm"
result "200x120, 1-px shift, default tolerance (1.75 px)" "1 1 1 100/24000" "$T/big_down1.pgm" "$T/big.pbm"
result "200x120, 2-px shift, default tolerance (1.75 px)" "0 0 0 100/24000" "$T/big_down2.pgm" "$T/big.pbm"
result "3-px shift, tolerance 2px"       "0 0 0 20/$n"                   --tolerance 2px "$T/line_down3.pgm" "$T/line.pbm"
result "3-px shift, tolerance 3px"       "1 1 1 20/$n"                   --tolerance 3px "$T/line_down3.pgm" "$T/line.pbm"
result "one-to-one: 2 detections, 1 boundary pixel" "1/2 1 2/3 3/$n"    --tolerance 1px "$T/two_by_dot.pgm" "$T/dot.pbm"
result "augmenting path needed"          "1 1 1 4/$n"                    --tolerance 2px "$T/aug_d.pgm" "$T/aug_b.pbm"
result "empty edge map"                  "0 0 0 10/$n"                   "$T/empty.pgm" "$T/line.pbm"
result "empty GT"                        "0 0 0 10/$n"                   "$T/line.pgm" "$T/empty.pbm"
result "both empty"                      "0 0 0 0"                       "$T/empty.pgm" "$T/empty.pbm"
result "2 GTs: each detection hits one"  "1 1 1 (1/$n+1/$n)/2"           "$T/detAB.pgm" "$T/gtA.pbm" "$T/gtB.pbm"
result "2 GTs: recall summed over GTs"   "1 2/3 0.8 (1/$n+0/$n)/2"       "$T/detA.pgm" "$T/gtAB.pbm" "$T/gtA.pbm"
result "2 GTs: one detection hits neither" "1/2 1 2/3 (1/$n+1/$n)/2"     "$T/detAB.pgm" "$T/gtA.pbm" "$T/gtA.pbm"
result "MSE 3/16"                        "1/2 1/3 0.4 3/16"                --tolerance 0px "$T/m_e.pgm" "$T/m_g.pbm"
result "MSE mean over 2 GTs"             "1 3/5 0.75 (3/16+0)/2"         --tolerance 0px "$T/m_e.pgm" "$T/m_g.pbm" "$T/m_g2.pbm"
result "diagonal at sqrt 2, fraction 0.1 (1.414 px)"  "1 1 1 2/100"     --tolerance 0.1 "$T/d_e.pgm" "$T/d_g.pbm"
result "diagonal at sqrt 2, fraction 0.07 (0.99 px)"  "0 0 0 2/100"     --tolerance 0.07 "$T/d_e.pgm" "$T/d_g.pbm"
result "diagonal at sqrt 2, 1.5px"       "1 1 1 2/100"                   --tolerance 1.5px "$T/d_e.pgm" "$T/d_g.pbm"

# ---- formats: every encoding of the line gives the exact match
for f in line.pbm line_p1.pbm line_p1c.pbm line_p2.pgm line16.pgm; do
  result "format $f"                     "1 1 1 0"                       --tolerance 0px "$T/$f" "$T/line.pgm"
done
result "P4 of width 13 (row padding)"    "1 1 1 0"                       --tolerance 0px "$T/odd.pgm" "$T/odd.pbm"

# ---- text line and JSON
expect 0 "text line"                     -- "$TOOL" --tolerance 1px "$T/two_by_dot.pgm" "$T/dot.pbm"
grep -q "^P=0.500000 R=1.000000 F=0.666667 MSE=.* edges=2 hits=1 boundary=1 boundary_hits=1 gts=1 tolerance_px=" "$T/out" &&
  ok "text line: $(cat "$T/out")" || bad "text line: $(cat "$T/out")"
expect 0 "-q"                            -- "$TOOL" -q "$T/line.pgm" "$T/line.pbm"
[ ! -s "$T/out" ] && ok "-q prints nothing" || bad "-q printed: $(cat "$T/out")"
expect 0 "--json FILE"                   -- "$TOOL" --json "$T/r.json" "$T/detA.pgm" "$T/gtAB.pbm" "$T/gtA.pbm"
python3 - "$T/r.json" <<'PY' && ok "JSON content (counts, per-GT entries, default tolerance 0.0075 x diagonal)" || bad "JSON content"
import json, math, sys
j = json.load(open(sys.argv[1]))
assert (j["width"], j["height"], j["edges"], j["hits"], j["boundary"], j["boundary_hits"]) == (20, 12, 1, 1, 3, 2), j
assert abs(j["tolerance_px"] - 0.0075 * math.hypot(20, 12)) < 1e-5 and abs(j["tolerance_fraction"] - 0.0075) < 1e-6
assert [(g["boundary"], g["matched"]) for g in j["gts"]] == [(2, 1), (1, 1)] and j["gts"][0]["file"].endswith("gtAB.pbm")
PY

# ---- random maps against a brute-force maximum matching (Kuhn's augmenting paths), one GT each
python3 - "$T" "$TOOL" <<'PY' && ok "random maps: counts equal a brute-force maximum matching" || bad "random maps"
import json, random, subprocess, sys
t, tool = sys.argv[1], sys.argv[2]
rng = random.Random(20261121)
def write_pgm(path, w, h, on):
    with open(path, "wb") as f:
        f.write(f"P5\n{w} {h}\n255\n".encode() + bytes(255 if (x, y) in on else 0 for y in range(h) for x in range(w)))
def kuhn(det, gt, r):
    det, gt = sorted(det), sorted(gt)
    adj = [[j for j, b in enumerate(gt) if (a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2 <= r * r + 1e-9] for a in det]
    mr = [-1] * len(gt)
    def aug(u, seen):
        for v in adj[u]:
            if v in seen: continue
            seen.add(v)
            if mr[v] < 0 or aug(mr[v], seen):
                mr[v] = u
                return True
        return False
    return sum(aug(u, set()) for u in range(len(det)))
sys.setrecursionlimit(10000)
for case in range(60):
    w, h = rng.randint(1, 24), rng.randint(1, 18)
    dens_d, dens_g = rng.random() * 0.5, rng.random() * 0.5
    det = {(x, y) for y in range(h) for x in range(w) if rng.random() < dens_d}
    gt = {(x, y) for y in range(h) for x in range(w) if rng.random() < dens_g}
    r = rng.choice([0, 1, 1.5, 2, 2.5, 3.2])
    write_pgm(f"{t}/rd.pgm", w, h, det); write_pgm(f"{t}/rg.pgm", w, h, gt)
    out = subprocess.run([tool, "--tolerance", f"{r}px", "--json", "-", f"{t}/rd.pgm", f"{t}/rg.pgm"],
                         capture_output=True, text=True, check=True).stdout
    j = json.loads(out)
    want = kuhn(det, gt, r)
    mism = len(det ^ gt) / (w * h)
    if (j["hits"], j["boundary_hits"], j["edges"], j["boundary"]) != (want, want, len(det), len(gt)) or abs(j["mse"] - mism) > 1e-6:
        print(f"case {case}: {w}x{h} r={r}: tool {j['hits']}/{j['boundary_hits']}, brute force {want}")
        sys.exit(1)
PY

finish
