// Frames in device memory through the C interface (canny/gudcanny.h: gudcanny_submit_cuda, the caller's
// CUDA context and stream in gudcanny_config), as the FFmpeg filter runs CUDA frames: every output against
// gudcanny_detect on the cpu backend, byte for byte, with canaries past the width of every device plane.
// Built twice: gudcanny_device_cuda_test (gpu;bitexact: a context made with cuCtxCreate as FFmpeg's CUDA
// device makes one, its default stream and a stream of its own) and, with GUDCANNY_FAKE_CUDA,
// gudcanny_device_fake_test (unit: gpuec_gudcanny_fake, whose "device" planes are host memory, read and
// written when a frame is waited for, so that a caller reading too early sees it).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "canny/gudcanny.h"
#include "frames.h"

#define GUDCANNY_SUITE GudCannyDevice
#include "cuda_suite.h"

#ifndef GUDCANNY_FAKE_CUDA
#include <cuda.h>
#include <cuda_runtime.h>

#include "gpu/context.h"

// The driver calls of the test, through the runtime (no link to libcuda: the test binary must start on
// machines without a driver, to say it skips).
template <typename F>
F driver_call(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  EXPECT_EQ(cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &found), cudaSuccess) << name;
  EXPECT_EQ(found, cudaDriverEntryPointSuccess) << name;
  return reinterpret_cast<F>(fn);
}
#endif

namespace {

using gudcanny_test::Result;

// The caller's CUDA context and stream (the fake: tokens the stand-in never reads).
struct Caller {
  void* context = nullptr;
  void* stream = nullptr;
#ifdef GUDCANNY_FAKE_CUDA
  int token = 0;
  explicit Caller(bool own_stream) : context(&token), stream(own_stream ? &token : nullptr) {}
#else
  explicit Caller(bool own_stream) {
    CUcontext c = nullptr;
    CUdevice dev = 0;
    EXPECT_EQ(driver_call<CUresult (*)(CUdevice*, int)>("cuDeviceGet")(&dev, 0), CUDA_SUCCESS);
    // Not the primary context, as FFmpeg's CUDA device makes it (the entry point of CUDA 12.0 is
    // cuCtxCreate_v3: no affinity parameters here).
    EXPECT_EQ(driver_call<CUresult (*)(CUcontext*, void*, int, unsigned, CUdevice)>("cuCtxCreate")(&c, nullptr, 0, 0, dev),
              CUDA_SUCCESS);
    if (own_stream) {
      CUstream s = nullptr;
      EXPECT_EQ(driver_call<CUresult (*)(CUstream*, unsigned)>("cuStreamCreate")(&s, CU_STREAM_NON_BLOCKING),
                CUDA_SUCCESS);
      stream = s;
    }
    CUcontext popped = nullptr;
    EXPECT_EQ(driver_call<CUresult (*)(CUcontext*)>("cuCtxPopCurrent")(&popped), CUDA_SUCCESS);  // none current
    context = c;
  }
  ~Caller() {
    if (stream) {
      const gpu::ContextScope scope(context);
      driver_call<CUresult (*)(CUstream)>("cuStreamDestroy")(static_cast<CUstream>(stream));
    }
    if (context) driver_call<CUresult (*)(CUcontext)>("cuCtxDestroy")(static_cast<CUcontext>(context));
  }
#endif
  Caller(const Caller&) = delete;
  Caller& operator=(const Caller&) = delete;
};

// A plane of the caller's context: pitch >= width, `canary` everywhere at first.
class DevicePlane {
 public:
  DevicePlane(const Caller& caller, int w, int h, int pitch, uint8_t canary)
      : caller_(caller), w_(w), h_(h), pitch_(pitch) {
#ifdef GUDCANNY_FAKE_CUDA
    mem_.assign(size_t(pitch) * h, canary);
    ptr_ = mem_.data();
#else
    const gpu::ContextScope scope(caller_.context);
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&ptr_), size_t(pitch) * h), cudaSuccess);
    EXPECT_EQ(cudaMemset(ptr_, canary, size_t(pitch) * h), cudaSuccess);
