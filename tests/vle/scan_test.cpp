// The scan primitive (bench_kernels/scan.h). Built twice: as vle_scan_test (unit: known answers for the CPU
// twin) and, with GPUEC_SCAN_TEST_GPU, as vle_scan_cuda_test (gpu, bitexact: both CUDA methods
// against the CPU twin at tile edges, canary after the outputs). Seed: printed; --seed=N or
// GPUEC_SEED=N.
#include <gtest/gtest.h>

#include "canary.h"
#include "test_seed.h"

#ifdef GPUEC_SCAN_TEST_GPU
#include "gpu_test.h"
#endif

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "bench_kernels/scan.h"

#if defined(GPUEC_SCAN_TEST_GPU)
#include <cuda_runtime_api.h>

#include "gpu/device.h"
#endif

namespace {

uint32_t test_seed() { return gpuec_test::test_seed("scan test"); }

#if !defined(GPUEC_SCAN_TEST_GPU)

TEST(ScanRef, KnownAnswers) {
  const uint32_t len[] = {3, 0, 5, 0xFFFFFFFFu, 1, 16};
  uint64_t off[6];
  EXPECT_EQ(gpuec_bench::exclusive_scan_ref(len, 6, off), 3ull + 5 + 0xFFFFFFFFull + 1 + 16);
  const uint64_t expect[] = {0, 3, 3, 8, 8 + 0xFFFFFFFFull, 9 + 0xFFFFFFFFull};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(off[i], expect[i]) << i;
}

TEST(ScanRef, EmptyAndTotalOnly) {
  uint64_t off = 77;
  EXPECT_EQ(gpuec_bench::exclusive_scan_ref(nullptr, 0, &off), 0u);
  EXPECT_EQ(off, 77u) << "n == 0 wrote an offset";
  const uint32_t len[] = {1, 2, 3};
  EXPECT_EQ(gpuec_bench::exclusive_scan_ref(len, 3, nullptr), 6u);
}

TEST(ScanRef, SumsPast32Bits) {
  std::vector<uint32_t> len(1000, 0xFFFFFFFFu);
  std::vector<uint64_t> off(len.size());
  EXPECT_EQ(gpuec_bench::exclusive_scan_ref(len.data(), len.size(), off.data()), 1000ull * 0xFFFFFFFFull);
  EXPECT_EQ(off[999], 999ull * 0xFFFFFFFFull);
}

TEST(ScanRef, MethodNames) {
  EXPECT_STREQ(gpuec_bench::scan_method_name(gpuec_bench::ScanMethod::kSegmentedAtomic), "segmented-atomic");
  EXPECT_STREQ(gpuec_bench::scan_method_name(gpuec_bench::ScanMethod::kCub), "cub");
  EXPECT_NE(gpuec_bench::scan_default_method(), gpuec_bench::ScanMethod::kDefault);
  EXPECT_STREQ(gpuec_bench::scan_method_name(gpuec_bench::ScanMethod::kDefault), gpuec_bench::scan_method_name(gpuec_bench::scan_default_method()));
  (void)test_seed;
}

#else  // GPUEC_SCAN_TEST_GPU

using gpuec_test::under_sanitizer;

using gpuec_test::kCanary;

struct DeviceBuffers {
  void* p[4] = {};
  ~DeviceBuffers() {
    for (void* q : p)
      if (q) cudaFree(q);
  }
};

// One comparison; `misalign` shifts the lengths by that many uint32 from a 256-byte boundary.
void check_scan(const std::vector<uint32_t>& len, uint64_t n, gpuec_bench::ScanMethod m, uint64_t misalign, bool offsets,
                const std::string& what) {
  SCOPED_TRACE(what + ", n " + std::to_string(n) + ", method " + gpuec_bench::scan_method_name(m) + ", misalign " +
               std::to_string(misalign) + (offsets ? "" : ", total only"));
  std::vector<uint64_t> ref(n);
  const uint64_t ref_total = gpuec_bench::exclusive_scan_ref(len.data(), n, ref.data());

  constexpr uint64_t kGuard = 8;
  DeviceBuffers d;
  const size_t ws = gpuec_bench::scan_cuda_workspace_bytes(n, m);
  ASSERT_EQ(cudaMalloc(&d.p[0], (n + misalign + 4) * 4), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d.p[1], (n + kGuard) * 8), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d.p[2], 8), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d.p[3], ws + 256), cudaSuccess);
  uint32_t* const d_len = static_cast<uint32_t*>(d.p[0]) + misalign;
  if (n) {
    ASSERT_EQ(cudaMemcpy(d_len, len.data(), n * 4, cudaMemcpyHostToDevice), cudaSuccess);
  }
  ASSERT_EQ(cudaMemset(d.p[1], kCanary, (n + kGuard) * 8), cudaSuccess);
  ASSERT_EQ(cudaMemset(d.p[2], kCanary, 8), cudaSuccess);
  ASSERT_EQ(cudaMemset(d.p[3], kCanary, ws + 256), cudaSuccess);
  const gpu::CudaError e =
      gpuec_bench::exclusive_scan_cuda(d_len, n, offsets ? static_cast<uint64_t*>(d.p[1]) : nullptr,
                               static_cast<uint64_t*>(d.p[2]), d.p[3], ws, m, nullptr);
  ASSERT_FALSE(e) << e.str();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<uint64_t> got(n + kGuard);
  uint64_t total = 0;
  ASSERT_EQ(cudaMemcpy(got.data(), d.p[1], got.size() * 8, cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(&total, d.p[2], 8, cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(total, ref_total) << "total";
  uint64_t canary;
  std::memset(&canary, kCanary, 8);
  const uint64_t written = offsets ? n : 0;
  for (uint64_t i = 0; i < written; ++i)
    ASSERT_EQ(got[i], ref[i]) << "first differing offset at item " << i << " (tile " << i / 4096 << ", item "
                              << i % 4096 << " of it); seed " << test_seed();
  for (uint64_t i = written; i < n + kGuard; ++i) ASSERT_EQ(got[i], canary) << "canary overwritten at " << i;
}

const gpuec_bench::ScanMethod kMethods[] = {gpuec_bench::ScanMethod::kSegmentedAtomic, gpuec_bench::ScanMethod::kCub, gpuec_bench::ScanMethod::kDefault};

TEST(ScanCuda, ReportsSetup) {
  REQUIRE_GPU();
  std::printf("device: %s; seed %u; default method %s; under compute-sanitizer: %s\n",
              gpu::device_description().c_str(), test_seed(), gpuec_bench::scan_method_name(gpuec_bench::ScanMethod::kDefault),
              under_sanitizer() ? "yes (large inputs cut)" : "no");
}

TEST(ScanCuda, TileEdgesBothMethods) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed());
  const uint64_t tile = 4096;
  std::vector<uint64_t> sizes = {0, 1, 2, 3, 15, 16, 17, 31, 32, 33, 511, 512, 513, tile - 1, tile, tile + 1,
                                 2 * tile + 3, 32 * tile - 1, 32 * tile, 32 * tile + 1, 64 * tile + 5};
  if (!under_sanitizer()) {
    sizes.push_back(33 * 32 * tile + 77);  // a look-back over more than one window of 32 segments
    sizes.push_back(5000000);
  }
  std::vector<uint32_t> len(sizes.back() + 8);
  for (auto& x : len) x = rng() % 65;
  for (uint64_t n : sizes)
    for (gpuec_bench::ScanMethod m : kMethods) {
      check_scan(len, n, m, 0, true, "lengths 0..64");
      if (HasFailure()) return;
    }
}

