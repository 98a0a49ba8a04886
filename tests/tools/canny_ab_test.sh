#!/usr/bin/env bash
# Test of the GPU A/B scripts' plumbing without a GPU (tools/bench/canny-ab-run.sh, canny-ab-compare.py),
# registered as CTest canny_ab_tool (label unit) by tests/tools/CMakeLists.txt. usage: canny_ab_test.sh
# A made-up bundle whose canny-bench-gpu is a stand-in that prints rows in canny-bench-gpu's format, with times from its
# variant's folder and the test hook the variant sets: run.sh's rounds, variants with hooks, quoted bench arguments, a
# failing variant, the deadline, --guard (a variant that hangs; a hooked variant's MISMATCH kept, as in the rounds, and
# its other failures failing the call), the archive (and --archive-only), --npp (with a stand-in nvcc whose program
# prints a row), --stages and --profile (with a stand-in ncu, which may profile no kernel), --sass (with a stand-in
# cuobjdump); compare's ratios, --base, --plain, MISMATCH; the regions of a profile's SASS page
# (canny-profile-regions.py).
set -u
. "$(dirname "$0")/checks.sh"
bench=$(cd "$(dirname "$0")/../../tools/bench" && pwd)
PY=${PYTHON:-python3}

B=$T/bundle
mkdir -p "$B/a" "$B/b"
cp "$bench/canny-ab-run.sh" "$B/run.sh"
cp "$bench/canny-stages-ncu.sh" "$B/stages.sh"
cp "$bench/../scripts/lib.sh" "$B/lib.sh"
printf 'a 1111111\nb 2222222\n' >"$B/NAMES"
# The stand-in: gpu_us = BASE, queued_us = BASE - 2, BASE from its folder's file (plus 50 with HOOK=1); it
# records its arguments; a folder with a file `fail` prints a MISMATCH row and exits 1.
for v in a b; do
  cat >"$B/$v/canny-bench-gpu" <<'SH'
#!/usr/bin/env bash
d=$(dirname "$0")
base=$(cat "$d/base")
[ "${HOOK:-0}" = 1 ] && base=$((base + 50))
printf '%s\n' "$@" >"$d/args.$$"
echo "# stand-in"
echo "image                          size config             gpu_us       cpu_us   cpu/gpu  queued_us"
if [ -f "$d/fail" ]; then
  printf 'img_1                      64x48  frame C_0.03  %10.1f %12.1f %9.1f %10.1f  MISMATCH\n' "$base" 0 0 $((base - 2))
  exit 1
fi
printf 'img_1                      64x48  frame C_0.03  %10.1f %12.1f %9.1f %10.1f\n' "$base" 0 0 $((base - 2))
SH
  chmod +x "$B/$v/canny-bench-gpu"
done
echo 100 >"$B/a/base"
echo 80 >"$B/b/base"

# (OUT, not --logs: without lib.sh the options are never parsed, and the log folder comes from OUT.)
expect 1 "canny-ab-run.sh outside a bundle (no lib.sh beside it)" -- env OUT="$T/l0" bash "$bench/canny-ab-run.sh" --rounds 1
stderr_has "runs from a bundle" "it says why"
[ ! -e "$T/l0" ] && [ ! -e "$bench/logs" ] && ok "and writes no logs" || bad "logs written outside a bundle"
expect 0 "run.sh --help" -- bash "$B/run.sh" --help
expect 1 "run.sh: an unknown option" -- bash "$B/run.sh" --nope
expect 1 "run.sh: a variant of a name not in the bundle" -- bash "$B/run.sh" --variant x=zz
stderr_has "no zz in the bundle" "run.sh names the missing variant"
expect 1 "run.sh: the same tag twice" -- bash "$B/run.sh" --variant x=a --variant x=b
expect 1 "run.sh: --rounds 0" -- bash "$B/run.sh" --rounds 0

expect 0 "run.sh: two variants, one with a hook, three rounds" -- \
  bash "$B/run.sh" --logs "$T/l1" --rounds 3 --bench "--image img --config 'frame C_0.03'" \
  --variant a=a --variant b=b --variant bh=b,HOOK=1
