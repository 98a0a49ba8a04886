#!/usr/bin/env bash
# Collects the built GPU tests and benchmarks into one folder that can be copied to a GPU machine,
# with run.sh, which runs them all there and writes the logs. See README "GPU machine".
# Also the host programs the GPU benchmarks drive (x264 builds, gpuec-clip) when a build has them, and
# the benchmark scripts (tools/bench/: bench-cavlcu.sh, plot-cavlcu.py, bench-ffmpeg-gudcanny.sh,
# bench-ffmpeg-pipeline.sh, bench-many-encoders.sh, bench-x264-e2e.sh, bench-x264-slots.sh, bench-reentropy-tool.sh) and tools/scripts/gpu-ffmpeg-cuda.sh, all in the bundle's
# top folder.
# With --ffmpeg, also our ffmpeg and its test script (tests/ffmpeg) with what its cases need, run by run.sh.
set -euo pipefail
prog=gpu-bundle
here=$(dirname "$0")
# shellcheck source=lib.sh
. "$here/lib.sh"

usage() {
  cat <<USAGE
usage: tools/scripts/gpu-bundle.sh [--build-dir DIR] [--out DIR] [--data PATH]... [--only NAME]...
                                  [--tools-build DIR] [--ffmpeg FFMPEG [--ffmpeg-cases "CASE..."]]
  --build-dir DIR    a CUDA build (default: build-cuda); its device-targets.txt lists what to take
  --out DIR          the bundle folder (default: gpu-bundle, git-ignored); emptied first
  --data PATH        a file or folder the programs read, copied to OUT/data (repeatable); the programs
                     see it as GPUEC_SHARED_DIR=OUT/data on the GPU machine
  --only NAME        take only the device program NAME (repeatable; default: all of device-targets.txt)
  --tools-build DIR  the build to take the host programs from (default: the --build-dir): those of
                     DIR/plugin/x264/{stock,patched,timed}/x264 and DIR/sequences/gpuec-clip that exist go
                     to OUT/host/x264-{stock,patched,timed} and OUT/host/gpuec-clip, with gpuec-clip's shared
                     libraries other than the C and C++ runtime (libjpeg) in OUT/host/lib; JM's ldecod
                     (DIR/tools/jm/ldecod and its decoder.cfg) to OUT/host/ when the build has it
  --ffmpeg FFMPEG    our ffmpeg (BUILD/plugin/ffmpeg/ffmpeg) to OUT/ffmpeg/, with tests/ffmpeg/ffmpeg_test.py,
                     its references and the clips its cases read (SHARED/sequences/foreman_{qcif,cif}.y4m.xz
                     to OUT/data/sequences; SHARED: GPUEC_SHARED_DIR, else the build's setting); run.sh runs
                     the cases below with it
  --ffmpeg-cases C   the ffmpeg_test.py cases run.sh runs (default: "$ffmpeg_cases"); a case that
                     exits 77 (skipped: no usable CUDA device) counts as failed there
Then on the GPU machine: bash OUT/run.sh [LOGDIR]   (LOGDIR defaults to \$OUT or OUT/logs)
                    and: bash OUT/bench-cavlcu.sh OUTDIR   (needs --only/--tools-build as above)
                    and: bash OUT/bench-many-encoders.sh --stock OUT/host/x264-stock --patched
                         OUT/host/x264-patched --clip-tool OUT/host/gpuec-clip --out OUTDIR (see its --help)
                    and: bash OUT/bench-ffmpeg-gudcanny.sh --ffmpeg OUT/ffmpeg/ffmpeg --clip CLIP.y4m ...
                         (see its --help; the clip from OUT/host/gpuec-clip, GPUEC_SHARED_DIR=OUT/data)
USAGE
}

build=build-cuda out=gpu-bundle data=() only=() tools_build=""
ffmpeg="" ffmpeg_cases="cuda framemd5 delay roi bad-options"
parse_options "--build-dir=build --out=out --data=data+ --only=only+ --tools-build=tools_build --ffmpeg=ffmpeg
               --ffmpeg-cases=ffmpeg_cases" "$@"
list="$build/device-targets.txt"
[ -f "$list" ] || { echo "gpu-bundle: $list not found: configure and build $build first" >&2; exit 2; }
grep -q . "$list" || { echo "gpu-bundle: $list is empty" >&2; exit 2; }
for name in "${only[@]}"; do
  grep -q "/$name\$" "$list" || { echo "gpu-bundle: --only $name: not in $list" >&2; exit 2; }
done
tools_build=${tools_build:-$build}
# The shared data folder: GPUEC_SHARED_DIR, else the build's CMake setting, else ../shared.
shared=${GPUEC_SHARED_DIR:-$(sed -n 's/^GPUEC_SHARED_DIR:PATH=//p' "$build/CMakeCache.txt" 2>/dev/null)}
shared=${shared:-$here/../../../shared}
if [ -n "$ffmpeg" ]; then
  [ -x "$ffmpeg" ] || { echo "gpu-bundle: --ffmpeg $ffmpeg is not an executable (target ffmpeg_build)" >&2; exit 2; }
  for clip in foreman_qcif foreman_cif; do
    [ -f "$shared/sequences/$clip.y4m.xz" ] ||
      { echo "gpu-bundle: $shared/sequences/$clip.y4m.xz not found (set GPUEC_SHARED_DIR)" >&2; exit 2; }
  done
fi

rm -rf "$out"
mkdir -p "$out/bin" "$out/data"
while read -r exe; do
  [ -n "$exe" ] || continue
  if [ ${#only[@]} -gt 0 ]; then
    printf '%s\n' "${only[@]}" | grep -qx "$(basename "$exe")" || continue
  fi
  [ -x "$exe" ] || { echo "gpu-bundle: $exe is not built (cmake --build $build)" >&2; exit 2; }
  cp "$exe" "$out/bin/"
done <"$list"
# Their shared libraries other than the C and C++ runtimes (e.g. libjpeg), which a bare GPU machine may
# lack, go to OUT/lib (run.sh puts it on LD_LIBRARY_PATH).
for exe in "$out"/bin/*; do copy_libs "$exe" "$out/lib"; done
for d in "${data[@]}"; do cp -a "$d" "$out/data/"; done
cp "$here/gpu-run.sh" "$out/run.sh"
cp "$here/lib.sh" "$here/reentropy-conformance.sh" "$here/gpu-ffmpeg-cuda.sh" "$out/"
cp "$here/../bench/bench-cavlcu.sh" "$here/../bench/plot-cavlcu.py" "$here/../bench/bench-ffmpeg-gudcanny.sh" \
   "$here/../bench/bench-ffmpeg-pipeline.sh" "$here/../bench/bench-many-encoders.sh" \
   "$here/../bench/bench-x264-e2e.sh" "$here/../bench/bench-x264-slots.sh" "$here/../bench/bench-reentropy-tool.sh" \
   "$out/"
if [ -n "$ffmpeg" ]; then
  mkdir -p "$out/ffmpeg" "$out/data/sequences"
  cp "$ffmpeg" "$out/ffmpeg/ffmpeg"
  cp "$here/../../tests/ffmpeg/ffmpeg_test.py" "$out/ffmpeg/"
  cp -a "$here/../../tests/ffmpeg/ref" "$out/ffmpeg/ref"
  cp "$shared/sequences/foreman_qcif.y4m.xz" "$shared/sequences/foreman_cif.y4m.xz" "$out/data/sequences/"
  echo "$ffmpeg_cases" >"$out/ffmpeg/cases"
  copy_libs "$ffmpeg" "$out/lib"
fi

host=()
for kind in stock patched timed; do
  exe="$tools_build/plugin/x264/$kind/x264"
  if [ -x "$exe" ]; then
    mkdir -p "$out/host"
    cp "$exe" "$out/host/x264-$kind"
    host+=("x264-$kind")
  fi
done
clip="$tools_build/sequences/gpuec-clip"
if [ -x "$clip" ]; then
  mkdir -p "$out/host/lib"
  cp "$clip" "$out/host/gpuec-clip"
  host+=(gpuec-clip)
  copy_libs "$clip" "$out/host/lib"  # the C and C++ runtimes are there: the tests need them
fi
jm="$tools_build/tools/jm/ldecod"  # JM's reference decoder (issue 16): gpu-acceptance.sh decodes with it too
if [ -x "$jm" ]; then
  mkdir -p "$out/host"
  cp "$jm" "$out/host/ldecod"
  [ -f "$(dirname "$jm")/decoder.cfg" ] && cp "$(dirname "$jm")/decoder.cfg" "$out/host/decoder.cfg"
  host+=(ldecod)
fi
[ -z "$ffmpeg" ] || host+=("ffmpeg (cases: $ffmpeg_cases)")
echo "gpu-bundle: $(ls "$out/bin" | wc -l) programs${host[*]:+, host: ${host[*]}}, $(du -sh "$out" | cut -f1) in $out"
