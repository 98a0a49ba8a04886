// tests/common/pgm.h: a minimal binary PGM reader (P5, maxval 255, comments) for the GUD-Canny GPU test and
// benchmark; tools/cli/gudcanny.cpp has the full reader with its error messages.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace canny_test {

// Reads path into *w, *h and *px (w * h bytes, pitch w). False for anything else or a short file.
inline bool read_pgm(const std::string& path, int* w, int* h, std::vector<uint8_t>* px) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::string magic;
  f >> magic;
  if (magic != "P5") return false;
  int v[3], n = 0;
  while (n < 3 && f) {
    f >> std::ws;
    if (f.peek() == '#') {
      std::string line;
      std::getline(f, line);
      continue;
    }
    f >> v[n++];
  }
  if (n < 3 || v[2] != 255 || v[0] < 1 || v[1] < 1) return false;
  f.get();  // the single whitespace after maxval
  *w = v[0];
  *h = v[1];
  px->resize(size_t(v[0]) * v[1]);
  f.read(reinterpret_cast<char*>(px->data()), std::streamsize(px->size()));
  return bool(f);
}

}  // namespace canny_test
