// GUD-Canny CUDA twin (canny/canny_cuda.h). Every numeric rule is canny/canny.h's ("NUMBERS"); the float
// steps use the explicit round-to-nearest intrinsics (__fadd_rn, __fsub_rn, __fmul_rn, __fdiv_rn,
// __fsqrt_rn), which nvcc never contracts into FMAs, and the file is also built with --fmad=false
// (canny/CMakeLists.txt). All other arithmetic is integer; the only atomics are integer (max, min, add), so
// their order does not change any result (min: the union-find's parents, whose partition is the same in any
// order).
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <vector>

#include "canny/canny.h"
#include "canny/canny_cuda.h"
#include "../pick_pair.h"
#include "gpu/backend.h"
#include "gpu/context.h"
#include "gpu/cuda_check.h"
#include "gpu/device/memory.cuh"
#include "gpu/device/pdl.cuh"

namespace canny {
namespace {

constexpr int kTileX = 32, kTileY = 8;  // pixel kernels: 256 threads
constexpr int kSelectThreads = 512;     // histogram / threshold search kernel
// select_kernel's pixels a block (at least), half that on frames of fewer than kSelectSmallFrame pixels whose regions
// (strips, or the frame) have fewer than kSelectSmallBlocks blocks of kSelectPixels each (docs/benchmarks.md: issue 18,
// GPU kernels, 26th session), twice that for strips of kSelectTallBlocks blocks or more (2048 rows) on frames that are
// not small (27th session).
// select_map_cluster_kernel: at most kSelectClusterBlocks blocks a strip (a portable cluster), on frames of at most
// kSelectClusterFrame pixels with at most kSelectClusterLows lows (detect_edges_cuda: where it was measured faster).
constexpr int kSelectClusterBlocks = 8, kSelectClusterFrame = 1 << 18, kSelectClusterLows = 16;
constexpr int kSelectPrefetchStrips = 1 << 19, kSelectPrefetchFrame = 1 << 20;  // select_kernel<true>'s frames
constexpr int kSelectPixels = 4096, kSelectSmallFrame = 1 << 20, kSelectSmallBlocks = 100, kSelectTallBlocks = 16;

struct Taps {
  int32_t w[kMaxTaps];
  int r;
};

bool valid_size(int width, int height) {
  return width >= 1 && height >= 1 && width <= kMaxDim && height <= kMaxDim &&
         int64_t(width) * height <= kMaxPixels;
}

// ---- launches ---------------------------------------------------------------------------------------------
// Every kernel of a call after the first (front_kernel, behind the memset of max2) but the tile path's border pass
// is launched with programmatic dependent launch (gpu::launch_pdl): its blocks may be scheduled while the kernel
// before it ends. Every kernel starts with after_previous(), before any access to global memory other than its
// source image: it waits there until the kernel before it has finished and its writes are visible (that kernel
// waited for the one before it, and so on: each kernel sees every earlier one done), then lets the next kernel's
// blocks launch. One exception: the select kernels (select_kernel<true>, select_map_cluster_kernel) read codes_kernel's
// outputs (gh, q) before their wait, past L1 (__ldcg). A counting kernel always runs between the two, and it lets their
// blocks launch only after its own wait, when codes_kernel has completed and its memory operations are performed;
// nothing writes gh or q after codes_kernel in a call. The PTX model states that visibility for the waiting grid only:
// the reads rely on "performed" meaning in L2, where loads past L1 find them, for a later grid too. On small frames
// their blocks launch while the counts run, and the reads wait beside them.
__device__ __forceinline__ void after_previous() {
  gpu::pdl_wait();
  gpu::pdl_trigger();
}

// ---- workspace --------------------------------------------------------------------------------------------

constexpr int kMaxStripLayers = 32;                 // strip mode's lows in one launch of the counting kernels
constexpr int kHistWords = 2 * (kMaxThreshold + 2);  // select_kernel's histograms of a region

struct Workspace {
  uint32_t* max2;          // 1 word: max of gx^2 + gy^2
  float* mk;               // W x H: the magnitude where NMS keeps the pixel, else 0; then (the tile path) the bit
                           // rows of the tile roots, tile_root_words(W, H, layers)
  uint8_t* gh;             // W x H, G's half step h + 1 (G_half: 0 where no bin holds G; pitch W)
  uint16_t* q;             // W x H threshold codes
  uint16_t* sm;            // W x H, SM counts (at most kMaxCandidates: 16 bits; sm_add)
  uint32_t* lab;           // layers x W x H, union-find parents
  uint32_t* mx;            // layers x W x H, maxA of the roots
  uint32_t* hist;          // ns x kHistWords histogram words, then ns block counters (select_kernel), then redo
  uint32_t* redo;          // ns x kMaxStripLayers words: the (strip, low) pairs strip_count_listed_kernel left to
                           // strip_count_redo_kernel, then a word set when any is (hist's region, hist_words: the
                           // codes kernel clears it all)
  int layers;              // label planes: lows labelled per batch
  size_t planes;           // strip mode: byte planes of component maxima that lab and mx hold
};

size_t align256(size_t n) { return (n + 255) & ~size_t(255); }

// What the histograms (BlockHistograms::add) read of a value v of G: its half step h = floor(200 v) (canny.h NUMBERS, the x grid)
// plus one for 0 < v <= 1, 0 elsewhere (no bin holds v): a byte a pixel (h <= kHalfSteps = 200) where v takes four.
__device__ __forceinline__ uint8_t g_half(float v) {
  return v > 0.0f && v <= 1.0f ? uint8_t(int(__fmul_rn(v, 200.0f)) + 1) : uint8_t(0);
}
static_assert(kHalfSteps + 1 <= 255, "G_half is a byte");

// SM += add at pixel i. SM is 16 bits a pixel: a count is at most the number of candidates (each links a pixel once),
// kMaxCandidates < 2^16, so the 32-bit atomic add on the aligned word holding count i (add shifted to its half) never
// carries into the other count. Workspace::sm is 256-byte aligned.
static_assert(kMaxCandidates < (1 << 16), "SM counts fit 16 bits");
__device__ __forceinline__ void sm_add(uint16_t* sm, size_t i, uint32_t add) {
  atomicAdd(reinterpret_cast<unsigned int*>(sm + (i & ~size_t(1))), add << (16 * unsigned(i & 1)));
}

// The redo marks (Workspace::redo): pair (strip, layer of the batch) at redo_mark(strip, layer), and for ns strips the
// word after every mark, redo_any(ns), set with any mark. A mark is the batch's tag (LayersOf::tag: its index + 1),
// so that a later batch's redo never takes an earlier batch's marks (nothing clears them within a call). In frame
// mode frame_count_joined_kernel, where no listed kernel runs, takes the marks as its flags (a strip's phase A done).
template <class T>
__host__ __device__ constexpr T redo_mark(T strip, T layer) {
  return strip * T(kMaxStripLayers) + layer;
}
template <class T>
__host__ __device__ constexpr T redo_any(T ns) {
  return redo_mark(ns, T(0));
}

// The redo kernels' loop: f(strip, j) for every pair (strip, j < per) of the ns strips of width W whose mark holds tag,
// this block (or cluster) taking pairs first, first + step, ... of all; none, and no loop, when the word after the marks
// is not the tag (most calls). A barrier before each f: the previous pair's readers of shared memory are done.
template <class F>
__device__ __forceinline__ void for_marked(const uint32_t* __restrict__ redo, int W, int per, uint32_t tag, int first,
                                           int step, F f) {
  const int ns = (W + kStripWidth - 1) / kStripWidth;
  if (redo[redo_any(ns)] != tag) return;
  for (int idx = first; idx < ns * per; idx += step) {
    const int strip = idx / per, j = idx % per;
    if (redo[redo_mark(strip, j)] != tag) continue;  // uniform in the block (the cluster)
    __syncthreads();
    f(strip, j);
  }
}

// The words of hist's region for ns strips: histograms and block counters, then the redo marks and their word, then
// frame_count_joined_kernel's barrier counts, a word a low of the batch (frame_sync).
size_t hist_words(size_t ns) { return ns * (kHistWords + 1) + redo_any(ns) + 1 + kMaxStripLayers; }
uint32_t* frame_sync(uint32_t* redo, size_t ns) { return redo + redo_any(ns) + 1; }
// frame_count_joined_kernel's flag of (strip, layer): that pair's redo mark, found back from frame_sync's counts.
__device__ __forceinline__ uint32_t* frame_flag(uint32_t* sync, uint32_t ns, uint32_t strip, uint32_t layer) {
  return sync - 1 - redo_any(ns) + redo_mark(strip, layer);
}

// Label planes per batch of lows (the tile path): 8 up to 4 Mpixels, 6 up to 16 Mpixels (2160p), 1 beyond, so
// the workspace stays within 73 bytes per pixel up to 1080p (64 of them the label planes), 57 up to 16 Mpixels and
// 17 beyond (for frames at least 8 pixels wide: narrower ones need more for the tile path's bit rows,
// tile_root_words).
// In strip mode the same memory holds one byte plane of component maxima per low: 32 up to 16 Mpixels, which
// covers C_0.01's 24 lows. Frame mode's split passes take their nodes after the planes: with 6 planes (48 bytes a
// pixel) 2160p C_0.03 is one batch, where 4 planes (32) made it two (H200: 2160p frame C_0.03 0.94x the time with
// 4, C_0.01 on the tile path, 6 lows a batch instead of 4, 0.92x; +133 MB at 2160p).
int label_layers(size_t n) { return n <= (size_t(1) << 22) ? 8 : (n <= (size_t(1) << 24) ? 6 : 1); }

// The tile path's bit rows of tile roots: a word per row of a strip and label plane.
size_t tile_root_words(int width, int height, int layers) {
  return size_t(strip_count(width)) * size_t(height) * size_t(layers);
}

size_t layout(int width, int height, uint8_t* base, Workspace* ws) {
  const size_t n = size_t(width) * size_t(height);
  const int layers = label_layers(n);
  size_t off = 0;
  auto take = [&](size_t bytes) {
    uint8_t* p = base ? base + off : nullptr;
    off += align256(bytes);
    return p;
  };
  uint8_t* max2 = take(4);
  uint8_t* mk = take(std::max(n, tile_root_words(width, height, layers)) * 4);
  uint8_t* gh = take(n);
  uint8_t* q = take(n * 2);
  uint8_t* sm = take(n * 2);
  uint8_t* lab = take(size_t(layers) * n * 4);
  uint8_t* mx = take(size_t(layers) * n * 4);
  const size_t ns = size_t(strip_count(width));
  uint8_t* hist = take(hist_words(ns) * 4);
  if (ws) {
    ws->max2 = reinterpret_cast<uint32_t*>(max2);
    ws->mk = reinterpret_cast<float*>(mk);
    ws->gh = gh;
    ws->q = reinterpret_cast<uint16_t*>(q);
    ws->sm = reinterpret_cast<uint16_t*>(sm);
    ws->lab = reinterpret_cast<uint32_t*>(lab);
    ws->mx = reinterpret_cast<uint32_t*>(mx);
    ws->hist = reinterpret_cast<uint32_t*>(hist);
    ws->redo = ws->hist + ns * (kHistWords + 1);
    ws->layers = layers;
    ws->planes = (align256(size_t(layers) * n * 4) + size_t(layers) * n * 4) / n;  // lab, then mx
  }
  return off;
}

// ---- steps 1-3 ----------------------------------------------------------------------------------------------

__device__ __forceinline__ int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

// Steps 1-3 up to the division by the maximum, fused: one block of 32 x 8 threads per output tile of 32 columns and FR
// rows (front_rows, below). The source tile with its halo (clamped coordinates), the horizontal pass on the rows the
// vertical pass needs, the vertical pass on the tile plus a two-pixel ring, the central differences and M on the tile
// plus a one-pixel ring (0 outside the image, as the twin's NMS reads it), then NMS on the tile: mk = M where the
// pixel is kept, else 0, and the maximum of gx^2 + gy^2 (an integer atomicMax: exact whatever the order).
// NMS does not need the maximum (it compares magnitudes), so only the division and the codes are left to
// codes_kernel. Every value equals the definition of canny.h: the halo holds the smoothed plane at clamped
// coordinates, which is what the clamped differences read.
// Output rows per block (FR, FR / kTileY of them a thread): kFrontRows, or kFrontSmallRows on frames of fewer than
// kFrontSmallTiles tiles of kFrontRows rows (800x600 has 475, 1024x768 768). There a block's latency sets the kernel's
// time (512x512: 256 blocks of 32 rows for 132 multiprocessors), and blocks of 16 rows, twice as many, shorten it; from
// 1024x768 up they do not (docs/benchmarks.md: issue 18, GPU kernels, 26th session).
constexpr int kFrontRows = 32, kFrontSmallRows = 16, kFrontSmallTiles = 512;
int front_rows(int W, int H) {
  const int64_t tiles = int64_t((W + kTileX - 1) / kTileX) * ((H + kFrontRows - 1) / kFrontRows);
  return tiles < kFrontSmallTiles ? kFrontSmallRows : kFrontRows;
}

template <int R, int FR = kFrontRows>
struct FrontSmem {
  static_assert(FR % kTileY == 0 && FR >= kTileY, "whole rows of threads");
  static constexpr int kRows = FR + 4 + 2 * R, kCols = kTileX + 4 + 2 * R;  // source tile
  static constexpr int kColsP = (kCols + 3) & ~3;                                 // its rows in words
  static constexpr int kHCols = kTileX + 4, kMCols = kTileX + 2;                  // h and s columns; M columns
  alignas(16) uint8_t src[kRows][kColsP];
  alignas(16) uint16_t h[kRows][kHCols];
  uint8_t s[FR + 4][kHCols];
  float m[FR + 2][kMCols];
};

// One tile of front_kernel. R: the radius (the taps unrolled, their weights in registers). kIn: the tile with
// its whole halo lies inside the image, so no coordinate needs clamping (most tiles); otherwise every read
// clamps, as the definition.
template <int R, int FR, bool kIn>
__device__ __forceinline__ void front_tile(const uint8_t* __restrict__ src, int pitch, int W, int H, const Taps& taps,
                                           float* __restrict__ mk, uint32_t* max2, FrontSmem<R, FR>& sm) {
  constexpr int kThreads = kTileX * kTileY;
  constexpr int kRows = FrontSmem<R, FR>::kRows, kCols = FrontSmem<R, FR>::kCols;
  constexpr int kHCols = FrontSmem<R, FR>::kHCols, kMCols = FrontSmem<R, FR>::kMCols;
  auto& src_s = sm.src;
  auto& h_s = sm.h;
  auto& s_s = sm.s;
  auto& m_s = sm.m;
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kTileX + tx;
  const int x0 = blockIdx.x * kTileX, y0 = blockIdx.y * FR;
  const int sx0 = x0 - 2 - R, sy0 = y0 - 2 - R;  // coordinates of src_s[0][0] (and the rows of h_s)
  int32_t tw[2 * R + 1];
#pragma unroll
  for (int j = 0; j <= 2 * R; ++j) tw[j] = taps.w[j];
  auto cx_ = [&](int x) { return kIn ? x : clampi(x, 0, W - 1); };
  auto cy_ = [&](int y) { return kIn ? y : clampi(y, 0, H - 1); };
  // Loops over flattened indices with constant row lengths (the divisions are multiplies): all lanes work.
  // Inside, a thread takes 4 bytes of a row (one address, a word stored; the bytes past kCols, which the image may
  // not have, are not read and stay 0, unused).
  if (kIn) {
    constexpr int kG = FrontSmem<R, FR>::kColsP / 4;
    for (int k = tid; k < kRows * kG; k += kThreads) {
      const int ry = k / kG, c4 = (k % kG) * 4;
      const uint8_t* p = src + size_t(sy0 + ry) * pitch + (sx0 + c4);
      uint32_t w = 0;
#pragma unroll
      for (int b = 0; b < 4; ++b)
        if (c4 + b < kCols) w |= uint32_t(p[b]) << (8 * b);
      *reinterpret_cast<uint32_t*>(&src_s[ry][c4]) = w;
    }
  } else {
    for (int k = tid; k < kRows * kCols; k += kThreads) {
      const int ry = k / kCols, cx = k % kCols;
      src_s[ry][cx] = src[size_t(cy_(sy0 + ry)) * pitch + cx_(sx0 + cx)];
    }
  }
  __syncthreads();
  // h at (row clamp(sy0 + ry), column clamp(x0 - 2 + cx)); inside, src_s[ry][cx + j] is tap j's pixel, and a thread
  // takes 4 columns cx .. cx + 3 of a row from the words holding their taps' pixels (within the padded row: cx + 3 +
  // 2R < kCols), storing them as one 8-byte word.
  if (kIn) {
    constexpr int kQ = kHCols / 4, kW = (3 + 2 * R) / 4 + 1;
    static_assert(kHCols % 4 == 0, "h rows in groups of 4");
    for (int k = tid; k < kRows * kQ; k += kThreads) {
      const int ry = k / kQ, c4 = (k % kQ) * 4;
      const uint32_t* row = reinterpret_cast<const uint32_t*>(&src_s[ry][c4]);
      uint32_t w[kW];
#pragma unroll
      for (int i = 0; i < kW; ++i) w[i] = row[i];
      int32_t acc[4] = {0, 0, 0, 0};
#pragma unroll
      for (int j = 0; j <= 2 * R; ++j)
#pragma unroll
        for (int o = 0; o < 4; ++o) acc[o] += tw[j] * int32_t((w[(o + j) >> 2] >> (8 * ((o + j) & 3))) & 0xffu);
      uint32_t hv[4];
#pragma unroll
      for (int o = 0; o < 4; ++o) hv[o] = uint32_t((acc[o] + 32) >> 6);  // < 2^16: the taps sum to 2^14
      *reinterpret_cast<uint2*>(&h_s[ry][c4]) = make_uint2(hv[0] | hv[1] << 16, hv[2] | hv[3] << 16);
    }
  } else {
    for (int k = tid; k < kRows * kHCols; k += kThreads) {
      const int ry = k / kHCols, cx = k % kHCols;
      const int xc = clampi(x0 - 2 + cx, 0, W - 1);
      int32_t acc = 0;
#pragma unroll
      for (int j = 0; j <= 2 * R; ++j) acc += tw[j] * int32_t(src_s[ry][clampi(xc + j - R, 0, W - 1) - sx0]);
      h_s[ry][cx] = uint16_t((acc + 32) >> 6);
    }
  }
  __syncthreads();
  // s at (clamp(y0 - 2 + sy), clamp(x0 - 2 + cx)). Inside, a thread takes a column's segment of kSeg rows, its
  // taps' h values held in registers as it goes down (each h read once, not 2R + 1 times).
  if (kIn) {
    constexpr int kSeg = (FR + 4) % 6 == 0 ? 6 : 5, kSegs = (FR + 4) / kSeg;
    static_assert((FR + 4) % kSeg == 0 && kSegs * kHCols <= kThreads, "one segment a thread");
    if (tid < kSegs * kHCols) {
      const int cx = tid % kHCols, sy0s = (tid / kHCols) * kSeg;
      int32_t hv[kSeg + 2 * R];
#pragma unroll
      for (int i = 0; i < kSeg + 2 * R; ++i) hv[i] = h_s[sy0s + i][cx];
#pragma unroll
      for (int o = 0; o < kSeg; ++o) {
        int32_t acc = 0;
#pragma unroll
        for (int j = 0; j <= 2 * R; ++j) acc += tw[j] * hv[o + j];
        s_s[sy0s + o][cx] = uint8_t((acc + (1 << 21)) >> 22);
      }
    }
  } else {
    for (int k = tid; k < (FR + 4) * kHCols; k += kThreads) {
      const int sy = k / kHCols, cx = k % kHCols;
      const int yc = clampi(y0 - 2 + sy, 0, H - 1);
      int32_t acc = 0;
#pragma unroll
      for (int j = 0; j <= 2 * R; ++j) acc += tw[j] * int32_t(h_s[clampi(yc + j - R, 0, H - 1) - sy0][cx]);
      s_s[sy][cx] = uint8_t((acc + (1 << 21)) >> 22);
    }
  }
  __syncthreads();
  // Central differences at clamped coordinates; s_s[sy][cx] is s at (clamp(x0 - 2 + cx), clamp(y0 - 2 + sy)).
  auto grad = [&](int x, int y, int32_t* dx, int32_t* dy) {
    const int cy = y - (y0 - 2), cx = x - (x0 - 2);
    *dx = int32_t(s_s[cy][cx_(x + 1) - (x0 - 2)]) - int32_t(s_s[cy][cx_(x - 1) - (x0 - 2)]);
    *dy = int32_t(s_s[cy_(y + 1) - (y0 - 2)][cx]) - int32_t(s_s[cy_(y - 1) - (y0 - 2)][cx]);
  };
  uint32_t m2max = 0;
  for (int k = tid; k < (FR + 2) * kMCols; k += kThreads) {
    const int my = k / kMCols, mx = k % kMCols;
    const int x = x0 - 1 + mx, y = y0 - 1 + my;
    float v = 0.0f;
    if (kIn || (x >= 0 && y >= 0 && x < W && y < H)) {
      int32_t dx, dy;
      grad(x, y, &dx, &dy);
      const uint32_t m2 = uint32_t(dx * dx + dy * dy);
      // Exact integer argument <= 130050; correctly rounded. 0 (a flat neighbourhood) gets its exact root, +0,
      // without the square root, whose slow path (a warp's call when any lane's argument is 0) costs more than
      // the root itself: the argument the root sees is at least 1, a normal float.
      const float r = __fsqrt_rn(float(max(m2, 1u)));
      v = m2 ? r : 0.0f;
      if (mx >= 1 && my >= 1 && mx <= kTileX && my <= FR) m2max = max(m2max, m2);
    }
    m_s[my][mx] = v;
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < FR / kTileY; ++k) {
    const int ly = ty + k * kTileY, x = x0 + tx, y = y0 + ly;
    if (!kIn && (x >= W || y >= H)) continue;
    const float mc = m_s[ly + 1][tx + 1];
    float v = 0.0f;
    if (mc != 0.0f) {
      int32_t dx, dy;
      grad(x, y, &dx, &dy);
      const int ax = abs(dx), ay = abs(dy);
      const int sx = (dx > 0) - (dx < 0), sy = (dy > 0) - (dy < 0);
      int mjx, mjy, mnx, mny;
      if (ax >= ay) {
        mjx = sx; mjy = 0; mnx = 0; mny = sy;
      } else {
        mjx = 0; mjy = sy; mnx = sx; mny = 0;
      }
      // tt = min / max of (ax, ay), one rounding (ay / ax where ax >= ay, else ax / ay; max >= 1 since M > 0). A zero
      // minor component gets its exact quotient, +0, without the division: the division's slow path, which a warp
      // takes whenever one lane divides 0 (most warps: axis-aligned gradients are common), costs more than the
      // division itself. The division sees a numerator of at least 1.
      const int num = min(ax, ay), den = max(ax, ay);
      const float q = __fdiv_rn(float(max(num, 1)), float(den));
      const float tt = num ? q : 0.0f;
      const int cx = tx + 1, cy = ly + 1;  // this pixel in m_s; its neighbours are inside the ring
      const float a = m_s[cy + mjy][cx + mjx];
      const float b = m_s[cy + mjy + mny][cx + mjx + mnx];
      const float c = m_s[cy - mjy][cx - mjx];
      const float d = m_s[cy - mjy - mny][cx - mjx - mnx];
      const float fwd = __fadd_rn(a, __fmul_rn(tt, __fsub_rn(b, a)));
      const float bwd = __fadd_rn(c, __fmul_rn(tt, __fsub_rn(d, c)));
      if (mc > fwd && mc >= bwd) v = mc;
    }
    mk[size_t(y) * W + x] = v;
  }
  for (int o = 16; o > 0; o >>= 1) m2max = max(m2max, __shfl_xor_sync(0xffffffffu, m2max, o));
  // Most warps hold no new maximum: a plain read first keeps the atomics on the one word few.
  if (tx == 0 && m2max > __ldcg(max2)) atomicMax(max2, m2max);
}

template <int R, int FR>
__global__ void __launch_bounds__(kTileX * kTileY)
front_kernel(const uint8_t* __restrict__ src, int pitch, int W, int H, Taps taps, float* __restrict__ mk,
             uint32_t* max2) {
  after_previous();
  __shared__ FrontSmem<R, FR> sm;
  const int x0 = blockIdx.x * kTileX, y0 = blockIdx.y * FR;
  const bool inside = x0 - 2 - R >= 0 && y0 - 2 - R >= 0 && x0 + kTileX + 1 + R <= W - 1 &&
                      y0 + FR + 1 + R <= H - 1;  // block-uniform
  if (inside)
    front_tile<R, FR, true>(src, pitch, W, H, taps, mk, max2, sm);
  else
    front_tile<R, FR, false>(src, pitch, W, H, taps, mk, max2, sm);
}

// G = mk / Mmax (canny.h NUMBERS, one rounding), into g (gradient_map_cuda: floats, pitch g_pitch) or, for
// detect_edges_cuda, as what the histograms read of it (g_half) into gh (with a null g; a null gh in fixed mode, which
// needs neither). With q, also the threshold codes (threshold_codes in canny.h: A | B << 8, row-major): every
// comparison of the CPU twin becomes an integer one. A thread takes kV pixels of a row: 4 (16-byte loads of mk) where
// the rows allow it (quad_rows), else 1. Mmax = sqrt(max2) once a thread: the same rounding as once a pixel. Also
// clears SM (sm_zero, where the counting kernels add to it) and the zero_words words at zero (select_kernel's
// histograms and counters: no memset of their own).
template <int kV>
__global__ void codes_kernel(const float* __restrict__ mk, const uint32_t* __restrict__ max2, int W, int H,
                             float* __restrict__ g, int g_pitch, uint8_t* __restrict__ gh, uint16_t* __restrict__ q,
                             uint16_t* __restrict__ sm_zero, uint32_t* __restrict__ zero, int zero_words) {
  after_previous();
  static_assert(kV == 1 || kV == 4, "one pixel a thread, or four");
  __shared__ float t[kMaxThreshold + 1];
  const int tid = threadIdx.y * kTileX + threadIdx.x;
  if (tid <= kMaxThreshold) t[tid] = __fdiv_rn(float(tid), 100.0f);
  for (int k = (blockIdx.y * gridDim.x + blockIdx.x) * (kTileX * kTileY) + tid; k < zero_words;
       k += gridDim.x * gridDim.y * (kTileX * kTileY))
    zero[k] = 0;
  __syncthreads();
  const int x = (blockIdx.x * kTileX + threadIdx.x) * kV, y = blockIdx.y * kTileY + threadIdx.y;
  if (x >= W || y >= H) return;
  const size_t i = size_t(y) * W + x;
  float mc[kV], v[kV];
  if (kV == 4) {
    const float4 m4 = *reinterpret_cast<const float4*>(mk + i);
    mc[0] = m4.x;
    mc[1] = m4.y;
    mc[2] = m4.z;
    mc[3] = m4.w;
  } else {
    mc[0] = mk[i];
  }
  const float mmax = __fsqrt_rn(float(*max2));
#pragma unroll
  for (int u = 0; u < kV; ++u) v[u] = mc[u] != 0.0f ? __fdiv_rn(mc[u], mmax) : 0.0f;
  if (g) {
    float* gr = g + size_t(y) * g_pitch + x;
    if (kV == 4)
      *reinterpret_cast<float4*>(gr) = make_float4(v[0], v[1], v[2], v[3]);
    else
      gr[0] = v[0];
  }
  if (gh) {
    if (kV == 4)
      *reinterpret_cast<uchar4*>(gh + i) = make_uchar4(g_half(v[0]), g_half(v[1]), g_half(v[2]), g_half(v[3]));
    else
      gh[i] = g_half(v[0]);
  }
  if (sm_zero) {
    if (kV == 4)
      *reinterpret_cast<uint2*>(sm_zero + i) = make_uint2(0u, 0u);
    else
      sm_zero[i] = 0;
  }
  if (!q) return;
  uint32_t c[kV];
#pragma unroll
  for (int u = 0; u < kV; ++u) c[u] = v[u] > 0.0f ? threshold_codes(v[u], t) : 0u;
  if (kV == 4)
    *reinterpret_cast<uint2*>(q + i) = make_uint2(c[0] | c[1] << 16, c[2] | c[3] << 16);
  else
    q[i] = uint16_t(c[0]);
}

// ---- thresholds and hysteresis ---------------------------------------------------------------------------

// Hysteresis as connected components (DESIGN.md section 5; canny.h NUMBERS). For a pair (low, high) let
// S = { B >= low } u { A >= high } (= { B >= low } when low < high: G >= high/100 implies G > low/100).
// The edge map is every pixel of S whose 8-connected component of S inside its region holds a pixel with
// A >= high, i.e. whose component's maximum of A is >= high: the set the CPU twin's flood fill finds.
// So one labelling of S per distinct low serves every candidate with that low; the linking maps are counted
// without building them: pixel p of S(low) lies in the linking map of (low, high) iff A(p) < high <=
// maxA(component of p), so SM[p] = sum over the lows <= B(p) of F_low(maxA) - F_low(A(p)), F_low(v) = the
// number of candidates (low, high) with high <= v.
//
// Labelling: union-find over pixel indices (Playne and Hawick's lock-free scheme): every pixel of S starts
// as its own root, parents always point to smaller indices (atomicMin), so the find loops end and any
// interleaving gives the same partition. Layers: the lows of a batch, one label plane each in the tile path
// (blockIdx.z); strip mode's counting kernels take up to kMaxStripLayers lows in one launch (blockIdx.y), one
// plane of cmax each (a larger kernel parameter: CUDA 12.1 and later take up to 32 KB).
constexpr int kMaxLayers = 8;  // kMaxStripLayers: with the workspace

template <int N>
struct LayersOf {
  int n;                              // layers in this batch
  uint8_t low[N];                     // count pass: the low of each layer (high: 255, never reached)
  uint16_t f[N][kMaxThreshold + 1];   // F_low(v): candidates (low, high) with high <= v
  int16_t slot[N];                    // strip mode: plane of cmax for the component maxima of this low, -1 none
  uint32_t tag;                       // the batch's index + 1: the value of its redo marks (the listed kernels)
};
using Layers = LayersOf<kMaxLayers>;
using StripLayers = LayersOf<kMaxStripLayers>;
#if defined(__CUDACC_VER_MAJOR__) && \
    (__CUDACC_VER_MAJOR__ < 12 || (__CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ < 1))
#error "strip_count_kernel's parameters (CclParams and StripLayers, about 8.3 KB) need CUDA 12.1 or later"
#endif

// Strip mode: which plane of cmax holds the component maxima of S(low), per low (-1: not kept).
struct LowSlots {
  int16_t of[kMaxThreshold + 1];
};

struct CclParams {
  const uint16_t* q;           // codes
  int width, height;
  int region_w;                // kStripWidth (strips) or the width (one region)
  uint32_t* lab;               // layer l at lab + l * n: parent pointers (only pixels of S are written)
  uint32_t* mx;                // layer l at mx + l * n: maxA of a root (written for pixels of S)
  const ThresholdPair* pairs;  // final pass: the pair of strip x / 32 (all equal in frame/fixed mode)
  int final_pass;
  int kept;                    // final pass: layers 0 .. kept - 1 still hold the last batch's components (lows in
                               // layers.low), which the map reads instead of labelling again
  Layers layers;
};

// The final pass of a region whose pair is (lo, hi) labels S again unless lo == hi (S = {A >= high}, every pixel
// of it an edge: no linking) or the last batch of lows left the components of S(lo) in a layer (kept_layer).
__host__ __device__ __forceinline__ int kept_layer(const CclParams& p, uint32_t lo) {
  for (int l = 0; l < p.kept; ++l)
    if (p.layers.low[l] == lo) return l;
  return -1;
}
__device__ __forceinline__ bool final_needs_labels(const CclParams& p, uint32_t lo, uint32_t hi) {
  return !p.final_pass || (lo != hi && kept_layer(p, lo) < 0);
}

__device__ __forceinline__ void layer_pair(const CclParams& p, int l, int x, uint32_t* lo, uint32_t* hi) {
  if (p.final_pass) {
    const ThresholdPair t = p.pairs[x / kStripWidth];
    *lo = uint32_t(t.low);
    *hi = uint32_t(t.high);
  } else {
    *lo = p.layers.low[l];
    *hi = 255u;
  }
}

// The set S that every labelling labels, {B >= lo} (code = A | B << 8, A < 256): a labelled pair (lo, hi) has
// lo < hi (a low equal to its high is never labelled: final_needs_labels), where A >= hi > lo implies B >= lo
// (threshold_codes), or hi = 255 (the counting passes), which A (at most 100) never reaches. So {B >= lo} is
// {B >= lo} u {A >= hi} (canny.h) for every pair labelled.
__device__ __forceinline__ bool in_s(uint32_t code, uint32_t lo) { return code >= lo << 8; }

// The edge map's rule, for a pixel with code `code` in a region whose pair is (lo, hi), lo <= hi: 255 where it is
// an edge. lo == hi: S = {A >= high}, every pixel of it an edge (no linking). lo < hi: S = {B >= lo} (A >= hi > lo
// implies B >= lo), an edge where its component's maximum of A, max_of() (called for pixels of S only), reaches hi.
template <class Max>
__device__ __forceinline__ uint8_t map_edge(uint32_t code, uint32_t lo, uint32_t hi, Max max_of) {
  if (lo == hi) return (code & 0xffu) >= hi ? 255 : 0;
  return (code >> 8) >= lo && max_of() >= hi ? 255 : 0;
}

// Union-find labels (Playne and Hawick's lock-free scheme; parents at smaller indices) and where they live:
// at(g) is the word of label g, load(g) reads it.
//   GlobalLabels: global memory, read past L1 (other blocks write it);
//   SharedLabels: a block's shared memory holding labels base .. base + n - 1 (a tile, a strip or a part of one);
//   ClusterLabels (below): the distributed shared memory of a cluster of blocks.
struct GlobalLabels {
  uint32_t* lab;
  __device__ __forceinline__ uint32_t* at(uint32_t g) const { return lab + g; }
  __device__ __forceinline__ uint32_t load(uint32_t g) const { return __ldcg(lab + g); }
  __device__ __forceinline__ uint32_t atomic_min(uint32_t g, uint32_t v) const { return atomicMin(at(g), v); }
  __device__ __forceinline__ void halve(uint32_t g, uint32_t gp) const { atomicMin(at(g), gp); }  // find_root
};

struct SharedLabels {
  static constexpr uint32_t kAccW = 0x80000000u;  // kAcc (find_strip)
  uint32_t* lab;  // label base + k at lab[k]
  uint32_t base;
  __device__ __forceinline__ uint32_t* at(uint32_t g) const { return lab + (g - base); }
  __device__ __forceinline__ uint32_t load(uint32_t g) const { return lab[g - base]; }
  __device__ __forceinline__ uint32_t atomic_min(uint32_t g, uint32_t v) const { return atomicMin(at(g), v); }
  __device__ __forceinline__ void sync() const { __syncthreads(); }
};

template <class Lab>
__device__ __forceinline__ uint32_t find_root(const Lab& L, uint32_t a) {
  uint32_t p = L.load(a);
  while (p != a) {
    a = p;
    p = L.load(a);
  }
  return a;
}

// In global memory (the tile path's border and roots passes, the split passes' SplitLabels) chains of tile roots get
// long (a component across many strips and tiles, each hung under a smaller root), so the walk halves the path as it
// goes: a word set to its grandparent still points at an ancestor (roots are only ever hung, never unhung), and
// atomicMin keeps a smaller ancestor written meanwhile (L.halve).
// One step of the walk (find_root_halving; frame_split_finish_kernel's walks in lock step): a's parent p has parent
// gp; a is hung under gp unless p is a root (gp == p).
template <class Lab>
__device__ __forceinline__ void halve_step(const Lab& L, uint32_t a, uint32_t p, uint32_t gp) {
  if (gp != p) L.halve(a, gp);
}
template <class Lab>
__device__ __forceinline__ uint32_t find_root_halving(const Lab& L, uint32_t a) {
  uint32_t p = L.load(a);
  while (p != a) {
    const uint32_t gp = L.load(p);
    halve_step(L, a, p, gp);
    a = p;
    p = gp;
  }
  return a;
}
__device__ __forceinline__ uint32_t find_root(const GlobalLabels& L, uint32_t a) { return find_root_halving(L, a); }

template <class Lab>
__device__ void merge(const Lab& L, uint32_t a, uint32_t b) {
  for (;;) {
    a = find_root(L, a);
    b = find_root(L, b);
    if (a == b) return;
    if (a > b) {
      const uint32_t t = a;
      a = b;
      b = t;
    }
    const uint32_t old = L.atomic_min(b, a);  // hang root b under the smaller root a
    if (old == b) return;
    b = old;  // b was hung meanwhile: retry from its new parent
  }
}

// The pixel (x, y) of layer blockIdx.z (x and y in scope, inside the image): returns unless it lies in S of its
// layer's pair (or the final pass has no labels to make for it); defines l, n, i, lo, hi, code and lab (the
// layer's parents).
#define CCL_PIXEL_AT()                                                               \
  const int l = blockIdx.z;                                                          \
  const size_t n = size_t(p.width) * p.height;                                       \
  const uint32_t i = uint32_t(size_t(y) * p.width + x);                              \
  uint32_t lo, hi;                                                                   \
  layer_pair(p, l, x, &lo, &hi);                                                     \
  if (!final_needs_labels(p, lo, hi)) return;                                        \
  const uint32_t code = p.q[i];                                                      \
  if (!in_s(code, lo)) return;                                                       \
  uint32_t* lab = p.lab + size_t(l) * n;

// ---- the tile path: labels in global memory --------------------------------------------------------------
// Frame mode, and strip mode for strips that no block or cluster holds (taller ones, GPUs before sm_90, sets
// whose pair may need labelling again). Tiles of 32 columns (a tile never straddles a strip) and as many rows as
// a block holds in shared memory, fewer where two blocks then share a multiprocessor (StripLimits::tile_rows;
// the whole height where it fits, else equal parts of it):
//   pass 1 (ccl_strip_local_kernel, with the strip kernels below) labels each tile alone as strip_label does,
//     then writes, for every pixel of S, the global index of its tile root as its parent, and for every tile
//     root the maximum of A over its tile component; it marks the tile roots in bit rows;
//   pass 2 (ccl_strip_border_kernel) merges, in global memory, the pixels of S across the tiles' borders;
//   pass 3 (ccl_max_roots_kernel) hangs every tile root under its root and folds its maximum in;
//   pass 4 (ccl_resolve_roots_kernel) gives every tile root the maximum of its whole component.
// Then the maximum of the component of any pixel p of S is mx[lab[p]] (comp_max).

// Pass 2's first rows: pixel (x0 + t, y0), the first row of a tile that is not the image's, joins its neighbours
// of S in the row above (inside its region).
__device__ __forceinline__ void ccl_top_pixel(const CclParams& p, int x0, int y0, int t) {
  const int x = x0 + t, y = y0;
  if (x >= p.width || y >= p.height || y == 0) return;
  CCL_PIXEL_AT();
  const int W = p.width;
  const int rx0 = (x / p.region_w) * p.region_w, rx1 = min(W, rx0 + p.region_w);
  for (int dx = -1; dx <= 1; ++dx) {
    const int xx = x + dx;
    if (xx >= rx0 && xx < rx1 && in_s(p.q[size_t(y - 1) * W + xx], lo))
      merge(GlobalLabels{lab}, i, uint32_t(int64_t(i) - W + dx));
  }
}

// The tile roots of layer l's word k of the bit rows (word y * ns + s holds bit x for pixel (32 s + x, y)), when
// its strip is labelled in this pass: calls f(i) for each, i the pixel's index.
template <class F>
__device__ __forceinline__ void for_tile_roots(const CclParams& p, const uint32_t* __restrict__ roots, int ns, F f) {
  const int l = blockIdx.z;
  const size_t k = size_t(blockIdx.x) * blockDim.x + threadIdx.x, words = size_t(ns) * p.height;
  if (k >= words) return;
  const int s = int(k % size_t(ns));
  uint32_t lo, hi;
  layer_pair(p, l, s * kStripWidth, &lo, &hi);
  if (!final_needs_labels(p, lo, hi)) return;
  uint32_t bits = roots[size_t(l) * words + k];
  const uint32_t row = uint32_t((k / size_t(ns)) * p.width) + uint32_t(s * kStripWidth);
  for (; bits; bits &= bits - 1) f(row + uint32_t(__ffs(bits) - 1));
}

// Pass 3: every tile root gets its root as parent and folds its tile component's maximum into the root's. Only
// roots receive folds and a root never folds. The read of the root's maximum before the atomic may be stale
// (another fold in flight): maxima only grow, so that costs at most an atomic that changes nothing.
__global__ void ccl_max_roots_kernel(CclParams p, const uint32_t* __restrict__ roots, int ns) {
  after_previous();
  const size_t n = size_t(p.width) * p.height;
  uint32_t* lab = p.lab + size_t(blockIdx.z) * n;
  uint32_t* mx = p.mx + size_t(blockIdx.z) * n;
  for_tile_roots(p, roots, ns, [&](uint32_t i) {
    const uint32_t parent = __ldcg(lab + i);
    if (parent == i) return;  // a root
    const uint32_t m = mx[i];
    const uint32_t r = find_root(GlobalLabels{lab}, parent);
    if (r != parent) lab[i] = r;
    if (m > __ldcg(mx + r)) atomicMax(mx + r, m);
  });
}

// Pass 4: every tile root that is not a root takes its root's maximum (final after pass 3). Any other pixel of S
// keeps its tile root as parent, so the maximum of p's component is mx[lab[p]] for every pixel p of S.
__global__ void ccl_resolve_roots_kernel(CclParams p, const uint32_t* __restrict__ roots, int ns) {
  after_previous();
  const size_t n = size_t(p.width) * p.height;
  const uint32_t* lab = p.lab + size_t(blockIdx.z) * n;
  uint32_t* mx = p.mx + size_t(blockIdx.z) * n;
  for_tile_roots(p, roots, ns, [&](uint32_t i) {
    const uint32_t r = lab[i];
    if (r != i) mx[i] = mx[r];
  });
}

// The maximum of A over the component of pixel i of S after pass 4 (lab, mx: its layer's planes).
__device__ __forceinline__ uint32_t comp_max(const uint32_t* lab, const uint32_t* mx, uint32_t i) {
  return __ldcg(mx + __ldcg(lab + i));
}

// SM over the layers of a batch: for each layer whose S holds the pixel, F_low(maxA) - F_low(A).
// accumulate: add to SM (later batches) instead of writing it. A block of 32 x 8 threads takes 32 x rows
// pixels (count_rows): the copy of the F tables into shared memory (loads from the kernel parameters, one
// address at a time) is paid once for all of them.
__global__ void __launch_bounds__(kTileX * kTileY) ccl_count_kernel(CclParams p, uint16_t* sm, int accumulate,
                                                                   int rows) {
  after_previous();
  __shared__ uint16_t f[kMaxLayers][kMaxThreshold + 1];  // dynamic indexing: from the parameter to shared
  const int tid = threadIdx.y * kTileX + threadIdx.x;
  const int nl = p.layers.n;
  for (int k = tid; k < nl * (kMaxThreshold + 1); k += kTileX * kTileY)
    f[k / (kMaxThreshold + 1)][k % (kMaxThreshold + 1)] = p.layers.f[k / (kMaxThreshold + 1)][k % (kMaxThreshold + 1)];
  __syncthreads();
  const int x = blockIdx.x * kTileX + threadIdx.x;
  if (x >= p.width) return;
  const size_t n = size_t(p.width) * p.height;
  const int y1 = min(p.height, int(blockIdx.y + 1) * rows);
  for (int y = blockIdx.y * rows + threadIdx.y; y < y1; y += kTileY) {
    const size_t i = size_t(y) * p.width + x;
    const uint32_t code = p.q[i], a = code & 0xffu, b = code >> 8;
    uint32_t s = accumulate ? uint32_t(sm[i]) : 0u;  // loaded with the code, not after the layers' loads
#pragma unroll  // the layers' loads are independent: issued together
    for (int l = 0; l < kMaxLayers; ++l) {
      if (l >= nl || b < p.layers.low[l]) continue;
      const uint32_t m = comp_max(p.lab + size_t(l) * n, p.mx + size_t(l) * n, uint32_t(i));
      s += uint32_t(f[l][m]) - uint32_t(f[l][a]);
    }
    sm[i] = uint16_t(s);
  }
}

// pick_pair (pick_pair.h, the CPU twin's) by one whole warp, the same pair returned to every lane: lane t looks at the
// grid values j = 32 r + t + 1 (r = 0 .. 3; j <= nx): the members of D (g_count[j] > 0) in ballot masks, a member's
// nearest members below and above it from the masks, the local maxima of p_hist (a member with a member on each side
// and p_hist above both: pick_pair's d[k], 0 < k < nd - 1) in ballots, the first and the last of them from those.
// Instead of one thread walking the grid twice (two chains of dependent shared-memory loads).
__device__ __forceinline__ ThresholdPair pick_pair_warp(const uint32_t* g_count, const uint32_t* p_hist, int nx,
                                                        int fb_low, int fb_high) {
  constexpr int kR = (kMaxThreshold + 31) / 32;
  const int lane = int(threadIdx.x % 32);
  uint32_t dm[kR];  // bit t of dm[r]: j = 32 r + t + 1 is in D
#pragma unroll
  for (int r = 0; r < kR; ++r) {
    const int j = 32 * r + lane + 1;
    dm[r] = __ballot_sync(0xffffffffu, j <= nx && g_count[j] > 0);
  }
  int first = -1, last = -1;
#pragma unroll
  for (int r = 0; r < kR; ++r) {
    const int j = 32 * r + lane + 1;
    int below = 0, above = 0;  // the nearest members of D below and above j (0: none)
#pragma unroll
    for (int q = 0; q <= r; ++q) {  // ascending: the highest set bit below j wins
      const uint32_t m = q < r ? dm[q] : dm[q] & ((1u << lane) - 1u);
      if (m) below = 32 * q + 32 - __clz(m);
    }
#pragma unroll
    for (int q = kR - 1; q >= r; --q) {  // descending: the lowest set bit above j wins
      const uint32_t m = q > r ? dm[q] : dm[q] & ~((2u << lane) - 1u);
      if (m) above = 32 * q + __ffs(m);
    }
    const bool peak = ((dm[r] >> lane) & 1u) && below > 0 && above > 0 && p_hist[j] > p_hist[below] &&
                      p_hist[j] > p_hist[above];
    const uint32_t pm = __ballot_sync(0xffffffffu, peak);
    if (pm && first < 0) first = 32 * r + __ffs(pm);
    if (pm) last = 32 * r + 32 - __clz(pm);
  }
  return first < 0 ? ThresholdPair{fb_low, fb_high, 0} : ThresholdPair{first, last, 1};
}

// A block's Medina-Carnicer histograms (canny.h NUMBERS, the x grid) in shared memory, with the tables add
// reads: the bins of G's half steps, and those of Prob = v / nc for v = 0 .. nc (SM <= nc), made once a block so that
// no pixel divides by nc. init: every thread of the block, a barrier after.
struct BlockHistograms {
  uint32_t g_count[kMaxThreshold + 2];
  uint32_t p_hist[kMaxThreshold + 2];
  uint8_t bin_s[kHalfSteps + 1];
  uint8_t p_bins[kMaxCandidates + 1];
  __device__ __forceinline__ void init(const Bins& bins, int nc) {
    for (int j = threadIdx.x; j < kMaxThreshold + 2; j += blockDim.x) {
      g_count[j] = 0;
      p_hist[j] = 0;
    }
    for (int h = threadIdx.x; h <= kHalfSteps; h += blockDim.x) bin_s[h] = bins.of_half[h];
    for (int v = threadIdx.x; v <= nc; v += blockDim.x) p_bins[v] = bins.of_half[(200 * v) / nc];
    __syncthreads();
  }
  // One pixel's share: the bin of Prob = sv / nc in p_hist, and the bin of G (gh: g_half of it) in g_count when Prob
  // reaches it. sv <= nc <= kMaxCandidates: no overflow.
  __device__ __forceinline__ void add(uint32_t sv, uint32_t gh, uint32_t unc) {
    if (sv == 0) return;  // Prob = 0 is in no bin, and 100 * 0 >= x * nc never holds
    if (const uint32_t bp = p_bins[sv]) atomicAdd(&p_hist[bp], 1u);
    if (gh == 0) return;  // G outside (0, 1] (g_half)
    const uint32_t bg = bin_s[gh - 1];
    if (bg && 100u * sv >= bg * unc) atomicAdd(&g_count[bg], 1u);
  }
};

// A thread's G half steps of its first kHistU pieces of rows [y0, y1) x columns [x0, x1) (region_histograms' order),
// 4 a word, for region_histograms' `pre`: read before after_previous, past L1 (see "launches": gh is codes_kernel's,
// done before the counting kernel between them let this kernel's blocks launch).
constexpr int kHistU = 8;
// Piece k of a region of `pieces` pieces (`chunks` a row), column tx of it: its pixel's index; false where none.
__device__ __forceinline__ bool piece_pixel(int k, int pieces, int chunks, int W, int x0, int x1, int y0, int tx,
                                            uint32_t* idx) {
  // a strip (chunks == 1): a row a piece, without the division
  const int y = y0 + (chunks == 1 ? k : k / chunks);
  const int x = x0 + (chunks == 1 ? 0 : (k % chunks) * kStripWidth) + tx;
  const bool in = k < pieces && x < x1;
  *idx = in ? uint32_t(y) * uint32_t(W) + uint32_t(x) : 0u;  // W * H <= kMaxPixels < 2^32
  return in;
}
__device__ __forceinline__ void prefetch_g(const uint8_t* __restrict__ gh, int W, int x0, int x1, int y0, int y1,
                                           int tx, int ty, int ny, uint32_t (&pre)[kHistU / 4]) {
  const int chunks = (x1 - x0 + kStripWidth - 1) / kStripWidth, pieces = (y1 - y0) * chunks;
#pragma unroll
  for (int w = 0; w < kHistU / 4; ++w) pre[w] = 0;
#pragma unroll
  for (int u = 0; u < kHistU; ++u) {
    uint32_t i;
    if (piece_pixel(ty + u * ny, pieces, chunks, W, x0, x1, y0, tx, &i))
      pre[u / 4] |= uint32_t(__ldcg(gh + i)) << (8 * (u % 4));
  }
}

// The histograms of the pixels of rows [y0, y1) x columns [x0, x1) (BlockHistograms::add into the block's counts), by
// threads (tx, ty) of 32 x ny: a warp takes 32 columns of a row at a time, the warps spread over the (row, 32
// columns) pieces, so that every warp has work for a strip (a piece a row) and for a whole frame's rows (a block
// may hold a single row). A thread issues the loads of kU pieces together, SM first, then G where SM is not 0: two
// waits for memory a kU pieces instead of two a piece (at 512 x 512 a block of a strip is latency-bound: 8 pieces a
// thread). With `pre` (prefetch_g's words) the first kU pieces take their G from it: one wait for memory.
__device__ __forceinline__ void region_histograms(const uint8_t* __restrict__ gh, const uint16_t* __restrict__ sm,
                                                  int W, int x0, int x1, int y0, int y1, int tx, int ty, int ny,
                                                  uint32_t unc, BlockHistograms& hist,
                                                  const uint32_t* pre = nullptr) {
  const int chunks = (x1 - x0 + kStripWidth - 1) / kStripWidth, pieces = (y1 - y0) * chunks;
  constexpr int kU = kHistU;
  for (int k0 = ty; k0 < pieces; k0 += kU * ny) {
    uint32_t idx[kU], sv[kU], gv[kU];
#pragma unroll
    for (int u = 0; u < kU; ++u)
      sv[u] = piece_pixel(k0 + u * ny, pieces, chunks, W, x0, x1, y0, tx, &idx[u]) ? sm[idx[u]] : 0u;
#pragma unroll
    for (int u = 0; u < kU; ++u)
      gv[u] = pre && k0 == ty ? (pre[u / 4] >> (8 * (u % 4))) & 0xffu : sv[u] ? gh[idx[u]] : 0u;
#pragma unroll
    for (int u = 0; u < kU; ++u)
      if (sv[u]) hist.add(sv[u], gv[u], unc);
  }
}

// ---- strip mode with a strip in shared memory -------------------------------------------------------------
// One block per (strip, layer) labels the whole 32 x H strip in shared memory (one word per pixel; heights
// up to StripLimits::block_rows, at most kStripMaxRows), a cluster of blocks a taller one (up to
// kMaxClusterBlocks * StripLimits::cluster_rows rows); strip_final_kernel labels again with one block per strip
// where a pair's low has no plane of maxima. No global labels, no border pass. Phases, separated by barriers:
// load; union (strip_label); one pass in which every pixel of S points at its root and folds its A into the
// root's maximum (kAcc | max); then every pixel of S reads its component's maximum.
constexpr int kStripThreads = 1024;
constexpr int kStripMaxRows = 1184;  // 32 x 1184 x 6 bytes = 222 KB of shared memory
// A strip kernel's block holding `rows` rows of a strip keeps a label and a code byte a pixel (strip_rows_bytes),
// then the warps' lists of pixels of S (strip_list_bytes) in what its share of the multiprocessor leaves. The row
// limits (StripLimits) count strip_smem_bytes: 6 bytes a pixel, room for lists of half a warp's pixels at least.
constexpr size_t strip_rows_bytes(int rows) {
  return size_t(kStripWidth) * size_t(rows) * (sizeof(uint32_t) + sizeof(uint8_t));
}
constexpr size_t strip_smem_bytes(int rows) {
  return strip_rows_bytes(rows) + size_t(kStripWidth) * size_t(rows) / 2 * sizeof(uint16_t);
}
constexpr uint32_t kAcc = 0x80000000u;

// The codes of a strip kernel's rows in shared memory, for the one low it labels: a byte a pixel,
// A | (B >= low) << 7 (A <= 100; strip_load). in_code: the pixel lies in S = {B >= low}; a_of: its A.
// in_code's AND is inline PTX on 32 bits: written in C++, the compiler narrows the test of a byte to 16-bit
// operations, which ptxas turns into a shift, a sign extension and a compare (and a second compare where the row
// loop tests it again), where one LOP3 with a predicate does (docs/benchmarks.md, issue 18, GPU kernels, 24th session).
__device__ __forceinline__ bool in_code(uint32_t code) {
  uint32_t b;
  asm("and.b32 %0, %1, 128;" : "=r"(b) : "r"(code));
  return b != 0u;
}
__device__ __forceinline__ uint32_t a_of(uint8_t code) { return code & 0x7fu; }

constexpr int kStripWarps = kStripThreads / kStripWidth;

// Lane src's v, kept in a register through a loop: where registers are short, ptxas rebuilds a cheap value (a lane's
// mask, a 32-bit constant) in every iteration that uses it, but not the result of a shuffle (label_rows, strip_label,
// listed_label).
// The whole warp calls it, converged.
__device__ __forceinline__ uint32_t kept(uint32_t v, int src) { return __shfl_sync(0xffffffffu, v, src); }

// A strip kernel's block of `rows` rows gives each of its kStripWarps warps a chunk of chunk_rows(rows) consecutive
// rows, the last chunks possibly empty (769 rows: chunks of 25, warp 31's empty); its last row is in the chunk of warp
// last_chunk_warp(rows).
__host__ __device__ constexpr int chunk_rows(int rows) { return (rows + kStripWarps - 1) / kStripWarps; }
__host__ __device__ constexpr int last_chunk_warp(int rows) { return (rows - 1) / chunk_rows(rows); }
static_assert(chunk_rows(769) == 25 && last_chunk_warp(769) == 30 && last_chunk_warp(1080) == kStripWarps - 1,
              "chunks of a block's rows");

struct StripCcl {
  uint32_t* lab;    // shared: the labels of this block's rows, 32 x rows
  uint8_t* codes;   // shared: their codes (0 past the width)
  uint16_t* list;   // shared: this warp's list of the pixels of S (for_chunk_pixels), cap entries
  int cap;          // 0: no list
  int H;            // the strip's height
  int r0, rows;     // this block's rows of the strip: [r0, r0 + rows) (the whole strip but in a cluster)
  int top;          // the first strip row whose labels the labelling reaches (0; r0 for a tile of the tile path)
  int tx, ty, ny;   // column in the strip; first row and row step of this thread (rows of this block)
};

// The StripCcl of this thread for a block's dynamic shared memory smem holding room rows (labels, then codes, then
// with cap > 0 a list of cap pixels a warp: strip_list_bytes): rows [r0, r0 + rows) of a strip of H rows,
// labelled from row top on.
__device__ __forceinline__ StripCcl strip_ccl(uint32_t* smem, int room, int H, int r0, int rows, int top, int cap) {
  uint8_t* codes = reinterpret_cast<uint8_t*>(smem + size_t(kStripWidth) * room);
  uint16_t* lists = reinterpret_cast<uint16_t*>(codes + size_t(kStripWidth) * room);
  const int ty = int(threadIdx.x / kStripWidth);
  return StripCcl{smem, codes, lists + size_t(ty) * cap, cap, H, r0, rows, top,
                  int(threadIdx.x % kStripWidth), ty, int(blockDim.x / kStripWidth)};
}

// Where the label of strip pixel g = y * 32 + x lives: one block's shared memory (SharedLabels), or a cluster
// of K blocks (strip_count_cluster_kernel), whose block k holds rows [k, k + 1) * R: the strip's rows split
// evenly, R at most StripLimits::cluster_rows (two blocks a multiprocessor) and kMaxClusterRows.
constexpr int kMaxClusterBlocks = 8;  // the portable cluster size
constexpr int kMaxClusterRows = 720;  // ClusterLabels' division is exact below 724 rows a block (8 blocks)

// The magic number of ClusterLabels for per = 32 x R labels a block: ceil(2^32 / per).
inline uint32_t cluster_magic(uint32_t per) { return uint32_t(((uint64_t(1) << 32) + per - 1) / per); }

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900  // clusters: sm_90 (the host launches them only there)
struct ClusterLabels {
  uint32_t* const* part;  // shared: each block's labels, mapped into this block (distributed shared memory)
  uint32_t per;           // labels a block (32 x R)
  uint32_t magic;         // cluster_magic(per)
  // Label g's block is floor(g / per) = umulhi(g, magic): with magic = (2^32 + d) / per, d < per, the error
  // g d / (per 2^32) stays below 1 - (per - 1) / per while g per < 2^32, which g < 8 per and R < 724 give.
  __device__ __forceinline__ uint32_t* at(uint32_t g) const {
    const uint32_t k = __umulhi(g, magic);
    return part[k] + (g - k * per);
  }
  __device__ __forceinline__ uint32_t load(uint32_t g) const { return *at(g); }
  __device__ __forceinline__ uint32_t atomic_min(uint32_t g, uint32_t v) const { return atomicMin(at(g), v); }
  __device__ __forceinline__ void sync() const { cooperative_groups::this_cluster().sync(); }
  static constexpr uint32_t kAccW = SharedLabels::kAccW;
};
#endif

// The root of a: the word that is its own index, or (while maxima are gathered) a word at least Lab::kAccW (kAcc
// set; ListLabels: kAccW | max). *word: the root's word as the walk read it.
template <class Lab>
__device__ __forceinline__ uint32_t find_strip(const Lab& L, uint32_t a, uint32_t* word) {
  uint32_t p = L.load(a);
  while (p != a && p < Lab::kAccW) {
    a = p;
    p = L.load(a);
  }
  *word = p;
  return a;
}
template <class Lab>
__device__ __forceinline__ uint32_t find_strip(const Lab& L, uint32_t a) {
  uint32_t word;
  return find_strip(L, a, &word);
}

// Loads this block's rows of codes into shared memory as its low lo needs them (independent loads, unrolled; the
// caller syncs): 16 bytes of codes a thread where the rows allow it (a strip inside the image, the width a multiple
// of 8), stored as 8 bytes. Adding 128 - lo to B (at most 227: no carry into the next code) sets its bit 7 where
// B >= lo.
__device__ __forceinline__ uint32_t low_bytes(uint32_t w0, uint32_t w1, uint32_t add) {  // 2 codes a word
  const uint32_t b0 = (w0 & 0x007f007fu) | (((w0 + add) >> 8) & 0x00800080u);
  const uint32_t b1 = (w1 & 0x007f007fu) | (((w1 + add) >> 8) & 0x00800080u);
  return __byte_perm(b0, b1, 0x6420);
}
__device__ void strip_load(const StripCcl& c, const uint16_t* __restrict__ q, int W, int x0, uint32_t lo) {
  const uint32_t add = (128u - lo) * 0x01000100u;
  if ((W & 7) == 0 && x0 + kStripWidth <= W) {
    const int t = c.ty * kStripWidth + c.tx, step = (c.ny * kStripWidth) >> 2, g = (t & 3) * 8;
#pragma unroll 4
    for (int y = t >> 2; y < c.rows; y += step) {
      const uint4 v = __ldg(reinterpret_cast<const uint4*>(q + size_t(c.r0 + y) * W + x0 + g));
      *reinterpret_cast<uint2*>(c.codes + y * kStripWidth + g) =
          make_uint2(low_bytes(v.x, v.y, add), low_bytes(v.z, v.w, add));
    }
    return;
  }
  const int x = x0 + c.tx;
#pragma unroll 4
  for (int y = c.ty; y < c.rows; y += c.ny)
    c.codes[y * kStripWidth + c.tx] =
        x < W ? uint8_t(low_bytes(q[size_t(c.r0 + y) * W + x], 0u, add)) : uint8_t(0);
}

// A warp's chunk of rows in strip_label (strip rows [y0, y1), at most 2 x 32) and its pixels of S: its list, or
// the block's codes, from which for_chunk_pixels makes the rows' masks. The passes after the union visit the pixels
// of S through it, 32 at a time (for_chunk_pixels), rather than a warp a row: S is thin (NMS keeps ridges), and a
// row holds about 5 pixels of it on the standard images, so a row-wise pass runs most of its warp instructions for
// idle lanes.
constexpr int kChunkRows = 2 * 32;
static_assert(chunk_rows(kStripMaxRows) <= kChunkRows && kMaxClusterRows <= kStripMaxRows,
              "a warp's chunk of a strip block holds at most 64 rows (every strip kernel runs kStripThreads threads, "
              "on at most kStripMaxRows rows: tiles and cluster blocks too)");
struct StripChunk {
  int y0, y1;
  const uint8_t* codes;  // the block's codes (row r0 first): the rows' masks of S where there is no list
  const uint16_t* list;  // the chunk's pixels of S, n of them, where they fitted in the warp's list; else null
  int n;
};

// Calls f(k) for every pixel of S of chunk ch, k its index in the block's shared memory ((y - r0) * 32 + x),
// one pixel a lane (the warp whole on entry; f runs diverged). Where strip_label listed the chunk's pixels (the
// counting kernels), lane t takes entry t of each group of 32 of the list. Otherwise the pixels are numbered in
// row order over a half chunk (an inclusive prefix of the rows' counts across the lanes); lane t takes number t of
// each group of 32: its row by a binary search on the prefix, its column as the rank-th set bit of the row's
// mask (about 70 instructions a group: the lists save them twice, in the fold and in the count). Lane j makes the
// mask of the half's row j from its 32 codes (bit 7 of each byte, 4 at a time through a multiply), so that the row
// loop keeps no masks for this rare case (a chunk with more pixels of S than its list holds, or no list). (H200,
// against masks kept in the row loop: 0.965-0.993x the GPU time of strips and frames at 256x256 and 512x512,
// 0.997-1.002 at 1080p and 2160p, 0.978 on the tile path (2160p frame C_0.01); barbara 512 C_0.03's strip_count_kernel
// 7.16 M -> 6.73 M warp instructions, 30 -> 28 registers: docs/benchmarks.md, issue 18, GPU kernels, 23rd session.)
template <class F>
__device__ __forceinline__ void for_chunk_pixels(const StripChunk& ch, int lane, int r0, F f) {
  if (ch.list) {  // listed by strip_label: lane t takes entry t of each group of 32
#pragma unroll 1
    for (int k0 = 0; k0 < ch.n; k0 += 32)
      if (k0 + lane < ch.n) f(uint32_t(ch.list[k0 + lane]));
    return;
  }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int y = ch.y0 + 32 * h;  // row of lane 0's mask
    if (y >= ch.y1) return;
    uint32_t m = 0;
    if (y + lane < ch.y1) {
      const uint32_t* w = reinterpret_cast<const uint32_t*>(ch.codes + (y + lane - r0) * kStripWidth);
#pragma unroll
      for (int i = 0; i < kStripWidth / 4; ++i)  // bytes 0..3's bit 7 to bits 28..31 (no carries), to columns 4i..
        m |= ((((w[i] >> 7) & 0x01010101u) * 0x10204080u) >> 28) << (4 * i);
    }
    const uint32_t cnt = __popc(m);
    uint32_t incl = cnt;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      const uint32_t o = __shfl_up_sync(0xffffffffu, incl, d);
      if (lane >= d) incl += o;
    }
    const uint32_t excl = incl - cnt, total = __shfl_sync(0xffffffffu, incl, 31);
#pragma unroll 1
    for (uint32_t k0 = 0; k0 < total; k0 += 32) {
      const uint32_t k = k0 + uint32_t(lane);
      int j = 0;  // the rows whose inclusive prefix is <= k: those before k's row
#pragma unroll
      for (int step = 16; step; step >>= 1)
        if (__shfl_sync(0xffffffffu, incl, j + step - 1) <= k) j += step;
      uint32_t r = k - __shfl_sync(0xffffffffu, excl, j);  // k's rank in row j
      const uint32_t mj = __shfl_sync(0xffffffffu, m, j);
      int x = 0;  // the r-th set bit of mj
#pragma unroll
      for (int step = 16; step; step >>= 1) {
        const uint32_t c = __popc((mj >> x) & ((1u << step) - 1u));
        if (c <= r) {
          r -= c;
          x += step;
        }
      }
      if (k < total) f(uint32_t((y - r0 + j) * kStripWidth + x));
    }
  }
}