n=$(ls "$T/l1/ab" | grep -c '^bench_')
[ "$n" = 9 ] && ok "nine bench logs (3 variants x 3 rounds)" || bad "bench logs: $n, want 9"
[ -s "$T/l1/ab-logs.tgz" ] && tar tzf "$T/l1/ab-logs.tgz" | grep -q 'ab/0summary.txt' &&
  ok "ab-logs.tgz holds the summary" || bad "no ab-logs.tgz with the summary"
grep -q "everything passed" "$T/l1/ab/0summary.txt" && ok "the summary says everything passed" ||
  bad "summary: $(cat "$T/l1/ab/0summary.txt")"
args=$(cat "$(ls "$B"/a/args.* | head -1)" | tr '\n' '|')
[ "$args" = "--cpu-repeats|0|--queued|--image|img|--config|frame C_0.03|" ] &&
  ok "the bench arguments keep their quoting" || bad "bench arguments: $args"

expect 0 "compare: ratios against the first variant" -- "$PY" "$bench/canny-ab-compare.py" "$T/l1/ab-logs.tgz"
grep -q '| img_1 | 64x48 | frame C_0.03 | 98.0-98.0 (1.000) | 78.0-78.0 (0.796) | 128.0-128.0 (1.306) |' "$T/out" &&
  ok "queued_us ratios 78/98 and 128/98" || bad "compare: $(cat "$T/out")"
expect 0 "compare --plain --base b" -- "$PY" "$bench/canny-ab-compare.py" --plain --base b "$T/l1/ab"
grep -q '| 100.0-100.0 (1.250) | 80.0-80.0 (1.000) | 130.0-130.0 (1.625) |' "$T/out" &&
  ok "gpu_us ratios against b" || bad "compare --plain: $(cat "$T/out")"
expect 1 "compare: --base of no variant" -- "$PY" "$bench/canny-ab-compare.py" --base zz "$T/l1/ab"
mkdir -p "$T/empty"
expect 2 "compare: no runs" -- "$PY" "$bench/canny-ab-compare.py" "$T/empty"

mkdir -p "$T/l1a/ab" "$T/tmp1a"
touch "$T/l1a/ab/stale"
expect 0 "run.sh --archive-only: only the archive in the logs folder" -- \
  env TMPDIR="$T/tmp1a" bash "$B/run.sh" --logs "$T/l1a" --rounds 1 --archive-only --variant a=a --variant b=b
[ "$(ls "$T/l1a")" = "$(printf 'ab\nab-logs.tgz')" ] && [ -e "$T/l1a/ab/stale" ] &&
  ok "--archive-only writes ab-logs.tgz and leaves the logs folder's ab alone" || bad "l1a: $(ls -R "$T/l1a")"
tar tzf "$T/l1a/ab-logs.tgz" | grep -q 'ab/bench_b_0_1.txt' && ! tar tzf "$T/l1a/ab-logs.tgz" | grep -q stale &&
  ok "the archive holds the run's logs only" || bad "archive: $(tar tzf "$T/l1a/ab-logs.tgz" | tr '\n' ' ')"
[ -z "$(ls -A "$T/tmp1a")" ] && ok "--archive-only removes its temporary folder" || bad "left: $(ls -A "$T/tmp1a")"
grep -q "everything passed" "$T/out" && ok "--archive-only prints the summary" || bad "output: $(cat "$T/out")"

touch "$B/b/fail"
expect 3 "run.sh: a variant whose output differs from the twin fails the call" -- \
  bash "$B/run.sh" --logs "$T/l2" --rounds 1
grep -q "bench b set 0 round 1: exit 1" "$T/l2/ab/0summary.txt" && ok "the summary names the failing run" ||
  bad "summary: $(cat "$T/l2/ab/0summary.txt")"
expect 0 "compare marks it" -- "$PY" "$bench/canny-ab-compare.py" "$T/l2/ab-logs.tgz"
grep -q '| b MISMATCH |' "$T/out" && ok "b MISMATCH in the header" || bad "compare: $(cat "$T/out")"
rm "$B/b/fail"

