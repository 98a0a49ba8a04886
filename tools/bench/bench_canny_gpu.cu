// canny-bench-gpu: GUD-Canny on the GPU (detect_edges_cuda, canny/canny_cuda.h) against its CPU twin
// (detect_edges_ref) per image: the standard 512x512 / 256x256 PGMs of GPUEC_SHARED_DIR/images/standard and
// synthetic 1080p and 2160p frames (smoothed noise with steps and circles), for the candidate sets C_0.03
// and C_0.01 in strip mode and in frame mode. GPU: the whole pipeline with the image and the output
// on the device, CUDA events around the call, W warm-up calls, median of R; CPU: steady_clock, one core,
// median of C. Every GPU output is compared with the CPU twin (edge map and pairs); a mismatch exits 1.
// --cpu-repeats 0: the reference comes from canny::CpuDetector on every core (the twin's bytes,
// canny_cpu_test), untimed (cpu_us and the ratio print as 0): for GPU runs that only need the check.
// --queued: also the GPU's time alone (column queued_us): the same call with the stream held busy by a kernel that
// spins for about 200 µs before the first event, so that the host has enqueued the whole call when the GPU reaches
// it. The plain time (gpu_us) includes what the host takes until each launch reaches the GPU (the GPU idles until the
// call's first launch); gpu_us - queued_us is that part.
// --synthetic WxH: also a synthetic frame of that size (seed 3), e.g. 1024x1024 for the frame path's launch rule.
// usage: canny-bench-gpu [--repeats R] [--warmup W] [--cpu-repeats C] [--sigma S] [--queued] [--image SUB]...
//                        [--config SUB]... [--synthetic WxH]...
// Output: one row per image and configuration (µs), the GPU/CPU ratio; exit 0 ok, 1 mismatch, 2 usage/IO,
// 3 CUDA error.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "canny/canny.h"
#include "canny/canny_cpu.h"
#include "canny/canny_cuda.h"
#include "bench_images.h"  // tests/canny
#include "pgm.h"           // tests/canny
#include "bench_util.h"

namespace {

constexpr int kExitMismatch = 1, kExitUsage = 2, kExitCuda = 3;

#define CHECK_CUDA(call) GPUEC_BENCH_CHECK_CUDA(call, kExitCuda)

using canny_bench::Image;
using gpuec_bench::median;

}  // namespace

