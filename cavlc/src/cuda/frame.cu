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
// Tuning record (H200, tools/bench_cavlcu_gpu.cu, random x264-like frames, median us per frame, QP40/QP10):
//   2160p fused 65/85, two-pass 47/70 with 45 registers (5 blocks/SM); a persistent grid changed nothing;
//   __launch_bounds__(256, 8) (32 registers, 4 bytes spilled): fused 57/82, two-pass 47/76; 1080p fused
//   22/27. Up to 720p every variant is 14-21 us, launch and memset bound. Large frames are instruction bound
//   on the per-lane level/run loops (a warp runs as long as its longest block): next steps are a
//   precomputed level table for |level| < 64 (as cavlc.cpp does) and staging slot words in shared memory
//   for coalesced stores.
#include <cuda_runtime.h>

#include <atomic>

#include "cavlc/frame_cuda.h"
#include "cavlc/tables.h"
#include "gpu/cuda_check.h"

namespace cavlc {
namespace {

constexpr int kWarps = 8;  // macroblocks per region = warps per thread block
constexpr int kThreads = kWarps * 32;
constexpr int kTcWords = 8;  // 32-byte TotalCoeff record per macroblock (27 bytes used)

// Device copies of the constexpr tables of cavlc/tables.h (H.264 Tables 9-5, 9-7, 9-8, 9-9a, 9-10),
// built at compile time from the same data; each block copies them into shared memory once.
struct alignas(4) DeviceTables {
  tables::Vlc coeff_token[tables::kNumCoeffTokenTables][17][4];
  tables::Vlc total_zeros[15][16];
  tables::Vlc total_zeros_dc[3][4];
  tables::Vlc run_before[7][15];
};
constexpr DeviceTables make_device_tables() {
  DeviceTables t{};
  for (int i = 0; i < tables::kNumCoeffTokenTables; ++i)
    for (int j = 0; j < 17; ++j)
      for (int k = 0; k < 4; ++k) t.coeff_token[i][j][k] = tables::kCoeffToken[i][j][k];
  for (int i = 0; i < 15; ++i)
    for (int j = 0; j < 16; ++j) t.total_zeros[i][j] = tables::kTotalZeros4x4[i][j];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) t.total_zeros_dc[i][j] = tables::kTotalZerosChromaDC[i][j];
  for (int i = 0; i < 7; ++i)
    for (int j = 0; j < 15; ++j) t.run_before[i][j] = tables::kRunBefore[i][j];
  return t;
}
constexpr DeviceTables kDeviceTablesHost = make_device_tables();
__device__ const DeviceTables g_tables = kDeviceTablesHost;
constexpr int kTableWords = sizeof(DeviceTables) / 4;
static_assert(sizeof(DeviceTables) % 4 == 0, "tables are copied as words");

// Record byte offsets (cavlc/mb.h, checked below).
constexpr int kOffLuma = 0, kOffChromaAC = 512, kOffLumaDC = 768, kOffChromaDC = 800, kOffKind = 828;
static_assert(offsetof(gpuec_mb, u.coef.chroma_ac) == kOffChromaAC, "layout");
static_assert(offsetof(gpuec_mb, u.coef.luma_dc) == kOffLumaDC, "layout");
static_assert(offsetof(gpuec_mb, u.coef.chroma_dc) == kOffChromaDC, "layout");
static_assert(offsetof(gpuec_mb, kind) == kOffKind && offsetof(gpuec_mb, cbp) == kOffKind + 1, "layout");

__device__ __forceinline__ int coef_const(const uint64_t (&q)[4], int i) {  // i: compile-time constant
  return static_cast<int16_t>(q[i >> 2] >> ((i & 3) * 16));
}
__device__ __forceinline__ int coef_at(const uint64_t (&q)[4], int p) {  // p: run-time, no local memory
  const uint64_t w = (p & 8) ? ((p & 4) ? q[3] : q[2]) : ((p & 4) ? q[1] : q[0]);
  return static_cast<int16_t>(w >> ((p & 3) * 16));
}
__device__ __forceinline__ int top_bit(uint32_t m) { return 31 - __clz(m); }

// luma4x4BlkIdx <-> raster (x, y) of the 4x4 grid.
__device__ __forceinline__ int blk_x(int b) { return ((b >> 1) & 2) | (b & 1); }
__device__ __forceinline__ int blk_y(int b) { return ((b >> 2) & 2) | ((b >> 1) & 1); }
__device__ __forceinline__ int blk_of(int x, int y) { return ((y >> 1) << 3) | ((x >> 1) << 2) | ((y & 1) << 1) | (x & 1); }

// One lane's block after the counting pass.
struct Lane {
  uint64_t q[4];  // 16 coefficients (the n used ones first; start-1 blocks shifted down), int16 each
  uint32_t nz, neg;
  int n, tc, t1, ntc;  // ntc: the TotalCoeff neighbours see
  bool coded;
  int kind, cbp;
};

// Loads and counts slot `s` of the record. Every lane of the warp calls it.
__device__ __forceinline__ Lane count_lane(const gpuec_mb* rec, int s) {
  Lane L;
  const uint8_t* base = reinterpret_cast<const uint8_t*>(rec);
  const uint32_t kc = __ldg(reinterpret_cast<const uint32_t*>(base + kOffKind));
  L.kind = kc & 0xff;
  L.cbp = (kc >> 8) & 0xff;
  const bool i16 = L.kind == GPUEC_MB_I16x16;
  const bool resid = L.kind == GPUEC_MB_NORMAL || i16;
  const int cbp_chroma = L.cbp >> 4;
  int off, start = 0;
  bool coded;
  if (s == 0) {
    off = kOffLumaDC, L.n = 16, coded = i16;
  } else if (s <= 16) {
    off = kOffLuma + (s - 1) * 32, L.n = i16 ? 15 : 16, start = i16 ? 1 : 0;
    coded = i16 ? (L.cbp & 15) != 0 : ((L.cbp >> ((s - 1) >> 2)) & 1) != 0;
  } else if (s <= 18) {
    off = kOffChromaDC + (s - 17) * 8, L.n = 4, coded = cbp_chroma != 0;
  } else {
    off = kOffChromaAC + (s - 19) * 32, L.n = 15, start = 1, coded = cbp_chroma == 2;
  }
  L.coded = coded && resid && s < 27;
  L.q[0] = L.q[1] = L.q[2] = L.q[3] = 0;
  if (L.coded) {
    if (L.n == 4) {
      const uint2 a = __ldg(reinterpret_cast<const uint2*>(base + off));
      L.q[0] = a.x | (uint64_t{a.y} << 32);
    } else {  // the 32-byte block: two 16-byte vector loads (sm_90 has no wider global load)
      const uint4 a = __ldg(reinterpret_cast<const uint4*>(base + off));
      const uint4 b = __ldg(reinterpret_cast<const uint4*>(base + off + 16));
      L.q[0] = a.x | (uint64_t{a.y} << 32);
      L.q[1] = a.z | (uint64_t{a.w} << 32);
      L.q[2] = b.x | (uint64_t{b.y} << 32);
      L.q[3] = b.z | (uint64_t{b.w} << 32);
      if (start) {  // AC block: coefficients [1..15] become [0..14], [15] = 0
        L.q[0] = (L.q[0] >> 16) | (L.q[1] << 48);
        L.q[1] = (L.q[1] >> 16) | (L.q[2] << 48);
        L.q[2] = (L.q[2] >> 16) | (L.q[3] << 48);
        L.q[3] >>= 16;
      }
    }
  }
  // One pass over the 16 coefficients: non-zero, +-1 and sign masks.
  uint32_t nz = 0, ones = 0, neg = 0;
#pragma unroll
  for (int i = 0; i < 16; ++i) {
    const int v = coef_const(L.q, i);
    nz |= static_cast<uint32_t>(v != 0) << i;
    ones |= static_cast<uint32_t>(v == 1 || v == -1) << i;
    neg |= static_cast<uint32_t>(v < 0) << i;
  }
  L.nz = nz;
  L.neg = neg;
  L.tc = __popc(nz);
  int t1 = 0;
  uint32_t m = nz;
#pragma unroll
  for (int k = 0; k < 3; ++k) {
    if (m && ((ones >> top_bit(m)) & 1)) {
      ++t1;
      m &= ~(1u << top_bit(m));
    } else {
      break;
    }
  }
  L.t1 = t1;
  L.ntc = L.kind == GPUEC_MB_PCM ? 16 : L.coded ? L.tc : 0;
  return L;
}

// Source lane of byte B (0..26) of the TotalCoeff record.
__device__ __forceinline__ int tc_record_lane(int B) {
  if (B < 16) return 1 + blk_of(B & 3, B >> 2);
  if (B < 24) return 19 + (B - 16);
  return B == 24 ? 0 : 17 + (B - 25);
}

// The warp's record words: lanes 0, 4, ..., 24 return word lane / 4 (others: garbage).
__device__ __forceinline__ uint32_t tc_record_word(const Lane& L, int lane) {
  const int v = __shfl_sync(0xffffffffu, L.ntc, tc_record_lane(lane < 27 ? lane : 0));
  uint32_t w = lane < 27 ? static_cast<uint32_t>(v) << ((lane & 3) * 8) : 0u;
  w |= __shfl_xor_sync(0xffffffffu, w, 1);
  w |= __shfl_xor_sync(0xffffffffu, w, 2);
  return w;
}

struct BitOut {
  uint32_t* out;
  uint64_t acc = 0;
  int pending = 0;  // < 32 between puts; codes are at most 28 bits
  int words = 0;
  __device__ __forceinline__ void put(uint32_t val, int len) {
    acc = (acc << len) | val;
    pending += len;
    if (pending >= 32) {
      pending -= 32;
      out[words++] = __byte_perm(static_cast<uint32_t>(acc >> pending), 0, 0x0123);
    }
  }
  __device__ __forceinline__ void put(tables::Vlc v) { put(v.val, v.len); }
  __device__ __forceinline__ void finish() {
    if (pending) out[words++] = __byte_perm(static_cast<uint32_t>(acc << (32 - pending)), 0, 0x0123);
  }
};

// residual_block_cavlc() of one lane's block (cavlc.cpp code_block, same bits). Returns the length.
__device__ __forceinline__ int code_lane(const Lane& L, int nC, const DeviceTables& T, uint32_t* slot) {
  BitOut o{slot};
  const int tc = L.tc, t1 = L.t1;
  o.put(T.coeff_token[tables::coeff_token_table(nC)][tc][t1]);
  if (tc > 0) {
    uint32_t m = L.nz;
    for (int k = 0; k < t1; ++k) {  // trailing-one signs, highest frequency first
      const int p = top_bit(m);
      o.put((L.neg >> p) & 1, 1);
      m &= ~(1u << p);
    }
    int suffix_length = (tc > 10 && t1 < 3) ? 1 : 0;
    bool first = t1 < 3;
    while (m) {
      const int p = top_bit(m);
      m &= ~(1u << p);
      const int level = coef_at(L.q, p);
      const int level_code = tables::level_code_of(level) - (first ? 2 : 0);
      first = false;
      const tables::LevelVlc v = tables::level_vlc(level_code, suffix_length);
      o.put(v.bits, v.len);
      suffix_length = tables::next_suffix_length(suffix_length, level < 0 ? -level : level);
    }
    int top = top_bit(L.nz);
    int zeros_left = top + 1 - tc;
    if (tc < L.n) o.put(L.n == 4 ? T.total_zeros_dc[tc - 1][zeros_left] : T.total_zeros[tc - 1][zeros_left]);
    m = L.nz;
    for (int j = tc - 1; j > 0 && zeros_left > 0; --j) {
      m &= ~(1u << top);
      const int next = top_bit(m);
      const int run = top - next - 1;
      o.put(T.run_before[tables::run_before_row(zeros_left)][run]);
      zeros_left -= run;
      top = next;
    }
  }
  o.finish();
  return static_cast<int>((o.words - 1) * 32 + (o.pending ? o.pending : 32));
}

// Where a lane's nA / nB come from: another lane of the warp (byte < 0: lane `lane`), or byte `byte`
// of the left / top macroblock's TotalCoeff record.
struct NbSource {
  int lane;
  int byte;
};
__device__ __forceinline__ void neighbour_sources(int s, NbSource* a, NbSource* b) {
  a->lane = b->lane = s;
  a->byte = b->byte = -1;
  if (s <= 16) {
    const int blk = s == 0 ? 0 : s - 1;  // Intra16x16 DC uses block 0's neighbours
    const int x = blk_x(blk), y = blk_y(blk);
    if (x > 0) a->lane = 1 + blk_of(x - 1, y); else a->byte = y * 4 + 3;
    if (y > 0) b->lane = 1 + blk_of(x, y - 1); else b->byte = 12 + x;
  } else if (s >= 19 && s < 27) {
    const int c = (s - 19) >> 2, blk = (s - 19) & 3, x = blk & 1, y = blk >> 1;
    if (x > 0) a->lane = s - 1; else a->byte = 16 + c * 4 + y * 2 + 1;
    if (y > 0) b->lane = s - 2; else b->byte = 16 + c * 4 + 2 + x;
  }
}

__device__ __forceinline__ int predict(bool aa, int na, bool ab, int nb) {
  return (aa && ab) ? (na + nb + 1) >> 1 : aa ? na : ab ? nb : 0;
}

enum Mode { kModeFused = 0, kModeCount = 1, kModeCode = 2 };

struct Frame {
  const gpuec_mb* recs;
  const int32_t* slice_id;
  uint8_t* bits;
  uint16_t* len;
  uint32_t* ticket;   // fused: region counter
  uint32_t* flags;    // fused: per region, 1 once its TotalCoeff records are in `tc`
  uint32_t* tc;       // kTcWords per macroblock
  int mb_width, nmb, nregions;
};

__device__ __forceinline__ uint32_t load_acquire(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void store_release(uint32_t* p, uint32_t v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ void wait_region(const Frame& f, int q) {
  while (load_acquire(f.flags + q) == 0) __nanosleep(64);
}

// Neighbours of the lane's block (availability: inside the frame and the same slice id), nC, and the code.
template <int kMode>
__device__ __forceinline__ void code_mb_lane(const Frame& f, const DeviceTables& T,
                                             const uint32_t (&s_tc)[kWarps][kTcWords], const Lane& L, int a,
                                             int first, int lane) {
  const int w = f.mb_width;
  NbSource sa, sb;
  neighbour_sources(lane, &sa, &sb);
  const int in_a = __shfl_sync(0xffffffffu, L.ntc, sa.lane);
  const int in_b = __shfl_sync(0xffffffffu, L.ntc, sb.lane);
  if (lane >= kMbSlots) return;
  const size_t slot = static_cast<size_t>(a) * kMbSlots + lane;
  if (!L.coded) {
    f.len[slot] = 0;
    return;
  }
  const int32_t sid = __ldg(f.slice_id + a);
  auto nb_total = [&](int nb, int byte) -> int {
    if (kMode == kModeFused && nb >= first) return reinterpret_cast<const uint8_t*>(s_tc[nb - first])[byte];
    const uint8_t* p = reinterpret_cast<const uint8_t*>(f.tc + static_cast<size_t>(nb) * kTcWords) + byte;
    return kMode == kModeFused ? __ldcg(p) : __ldg(p);
  };
  bool aa = true, ab = true;
  int na = in_a, nb = in_b;
  if (sa.byte >= 0) {
    aa = (a % w) > 0 && __ldg(f.slice_id + a - 1) == sid;
    na = aa ? nb_total(a - 1, sa.byte) : 0;
  }
  if (sb.byte >= 0) {
    ab = a >= w && __ldg(f.slice_id + a - w) == sid;
    nb = ab ? nb_total(a - w, sb.byte) : 0;
  }
  const int nC = (lane == 17 || lane == 18) ? -1 : predict(aa, na, ab, nb);
  f.len[slot] = static_cast<uint16_t>(code_lane(L, nC, T, reinterpret_cast<uint32_t*>(f.bits + slot * kSlotBytes)));
}

template <int kMode>
__global__ void __launch_bounds__(kThreads, 8) frame_kernel(Frame f) {  // 8 blocks/SM: 32 registers
  __shared__ uint32_t s_tab[kMode == kModeCount ? 1 : kTableWords];
  __shared__ uint32_t s_tc[kWarps][kTcWords];
  __shared__ int s_region;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  if (kMode != kModeCount) {
    for (int i = threadIdx.x; i < kTableWords; i += kThreads)
      s_tab[i] = reinterpret_cast<const uint32_t*>(&g_tables)[i];
  }
  const DeviceTables& T = *reinterpret_cast<const DeviceTables*>(s_tab);
  if (kMode == kModeCode) __syncthreads();  // tables (the fused kernel's first ticket barrier covers them)
  for (int iter = 0;; ++iter) {
    int r;
    if (kMode == kModeFused) {
      if (threadIdx.x == 0) s_region = static_cast<int>(atomicAdd(f.ticket, 1u));
      __syncthreads();  // also orders the previous region's s_tc reads before this region's writes
      r = s_region;
    } else {
      if (iter > 0) break;
      r = blockIdx.x;
    }
    if (r >= f.nregions) break;
    const int first = r * kWarps;
    const int a = first + warp;
    const bool active = a < f.nmb;  // warp-uniform
    Lane L{};
    if (active) {
      L = count_lane(f.recs + a, lane);
      if (kMode != kModeCode) {
        const uint32_t w = tc_record_word(L, lane);
        if ((lane & 3) == 0 && lane < 28) {
          f.tc[static_cast<size_t>(a) * kTcWords + lane / 4] = w;
          if (kMode == kModeFused) s_tc[warp][lane / 4] = w;
        }
      }
    }
    if (kMode == kModeCount) break;
    if (kMode == kModeFused) {
      __threadfence();
      __syncthreads();
      if (threadIdx.x == 0) {
        store_release(f.flags + r, 1u);
        const int w = f.mb_width;
        if (r > 0) wait_region(f, r - 1);
        if (first - w >= 0) wait_region(f, (first - w) / kWarps);
        const int last_needed = min(min(first + kWarps, f.nmb) - 1 - w, first - 1);
        if (last_needed >= 0) wait_region(f, last_needed / kWarps);
        __threadfence();
      }
      __syncthreads();
    }
    if (active) code_mb_lane<kMode>(f, T, s_tc, L, a, first, lane);
  }
}

gpu::CudaError invalid(int line) {
  return gpu::CudaError{static_cast<int>(cudaErrorInvalidValue), __FILE__, line, "cudaErrorInvalidValue"};
}

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

constexpr int kMaxDevices = 64;
std::atomic<int> g_fused_grid[kMaxDevices];  // persistent grid size per device (0: not asked yet)

gpu::CudaError fused_grid(int* grid) {
  int dev = 0;
  GPUEC_CUDA_CHECK(cudaGetDevice(&dev));
  if (dev >= 0 && dev < kMaxDevices && g_fused_grid[dev].load(std::memory_order_relaxed) > 0) {
    *grid = g_fused_grid[dev].load(std::memory_order_relaxed);
    return {};
  }
  int sms = 0, per_sm = 0;
  GPUEC_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  GPUEC_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, frame_kernel<kModeFused>, kThreads, 0));
  *grid = sms * (per_sm > 0 ? per_sm : 1);
  if (dev >= 0 && dev < kMaxDevices) g_fused_grid[dev].store(*grid, std::memory_order_relaxed);
  return {};
}

}  // namespace

