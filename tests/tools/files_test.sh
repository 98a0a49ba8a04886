#!/usr/bin/env bash
# The tools test (issue 16, label unit): every program that reads a file and writes one, through one matrix of
# bad inputs and awkward outputs (tools/cli/files.h is what they share):
#   inputs: missing, a directory, empty, truncated, unreadable (skipped as root: root reads anyway);
#   outputs: OUT == IN refused, an existing OUT that must survive a failure, a FIFO and a character device (still
#   one afterwards; the device as root only, made with mknod), a symlink (the link stays, its target replaced),
#   a full filesystem (a 64 KiB tmpfs, as root only), SIGINT and SIGTERM during a long write (no partial OUT, no
#   temporary file left).
# usage: files_test.sh BUILD_TOOLS_DIR GPUEC_CLIP CONFORMANCE_DIR
set -u
tools=$1 clip=$2 conformance=$3
# shellcheck source=checks.sh
. "$(dirname "$0")/checks.sh"

# ---- inputs of each tool
printf 'P5\n64 48\n255\n' >"$T/img.pgm"
head -c $((64 * 48)) /dev/urandom >>"$T/img.pgm"
head -c 40 "$T/img.pgm" >"$T/img_trunc.pgm"
head -c 200000 /dev/urandom | base64 >"$T/text"
"$tools/gvle" compress -f -o "$T/text.gvle" "$T/text" || bad "gvle compress of the test input"
head -c 500 "$T/text.gvle" >"$T/text_trunc.gvle"
stream=$(ls "$conformance"/BA1_Sony_D.jsv 2>/dev/null)
[ -n "$stream" ] && cp "$stream" "$T/s.264" && head -c 3000 "$stream" >"$T/s_trunc.264"
: >"$T/empty"
mkdir -p "$T/dir"

# Each tool: run_NAME IN OUT (the whole command), good_NAME (a good IN), trunc_NAME (a truncated IN, or "" when
# any prefix is a valid input), empty_ok_NAME (1 when an empty IN is valid).
run_gvle_c()   { "$tools/gvle" compress -f -o "$2" "$1"; }
run_gvle_d()   { "$tools/gvle" decompress -f -o "$2" "$1"; }
run_gudcanny() { "$tools/gudcanny" -q "$1" "$2"; }
run_avc()      { "$tools/avc-reentropy" -q "$1" "$2"; }
run_eval()     { "$tools/canny-eval" -q --json "$2" "$1" "$T/img.pgm"; }
good_gvle_c=$T/text   trunc_gvle_c=""                 empty_ok_gvle_c=1
good_gvle_d=$T/text.gvle trunc_gvle_d=$T/text_trunc.gvle empty_ok_gvle_d=0
good_gudcanny=$T/img.pgm trunc_gudcanny=$T/img_trunc.pgm empty_ok_gudcanny=0
good_avc=$T/s.264     trunc_avc=$T/s_trunc.264        empty_ok_avc=0
good_eval=$T/img.pgm  trunc_eval=$T/img_trunc.pgm     empty_ok_eval=0
names="gvle_c gvle_d gudcanny eval"
[ -n "$stream" ] && names="$names avc"

# OUT holds "keep": after a failure it must still hold it, and no temporary file may be left beside it.
kept() {  # what OUT
  if [ "$(cat "$2" 2>/dev/null)" = keep ] && [ -z "$(ls -A "$(dirname "$2")" | grep '\.tmp-')" ]; then ok "$1: OUT kept, no temporary"
  else bad "$1: OUT lost or a temporary file left: $(ls -la "$(dirname "$2")")"; fi
}

