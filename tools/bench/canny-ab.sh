#!/usr/bin/env bash
# Builds GUD-Canny's GPU benchmark and tests at several revisions and bundles them for one call on the GPU
# machine, where OUT/run.sh (canny-ab-run.sh) times them against each other in alternating rounds and runs the
# tests, and canny-ab-compare.py here turns its logs into ratios against the first revision. The method of
# docs/benchmarks.md ("Issue 18, GPU kernels"): every ratio is against a baseline run in the same call.
set -euo pipefail
prog=canny-ab
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=../scripts/lib.sh
. "$here/../scripts/lib.sh"

usage() {
  cat <<USAGE
usage: tools/bench/canny-ab.sh [--out DIR] [--build-root DIR] [--full NAME]... [--npp NAME] [--jobs N] NAME=REV...
  NAME=REV          build revision REV (a commit, branch or tag, or WORKTREE for this checkout's files as they
                    are, uncommitted changes included) into OUT/NAME/: canny-bench-gpu and canny_cuda_test,
                    stripped; NAME: letters, digits, _ and -. The first NAME is the baseline of the ratios.
  --full NAME       also gudcanny_c_cuda_test, gudcanny_async_cuda_test, gudcanny_device_cuda_test and
                    gpuec-bitexact for NAME (all that landing a kernel change runs)
  --npp NAME        also NAME's canny libraries and the source of canny-bench-npp (tools/bench/bench_canny_npp.cu),
                    which run.sh --npp builds on the GPU machine against its NPP (not on this machine) and runs
  --out DIR         the bundle (default: gpu-bundle-ab, git-ignored); emptied first
  --build-root DIR  a worktree and a build folder per NAME (default: build-ab, git-ignored); kept, so that the
                    next call rebuilds only what changed
  --jobs N          build jobs (default: the cores)
The bundle also gets lib/ (the programs' shared libraries beyond the C and C++ runtimes), data/ (the images
and sequences the tests and the benchmark read, from GPUEC_SHARED_DIR, else ../shared beside the checkout),
NAMES (the names in order), lib.sh, run.sh and stages.sh (canny-stages-ncu.sh, for run.sh --stages). Then on the
GPU machine (carry DIR):
  bash DIR/run.sh --help
and here: python3 tools/bench/canny-ab-compare.py LOGS   (LOGS: run.sh's ab-logs.tgz or its ab folder)
Exit status: 0 built, 1 usage, 2 a build or a copy failed.
USAGE
}

out=gpu-bundle-ab root=build-ab full=() npp='' jobs=$(nproc)
parse_options "--out=out --build-root=root --full=full+ --npp=npp --jobs=jobs ARGS" "$@"
[ ${#ARGS[@]} -gt 0 ] || usage_error "no NAME=REV given"
names=() revs=()
for a in "${ARGS[@]}"; do
  [[ "$a" =~ ^([A-Za-z0-9_-]+)=(.+)$ ]] || usage_error "'$a' is not NAME=REV"
  for n in "${names[@]}"; do [ "$n" != "${BASH_REMATCH[1]}" ] || usage_error "NAME ${BASH_REMATCH[1]} given twice"; done
  names+=("${BASH_REMATCH[1]}")
  revs+=("${BASH_REMATCH[2]}")
done
for n in "${full[@]}"; do
  printf '%s\n' "${names[@]}" | grep -qx -- "$n" || usage_error "--full $n: no such NAME"
done
[ -z "$npp" ] || printf '%s\n' "${names[@]}" | grep -qx -- "$npp" || usage_error "--npp $npp: no such NAME"
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || usage_error "--jobs wants a positive number"
shared=${GPUEC_SHARED_DIR:-$repo/../shared}
[ -d "$shared" ] || die "no shared data folder at $shared (set GPUEC_SHARED_DIR)"
shared=$(cd "$shared" && pwd)
for i in "${!revs[@]}"; do
  [ "${revs[$i]}" = WORKTREE ] || git -C "$repo" rev-parse --verify -q "${revs[$i]}^{commit}" >/dev/null ||
    usage_error "${names[$i]}=${revs[$i]}: not a revision of $repo"
done

mkdir -p "$root"
root=$(cd "$root" && pwd)
base_targets="tools/canny-bench-gpu tests/canny/canny_cuda_test"
full_targets="tests/canny/gudcanny_c_cuda_test tests/gudcanny/gudcanny_async_cuda_test"
full_targets+=" tests/gudcanny/gudcanny_device_cuda_test tests/bitexact/gpuec-bitexact"
npp_libs="canny/libgpuec_canny_cuda.a canny/libgpuec_canny.a gpu/libgpuec_gpu.a"  # in link order
targets_of() {  # NAME: the targets built for it
  local t=$base_targets
  if printf '%s\n' "${full[@]}" | grep -qx -- "$1"; then t+=" $full_targets"; fi
  [ "$1" != "$npp" ] || t+=" $npp_libs"
  echo "$t"
}
commits=()  # each NAME's commit, +changes for a WORKTREE with uncommitted changes
for i in "${!names[@]}"; do
  name=${names[$i]} rev=${revs[$i]}
  src=$repo
  if [ "$rev" != WORKTREE ]; then
    src=$root/$name/src
    if [ -d "$src" ]; then
      git -C "$src" checkout -q --detach "$(git -C "$repo" rev-parse "$rev^{commit}")" ||
        die "$name: cannot check out $rev in $src"
    else
      git -C "$repo" worktree add -q --detach "$src" "$rev" || die "$name: cannot add a worktree for $rev at $src"
    fi
  fi
  build=$root/$name/build
  echo "$prog: $name = $rev: building in $build"
  # A NAME given before as WORKTREE and now as a revision (or the other way round) has a build folder made for the
  # other source folder: ninja would build that one, silently. Such a folder is made again.
  if [ -f "$build/CMakeCache.txt" ] &&
    [ "$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")" != "$(cd "$src" && pwd)" ]; then
    echo "$prog: $name: $build was made for another source folder; making it again"
    rm -rf "$build"
  fi
  if [ ! -f "$build/build.ninja" ]; then
    cmake -S "$src" -B "$build" -G Ninja -DGPUEC_SHARED_DIR="$shared" >"$root/$name.configure.log" 2>&1 ||
      die "$name: cmake failed: $root/$name.configure.log"
  fi
  grep -q '^build tests/canny/canny_cuda_test:' "$build/build.ninja" ||
    die "$name: $build has no CUDA targets (nvcc not found at configure time)"
  # shellcheck disable=SC2046
  ninja -C "$build" -j "$jobs" $(targets_of "$name") >"$root/$name.build.log" 2>&1 ||
    die "$name: the build failed: $root/$name.build.log"
  commit=$(git -C "$src" rev-parse --short HEAD)
  [ "$rev" = WORKTREE ] && [ -n "$(git -C "$src" status --porcelain --untracked-files=no)" ] && commit+=+changes
  commits+=("$commit")
done

rm -rf "$out"
mkdir -p "$out/data/images" "$out/data/sequences"
out=$(cd "$out" && pwd)
for i in "${!names[@]}"; do
  name=${names[$i]} build=$root/${names[$i]}/build
  mkdir -p "$out/$name"
  for t in $(targets_of "$name"); do
    case "$t" in *.a) continue ;; esac  # --npp's libraries: below
    cp "$build/$t" "$out/$name/"
    strip "$out/$name/$(basename "$t")"
    copy_libs "$build/$t" "$out/lib"
  done
  echo "$name ${commits[$i]}" >>"$out/NAMES"
  if [ "$name" = "$npp" ]; then  # its libraries and canny-bench-npp's source, as the revision has them
    src=$root/$name/src
    [ "${revs[$i]}" != WORKTREE ] || src=$repo
    mkdir -p "$out/npp/src/tools/bench" "$out/npp/src/tests" "$out/npp/src/canny" "$out/npp/src/gpu"
    for t in $npp_libs; do
      cp "$build/$t" "$out/npp/" && strip --strip-debug "$out/npp/$(basename "$t")"
      basename "$t" >>"$out/npp/LIBS"  # in link order, for run.sh
    done
    cp -a "$src/canny/include" "$out/npp/src/canny/"
    cp -a "$src/gpu/include" "$out/npp/src/gpu/"
    cp -a "$src/tests/common" "$out/npp/src/tests/"
    cp "$src"/tools/bench/bench_canny_npp.cu "$src"/tools/bench/bench_util.h "$src"/tools/bench/bench_images.h \
      "$out/npp/src/tools/bench/"
    echo "$name ${commits[$i]}" >"$out/npp/NAME"
  fi
done
[ -d "$shared/images/standard" ] && { mkdir -p "$out/data/images/standard"; cp "$shared"/images/standard/*.pgm "$out/data/images/standard/"; }
if [ -d "$shared/images/bsds500_subset/images" ]; then
  mkdir -p "$out/data/images/bsds500_subset"
  cp -a "$shared/images/bsds500_subset/images" "$shared/images/bsds500_subset/MANIFEST.tsv" "$out/data/images/bsds500_subset/"
fi
for clip in foreman_qcif foreman_cif suzie_cif; do  # canny_cuda_test's SequenceFrames
  [ -f "$shared/sequences/$clip.y4m.xz" ] && cp "$shared/sequences/$clip.y4m.xz" "$out/data/sequences/"
done
cp "$here/canny-ab-run.sh" "$out/run.sh"
cp "$here/canny-stages-ncu.sh" "$out/stages.sh"
cp "$here/../scripts/lib.sh" "$out/lib.sh"
size=$(du -sm "$out" | cut -f1)
echo "$prog: ${#names[@]} revisions ($(tr '\n' ' ' <"$out/NAMES")), ${size} MiB in $out"
[ "$size" -le 60 ] || echo "$prog: warning: over 60 MiB (the device tool carries at most 64 MiB in all)" >&2
