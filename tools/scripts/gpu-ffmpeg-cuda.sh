#!/usr/bin/env bash
# Our ffmpeg's CUDA paths on a GPU machine (issue 14): every pipeline that runs gudcanny on CUDA frames
# (NVDEC's nv12, hwupload_cuda's yuv420p / yuv444p / gray) must give the framemd5 of the same filter on
# system-memory frames; the ROI side data must survive hwdownload; the ROI pipeline into libx264 with
# gpu-entropy=cuda must give the bytes of the software pipeline with gpu-entropy=off and decode cleanly;
# the error cases must fail cleanly; compute-sanitizer memcheck and racecheck on a short NVDEC run.
#
#   tools/scripts/gpu-ffmpeg-cuda.sh --ffmpeg PATH --input CLIP.mp4|CLIP.264 [--out DIR] [--no-sanitizer]
#
# CLIP: H.264 4:2:0 8-bit (NVDEC decodes it); a few dozen frames are enough. Writes DIR/summary.txt
# (one PASS/FAIL line per check, then "N passed, M failed") and the logs of failed checks; exit 1 when a
# check failed. Needs no other tool than the ffmpeg given (cmp, md5sum, grep).
set -uo pipefail

prog=gpu-ffmpeg-cuda usage_status=2 work=""
ffmpeg="" input="" out="${OUT:-gpu-ffmpeg-cuda}" sanitizer=1
usage() { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; }
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
parse_options "--ffmpeg=ffmpeg --input=input --out=out --no-sanitizer=sanitizer:0" "$@"
[ -x "$ffmpeg" ] || { echo "gpu-ffmpeg-cuda: --ffmpeg: '$ffmpeg' is not an executable" >&2; exit 2; }
[ -f "$input" ] || { echo "gpu-ffmpeg-cuda: --input: '$input' not found" >&2; exit 2; }
mkdir -p "$out" || exit 2
scratch_dir
summary="$out/summary.txt"
: >"$summary"
passed=0 failed=0
pass() { echo "PASS $1" | tee -a "$summary"; passed=$((passed + 1)); }
fail() { echo "FAIL $1${2:+: $2}" | tee -a "$summary"; failed=$((failed + 1)); }
F() { "$ffmpeg" -hide_banner -nostdin -loglevel error "$@"; }
nvdec=(-hwaccel cuda -hwaccel_output_format cuda)
has() { "$ffmpeg" -hide_banner "-$1" 2>/dev/null | grep -w -- "$2" >/dev/null; }  # no -q: ffmpeg would get SIGPIPE

# framemd5 of a pipeline into $work/NAME.md5 (the stream header lines dropped: they name the input).
md5_of() {  # name, ffmpeg args...
  local name=$1
  shift
  F "$@" -f framemd5 "$work/$name.md5" 2>"$work/$name.log" || { cp "$work/$name.log" "$out/" 2>/dev/null; return 1; }
  grep -v '^#' "$work/$name.md5" >"$work/$name.frames"
}
same() {  # check, reference name, cuda name
  if ! cmp -s "$work/$2.frames" "$work/$3.frames"; then
    cp "$work/$2.md5" "$work/$3.md5" "$out/" 2>/dev/null
    fail "$1" "framemd5 differs ($2 vs $3)"
  elif [ ! -s "$work/$2.frames" ]; then
    fail "$1" "no frames"
  else
    pass "$1 ($(wc -l <"$work/$2.frames") frames)"
  fi
}
pair() {  # check, sw filter chain, cuda input args (array name), cuda filter chain
  local check=$1 sw=$2 cuda_chain=$4
  local -n cuda_in=$3
  md5_of "$check.sw" -i "$input" -vf "$sw" || { fail "$check" "software pipeline failed"; return; }
  md5_of "$check.cuda" "${cuda_in[@]}" -i "$input" -vf "$cuda_chain" || { fail "$check" "cuda pipeline failed"; return; }
  same "$check" "$check.sw" "$check.cuda"
}
plain=()

echo "ffmpeg: $("$ffmpeg" -version | head -1)" | tee -a "$summary"
# ---- frames: NVDEC's nv12 ----
pair nvdec-edges-nv12 "format=nv12,gudcanny=mode=edges" nvdec "gudcanny=mode=edges,hwdownload,format=nv12"
pair nvdec-edges-gray "gudcanny=mode=edges,format=gray" nvdec "gudcanny=mode=edges,hwdownload,format=nv12,format=gray"
pair nvdec-overlay "format=nv12,gudcanny=mode=overlay" nvdec "gudcanny=mode=overlay,hwdownload,format=nv12"
pair nvdec-frame-step1 "format=nv12,gudcanny=strip=0:step=1:sigma=0.7" nvdec \
  "gudcanny=strip=0:step=1:sigma=0.7,hwdownload,format=nv12"
pair nvdec-timeline "format=nv12,gudcanny=enable='between(n,3,5)'" nvdec \
  "gudcanny=enable='between(n,3,5)',hwdownload,format=nv12"
# ---- hwupload_cuda: yuv420p, yuv444p, gray ----
for fmt in yuv420p yuv444p gray; do
  pair "upload-edges-$fmt" "format=$fmt,gudcanny" plain "format=$fmt,hwupload_cuda,gudcanny,hwdownload,format=$fmt"
  pair "upload-overlay-$fmt" "format=$fmt,gudcanny=mode=overlay" plain \
    "format=$fmt,hwupload_cuda,gudcanny=mode=overlay,hwdownload,format=$fmt"
