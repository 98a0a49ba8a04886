// Inputs of the GVLE tests (tests/vle), gpuec-bitexact's vle pairs and gvle-bench-gpu: edge cases and the
// Canterbury corpus files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
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

// A Canterbury corpus file under shared_dir/corpus/canterbury, plain or as NAME.xz (through `xz -dc`); empty when
// neither can be read.
inline std::vector<uint8_t> read_canterbury(const std::string& shared_dir, const std::string& name) {
  const std::string base = shared_dir + "/corpus/canterbury/" + name;
  std::vector<uint8_t> v;
  uint8_t buf[1 << 16];
  size_t got;
  if (std::FILE* f = std::fopen(base.c_str(), "rb")) {
    while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) v.insert(v.end(), buf, buf + got);
    std::fclose(f);
    return v;
  }
  if (std::FILE* f = std::fopen((base + ".xz").c_str(), "rb")) {
    std::fclose(f);
    if (std::FILE* p = popen(("xz -dc '" + base + ".xz' 2>/dev/null").c_str(), "r")) {
      while ((got = std::fread(buf, 1, sizeof buf, p)) > 0) v.insert(v.end(), buf, buf + got);
      if (pclose(p) != 0) v.clear();
    }
  }
  return v;
}

}  // namespace vle_test
