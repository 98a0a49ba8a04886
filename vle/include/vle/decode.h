// vle/decode.h: the GVLE decoder (CPU), the inverse of encode_ref (vle/encode.h).
//
// The payload layout is the one of vle/encode.h: codes concatenated MSB first, chunk k (symbols
// [k * kChunkSymbols, min(n, (k + 1) * kChunkSymbols))) starting at stream bit chunk_bits[k]. Chunks
// are decoded independently and in parallel.
//
// The decoder trusts nothing it is given: it reads only bytes [payload, payload + payload_bytes),
// writes only out[0, n), and every inconsistency is a DecodeStatus, never a crash or a read past
// the payload. A successful decode means: the table is a canonical code (vle/huffman.h), the chunk
// index starts at bit 0 and is non-decreasing, every chunk decodes to exactly its symbol count and
// ends exactly at the next chunk's start bit (the last one exactly at total_bits), and no invalid
// code word (the unused half of a one-symbol code) occurs. Padding bits after total_bits are not
// looked at (the file format checks them).
#pragma once

#include <cstddef>
#include <cstdint>

#include "vle/encode.h"
#include "vle/huffman.h"

namespace vle {

enum class DecodeStatus {
  kOk = 0,
  kBadTable,          // the lengths are not a valid code, or the codes are not the canonical ones
  kBadChunkCount,     // nchunks != chunk_count(n)
  kBadChunkIndex,     // chunk_bits[0] != 0, decreasing, or past total_bits
  kPayloadTooShort,   // payload_bytes * 8 < total_bits
  kInvalidCode,       // a bit pattern that is no code word of the table
  kChunkOverrun,      // a chunk's codes run past the start of the next chunk (or total_bits)
  kChunkUnderrun,     // a chunk's codes end before the start of the next chunk (or total_bits)
  kNullArgument,      // a null pointer where data is needed
};

// A one-line English description of the status ("ok" for kOk). Never null.
const char* decode_status_message(DecodeStatus s);

// Decodes n symbols into out[0, n). chunk_bits holds nchunks entries (nchunks must be
// chunk_count(n)). threads: at most this many threads (0: std::thread::hardware_concurrency()),
// each with 4 chunks at least (fewer chunks decode in the calling thread alone); the calling thread
// is one of them. Synchronous; if a thread cannot be started its share runs in the calling thread. On an error out[0, n) holds
// unspecified bytes; the returned status is the one of the lowest-numbered failing chunk (or of the
// argument check).
DecodeStatus decode_ref(const uint8_t* payload, size_t payload_bytes, uint64_t total_bits,
                        const uint64_t* chunk_bits, uint64_t nchunks, const CodeTable& table,
                        uint8_t* out, uint64_t n, unsigned threads);

}  // namespace vle
