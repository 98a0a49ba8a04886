#!/usr/bin/env bash
# Whole-tool re-entropy throughput (issue 17): times two avc-reentropy binaries, read to write (the whole
# process: start, read IN, parse, re-code, write OUT), on the same streams in the same run, and writes a
# Markdown table (input MB/s, macroblocks/s, new / baseline) to OUTDIR/reentropy-tool-BACKEND-tTHREADS.md.
# Each stream: WARMUP untimed runs of each binary, then REPEAT timed runs alternating baseline and new;
# medians. The outputs of the two must be identical (and the table says whether they equal the input).
# The "all" row sums the medians (a suite as a whole). With --out-dir, one more row: the whole list as one
# process of new (avc-reentropy --out-dir DIR STREAM...) against the baseline's one process per stream,
# both timed in each of REPEAT rounds (alternating, after WARMUP untimed rounds), medians of the rounds;
# every output must equal the baseline's.
#
# usage: bench-reentropy-tool.sh --baseline BIN --new BIN --out OUTDIR [--backend cpu|cuda|auto]
#            [--threads N (new only; default: the cores)] [--repeat 7] [--warmup 1] [--out-dir] STREAM...
set -euo pipefail
base= new= outdir= backend=cpu threads=$(nproc) repeat=7 warmup=1 suite=0
streams=()
while [ $# -gt 0 ]; do
  case $1 in
    --baseline) base=$2; shift 2 ;;
    --new) new=$2; shift 2 ;;
    --out) outdir=$2; shift 2 ;;
    --backend) backend=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --out-dir) suite=1; shift ;;
    -h|--help) sed -n 2,15p "$0"; exit 0 ;;
    *) streams+=("$1"); shift ;;
  esac
done
[ -n "$base" ] && [ -n "$new" ] && [ -n "$outdir" ] && [ ${#streams[@]} -gt 0 ] || { sed -n 14,15p "$0" >&2; exit 1; }
mkdir -p "$outdir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
table=$outdir/reentropy-tool-$backend-t$threads.md
now_ns() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : int((a[NR / 2] + a[NR / 2 + 1]) / 2)}'; }
run_base() { "$base" -q --backend "$backend" "$1" "$tmp/base.264"; }
run_new() { "$new" -q --backend "$backend" --threads "$threads" "$1" "$tmp/new.264"; }
{
  echo "avc-reentropy whole tool (read to write), backend $backend; baseline: $base; new: $new --threads $threads;"
  echo "$(nproc) cores; medians of $repeat runs after $warmup warm-up; $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "| stream | MB in | MBs | baseline ms | new ms | baseline MB/s | new MB/s | new M MBs/s | new / baseline | out = in |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"
} > "$table"
tot_bytes=0 tot_mbs=0 tot_b=0 tot_n=0 bad=0
for s in "${streams[@]}"; do
  for ((i = 0; i < warmup; ++i)); do run_base "$s"; run_new "$s"; done
  : > "$tmp/tb"; : > "$tmp/tn"
  for ((i = 0; i < repeat; ++i)); do
    t0=$(now_ns); run_base "$s"; t1=$(now_ns); run_new "$s"; t2=$(now_ns)
    echo $(((t1 - t0) / 1000)) >> "$tmp/tb"; echo $(((t2 - t1) / 1000)) >> "$tmp/tn"
  done
  if ! cmp -s "$tmp/base.264" "$tmp/new.264"; then echo "OUTPUTS DIFFER: $s" >&2; bad=1; fi
  same=no; cmp -s "$tmp/new.264" "$s" && same=yes
  bytes=$(stat -c %s "$s")
  mbs=$("$new" --stats -q --backend "$backend" --threads "$threads" "$s" "$tmp/new.264" 2>&1 | sed -n 's/.*macroblocks=\([0-9]*\).*/\1/p')
  ub=$(median < "$tmp/tb"); un=$(median < "$tmp/tn")
  tot_bytes=$((tot_bytes + bytes)); tot_mbs=$((tot_mbs + mbs)); tot_b=$((tot_b + ub)); tot_n=$((tot_n + un))
  awk -v n="$(basename "$s")" -v by="$bytes" -v m="$mbs" -v b="$ub" -v w="$un" -v same="$same" 'BEGIN {
    printf "| %s | %.2f | %d | %.1f | %.1f | %.1f | %.1f | %.3f | %.2f | %s |\n", n, by / 1e6, m, b / 1e3, w / 1e3,
      by / b, by / w, m / w, b / w, same }' >> "$table"
done
awk -v by="$tot_bytes" -v m="$tot_mbs" -v b="$tot_b" -v w="$tot_n" 'BEGIN {
  printf "| **all %s** | %.2f | %d | %.1f | %.1f | %.1f | %.1f | %.3f | **%.2f** | |\n", "", by / 1e6, m, b / 1e3, w / 1e3,
    by / b, by / w, m / w, b / w }' >> "$table"
if [ $suite -eq 1 ]; then
  mkdir -p "$tmp/bd" "$tmp/nd"
  names=$(for s in "${streams[@]}"; do basename "$s"; done | sort | uniq -d)
  [ -z "$names" ] || { echo "--out-dir: two streams named $names" >&2; exit 1; }
  base_all() { for s in "${streams[@]}"; do "$base" -q --backend "$backend" "$s" "$tmp/bd/$(basename "$s")"; done; }
  new_all() { "$new" -q --backend "$backend" --threads "$threads" --out-dir "$tmp/nd" "${streams[@]}"; }
  for ((i = 0; i < warmup; ++i)); do base_all; new_all; done
  : > "$tmp/tb"; : > "$tmp/tn"
  for ((i = 0; i < repeat; ++i)); do
    t0=$(now_ns); base_all; t1=$(now_ns); new_all; t2=$(now_ns)
    echo $(((t1 - t0) / 1000)) >> "$tmp/tb"; echo $(((t2 - t1) / 1000)) >> "$tmp/tn"
  done
  for s in "${streams[@]}"; do
    cmp -s "$tmp/bd/$(basename "$s")" "$tmp/nd/$(basename "$s")" || { echo "OUTPUTS DIFFER (--out-dir): $s" >&2; bad=1; }
  done
  ub=$(median < "$tmp/tb"); un=$(median < "$tmp/tn")
  awk -v by="$tot_bytes" -v m="$tot_mbs" -v b="$ub" -v w="$un" -v k="${#streams[@]}" 'BEGIN {
    printf "| **all, new as one process (--out-dir; baseline: %d processes, in the same rounds)** | %.2f | %d | %.1f | %.1f | %.1f | %.1f | %.3f | **%.2f** | |\n",
      k, by / 1e6, m, b / 1e3, w / 1e3, by / b, by / w, m / w, b / w }' >> "$table"
fi
[ $bad -eq 0 ] || echo "**outputs of baseline and new DIFFER (see stderr)**" >> "$table"
cat "$table"
exit $bad
