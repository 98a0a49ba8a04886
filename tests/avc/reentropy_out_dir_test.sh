#!/usr/bin/env bash
# avc-reentropy --out-dir: every IN is written to DIR/NAME with the bytes a one-stream run writes; a damaged
# stream among them is reported (exit 2) and leaves no file, the others are still written; two INs with one
# NAME, '-', no IN and a missing DIR are refused. Usage: reentropy_out_dir_test.sh AVC_REENTROPY CONFORMANCE_DIR
set -u
tool=$1 conf=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
streams=()
for n in BA1_FT_C.264 CI1_FT_B.264 MIDR_MW_D.264 SVA_BA1_B.264 BA1_Sony_D.jsv; do streams+=("$conf/$n"); done
mkdir -p "$tmp/one" "$tmp/many" "$tmp/bad"
for s in "${streams[@]}"; do
  "$tool" -q --threads 1 "$s" "$tmp/one/$(basename "$s")" || { echo "FAIL: one-stream run of $s"; fail=1; }
done
head -c 20000 "${streams[0]}" > "$tmp/bad/cut.264"
"$tool" --threads 3 --stats --out-dir "$tmp/many" "${streams[0]}" "$tmp/bad/cut.264" "${streams[@]:1}" 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] || { echo "FAIL: a damaged stream among them: exit $rc, not 2"; fail=1; }
grep -q "cut.264" "$tmp/err" || { echo "FAIL: the damaged stream is not named: $(cat "$tmp/err")"; fail=1; }
[ -e "$tmp/many/cut.264" ] && { echo "FAIL: the damaged stream left an output"; fail=1; }
for s in "${streams[@]}"; do
  cmp -s "$tmp/one/$(basename "$s")" "$tmp/many/$(basename "$s")" || { echo "FAIL: --out-dir output of $s differs"; fail=1; }
done
[ "$(ls -A "$tmp/many" | wc -l)" -eq ${#streams[@]} ] || { echo "FAIL: files left in DIR: $(ls -A "$tmp/many")"; fail=1; }
[ "$(grep -c '^avc-reentropy-stats: ' "$tmp/err")" -eq ${#streams[@]} ] || { echo "FAIL: not one stats line per stream"; fail=1; }
grep -q "^avc-reentropy-stats-total: streams=$(( ${#streams[@]} + 1 )) failed=1 in_bytes=[0-9]* macroblocks=[0-9]* seconds=[0-9.]* in_MB_per_s=[0-9.]* mb_per_s=[0-9]*$" "$tmp/err" ||
  { echo "FAIL: total line: $(grep total "$tmp/err")"; fail=1; }
"$tool" -q --out-dir "$tmp/many" "${streams[@]}" || { echo "FAIL: all good streams: exit $?"; fail=1; }
"$tool" -q --check --out-dir "$tmp/many" "${streams[@]}" || { echo "FAIL: --check with identical outputs: exit $?"; fail=1; }
# refusals: usage errors, nothing written
rm -rf "$tmp/many" && mkdir "$tmp/many"
cp "${streams[0]}" "$tmp/bad/$(basename "${streams[0]}")"
for args in "${streams[0]} $tmp/bad/$(basename "${streams[0]}")" "-" "" ; do
  # shellcheck disable=SC2086
  "$tool" --out-dir "$tmp/many" $args 2>"$tmp/err"
  rc=$?
  [ $rc -eq 1 ] || { echo "FAIL: --out-dir DIR '$args': exit $rc, not 1"; fail=1; }
  grep -q -- "--out-dir" "$tmp/err" || { echo "FAIL: --out-dir DIR '$args': $(cat "$tmp/err")"; fail=1; }
done
"$tool" --out-dir "$tmp/none" "${streams[0]}" 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] || { echo "FAIL: a missing DIR: exit $rc, not 2"; fail=1; }
[ -z "$(ls -A "$tmp/many")" ] || { echo "FAIL: a refused run wrote $(ls -A "$tmp/many")"; fail=1; }
# a stream of 1 MiB or more is mapped, not read (files::InputBytes): two copies of one stream back to back
cat "${streams[0]}" "${streams[0]}" > "$tmp/bad/big.264"
[ "$(stat -c %s "$tmp/bad/big.264")" -ge 1048576 ] || { echo "FAIL: the big stream is under 1 MiB"; fail=1; }
"$tool" -q --threads 1 "$tmp/bad/big.264" "$tmp/one/big.264" || { echo "FAIL: one-thread run of the big stream"; fail=1; }
"$tool" -q --check --threads 3 --out-dir "$tmp/many" "$tmp/bad/big.264" || { echo "FAIL: --check of the big stream: exit $?"; fail=1; }
cmp -s "$tmp/one/big.264" "$tmp/many/big.264" && cmp -s "$tmp/bad/big.264" "$tmp/many/big.264" ||
  { echo "FAIL: the big stream's output differs"; fail=1; }
[ $fail -eq 0 ] && echo "avc-reentropy --out-dir: ok"
exit $fail