# --npp and --stages: stand-ins for nvcc (its program prints an NPP row; FAIL_NVCC=1 fails the build) and ncu.
mkdir -p "$T/path"
cat >"$T/path/nvcc" <<'SH'
#!/usr/bin/env bash
[ "${FAIL_NVCC:-0}" = 1 ] && { echo "nvcc: stand-in failure" >&2; exit 1; }
printf '%s\n' "$@" >"$(dirname "$0")/nvcc.args"
while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done
printf '#!/usr/bin/env bash\necho "barbara_512.pgm 512x512 17.0 43.2 2.54 $*"\n' >"$out"
chmod +x "$out"
SH
cat >"$T/path/ncu" <<'SH'
#!/usr/bin/env bash
[ "${FAIL_NCU:-0}" = 1 ] && { echo "ncu: stand-in failure" >&2; exit 1; }
echo "stand-in ncu: $*"
# NO_MATCH=SUB: a run whose arguments hold SUB profiles no kernel, as ncu says it (exit 0, no report)
case "$*" in *"${NO_MATCH:-@none@}"*) echo "==WARNING== No kernels were profiled." ;; esac
SH
chmod +x "$T/path/nvcc" "$T/path/ncu"
expect 1 "run.sh --npp: a bundle without an npp folder" -- bash "$B/run.sh" --logs "$T/l4" --rounds 1 --npp
stderr_has "no npp folder" "run.sh says the npp folder is missing"
mkdir -p "$B/npp/src/tools/bench"
echo "a 1111111" >"$B/npp/NAME"
touch "$B/npp/libgpuec_canny_cuda.a" "$B/npp/libgpuec_gpu.a" "$B/npp/src/tools/bench/bench_canny_npp.cu"
printf 'libgpuec_canny_cuda.a\nlibgpuec_gpu.a\n' >"$B/npp/LIBS"
expect 0 "run.sh --npp --stages a: NPP built and run, a's kernels under ncu" -- \
  env PATH="$T/path:$PATH" bash "$B/run.sh" --logs "$T/l4" --rounds 1 --npp --stages a
grep -q "17.0 43.2 2.54 --repeats 50 --warmup 10 --queued" "$T/l4/ab/npp.txt" &&
  ok "ab/npp.txt holds the program's rows, run with --repeats 50 --warmup 10 --queued" ||
  bad "npp.txt: $(cat "$T/l4/ab/npp.txt" 2>&1)"
libs=$(grep '\.a$' "$T/path/nvcc.args" | xargs -n1 basename | tr '\n' ' ')
grep -qx -- "-lnppif" "$T/path/nvcc.args" && [ "$libs" = "libgpuec_canny_cuda.a libgpuec_gpu.a " ] &&
  ok "nvcc gets the bundle's libraries in LIBS's order, and NPP" || bad "nvcc arguments: $(tr '\n' ' ' <"$T/path/nvcc.args")"
n=$(tar tzf "$T/l4/ab-logs.tgz" | grep -c '^ab/stages_a/ncu_.*\.txt$')
[ "$n" = 16 ] && ok "ab-logs.tgz holds 16 ncu logs of a" || bad "ncu logs in the archive: $n, want 16"
grep -q "canny-bench-gpu --image barbara --config strip C_0.03" "$T/l4/ab/stages_a/ncu_barbara_strip_C_0.03.txt" &&
  grep -q "$B/a/canny-bench-gpu" "$T/l4/ab/stages_a/ncu_barbara_strip_C_0.03.txt" &&
  ok "stages.sh runs a's program" || bad "ncu log: $(cat "$T/l4/ab/stages_a/ncu_barbara_strip_C_0.03.txt")"
grep -q "npp (a): exit 0" "$T/l4/ab/0summary.txt" && grep -q "stages a: exit 0, 16 ncu logs" "$T/l4/ab/0summary.txt" &&
  ok "the summary reports both" || bad "summary: $(cat "$T/l4/ab/0summary.txt")"
