// bench_kernels/pack_cuda.h: the CUDA segment packer, twin of gpuec_bench::pack_ref (bench_kernels/pack.h:
// bit format, segment contract, sizes). Host C++ API; no CUDA headers needed. Library gpuec_bench_kernels
// (CUDA builds).
//
// pack_cuda(seg, out, out_bytes, stream):
//   - seg's arrays and out are device pointers; out is 4-byte aligned and out_bytes a multiple of 4.
//   - Writes out[0, min(out_bytes, packed_bytes(total))) exactly as pack_ref does (big-endian
//     32-bit stores; bits past total up to the word boundary are zero) and nothing else. total is
//     read on the device (offset[n-1] + len[n-1]), so the host need not know it: size out with an
//     upper bound and take total from the scan that made the offsets.
//   - Asynchronous: enqueued on `stream` (one kernel), returns without synchronizing. No
//     allocation and no workspace.
//   - Offsets that are not the exclusive scan of the lengths give unspecified output, but nothing
//     outside the segments' source words, the segment arrays and out[0, out_bytes) is read or
//     written.
//   - Errors are returned, never thrown: cudaErrorInvalidValue for arguments out of contract (n >=
//     2^32, misaligned out or src, out_bytes not a multiple of 4), else the first failing CUDA
//     call. Faults inside the kernel show up at the next synchronization, as usual in CUDA.
// Work unit: one block builds one output tile at a time, kPackTileBytes, or kPackLargeTileBytes
// when out_bytes >= kPackLargeOutputBytes (tests aim at both tiles' boundaries), so an out_bytes far
// above the real size costs some latency (1080p frame: 14 us, 20 us with out_bytes 64 MiB).
// H200 (tools/bench/bench_pack_gpu.cu): a 1080p frame of CAVLC-sized codes (220k segments) in 14 us;
// 2^20-bit segments at 5.3 Tbit/s of output, 1.3 TB/s of traffic (copy: 4.26 TB/s).
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpu/device.h"
#include "bench_kernels/pack.h"

struct CUstream_st;
typedef CUstream_st* cudaStream_t;  // the same declaration as in cuda_runtime_api.h

namespace gpuec_bench {

constexpr uint64_t kPackTileBytes = 8192;
constexpr uint64_t kPackLargeTileBytes = 16384;
constexpr uint64_t kPackLargeOutputBytes = uint64_t{32} << 20;

gpu::CudaError pack_cuda(const WordSegments& seg, uint8_t* out, uint64_t out_bytes, cudaStream_t stream);
gpu::CudaError pack_cuda(const ByteSegments& seg, uint8_t* out, uint64_t out_bytes, cudaStream_t stream);

}  // namespace gpuec_bench