#endif
  }
  ~DevicePlane() {
#ifndef GUDCANNY_FAKE_CUDA
    const gpu::ContextScope scope(caller_.context);
    cudaFree(ptr_);
#endif
  }
  DevicePlane(const DevicePlane&) = delete;
  DevicePlane& operator=(const DevicePlane&) = delete;

  uint8_t* data() const { return ptr_; }
  int pitch() const { return pitch_; }
  // Rows of w bytes from px (pitch w) into the plane.
  void upload(const std::vector<uint8_t>& px) {
#ifdef GUDCANNY_FAKE_CUDA
    for (int y = 0; y < h_; ++y) std::memcpy(ptr_ + size_t(y) * pitch_, &px[size_t(y) * w_], size_t(w_));
#else
    const gpu::ContextScope scope(caller_.context);
    EXPECT_EQ(cudaMemcpy2D(ptr_, size_t(pitch_), px.data(), size_t(w_), size_t(w_), size_t(h_), cudaMemcpyHostToDevice),
              cudaSuccess);
#endif
  }
  // The whole plane, pitch included (synchronous: after every call on the caller's streams).
  std::vector<uint8_t> download() const {
    std::vector<uint8_t> out(size_t(pitch_) * h_);
#ifdef GUDCANNY_FAKE_CUDA
    out.assign(mem_.begin(), mem_.end());
#else
    const gpu::ContextScope scope(caller_.context);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(out.data(), ptr_, out.size(), cudaMemcpyDeviceToHost), cudaSuccess);
#endif
    return out;
  }

 private:
  const Caller& caller_;
  int w_, h_, pitch_;
  uint8_t* ptr_ = nullptr;
#ifdef GUDCANNY_FAKE_CUDA
  std::vector<uint8_t> mem_;
#endif
};

gudcanny_config caller_config(int w, int h, const Caller& caller, int depth, int thresholds = GUDCANNY_STRIP) {
  gudcanny_config cfg = gudcanny_test::config(w, h, GUDCANNY_BACKEND_AUTO, depth, 3, thresholds);
  cfg.cuda_context = caller.context;
  cfg.cuda_stream = caller.stream;
  return cfg;
}

// The cpu's answer for px with the options of cfg (gudcanny_detect on a context of the cpu backend).
Result cpu_detect(gudcanny_config cfg, const std::vector<uint8_t>& px) {
  cfg.cuda_context = cfg.cuda_stream = nullptr;
  return gudcanny_test::detect(cfg, GUDCANNY_BACKEND_CPU, px);
}

