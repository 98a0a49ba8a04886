// A frame part coded and assembled on the GPU (cavlc/encode_frame_cuda.h), no memset per call.
//
// kTwoPass: the kernels of code_frame_cuda's two-pass variant (count, code) and of assemble_frame_cuda
// (scan, emit), each launched with programmatic dependent launch so that it starts while the one before
// ends (its prologue reads only inputs; griddepcontrol.wait comes before the first read of the previous
// kernel's output); the scan's last tile zeroes its control words.
//
// kFused: encode_kernel, the CAVLCU kernel with the assembly's position scan folded in, then emit.
// One thread block per region of kWarps macroblocks, regions in ticket order (atomic counter, so a region
// only ever waits on regions that started before it). Per region:
//   1. count every lane's block and publish the TotalCoeff records; wait for the left / top regions as
//      code_frame_cuda's fused kernel does;
//   2. code the 27 slots of every macroblock; the warp sum of the slot lengths is the macroblock's residual
//      length R;
//   3. the macroblock's position step (assemble_frame.cu: x + lead + R, I_PCM ceil8(x + lead) + 3072,
//      skipped identity, the slice's tail and padding after its last macroblock), the region's composed
//      step, and its start position by decoupled look-back over earlier regions (lookback(), shared with
//      the assembly's scan); pos[] and info[] for the emit kernel;
//   4. the last region to finish (a done counter) zeroes the ticket, the done counter, the flags and the
//      look-back status words of this call: the workspace is ready for the next call.
// Fewer launches, but the look-back over 8-macroblock regions costs more than it saves from 720p up
// (docs/benchmarks.md); kept for small frames and as the measured alternative.
#include <cuda_runtime.h>

#include <cstdint>

#include "assemble_device.cuh"
#include "cavlc/encode_frame_cuda.h"
#include "frame_device.cuh"
#include "gpu/cuda_check.h"

namespace cavlc {
namespace {

struct EncodeArgs {
  Frame f;  // recs, slice_id (= slice_index), bits (slot area), len, ticket, flags, tc, mb_width, nmb, nregions
  const MbLead* lead;
  const FrameSlice* slices;
  int n_slices;
  uint32_t* done;    // regions finished
  uint32_t* status;  // [nregions] look-back status
  uint64_t* agg;     // [2 * nregions]
  uint64_t* inc;     // [nregions]
  uint64_t* pos;     // [nmb + 1]
  int32_t* info;     // [nmb]
  uint64_t* total;
};

// The position step of macroblock a with residual length r (assemble_frame.cu scan_kernel), and its info.
__device__ __forceinline__ Step mb_step(const EncodeArgs& p, int a, int kind, uint32_t r, int32_t* info) {
  Step e{0, 0, 0};
  *info = kUncovered;
  const int k = __ldg(p.f.slice_id + a);
  if (k < 0 || k >= p.n_slices) return e;
  const int2 fc = __ldg(reinterpret_cast<const int2*>(p.slices + k));
  if (a < fc.x || int64_t{a} >= int64_t{fc.x} + fc.y) return e;
  const bool last = int64_t{a} == int64_t{fc.x} + fc.y - 1;
  *info = last ? k : kInside;
  if (kind != GPUEC_MB_SKIP) {
    const uint32_t lead = __ldg(&p.lead[a].len);
    e = kind == GPUEC_MB_PCM ? Step{lead, kPcmBits, 3} : Step{0, uint64_t{lead} + r, 0};
  }
  if (last) e = then(e, Step{__ldg(&p.slices[k].tail_len), 0, 5});
  return e;
}

__global__ void __launch_bounds__(kThreads, 6) encode_kernel(EncodeArgs p) {
  constexpr int kMode = kModeFused;
  __shared__ uint32_t s_tab[kTableWords];
  __shared__ uint32_t s_tc[kWarps][kTcWords];
  __shared__ Step s_step[kWarps];
  __shared__ uint64_t s_pos[kWarps];
  __shared__ int s_region;
  __shared__ bool s_last;
  const Frame& f = p.f;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  pdl_trigger();
  for (int i = threadIdx.x; i < kTableWords; i += kThreads) s_tab[i] = reinterpret_cast<const uint32_t*>(&g_tables)[i];
  const DeviceTables& T = *reinterpret_cast<const DeviceTables*>(s_tab);
  if (threadIdx.x == 0) s_region = static_cast<int>(atomicAdd(f.ticket, 1u));
  __syncthreads();  // tables, ticket
  const int r = s_region;  // < nregions: the grid has one block per region
  const int first = r * kWarps;
  const int a = first + warp;
  const bool active = a < f.nmb;  // warp-uniform
  Lane L{};
  if (active) L = count_mb(f, s_tc, a, warp, lane, true, true);
  publish_and_wait(f, r, first);
  if (active) {
    int bits = code_mb_lane<kMode>(f, T, s_tc, L, a, first, lane);
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) bits += __shfl_xor_sync(kFull, bits, d);
    if (lane == 0) {
      int32_t info;
      s_step[warp] = mb_step(p, a, L.kind, static_cast<uint32_t>(bits), &info);
      p.info[a] = info;
    }
  } else if (lane == 0) {
    s_step[warp] = Step{0, 0, 0};
  }
  __syncthreads();

