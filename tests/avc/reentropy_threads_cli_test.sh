#!/usr/bin/env bash
# avc-reentropy --threads: bad values are usage errors (exit 1, a message naming the option); good values
# write the same bytes as --threads 1; --stats prints its line. Usage: reentropy_threads_cli_test.sh AVC_REENTROPY STREAM
set -u
tool=$1 stream=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
for bad in 0 -1 -8 abc 2x "" 1025 99999999999999999999; do
  "$tool" --threads "$bad" "$stream" "$tmp/out.264" 2>"$tmp/err"
  rc=$?
  if [ $rc -ne 1 ] || ! grep -q -- "--threads" "$tmp/err"; then echo "FAIL: --threads '$bad': exit $rc: $(cat "$tmp/err")"; fail=1; fi
  [ -e "$tmp/out.264" ] && { echo "FAIL: --threads '$bad' wrote OUT"; fail=1; }
done
"$tool" "$stream" --threads 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] || { echo "FAIL: --threads without a value: exit $rc"; fail=1; }
"$tool" -q --threads 1 "$stream" "$tmp/one.264" || fail=1
for t in 2 3 8; do
  "$tool" -q --stats --threads $t "$stream" "$tmp/t$t.264" 2>"$tmp/stats" || { echo "FAIL: --threads $t"; fail=1; }
  cmp -s "$tmp/one.264" "$tmp/t$t.264" || { echo "FAIL: --threads $t differs from --threads 1"; fail=1; }
  grep -q "^avc-reentropy-stats: in_bytes=$(stat -c %s "$stream") .*threads=$t backend=cpu threaded=1 cpu_batches=[1-9][0-9]* cpu_mbs=[0-9]* cuda_batches=0 cuda_mbs=0 read_s=[0-9.]* recode_s=[0-9.]* write_s=[0-9.]* headers_s=[0-9.]* parse_s=[0-9.]* code_s=[0-9.]*$" "$tmp/stats" ||
    { echo "FAIL: --stats line: $(cat "$tmp/stats")"; fail=1; }
  [ "$(sed -n 's/.* macroblocks=\([0-9]*\) .*/\1/p' "$tmp/stats")" = "$(sed -n 's/.*cpu_mbs=\([0-9]*\) .*/\1/p' "$tmp/stats")" ] ||
    { echo "FAIL: cpu_mbs is not macroblocks: $(cat "$tmp/stats")"; fail=1; }
done
[ $fail -eq 0 ] && echo "avc-reentropy --threads: ok"
exit $fail