done
# ---- roi: the frames pass unchanged, the regions survive hwdownload ----
pair nvdec-roi-frames "format=nv12,gudcanny=mode=roi" nvdec "gudcanny=mode=roi,hwdownload,format=nv12"
roi_lines() { grep -E 'regions of interest|index: [0-9]+, region' "$1" | sed 's/^\[[^]]*\] //'; }
if F -i "$input" -vf "gudcanny=mode=roi,showinfo" -loglevel info -f null - 2>"$work/roi.sw.log" &&
   F "${nvdec[@]}" -i "$input" -vf "gudcanny=mode=roi,hwdownload,format=nv12,showinfo" -loglevel info -f null - \
     2>"$work/roi.cuda.log"; then
  roi_lines "$work/roi.sw.log" >"$work/roi.sw"
  roi_lines "$work/roi.cuda.log" >"$work/roi.cuda"
  if [ ! -s "$work/roi.sw" ]; then fail roi-side-data "showinfo printed no regions"
  elif cmp -s "$work/roi.sw" "$work/roi.cuda"; then pass "roi-side-data survives hwdownload ($(grep -c region "$work/roi.sw") regions)"
  else cp "$work"/roi.* "$out/"; fail roi-side-data "regions differ"; fi
else
  cp "$work"/roi.*.log "$out/"; fail roi-side-data "a pipeline failed"
fi
# ---- the ROI pipeline into libx264 with the GPU entropy stage ----
if has encoders libx264; then
  x264=(-c:v libx264 -profile:v baseline -preset veryfast -crf 23 -threads 4)
  if F "${nvdec[@]}" -i "$input" -an -vf "gudcanny=mode=roi,hwdownload,format=nv12" "${x264[@]}" \
       -x264-params gpu-entropy=cuda -f h264 "$work/roi_cuda.264" &&
     F -i "$input" -an -vf "gudcanny=mode=roi,format=nv12" "${x264[@]}" -x264-params gpu-entropy=off \
       -f h264 "$work/roi_off.264"; then
    if cmp -s "$work/roi_cuda.264" "$work/roi_off.264"; then
      pass "x264-roi: NVDEC + gudcanny on CUDA frames + gpu-entropy=cuda == software + gpu-entropy=off ($(stat -c %s "$work/roi_off.264") bytes)"
    else
      cp "$work"/roi_*.264 "$out/"; fail x264-roi "streams differ"
    fi
    if F -err_detect explode -xerror -i "$work/roi_cuda.264" -f null - 2>"$work/decode.log"; then pass x264-roi-decodes
    else cp "$work/decode.log" "$out/"; fail x264-roi-decodes; fi
  else
    fail x264-roi "a pipeline failed"
  fi
else
  fail x264-roi "this ffmpeg has no libx264"
fi
# ---- errors: clear, non-zero, no output file ----
expect_error() {  # check, expected text, ffmpeg args (output $work/err.out)
  local check=$1 text=$2
  shift 2
  rm -f "$work/err.out"
  if "$ffmpeg" -hide_banner -nostdin "$@" "$work/err.out" >"$work/err.log" 2>&1; then
    fail "$check" "exit 0"
  elif ! grep -qF -- "$text" "$work/err.log"; then
    cp "$work/err.log" "$out/$check.log"; fail "$check" "message without '$text'"
  elif [ -s "$work/err.out" ]; then
    fail "$check" "left a non-empty output"
  else
    pass "$check"
  fi
}
expect_error error-sw-format "software format p010le are not supported" \
  -i "$input" -vf format=p010le,hwupload_cuda,gudcanny,hwdownload,format=p010le -f framemd5
expect_error error-backend-cpu "backend=cpu cannot read CUDA frames" \
  "${nvdec[@]}" -i "$input" -vf gudcanny=backend=cpu,hwdownload,format=nv12 -f framemd5
expect_error error-bad-device "Device creation failed" \
  -init_hw_device cuda=cu:7 -filter_hw_device cu -i "$input" -vf format=yuv420p,hwupload_cuda,gudcanny -f framemd5
# ---- compute-sanitizer on a short NVDEC run ----
if [ "$sanitizer" = 1 ]; then
  cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  for tool in memcheck racecheck; do
    for mode in edges overlay roi; do
      chain="gudcanny=mode=$mode,hwdownload,format=nv12"
      if "$cs" --tool "$tool" --error-exitcode 9 --target-processes all "$ffmpeg" -hide_banner -nostdin -loglevel error \
           "${nvdec[@]}" -i "$input" -frames:v 4 -vf "$chain" -f null - >"$work/cs.log" 2>&1; then
        pass "sanitizer-$tool-$mode ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$work/cs.log" | tail -1))"
      else
        cp "$work/cs.log" "$out/sanitizer-$tool-$mode.log"; fail "sanitizer-$tool-$mode" "$(tail -1 "$work/cs.log")"
      fi
    done
  done
fi
echo "$passed passed, $failed failed" | tee -a "$summary"
[ "$failed" = 0 ]
