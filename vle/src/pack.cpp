#include "vle/pack.h"

namespace vle {
namespace {

// Source readers: the m (1..32) bits at source bit q, right-aligned. They read only the words (or
// bytes) that hold those bits.
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
  uint32_t read(uint64_t q, int m) const {
    const uint8_t* p = src + (q >> 3);
    const int sh = static_cast<int>(q & 7);
    const int nbytes = (sh + m + 7) >> 3;  // at most 5
    uint64_t v = 0;
    for (int i = 0; i < nbytes; ++i) v |= static_cast<uint64_t>(p[i]) << (56 - 8 * i);
    return static_cast<uint32_t>((v << sh) >> (64 - m));
  }
};

// Appends bits MSB first and stores whole big-endian words, clipped to the capacity.
class WordSink {
 public:
  WordSink(uint8_t* out, uint64_t cap) : out_(out), cap_(cap) {}
  void put(uint32_t v, int m) {  // m in 1..32, v right-aligned
    acc_ = (acc_ << m) | v;
    nacc_ += m;
    if (nacc_ >= 32) {
      nacc_ -= 32;
      store(static_cast<uint32_t>(acc_ >> nacc_));
      acc_ &= (uint64_t{1} << nacc_) - 1;
    }
  }
  void finish() {
    if (nacc_) store(static_cast<uint32_t>(acc_ << (32 - nacc_)));
  }

 private:
  void store(uint32_t w) {
    for (int i = 0; i < 4 && pos_ < cap_; ++i, ++pos_) out_[pos_] = static_cast<uint8_t>(w >> (24 - 8 * i));
  }
  uint8_t* out_;
  uint64_t cap_;
  uint64_t pos_ = 0;
  uint64_t acc_ = 0;
  int nacc_ = 0;
};

template <class Reader>
uint64_t pack_impl(const Reader& rd, const uint64_t* src_bit, const uint32_t* first_word, const uint32_t* len,
                   const uint64_t* offset, size_t n, uint8_t* out, uint64_t out_bytes) {
  uint64_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    if (offset[i] != total) return kPackBadOffsets;
    total += len[i];
  }
  WordSink sink(out, out_bytes);
  for (size_t i = 0; i < n; ++i) {
    uint64_t q = src_bit ? src_bit[i] : uint64_t{first_word[i]} * 32;
    uint64_t left = len[i];
    for (; left >= 32; left -= 32, q += 32) sink.put(rd.read(q, 32), 32);
    if (left) sink.put(rd.read(q, static_cast<int>(left)), static_cast<int>(left));
  }
  sink.finish();
  return total;
}

}  // namespace

uint64_t pack_ref(const WordSegments& s, uint8_t* out, uint64_t out_bytes) {
  return pack_impl(WordReader{s.words}, nullptr, s.first_word, s.len, s.offset, s.n, out, out_bytes);
}

uint64_t pack_ref(const ByteSegments& s, uint8_t* out, uint64_t out_bytes) {
  return pack_impl(ByteReader{s.src}, s.src_bit, nullptr, s.len, s.offset, s.n, out, out_bytes);
}

}  // namespace vle
