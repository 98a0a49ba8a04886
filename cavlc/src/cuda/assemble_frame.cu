// GPU frame assembly (cavlc/assemble_frame_cuda.h), bit-exact twin of assemble_frame_ref
// (cavlc/src/assemble_frame.cpp). One memset and two kernels per frame part:
//
//   scan  one macroblock per thread, a tile of kScanThreads macroblocks per block (tiles taken from an
//         atomic counter). Every macroblock is a step of the frame's bit position, x -> ceil_{2^m}(x + a)
//         + b: identity for a skipped or uncovered macroblock, x + lead + R for a coded one (R: the sum
//         of its 27 slot lengths), ceil8(x + lead) + 3072 for I_PCM; the last macroblock of a slice
//         composes its step with x -> ceil32(x + tail_len) (the tail and the padding to the next
//         slice). Steps compose associatively (then() below), so one scan with a decoupled look-back
//         over the tiles gives pos[i], the absolute output bit where macroblock i's range starts: with
//         every slice starting on a multiple of 32 the I_PCM alignment of the absolute position is the
//         alignment of the slice position, so no segmented scan and no second scan over slices.
//   emit  one warp per macroblock. Lane p holds piece p of the macroblock's range (0 lead, 1..27 slots
//         or 1 alignment and 2 samples for I_PCM, 28 slice tail, 29 padding), placed by a warp scan. The
//         ranges partition [0, total); output word w belongs to the macroblock whose range holds its
//         first bit. Words inside the range are built by one lane each from the pieces (staged in shared
//         memory); the one word that straddles the end of the range is built by the whole warp, which
//         walks on into the following macroblocks (found by a 32-way search over pos) for the missing
//         bits. Every output word is written exactly once, with a plain store: no atomics, no zeroing,
//         and the cost follows the number of macroblocks, not the number of output tiles (a generic
//         segment packer walks every segment of a tile in one block, slow for small frames of many
//         short segments).
// Zero pieces (I_PCM alignment, padding) are not read from anywhere; in.zero_bit is not used.
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>

#include "assemble_device.cuh"
#include "cavlc/assemble_frame_cuda.h"
#include "gpu/cuda_check.h"

namespace cavlc {
namespace {

constexpr size_t align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

struct Workspace {
  uint32_t* ctrl;  // ticket, then status[tiles]: cleared by the call
  size_t ctrl_bytes;
  uint64_t* agg;
  uint64_t* inc;
  uint64_t* pos;
  int32_t* info;
  size_t bytes;
};

Workspace carve(void* base, int n_mbs) {
  const size_t tiles = (static_cast<size_t>(n_mbs) + kScanThreads - 1) / kScanThreads;
  uint8_t* p = static_cast<uint8_t*>(base);
  Workspace w{};
  size_t at = 0;
  w.ctrl = reinterpret_cast<uint32_t*>(p + at);
  w.ctrl_bytes = 4 + tiles * 4;
  at = align_up(at + w.ctrl_bytes, 256);
  w.agg = reinterpret_cast<uint64_t*>(p + at);
  at = align_up(at + tiles * 16, 256);
  w.inc = reinterpret_cast<uint64_t*>(p + at);
  at = align_up(at + tiles * 8, 256);
  w.pos = reinterpret_cast<uint64_t*>(p + at);
  at = align_up(at + (static_cast<size_t>(n_mbs) + 1) * 8, 256);
  w.info = reinterpret_cast<int32_t*>(p + at);
  at = align_up(at + static_cast<size_t>(n_mbs) * 4, 256);
  w.bytes = at;
  return w;
}

bool misaligned(const void* ptr, uintptr_t a) { return reinterpret_cast<uintptr_t>(ptr) % a != 0; }

}  // namespace

size_t assemble_frame_cuda_workspace_bytes(int n_mbs, int n_slices) {
  if (n_mbs < 1 || n_slices < 1) return 0;
  return carve(nullptr, n_mbs).bytes;
}

gpu::CudaError assemble_frame_cuda(const FrameAssembly& in, uint8_t* out, uint64_t out_bytes, SliceResult* results,
                                   uint64_t* total, void* workspace, size_t workspace_bytes, cudaStream_t stream) {
  if (in.n_mbs < 1 || in.n_slices < 1) return GPUEC_CUDA_INVALID();
  if (!in.arena || !in.records || !in.slot_len || !in.lead || !in.slices || !out || !results || !total || !workspace)
    return GPUEC_CUDA_INVALID();
  if (misaligned(in.arena, 4) || misaligned(in.slot_len, 2) || misaligned(in.lead, 8) || misaligned(in.slices, 8) ||
      misaligned(out, 4) || out_bytes % 4 != 0 || misaligned(results, 8) || misaligned(total, 8) ||
      misaligned(workspace, 256))
    return GPUEC_CUDA_INVALID();
  if (in.records_bit % 8 != 0 || reinterpret_cast<const uint8_t*>(in.records) != in.arena + in.records_bit / 8)
    return GPUEC_CUDA_INVALID();
  if (workspace_bytes < assemble_frame_cuda_workspace_bytes(in.n_mbs, in.n_slices)) return GPUEC_CUDA_INVALID();

  const Workspace ws = carve(workspace, in.n_mbs);
  const int tiles = static_cast<int>((int64_t{in.n_mbs} + kScanThreads - 1) / kScanThreads);
  const ScanArgs sa{in.records, in.slot_len, in.lead, in.slices, in.n_mbs, in.n_slices, ws.ctrl, ws.ctrl + 1,
                    ws.agg,     ws.inc,      ws.pos,  ws.info,   total,       nullptr,     nullptr};
  GPUEC_CUDA_CHECK(cudaMemsetAsync(ws.ctrl, 0, ws.ctrl_bytes, stream));
  scan_kernel<<<tiles, kScanThreads, 0, stream>>>(sa);
  GPUEC_CUDA_CHECK_LAUNCH();
  GPUEC_CUDA_CHECK(launch_emit(in, ws.pos, ws.info, out, out_bytes, results, stream));
  return {};
}

}  // namespace cavlc