// Labels S = {B >= lo} in the strip (codes loaded for lo and synced: in_code; lo is the low of every pair
// labelled, whose S is {B >= lo}: in_s). On return
// (after a barrier) a pixel's word is kAcc | maxA of its component for a root of S, the root's index for the
// other pixels of S, and outside S kOutS in the last row of each warp's chunk and anything elsewhere (no reader
// looks at it); the calling warp's chunk of rows is returned.
//
// A strip row is one warp wide (kStripWidth == 32), so each warp labels a chunk of consecutive rows alone,
// top to bottom, one row per step (lane = column):
//   - the row's runs (maximal sets of consecutive pixels of S) from the ballot of S;
//   - the pixels of S above a run (columns s - 1 .. e + 1 of the previous row) come from the masks of the two
//     rows, one bit a pixel: the run takes the label of the first run above it (a register a lane holds the
//     previous row's labels, the same along a run: one shuffle), or starts a label at its first pixel when
//     there is none;
//   - the labels of the other runs above it, when there are any (junctions), are merged with it by the run's
//     first lane (union-find in lab, parents at smaller indices, the lock-free atomicMin merge);
//   - each pixel's word is its run's label (a root when the run started it);
//   - a row without a pixel of S costs a ballot.
// Then the first row of each chunk is merged with the last row of the chunk above (all chunks at once, the
// same merge, a run at a time as in the loop: once for each run above a run), and in one pass over the pixels of
// S (for_chunk_pixels) every pixel's word becomes its root and the component maxima of A are gathered at the roots.
// Long chains of parents, which a per-pixel union of the whole strip builds along vertical edges, cannot form
// inside a chunk; across chunks they are at most as long as the number of chunks.
constexpr uint32_t kOutS = 0x7fffffffu;

