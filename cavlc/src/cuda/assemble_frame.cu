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

struct ScanArgs {
  const gpuec_mb* records;
  const uint16_t* slot_len;
  const MbLead* lead;
  const FrameSlice* slices;
  int n_mbs, n_slices;
  uint32_t* ticket;
  uint32_t* status;  // [tiles]
  uint64_t* agg;     // [2 * tiles] a, b of the tile's step
  uint64_t* inc;     // [tiles] position after the tile
  uint64_t* pos;     // [n_mbs + 1]
  int32_t* info;     // [n_mbs]
  uint64_t* total;
};

__global__ void __launch_bounds__(kScanThreads) scan_kernel(ScanArgs p) {
  __shared__ uint32_t s_len_words[kScanThreads * kMbSlots / 2];
  __shared__ int32_t s_first[kScanThreads];
  __shared__ int32_t s_end[kScanThreads];
  __shared__ uint32_t s_tail[kScanThreads];
  __shared__ Step s_warp[kScanWarps];
  __shared__ uint64_t s_warp_pos[kScanWarps];
  __shared__ int s_tile;
  uint16_t* s_len = reinterpret_cast<uint16_t*>(s_len_words);

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  if (tid == 0) s_tile = static_cast<int>(atomicAdd(p.ticket, 1u));
  __syncthreads();
  const int tile = s_tile;
  const int t0 = tile * kScanThreads;
  const int cnt = min(kScanThreads, p.n_mbs - t0);
  const int i = t0 + tid;
  uint8_t kind = GPUEC_MB_SKIP;
  uint32_t lead = 0;  // loaded before the slices are known (read only for coded macroblocks in a slice)
  if (tid < cnt) {
    kind = __ldg(&p.records[i].kind);
    lead = __ldg(&p.lead[i].len);
  }

  // The tile's slot lengths, coalesced (t0 * kMbSlots is even: 4-byte loads when the array allows).
  {
    const uint16_t* src = p.slot_len + static_cast<size_t>(t0) * kMbSlots;
    const int n = cnt * kMbSlots;
    if ((reinterpret_cast<uintptr_t>(src) & 3) == 0) {
      const uint32_t* src_words = reinterpret_cast<const uint32_t*>(src);
      for (int k = tid; k < n / 2; k += kScanThreads) s_len_words[k] = __ldg(src_words + k);
      if ((n & 1) && tid == 0) s_len[n - 1] = __ldg(src + n - 1);
    } else {
      for (int k = tid; k < n; k += kScanThreads) s_len[k] = __ldg(src + k);
    }
  }

  // First slice ending after t0 (slice ends increase): 256-way probes, block-uniform loop.
  int lo = 0, hi = p.n_slices;  // the answer is in [lo, hi]
  while (lo < hi) {
    const int step = (hi - lo + kScanThreads - 1) / kScanThreads;
    const int k = lo + step * tid;
    bool before = false;
    if (k < hi) {
      const int2 fc = __ldg(reinterpret_cast<const int2*>(p.slices + k));
      before = int64_t{fc.x} + fc.y <= t0;
    }
    const int nb = __syncthreads_count(before);
    if (nb == 0) {
      hi = lo;
    } else {
      const int new_lo = lo + step * (nb - 1) + 1;
      hi = min(lo + step * nb, hi);
      lo = new_lo;
    }
  }
  const int s0 = lo;
  // Slices s0 .. s0 + 255 cover every slice that meets the tile (each holds one of its macroblocks).
  {
    const int k = s0 + tid;
    int32_t first = INT32_MAX, end = INT32_MAX;
    uint32_t tail = 0;
    if (k < p.n_slices) {
      const int2 fc = __ldg(reinterpret_cast<const int2*>(p.slices + k));
      first = fc.x;
      end = static_cast<int32_t>(min(int64_t{fc.x} + fc.y, int64_t{INT32_MAX}));
      tail = __ldg(&p.slices[k].tail_len);
    }
    s_first[tid] = first;
    s_end[tid] = end;
    s_tail[tid] = tail;
  }
  __syncthreads();

  Step e{0, 0, 0};
  int32_t info = kUncovered;
  if (tid < cnt) {
    int l = 0, h = kScanThreads;  // l: number of loaded slices starting at or before i
    while (l < h) {
      const int mid = (l + h) >> 1;
      if (s_first[mid] <= i) l = mid + 1; else h = mid;
    }
    const int j = l - 1;
    if (j >= 0 && i < s_end[j]) {
      const bool last = i == s_end[j] - 1;
      info = last ? s0 + j : kInside;
      if (kind != GPUEC_MB_SKIP) {
        if (kind == GPUEC_MB_PCM) {
          e = {lead, kPcmBits, 3};
        } else {
          uint32_t r = 0;
#pragma unroll
          for (int s = 0; s < kMbSlots; ++s) r += s_len[tid * kMbSlots + s];
          e = {0, uint64_t{lead} + r, 0};
        }
      }
      if (last) e = then(e, Step{s_tail[j], 0, 5});
    }
  }

  Step incl = e;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const Step o = shfl_up(incl, d);
    if (lane >= d) incl = then(o, incl);
  }
  Step excl = shfl_up(incl, 1);
  if (lane == 0) excl = Step{0, 0, 0};
  if (lane == 31) s_warp[warp] = incl;
  __syncthreads();

  if (warp == 0) {
    Step agg{0, 0, 0};
    for (int w = 0; w < kScanWarps; ++w) agg = then(agg, s_warp[w]);
    const uint64_t start = lookback(tile, agg, p.status, p.agg, p.inc, lane);
    if (lane == 0) {
      uint64_t x = start;
      for (int w = 0; w < kScanWarps; ++w) {
        s_warp_pos[w] = x;
        x = apply(s_warp[w], x);
      }
    }
  }
  __syncthreads();

  if (tid < cnt) {
    const uint64_t x = s_warp_pos[warp];
    p.pos[i] = apply(excl, x);
    p.info[i] = info;
    if (i == p.n_mbs - 1) {
      const uint64_t total = apply(incl, x);
      p.pos[p.n_mbs] = total;
      *p.total = total;
    }
  }
}

