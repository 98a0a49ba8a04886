#!/usr/bin/env bash
# Per-kernel GPU time of GUD-Canny (docs/benchmarks.md, "Issue 18, GPU kernels"): runs canny-bench-gpu under
# Nsight Compute once per (image, config) and keeps ncu's per-kernel summary (gpu__time_duration.sum, clocks
# not locked). Run on the GPU machine from a bundle (tools/scripts/gpu-bundle.sh --only canny-bench-gpu --data
# ../shared/images/standard ...): bash tools/bench/canny-stages-ncu.sh BUNDLE OUTDIR [PROGRAM]
# (PROGRAM: the canny-bench-gpu to run, default BUNDLE/bin/canny-bench-gpu; canny-ab-run.sh --stages passes its own)
# then here: python3 tools/bench/plot-canny-stages.py OUTDIR docs/img/canny-stages.png
set -u
[ $# -eq 2 ] || [ $# -eq 3 ] || { echo "usage: $0 BUNDLE OUTDIR [PROGRAM]" >&2; exit 1; }
bundle=$(cd "$1" && pwd); out=$2; mkdir -p "$out"
program=${3:-$bundle/bin/canny-bench-gpu}
[ -x "$program" ] || { echo "$0: $program is not a program" >&2; exit 1; }
export GPUEC_SHARED_DIR="$bundle/data"
[ -d "$bundle/lib" ] && export LD_LIBRARY_PATH="$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
[ -x "$ncu" ] || { echo "$0: ncu not found" >&2; exit 2; }
status=0
for img in cameraman_256 barbara synthetic_1920 synthetic_3840; do
  for cfg in "strip C_0.03" "strip C_0.01" "frame C_0.03" "frame C_0.01"; do
    tag="${img}_${cfg// /_}"
    timeout 300 "$ncu" --clock-control none --metrics gpu__time_duration.sum --print-summary per-kernel \
      "$program" --image "$img" --config "$cfg" --repeats 5 --warmup 1 --cpu-repeats 0 \
      >"$out/ncu_$tag.txt" 2>&1
    rc=$?
    echo "$tag rc=$rc"
    [ $rc -eq 0 ] || status=1
  done
done
exit $status