// Frames of one size through the three ways a device frame goes out (the map into a device plane, the
// edges drawn over a device plane, the map back to the host), two frames in flight: all equal the cpu's.
SUITE_TEST(DevicePlanesMatchCpu) {
  REQUIRE_CUDA();
  const uint32_t seed = gpuec_test::test_seed("gudcanny_device_test");
  struct Case {
    int w, h, thresholds;
  } cases[] = {{1, 1, GUDCANNY_STRIP}, {33, 40, GUDCANNY_FRAME}, {176, 144, GUDCANNY_STRIP},
               {1920, 1080, GUDCANNY_STRIP}, {1280, 720, GUDCANNY_FRAME}};
  for (bool own_stream : {false, true}) {
    Caller caller(own_stream);
    for (const Case& c : cases) {
      if (gudcanny_test::small_only() && c.w * c.h > 352 * 288) continue;
      SCOPED_TRACE(std::to_string(c.w) + "x" + std::to_string(c.h) + (own_stream ? ", own stream" : ", default stream"));
      const int frames = 6, pitch = (c.w + 63) / 64 * 64 + 64;
      const gudcanny_config cfg = caller_config(c.w, c.h, caller, 2, c.thresholds);
      char err[512] = "";
      gudcanny_ctx* ctx = nullptr;
      ASSERT_EQ(gudcanny_create(&cfg, &ctx, err, sizeof err), GUDCANNY_OK) << err;
      EXPECT_EQ(gudcanny_backend(ctx), GUDCANNY_BACKEND_CUDA);
      std::vector<std::vector<uint8_t>> px;
      std::vector<Result> want;
      std::vector<std::unique_ptr<DevicePlane>> src, out;
      for (int t = 0; t < frames; ++t) {
        px.push_back(gudcanny_test::scene(c.w, c.h, t, seed));
        want.push_back(cpu_detect(cfg, px.back()));
        src.emplace_back(new DevicePlane(caller, c.w, c.h, pitch, 0x33));
        src.back()->upload(px.back());
        out.emplace_back(new DevicePlane(caller, c.w, c.h, pitch + 32, 0x44));
        if (t % 3 == 1) out.back()->upload(px.back());  // overlay: the picture first, the edges drawn over it
      }
      const int how[3] = {GUDCANNY_OUT_MAP, GUDCANNY_OUT_MARK, -1};  // -1: the map back to the host
      auto receive = [&](int t) {
        SCOPED_TRACE("frame " + std::to_string(t));
        std::vector<gudcanny_pair> pairs(want[size_t(t)].pairs.size() + 1, gudcanny_pair{-7, -7, -7});
        if (how[t % 3] < 0) {  // the map, or the regions of interest from it (macroblock counts on cuda)
          std::string msg;
          const int rc = t % 2 ? gudcanny_test::receive_and_check(ctx, want[size_t(t)], c.w, c.h, "host map", &msg)
                               : gudcanny_test::receive_regions_and_check(ctx, want[size_t(t)], c.w, c.h,
                                                                          t == 2 ? 0.0 : 0.1, "regions", &msg);
          ASSERT_EQ(rc, GUDCANNY_OK) << msg;
          return;
        }
        ASSERT_EQ(gudcanny_receive(ctx, nullptr, 0, GUDCANNY_OUT_MAP, pairs.data(), err, sizeof err), GUDCANNY_OK)
            << err;
        const std::vector<uint8_t> got = out[size_t(t)]->download();
        gudcanny_test::expect_same(want[size_t(t)], got, c.w, c.h, out[size_t(t)]->pitch(), pairs,
                                   how[t % 3] ? "mark" : "map", 0x44, how[t % 3] ? &px[size_t(t)] : nullptr);
      };
      for (int t = 0; t < frames; ++t) {
        const bool to_host = how[t % 3] < 0;
        ASSERT_EQ(gudcanny_submit_cuda(ctx, src[size_t(t)]->data(), pitch, to_host ? nullptr : out[size_t(t)]->data(),
                                       to_host ? 0 : out[size_t(t)]->pitch(), to_host ? GUDCANNY_OUT_MAP : how[t % 3],
                                       err, sizeof err),
                  GUDCANNY_OK)
            << err;
        if (t > 0) receive(t - 1);
      }
      receive(frames - 1);
      EXPECT_EQ(gudcanny_pending(ctx), 0);
      for (int t = 0; t < 2; ++t)  // host frames on the same context: regions from the cuda counts too
        ASSERT_EQ(gudcanny_submit(ctx, px[size_t(t)].data(), c.w, err, sizeof err), GUDCANNY_OK) << err;
      for (int t = 0; t < 2; ++t)
        ASSERT_EQ(gudcanny_test::receive_regions_and_check(ctx, want[size_t(t)], c.w, c.h, 0.05 * t, "host frame"),
                  GUDCANNY_OK);
      int count = 0;
      gudcanny_rect r[1];
      ASSERT_EQ(gudcanny_submit_cuda(ctx, src[0]->data(), pitch, out[0]->data(), out[0]->pitch(), GUDCANNY_OUT_MAP,
                                     err, sizeof err), GUDCANNY_OK) << err;
      EXPECT_EQ(gudcanny_receive_regions(ctx, 0.1, r, 1, &count, nullptr, err, sizeof err), GUDCANNY_EINVAL)
          << "regions of a frame whose map went to a device plane";
      EXPECT_EQ(gudcanny_receive_regions(ctx, 1.5, r, 1, &count, nullptr, err, sizeof err), GUDCANNY_EINVAL);
      EXPECT_EQ(gudcanny_receive_regions(ctx, 0.1, nullptr, 1, &count, nullptr, err, sizeof err), GUDCANNY_EINVAL);
      EXPECT_EQ(gudcanny_receive(ctx, nullptr, 0, GUDCANNY_OUT_MAP, nullptr, err, sizeof err), GUDCANNY_OK) << err;
      // Regions only (GUDCANNY_OUT_REGIONS): the counts come to the host, the map does not.
      EXPECT_EQ(gudcanny_submit_cuda(ctx, src[1]->data(), pitch, out[1]->data(), out[1]->pitch(), GUDCANNY_OUT_REGIONS,
                                     err, sizeof err), GUDCANNY_EINVAL) << "GUDCANNY_OUT_REGIONS with a device plane";
      for (int t = 0; t < 2; ++t)
        ASSERT_EQ(gudcanny_submit_cuda(ctx, src[size_t(t)]->data(), pitch, nullptr, 0, GUDCANNY_OUT_REGIONS, err,
                                       sizeof err), GUDCANNY_OK) << err;
      ASSERT_EQ(gudcanny_test::receive_regions_and_check(ctx, want[0], c.w, c.h, 0.1, "regions only"), GUDCANNY_OK);
      std::vector<uint8_t> map(px[1].size());
      EXPECT_EQ(gudcanny_receive(ctx, map.data(), c.w, GUDCANNY_OUT_MAP, nullptr, err, sizeof err), GUDCANNY_EINVAL)
          << "the map of a regions-only frame";
      ASSERT_EQ(gudcanny_test::receive_regions_and_check(ctx, want[1], c.w, c.h, 0.0, "regions only"), GUDCANNY_OK);
      std::vector<uint8_t> check(px[0].size());  // host frames still work on the same context
      ASSERT_EQ(gudcanny_detect(ctx, px[0].data(), c.w, check.data(), c.w, nullptr, err, sizeof err), GUDCANNY_OK)
          << err;
      EXPECT_EQ(check, want[0].edges);
      gudcanny_destroy(ctx);
    }
  }
}

