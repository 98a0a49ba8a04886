# tests/tools/checks.sh: sourced by the tool test scripts of this folder. Gives a scratch folder $T (removed
# on exit), ok / bad (count and print a check), expect CODE DESCRIPTION -- command... (the exit status must
# be CODE; stdout in $T/out, stderr in $T/err), stderr_has PATTERN DESCRIPTION (the last expect's stderr
# matches the grep PATTERN), refused (a table of bad inputs) and finish (the summary line; the script's exit
# status).
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

# refused CODE COMMAND...: one expect a line of stdin, "FILE | WHAT" or "FILE | WHAT | PATTERN": COMMAND, with
# every @ in its arguments replaced by $T/FILE, must exit CODE (and its stderr match the grep PATTERN).
refused() {
  local want=$1 file what pattern a; shift
  while IFS='|' read -r file what pattern; do
    file=$(echo $file) what=$(echo $what) pattern=$(echo $pattern)
    local args=()
    for a in "$@"; do args+=("${a//@/$T/$file}"); done
    expect "$want" "$what" -- "${args[@]}" </dev/null
    if [ -n "$pattern" ]; then stderr_has "$pattern" "$what: the message says $pattern"; fi
  done
}

finish() {
  echo "$checks checks, $fails failed"
  [ "$fails" = 0 ]
}
