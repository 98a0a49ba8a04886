// tests/avc/conformance_streams.h: the JVT conformance streams of GPUEC_SHARED_DIR/conformance (its
// MANIFEST.tsv), for the re-entropy tests; empty when the folder is absent (the tests skip).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace avc_test {

inline std::vector<std::string> conformance_streams(std::string* dir_out) {
  std::vector<std::string> names;
  const char* shared = std::getenv("GPUEC_SHARED_DIR");
  if (!shared) return names;
  const std::string dir = std::string(shared) + "/conformance";
  std::ifstream manifest(dir + "/MANIFEST.tsv");
  std::string line;
  std::getline(manifest, line);  // header
  while (std::getline(manifest, line))
    if (!line.empty()) names.push_back(line.substr(0, line.find('\t')));
  *dir_out = dir;
  return names;
}

inline bool read_file(const std::string& path, std::vector<uint8_t>* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  out->assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  return true;
}

// The seeds of the mutation tests: every conformance stream up to 260 KB (all but the largest), read. False when
// there are no conformance streams (the tests skip).
inline bool fuzz_seeds(std::vector<std::vector<uint8_t>>* seeds) {
  std::string dir;
  const std::vector<std::string> names = conformance_streams(&dir);
  if (names.empty()) return false;
  for (const std::string& name : names) {
    std::vector<uint8_t> d;
    if (read_file(dir + "/" + name, &d) && d.size() <= 260000) seeds->push_back(std::move(d));
  }
  return true;
}

}  // namespace avc_test
