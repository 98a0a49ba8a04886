// tests/common/bit_diff.h: the first differing bit of two outputs, for reports of twins that disagree.
//
// Bits are numbered as the project's streams are read (vle/bitwriter.h): stream bit i is
// (buf[i >> 3] >> (7 - (i & 7))) & 1, so "bit 0" of a byte is its most significant bit. For arrays of wider
// integers the numbering is that of their bytes in memory (little-endian on the machines we run on); the
// report names the byte offset, so the element is offset / sizeof(element).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace gpuec_test {

struct BitDiff {
  bool differ = false;
  uint64_t bit = 0;     // stream bit (byte * 8 + bit_in_byte)
  size_t byte = 0;      // byte offset
  int bit_in_byte = 0;  // 0 = most significant
  uint8_t expected = 0, actual = 0;  // the two bytes at that offset

  // "bit 1234 (byte 154, bit 2 from the MSB): expected 0x5a, actual 0x7a"
  std::string str() const {
    char s[160];
    std::snprintf(s, sizeof s, "bit %llu (byte %zu, bit %d from the MSB): expected 0x%02x, actual 0x%02x",
                  static_cast<unsigned long long>(bit), byte, bit_in_byte, expected, actual);
    return s;
  }
};

// The first differing bit of the first `bits` stream bits of two buffers (bits past them are not looked at).
inline BitDiff first_differing_bit_of(const void* expected, const void* actual, uint64_t bits) {
  const uint8_t* e = static_cast<const uint8_t*>(expected);
  const uint8_t* a = static_cast<const uint8_t*>(actual);
  BitDiff d;
  for (uint64_t byte = 0; byte * 8 < bits; ++byte) {
    if (e[byte] == a[byte]) continue;
    for (int k = 0; k < 8 && byte * 8 + k < bits; ++k) {
      if (((e[byte] ^ a[byte]) >> (7 - k)) & 1) {
        d.differ = true;
        d.bit = byte * 8 + k;
        d.byte = static_cast<size_t>(byte);
        d.bit_in_byte = k;
        d.expected = e[byte];
        d.actual = a[byte];
        return d;
      }
    }
  }
  return d;
}

// The same over whole bytes.
inline BitDiff first_differing_bit(const void* expected, const void* actual, size_t bytes) {
  return first_differing_bit_of(expected, actual, uint64_t{bytes} * 8);
}

}  // namespace gpuec_test