// A row's runs, for strip_label: the run of S holding this lane in a row of mask m (one bit a column; for a lane
// outside S the result is unused), [s, e], and the pixels of S above it, in columns s - 1 .. e + 1 of the row above
// (mask `above`): one bit a pixel, one run of bits for each run of the row above. s - 1 is the last column at or
// below the lane outside S (none: s = 0), e + 1 the first above it (none: e = 31). at_or_below: the lane's bit and
// those below it. Returns those bits; *s = s. k7f: 0x7fffffff (label_rows passes it kept in a register).
__device__ __forceinline__ uint32_t run_above(uint32_t m, uint32_t above, uint32_t at_or_below, int* s,
                                              uint32_t k7f = 0x7fffffffu) {
  const uint32_t before = ~m & at_or_below, after = ~(m | at_or_below);
  *s = 32 - __clz(before);
  const uint32_t up_to = (after & (0u - after)) * 2u - 1u;           // columns 0 .. e + 1 (all: e = 31)
  const uint32_t below_s = __funnelshift_rc(k7f, 0u, __clz(before));  // columns 0 .. s - 2 (none: s = 0)
  uint32_t r;  // above & up_to & ~below_s in one LOP3 (written in C++, ptxas made three instructions of it)
  asm("lop3.b32 %0, %1, %2, %3, 0x40;" : "=r"(r) : "r"(above), "r"(up_to), "r"(below_s));
  return r;
}

// The merges of a run with the runs above it at the chunks' first rows (strip_label and the listed kernel; in the row
// loops the junctions read the labels above from the storage: PixelRows::junctions, ListRows::junctions): `more`
// holds, at the lane of a run's first pixel, a bit for each run above to join (the first bit of that run in the row
// above, whose label `up` holds at that column); that lane merges the run's label `own` with each of them, a bit a
// step, while the warp walks the lanes' bits together.
template <class Lab>
__device__ __forceinline__ void merge_runs_above(const Lab& L, uint32_t more, uint32_t up, uint32_t own) {
  while (__any_sync(0xffffffffu, more)) {
    const uint32_t other = __shfl_sync(0xffffffffu, up, __ffs(more) - 1);
    if (more) {
      if (other != own) merge(L, other, own);
      more &= more - 1u;
    }
  }
}

// A chunk's rows [y0, y1) in turn (the row loop of strip_label and of the listed kernel; codes: the chunk's first
// row's code at this lane's column, a row every kStripWidth bytes), over two kinds of label storage, `rows`:
//   rows.room(m): the row of mask m fits (the lists: else the loop stops, returning false);
//   rows.start(y32, s, m): the label a run of row y (y32 = y * 32) starting at column s starts (no run above it);
//   rows.put(in, y32, m, node): the row's labels stored (node: this lane's run's label where in);
//   rows.junctions(more, own, y32, m, above): the merges of a junction in the chunk's own labels (more, own:
//     merge_runs_above's; both storages read the labels above from the row above's words or entries instead of
//     `up`, so that the loop keeps no copy of it).
// rows.start is called by every lane (ListRows shuffles), the others where the loop says.
// On return *pm is the mask of S of the last row read and *prev this lane's label there (where *pm has its bit).
template <class Rows>
__device__ __forceinline__ bool label_rows(Rows& rows, const uint8_t* codes, int y0, int y1, int lane, uint32_t* pm,
                                           uint32_t* prev) {
  // Kept: ptxas rebuilt both in every row with S (5 instructions of the 62 such a row had then).
  const uint32_t at_or_below = kept(0xffffffffu >> (31 - lane), lane);
  const uint32_t k7f = kept(at_or_below >> 1, 31);  // lane 31's: 0x7fffffff
  *pm = 0;    // the mask of S in row y - 1 inside the chunk (warp-uniform; 0 above the chunk's first row)
  *prev = 0;  // the label of (lane, y - 1) where pm has the lane's bit (a run's label at each of its pixels)
  // y32 = y * 32 (a multiply a row fewer than y).
  for (int y32 = y0 * kStripWidth; y32 < y1 * kStripWidth; y32 += kStripWidth, codes += kStripWidth) {
    const bool in = in_code(*codes);
    const uint32_t m = __ballot_sync(0xffffffffu, in);
    const uint32_t above = *pm;
    *pm = m;
    if (m == 0) continue;  // no pixel of S in this row (warp-uniform): nothing to label or merge
    if (!rows.room(m)) return false;
    int s;
    const uint32_t a = run_above(m, above, at_or_below, &s, k7f);
    // The run takes the label of the first run above it (prev is constant along a run), or starts a label at its
    // first pixel when there is none.
    const uint32_t up = *prev;
    const uint32_t first = __shfl_sync(0xffffffffu, up, __ffs(a) - 1);  // a shuffle reads the lane's low 5 bits
    const uint32_t started = rows.start(y32, s, m);  // every lane
    const uint32_t node = a ? first : started;
    rows.put(in, y32, m, node);
    *prev = node;
    // Every other run above joins it: the run's first lane merges their labels (the first bit of each run of a
    // but the first run's). Rare: a row without them costs a vote.
    const uint32_t starts = a & ~(a << 1);
    // `more` is the same along a run. A lane outside S has s = lane + 1, and its window (columns lane .. the next
    // column outside S) is the window of the run after it or holds at most one run above: so neither the vote nor
    // lane == s needs `in`.
    const uint32_t more = starts & (starts - 1u);
    if (__any_sync(0xffffffffu, more)) {
      __syncwarp();  // the row above's words or entries, and the labels, before the junctions read them
      rows.junctions(lane == s ? more : 0u, node, y32, m, above);
    }
    // No barrier after the merges: the next row's stores touch no word they read or write, the next row with
    // merges orders the stores before them (the __syncwarp above), and a merge racing another is what the
    // lock-free scheme allows; what reads the labels next comes after a barrier.
  }
  return true;
}

// strip_label's storage for label_rows: a word a pixel (lab: the block's rows, labels base ..) and the list of the
// chunk's pixels of S in row order (n counts them even with cap 0, where nothing is written; those past cap are not).
struct PixelRows {
  uint32_t* lab;
  uint32_t base;  // the block's first row r0, times 32
  int lane;
  uint32_t below;  // the lane's bits below it
  uint16_t* list;
  int cap, n;
  __device__ __forceinline__ bool room(uint32_t) const { return true; }
  __device__ __forceinline__ uint32_t start(int y32, int s, uint32_t) const { return uint32_t(y32 + s); }
  __device__ __forceinline__ void put(bool in, int y32, uint32_t m, uint32_t node) {
    const int k = y32 - int(base) + lane;
    if (in) lab[k] = node;
    const int at = n + __popc(m & below);
    if (in && at < cap) list[at] = uint16_t(k);
    n += __popc(m);
  }
  __device__ __forceinline__ SharedLabels labels() const { return SharedLabels{lab, base}; }
  // The labels above come from the row above's words (any node of that run's tree will do), not from `up`: so the row
  // loop keeps no copy of `up` for this rare path. ListRows::junctions is its twin over the entries; one loop in
  // label_rows over a rows.above(c) of each storage measured 1.016-1.026x at 2160p (docs/benchmarks.md, issue 18, GPU
  // kernels, 26th session), so each storage keeps its own.
  __device__ __forceinline__ void junctions(uint32_t more, uint32_t own, int y32, uint32_t, uint32_t) const {
    const uint32_t* row_above = lab + (y32 - kStripWidth - int(base));
    for (; more; more &= more - 1u) {
      const uint32_t other = row_above[__ffs(more) - 1];
      if (other != own) merge(labels(), other, own);
    }
  }
};

template <class Lab>
__device__ StripChunk strip_label(const StripCcl& c, const Lab& L, uint32_t lo) {
  uint32_t* lab = c.lab;  // this block's rows: local index li - base
  const uint32_t base = uint32_t(c.r0 * kStripWidth);
  const uint8_t* codes = c.codes;
  const int lane = c.tx;
  const int per = (c.rows + c.ny - 1) / c.ny;
  const int y0 = c.r0 + c.ty * per, y1 = min(c.r0 + c.rows, y0 + per);  // this warp's chunk (strip rows)
  StripChunk ch{y0, y1, codes, nullptr, 0};
  // The loop below writes the words of the pixels of S only. The words outside S are read in the chunk's last row
  // alone (by the chunk below, for its first row): that row starts as kOutS (16 bytes a store, 8 lanes).
  if (y0 < y1 && lane < kStripWidth / 4) {
    uint4* w4 = reinterpret_cast<uint4*>(lab + size_t(y1 - 1 - c.r0) * kStripWidth);
    w4[lane] = make_uint4(kOutS, kOutS, kOutS, kOutS);
  }
  __syncwarp();
  const uint32_t at_or_below = 0xffffffffu >> (31 - lane);
  PixelRows rows{lab, base, lane, kept(at_or_below >> 1, lane), c.list, c.cap, 0};  // kept: 3 instructions a row
  uint32_t pm, prev;
  label_rows(rows, codes + (size_t(y0 - c.r0) * kStripWidth + lane), y0, y1, lane, &pm, &prev);
  if (c.cap > 0 && rows.n <= c.cap) {
    ch.list = c.list;
    ch.n = rows.n;
  }
  L.sync();
  // The chunk's first row against the row above (in the block above for a cluster block's first chunk; not above a
  // tile of the tile path, c.top, whose border pass joins it), a run at a time as in the loop: the row above's pixels
  // of S are its words other than kOutS, and the run's first lane merges the run's label with that of each run above
  // it (not each pixel with each of its neighbours above: a run of r pixels under one run above merges once, not up
  // to 3r times).
  if (y0 > c.top && y0 < y1) {
    const uint32_t li = uint32_t(y0 * kStripWidth + lane);
    const bool in = in_code(codes[li - base]);
    const uint32_t m = __ballot_sync(0xffffffffu, in);
    if (m) {
      const uint32_t up = L.load(li - kStripWidth);  // kOutS outside S
      const uint32_t above = __ballot_sync(0xffffffffu, up != kOutS);
      int s;
      const uint32_t a = run_above(m, above, at_or_below, &s);
      uint32_t more = in && lane == s ? a & ~(a << 1) : 0u;  // the first pixel of each run above
      const uint32_t own = more ? lab[li - base] : 0u;       // the run's label (its first pixel's word)
      merge_runs_above(L, more, up, own);
    }
  }
  L.sync();
  // One pass: every pixel of S finds its root (a word with kAcc set is a root whose maximum is being
  // gathered), folds its A into it (the root's own fold turns its word into kAcc | A) and points at it.
  // A member's word is written by its own thread alone, with its root (readers walking through it stay on
  // the chain). The fold skips its atomic where the root's word as the walk read it holds the value already (a
  // maximum only grows): a component's pixels would otherwise all queue on one word. 0.97-0.99x the GPU time of C_0.03
  // strips and frames at 512x512 to 1024x1024, 1.00-1.01x on C_0.01 strips there (docs/benchmarks.md, issue 18's
  // seventeenth session); the listed kernels' fold (listed_label) measured 1.002-1.004x with it and does without.
  for_chunk_pixels(ch, lane, c.r0, [&](uint32_t k) {
    const uint32_t li = k + base;
    uint32_t w;
    const uint32_t r = find_strip(L, li, &w);
    const uint32_t v = kAcc | a_of(codes[k]);
    if (w < v) atomicMax(L.at(r), v);
    if (r != li) atomicMin(lab + k, r);  // an atomic store in effect (r is below any parent it had)
  });
  L.sync();
  return ch;
}

// The component maximum of a pixel of S whose word is w (after strip_label).
template <class Lab>
__device__ __forceinline__ uint32_t strip_max(const Lab& L, uint32_t w) {
  return (w & kAcc) ? (w & 0xffu) : (L.load(w) & 0xffu);
}

// The counting pass's per-pixel part, after strip_label (ch: the warp's chunk): SM += F_low(maxA) - F_low(A) for
// the pixels of S of this block's rows, and the plane of cmax for the low (when it has one) gets maxA there. The
// plane is written only for the pixels of S (B >= low): its readers test that first.
template <class Lab>
__device__ void strip_count_pixels(const StripCcl& c, const StripChunk& ch, const Lab& L, const CclParams& p,
                                   int slot, const uint16_t* f, uint16_t* sm, uint8_t* cmax, int x0) {
  const int W = p.width;
  uint8_t* plane = slot >= 0 ? cmax + size_t(slot) * W * c.H : nullptr;
  for_chunk_pixels(ch, c.tx, c.r0, [&](uint32_t k) {
    const int x = x0 + int(k % kStripWidth);
    if (x >= W) return;  // never in S (codes 0 past the width): kept for safety
    const size_t gi = size_t(c.r0 + int(k / kStripWidth)) * W + x;
    const uint32_t mx = strip_max(L, c.lab[k]);
    const uint32_t add = uint32_t(f[mx]) - uint32_t(f[a_of(c.codes[k])]);
    if (add) sm_add(sm, gi, add);
    if (plane) plane[gi] = uint8_t(mx);
  });
}
// Counting pass: block (strip, layer of the batch); SM (zeroed by the caller) gets F_low(maxA) - F_low(A).
// With a slot for the layer's low, plane `slot` of cmax (W x H bytes each) gets maxA of the pixel's
// component for the pixels of S, 0 elsewhere: the final pass reads its edge map from it.
// One (strip, layer) pair of the counting pass in a block (strip_count_kernel, strip_count_redo_kernel,
// frame_count_joined_kernel). join(c): between the labelling and the count, every thread (frame_count_joined_kernel:
// the strips' joins, ending with a barrier); nothing in strip mode.
struct NoJoin {
  __device__ __forceinline__ void operator()(const StripCcl&) const {}
};
template <class Join = NoJoin>
__device__ __forceinline__ void count_pair(const CclParams& p, const StripLayers& ls, uint16_t* sm, uint8_t* cmax,
                                           int cap, int strip, int l, uint32_t* strip_lab, uint16_t* f,
                                           Join join = {}) {
  const int W = p.width, x0 = strip * kStripWidth;
  for (int k = threadIdx.x; k <= kMaxThreshold; k += blockDim.x) f[k] = ls.f[l][k];
  const StripCcl c = strip_ccl(strip_lab, p.height, p.height, 0, p.height, 0, cap);
  strip_load(c, p.q, W, x0, ls.low[l]);
  __syncthreads();
  const SharedLabels L{strip_lab, 0};
  const StripChunk ch = strip_label(c, L, ls.low[l]);
  join(c);
  strip_count_pixels(c, ch, L, p, ls.slot[l], f, sm, cmax, x0);
}
__global__ void __launch_bounds__(kStripThreads)
strip_count_kernel(CclParams p, StripLayers ls, uint16_t* sm, uint8_t* __restrict__ cmax, int cap) {
  after_previous();
  extern __shared__ uint32_t strip_lab[];
  __shared__ uint16_t f[kMaxThreshold + 1];
  count_pair(p, ls, sm, cmax, cap, int(blockIdx.x), int(blockIdx.y), strip_lab, f);
}

