#!/usr/bin/env bash
# bench-many-encoders.sh without a GPU (CTest bench.many_encoders_plumbing, label e2e): groups of concurrent
# x264 processes with --gpu-entropy cpu on a tiny clip. Checks the table (a row per configuration and group,
# fps, ratio, identity "yes"), the raw logs, the stage memory column (n/a without the log line; parsed from a
# fake patched x264 that prints it), and that a stream differing from stock's is caught (exit 2, "no").
# usage: many_encoders_test.sh STOCK_X264 PATCHED_X264 GPUEC_CLIP
set -euo pipefail
stock=$1 patched=$2 clip_tool=$3
script=$(cd "$(dirname "$0")/../../tools/bench" && pwd)/bench-many-encoders.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/many-encoders-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$clip_tool" get foreman_qcif -o "$tmp/clip.y4m" --frames 4 >/dev/null 2>&1 || fail "cannot make the clip"
common=(--stock "$stock" --clip-tool "$clip_tool" --y4m "$tmp/clip.y4m" --frames 4 --backend cpu --rounds 2
        --configs "ultrafast:20 fast:30" --groups "3x1 2x2 1x3")

# 1. The real patched x264, cpu stage: every stream identical.
bash "$script" "${common[@]}" --patched "$patched" --out "$tmp/ok" >"$tmp/ok.out" 2>"$tmp/ok.err" ||
  { cat "$tmp/ok.err" >&2; fail "the run with the patched x264 failed"; }
md="$tmp/ok/results.md"
[ -f "$md" ] || fail "no results.md"
[ "$(grep -c '^| \(ultrafast\|fast\) |' "$md")" = 6 ] || { cat "$md"; fail "expected 6 rows (2 configs x 3 groups)"; }
for g in 3x1 2x2 1x3; do
  row=$(grep "^| ultrafast | 20 | $g |" "$md") || fail "no row for ultrafast 20 $g"
  IFS='|' read -r _ _ _ _ s b ratio _ _ _ sdev _ _ _ same _ <<<"$row"
  awk -v s="$s" -v b="$b" -v r="$ratio" 'BEGIN { exit !(s > 0 && b > 0 && r > 0) }' || fail "fps or ratio missing: $row"
  [ "$(echo $same)" = yes ] || fail "identity not yes: $row"
  [ "$(echo $sdev)" = n/a ] || fail "stage memory should be n/a without the log line: $row"
done
[ "$(wc -l <"$tmp/ok/runs.csv")" = $((1 + 2 * 2 * 3 * 2)) ] || fail "runs.csv: expected 24 runs"
[ "$(ls "$tmp/ok/logs"/ultrafast_qp20.3x1.cpu.r1.*.log | wc -l)" = 3 ] || fail "expected 3 logs for a 3x1 group"
grep -q "gpu-entropy: cpu stage on" "$tmp/ok/logs/ultrafast_qp20.2x2.cpu.r2.1.log" || fail "the cpu stage log is missing"
grep -q ',2x2,cpu,2,2,2,' "$tmp/ok/runs.csv" || fail "runs.csv lacks the 2x2 cpu round 2 row"

# 2. A patched x264 that prints the stage memory line and writes another stream for fast:30 (its QP moved):
# the memory is parsed, and the differing streams are caught.
cat >"$tmp/fake-patched" <<FAKE
#!/usr/bin/env bash
args=()
qp_next=0
for a in "\$@"; do
  if [ "\$qp_next" = 1 ] && [ "\$a" = 30 ]; then a=31; fi
  qp_next=0; [ "\$a" = --qp ] && qp_next=1
  args+=("\$a")
done
# the stock x264 knows no --gpu-entropy: drop it and its value
clean=(); skip=0
for a in "\${args[@]}"; do
  if [ "\$skip" = 1 ]; then skip=0; continue; fi
  if [ "\$a" = --gpu-entropy ]; then skip=1; continue; fi
  clean+=("\$a")
done
echo "x264 [info]: gpu-entropy: cpu stage on" >&2
"$stock" "\${clean[@]}"
rc=\$?
echo "x264 [info]: gpu-entropy: cpu stage memory: 31.25 MiB device, 9.50 MiB pinned per stage, 2 stages" >&2
exit \$rc
FAKE
chmod +x "$tmp/fake-patched"
set +e
bash "$script" "${common[@]}" --rounds 1 --patched "$tmp/fake-patched" --out "$tmp/bad" >"$tmp/bad.out" 2>"$tmp/bad.err"
rc=$?
set -e
[ "$rc" = 2 ] || { cat "$tmp/bad.err" >&2; fail "a differing stream must exit 2, got $rc"; }
grep -q "differs from stock" "$tmp/bad.err" || fail "no message about the differing stream"
md="$tmp/bad/results.md"
grep -q "^| fast | 30 | 2x2 |.*| no |$" "$md" || { cat "$md"; fail "fast 30 must say no"; }
grep -q "^| ultrafast | 20 | 2x2 |.*| yes |$" "$md" || { cat "$md"; fail "ultrafast 20 must say yes"; }
grep -q "^| ultrafast | 20 | 2x2 |.*| 31.25 | 9.50 | 2 |" "$md" || { cat "$md"; fail "stage memory not parsed"; }

# 3. The GPU columns, from a fake nvidia-smi on the PATH: two compute processes that are not the group's
# (as in a container: every process is then counted), 500 and 520 MiB (1020 together), and SM utilisation 7 %.
mkdir -p "$tmp/bin"
cat >"$tmp/bin/nvidia-smi" <<'FAKE'
#!/usr/bin/env bash
case "$*" in
  -L) echo "GPU 0: Fake GPU" ;;
  --query-gpu=*) echo "Fake GPU, 81559 MiB, 000.00" ;;
  --query-compute-apps=*) printf '12345, 500\n12346, 520\n' ;;
  "dmon -s u -d 1") printf '# gpu    sm   mem   enc   dec\n# Idx     %%     %%     %%     %%\n    0     7     1     0     0\n'; exec sleep 600 ;;
  *) exit 1 ;;
esac
FAKE
chmod +x "$tmp/bin/nvidia-smi"
PATH="$tmp/bin:$PATH" bash "$script" "${common[@]}" --rounds 1 --configs ultrafast:20 --groups 2x1 --sample 0.1 \
  --patched "$patched" --out "$tmp/smi" >"$tmp/smi.out" 2>"$tmp/smi.err" || { cat "$tmp/smi.err" >&2; fail "run with nvidia-smi"; }
grep -q "^| ultrafast | 20 | 2x1 |.*| 520 | 1020 | n/a | n/a | n/a | 7 / 7.0 | yes |$" "$tmp/smi/results.md" ||
  { cat "$tmp/smi/results.md"; fail "GPU memory or utilisation not parsed"; }
grep -q "Fake GPU" "$tmp/smi/environment.txt" || fail "environment.txt lacks the GPU"
pgrep -f "$tmp/bin/nvidia-smi" >/dev/null && fail "a sampler outlived the script"

# 4. Usage errors.
set +e
bash "$script" --stock "$stock" --patched "$patched" --out "$tmp/u" --y4m "$tmp/clip.y4m" --groups 2 >/dev/null 2>&1
[ $? = 1 ] || fail "a bad group must be a usage error"
bash "$script" --stock "$stock" --out "$tmp/u" >/dev/null 2>&1
[ $? = 1 ] || fail "a missing --patched must be a usage error"
set -e
echo "many_encoders_test: ok"
