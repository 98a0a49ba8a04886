#!/usr/bin/env bash
# x264 end to end, stock against --gpu-entropy (issue 4's acceptance: ultrafast QP 10 1080p --threads 16 at
# least 1.15x the stock frame rate; medium QP 26 not slower than 0.98x). For every configuration the
# encoders run in turns R times on the same clip, the order reversed every other run (stock, cuda, cpu, then
# cpu, cuda, stock: a host that drifts weighs on each alike); every stream must be
# byte-identical to stock's; the frame rate is x264's own ("encoded N frames, F fps", timed after the encoder's
# open), the table gives the median over the runs, the ratio of medians, the median (and range) of each run's
# own ratio (the one to read where the host drifts), and the median wall time of each encoder's whole process. Writes DIR/results.md (Markdown) and DIR/runs.csv.
set -euo pipefail

prog=bench-x264-e2e
stock="" patched="" clip_tool="" out="" runs=5 frames=120 threads=16 clip=pan_1080p auto_was=""
configs="ultrafast:10 medium:26"
backends="cuda cpu"

usage() {
  cat <<USAGE
usage: bench-x264-e2e.sh --stock X264 --patched X264 --clip-tool GPUEC_CLIP --out DIR
                         [--runs R] [--frames N] [--threads T] [--clip NAME] [--configs "PRESET:QP ..."]
                         [--backends "cuda cpu"]
  --stock, --patched  the two x264 binaries (BUILD/plugin/x264/{stock,patched}/x264)
  --clip-tool         gpuec-clip (BUILD/sequences/gpuec-clip); the clip is made once in DIR
  --runs R            runs per encoder and configuration, in turns (default $runs)
  --frames N          frames of the clip (default $frames)
  --threads T         x264 --threads (default $threads)
  --clip NAME         gpuec-clip name (default $clip)
  --configs           preset:qp pairs (default "$configs"); always --profile baseline
  --backends          --gpu-entropy values compared with stock (default "$backends"); auto: the cuda
                      stage or, without a usable GPU, x264's own writer (the clip column says which)
Exit: 0 done (ratios are reported, not judged), 1 usage, 2 a failed encode or a stream that differs.
USAGE
}

here=$(cd "$(dirname "$0")" && pwd)
lib=$here/../scripts/lib.sh; [ -f "$lib" ] || lib=$here/lib.sh  # in a GPU bundle: beside this script
# shellcheck source=../scripts/lib.sh
. "$lib"
parse_options "--stock=stock --patched=patched --clip-tool=clip_tool --out=out --runs=runs --frames=frames
               --threads=threads --clip=clip --configs=configs --backends=backends" "$@"
[ -n "$stock" ] && [ -n "$patched" ] && [ -n "$clip_tool" ] && [ -n "$out" ] || { usage >&2; exit 1; }
for f in "$stock" "$patched" "$clip_tool"; do [ -x "$f" ] || die "$f is not an executable"; done
mkdir -p "$out"
y4m="$out/$clip.f$frames.y4m"
[ -f "$y4m" ] || "$clip_tool" get "$clip" -o "$y4m" --frames "$frames" >&2 || die "cannot make clip $clip"

fps_of() { sed -n 's/.*encoded [0-9]* frames, \([0-9.]*\) fps.*/\1/p' "$1" | tail -1; }

echo "config,encoder,run,fps,wall_s" >"$out/runs.csv"
{
  echo "| clip | preset | QP | threads | stock fps | $(for b in $backends; do printf '%s fps | %s / stock | per-run %s / stock, median (range) | ' "$b" "$b" "$b"; done)wall s stock$(for b in $backends; do printf ' / %s' "$b"; done) |"
  echo "|---|---|---|---|---|$(for b in $backends; do printf -- '---|---|---|'; done)---|"
} >"$out/results.md"

for cfg in $configs; do
  preset=${cfg%%:*} qp=${cfg##*:}
  opts=(--profile baseline --preset "$preset" --qp "$qp" --threads "$threads")
  name="${preset}_qp$qp"
  for r in $(seq 1 "$runs"); do
    order="stock $backends"
    [ $((r % 2)) = 1 ] || order="$(echo $backends | tr ' ' '\n' | tac | tr '\n' ' ')stock"
    for enc in $order; do
      log="$out/$name.$enc.$r.log" stream="$out/$name.$enc.264"
      if [ "$enc" = stock ]; then cmd=("$stock" "${opts[@]}" -o "$stream" "$y4m")
      else cmd=("$patched" "${opts[@]}" --gpu-entropy "$enc" -o "$stream" "$y4m"); fi
      t0=$(date +%s%N)
      "${cmd[@]}" >"$log" 2>&1 || die "encode failed: ${cmd[*]} (log $log)"
      wall=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN {printf "%.3f", (b - a) / 1e9}')
      fps=$(fps_of "$log"); [ -n "$fps" ] || die "no fps in $log"
      echo "$name,$enc,$r,$fps,$wall" >>"$out/runs.csv"
      if [ "$enc" != stock ]; then
        cmp -s "$out/$name.stock.264" "$stream" || die "$name: --gpu-entropy $enc stream differs from stock (run $r)"
        if [ "$enc" = auto ]; then  # cuda, or x264's own writer without a usable GPU
          grep -qE "gpu-entropy: (cuda stage on|auto: no usable CUDA device)" "$log" ||
            die "$name: neither the cuda stage nor auto's 'stage is off' line (log $log)"
          grep -q "gpu-entropy: cuda stage on" "$log" && auto_was=cuda || auto_was=off
        else
          grep -q "gpu-entropy: $enc stage on" "$log" || die "$name: the $enc stage was not on (log $log)"
        fi
      fi
      echo "bench-x264-e2e: $name $enc run $r: $fps fps" >&2
    done
  done
  s=$(awk -F, -v c="$name" '$1==c && $2=="stock" {print $4}' "$out/runs.csv" | median)
  row="| $clip${auto_was:+ (auto: $auto_was)} | $preset | $qp | $threads | $s | "
  for b in $backends; do
    m=$(awk -F, -v c="$name" -v e="$b" '$1==c && $2==e {print $4}' "$out/runs.csv" | median)
    # the median of the runs' own ratios (each run's stock and backend ran next to each other)
    pr=$(awk -F, -v c="$name" -v e="$b" '$1==c && $2=="stock" {s[$3]=$4} $1==c && $2==e {m[$3]=$4}
           END {for (r in m) if (s[r] > 0) printf "%.4f\n", m[r] / s[r]}' "$out/runs.csv")
    row+="$m | $(awk -v a="$m" -v b="$s" 'BEGIN {printf "%.3f", a / b}') | $(echo "$pr" | median | awk '{printf "%.3f", $1}') ($(echo "$pr" | sort -n | head -1 | awk '{printf "%.3f", $1}')-$(echo "$pr" | sort -n | tail -1 | awk '{printf "%.3f", $1}')) | "
  done
  walls=""  # whole process, start to exit (x264's fps starts after its open)
  for e in stock $backends; do
    walls+="${walls:+ / }$(awk -F, -v c="$name" -v e="$e" '$1==c && $2==e {print $5}' "$out/runs.csv" | median)"
  done
  row+="$walls | "
  echo "$row" >>"$out/results.md"
  rm -f "$out/$name".*.264
done
cat "$out/results.md"