expect 3 "run.sh --npp: a failing build fails the call" -- \
  env PATH="$T/path:$PATH" FAIL_NVCC=1 bash "$B/run.sh" --logs "$T/l5" --rounds 1 --npp
grep -q "npp: the build failed" "$T/l5/ab/0summary.txt" && grep -q "stand-in failure" "$T/l5/ab/npp_build.txt" &&
  ok "the summary says the build failed, its log says why" || bad "summary: $(cat "$T/l5/ab/0summary.txt")"
expect 1 "run.sh --stages of a name not in the bundle" -- bash "$B/run.sh" --stages zz

# --profile NAME=REGEX: ncu --set full over NAME's program, each bench set once, kept as text.
expect 0 "run.sh --profile a=REGEX: a's kernels profiled for each set" -- \
  env PATH="$T/path:$PATH" bash "$B/run.sh" --logs "$T/l6" --rounds 1 --bench "--image barbara --config 'strip C_0.03'" \
  --bench "--image synthetic" --profile 'a=strip_count_kernel|front_kernel'
run_log=$T/l6/ab/profile_a_0_ncu.txt
grep -q -- "--set full" "$run_log" && grep -q -- "-k regex:strip_count_kernel|front_kernel" "$run_log" &&
  grep -q -- "$B/a/canny-bench-gpu --repeats 1 --warmup 0 --cpu-repeats 0 --image barbara --config strip C_0.03" "$run_log" &&
  ok "ncu runs a's program on set 0 with the regex" || bad "ncu run log: $(cat "$run_log" 2>&1)"
grep -q -- "--page details" "$T/l6/ab/profile_a_1.txt" &&
  grep -q -- "--page source --csv --print-source sass" "$T/l6/ab/profile_a_1_sass.csv" &&
  ok "the details page and the SASS csv of set 1" || bad "profile files: $(ls "$T/l6/ab")"
n=$(tar tzf "$T/l6/ab-logs.tgz" | grep -c '^ab/profile_a_[01]\(_sass\.csv\|\.txt\)$')
[ "$n" = 4 ] && grep -q "profile a set 1 (strip_count_kernel|front_kernel): exit 0" "$T/l6/ab/0summary.txt" &&
  ok "the archive holds both sets' text, the summary reports them" || bad "archive: $n files; $(cat "$T/l6/ab/0summary.txt")"
expect 3 "run.sh --profile: a failing ncu fails the call" -- \
  env PATH="$T/path:$PATH" FAIL_NCU=1 bash "$B/run.sh" --logs "$T/l7" --rounds 1 --profile 'a=front'
grep -q "profile a set 0 (front): exit 1" "$T/l7/ab/0summary.txt" && [ ! -e "$T/l7/ab/profile_a_0.txt" ] &&
  ok "the summary says the profile failed" || bad "summary: $(cat "$T/l7/ab/0summary.txt")"
expect 0 "run.sh --profile: a set where no kernel matches is noted" -- \
  env PATH="$T/path:$PATH" NO_MATCH=synthetic bash "$B/run.sh" --logs "$T/l8" --rounds 1 --bench "--image barbara" \
  --bench "--image synthetic" --profile 'a=strip_count_kernel'
grep -q "profile a set 1 (strip_count_kernel): no kernel of the set matches" "$T/l8/ab/0summary.txt" &&
  grep -q "profile a set 0 (strip_count_kernel): exit 0" "$T/l8/ab/0summary.txt" && [ ! -e "$T/l8/ab/profile_a_1.txt" ] &&
  grep -q "everything passed" "$T/l8/ab/0summary.txt" &&
  ok "set 1 noted, set 0 profiled, the call passes" || bad "summary: $(cat "$T/l8/ab/0summary.txt")"
expect 3 "run.sh --profile: a regex that matches in no set fails the call" -- \
  env PATH="$T/path:$PATH" NO_MATCH=canny-bench-gpu bash "$B/run.sh" --logs "$T/l9" --rounds 1 --profile 'a=typo_kernel'
