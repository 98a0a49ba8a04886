// vle/encode_cuda.h: the GVLE encoder on the GPU, twin of vle::encode_ref (vle/encode.h: payload bit
// layout, chunk index). Host C++ API; no CUDA headers needed. Library gpuec_vle_cuda.
//
// The kernel is the GVLE paper's (thesis section 2.3; DESIGN.md section 4): one persistent kernel
// whose blocks take block-inputs (256 threads x 32 symbols) from an atomic counter; the code table in
// shared memory; each thread loads its 32 symbols with one 32-byte load and builds its code in
// registers; the block code is assembled in shared memory and written with coalesced stores; block
// offsets come from the paper's segmented atomic inter-block scan (gpu/device/lookback.cuh).
// Measured changes to the paper (tuning record with the H200 numbers in vle/src/cuda/encode.cu; the
// kernel as published and the other tunings are kept for comparison in the benchmarks, tools/bench/kernels,
// not here; the kernel's device code is vle/device/encode.cuh): one packed 32-bit table entry per symbol (code
// left-aligned, length in bits 0-4) instead of separate 16-bit value / 8-bit length arrays, funnel-
// shift emission into a 64-bit window, 16-byte write-out, 256 threads per block, the next
// block-input loaded while the current one is encoded, each block code placed and written one
// block-input late (the look-back never holds up a barrier).
//
// encode_cuda(in, n, table, out, chunk_bits, total_bits, workspace, workspace_bytes, stream):
//   - in, out, chunk_bits, total_bits and workspace are device pointers; table is a host struct,
//     read during the call (it travels as a kernel parameter: free or change it right after).
//   - in: n bytes, any alignment (16-byte aligned is the fast path; otherwise byte loads).
//   - out: 4-byte aligned, room for encoded_bound_bytes(n). The call writes exactly the padded
//     payload, bytes [0, 4 * ceil(total / 32)), as encode_ref does (big-endian 32-bit words, zero
//     bits after the last code), each word once, and nothing past it: no zeroing of `out` first
//     (the two words a block shares with its neighbours are merged through the workspace).
//   - chunk_bits: chunk_count(n) entries (may be null), the stream bit where the code of symbol
//     k * kChunkSymbols starts. total_bits: one uint64 (may be null), the payload length in bits,
//     or UINT64_MAX when some symbol of `in` has no code (len 0, or len > kMaxCodeLength); then
//     out and chunk_bits hold unspecified values (still only within the bounds above).
//   - workspace: at least encode_cuda_workspace_bytes(n) bytes, 256-byte aligned (cudaMalloc),
//     any contents: the call clears what it uses with one cudaMemsetAsync (about 16 bytes per 4096
//     symbols). Scratch for this call only: calls in flight at once need their own.
//   - Asynchronous: enqueued on `stream`, returns without synchronizing. No allocation; the first
//     call on a device also asks the runtime for the multiprocessor count and occupancy (cached).
//   - n == 0: writes total_bits = 0 and nothing else. n <= kEncodeCudaMaxSymbols.
//   - Errors are values, never exceptions: cudaErrorInvalidValue (this library's file and line) for
//     arguments out of contract (n too large, out misaligned, workspace too small or null, null
//     in/out with n > 0), else the first failing CUDA call. Faults inside the kernel appear at the
//     next synchronization, as usual in CUDA.
// Throughput (H200, tools/bench/bench_gvle_gpu.cu, Canterbury files replicated to >= 100 MB, kernel time
// with data resident): see the tuning record in vle/src/cuda/encode.cu.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpu/device.h"
#include "vle/encode.h"
#include "vle/huffman.h"

struct CUstream_st;
typedef CUstream_st* cudaStream_t;  // the same declaration as in cuda_runtime_api.h

namespace vle {

constexpr uint64_t kEncodeCudaMaxSymbols = uint64_t{1} << 40;

// Device workspace bytes that encode_cuda needs for n symbols.
size_t encode_cuda_workspace_bytes(uint64_t n);

gpu::CudaError encode_cuda(const uint8_t* in, uint64_t n, const CodeTable& table, uint8_t* out,
                           uint64_t* chunk_bits, uint64_t* total_bits, void* workspace, size_t workspace_bytes,
                           cudaStream_t stream);

// Synchronous convenience for tools and tests: host pointers in and out, like encode_ref (out: room
// for encoded_bound_bytes(n), of which the padded payload is written; chunk_bits: chunk_count(n)
// entries or null). Allocates and frees device memory on every call (not for a per-frame path);
// uses the default stream and waits for it. *total_bits as in encode_cuda (required).
gpu::CudaError encode_cuda_host(const uint8_t* in, uint64_t n, const CodeTable& table, uint8_t* out,
                                uint64_t* chunk_bits, uint64_t* total_bits);

}  // namespace vle
