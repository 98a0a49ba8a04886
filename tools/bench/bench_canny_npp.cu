// canny-bench-npp: NPP's Canny (nppiFilterCannyBorder_8u_C1R_Ctx: Sobel 3x3, L2 norm, replicated border,
// fixed thresholds) against GUD-Canny (detect_edges_cuda, strip mode, C_0.03) on the same images, in the
// same process, data on the device, CUDA events around each call, W warm-ups then the median of R.
// Thresholds for NPP: low 72, high 256 on its L2 Sobel magnitude (range 0..1443). NPP does not smooth: the
// comparison is of whole detectors, not of equal work. NPP is not on the development machine; this file is
// compiled on the GPU machine (docs/benchmarks.md has the command). Images: GPUEC_SHARED_DIR/images/standard
// 512x512 PGMs and synthetic 1080p / 2160p frames (as canny-bench-gpu).
// --queued: also both times with the stream held busy while each call is enqueued (bench_util.h hold_stream), the GPU's
// own time without the host's enqueueing (canny-bench-gpu --queued): columns npp_q_us, gud_q_us and their ratio.
// usage: canny-bench-npp [--repeats R] [--warmup W] [--queued]; exit 0 ok, 2 usage/IO, 3 CUDA/NPP error.
#include <cuda_runtime.h>
#include <npp.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "canny/canny.h"
#include "canny/canny_cuda.h"
#include "bench_images.h"  // tests/canny
#include "pgm.h"           // tests/canny
#include "bench_util.h"

namespace {

#define CHECK_CUDA(call) GPUEC_BENCH_CHECK_CUDA(call, 3)

#define CHECK_NPP(call)                                                                          \
  do {                                                                                           \
    const NppStatus s_ = (call);                                                                 \
    if (s_ != NPP_SUCCESS) {                                                                     \
      std::fprintf(stderr, "%s:%d: %s: NPP status %d\n", __FILE__, __LINE__, #call, int(s_));    \
      std::exit(3);                                                                              \
    }                                                                                            \
  } while (0)

using canny_bench::Image;
using gpuec_bench::median;

}  // namespace

int main(int argc, char** argv) {
  int repeats = 50, warmup = 10;
  bool queued = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--repeats" || a == "--warmup") && i + 1 < argc) {
      (a == "--repeats" ? repeats : warmup) = std::atoi(argv[++i]);
    } else if (a == "--queued") {
      queued = true;
    } else {
      std::fprintf(stderr, "usage: canny-bench-npp [--repeats R] [--warmup W] [--queued]\n");
      return 2;
    }
  }
  if (repeats < 1 || warmup < 0) return 2;
  const std::vector<Image> images =
      canny_bench::benchmark_images({"barbara_512.pgm", "boat_512.pgm", "goldhill_512.pgm"});

  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreate(&stream));
  NppStreamContext ctx{};
  int dev = 0;
  CHECK_CUDA(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, dev));
  ctx.hStream = stream;
  ctx.nCudaDeviceId = dev;
  ctx.nMultiProcessorCount = prop.multiProcessorCount;
  ctx.nMaxThreadsPerMultiProcessor = prop.maxThreadsPerMultiProcessor;
  ctx.nMaxThreadsPerBlock = prop.maxThreadsPerBlock;
  ctx.nSharedMemPerBlock = prop.sharedMemPerBlock;
  ctx.nCudaDevAttrComputeCapabilityMajor = prop.major;
  ctx.nCudaDevAttrComputeCapabilityMinor = prop.minor;
  CHECK_CUDA(cudaStreamGetFlags(stream, &ctx.nStreamFlags));
  std::printf("# canny-bench-npp: %s; median of %d after %d warm-up, data on the device\n", prop.name, repeats, warmup);
  std::printf("%-24s %10s %12s %12s %10s %12s %12s%s\n", "image", "size", "npp_us", "gud_c03_us", "gud/npp",
              "npp_edges", "gud_edges", queued ? "     npp_q_us     gud_q_us  gud/npp_q" : "");
  std::vector<canny::CandidatePair> cands(36);
  canny::make_candidate_set(3, cands.data(), 36);
  for (const Image& im : images) {
    const size_t n = im.px.size(), ns = size_t(canny::strip_count(im.w));
    uint8_t *d_src, *d_npp, *d_gud, *d_buf;
    canny::ThresholdPair* d_pairs;
    void* d_ws;
    const size_t ws = canny::detect_edges_cuda_workspace_bytes(im.w, im.h);
    const NppiSize size{im.w, im.h};
    int nbuf = 0;
    CHECK_NPP(nppiFilterCannyBorderGetBufferSize(size, &nbuf));
    CHECK_CUDA(cudaMalloc(&d_src, n));
    CHECK_CUDA(cudaMalloc(&d_npp, n));
    CHECK_CUDA(cudaMalloc(&d_gud, n));
    CHECK_CUDA(cudaMalloc(&d_buf, size_t(nbuf)));
    CHECK_CUDA(cudaMalloc(&d_pairs, ns * sizeof(canny::ThresholdPair)));
    CHECK_CUDA(cudaMalloc(&d_ws, ws));
    CHECK_CUDA(cudaMemcpy(d_src, im.px.data(), n, cudaMemcpyHostToDevice));
    // NPP thresholds are on the L2 Sobel magnitude; 0.1 / 0.2 of its 8-bit scale range (classic defaults).
    auto npp = [&] {
      CHECK_NPP(nppiFilterCannyBorder_8u_C1R_Ctx(d_src, im.w, size, NppiPoint{0, 0}, d_npp, im.w, size,
                                                 NPP_FILTER_SOBEL, NPP_MASK_SIZE_3_X_3, 72, 256, nppiNormL2,
                                                 NPP_BORDER_REPLICATE, d_buf, ctx));
    };
    canny::Options opt;
    opt.candidates = cands.data();
    opt.n_candidates = 36;
    auto gud = [&] {
      const gpu::CudaError e = canny::detect_edges_cuda(d_src, im.w, im.h, im.w, opt, d_gud, im.w, d_pairs, d_ws, ws, stream);
      if (e) {
        std::fprintf(stderr, "detect_edges_cuda: %s\n", e.str().c_str());
        std::exit(3);
      }
    };
    const double tn = gpuec_bench::event_median_us(stream, warmup, repeats, npp, 3),
                 tg = gpuec_bench::event_median_us(stream, warmup, repeats, gud, 3);
    char q[64] = "";
    if (queued) {
      auto hold = [&] { gpuec_bench::hold_stream(stream); };
      const double qn = gpuec_bench::event_median_us(stream, warmup, repeats, npp, 3, hold),
                   qg = gpuec_bench::event_median_us(stream, warmup, repeats, gud, 3, hold);
      std::snprintf(q, sizeof q, " %12.1f %12.1f %10.2f", qn, qg, qg / qn);
    }
    std::vector<uint8_t> a(n), b(n);
    CHECK_CUDA(cudaMemcpy(a.data(), d_npp, n, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(b.data(), d_gud, n, cudaMemcpyDeviceToHost));
    const long ea = long(std::count(a.begin(), a.end(), 255)), eb = long(std::count(b.begin(), b.end(), 255));
    std::printf("%-24s %4dx%-5d %12.1f %12.1f %10.2f %12ld %12ld%s\n", im.name.c_str(), im.w, im.h, tn, tg, tg / tn, ea,
                eb, q);
    for (void* p : {(void*)d_src, (void*)d_npp, (void*)d_gud, (void*)d_buf, (void*)d_pairs, d_ws}) CHECK_CUDA(cudaFree(p));
  }
  return 0;
}