// The pairs strip_count_listed_kernel left (redo[redo_mark(strip, layer)] holds the batch's tag): block b takes the
// b-th of all pairs and every gridDim.x-th after it, and labels the marked ones as strip_count_kernel does. When none
// is marked (the word after the marks is not the tag: most calls) every block leaves at once.
__global__ void __launch_bounds__(kStripThreads)
strip_count_redo_kernel(CclParams p, StripLayers ls, uint16_t* sm, uint8_t* __restrict__ cmax, int cap,
                        const uint32_t* __restrict__ redo) {
  after_previous();
  extern __shared__ uint32_t strip_lab[];
  __shared__ uint16_t f[kMaxThreshold + 1];
  for_marked(redo, p.width, ls.n, ls.tag, int(blockIdx.x), int(gridDim.x),
             [&](int strip, int l) { count_pair(p, ls, sm, cmax, cap, strip, l, strip_lab, f); });
}

// ---- the counting pass with the union-find over the warps' lists (strip_count_listed_kernel) ------------------
// For strips whose labels and codes are too many for two blocks a multiprocessor (about 600 to 1100 rows on an H100 or
// H200: 1080p), where the blocks outnumber the multiprocessors. A block keeps a code byte a pixel and, for each warp,
// the list of its chunk's pixels of S, which is also the union-find: entry g (warp w's at w * cap ..) is
// word << 16 | k, k the pixel's local index and word its parent (an entry index; parents at smaller entries, as the
// labels of strip_label) or, for a root whose maximum is gathered, kAccW | max. No label a pixel: 1 byte a pixel
// plus 4 a pixel of S (lists of at least half a warp's pixels), so that two blocks share a multiprocessor. The same
// labelling as strip_label otherwise: a run takes the label of the first run above it, junctions merge, each chunk's
// first row joins the chunk above a run at a time (the labels of each warp's last row in `last`), then the fold and
// the count over the lists. A block with a chunk of more pixels of S than its list holds marks its pair in redo and
// leaves before any count (NMS keeps at most about 40 % of the pixels in any S measured); strip_count_redo_kernel
// labels those pairs after it, as strip_count_kernel does.
// Where the lists' entries live: one block's shared memory (BlockEntries: entries base .. at e), or the distributed
// shared memory of a cluster of blocks (ClusterLabels, block k's entries at part[k]; the listed cluster kernel).
struct BlockEntries {
  uint32_t* e;
  uint32_t base;
  __device__ __forceinline__ uint32_t* at(uint32_t g) const { return e + (g - base); }
};
template <class Where>
struct ListLabelsOf {
  static constexpr uint32_t kAccW = 0xff00u;
  Where w;
  __device__ __forceinline__ uint32_t load(uint32_t g) const { return *w.at(g) >> 16; }
  __device__ __forceinline__ uint32_t atomic_min(uint32_t g, uint32_t v) const {
    uint32_t* a = w.at(g);
    return atomicMin(a, (v << 16) | (*a & 0xffffu)) >> 16;
  }
  __device__ __forceinline__ void atomic_max(uint32_t g, uint32_t v) const {
    uint32_t* a = w.at(g);
    atomicMax(a, (v << 16) | (*a & 0xffffu));
  }
};
using ListLabels = ListLabelsOf<BlockEntries>;

constexpr uint32_t kNoLabel = 0xffffu;

// The listed kernel's storage for label_rows: the warp's list from entry wbase on, an entry a pixel of S in row order
// (up to wbase + cap), word << 16 | k (k the pixel's local index), a run's label its first pixel's entry. Its row with
// S costs 8 SASS instructions fewer (61 -> 53) than with wbase, cap and n apart and the start counted (1080p and 2160p
// strips 0.975-0.997x, frames 0.976-0.998x: docs/benchmarks.md, issue 18, GPU kernels, 25th session).
struct ListRows {
  ListLabels L;
  uint32_t wn, wend, below;  // the warp's next entry (wbase + entries so far), wbase + cap; the lane's bits below it
  int lane;
  __device__ __forceinline__ bool room(uint32_t m) const { return wn + __popc(m) <= wend; }
  // The entry of the lane's pixel in a row of mask m (where the lane is in S).
  __device__ __forceinline__ uint32_t entry(uint32_t m) const { return wn + __popc(m & below); }
  // The entry of the run's first pixel: lane s's (every lane calls it).
  __device__ __forceinline__ uint32_t start(int, int s, uint32_t m) const {
    return __shfl_sync(0xffffffffu, entry(m), s);
  }
  __device__ __forceinline__ void put(bool in, int y32, uint32_t m, uint32_t node) {
    if (in) *L.w.at(entry(m)) = node << 16 | uint32_t(y32 + lane);
    wn += __popc(m);
  }
  // The labels above from the row above's entries (any node of that run's tree will do), not from `up`.
  __device__ __forceinline__ void junctions(uint32_t more, uint32_t own, int, uint32_t m, uint32_t above) const {
    const uint32_t row_above = wn - __popc(m) - __popc(above);  // after put: this row's entries are taken
    for (; more; more &= more - 1u) {
      const uint32_t other = L.load(row_above + __popc(above & ((1u << (__ffs(more) - 1)) - 1u)));
      if (other != own) merge(L, other, own);
    }
  }
};

// The static shared memory of the listed kernels.
struct ListedShared {
  uint16_t f[kMaxThreshold + 1];
  uint16_t last[kStripWarps][kStripWidth];  // each warp's last row: its labels, kNoLabel outside S
  uint32_t* part[kMaxClusterBlocks];        // a cluster: each block's entries
  int overflow;                             // a cluster: this block has a chunk whose list overflowed
};

// A warp's part of a listed labelling, for its finishing step (listed_label): its entries and where they lie.
struct ListedWarp {
  ListLabels L;          // this block's entries
  uint32_t wbase;        // the warp's first entry
  int n;                 // its entries (pixels of S of its chunk, in row order)
  const uint8_t* codes;  // the block's codes (local index k = row from r0 * 32 + column)
  int r0, x0;            // the block's first strip row, the strip's first column
  int y0, y1;            // the warp's chunk: local rows [y0, y1)
  int lane;
  // The frame index of the pixel of local index k in a frame W wide.
  __device__ __forceinline__ size_t pixel(uint32_t k, int W) const {
    return size_t(r0 + int(k / kStripWidth)) * W + x0 + k % kStripWidth;
  }
};

// Labels S = {B >= lo} over the lists (ListedShared s, the codes and entries in smem) in rows [r0, r0 + rows) of the
// strip at column x0, in this block: a part of a strip (kCluster false: the listed kernels of strips and tiles), or
// block k of a cluster of K whose blocks take R rows each, r0 = k R (strip_count_listed_cluster_kernel). The entries of
// block k start at k * 32 * cap (entry indices across the cluster, all below ListLabels::kAccW: the host's listed_cap);
// a pixel's local index (its row from r0) is below 2^16 (R <= 2048). In a cluster the chunk tops, the fold and the
// finishing step reach the other blocks' entries (Lx: ClusterLabels over them; magic: cluster_magic(32 cap)), and each
// block's first chunk joins the last row of the block above. A list overflowing (in any block of a cluster) sets
// redo[mark] and the word after the marks of ns strips to tag and returns before any write but those. Otherwise, after
// the fold (every entry's word its root's entry, a root's kAccW | the maximum of A over its component) and a barrier,
// finish(Lx, warp) runs in every warp (then, in a cluster, a cluster barrier). The caller fills what finish reads of s
// before (a barrier follows the loads). on_overflow: what an overflow does instead of marking the pair, in every thread
// (on_overflow(f): f(); frame_split_label_kernel labels the strip again at once, in its entries' global memory).
struct MarkRedo {
  __device__ __forceinline__ void operator()() const {}
  static constexpr bool kMark = true;
};
template <class F>
struct OnOverflow {
  F f;
  static constexpr bool kMark = false;
  __device__ __forceinline__ void operator()() const { f(); }
};
template <class F>
__device__ __forceinline__ OnOverflow<F> on_overflow(F f) {
  return OnOverflow<F>{f};
}
template <bool kCluster, class Finish, class Over = MarkRedo>
__device__ __forceinline__ void listed_label(const CclParams& p, uint32_t lo, int cap, uint32_t* __restrict__ redo,
                                             uint32_t mark, uint32_t tag, int x0, int r0, int R, int K, int k,
                                             uint32_t magic, uint32_t* smem, ListedShared& s, Finish finish,
                                             Over on_overflow = {}) {
  const int W = p.width, H = p.height, rows = min(R, H - r0);
  // Codes first (32 x R bytes), then the lists (4-byte aligned: R * 32 is a multiple of 32).
  const StripCcl c = strip_ccl(smem, 0, H, r0, rows, 0, 0);  // codes at smem + 0
  strip_load(c, p.q, W, x0, lo);
  uint32_t* e = smem + size_t(kStripWidth) * R / 4;
  const uint32_t kbase = uint32_t(k) * uint32_t(kStripWarps * cap);  // this block's first entry
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (kCluster && threadIdx.x < K)
    s.part[threadIdx.x] = cooperative_groups::this_cluster().map_shared_rank(e, int(threadIdx.x));
#endif
  __syncthreads();
  const ListLabels L{{e, kbase}};
  const uint8_t* codes = c.codes;
  const int lane = c.tx, warp = c.ty;
  const int per = chunk_rows(rows);
  const int y0 = warp * per, y1 = min(rows, y0 + per);  // this warp's chunk (local rows)
  const uint32_t wbase = kbase + uint32_t(warp * cap);
  const uint32_t at_or_below = 0xffffffffu >> (31 - lane), below = at_or_below >> 1;
  // The list's end is kept too: ptxas rebuilt it every row (S2R, LDC, SHF, IMAD) at the 32-register cap.
  ListRows lr{L, wbase, kept(wbase + uint32_t(cap), 0), kept(below, lane), lane};
  uint32_t pm, prev;
  const bool overflow = !label_rows(lr, codes + (size_t(y0) * kStripWidth + lane), y0, y1, lane, &pm, &prev);
  const int n = int(lr.wn - wbase);
  s.last[warp][lane] = uint16_t((pm >> lane) & 1u ? prev : kNoLabel);
  // A chunk with more pixels of S than its list holds: the pair is left to the redo, before any count.
  const bool over = __syncthreads_or(overflow);
  bool any = over;
  const uint16_t* up_last = warp > 0 ? s.last[warp - 1] : nullptr;  // the row above this warp's chunk
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (kCluster) {
    cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    if (threadIdx.x == 0) s.overflow = over;
    cluster.sync();  // every block's flag and last rows
    for (int j = 0; j < K; ++j) any = any || *cluster.map_shared_rank(&s.overflow, j);
    // The block above holds R rows (it is not the last): its last row is its last chunk with rows, which need not be
    // its last warp's.
    if (warp == 0 && k > 0) up_last = cluster.map_shared_rank(s.last[last_chunk_warp(R)], k - 1);
    if (any) cluster.sync();  // no block leaves while another reads its flag
  }
#endif
  if (any) {
    if (!Over::kMark) {
      on_overflow();
      return;
    }
    if (k == 0 && threadIdx.x == 0) {
      redo[mark] = tag;
      redo[redo_any(unsigned(W + kStripWidth - 1) / kStripWidth)] = tag;
    }
    return;
  }
  auto sync = [&] {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (kCluster) {
      cooperative_groups::this_cluster().sync();
      return;
    }
#endif
    __syncthreads();
  };
  auto run = [&](const auto& Lx) {
    // Each chunk's first row against the last row above it (of the chunk above, or of the block above), a run at a
    // time; the first row's pixels are the chunk's first entries, in column order.
    if (up_last && y0 < y1) {
      const int kk = y0 * kStripWidth + lane;
      const bool in = in_code(codes[kk]);
      const uint32_t m = __ballot_sync(0xffffffffu, in);
      if (m) {
        const uint32_t up = up_last[lane];
        const uint32_t above = __ballot_sync(0xffffffffu, up != kNoLabel);
        int st;
        const uint32_t a = run_above(m, above, at_or_below, &st);
        uint32_t more = in && lane == st ? a & ~(a << 1) : 0u;
        const uint32_t own = wbase + __popc(m & below);  // the run's first pixel's entry (its label)
        merge_runs_above(Lx, more, up, own);
      }
    }
    sync();
    // The fold: every entry finds its root, folds its A in and points at it.
    for (int i = lane; i < n; i += 32) {
      const uint32_t g = wbase + uint32_t(i);
      const uint32_t r = find_strip(Lx, g);
      Lx.atomic_max(r, ListLabels::kAccW | a_of(codes[*L.w.at(g) & 0xffffu]));
      if (r != g) L.atomic_min(g, r);
    }
    sync();
    finish(Lx, ListedWarp{L, wbase, n, codes, r0, x0, y0, y1, lane});
  };
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (kCluster) {
    run(ListLabelsOf<ClusterLabels>{{s.part, uint32_t(kStripWarps * cap), magic}});
    cooperative_groups::this_cluster().sync();  // no block leaves while another may read its entries
    return;
  }
#endif
  run(L);
}

// The count over a warp's list (after listed_label's fold): SM += F_low(maxA) - F_low(A) for its pixels of S (f: F_low),
// and the low's plane of cmax, where it has one.
template <class Lx>
__device__ __forceinline__ void listed_count(const Lx& L, const ListedWarp& w, const uint16_t* f, uint16_t* sm,
                                             uint8_t* plane, int W) {
  for (int i = w.lane; i < w.n; i += 32) {
    const uint32_t x = *w.L.w.at(w.wbase + uint32_t(i)), par = x >> 16, kk = x & 0xffffu;
    const uint32_t mx = par >= ListLabels::kAccW ? (par & 0xffu) : (L.load(par) & 0xffu);
    const size_t gi = w.pixel(kk, W);
    const uint32_t add = uint32_t(f[mx]) - uint32_t(f[a_of(w.codes[kk])]);
    if (add) sm_add(sm, gi, add);
    if (plane) plane[gi] = uint8_t(mx);
  }
}

// The counting pass's finishing step over the lists (strip_count_listed_kernel, the cluster's): SM += F_low(maxA) -
// F_low(A) for the warp's pixels of S (s.f: F_low of layer l), and the plane of cmax for the low, when it has one.
template <bool kCluster>
__device__ __forceinline__ void listed_pair(const CclParams& p, const StripLayers& ls, uint16_t* sm, uint8_t* cmax,
                                            int cap, uint32_t* __restrict__ redo, int strip, int l, int K, int k,
                                            int R, uint32_t magic, uint32_t* smem, ListedShared& s) {
  for (int j = threadIdx.x; j <= kMaxThreshold; j += blockDim.x) s.f[j] = ls.f[l][j];
  const int W = p.width, H = p.height;
  uint8_t* plane = ls.slot[l] >= 0 ? cmax + size_t(ls.slot[l]) * W * H : nullptr;
  listed_label<kCluster>(p, ls.low[l], cap, redo, redo_mark(uint32_t(strip), uint32_t(l)), ls.tag,
                         strip * kStripWidth, k * R, R, K, k, magic, smem, s,
                         [&](const auto& Lx, const ListedWarp& w) { listed_count(Lx, w, s.f, sm, plane, W); });
}

__global__ void __launch_bounds__(kStripThreads, 2)
strip_count_listed_kernel(CclParams p, StripLayers ls, uint16_t* sm, uint8_t* __restrict__ cmax, int cap,
                          uint32_t* __restrict__ redo) {
  after_previous();
  extern __shared__ uint32_t strip_lab[];
  __shared__ ListedShared s;
  listed_pair<false>(p, ls, sm, cmax, cap, redo, int(blockIdx.x), int(blockIdx.y), 1, 0, p.height, 0u, strip_lab, s);
}

// The listed counting pass over strips taller than one block holds, in clusters of K blocks of R rows (2160p: two of
// 1080, two blocks a multiprocessor, where strip_count_cluster_kernel's labels take four of 540): block
// (strip * K + k, layer of the batch). Pairs whose lists overflow are left to strip_count_cluster_kernel's redo.
__global__ void __launch_bounds__(kStripThreads, 2)
strip_count_listed_cluster_kernel(CclParams p, StripLayers ls, uint16_t* sm, uint8_t* __restrict__ cmax, int cap,
                                  uint32_t* __restrict__ redo, int R, uint32_t magic) {
  after_previous();
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ uint32_t strip_lab[];
  __shared__ ListedShared s;
  cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
  const int K = int(cluster.num_blocks()), k = int(cluster.block_rank());
  listed_pair<true>(p, ls, sm, cmax, cap, redo, int(blockIdx.x) / K, int(blockIdx.y), K, k, R, magic, strip_lab, s);
#else
  __trap();  // clusters need sm_90: the host never launches this kernel below it
#endif
}

// The counting pass over strips in a cluster of K blocks (strips taller than one block holds, up to
// kMaxClusterBlocks * StripLimits::cluster_rows rows): block (strip * K + k, layer of the batch) holds rows
// [k, k + 1) * block_rows of the strip in its shared memory, and the labels form one union-find over the
// cluster's distributed shared memory. The same labelling and counts as strip_count_kernel.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// One (strip, layer) pair in the cluster (the cluster's blocks all call it; a cluster barrier at its end).
__device__ __forceinline__ void cluster_pair(const CclParams& p, const StripLayers& ls, uint16_t* sm, uint8_t* cmax,
                                             int block_rows, uint32_t magic, int cap, int strip, int l,
                                             uint32_t* strip_lab, uint16_t* f, uint32_t** part) {
  cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
  const int K = int(cluster.num_blocks()), k = int(cluster.block_rank());
  const int W = p.width, x0 = strip * kStripWidth;
  for (int j = threadIdx.x; j <= kMaxThreshold; j += blockDim.x) f[j] = ls.f[l][j];
  if (threadIdx.x < K) part[threadIdx.x] = cluster.map_shared_rank(strip_lab, int(threadIdx.x));
  const int r0 = k * block_rows, rows = min(block_rows, p.height - r0);
  const StripCcl c = strip_ccl(strip_lab, block_rows, p.height, r0, rows, 0, cap);
  strip_load(c, p.q, W, x0, ls.low[l]);
  cluster.sync();  // the codes and part[] here; every block of the cluster running (its memory mapped)
  const ClusterLabels L{part, uint32_t(kStripWidth * block_rows), magic};
  const StripChunk ch = strip_label(c, L, ls.low[l]);
  strip_count_pixels(c, ch, L, p, ls.slot[l], f, sm, cmax, x0);
  cluster.sync();  // no block leaves (or starts another pair) while another may read its labels
}
#endif

// The counting pass over strips in a cluster of K blocks (strips taller than one block holds, up to
// kMaxClusterBlocks * StripLimits::cluster_rows rows): block (strip * K + k, layer of the batch) holds rows
// [k, k + 1) * block_rows of the strip in its shared memory, and the labels form one union-find over the
// cluster's distributed shared memory. The same labelling and counts as strip_count_kernel.
// With redo (the pairs strip_count_listed_cluster_kernel left, marked there with the batch's tag): cluster c of the
// grid takes the c-th of all pairs and every (clusters)-th after it, and labels the marked ones; when none is marked
// every block leaves at once.
__global__ void __launch_bounds__(kStripThreads, 2)
strip_count_cluster_kernel(CclParams p, StripLayers ls, uint16_t* sm, uint8_t* __restrict__ cmax, int block_rows,
                           uint32_t magic, int cap, const uint32_t* __restrict__ redo) {
  after_previous();
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ uint32_t strip_lab[];
  __shared__ uint16_t f[kMaxThreshold + 1];
  __shared__ uint32_t* part[kMaxClusterBlocks];
  const int K = int(cooperative_groups::this_cluster().num_blocks());
  if (!redo) {
    cluster_pair(p, ls, sm, cmax, block_rows, magic, cap, int(blockIdx.x) / K, int(blockIdx.y), strip_lab, f, part);
    return;
  }
  for_marked(redo, p.width, ls.n, ls.tag, int(blockIdx.x) / K, int(gridDim.x) / K, [&](int strip, int l) {
    cluster_pair(p, ls, sm, cmax, block_rows, magic, cap, strip, l, strip_lab, f, part);
  });
#else
  __trap();  // clusters need sm_90: the host never launches this kernel below it
#endif
}

// Frame mode on frames whose strips one block holds (H <= StripLimits::block_rows; frame_count_joined_kernel): a block
// per (strip, low), as strip_count_kernel, labels its strip alone in shared memory (strip_label); the strips of a low
// are then joined in global memory over their border pixels alone, and each block takes its components' frame maxima
// back into its shared labels before the count (strip_count_pixels), so that no pixel's label or maximum leaves shared
// memory (the tile path writes a label plane a low and joins every tile border).
//   A. The border pixels of S (column 0 of every strip but the first, column 31 of every strip but the last) are the
//      nodes of a union-find of the low, node 2 y + side of the strip's 2 H: a node's parent is its local root's
//      representative, the root's smallest node (kept in the root's word as 0xfff - node, bits 8..19, by an
//      atomicMax), which holds the component's maximum in the strip; parents stay at smaller nodes.
//   B. Column 0 of each strip merges with column 31 of the strip to its left, rows y - 1 .. y + 1 (y alone where
//      (y, 31) is in S: its strip joined it to rows y - 1 and y + 1), the lock-free merge in global memory, between
//      representatives; a row skips the merge the row above makes (the same two components meet row after row along
//      a border, and their merges all contended for one root's word).
//   C. Each representative folds its maximum into its root's.
//   D. Each representative's local root takes its frame root's maximum, in its shared word.
// A strip starts B once its left neighbour has published A (a flag a strip and low): a node further left is reached
// only through a parent that its own strip's B wrote after that strip's neighbour's A. The ns blocks of a low then
// wait for each other after B and after C (low_barrier); a launch's blocks are all resident (a cooperative launch), so
// the host gives a launch as many lows as the device holds blocks for. No state is kept across the phases (each
// recomputes a node's local root from shared memory): the kernel stays within the 32 registers a thread that two
// blocks a multiprocessor allow, without spilling.
// nodes: 2 x ns x 2H words a low of the batch (parents, then maxima; after the planes of cmax); sync: a zeroed word a
// low of the batch (frame_sync), after the zeroed redo marks, which are the flags here (no listed kernel runs in this
// mode). Against the three barriers, with the merges of B between nodes and a node's root kept in registers across the
// phases, 0.91-0.96x the GPU time of a frame at 512x512 to 1024x1024 (docs/benchmarks.md, issue 18's sixteenth
// session). It replaced frame_count_cluster_kernel (frames of up to 8 strips, one cluster a low joined in distributed
// shared memory; sm_90), which took as long at 256x256 (ncu 23.2 against 23.3 µs) and could not go beyond 256 columns
// (the fifteenth session).
constexpr int kJoinedLaunches = 2;  // the most launches of it a batch of lows (detect_edges_cuda)
static_assert(2 * kStripMaxRows <= 0xfff, "a strip's border nodes fit the 12 bits of a root's representative");

// The ns blocks of a low at their k-th barrier (k = 1, 2 on the low's zeroed count; target k x ns): returns once
// all have reached it, each block's writes before it visible to all after it (the block barrier, then the count by a
// release add and the acquire loads, by thread 0; a block barrier after them). The release after the block barrier
// instead of a __threadfence and an atomicAdd: 0.974-0.982x the GPU time of frame C_0.03 and C_0.01 at 256x256 to
// 1024x1024 (docs/benchmarks.md, issue 18's seventeenth session).
__device__ __forceinline__ void low_barrier(uint32_t* count, uint32_t target) {
  __syncthreads();
  if (threadIdx.x == 0) {
    gpu::device::add_release(count, 1u);
    gpu::device::wait_at_least(count, target);
  }
  __syncthreads();
}

// "No node": a border pixel off S or on the frame's border, in the frame union-finds' node arrays.
constexpr uint32_t kNoNode = 0xffffffffu;

// The tiles of frame mode's joins: T parts of R rows a strip of H rows (the last part the rest), tile = part x ns + strip
// (frame_count_joined_kernel: a tile a strip; the split passes: as detect_edges_cuda cuts them); a tile's border nodes t (nodes() of
// them): 2 y + side (columns 0 and 31, y < R), then, where T > 1, 2R + x (its first row) and 2R + 32 + x (its last row;
// with T = 1 those are on the frame's border: no nodes).
struct SplitTiles {
  int ns, T, R, H;
  __host__ __device__ bool row_nodes() const { return T > 1; }  // a tile's first and last rows have nodes
  __host__ __device__ int nodes() const { return row_nodes() ? 2 * R + 2 * kStripWidth : 2 * R; }
  __host__ __device__ int tiles() const { return ns * T; }
  __host__ __device__ int rows(int part) const { return H - part * R < R ? H - part * R : R; }
  // Node t of tile (strip, part) lies on the frame's border (it joins nothing).
  __host__ __device__ bool frame_border(int t, int strip, int part) const {
    if (t < 2 * R) return (t & 1) ? strip == ns - 1 : strip == 0;
    return t < 2 * R + kStripWidth ? part == 0 : part == T - 1;
  }
};

// Border node t of a tile of `rows` rows (R: the tiles' rows; t = 2 y + side for y < rows, then the first row's 32 and
// the last row's 32 where the strip has several tiles): its pixel, y 32 + x.
__device__ __forceinline__ int node_pixel(int t, int R, int rows) {
  if (t < 2 * R) return (t >> 1) * kStripWidth + ((t & 1) ? kStripWidth - 1 : 0);
  return t < 2 * R + kStripWidth ? t - 2 * R : (rows - 1) * kStripWidth + (t - 2 * R - kStripWidth);
}