grep -q "profile a (typo_kernel): no kernel of any set matches" "$T/l9/ab/0summary.txt" &&
  ok "the summary says the regex matched nothing" || bad "summary: $(cat "$T/l9/ab/0summary.txt")"
expect 1 "run.sh --profile without a regex" -- bash "$B/run.sh" --profile a
expect 1 "run.sh --profile of a name not in the bundle" -- bash "$B/run.sh" --profile zz=front

# --sass NAME: a stand-in cuobjdump that lists two functions, naming the anonymous namespace with a hash per build (as
# nvcc does) and the program's folder; DIFF_SASS=SUB adds an instruction for a program whose path holds SUB.
cat >"$T/path/cuobjdump" <<'SH'
#!/usr/bin/env bash
# FAIL_CUOBJDUMP=1 fails every listing, FAIL_CUOBJDUMP=SUB those of a program whose path holds SUB.
case "$2" in *"${FAIL_CUOBJDUMP:-@none@}"*) echo "cuobjdump: stand-in failure" >&2; exit 1 ;; esac
[ "${FAIL_CUOBJDUMP:-0}" = 1 ] && { echo "cuobjdump: stand-in failure" >&2; exit 1; }
[ "$1" = -sass ] || { echo "cuobjdump: want -sass" >&2; exit 1; }
d=$(dirname "$2")
h=$(echo "$d" | md5sum | cut -c1-8)
echo "identifier = $d/src/canny/src/cuda/canny.cu"
echo "		Function : _ZN5canny40_GLOBAL__N__${h}_8_canny_cu_b018243812front_kernelEv"
echo "        /*0000*/                   LDC R1, c[0x0][0x28] ;"
case "$d" in *"${DIFF_SASS:-@none@}"*) echo "        /*0010*/                   NOP ;" ;; esac
echo "		Function : _ZN5canny40_GLOBAL__N__${h}_8_canny_cu_b018243812codes_kernelEv"
echo "        /*0000*/                   EXIT ;"
SH
chmod +x "$T/path/cuobjdump"
expect 0 "run.sh --sass a --sass b: two builds of the same SASS" -- \
  env PATH="$T/path:$PATH" bash "$B/run.sh" --logs "$T/l10" --rounds 1 --sass a --sass b
grep -q "sass a: 2 functions$" "$T/l10/ab/0summary.txt" && grep -q "sass b: 2 functions, the same as a's" "$T/l10/ab/0summary.txt" &&
  ok "the summary says b's SASS is a's" || bad "summary: $(cat "$T/l10/ab/0summary.txt")"
n=$(tar tzf "$T/l10/ab-logs.tgz" | grep -c '^ab/sass_[ab]\.txt\.gz$')
gzip -dc "$T/l10/ab/sass_b.txt.gz" | grep -q "Function : _ZN5canny40_GLOBAL__N___8_canny_cu_b018243812codes_kernelEv" &&
  gzip -dc "$T/l10/ab/sass_b.txt.gz" | grep -q "^identifier = -$" && [ "$n" = 2 ] &&
  ok "both listings in the archive, the build's hash and path cut" || bad "sass files: $n; $(gzip -dc "$T/l10/ab/sass_b.txt.gz")"
expect 0 "run.sh --sass: builds whose SASS differs" -- \
  env PATH="$T/path:$PATH" DIFF_SASS=bundle/b bash "$B/run.sh" --logs "$T/l11" --rounds 1 --sass a --sass b
grep -q "sass b: 2 functions, differs from a's (diff lines: 1)" "$T/l11/ab/0summary.txt" &&
  ok "the summary counts the lines that differ" || bad "summary: $(cat "$T/l11/ab/0summary.txt")"
expect 3 "run.sh --sass: a failing cuobjdump fails the call" -- \
  env PATH="$T/path:$PATH" FAIL_CUOBJDUMP=1 bash "$B/run.sh" --logs "$T/l12" --rounds 1 --sass a
