#include "harness.h"

#include <algorithm>
#include <cstring>

#include "bit_diff.h"
#include "canary.h"

namespace bitexact {
namespace {

uint32_t fnv1a(const std::string& s) {
  uint32_t h = 2166136261u;
  for (unsigned char c : s) h = (h ^ c) * 16777619u;
  return h;
}

}  // namespace

Context::Context(const Options& opt, const std::string& pair, const char* phase)
    : opt_(opt), pair_(pair), phase_(phase) {}

void Context::begin_case(const std::string& name) {
  case_ = name;
  std::seed_seq seq{opt_.seed, fnv1a(pair_), fnv1a(phase_), static_cast<uint32_t>(cases_)};
  rng.seed(seq);
  ++cases_;
  if (opt_.verbose) std::printf("    %s %s: case %d \"%s\"\n", pair_.c_str(), phase_, cases_, name.c_str());
}

void Context::report(const std::string& what, const std::string& detail) {
  failed_ = true;
  std::printf("MISMATCH %s (%s) case %d \"%s\": %s: %s; seed %u (rerun: gpuec-bitexact --seed %u --filter %s)\n",
              pair_.c_str(), phase_, cases_, case_.c_str(), what.c_str(), detail.c_str(), opt_.seed, opt_.seed,
              pair_.c_str());
  std::fflush(stdout);
}

bool Context::same_bits(const char* what, const void* expected, const void* actual, uint64_t bits) {
  if (failed_) return false;
  std::vector<uint8_t> planted;
  if (opt_.self_test == SelfTest::kBit && !planted_ && bits > 0) {
    // The planted bug: the twin's output with one bit flipped.
    planted.assign(static_cast<const uint8_t*>(actual), static_cast<const uint8_t*>(actual) + (bits + 7) / 8);
    const uint64_t b = rng() % bits;
    planted[b >> 3] ^= static_cast<uint8_t>(0x80u >> (b & 7));
    actual = planted.data();
    planted_ = true;
  }
  const gpuec_test::BitDiff d = gpuec_test::first_differing_bit_of(expected, actual, bits);
  if (!d.differ) return true;
  report(what, "first differing " + d.str() + " of " + std::to_string(bits) + " bits");
  return false;
}

bool Context::same_bytes(const char* what, const void* expected, const void* actual, size_t bytes) {
  return same_bits(what, expected, actual, uint64_t{bytes} * 8);
}

bool Context::same_value(const char* what, uint64_t expected, uint64_t actual) {
  if (failed_) return false;
  if (expected == actual) return true;
  report(what, "expected " + std::to_string(expected) + ", actual " + std::to_string(actual));
  return false;
}

bool Context::canary_intact(const char* what, const void* buf, size_t from, size_t to) {
  if (failed_) return false;
  size_t at = gpuec_test::canary_broken_at(buf, from, to);
  uint8_t value = at < to ? static_cast<const uint8_t*>(buf)[at] : 0;
  if (opt_.self_test == SelfTest::kCanary && !planted_ && to > from) {
    // The planted bug: the twin wrote one byte past what it may write.
    at = std::min(at, from);
    value = static_cast<uint8_t>(~gpuec_test::kCanary);
    planted_ = true;
  }
  if (at == to) return true;
  char s[200];
  std::snprintf(s, sizeof s, "canary overwritten at byte %zu (0x%02x, canary 0x%02x): bytes [%zu, %zu) must not be written",
                at, value, gpuec_test::kCanary, from, to);
  report(what, s);
  return false;
}

bool Context::fail(const std::string& message) {
  if (failed_) return false;
  report("failure", message);
  return false;
}

double median_us(const Options& opt, const std::function<void()>& fn) {
  for (int i = 0; i < opt.warmup; ++i) fn();
  std::vector<double> t;
  for (int i = 0; i < std::max(1, opt.repeats); ++i) {
    const auto a = std::chrono::steady_clock::now();
    fn();
    const auto b = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double, std::micro>(b - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

std::vector<uint64_t> tile_sizes(uint64_t tile, uint64_t many, bool with_zero) {
  std::vector<uint64_t> v;
  if (with_zero) v.push_back(0);
  for (uint64_t n : {uint64_t{1}, tile - 1, tile, tile + 1, many * tile + 1})
    if (n > 0 && std::find(v.begin(), v.end(), n) == v.end()) v.push_back(n);
  return v;
}

}  // namespace bitexact
