// vle/format.h: the .gvle file format (a self-describing container around the GVLE payload of
// vle/encode.h) and whole-buffer compress / decompress.
//
// Byte layout, version 1. All integers little-endian; "hash" is XXH3_64bits (xxHash 0.8) with seed 0.
//
//   offset   size              field
//   0        4                 magic "GVLE" (47 56 4C 45)
//   4        1                 version: 1
//   5        1                 flags: 0 (reserved; a reader rejects other values)
//   6        2                 used_symbols m: number of byte values with a code (0..256)
//   8        8                 original_size n: number of bytes (symbols) of the original
//   16       8                 content_hash: hash of the n original bytes
//   24       8                 payload_bits: payload length in bits, before padding
//   32       8                 chunk_count: chunk_count(n) of vle/encode.h
//   40       4                 chunk_symbols: symbols per chunk, kChunkSymbols (65536)
//   44       4                 reserved: 0
//   48       8                 fixed_hash: hash of bytes [0, 48)
//   56       32                symbol bitmap: bit (s & 7) (LSB = 0) of byte s >> 3 is set when byte
//                              value s has a code
//   88       ceil(m / 2)       code lengths minus 1 (4 bits each, 1..16 -> 0..15) of the m coded
//                              symbols in increasing symbol order, two per byte, the first in the
//                              low nibble; an unused last high nibble is 0
//   T        4 * chunk_count   chunk bit lengths (u32): chunk k spans payload bits
//                              [sum of lengths before k, + its length); they sum to payload_bits
//   .        8                 payload_hash: hash of the payload bytes (padding included)
//   .        8                 tables_hash: hash of bytes [56, here); the header ends after it
//   H        4*ceil(payload_bits / 32)   payload (vle/encode.h: codes MSB first, zero-padded to 32
//                              bits); the file ends exactly here
//
// H = header_bytes(m, chunk_count). The code is the canonical code of the lengths (vle/huffman.h),
// so the lengths alone define it. n = 0 gives m = 0, payload_bits = 0, chunk_count = 0 and no
// payload (a 104-byte file).
//
// What a reader checks, in this order (each failure is a Status with a one-line message): magic
// (else kNotGvle), version (kUnsupportedVersion), fixed header present (kTruncated) and its hash
// (kHeaderCorrupt), field consistency (kHeaderCorrupt), tables present (kTruncated) and their hash
// (kHeaderCorrupt), lengths form a valid code and chunk lengths sum to payload_bits
// (kHeaderCorrupt), payload size (kTruncated / kTrailingData), payload hash and zero padding
// (kPayloadCorrupt), decoding (kDecodeFailed), content hash of the output (kContentMismatch).
// So a flipped bit anywhere is caught, and no output is returned unless every check passed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "vle/encode.h"
#include "vle/huffman.h"

namespace vle {

constexpr uint8_t kFormatVersion = 1;
constexpr size_t kFixedHeaderBytes = 56;  // through fixed_hash

// Header size in bytes for m used symbols and c chunks (everything before the payload).
constexpr uint64_t header_bytes(unsigned used_symbols, uint64_t chunks) {
  return kFixedHeaderBytes + 32 + (used_symbols + 1) / 2 + 4 * chunks + 16;
}
// File size that always holds the compressed form of n bytes.
constexpr uint64_t compress_bound(uint64_t n) { return header_bytes(256, chunk_count(n)) + encoded_bound_bytes(n); }

// The encode step, pluggable: encode_ref (CPU) or a twin with the same signature and contract
// (vle/encode.h: host pointers, exact payload bits, 32-bit zero padding, chunk index; UINT64_MAX on
// failure), e.g. the CUDA encoder (vle/encoders.h: the encoder of each backend, and compress with a backend).
using EncodeFn = uint64_t (*)(const uint8_t* in, uint64_t n, const CodeTable& t, uint8_t* out,
                              uint64_t* chunk_bits);

enum class FormatStatus {
  kOk = 0,
  kNotGvle,             // no "GVLE" magic: a foreign file
  kUnsupportedVersion,  // a version this reader does not know
  kTruncated,           // the file ends inside the header or the payload
  kHeaderCorrupt,       // a header checksum mismatch or inconsistent header fields
  kTrailingData,        // bytes after the payload
  kPayloadCorrupt,      // payload checksum mismatch or non-zero padding
  kDecodeFailed,        // the payload does not decode (vle/decode.h)
  kContentMismatch,     // the decoded bytes do not match the content hash
  kNoEncoder,           // compress: the backend is not in this build
  kEncodeFailed,        // compress: the encoder failed or returned an inconsistent result
  kOutOfMemory,
};

struct Status {
  FormatStatus code = FormatStatus::kOk;
  std::string message;  // one line, no trailing newline; empty when ok
  bool ok() const { return code == FormatStatus::kOk; }
};

// Header fields of a file (after its checks passed).
struct HeaderInfo {
  uint8_t version = 0;
  uint64_t original_size = 0;
  uint64_t content_hash = 0;
  uint64_t payload_bits = 0;
  uint64_t chunk_count = 0;
  unsigned used_symbols = 0;
  uint64_t header_bytes = 0;   // offset of the payload
  uint64_t payload_bytes = 0;  // 4 * ceil(payload_bits / 32)
  uint8_t len[256] = {};       // code lengths
};

// Compresses in[0, n) into *out (replaced): histogram, package-merge code limited to 16 bits,
// encode with `encode`, header. The encoder's result is checked (chunk index shape, payload length
// equal to sum of count * length), so a faulty plugged-in encoder gives kEncodeFailed, never a bad
// file. encode == nullptr gives kNoEncoder.
Status compress(const uint8_t* in, size_t n, EncodeFn encode, std::vector<uint8_t>* out);
// CPU compress; throws std::bad_alloc only.
std::vector<uint8_t> compress_ref(const uint8_t* in, size_t n);

struct DecompressOptions {
  unsigned threads = 0;  // decode threads (vle/decode.h); 0: hardware concurrency
  // false skips the three header/payload hashes (never the content hash): for the fuzzer, so that
  // it reaches the parser and decoder behind them. Keep true everywhere else.
  bool verify_checksums = true;
};

// Runs every check of a reader except decoding and the content hash (see the list above); fills
// *info when not null. Reads only file[0, size).
Status read_header(const uint8_t* file, size_t size, HeaderInfo* info,
                   const DecompressOptions& opt = DecompressOptions());

// Decompresses a whole file into *out (replaced). On any failure *out is empty and the status
// says why; success means the output matched the content hash.
Status decompress(const uint8_t* file, size_t size, std::vector<uint8_t>* out,
                  const DecompressOptions& opt = DecompressOptions());

}  // namespace vle
