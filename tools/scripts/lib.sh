# tools/scripts/lib.sh: what the shell scripts of tools/ share. Sourced, never run: a script sets `prog` (its
# name in messages) and defines usage() (its help), then sources this file, from tools/scripts/ or, in a GPU
# bundle (tools/scripts/gpu-bundle.sh copies it), from beside itself.

# parse_options "SPEC ..." ARG...: reads the command line ARG... into the caller's variables. SPEC, one word
# per option:
#   --name=VAR      the option takes a value: VAR=VALUE
#   --name=VAR+     the option takes a value, appended to the array VAR (the option may repeat)
#   --name=VAR:SET  a flag: VAR=SET
#   ARGS            words that are not options go to the array ARGS, in order
#   --              a word -- ends the options; the words after it go to the array ARGS
# -h and --help print usage and exit 0. An option not in SPEC (or a word not allowed by ARGS), or an option
# without its value: "PROG: unknown argument 'X'" (or "PROG: X needs a value") and usage on stderr, exit
# $usage_status (default 1).
parse_options() {
  local _po_spec=" ${1//$'\n'/ } " _po_s _po_var _po_found
  shift
  ARGS=()
  while [ $# -gt 0 ]; do
    case "$1" in -h|--help) usage; exit 0 ;; esac
    if [ "$1" = -- ] && [[ "$_po_spec" == *" -- "* ]]; then
      shift
      ARGS+=("$@")
      return 0
    fi
    if [[ "$1" != -* && "$_po_spec" == *" ARGS "* ]]; then
      ARGS+=("$1")
      shift
      continue
    fi
    _po_found=0
    for _po_s in $_po_spec; do
      [ "${_po_s%%=*}" = "$1" ] && [[ "$_po_s" == *=* ]] || continue
      _po_found=1 _po_var=${_po_s#*=}
      if [[ "$_po_var" == *:* ]]; then
        printf -v "${_po_var%%:*}" '%s' "${_po_var#*:}"
        shift
      else
        [ $# -ge 2 ] || usage_error "$1 needs a value"
        if [[ "$_po_var" == *+ ]]; then eval "${_po_var%+}+=(\"\$2\")"; else printf -v "$_po_var" '%s' "$2"; fi
        shift 2
      fi
      break
    done
    [ "$_po_found" = 1 ] || usage_error "unknown argument '$1'"
  done
}

# usage_error MESSAGE: "PROG: MESSAGE" and usage on stderr, exit $usage_status (default 1).
usage_error() {
  echo "$prog: $1" >&2
  usage >&2
  exit "${usage_status:-1}"
}

# die MESSAGE [STATUS]: "PROG: error: MESSAGE" on stderr, exit STATUS (default 2).
die() {
  echo "$prog: error: $1" >&2
  exit "${2:-2}"
}

# scratch_dir [KEEP]: when $work is empty, a new folder ${TMPDIR:-/tmp}/gpuec-PROG.XXXXXX becomes $work and is
# removed when the script exits, unless KEEP is 1. Then $work exists and is an absolute path.
scratch_dir() {
  if [ -z "${work:-}" ]; then
    work=$(mktemp -d "${TMPDIR:-/tmp}/gpuec-$prog.XXXXXX") || exit 2
    [ "${1:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT
  fi
  mkdir -p "$work"
  work=$(cd "$work" && pwd)
}

# median: the median of the numbers on stdin, one a line (the mean of the two middle ones for an even count),
# printed as awk prints it.
median() {
  sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# copy_libs EXE DEST: copies the shared libraries EXE loads, other than the C and C++ runtimes (libjpeg,
# libxxhash, ...), which a bare GPU machine may lack, into DEST (made when there is one). For bundles.
copy_libs() {
  ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so*|libm.so*|libstdc++.so*|libgcc_s.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*) ;;
      *) mkdir -p "$2"; cp -L "$lib" "$2/" ;;
    esac
  done
}