// A tile's labels a pixel after strip_label (a whole strip in shared memory: frame_count_joined_kernel; a tile of
// frame_split_label_kernel's, in global memory, where its lists overflow; lab[k], k = (y - r0) 32 + x, holds the strip
// index of a parent, base = 32 r0 below it) and its border nodes (SplitTiles: t = 2 y + side, then the first row and the
// last; not on the frame's border): a node's local root (local: lab's index), and each root's representative, its
// smallest node (prepare(n), nodes t < n: bits 8..19 of the root's word, 0xfff - the node; 0 for a root without one; rep_of(word) reads it back).
struct PixelReps {
  uint32_t* lab;
  const uint8_t* codes;
  uint32_t base;
  SplitTiles g;
  int strip, part;  // the tile
  static __device__ __forceinline__ uint32_t rep_of(uint32_t root_word) { return 0xfffu - ((root_word >> 8) & 0xfffu); }
  __device__ __forceinline__ bool frame_border(int t) const { return g.frame_border(t, strip, part); }
  __device__ __forceinline__ bool local(int t, uint32_t* r) const {
    int k;
    if (t < 2 * g.R) {
      if ((t >> 1) >= g.rows(part)) return false;
      k = (t >> 1) * kStripWidth + ((t & 1) ? kStripWidth - 1 : 0);
    } else {
      k = node_pixel(t, g.R, g.rows(part));  // the column nodes written out above: frame_count_joined_kernel's PTX as measured
    }
    if (!in_code(codes[k])) return false;
    const uint32_t w = lab[k];
    *r = (w & kAcc) ? uint32_t(k) : w - base;
    return true;
  }
  __device__ __forceinline__ void prepare(int n) const {
    for (int t = int(threadIdx.x); t < n; t += kStripThreads) {
      uint32_t r;
      if (frame_border(t) || !local(t, &r)) continue;
      atomicMax(lab + r, kAcc | ((0xfffu - uint32_t(t)) << 8) | (lab[r] & 0xffu));
    }
    __syncthreads();
  }
};

__global__ void __launch_bounds__(kStripThreads)
frame_count_joined_kernel(CclParams p, StripLayers ls, int l0, uint16_t* sm, uint8_t* __restrict__ cmax, int cap,
                          uint32_t* __restrict__ nodes, uint32_t* __restrict__ sync) {
  after_previous();
  extern __shared__ uint32_t strip_lab[];
  __shared__ uint16_t f[kMaxThreshold + 1];
  const int strip = int(blockIdx.x), ns = int(gridDim.x), l = l0 + int(blockIdx.y);
  count_pair(p, ls, sm, cmax, cap, strip, l, strip_lab, f, [&](const StripCcl& c) {
    const int W = p.width, H = p.height, x0 = strip * kStripWidth;
    const uint32_t lo = ls.low[l];
    const uint32_t per = uint32_t(ns) * 2u * uint32_t(H), base = uint32_t(strip) * 2u * uint32_t(H);
    uint32_t* par = nodes + size_t(l) * 2 * per;
    uint32_t* mxs = par + per;
    const GlobalLabels G{par};
    // Border pixel t = 2 y + side of this strip: its local root in *r (strip_lab's index) where it is a node; no state
    // kept across the phases (the kernel runs at 32 registers a thread, for two blocks a multiprocessor).
    const PixelReps reps{strip_lab, c.codes, 0u, SplitTiles{ns, 1, H, H}, strip, 0};
    auto node_root = [&](int t, uint32_t* r) { return (t >> 1) < H && !reps.frame_border(t) && reps.local(t, r); };
    auto first_of = [&](uint32_t r) { return PixelReps::rep_of(strip_lab[r]); };  // after A
    // A: each node marks its local root with the smallest node (the representative), which writes the root's maximum.
    reps.prepare(2 * H);
    for (int t = int(threadIdx.x); t < 2 * H; t += kStripThreads) {
      uint32_t r;
      if (!node_root(t, &r)) continue;
      const uint32_t first = first_of(r);
      par[base + t] = base + first;
      if (first == uint32_t(t)) mxs[base + t] = strip_lab[r] & 0xffu;
    }
    // Publish A, then wait for the left neighbour's (the flags: the redo marks).
    __syncthreads();
    if (threadIdx.x == 0) {
      uint32_t* flag = frame_flag(sync, uint32_t(ns), uint32_t(strip), uint32_t(l));
      gpu::device::store_release(flag, 1u);  // after the block barrier: the block's writes too (add_release)
      if (strip > 0) gpu::device::wait_at_least(flag - redo_mark(1u, 0u), 1u);  // the left strip's
    }
    __syncthreads();
    // B: column 0 against column 31 of the strip to the left (its codes from global memory). (y, 31) on the left joins
    // its neighbours there in rows y - 1 and y + 1 already. Between representatives (the left nodes' parents); a row
    // skips its first merge where the row above (lane - 2) makes the same one.
    if (strip > 0) {
      const uint32_t left = base - 2u * uint32_t(H);
      auto left_in = [&](int y) { return y >= 0 && y < H && in_s(__ldg(p.q + size_t(y) * W + x0 - 1), lo); };
      auto left_rep = [&](int y) { return __ldcg(par + left + 2u * uint32_t(y) + 1u); };
      const int lane = int(threadIdx.x % 32u);
      for (int t0 = 0; t0 < 2 * H; t0 += kStripThreads) {  // the whole warp in every round (the shuffles)
        const int t = t0 + int(threadIdx.x), y = t >> 1;
        uint32_t own = kNoNode, a = kNoNode, r;  // this row's representative and the first left one it meets
        bool below = false;                  // (y, 31) on the left off S: also (y + 1, 31)
        if (!(t & 1) && node_root(t, &r)) {
          own = base + first_of(r);
          if (left_in(y)) {
            a = left_rep(y);
          } else {
            if (left_in(y - 1)) a = left_rep(y - 1);
            below = true;
          }
        }
        const uint32_t up_own = __shfl_up_sync(0xffffffffu, own, 2), up_a = __shfl_up_sync(0xffffffffu, a, 2);
        if (a != kNoNode && !(lane >= 2 && up_own == own && up_a == a)) merge(G, a, own);
        if (below && left_in(y + 1)) merge(G, left_rep(y + 1), own);
      }
    }
    low_barrier(sync + l, uint32_t(ns));
    // f(local root, its frame root) for this strip's representatives (C and D).
    auto for_reps = [&](auto f) {
      for (int t = int(threadIdx.x); t < 2 * H; t += kStripThreads) {
        uint32_t r;
        if (node_root(t, &r) && first_of(r) == uint32_t(t)) f(r, base + t, find_root(G, base + t));
      }
    };
    // C: the representatives' maxima into their roots'.
    for_reps([&](uint32_t r, uint32_t node, uint32_t top) {
      if (top != node) atomicMax(mxs + top, strip_lab[r] & 0xffu);
    });
    low_barrier(sync + l, 2u * uint32_t(ns));
    // D: the frame maxima into the local roots' words (a root has one representative: one writer; the frame's maximum
    // is at least the strip's, so atomicMax sets the byte and keeps the representative in bits 8..19 for the other
    // threads' first_of meanwhile).
    for_reps([&](uint32_t r, uint32_t, uint32_t top) {
      atomicMax(strip_lab + r, (strip_lab[r] & ~0xffu) | __ldcg(mxs + top));
    });
    __syncthreads();
  });
}

// ---- frame mode in split passes (frame_split_label_kernel .. frame_split_finish_kernel) --------------------------
// Frame mode where frame_count_joined_kernel does not run (1080p, 2160p C_0.03; C_0.01 from 1024 columns). A
// cooperative kernel that joins the strips between its phases waits at each for the slowest strip of the low (a branch
// with the joined kernel over the lists, issue 18's eighteenth session: a launch of 4 lows of 60 strips took the
// slowest strip's labelling plus the joins, 124 µs for the 4 lowest lows of C_0.03, no faster than the tile path).
// Here no block waits for another. The strips are cut into T tiles of R rows (SplitTiles: as few as the lists allow two blocks a
// multiprocessor, up to about 1088 rows on an H100 or H200: one a strip at 1080p, two at 2160p); three launches a batch of
// lows:
//   1. frame_split_label_kernel, a block a (tile, low) as strip_count_listed_kernel labels a strip: the lists'
//      labelling, SM and the low's plane from the tile's own components (the local maxima); then each local root that
//      touches the tile's border takes a representative, its smallest border node (not on the frame's border), and the
//      block publishes the node ids (tile * nodes + the representative; kNoNode off S and on the frame's border),
//      the representatives' words (themselves as parent, their local maxima), and the entries (rep << 16 | k) of its
//      pixels whose root has one. A block whose lists overflow labels its tile a label a pixel in the entries'
//      global memory (strip_label, PixelReps) and publishes the same from there.
//   2. frame_split_merge_kernel: column 0 of each tile against column 31 of the tile to its left, and row 0 against the
//      last row of the tile above (the corners' diagonals too), in a global union-find over the ids (parents at
//      smaller ids) whose roots keep the maxima of their trees as they link (split_link: no pass folds them after).
//   3. frame_split_finish_kernel, a block a (tile, low): each representative's frame maximum (its root's), and for the published
//      pixels whose component's frame maximum exceeds its local one, SM += F_low(frame max) - F_low(local max) (F is
//      non-decreasing: SM only grows) and the plane takes the frame maximum.
// Where the time goes (issue 18's twenty-second session, H200, 1080p C_0.03, 1.47x the strips in all): the launches and
// a label kernel with nothing to publish 1.16x the strips, the nodes, merge and walks 21 µs, the entries 16 µs; 71 % of
// S lies in components that touch a 32-column tile's border, 51 % takes a larger frame maximum (canny-lows-work).
constexpr uint32_t kSplitPixels = 0xffffffffu;  // a tile's count: its entries are a label a pixel (an overflow)
// A list root's word (ListLabels::kAccW | max after the fold) takes kSplitRootW | rep (below kAccW: nodes < 0xf00) where
// it has a representative; a list entry's word is below kSplitRootW (the host's rule: 32 cap < kSplitRootW).
constexpr uint32_t kSplitRootW = 0xf000u;
constexpr int kSplitMaxNodes = 2 * kStripMaxRows + 2 * kStripWidth;
static_assert(kSplitMaxNodes < 0xf00, "a tile's nodes fit a list root's word and PixelReps' 12 bits");
constexpr int kSplitMaxTiles = 16;   // tiles a strip (detect_edges_cuda)
constexpr int kSplitMaxBatches = 4;  // batches of lows (detect_edges_cuda: 1080p C_0.01 takes 3 on an H200)

// One low's global memory (words): nodeid and par (a word a node of every tile each; par holds a node's parent and,
// while it is a root, its tree's maximum: split_link), the tiles' counts and entries (32 R words a tile), each part a
// multiple of 64 words. No array of the local maxima: a representative's word holds its own until a link raises it
// where it is a frame root, and its pixel's plane holds it (the low's plane after step 1: every low of the split
// passes has one).
struct SplitNodes {
  uint32_t* nodeid;
  uint32_t* par;
  uint32_t* count;
  uint32_t* entries;
  __device__ __forceinline__ uint32_t* entries_of(int tile, int R) const {
    return entries + size_t(tile) * kStripWidth * size_t(R);
  }
};
__host__ __device__ inline size_t split_words64(size_t n) { return (n + 63) & ~size_t(63); }
__host__ __device__ inline size_t split_slot_words(const SplitTiles& g) {
  const size_t nt = size_t(g.tiles());
  return 2 * split_words64(nt * size_t(g.nodes())) + split_words64(nt) + split_words64(nt * 32 * size_t(g.R));
}
__device__ __forceinline__ SplitNodes split_nodes(uint32_t* nodes, int slot, const SplitTiles& g) {
  uint32_t* b = nodes + size_t(slot) * split_slot_words(g);
  const size_t n2 = split_words64(size_t(g.tiles()) * size_t(g.nodes()));
  return SplitNodes{b, b + n2, b + 2 * n2, b + 2 * n2 + split_words64(size_t(g.tiles()))};
}

// Step 1's node ids for tile `tile`: node t's id (kNoNode off S or on the frame's border), and for a representative
// its parent and local maximum. rep_of(t, &rep, &mx): node t's representative and its root's local maximum (false:
// none).
template <class RepOf>
__device__ __forceinline__ void split_publish_nodes(const SplitNodes& sn, int tile, int n, RepOf rep_of) {
  const uint32_t base = uint32_t(tile) * uint32_t(n);
  for (int t = int(threadIdx.x); t < n; t += kStripThreads) {
    uint32_t rep, mx;
    if (!rep_of(t, &rep, &mx)) {
      sn.nodeid[base + t] = kNoNode;
      continue;
    }
    const uint32_t id = base + rep;
    sn.nodeid[base + t] = id;
    if (rep == uint32_t(t)) sn.par[id] = id << 8 | mx;  // split_link's word: parent and maximum
  }
}

// Block (strip, part, low l0 + blockIdx.z) of tiles of R rows.
__global__ void __launch_bounds__(kStripThreads, 2)
frame_split_label_kernel(CclParams p, StripLayers ls, int l0, uint16_t* sm, uint8_t* __restrict__ cmax, int cap, int R,
                         uint32_t* __restrict__ nodes) {
  after_previous();
  extern __shared__ uint32_t strip_lab[];
  __shared__ ListedShared s;
  __shared__ uint16_t bt[kSplitMaxNodes];  // node t's entry (kNoLabel off S)
  __shared__ uint8_t nmx[kSplitMaxNodes];  // node t's root's local maximum
  __shared__ uint32_t out_n;
  const int W = p.width, H = p.height;
  const SplitTiles g{int(gridDim.x), int(gridDim.y), R, H};
  const int strip = int(blockIdx.x), part = int(blockIdx.y), l = l0 + int(blockIdx.z);
  const int x0 = strip * kStripWidth, r0 = part * R, rows = g.rows(part), n = g.nodes();
  const int tile = part * g.ns + strip;
  const uint32_t lo = ls.low[l];
  for (int j = threadIdx.x; j <= kMaxThreshold; j += blockDim.x) s.f[j] = ls.f[l][j];
  for (int t = threadIdx.x; t < n; t += blockDim.x) bt[t] = uint16_t(kNoLabel);
  if (threadIdx.x == 0) out_n = 0;
  uint8_t* plane = cmax + size_t(ls.slot[l]) * W * H;  // every low has one (the nodes start after nlows planes)
  const SplitNodes sn = split_nodes(nodes, int(blockIdx.z), g);
  uint32_t* out = sn.entries_of(tile, R);
  listed_label<false>(
      p, lo, cap, nullptr, 0u, 0u, x0, r0, R, 1, 0, 0u, strip_lab, s,
      [&](const auto& Lx, const ListedWarp& w) {  // Lx: this block's entries (one block, no cluster)
        listed_count(Lx, w, s.f, sm, plane, W);
        // Node t's entry, and its root's local maximum (the roots' words hold kAccW | max until they take a rep).
        const ListLabels L = w.L;
        auto root_of = [&](uint32_t e) {
          const uint32_t par = L.load(e);
          return par >= kSplitRootW ? e : par;
        };
        for (int i = w.lane; i < w.n; i += 32) {
          const uint32_t e = w.wbase + uint32_t(i), kk = *L.w.at(e) & 0xffffu;
          const int x = int(kk % kStripWidth), y = int(kk / kStripWidth);
          const bool edge_row = g.row_nodes() && (y == 0 || y == rows - 1);
          if (x != 0 && x != kStripWidth - 1 && !edge_row) continue;
          const uint8_t m = uint8_t(L.load(root_of(e)) & 0xffu);
          auto put = [&](int t) {
            bt[t] = uint16_t(e);
            nmx[t] = m;
          };
          if (x == 0) put(2 * y);
          if (x == kStripWidth - 1) put(2 * y + 1);
          if (edge_row && y == 0) put(2 * R + x);
          if (edge_row && y == rows - 1) put(2 * R + kStripWidth + x);
        }
        __syncthreads();
        // The roots take their smallest border node.
        for (int t = int(threadIdx.x); t < n; t += kStripThreads)
          if (bt[t] != kNoLabel && !g.frame_border(t, strip, part))
            L.atomic_min(root_of(bt[t]), kSplitRootW | uint32_t(t));
        __syncthreads();
        split_publish_nodes(sn, tile, n, [&](int t, uint32_t* rep, uint32_t* mx) {
          if (bt[t] == kNoLabel || g.frame_border(t, strip, part)) return false;
          *rep = L.load(root_of(bt[t])) & 0xfffu;
          *mx = nmx[t];
          return true;
        });
        // The entries of the pixels whose root has a representative, compacted.
        for (int i0 = 0; i0 < w.n; i0 += 32) {
          const int i = i0 + w.lane;
          uint32_t v = 0;
          bool keep = false;
          if (i < w.n) {
            const uint32_t e = w.wbase + uint32_t(i), x = *L.w.at(e), par = x >> 16;
            const uint32_t rw = par >= kSplitRootW ? par : L.load(par);
            keep = rw < ListLabels::kAccW;
            v = (rw & 0xfffu) << 16 | (x & 0xffffu);
          }
          const uint32_t m = __ballot_sync(0xffffffffu, keep);
          uint32_t at = 0;
          if (w.lane == 0 && m) at = atomicAdd(&out_n, uint32_t(__popc(m)));
          at = __shfl_sync(0xffffffffu, at, 0);
          if (keep) out[at + __popc(m & ((1u << w.lane) - 1u))] = v;
        }
        __syncthreads();
        if (threadIdx.x == 0) sn.count[tile] = out_n;
      },
      on_overflow([&] {
        // A label a pixel in the entries' memory (32 R words), the codes where listed_label loaded them.
        const StripCcl c{out, reinterpret_cast<uint8_t*>(strip_lab), nullptr, 0, H, r0, rows, r0,
                         int(threadIdx.x % kStripWidth), int(threadIdx.x / kStripWidth),
                         int(blockDim.x / kStripWidth)};
        strip_load(c, p.q, W, x0, lo);
        __syncthreads();
        const SharedLabels L{out, uint32_t(r0 * kStripWidth)};
        const StripChunk ch = strip_label(c, L, lo);
        strip_count_pixels(c, ch, L, p, ls.slot[l], s.f, sm, cmax, x0);
        __syncthreads();
        const PixelReps v{out, c.codes, uint32_t(r0 * kStripWidth), g, strip, part};
        v.prepare(n);
        split_publish_nodes(sn, tile, n, [&](int t, uint32_t* rep, uint32_t* mx) {
          uint32_t r;
          if (v.frame_border(t) || !v.local(t, &r)) return false;
          const uint32_t w = out[r];
          *rep = PixelReps::rep_of(w);
          *mx = w & 0xffu;
          return true;
        });
        if (threadIdx.x == 0) sn.count[tile] = kSplitPixels;
      }));
}

// Step 2's union-find: a node's word in par is its parent << 8 | the maximum of its tree while it is a root (ids below
// 2^24: detect_edges_cuda). Parent and maximum change together, by compare-and-swap on the one word: a link hangs root
// b under root a and takes b's maximum in the same swap, then raises a by it; a raise swaps a larger maximum into a
// root's word, or, where the word says the node was hung meanwhile, carries the value on to the root. No fence: every
// decision rests on one word's value as its swap saw it. A non-root's maximum bits are dead (the walk's halving writes
// them as 0). SplitLabels: those words as labels (their parents) for find_root.
struct SplitLabels {
  uint32_t* w;
  __device__ __forceinline__ uint32_t load(uint32_t g) const { return __ldcg(w + g) >> 8; }
  __device__ __forceinline__ void halve(uint32_t g, uint32_t gp) const { atomicMin(w + g, gp << 8); }
};
__device__ __forceinline__ uint32_t find_root(const SplitLabels& L, uint32_t a) { return find_root_halving(L, a); }
__device__ __forceinline__ void split_raise(uint32_t* w, uint32_t x, uint32_t v) {
  uint32_t cur = __ldcg(w + x);
  for (;;) {
    if ((cur >> 8) != x) {  // hung: on to the root
      x = find_root(SplitLabels{w}, cur >> 8);
      cur = __ldcg(w + x);
      continue;
    }
    if ((cur & 0xffu) >= v) return;
    const uint32_t old = atomicCAS(w + x, cur, (cur & ~0xffu) | v);
    if (old == cur) return;
    cur = old;
  }
}
__device__ __forceinline__ void split_link(uint32_t* w, uint32_t a, uint32_t b) {
  for (;;) {
    a = find_root(SplitLabels{w}, a);
    b = find_root(SplitLabels{w}, b);
    if (a == b) return;
    if (a > b) {
      const uint32_t t = a;
      a = b;
      b = t;
    }
    const uint32_t cur = __ldcg(w + b);
    if ((cur >> 8) != b) continue;  // hung meanwhile: find again
    if (atomicCAS(w + b, cur, a << 8 | (cur & 0xffu)) == cur) {  // hang root b under the smaller root a
      split_raise(w, a, cur & 0xffu);
      return;
    }
  }
}

// Step 2, item i of a low (none past them), by whole warps of consecutive items (an item repeating the one before it
// in the warp skips its first merge):
//   i < V = T (ns - 1) R: row y of the left border of tile (strip 1 .. ns - 1, part), i = (part (ns - 1) + strip - 1) R
//     + y, against column 31 of the tile to its left (rows y - 1 .. y + 1 of the part);
//   then, from the multiple of 32 at or above V: column x of the first row of tile (strip, part 1 .. T - 1) against the
//     last row of the tile above (columns x - 1 .. x + 1, into the neighbours' tiles at the corners).
__device__ __forceinline__ void split_merge_item(const SplitNodes& sn, const SplitTiles& g, uint32_t i) {
  const uint32_t n = uint32_t(g.nodes()), R = uint32_t(g.R), ns = uint32_t(g.ns);
  const uint32_t per_part = (ns - 1u) * R, V = uint32_t(g.T) * per_part, Vpad = (V + 31u) & ~31u;
  uint32_t own = kNoNode, a = kNoNode, b = kNoNode;
  if (i < Vpad) {
    const uint32_t part = i / per_part, strip = 1u + (i % per_part) / R, y = i % R;  // per_part > 0: ns > 1 here
    const uint32_t rows = uint32_t(g.rows(int(part)));
    if (i < V && y < rows) {
      const uint32_t base = (part * ns + strip) * n, left = base - n;
      auto left_id = [&](uint32_t yy) { return yy < rows ? __ldcg(sn.nodeid + left + 2u * yy + 1u) : kNoNode; };
      own = __ldcg(sn.nodeid + base + 2u * y);
      if (own != kNoNode) {
        a = left_id(y);
        if (a == kNoNode) {
          a = y > 0 ? left_id(y - 1u) : kNoNode;
          b = left_id(y + 1u);
        }
      }
    }
  } else {
    const uint32_t j = i - Vpad, part = 1u + j / (ns * 32u), strip = (j / 32u) % ns, x = j % 32u;
    if (part < uint32_t(g.T)) {  // none past the items
      const uint32_t base = (part * ns + strip) * n, above = base - ns * n, last = 2u * R + 32u;
      auto above_id = [&](int xx) {
        if (xx < 0) return strip > 0 ? __ldcg(sn.nodeid + above - n + last + 31u) : kNoNode;
        if (xx > 31) return strip + 1u < ns ? __ldcg(sn.nodeid + above + n + last) : kNoNode;
        return __ldcg(sn.nodeid + above + last + uint32_t(xx));
      };
      own = __ldcg(sn.nodeid + base + 2u * R + x);
      if (own != kNoNode) {
        a = above_id(int(x));
        if (a == kNoNode) {
          a = above_id(int(x) - 1);
          b = above_id(int(x) + 1);
        }
      }
    }
  }
  const uint32_t lane = threadIdx.x % 32u;
  const uint32_t up_own = __shfl_up_sync(0xffffffffu, own, 1), up_a = __shfl_up_sync(0xffffffffu, a, 1);
  if (a != kNoNode && !(lane >= 1 && up_own == own && up_a == a)) split_link(sn.par, a, own);
  if (b != kNoNode) split_link(sn.par, b, own);
}
// Step 2's items a low (a multiple of 32 between the two kinds).
__host__ __device__ inline uint32_t split_merge_items(const SplitTiles& g) {
  const uint32_t V = uint32_t(g.T) * uint32_t(g.ns - 1) * uint32_t(g.R);
  return ((V + 31u) & ~31u) + uint32_t(g.T - 1) * uint32_t(g.ns) * 32u;
}

