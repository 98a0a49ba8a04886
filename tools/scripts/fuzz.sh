#!/usr/bin/env bash
# Builds one libFuzzer target of tests/fuzz (CMake -DGPUEC_FUZZ=ON: clang, ASan + UBSan), makes its seeds and
# runs it (docs/fuzzing.md).
#   tools/scripts/fuzz.sh TARGET [SECONDS]      (default 60; TARGET "list" lists the targets)
# Everything lands in build-fuzz/ (git-ignored): cmake/ (the clang build), TARGET/seeds (remade every run),
# TARGET/corpus (kept and grown across runs), TARGET/fuzz.log and the crash-*/leak-*/timeout-*/oom-* artifacts
# in TARGET/. Exits non-zero when the fuzzer finds a failure; copy the artifact into
# tests/fuzz/regressions/TARGET/ so that CTest fuzz.TARGET replays it.
# Environment: CC/CXX (default clang/clang++), GPUEC_SHARED_DIR (default ../shared), GPUEC_BUILD (a normal
# build with x264, default build: its patched x264 writes the H.264 and capture seeds; skipped with a note when
# missing), FUZZ_ARGS (extra libFuzzer flags, e.g. -jobs=2).
set -euo pipefail
cd "$(dirname "$0")/../.."
targets="avc_reentropy gvle y4m y4m_xz jpeg pgm png netpbm_map candidates capture"
target=${1:-}
secs=${2:-60}
if [ "$target" = list ]; then echo "$targets"; exit 0; fi
if [[ " $targets " != *" $target "* ]] || [[ -z "$secs" || "$secs" == *[!0-9]* ]]; then
  echo "usage: tools/scripts/fuzz.sh TARGET [SECONDS]   (TARGET: $targets)" >&2
  exit 1
fi
shared=${GPUEC_SHARED_DIR:-$(pwd)/../shared}
normal_build=${GPUEC_BUILD:-build}
out=build-fuzz
dir=$out/$target
bin=$out/cmake/fuzz/fuzz_$target
x264=$normal_build/plugin/x264/patched/x264
clip_tool=$out/cmake/sequences/gpuec-clip

echo "fuzz: building $bin (log: $out/build.log)"
mkdir -p "$out"
CC=${CC:-clang} CXX=${CXX:-clang++} cmake -S . -B "$out/cmake" -G Ninja -DGPUEC_FUZZ=ON \
  -DCMAKE_C_FLAGS="-g -O1" -DCMAKE_CXX_FLAGS="-g -O1" -DGPUEC_SHARED_DIR="$shared" -DGPUEC_ENABLE_CUDA=OFF \
  -DGPUEC_BUILD_X264=OFF -DGPUEC_BUILD_FFMPEG=OFF >"$out/build.log" 2>&1 ||
  { tail -20 "$out/build.log" >&2; exit 2; }
cmake --build "$out/cmake" -j"${JOBS:-2}" --target "fuzz_$target" gvle gpuec-clip >>"$out/build.log" 2>&1 ||
  { tail -20 "$out/build.log" >&2; exit 2; }

