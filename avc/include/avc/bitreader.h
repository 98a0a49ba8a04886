// avc/bitreader.h: reading an H.264 RBSP (emulation prevention bytes already removed) bit by bit, most
// significant bit first, with the descriptors of 7.2: u(n), ue(v), se(v), te(v), more_rbsp_data().
//
// Never reads outside [begin, end): a read past the end returns 0 bits and sets the sticky error flag,
// which the caller checks (ok()) at the points where it reports an error with its context (NAL index,
// macroblock address). Exp-Golomb codes with more than 31 leading zeros set the flag too (no baseline
// syntax element needs more; 9.1 allows up to 2^32 - 2 for ue(v) only in theory).
//
// Speed: peek()/u(n) take one unaligned 64-bit load when 8 whole bytes lie before the end (a byte loop
// only near the end), and ue()/se() read codes of up to 31 bits (codeNum < 65535) in one step with a
// count of leading zeros; no virtual calls, no allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace avc {

class BitReader {
 public:
  BitReader() = default;
  // Bits [begin_bit, end_bit) of data (end_bit <= 8 * size is the caller's promise).
  BitReader(const uint8_t* data, uint64_t begin_bit, uint64_t end_bit)
      : data_(data), pos_(begin_bit), end_(end_bit) {}
  BitReader(const uint8_t* data, size_t size_bytes) : data_(data), pos_(0), end_(uint64_t(size_bytes) * 8) {}

  bool ok() const { return ok_; }
  void fail() { ok_ = false; }
  uint64_t pos() const { return pos_; }
  uint64_t end() const { return end_; }
  uint64_t left() const { return pos_ < end_ ? end_ - pos_ : 0; }
  bool byte_aligned() const { return (pos_ & 7) == 0; }
  const uint8_t* data() const { return data_; }

  // The next n bits (0..32) without moving; bits past the end read as 0 (no error).
  uint32_t peek(int n) const {
    if (n <= 0) return 0;
    uint64_t acc = 0;
    uint64_t p = pos_;
    const uint64_t first = p >> 3;
    // Fast path: 8 whole bytes before the end hold any window of up to 7 + 32 bits.
    if ((first + 8) * 8 <= end_) {
      uint64_t w;
      std::memcpy(&w, data_ + first, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
      w = __builtin_bswap64(w);
#else
      w = 0;
      for (int i = 0; i < 8; ++i) w = (w << 8) | data_[first + uint64_t(i)];
#endif
      return uint32_t((w << (p & 7)) >> (64 - n));
    }
    // Up to 5 bytes hold any 32-bit window.
    for (int i = 0; i < 5; ++i) {
      const uint64_t byte = first + uint64_t(i);
      const uint8_t b = byte * 8 < end_ ? data_[byte] : 0;
      acc = (acc << 8) | b;
    }
    const int shift = 40 - int(p & 7) - n;
    uint32_t v = uint32_t((acc >> shift) & ((uint64_t(1) << n) - 1));
    // Zero the bits at or past the end.
    if (p + uint64_t(n) > end_) {
      const int valid = p >= end_ ? 0 : int(end_ - p);
      v = valid == 0 ? 0 : (v >> (n - valid)) << (n - valid);
    }
    return v;
  }
  void skip(uint64_t n) {
    if (n > left()) {
      ok_ = false;
      pos_ = end_;
      return;
    }
    pos_ += n;
  }
  // u(n), n = 0..32.
  uint32_t u(int n) {
    if (uint64_t(n) > left()) {
      ok_ = false;
      pos_ = end_;
      return 0;
    }
    const uint32_t v = peek(n);
    pos_ += uint64_t(n);
    return v;
  }
  bool flag() { return u(1) != 0; }
  // ue(v) (9.1).
  uint32_t ue() {
    // Codes of up to 31 bits (15 leading zeros, codeNum < 65535) in one step.
    const uint32_t w = peek(32);
    if (w >= 0x10000u) {
      const int len = 2 * __builtin_clz(w) + 1;
      if (uint64_t(len) > left()) {
        ok_ = false;
        pos_ = end_;
        return 0;
      }
      pos_ += uint64_t(len);
      return (w >> (32 - len)) - 1;
    }
    int zeros = 0;
    while (u(1) == 0) {
      if (!ok_ || ++zeros > 31) {
        ok_ = false;
        return 0;
      }
    }
    if (zeros == 0) return 0;
    return uint32_t((uint64_t(1) << zeros) - 1 + u(zeros));
  }
  // se(v) (9.1.1).
  int32_t se() {
    const uint32_t k = ue();
    return (k & 1) ? int32_t((k + 1) / 2) : -int32_t(k / 2);
  }
  // te(v) with the range of the syntax element (9.1): one inverted bit when range == 1, else ue(v).
  uint32_t te(uint32_t range) { return range == 1 ? (u(1) ^ 1u) : ue(); }

  // more_rbsp_data() (7.2): whether anything but the rbsp_trailing_bits follows, i.e. whether a 1 bit
  // exists after the current position other than the last 1 bit of [pos, end). With no 1 bit at all the
  // data are malformed (no stop bit): false, and the caller's trailing-bits check reports it.
  bool more_rbsp_data() const {
    if (pos_ >= end_) return false;
    // The last 1 bit of the RBSP (the stop bit).
    uint64_t last = end_;
    for (uint64_t byte = (end_ - 1) >> 3;; --byte) {
      uint8_t b = data_[byte];
      // Bits at or past end_ in the last (partial) byte do not count.
      if (byte == (end_ - 1) >> 3 && (end_ & 7)) b = uint8_t(b & (0xFF00u >> (end_ & 7)));
      if (b) {
        int bit = 0;
        while (!((b >> bit) & 1)) ++bit;  // lowest set bit of the byte = last 1 bit in stream order
        last = byte * 8 + uint64_t(7 - bit);
        break;
      }
      if (byte == (pos_ >> 3)) break;
    }
    if (last == end_ || last < pos_) return false;
    return last > pos_;
  }

 private:
  const uint8_t* data_ = nullptr;
  uint64_t pos_ = 0, end_ = 0;
  bool ok_ = true;
};

}  // namespace avc
