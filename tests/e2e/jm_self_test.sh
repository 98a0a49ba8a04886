#!/usr/bin/env bash
# Proves that the JM checks (issue 16) can fail. Two stand-ins for ldecod: one runs the real ldecod and flips a
# bit of its output (exit 0, as ldecod itself does on some damaged streams), one exits 1. With each, the e2e
# case CASE of conformance.py --jm must fail with JM's reason first (the stream and FFmpeg's decode still pass),
# and, with --avc-reentropy, reentropy-conformance.sh --jm must fail the stream STREAM of the conformance set;
# with the real ldecod both must pass.
set -uo pipefail
prog=jm_self_test usage_status=2
usage() {
  cat <<USAGE
usage: tests/e2e/jm_self_test.sh --jm LDECOD --case CASE --work DIR [--avc-reentropy EXE --conformance DIR
                                 [--stream FILE]] -- CONFORMANCE.PY-COMMAND...
  --jm LDECOD          the real ldecod
  --case CASE          the e2e case to run (a stage case: its stream must pass everything but the JM check)
  --work DIR           scratch folder (emptied); conformance.py's work folder is DIR/e2e
  --avc-reentropy EXE  also check reentropy-conformance.sh --jm with this avc-reentropy
  --conformance DIR    the conformance streams and MANIFEST.tsv
  --stream FILE        the conformance stream used (default SVA_BA2_D.264, the smallest)
  -- COMMAND...        the conformance.py command line without --case, --work and --jm
Exit 0 when every check failed as it must and passed with the real ldecod, 1 otherwise.
USAGE
}
jm="" case="" work="" avc="" conf="" stream=SVA_BA2_D.264
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../../tools/scripts/lib.sh
. "$here/../../tools/scripts/lib.sh"
parse_options "--jm=jm --case=case --work=work --avc-reentropy=avc --conformance=conf --stream=stream --" "$@"
harness=("${ARGS[@]}")
[ -x "$jm" ] && [ -n "$case" ] && [ -n "$work" ] && [ ${#harness[@]} -gt 0 ] || usage_error "--jm, --case, --work and the command are needed"
jm=$(cd "$(dirname "$jm")" && pwd)/$(basename "$jm")
rm -rf "$work/e2e" "$work/jm-flip" "$work/jm-exit" "$work/conformance"
mkdir -p "$work/jm-flip" "$work/jm-exit"
for d in jm-flip jm-exit; do
  [ ! -f "$(dirname "$jm")/decoder.cfg" ] || cp "$(dirname "$jm")/decoder.cfg" "$work/$d/"
done
cat >"$work/jm-flip/ldecod" <<STANDIN
#!/usr/bin/env bash
"$jm" "\$@" || exit
for a in "\$@"; do case "\$a" in OutputFile=*) out=\${a#OutputFile=} ;; esac; done
python3 -c 'import sys; f = open(sys.argv[1], "r+b"); f.seek(4321); b = f.read(1); f.seek(4321); f.write(bytes([b[0] ^ 4]))' "\$out"
STANDIN
printf '#!/bin/sh\necho "stand-in ldecod: exit 1"\nexit 1\n' >"$work/jm-exit/ldecod"
chmod +x "$work/jm-flip/ldecod" "$work/jm-exit/ldecod"

failed=0
# expect WHAT STATUS PATTERN LOG: the run WHAT exited with STATUS (0 or 1) and its log LOG holds PATTERN.
expect() {
  if [ "$2" = "$3" ] && grep -q -- "$4" "$5"; then
    echo "ok   $1"
  else
    echo "FAIL $1: exit $3 (expected $2), '$4' $(grep -q -- "$4" "$5" && echo found || echo "not found") in:"
    sed 's/^/       /' "$5"
    failed=1
  fi
}
for v in real flip exit; do
  case $v in real) ldecod=$jm ;; *) ldecod=$work/jm-$v/ldecod ;; esac
  "${harness[@]}" --work "$work/e2e" --case "$case" --jm "$ldecod" >"$work/e2e-$v.log" 2>&1
  rc=$?
  case $v in
    real) expect "conformance.py --jm (real ldecod)" 0 $rc "^PASS $case: .*JM equals --dump-yuv" "$work/e2e-$v.log" ;;
    flip) expect "conformance.py --jm (output bit flipped)" 1 $rc \
            "^FAIL $case: JM failed on the patched stream: decoded frames differ from --dump-yuv" "$work/e2e-$v.log" ;;
    exit) expect "conformance.py --jm (exit 1)" 1 $rc "^FAIL $case: JM failed on the patched stream: exit 1" \
            "$work/e2e-$v.log" ;;
  esac
done
if [ -n "$avc" ]; then
  mkdir -p "$work/conformance"
  ln -s "$(cd "$conf" && pwd)/$stream" "$work/conformance/$stream"
  awk -F'\t' -v f="$stream" 'NR == 1 || $1 == f' "$conf/MANIFEST.tsv" >"$work/conformance/MANIFEST.tsv"
  for v in real flip exit; do
    case $v in real) ldecod=$jm ;; *) ldecod=$work/jm-$v/ldecod ;; esac
    bash "$here/../../tools/scripts/reentropy-conformance.sh" --avc-reentropy "$avc" --conformance "$work/conformance" \
      --work "$work/reentropy-$v" --jm "$ldecod" >"$work/reentropy-$v.log" 2>&1
    rc=$?
    case $v in
      real) expect "reentropy-conformance.sh --jm (real ldecod)" 0 $rc "^ok   $stream (decode md5 .*JM)" "$work/reentropy-$v.log" ;;
      flip) expect "reentropy-conformance.sh --jm (output bit flipped)" 1 $rc "^FAIL $stream: JM decode md5" \
              "$work/reentropy-$v.log" ;;
      exit) expect "reentropy-conformance.sh --jm (exit 1)" 1 $rc "^FAIL $stream: JM exit 1" "$work/reentropy-$v.log" ;;
    esac
  done
fi
exit $failed
