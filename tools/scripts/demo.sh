#!/usr/bin/env bash
# The main job on an embedded default: build gpuec and both x264s, encode a clip with the entropy
# stage on, check the stream against stock x264 (byte for byte) and FFmpeg's decoder (clean decode,
# frames equal to x264's reconstruction), print a short summary. Exit 0 only if all checks pass.
set -euo pipefail
prog=demo
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."

usage() {
  cat <<USAGE
usage: tools/scripts/demo.sh [--clip NAME] [--frames N] [--build-dir DIR] [--backend cpu|cuda|auto] [-- X264_OPTIONS...]
  --clip NAME      clip for gpuec-clip (default: foreman_cif from the shared sequences, else the
                   synthetic pan_720p); 'gpuec-clip list' shows the names
  --frames N       frames to encode (default 21 for foreman_cif, 30 otherwise)
  --build-dir DIR  build folder (default: build)
  --backend B      --gpu-entropy value (default: cpu)
  X264_OPTIONS     x264 options (default: --profile baseline --preset medium --crf 23 --threads 2)
Environment: GPUEC_SHARED_DIR (default ../shared), CMAKE_ARGS (extra configure arguments).
USAGE
}

clip="" frames="" build=build backend=cpu
opts=(--profile baseline --preset medium --crf 23 --threads 2)
parse_options "--clip=clip --frames=frames --build-dir=build --backend=backend --" "$@"
[ ${#ARGS[@]} -eq 0 ] || opts=("${ARGS[@]}")

shared=${GPUEC_SHARED_DIR:-$(pwd)/../shared}
echo "demo: building (first time: x264 is fetched and built twice, a few minutes)"
mkdir -p "$build"
# shellcheck disable=SC2086
cmake -S . -B "$build" -G Ninja -DGPUEC_SHARED_DIR="$shared" ${CMAKE_ARGS:-} >"$build/demo-configure.log" 2>&1 ||
  { cat "$build/demo-configure.log" >&2; exit 2; }
cmake --build "$build" -j"$(nproc)" --target x264_builds gpuec-clip >"$build/demo-build.log" 2>&1 ||
  { tail -30 "$build/demo-build.log" >&2; exit 2; }
tool="$build/sequences/gpuec-clip"

if [ -z "$clip" ]; then
  if "$tool" list --available --names 2>/dev/null | grep -qx foreman_cif; then clip=foreman_cif; else clip=pan_720p; fi
fi
[ -n "$frames" ] || { [ "$clip" = foreman_cif ] && frames=21 || frames=30; }

work="$build/demo"
mkdir -p "$work"
matrix="$work/demo.tsv"
printf 'name\tclip\tframes\toptions\texpect\ndemo\t%s\t%s\t%s\tstage\n' "$clip" "$frames" "${opts[*]}" >"$matrix"

echo "demo: $clip, $frames frames, x264 ${opts[*]} --gpu-entropy $backend"
status=0
python3 tests/e2e/conformance.py --stock "$build/plugin/x264/stock/x264" --patched "$build/plugin/x264/patched/x264" \
  --clip-tool "$tool" --work "$work" --matrix "$matrix" --backend "$backend" --keep || status=$?

case_dir="$work/demo"
echo
echo "summary"
echo "  clip          $clip ($frames frames)"
echo "  options       ${opts[*]} --gpu-entropy $backend"
if [ -f "$case_dir/ours.264" ]; then
  echo "  stream        $case_dir/ours.264 ($(stat -c %s "$case_dir/ours.264") bytes)"
fi
grep -h 'gpu-entropy:' "$case_dir/ours.log" 2>/dev/null | sed 's/^x264 \[[a-z]*\]: /  x264 says    /' || true
grep -h 'encoded [0-9]* frames' "$case_dir/ours.log" 2>/dev/null | sed 's/^/  x264 says    /' || true
if [ "$status" -eq 0 ]; then
  echo "  result        PASS: byte-identical to stock x264; FFmpeg decodes it cleanly to x264's reconstruction"
else
  echo "  result        FAIL (details above and in $case_dir)"
fi
exit "$status"
