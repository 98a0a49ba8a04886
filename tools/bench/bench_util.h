// tools/bench/bench_util.h: what the benchmark programs share: the median of the timings and, in CUDA programs,
// the check that ends the program on a CUDA error (with the program's own exit code) and the event-timed
// loop (warm-up calls, then repeated calls each between two events on the stream).
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace gpuec_bench {

// The median (mean of the two middle values for an even count); 0 for no values.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace gpuec_bench

#if defined(__CUDACC__)
#include <cuda_runtime.h>

// Ends the program with exit_code when call returns a CUDA error, naming the call and where it was.
#define GPUEC_BENCH_CHECK_CUDA(call, exit_code)                                                   \
  do {                                                                                            \
    const cudaError_t e_ = (call);                                                                \
    if (e_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorName(e_));   \
      std::exit(exit_code);                                                                       \
    }                                                                                             \
  } while (0)

namespace gpuec_bench {

// Median microseconds of `repeats` calls of f (which enqueues its work on `stream`), each between two
// events, after `warmup` calls; a CUDA error ends the program with exit_code.
template <class F>
double event_median_us(cudaStream_t stream, int warmup, int repeats, F&& f, int exit_code) {
  cudaEvent_t e0, e1;
  GPUEC_BENCH_CHECK_CUDA(cudaEventCreate(&e0), exit_code);
  GPUEC_BENCH_CHECK_CUDA(cudaEventCreate(&e1), exit_code);
  for (int r = 0; r < warmup; ++r) f();
  GPUEC_BENCH_CHECK_CUDA(cudaStreamSynchronize(stream), exit_code);
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    GPUEC_BENCH_CHECK_CUDA(cudaEventRecord(e0, stream), exit_code);
    f();
    GPUEC_BENCH_CHECK_CUDA(cudaEventRecord(e1, stream), exit_code);
    GPUEC_BENCH_CHECK_CUDA(cudaEventSynchronize(e1), exit_code);
    float ms = 0;
    GPUEC_BENCH_CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1), exit_code);
    t.push_back(ms * 1000.0);
  }
  GPUEC_BENCH_CHECK_CUDA(cudaEventDestroy(e0), exit_code);
  GPUEC_BENCH_CHECK_CUDA(cudaEventDestroy(e1), exit_code);
  return median(t);
}

}  // namespace gpuec_bench
#endif
