#!/usr/bin/env bash
# What --gpu-entropy off costs: stock x264 against the patched x264 with the stage off, on the same
# clip and options. Instruction counts (valgrind callgrind: repeatable on a noisy machine) of the
# whole process and of x264_8_encoder_encode (the encoding proper, without process start-up), and
# wall-clock medians of alternating runs. Streams must be byte-identical. --patched-extra "OPTS" gives the
# patched x264 more options, e.g. "--gpu-entropy auto" (on a machine without a GPU: x264's own writer).
#   tools/bench/bench-off.sh [--build-dir DIR] [--runs N] [--patched-extra OPTS] CLIP.y4m [X264 OPTIONS...]
set -euo pipefail
prog=bench-off
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../scripts/lib.sh
. "$here/../scripts/lib.sh"
build=build runs=11 extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --patched-extra) read -r -a extra <<<"$2"; shift 2 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || { echo "usage: tools/bench/bench-off.sh [--build-dir DIR] [--runs N] [--patched-extra OPTS] CLIP.y4m [X264 OPTIONS...]" >&2; exit 1; }
clip=$1; shift
opts=("$@")
[ ${#opts[@]} -gt 0 ] || opts=(--profile baseline --preset ultrafast --qp 26 --threads 1)
for t in valgrind callgrind_annotate /usr/bin/time; do command -v "$t" >/dev/null || { echo "bench-off: $t is needed (apt-get install valgrind time)" >&2; exit 2; }; done
stock="$build/plugin/x264/stock/x264" patched="$build/plugin/x264/patched/x264"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

declare -A total encode
for v in stock patched; do
  bin=(); [ $v = patched ] && bin=("$patched" "${extra[@]}") || bin=("$stock")
  valgrind --tool=callgrind --callgrind-out-file="$tmp/$v.cg" "${bin[@]}" --no-progress "${opts[@]}" \
    -o "$tmp/$v.264" "$clip" >"$tmp/$v.log" 2>&1
  total[$v]=$(grep -m1 '^summary:' "$tmp/$v.cg" | awk '{print $2}')
  encode[$v]=$(callgrind_annotate --inclusive=yes "$tmp/$v.cg" 2>/dev/null | grep -m1 'x264_8_encoder_encode ' | awk '{gsub(",","",$1); print $1}')
done
cmp -s "$tmp/stock.264" "$tmp/patched.264" || { echo "bench-off: streams differ" >&2; exit 3; }

: >"$tmp/stock.t"; : >"$tmp/patched.t"
for _ in $(seq "$runs"); do  # alternate, so that both see the same bursts of load
  /usr/bin/time -f %e -a -o "$tmp/stock.t" "$stock" --no-progress "${opts[@]}" -o /dev/null "$clip" 2>/dev/null
  /usr/bin/time -f %e -a -o "$tmp/patched.t" "$patched" "${extra[@]}" --no-progress "${opts[@]}" -o /dev/null "$clip" 2>/dev/null
done

printf 'clip %s, x264 %s\n' "$(basename "$clip")" "${opts[*]}"
printf '%-26s %16s %16s %9s\n' "" stock "patched ${extra[*]:-(off)}" ratio
awk -v s="${total[stock]}" -v p="${total[patched]}" 'BEGIN{printf "%-26s %16d %16d %9.4f\n", "instructions, process", s, p, p/s}'
awk -v s="${encode[stock]}" -v p="${encode[patched]}" 'BEGIN{printf "%-26s %16d %16d %9.4f\n", "instructions, encode", s, p, p/s}'
awk -v s="$(median <"$tmp/stock.t")" -v p="$(median <"$tmp/patched.t")" -v n="$runs" \
  'BEGIN{printf "%-26s %16.3f %16.3f %9.4f\n", "wall s, median of " n, s, p, p/s}'