TEST(ScanCuda, FullRangeLengthsUnalignedAndTotalOnly) {
  REQUIRE_GPU();
  std::mt19937 rng(test_seed() + 1);
  const uint64_t n = under_sanitizer() ? 70001 : 1000003;
  std::vector<uint32_t> len(n);
  for (auto& x : len) x = static_cast<uint32_t>(rng());  // total < 2^52: within the paper's 2^57
  for (gpuec_bench::ScanMethod m : kMethods) {
    check_scan(len, n, m, 0, true, "full-range lengths");
    check_scan(len, n, m, 1, true, "full-range lengths");
    check_scan(len, n, m, 3, true, "full-range lengths");
    check_scan(len, n, m, 0, false, "full-range lengths");
    if (HasFailure()) return;
  }
}

TEST(ScanCuda, ArgumentErrorsAreValues) {
  REQUIRE_GPU();
  DeviceBuffers d;
  const uint64_t n = 1000;
  const size_t ws = gpuec_bench::scan_cuda_workspace_bytes(n, gpuec_bench::ScanMethod::kSegmentedAtomic);
  ASSERT_EQ(cudaMalloc(&d.p[0], n * 4 + 16), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d.p[1], n * 8 + 16), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d.p[2], 8), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d.p[3], ws), cudaSuccess);
  const uint32_t* len = static_cast<uint32_t*>(d.p[0]);
  uint64_t* off = static_cast<uint64_t*>(d.p[1]);
  uint64_t* total = static_cast<uint64_t*>(d.p[2]);
  const auto m = gpuec_bench::ScanMethod::kSegmentedAtomic;
  EXPECT_EQ(gpuec_bench::exclusive_scan_cuda(len, n, off, nullptr, d.p[3], ws, m, nullptr).code, int(cudaErrorInvalidValue));
  EXPECT_EQ(gpuec_bench::exclusive_scan_cuda(len, n, off, total, d.p[3], ws - 1, m, nullptr).code, int(cudaErrorInvalidValue));
  EXPECT_EQ(gpuec_bench::exclusive_scan_cuda(len, n, reinterpret_cast<uint64_t*>(reinterpret_cast<char*>(off) + 4), total,
                                     d.p[3], ws, m, nullptr)
                .code,
            int(cudaErrorInvalidValue));
  const gpu::CudaError e = gpuec_bench::exclusive_scan_cuda(len, n, off, total, d.p[3], ws, m, nullptr);
  EXPECT_FALSE(e) << e.str();
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

#endif  // GPUEC_SCAN_TEST_GPU

}  // namespace