mkdir -p "$dir/corpus"
rm -rf "$dir/seeds"
seeds=$dir/seeds
mkdir -p "$seeds"
committed=tests/fuzz/seeds/${target%_xz}  # y4m_xz: the y4m seeds
[ -d "$committed" ] && cp "$committed"/* "$seeds/" 2>/dev/null || true
[ -d "tests/fuzz/regressions/$target" ] && cp "tests/fuzz/regressions/$target"/* "$seeds/" 2>/dev/null || true

# Small clips from gpuec-clip: the y4m seeds, and the input of x264's streams and captures.
clips=$out/clips
mkdir -p "$clips"
for c in noise_16x16 checkerboard_32x16 pan_64x48; do
  [ -f "$clips/$c.y4m" ] || "$clip_tool" get "$c" -o "$clips/$c.y4m" --frames 3 >/dev/null 2>&1
done
# x264 (baseline CAVLC, as the e2e matrix) writes H.264 streams (and, with GPUEC_CAPTURE, captures).
x264_seeds() {  # x264_seeds SUFFIX: stream (.264) or capture (.cap)
  if [ ! -x "$x264" ]; then
    echo "fuzz: no $x264 (configure $normal_build with x264): no x264 seeds" >&2
    return 0
  fi
  local i=0 opts
  for opts in "--profile baseline --preset ultrafast" "--profile baseline --slices 3 --keyint 2 --qp 18" \
              "--profile baseline --preset veryslow --bframes 0 --qp 40"; do
    for c in noise_16x16 pan_64x48; do
      i=$((i + 1))
      # shellcheck disable=SC2086
      if [ "$1" = cap ]; then
        GPUEC_CAPTURE="$seeds/x264-$i.cap" "$x264" --no-progress --quiet --threads 1 $opts --gpu-entropy cpu \
          -o /dev/null "$clips/$c.y4m" 2>/dev/null
      else
        "$x264" --no-progress --quiet --threads 1 $opts -o "$seeds/x264-$i.264" "$clips/$c.y4m" 2>/dev/null
      fi
    done
  done
}

max_len=()
case $target in
  avc_reentropy)  # the conformance streams cut to their first 16 KB, and x264's
    for f in "$shared"/conformance/*.264 "$shared"/conformance/*.jsv "$shared"/conformance/*.h264; do
      [ -f "$f" ] && head -c 16384 "$f" >"$seeds/$(basename "$f")"
    done
    x264_seeds 264
    max_len=(-max_len=16384) ;;  # every input is parsed and re-coded twice: small ones give more runs
  gvle)  # small compressed files covering the shapes of the format, and their raw inputs (docs/fuzzing.md)
    raw=$seeds/raw
    mkdir -p "$raw"
    : >"$raw/empty"
    printf 'x' >"$raw/one-byte"
    head -c 3000 /dev/zero | tr '\0' 'a' >"$raw/one-symbol"
    python3 -c 'import sys; sys.stdout.buffer.write(bytes(range(256)) * 3)' >"$raw/all-256"
    head -c 6000 README.md >"$raw/text"
    python3 -c '
import sys
a, b, out = 1, 1, bytearray()
for s in range(22):           # Fibonacci counts: the code reaches 16 bits
    out += bytes([s * 11]) * a
    a, b = b, a + b
sys.stdout.buffer.write(bytes(out[i * 7919 % len(out)] for i in range(len(out))))' >"$raw/sixteen-bit"
    python3 -c 'import sys; sys.stdout.buffer.write(b"ab" * 70000 + b"c")' >"$raw/three-chunks"
    python3 -c 'import sys; sys.stdout.buffer.write(b"a" * (8 * 65536 + 1))' >"$raw/nine-chunks"
    for f in "$raw"/*; do
      "$out/cmake/tools/gvle" compress --backend cpu -f -o "$seeds/$(basename "$f").gvle" "$f"
    done
    mv "$raw"/* "$seeds/" && rmdir "$raw"
    max_len=(-max_len=70000) ;;  # room for the nine-chunk seed (65.8 KB)
  y4m|y4m_xz)
    cp "$clips"/noise_16x16.y4m "$clips"/checkerboard_32x16.y4m "$seeds/" ;;
  jpeg)
    cp "$shared"/images/bsds500_subset/images/*.jpg "$seeds/" ;;
  pgm)
    cp "$shared"/images/standard/cameraman_256.pgm "$seeds/" ;;
  netpbm_map)
    cp "$shared"/images/bsds500_subset/boundaries/*_annot1_boundaries.pbm "$seeds/" ;;
  capture)
    x264_seeds cap ;;
esac
echo "fuzz: seeds: $(find "$seeds" -type f | wc -l) files in $seeds"

echo "fuzz: running $target for $secs s (log: $dir/fuzz.log)"
set +e
# shellcheck disable=SC2086
"$bin" -max_total_time="$secs" "${max_len[@]}" -timeout=20 -rss_limit_mb=2560 -print_final_stats=1 \
  -artifact_prefix="$dir/" ${FUZZ_ARGS:-} "$dir/corpus" "$seeds" 2>&1 | tee "$dir/fuzz.log" |
  grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)|^stat::|ERROR|SUMMARY|Test unit written'
rc=${PIPESTATUS[0]}
set -e
grep -E '^Done [0-9]+ runs' "$dir/fuzz.log" | tail -1 || true
if [ "$rc" -ne 0 ]; then
  echo "fuzz: the fuzzer failed (exit $rc); see $dir/fuzz.log and the artifact in $dir/" >&2
  exit "$rc"
fi
echo "fuzz: no failures; corpus: $(find "$dir/corpus" -type f | wc -l) files in $dir/corpus"
