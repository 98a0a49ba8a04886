#!/usr/bin/env bash
# Frames per second of whole ffmpeg pipelines on a GPU machine (issue 14): a 1080p synthetic pan in mp4,
# encoded by the ffmpeg given, through libx264 baseline with and without GPU pre-analysis and the GPU
# entropy stage, with CPU decoding or NVDEC:
#   (a) CPU decode, no pre-analysis, gpu-entropy=off          (what a user runs today)
#   (b) CPU decode, gudcanny=mode=roi (cuda) on system frames, gpu-entropy=cuda
#   (c) NVDEC, gudcanny=mode=roi on CUDA frames, hwdownload, gpu-entropy=cuda
#   (d) NVDEC, no pre-analysis, hwdownload, gpu-entropy=cuda
# each for x264 ultrafast QP 10, ultrafast QP 26 and veryfast CRF 23; and the filter alone (-f null): the
# clip's first 50 frames, uploaded once as nv12 CUDA frames (hwupload_cuda) or kept as system frames, looped
# to 6000 (the loop filter re-sends references, no copy), through gudcanny, against the same graph with
# null in its place. (NVDEC's own frames cannot be looped: its decoder surfaces run out.)
#
#   tools/bench/bench-ffmpeg-pipeline.sh --ffmpeg PATH --image PHOTO.jpg [--out DIR] [--frames N] [--repeat R]
#                                  [--no-alone]
#
# PHOTO: at least 2560x1600 (../shared/images/photos/forest_path_2560x1600.jpg); the pan moves one pixel a
# frame right and 0.8 down. N: frames of the clip (default 600); R: runs per measurement (default 3, the
# median is reported); --no-alone: the pipelines only. Writes DIR/bench.md (tables, the commands) and
# DIR/runs.tsv (every run).
set -euo pipefail

prog=bench-ffmpeg-pipeline usage_status=2 work=""
ffmpeg="" image="" out="${OUT:-bench-ffmpeg-pipeline}" frames=600 repeat=3 loop_frames=50 loop_total=6000 alone=1
usage() { sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; }
here=$(cd "$(dirname "$0")" && pwd)
lib=$here/../scripts/lib.sh; [ -f "$lib" ] || lib=$here/lib.sh  # in a GPU bundle: beside this script
# shellcheck source=../scripts/lib.sh
. "$lib"
parse_options "--ffmpeg=ffmpeg --image=image --out=out --frames=frames --repeat=repeat --no-alone=alone:0" "$@"
[ -x "$ffmpeg" ] || { echo "bench-ffmpeg-pipeline: --ffmpeg '$ffmpeg' is not an executable" >&2; exit 2; }
[ -f "$image" ] || { echo "bench-ffmpeg-pipeline: --image '$image' not found" >&2; exit 2; }
[[ "$frames" =~ ^[1-9][0-9]*$ && "$repeat" =~ ^[1-9][0-9]*$ ]] ||
  { echo "bench-ffmpeg-pipeline: --frames and --repeat take positive integers" >&2; exit 2; }
mkdir -p "$out"
scratch_dir
clip="$work/pan_1080p.mp4"
F() { "$ffmpeg" -hide_banner -nostdin -loglevel error -y "$@"; }

echo "bench-ffmpeg-pipeline: making the clip ($frames frames)" >&2
F -loop 1 -framerate 25 -i "$image" -frames:v "$frames" \
  -vf "crop=1920:1080:x='min(n\,639)':y='min(n*0.8\,519)',format=yuv420p" \
  -c:v libx264 -preset veryfast -crf 20 -g 50 -bf 0 -an "$clip"
clip_bytes=$(stat -c %s "$clip")

now() { date +%s.%N; }
# median wall seconds of `repeat` runs of a command (after one unmeasured warm-up run)
measure() {  # label, args...: prints the median, or "failed" (with the log on stderr)
  local label=$1 t0 t1 times=()
  shift
  F "$@" >/dev/null 2>"$work/err.log" || { tail -5 "$work/err.log" >&2; echo "bench-ffmpeg-pipeline: $label failed" >&2; echo failed; return; }
  for _ in $(seq "$repeat"); do
    t0=$(now)
    F "$@" >/dev/null 2>>"$work/err.log"
    t1=$(now)
    times+=("$(calc "$t1 - $t0" 4)")
    printf '%s\t%s\n' "$label" "${times[-1]}" >>"$out/runs.tsv"
  done
  printf '%s\n' "${times[@]}" | median
}
calc() {  # expression, decimals; "-" when a term is a failed measurement
  [[ "$1" != *failed* && "$1" != *"- /"* && "$1" != *"/ -"* ]] && awk "BEGIN { printf \"%.${2:-1}f\", $1 }" || echo "-"
}
fps() { calc "$1 / $2"; }

