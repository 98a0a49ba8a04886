#!/usr/bin/env bash
# bench-x264-slots.sh without a GPU (CTest x264_slots_tool, label e2e): pinned slots of single-thread x264
# encodes, stock and --gpu-entropy cpu alternating, on a 4-frame QCIF clip. Checks the table (slots, a
# positive per-CPU ratio and CPU-time ratio, both encoders counted), runs.csv (finished encodes of both on
# every CPU), that a stream differing from stock's and a stage that is not on are caught (exit 2), that a CPU
# without a finished encode fails the run (exit 2) and no encode in flight outlives it, and the usage errors
# (exit 1).
# usage: x264_slots_test.sh STOCK_X264 PATCHED_X264 GPUEC_CLIP
set -euo pipefail
stock=$1 patched=$2 clip_tool=$3
script=$(cd "$(dirname "$0")/../../tools/bench" && pwd)/bench-x264-slots.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/x264-slots-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cpus=$(( $(nproc) < 2 ? 1 : 2 ))
common=(--stock "$stock" --clip-tool "$clip_tool" --clip foreman_qcif --frames 4 --config ultrafast:20)

# 1. The real patched x264, cpu stage.
bash "$script" "${common[@]}" --patched "$patched" --cpus "$cpus" --seconds 2 --out "$tmp/ok" >"$tmp/ok.out" 2>"$tmp/ok.err" ||
  { cat "$tmp/ok.err" >&2; fail "the run with the patched x264 failed"; }
row=$(grep "^| $cpus |" "$tmp/ok/results.md") || { cat "$tmp/ok/results.md"; fail "no row for $cpus slots"; }
IFS='|' read -r _ _ secs ratio cpu_ratio _ <<<"$row"
[ "$(echo $secs)" = 4 ] || fail "fewer than 4 slots run twice --seconds: $row"
awk -v r="${ratio%% (*}" -v u="$cpu_ratio" 'BEGIN { exit !(r > 0 && u > 0) }' || fail "ratios missing: $row"
for c in $(seq 0 $((cpus - 1))); do
  for e in stock stage; do grep -q "^$c,$e,[0-9.]*,[0-9.]*$" "$tmp/ok/runs.csv" || fail "runs.csv: no $e encode on CPU $c"; done
done
sleep 0.5
! pgrep -f -- "$tmp/ok/foreman_qcif" >/dev/null || fail "an encode outlived the run"

# 2. Fake patched x264s (exit 2 each): a stream that differs (its QP moved) and a stage that is not on, both
# caught before any slot runs; encodes that do not finish in time (SLOW), and are ended with the run.
cat >"$tmp/fake-patched" <<FAKE
#!/usr/bin/env bash
clean=(); skip=0; qp_next=0
for a in "\$@"; do
  if [ "\$skip" = 1 ]; then skip=0; continue; fi
  if [ "\$a" = --gpu-entropy ]; then skip=1; continue; fi
  if [ "\$qp_next" = 1 ] && [ -n "\${MOVE_QP:-}" ]; then a=\$((a + 1)); fi
  qp_next=0; [ "\$a" = --qp ] && qp_next=1
  clean+=("\$a")
done
[ -n "\${NOT_ON:-}" ] || echo "x264 [info]: gpu-entropy: cpu stage on" >&2
"$stock" "\${clean[@]}" || exit
# SLOW: an encode in a slot (output /dev/null) that takes 30 s more
if [ -n "\${SLOW:-}" ] && [[ " \$* " == *" /dev/null "* ]]; then while [ \$SECONDS -lt 30 ]; do sleep 0.1; done; fi
FAKE
chmod +x "$tmp/fake-patched"
for case in MOVE_QP NOT_ON SLOW; do
  set +e
  env "$case=1" bash "$script" "${common[@]}" --patched "$tmp/fake-patched" --cpus 1 --seconds 1 --out "$tmp/$case" \
    >/dev/null 2>"$tmp/$case.err"
  rc=$?
  set -e
  [ "$rc" = 2 ] || { cat "$tmp/$case.err" >&2; fail "$case must exit 2, got $rc"; }
done
grep -q "differs from stock" "$tmp/MOVE_QP.err" || fail "no message about the differing stream"
grep -q "stage was not on" "$tmp/NOT_ON.err" || fail "no message about the stage not on"
# SLOW: no stage encode finishes in the 2 s; the slots' encodes in flight are ended, none outlives the run
grep -q "finished no stage encode" "$tmp/SLOW.err" || fail "no message about a CPU without a finished encode"
sleep 0.5
! pgrep -f -- "$tmp/SLOW/foreman_qcif" >/dev/null || fail "an encode in flight outlived the run"

# 3. Usage errors.
for bad in "--cpus 0" "--cpus $(( $(nproc) + 1 ))" "--seconds x"; do
  set +e
  # shellcheck disable=SC2086
  bash "$script" "${common[@]}" --patched "$patched" $bad --out "$tmp/u" >/dev/null 2>"$tmp/u.err"
  rc=$?
  set -e
  [ "$rc" = 1 ] || { cat "$tmp/u.err" >&2; fail "$bad must exit 1, got $rc"; }
done
echo "x264_slots_test: ok"