  if (warp == 0) {
    Step agg{0, 0, 0};
#pragma unroll
    for (int w = 0; w < kWarps; ++w) agg = then(agg, s_step[w]);
    const uint64_t start = lookback(r, agg, p.status, p.agg, p.inc, lane);
    if (lane < kWarps) {  // position of macroblock first + lane: the steps before it composed onto start
      Step before{0, 0, 0};
      for (int w = 0; w < lane; ++w) before = then(before, s_step[w]);
      s_pos[lane] = apply(before, start);
    }
    if (lane == 0 && first + kWarps >= f.nmb) {  // the last region: the frame total
      const uint64_t t = apply(agg, start);
      p.pos[f.nmb] = t;
      *p.total = t;
    }
  }
  __syncthreads();
  if (active && lane == 0) p.pos[a] = s_pos[warp];

  // Every read of this call's control words by this block is done: count the block, and let the last one
  // clear them for the next call.
  if (threadIdx.x == 0) {
    __threadfence();
    s_last = atomicAdd(p.done, 1u) == static_cast<uint32_t>(f.nregions) - 1;
  }
  __syncthreads();
  if (s_last) {
    __threadfence();
    for (int i = threadIdx.x; i < f.nregions; i += kThreads) {
      p.status[i] = 0;
      if (kMode == kModeFused) f.flags[i] = 0;
    }
    if (threadIdx.x == 0) {
      *f.ticket = 0;
      *p.done = 0;
    }
  }
}

constexpr size_t align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

// [ticket, done, flags[cap regions], status[cap regions]] (zero between calls) | agg | inc | tc | pos | info.
// The control words are laid out for the workspace's capacity, not for the call's n_mbs, so that they sit
// at the same place in every call that passes the same workspace_bytes, whatever its frame size.
struct Workspace {
  uint32_t *ticket, *done, *flags, *status;
  uint64_t *agg, *inc, *pos;
  uint32_t *tc, *mb_bits;
  int32_t* info;
  size_t ctrl_bytes, bytes;
};

Workspace carve(void* base, int cap_mbs) {
  const size_t nmb = static_cast<size_t>(cap_mbs);
  const size_t nregions = (nmb + kWarps - 1) / kWarps;
  uint8_t* p = static_cast<uint8_t*>(base);
  Workspace w{};
  size_t at = 0;
  w.ticket = reinterpret_cast<uint32_t*>(p);
  w.done = w.ticket + 1;
  w.flags = w.ticket + 2;
  w.status = w.flags + nregions;
  w.ctrl_bytes = (2 + 2 * nregions) * 4;
  at = align_up(w.ctrl_bytes, 256);
  w.agg = reinterpret_cast<uint64_t*>(p + at);
  at = align_up(at + nregions * 16, 256);
  w.inc = reinterpret_cast<uint64_t*>(p + at);
  at = align_up(at + nregions * 8, 256);
  w.tc = reinterpret_cast<uint32_t*>(p + at);
  at = align_up(at + nmb * kTcWords * 4, 256);
  w.pos = reinterpret_cast<uint64_t*>(p + at);
  at = align_up(at + (nmb + 1) * 8, 256);
  w.info = reinterpret_cast<int32_t*>(p + at);
  at = align_up(at + nmb * 4, 256);
  w.mb_bits = reinterpret_cast<uint32_t*>(p + at);
  at = align_up(at + nmb * 4, 256);
  w.bytes = at;
  return w;
}

// The largest frame part (macroblocks) a workspace of `bytes` holds; 0 if none. carve() grows with cap.
int capacity(size_t bytes) {
  if (bytes < carve(nullptr, 1).bytes) return 0;
  int lo = 1, hi = kFrameCudaMaxMbs;
  while (lo < hi) {
    const int mid = lo + (hi - lo + 1) / 2;
    if (carve(nullptr, mid).bytes <= bytes) lo = mid; else hi = mid - 1;
  }
  return lo;
}

bool misaligned(const void* ptr, uintptr_t a) { return reinterpret_cast<uintptr_t>(ptr) % a != 0; }

}  // namespace

size_t encode_frame_cuda_workspace_bytes(int n_mbs) {
  if (n_mbs < 1 || n_mbs > kFrameCudaMaxMbs) return 0;
  return carve(nullptr, n_mbs).bytes;
}