for n in $names; do
  good=good_$n trunc=trunc_$n empty_ok=empty_ok_$n
  mkdir -p "$T/o_$n"; out=$T/o_$n/out; echo keep >"$out"
  expect 2 "$n: missing input" -- "run_$n" "$T/none" "$out"; kept "$n: missing input" "$out"
  expect 2 "$n: a directory as input" -- "run_$n" "$T/dir" "$out"; kept "$n: a directory" "$out"
  stderr_has "is a directory" "$n: the message says 'is a directory'"
  if [ "${!empty_ok}" = 0 ]; then
    "run_$n" "$T/empty" "$out" >/dev/null 2>"$T/err"; rc=$?
    if [ $rc -ge 2 ]; then ok "$n: empty input refused (exit $rc)"; else bad "$n: empty input: exit $rc"; fi
    kept "$n: empty input" "$out"
  fi
  if [ -n "${!trunc}" ]; then
    "run_$n" "${!trunc}" "$out" >/dev/null 2>"$T/err"; rc=$?
    if [ $rc -ge 2 ]; then ok "$n: truncated input refused (exit $rc)"; else bad "$n: truncated input: exit $rc"; fi
    kept "$n: truncated input" "$out"
  fi
  if [ "$(id -u)" != 0 ]; then
    cp "${!good}" "$T/unreadable"; chmod 000 "$T/unreadable"
    expect 2 "$n: unreadable input" -- "run_$n" "$T/unreadable" "$out"; kept "$n: unreadable input" "$out"
    rm -f "$T/unreadable"
  else
    echo "skip $n: unreadable input (root reads any file)"
  fi
  # OUT == IN: refused, the input untouched.
  cp "${!good}" "$T/o_$n/same"; sum=$(cksum <"$T/o_$n/same")
  "run_$n" "$T/o_$n/same" "$T/o_$n/same" >/dev/null 2>"$T/err"; rc=$?
  if [ $rc -ne 0 ] && [ "$(cksum <"$T/o_$n/same")" = "$sum" ]; then ok "$n: OUT == IN refused (exit $rc)"
  else bad "$n: OUT == IN: exit $rc, input $( [ "$(cksum <"$T/o_$n/same")" = "$sum" ] && echo kept || echo CHANGED)"; fi
  # The good output, for the comparisons below.
  expect 0 "$n: good input" -- "run_$n" "${!good}" "$T/o_$n/want"
  # A symlink: the link stays, its target gets the output.
  echo old >"$T/o_$n/target"; ln -sf target "$T/o_$n/link"
  expect 0 "$n: OUT a symlink" -- "run_$n" "${!good}" "$T/o_$n/link"
  if [ -L "$T/o_$n/link" ] && cmp -s "$T/o_$n/target" "$T/o_$n/want"; then ok "$n: the link stays, its target replaced"
  else bad "$n: symlink OUT: $(ls -la "$T/o_$n")"; fi
  # A FIFO: written directly, still a FIFO.
  mkfifo "$T/o_$n/fifo"
  timeout 20 cat "$T/o_$n/fifo" >"$T/o_$n/from_fifo" &  # bounded: a tool that replaces the FIFO never writes it
  reader=$!
  expect 0 "$n: OUT a FIFO" -- "run_$n" "${!good}" "$T/o_$n/fifo"
  wait $reader
  if [ -p "$T/o_$n/fifo" ] && cmp -s "$T/o_$n/from_fifo" "$T/o_$n/want"; then ok "$n: still a FIFO, the output through it"
  else bad "$n: FIFO OUT: $(ls -la "$T/o_$n")"; fi
  # A character device (root: a null device made with mknod).
  if [ "$(id -u)" = 0 ] && mknod "$T/o_$n/null" c 1 3 2>/dev/null; then
    expect 0 "$n: OUT a character device" -- "run_$n" "${!good}" "$T/o_$n/null"
    if [ -c "$T/o_$n/null" ]; then ok "$n: still a character device"; else bad "$n: the device was replaced"; fi
  else
    echo "skip $n: OUT a character device (needs root for mknod)"
  fi
  # A full filesystem: OUT on a 64 KiB tmpfs holding "keep"; the output does not fit.
  if [ "$(id -u)" = 0 ] && mkdir -p "$T/full_$n" && mount -t tmpfs -o size=64k tmpfs "$T/full_$n" 2>/dev/null; then
    echo keep >"$T/full_$n/out"
    head -c 60000 /dev/zero >"$T/full_$n/filler" 2>/dev/null
    "run_$n" "${!good}" "$T/full_$n/out" >/dev/null 2>"$T/err"; rc=$?
    if [ $rc -ne 0 ] || [ "$(stat -c %s "$T/o_$n/want")" -lt 4000 ]; then
      [ $rc -ne 0 ] && ok "$n: full filesystem: exit $rc" || ok "$n: full filesystem: the output fits (small)"
      [ $rc -ne 0 ] && kept "$n: full filesystem" "$T/full_$n/out"
    else
      bad "$n: full filesystem: exit 0 with a $(stat -c %s "$T/o_$n/want")-byte output"
    fi
    umount "$T/full_$n"
  else
    echo "skip $n: full filesystem (needs root to mount a tmpfs)"
  fi
