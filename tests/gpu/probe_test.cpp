// The CUDA build probe: the kernel against its CPU twin, canary-filled output, edge sizes.
#include <gtest/gtest.h>

#include "gpu_test.h"

#include <string>
#include <vector>

#include "gpu/device.h"

namespace {


TEST(GpuProbe, ReportsDevice) {
  REQUIRE_GPU();
  const std::string d = gpu::device_description();
  EXPECT_FALSE(d.empty());
  std::printf("device: %s\n", d.c_str());
}

TEST(GpuProbe, KernelMatchesCpuTwinAtTileEdges) {
  REQUIRE_GPU();
  const uint32_t seed = 0x9e3779b9u;
  for (int n : {1, 255, 256, 257, 4096, 1000003}) {
    std::vector<uint32_t> ref(n), got(n, 0xDEADBEEFu);  // canary
    gpu::probe_ref(ref.data(), n, seed);
    const gpu::CudaError err = gpu::probe_cuda(got.data(), n, seed);
    ASSERT_FALSE(err) << err.str();
    for (int i = 0; i < n; ++i) ASSERT_EQ(got[i], ref[i]) << "n " << n << " first difference at " << i;
  }
}

TEST(GpuProbe, CpuOnlyBuildSaysWhy) {
  if (gpu::built_with_cuda()) GTEST_SKIP() << "skipped: this build has CUDA";
  std::string why;
  EXPECT_EQ(gpu::device_count(&why), 0);
  EXPECT_NE(why.find("no CUDA"), std::string::npos) << why;
  uint32_t out = 0;
  EXPECT_TRUE(gpu::probe_cuda(&out, 1, 0));
}

}  // namespace