const char* frame_cuda_variant_name(FrameCudaVariant v) {
  switch (v) {
    case FrameCudaVariant::kFused: return "fused";
    case FrameCudaVariant::kTwoPass: return "two-pass";
    case FrameCudaVariant::kFusedPersistent: return "fused-persistent";
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
    return invalid(__LINE__);
  if (!records || !slice_id || !bits || !len || !workspace) return invalid(__LINE__);
  if (reinterpret_cast<uintptr_t>(records) % 32 || reinterpret_cast<uintptr_t>(bits) % 4 ||
      reinterpret_cast<uintptr_t>(len) % 2 || reinterpret_cast<uintptr_t>(workspace) % 256)
    return invalid(__LINE__);
  if (workspace_bytes < code_frame_cuda_workspace_bytes(mb_width, mb_height)) return invalid(__LINE__);
  const int nmb = mb_width * mb_height;
  const int nregions = (nmb + kWarps - 1) / kWarps;
  const Workspace ws = carve(workspace, nmb, nregions);
  const Frame f{records, slice_id, bits, len, ws.ticket, ws.flags, ws.tc, mb_width, nmb, nregions};
  if (variant == FrameCudaVariant::kFused || variant == FrameCudaVariant::kFusedPersistent) {
    int grid = nregions;
    if (variant == FrameCudaVariant::kFusedPersistent) {
      if (const gpu::CudaError e = fused_grid(&grid)) return e;
    }
    GPUEC_CUDA_CHECK(cudaMemsetAsync(ws.ticket, 0, ws.header_bytes, stream));
    frame_kernel<kModeFused><<<grid < nregions ? grid : nregions, kThreads, 0, stream>>>(f);
    GPUEC_CUDA_CHECK_LAUNCH();
  } else if (variant == FrameCudaVariant::kTwoPass) {
    frame_kernel<kModeCount><<<nregions, kThreads, 0, stream>>>(f);
    GPUEC_CUDA_CHECK_LAUNCH();
    frame_kernel<kModeCode><<<nregions, kThreads, 0, stream>>>(f);
    GPUEC_CUDA_CHECK_LAUNCH();
  } else {
    return invalid(__LINE__);
  }
  return {};
}

gpu::CudaError code_frame_cuda(const gpuec_mb* records, int mb_width, int mb_height, const int32_t* slice_id,
                               uint8_t* bits, uint16_t* len, void* workspace, size_t workspace_bytes,
                               cudaStream_t stream) {
  return code_frame_cuda_variant(FrameCudaVariant::kFused, records, mb_width, mb_height, slice_id, bits, len,
                                 workspace, workspace_bytes, stream);
}

}  // namespace cavlc
