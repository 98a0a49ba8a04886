#!/usr/bin/env bash
# Records real macroblock data for the CAVLCU tests: runs the patched x264 with the CPU stage and
# GPUEC_CAPTURE (cavlc/capture.h) over e2e matrix cases that use --threads 1 (one stage, frames in
# order), one capture file per case: OUT/<case>.cap.
#   tools/scripts/make-captures.sh --build-dir BUILD --out DIR [--max-frames N] [CASE...]
# Without CASE names: every stage case of tests/e2e/matrix.tsv with --threads 1 and no --pass.
set -euo pipefail
prog=make-captures
here=$(cd "$(dirname "$0")" && pwd)
usage() { sed -n '2,6p' "$0"; }
# shellcheck source=lib.sh
. "$here/lib.sh"
build=build out="" max_frames=10
parse_options "--build-dir=build --out=out --max-frames=max_frames ARGS" "$@"
cases=(${ARGS[@]+"${ARGS[@]}"})
[ -n "$out" ] || { echo "make-captures: --out DIR is required" >&2; exit 1; }
x264="$build/plugin/x264/patched/x264" clip_tool="$build/sequences/gpuec-clip"
for f in "$x264" "$clip_tool"; do [ -x "$f" ] || { echo "make-captures: $f not built" >&2; exit 2; }; done
mkdir -p "$out/clips"
matrix="$here/../../tests/e2e/matrix.tsv"
n=0
while IFS=$'\t' read -r name clip frames options expect; do
  [[ "$name" == \#* || "$name" == name || -z "$name" || "$expect" != stage ]] && continue
  if [ ${#cases[@]} -gt 0 ]; then
    printf '%s\n' "${cases[@]}" | grep -qx "$name" || continue
  else
    [[ " $options " == *" --threads 1 "* && " $options " != *" --pass "* ]] || continue
  fi
  f=$frames; { [ "$f" = - ] || [ "$f" -gt "$max_frames" ]; } && f=$max_frames
  y4m="$out/clips/$clip.f$f.y4m"
  [ -f "$y4m" ] || "$clip_tool" get "$clip" -o "$y4m" --frames "$f"
  rm -f "$out/$name.cap"
  # shellcheck disable=SC2086
  GPUEC_CAPTURE="$out/$name.cap" "$x264" --no-progress --quiet $options --gpu-entropy cpu -o /dev/null "$y4m"
  n=$((n + 1))
done <"$matrix"
rm -rf "$out/clips"
echo "make-captures: $n captures in $out"
