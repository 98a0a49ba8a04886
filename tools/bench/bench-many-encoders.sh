#!/usr/bin/env bash
# Many x264 encoders on one GPU (issue 17): groups of N concurrent x264 processes with --threads T each
# (default 8x2, 16x1 and the single-process reference 1x16), stock against the patched x264 with
# --gpu-entropy BACKEND, on the same clip. Per configuration (preset:QP) and round, every group runs stock,
# then BACKEND (paired, in turns); the aggregate frame rate of a group is (N x frames) / the wall time of the
# whole group (first start to last exit). Reports the medians over the rounds and the ratio of medians,
# the CPU time of the group (busy share of the host's cores), per-process GPU memory (nvidia-smi
# --query-compute-apps sampled while the group runs), the stage's own device and pinned bytes (from
# x264's log line "gpu-entropy: B stage memory: D MiB device, P MiB pinned per stage, S stages" when the
# x264 prints it, else n/a), GPU utilisation (nvidia-smi dmon -s u), and whether every stream of every
# process is byte-identical to stock's. Writes DIR/results.md and the raw logs (DIR/runs.csv,
# DIR/memory.csv, DIR/logs/).
set -euo pipefail

prog=bench-many-encoders
stock="" patched="" clip_tool="" out="" y4m="" work=""
rounds=2 frames=60 clip=pan_1080p backend=cuda sample=0.5
groups="8x2 16x1 1x16"
configs="ultrafast:10 medium:26"

usage() {
  cat <<USAGE
usage: bench-many-encoders.sh --stock X264 --patched X264 --clip-tool GPUEC_CLIP --out DIR
                              [--groups "NxT ..."] [--configs "PRESET:QP ..."] [--rounds R] [--frames F]
                              [--clip NAME | --y4m FILE] [--backend cuda|cpu|auto] [--sample S] [--work DIR]
  --stock, --patched  the two x264 binaries (BUILD/plugin/x264/{stock,patched}/x264, or a GPU bundle's
                      host/x264-stock and host/x264-patched)
  --clip-tool         gpuec-clip (BUILD/sequences/gpuec-clip, bundle host/gpuec-clip); the clip is made
                      once in DIR (not needed with --y4m)
  --groups            N x T: N processes at once, each with --threads T (default "$groups")
  --configs           preset:qp pairs (default "$configs"); always --profile baseline
  --rounds R          rounds; each runs every group stock then BACKEND (default $rounds)
  --frames F          frames of the clip (default $frames)
  --clip NAME         gpuec-clip name (default $clip); --y4m FILE takes a y4m instead
  --backend B         the patched x264's --gpu-entropy (default $backend; cpu runs anywhere, which is how
                      CTest many_encoders_tool checks this script without a GPU)
  --sample S          seconds between nvidia-smi samples (default $sample)
  --work DIR          where the streams are written and hashed (default: a new folder under \${TMPDIR:-/tmp},
                      removed at the end); streams are deleted once hashed
Exit: 0 done (ratios are reported, not judged), 1 usage, 2 a failed encode, a stage that was not on, or a
stream that differs from stock's (the table is written first, with "no" in the identical column).
USAGE
}

here=$(cd "$(dirname "$0")" && pwd)
lib=$here/../scripts/lib.sh; [ -f "$lib" ] || lib=$here/lib.sh  # in a GPU bundle: beside this script
# shellcheck source=../scripts/lib.sh
. "$lib"
parse_options "--stock=stock --patched=patched --clip-tool=clip_tool --out=out --groups=groups --configs=configs
               --rounds=rounds --frames=frames --clip=clip --y4m=y4m --backend=backend --sample=sample
               --work=work" "$@"
[ -n "$stock" ] && [ -n "$patched" ] && [ -n "$out" ] || usage_error "--stock, --patched and --out are required"
[ -n "$y4m" ] || [ -n "$clip_tool" ] || usage_error "--clip-tool or --y4m is required"
for f in "$stock" "$patched" ${clip_tool:+"$clip_tool"}; do [ -x "$f" ] || die "$f is not an executable"; done
case "$backend" in cuda|cpu|auto) ;; *) usage_error "--backend must be cuda, cpu or auto" ;; esac
[[ "$rounds" =~ ^[1-9][0-9]*$ && "$frames" =~ ^[1-9][0-9]*$ ]] || usage_error "--rounds and --frames are positive"
for g in $groups; do [[ "$g" =~ ^[1-9][0-9]*x[1-9][0-9]*$ ]] || usage_error "bad group '$g' (NxT)"; done
for c in $configs; do [[ "$c" =~ ^[a-z]+:[0-9]+$ ]] || usage_error "bad config '$c' (PRESET:QP)"; done

mkdir -p "$out/logs"
out=$(cd "$out" && pwd)
given_work=$work
scratch_dir
if [ -z "$y4m" ]; then
  y4m="$out/$clip.f$frames.y4m"
  [ -f "$y4m" ] || "$clip_tool" get "$clip" -o "$y4m" --frames "$frames" >&2 || die "cannot make clip $clip"
