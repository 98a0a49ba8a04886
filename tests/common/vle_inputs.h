// Edge-case inputs of the GVLE tests (tests/vle) and gpuec-bitexact's vle pairs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vle_test {

// n bytes counting up 0, 1, ..., 255, 0, ...: every symbol, equally often when n is a multiple of 256.
inline std::vector<uint8_t> all_symbols(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint8_t>(i);
  return v;
}

// Symbols 0..symbols-1 in order, symbol s repeated F(s) times (1, 1, 2, 3, 5, ...): Fibonacci-like counts, which
// make an unlimited Huffman code a chain (so the 16-bit length limit binds).
inline std::vector<uint8_t> fibonacci_bytes(int symbols) {
  std::vector<uint8_t> v;
  uint64_t a = 1, b = 1;
  for (int s = 0; s < symbols; ++s) {
    v.insert(v.end(), a, static_cast<uint8_t>(s));
    const uint64_t c = a + b;
    a = b;
    b = c;
  }
  return v;
}

}  // namespace vle_test
