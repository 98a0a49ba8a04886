// The CUDA byte histogram (bench_kernels/histogram_cuda.h) against a plain CPU count: sizes around the vector
// and block boundaries, every misalignment, skewed and random data, a garbage-filled counts buffer
// with a canary after it. The seed is printed; GPUEC_SEED overrides it.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "canary.h"
#include "gpu_test.h"
#include "test_seed.h"

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "bench_kernels/histogram_cuda.h"
#include "gpu/device.h"

namespace {


#define ASSERT_CUDA(call) ASSERT_EQ((call), cudaSuccess) << #call

constexpr uint64_t kCanary64 = gpuec_test::canary<uint64_t>();
constexpr size_t kBlockBytes = 256 * 16 * 4;  // one block's bytes per loop iteration

uint32_t base_seed() {
  static const uint32_t seed = gpuec_test::fixed_seed("histogram_cuda_test", 0x415706u);
  return seed;
}

// Histograms data[misalign, misalign + n) of `host` on the GPU and compares with a plain count.
void check(const std::vector<uint8_t>& host, size_t misalign, size_t n, const std::string& what) {
  uint64_t want[256] = {};
  for (size_t i = 0; i < n; ++i) ++want[host[misalign + i]];
  uint8_t* data = nullptr;
  uint64_t* counts = nullptr;
  ASSERT_CUDA(cudaMalloc(reinterpret_cast<void**>(&data), host.size() + 1));
  ASSERT_CUDA(cudaMalloc(reinterpret_cast<void**>(&counts), 257 * sizeof(uint64_t)));
  ASSERT_CUDA(cudaMemcpy(data, host.data(), host.size(), cudaMemcpyHostToDevice));
  std::vector<uint64_t> got(257, kCanary64);
  ASSERT_CUDA(cudaMemcpy(counts, got.data(), 257 * sizeof(uint64_t), cudaMemcpyHostToDevice));
  cudaStream_t stream;
  ASSERT_CUDA(cudaStreamCreate(&stream));
  const gpu::CudaError err = gpuec_bench::histogram_cuda(data + misalign, n, counts, stream);
  ASSERT_FALSE(err) << what << ": " << err.str();
  ASSERT_CUDA(cudaStreamSynchronize(stream));
  ASSERT_CUDA(cudaMemcpy(got.data(), counts, 257 * sizeof(uint64_t), cudaMemcpyDeviceToHost));
  cudaStreamDestroy(stream);
  cudaFree(data);
  cudaFree(counts);
  for (int s = 0; s < 256; ++s)
    ASSERT_EQ(got[s], want[s]) << what << ": n " << n << " misalign " << misalign << ", first wrong bin " << s;
  ASSERT_EQ(got[256], kCanary64) << what << ": wrote past counts[255]";
}

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

TEST(HistogramCuda, SizesAroundVectorAndBlockBoundaries) {
  REQUIRE_GPU();
  const std::vector<uint8_t> data = random_bytes(3 * kBlockBytes + 64, base_seed());
  for (size_t n : {size_t{0}, size_t{1}, size_t{15}, size_t{16}, size_t{17}, size_t{4095}, size_t{4096},
                   size_t{4097}, kBlockBytes - 1, kBlockBytes, kBlockBytes + 1, 3 * kBlockBytes + 17})
    check(data, 0, n, "aligned");
}

TEST(HistogramCuda, EveryMisalignment) {
  REQUIRE_GPU();
  const std::vector<uint8_t> data = random_bytes(kBlockBytes + 64, base_seed() + 1);
  for (size_t m = 0; m < 16; ++m)
    for (size_t n : {size_t{1}, size_t{14}, size_t{31}, size_t{33}, kBlockBytes + 3}) check(data, m, n, "misaligned");
}

TEST(HistogramCuda, SkewedData) {
  REQUIRE_GPU();
  const size_t n = 5 * 1000 * 1000 + 7;
  check(std::vector<uint8_t>(n, 0xFF), 0, n, "one value");
  std::vector<uint8_t> two(n);
  std::mt19937 rng(base_seed() + 2);
  for (auto& b : two) b = (rng() & 1) ? 0 : 0x80;
  check(two, 3, n - 3, "two values");
}

TEST(HistogramCuda, ManyBlocksRandom) {
  REQUIRE_GPU();
  const size_t n = 12 * 1000 * 1000 + 11;
  const std::vector<uint8_t> data = random_bytes(n + 16, base_seed() + 3);
  check(data, 5, n, "random");
}

TEST(HistogramCuda, NullCountsIsRefused) {
  REQUIRE_GPU();
  EXPECT_EQ(gpuec_bench::histogram_cuda(nullptr, 0, nullptr, nullptr).code, cudaErrorInvalidValue);
}

}  // namespace
