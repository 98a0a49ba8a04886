#!/usr/bin/env bash
# Configures, builds and runs the test suite (everything but the bench label).
#   tools/scripts/run-tests.sh [BUILD_DIR] [extra ctest args...]
# BUILD_DIR defaults to build. Environment: GPUEC_SHARED_DIR (default ../shared), CMAKE_ARGS (extra
# configure arguments, e.g. -DX264_SOURCE=...), JOBS (default: number of cores).
set -euo pipefail
case "${1:-}" in -h|--help) sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
cd "$(dirname "$0")/../.."
build=${1:-build}
[ $# -gt 0 ] && shift
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
shared=${GPUEC_SHARED_DIR:-$(pwd)/../shared}

# shellcheck disable=SC2086
cmake -S . -B "$build" -G Ninja -DGPUEC_SHARED_DIR="$shared" ${CMAKE_ARGS:-}
cmake --build "$build" -j"$jobs"
ctest --test-dir "$build" -LE bench -j"$jobs" --output-on-failure --timeout 1200 "$@"