: >"$out/runs.tsv"
nvdec=(-hwaccel cuda -hwaccel_output_format cuda)
declare -A presets=([uf-qp10]="-preset ultrafast -qp 10" [uf-qp26]="-preset ultrafast -qp 26"
                    [vf-crf23]="-preset veryfast -crf 23")
order=(uf-qp10 uf-qp26 vf-crf23)
{
  echo "# ffmpeg pipelines, 1080p pan ($frames frames, mp4 $clip_bytes bytes), median of $repeat runs"
  echo
  echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1); CPU cores: $(nproc)"
  echo "ffmpeg: $("$ffmpeg" -version | head -1)"
  echo
  echo "| x264 | (a) CPU dec, off | (b) CPU dec, roi cuda, cuda | (c) NVDEC, roi on CUDA frames, cuda | (d) NVDEC, cuda | (c)/(a) | (c)/(d) |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
} >"$out/bench.md"
for p in "${order[@]}"; do
  # shellcheck disable=SC2206
  x264=(-c:v libx264 -profile:v baseline ${presets[$p]} -an -f h264 /dev/null)
  echo "bench-ffmpeg-pipeline: $p" >&2
  ta=$(measure "$p a" -i "$clip" -x264-params gpu-entropy=off "${x264[@]}")
  tb=$(measure "$p b" -i "$clip" -vf gudcanny=mode=roi:backend=cuda -x264-params gpu-entropy=cuda "${x264[@]}")
  tc=$(measure "$p c" "${nvdec[@]}" -i "$clip" -vf gudcanny=mode=roi,hwdownload,format=nv12 \
       -x264-params gpu-entropy=cuda "${x264[@]}")
  td=$(measure "$p d" "${nvdec[@]}" -i "$clip" -vf hwdownload,format=nv12 -x264-params gpu-entropy=cuda "${x264[@]}")
  fa=$(fps "$frames" "$ta") fb=$(fps "$frames" "$tb") fc=$(fps "$frames" "$tc") fd=$(fps "$frames" "$td")
  echo "| ${presets[$p]} | $fa | $fb | $fc | $fd | $(calc "$fc / $fa" 2) | $(calc "$fc / $fd" 2) |" \
    >>"$out/bench.md"
done

# The filter alone: the first loop_frames frames looped to loop_total frames (-f null).
[ "$alone" = 1 ] || { cat "$out/bench.md"; exit 0; }
loops=$((loop_total / loop_frames - 1))
lp="loop=loop=$loops:size=$loop_frames:start=0"
echo "bench-ffmpeg-pipeline: the filter alone" >&2
{
  echo
  echo "## gudcanny alone, 1080p, C_0.03 strips: $loop_frames decoded frames looped to $loop_total (-f null); CUDA: nv12 uploaded once"
  echo
  echo "| frames | graph | median s | fps | filter ms/frame (minus the null graph) |"
  echo "|---|---|---:|---:|---:|"
} >>"$out/bench.md"
for kind in cuda system; do
  pre="format=nv12,hwupload_cuda,$lp"
  [ $kind = cuda ] || pre="$lp"
  tn=$(measure "alone $kind null" -i "$clip" -vf "$pre,null" -frames:v "$loop_total" -f null -)
  for mode in edges roi overlay; do
    tg=$(measure "alone $kind $mode" -i "$clip" -vf "$pre,gudcanny=mode=$mode" -frames:v "$loop_total" -f null -)
    echo "| $kind | $pre,gudcanny=mode=$mode | $tg | $(fps "$loop_total" "$tg") | $(calc "($tg - $tn) * 1000 / $loop_total" 3) |" \
      >>"$out/bench.md"
  done
  echo "| $kind | $pre,null | $tn | $(fps "$loop_total" "$tn") | |" >>"$out/bench.md"
done
{
  echo
  echo "Commands: clip \`-loop 1 -framerate 25 -i PHOTO -frames:v $frames -vf crop=1920:1080:x='min(n\\,639)':y='min(n*0.8\\,519)',format=yuv420p -c:v libx264 -preset veryfast -crf 20 -g 50 -bf 0\`;"
  echo "(a) \`-i pan.mp4 -x264-params gpu-entropy=off X264\`; (b) \`-i pan.mp4 -vf gudcanny=mode=roi:backend=cuda -x264-params gpu-entropy=cuda X264\`;"
  echo "(c) \`-hwaccel cuda -hwaccel_output_format cuda -i pan.mp4 -vf gudcanny=mode=roi,hwdownload,format=nv12 -x264-params gpu-entropy=cuda X264\`;"
  echo "(d) as (c) with \`-vf hwdownload,format=nv12\`; X264 = \`-c:v libx264 -profile:v baseline PRESET -an -f h264 /dev/null\` (libx264's threads: auto)."
  echo "Wall time of the whole command (start-up included), one warm-up run, then the median of $repeat."
} >>"$out/bench.md"
cat "$out/bench.md"
