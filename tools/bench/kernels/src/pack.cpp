#include "bench_kernels/pack.h"

#include "vle/bitwriter.h"

namespace gpuec_bench {
namespace {

// The source reader of word segments: the m (1..32) bits at source bit q, right-aligned. It reads only the
// words that hold those bits. (Byte segments: vle::read_bits.)
struct WordReader {
  const uint32_t* words;
  uint32_t read(uint64_t q, int m) const {
    const uint64_t w = q >> 5;
    const int sh = static_cast<int>(q & 31);
    uint64_t v = static_cast<uint64_t>(words[w]) << 32;
    if (sh + m > 32) v |= words[w + 1];
    return static_cast<uint32_t>((v << sh) >> (64 - m));
  }
};

struct ByteReader {
  const uint8_t* src;
  uint32_t read(uint64_t q, int m) const { return vle::read_bits(src, q, m); }
};

// Appends every segment to a vle::BitWriter over out[0, out_bytes) (bits past the capacity are dropped),
// then zero bits up to a whole 32-bit word.
template <class Reader>
uint64_t pack_impl(const Reader& rd, const uint64_t* src_bit, const uint32_t* first_word, const uint32_t* len,
                   const uint64_t* offset, size_t n, uint8_t* out, uint64_t out_bytes) {
  uint64_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    if (offset[i] != total) return kPackBadOffsets;
    total += len[i];
  }
  vle::BitWriter bw(out, static_cast<size_t>(out_bytes));
  for (size_t i = 0; i < n; ++i) {
    uint64_t q = src_bit ? src_bit[i] : uint64_t{first_word[i]} * 32;
    uint64_t left = len[i];
    for (; left >= 32; left -= 32, q += 32) bw.put(rd.read(q, 32), 32);
    if (left) bw.put(rd.read(q, static_cast<int>(left)), static_cast<int>(left));
  }
  bw.put(0, static_cast<int>((32 - (total & 31)) & 31));
  bw.flush();
  return total;
}

}  // namespace

uint64_t pack_ref(const WordSegments& s, uint8_t* out, uint64_t out_bytes) {
  return pack_impl(WordReader{s.words}, nullptr, s.first_word, s.len, s.offset, s.n, out, out_bytes);
}

uint64_t pack_ref(const ByteSegments& s, uint8_t* out, uint64_t out_bytes) {
  return pack_impl(ByteReader{s.src}, s.src_bit, nullptr, s.len, s.offset, s.n, out, out_bytes);
}

}  // namespace gpuec_bench