done

# ---- gpuec-clip: no input file; the outputs and a signal during a long write.
mkdir -p "$T/c"; echo keep >"$T/c/out"
expect 2 "gpuec-clip: unknown clip" -- "$clip" get nosuch -o "$T/c/out"; kept "gpuec-clip: unknown clip" "$T/c/out"
expect 0 "gpuec-clip: good" -- "$clip" get noise_qcif --frames 2 -o "$T/c/want"
echo old >"$T/c/target"; ln -sf target "$T/c/link"
expect 0 "gpuec-clip: OUT a symlink" -- "$clip" get noise_qcif --frames 2 -o "$T/c/link"
[ -L "$T/c/link" ] && cmp -s "$T/c/target" "$T/c/want" && ok "gpuec-clip: the link stays, its target replaced" ||
  bad "gpuec-clip: symlink OUT"
for sig in INT TERM; do
  echo keep >"$T/c/out"
  "$clip" get pan_1080p --frames 2000 -o "$T/c/out" >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 50); do ls -A "$T/c" | grep -q '\.tmp-' && break; sleep 0.1; done
  sleep 0.3
  kill -s $sig $pid; wait $pid; rc=$?
  if [ $rc -gt 128 ]; then ok "gpuec-clip: SIG$sig ends it (exit $rc)"; else bad "gpuec-clip: SIG$sig: exit $rc"; fi
  kept "gpuec-clip: SIG$sig during the write" "$T/c/out"
done

# ---- '-' is stdin for every input and stdout for every output
for n in $names; do
  good=good_$n
  "run_$n" - "$T/o_$n/from_stdin" <"${!good}" >/dev/null 2>"$T/err"; rc=$?
  # (canny-eval's report names its input: "-" here)
  if [ $rc -eq 0 ] && cmp -s <(sed "/edges_file/s|\"${!good}\"|\"-\"|" "$T/o_$n/want") "$T/o_$n/from_stdin"; then
    ok "$n: IN '-' reads stdin"
  else bad "$n: IN '-': exit $rc: $(cat "$T/err")"; fi
  "run_$n" "${!good}" - >"$T/o_$n/to_stdout" 2>"$T/err"; rc=$?
  if [ $rc -eq 0 ] && cmp -s "$T/o_$n/to_stdout" "$T/o_$n/want" && [ ! -e ./- ]; then ok "$n: OUT '-' writes stdout"
  else bad "$n: OUT '-': exit $rc: $(cat "$T/err")"; fi
done
"$clip" get noise_qcif --frames 2 -o - >"$T/c/to_stdout" 2>/dev/null
cmp -s "$T/c/to_stdout" "$T/c/want" && ok "gpuec-clip: OUT '-' writes stdout" || bad "gpuec-clip: OUT '-'"

