#!/usr/bin/env bash
# The GPU machine's share of issue 4's acceptance, in one call (the machine has no FFmpeg):
#   1. run.sh: every GPU test of the bundle, plain, then under compute-sanitizer memcheck and racecheck
#      (the capture tests on a two-file subset there; plain on every capture first);
#   2. tests/e2e/conformance.py --backend cuda over tests/e2e/matrix.tsv and tests/e2e/matrix-1080p.tsv with
#      --decode-later: byte identity with stock x264 there, the streams and their --dump-yuv MD5s kept;
#      with avc-reentropy in the bundle, every stream also re-coded by its cuda backend (issue 6); with
#      host/ldecod in the bundle, every stream also decoded by JM and compared with --dump-yuv (issue 16);
#   3. --fail-at-frame 3 on three cases (one thread, --slices with threads, --sliced-threads): identical
#      streams, exactly one warning;
#   4. OUT/streams.md5: the MD5 of every kept stream. With --streams SET, the streams of one set (matrix:
#      ~40 MB, matrix-1080p: ~72 MB, fail-at) also come back as OUT/SET.tar.aa, .ab, ... (15 MiB parts, at
#      most --max-parts; the device tool returns 8 files, 64 MiB) for
#      `cat SET.tar.* | tar xf - && tests/e2e/conformance.py --check-decodes SET` on a machine with FFmpeg.
#      Otherwise compare streams.md5 with the MD5s of streams already decode-checked elsewhere (byte identity
#      with stock makes them the same files).
# Made for the device tool: from the repository root, with a bundle of tools/scripts/gpu-bundle.sh --tools-build
# (host/x264-stock, host/x264-patched, host/gpuec-clip) carried as gpu-bundle/.
set -uo pipefail
prog=gpu-acceptance usage_status=2
usage() {
  cat <<USAGE
usage: tools/scripts/gpu-acceptance.sh [--bundle DIR] [--streams SET] [--max-parts N] [--skip-tests] OUT
  --bundle DIR    the bundle (default gpu-bundle)
  --streams SET   bring the streams of SET (matrix, matrix-1080p or fail-at) back in 15 MiB parts
  --max-parts N   at most N parts (default 4); more: no parts, a note in OUT/summary.txt
  --skip-tests    skip step 1 (the tests already ran on this code)
Exit: 0 every step passed, 1 a step failed, 2 usage or a missing program.
USAGE
}
bundle=gpu-bundle streams="" max_parts=4 skip_tests=0 out=""
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
parse_options "--bundle=bundle --streams=streams --max-parts=max_parts --skip-tests=skip_tests:1 ARGS" "$@"
[ ${#ARGS[@]} -gt 0 ] || { usage >&2; exit 2; }
out=${ARGS[-1]}
case "$streams" in ""|matrix|matrix-1080p|fail-at) ;; *) echo "gpu-acceptance: --streams $streams: matrix, matrix-1080p or fail-at" >&2; exit 2 ;; esac
repo=$(cd "$(dirname "$0")/../.." && pwd)
B=$(cd "$bundle" 2>/dev/null && pwd) || { echo "gpu-acceptance: no bundle at $bundle" >&2; exit 2; }
H=$B/host
for p in "$H/x264-stock" "$H/x264-patched" "$H/gpuec-clip" "$B/run.sh" "$B/data/sequences/foreman_qcif.y4m.xz"; do
  [ -e "$p" ] || { echo "gpu-acceptance: missing $p (tools/scripts/gpu-bundle.sh --tools-build BUILD --data SHARED/sequences)" >&2; exit 2; }
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
# OUT gets few files (the device tool returns at most 8): summary.txt, streams.md5, logs.tgz, stream parts.
export GPUEC_SHARED_DIR=$B/data LD_LIBRARY_PATH=$H/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} PYTHONUNBUFFERED=1
work=$(mktemp -d "${TMPDIR:-/tmp}/gpu-acceptance.XXXXXX")
logs=$work/logs
mkdir -p "$logs"
summary=$out/summary.txt
: >"$summary"
fail=0
step() {  # name status
  if [ "$2" -eq 0 ]; then echo "PASS $1" | tee -a "$summary"; else echo "FAIL $1 (exit $2)" | tee -a "$summary"; fail=1; fi
}

