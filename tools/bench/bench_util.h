// tools/bench/bench_util.h: what the benchmark programs share: wall-clock milliseconds, medians of the timings, option values, the
// random-frame benchmarks' sizes and densities and, in CUDA programs, the checks that end the program on a CUDA
// error (with the program's own exit code), the device's description and the event-timed loop (warm-up calls,
// then repeated calls each between two events on the stream).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace gpuec_bench {

// Milliseconds of the steady clock since t0.
inline double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// The median (mean of the two middle values for an even count); 0 for no values.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The value at index n/2 of the sorted values: the median for an odd count, the upper of the two middle values
// for an even one (what the random-frame, pack and GVLE benchmarks have always reported); 0 for no values.
inline double upper_median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// An option's whole-number value: true, and *v set, when s is a decimal number in [lo, 1000000].
inline bool parse_int(const char* s, int lo, int* v) {
  char* end = nullptr;
  const long x = std::strtol(s, &end, 10);
  if (!*s || *end || x < lo || x > 1000000) return false;
  *v = static_cast<int>(x);
  return true;
}

// The timed loop's options at argv[i]: --repeats R (R >= 1) and --warmup W (W >= 0). 1 when argv[i] is one of
// them with a valid value (i moved onto the value), -1 when that value is not valid, 0 when argv[i] is neither or
// has no value after it.
inline int timing_option(int argc, char** argv, int& i, int* repeats, int* warmup) {
  if (i + 1 >= argc) return 0;
  const bool is_repeats = !std::strcmp(argv[i], "--repeats");
  if (!is_repeats && std::strcmp(argv[i], "--warmup")) return 0;
  ++i;
  return parse_int(argv[i], is_repeats ? 1 : 0, is_repeats ? repeats : warmup) ? 1 : -1;
}

// The value of --seed N on the command line (strtoul, base 0), else `seed`.
inline uint32_t seed_option(int argc, char** argv, uint32_t seed) {
  for (int i = 1; i + 1 < argc; ++i)
    if (!std::strcmp(argv[i], "--seed")) seed = static_cast<uint32_t>(std::strtoul(argv[i + 1], nullptr, 0));
  return seed;
}

// The random-frame benchmarks (assemble-bench-gpu, cavlcu-bench-gpu): frame sizes in macroblocks and
// coefficient densities (the share of non-zero coefficients, in percent: roughly x264 at QP 40, 26 and 10).
struct FrameSize {
  const char* name;
  int w, h;
};
inline constexpr FrameSize kFrameSizes[] = {
    {"QCIF", 11, 9}, {"CIF", 22, 18}, {"720p", 80, 45}, {"1080p", 120, 68}, {"2160p", 240, 135}};
struct Density {
  const char* name;
  int pct;
};
inline constexpr Density kDensities[] = {{"QP40", 2}, {"QP26", 12}, {"QP10", 55}};

}  // namespace gpuec_bench

#if defined(__CUDACC__)
#include <cuda_runtime.h>

#include "gpu/device.h"

// Ends the program with exit_code when call returns a CUDA error, naming the call and where it was.
#define GPUEC_BENCH_CHECK_CUDA(call, exit_code)                                                   \
  do {                                                                                            \
    const cudaError_t e_ = (call);                                                                \
    if (e_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorName(e_));   \
      std::exit(exit_code);                                                                       \
    }                                                                                             \
  } while (0)

// The same for a library call that returns an error value (gpu::CudaError: true on an error, str() says it).
#define GPUEC_BENCH_CHECK(call, exit_code)                                                        \
  do {                                                                                            \
    const auto e_ = (call);                                                                       \
    if (e_) {                                                                                     \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, e_.str().c_str());       \
      std::exit(exit_code);                                                                       \
    }                                                                                             \
  } while (0)

namespace gpuec_bench {

// True, after "PROG: skipped: WHY" on stdout, when this machine has no usable CUDA device: the program has
// nothing to measure and exits 0.
inline bool no_device(const char* prog) {
  std::string why;
  if (gpu::device_count(&why) > 0) return false;
  std::printf("%s: skipped: %s\n", prog, why.c_str());
  return true;
}

// "NAME (sm_XY, N SMs)" of CUDA device dev; a CUDA error ends the program with exit_code.
inline std::string device_description(int dev, int exit_code) {
  cudaDeviceProp prop{};
  GPUEC_BENCH_CHECK_CUDA(cudaGetDeviceProperties(&prop, dev), exit_code);
  return std::string(prop.name) + " (sm_" + std::to_string(prop.major) + std::to_string(prop.minor) + ", " +
         std::to_string(prop.multiProcessorCount) + " SMs)";
}

// --queued (canny-bench-gpu, canny-bench-npp): holds `stream` busy for about 200 µs (one thread spinning 4e5 SM
// cycles at about 2 GHz), so that the host has enqueued a timed call when the GPU reaches it.
static __global__ void hold_kernel(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}
inline void hold_stream(cudaStream_t stream) { hold_kernel<<<1, 1, 0, stream>>>(400000); }

// The milliseconds of `repeats` calls of f (which enqueues its work on `stream`), each between two events,
// after `warmup` calls and a synchronization; a CUDA error ends the program with exit_code. before() runs before the
// first event of each timed call (canny-bench-gpu --queued: a kernel that holds the stream busy).
struct Nothing {
  void operator()() const {}
};
template <class F, class B = Nothing>
std::vector<double> event_times_ms(cudaStream_t stream, int warmup, int repeats, F&& f, int exit_code,
                                   B&& before = B()) {
  cudaEvent_t e0, e1;
  GPUEC_BENCH_CHECK_CUDA(cudaEventCreate(&e0), exit_code);
  GPUEC_BENCH_CHECK_CUDA(cudaEventCreate(&e1), exit_code);
  for (int r = 0; r < warmup; ++r) f();
  GPUEC_BENCH_CHECK_CUDA(cudaStreamSynchronize(stream), exit_code);
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    before();
    GPUEC_BENCH_CHECK_CUDA(cudaEventRecord(e0, stream), exit_code);
    f();
    GPUEC_BENCH_CHECK_CUDA(cudaEventRecord(e1, stream), exit_code);
    GPUEC_BENCH_CHECK_CUDA(cudaEventSynchronize(e1), exit_code);
    float ms = 0;
    GPUEC_BENCH_CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1), exit_code);
    t.push_back(ms);
  }
  GPUEC_BENCH_CHECK_CUDA(cudaEventDestroy(e0), exit_code);
  GPUEC_BENCH_CHECK_CUDA(cudaEventDestroy(e1), exit_code);
  return t;
}

// The same in microseconds.
template <class F, class B = Nothing>
std::vector<double> event_times_us(cudaStream_t stream, int warmup, int repeats, F&& f, int exit_code,
                                   B&& before = B()) {
  std::vector<double> t = event_times_ms(stream, warmup, repeats, f, exit_code, before);
  for (double& x : t) x *= 1000.0;
  return t;
}

// Their median in microseconds.
template <class F, class B = Nothing>
double event_median_us(cudaStream_t stream, int warmup, int repeats, F&& f, int exit_code, B&& before = B()) {
  return median(event_times_us(stream, warmup, repeats, f, exit_code, before));
}

}  // namespace gpuec_bench
#endif