# ---- avc-info (reads only) and gudcanny's two outputs
expect 2 "avc-info: a directory" -- "$tools/avc-info" "$T/dir"
stderr_has "is a directory" "avc-info: the message says 'is a directory'"
[ -n "$stream" ] && { expect 0 "avc-info: IN '-' reads stdin" -- bash -c '"$0" -s - <"$1"' "$tools/avc-info" "$T/s.264"; }
rm -f "$T/g.pgm"
expect 2 "gudcanny: an unwritable --json" -- "$tools/gudcanny" -q --json "$T/no/such/dir/x.json" "$T/img.pgm" "$T/g.pgm"
[ ! -e "$T/g.pgm" ] && ok "gudcanny: no OUT written when --json cannot be" || bad "gudcanny: OUT written before --json failed"

# Read errors reported as such, not as empty input: --candidates DIR, stdin a directory.
expect 2 "gudcanny: --candidates DIR" -- "$tools/gudcanny" --candidates "$T/dir" "$T/img.pgm" "$T/g.pgm"
stderr_has "is a directory" "gudcanny: --candidates DIR: the message says 'is a directory'"
if [ -n "$stream" ]; then
  expect 2 "avc-reentropy: stdin a directory" -- bash -c '"$0" - "$1" <"$2"' "$tools/avc-reentropy" "$T/o.264" "$T/dir"
  stderr_has "stdin: is a directory" "avc-reentropy: the message says stdin is a directory"
fi

# ---- missing option values and bad numbers
expect 1 "gvle: -o without a value"          -- "$tools/gvle" compress -o
expect 1 "gvle: --threads x"                 -- "$tools/gvle" decompress --threads x "$T/text.gvle"
expect 1 "gudcanny: --sigma without a value" -- "$tools/gudcanny" "$T/img.pgm" "$T/o.pgm" --sigma
expect 1 "gudcanny: --sigma abc"             -- "$tools/gudcanny" --sigma abc "$T/img.pgm" "$T/o.pgm"
expect 1 "avc-reentropy: --backend without a value" -- "$tools/avc-reentropy" "$T/s.264" "$T/o.264" --backend
stderr_has "needs a value" "avc-reentropy: the message says the value is missing"
expect 1 "avc-reentropy: no OUT"             -- "$tools/avc-reentropy" "$T/s.264"
stderr_has "no OUT given" "avc-reentropy: the message says OUT is missing"
expect 1 "canny-eval: --tolerance without a value" -- "$tools/canny-eval" "$T/img.pgm" "$T/img.pgm" --tolerance
expect 1 "gpuec-clip: --frames 0"            -- "$clip" get noise_qcif --frames 0 -o "$T/c/x"
expect 2 "gpuec-clip: a bad synthetic size" -- "$clip" get pan_12x -o "$T/c/x"
stderr_has "bad size '12x'" "gpuec-clip: the message names the bad size"
GPUEC_SEQUENCES=$T/dir expect 2 "gpuec-clip: a derf clip not here" -- "$clip" get akiyo_cif -o "$T/c/x"
if grep -q "akiyo_cif.y4m\[.xz\] and akiyo_cif.y4m" "$T/err"; then bad "gpuec-clip: one file named twice: $(cat "$T/err")"
else ok "gpuec-clip: the missing clip's file named once"; fi
# A truncated .y4m.xz is a damaged file, not a clip of 0 frames; gpuec-clip list still lists the rest.
mkdir -p "$T/seq"
"$clip" get noise_qcif --frames 3 -o - 2>/dev/null | xz -0 -c | head -c 20000 >"$T/seq/trunc_qcif.y4m.xz"
expect 2 "gudcanny: a truncated .y4m.xz"      -- "$tools/gudcanny" "$T/seq/trunc_qcif.y4m.xz" "$T/o.pgm"
stderr_has "truncated or damaged .xz" "gudcanny: the message says the .xz is damaged"
GPUEC_SEQUENCES=$T/seq expect 0 "gpuec-clip list with a damaged local clip" -- "$clip" list
grep -q "trunc_qcif.*unreadable" "$T/out" && ok "gpuec-clip list: the damaged clip listed as unreadable" ||
  bad "gpuec-clip list: $(cat "$T/out")"
expect 1 "gvle bench: --repeat 0"            -- "$tools/gvle" bench --repeat 0 "$T/text"
finish