// Steps 2 and 3, a launch each. (When a fold launch sat between them, one cooperative launch of the three with
// barriers of the grid measured slower: 56 µs against 46 at 1080p C_0.03. Linking with the maxima instead of that
// fold took 0.987 of the time at 1080p C_0.03 and 0.963 at 2160p, with fences; in one word without them, 0.990 and
// 0.974 of that.)
__global__ void __launch_bounds__(256) frame_split_merge_kernel(SplitTiles g, uint32_t* __restrict__ nodes) {
  after_previous();
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  split_merge_item(split_nodes(nodes, int(blockIdx.y), g), g, i);
}
// Step 3: block (strip, part, low l0 + blockIdx.z).
__global__ void __launch_bounds__(kStripThreads, 2)
frame_split_finish_kernel(CclParams p, StripLayers ls, int l0, uint16_t* sm, uint8_t* __restrict__ cmax, int R,
                          uint32_t* __restrict__ nodes) {
  after_previous();
  __shared__ uint8_t fmx[kSplitMaxNodes];  // a representative's frame maximum where it exceeds its local one, else 0
  __shared__ uint8_t lmx[kSplitMaxNodes];  // its local maximum (its pixel's in the plane before this kernel raises it)
  __shared__ uint16_t f[kMaxThreshold + 1];
  const int W = p.width, H = p.height;
  const SplitTiles g{int(gridDim.x), int(gridDim.y), R, H};
  const int strip = int(blockIdx.x), part = int(blockIdx.y), l = l0 + int(blockIdx.z);
  const int x0 = strip * kStripWidth, r0 = part * R, rows = g.rows(part), n = g.nodes();
  const int tile = part * g.ns + strip;
  const uint32_t lo = ls.low[l];
  const SplitNodes sn = split_nodes(nodes, int(blockIdx.z), g);
  const uint32_t base = uint32_t(tile) * uint32_t(n);
  uint8_t* plane = cmax + size_t(ls.slot[l]) * W * H;  // every low has one (the nodes start after nlows planes)
  auto at = [&](uint32_t k) { return size_t(r0 + int(k / kStripWidth)) * W + x0 + k % kStripWidth; };
  for (int j = threadIdx.x; j <= kMaxThreshold; j += blockDim.x) f[j] = ls.f[l][j];
  // Every load a thread can issue before it needs an answer goes out together: its entries' first words (before the
  // barrier, which waits for the walks), then its nodes' ids, then their pixels and words, then the walks in lock
  // step (each with find_root's halving over SplitLabels); a walk ends at a root's word, which holds the maximum.
  // (Issue 18's twenty-second session, H200, against the walk a node at a time: 2160p C_0.03 0.986, 1080p C_0.03
  // 0.993, 1080p C_0.01 0.990, 1024x1024 C_0.01 1.000.)
  const SplitLabels L{sn.par};
  const uint32_t* e = sn.entries_of(tile, R);
  const uint32_t count = __ldcg(sn.count + tile);
  const bool listed = count != kSplitPixels;
  constexpr int kE = 4;  // entries a thread has in flight
  uint32_t v[kE];
  auto load_entries = [&](uint32_t i0) {
#pragma unroll
    for (int j = 0; j < kE; ++j) {
      const uint32_t i = i0 + threadIdx.x + uint32_t(j) * kStripThreads;
      v[j] = listed && i < count ? __ldcg(e + i) : 0u;
    }
  };
  load_entries(0);
  constexpr int kN = (kSplitMaxNodes + kStripThreads - 1) / kStripThreads;  // nodes a thread
  uint32_t a[kN], lm[kN], word[kN];
#pragma unroll
  for (int j = 0; j < kN; ++j) {
    const int t = int(threadIdx.x) + j * kStripThreads;
    a[j] = t < n ? __ldcg(sn.nodeid + base + t) : kNoNode;
  }
#pragma unroll
  for (int j = 0; j < kN; ++j) {
    const int t = int(threadIdx.x) + j * kStripThreads;
    lm[j] = 0;
    word[j] = 0;
    if (t < n && a[j] == base + uint32_t(t)) {
      lm[j] = __ldcg(plane + at(uint32_t(node_pixel(t, R, rows))));
      word[j] = __ldcg(L.w + a[j]);
    } else {
      a[j] = kNoNode;
    }
  }
  for (bool more = true; more;) {  // a[j]: a node of the chain, word[j] its word as read; a root where it names a[j]
    more = false;
#pragma unroll
    for (int j = 0; j < kN; ++j) {
      const uint32_t up = word[j] >> 8;
      if (a[j] == kNoNode || up == a[j]) continue;
      const uint32_t gw = __ldcg(L.w + up);
      halve_step(L, a[j], up, gw >> 8);  // find_root_halving's step (gw: up's word, its parent and maximum)
      a[j] = up;
      word[j] = gw;
      more = true;
    }
  }
#pragma unroll
  for (int j = 0; j < kN; ++j) {
    const int t = int(threadIdx.x) + j * kStripThreads;
    const uint32_t m = word[j] & 0xffu;  // 0 where no node
    if (t < n) {
      fmx[t] = uint8_t(m > lm[j] ? m : 0u);
      lmx[t] = uint8_t(lm[j]);
    }
  }
  __syncthreads();
  auto raise = [&](uint32_t rep, uint32_t k) {
    const uint32_t m = fmx[rep];
    if (!m) return;
    const size_t gi = at(k);
    sm_add(sm, gi, uint32_t(f[m]) - uint32_t(f[lmx[rep]]));
    plane[gi] = uint8_t(m);
  };
  if (listed) {
    for (uint32_t i0 = 0; i0 < count; i0 += kE * kStripThreads) {
      uint32_t u[kE];
#pragma unroll
      for (int j = 0; j < kE; ++j) u[j] = v[j];
      load_entries(i0 + kE * kStripThreads);
#pragma unroll
      for (int j = 0; j < kE; ++j)
        if (i0 + threadIdx.x + uint32_t(j) * kStripThreads < count) raise(u[j] >> 16, u[j] & 0xffffu);
    }
    return;
  }
  const uint32_t rbase = uint32_t(r0 * kStripWidth);
  for (uint32_t k = threadIdx.x; k < 32u * uint32_t(rows); k += blockDim.x) {
    const int x = x0 + int(k % kStripWidth);
    if (x >= W || !in_s(__ldg(p.q + size_t(r0 + int(k / kStripWidth)) * W + x), lo)) continue;
    const uint32_t w = __ldcg(e + k), rw = (w & kAcc) ? w : __ldcg(e + (w - rbase));
    if ((rw >> 8) & 0xfffu) raise(PixelReps::rep_of(rw), k);  // a root with a representative
  }
}

// The tile path's pass 1 (tiles of 32 x tile_rows pixels; tile_rows up to StripLimits::block_rows): a block per
// (tile, layer) labels its tile in shared memory (strip_label), then writes for every pixel of S the global index
// of its tile root as its parent, and for every tile root the maximum of A over its tile component (no other
// pixel's mx is read). Global indices keep the order of the strip's indices, so parents stay at smaller indices. It
// marks its tile roots in `roots` (a word per row of the tile) for passes 3 and 4. Its codes are a byte a pixel for
// its low and its warps list their pixels of S, as in the counting kernels (cap: strip_list_cap).
// tile_local: tile (strip, part) of layer l of ns strips, in a block (ccl_strip_local_kernel, ccl_tile_redo_kernel).
__device__ __forceinline__ void tile_local(const CclParams& p, int tile_rows, uint32_t* __restrict__ roots, int cap,
                                           int strip, int part, int l, int ns, uint32_t* strip_lab) {
  const int W = p.width, H = p.height, x0 = strip * kStripWidth;
  const int r0 = part * tile_rows, rows = min(tile_rows, H - r0);
  uint32_t lo, hi;
  layer_pair(p, l, x0, &lo, &hi);
  if (!final_needs_labels(p, lo, hi)) return;  // the strip's pair: the same for the whole block
  const StripCcl c = strip_ccl(strip_lab, tile_rows, H, r0, rows, r0, cap);
  strip_load(c, p.q, W, x0, lo);
  __syncthreads();
  const StripChunk ch = strip_label(c, SharedLabels{strip_lab, uint32_t(r0 * kStripWidth)}, lo);  // lo < hi, or 255
  const size_t n = size_t(W) * H;
  uint32_t* lab = p.lab + size_t(l) * n;
  uint32_t* mx = p.mx + size_t(l) * n;
  uint32_t* bits = roots + size_t(l) * ns * H + strip;
  // The warp's chunk alone from here (its pixels, its rows' bit words): the rows' bit words start at 0, a lane a row,
  // and each tile root sets its bit with an atomic OR (not in shared memory: for_chunk_pixels may read the chunk's
  // codes to the end). The warp barrier orders the zeros before the ORs of the warp's other lanes.
  for (int y = ch.y0 + c.tx; y < ch.y1; y += kStripWidth) bits[size_t(y) * ns] = 0;
  __syncwarp();
  // Parents and the roots' maxima and bits: the pixels of S only, 32 at a time.
  for_chunk_pixels(ch, c.tx, r0, [&](uint32_t k) {
    const int x = x0 + int(k % kStripWidth), y = r0 + int(k / kStripWidth);
    if (x >= W) return;  // never in S (codes 0 past the width): kept for safety
    const uint32_t w = strip_lab[k];
    const size_t gi = size_t(y) * W + x;
    if (w & kAcc) {  // a tile root
      lab[gi] = uint32_t(gi);
      mx[gi] = w & 0xffu;
      atomicOr(bits + size_t(y) * ns, 1u << (k % kStripWidth));
    } else {
      lab[gi] = uint32_t(size_t(w / kStripWidth) * W + x0 + w % kStripWidth);
    }
  });
}
__global__ void __launch_bounds__(kStripThreads, 2) ccl_strip_local_kernel(CclParams p, int tile_rows,
                                                                        uint32_t* __restrict__ roots, int cap) {
  after_previous();
  extern __shared__ uint32_t strip_lab[];
  tile_local(p, tile_rows, roots, cap, int(blockIdx.x), int(blockIdx.y), int(blockIdx.z), int(gridDim.x), strip_lab);
}

// Pass 1 over the lists, for strips too tall to be one tile with a label a pixel two blocks a multiprocessor
// (run_ccl: a whole strip of 1080 rows, where ccl_strip_local_kernel takes two tiles of 540): block (strip, 0,
// layer) labels the whole strip as one tile as strip_count_listed_kernel does (listed_label), then writes what
// ccl_strip_local_kernel writes: a pixel's parent is the global index of its tile root (the pixel of its root's entry:
// entries are in the tile's row order, so a root is its component's first pixel, as there), a tile root's mx its
// maximum, and the bit rows of the tile roots. A strip whose list overflows is marked (redo_mark(strip, layer), the
// batch's tag p.layers.tag) for ccl_tile_redo_kernel.
__global__ void __launch_bounds__(kStripThreads, 2) ccl_tile_listed_kernel(CclParams p, uint32_t* __restrict__ roots,
                                                                        int cap, uint32_t* __restrict__ redo) {
  after_previous();
  extern __shared__ uint32_t strip_lab[];
  __shared__ ListedShared s;
  const int W = p.width, H = p.height, strip = int(blockIdx.x), l = int(blockIdx.z);
  const int ns = int(gridDim.x), x0 = strip * kStripWidth;
  uint32_t lo, hi;
  layer_pair(p, l, x0, &lo, &hi);
  if (!final_needs_labels(p, lo, hi)) return;  // the strip's pair: the same for the whole block
  const size_t n = size_t(W) * H;
  uint32_t* lab = p.lab + size_t(l) * n;
  uint32_t* mx = p.mx + size_t(l) * n;
  uint32_t* bits = roots + size_t(l) * ns * H + strip;
  listed_label<false>(p, lo, cap, redo, redo_mark(uint32_t(strip), uint32_t(l)), p.layers.tag, x0, 0, H, 1, 0, 0u,
                      strip_lab, s, [&](const auto&, const ListedWarp& w) {
    // The bit rows gathered in the codes' words (dead after the fold), a word a row of the warp's chunk.
    uint32_t* row_bits = reinterpret_cast<uint32_t*>(strip_lab);
    for (int y = w.y0 + w.lane; y < w.y1; y += kStripWidth) row_bits[y] = 0;
    __syncwarp();
    for (int i = w.lane; i < w.n; i += 32) {
      const uint32_t x = *w.L.w.at(w.wbase + uint32_t(i)), par = x >> 16, k = x & 0xffffu;
      const size_t gi = w.pixel(k, W);
      if (par >= ListLabels::kAccW) {  // a tile root
        lab[gi] = uint32_t(gi);
        mx[gi] = par & 0xffu;
        atomicOr(row_bits + k / kStripWidth, 1u << (k % kStripWidth));
      } else {
        const uint32_t kr = *w.L.w.at(par) & 0xffffu;  // the root's pixel
        lab[gi] = uint32_t(w.pixel(kr, W));
      }
    }
    __syncwarp();
    for (int y = w.y0 + w.lane; y < w.y1; y += kStripWidth) bits[size_t(w.r0 + y) * ns] = row_bits[y];
  });
}

// The strips ccl_tile_listed_kernel left (redo[redo_mark(strip, layer)] holds p.layers.tag), each labelled as one tile
// as ccl_strip_local_kernel does: block b takes the b-th of all (strip, layer) pairs and every gridDim.x-th after it.
// When none is marked (most calls) every block leaves at once.
__global__ void __launch_bounds__(kStripThreads, 1)
ccl_tile_redo_kernel(CclParams p, uint32_t* __restrict__ roots, int cap, const uint32_t* __restrict__ redo) {
  after_previous();
  extern __shared__ uint32_t strip_lab[];
  for_marked(redo, p.width, p.layers.n, p.layers.tag, int(blockIdx.x), int(gridDim.x), [&](int strip, int l) {
    tile_local(p, p.height, roots, cap, strip, 0, l, (p.width + kStripWidth - 1) / kStripWidth, strip_lab);
  });
}

// Pass 2 for the tiles of ccl_strip_local_kernel: block (strip, chunk of kStripBorderThreads rows of a tile,
// layer). A thread takes a row of the tile's first column, and the first 32 threads of a tile's first chunk its
// first row (ccl_top_pixel). A pixel of the first column joins the pixels of S of column x0 - 1 in rows
// y - 1 .. y + 1, but each merge is made on the parents (a pixel's tile root, or what a tile root now points to:
// the same set either way), and a lane leaves out the pairs the lane above merges: a component that crosses the
// border over many rows is merged by the first lane of each warp, not by every row.
constexpr int kStripBorderThreads = 256;
constexpr uint32_t kNoParent = 0xffffffffu;
__global__ void __launch_bounds__(kStripBorderThreads) ccl_strip_border_kernel(CclParams p, int tile_rows) {
  after_previous();
  const int W = p.width, H = p.height, l = blockIdx.z, x0 = blockIdx.x * kStripWidth;
  const int chunks = (tile_rows + kStripBorderThreads - 1) / kStripBorderThreads;
  const int r0 = int(blockIdx.y) / chunks * tile_rows, rows = min(tile_rows, H - r0);
  const int yt = int(blockIdx.y) % chunks * kStripBorderThreads + int(threadIdx.x), y = r0 + yt;
  if (yt < kTileX) ccl_top_pixel(p, x0, r0, yt);  // the tile's first row
  if (x0 == 0 || x0 % p.region_w == 0) return;       // a region border: the same for the whole block
  uint32_t lo, hi;
  layer_pair(p, l, x0, &lo, &hi);  // one region: the pair of every pixel
  if (!final_needs_labels(p, lo, hi)) return;
  const size_t n = size_t(W) * H;
  uint32_t* lab = p.lab + size_t(l) * n;
  const int lane = int(threadIdx.x) % 32;
  auto parent = [&](int yy) {  // the parent of (x0 - 1, yy) if it is in S
    if (yy < 0 || yy >= H) return kNoParent;
    const size_t j = size_t(yy) * W + x0 - 1;
    return in_s(p.q[j], lo) ? __ldcg(lab + j) : kNoParent;
  };
  const bool row = yt < rows;
  const size_t i = size_t(row ? y : r0) * W + x0;
  const uint32_t a = row && in_s(p.q[i], lo) ? __ldcg(lab + i) : kNoParent;
  const uint32_t b = row ? parent(y) : kNoParent;
  uint32_t bu = __shfl_up_sync(0xffffffffu, b, 1), bd = __shfl_down_sync(0xffffffffu, b, 1);
  const uint32_t au = __shfl_up_sync(0xffffffffu, a, 1);
  const bool first = lane == 0 || yt == 0;  // no lane above in this tile's column
  if (first) bu = row ? parent(y - 1) : kNoParent;
  if (lane == 31 || yt + 1 >= rows) bd = row ? parent(y + 1) : kNoParent;
  if (a == kNoParent) return;
  const GlobalLabels G{lab};
  // With the same parent, the lane above (rows y - 2 .. y of the left column) merges (a, bu) and (a, b).
  const bool above = !first && au == a;
  if (bu != kNoParent && !above) merge(G, a, bu);
  if (b != kNoParent && b != bu && !above) merge(G, a, b);
  if (bd != kNoParent && bd != b && bd != bu) merge(G, a, bd);
}

// Final pass of strip mode: block = strip. Medina-Carnicer's histograms over the strip, the pair
// (pick_pair), then the edge map of the strip's hysteresis with it:
//   low == high: S = {A >= high} (every pixel with B >= low has A >= high), no linking;
//   low < high with a cmax plane for low: S = {B >= low}, labelled by the counting pass: edge iff the
//     component maximum there is >= high;
//   otherwise (a low without a plane: more lows than planes, or a grid value that is not a low of the set;
//     the host gives the dynamic shared memory of a strip then, strip_smem_bytes): the strip is labelled here.
__global__ void __launch_bounds__(kStripThreads)
strip_final_kernel(CclParams p, const uint8_t* __restrict__ gh, const uint16_t* __restrict__ sm, int nc, int nx,
                   int fb_low, int fb_high, Bins bins, LowSlots slots, const uint8_t* __restrict__ cmax,
                   ThresholdPair* pairs, uint8_t* __restrict__ edges, int edges_pitch, int cap) {
  after_previous();
  extern __shared__ uint32_t strip_lab[];
  __shared__ BlockHistograms block_hist;
  __shared__ ThresholdPair pair;
  const int W = p.width, x0 = blockIdx.x * kStripWidth;
  const StripCcl c = strip_ccl(strip_lab, p.height, p.height, 0, p.height, 0, cap);
  block_hist.init(bins, nc);
  region_histograms(gh, sm, W, x0, min(W, x0 + kStripWidth), 0, c.H, c.tx, c.ty, c.ny, uint32_t(nc), block_hist);
  __syncthreads();
  if (threadIdx.x < 32) {
    const ThresholdPair t = pick_pair_warp(block_hist.g_count, block_hist.p_hist, nx, fb_low, fb_high);
    if (threadIdx.x == 0) {
      pair = t;
      pairs[blockIdx.x] = t;
    }
  }
  __syncthreads();
  const int x = x0 + c.tx;
  const uint32_t lo = uint32_t(pair.low), hi = uint32_t(pair.high);
  // No linking, or the plane of the low's maxima (written for S only); else the strip labelled here (lo < hi).
  const bool planed = lo == hi || slots.of[lo] >= 0;
  const uint8_t* plane = planed && lo != hi ? cmax + size_t(slots.of[lo]) * W * c.H : nullptr;
  const SharedLabels L{strip_lab, 0};
  if (!planed) {
    strip_load(c, p.q, W, x0, lo);
    __syncthreads();
    strip_label(c, L, lo);
  }
  if (x >= W) return;
  for (int y = c.ty; y < c.H; y += c.ny) {
    const size_t i = size_t(y) * W + x;
    const int k = y * kStripWidth + c.tx;
    edges[size_t(y) * edges_pitch + x] =
        map_edge(p.q[i], lo, hi, [&] { return planed ? uint32_t(plane[i]) : strip_max(L, strip_lab[k]); });
  }
}

// The per-pixel map kernels' kV codes from q + i (4: one 8-byte load) and their kV bytes of the map to out (4: one
// 4-byte store), kV = 4 where the rows allow it (quad_rows).
template <int kV>
__device__ __forceinline__ void load_codes(const uint16_t* __restrict__ q, uint32_t (&code)[kV]) {
  if (kV == 4) {
    const uint2 c4 = *reinterpret_cast<const uint2*>(q);
    code[0] = c4.x & 0xffffu;
    code[1] = c4.x >> 16;
    code[2] = c4.y & 0xffffu;
    code[3] = c4.y >> 16;
  } else {
    code[0] = q[0];
  }
}
template <int kV>
__device__ __forceinline__ void store_map(uint8_t* __restrict__ out, const uint8_t (&e)[kV]) {
  if (kV == 4)
    *reinterpret_cast<uchar4*>(out) = make_uchar4(e[0], e[1], e[2], e[3]);
  else
    out[0] = e[0];
}

// Strip mode's edge map once select_kernel has picked every strip's pair, when each pair's low has a plane
// of component maxima in cmax (the counting pass wrote it) or equals its high (no linking): a thread takes kV
// pixels of a row, 4 (8-byte loads of codes, 4-byte loads of the plane and stores of the map) where the map's rows
// allow it (quad_rows), else 1. The kV pixels lie in one strip.
template <int kV>
__global__ void strip_edges_kernel(const uint16_t* __restrict__ q, int W, int H,
                                   const ThresholdPair* __restrict__ pairs, LowSlots slots,
                                   const uint8_t* __restrict__ cmax, uint8_t* __restrict__ edges, int edges_pitch) {
  after_previous();
  static_assert(kV == 1 || kV == 4, "one pixel a thread, or four");
  const int x = (blockIdx.x * kTileX + threadIdx.x) * kV, y = blockIdx.y * kTileY + threadIdx.y;
  if (x >= W || y >= H) return;
  const size_t i = size_t(y) * W + x;
  const ThresholdPair t = pairs[x / kStripWidth];
  uint32_t code[kV];
  load_codes<kV>(q + i, code);
  uint8_t mx[kV] = {};
  if (t.low != t.high) {  // S = {B >= low}; the plane holds the component maxima there only
    const uint8_t* plane = cmax + size_t(slots.of[t.low]) * W * H + i;
    if (kV == 4) {
      const uchar4 m4 = *reinterpret_cast<const uchar4*>(plane);
      mx[0] = m4.x;
      mx[1] = m4.y;
      mx[2] = m4.z;
      mx[3] = m4.w;
    } else {
      mx[0] = *plane;
    }
  }
  uint8_t e[kV];
#pragma unroll
  for (int u = 0; u < kV; ++u) e[u] = map_edge(code[u], t.low, t.high, [&] { return uint32_t(mx[u]); });
  store_map<kV>(edges + size_t(y) * edges_pitch + x, e);
}

// The final map (map_edge): the component maxima from the label planes of the final pass or of a kept layer. A
// thread takes kV pixels of a row, as strip_edges_kernel (one strip, so one pair).
template <int kV>
__global__ void ccl_output_kernel(CclParams p, uint8_t* __restrict__ edges, int edges_pitch) {
  after_previous();
  static_assert(kV == 1 || kV == 4, "one pixel a thread, or four");
  const int x = (blockIdx.x * kTileX + threadIdx.x) * kV, y = blockIdx.y * kTileY + threadIdx.y;
  if (x >= p.width || y >= p.height) return;
  const size_t i = size_t(y) * p.width + x;
  uint32_t lo, hi;
  layer_pair(p, 0, x, &lo, &hi);
  const int l = kept_layer(p, lo);  // else the final pass labelled layer 0
  const size_t off = l > 0 ? size_t(l) * size_t(p.width) * p.height : 0;
  uint32_t code[kV];
  load_codes<kV>(p.q + i, code);
  uint8_t e[kV];
#pragma unroll
  for (int u = 0; u < kV; ++u)
    e[u] = map_edge(code[u], lo, hi, [&] { return comp_max(p.lab + off, p.mx + off, uint32_t(i + u)); });
  store_map<kV>(edges + size_t(y) * edges_pitch + x, e);
}

// Medina-Carnicer's histograms and local maxima. Region r = blockIdx.x: columns [x0, min(W, x0 + rcols)),
// x0 = r * rcols; its rows are split over gridDim.y blocks, which add their shared-memory counts to the
// region's global counts (hist: per region 2 x (kMaxThreshold + 2) words, zero on entry); the last block of
// the region (counter done[r]) picks the pair. Writes pairs[r], or every one of the ns entries when `all`.
// Four blocks a multiprocessor (32 registers; ptxas takes 38 without the minimum, three blocks): the kernel is bound by
// the latency of its loads. The histograms' setup comes before the wait; with kPre the first pieces' G too
// (prefetch_g), two blocks a multiprocessor (56 registers; with four, 32 and spills), for blocks that launch while
// the counts run.
template <bool kPre>
__global__ void __launch_bounds__(kSelectThreads, kPre ? 2 : 4)
select_kernel(const uint8_t* __restrict__ gh, const uint16_t* __restrict__ sm, int W, int H, int rcols, int nc,
              int nx, int fb_low, int fb_high, Bins bins, ThresholdPair* pairs, int ns, int all, uint32_t* hist,
              uint32_t* done) {
  __shared__ BlockHistograms block_hist;
  __shared__ bool last;
  const int x0 = blockIdx.x * rcols, x1 = min(W, x0 + rcols);
  const int rows = (H + gridDim.y - 1) / gridDim.y, y0 = blockIdx.y * rows, y1 = min(H, y0 + rows);
  const int tx = int(threadIdx.x % kStripWidth), ty = int(threadIdx.x / kStripWidth);
  const int ny = int(blockDim.x / kStripWidth);
  block_hist.init(bins, nc);  // shared memory only: before the wait
  uint32_t pre[kHistU / 4];
  if (kPre) prefetch_g(gh, W, x0, x1, y0, y1, tx, ty, ny, pre);  // the first pieces' G, before the wait
  after_previous();
  uint32_t* g_count = block_hist.g_count;
  uint32_t* p_hist = block_hist.p_hist;
  region_histograms(gh, sm, W, x0, x1, y0, y1, tx, ty, ny, uint32_t(nc), block_hist, kPre ? pre : nullptr);
  __syncthreads();
  uint32_t* rh = hist + size_t(blockIdx.x) * kHistWords;
  if (gridDim.y > 1) {
    for (int j = threadIdx.x; j < kMaxThreshold + 2; j += blockDim.x) {
      if (g_count[j]) atomicAdd(rh + j, g_count[j]);
      if (p_hist[j]) atomicAdd(rh + kMaxThreshold + 2 + j, p_hist[j]);
    }
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(done + blockIdx.x, 1u) == gridDim.y - 1;
    __syncthreads();
    if (!last) return;
    __threadfence();
    for (int j = threadIdx.x; j < kMaxThreshold + 2; j += blockDim.x) {
      g_count[j] = __ldcg(rh + j);
      p_hist[j] = __ldcg(rh + kMaxThreshold + 2 + j);
    }
    __syncthreads();
  }
  if (threadIdx.x >= 32) return;
  const ThresholdPair out = pick_pair_warp(g_count, p_hist, nx, fb_low, fb_high);
  if (threadIdx.x != 0) return;
  if (all) {
    for (int k = 0; k < ns; ++k) pairs[k] = out;
  } else {
    pairs[blockIdx.x] = out;
  }
}

// Strip mode's histograms, pair and map where every pair's low has its maxima in cmax (strip_edges_kernel's case), a
// cluster of gridDim.x blocks a strip (at most kSelectClusterBlocks): strip blockIdx.y, its rows split over the
// cluster's blocks as select_kernel splits them. Each block counts its rows into its shared histograms, then the
// blocks other than 0 add theirs into block 0's acc (reductions into its shared memory, which wait for no reply; the
// arrival at the barrier that orders them after acc's zeroing comes before the wait). After a barrier of the cluster,
// block 0 adds acc to its own, picks the pair (pick_pair_warp), writes it to pairs and into every block's shared
// memory; after a second barrier each block writes the map of its own rows. Neither the histograms' global words, nor
// a fence, nor a counter, nor a launch of the map. Before the wait, as select_kernel<true>, and with the codes of the
// map's first kMapPre rows; two blocks a multiprocessor (56 registers; with four, 32 and 48 bytes of spills). H200,
// alone: the adds into block 0 instead of its loads of the others' words (seven a word at 512 x 512), C_0.03 strips
// 0.988-0.994x at 512 x 512.
constexpr int kMapPre = 4;  // the map's codes a thread loads before the wait
__global__ void __launch_bounds__(kSelectThreads, 2)
select_map_cluster_kernel(const uint8_t* __restrict__ gh, const uint16_t* __restrict__ sm, int W, int H, int nc,
                          int nx, int fb_low, int fb_high, Bins bins, ThresholdPair* pairs,
                          const uint16_t* __restrict__ q, LowSlots slots, const uint8_t* __restrict__ cmax,
                          uint8_t* __restrict__ edges, int edges_pitch) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  __shared__ BlockHistograms block_hist;
  __shared__ ThresholdPair pair;
  cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
  const int x0 = int(blockIdx.y) * kStripWidth, x1 = min(W, x0 + kStripWidth);
  const int rows = (H + gridDim.x - 1) / gridDim.x, y0 = int(blockIdx.x) * rows, y1 = min(H, y0 + rows);
  const int tx = int(threadIdx.x % kStripWidth), ty = int(threadIdx.x / kStripWidth);
  const int ny = int(blockDim.x / kStripWidth);
  const int x = x0 + tx;
  // Before the wait (as select_kernel<true>): acc and the shared histograms' setup, the arrival that publishes it, the
  // first pieces' G, and the codes of the map's first kMapPre rows, 2 a word.
  __shared__ uint32_t acc[2 * (kMaxThreshold + 2)];  // block 0: the other blocks' histograms, added
  for (int j = threadIdx.x; j < 2 * (kMaxThreshold + 2); j += blockDim.x) acc[j] = 0;
  block_hist.init(bins, nc);
  auto zeroed = cluster.barrier_arrive();
  uint32_t pre[kHistU / 4], qpre[kMapPre / 2] = {};
  prefetch_g(gh, W, x0, x1, y0, y1, tx, ty, ny, pre);
