// tests/bitexact/harness.h: the harness of gpuec-bitexact, the one bit-exactness program of the project (in the
// spirit of dav1d's checkasm). Every CPU/GPU twin pair registers here with up to three functions:
//
//   oracle  the CPU twin against an independent oracle (a plain bit-by-bit definition, a decoder round trip,
//           the slice coder...): runs everywhere, also without a GPU.
//   gpu     the GPU twin against the CPU twin: runs when the build has CUDA and a device is usable; otherwise
//           the program says once that the GPU twins are skipped.
//   bench   (--bench) times both twins on one representative input.
//
// A check runs cases: ctx.begin_case("name") gives the case its own random generator (ctx.rng), derived from
// the program's seed, the pair's name and the case's number, so `--seed N --filter PAIR` replays a case
// exactly. Outputs are canary-filled (tests/common/canary.h) before each twin runs; ctx.same_bytes compares
// outputs and reports the first differing bit (tests/common/bit_diff.h); ctx.canary_intact checks the bytes a
// twin must not write. The first mismatch ends the check (the other pairs still run) and the program exits 1.
//
// --self-test bit|canary plants a bug in every check: the first compared output with at least one byte gets one
// bit flipped (bit), or the first canary region checked gets one byte overwritten (canary), as a twin with that
// bug would leave them. Every check must then report a mismatch: tests/bitexact/self_test.cmake checks that.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "canary.h"

namespace bitexact {

// What every pair file uses: byte outputs, and the canary byte they are filled with (tests/common/canary.h).
using Bytes = std::vector<uint8_t>;
using gpuec_test::kCanary;

enum class SelfTest { kNone, kBit, kCanary };

struct Options {
  uint32_t seed = 0;
  bool bench = false;
  int warmup = 3;
  int repeats = 15;
  SelfTest self_test = SelfTest::kNone;
  bool gpu = false;     // a usable device (and a build with CUDA)
  bool verbose = false;  // one line per case
};

class Context {
 public:
  Context(const Options& opt, const std::string& pair, const char* phase);

  const Options& options() const { return opt_; }
  bool gpu() const { return opt_.gpu; }

  // Starts a case: names it and reseeds rng (seed, pair, case number).
  void begin_case(const std::string& name);
  std::mt19937 rng;

  // Compares `bytes` bytes of the reference output (`expected`: the CPU twin, or the oracle's answer for the
  // CPU twin) with the other twin's (`actual`). False, after the report, when they differ.
  bool same_bytes(const char* what, const void* expected, const void* actual, size_t bytes);
  // The same over the first `bits` stream bits (MSB first) only.
  bool same_bits(const char* what, const void* expected, const void* actual, uint64_t bits);
  // Compares two numbers (sizes, totals, return values): a mismatch names both.
  bool same_value(const char* what, uint64_t expected, uint64_t actual);
  // Checks that buf[from, to) still holds the canary: a twin wrote where it must not.
  bool canary_intact(const char* what, const void* buf, size_t from, size_t to);
  // Any other failure (a twin returned an error, a CUDA call failed): reported as a mismatch.
  bool fail(const std::string& message);

  bool failed() const { return failed_; }
  int cases() const { return cases_; }
  // False once the check should stop (after a failure).
  bool ok() const { return !failed_; }

 private:
  void report(const std::string& what, const std::string& detail);
  const Options& opt_;
  std::string pair_;
  const char* phase_;
  std::string case_;
  int cases_ = 0;
  bool failed_ = false;
  bool planted_ = false;
};

// An input kind of a check and the words its cases are named with. Each enum of kinds has one table, in
// enum order, that the checks iterate over and take the names from, so the two cannot disagree.
template <class E>
struct Kind {
  E value;
  const char* name;
};
template <class E, size_t N>
const char* kind_name(const Kind<E> (&kinds)[N], E e) {
  for (const Kind<E>& k : kinds)
    if (k.value == e) return k.name;
  return "?";
}

// Timing for --bench: median of opt.repeats runs after opt.warmup untimed ones, in microseconds. fn must
// finish its work before it returns (a GPU twin synchronizes).
double median_us(const Options& opt, const std::function<void()>& fn);

using CheckFn = void (*)(Context&);
struct BenchResult {
  std::string input;        // what was timed, e.g. "16 MiB of skewed bytes"
  double cpu_us = -1, gpu_us = -1;  // < 0: not timed
};
using BenchFn = BenchResult (*)(const Options&);

struct Pair {
  const char* name;     // "component.what", e.g. "vle.encode"
  const char* twins;    // "encode_ref / encode_cuda"
  const char* oracle_description;  // what the CPU twin is checked against
  CheckFn oracle;       // may be null
  CheckFn gpu;          // null in builds without CUDA
  BenchFn bench;        // may be null
};

// Registration, called from main (explicit, so the order of --list is fixed).
void register_vle_pairs(std::vector<Pair>& pairs);
void register_cavlc_pairs(std::vector<Pair>& pairs);
void register_canny_pairs(std::vector<Pair>& pairs);
void register_gpu_pairs(std::vector<Pair>& pairs);

// CUB-style sizes around a tile of `tile` items: 1, tile - 1, tile, tile + 1, and `many` tiles plus one item
// (0 when with_zero).
std::vector<uint64_t> tile_sizes(uint64_t tile, uint64_t many, bool with_zero);

}  // namespace bitexact
