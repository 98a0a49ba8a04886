// bench_kernels/histogram_cuda.h: the CUDA byte histogram, twin of vle::histogram_ref (vle/huffman.h). No
// production code calls it yet (gvle and vle::compress count on the CPU), so it lives with the benchmarks
// (pack-bench-gpu). Host C++ API; no CUDA headers needed. Library gpuec_bench_kernels (CUDA builds).
//
// histogram_cuda(data, n, counts, stream): counts[s] = occurrences of byte value s in data[0, n),
// as 256 uint64 values; counts is overwritten (zeroed first, on the stream).
//   - data and counts are device pointers; data has any alignment; counts is 8-byte aligned. n may
//     exceed 4 GiB (64-bit counts and indices throughout).
//   - Asynchronous: enqueued on `stream`; counts is valid once the stream reaches that point. No
//     allocation, no workspace.
//   - Errors are returned, never thrown: the first failing CUDA call (cudaErrorInvalidValue for a
//     null or misaligned counts). Kernel faults show up at the next synchronization.
// Method: per block, 256 bins x 32 lane columns of 32-bit counters in shared memory (lane l of every
// warp counts into column l, so the 32 lanes of a warp never hit the same bank, whatever the data);
// 16-byte loads; at the end each block adds its column sums to counts with 64-bit atomics. A block
// reads at most 2^31 bytes, so its 32-bit counters cannot overflow. H200: 1 GiB in 252 us (4.26 TB/s
// read, the device copy's read + write rate), random or constant data alike.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpu/device.h"

struct CUstream_st;
typedef CUstream_st* cudaStream_t;  // the same declaration as in cuda_runtime_api.h

namespace gpuec_bench {

gpu::CudaError histogram_cuda(const uint8_t* data, size_t n, uint64_t* counts, cudaStream_t stream);

}  // namespace gpuec_bench