#pragma unroll
  for (int u = 0; u < kMapPre; ++u) {
    const int y = y0 + ty + u * ny;
    if (x < x1 && y < y1) qpre[u / 2] |= uint32_t(__ldcg(q + size_t(y) * W + x)) << (16 * (u % 2));
  }
  after_previous();
  region_histograms(gh, sm, W, x0, x1, y0, y1, tx, ty, ny, uint32_t(nc), block_hist, pre);
  cluster.barrier_wait(std::move(zeroed));  // every block's acc is zero
  __syncthreads();                          // this block's histograms are complete
  const bool first = cluster.block_rank() == 0;
  auto word = [&](int j) {
    return j < kMaxThreshold + 2 ? block_hist.g_count + j : block_hist.p_hist + (j - kMaxThreshold - 2);
  };
  if (!first)
    for (int j = threadIdx.x; j < 2 * (kMaxThreshold + 2); j += blockDim.x)
      if (const uint32_t v = *word(j)) atomicAdd(cluster.map_shared_rank(acc + j, 0), v);
  cluster.sync();  // block 0's acc holds the others' histograms
  if (first) {
    const int K = int(cluster.num_blocks());
    for (int j = threadIdx.x; j < 2 * (kMaxThreshold + 2); j += blockDim.x) *word(j) += acc[j];
    __syncthreads();
    if (threadIdx.x < 32) {
      const ThresholdPair out = pick_pair_warp(block_hist.g_count, block_hist.p_hist, nx, fb_low, fb_high);
      if (threadIdx.x < K) *cluster.map_shared_rank(&pair, int(threadIdx.x)) = out;
      if (threadIdx.x == 0) pairs[blockIdx.y] = out;
    }
  }
  cluster.sync();  // the pair in every block
  const ThresholdPair t = pair;
  if (x >= x1) return;
  const uint8_t* plane = t.low != t.high ? cmax + size_t(slots.of[t.low]) * W * H : nullptr;
  auto map_at = [&](int y, uint32_t code) {
    const size_t i = size_t(y) * W + x;
    edges[size_t(y) * edges_pitch + x] = map_edge(code, t.low, t.high, [&] { return uint32_t(plane[i]); });
  };
  int y = y0 + ty;
#pragma unroll
  for (int u = 0; u < kMapPre && y < y1; ++u, y += ny) map_at(y, (qpre[u / 2] >> (16 * (u % 2))) & 0xffffu);
  for (; y < y1; y += ny) map_at(y, q[size_t(y) * W + x]);
#else
  __trap();  // clusters need sm_90: the host never launches this kernel below it
#endif
}

__global__ void fill_pairs_kernel(ThresholdPair* pairs, int ns, ThresholdPair p) {
  after_previous();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < ns) pairs[i] = p;
}

// The per-pixel kernels (codes_kernel, strip_edges_kernel, ccl_output_kernel) take 4 pixels a thread where every
// row starts 4 pixels aligned: the width and the output's pitch multiples of 4 and its base `align`-byte aligned
// (16 for floats, 4 for the map's bytes); quad_grid is then their grid.
bool quad_rows(int W, int pitch, const void* out, uintptr_t align) {
  return W % 4 == 0 && pitch % 4 == 0 && reinterpret_cast<uintptr_t>(out) % align == 0;
}
dim3 quad_grid(int W, int H) { return dim3((W / 4 + kTileX - 1) / kTileX, (H + kTileY - 1) / kTileY); }

// Steps 1-3 (arguments already checked) in two launches: launch_front (the smoothing, the gradient and NMS into mk,
// and max2), then launch_codes (G and its codes). detect_edges_cuda launches the front first, before the rest of its
// host work, which the GPU's front kernel then hides (the GPU idles until a call's first launch reaches it).
gpu::CudaError launch_front(const uint8_t* src, int W, int H, int pitch, const Taps& taps, const Workspace& ws,
                            cudaStream_t stream) {
  const dim3 block(kTileX, kTileY);
  const int fr = front_rows(W, H);
  const dim3 tiles((W + kTileX - 1) / kTileX, (H + fr - 1) / fr);
  GPUEC_CUDA_CHECK(cudaMemsetAsync(ws.max2, 0, sizeof(uint32_t), stream));
  using Front = void (*)(const uint8_t*, int, int, int, Taps, float*, uint32_t*);
  constexpr int F = kFrontRows, S = kFrontSmallRows;
  static constexpr Front kFront[2][kMaxRadius + 1] = {  // [small tiles][radius]
      {nullptr, front_kernel<1, F>, front_kernel<2, F>, front_kernel<3, F>, front_kernel<4, F>, front_kernel<5, F>,
       front_kernel<6, F>},
      {nullptr, front_kernel<1, S>, front_kernel<2, S>, front_kernel<3, S>, front_kernel<4, S>, front_kernel<5, S>,
       front_kernel<6, S>}};
  kFront[fr == kFrontSmallRows][taps.r]<<<tiles, block, 0, stream>>>(src, pitch, W, H, taps, ws.mk, ws.max2);
  GPUEC_CUDA_CHECK_LAUNCH();
  return {};
}
gpu::CudaError launch_codes(int W, int H, float* g, int g_pitch, uint8_t* gh, uint16_t* q, uint16_t* sm_zero,
                            int zero_words, const Workspace& ws, cudaStream_t stream) {
  const dim3 block(kTileX, kTileY);
  const dim3 grid((W + kTileX - 1) / kTileX, (H + kTileY - 1) / kTileY);
  if (g ? quad_rows(W, g_pitch, g, 16) : W % 4 == 0) {  // gh, q and sm_zero: pitch W, 256-byte aligned
    GPUEC_CUDA_CHECK(gpu::launch_pdl({quad_grid(W, H), block, 0, stream}, codes_kernel<4>, ws.mk, ws.max2, W, H, g,
                                     g_pitch, gh, q, sm_zero, ws.hist, zero_words));
  } else {
    GPUEC_CUDA_CHECK(gpu::launch_pdl({grid, block, 0, stream}, codes_kernel<1>, ws.mk, ws.max2, W, H, g, g_pitch, gh,
                                     q, sm_zero, ws.hist, zero_words));
  }
  return {};
}

// What the strip paths may use on the current context's device, worked out (and the kernels' dynamic shared
// memory above the default 48 KB set) once per CUDA context: function attributes belong to a context, so a
// caller's own context (FFmpeg's, say) needs them as well as the device's primary one.
//   block_rows: the tallest strip one block labels (kStripMaxRows, or fewer where the device's opt-in shared
//     memory per block, less each kernel's static shared memory, is smaller: about 840 rows on an A100);
//   tile_rows: the tallest tile of the tile path (run_ccl): one of which two blocks share a multiprocessor (602
//     rows on an H100 or H200: their barriers' waits overlap), or block_rows where that would be under 256 rows;
//   cluster_rows: the most rows of a block of strip_count_cluster_kernel (two a multiprocessor);
//   clusters: strip_count_cluster_kernel runs here (a device of compute capability 9.0 or more, the kernel built
//     for sm_90 or later rather than JIT-compiled from older PTX, whose body traps, and room for its blocks).
struct StripLimits {
  int block_rows = 0;
  int tile_rows = 0;
  int cluster_rows = 0;
  bool clusters = false;
  // The dynamic shared memory a counting block may take: strip_count_kernel's (the device's opt-in limit), the
  // same where two blocks share a multiprocessor (0: they never do), and strip_count_cluster_kernel's (two a
  // multiprocessor). Beyond the labels and codes it holds the warps' lists of pixels of S (strip_list_cap).
  size_t count_room = 0, count_pair_room = 0, cluster_room = 0;
  size_t tile_room = 0;  // the same for ccl_strip_local_kernel (two a multiprocessor where tile_rows allows: tile_pair)
  bool tile_pair = false;
  int sms = 0;             // the device's multiprocessors
  size_t listed_room = 0;  // strip_count_listed_kernel's dynamic shared memory, two blocks a multiprocessor
  size_t listed_cluster_room = 0;  // strip_count_listed_cluster_kernel's (clusters only), two blocks a multiprocessor
  size_t listed_tile_room = 0;     // ccl_tile_listed_kernel's, two blocks a multiprocessor
  size_t tile_redo_room = 0;       // ccl_tile_redo_kernel's (the device's opt-in limit)
  // frame_count_joined_kernel (a device with cooperative launches): its dynamic shared memory with one block a
  // multiprocessor, and with two (0: it does not run); the blocks a multiprocessor holds with joined_pair_room (2 on an
  // H100 or H200: its threads allow no more; with more than joined_pair_room, 1).
  size_t joined_room = 0, joined_pair_room = 0;
  int joined_pair_blocks = 0;
  size_t split_room = 0;  // frame_split_label_kernel's dynamic shared memory, two blocks a multiprocessor
  bool select_clusters = false;  // select_map_cluster_kernel runs (sm_90 and its code built for it)
};

// The entries of each warp's list of pixels of S (StripCcl::list) in a block of `rows` rows that may take `room`
// bytes of dynamic shared memory: what the labels and codes leave (about 85 % of a warp's pixels at 1080 rows, 82 %
// in a cluster's block of 540 rows on an H100 or H200, where NMS leaves at most about 40 % of the pixels in any S),
// at most a warp's chunk of rows. 0: no list (for_chunk_pixels then searches the rows' masks, as it does for a chunk
// whose pixels of S overflow its list). The test hook GPUEC_CANNY_LIST_CAP=N caps it at N entries (0: no lists).
int strip_list_cap(int rows, size_t room) {
  const size_t base = strip_rows_bytes(rows);
  if (room <= base) return 0;
  const size_t chunk = size_t(chunk_rows(rows)) * kStripWidth;
  size_t cap = std::min(chunk, (room - base) / (kStripWarps * sizeof(uint16_t)));
  if (const long long most = gpu::fail_at_frame("GPUEC_CANNY_LIST_CAP"); most >= 0)
    cap = std::min(cap, size_t(most));
  return int(cap) & ~7;
}
constexpr size_t strip_list_bytes(int cap) { return size_t(cap) * kStripWarps * sizeof(uint16_t); }

// The listed kernels' entries a warp for a block of `rows` rows (a code byte a pixel, then the lists) in `room` bytes
// of dynamic shared memory, in a cluster of K blocks (1: strip_count_listed_kernel): at most a warp's chunk of rows,
// and for K > 1 the cluster's entries all below ListLabels::kAccW (their indices are 16 bits, with room for the
// roots' kAccW | max). The lists are usable where they hold half a warp's chunk at least (listed_fits).
int listed_cap(int rows, size_t room, int K) {
  const size_t codes = size_t(kStripWidth) * size_t(rows);
  if (room <= codes) return 0;
  const size_t chunk = size_t(chunk_rows(rows)) * kStripWidth;
  size_t cap = std::min(chunk, (room - codes) / (kStripWarps * sizeof(uint32_t)));
  if (K > 1) cap = std::min(cap, size_t(0xff00u - 1u) / (size_t(K) * kStripWarps));
  return int(cap);
}
bool listed_fits(int rows, int cap) { return 2 * cap >= chunk_rows(rows) * kStripWidth; }
size_t listed_bytes(int rows, int cap) {
  return size_t(kStripWidth) * size_t(rows) + size_t(kStripWarps) * size_t(cap) * sizeof(uint32_t);
}

gpu::CudaError strip_limits(StripLimits* out) {
  static std::mutex mutex;
  static std::vector<std::pair<uint64_t, StripLimits>> done;  // context ids (never reused)
  uint64_t id = 0;
  if (const gpu::CudaError e = gpu::current_context_id(&id)) return e;
  std::lock_guard<std::mutex> lock(mutex);
  for (const auto& d : done)
    if (d.first == id) {
      *out = d.second;
      return {};
    }
  int device = 0, major = 0, optin = 0, per_sm = 0, reserved = 0, threads_sm = 0, sms = 0;
  GPUEC_CUDA_CHECK(cudaGetDevice(&device));
  GPUEC_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  GPUEC_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  GPUEC_CUDA_CHECK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
  GPUEC_CUDA_CHECK(cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, device));
  GPUEC_CUDA_CHECK(cudaDeviceGetAttribute(&threads_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device));
  GPUEC_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  cudaFuncAttributes count{}, fin{}, tile{}, cluster{};
  GPUEC_CUDA_CHECK(cudaFuncGetAttributes(&count, strip_count_kernel));
  GPUEC_CUDA_CHECK(cudaFuncGetAttributes(&fin, strip_final_kernel));
  GPUEC_CUDA_CHECK(cudaFuncGetAttributes(&tile, ccl_strip_local_kernel));
  // The rows of a strip that `budget` bytes of shared memory hold beside `used` (at most `most`).
  auto rows_in = [](size_t budget, size_t used, int most) {
    return budget > used ? int(std::min<size_t>(size_t(most), (budget - used) / strip_smem_bytes(1))) : 0;
  };
  StripLimits l;
  l.sms = sms;
  l.block_rows = rows_in(size_t(optin), std::max({count.sharedSizeBytes, fin.sharedSizeBytes, tile.sharedSizeBytes}),
                         kStripMaxRows);
  // Two blocks a multiprocessor: half its shared memory each, where its threads allow two (2048 a multiprocessor).
  const size_t pair_bytes = threads_sm >= 2 * kStripThreads ? size_t(per_sm) / 2 : 0;
  const int pair_rows = rows_in(pair_bytes, tile.sharedSizeBytes + size_t(reserved), l.block_rows);
  l.tile_rows = pair_rows >= 256 ? pair_rows : l.block_rows;
  l.tile_pair = pair_rows >= 256;
  l.tile_room = pair_rows >= 256 ? pair_bytes - tile.sharedSizeBytes - size_t(reserved)
                                 : size_t(optin) - tile.sharedSizeBytes;
  if (l.block_rows > 0) {
    const int bytes = int(strip_smem_bytes(l.block_rows));
    l.count_room = size_t(optin) - count.sharedSizeBytes;
    if (pair_bytes > count.sharedSizeBytes + size_t(reserved))
      l.count_pair_room = pair_bytes - count.sharedSizeBytes - size_t(reserved);
    GPUEC_CUDA_CHECK(cudaFuncSetAttribute(strip_count_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          int(l.count_room)));
    GPUEC_CUDA_CHECK(cudaFuncSetAttribute(strip_count_redo_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          int(l.count_room)));
    cudaFuncAttributes listed{};
    GPUEC_CUDA_CHECK(cudaFuncGetAttributes(&listed, strip_count_listed_kernel));
    if (pair_bytes > listed.sharedSizeBytes + size_t(reserved)) {
      l.listed_room = pair_bytes - listed.sharedSizeBytes - size_t(reserved);
      GPUEC_CUDA_CHECK(cudaFuncSetAttribute(strip_count_listed_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            int(l.listed_room)));
    }
    GPUEC_CUDA_CHECK(cudaFuncSetAttribute(strip_final_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    cudaFuncAttributes tile_listed{}, tile_redo{};
    GPUEC_CUDA_CHECK(cudaFuncGetAttributes(&tile_listed, ccl_tile_listed_kernel));
    GPUEC_CUDA_CHECK(cudaFuncGetAttributes(&tile_redo, ccl_tile_redo_kernel));
    if (pair_bytes > tile_listed.sharedSizeBytes + size_t(reserved) && size_t(optin) > tile_redo.sharedSizeBytes) {
      l.listed_tile_room = pair_bytes - tile_listed.sharedSizeBytes - size_t(reserved);
      l.tile_redo_room = size_t(optin) - tile_redo.sharedSizeBytes;
      GPUEC_CUDA_CHECK(cudaFuncSetAttribute(ccl_tile_listed_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            int(l.listed_tile_room)));
      GPUEC_CUDA_CHECK(cudaFuncSetAttribute(ccl_tile_redo_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            int(l.tile_redo_room)));
    }
    GPUEC_CUDA_CHECK(cudaFuncSetAttribute(ccl_strip_local_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          int(size_t(optin) - tile.sharedSizeBytes)));
    cudaFuncAttributes joined{};
    GPUEC_CUDA_CHECK(cudaFuncGetAttributes(&joined, frame_count_joined_kernel));
    int cooperative = 0;
    GPUEC_CUDA_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
    if (cooperative && size_t(optin) > joined.sharedSizeBytes && pair_bytes > joined.sharedSizeBytes + reserved) {
      l.joined_room = size_t(optin) - joined.sharedSizeBytes;
      l.joined_pair_room = pair_bytes - joined.sharedSizeBytes - size_t(reserved);
      GPUEC_CUDA_CHECK(cudaFuncSetAttribute(frame_count_joined_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            int(l.joined_room)));
      GPUEC_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&l.joined_pair_blocks, frame_count_joined_kernel,
                                                                     kStripThreads, l.joined_pair_room));
    }
    cudaFuncAttributes split{};
    GPUEC_CUDA_CHECK(cudaFuncGetAttributes(&split, frame_split_label_kernel));
    if (pair_bytes > split.sharedSizeBytes + reserved) {
      l.split_room = pair_bytes - split.sharedSizeBytes - size_t(reserved);
      GPUEC_CUDA_CHECK(cudaFuncSetAttribute(frame_split_label_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            int(l.split_room)));
    }
  }
  if (major >= 9) {
    cudaFuncAttributes select_map{};
    GPUEC_CUDA_CHECK(cudaFuncGetAttributes(&select_map, select_map_cluster_kernel));
    l.select_clusters = select_map.ptxVersion >= 90 && select_map.binaryVersion >= 90;
    GPUEC_CUDA_CHECK(cudaFuncGetAttributes(&cluster, strip_count_cluster_kernel));
    // Built from sm_90 PTX or later (a JIT from the compute_75 PTX of the default build gets the trapping body).
    l.cluster_rows = rows_in(pair_bytes, cluster.sharedSizeBytes + size_t(reserved), kMaxClusterRows);
    l.clusters = cluster.ptxVersion >= 90 && cluster.binaryVersion >= 90 && l.cluster_rows >= 256;
    if (l.clusters) {
      l.cluster_room = pair_bytes - cluster.sharedSizeBytes - size_t(reserved);
      GPUEC_CUDA_CHECK(cudaFuncSetAttribute(strip_count_cluster_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            int(l.cluster_room)));
      cudaFuncAttributes listed{};
      GPUEC_CUDA_CHECK(cudaFuncGetAttributes(&listed, strip_count_listed_cluster_kernel));
      if (pair_bytes > listed.sharedSizeBytes + size_t(reserved)) {
        l.listed_cluster_room = pair_bytes - listed.sharedSizeBytes - size_t(reserved);
        GPUEC_CUDA_CHECK(cudaFuncSetAttribute(strip_count_listed_cluster_kernel,
                                              cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              int(l.listed_cluster_room)));
      }
    }
  }
  done.emplace_back(id, l);
  *out = l;
  return {};
}

// A strip kernel's launch of blocks that two could share a multiprocessor with (each asking at most pair_room bytes of
// dynamic shared memory) gives each block a multiprocessor of its own where the blocks are no more than the
// multiprocessors: it asks for alone_smem(smem, pair_room) instead of smem, more than pair_room. Programmatic dependent
// launch places a kernel's blocks while the kernel before it still runs, and the block scheduler then put two on one
// multiprocessor while others stayed idle: 512x512 strips, C_0.03 (128 blocks), took 47.5-51.0 µs of GPU time
// instead of 37.7-41.5 (H200, docs/benchmarks.md). The kernels' limit (cudaFuncAttributeMaxDynamicSharedMemorySize)
// is above pair_room.
size_t alone_smem(size_t smem, size_t pair_room) { return std::max(smem, pair_room + 1); }

// The dynamic shared memory of a counting launch of `blocks` blocks that each keep the labels and codes of a strip of
// `rows` rows (strip_rows_bytes; strip_count_kernel, frame_count_joined_kernel), and in *list its warps' lists'
// entries: two blocks a multiprocessor where they fit in pair_room and the blocks outnumber the multiprocessors; else
// one a multiprocessor (alone_smem), the lists in what room leaves.
size_t count_smem(int rows, int64_t blocks, size_t room, size_t pair_room, int sms, int* list) {
  const size_t bytes = strip_rows_bytes(rows);
  const bool alone = bytes > pair_room || blocks <= sms;
  *list = strip_list_cap(rows, alone ? room : pair_room);
  const size_t lists = bytes + strip_list_bytes(*list);
  return alone ? alone_smem(lists, pair_room) : lists;
}

// Labels S of every layer of p: passes 1-4 of the tile path. Tiles of 32 columns and at most room.tile_rows rows:
// the whole strip where it fits, else equal parts of it. roots: the bit rows of the tile roots (tile_root_words),
// free for the rest of the call. Where the tiles would be parts of a strip but one tile a strip holds its pixels of S
// in lists (two blocks a multiprocessor, the lists at least half a warp's chunk: 603 to 1184 rows on an H100 or
// H200, 1080p), pass 1 takes those instead (ccl_tile_listed_kernel, its overflowing strips labelled by
// ccl_tile_redo_kernel; redo: the marks, p.layers.tag the batch's tag): no tile tops to join in passes 2 to 4. (At
// 2160p two listed tiles a strip instead of four were no faster: docs/benchmarks.md.) hook: GPUEC_CANNY_LIST_CAP (0
// keeps the listed tiles out; N caps their lists: overflows, the redo).
gpu::CudaError run_ccl(const CclParams& p, int nl, const StripLimits& room, uint32_t* roots, uint32_t* redo,
                       long long hook, cudaStream_t stream) {
  if (room.tile_rows < 1) return GPUEC_CUDA_INVALID();  // no room for a row: no device has so little
  const int ns = strip_count(p.width);
  int parts = (p.height + room.tile_rows - 1) / room.tile_rows;
  // The listed tiles: the whole strip (rows for the redo's labels too), where the tiles would be parts of it.
  const int lcap = parts > 1 && room.listed_tile_room > 0 && hook != 0 && p.height <= room.block_rows
                       ? listed_cap(p.height, room.listed_tile_room, 1)
                       : 0;
  const bool listed = lcap > 0 && listed_fits(p.height, lcap);
  if (listed) parts = 1;
  const int rows = (p.height + parts - 1) / parts;
  const dim3 tiles{unsigned(ns), unsigned(parts), unsigned(nl)};
  if (listed) {
    const int cap = hook > 0 && hook < lcap ? int(hook) : lcap;
    GPUEC_CUDA_CHECK(gpu::launch_pdl({tiles, kStripThreads, listed_bytes(rows, lcap), stream}, ccl_tile_listed_kernel,
                                     p, roots, cap, redo));
    const int list = strip_list_cap(rows, room.tile_redo_room);
    GPUEC_CUDA_CHECK(gpu::launch_pdl({std::min(room.sms, ns * nl), kStripThreads,
                                      strip_rows_bytes(rows) + strip_list_bytes(list), stream},
                                     ccl_tile_redo_kernel, p, roots, list, static_cast<const uint32_t*>(redo)));
  } else {
    const int list = strip_list_cap(rows, room.tile_room);
    size_t smem = strip_rows_bytes(rows) + strip_list_bytes(list);
    if (room.tile_pair && int64_t(ns) * parts * nl <= room.sms) smem = alone_smem(smem, room.tile_room);
    GPUEC_CUDA_CHECK(
        gpu::launch_pdl({tiles, kStripThreads, smem, stream}, ccl_strip_local_kernel, p, rows, roots, list));
  }
  const int chunks = (rows + kStripBorderThreads - 1) / kStripBorderThreads;
  // The border pass alone is launched without programmatic dependent launch: with it, frame mode at 2160p took
  // 750-757 us instead of 721-723 (H200, the same call; docs/benchmarks.md).
  ccl_strip_border_kernel<<<dim3(unsigned(ns), unsigned(parts * chunks), unsigned(nl)), kStripBorderThreads, 0,
                            stream>>>(p, rows);
  GPUEC_CUDA_CHECK_LAUNCH();
  const dim3 words{unsigned((size_t(ns) * size_t(p.height) + 255) / 256), 1, unsigned(nl)};
  GPUEC_CUDA_CHECK(gpu::launch_pdl({words, 256, 0, stream}, ccl_max_roots_kernel, p, roots, ns));
  GPUEC_CUDA_CHECK(gpu::launch_pdl({words, 256, 0, stream}, ccl_resolve_roots_kernel, p, roots, ns));
  return {};
}

}  // namespace

size_t detect_edges_cuda_workspace_bytes(int width, int height) {
  if (!valid_size(width, height)) return 0;
  return layout(width, height, nullptr, nullptr);
}

gpu::CudaError gradient_map_cuda(const uint8_t* src, int width, int height, int pitch, float sigma, float* g,
                                 int g_pitch, void* workspace, size_t workspace_bytes, cudaStream_t stream) {
  if (!src || !g || !workspace) return GPUEC_CUDA_INVALID();
  if (!valid_size(width, height) || pitch < width || g_pitch < width) return GPUEC_CUDA_INVALID();
  if (reinterpret_cast<uintptr_t>(workspace) & 255) return GPUEC_CUDA_INVALID();
  if (workspace_bytes < detect_edges_cuda_workspace_bytes(width, height)) return GPUEC_CUDA_INVALID();
  Taps taps{};
  if (gaussian_taps(sigma, taps.w, &taps.r) != kOk) return GPUEC_CUDA_INVALID();
  Workspace ws;
  layout(width, height, static_cast<uint8_t*>(workspace), &ws);
  if (const gpu::CudaError e = launch_front(src, width, height, pitch, taps, ws, stream)) return e;
  return launch_codes(width, height, g, g_pitch, nullptr, nullptr, nullptr, 0, ws, stream);
}

