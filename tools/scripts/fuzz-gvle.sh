#!/usr/bin/env bash
# Builds the libFuzzer target for the gvle decompressor (tests/vle/fuzz_decompress.cpp) with
# clang++ and ASan + UBSan, seeds a corpus with small .gvle files and runs the fuzzer.
#   tools/scripts/fuzz-gvle.sh [SECONDS]        (default 60)
# Everything lands in build-fuzz/ (git-ignored): the binary, seeds/ (remade each run), corpus/
# (kept and grown across runs), crash artifacts, fuzz.log. Not part of the CMake build or CI.
# Needs clang 14 and libclang-rt-14-dev (Debian), libxxhash-dev. Environment: CXX (default
# clang++), FUZZ_ARGS (extra libFuzzer flags, e.g. -jobs=2).
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-60}
case "$secs" in ''|*[!0-9]*) echo "usage: tools/scripts/fuzz-gvle.sh [SECONDS]" >&2; exit 1 ;; esac
out=build-fuzz
cxx=${CXX:-clang++}
srcs=(vle/src/bitwriter.cpp vle/src/huffman.cpp vle/src/encode.cpp vle/src/decode.cpp vle/src/format.cpp)
mkdir -p "$out/corpus"
rm -rf "$out/seeds"
mkdir -p "$out/seeds/raw"

echo "fuzz-gvle: building $out/fuzz_decompress and $out/gvle"
"$cxx" -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -Ivle/include tests/vle/fuzz_decompress.cpp "${srcs[@]}" -lxxhash -pthread -o "$out/fuzz_decompress"
"$cxx" -std=c++17 -O2 -Ivle/include tools/cli/gvle.cpp "${srcs[@]}" -lxxhash -pthread -o "$out/gvle"

# Seeds: small compressed files covering the shapes of the format (empty, one byte, one-symbol
# alphabet, all 256 symbols, text, codes of 16 bits, several chunks, enough chunks for two decode
# threads).
raw=$out/seeds/raw
: > "$raw/empty"
printf 'x' > "$raw/one-byte"
head -c 3000 /dev/zero | tr '\0' 'a' > "$raw/one-symbol"
python3 -c 'import sys; sys.stdout.buffer.write(bytes(range(256)) * 3)' > "$raw/all-256"
head -c 6000 README.md > "$raw/text"
python3 -c '
import sys
a, b, out = 1, 1, bytearray()
for s in range(22):           # Fibonacci counts: the code reaches 16 bits
    out += bytes([s * 11]) * a
    a, b = b, a + b
sys.stdout.buffer.write(bytes(out[i * 7919 % len(out)] for i in range(len(out))))' > "$raw/sixteen-bit"
python3 -c 'import sys; sys.stdout.buffer.write(b"ab" * 70000 + b"c")' > "$raw/three-chunks"
python3 -c 'import sys; sys.stdout.buffer.write(b"a" * (8 * 65536 + 1))' > "$raw/nine-chunks"
for f in "$raw"/*; do
  "$out/gvle" compress --backend cpu -f -o "$out/seeds/$(basename "$f").gvle" "$f"
done
echo "fuzz-gvle: seeds: $(ls "$out/seeds" | grep -c '\.gvle$') files in $out/seeds (+ raw/ inputs)"

echo "fuzz-gvle: running for $secs s (log: $out/fuzz.log)"
set +e
# shellcheck disable=SC2086
"$out/fuzz_decompress" -max_total_time="$secs" -max_len=70000 -timeout=20 -rss_limit_mb=4096 \
  -print_final_stats=1 -artifact_prefix="$out/" ${FUZZ_ARGS:-} \
  "$out/corpus" "$out/seeds" "$out/seeds/raw" 2>&1 | tee "$out/fuzz.log" | grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)|^stat::|ERROR|SUMMARY|Test unit written'
rc=${PIPESTATUS[0]}
set -e
grep -E '^Done [0-9]+ runs' "$out/fuzz.log" | tail -1 || true
if [ "$rc" -ne 0 ]; then
  echo "fuzz-gvle: the fuzzer failed (exit $rc); see $out/fuzz.log and the crash-* artifact in $out/" >&2
  exit "$rc"
fi
echo "fuzz-gvle: no failures; corpus: $(ls "$out/corpus" | wc -l) files in $out/corpus"
