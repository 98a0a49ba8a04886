// bench_kernels/scan.h: exclusive scan of 32-bit bit lengths into 64-bit bit offsets, made to place
// variable-length segments in one stream (bench_kernels/pack.h segments); no production code calls it (the
// GVLE encoder and the CAVLC assembly run their scans inside their own kernels), so it lives with the
// benchmarks: the GVLE paper's scan measured against CUB (gvle-bench-gpu).
//
//   offsets[i] = len[0] + ... + len[i - 1]   (offsets[0] = 0),   total = len[0] + ... + len[n - 1]
//
// CPU twin exclusive_scan_ref (library gpuec_bench_kernels, every build). CUDA twin exclusive_scan_cuda
// (the same library, declared when the build has CUDA) with two methods behind one call:
//   kSegmentedAtomic  the GVLE paper's inter-block scan (thesis section 2.3; gpu/device/lookback.cuh,
//                     SegmentedCounters): tiles of 4096 lengths taken from an atomic counter,
//                     tile offsets by a segmented scan over groups of 32 tiles with 64-bit atomic
//                     adds that carry a counter and a flag in their top bits. One kernel.
//                     Precondition: total < 2^57 (larger sums give unspecified offsets).
//   kCub              cub::DeviceScan::ExclusiveSum (CCCL's decoupled look-back), lengths widened
//                     to 64 bits on load, the total written by the same pass. Any total < 2^64.
//   kDefault          the faster one on the H200 (tools/bench/bench_gvle_gpu.cu; record in src/scan.cpp).
// Both give exactly exclusive_scan_ref's result (integer sums: no rounding, order irrelevant).
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpuec_bench {

// CPU twin: writes offsets[0, n) (offsets may be null: total only) and returns the total (0 for
// n == 0). Host pointers; `offsets` may not alias `len`.
uint64_t exclusive_scan_ref(const uint32_t* len, uint64_t n, uint64_t* offsets);

enum class ScanMethod {
  kDefault,
  kSegmentedAtomic,
  kCub,
};

// The method kDefault stands for (never kDefault).
ScanMethod scan_default_method();

// "segmented-atomic", "cub" (kDefault: the name of the method it stands for).
const char* scan_method_name(ScanMethod m);

}  // namespace gpuec_bench

#if defined(GPUEC_HAVE_CUDA)
#include "gpu/device.h"

struct CUstream_st;
typedef CUstream_st* cudaStream_t;  // the same declaration as in cuda_runtime_api.h

namespace gpuec_bench {

// Largest n exclusive_scan_cuda accepts (both methods).
constexpr uint64_t kScanCudaMaxItems = uint64_t{1} << 40;

// Device workspace bytes that exclusive_scan_cuda(n, m) needs (0 for n == 0). Host-only, cheap, no
// allocation, no synchronization (the kCub size comes from CUB's own size query).
size_t scan_cuda_workspace_bytes(uint64_t n, ScanMethod m = ScanMethod::kDefault);

// CUDA twin of exclusive_scan_ref, enqueued on `stream` (asynchronous: returns without waiting; the
// results are there once the stream reaches this point). All pointers are device pointers:
//   len      [n] uint32, any alignment of 4 (16 bytes is faster)
//   offsets  [n] uint64, 8-byte aligned (16 faster); may be null (only the total is wanted)
//   total    one uint64 (required); written also for n == 0 (0)
//   workspace at least scan_cuda_workspace_bytes(n, m) bytes, 256-byte aligned (cudaMalloc), any
//            contents: the call initializes what it uses (one cudaMemsetAsync for
//            kSegmentedAtomic). Scratch for this call only; not shared by calls in flight at once.
// No allocation. offsets must not overlap len. Errors are values: cudaErrorInvalidValue (with this
// file and line) for arguments out of contract, else the first failing CUDA call; faults inside
// the kernel appear at the next synchronization, as usual in CUDA.
gpu::CudaError exclusive_scan_cuda(const uint32_t* len, uint64_t n, uint64_t* offsets, uint64_t* total,
                                   void* workspace, size_t workspace_bytes, ScanMethod m, cudaStream_t stream);

}  // namespace gpuec_bench
#endif  // GPUEC_HAVE_CUDA