gpu::CudaError detect_edges_cuda(const uint8_t* src, int width, int height, int pitch, const Options& options,
                                 uint8_t* edges, int edges_pitch, ThresholdPair* pairs, void* workspace,
                                 size_t workspace_bytes, cudaStream_t stream) {
  if (!src || !edges || !pairs || !workspace) return GPUEC_CUDA_INVALID();
  if (!valid_size(width, height) || pitch < width || edges_pitch < width) return GPUEC_CUDA_INVALID();
  if (reinterpret_cast<uintptr_t>(workspace) & 255) return GPUEC_CUDA_INVALID();
  if (workspace_bytes < detect_edges_cuda_workspace_bytes(width, height)) return GPUEC_CUDA_INVALID();
  Taps taps{};
  if (gaussian_taps(options.sigma, taps.w, &taps.r) != kOk) return GPUEC_CUDA_INVALID();
  const ThresholdMode mode = options.mode;
  if (mode != ThresholdMode::kStrip && mode != ThresholdMode::kFrame && mode != ThresholdMode::kFixed)
    return GPUEC_CUDA_INVALID();
  if (mode == ThresholdMode::kFixed) {
    const ThresholdPair f = options.fixed;
    if (f.low < 1 || f.low > f.high || f.high > kMaxThreshold) return GPUEC_CUDA_INVALID();
  } else if (check_candidates(options.candidates, options.n_candidates) != kOk) {
    return GPUEC_CUDA_INVALID();
  }
  Workspace ws;
  layout(width, height, static_cast<uint8_t*>(workspace), &ws);
  const int W = width, H = height, ns = strip_count(width);
  if (const gpu::CudaError e = launch_front(src, W, H, pitch, taps, ws, stream)) return e;

  const bool strips = mode == ThresholdMode::kStrip;
  int nc = 0, nx = 0, fb_low = 0, fb_high = 0;
  bool has_low[kMaxThreshold + 1] = {}, on_grid[kMaxThreshold + 1] = {};  // on_grid: the x grid's values
  if (mode != ThresholdMode::kFixed) {
    nc = options.n_candidates;
    const PickLimits limits = pick_limits(options.candidates, nc);
    nx = limits.nx, fb_low = limits.fb_low, fb_high = limits.fb_high;
    for (int c = 0; c < nc; ++c) {
      const CandidatePair cp = options.candidates[c];
      has_low[cp.low] = on_grid[cp.low] = on_grid[cp.high] = true;
    }
  }
  // Strip mode in shared memory: strips up to kStripMaxRows rows labelled by one block each
  // (strip_count_kernel), taller ones up to kMaxClusterBlocks * cluster_rows rows by a cluster of blocks
  // (strip_count_cluster_kernel). The component maxima of each low go to planes of cmax (the label planes'
  // memory, unused in these modes) as far as they fit; the pairs are picked by select_kernel and the map
  // written from the planes, unless a grid value below nx has no plane (never for the standard sets: their
  // only grid value that is not a low is the largest, 25): then one block a strip labels again
  // (strip_final_kernel), or, for clustered strips, the tile path runs instead.
  LowSlots slots;
  bool every_plane = true;
  uint8_t* cmax = reinterpret_cast<uint8_t*>(ws.lab);
  if (mode != ThresholdMode::kFixed) {  // strip mode, and frame mode's joined strips (frame_joined)
    int k = 0;
    for (int v = 0; v <= kMaxThreshold; ++v) {
      slots.of[v] = int16_t(has_low[v] && size_t(k) < ws.planes ? k : -1);
      k += has_low[v];
      if (on_grid[v] && v < nx && slots.of[v] < 0) every_plane = false;  // nx: the largest grid value
    }
  }
  StripLimits room;  // what this device allows the strip paths and the tile path's labelling
  if (const gpu::CudaError e = strip_limits(&room)) return e;
  const bool block_strips = strips && H <= room.block_rows;
  const bool cluster_strips =
      strips && !block_strips && room.clusters && H <= kMaxClusterBlocks * room.cluster_rows && every_plane;
  const size_t strip_smem = block_strips ? strip_smem_bytes(H) : 0;
  const size_t final_smem = block_strips && !every_plane ? strip_smem : 0;
  // Frame mode where one block holds a strip and every pick's low has a plane (frame_count_joined_kernel): strip mode's
  // labelling in shared memory, the strips of a low joined over their border pixels in global memory, strip mode's
  // counts, planes and map; where the device holds a low's blocks at once (ns at most the multiprocessors times the
  // blocks a multiprocessor), the lows are one batch, their nodes (4 H words a strip and low, frames of 2 strips or
  // more) fit after their planes of cmax in the label planes' memory, and at most kJoinedLaunches launches take all the
  // lows (a launch lasts as long as its slowest strip: at 1080p, 2 lows of 60 strips a launch, 4 launches for C_0.03,
  // the tile path was faster). Otherwise the tile path. Test hook GPUEC_CANNY_FRAME_JOINED=N: at most N launches
  // instead of kJoinedLaunches (0: the tile path).
  int nlows = 0;
  for (int v = 1; v <= kMaxThreshold; ++v) nlows += has_low[v];
  int joined_lows = 0, joined_list = 0;  // the lows a launch of frame_count_joined_kernel takes (0: not launched)
  size_t joined_smem = 0;
  const size_t node_bytes = ns > 1 ? 16 * size_t(ns) * size_t(H) * size_t(nlows) : 0;
  const size_t node_offset = align256(size_t(nlows) * W * H);  // the nodes in cmax's memory, after the lows' planes
  const long long joined_hook = gpu::fail_at_frame("GPUEC_CANNY_FRAME_JOINED");
  const long long launches = joined_hook >= 0 ? joined_hook : kJoinedLaunches;
  if (mode == ThresholdMode::kFrame && every_plane && room.joined_room > 0 && H <= room.block_rows &&
      nlows <= kMaxStripLayers && node_offset + node_bytes <= ws.planes * W * H && launches > 0) {
    joined_smem = count_smem(H, int64_t(ns) * nlows, room.joined_room, room.joined_pair_room, room.sms, &joined_list);
    const int per_sm = joined_smem > room.joined_pair_room ? 1 : room.joined_pair_blocks;  // no query a call
    const int lows = per_sm * room.sms / ns;
    if (lows > 0 && (nlows + lows - 1) / lows <= launches) joined_lows = lows;
  }
  // Otherwise the split passes (frame_split_label_kernel .. frame_split_finish_kernel) on tiles of as many rows as the
  // lists allow two blocks a multiprocessor (up to about 1088 rows on an H100 or H200), in batches of split_lows lows, as
  // many as have room after the planes (split_slot_words a low), where at most kSplitMaxBatches batches take the lows:
  // 1080p, 2160p C_0.03, and C_0.01 from 1024 columns up to 1088 rows (H200: 1080p 0.82x the tile path's time, C_0.01
  // 0.71x, 1024x1024 C_0.01 0.78x, 2160p C_0.03 on two tiles a strip 0.78x, then one batch instead of two 0.94x of
  // that; where frame_count_joined_kernel runs, the split passes measured 1.2-2.2x its time; 2160p C_0.01 has room for
  // 5 lows a batch, 5 batches, and stays on the tile path: forced in 24 batches of one low, it took 0.998x the tile
  // path's time). Batches cost: 1080p C_0.03 in 2 batches took 1.23x its time in 1, 2160p C_0.03 in 4 1.12x its time
  // in 2 (a launch of fewer lows fills the device less). Test hook
  // GPUEC_CANNY_FRAME_SPLIT=N: at most N lows a batch, however many batches, taken before frame_count_joined_kernel (0:
  // never); GPUEC_CANNY_FRAME_JOINED=0 (the tile path) turns them off too.
  // The test hook GPUEC_CANNY_LIST_CAP (read once a call): 0 (no lists) keeps the listed kernels out; N caps their
  // lists, which then overflow and leave their pairs (tiles) to the redo kernels (the split passes: to their own
  // labelling a label a pixel).
  const long long hook = gpu::fail_at_frame("GPUEC_CANNY_LIST_CAP");
  int split_lows = 0, split_cap = 0;
  SplitTiles split_tiles{ns, 1, H, H};
  const long long split_hook = gpu::fail_at_frame("GPUEC_CANNY_FRAME_SPLIT");
  if ((joined_lows == 0 || split_hook > 0) && split_hook != 0 && mode == ThresholdMode::kFrame && every_plane &&
      room.split_room > 0 && nlows <= kMaxStripLayers && launches > 0 &&
      hook != 0) {  // GPUEC_CANNY_FRAME_JOINED=0: the tile path
    int lcap = 0;
    for (int T = 1; T <= kSplitMaxTiles && lcap == 0; ++T) {
      const int R = (H + T - 1) / T;
      const int cap = R <= kStripMaxRows ? listed_cap(R, room.split_room, 1) : 0;
      if (cap > 0 && listed_fits(R, cap) && kStripWidth * cap < int(kSplitRootW)) {
        lcap = cap;
        split_tiles = SplitTiles{ns, (H + R - 1) / R, R, H};  // every part has rows (T parts of R could leave none)
      }
    }
    const size_t slot = 4 * split_slot_words(split_tiles);
    const size_t free_bytes = ws.planes * W * H > node_offset ? ws.planes * W * H - node_offset : 0;
    int lows = int(std::min<size_t>(size_t(nlows), free_bytes / slot));
    if (split_hook > 0) lows = int(std::min<long long>(lows, split_hook));
    const bool ids_fit = int64_t(split_tiles.tiles()) * split_tiles.nodes() < (int64_t(1) << 24);  // split_link's words
    if (lcap > 0 && lows > 0 && split_tiles.tiles() > 1 && ids_fit &&
        (split_hook > 0 || (nlows + lows - 1) / lows <= kSplitMaxBatches)) {
      split_lows = lows;
      split_cap = hook > 0 && hook < lcap ? int(hook) : lcap;
      joined_lows = 0;
    }
  }
  // GPUEC_CANNY_FRAME_SPLIT=N > 0 promises the tests the split passes in frame mode: an error where they cannot run.
  if (split_hook > 0 && mode == ThresholdMode::kFrame && split_lows == 0) return GPUEC_CUDA_INVALID();
  const bool frame_joined = joined_lows > 0 || split_lows > 0;

  // The shared-memory paths add SM up with atomics: the codes kernel zeroes it.
  // The codes kernel also clears select_kernel's histograms and counters (ws.hist: a region per strip, or one).
  const int zero_words = int(hist_words(size_t(ns)));  // the redo marks too: the tile path's listed tiles mark
  if (const gpu::CudaError e =
          launch_codes(W, H, nullptr, W, mode == ThresholdMode::kFixed ? nullptr : ws.gh, ws.q,
                       block_strips || cluster_strips || frame_joined ? ws.sm : nullptr, zero_words, ws, stream))
    return e;
  const dim3 block(kTileX, kTileY);
  const dim3 grid((W + kTileX - 1) / kTileX, (H + kTileY - 1) / kTileY);
  // mk is dead once the codes are made: the tile path marks its tile roots there.
  uint32_t* roots = reinterpret_cast<uint32_t*>(ws.mk);

  CclParams p{};
  p.q = ws.q;
  p.width = W;
  p.height = H;
  p.region_w = strips ? kStripWidth : W;
  p.lab = ws.lab;
  p.mx = ws.mx;
  p.pairs = pairs;

  int batch = 0;  // the batches of lows launched (their tags: batch + 1)
  if (mode == ThresholdMode::kFixed) {
    const ThresholdPair f{options.fixed.low, options.fixed.high, 1};
    GPUEC_CUDA_CHECK(gpu::launch_pdl({(ns + 255) / 256, 256, 0, stream}, fill_pairs_kernel, pairs, ns, f));
  } else {
    Bins bins;
    make_bins(options.candidates, nc, &bins);
    // The distinct lows, a batch at a time (the global label planes of the tile path: ws.layers); SM is
    // written by the first batch, added to after. Everything the kernels need of the candidates (the lows
    // and F) travels in the kernel parameters. The strip kernels take the smallest lows first (their blocks,
    // the densest sets, start in the first wave); the tile path the largest first, so that its last batch,
    // the smallest lows (the likeliest picks), stays in its label planes for the final pass (CclParams::kept).
    const bool smem_strips = block_strips || cluster_strips || frame_joined;
    const int per_batch = smem_strips ? kMaxStripLayers : ws.layers;  // C_0.01's 24 lows: one launch of strips
    // Clusters: K blocks of R rows each, the strip's rows split evenly.
    const int K = cluster_strips ? (H + room.cluster_rows - 1) / room.cluster_rows : 1, R = (H + K - 1) / K;
    const int step = smem_strips ? 1 : -1;
    // Clustered strips over the lists (strip_count_listed_cluster_kernel): LK blocks of LR rows, the fewest whose
    // lists hold half a warp's chunk (2160p: two of 1080 rows); 0 where none does (then the labels' clusters).
    int LK = 0, LR = 0, lcap_k = 0;
    if (cluster_strips && room.listed_cluster_room > 0 && hook != 0)
      for (int k = 2; k <= kMaxClusterBlocks && LK == 0; ++k) {
        const int r = (H + k - 1) / k, c = listed_cap(r, room.listed_cluster_room, k);
        if (r <= 2048 && listed_fits(r, c)) LK = k, LR = r, lcap_k = c;
      }
    // The tile path's first batch takes the remainder, so that the kept last batch is a full one.
    int cap = smem_strips || nlows % per_batch == 0 ? per_batch : nlows % per_batch;
    // The batch: strip mode's kernels take it whole (p.layers stays zero, p.kept 0), the tile path's kernels get it
    // copied into p.layers (per_batch = ws.layers <= kMaxLayers), whose lows stay for kept_layer after the loop.
    StripLayers ls{};
    for (int lo = smem_strips ? 1 : kMaxThreshold; lo >= 1 && lo <= kMaxThreshold; cap = per_batch) {
      ls.n = 0;
      for (; lo >= 1 && lo <= kMaxThreshold && ls.n < cap; lo += step)
        if (has_low[lo]) ls.low[ls.n++] = uint8_t(lo);
      if (ls.n == 0) break;  // p.layers.low still holds the last batch's lows: kept_layer reads them
      // Inside a batch the smallest low, the densest set, takes the first layer: its blocks start first.
      if (!smem_strips) std::reverse(ls.low, ls.low + ls.n);
      for (int l = 0; l < ls.n; ++l) ls.slot[l] = smem_strips ? slots.of[ls.low[l]] : int16_t(-1);
      ls.tag = uint32_t(batch + 1);
      low_tables(options.candidates, nc, ls.low, ls.n, &ls.f[0][0]);  // rows 0 .. n - 1, the only ones read
      if (!smem_strips) {  // per_batch = ws.layers <= kMaxLayers
        p.layers.n = ls.n;
        p.layers.tag = ls.tag;
        std::copy(ls.low, ls.low + ls.n, p.layers.low);
        for (int l = 0; l < ls.n; ++l) std::copy(ls.f[l], ls.f[l] + kMaxThreshold + 1, p.layers.f[l]);
        p.kept = ls.n;
      }
      if (block_strips) {
        // Two blocks a multiprocessor where the labels and codes allow, the lists in what is left; else, where the
        // blocks are more than the multiprocessors and lists of half a warp's pixels fit beside the codes two blocks
        // a multiprocessor, the union-find over the lists (strip_count_listed_kernel), and strip_count_kernel's
        // labelling for the pairs whose lists overflow (strip_count_redo_kernel; most calls none).
        const size_t bytes = strip_rows_bytes(H);
        const int lcap = listed_cap(H, room.listed_room, 1);
        const bool listed = bytes > room.count_pair_room && listed_fits(H, lcap) && int64_t(ns) * ls.n > room.sms &&
                            hook != 0;
        const dim3 count_grid(unsigned(ns), unsigned(ls.n));
        if (listed) {
          const int cap = hook > 0 && hook < lcap ? int(hook) : lcap;
          GPUEC_CUDA_CHECK(gpu::launch_pdl({count_grid, kStripThreads, listed_bytes(H, lcap), stream},
                                           strip_count_listed_kernel, p, ls, ws.sm, cmax, cap, ws.redo));
          const int list = strip_list_cap(H, room.count_room);
          GPUEC_CUDA_CHECK(
              gpu::launch_pdl({std::min(room.sms, ns * ls.n), kStripThreads, bytes + strip_list_bytes(list), stream},
                              strip_count_redo_kernel, p, ls, ws.sm, cmax, list, ws.redo));
        } else {
          int list = 0;
          const size_t smem =
              count_smem(H, int64_t(ns) * ls.n, room.count_room, room.count_pair_room, room.sms, &list);
          GPUEC_CUDA_CHECK(gpu::launch_pdl({count_grid, kStripThreads, smem, stream}, strip_count_kernel, p, ls, ws.sm,
                                           cmax, list));
        }
      } else if (cluster_strips) {
        const int list = strip_list_cap(R, room.cluster_room);
        const size_t cluster_bytes = strip_rows_bytes(R) + strip_list_bytes(list);
        const uint32_t magic = cluster_magic(uint32_t(kStripWidth * R));
        if (LK > 0 && int64_t(ns) * ls.n * LK > room.sms) {
          const int cap = hook > 0 && hook < lcap_k ? int(hook) : lcap_k;
          GPUEC_CUDA_CHECK(gpu::launch_pdl({dim3(unsigned(ns * LK), unsigned(ls.n)), kStripThreads,
                                            listed_bytes(LR, lcap_k), stream, unsigned(LK)},
                                           strip_count_listed_cluster_kernel, p, ls, ws.sm, cmax, cap, ws.redo, LR,
                                           cluster_magic(uint32_t(kStripWarps * cap))));
          // The pairs whose lists overflowed (most calls none): a cluster for each two multiprocessors (its K blocks
          // at two a multiprocessor fill K / 2), at most one a pair.
          const int clusters = int(std::min<int64_t>(int64_t(ns) * ls.n, std::max(1, room.sms / 2)));
          GPUEC_CUDA_CHECK(gpu::launch_pdl({dim3(unsigned(clusters * K), 1u), kStripThreads, cluster_bytes, stream,
                                            unsigned(K)},
                                           strip_count_cluster_kernel, p, ls, ws.sm, cmax, R, magic, list,
                                           static_cast<const uint32_t*>(ws.redo)));
        } else {
          GPUEC_CUDA_CHECK(gpu::launch_pdl({dim3(unsigned(ns * K), unsigned(ls.n)), kStripThreads, cluster_bytes,
                                            stream, unsigned(K)},
                                           strip_count_cluster_kernel, p, ls, ws.sm, cmax, R, magic, list,
                                           static_cast<const uint32_t*>(nullptr)));
        }
      } else if (frame_joined) {
        // The split passes, or frame_count_joined_kernel in cooperative launches of joined_lows lows (a low's blocks
        // wait for each other).
        uint32_t* nodes = reinterpret_cast<uint32_t*>(cmax + node_offset);
        uint32_t* sync = frame_sync(ws.redo, size_t(ns));
        for (int l0 = 0; split_lows > 0 && l0 < ls.n; l0 += split_lows) {
          const SplitTiles& g = split_tiles;
          const unsigned nb = unsigned(std::min(split_lows, ls.n - l0));
          const unsigned items = split_merge_items(g);
          const dim3 tiles(unsigned(g.ns), unsigned(g.T), nb);
          GPUEC_CUDA_CHECK(gpu::launch_pdl({tiles, kStripThreads, listed_bytes(g.R, split_cap), stream},
                                           frame_split_label_kernel, p, ls, l0, ws.sm, cmax, split_cap, g.R, nodes));
          GPUEC_CUDA_CHECK(gpu::launch_pdl({dim3((items + 255) / 256, nb), 256, 0, stream}, frame_split_merge_kernel, g,
                                           nodes));
          GPUEC_CUDA_CHECK(gpu::launch_pdl({tiles, kStripThreads, 0, stream}, frame_split_finish_kernel, p, ls, l0,
                                           ws.sm, cmax, g.R, nodes));
        }
        for (int l0 = 0; joined_lows > 0 && l0 < ls.n; l0 += joined_lows) {
          gpu::LaunchShape shape{dim3(unsigned(ns), unsigned(std::min(joined_lows, ls.n - l0))), kStripThreads,
                                 joined_smem, stream};
          shape.cooperative = true;
          GPUEC_CUDA_CHECK(gpu::launch_pdl(shape, frame_count_joined_kernel, p, ls, l0, ws.sm, cmax, joined_list,
                                           nodes, sync));
        }
      } else {
        if (const gpu::CudaError e = run_ccl(p, p.layers.n, room, roots, ws.redo, hook, stream)) return e;
        // 8, 16 or 32 rows a block: the most that still leaves about 1024 blocks (2160p: 32, 1080p: 32, 512: 8).
        int count_rows = kTileY;
        while (count_rows < 4 * kTileY &&
               int64_t(W + kTileX - 1) / kTileX * ((H + 2 * count_rows - 1) / (2 * count_rows)) >= 1024)
          count_rows *= 2;
        const dim3 count_grid((W + kTileX - 1) / kTileX, (H + count_rows - 1) / count_rows);
        GPUEC_CUDA_CHECK(
            gpu::launch_pdl({count_grid, block, 0, stream}, ccl_count_kernel, p, ws.sm, batch > 0, count_rows));
      }
      ++batch;
    }
    if (final_smem) {  // a pair's low may need labelling again: one block a strip does it all
      GPUEC_CUDA_CHECK(gpu::launch_pdl({ns, kStripThreads, final_smem, stream}, strip_final_kernel, p, ws.gh, ws.sm, nc,
                                       nx, fb_low, fb_high, bins, slots, cmax, pairs, edges, edges_pitch,
                                       strip_list_cap(H, final_smem)));
      return {};
    }
    // Rows of a region split over blocks of about select_pixels pixels each.
    const int nregions = strips ? ns : 1;
    const int rcols = strips ? kStripWidth : W;
    // Small frames' blocks of half the pixels, where a region's blocks, which all add to its histogram, stay few (in
    // frame mode the region is the frame).
    const bool small =
        int64_t(W) * H < kSelectSmallFrame && int64_t(rcols) * H < int64_t(kSelectSmallBlocks) * kSelectPixels;
    // Tall strips' blocks of twice the pixels (H200, 8192 against 4096: 2160p strips 0.987 / 0.993x the time of C_0.03
    // / C_0.01; 1080p 1.003 / 1.012 and 1024x1024 1.015, 8 blocks a strip; frame mode 0.999 at 2160p, 1.028 at 1080p).
    // Measured at 3840 columns only: the rule reads the strips' height (narrower tall frames, 1080 x 2160, take it
    // unmeasured), and small frames (narrow tall ones under 2^20 pixels) keep their half blocks.
    const bool tall = strips && int64_t(rcols) * H >= int64_t(kSelectTallBlocks) * kSelectPixels;
    const int select_pixels = small ? kSelectPixels / 2 : tall ? 2 * kSelectPixels : kSelectPixels;
    int splits = int(std::min<int64_t>(H, std::max<int64_t>(1, (int64_t(rcols) * H) / select_pixels)));
    const int split_rows = (H + splits - 1) / splits;  // select_kernel's rows a block
    splits = (H + split_rows - 1) / split_rows;         // no block without rows
    // The histograms, the pairs and the map in one launch of clusters (select_map_cluster_kernel, a strip's blocks a
    // cluster) where it can run, on frames of at most 2^18 pixels (512 x 512) with sets of at most 16 lows: there
    // 0.960-0.966x the GPU time of C_0.03 strips at 256 x 256 and 512 x 512 (H200, alone; ncu at 256 x 256: 7.5 µs
    // against select_kernel's 6.5 and strip_edges_kernel's 3.0). Elsewhere, forced on: C_0.01 at 256 x 256 1.067-1.089x
    // (which the limit on lows keeps out, and with it C_0.01 at 512 x 512, 0.984-0.998x); 640 x 480 C_0.03 1.023x,
    // C_0.01 1.015x; 1080p 1.000-1.004x; 2160p 1.007-1.009x (docs/benchmarks.md, issue 18, GPU kernels, 28th session).
    // Test hook GPUEC_CANNY_SELECT_CLUSTERS: 0 never, N > 0 wherever it can run.
    const long long select_hook = gpu::fail_at_frame("GPUEC_CANNY_SELECT_CLUSTERS");
    const bool select_map =
        strips && smem_strips && room.select_clusters && splits <= kSelectClusterBlocks &&
        (select_hook < 0 ? int64_t(W) * H <= kSelectClusterFrame && nlows <= kSelectClusterLows : select_hook > 0);
    if (select_map) {
      GPUEC_CUDA_CHECK(gpu::launch_pdl({dim3(splits, ns), kSelectThreads, 0, stream, unsigned(splits)},
                                       select_map_cluster_kernel, ws.gh, ws.sm, W, H, nc, nx, fb_low, fb_high, bins,
                                       pairs, ws.q, slots, cmax, edges, edges_pitch));
      return {};
    }
    // select_kernel's G read before its wait (select_kernel<true>, two blocks a multiprocessor) where its blocks launch
    // while the counts run: strip mode on frames of at most 2^19 pixels (800 x 600), frame mode up to 2^20 pixels
    // (1024 x 1024). H200, alone, the GPU time against four blocks a multiprocessor without the reads: strips
    // 0.952-0.979x at 640 x 480 and 800 x 600, but 1.013-1.052x at 1024 x 768 and 1280 x 720 and 1.011x at 1024 x 1024;
    // frames 0.951-0.999x from 256 x 256 to 1024 x 768, 0.985-0.991x at 1024 x 1024 (0.989-0.997x against the same
    // build without the reads: no loss, within noise), 1.025x at 1080p and 1.073x at 2160p (docs/benchmarks.md, issue
    // 18, GPU kernels, 29th session). Test hook GPUEC_CANNY_SELECT_PREFETCH: 0 never, N > 0 at every size.
    const long long prefetch_hook = gpu::fail_at_frame("GPUEC_CANNY_SELECT_PREFETCH");
    const bool prefetch = prefetch_hook < 0 ? int64_t(W) * H <= (strips ? kSelectPrefetchStrips : kSelectPrefetchFrame)
                                            : prefetch_hook > 0;
    GPUEC_CUDA_CHECK(gpu::launch_pdl({dim3(nregions, splits), kSelectThreads, 0, stream},
                                     prefetch ? select_kernel<true> : select_kernel<false>, ws.gh, ws.sm,
                                     W, H, rcols, nc, nx, fb_low, fb_high, bins, pairs, ns, strips ? 0 : 1, ws.hist,
                                     ws.hist + size_t(nregions) * kHistWords));
    if (smem_strips) {  // every pair's low has its maxima in cmax (or equals the high)
      if (quad_rows(W, edges_pitch, edges, 4)) {
        GPUEC_CUDA_CHECK(gpu::launch_pdl({quad_grid(W, H), block, 0, stream}, strip_edges_kernel<4>, ws.q, W, H, pairs,
                                         slots, cmax, edges, edges_pitch));
      } else {
        GPUEC_CUDA_CHECK(gpu::launch_pdl({grid, block, 0, stream}, strip_edges_kernel<1>, ws.q, W, H, pairs, slots,
                                         cmax, edges, edges_pitch));
      }
      return {};
    }
  }
  // The map's labelling: every region whose pair's low is neither its high nor kept labels S again. A picked
  // low is a grid value below nx (pick_pair), or the fixed pair's; when every such value is kept, no region
  // labels, and the labelling's kernels (which would all return at once) are not launched.
  bool relabel = mode == ThresholdMode::kFixed;
  for (int v = 1; v < nx; ++v) relabel = relabel || (on_grid[v] && kept_layer(p, uint32_t(v)) < 0);
  p.final_pass = 1;
  p.layers.n = 1;  // the grid's one layer; p.layers.low keeps the kept batch's lows (do not clear it)
  p.layers.tag = uint32_t(batch + 1);  // after every batch's
  if (relabel)
    if (const gpu::CudaError e = run_ccl(p, 1, room, roots, ws.redo, hook, stream)) return e;
  if (quad_rows(W, edges_pitch, edges, 4)) {
    GPUEC_CUDA_CHECK(gpu::launch_pdl({quad_grid(W, H), block, 0, stream}, ccl_output_kernel<4>, p, edges, edges_pitch));
  } else {
    GPUEC_CUDA_CHECK(gpu::launch_pdl({grid, block, 0, stream}, ccl_output_kernel<1>, p, edges, edges_pitch));
  }
  return {};
}

}  // namespace canny