gpu::CudaError invalid(int line) {
  return gpu::CudaError{static_cast<int>(cudaErrorInvalidValue), __FILE__, line, "cudaErrorInvalidValue"};
}

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
  if (in.n_mbs < 1 || in.n_slices < 1) return invalid(__LINE__);
  if (!in.arena || !in.records || !in.slot_len || !in.lead || !in.slices || !out || !results || !total || !workspace)
    return invalid(__LINE__);
  if (misaligned(in.arena, 4) || misaligned(in.slot_len, 2) || misaligned(in.lead, 8) || misaligned(in.slices, 8) ||
      misaligned(out, 4) || out_bytes % 4 != 0 || misaligned(results, 8) || misaligned(total, 8) ||
      misaligned(workspace, 256))
    return invalid(__LINE__);
  if (in.records_bit % 8 != 0 || reinterpret_cast<const uint8_t*>(in.records) != in.arena + in.records_bit / 8)
    return invalid(__LINE__);
  if (workspace_bytes < assemble_frame_cuda_workspace_bytes(in.n_mbs, in.n_slices)) return invalid(__LINE__);

  const Workspace ws = carve(workspace, in.n_mbs);
  const int tiles = static_cast<int>((int64_t{in.n_mbs} + kScanThreads - 1) / kScanThreads);
  const ScanArgs sa{in.records, in.slot_len, in.lead, in.slices, in.n_mbs, in.n_slices, ws.ctrl, ws.ctrl + 1,
                    ws.agg,     ws.inc,      ws.pos,  ws.info,   total};
  GPUEC_CUDA_CHECK(cudaMemsetAsync(ws.ctrl, 0, ws.ctrl_bytes, stream));
  scan_kernel<<<tiles, kScanThreads, 0, stream>>>(sa);
  GPUEC_CUDA_CHECK_LAUNCH();
  const EmitArgs ea{reinterpret_cast<const uint32_t*>(in.arena),
                    in.records_bit,
                    in.slots_bit,
                    in.records,
                    in.slot_len,
                    in.lead,
                    in.slices,
                    in.n_mbs,
                    ws.pos,
                    ws.info,
                    reinterpret_cast<uint32_t*>(out),
                    out_bytes / 4,
                    results};
  const int blocks = static_cast<int>((int64_t{in.n_mbs} + kEmitWarps - 1) / kEmitWarps);
  emit_kernel<<<blocks, kEmitWarps * 32, 0, stream>>>(ea);
  GPUEC_CUDA_CHECK_LAUNCH();
  return {};
}

}  // namespace cavlc
