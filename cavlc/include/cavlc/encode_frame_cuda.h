// cavlc/encode_frame_cuda.h: a frame part coded AND assembled on the GPU in one submission with no memset:
// code_frame_cuda (cavlc/frame_cuda.h) and assemble_frame_cuda (cavlc/assemble_frame_cuda.h) in one call.
// Same bits as code_frame_ref followed by assemble_frame_ref (together its CPU twin). Host C++ API; no CUDA
// headers needed. Library gpuec_cavlc_cuda.
//
// Variants (cavlc/src/cuda/encode_frame.cu):
//   kTwoPass  four kernels: TotalCoeff count, coding, position scan, emit; each launched with programmatic
//             dependent launch (sm_90) so that it starts while the previous one ends; the scan leaves its
//             control words zero. Given the TotalCoeff records (tc_records below), three: no count. The
//             stage's default (kEncodeFrameCudaDefault), with the records of its commit check.
//   kFused    two kernels: the CAVLCU kernel with the scan folded in (regions of 8 macroblocks from an
//             atomic ticket code, compose their position steps and find their output position by decoupled
//             look-back over earlier regions), then emit. Fewer launches; slower from 720p up (the
//             look-back over small regions), faster for small frames.
//
// encode_frame_cuda(variant, in, mb_width, slice_index, slot_len, out, out_bytes, results, total,
//                   workspace, workspace_bytes, stream):
//   - in: the frame part as for assemble_frame_cuda (device pointers), n_mbs = rows * mb_width macroblocks
//     of a frame mb_width macroblocks wide (the part's first macroblock starts a row). The slot area
//     arena + in.slots_bit / 8 (n_mbs * kMbSlots * kSlotBytes bytes, 4-byte aligned) and slot_len
//     (== in.slot_len, n_mbs * kMbSlots entries) are WRITTEN by the call (code_frame_ref's output) and
//     then read by the assembly. in.records == arena + records_bit / 8 is 32-byte aligned.
//   - slice_index[i]: the index k of the slice (in.slices) whose range holds macroblock i. Neighbours
//     are available when they are in the same slice (as code_frame_ref with slice_id = slice_index).
//     A coded macroblock (not GPUEC_MB_SKIP) must be in a slice: an index outside [0, n_slices) or one
//     that does not match the ranges makes it add nothing to the output (which is then unspecified).
//     A SKIPPED macroblock may have any index, e.g. -1, inside a slice's range or outside every range:
//     it adds nothing either way, and with an index no slice has it is no neighbour of anything
//     (filler macroblocks: the re-entropy (avc/recoder.h) places slices of slice groups, and redundant
//     slices, in bands of a tall frame this way; the CPU twin code_frame_ref + assemble_frame_ref agrees).
//   - records well formed as for code_frame_cuda; slices in order, non-overlapping, inside [0, n_mbs)
//     as for assemble_frame_cuda. Not checked on the device; off contract the output is unspecified, but
//     nothing outside the arrays named here is read or written.
//   - writes results[0, n_slices), *total and out[0, packed_bytes(total)) exactly as assemble_frame_cuda
//     (nothing beyond out_bytes).
//   - workspace: workspace_bytes >= encode_frame_cuda_workspace_bytes(n_mbs), 256-byte aligned, ALL ZERO
//     before the first call (cudaMemset once, or encode_frame_cuda_workspace_clear); every call that runs
//     to the end leaves its control words zero again. Their place depends on workspace_bytes only (the
//     largest part the workspace holds), so calls with any frame sizes may share a workspace as long as
//     they pass the same workspace_bytes; clear it when that changes, and after a call that failed or
//     faulted. One call at a time per workspace (calls on one stream are fine).
//   - variant: FrameCudaVariant::kTwoPass or kFused (any other value: cudaErrorInvalidValue).
//   - tc_records (kTwoPass only; nullptr: counted on the GPU): n_mbs TotalCoeff records of
//     kTcRecordBytes (cavlc::tc_record of each macroblock's cavlc::mb_totals, zero for skipped ones),
//     4-byte aligned: the TotalCoeff pass is not run (3 kernels). The entropy stage has these totals
//     anyway (its commit check). Records that disagree with the coefficients give unspecified output.
//   - asynchronous on `stream`, no allocation; errors are values (cudaErrorInvalidValue for arguments out
//     of contract, else the first failing CUDA call); faults inside kernels appear at the next sync.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cavlc/assemble_frame.h"
#include "cavlc/frame_cuda.h"
#include "gpu/device.h"

struct CUstream_st;
typedef CUstream_st* cudaStream_t;  // the same declaration as in cuda_runtime_api.h

namespace cavlc {

// The variant the entropy stage uses (plugin/stage): measured the faster one on the H200 (docs/benchmarks.md).
constexpr FrameCudaVariant kEncodeFrameCudaDefault = FrameCudaVariant::kTwoPass;

// Device workspace bytes for a frame part of n_mbs macroblocks (0 when n_mbs is out of range).
size_t encode_frame_cuda_workspace_bytes(int n_mbs);

// Zero-fills a workspace (cudaMemsetAsync on `stream`).
gpu::CudaError encode_frame_cuda_workspace_clear(void* workspace, size_t workspace_bytes, cudaStream_t stream);

gpu::CudaError encode_frame_cuda(FrameCudaVariant variant, const FrameAssembly& in, int mb_width,
                                 const int32_t* slice_index, uint16_t* slot_len, uint8_t* out, uint64_t out_bytes,
                                 SliceResult* results, uint64_t* total, void* workspace, size_t workspace_bytes,
                                 cudaStream_t stream, const uint8_t* tc_records = nullptr);

}  // namespace cavlc
