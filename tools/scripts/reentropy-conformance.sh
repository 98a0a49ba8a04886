#!/usr/bin/env bash
# Issue 6's acceptance on the JVT conformance streams, end to end through the avc-reentropy command:
# every stream of CONFORMANCE/MANIFEST.tsv is re-coded with --backend BACKEND --check (exit 0: output ==
# input), the output's sha256 must be the MANIFEST's, and, with an FFmpeg, FFmpeg's decode of the OUTPUT
# (h264 decoder, -err_detect explode -xerror, yuv420p) must have the MANIFEST's ref_yuv_md5 and frame count.
# CTest runs it with the cpu backend (label bitexact); the GPU machine with cuda (gpu-bundle.sh copies it).
set -uo pipefail
prog=reentropy-conformance usage_status=2
usage() {
  cat <<USAGE
usage: tools/scripts/reentropy-conformance.sh --avc-reentropy EXE [--backend cpu|cuda|auto] [--ffmpeg FFMPEG]
                                      [--conformance DIR] [--work DIR]
  --avc-reentropy EXE  the avc-reentropy binary
  --backend NAME       its backend (default cpu)
  --ffmpeg FFMPEG      decode every output and compare with the MANIFEST (default: none, no decode)
  --conformance DIR    the streams and MANIFEST.tsv (default \$GPUEC_SHARED_DIR/conformance, else ../shared/conformance)
  --work DIR           scratch folder (default: a temporary one, removed)
Prints a line per stream and 'N ok, M failed'. Exit: 0 all ok, 1 a stream failed, 2 usage or a missing
program, 77 (skipped) no MANIFEST.tsv in the conformance folder.
USAGE
}
exe="" backend=cpu ffmpeg="" conf="${GPUEC_SHARED_DIR:-../shared}/conformance" work=""
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
parse_options "--avc-reentropy=exe --backend=backend --ffmpeg=ffmpeg --conformance=conf --work=work" "$@"
[ -x "$exe" ] || { echo "reentropy-conformance: --avc-reentropy '$exe' is not an executable" >&2; exit 2; }
[ -f "$conf/MANIFEST.tsv" ] || { echo "reentropy-conformance: skipped: $conf/MANIFEST.tsv not found" >&2; exit 77; }
[ -z "$ffmpeg" ] || [ -x "$ffmpeg" ] || command -v "$ffmpeg" >/dev/null ||
  { echo "reentropy-conformance: --ffmpeg '$ffmpeg' not found" >&2; exit 2; }
scratch_dir
ok=0 bad=0
# Columns: file bytes sha256 requested profile_idc level width height frames slices entropy ref_yuv_md5 ...
while IFS=$'\t' read -r file _ sha _ _ _ _ _ frames _ _ yuv_md5 _; do
  [ -n "$file" ] || continue
  out="$work/out.264"
  rm -f "$out"
  msg=$("$exe" --backend "$backend" --check -q "$conf/$file" "$out" 2>&1)
  rc=$?
  why=""
  if [ $rc -ne 0 ]; then
    why="avc-reentropy exit $rc: $msg"
  elif [ "$(sha256sum "$out" | cut -d' ' -f1)" != "$sha" ]; then
    why="sha256 differs from the MANIFEST"
  elif [ -n "$ffmpeg" ]; then
    "$ffmpeg" -nostdin -v error -err_detect explode -xerror -i "$out" -f rawvideo -pix_fmt yuv420p \
      "$work/dec.yuv" -y 2>"$work/ffmpeg.log"
    frc=$?
    got=$(md5sum "$work/dec.yuv" 2>/dev/null | cut -d' ' -f1)
    if [ $frc -ne 0 ]; then
      why="ffmpeg exit $frc: $(tail -2 "$work/ffmpeg.log" | tr '\n' ' ')"
    elif [ "$got" != "$yuv_md5" ]; then
      why="decode md5 $got, the MANIFEST says $yuv_md5"
    else
      fsize=$(( $(stat -c %s "$work/dec.yuv") / frames ))
      [ $((fsize * frames)) -eq "$(stat -c %s "$work/dec.yuv")" ] || why="decoded size is not $frames frames"
    fi
    rm -f "$work/dec.yuv"
  fi
  if [ -z "$why" ]; then
    ok=$((ok + 1))
    echo "ok   $file${ffmpeg:+ (decode md5 $yuv_md5)}"
  else
    bad=$((bad + 1))
    echo "FAIL $file: $why"
  fi
done < <(tail -n +2 "$conf/MANIFEST.tsv")
echo "$ok ok, $bad failed (backend $backend${ffmpeg:+, decoded with $ffmpeg})"
[ $bad -eq 0 ] && [ $ok -gt 0 ]