int main(int argc, char** argv) {
  int repeats = 20, warmup = 5, cpu_repeats = 3;
  float sigma = 1.0f;
  bool queued = false;
  std::vector<std::string> only_images, only_configs;  // substrings; empty: all
  std::vector<std::pair<int, int>> extra_sizes;         // --synthetic
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has = i + 1 < argc;
    if (a == "--repeats" && has) repeats = std::atoi(argv[++i]);
    else if (a == "--warmup" && has) warmup = std::atoi(argv[++i]);
    else if (a == "--cpu-repeats" && has) cpu_repeats = std::atoi(argv[++i]);
    else if (a == "--sigma" && has) sigma = float(std::atof(argv[++i]));
    else if (a == "--queued") queued = true;
    else if (a == "--image" && has) only_images.push_back(argv[++i]);
    else if (a == "--config" && has) only_configs.push_back(argv[++i]);
    else if (a == "--synthetic" && has) {
      int w = 0, h = 0;
      char tail = 0;
      if (std::sscanf(argv[++i], "%dx%d%c", &w, &h, &tail) != 2 || w < 8 || h < 8 || w > 8192 || h > 8192) {
        std::fprintf(stderr, "canny-bench-gpu: --synthetic wants WxH, 8 to 8192 each (got '%s')\n", argv[i]);
        return kExitUsage;
      }
      extra_sizes.emplace_back(w, h);
    } else {
      std::fprintf(stderr,
                   "usage: canny-bench-gpu [--repeats R] [--warmup W] [--cpu-repeats C] [--sigma S] [--queued] "
                   "[--image SUB]... [--config SUB]... [--synthetic WxH]...\n"
                   "  --image/--config: only the images/configs whose name contains SUB "
                   "(e.g. --image barbara --config 'strip C_0.03'), for profiling one case\n"
                   "  --synthetic WxH: also a synthetic frame of that size\n");
      return kExitUsage;
    }
  }
  if (repeats < 1 || warmup < 0 || cpu_repeats < 0) return kExitUsage;

  std::vector<Image> images =
      canny_bench::benchmark_images({"cameraman_256.pgm", "barbara_512.pgm", "boat_512.pgm", "goldhill_512.pgm"});
  for (const auto& [w, h] : extra_sizes)
    images.push_back(canny_bench::synthetic("synthetic_" + std::to_string(w) + "x" + std::to_string(h), w, h, 3));
  auto selected = [](const std::vector<std::string>& subs, const std::string& name) {
    if (subs.empty()) return true;
    for (const std::string& s : subs)
      if (name.find(s) != std::string::npos) return true;
    return false;
  };
  images.erase(std::remove_if(images.begin(), images.end(),
                              [&](const Image& im) { return !selected(only_images, im.name); }),
               images.end());
  if (images.empty()) {
    std::fprintf(stderr, "canny-bench-gpu: no image matches --image\n");
    return kExitUsage;
  }

  std::printf("# canny-bench-gpu: %s; sigma %.2f; GPU: CUDA events, median of %d after %d warm-up, data on the "
              "device; CPU twin: one core, median of %d\n",
              gpuec_bench::device_description(0, kExitCuda).c_str(), double(sigma), repeats, warmup, cpu_repeats);
  std::printf("%-24s %10s %-14s %10s %12s %9s%s\n", "image", "size", "config", "gpu_us", "cpu_us", "cpu/gpu",
              queued ? "  queued_us" : "");
  struct Config {
    const char* name;
    canny::ThresholdMode mode;
    int step;
  };
  const Config configs[] = {{"strip C_0.03", canny::ThresholdMode::kStrip, 3},
                            {"strip C_0.01", canny::ThresholdMode::kStrip, 1},
                            {"frame C_0.03", canny::ThresholdMode::kFrame, 3},
                            {"frame C_0.01", canny::ThresholdMode::kFrame, 1}};
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreate(&stream));
  int status = 0;
  for (const Image& im : images) {
    const size_t n = im.px.size(), np = size_t(canny::strip_count(im.w));
    uint8_t *d_src = nullptr, *d_edges = nullptr;
    canny::ThresholdPair* d_pairs = nullptr;
    void* d_ws = nullptr;
    const size_t ws = canny::detect_edges_cuda_workspace_bytes(im.w, im.h);
    CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&d_src), n));
    CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&d_edges), n));
    CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&d_pairs), np * sizeof(canny::ThresholdPair)));
    CHECK_CUDA(cudaMalloc(&d_ws, ws));
    CHECK_CUDA(cudaMemcpy(d_src, im.px.data(), n, cudaMemcpyHostToDevice));
    std::vector<uint8_t> work(canny::workspace_bytes_ref(im.w, im.h)), ref(n), got(n);
    std::vector<canny::ThresholdPair> ref_pairs(np), got_pairs(np);
    for (const Config& c : configs) {
      if (!selected(only_configs, c.name)) continue;
      std::vector<canny::CandidatePair> cands(size_t(canny::make_candidate_set(c.step, nullptr, 0)));
      canny::make_candidate_set(c.step, cands.data(), int(cands.size()));
      canny::Options opt;
      opt.sigma = sigma;
      opt.mode = c.mode;
      opt.candidates = cands.data();
      opt.n_candidates = int(cands.size());
      auto gpu = [&] {
        const gpu::CudaError e =
            canny::detect_edges_cuda(d_src, im.w, im.h, im.w, opt, d_edges, im.w, d_pairs, d_ws, ws, stream);
        if (e) {
          std::fprintf(stderr, "canny-bench-gpu: detect_edges_cuda: %s\n", e.str().c_str());
          std::exit(kExitCuda);
        }
      };
      auto cpu = [&] {
        if (cpu_repeats == 0) {
          canny::CpuDetector det;
          if (det.init(im.w, im.h, opt, 0) != canny::kOk ||
              det.detect(im.px.data(), im.w, ref.data(), im.w, ref_pairs.data()) != canny::kOk) {
            std::fprintf(stderr, "canny-bench-gpu: CpuDetector failed on %s\n", im.name.c_str());
            std::exit(kExitUsage);
          }
          return;
        }
        if (canny::detect_edges_ref(im.px.data(), im.w, im.h, im.w, opt, ref.data(), im.w, ref_pairs.data(),
                                    work.data(), work.size()) != canny::kOk) {
          std::fprintf(stderr, "canny-bench-gpu: detect_edges_ref failed on %s\n", im.name.c_str());
          std::exit(kExitUsage);
        }
      };
      std::vector<double> tc;
      if (cpu_repeats == 0) {
        cpu();
        tc.push_back(0.0);
      }
      for (int r = 0; r < cpu_repeats; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        cpu();
        tc.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
      }
      gpu();
      CHECK_CUDA(cudaStreamSynchronize(stream));
      CHECK_CUDA(cudaMemcpy(got.data(), d_edges, n, cudaMemcpyDeviceToHost));
      CHECK_CUDA(cudaMemcpy(got_pairs.data(), d_pairs, np * sizeof(canny::ThresholdPair), cudaMemcpyDeviceToHost));
      const bool same = got == ref && std::memcmp(got_pairs.data(), ref_pairs.data(), np * sizeof(canny::ThresholdPair)) == 0;
      if (!same) {
        std::fprintf(stderr, "canny-bench-gpu: MISMATCH %s %s\n", im.name.c_str(), c.name);
        status = kExitMismatch;
      }
      const double g = gpuec_bench::event_median_us(stream, warmup, repeats, gpu, kExitCuda), cm = median(tc);
      char q[32] = "";
      if (queued) {  // the stream busy for about 200 µs (4e5 cycles at 2 GHz) before each timed call
        const double gq = gpuec_bench::event_median_us(stream, warmup, repeats, gpu, kExitCuda,
                                                       [&] { gpuec_bench::hold_stream(stream); });
        std::snprintf(q, sizeof q, " %10.1f", gq);
      }
      std::printf("%-24s %4dx%-5d %-14s %10.1f %12.1f %9.1f%s%s\n", im.name.c_str(), im.w, im.h, c.name, g, cm, cm / g,
                  q, same ? "" : "  MISMATCH");
      std::fflush(stdout);
    }
    CHECK_CUDA(cudaFree(d_src));
    CHECK_CUDA(cudaFree(d_edges));
    CHECK_CUDA(cudaFree(d_pairs));
    CHECK_CUDA(cudaFree(d_ws));
  }
  std::printf(status ? "RESULT: MISMATCH between GPU and CPU twin\n" : "RESULT: every GPU output equals the CPU twin\n");
  return status;
}