gpu::CudaError encode_frame_cuda_workspace_clear(void* workspace, size_t workspace_bytes, cudaStream_t stream) {
  if (!workspace) return GPUEC_CUDA_INVALID();
  GPUEC_CUDA_CHECK(cudaMemsetAsync(workspace, 0, workspace_bytes, stream));
  return {};
}

gpu::CudaError encode_frame_cuda(FrameCudaVariant variant, const FrameAssembly& in, int mb_width,
                                 const int32_t* slice_index, uint16_t* slot_len, uint8_t* out, uint64_t out_bytes,
                                 SliceResult* results, uint64_t* total, void* workspace, size_t workspace_bytes,
                                 cudaStream_t stream, const uint8_t* tc_records) {
  if (variant != FrameCudaVariant::kFused && variant != FrameCudaVariant::kTwoPass) return GPUEC_CUDA_INVALID();
  if (tc_records && (variant != FrameCudaVariant::kTwoPass || misaligned(tc_records, 4))) return GPUEC_CUDA_INVALID();
  if (in.n_mbs < 1 || in.n_mbs > kFrameCudaMaxMbs || in.n_slices < 1 || mb_width < 1 || in.n_mbs % mb_width != 0)
    return GPUEC_CUDA_INVALID();
  if (!in.arena || !in.records || !in.slot_len || !in.lead || !in.slices || !slice_index || !out || !results ||
      !total || !workspace || in.slot_len != slot_len)
    return GPUEC_CUDA_INVALID();
  if (misaligned(in.arena, 4) || misaligned(slot_len, 2) || misaligned(in.lead, 8) || misaligned(in.slices, 8) ||
      misaligned(slice_index, 4) || misaligned(out, 4) || out_bytes % 4 != 0 || misaligned(results, 8) ||
      misaligned(total, 8) || misaligned(workspace, 256) || misaligned(in.records, 32))
    return GPUEC_CUDA_INVALID();
  if (in.records_bit % 8 != 0 || reinterpret_cast<const uint8_t*>(in.records) != in.arena + in.records_bit / 8 ||
      in.slots_bit % 32 != 0)
    return GPUEC_CUDA_INVALID();
  const int cap = capacity(workspace_bytes);
  if (cap < in.n_mbs) return GPUEC_CUDA_INVALID();

  const Workspace ws = carve(workspace, cap);
  const int nregions = (in.n_mbs + kWarps - 1) / kWarps;
  // The slot area is part of the arena: written here, read by the emit kernel.
  uint8_t* slot_bits = const_cast<uint8_t*>(in.arena) + in.slots_bit / 8;
  Frame f{in.records, slice_index, slot_bits, slot_len, ws.ticket, ws.flags, ws.tc, mb_width, in.n_mbs, nregions, nullptr};
  const EncodeArgs ea{f,      in.lead, in.slices, in.n_slices, ws.done, ws.status,
                      ws.agg, ws.inc,  ws.pos,    ws.info,     total};
  if (variant == FrameCudaVariant::kTwoPass) {
    // count, code, scan, emit: the kernels of code_frame_cuda (two-pass) and assemble_frame_cuda, each
    // launched to overlap the end of the one before (PDL); the scan clears its control words itself.
    f.mb_bits = ws.mb_bits;  // the code pass sums each macroblock's slots for the scan
    if (tc_records) {  // the caller's TotalCoeff records: no count pass (the code kernel only reads f.tc)
      f.tc = reinterpret_cast<uint32_t*>(const_cast<uint8_t*>(tc_records));
      frame_kernel<kModeCode><<<nregions, kThreads, 0, stream>>>(f);
      GPUEC_CUDA_CHECK_LAUNCH();
    } else {
      frame_kernel<kModeCount><<<nregions, kThreads, 0, stream>>>(f);
      GPUEC_CUDA_CHECK_LAUNCH();
      GPUEC_CUDA_CHECK(launch_pdl(frame_kernel<kModeCode>, nregions, kThreads, stream, f));
    }
    const int tiles = (in.n_mbs + kScanThreads - 1) / kScanThreads;
    const ScanArgs sa{in.records, slot_len, in.lead, in.slices, in.n_mbs, in.n_slices, ws.ticket, ws.status,
                      ws.agg,     ws.inc,   ws.pos,  ws.info,   total,    ws.done,      ws.mb_bits};
    GPUEC_CUDA_CHECK(launch_pdl(scan_kernel, tiles, kScanThreads, stream, sa));
  } else {
    // the fused kernel (coding, position steps, look-back over regions), then emit
    encode_kernel<<<nregions, kThreads, 0, stream>>>(ea);
    GPUEC_CUDA_CHECK_LAUNCH();
  }
  GPUEC_CUDA_CHECK(launch_emit(in, ws.pos, ws.info, out, out_bytes, results, stream));
  return {};
}

}  // namespace cavlc
