// The CUDA build probe: the kernel against its CPU twin, canary-filled output, edge sizes.
#include <gtest/gtest.h>

#include "gpu_test.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include <chrono>
#include <cstdlib>
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

// The check made in a process of its own answers as the check made here: the same verdict and reason, on a
// host without a GPU (no driver or no CUDA build) and with one, for a device that exists and one that does
// not; the answer is kept.
TEST(GpuDeviceCheck, AnswersAsTheCheckInThisProcess) {
  for (int device : {0, 1000}) {
    gpu::DeviceCheck check(device);
    std::string why_here, why_there;
    const bool here = gpu::device_usable(device, &why_here);
    EXPECT_EQ(check.usable(&why_there), here) << "device " << device;
    EXPECT_EQ(why_there, here ? std::string() : why_here) << "device " << device;
    std::string again;
    EXPECT_EQ(check.usable(&again), here);
    EXPECT_EQ(again, why_there);
  }
  std::string why;
  gpu::DeviceCheck out_of_range(1000);
  EXPECT_FALSE(out_of_range.usable(&why));
  EXPECT_FALSE(why.empty());
}

// The checking process keeps none of this process's files: a pipe whose write end this process closes
// reads end-of-file at once while the check is held for a second (GPUEC_DEVICE_CHECK_HOLD_MS); the answer
// comes after the hold.
TEST(GpuDeviceCheck, KeepsNoFileOfTheProgram) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  setenv("GPUEC_DEVICE_CHECK_HOLD_MS", "1000", 1);
  const auto t0 = std::chrono::steady_clock::now();
  gpu::DeviceCheck check(0);
  unsetenv("GPUEC_DEVICE_CHECK_HOLD_MS");
  close(fds[1]);
  char c;
  EXPECT_EQ(read(fds[0], &c, 1), 0);
  const double eof_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(eof_s, 0.5) << "the checking process held the pipe";
  close(fds[0]);
  std::string why;
  check.usable(&why);
  const double answer_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(answer_s, 0.9) << "the answer came before the check";
}

// The checking process is this process's child, and it is reaped: at once when it has ended, else by a
// thread once it ends (here it is still held when the check goes). No child is left a second later.
TEST(GpuDeviceCheck, ReapsItsProcess) {
  setenv("GPUEC_DEVICE_CHECK_HOLD_MS", "300", 1);
  { gpu::DeviceCheck check(0); }
  unsetenv("GPUEC_DEVICE_CHECK_HOLD_MS");
  {
    gpu::DeviceCheck check(0);
    std::string why;
    check.usable(&why);
    usleep(300 * 1000);
  }
  usleep(1000 * 1000);
  errno = 0;
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1) << "a child of this process was not reaped";
  EXPECT_EQ(errno, ECHILD);
}