if [ "$skip_tests" -eq 0 ]; then
  for t in cavlc_capture_cuda_test cavlc_assemble_frame_cuda_test; do
    [ -x "$B/bin/$t" ] || continue
    "$B/bin/$t" >"$logs/$t.all-captures.log" 2>&1
    step "$t, every capture" $?
  done
  mkdir -p "$work/sub"
  for c in fqcif_qp26_medium_smm37_t1_ir suzie_qp12_pcm_s1_t1_ref1; do
    cp "$B/data/captures/$c".cap* "$work/sub/" 2>/dev/null
  done
  GPUEC_CAPTURES=$work/sub bash "$B/run.sh" "$logs/run" >"$logs/run.log" 2>&1
  step "run.sh (tests, memcheck, racecheck)" $?
  sed 's/^/    /' "$logs/run/summary.txt" >>"$summary" 2>/dev/null
fi

C=(--stock "$H/x264-stock" --patched "$H/x264-patched" --clip-tool "$H/gpuec-clip" --clip-cache "$work/clips"
   --backend cuda)
# Issue 16: every patched stream also decoded by JM's ldecod (must equal --dump-yuv), when the bundle has it.
[ -x "$H/ldecod" ] && C+=(--jm "$H/ldecod")
# Issue 6: every patched stream also through avc-reentropy's cuda backend, when the bundle has it.
[ -x "$B/bin/avc-reentropy" ] && C+=(--reentropy "$B/bin/avc-reentropy" --reentropy-backend cuda)
python3 "$repo/tests/e2e/conformance.py" "${C[@]}" --work "$work/m" --decode-later "$work/streams/matrix" \
  >"$logs/matrix.log" 2>&1
rc=$?  # before the command substitution below, which sets $? itself
step "matrix.tsv, cuda: $(tail -1 "$logs/matrix.log")" $rc
python3 "$repo/tests/e2e/conformance.py" "${C[@]}" --work "$work/m1080" --matrix "$repo/tests/e2e/matrix-1080p.tsv" \
  --decode-later "$work/streams/matrix-1080p" >"$logs/matrix-1080p.log" 2>&1
rc=$?
step "matrix-1080p.tsv, cuda: $(tail -1 "$logs/matrix-1080p.log")" $rc
# x264's default open (issue 17): the CUDA context made in the background, the CPU coding meanwhile.
python3 "$repo/tests/e2e/conformance.py" "${C[@]}" --work "$work/bg" --matrix "$repo/tests/e2e/matrix-1080p.tsv" \
  --cuda-open background --decode-later "$work/streams/matrix-1080p-background" >"$logs/matrix-1080p-background.log" 2>&1
rc=$?
step "matrix-1080p.tsv, cuda, context made in the background: $(tail -1 "$logs/matrix-1080p-background.log")" $rc
python3 "$repo/tests/e2e/conformance.py" "${C[@]}" --work "$work/fa" --decode-later "$work/streams/fail-at" \
  --fail-at-frame 3 --case fqcif_qp26_medium_smm37_t1_ir --case fqcif_qp10_ultrafast_s9_t3_ir \
  --case fqcif_qp0_medium_smm37_st3_key1 >"$logs/fail-at.log" 2>&1
rc=$?
step "--fail-at-frame 3: $(tail -1 "$logs/fail-at.log")" $rc

(cd "$work/streams" && find . -name '*.264' | sort | xargs md5sum) >"$out/streams.md5"
echo "$(wc -l <"$out/streams.md5") streams in streams.md5" | tee -a "$summary"
if [ -n "$streams" ]; then
  mkdir -p "$work/parts"
  (cd "$work/streams" && tar cf - "$streams" | split -b 15m - "$work/parts/$streams.tar.")
  n=$(ls "$work/parts" | wc -l)
  if [ "$n" -le "$max_parts" ]; then
    cp "$work/parts/"* "$out/"
    echo "streams: $n parts (cat $streams.tar.* | tar xf -)" | tee -a "$summary"
  else
    echo "streams: $n parts of 15 MiB, more than --max-parts $max_parts: not copied" | tee -a "$summary"
  fi
fi
(cd "$work" && tar czf "$out/logs.tgz" logs)
rm -rf "$work"
[ "$fail" -eq 0 ] && echo "gpu-acceptance: every step passed" | tee -a "$summary"
exit "$fail"
