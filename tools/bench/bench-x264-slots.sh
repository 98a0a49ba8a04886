#!/usr/bin/env bash
# Issue 17: stock x264 against the patched x264's --gpu-entropy stage with every CPU of a group busy, read so
# that neither a slow CPU nor a drifting host can decide the ratio. Each of the first N CPUs runs one slot,
# pinned to it (taskset): single-threaded encodes of the same clip, stock and the stage alternating, for S
# seconds; then the slots are stopped and only finished encodes count (every one ran with all N slots busy).
# Per CPU, the ratio of the stage's median fps to stock's; the result is the median of those ratios over the
# CPUs (and their range), and the same for the CPU time (user + sys) of an encode. Streams are checked
# byte-identical to stock's first. Writes DIR/results.md and DIR/runs.csv (cpu,encoder,fps,cpu_s).
set -euo pipefail

prog=bench-x264-slots
stock="" patched="" clip_tool="" out="" cpus="" seconds=30 frames=60 clip=pan_1080p backend=cpu config=ultrafast:10

usage() {
  cat <<USAGE
usage: bench-x264-slots.sh --stock X264 --patched X264 --clip-tool GPUEC_CLIP --out DIR [--cpus N]
                           [--seconds S] [--frames F] [--clip NAME] [--config PRESET:QP] [--backend B]
  --stock, --patched  the two x264 binaries (BUILD/plugin/x264/{stock,patched}/x264)
  --clip-tool         gpuec-clip (BUILD/sequences/gpuec-clip); the clip is made once in DIR
  --cpus N            slots on CPUs 0..N-1 (default: every CPU, $(nproc 2>/dev/null || echo ?) here)
  --seconds S         how long the slots run (default $seconds); slots of fewer than 4 CPUs run 2 S
  --frames F          frames of the clip, one encode (default $frames)
  --clip NAME         gpuec-clip name (default $clip)
  --config P:QP       preset and QP (default $config); always --profile baseline --threads 1
  --backend B         the patched x264's --gpu-entropy value (default $backend)
Exit: 0 done (ratios reported, not judged), 1 usage, 2 a failed encode, a stream that differs, or a CPU
without a finished encode of each.
USAGE
}

here=$(cd "$(dirname "$0")" && pwd)
lib=$here/../scripts/lib.sh; [ -f "$lib" ] || lib=$here/lib.sh  # in a GPU bundle: beside this script
# shellcheck source=../scripts/lib.sh
. "$lib"
parse_options "--stock=stock --patched=patched --clip-tool=clip_tool --out=out --cpus=cpus --seconds=seconds
               --frames=frames --clip=clip --config=config --backend=backend" "$@"
[ -n "$stock" ] && [ -n "$patched" ] && [ -n "$clip_tool" ] && [ -n "$out" ] || { usage >&2; exit 1; }
[ -n "$cpus" ] || cpus=$(nproc)
for v in "$cpus" "$seconds" "$frames"; do [[ $v =~ ^[1-9][0-9]*$ ]] || usage_error "not a positive number: $v"; done
[ "$cpus" -le "$(nproc)" ] || usage_error "--cpus $cpus: this machine has $(nproc)"
for f in "$stock" "$patched" "$clip_tool"; do [ -x "$f" ] || die "$f is not an executable"; done
command -v taskset >/dev/null || die "taskset (util-linux) is needed"
mkdir -p "$out"
y4m="$out/$clip.f$frames.y4m"
[ -f "$y4m" ] || "$clip_tool" get "$clip" -o "$y4m" --frames "$frames" >&2 || die "cannot make clip $clip"
opts=(--profile baseline --preset "${config%%:*}" --qp "${config##*:}" --threads 1)
encoder() { if [ "$1" = stock ]; then cmd=("$stock"); else cmd=("$patched" --gpu-entropy "$backend"); fi; }  # sets cmd

