# tests/tools/checks.sh: sourced by the tool test scripts of this folder. Gives a scratch folder $T (removed
# on exit), ok / bad (count and print a check), expect CODE DESCRIPTION -- command... (the exit status must
# be CODE; stdout in $T/out, stderr in $T/err), stderr_has PATTERN DESCRIPTION (the last expect's stderr
# matches the grep PATTERN) and finish (the summary line; the script's exit status).
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0 checks=0
ok()  { checks=$((checks + 1)); echo "ok   $*"; }
bad() { checks=$((checks + 1)); fails=$((fails + 1)); echo "FAIL $*"; }

expect() {
  local want=$1 what=$2; shift 3
  "$@" >"$T/out" 2>"$T/err"; local got=$?
  if [ "$got" = "$want" ]; then ok "$what (exit $got)"; else bad "$what: exit $got, want $want; stderr: $(cat "$T/err")"; fi
}

stderr_has() {
  if grep -q -- "$1" "$T/err"; then ok "$2"; else bad "$2: $(cat "$T/err")"; fi
}

finish() {
  echo "$checks checks, $fails failed"
  [ "$fails" = 0 ]
}
