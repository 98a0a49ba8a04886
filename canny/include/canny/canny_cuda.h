// canny/canny_cuda.h: the CUDA twin of GUD-Canny (canny/canny.h, detect_edges_ref): the same edge map and
// the same pairs per strip, bit for bit. Host C++ API; no CUDA headers needed. Library gpuec_canny_cuda.
// Status: written and compiled; NOT yet verified on a GPU (tests/canny/canny_cuda_test.cpp).
//
// Kernels (canny/src/cuda/canny.cu; DESIGN.md section 5, thesis Algorithms 1-6): Gaussian rows, Gaussian
// columns (Q14 taps from canny::gaussian_taps, passed as kernel arguments), central differences + sqrtf
// + atomicMax of gx^2 + gy^2, NMS + normalisation (explicit __f*_rn intrinsics: one rounding per
// operation, as the CPU twin). Thresholds: every pixel gets two 7-bit codes (#k with G >= k/100, #k with
// G > k/100) in a per-strip layout, from which each candidate's HIGH / UNSTABLE bit maps (one 32-bit
// word per strip row) are built; hysteresis is an OR-propagation to a fixed point (__syncthreads_or),
// one thread block per (region, candidate slot); the linking maps are counted into SM with integer
// atomics; a block per region then builds the histograms and finds the local maxima.
//
// detect_edges_cuda(src, width, height, pitch, options, edges, edges_pitch, pairs, workspace,
//                   workspace_bytes, stream):
//   - src, edges, pairs and workspace are DEVICE pointers. options.candidates is a HOST pointer: the call
//     checks the set (check_candidates) and copies it into the workspace with cudaMemcpyAsync (from
//     pageable memory that copy returns once the data is staged, so the caller may free or reuse the
//     array as soon as the call returns).
//   - The contract is detect_edges_ref's: src row y at src + y * pitch (pitch >= width), edges row y at
//     edges + y * edges_pitch (edges_pitch >= width; bytes past the width are not touched), pairs has
//     strip_count(width) entries. Same outputs as detect_edges_ref.
//   - workspace: at least detect_edges_cuda_workspace_bytes(width, height) bytes, 256-byte aligned
//     (cudaMalloc), any contents (the call clears what it needs). Scratch for this call only.
//   - Asynchronous: enqueued on `stream`; no allocation; no synchronization (except the staging of the
//     candidate copy described above).
//   - Errors are values: cudaErrorInvalidValue (this library's file and line) where detect_edges_ref
//     returns a Status < 0 (null pointers, sizes, pitches, sigma, mode, candidates, fixed pair) and for
//     a short or misaligned workspace; else the first failing CUDA call. Kernel faults appear at the next
//     synchronization.
#pragma once

#include <cstddef>
#include <cstdint>

#include "canny/canny.h"
#include "gpu/device.h"

struct CUstream_st;
typedef CUstream_st* cudaStream_t;  // the same declaration as in cuda_runtime_api.h

namespace canny {

// Device workspace bytes detect_edges_cuda and gradient_map_cuda need (0 for invalid sizes).
size_t detect_edges_cuda_workspace_bytes(int width, int height);

gpu::CudaError detect_edges_cuda(const uint8_t* src, int width, int height, int pitch, const Options& options,
                                 uint8_t* edges, int edges_pitch, ThresholdPair* pairs, void* workspace,
                                 size_t workspace_bytes, cudaStream_t stream);

// Steps 1-3 alone (twin of gradient_map_ref): G into the device array g (row y at g + y * g_pitch floats,
// g_pitch >= width; floats past the width are not touched). Same workspace rules as detect_edges_cuda.
gpu::CudaError gradient_map_cuda(const uint8_t* src, int width, int height, int pitch, float sigma, float* g,
                                 int g_pitch, void* workspace, size_t workspace_bytes, cudaStream_t stream);

}  // namespace canny
