#!/usr/bin/env bash
# Test of the avc-reentropy command (tools/cli/avc_reentropy.cpp), registered as CTest avc_reentropy_tool (label
# unit) by tests/tools/CMakeLists.txt. usage: avc_reentropy_test.sh AVC_REENTROPY CONFORMANCE_DIR cuda|nocuda
# Usage errors (exit 1), unreadable, empty, damaged, truncated and unwritable files (exit 2 with the NAL unit
# named), --check on an identical output (exit 0), and the backends: cpu and auto give the input back; cuda gives it
# back where a GPU is usable, else exits 2 naming the backend (this machine has no GPU).
set -u
TOOL=$1 CONF=$2 CUDA=${3:-nocuda}
. "$(dirname "$0")/checks.sh"
S="$CONF/SVA_BA1_B.264"

expect 0 "--help" -- "$TOOL" --help
grep -q -- "--backend NAME" "$T/out" && ok "--help documents --backend" || bad "--help lacks --backend"
expect 1 "no arguments" -- "$TOOL"
expect 1 "one argument" -- "$TOOL" "$S"
expect 1 "unknown option" -- "$TOOL" --fast "$S" "$T/o.264"
expect 1 "unknown backend" -- "$TOOL" --backend gpu "$S" "$T/o.264"
expect 1 "--batch-mbs 0" -- "$TOOL" --batch-mbs 0 "$S" "$T/o.264"
expect 1 "--device -1" -- "$TOOL" --device -1 "$S" "$T/o.264"
expect 1 "--batch-mbs x" -- "$TOOL" --batch-mbs 12x "$S" "$T/o.264"
expect 2 "missing input" -- "$TOOL" "$T/none.264" "$T/o.264"
stderr_has "No such file or directory" "missing input: message"

# A stream that is not H.264: an SPS of garbage.
printf '\x00\x00\x00\x01\x67\xff\xff\xff\xff\xff\xff\x00\x00\x01\x68\xee' >"$T/bad.264"
expect 2 "damaged SPS" -- "$TOOL" "$T/bad.264" "$T/o.264"
stderr_has "NAL 0" "damaged SPS: names NAL 0"
expect 2 "empty input" -- "$TOOL" /dev/null "$T/o.264"
stderr_has "empty stream" "empty input: message"

if [ -f "$S" ]; then
  for b in cpu auto; do
    expect 0 "--backend $b --check" -- "$TOOL" --backend "$b" --check "$S" "$T/$b.264"
    cmp -s "$S" "$T/$b.264" && ok "$b: output == input" || bad "$b: output differs"
    stderr_has "output identical to the input" "$b: summary"
  done
  expect 0 "--batch-mbs 1" -- "$TOOL" --backend cpu --batch-mbs 1 --check "$S" "$T/o.264"
  expect 0 "-q: no summary" -- "$TOOL" -q "$S" "$T/o.264"
  [ -s "$T/err" ] && bad "-q printed: $(cat "$T/err")" || ok "-q is quiet"
  expect 0 "output to stdout" -- "$TOOL" -q "$S" -
  cmp -s "$S" "$T/out" && ok "stdout output == input" || bad "stdout output differs"
  expect 2 "unwritable output" -- "$TOOL" "$S" "$T/no/such/dir/o.264"
  # Truncated in the middle of a slice: refused with the NAL unit named, the NAL units before it written.
  head -c 20000 "$S" >"$T/trunc.264"
  expect 2 "truncated stream" -- "$TOOL" "$T/trunc.264" "$T/o.264"
  stderr_has "NAL [0-9]" "truncated: names the NAL unit"
  if [ "$CUDA" = cuda ]; then
    "$TOOL" --backend cuda --check -q "$S" "$T/cuda.264" 2>"$T/err"; rc=$?
    if [ $rc = 0 ] && cmp -s "$S" "$T/cuda.264"; then ok "cuda: output == input"
    elif [ $rc = 2 ] && grep -q "backend: cuda:" "$T/err"; then ok "cuda: no GPU here, exit 2: $(head -c 120 "$T/err")"
    else bad "cuda: exit $rc: $(cat "$T/err")"; fi
  else
    expect 2 "--backend cuda (no CUDA in the build)" -- "$TOOL" --backend cuda "$S" "$T/o.264"
    stderr_has "no CUDA" "no CUDA: message"
  fi
else
  echo "skipped: $S not found (the conformance streams)"
fi
finish
