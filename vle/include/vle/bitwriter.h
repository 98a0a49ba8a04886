// vle/bitwriter.h: MSB-first bit writer and bit-range copy, the CPU bit packer.
//
// Bit format: a bit stream is a byte array read most significant bit first, as in an H.264 RBSP:
// stream bit i is (buf[i >> 3] >> (7 - (i & 7))) & 1. A partial last byte is padded with zero bits.
//
// The writer never allocates: the caller owns the buffer and sizes it (bits_to_bytes()). Writing past
// the capacity sets overflowed() and drops the bits; nothing is written outside [buf, buf + cap).
// Not thread-safe; one writer per output buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <cstring>

namespace vle {

constexpr size_t bits_to_bytes(uint64_t bits) { return static_cast<size_t>((bits + 7) >> 3); }

// The 8 bytes at p as a big-endian number (bit 63 is the first stream bit of p[0]), and v stored so: the
// 64-bit unit of the fast bit copies and word writers of this format.
inline uint64_t load_be64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
#if (defined(__GNUC__) || defined(__clang__)) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  return __builtin_bswap64(v);
#elif (defined(__GNUC__) || defined(__clang__)) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  return v;
#else
  v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];
  return v;
#endif
}
inline void store_be64(uint8_t* p, uint64_t v) {
#if (defined(__GNUC__) || defined(__clang__)) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  v = __builtin_bswap64(v);
  std::memcpy(p, &v, 8);
#elif (defined(__GNUC__) || defined(__clang__)) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  std::memcpy(p, &v, 8);
#else
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (56 - 8 * i));
#endif
}

// Bytes of a stream of `bits` bits padded with zero bits to whole 32-bit words, the unit of the GPU writers
// (gpu/device/word_sink.cuh: big-endian words, so the bytes are this format): CAVLC slot codes and frame
// assemblies, GVLE payloads.
constexpr uint64_t packed_bytes(uint64_t bits) { return ((bits + 31) >> 5) << 2; }

// Reads nbits (0..32) starting at stream bit `bit` of src, right-aligned in the result.
// The caller guarantees that bits [bit, bit + nbits) lie inside src.
uint32_t read_bits(const uint8_t* src, uint64_t bit, int nbits);

class BitWriter {
 public:
  BitWriter(uint8_t* buf, size_t cap_bytes) : buf_(buf), cap_(cap_bytes) {}

  // Appends the low nbits (0..32) of value, most significant first. Higher bits of value must be 0.
  void put(uint32_t value, int nbits) {
    acc_ = (acc_ << nbits) | value;  // nacc_ < 32 before: the 64-bit accumulator holds nacc_ + nbits
    nacc_ += nbits;
    if (nacc_ >= 32) store_word();
  }
  void put_bit(uint32_t b) { put(b & 1u, 1); }
  // Unsigned Exp-Golomb ue(v) (H.264 9.1).
  void put_ue(uint32_t v);

  // Appends nbits of src starting at stream bit src_bit (the splice primitive: any alignment).
  void copy_bits(const uint8_t* src, uint64_t src_bit, uint64_t nbits);
  // Appends zero bits up to the next byte boundary of the output.
  void align_zero() { put(0, static_cast<int>((8 - (bits() & 7)) & 7)); }

  uint64_t bits() const { return written_ * 8 + static_cast<uint64_t>(nacc_); }
  bool overflowed() const { return overflow_; }
  // Writes the pending bits, zero-padding the last byte. The writer stays usable only if bits() was
  // byte-aligned; flush() is meant to be the last call.
  void flush();

 private:
  // Stores the 32 oldest pending bits as one big-endian word (bytes one by one near the capacity).
  void store_word() {
    nacc_ -= 32;
    const uint32_t w = static_cast<uint32_t>(acc_ >> nacc_);
    if (written_ + 4 <= cap_) {
      const uint32_t be = to_big_endian(w);
      std::memcpy(buf_ + written_, &be, 4);
      written_ += 4;
    } else {
      for (int s = 24; s >= 0; s -= 8) emit(static_cast<uint8_t>(w >> s));
    }
  }
  static uint32_t to_big_endian(uint32_t w) {
#if defined(__GNUC__) || defined(__clang__)
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return __builtin_bswap32(w);
#else
    return w;
#endif
#else
    uint8_t b[4] = {static_cast<uint8_t>(w >> 24), static_cast<uint8_t>(w >> 16), static_cast<uint8_t>(w >> 8),
                    static_cast<uint8_t>(w)};
    uint32_t r;
    std::memcpy(&r, b, 4);
    return r;
#endif
  }
  void drain_bytes();  // moves whole bytes from the accumulator to the buffer: nacc_ < 8 after
  void emit(uint8_t byte) {
    if (written_ < cap_) buf_[written_] = byte; else overflow_ = true;
    ++written_;
  }
  uint8_t* buf_;
  size_t cap_;
  size_t written_ = 0;  // whole bytes emitted (counted even past capacity, so bits() stays exact)
  uint64_t acc_ = 0;    // pending bits, right-aligned: the low nacc_ bits (the bits above are stale)
  int nacc_ = 0;        // number of pending bits, < 32 between calls
  bool overflow_ = false;
};

}  // namespace vle