else
  [ -f "$y4m" ] || die "$y4m not found"
  clip=$(basename "$y4m" .y4m)
fi
cores=$(nproc)
have_smi=0
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 && have_smi=1
{
  echo "# $prog"
  echo "date: $(date -u +%FT%TZ); host: $(hostname); cores: $cores"
  echo "clip: $y4m ($frames frames); groups: $groups; configs: $configs; rounds: $rounds; backend: $backend"
  [ "$have_smi" = 1 ] && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  echo "stock: $("$stock" --version 2>/dev/null | head -1)"
} >"$out/environment.txt"

# Background samplers for one group: per-process GPU memory and utilisation (nothing without nvidia-smi).
smi_pids=()
start_samplers() {  # tag
  smi_pids=()
  [ "$have_smi" = 1 ] || return 0
  ( while :; do
      nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null |
        sed "s/^/$(date +%s.%N), /"
      sleep "$sample"
    done ) >"$out/logs/$1.apps.csv" &
  smi_pids+=($!)
  nvidia-smi dmon -s u -d 1 >"$out/logs/$1.dmon.txt" 2>&1 &
  smi_pids+=($!)
}
stop_samplers() {
  local p
  for p in "${smi_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${smi_pids[@]}"; do wait "$p" 2>/dev/null || true; done
  smi_pids=()
}
trap 'stop_samplers; [ -n "$given_work" ] || rm -rf "$work"' EXIT

# One group: N processes at once; prints "wall user sys" seconds. Streams in $work/TAG.K.264, logs in
# $out/logs/TAG.K.log, x264 pids in $out/logs/TAG.pids.
run_group() {  # tag n x264 args...
  local tag=$1 n=$2 exe=$3
  shift 3
  local k t0 t1 times
  start_samplers "$tag"
  TIMEFORMAT='%R %U %S'
  times=$( { time (
    pids=()
    for k in $(seq 1 "$n"); do
      "$exe" "$@" -o "$work/$tag.$k.264" "$y4m" >"$out/logs/$tag.$k.log" 2>&1 &
      pids+=($!)
    done
    echo "${pids[*]}" >"$out/logs/$tag.pids"
    rc=0
    for p in "${pids[@]}"; do wait "$p" || rc=1; done
    exit $rc
  ) ; } 2>&1 ) || { stop_samplers; die "an encode of $tag failed (logs $out/logs/$tag.*.log)"; }
  stop_samplers
  echo "$times" | tail -1
}

# GPU memory of the group's processes: "max per process, max of the sum" MiB over the samples (the group's
# pids when nvidia-smi shows them, else every compute process: in a container it may show other pids).
gpu_memory() {  # tag
  local f="$out/logs/$1.apps.csv"
  [ -s "$f" ] || { echo "n/a n/a"; return; }
  awk -F', *' -v pids=" $(cat "$out/logs/$1.pids") " '
    { rows[NR] = $0; if (index(pids, " " $2 " ")) ours = 1 }
    END {
      for (i = 1; i <= NR; i++) {
        split(rows[i], c, /, */)
        if (ours && !index(pids, " " c[2] " ")) continue
        if (c[3] + 0 > per) per = c[3] + 0
        sum[c[1]] += c[3]
      }
      for (t in sum) if (sum[t] > all) all = sum[t]
      if (per == "") print "n/a n/a"; else print per, all
    }' "$f"
}

# SM utilisation of nvidia-smi dmon -s u: "max mean" %.
gpu_util() {  # tag
  local f="$out/logs/$1.dmon.txt"
  [ -s "$f" ] || { echo "n/a n/a"; return; }
  awk '$1 !~ /^#/ && $2 ~ /^[0-9]+$/ { n++; s += $2; if ($2 > m) m = $2 }
       END { if (n) printf "%d %.1f\n", m, s / n; else print "n/a n/a" }' "$f"
}

# The stage's own memory from the first log of the group: "device pinned stages" (MiB, MiB, count) or n/a.
stage_memory() {  # tag
  local line
  line=$(sed -n 's/.*gpu-entropy: [a-z]* stage memory: \([0-9.]*\) MiB device, \([0-9.]*\) MiB pinned per stage, \([0-9]*\) stages.*/\1 \2 \3/p' \
    "$out/logs/$1.1.log" | tail -1)
  echo "${line:-n/a n/a n/a}"
}

echo "config,group,encoder,round,processes,threads,wall_s,user_s,sys_s,frames,fps,cpu_busy_pct,gpu_mem_per_process_mib,gpu_mem_all_mib,sm_max_pct,sm_mean_pct,stage_device_mib,stage_pinned_mib,stages,identical" \
  >"$out/runs.csv"
