// Device code of the CAVLCU kernel shared by frame.cu (code_frame_cuda) and encode_frame.cu
// (encode_frame_cuda): code tables, the per-lane count and code passes, neighbour sources and the
// per-lane coding of a macroblock with nA/nB from the warp, shared memory or the TotalCoeff records.
// Internal: included by .cu files of gpuec_cavlc_cuda only.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "cavlc/cavlc.h"
#include "cavlc/frame.h"
#include "cavlc/mb.h"
#include "cavlc/tables.h"
#include "gpu/device/word_sink.cuh"
#include "sync_device.cuh"

namespace cavlc {
namespace {


constexpr int kWarps = 8;  // macroblocks per region = warps per thread block
constexpr int kThreads = kWarps * 32;
constexpr int kTcWords = 8;  // 32-byte TotalCoeff record per macroblock (27 bytes used; cavlc::tc_record)
static_assert(kTcWords * 4 == kTcRecordBytes, "the TotalCoeff record of cavlc/frame.h");

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
static_assert(offsetof(gpuec_mb, kind) == kOffKind && offsetof(gpuec_mb, cbp) == kOffKind + 1 &&
                  offsetof(gpuec_mb, coef_order) == kOffKind + 2,
              "layout");

// cavlc::kRasterOfScan (cavlc/cavlc.h) as 16 nibbles, scan index i in bits [4i, 4i + 4): a scalar constexpr,
// which device code may read (a host constexpr array it may not).
constexpr uint64_t raster_of_scan_nibbles() {
  uint64_t v = 0;
  for (int i = 0; i < 16; ++i) v |= uint64_t{kRasterOfScan[i]} << (4 * i);
  return v;
}
constexpr uint64_t kRasterOfScanNibbles = raster_of_scan_nibbles();
static_assert(kRasterOfScanNibbles == 0xFEB7ADC963258410ull, "frame zigzag, H.264 Table 8-13");

__device__ __forceinline__ int coef_const(const uint64_t (&q)[4], int i) {  // i: compile-time constant
  return static_cast<int16_t>(q[i >> 2] >> ((i & 3) * 16));
}
__device__ __forceinline__ int coef_at(const uint64_t (&q)[4], int p) {  // p: run-time, no local memory
  const uint64_t w = (p & 8) ? ((p & 4) ? q[3] : q[2]) : ((p & 4) ? q[1] : q[0]);
  return static_cast<int16_t>(w >> ((p & 3) * 16));
}
__device__ __forceinline__ int top_bit(uint32_t m) { return 31 - __clz(m); }

// With `raster`, a 4x4 block from raster to scan order (cavlc/mb.h GPUEC_COEF_RASTER), in registers: the
// scan pair (2j, 2j + 1) is one byte permute of the two 32-bit words that hold its raster positions.
// Unrolled, every index and selector is a compile-time constant (no local memory). A select per word
// rather than a branch around the permutes: with the branch ptxas spilled 16 bytes in frame_kernel<kModeCode>
// (32 registers under its launch bounds); with the select the register use is that of the scan-only kernel.
__device__ __forceinline__ void raster_to_scan(uint64_t (&q)[4], bool raster) {
  auto word = [&](int k) { return static_cast<uint32_t>(q[k >> 1] >> ((k & 1) * 32)); };  // levels 2k, 2k + 1
  uint32_t w[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    const int r0 = static_cast<int>(kRasterOfScanNibbles >> (8 * j)) & 15;
    const int r1 = static_cast<int>(kRasterOfScanNibbles >> (8 * j + 4)) & 15;
    // Result bytes 0-1: level r0 from the first word (bytes 0-3); bytes 2-3: level r1 from the second (4-7).
    const uint32_t sel = ((r0 & 1) ? 0x0032u : 0x0010u) | ((r1 & 1) ? 0x7600u : 0x5400u);
    w[j] = raster ? __byte_perm(word(r0 >> 1), word(r1 >> 1), sel) : word(j);
  }
#pragma unroll
  for (int k = 0; k < 4; ++k) q[k] = w[2 * k] | (uint64_t{w[2 * k + 1]} << 32);
}

// luma4x4BlkIdx <-> raster (x, y) of the 4x4 grid.
__device__ __forceinline__ int blk_x(int b) { return ((b >> 1) & 2) | (b & 1); }
__device__ __forceinline__ int blk_y(int b) { return ((b >> 2) & 2) | ((b >> 1) & 1); }
__device__ __forceinline__ int blk_of(int x, int y) { return ((y >> 1) << 3) | ((x >> 1) << 2) | ((y & 1) << 1) | (x & 1); }

// One lane's block after the counting pass.
struct Lane {
  uint64_t q[4];  // 16 coefficients in scan order (the n used ones first; start-1 blocks shifted down), int16 each
  uint32_t nz, neg;
  int n, tc, t1, ntc;  // ntc: the TotalCoeff neighbours see
  bool coded;
  int kind, cbp;
};

// Loads and counts slot `s` of the record. Every lane of the warp calls it. A raster-order record's 4x4
// blocks are permuted to scan order first; a coef_order other than 0 or 1 (malformed) reads as scan order.
__device__ __forceinline__ Lane count_lane(const gpuec_mb* rec, int s) {
  Lane L;
  const uint8_t* base = reinterpret_cast<const uint8_t*>(rec);
  const uint32_t kc = __ldg(reinterpret_cast<const uint32_t*>(base + kOffKind));  // kind, cbp, coef_order
  L.kind = kc & 0xff;
  L.cbp = (kc >> 8) & 0xff;
  const bool raster = ((kc >> 16) & 0xff) == GPUEC_COEF_RASTER;  // warp-uniform
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
      raster_to_scan(L.q, raster);  // scan index 0 is raster position 0: the DC of an AC block
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

// A lane's code goes into its slot as big-endian words through the project's bit sink (gpu/device/word_sink.cuh):
// the slot is the lane's own, so it owns every word, the last one included.
struct BitOut {
  gpu::device::WordSink<gpu::device::BigEndianWords> sink;
  __device__ __forceinline__ explicit BitOut(uint32_t* out) : sink(0, gpu::device::BigEndianWords{out}) {}
  __device__ __forceinline__ void put(uint32_t val, int len) { sink.put(val, static_cast<uint32_t>(len)); }
  __device__ __forceinline__ void put(tables::Vlc v) { put(v.val, v.len); }
  __device__ __forceinline__ int finish() {  // the code's length in bits
    sink.store.store_tail(sink);
    return static_cast<int>(sink.q);
  }
};

// residual_block_cavlc() of one lane's block (cavlc.cpp code_block, same bits). Returns the length.
__device__ __forceinline__ int code_lane(const Lane& L, int nC, const DeviceTables& T, uint32_t* slot) {
  BitOut o(slot);
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
  return o.finish();
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
  uint32_t* mb_bits;  // nullptr, or [nmb]: the code pass writes each macroblock's residual bits (slot sum)
};

__device__ __forceinline__ void wait_region(const Frame& f, int q) {
  while (load_acquire(f.flags + q) == 0) __nanosleep(64);
}

// Counts the lane's block of macroblock a (the warp's macroblock); with record, the warp's TotalCoeff record
// goes to f.tc (and with shared also to s_tc[warp], the region's copy of the fused kernel).
__device__ __forceinline__ Lane count_mb(const Frame& f, uint32_t (&s_tc)[kWarps][kTcWords], int a, int warp, int lane,
                                         bool record, bool shared) {
  const Lane L = count_lane(f.recs + a, lane);
  if (record) {
    const uint32_t w = tc_record_word(L, lane);
    if ((lane & 3) == 0 && lane < 28) {
      f.tc[static_cast<size_t>(a) * kTcWords + lane / 4] = w;
      if (shared) s_tc[warp][lane / 4] = w;
    }
  }
  return L;
}

// The fused exchange (whole block): publishes region r's TotalCoeff records (its flag), then waits until
// the regions holding the left and top neighbours of its macroblocks have published theirs.
__device__ __forceinline__ void publish_and_wait(const Frame& f, int r, int first) {
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

// Neighbours of the lane's block (availability: inside the frame and the same slice id), nC, and the code.
// Returns the slot's length in bits (0 for lanes that code nothing).
template <int kMode>
__device__ __forceinline__ int code_mb_lane(const Frame& f, const DeviceTables& T,
                                             const uint32_t (&s_tc)[kWarps][kTcWords], const Lane& L, int a,
                                             int first, int lane) {
  const int w = f.mb_width;
  NbSource sa, sb;
  neighbour_sources(lane, &sa, &sb);
  const int in_a = __shfl_sync(0xffffffffu, L.ntc, sa.lane);
  const int in_b = __shfl_sync(0xffffffffu, L.ntc, sb.lane);
  if (lane >= kMbSlots) return 0;
  const size_t slot = static_cast<size_t>(a) * kMbSlots + lane;
  if (!L.coded) {
    f.len[slot] = 0;
    return 0;
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
  const int bits = code_lane(L, nC, T, reinterpret_cast<uint32_t*>(f.bits + slot * kSlotBytes));
  f.len[slot] = static_cast<uint16_t>(bits);
  return bits;
}
// The CAVLCU kernel: kModeFused (in-kernel exchange, regions from the ticket), kModeCount (pass 1 of the
// two-pass variant: TotalCoeff records only), kModeCode (pass 2: neighbours from the records).
template <int kMode>
__global__ void __launch_bounds__(kThreads, 8) frame_kernel(Frame f) {  // 8 blocks/SM: 32 registers
  __shared__ uint32_t s_tab[kMode == kModeCount ? 1 : kTableWords];
  __shared__ uint32_t s_tc[kWarps][kTcWords];
  __shared__ int s_region;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  pdl_trigger();
  if (kMode != kModeCount) {
    for (int i = threadIdx.x; i < kTableWords; i += kThreads)
      s_tab[i] = reinterpret_cast<const uint32_t*>(&g_tables)[i];
  }
  const DeviceTables& T = *reinterpret_cast<const DeviceTables*>(s_tab);
  if (kMode == kModeCode) {
    pdl_wait();  // the TotalCoeff records come from the count kernel (waiting later, after the loads of the
                 // record, keeps the whole block in registers and spills under the 32-register bound)
    __syncthreads();  // tables (the fused kernel's first ticket barrier covers them)
  }
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
    if (active) L = count_mb(f, s_tc, a, warp, lane, kMode != kModeCode, kMode == kModeFused);
    if (kMode == kModeCount) break;
    if (kMode == kModeFused) publish_and_wait(f, r, first);
    if (active) {
      int bits = code_mb_lane<kMode>(f, T, s_tc, L, a, first, lane);
      if (f.mb_bits) {  // uniform
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
        const unsigned sum = __reduce_add_sync(0xffffffffu, static_cast<unsigned>(bits));
#else
        unsigned sum = static_cast<unsigned>(bits);
        for (int d = 16; d > 0; d >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, d);
#endif
        if (lane == 0) f.mb_bits[a] = sum;
      }
    }
  }
}

}  // namespace
}  // namespace cavlc