grep -q "sass a: exit 1" "$T/l12/ab/0summary.txt" && [ ! -e "$T/l12/ab/sass_a.txt.gz" ] &&
  ok "the summary says the listing failed, no half listing kept" || bad "summary: $(cat "$T/l12/ab/0summary.txt")"
expect 3 "run.sh --sass: the first listing fails, the second is made" -- \
  env PATH="$T/path:$PATH" FAIL_CUOBJDUMP=bundle/a bash "$B/run.sh" --logs "$T/l13" --rounds 1 --sass a --sass b
grep -q "sass a: exit 1" "$T/l13/ab/0summary.txt" && grep -q "sass b: 2 functions$" "$T/l13/ab/0summary.txt" &&
  ok "b listed, with nothing to compare it with" || bad "summary: $(cat "$T/l13/ab/0summary.txt")"
expect 1 "run.sh --sass of a name not in the bundle" -- bash "$B/run.sh" --sass zz

# canny-profile-regions.py on a made-up SASS page of two tables (ncu's columns, fewer of them): the stall reasons,
# the regions cut at the barriers and exits, the barrier samples, the instructions with the most samples, --kernel.
H='"Address","Source","Warp Stall Sampling (All Samples)","Instructions Executed","stall_barrier","stall_long_sb","stall_barrier (Not Issued)"'
cat >"$T/sass.csv" <<CSV
"Kernel Name","void k_one(int)",
$H
"0x7f0000000000","      LDG.E R2, desc[UR4][R2.64]","10","64","0","10","0"
"0x7f0000000010","      BAR.SYNC.DEFER_BLOCKING 0x0","0","64","0","0","0"
"0x7f0000000020","      IADD3 R1, R2, R3, RZ","30","64","25","5","25"
"0x7f0000000030","      BAR.SYNC.DEFER_BLOCKING 0x0","0","64","0","0","0"
"0x7f0000000040","  @P0 EXIT","60","32","0","60","0"
"Kernel Name","void k_two(int)",
$H
"0x7f0000000100","      EXIT","5","16","0","5","0"
"Kernel Name","void k_three(int)",
$H
"0x7f0000000200","      EXIT","0","16","0","0","0"
CSV
expect 0 "profile regions: both tables" -- "$PY" "$bench/canny-profile-regions.py" --top 2 "$T/sass.csv"
grep -q "void k_one(int), table 1: 100 samples, 288 warp instructions" "$T/out" &&
  grep -q "stalls: long_sb 75.0 %, barrier 25.0 %" "$T/out" &&
  grep -Eq "000000-000010 +10.0 % +0.0 % +128  BAR.SYNC" "$T/out" &&
  grep -Eq "000020-000030 +30.0 % +25.0 % +128  BAR.SYNC" "$T/out" &&
  grep -Eq "000040-000040 +60.0 % +0.0 % +32  @P0 EXIT" "$T/out" &&
  grep -Eq "000040 +60.0 %  @P0 EXIT .* long_sb 60" "$T/out" && ! grep -q "000000 .*LDG" "$T/out" &&
  grep -q "void k_two(int), table 1: 5 samples" "$T/out" && ! grep -q k_three "$T/out" &&
  ok "stalls, regions with their barrier waits, the top instructions; no table without samples" ||
  bad "regions: $(cat "$T/out")"
expect 0 "profile regions --kernel" -- "$PY" "$bench/canny-profile-regions.py" --kernel k_two "$T/sass.csv"
grep -q k_two "$T/out" && ! grep -q k_one "$T/out" && ok "--kernel k_two: that table only" || bad "$(cat "$T/out")"
expect 2 "profile regions: no table of the kernel" -- "$PY" "$bench/canny-profile-regions.py" --kernel zz "$T/sass.csv"
expect 2 "profile regions: a kernel without samples" -- "$PY" "$bench/canny-profile-regions.py" --kernel k_three "$T/sass.csv"
expect 2 "profile regions: no such file" -- "$PY" "$bench/canny-profile-regions.py" "$T/none.csv"
expect 1 "profile regions: --top without a count" -- "$PY" "$bench/canny-profile-regions.py" --top x "$T/sass.csv"
expect 1 "profile regions: no file" -- "$PY" "$bench/canny-profile-regions.py"

