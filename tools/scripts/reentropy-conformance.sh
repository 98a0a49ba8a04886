#!/usr/bin/env bash
# Issue 6's acceptance on the JVT conformance streams, end to end through the avc-reentropy command:
# every stream of CONFORMANCE/MANIFEST.tsv is re-coded with --backend BACKEND --check (exit 0: output ==
# input), the output's sha256 must be the MANIFEST's, and, with an FFmpeg, FFmpeg's decode of the OUTPUT
# (h264 decoder, -err_detect explode -xerror, yuv420p) must have the MANIFEST's ref_yuv_md5 and frame count, and
# so must, with a JM, the decode of the reference decoder ldecod (issue 16; its exit status alone proves little,
# it exits 0 on some damaged streams).
# CTest runs it with the cpu backend (label bitexact); the GPU machine with cuda (gpu-bundle.sh copies it).
set -uo pipefail
prog=reentropy-conformance usage_status=2
usage() {
  cat <<USAGE
usage: tools/scripts/reentropy-conformance.sh --avc-reentropy EXE [--backend cpu|cuda|auto] [--ffmpeg FFMPEG]
                                      [--jm LDECOD] [--conformance DIR] [--work DIR]
  --avc-reentropy EXE  the avc-reentropy binary
  --backend NAME       its backend (default cpu)
  --ffmpeg FFMPEG      decode every output and compare with the MANIFEST (default: none, no decode)
  --jm LDECOD          decode every output with JM's ldecod too (its decoder.cfg when it lies beside it) and
                       compare with the MANIFEST (default: none)
  --conformance DIR    the streams and MANIFEST.tsv (default \$GPUEC_SHARED_DIR/conformance, else ../shared/conformance)
  --work DIR           scratch folder (default: a temporary one, removed)
Prints a line per stream and 'N ok, M failed'. Exit: 0 all ok, 1 a stream failed, 2 usage or a missing
program, 77 (skipped) no MANIFEST.tsv in the conformance folder.
USAGE
}
exe="" backend=cpu ffmpeg="" jm="" conf="${GPUEC_SHARED_DIR:-../shared}/conformance" work=""
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
parse_options "--avc-reentropy=exe --backend=backend --ffmpeg=ffmpeg --jm=jm --conformance=conf --work=work" "$@"
[ -x "$exe" ] || { echo "reentropy-conformance: --avc-reentropy '$exe' is not an executable" >&2; exit 2; }
[ -f "$conf/MANIFEST.tsv" ] || { echo "reentropy-conformance: skipped: $conf/MANIFEST.tsv not found" >&2; exit 77; }
[ -z "$ffmpeg" ] || [ -x "$ffmpeg" ] || command -v "$ffmpeg" >/dev/null ||
  { echo "reentropy-conformance: --ffmpeg '$ffmpeg' not found" >&2; exit 2; }
[ -z "$jm" ] || [ -x "$jm" ] || { echo "reentropy-conformance: --jm '$jm' is not an executable" >&2; exit 2; }
[ -z "$jm" ] || jm=$(cd "$(dirname "$jm")" && pwd)/$(basename "$jm")  # ldecod runs in $work
jm_cfg=()
[ -z "$jm" ] || [ ! -f "$(dirname "$jm")/decoder.cfg" ] || jm_cfg=(-d "$(dirname "$jm")/decoder.cfg")
scratch_dir

# decode_check NAME STATUS LOG: why (empty when none) the decoder NAME, which exited with STATUS and logged to
# LOG, did not decode the output into $work/dec.yuv with the MANIFEST's MD5 and frame count; removes dec.yuv.
decode_check() {
  local got size
  got=$(md5sum "$work/dec.yuv" 2>/dev/null | cut -d' ' -f1)
  size=$(stat -c %s "$work/dec.yuv" 2>/dev/null || echo 0)
  rm -f "$work/dec.yuv"
  if [ "$2" -ne 0 ]; then
    echo "$1 exit $2: $(tail -2 "$3" | tr '\n' ' ')"
  elif [ "$got" != "$yuv_md5" ]; then
    echo "$1 decode md5 $got, the MANIFEST says $yuv_md5"
  elif [ $((size / frames * frames)) -ne "$size" ]; then
    echo "$1 decoded size is not $frames frames"
  fi
}
decoders=${ffmpeg:+ffmpeg}
[ -z "$jm" ] || decoders="${decoders:+$decoders, }JM"
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
  else
    if [ -n "$ffmpeg" ]; then
      "$ffmpeg" -nostdin -v error -err_detect explode -xerror -i "$out" -f rawvideo -pix_fmt yuv420p \
        "$work/dec.yuv" -y 2>"$work/ffmpeg.log"
      why=$(decode_check ffmpeg $? "$work/ffmpeg.log")
    fi
    if [ -z "$why" ] && [ -n "$jm" ]; then
      (cd "$work" && "$jm" "${jm_cfg[@]}" -p InputFile="$out" -p OutputFile="$work/dec.yuv" -p RefFile=/nonexistent \
        -p WriteUV=1 -p FileFormat=0 -p ConcealMode=0 -p DecFrmNum=0 -p Silent=1 >"$work/jm.out" 2>"$work/jm.log")
      why=$(decode_check JM $? "$work/jm.log")
    fi
  fi
  if [ -z "$why" ]; then
    ok=$((ok + 1))
    echo "ok   $file${decoders:+ (decode md5 $yuv_md5: $decoders)}"
  else
    bad=$((bad + 1))
    echo "FAIL $file: $why"
  fi
done < <(tail -n +2 "$conf/MANIFEST.tsv")
echo "$ok ok, $bad failed (backend $backend${ffmpeg:+, decoded with $ffmpeg}${jm:+, decoded with $jm})"
[ $bad -eq 0 ] && [ $ok -gt 0 ]
