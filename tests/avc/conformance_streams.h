// tests/avc/conformance_streams.h: the JVT conformance streams of GPUEC_SHARED_DIR/conformance (its
// MANIFEST.tsv), for the re-entropy tests; empty when the folder is absent (the tests skip).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "avc/annexb.h"
#include "avc/error.h"
#include "avc/headers.h"

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

// A damaged stream for the mutation tests: a random seed cut to 4000..33999 bytes, one or two bits flipped.
template <class Rng>
inline void mutated_stream(const std::vector<std::vector<uint8_t>>& seeds, Rng& rng, std::vector<uint8_t>* m) {
  const std::vector<uint8_t>& src = seeds[rng() % seeds.size()];
  m->assign(src.begin(), src.begin() + int64_t(std::min<size_t>(src.size(), 4000 + rng() % 30000)));
  for (int k = 0, edits = 1 + int(rng() % 2); k < edits; ++k) (*m)[rng() % m->size()] ^= uint8_t(1u << (rng() % 8));
}

// The stream with the slices of every picture in reverse order (arbitrary slice order): pictures are runs
// of slice NAL units starting at first_mb_in_slice 0 (the conformance streams have no ASO of their own);
// other NAL units stay where they are. *reordered: pictures with two slices or more. False with *err when
// the stream does not parse.
inline bool reverse_slices(const std::vector<uint8_t>& in, std::vector<uint8_t>* out, int* reordered,
                           avc::Error* err) {
  std::vector<avc::NalUnit> nals;
  if (!avc::split_annexb(in.data(), in.size(), nals, *err)) return false;
  avc::HeaderParser hp;
  std::vector<size_t> run;  // NAL indices of the current picture's slices
  *reordered = 0;
  out->clear();
  auto put = [&](size_t i) {
    out->insert(out->end(), in.begin() + int64_t(nals[i].begin), in.begin() + int64_t(nals[i].range_end));
  };
  auto put_run = [&]() {
    *reordered += run.size() > 1;
    for (auto it = run.rbegin(); it != run.rend(); ++it) put(*it);
    run.clear();
  };
  for (size_t i = 0; i < nals.size(); ++i) {
    if (!hp.parse(in.data(), nals[i], int64_t(i), *err)) return false;
    if (nals[i].is_slice() && (run.empty() || hp.slice().first_mb_in_slice != 0)) {
      run.push_back(i);
      continue;
    }
    put_run();
    if (nals[i].is_slice())
      run.push_back(i);
    else
      put(i);
  }
  put_run();
  return true;
}

}  // namespace avc_test
