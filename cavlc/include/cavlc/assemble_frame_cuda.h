// cavlc/assemble_frame_cuda.h: GPU assembly of every slice of a frame part in one submission, the CUDA
// twin of cavlc::assemble_frame_ref (cavlc/assemble_frame.h: arena, segments, output layout). Host C++
// API; no CUDA headers needed. Library gpuec_cavlc_cuda.
//
// assemble_frame_cuda(in, out, out_bytes, results, total, workspace, workspace_bytes, stream):
//   - every pointer in `in`, and out, results, total, workspace are device pointers.
//   - writes results[0, in.n_slices), *total (frame total bits) and out[0, packed_bytes(total)) exactly
//     as assemble_frame_ref does, as long as packed_bytes(total) <= out_bytes (size out with
//     assemble_frame_bound_bits); beyond out_bytes nothing is written (the results still say the sizes).
//   - out 4-byte aligned, out_bytes a multiple of 4; workspace >= assemble_frame_cuda_workspace_bytes(),
//     256-byte aligned, any contents; scratch for this call only.
//   - slices must be in order, non-overlapping, inside [0, n_mbs) and records well formed (the host
//     builds them): not checked on the device; then the output is unspecified but nothing outside the
//     arena, the input arrays, out[0, out_bytes), results, total and the workspace is read or written.
//   - asynchronous (enqueued on `stream`), no allocation, no synchronization.
//   - errors are values: cudaErrorInvalidValue for arguments out of contract (n_mbs or n_slices < 1, a null
//     pointer, the alignments above, slot_len not 2-byte, lead, slices, results, total not 8-byte aligned,
//     records != arena + records_bit / 8, workspace too small), else the first failing CUDA call; faults
//     inside kernels appear at the next synchronization.
//   - work: one cudaMemsetAsync (4 bytes per 256 macroblocks) and two kernels (cavlc/src/cuda/
//     assemble_frame.cu): a scan of the macroblocks' position steps with a decoupled look-back, then one warp
//     per macroblock writing the output words whose first bit lies in its range (plain stores, no atomics,
//     no vle::pack_cuda). Workspace: about 12 bytes per macroblock.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cavlc/assemble_frame.h"
#include "gpu/device.h"

struct CUstream_st;
typedef CUstream_st* cudaStream_t;  // the same declaration as in cuda_runtime_api.h

namespace cavlc {

// Device workspace bytes for a frame part (0 when n_mbs or n_slices < 1). Host-only, cheap.
size_t assemble_frame_cuda_workspace_bytes(int n_mbs, int n_slices);

gpu::CudaError assemble_frame_cuda(const FrameAssembly& in, uint8_t* out, uint64_t out_bytes, SliceResult* results,
                                   uint64_t* total, void* workspace, size_t workspace_bytes, cudaStream_t stream);

}  // namespace cavlc
