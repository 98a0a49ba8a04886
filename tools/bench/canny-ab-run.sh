#!/usr/bin/env bash
# Runs on the GPU machine, from a bundle of tools/bench/canny-ab.sh (copied there as run.sh): canny-bench-gpu of
# every variant in alternating rounds, then the tests and sanitizer runs asked for, each step limited by what is
# left of a deadline. Logs go to LOGDIR/ab, packed into LOGDIR/ab-logs.tgz after every step (the device tool
# returns a few files of $OUT: one archive comes back whole even when the command is stopped).
set -u
prog=canny-ab-run
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../scripts/lib.sh
# (A bundle's copy; tools/bench/ has none: run from there, the script would time nothing and say all passed.)
[ -f "$here/lib.sh" ] ||
  { echo "$prog: $here/lib.sh not found: run.sh runs from a bundle of tools/bench/canny-ab.sh" >&2; exit 1; }
. "$here/lib.sh"

usage() {
  cat <<USAGE
usage: bash BUNDLE/run.sh [--rounds N] [--bench ARGS]... [--variant TAG=NAME[,VAR=VALUE]...]...
                          [--test NAME]... [--sanitize NAME]... [--npp] [--stages NAME] [--profile NAME=REGEX]...
                          [--sass NAME]... [--guard S] [--deadline S] [--logs DIR] [--archive-only]
  --variant TAG=NAME,VAR=VALUE,...  time NAME's canny-bench-gpu as TAG with VAR=VALUE set (test hooks);
                   default: each NAME of the bundle as itself, in the bundle's order. The first is the baseline.
  --bench ARGS     canny-bench-gpu's arguments for one set of runs, after --cpu-repeats 0 --queued, as shell words
                   (quotes group: --bench "--image barbara --config 'strip C_0.03'"; repeatable; default:
                   "--image synthetic --config frame"); a round runs every set for every variant
  --rounds N       rounds (default 3)
  --test NAME      NAME's tests: canny_cuda_test (FrameSplit, then the rest), and with a --full build the
                   gudcanny tests and gpuec-bitexact
  --sanitize NAME  compute-sanitizer memcheck and racecheck over NAME's canny-bench-gpu, each --bench set once
  --npp            builds canny-bench-npp from the bundle's npp folder (canny-ab.sh --npp NAME) with this machine's
                   nvcc and NPP, and runs it (--repeats 50 --warmup 10 --queued): NPP's Canny and NAME's strips, the
                   issue's anchor (ab/npp.txt)
  --stages NAME    NAME's time per kernel (stages.sh: ncu over 4 sizes x 4 configs; ab/stages_NAME, for
                   plot-canny-stages.py here)
  --profile NAME=REGEX  where NAME's kernels whose names match REGEX wait: ncu --set full over NAME's
                   canny-bench-gpu with each --bench set once (at most 8 kernels a set), kept as text: the
                   details page (ab/profile_NAME_SET.txt: sections, stall reasons) and the SASS with its stall
                   samples (ab/profile_NAME_SET_sass.csv); the report itself is not kept. A set none of whose
                   kernels match is noted; a REGEX that matches in no set fails the call
  --sass NAME      the SASS of NAME's canny-bench-gpu (cuobjdump -sass; no GPU needed), every kernel, into
                   ab/sass_NAME.txt.gz, with the per-build hashes of anonymous namespaces and the source paths cut, so
                   that two builds' files compare line by line; run before the rounds. The summary says, for each
                   NAME after the first (where the first's listing was made), whether its SASS is the same as the
                   first's (zcat both and diff them here)
  --guard S        before the rounds, each variant runs once on each --bench set (--repeats 1 --warmup 0), stopped
                   after S seconds; a variant whose run hangs or fails (as the rounds judge a run) is left out of the
                   rounds (and fails the call), so that a variant that hangs costs S seconds, not the call (default
                   0: no guard)
  --deadline S     no step starts after S seconds from the start, and each is stopped there (default 540, under
                   the device tool's 600 s a command); steps cut short are marked in the summary
  --logs DIR       where the ab folder and ab-logs.tgz go (default: \$OUT, else BUNDLE/logs)
  --archive-only   only ab-logs.tgz in DIR (the ab folder in a temporary folder, removed at the end): the device
                   tool returns a limited number of files of \$OUT, so a second run.sh in the same call, or one
                   after a call with many logs, keeps its results this way (--logs \$OUT/b --archive-only)
The summary is LOGDIR/ab/0summary.txt (in the archive with --archive-only), printed at the end; here:
python3 tools/bench/canny-ab-compare.py LOGDIR/ab-logs.tgz. Exit status: 0 when every test passed and every bench run
did (a variant with VAR=VALUE may differ from the CPU twin, canny-bench-gpu's exit 1: a hook may leave work out on
purpose; any other exit fails it too); 1 usage; 3 otherwise.
USAGE
}

rounds=3 benches=() variants=() tests=() sans=() npp=0 stages=() profiles=() sass=() guard=0 deadline=540 archive_only=0
logs=${OUT:-$here/logs}
parse_options "--rounds=rounds --bench=benches+ --variant=variants+ --test=tests+ --sanitize=sans+ --npp=npp:1
               --stages=stages+ --profile=profiles+ --sass=sass+ --guard=guard --deadline=deadline --logs=logs
               --archive-only=archive_only:1" "$@"
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || usage_error "--rounds wants a positive number"
[[ "$deadline" =~ ^[1-9][0-9]*$ ]] || usage_error "--deadline wants seconds"
[[ "$guard" =~ ^[0-9]+$ ]] || usage_error "--guard wants seconds"
[ -f "$here/NAMES" ] || die "$here/NAMES not found: not a bundle of canny-ab.sh"
has_name() { [ -x "$here/$1/canny-bench-gpu" ]; }
if [ ${#variants[@]} -eq 0 ]; then
  while read -r name _; do variants+=("$name=$name"); done <"$here/NAMES"
fi
# variant_parts TAG=NAME[,VAR=VALUE]...: sets tag, name and envs (the VAR=VALUE words) of a --variant.
variant_parts() {
  local rest=${1#*=}
  tag=${1%%=*} name=${rest%%,*} envs=()
  [ "$rest" = "$name" ] || IFS=, read -r -a envs <<<"${rest#*,}"
}
# bench_failed RC: whether a canny-bench-gpu run of the variant variant_parts last parsed failed (the guard's and the
# rounds' one rule): any exit but 0, except a MISMATCH (exit 1) of a variant with hooks.
bench_failed() { [ "$1" -ne 0 ] && ! { [ "$1" -eq 1 ] && [ ${#envs[@]} -gt 0 ]; }; }

for v in "${variants[@]}"; do
  [[ "$v" =~ ^[A-Za-z0-9_-]+=[A-Za-z0-9_-]+(,[A-Za-z_][A-Za-z0-9_]*=[^,]*)*$ ]] || usage_error "--variant '$v'"
  variant_parts "$v"
  has_name "$name" || usage_error "--variant $v: no $name in the bundle"
done
for n in "${tests[@]}" "${sans[@]}" "${stages[@]}" "${sass[@]}"; do has_name "$n" || usage_error "no $n in the bundle"; done
for pr in "${profiles[@]}"; do
  [[ "$pr" =~ ^([A-Za-z0-9_-]+)=(.+)$ ]] || usage_error "--profile '$pr' is not NAME=REGEX"
  has_name "${BASH_REMATCH[1]}" || usage_error "--profile $pr: no ${BASH_REMATCH[1]} in the bundle"
done
[ "$npp" = 0 ] || [ -f "$here/npp/LIBS" ] || usage_error "--npp: the bundle has no npp folder (canny-ab.sh --npp NAME)"
dup=$(for v in "${variants[@]}"; do echo "${v%%=*}"; done | sort | uniq -d | head -1)
[ -z "$dup" ] || usage_error "variant tag $dup given twice"
[ ${#benches[@]} -gt 0 ] || benches=("--image synthetic --config frame")
# bench_args I: the words of set I in the array BA (the user's own quoting, as the shell reads it).
bench_args() { eval "BA=(${benches[$1]})" || usage_error "--bench '${benches[$1]}': not shell words"; }
for b in "${!benches[@]}"; do bench_args "$b"; done

mkdir -p "$logs"
logs=$(cd "$logs" && pwd)
work=$logs  # where the ab folder lives (and the ncu reports, outside it)
if [ "$archive_only" = 1 ]; then
  work=''
  scratch_dir  # a temporary folder, removed at the exit
fi
L=$work/ab
rm -rf "$L"
mkdir -p "$L"
export GPUEC_SHARED_DIR="$here/data"
[ -d "$here/lib" ] && export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cuda_tool() { command -v "$1" || echo "/usr/local/cuda/bin/$1"; }  # NAME: the CUDA toolkit's program NAME
sanitizer=$(cuda_tool compute-sanitizer)
t0=$(date +%s)
elapsed() { echo $(($(date +%s) - t0)); }
pack() { tar czf "$logs/ab-logs.tgz.part" -C "$work" ab && mv "$logs/ab-logs.tgz.part" "$logs/ab-logs.tgz"; }
note() { echo "$*" >>"$L/0summary.txt"; }
failed=0
{ nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,memory.used --format=csv || echo "nvidia-smi failed"; } >"$L/gpu.txt" 2>&1
cp "$here/NAMES" "$L/NAMES"
note "# canny-ab-run: $(sed -n 2p "$L/gpu.txt"); $rounds rounds; deadline $deadline s"
printf '%s\n' "${benches[@]}" >"$L/benches.txt"
for v in "${variants[@]}"; do echo "${v%%=*}"; done >"$L/variants.txt"

# step NAME LIMIT CMD...: runs CMD with its output in $L/NAME.txt, stopped at LIMIT seconds or the deadline.
step() {
  local name=$1 limit=$2 left
  shift 2
  left=$((deadline - $(elapsed)))
  if [ "$left" -lt 5 ]; then note "$name: not run (deadline)"; return 9; fi
  [ "$limit" -gt 0 ] && [ "$limit" -lt "$left" ] || limit=$left
  timeout -s KILL "$limit" "$@" >"$L/$name.txt" 2>&1
  local rc=$?
  [ $rc -eq 137 ] && note "$name: stopped after $limit s"
  return $rc
}

# --sass: cuobjdump's listing with what differs between two builds of the same code cut: the first hash in the name
# nvcc gives a translation unit's anonymous namespace (_GLOBAL__N__<hash>_<n>_<file>_<hash>; the second is the same
# in every build) and the source path the listing names.
cuobjdump=$(cuda_tool cuobjdump)
for n in "${sass[@]}"; do
  step "sass_${n}_run" 120 bash -c 'set -o pipefail; "$1" -sass "$2" |
    sed -E "s/(_GLOBAL__N__)[0-9a-f]+_/\\1_/g; s/^(identifier = ).*/\\1-/" |
    gzip -n >"$3"' _ "$cuobjdump" "$here/$n/canny-bench-gpu" "$L/sass_$n.txt.gz"
  rc=$?
  if [ $rc -ne 0 ]; then
    failed=1; rm -f "$L/sass_$n.txt.gz"
    if [ -f "$L/sass_${n}_run.txt" ]; then note "sass $n: exit $rc (ab/sass_${n}_run.txt)"; else note "sass $n: not run"; fi
    continue
  fi
  rm -f "$L/sass_${n}_run.txt"
  what="$(gzip -dc "$L/sass_$n.txt.gz" | grep -c 'Function :') functions"
  first=${sass[0]}
  if [ "$n" != "$first" ] && [ -f "$L/sass_$first.txt.gz" ]; then
    d=$(diff <(gzip -dc "$L/sass_$first.txt.gz") <(gzip -dc "$L/sass_$n.txt.gz") | grep -c '^[<>]')
    if [ "$d" = 0 ]; then what="$what, the same as $first's"; else what="$what, differs from $first's (diff lines: $d)"; fi
  fi
  note "sass $n: $what"
done
[ ${#sass[@]} -eq 0 ] || pack

# --guard: each variant once on each set, stopped after $guard s; one that fails is left out of the rounds.
if [ "$guard" -gt 0 ]; then
  kept=()
  for v in "${variants[@]}"; do
    variant_parts "$v"
    ok=1
    for b in "${!benches[@]}"; do
      bench_args "$b"
      step "guard_${tag}_$b" "$guard" env "${envs[@]}" "$here/$name/canny-bench-gpu" --cpu-repeats 0 "${BA[@]}" \
        --repeats 1 --warmup 0
      rc=$?
      if bench_failed $rc; then
        ok=0 failed=1
        note "guard $tag set $b: exit $rc$([ $rc -eq 137 ] && echo " (stopped after $guard s)"); $tag left out of the rounds"
        break
      fi
    done
    [ $ok = 0 ] || kept+=("$v")
  done
  variants=("${kept[@]}")
  pack
fi

for r in $(seq 1 "$rounds"); do
  for v in "${variants[@]}"; do
    variant_parts "$v"
    for b in "${!benches[@]}"; do
      bench_args "$b"
      step "bench_${tag}_${b}_$r" 0 env "${envs[@]}" "$here/$name/canny-bench-gpu" --cpu-repeats 0 --queued "${BA[@]}"
      rc=$?
      if bench_failed $rc; then failed=1; note "bench $tag set $b round $r: exit $rc"; fi
    done
  done
  note "round $r done at $(elapsed) s"
  pack
done

gtest_line() { grep -E '^\[  (PASSED|FAILED) ' "$L/$1.txt" | tr '\n' ' '; }
for n in "${tests[@]}"; do
  step "test_${n}_split" 0 "$here/$n/canny_cuda_test" --gtest_filter=CannyCuda.FrameSplit
  rc=$?; [ $rc -eq 0 ] || failed=1; note "test ${n} FrameSplit: exit $rc $(gtest_line "test_${n}_split")"
  step "test_${n}_rest" 0 "$here/$n/canny_cuda_test" --gtest_filter=-CannyCuda.FrameSplit
  rc=$?; [ $rc -eq 0 ] || failed=1; note "test ${n} the rest: exit $rc $(gtest_line "test_${n}_rest")"
  for t in gudcanny_c_cuda_test gudcanny_async_cuda_test gudcanny_device_cuda_test; do
    [ -x "$here/$n/$t" ] || continue
    step "test_${n}_$t" 120 "$here/$n/$t"
    rc=$?; [ $rc -eq 0 ] || failed=1; note "test ${n} $t: exit $rc $(gtest_line "test_${n}_$t")"
  done
  if [ -x "$here/$n/gpuec-bitexact" ]; then
    step "test_${n}_bitexact" 0 "$here/$n/gpuec-bitexact"
    rc=$?; [ $rc -eq 0 ] || failed=1; note "test ${n} gpuec-bitexact: exit $rc $(tail -1 "$L/test_${n}_bitexact.txt")"
  fi
  pack
done
for n in "${sans[@]}"; do
  for tool in memcheck racecheck; do
    for b in "${!benches[@]}"; do
      bench_args "$b"
      step "san_${n}_${tool}_$b" 0 "$sanitizer" --tool "$tool" --error-exitcode 9 "$here/$n/canny-bench-gpu" \
        --repeats 1 --warmup 0 --cpu-repeats 0 "${BA[@]}"
      rc=$?; [ $rc -eq 0 ] || failed=1
      note "$tool $n set $b: exit $rc $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$L/san_${n}_${tool}_$b.txt" | tail -1)"
    done
  done
  pack
done
if [ "$npp" = 1 ]; then
  nvcc=$(cuda_tool nvcc)
  N=$here/npp/src
  libs=()
  while read -r a; do libs+=("$here/npp/$a"); done <"$here/npp/LIBS"  # canny-ab.sh's link order
  step npp_build 240 "$nvcc" -std=c++17 -O2 -arch=native -I"$N/canny/include" -I"$N/gpu/include" -I"$N/tests/common" \
    -I"$N/tools/bench" "$N/tools/bench/bench_canny_npp.cu" "${libs[@]}" -lnppif -lnppc -o "$here/npp/canny-bench-npp"
  rc=$?
  if [ $rc -ne 0 ]; then
    failed=1; note "npp: the build failed (exit $rc; ab/npp_build.txt)"
  else
    step npp 120 "$here/npp/canny-bench-npp" --repeats 50 --warmup 10 --queued
    rc=$?; [ $rc -eq 0 ] || failed=1
    note "npp ($(cut -d' ' -f1 "$here/npp/NAME")): exit $rc"
  fi
  pack
fi
for n in "${stages[@]}"; do
  step "stages_$n" 0 bash "$here/stages.sh" "$here" "$L/stages_$n" "$here/$n/canny-bench-gpu"
  rc=$?; [ $rc -eq 0 ] || failed=1
  logs_n=$(find "$L/stages_$n" -maxdepth 1 -name 'ncu_*.txt' 2>/dev/null | wc -l)
  note "stages $n: exit $rc, $logs_n ncu logs"
  pack
done
ncu=$(cuda_tool ncu)
for pr in "${profiles[@]}"; do
  n=${pr%%=*} re=${pr#*=} matched=0
  for b in "${!benches[@]}"; do
    bench_args "$b"
    rep="$work/profile_${n}_$b"  # outside ab: not packed
    step "profile_${n}_${b}_ncu" 0 "$ncu" --clock-control none --set full --import-source no -k "regex:$re" -c 8 -f \
      -o "$rep" "$here/$n/canny-bench-gpu" --repeats 1 --warmup 0 --cpu-repeats 0 "${BA[@]}"
    rc=$?
    # A set none of whose kernels REGEX names (a strip kernel's regex over frame mode's set) is not a failure; a
    # REGEX that names no kernel of any set is (below).
    if [ $rc -eq 0 ] && grep -q "No kernels were profiled" "$L/profile_${n}_${b}_ncu.txt"; then
      note "profile $n set $b ($re): no kernel of the set matches"
      continue
    fi
    matched=1
    if [ $rc -eq 0 ]; then
      step "profile_${n}_$b" 120 "$ncu" -i "$rep.ncu-rep" --page details
      rc=$?
    fi
    if [ $rc -eq 0 ]; then
      step "profile_${n}_${b}_sass" 120 "$ncu" -i "$rep.ncu-rep" --page source --csv --print-source sass
      rc=$?
      mv "$L/profile_${n}_${b}_sass.txt" "$L/profile_${n}_${b}_sass.csv"
    fi
    rm -f "$rep.ncu-rep"
    [ $rc -eq 0 ] || failed=1
    note "profile $n set $b ($re): exit $rc"
  done
  if [ $matched -eq 0 ]; then
    failed=1
    note "profile $n ($re): no kernel of any set matches"
  fi
  pack
done
note "done at $(elapsed) s; $([ $failed -eq 0 ] && echo 'everything passed' || echo 'SOMETHING FAILED')"
pack
cat "$L/0summary.txt"
[ $failed -eq 0 ] || exit 3
