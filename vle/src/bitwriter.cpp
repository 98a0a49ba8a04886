#include "vle/bitwriter.h"

#include <cstring>

namespace vle {

uint32_t read_bits(const uint8_t* src, uint64_t bit, int nbits) {
  if (nbits == 0) return 0;
  const uint8_t* p = src + (bit >> 3);
  const int skip = static_cast<int>(bit & 7);
  const int nbytes = (skip + nbits + 7) >> 3;  // at most 5
  uint64_t v = 0;
  for (int i = 0; i < nbytes; ++i) v = (v << 8) | p[i];
  v >>= nbytes * 8 - skip - nbits;
  return static_cast<uint32_t>(v & ((uint64_t{1} << nbits) - 1));
}

void BitWriter::drain_bytes() {
  while (nacc_ >= 8) {
    nacc_ -= 8;
    emit(static_cast<uint8_t>(acc_ >> nacc_));
  }
}

void BitWriter::put_ue(uint32_t v) {
  const uint64_t x = uint64_t{v} + 1;
  int len = 0;
  while ((x >> len) > 1) ++len;  // floor(log2(x))
  put(0, len);
  if (len + 1 > 32) {
    put(static_cast<uint32_t>(x >> 32), len + 1 - 32);
    put(static_cast<uint32_t>(x), 32);
  } else {
    put(static_cast<uint32_t>(x), len + 1);
  }
}

void BitWriter::copy_bits(const uint8_t* src, uint64_t src_bit, uint64_t nbits) {
  // Both sides byte-aligned: the pending whole bytes first, then one memcpy.
  if ((nacc_ & 7) == 0 && (src_bit & 7) == 0 && nbits >= 64) {
    drain_bytes();
    const size_t nbytes = static_cast<size_t>(nbits >> 3);
    const size_t room = written_ < cap_ ? cap_ - written_ : 0;
    if (nbytes <= room) {
      std::memcpy(buf_ + written_, src + (src_bit >> 3), nbytes);
    } else {
      std::memcpy(buf_ + written_, src + (src_bit >> 3), room);
      overflow_ = true;
    }
    written_ += nbytes;
    src_bit += nbytes * 8;
    nbits -= nbytes * 8;
  }
  // 56 bits per step from one 8-byte load: with at least 64 bits left in the range, the 8 bytes from
  // the byte of src_bit all hold bits of the range, so nothing outside src is read.
  while (nbits >= 64) {
    const uint64_t w = load_be64(src + (src_bit >> 3)) << (src_bit & 7);
    put(static_cast<uint32_t>(w >> 32), 32);
    put(static_cast<uint32_t>(w >> 8) & 0xffffffu, 24);
    src_bit += 56;
    nbits -= 56;
  }
  while (nbits >= 24) {
    put(read_bits(src, src_bit, 24), 24);
    src_bit += 24;
    nbits -= 24;
  }
  if (nbits) put(read_bits(src, src_bit, static_cast<int>(nbits)), static_cast<int>(nbits));
}

void BitWriter::flush() {
  drain_bytes();
  if (nacc_) {
    const int pad = 8 - nacc_;
    emit(static_cast<uint8_t>(acc_ << pad));
    acc_ = 0;
    nacc_ = 0;
  }
}

}  // namespace vle
