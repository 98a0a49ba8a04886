// bench_kernels/pack.h: the segment packer, which concatenates variable-length bit segments into one bit
// stream. Built for the CAVLC residual codes, then replaced there by the frame assembly's own emit kernel
// (cavlc/assemble_frame_cuda.h); no production code calls it, so it lives with the benchmarks (library
// gpuec_bench_kernels; its tests: tests/vle/pack_test, pack_cuda_test). CPU twin here; the CUDA packer
// with the same contract is in bench_kernels/pack_cuda.h.
//
// Output format: a byte stream read most significant bit first, as in vle/bitwriter.h and an H.264
// RBSP: stream bit b is (out[b >> 3] >> (7 - (b & 7))) & 1. The stream holds total bits (below),
// then zero bits up to the next multiple of 32; that is vle::packed_bytes(total) bytes (vle/bitwriter.h), always whole
// 32-bit words (the CUDA packer stores big-endian words). Nothing past those bytes is written.
//
// Segments (structure of arrays, n entries). Segment i is len[i] bits long (0 allowed) and goes to
// stream bits [offset[i], offset[i] + len[i]). The offsets must be the exclusive scan of the
// lengths: offset[0] == 0 and offset[i + 1] == offset[i] + len[i]; so total = offset[n - 1] +
// len[n - 1] (0 when n == 0) and every stream bit comes from exactly one segment. The source of a
// segment is either
//   WordSegments: 32-bit words; the segment's bit 0 is the most significant bit of the uint32 value
//     words[first_word[i]], its bit 32 the most significant bit of words[first_word[i] + 1], and
//     so on. The packer reads exactly words [first_word[i], first_word[i] + ceil(len[i] / 32)).
//   ByteSegments: a byte stream in the output's own format (as vle::BitWriter writes it, so any
//     bit range of it, like BitWriter::copy_bits); the segment's bit 0 is stream bit src_bit[i]
//     of src. The CUDA packer reads src as aligned 32-bit words: src must be 4-byte aligned and
//     readable up to the next 4-byte boundary past the last byte of every segment (size the
//     buffer to a multiple of 4 bytes).
// Segments may overlap or share source bits; sources must not overlap the output.
//
// Sizes: len[i] < 2^32, offsets and total are 64-bit; n < 2^32; first_word[i] < 2^32 (source word
// arrays up to 16 GiB).
#pragma once

#include <cstddef>
#include <cstdint>

#include "vle/bitwriter.h"

namespace gpuec_bench {

using vle::packed_bytes;

// pack_ref's answer for offsets that are not the exclusive scan of the lengths.
constexpr uint64_t kPackBadOffsets = UINT64_MAX;

struct WordSegments {
  const uint32_t* words;       // source words (native uint32 values, MSB first)
  const uint32_t* first_word;  // [n] index of segment i's first word in words
  const uint32_t* len;         // [n] bits
  const uint64_t* offset;      // [n] destination stream bit, exclusive scan of len
  size_t n;
};

struct ByteSegments {
  const uint8_t* src;       // source byte stream (MSB first)
  const uint64_t* src_bit;  // [n] stream bit of src where segment i starts
  const uint32_t* len;      // [n] bits
  const uint64_t* offset;   // [n] destination stream bit, exclusive scan of len
  size_t n;
};

// CPU twins. Write out[0, min(out_bytes, packed_bytes(total))) and return total bits (which may
// say that out_bytes was too small: then the first out_bytes bytes of the stream are written).
// Return kPackBadOffsets, writing nothing, when the offsets are not the exclusive scan of the
// lengths. Host pointers; synchronous; no allocation.
uint64_t pack_ref(const WordSegments& seg, uint8_t* out, uint64_t out_bytes);
uint64_t pack_ref(const ByteSegments& seg, uint8_t* out, uint64_t out_bytes);

}  // namespace gpuec_bench