# --guard: b's stand-in hangs with HANG=1 (until killed), else runs as before.
mv "$B/b/canny-bench-gpu" "$B/b/real-bench"
cat >"$B/b/canny-bench-gpu" <<'SH'
#!/usr/bin/env bash
[ "${HANG:-0}" = 1 ] && exec sleep 30
exec "$(dirname "$0")/real-bench" "$@"
SH
chmod +x "$B/b/canny-bench-gpu"
rm -f "$B"/a/args.*
expect 1 "run.sh: --guard without seconds" -- bash "$B/run.sh" --guard x
expect 3 "run.sh --guard 2: a variant that hangs is left out of the rounds" -- \
  bash "$B/run.sh" --logs "$T/l9" --rounds 2 --guard 2 --variant a=a --variant bh=b,HANG=1 --variant b=b
grep -q "guard bh set 0: exit 137 (stopped after 2 s); bh left out of the rounds" "$T/l9/ab/0summary.txt" &&
  ! grep -q "guard a \|guard b " "$T/l9/ab/0summary.txt" &&
  ok "the summary says which variant hung and that it was left out" || bad "summary: $(cat "$T/l9/ab/0summary.txt")"
[ "$(ls "$T/l9/ab" | grep -c '^bench_bh_')" = 0 ] && [ "$(ls "$T/l9/ab" | grep -c '^bench_')" = 4 ] &&
  ok "a and b ran both rounds, bh none" || bad "bench logs: $(ls "$T/l9/ab" | tr '\n' ' ')"
guarded=$(grep -l -- '--warmup' "$B"/a/args.* | wc -l)
[ "$guarded" = 1 ] && [ "$(tail -4 "$(grep -l -- '--warmup' "$B"/a/args.*)" | tr '\n' ' ')" = "--repeats 1 --warmup 0 " ] &&
  ok "a's guard run: once, with --repeats 1 --warmup 0 last" || bad "a's runs with --warmup: $guarded"
# One rule for the guard and the rounds: a hooked variant's MISMATCH (exit 1: a hook may leave work out) is kept and
# passes; a hooked variant that exits otherwise fails the call.
touch "$B/b/fail"
expect 0 "run.sh --guard 2: a hooked variant that differs from the twin is kept and passes" -- \
  bash "$B/run.sh" --logs "$T/l10" --rounds 1 --guard 2 --variant a=a --variant bf=b,HOOK=1
[ "$(ls "$T/l10/ab" | grep -c '^bench_bf_')" = 1 ] && ok "bf ran its round" || bad "bench logs: $(ls "$T/l10/ab" | tr '\n' ' ')"
rm "$B/b/fail"
cat >"$B/b/canny-bench-gpu" <<'SH'
#!/usr/bin/env bash
[ "${CRASH:-0}" = 1 ] && exit 4
exec "$(dirname "$0")/real-bench" "$@"
SH
expect 3 "run.sh: a hooked variant whose run fails otherwise fails the call" -- \
  bash "$B/run.sh" --logs "$T/l11" --rounds 1 --variant a=a --variant bc=b,CRASH=1
grep -q "bench bc set 0 round 1: exit 4" "$T/l11/ab/0summary.txt" && ok "the summary names the failed run" ||
  bad "summary: $(cat "$T/l11/ab/0summary.txt")"

cat >"$B/b/canny-bench-gpu" <<'SH'
#!/usr/bin/env bash
sleep 30
SH
expect 3 "run.sh: a step that outlasts the deadline is stopped" -- \
  bash "$B/run.sh" --logs "$T/l3" --rounds 2 --deadline 6
grep -q "stopped after" "$T/l3/ab/0summary.txt" && grep -q "not run (deadline)" "$T/l3/ab/0summary.txt" &&
  ok "the summary says what was stopped and what was not run" || bad "summary: $(cat "$T/l3/ab/0summary.txt")"
finish
