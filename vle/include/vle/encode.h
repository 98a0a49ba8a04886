// vle/encode.h: the GVLE bit layout and its CPU encoder (the twin of the CUDA kernel).
//
// Payload of n symbols: the codes of in[0], in[1], ... in[n-1] concatenated most significant bit
// first (stream bit i is (out[i >> 3] >> (7 - (i & 7))) & 1, as in vle/bitwriter.h), then zero bits
// up to a multiple of 32 bits (the CUDA kernel writes whole 32-bit words; their memory bytes are the
// stream bytes in order). The chunk index gives, for every k < chunk_count(n), the stream bit where
// the code of in[k * kChunkSymbols] starts, so that chunks decode independently.
#pragma once

#include <cstddef>
#include <cstdint>

#include "vle/huffman.h"

namespace vle {

constexpr uint64_t kChunkSymbols = uint64_t{1} << 16;

constexpr uint64_t chunk_count(uint64_t n) { return (n + kChunkSymbols - 1) / kChunkSymbols; }

// Bytes that always hold the payload of n symbols (16-bit codes at most, padded to 32 bits).
constexpr uint64_t encoded_bound_bytes(uint64_t n) { return ((n * kMaxCodeLength + 31) / 32) * 4; }

// Encodes in[0, n) with table t into out (room for encoded_bound_bytes(n); bytes past the padded
// payload are not touched) and writes chunk_count(n) entries to chunk_bits (may be null). Returns the
// payload length in bits (before padding), or UINT64_MAX when some input symbol has no code (len 0);
// then out[0, encoded_bound_bytes(n)) and chunk_bits hold unspecified values.
uint64_t encode_ref(const uint8_t* in, uint64_t n, const CodeTable& t, uint8_t* out, uint64_t* chunk_bits);

}  // namespace vle
