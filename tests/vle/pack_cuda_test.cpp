// The CUDA segment packer against its CPU twin (bench_kernels/pack_cuda.h, pack.h): canary-filled outputs,
// sizes at both tile sizes' boundaries, long segments, runs of empty segments, random tables.
// The seed is printed; GPUEC_SEED overrides it.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "canary.h"
#include "gpu_test.h"
#include "test_seed.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "bench_kernels/pack.h"
#include "bench_kernels/pack_cuda.h"
#include "gpu/device.h"

namespace {


#define ASSERT_CUDA(call) ASSERT_EQ((call), cudaSuccess) << #call

constexpr uint64_t kTileBits = gpuec_bench::kPackTileBytes * 8;
constexpr uint64_t kLargeTileBits = gpuec_bench::kPackLargeTileBytes * 8;
constexpr int64_t kLargeCap = static_cast<int64_t>(gpuec_bench::kPackLargeOutputBytes);  // selects the large tiles
using gpuec_test::kCanary;

uint32_t base_seed() {
  static const uint32_t seed = gpuec_test::fixed_seed("pack_cuda_test", 0x9ac4e11u);
  return seed;
}

template <class T>
struct DeviceArray {
  T* p = nullptr;
  size_t n = 0;
  explicit DeviceArray(size_t count) : n(count) {
    if (cudaMalloc(reinterpret_cast<void**>(&p), sizeof(T) * (count ? count : 1)) != cudaSuccess) p = nullptr;
  }
  DeviceArray(const std::vector<T>& v) : DeviceArray(v.size()) {
    if (p && !v.empty()) cudaMemcpy(p, v.data(), sizeof(T) * v.size(), cudaMemcpyHostToDevice);
  }
  ~DeviceArray() { cudaFree(p); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
};

// A segment table with both kinds of source: `words` for WordSegments (segment i at first_word[i])
// and `bytes` for ByteSegments (segment i at stream bit src_bit[i]).
struct Table {
  std::vector<uint32_t> len, first_word, words;
  std::vector<uint64_t> offset, src_bit;
  std::vector<uint8_t> bytes;
  uint64_t total = 0;
};

// Builds a table of exactly `total` bits; next_len(rng) draws the lengths (the last one is cut).
Table make_table(std::mt19937_64& rng, uint64_t total, const std::function<uint32_t(std::mt19937_64&)>& next_len) {
  Table t;
  uint64_t sum = 0;
  while (sum < total || t.len.empty()) {
    uint64_t l = next_len(rng);
    if (l > total - sum) l = total - sum;
    t.len.push_back(static_cast<uint32_t>(l));
    t.offset.push_back(sum);
    sum += l;
    if (sum == total && rng() % 2) break;  // sometimes end with empty segments
  }
  t.total = sum;
  // Word sources: segments in order with 0..2 junk words between them.
  uint64_t cursor = 0;
  for (uint32_t l : t.len) {
    cursor += rng() % 3;
    t.first_word.push_back(static_cast<uint32_t>(cursor));
    cursor += (uint64_t{l} + 31) / 32;
  }
  t.words.resize(cursor + 1);
  for (auto& w : t.words) w = static_cast<uint32_t>(rng());
  // Byte sources: any bit position in a random buffer of whole words.
  uint64_t longest = 0;
  for (uint32_t l : t.len) longest = l > longest ? l : longest;
  const uint64_t src_bits = longest + 4096;
  t.bytes.resize(vle::packed_bytes(src_bits));
  for (auto& b : t.bytes) b = static_cast<uint8_t>(rng());
  for (uint32_t l : t.len) t.src_bit.push_back(rng() % (src_bits - l + 1));
  return t;
}

std::string first_difference(const Table& t, const std::vector<uint8_t>& want, const std::vector<uint8_t>& got) {
  size_t byte = 0;
  while (byte < want.size() && want[byte] == got[byte]) ++byte;
  if (byte == want.size()) return "no difference";
  int bit = 0;
  while (((want[byte] ^ got[byte]) >> (7 - bit) & 1) == 0) ++bit;
  const uint64_t b = byte * 8 + bit;
  size_t lo = 0, hi = t.offset.size();  // last segment with offset <= b and len > 0 covering b
  while (hi - lo > 1) {
    const size_t mid = (lo + hi) / 2;
    if (t.offset[mid] <= b) lo = mid; else hi = mid;
  }
  while (lo > 0 && t.offset[lo] > b) --lo;
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "first differing stream bit %llu (byte %zu: want 0x%02x got 0x%02x); segment %zu: offset %llu len %u "
                "first_word %u src_bit %llu; total %llu bits, %zu segments",
                (unsigned long long)b, byte, want[byte], got[byte], lo, (unsigned long long)t.offset[lo], t.len[lo],
                t.first_word[lo], (unsigned long long)t.src_bit[lo], (unsigned long long)t.total, t.len.size());
  return buf;
}

// Packs t on the GPU with both sources into a canary-filled buffer of cap + 64 bytes (cap defaults
// to the exact size) and compares with pack_ref.
void check(const Table& t, const std::string& what, int64_t cap_arg = -1) {
  const uint64_t need = vle::packed_bytes(t.total);
  const uint64_t cap = cap_arg < 0 ? need : static_cast<uint64_t>(cap_arg);
  const uint64_t written = cap < need ? cap : need;
  std::vector<uint8_t> full(need), want(cap + 64, kCanary);
  const gpuec_bench::WordSegments ws_host{t.words.data(), t.first_word.data(), t.len.data(), t.offset.data(), t.len.size()};
  ASSERT_EQ(gpuec_bench::pack_ref(ws_host, full.data(), need), t.total) << what;
  std::copy(full.begin(), full.begin() + written, want.begin());
  std::vector<uint8_t> full_bytes(need);
  const gpuec_bench::ByteSegments bs_host{t.bytes.data(), t.src_bit.data(), t.len.data(), t.offset.data(), t.len.size()};
  ASSERT_EQ(gpuec_bench::pack_ref(bs_host, full_bytes.data(), need), t.total) << what;
  std::vector<uint8_t> want_bytes(cap + 64, kCanary);
  std::copy(full_bytes.begin(), full_bytes.begin() + written, want_bytes.begin());

  DeviceArray<uint32_t> len(t.len), first_word(t.first_word), words(t.words);
  DeviceArray<uint64_t> offset(t.offset), src_bit(t.src_bit);
  DeviceArray<uint8_t> bytes(t.bytes), out(cap + 64);
  ASSERT_TRUE(len.p && first_word.p && words.p && offset.p && src_bit.p && bytes.p && out.p);
  cudaStream_t stream;
  ASSERT_CUDA(cudaStreamCreate(&stream));
  for (int source = 0; source < 2; ++source) {
    ASSERT_CUDA(cudaMemset(out.p, kCanary, cap + 64));
    gpu::CudaError err;
    if (source == 0)
      err = gpuec_bench::pack_cuda(gpuec_bench::WordSegments{words.p, first_word.p, len.p, offset.p, t.len.size()}, out.p, cap, stream);
    else
      err = gpuec_bench::pack_cuda(gpuec_bench::ByteSegments{bytes.p, src_bit.p, len.p, offset.p, t.len.size()}, out.p, cap, stream);
    ASSERT_FALSE(err) << what << ": " << err.str();
    ASSERT_CUDA(cudaStreamSynchronize(stream));
    std::vector<uint8_t> got(cap + 64);
    ASSERT_CUDA(cudaMemcpy(got.data(), out.p, got.size(), cudaMemcpyDeviceToHost));
    const std::vector<uint8_t>& w = source == 0 ? want : want_bytes;
    ASSERT_TRUE(got == w) << what << (source == 0 ? " (word sources)" : " (byte sources)") << ", cap " << cap << ": "
                          << first_difference(t, w, got);
  }
  cudaStreamDestroy(stream);
}

uint32_t uniform(std::mt19937_64& rng, uint32_t lo, uint32_t hi) {
  return lo + static_cast<uint32_t>(rng() % (uint64_t{hi} - lo + 1));
}

TEST(PackCuda, TileBoundarySizes) {
  REQUIRE_GPU();
  std::mt19937_64 rng(base_seed());
  auto cavlc = [](std::mt19937_64& r) { return r() % 4 == 0 ? 0u : uniform(r, 0, 200); };
  for (uint64_t total : {uint64_t{1}, uint64_t{31}, uint64_t{32}, uint64_t{33}, kTileBits - 32, kTileBits - 1,
                         kTileBits, kTileBits + 1, kTileBits + 32, 2 * kTileBits, 37 * kTileBits + 12345}) {
    check(make_table(rng, total, cavlc), "total " + std::to_string(total));
  }
  for (uint64_t total : {uint64_t{1}, kLargeTileBits - 1, kLargeTileBits, kLargeTileBits + 1, 5 * kLargeTileBits + 99})
    check(make_table(rng, total, cavlc), "large tiles, total " + std::to_string(total), kLargeCap);
}

TEST(PackCuda, LongSegments) {
  REQUIRE_GPU();
  std::mt19937_64 rng(base_seed() + 1);
  // Segments of up to 2^20 + 100 bits, each spanning up to 17 tiles, with short ones between.
  auto mixed = [](std::mt19937_64& r) { return r() % 2 ? uniform(r, 0, (1u << 20) + 100) : uniform(r, 0, 40); };
  check(make_table(rng, 40 * kTileBits + 777, mixed), "long and short");
  auto one = [](std::mt19937_64&) { return 3u << 20; };
  check(make_table(rng, 3u << 20, one), "one segment of 3 * 2^20 bits");
  auto tile_sized = [](std::mt19937_64& r) { return static_cast<uint32_t>(kTileBits) + uniform(r, 0, 2) - 1; };
  check(make_table(rng, 9 * kTileBits, tile_sized), "tile-sized segments");
  check(make_table(rng, 30 * kLargeTileBits + 5, mixed), "long and short, large tiles", kLargeCap);
  auto one200 = [](std::mt19937_64&) { return 200u; };
  Table single = make_table(rng, 200, one200);  // n == 1: the kernel's search does no round
  for (auto* v : {&single.len, &single.first_word}) v->resize(1);
  for (auto* v : {&single.offset, &single.src_bit}) v->resize(1);
  check(single, "one segment of 200 bits");
}

TEST(PackCuda, ManyTinyAndEmptySegments) {
  REQUIRE_GPU();
  std::mt19937_64 rng(base_seed() + 2);
  auto ones = [](std::mt19937_64&) { return 1u; };
  check(make_table(rng, 3 * kTileBits + 5, ones), "1-bit segments (65536 per tile)");
  // Runs of up to 1000 empty segments (several 256-segment chunks with nothing in them).
  int zeros = 0;
  auto runs = [&zeros](std::mt19937_64& r) {
    if (zeros > 0) return --zeros, 0u;
    if (r() % 20 == 0) zeros = static_cast<int>(uniform(r, 256, 1000));
    return r() % 100 == 0 ? uniform(r, 1, 5000) : uniform(r, 0, 3);
  };
  check(make_table(rng, 5 * kTileBits + 3, runs), "runs of empty segments");
  Table empty;  // only empty segments: total 0, nothing written
  empty.len.assign(1000, 0);
  empty.offset.assign(1000, 0);
  empty.first_word.assign(1000, 0);
  empty.src_bit.assign(1000, 0);
  empty.words.assign(1, 0);
  empty.bytes.assign(4, 0);
  check(empty, "empty segments only", 64);
}

TEST(PackCuda, CavlcFrame) {
  REQUIRE_GPU();
  // A 1080p frame: 8160 macroblocks x 27 blocks of 0..200 bits, a third of them empty.
  std::mt19937_64 rng(base_seed() + 3);
  Table t;
  {
    auto cavlc = [](std::mt19937_64& r) { return r() % 3 == 0 ? 0u : uniform(r, 1, 200); };
    uint64_t total = 0;
    std::vector<uint32_t> lens(8160 * 27);
    for (auto& l : lens) total += (l = cavlc(rng));
    size_t k = 0;
    t = make_table(rng, total, [&](std::mt19937_64&) { return lens[k++]; });
  }
  check(t, "1080p CAVLC-like frame");
}

TEST(PackCuda, RandomTables) {
  REQUIRE_GPU();
  const uint32_t seed = base_seed() + 4;
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 12; ++round) {
    const uint32_t max_len = round % 3 == 0 ? 32 : round % 3 == 1 ? 300 : 70000;
    auto dist = [max_len](std::mt19937_64& r) { return r() % 5 == 0 ? 0u : uniform(r, 0, max_len); };
    const uint64_t total = rng() % (6 * kTileBits) + 1;
    check(make_table(rng, total, dist), "seed " + std::to_string(seed) + " round " + std::to_string(round),
          round % 4 == 3 ? kLargeCap : -1);
  }
}

