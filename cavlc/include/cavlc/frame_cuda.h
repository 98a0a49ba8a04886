// cavlc/frame_cuda.h: the CAVLCU kernel, GPU twin of cavlc::code_frame_ref (cavlc/frame.h: slot layout,
// neighbour rules, bit format). Host C++ API; no CUDA headers needed. Library gpuec_cavlc_cuda.
//
// The kernel (cavlc/src/cuda/frame.cu; DESIGN.md section 3) follows the CAVLCU paper (thesis section
// 2.1) adapted to every baseline category: one warp per macroblock, lane s codes slot s (0..26); each
// block's coefficients come in with one 32-byte load (a raster-order record's blocks are then permuted to
// scan order in registers, 8 byte permutes); TotalCoeff, TrailingOnes and the non-zero / +-1 /
// sign masks in one pass over registers; the code is built in a 64-bit accumulator and stored as
// big-endian 32-bit words. nA/nB come from warp shuffles inside a macroblock, from shared memory inside
// a region (8 consecutive macroblocks per thread block), and from a per-macroblock TotalCoeff record
// in the workspace behind a per-region "published" flag for earlier regions; regions are taken from an
// atomic counter, so a region only waits on regions that started before it.
//
// code_frame_cuda(records, mb_width, mb_height, slice_id, bits, len, workspace, workspace_bytes, stream):
//   - records, slice_id, bits, len and workspace are device pointers.
//   - records: mb_width * mb_height gpuec_mb (cavlc/mb.h) in raster order, 32-byte aligned (a cudaMalloc'd
//     array: sizeof(gpuec_mb) = 832 keeps every record aligned). Each record's levels are in scan or
//     raster order (coef_order, any mix within a frame); the output is the same. Records must be well
//     formed (records[a].mb_addr == a, kind <= GPUEC_MB_PCM, cbp as cavlc::mb_totals accepts, coef_order
//     0 or 1 in GPUEC_MB_NORMAL and GPUEC_MB_I16x16 records): code_frame_ref returns -1 for other input;
//     the kernel does not check it and then writes unspecified slot bytes and lengths (still only inside
//     the bits/len arrays; a coef_order other than 0 or 1 is read as scan order, the permutation is in
//     registers and reads nothing else). The addresses are not read.
//   - slice_id: one int32 per macroblock (any layout, as in code_frame_ref).
//   - bits: mb_width * mb_height * kMbSlots * kSlotBytes bytes, 4-byte aligned. len: mb_width *
//     mb_height * kMbSlots uint16, 2-byte aligned. Exactly what code_frame_ref writes is written: every
//     len entry; in each slot bytes [0, 4 * ceil(len / 32)) as big-endian 32-bit words with zero bits
//     after the code; the rest of every slot is not touched.
//   - workspace: at least code_frame_cuda_workspace_bytes(mb_width, mb_height) bytes, 256-byte aligned
//     (cudaMalloc), any contents; the call clears what it needs (one cudaMemsetAsync of 4 bytes per 8
//     macroblocks). Scratch for this call only: calls in flight at once need their own.
//   - 1 <= mb_width, mb_height and mb_width * mb_height <= kFrameCudaMaxMbs.
//   - Asynchronous: enqueued on `stream`, returns without synchronizing. No allocation.
//   - Errors are values, never exceptions: cudaErrorInvalidValue (this library's file and line) for
//     arguments out of contract (sizes, null or misaligned pointers, workspace too small), else the
//     first failing CUDA call. Faults inside the kernel appear at the next synchronization.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cavlc/frame.h"
#include "cavlc/mb.h"
#include "gpu/device.h"

struct CUstream_st;
typedef CUstream_st* cudaStream_t;  // the same declaration as in cuda_runtime_api.h

namespace cavlc {

constexpr int kFrameCudaMaxMbs = 1 << 22;  // far above 4K (240 x 135 = 32400 macroblocks)

// How neighbour TotalCoeffs travel between macroblocks. Both produce the same bytes. (A third, kFused on a
// persistent grid looping over regions, measured no different from kFused and is retired: tuning record in
// cavlc/src/cuda/frame.cu.)
enum class FrameCudaVariant {
  kFused,    // one kernel, in-kernel exchange (shared memory + published flags), a
             // thread block per region (region order from the atomic counter, not blockIdx)
  kTwoPass,  // two kernels: pass 1 writes every block's TotalCoeff to the workspace, pass 2 codes
};
constexpr int kFrameCudaVariantCount = 2;
// code_frame_cuda's variant: the two-pass one, 2-8 % faster than kFused on every real frame measured on the
// H200 (docs/benchmarks.md, CAVLCU on real frames).
constexpr FrameCudaVariant kFrameCudaDefault = FrameCudaVariant::kTwoPass;
const char* frame_cuda_variant_name(FrameCudaVariant v);

// Device workspace bytes code_frame_cuda needs for the frame size (enough for every variant).
size_t code_frame_cuda_workspace_bytes(int mb_width, int mb_height);

gpu::CudaError code_frame_cuda(const gpuec_mb* records, int mb_width, int mb_height, const int32_t* slice_id,
                               uint8_t* bits, uint16_t* len, void* workspace, size_t workspace_bytes,
                               cudaStream_t stream);

// code_frame_cuda with an explicit variant (benchmark and tests).
gpu::CudaError code_frame_cuda_variant(FrameCudaVariant variant, const gpuec_mb* records, int mb_width,
                                       int mb_height, const int32_t* slice_id, uint8_t* bits, uint16_t* len,
                                       void* workspace, size_t workspace_bytes, cudaStream_t stream);

}  // namespace cavlc