SUITE_TEST(DeviceArgumentErrors) {
  REQUIRE_CUDA();
  Caller caller(false);
  const int w = 40, h = 30;
  const gudcanny_config cfg = caller_config(w, h, caller, 1);
  char err[512] = "";
  gudcanny_ctx* ctx = nullptr;
  ASSERT_EQ(gudcanny_create(&cfg, &ctx, err, sizeof err), GUDCANNY_OK) << err;
  DevicePlane src(caller, w, h, 64, 0), out(caller, w, h, 64, 0);
  EXPECT_EQ(gudcanny_submit_cuda(ctx, nullptr, 64, nullptr, 0, GUDCANNY_OUT_MAP, err, sizeof err), GUDCANNY_EINVAL);
  EXPECT_EQ(gudcanny_submit_cuda(ctx, src.data(), w - 1, nullptr, 0, GUDCANNY_OUT_MAP, err, sizeof err), GUDCANNY_EINVAL);
  EXPECT_EQ(gudcanny_submit_cuda(ctx, src.data(), -64, nullptr, 0, GUDCANNY_OUT_MAP, err, sizeof err), GUDCANNY_EINVAL);
  EXPECT_EQ(gudcanny_submit_cuda(ctx, src.data(), 64, out.data(), w - 1, GUDCANNY_OUT_MAP, err, sizeof err),
            GUDCANNY_EINVAL);
  EXPECT_EQ(gudcanny_submit_cuda(ctx, src.data(), 64, out.data(), 64, 7, err, sizeof err), GUDCANNY_EINVAL);
  EXPECT_EQ(gudcanny_pending(ctx), 0);
  ASSERT_EQ(gudcanny_submit_cuda(ctx, src.data(), 64, out.data(), 64, GUDCANNY_OUT_MAP, err, sizeof err), GUDCANNY_OK)
      << err;
  EXPECT_EQ(gudcanny_submit_cuda(ctx, src.data(), 64, out.data(), 64, GUDCANNY_OUT_MAP, err, sizeof err),
            GUDCANNY_EAGAIN);
  std::vector<uint8_t> host(size_t(w) * h);
  EXPECT_EQ(gudcanny_receive(ctx, host.data(), w, GUDCANNY_OUT_MAP, nullptr, err, sizeof err), GUDCANNY_EINVAL);
  EXPECT_NE(std::string(err).find("device plane"), std::string::npos) << err;
  EXPECT_EQ(gudcanny_pending(ctx), 1);  // still in flight
  EXPECT_EQ(gudcanny_receive(ctx, nullptr, 0, GUDCANNY_OUT_MAP, nullptr, err, sizeof err), GUDCANNY_OK) << err;
  gudcanny_destroy(ctx);
}

