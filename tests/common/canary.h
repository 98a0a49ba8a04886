// tests/common/canary.h: the canary that tests fill outputs with before a call, so that a byte the call was
// not allowed to write shows up afterwards. One value for every test (0xA5 in every byte: not 0, not 0xFF,
// not a valid small length, alternating bits).
//
//   kCanary              the byte
//   canary<T>()          a T with every byte kCanary (0xA5A5 for uint16_t, 0xA5A5...A5 for uint64_t)
//   fill_canary(p, n)    n bytes of kCanary at p (host memory; device buffers: cudaMemset(p, kCanary, n))
//   canary_broken_at(p, from, to)   the first byte index in [from, to) that is no longer kCanary, or `to`
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace gpuec_test {

constexpr uint8_t kCanary = 0xA5;

template <class T>
constexpr T canary() {
  static_assert(sizeof(T) <= 8, "canary<T>: an integer of at most 8 bytes");
  uint64_t v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) v = (v << 8) | kCanary;
  return static_cast<T>(v);
}

inline void fill_canary(void* p, size_t bytes) {
  if (bytes) std::memset(p, kCanary, bytes);
}

inline size_t canary_broken_at(const void* p, size_t from, size_t to) {
  const uint8_t* b = static_cast<const uint8_t*>(p);
  for (size_t i = from; i < to; ++i)
    if (b[i] != kCanary) return i;
  return to;
}

}  // namespace gpuec_test
