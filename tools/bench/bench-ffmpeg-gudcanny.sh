#!/usr/bin/env bash
# The gudcanny filter in our ffmpeg, end to end (docs/benchmarks.md, "The `gudcanny` filter in our ffmpeg, end
# to end (1080p)"): `ffmpeg -nostdin -loglevel warning -i CLIP -vf VF -f null -` for each variant, one warm-up
# run and then R timed runs each; fps = frames / wall time of the whole command (process start, CUDA
# initialisation and the end included). Prints a Markdown table (fps per run and the median) and writes it to
# DIR/results.md, every run to DIR/runs.csv and every run's stderr to DIR/logs/. A run that fails, or whose
# log shows the cuda backend falling back to the cpu, stops the script.
set -euo pipefail

prog=bench-ffmpeg-gudcanny
ffmpeg="" clip="" clip_tool="" frames=300 runs=3 out="bench-ffmpeg-gudcanny"
# -vf|frames (frames empty: the whole clip); the slow CPU rows run on the first frames only.
variants=(
  "null|"
  "format=gray|"
  "gudcanny=backend=cuda|"
  "gudcanny=backend=cuda:step=1|"
  "gudcanny=backend=cuda:mode=roi|"
  "gudcanny=backend=cuda:mode=overlay|"
  "gudcanny=backend=cuda:strip=0|"
  "format=gray,edgedetect|60"
  "gudcanny=backend=cpu|10"
)

usage() {
  cat <<USAGE
usage: bench-ffmpeg-gudcanny.sh --ffmpeg FFMPEG --clip CLIP.y4m [--clip-tool GPUEC_CLIP] [--frames N]
                                [--runs R] [--out DIR] [--vf "VF[|FRAMES]"]...
  --ffmpeg     our ffmpeg (BUILD/plugin/ffmpeg/ffmpeg)
  --clip       the y4m clip; when it does not exist and --clip-tool is given, it is made with
               'GPUEC_CLIP get pan_1080p -o CLIP --frames N' (the photo comes from GPUEC_SHARED_DIR/images/photos)
  --frames N   frames of the clip to make (default $frames)
  --runs R     timed runs per variant after one warm-up run (default $runs)
  --out DIR    results.md, runs.csv, logs/ (default $out)
  --vf V       a variant instead of the default list (repeatable); "VF|FRAMES" limits it to FRAMES frames
Default variants: $(printf '%s  ' "${variants[@]}")
Exit: 0 done, 1 usage, 2 a failed run, a missing clip or a fall-back to the cpu.
USAGE
}

custom=()
here=$(cd "$(dirname "$0")" && pwd)
lib=$here/../scripts/lib.sh; [ -f "$lib" ] || lib=$here/lib.sh  # in a GPU bundle: beside this script
# shellcheck source=../scripts/lib.sh
. "$lib"
parse_options "--ffmpeg=ffmpeg --clip=clip --clip-tool=clip_tool --frames=frames --runs=runs --out=out
               --vf=custom+" "$@"
[ -n "$ffmpeg" ] && [ -n "$clip" ] || { usage >&2; exit 1; }
[ ${#custom[@]} -eq 0 ] || variants=("${custom[@]}")
[ -x "$ffmpeg" ] || die "$ffmpeg is not an executable"
if [ ! -s "$clip" ]; then
  [ -n "$clip_tool" ] || die "$clip not found (give --clip-tool to make it)"
  "$clip_tool" get pan_1080p -o "$clip" --frames "$frames" >&2 || die "gpuec-clip could not make $clip"
fi
mkdir -p "$out/logs"

# Frames of the clip, from its header (8-bit 4:2:0: W*H*3/2 bytes and "FRAME\n" per frame).
header=$(head -c 512 "$clip" | head -1)
[[ "$header" == YUV4MPEG2* ]] || die "$clip is not a y4m file"
w=$(sed -n 's/.* W\([0-9]*\).*/\1/p' <<<"$header") h=$(sed -n 's/.* H\([0-9]*\).*/\1/p' <<<"$header")
frame_bytes=$((w * h + 2 * ((w + 1) / 2) * ((h + 1) / 2) + 6))
clip_frames=$((($(stat -c %s "$clip") - ${#header} - 1) / frame_bytes))
[ "$clip_frames" -gt 0 ] || die "no frames in $clip"

now() { date +%s%N; }

echo "variant,frames,run,seconds,fps" >"$out/runs.csv"
{
  echo "$w x $h, $(basename "$clip"), $(nproc) CPUs$(command -v nvidia-smi >/dev/null &&
    printf ', %s' "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"); wall time of the whole command"
  echo
  printf '| -vf | frames |'; for r in $(seq 1 "$runs"); do printf ' fps run %s |' "$r"; done; echo ' median fps |'
  printf '|---|---|'; for r in $(seq 1 "$runs"); do printf -- '---|'; done; echo '---|'
} >"$out/results.md"

k=0
for v in "${variants[@]}"; do
  vf=${v%|*} n=${v##*|}
  [ "$v" != "$vf" ] || n=""
  [ -n "$n" ] && [ "$n" -lt "$clip_frames" ] || n=$clip_frames
  limit=(); [ "$n" -lt "$clip_frames" ] && limit=(-frames:v "$n")
  k=$((k + 1))
  fps_list=()
  for r in $(seq 0 "$runs"); do  # run 0: the warm-up
    log="$out/logs/$k.$r.log"
    t0=$(now)
    "$ffmpeg" -nostdin -loglevel warning -i "$clip" -vf "$vf" ${limit[@]+"${limit[@]}"} -f null - >"$log" 2>&1 ||
      die "-vf $vf failed (log $log): $(tail -3 "$log")"
    t1=$(now)
    ! grep -q "cuda backend failed" "$log" || die "-vf $vf fell back to the cpu (log $log)"
    s=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.4f", (b - a) / 1e9}')
    fps=$(awk -v n="$n" -v s="$s" 'BEGIN {printf "%.1f", n / s}')
    [ "$r" -eq 0 ] && continue
    echo "$vf,$n,$r,$s,$fps" >>"$out/runs.csv"
    fps_list+=("$fps")
    echo "bench-ffmpeg-gudcanny: -vf $vf run $r: $n frames in $s s, $fps fps" >&2
  done
  med=$(printf '%s\n' "${fps_list[@]}" | median)
  { printf '| `%s` | %s |' "$vf" "$n"; printf ' %s |' "${fps_list[@]}"; echo " $med |"; } >>"$out/results.md"
done
cat "$out/results.md"
