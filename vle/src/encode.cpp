#include "vle/encode.h"

#include <algorithm>
#include <cstring>

namespace vle {

namespace {

inline void store_be32(uint8_t* p, uint32_t v) {
  v = __builtin_bswap32(v);
  std::memcpy(p, &v, 4);
}

constexpr uint32_t kNoCode = 0x80;  // flag in an entry's low byte: the symbol cannot be coded

}  // namespace

uint64_t encode_ref(const uint8_t* in, uint64_t n, const CodeTable& t, uint8_t* out, uint64_t* chunk_bits) {
  // Entry: code in bits 16..31, length in bits 0..4; a symbol without a (valid) code gets kNoCode
  // and length 0, so it emits nothing and the OR of all entries used tells that it occurred.
  uint32_t e[256];
  for (int s = 0; s < 256; ++s) {
    const int len = t.len[s];
    e[s] = (len >= 1 && len <= kMaxCodeLength)
               ? (uint32_t{t.code[s]} & ((1u << len) - 1)) << 16 | static_cast<uint32_t>(len)
               : kNoCode;
  }
  // acc holds nacc (< 32 between steps) pending bits right-aligned; bits above them are stale and
  // never read. Two codes (32 bits at most) fit before a 32-bit word must be written.
  uint64_t acc = 0;
  unsigned nacc = 0;
  uint32_t seen = 0;
  uint8_t* o = out;
  const uint64_t nchunks = chunk_count(n);
  for (uint64_t k = 0; k < nchunks; ++k) {
    if (chunk_bits) chunk_bits[k] = static_cast<uint64_t>(o - out) * 8 + nacc;
    const uint8_t* p = in + k * kChunkSymbols;
    const uint64_t m = std::min(kChunkSymbols, n - k * kChunkSymbols);
    // Branch-free main loop: after every two codes the top word is stored whether or not it is
    // complete, and o advances only when it is. An incomplete word is rewritten later, because at
    // least 64 more symbols of 1 bit or more follow; so nothing is written past the padded payload
    // (unless a symbol has no code: then the result is UINT64_MAX and out[0, bound) unspecified).
    const uint64_t left = n - k * kChunkSymbols;
    const uint64_t fast_end = left > 64 ? std::min(m, left - 64) : 0;
    uint64_t i = 0;
    for (; i + 4 <= fast_end; i += 4) {
      const uint32_t a = e[p[i]], b = e[p[i + 1]], c = e[p[i + 2]], d = e[p[i + 3]];
      seen |= a | b | c | d;
      acc = (acc << (a & 31)) | (a >> 16);
      acc = (acc << (b & 31)) | (b >> 16);
      nacc += (a & 31) + (b & 31);  // < 64
      store_be32(o, static_cast<uint32_t>(acc >> (nacc & 31)));
      o += (nacc >> 5) << 2;
      nacc &= 31;
      acc = (acc << (c & 31)) | (c >> 16);
      acc = (acc << (d & 31)) | (d >> 16);
      nacc += (c & 31) + (d & 31);
      store_be32(o, static_cast<uint32_t>(acc >> (nacc & 31)));
      o += (nacc >> 5) << 2;
      nacc &= 31;
    }
    for (; i < m; ++i) {
      const uint32_t a = e[p[i]];
      seen |= a;
      acc = (acc << (a & 31)) | (a >> 16);
      nacc += a & 31;
      if (nacc >= 32) {
        nacc -= 32;
        store_be32(o, static_cast<uint32_t>(acc >> nacc));
        o += 4;
      }
    }
  }
  if (nacc > 0) store_be32(o, static_cast<uint32_t>(acc << (32 - nacc)));  // zero padding
  if (seen & kNoCode) return UINT64_MAX;
  return static_cast<uint64_t>(o - out) * 8 + nacc;
}

}  // namespace vle