TEST(PackCuda, SmallOrLargeOutputBuffer) {
  REQUIRE_GPU();
  std::mt19937_64 rng(base_seed() + 5);
  auto dist = [](std::mt19937_64& r) { return uniform(r, 0, 500); };
  const Table t = make_table(rng, 4 * kTileBits + 100, dist);
  for (int64_t cap : {int64_t{4}, int64_t{gpuec_bench::kPackTileBytes} - 4, int64_t{gpuec_bench::kPackTileBytes},
                      int64_t{3 * gpuec_bench::kPackTileBytes} + 8, int64_t{9 * gpuec_bench::kPackTileBytes}, kLargeCap})
    check(t, "cap " + std::to_string(cap), cap);
}

TEST(PackCuda, ArgumentsOutOfContractAreRefused) {
  REQUIRE_GPU();
  DeviceArray<uint8_t> out(64);
  DeviceArray<uint32_t> len(std::vector<uint32_t>{8}), fw(std::vector<uint32_t>{0}), words(std::vector<uint32_t>{1});
  DeviceArray<uint64_t> off(std::vector<uint64_t>{0});
  const gpuec_bench::WordSegments seg{words.p, fw.p, len.p, off.p, 1};
  EXPECT_FALSE(gpuec_bench::pack_cuda(seg, out.p, 16, nullptr));
  EXPECT_EQ(gpuec_bench::pack_cuda(seg, out.p + 1, 16, nullptr).code, cudaErrorInvalidValue);
  EXPECT_EQ(gpuec_bench::pack_cuda(seg, out.p, 15, nullptr).code, cudaErrorInvalidValue);
  const gpuec_bench::ByteSegments bseg{out.p + 2, off.p, len.p, off.p, 1};
  EXPECT_EQ(gpuec_bench::pack_cuda(bseg, out.p, 16, nullptr).code, cudaErrorInvalidValue);
  EXPECT_FALSE(gpuec_bench::pack_cuda(gpuec_bench::WordSegments{nullptr, nullptr, nullptr, nullptr, 0}, out.p, 16, nullptr))
      << "n == 0 is a no-op";
  EXPECT_FALSE(gpuec_bench::pack_cuda(seg, out.p, 0, nullptr)) << "out_bytes == 0 is a no-op";
  ASSERT_CUDA(cudaDeviceSynchronize());
}

}  // namespace
