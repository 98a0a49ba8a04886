// Device code of the frame assembly shared by assemble_frame.cu (assemble_frame_cuda) and encode_frame.cu
// (encode_frame_cuda): position steps and their composition, and the emit kernel (one warp per macroblock
// writing the output words whose first bit lies in its range). See assemble_frame.cu for the method.
// Internal: included by .cu files of gpuec_cavlc_cuda only.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "cavlc/assemble_frame.h"
#include "cavlc/frame.h"
#include "gpu/device/lookback.cuh"
#include "gpu/device/search.cuh"
#include "sync_device.cuh"

namespace cavlc {
namespace {

constexpr int kScanThreads = 256;  // macroblocks per scan tile
constexpr int kScanWarps = kScanThreads / 32;
constexpr int kEmitWarps = 8;  // macroblocks per emit block
constexpr unsigned kFull = 0xffffffffu;

constexpr uint64_t kRecordBits = sizeof(gpuec_mb) * 8;
constexpr uint64_t kSlotBits = kSlotBytes * 8;
constexpr uint32_t kPcmBits = 384 * 8;
constexpr uint64_t kZeroSrc = UINT64_MAX;  // source of a piece made of zero bits

// Per-macroblock state between the kernels.
constexpr int32_t kUncovered = -2;  // in no slice: empty range
constexpr int32_t kInside = -1;     // in a slice, not its last macroblock (else: the slice index)

static_assert(offsetof(MbLead, src_bit) == 0 && offsetof(MbLead, len) == 8 && sizeof(MbLead) == 16, "layout");
static_assert(offsetof(FrameSlice, first_mb) == 0 && offsetof(FrameSlice, mb_count) == 4, "layout");
static_assert(sizeof(FrameSlice) % 8 == 0 && sizeof(SliceResult) == 16, "layout");

// x -> ceil_{2^m}(x + a) + b, m in {0, 3, 5}.
struct Step {
  uint64_t a, b;
  uint32_t m;
};

__device__ __forceinline__ uint64_t ceil_pow2(uint64_t x, uint32_t m) {
  const uint64_t mask = (uint64_t{1} << m) - 1;
  return (x + mask) & ~mask;
}
__device__ __forceinline__ uint64_t apply(const Step& f, uint64_t x) { return ceil_pow2(x + f.a, f.m) + f.b; }

// f, then g. With c = f.b + g.a and 2^mf, 2^mg dividing one another:
//   ceil_G(ceil_F(y) + c) = ceil_F(y) + ceil_G(c)  when G <= F (ceil_F(y) is a multiple of G),
//   ceil_G(ceil_F(y) + c) = ceil_G(y + ceil_F(c))  when F <= G.
__device__ __forceinline__ Step then(const Step& f, const Step& g) {
  const uint64_t c = f.b + g.a;
  if (g.m == 0) return {f.a, c + g.b, f.m};
  if (f.m == 0) return {f.a + c, g.b, g.m};
  if (f.m >= g.m) return {f.a, ceil_pow2(c, g.m) + g.b, f.m};
  return {f.a + ceil_pow2(c, f.m), g.b, g.m};
}

__device__ __forceinline__ Step shfl_up(const Step& f, int d) {
  return {__shfl_up_sync(kFull, f.a, d), __shfl_up_sync(kFull, f.b, d), __shfl_up_sync(kFull, f.m, d)};
}
__device__ __forceinline__ Step shfl_down(const Step& f, int d) {
  return {__shfl_down_sync(kFull, f.a, d), __shfl_down_sync(kFull, f.b, d), __shfl_down_sync(kFull, f.m, d)};
}
__device__ __forceinline__ Step shfl(const Step& f, int src) {
  return {__shfl_sync(kFull, f.a, src), __shfl_sync(kFull, f.b, src), __shfl_sync(kFull, f.m, src)};
}

// The position scan's combine op for gpu::device::tile_exclusive_prefix (gpu/device/lookback.cuh): a tile's
// aggregate is the composition of its steps (a, b in agg[2 t], agg[2 t + 1], m as the status payload), its
// inclusive prefix the position after it (inc[t]).
struct StepOp {
  using Aggregate = Step;
  using Prefix = uint64_t;
  uint64_t* agg;
  uint64_t* inc;
  __device__ __forceinline__ static Step identity() { return Step{0, 0, 0}; }
  __device__ __forceinline__ static Step then(const Step& f, const Step& g) { return cavlc::then(f, g); }
  __device__ __forceinline__ static uint64_t apply(const Step& f, uint64_t x) { return cavlc::apply(f, x); }
  __device__ __forceinline__ uint32_t store_aggregate(int t, const Step& f) const {
    agg[2 * t] = f.a;
    agg[2 * t + 1] = f.b;
    return f.m;
  }
  __device__ __forceinline__ Step load_aggregate(int t, uint32_t m) const {
    return Step{__ldcg(agg + 2 * t), __ldcg(agg + 2 * t + 1), m};
  }
  __device__ __forceinline__ void store_prefix(int t, uint64_t x) const { inc[t] = x; }
  __device__ __forceinline__ uint64_t load_prefix(int t) const { return __ldcg(inc + t); }
  __device__ __forceinline__ static Step shfl_down(const Step& f, int d) { return cavlc::shfl_down(f, d); }
  __device__ __forceinline__ static Step shfl(const Step& f, int src) { return cavlc::shfl(f, src); }
};

// The position at tile `tile`'s first macroblock, its steps composing to `agg` (all lanes of one warp; every
// lane gets it): decoupled look-back over the earlier tiles (gpu/device/lookback.cuh). status[] words are 0
// until published; tile 0 starts at 0.
__device__ __forceinline__ uint64_t lookback(int tile, const Step& agg, uint32_t* status, uint64_t* agg_out,
                                             uint64_t* inc, int lane) {
  return gpu::device::tile_exclusive_prefix(tile, agg, status, StepOp{agg_out, inc}, lane);
}

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
  uint32_t* done;  // nullptr, or a counter of finished tiles: the last one zeroes ticket, done and status[]
  const uint32_t* mb_bits;  // nullptr, or [n_mbs] the sum of each macroblock's slot lengths (then slot_len
                            // is not read here)
};

// The position scan (assemble_frame.cu). With p.done the kernel leaves its control words zero when it ends
// (no memset before the next call on the same words).
__global__ void __launch_bounds__(kScanThreads) scan_kernel(ScanArgs p) {
  __shared__ uint32_t s_len_words[kScanThreads * kMbSlots / 2];
  __shared__ int32_t s_first[kScanThreads];
  __shared__ int32_t s_end[kScanThreads];
  __shared__ uint32_t s_tail[kScanThreads];
  __shared__ Step s_warp[kScanWarps];
  __shared__ uint64_t s_warp_pos[kScanWarps];
  __shared__ int s_tile;
  __shared__ bool s_last;
  uint16_t* s_len = reinterpret_cast<uint16_t*>(s_len_words);

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  pdl_trigger();
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

  // First slice ending after t0 (slice ends increase): one after the last one ending at or before t0, found
  // by the whole block in 256-way rounds; slice -1 stands for "none" (it ends at 0 <= t0).
  const int s0 = 1 + gpu::device::search_last<gpu::device::BlockGroup<kScanThreads>>(-1, p.n_slices, [&](int k) {
                   if (k < 0) return true;
                   const int2 fc = __ldg(reinterpret_cast<const int2*>(p.slices + k));
                   return int64_t{fc.x} + fc.y <= t0;
                 });
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
  pdl_wait();  // everything above reads inputs only; the slot lengths come from the coding kernel
  uint32_t mb_bits = 0;
  if (p.mb_bits) {
    if (tid < cnt) mb_bits = __ldg(p.mb_bits + i);
  } else {  // the tile's slot lengths, coalesced (t0 * kMbSlots is even: 4-byte loads when the array allows)
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
          uint32_t r = mb_bits;
          if (!p.mb_bits) {
#pragma unroll
            for (int s = 0; s < kMbSlots; ++s) r += s_len[tid * kMbSlots + s];
          }
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
  if (p.done) {  // every read of the control words by this block is done (the look-back ran above)
    const int tiles = (p.n_mbs + kScanThreads - 1) / kScanThreads;
    if (tid == 0) {
      __threadfence();
      s_last = atomicAdd(p.done, 1u) == static_cast<uint32_t>(tiles) - 1;
    }
    __syncthreads();
    if (s_last) {
      __threadfence();
      for (int t = tid; t < tiles; t += kScanThreads) p.status[t] = 0;
      if (tid == 0) {
        *p.ticket = 0;
        *p.done = 0;
      }
    }
  }
}

struct EmitArgs {
  const uint32_t* arena;  // the arena as 32-bit words (big-endian bytes)
  uint64_t records_bit, slots_bit;
  const gpuec_mb* records;
  const uint16_t* slot_len;
  const MbLead* lead;
  const FrameSlice* slices;
  int n_mbs;
  const uint64_t* pos;
  const int32_t* info;
  uint32_t* out;
  uint64_t out_words;
  SliceResult* results;
};

// The m (1..32) arena bits at bit q, left-aligned. Reads only the words that hold them.
__device__ __forceinline__ uint32_t read_bits(const uint32_t* arena, uint64_t q, int m) {
  const uint64_t w = q >> 5;
  const int sh = static_cast<int>(q & 31);
  const uint32_t hi = __byte_perm(__ldg(arena + w), 0, 0x0123);
  const uint32_t lo = sh + m > 32 ? __byte_perm(__ldg(arena + w + 1), 0, 0x0123) : 0u;
  const uint32_t v = __funnelshift_l(lo, hi, sh);
  return m == 32 ? v : v & ~(0xffffffffu >> m);
}

struct Piece {
  uint64_t start;  // output bit
  uint64_t src;    // arena bit, or kZeroSrc
  uint32_t len;
};

// Lane `lane`'s piece of macroblock i (info != kUncovered), whose range starts at output bit x. Every
// lane of the warp calls it. All loads are issued before the kind is known (one round trip).
__device__ __forceinline__ Piece mb_piece(const EmitArgs& p, int i, uint64_t x, int32_t info, int lane) {
  const uint8_t kind = __ldg(&p.records[i].kind);
  const uint64_t slot = static_cast<uint64_t>(i) * kMbSlots + (lane - 1);
  const uint32_t lead_len = lane <= 1 ? __ldg(&p.lead[i].len) : 0u;
  const uint64_t lead_src = lane == 0 ? __ldg(&p.lead[i].src_bit) : 0u;
  const uint32_t slot_len = lane >= 1 && lane <= kMbSlots ? __ldg(p.slot_len + slot) : 0u;
  const bool tail = lane == 28 && info >= 0;
  const uint32_t tail_len = tail ? __ldg(&p.slices[info].tail_len) : 0u;
  const uint64_t tail_src = tail ? __ldg(&p.slices[info].tail_src_bit) : 0u;
  uint32_t len = 0;
  uint64_t src = kZeroSrc;
  if (kind != GPUEC_MB_SKIP) {
    if (lane == 0) {
      len = lead_len;
      src = lead_src;
    } else if (kind == GPUEC_MB_PCM) {
      if (lane == 1) {
        len = (8u - static_cast<uint32_t>((x + lead_len) & 7)) & 7;  // pcm_alignment_zero_bit
      } else if (lane == 2) {
        len = kPcmBits;
        src = p.records_bit + static_cast<uint64_t>(i) * kRecordBits;
      }
    } else if (lane <= kMbSlots) {
      len = slot_len;
      src = p.slots_bit + slot * kSlotBits;
    }
  }
  if (tail) {
    len = tail_len;
    src = tail_src;
  }
  uint64_t incl = len;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const uint64_t v = __shfl_up_sync(kFull, incl, d);
    if (lane >= d) incl += v;
  }
  // Lane 29: zero bits from the end of the tail to the next multiple of 32 (where the next slice starts).
  const uint64_t tail_end = x + __shfl_sync(kFull, incl, 28);
  const uint32_t pad = info >= 0 ? static_cast<uint32_t>((32 - (tail_end & 31)) & 31) : 0u;
  if (lane == 29) len = pad;
  if (lane >= 29) incl += pad;
  return Piece{x + incl - len, src, len};
}

// The bits that piece q puts into output bits [lo, hi), placed in the output word starting at bit W.
__device__ __forceinline__ uint32_t piece_bits(const uint32_t* arena, const Piece& q, uint64_t W, uint64_t lo,
                                               uint64_t hi) {
  const uint64_t a = q.start > lo ? q.start : lo;
  const uint64_t b = q.start + q.len < hi ? q.start + q.len : hi;
  if (b <= a || q.src == kZeroSrc) return 0u;
  return read_bits(arena, q.src + (a - q.start), static_cast<int>(b - a)) >> (a - W);
}

__global__ void __launch_bounds__(kEmitWarps * 32) emit_kernel(EmitArgs p) {
  __shared__ uint64_t s_start[kEmitWarps][32];
  __shared__ uint64_t s_src[kEmitWarps][32];
  __shared__ uint32_t s_plen[kEmitWarps][32];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int i = blockIdx.x * kEmitWarps + warp;
  pdl_trigger();
  pdl_wait();  // pos and info come from the scan
  if (i >= p.n_mbs) return;  // warp-uniform
  const int32_t info = __ldg(p.info + i);
  const uint64_t x = __ldg(p.pos + i);
  const uint64_t x_next = __ldg(p.pos + i + 1);
  if (info == kUncovered || (info == kInside && x_next == x)) return;  // nothing to write (skipped, mostly)
  const Piece pc = mb_piece(p, i, x, info, lane);
  const uint64_t e = __shfl_sync(kFull, pc.start + pc.len, 31);  // end of the macroblock's range
  if (info >= 0 && lane == 28) {
    // first_mb is in [0, n_mbs) by contract; clamped so that out-of-contract input stays inside pos[].
    const int first = min(max(__ldg(&p.slices[info].first_mb), 0), p.n_mbs);
    const uint64_t out_bit = __ldg(p.pos + first);
    p.results[info] = SliceResult{out_bit, pc.start + pc.len - out_bit};
  }
  if (e == x) return;

  // Words whose 32 bits all lie in [x, e): one lane each.
  s_start[warp][lane] = pc.start;
  s_src[warp][lane] = pc.src;
  s_plen[warp][lane] = pc.len;
  __syncwarp();
  const uint64_t w_full_end = e >> 5;
  for (uint64_t w = ((x + 31) >> 5) + lane; w < w_full_end && w < p.out_words; w += 32) {
    const uint64_t W = w << 5;
    int k = 0;  // the last piece starting at or before W: the one holding bit W
#pragma unroll
    for (int half = 16; half > 0; half >>= 1)
      if (s_start[warp][k + half] <= W) k += half;
    uint32_t v = 0;
    uint64_t at = W;
    for (; at < W + 32 && k < 32; ++k) {
      const uint64_t off = at - s_start[warp][k];
      const uint32_t plen = s_plen[warp][k];
      if (off >= plen) continue;  // empty piece
      const uint64_t left = W + 32 - at;
      const int m = static_cast<int>(plen - off < left ? plen - off : left);
      const uint64_t src = s_src[warp][k];
      if (src != kZeroSrc) v |= read_bits(p.arena, src + off, m) >> (at - W);
      at += m;
    }
    p.out[w] = __byte_perm(v, 0, 0x0123);
  }

  // The word that holds bit e - 1 and ends past e, when it starts inside [x, e): the whole warp builds
  // it, walking into the following macroblocks.
  const uint64_t W = e & ~uint64_t{31};
  if ((e & 31) == 0 || W < x) return;
  uint32_t v = piece_bits(p.arena, pc, W, W, e);
  uint64_t at = e;
  int j = i;
  while (at < W + 32) {
    // The macroblock whose range holds bit `at`: the last j with pos[j] <= at (pos[n_mbs] = total > at).
    int lo = j + 1, hi = p.n_mbs;
    if (lo >= hi) break;  // off contract: nothing follows
    if (__ldg(p.pos + lo + 1) > at) hi = lo + 1;
    j = gpu::device::search_last<gpu::device::WarpGroup>(lo, hi, [&](int k) { return __ldg(p.pos + k) <= at; });
    const int32_t info_j = __ldg(p.info + j);
    if (info_j == kUncovered) break;  // off contract
    const Piece q = mb_piece(p, j, __ldg(p.pos + j), info_j, lane);
    const uint64_t end_j = __shfl_sync(kFull, q.start + q.len, 31);
    const uint64_t stop = end_j < W + 32 ? end_j : W + 32;
    if (stop <= at) break;  // off contract
    v |= piece_bits(p.arena, q, W, at, stop);
    at = stop;
  }
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) v |= __shfl_xor_sync(kFull, v, d);  // (__reduce_or_sync: sm_80 only)
  if (lane == 0 && (W >> 5) < p.out_words) p.out[W >> 5] = __byte_perm(v, 0, 0x0123);
}

// Launches the emit kernel (programmatic dependent launch: it waits for the kernel that wrote pos and info)
// over the frame part `in` into out[0, out_bytes).
inline cudaError_t launch_emit(const FrameAssembly& in, const uint64_t* pos, const int32_t* info, uint8_t* out,
                               uint64_t out_bytes, SliceResult* results, cudaStream_t stream) {
  const EmitArgs ea{reinterpret_cast<const uint32_t*>(in.arena),
                    in.records_bit,
                    in.slots_bit,
                    in.records,
                    in.slot_len,
                    in.lead,
                    in.slices,
                    in.n_mbs,
                    pos,
                    info,
                    reinterpret_cast<uint32_t*>(out),
                    out_bytes / 4,
                    results};
  const int blocks = static_cast<int>((int64_t{in.n_mbs} + kEmitWarps - 1) / kEmitWarps);
  return launch_pdl(emit_kernel, blocks, kEmitWarps * 32, stream, ea);
}

}  // namespace
}  // namespace cavlc
