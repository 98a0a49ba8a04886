#!/usr/bin/env bash
# Runs every program of a GPU bundle (made by tools/scripts/gpu-bundle.sh) on a machine with a GPU:
#   *_test   GoogleTest binaries: plain run, then compute-sanitizer memcheck and racecheck
#   gpuec-bitexact  every twin pair, its --self-test bit, and the frame coder's pair under the sanitizers
#   *bench*  benchmarks: plain run
#   avc-reentropy  (with data/conformance) tools/scripts/reentropy-conformance.sh --backend cuda
#   ffmpeg/  (gpu-bundle.sh --ffmpeg) the cases of ffmpeg_test.py listed in ffmpeg/cases with our ffmpeg; exit
#            77 (skipped: no usable CUDA device) counts as failed here; then gpu-ffmpeg-cuda.sh (gudcanny on
#            CUDA frames against system frames, errors, sanitizers) on foreman_cif encoded by our ffmpeg
# Logs and JUnit XML go to LOGDIR (argument, else $OUT, else BUNDLE/logs); the last line is
# 'N passed, M failed'. Exit status 0 only if everything passed.
set -u
case "${1:-}" in -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
here=$(cd "$(dirname "$0")" && pwd)
logs=${1:-${OUT:-$here/logs}}
mkdir -p "$logs"
export GPUEC_SHARED_DIR="$here/data"
# Shared libraries the programs need that a bare GPU machine may lack (gpu-bundle.sh puts them in lib/).
[ -d "$here/lib" ] && export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
pass=0 fail=0
summary="$logs/summary.txt"
: >"$summary"

record() {  # name status
  if [ "$2" -eq 0 ]; then pass=$((pass + 1)); echo "PASS $1" | tee -a "$summary"
  else fail=$((fail + 1)); echo "FAIL $1 (exit $2)" | tee -a "$summary"; fi
}

{ nvidia-smi || echo "nvidia-smi failed"; } >"$logs/nvidia-smi.txt" 2>&1
head -15 "$logs/nvidia-smi.txt"

for exe in "$here"/bin/*; do
  name=$(basename "$exe")
  case "$name" in
    *_test)
      "$exe" --gtest_output="xml:$logs/$name.xml" >"$logs/$name.log" 2>&1
      record "$name" $?
      grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$logs/$name.log" | sed 's/^/    /'
      if [ -x "$sanitizer" ]; then
        for tool in memcheck racecheck; do
          "$sanitizer" --tool "$tool" --error-exitcode 99 "$exe" >"$logs/$name.$tool.log" 2>&1
          record "$name [$tool]" $?
          tail -1 "$logs/$name.$tool.log" | sed 's/^/    /'
        done
      else
        echo "    compute-sanitizer not found: memcheck/racecheck not run" | tee -a "$summary"
      fi
      ;;
    gpuec-bitexact)  # every CPU/GPU twin pair; then a planted bug must fail every pair (both sides)
      "$exe" >"$logs/$name.log" 2>&1
      record "$name" $?
      tail -3 "$logs/$name.log" | sed 's/^/    /'
      "$exe" --self-test bit >"$logs/$name.self-test.log" 2>&1
      rc=$?
      [ "$rc" -ne 0 ] && ! grep -q '^ok ' "$logs/$name.self-test.log" && grep -q '(gpu twin' "$logs/$name.self-test.log"
      record "$name --self-test bit (every pair reports the planted bit)" $?
      if [ -x "$sanitizer" ]; then  # the frame coder's pair: the CUDA coder end to end, under both tools
        for tool in memcheck racecheck; do
          "$sanitizer" --tool "$tool" --error-exitcode 99 "$exe" --filter cavlc.frame_coder \
            >"$logs/$name.$tool.log" 2>&1
          record "$name --filter cavlc.frame_coder [$tool]" $?
          tail -1 "$logs/$name.$tool.log" | sed 's/^/    /'
        done
      fi
      ;;
    *bench*)
      "$exe" >"$logs/$name.log" 2>&1
      record "$name" $?
      tail -20 "$logs/$name.log"
      ;;
  esac
done
# Issue 6: avc-reentropy --backend cuda on every conformance stream (bytes and sha256; no FFmpeg here).
if [ -x "$here/bin/avc-reentropy" ] && [ -f "$here/reentropy-conformance.sh" ] &&
   [ -f "$GPUEC_SHARED_DIR/conformance/MANIFEST.tsv" ]; then
  bash "$here/reentropy-conformance.sh" --avc-reentropy "$here/bin/avc-reentropy" --backend cuda \
    --conformance "$GPUEC_SHARED_DIR/conformance" >"$logs/reentropy-conformance.log" 2>&1
  record "reentropy-conformance.sh --backend cuda" $?
  tail -1 "$logs/reentropy-conformance.log" | sed 's/^/    /'
fi
if [ -x "$here/ffmpeg/ffmpeg" ]; then
  if command -v python3 >/dev/null; then
    for case in $(cat "$here/ffmpeg/cases"); do
      python3 "$here/ffmpeg/ffmpeg_test.py" --ffmpeg "$here/ffmpeg/ffmpeg" --ref-dir "$here/ffmpeg/ref" \
        "$case" >"$logs/ffmpeg.$case.log" 2>&1
      record "ffmpeg_test.py $case" $?
      grep -E '^(FAIL|skipped)|passed$|failed$' "$logs/ffmpeg.$case.log" | sed 's/^/    /'
    done
  else
    record "ffmpeg_test.py (no python3 on this machine)" 1
  fi
  # The CUDA-frame pipelines against the software ones, the errors, compute-sanitizer on NVDEC runs;
  # the clip: foreman_cif in H.264 (mp4), encoded here by our ffmpeg.
  clip_y4m="$GPUEC_SHARED_DIR/sequences/foreman_cif.y4m.xz"
  if [ -f "$here/gpu-ffmpeg-cuda.sh" ] && [ -f "$clip_y4m" ] && command -v python3 >/dev/null; then
    python3 -c 'import lzma, sys; sys.stdout.buffer.write(lzma.open(sys.argv[1]).read())' "$clip_y4m" |
      "$here/ffmpeg/ffmpeg" -hide_banner -nostdin -loglevel error -y -i - -c:v libx264 -preset veryfast \
        -threads 4 "$logs/foreman_cif.mp4"
    bash "$here/gpu-ffmpeg-cuda.sh" --ffmpeg "$here/ffmpeg/ffmpeg" --input "$logs/foreman_cif.mp4" \
      --out "$logs/ffmpeg-cuda" >"$logs/ffmpeg-cuda.log" 2>&1
    record "gpu-ffmpeg-cuda.sh" $?
    grep -E '^FAIL|passed,' "$logs/ffmpeg-cuda.log" | sed 's/^/    /'
  fi
fi
echo "$pass passed, $fail failed" | tee -a "$summary"
[ "$fail" -eq 0 ]
