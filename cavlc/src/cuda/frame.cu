// The CAVLCU kernel (cavlc/frame_cuda.h), bit-exact twin of code_frame_ref (cavlc/src/frame.cpp).
//
// Work split: one warp per macroblock, lane s codes slot s (0..26; lanes 27..31 idle). The paper's
// half-warp per macroblock covers the 16 luma 4x4 blocks only; with Intra16x16 DC, chroma DC and chroma
// AC there are 27 blocks, which fit one warp, so every category is coded in the same pass with no second
// phase and the in-macroblock neighbours are one shuffle away. 5 of 32 lanes idle is cheaper than a
// second pass over the record.
//
// TotalCoeff does not depend on nC, so there is no chain between macroblocks: each macroblock first
// counts and publishes its totals (a 32-byte record: luma raster 0..15, chroma Cb/Cr raster 16..23,
// luma DC 24, chroma DC 25..26; the values neighbours see: skipped 0, I_PCM 16, uncoded 0), then reads its
// left/top neighbours' records and codes. Waits are therefore short: a region publishes before it waits.
//
// Tuning record (H200, tools/bench/bench_cavlcu_gpu.cu, random x264-like frames, median us per frame, QP40/QP10):
//   2160p fused 65/85, two-pass 47/70 with 45 registers (5 blocks/SM); a persistent grid changed nothing
//   (variant kFusedPersistent, retired; frame_kernel<kModeFused> still loops over tickets, so a smaller grid works);
//   __launch_bounds__(256, 8) (32 registers, 4 bytes spilled): fused 57/82, two-pass 47/76; 1080p fused
//   22/27. Up to 720p every variant is 14-21 us, launch and memset bound. Large frames are instruction bound
//   on the per-lane level/run loops (a warp runs as long as its longest block): next steps are a
//   precomputed level table for |level| < 64 (as cavlc.cpp does) and staging slot words in shared memory
//   for coalesced stores.
#include <cuda_runtime.h>

#include "cavlc/frame_cuda.h"
#include "frame_device.cuh"
#include "gpu/cuda_check.h"

namespace cavlc {
namespace {

constexpr size_t align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

struct Workspace {
  uint32_t* ticket;
  uint32_t* flags;
  uint32_t* tc;
  size_t header_bytes;  // ticket + flags: what the fused variant clears
};
Workspace carve(void* ws, int nmb, int nregions) {
  uint8_t* p = static_cast<uint8_t*>(ws);
  Workspace w;
  w.ticket = reinterpret_cast<uint32_t*>(p);
  w.flags = w.ticket + 1;
  w.header_bytes = 4 + static_cast<size_t>(nregions) * 4;
  w.tc = reinterpret_cast<uint32_t*>(p + align_up(w.header_bytes, 256));
  (void)nmb;
  return w;
}

}  // namespace

const char* frame_cuda_variant_name(FrameCudaVariant v) {
  switch (v) {
    case FrameCudaVariant::kFused: return "fused";
    case FrameCudaVariant::kTwoPass: return "two-pass";
  }
  return "?";
}

size_t code_frame_cuda_workspace_bytes(int mb_width, int mb_height) {
  if (mb_width < 1 || mb_height < 1 || static_cast<int64_t>(mb_width) * mb_height > kFrameCudaMaxMbs) return 0;
  const size_t nmb = static_cast<size_t>(mb_width) * mb_height;
  const size_t nregions = (nmb + kWarps - 1) / kWarps;
  return align_up(4 + nregions * 4, 256) + nmb * kTcWords * 4;
}

gpu::CudaError code_frame_cuda_variant(FrameCudaVariant variant, const gpuec_mb* records, int mb_width,
                                       int mb_height, const int32_t* slice_id, uint8_t* bits, uint16_t* len,
                                       void* workspace, size_t workspace_bytes, cudaStream_t stream) {
  if (mb_width < 1 || mb_height < 1 || static_cast<int64_t>(mb_width) * mb_height > kFrameCudaMaxMbs)
    return GPUEC_CUDA_INVALID();
  if (!records || !slice_id || !bits || !len || !workspace) return GPUEC_CUDA_INVALID();
  if (reinterpret_cast<uintptr_t>(records) % 32 || reinterpret_cast<uintptr_t>(bits) % 4 ||
      reinterpret_cast<uintptr_t>(len) % 2 || reinterpret_cast<uintptr_t>(workspace) % 256)
    return GPUEC_CUDA_INVALID();
  if (workspace_bytes < code_frame_cuda_workspace_bytes(mb_width, mb_height)) return GPUEC_CUDA_INVALID();
  const int nmb = mb_width * mb_height;
  const int nregions = (nmb + kWarps - 1) / kWarps;
  const Workspace ws = carve(workspace, nmb, nregions);
  const Frame f{records, slice_id, bits, len, ws.ticket, ws.flags, ws.tc, mb_width, nmb, nregions, nullptr};
  if (variant == FrameCudaVariant::kFused) {
    GPUEC_CUDA_CHECK(cudaMemsetAsync(ws.ticket, 0, ws.header_bytes, stream));
    frame_kernel<kModeFused><<<nregions, kThreads, 0, stream>>>(f);
    GPUEC_CUDA_CHECK_LAUNCH();
  } else if (variant == FrameCudaVariant::kTwoPass) {
    frame_kernel<kModeCount><<<nregions, kThreads, 0, stream>>>(f);
    GPUEC_CUDA_CHECK_LAUNCH();
    GPUEC_CUDA_CHECK(launch_pdl(frame_kernel<kModeCode>, nregions, kThreads, stream, f));
  } else {
    return GPUEC_CUDA_INVALID();
  }
  return {};
}

gpu::CudaError code_frame_cuda(const gpuec_mb* records, int mb_width, int mb_height, const int32_t* slice_id,
                               uint8_t* bits, uint16_t* len, void* workspace, size_t workspace_bytes,
                               cudaStream_t stream) {
  return code_frame_cuda_variant(kFrameCudaDefault, records, mb_width, mb_height, slice_id, bits, len,
                                 workspace, workspace_bytes, stream);
}

}  // namespace cavlc
