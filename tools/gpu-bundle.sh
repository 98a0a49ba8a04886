#!/usr/bin/env bash
# Collects the built GPU tests and benchmarks into one folder that can be copied to a GPU machine,
# with run.sh, which runs them all there and writes the logs. See README "GPU machine".
set -euo pipefail

usage() {
  cat <<USAGE
usage: tools/gpu-bundle.sh [--build-dir DIR] [--out DIR] [--data PATH]...
  --build-dir DIR  a CUDA build (default: build-cuda); its device-targets.txt lists what to take
  --out DIR        the bundle folder (default: gpu-bundle, git-ignored); emptied first
  --data PATH      a file or folder the programs read, copied to OUT/data (repeatable); the programs
                   see it as GPUEC_SHARED_DIR=OUT/data on the GPU machine
Then on the GPU machine: bash OUT/run.sh [LOGDIR]   (LOGDIR defaults to \$OUT or OUT/logs)
USAGE
}

build=build-cuda out=gpu-bundle data=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --data) data+=("$2"); shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "gpu-bundle: unknown argument '$1'" >&2; usage >&2; exit 1 ;;
  esac
done
list="$build/device-targets.txt"
[ -f "$list" ] || { echo "gpu-bundle: $list not found: configure and build $build first" >&2; exit 2; }
grep -q . "$list" || { echo "gpu-bundle: $list is empty" >&2; exit 2; }

rm -rf "$out"
mkdir -p "$out/bin" "$out/data"
while read -r exe; do
  [ -n "$exe" ] || continue
  [ -x "$exe" ] || { echo "gpu-bundle: $exe is not built (cmake --build $build)" >&2; exit 2; }
  cp "$exe" "$out/bin/"
done <"$list"
for d in "${data[@]}"; do cp -a "$d" "$out/data/"; done
cp "$(dirname "$0")/gpu-run.sh" "$out/run.sh"
echo "gpu-bundle: $(ls "$out/bin" | wc -l) programs, $(du -sh "$out" | cut -f1) in $out"
