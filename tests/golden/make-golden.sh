#!/usr/bin/env bash
# Writes tests/golden/outputs.tsv from a set of binaries: by default the previous main's (9b2dcdf), saved in
# /work/baseline-9b2dcdf (gvle, gudcanny, avc-reentropy, x264-patched). The synthetic x264 inputs come from a
# gpuec-clip (same bytes on every machine; their SHA-256 is in the table too).
# usage: make-golden.sh [BIN_DIR [GPUEC_CLIP [SHARED_DIR]]]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-/work/baseline-9b2dcdf}
clip=${2:-$here/../../build/sequences/gpuec-clip}
shared=${3:-${GPUEC_SHARED_DIR:-$here/../../../shared}}
exec /usr/bin/python3 "$here/golden.py" --regenerate --shared "$shared" --bin-dir "$bin" --clip "$clip" \
  --table "$here/outputs.tsv"