// A CUDA failure with device frames in flight cannot fall back: they are dropped with GUDCANNY_EBACKEND,
// the context is on the cpu from then on (device planes refused, host planes fine).
void forced_device_failure(const char* var, bool in_receive) {
  Caller caller(false);
  const int w = 64, h = 48;
  const std::string name = std::string("GPUEC_GUDCANNY_") + var;
  ASSERT_EQ(setenv(name.c_str(), "1", 1), 0);
  const gudcanny_config cfg = caller_config(w, h, caller, 2);
  char err[512] = "";
  gudcanny_ctx* ctx = nullptr;
  const int created = gudcanny_create(&cfg, &ctx, err, sizeof err);
  unsetenv(name.c_str());
  ASSERT_EQ(created, GUDCANNY_OK) << err;
  const std::vector<uint8_t> px = gudcanny_test::scene(w, h, 0);
  DevicePlane src(caller, w, h, 64, 0), out(caller, w, h, 64, 0);
  src.upload(px);
  ASSERT_EQ(gudcanny_submit_cuda(ctx, src.data(), 64, out.data(), 64, GUDCANNY_OUT_MAP, err, sizeof err), GUDCANNY_OK);
  const int rc = gudcanny_submit_cuda(ctx, src.data(), 64, out.data(), 64, GUDCANNY_OUT_MAP, err, sizeof err);
  if (in_receive) {
    ASSERT_EQ(rc, GUDCANNY_OK) << err;
    EXPECT_EQ(gudcanny_receive(ctx, nullptr, 0, GUDCANNY_OUT_MAP, nullptr, err, sizeof err), GUDCANNY_OK) << err;
    EXPECT_EQ(gudcanny_receive(ctx, nullptr, 0, GUDCANNY_OUT_MAP, nullptr, err, sizeof err), GUDCANNY_EBACKEND);
  } else {
    EXPECT_EQ(rc, GUDCANNY_EBACKEND);
  }
  EXPECT_NE(std::string(err).find(name + "=1"), std::string::npos) << err;
  EXPECT_NE(std::string(err).find("lost"), std::string::npos) << err;
  EXPECT_EQ(gudcanny_pending(ctx), 0);
  EXPECT_EQ(gudcanny_backend(ctx), GUDCANNY_BACKEND_CPU);
  EXPECT_EQ(gudcanny_submit_cuda(ctx, src.data(), 64, nullptr, 0, GUDCANNY_OUT_MAP, err, sizeof err),
            GUDCANNY_EUNAVAILABLE);
  std::vector<uint8_t> edges(px.size());
  EXPECT_EQ(gudcanny_detect(ctx, px.data(), w, edges.data(), w, nullptr, err, sizeof err), GUDCANNY_OK) << err;
  EXPECT_EQ(edges, cpu_detect(cfg, px).edges);
  gudcanny_destroy(ctx);
}

SUITE_TEST(FailureAtSubmitDropsDeviceFrames) {
  REQUIRE_CUDA();
  forced_device_failure("FAIL_AT_SUBMIT", false);
}

SUITE_TEST(FailureAtWaitDropsDeviceFrames) {
  REQUIRE_CUDA();
  forced_device_failure("FAIL_AT_FRAME", true);
}

}  // namespace