encoder stock; "${cmd[@]}" "${opts[@]}" -o "$out/stock.264" "$y4m" >"$out/stock.log" 2>&1 || die "stock encode failed ($out/stock.log)"
encoder stage; "${cmd[@]}" "${opts[@]}" -o "$out/stage.264" "$y4m" >"$out/stage.log" 2>&1 || die "stage encode failed ($out/stage.log)"
cmp -s "$out/stock.264" "$out/stage.264" || die "--gpu-entropy $backend stream differs from stock"
grep -q "gpu-entropy: $backend stage on" "$out/stage.log" || die "the $backend stage was not on ($out/stage.log)"
rm -f "$out/stock.264" "$out/stage.264"

# One slot: encodes on CPU $1, stock and the stage in turns, each finished one appended to DIR/slot.CPU.
slot() {
  local c=$1 enc t fps cmd log="$out/slot.$1.log"
  while :; do
    for enc in stock stage; do
      encoder $enc
      t=$( { TIMEFORMAT='%U %S'; time taskset -c "$c" "${cmd[@]}" "${opts[@]}" -o /dev/null "$y4m" >"$log" 2>&1; } 2>&1 ) || continue
      fps=$(sed -n 's/.*encoded [0-9]* frames, \([0-9.]*\) fps.*/\1/p' "$log" | tail -1)
      [ -n "$fps" ] && echo "$c,$enc,$fps,$(echo "$t" | awk '{printf "%.3f", $1 + $2}')" >>"$out/slot.$c"
    done
  done
}
rm -f "$out"/slot.*
pids=()
stop_slots() {  # the slots, then the encodes in flight (also when this script is interrupted)
  [ ${#pids[@]} -gt 0 ] || return 0
  kill "${pids[@]}" 2>/dev/null || true
  pkill -f -- "$y4m" 2>/dev/null || true
  wait 2>/dev/null || true
  pids=()
}
trap stop_slots EXIT
trap 'exit 130' INT TERM
for c in $(seq 0 $((cpus - 1))); do slot "$c" & pids+=($!); done
run_s=$seconds; [ "$cpus" -ge 4 ] || run_s=$((2 * seconds))
echo "$prog: $cpus slots for $run_s s ..." >&2
sleep "$run_s"
stop_slots

echo "cpu,encoder,fps,cpu_s" >"$out/runs.csv"
cat "$out"/slot.[0-9]* >>"$out/runs.csv" 2>/dev/null || true
: >"$out/ratios"
for c in $(seq 0 $((cpus - 1))); do
  line=""
  for enc in stock stage; do
    f=$(awk -F, -v c="$c" -v e="$enc" '$1==c && $2==e {print $3}' "$out/runs.csv")
    u=$(awk -F, -v c="$c" -v e="$enc" '$1==c && $2==e {print $4}' "$out/runs.csv")
    [ -n "$f" ] || die "CPU $c finished no $enc encode in $run_s s: give more --seconds"
    line+=" $(echo "$f" | median) $(echo "$u" | median)"
  done
  echo "$c$line" | awk '{printf "%s %.4f %.4f\n", $1, $4 / $2, $5 / $3}' >>"$out/ratios"
done
rf=$(cut -d' ' -f2 "$out/ratios" | median) ru=$(cut -d' ' -f3 "$out/ratios" | median)
n_stock=$(grep -c ',stock,' "$out/runs.csv") n_stage=$(grep -c ',stage,' "$out/runs.csv")
{
  echo "| slots (CPUs) | seconds | $backend / stock fps, per-CPU median (range) | CPU time $backend / stock | encodes stock / $backend |"
  echo "|---:|---:|---|---:|---|"
  echo "| $cpus | $run_s | $(printf %.3f "$rf") ($(cut -d' ' -f2 "$out/ratios" | sort -g | head -1)-$(cut -d' ' -f2 "$out/ratios" | sort -g | tail -1)) | $(printf %.3f "$ru") | $n_stock / $n_stage |"
} >"$out/results.md"
rm -f "$out"/slot.* "$out/ratios"
cat "$out/results.md"