differs=0
for cfg in $configs; do
  preset=${cfg%%:*} qp=${cfg##*:}
  name="${preset}_qp$qp"
  for r in $(seq 1 "$rounds"); do
    for g in $groups; do
      n=${g%x*} t=${g#*x}
      opts=(--profile baseline --preset "$preset" --qp "$qp" --threads "$t")
      ref=""
      for enc in stock "$backend"; do
        tag="$name.${g}.$enc.r$r"
        if [ "$enc" = stock ]; then set -- "$stock" "${opts[@]}"
        else set -- "$patched" "${opts[@]}" --gpu-entropy "$backend"; fi
        run_group "$tag" "$n" "$@" >"$out/logs/$tag.time"
        read -r wall user sys <"$out/logs/$tag.time"
        # Every process's stream against the first stock stream of this group and round.
        same=yes
        for k in $(seq 1 "$n"); do
          log="$out/logs/$tag.$k.log"
          if [ "$enc" != stock ] && ! grep -q "gpu-entropy: ${backend/auto/[a-z]*} stage on" "$log"; then
            die "$tag: the $backend stage was not on (log $log)"
          fi
          h=$(md5sum <"$work/$tag.$k.264" | cut -d' ' -f1)
          rm -f "$work/$tag.$k.264"
          [ -n "$ref" ] || ref=$h
          [ "$h" = "$ref" ] || same=no
        done
        echo "$h" >"$out/logs/$tag.md5"
        [ "$same" = yes ] || { differs=1; echo "$prog: $tag: a stream differs from stock's" >&2; }
        fps=$(awk -v n="$n" -v f="$frames" -v w="$wall" 'BEGIN { printf "%.2f", n * f / w }')
        busy=$(awk -v u="$user" -v s="$sys" -v w="$wall" -v c="$cores" 'BEGIN { printf "%.0f", 100 * (u + s) / (w * c) }')
        read -r mem_proc mem_all < <(gpu_memory "$tag")
        read -r sm_max sm_mean < <(gpu_util "$tag")
        read -r st_dev st_pin st_n < <(stage_memory "$tag")
        echo "$name,$g,$enc,$r,$n,$t,$wall,$user,$sys,$frames,$fps,$busy,$mem_proc,$mem_all,$sm_max,$sm_mean,$st_dev,$st_pin,$st_n,$same" \
          >>"$out/runs.csv"
        echo "$prog: $name $g $enc round $r: $fps fps (wall ${wall}s, CPU $busy %, GPU $mem_proc MiB/process, SM max $sm_max %, identical $same)" >&2
      done
    done
  done
done

# The table: medians over the rounds, ratio of medians; memory and utilisation of the backend's runs (max).
col() { awk -F, -v c="$1" -v g="$2" -v e="$3" -v k="$4" 'NR > 1 && $1 == c && $2 == g && $3 == e { print $k }' "$out/runs.csv"; }
max_of() { awk 'BEGIN { m = "n/a" } $1 != "n/a" { if (m == "n/a" || $1 + 0 > m + 0) m = $1 } END { print m }'; }
{
  echo "| preset | QP | processes x threads | stock fps | $backend fps | $backend / stock | CPU busy % stock / $backend | GPU MiB per process | GPU MiB all processes | stage device MiB per stage | stage pinned MiB per stage | stages per process | SM % max / mean | identical to stock |"
  echo "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
  for cfg in $configs; do
    preset=${cfg%%:*} qp=${cfg##*:}
    name="${preset}_qp$qp"
    for g in $groups; do
      s=$(col "$name" "$g" stock 11 | median)
      b=$(col "$name" "$g" "$backend" 11 | median)
      ratio=$(awk -v a="$b" -v s="$s" 'BEGIN { printf "%.3f", a / s }')
      busy="$(col "$name" "$g" stock 12 | median) / $(col "$name" "$g" "$backend" 12 | median)"
      sm_means=$(col "$name" "$g" "$backend" 16 | max_of)
      same=$(col "$name" "$g" "$backend" 20 | sort -u | tr '\n' ' ')
      [ "$(col "$name" "$g" stock 20 | sort -u)" = yes ] || same="stock runs differ: $same"
      echo "| $preset | $qp | $g | $s | $b | $ratio | $busy | $(col "$name" "$g" "$backend" 13 | max_of) | $(col "$name" "$g" "$backend" 14 | max_of) | $(col "$name" "$g" "$backend" 17 | max_of) | $(col "$name" "$g" "$backend" 18 | max_of) | $(col "$name" "$g" "$backend" 19 | max_of) | $(col "$name" "$g" "$backend" 15 | max_of) / $sm_means | ${same% } |"
    done
  done
  echo
  echo "Clip $clip, $frames frames; $rounds rounds (stock then $backend per group); fps = processes x frames / wall time"
  echo "of the group; medians over the rounds. GPU MiB: nvidia-smi --query-compute-apps used_memory, the largest"
  echo "sample (per process, and summed over the group's processes). Stage MiB: the x264's closing log line."
} >"$out/results.md"
cat "$out/results.md"
[ "$differs" = 0 ] || die "a --gpu-entropy $backend stream differs from stock's (see $out/runs.csv)"
