#!/usr/bin/env bash
# Issue 17, item 2, end to end: x264 --gpu-entropy cpu against stock x264 at ultrafast QP 10 (1080p pan
# clip), for each --threads value given, through bench-x264-e2e.sh (paired runs in turns, streams
# byte-identical to stock's, medians of x264's own fps). Writes DIR/threads-T/ (results.md, runs.csv,
# logs) per thread count and DIR/results.md, all the tables one after the other.
set -euo pipefail

prog=bench-x264-cpu-stage
build="" out="" runs=9 frames=120 threads_list="1 16" configs="ultrafast:10" clip=pan_1080p

usage() {
  cat <<USAGE
usage: bench-x264-cpu-stage.sh --build-dir BUILD --out DIR [--runs R] [--frames N] [--threads "T ..."]
                               [--configs "PRESET:QP ..."] [--clip NAME]
  --build-dir BUILD  a built CMake build folder: BUILD/plugin/x264/{stock,patched}/x264, BUILD/sequences/gpuec-clip
  --out DIR          results folder (made if missing)
  --runs R           runs per encoder and configuration, in turns (default $runs)
  --frames N         frames of the clip (default $frames)
  --threads          x264 --threads values, one comparison each (default "$threads_list")
  --configs          preset:qp pairs (default "$configs"); always --profile baseline
  --clip NAME        gpuec-clip name (default $clip)
Exit: 0 done (ratios reported, not judged), 1 usage, 2 a failed encode or a stream that differs.
USAGE
}

here=$(cd "$(dirname "$0")" && pwd)
lib=$here/../scripts/lib.sh; [ -f "$lib" ] || lib=$here/lib.sh  # in a GPU bundle: beside this script
# shellcheck source=../scripts/lib.sh
. "$lib"
parse_options "--build-dir=build --out=out --runs=runs --frames=frames --threads=threads_list --configs=configs
               --clip=clip" "$@"
[ -n "$build" ] && [ -n "$out" ] || { usage >&2; exit 1; }
mkdir -p "$out"
: >"$out/results.md"
for t in $threads_list; do
  dir="$out/threads-$t"
  mkdir -p "$dir"
  # The clip is made once, in the first folder, and shared.
  first="$out/threads-${threads_list%% *}"
  [ "$dir" = "$first" ] || cp -n "$first/$clip.f$frames.y4m" "$dir/" 2>/dev/null || true
  bash "$here/bench-x264-e2e.sh" --stock "$build/plugin/x264/stock/x264" --patched "$build/plugin/x264/patched/x264" \
    --clip-tool "$build/sequences/gpuec-clip" --out "$dir" --runs "$runs" --frames "$frames" --threads "$t" \
    --clip "$clip" --configs "$configs" --backends cpu
  { echo "--threads $t ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores):"
    echo; cat "$dir/results.md"; echo; } >>"$out/results.md"
done
cat "$out/results.md"
