// GUD-Canny CUDA twin (canny/canny_cuda.h). Every numeric rule is canny/canny.h's ("NUMBERS"); the float
// steps use the explicit round-to-nearest intrinsics (__fadd_rn, __fsub_rn, __fmul_rn, __fdiv_rn,
// __fsqrt_rn), which nvcc never contracts into FMAs, and the file is also built with --fmad=false
// (canny/CMakeLists.txt). All other arithmetic is integer; the only atomics are integer (max, add), so
// their order does not change any result.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "canny/canny.h"
#include "canny/canny_cuda.h"
#include "../pick_pair.h"
#include "gpu/cuda_check.h"

namespace canny {
namespace {

constexpr int kTileX = 32, kTileY = 8;      // pixel kernels: 256 threads
constexpr int kLinkThreads = 256;           // hysteresis kernel
constexpr int kSelectThreads = 512;         // histogram / threshold search kernel
constexpr int kSmemWords = 8192;            // regions up to this many words keep their 3 maps in shared memory
constexpr int kGlobalSlots = 8;             // larger regions: this many candidate slots per region in global memory
constexpr int kSmemSlots = 64;              // candidate slots per region when the maps are in shared memory

struct Taps {
  int32_t w[kMaxTaps];
  int r;
};

bool valid_size(int width, int height) {
  return width >= 1 && height >= 1 && width <= kMaxDim && height <= kMaxDim &&
         int64_t(width) * height <= kMaxPixels;
}

// ---- workspace --------------------------------------------------------------------------------------------

struct Workspace {
  uint32_t* max2;          // 1 word: max of gx^2 + gy^2
  CandidatePair* cand;     // kMaxCandidates
  uint16_t* h;             // W x H, Q8 horizontal pass
  uint8_t* s;              // W x H, smoothed
  int16_t* gx;             // W x H
  int16_t* gy;             // W x H
  float* m;                // W x H, magnitude
  float* g;                // W x H, G (pitch W)
  uint16_t* q;             // ns x H x 32 threshold codes, strip-major
  uint32_t* sm;            // W x H, SM counts
  uint32_t* maps;          // kGlobalSlots x 3 x ns x H words
};

size_t align256(size_t n) { return (n + 255) & ~size_t(255); }

size_t layout(int width, int height, uint8_t* base, Workspace* ws) {
  const size_t n = size_t(width) * size_t(height);
  const size_t ns = size_t(strip_count(width));
  size_t off = 0;
  auto take = [&](size_t bytes) {
    uint8_t* p = base ? base + off : nullptr;
    off += align256(bytes);
    return p;
  };
  uint8_t* max2 = take(4);
  uint8_t* cand = take(sizeof(CandidatePair) * kMaxCandidates);
  uint8_t* h = take(n * 2);
  uint8_t* s = take(n);
  uint8_t* gx = take(n * 2);
  uint8_t* gy = take(n * 2);
  uint8_t* m = take(n * 4);
  uint8_t* g = take(n * 4);
  uint8_t* q = take(ns * size_t(height) * 32 * 2);
  uint8_t* sm = take(n * 4);
  uint8_t* maps = take(size_t(kGlobalSlots) * 3 * ns * size_t(height) * 4);
  if (ws) {
    ws->max2 = reinterpret_cast<uint32_t*>(max2);
    ws->cand = reinterpret_cast<CandidatePair*>(cand);
    ws->h = reinterpret_cast<uint16_t*>(h);
    ws->s = s;
    ws->gx = reinterpret_cast<int16_t*>(gx);
    ws->gy = reinterpret_cast<int16_t*>(gy);
    ws->m = reinterpret_cast<float*>(m);
    ws->g = reinterpret_cast<float*>(g);
    ws->q = reinterpret_cast<uint16_t*>(q);
    ws->sm = reinterpret_cast<uint32_t*>(sm);
    ws->maps = reinterpret_cast<uint32_t*>(maps);
  }
  return off;
}

// ---- steps 1-3 ----------------------------------------------------------------------------------------------

__device__ __forceinline__ int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

__global__ void smooth_rows_kernel(const uint8_t* __restrict__ src, int pitch, int W, int H, Taps taps,
                                   uint16_t* __restrict__ h) {
  __shared__ int32_t tw[kMaxTaps];  // dynamic indexing of the by-value argument would go to local memory
  const int tid = threadIdx.y * kTileX + threadIdx.x;
  if (tid < kMaxTaps) tw[tid] = taps.w[tid];
  __syncthreads();
  const int x = blockIdx.x * kTileX + threadIdx.x, y = blockIdx.y * kTileY + threadIdx.y;
  if (x >= W || y >= H) return;
  const uint8_t* row = src + size_t(y) * pitch;
  int32_t acc = 0;
  for (int i = -taps.r; i <= taps.r; ++i) acc += tw[i + taps.r] * int32_t(row[clampi(x + i, 0, W - 1)]);
  h[size_t(y) * W + x] = uint16_t((acc + 32) >> 6);
}

__global__ void smooth_cols_kernel(const uint16_t* __restrict__ h, int W, int H, Taps taps, uint8_t* __restrict__ s) {
  __shared__ int32_t tw[kMaxTaps];
  const int tid = threadIdx.y * kTileX + threadIdx.x;
  if (tid < kMaxTaps) tw[tid] = taps.w[tid];
  __syncthreads();
  const int x = blockIdx.x * kTileX + threadIdx.x, y = blockIdx.y * kTileY + threadIdx.y;
  if (x >= W || y >= H) return;
  int32_t acc = 0;
  for (int i = -taps.r; i <= taps.r; ++i)
    acc += tw[i + taps.r] * int32_t(h[size_t(clampi(y + i, 0, H - 1)) * W + x]);
  s[size_t(y) * W + x] = uint8_t((acc + (1 << 21)) >> 22);
}

// Central differences, M = sqrtf(gx^2 + gy^2), and the maximum of gx^2 + gy^2 (an integer atomicMax:
// exact whatever the order). Every thread of the block reaches the shuffles.
__global__ void gradient_kernel(const uint8_t* __restrict__ s, int W, int H, int16_t* __restrict__ gx,
                                int16_t* __restrict__ gy, float* __restrict__ m, uint32_t* max2) {
  const int x = blockIdx.x * kTileX + threadIdx.x, y = blockIdx.y * kTileY + threadIdx.y;
  uint32_t m2 = 0;
  if (x < W && y < H) {
    const uint8_t* mid = s + size_t(y) * W;
    const int32_t dx = int32_t(mid[clampi(x + 1, 0, W - 1)]) - int32_t(mid[clampi(x - 1, 0, W - 1)]);
    const int32_t dy = int32_t(s[size_t(clampi(y + 1, 0, H - 1)) * W + x]) -
                       int32_t(s[size_t(clampi(y - 1, 0, H - 1)) * W + x]);
    m2 = uint32_t(dx * dx + dy * dy);
    const size_t i = size_t(y) * W + x;
    gx[i] = int16_t(dx);
    gy[i] = int16_t(dy);
    m[i] = __fsqrt_rn(float(m2));  // exact integer argument <= 130050; correctly rounded
  }
  for (int o = 16; o > 0; o >>= 1) m2 = max(m2, __shfl_xor_sync(0xffffffffu, m2, o));
  if ((threadIdx.x & 31) == 0 && m2 > 0) atomicMax(max2, m2);
}

__device__ __forceinline__ float mag_at(const float* m, int W, int H, int x, int y) {
  if (x < 0 || y < 0 || x >= W || y >= H) return 0.0f;
  return m[size_t(y) * W + x];
}

// NMS with interpolation and G = M / Mmax, one rounding per operation (canny.h NUMBERS).
__global__ void nms_kernel(const int16_t* __restrict__ gx, const int16_t* __restrict__ gy,
                           const float* __restrict__ m, const uint32_t* __restrict__ max2, int W, int H,
                           float* __restrict__ g, int g_pitch) {
  const int x = blockIdx.x * kTileX + threadIdx.x, y = blockIdx.y * kTileY + threadIdx.y;
  if (x >= W || y >= H) return;
  const size_t i = size_t(y) * W + x;
  const float mc = m[i];
  float* out = g + size_t(y) * g_pitch + x;
  if (mc == 0.0f) {
    *out = 0.0f;
    return;
  }
  const float mmax = __fsqrt_rn(float(*max2));
  const int dx = gx[i], dy = gy[i];
  const int ax = abs(dx), ay = abs(dy);
  const int sx = (dx > 0) - (dx < 0), sy = (dy > 0) - (dy < 0);
  int mjx, mjy, mnx, mny;
  float t;
  if (ax >= ay) {
    mjx = sx; mjy = 0; mnx = 0; mny = sy;
    t = __fdiv_rn(float(ay), float(ax));
  } else {
    mjx = 0; mjy = sy; mnx = sx; mny = 0;
    t = __fdiv_rn(float(ax), float(ay));
  }
  const float a = mag_at(m, W, H, x + mjx, y + mjy);
  const float b = mag_at(m, W, H, x + mjx + mnx, y + mjy + mny);
  const float c = mag_at(m, W, H, x - mjx, y - mjy);
  const float d = mag_at(m, W, H, x - mjx - mnx, y - mjy - mny);
  const float fwd = __fadd_rn(a, __fmul_rn(t, __fsub_rn(b, a)));
  const float bwd = __fadd_rn(c, __fmul_rn(t, __fsub_rn(d, c)));
  *out = (mc > fwd && mc >= bwd) ? __fdiv_rn(mc, mmax) : 0.0f;
}

// ---- thresholds -----------------------------------------------------------------------------------------

// Threshold codes: for each pixel A = #{k in 1..100 : G >= k/100}, B = #{k : G > k/100} (k/100 the float
// (float)k / 100.0f, strictly increasing in k). Then G >= high/100 <=> A >= high, G > low/100 <=> B >= low,
// G < high/100 <=> A < high: every comparison of the CPU twin becomes an integer one. Code = A | B << 8,
// stored strip-major (q[(strip * H + y) * 32 + column in strip]); columns past the width get 0 (neither
// HIGH nor UNSTABLE for any pair with low, high >= 1).
__global__ void codes_kernel(const float* __restrict__ g, int W, int H, int ns, uint16_t* __restrict__ q) {
  __shared__ float t[kMaxThreshold + 1];
  const int tid = threadIdx.y * kTileX + threadIdx.x;
  if (tid <= kMaxThreshold) t[tid] = __fdiv_rn(float(tid), 100.0f);
  __syncthreads();
  const int x = blockIdx.x * kTileX + threadIdx.x, y = blockIdx.y * kTileY + threadIdx.y;
  if (x >= ns * kStripWidth || y >= H) return;
  uint32_t code = 0;
  if (x < W) {
    const float v = g[size_t(y) * W + x];
    int a = 0, b = 0;
    for (int k = 1; k <= kMaxThreshold && v >= t[k]; ++k) a = k;
    for (int k = 1; k <= kMaxThreshold && v > t[k]; ++k) b = k;
    code = uint32_t(a) | (uint32_t(b) << 8);
  }
  const int strip = x / kStripWidth, col = x % kStripWidth;
  q[(size_t(strip) * H + y) * kStripWidth + col] = uint16_t(code);
}

struct LinkParams {
  const uint16_t* q;
  int width, height, ns;
  int nw;                      // words per region row (1: strips; ns: the whole frame)
  const CandidatePair* cand;   // counting pass: the candidates
  int nc;
  uint32_t* sm;                // counting pass: SM, W x H
  uint32_t* gmaps;             // maps in global memory when !use_smem
  int use_smem;
  const ThresholdPair* pairs;  // final pass: the pair of each region (pairs[region])
  uint8_t* edges;              // final pass: the output
  int edges_pitch;
  int final_pass;
};

// One row of the region, in place: each word gets the UNSTABLE bits 8-adjacent to E in the rows above,
// below and itself (including the neighbour words of the region), then its horizontal closure through
// UNSTABLE runs. Rows are owned by threads (only the owner writes a row); the rows above and below may
// belong to other threads, so they are read with atomic loads and every write is an atomicOr: no data race
// (racecheck clean), and since every word only gains bits that are justified (UNSTABLE and adjacent to E),
// any interleaving stays inside the least fixed point; the loop ends only after an iteration in which no
// thread changed anything (then every row satisfies the closure with the final values: the fixed point).
__device__ __forceinline__ uint32_t atomic_load(uint32_t* p) { return atomicOr(p, 0u); }

__device__ bool update_row(uint32_t* E, const uint32_t* U, int y, int H, int nw, bool forward) {
  bool ch = false;
  for (int s = 0; s < nw; ++s) {
    const int kk = forward ? s : nw - 1 - s;
    const size_t i = size_t(y) * nw + kk;
    const uint32_t u = U[i];
    const uint32_t e = E[i];  // only this thread writes row y
    if ((u & ~e) == 0u) continue;
    uint32_t nb = 0;
    for (int dy = -1; dy <= 1; ++dy) {
      const int yy = y + dy;
      if (yy < 0 || yy >= H) continue;
      const size_t r = size_t(yy) * nw;
      uint32_t w, l, rr;
      if (dy == 0) {
        w = e;
        l = kk > 0 ? E[r + kk - 1] : 0u;
        rr = kk + 1 < nw ? E[r + kk + 1] : 0u;
      } else {  // possibly another thread's row
        w = atomic_load(E + r + kk);
        l = kk > 0 ? atomic_load(E + r + kk - 1) : 0u;
        rr = kk + 1 < nw ? atomic_load(E + r + kk + 1) : 0u;
      }
      nb |= w | (w << 1) | (w >> 1) | (l >> 31) | (rr << 31);
    }
    uint32_t ne = e | (u & nb);
    if (ne == e) continue;
    for (;;) {
      const uint32_t nx = ne | (u & ((ne << 1) | (ne >> 1)));
      if (nx == ne) break;
      ne = nx;
    }
    atomicOr(E + i, ne);
    ch = true;
  }
  return ch;
}

// Hysteresis on bit maps. Block (region, slot): region = blockIdx.x (word columns [region * nw, ...)),
// slot = blockIdx.y handles candidates slot, slot + gridDim.y, ... (counting pass) or the region's pair
// (final pass, gridDim.y == 1). Maps: HIGH, UNSTABLE, E (= HIGH | linked), one word per 32 columns.
__global__ void __launch_bounds__(kLinkThreads) link_kernel(LinkParams p) {
  extern __shared__ uint32_t smem[];
  const int region = blockIdx.x;
  const int k0 = region * p.nw;
  const int nw = min(p.ns, k0 + p.nw) - k0;
  const int H = p.height;
  const size_t words = size_t(nw) * H;
  uint32_t* base = p.use_smem
                       ? smem
                       : p.gmaps + (size_t(blockIdx.x) * gridDim.y + blockIdx.y) * 3 * (size_t(p.nw) * H);
  uint32_t* Hm = base;
  uint32_t* Um = base + words;
  uint32_t* Em = base + 2 * words;
  const int ncand = p.final_pass ? 1 : p.nc;
  const int rpt = (H + blockDim.x - 1) / blockDim.x;
  const int y0 = min(H, int(threadIdx.x) * rpt), y1 = min(H, y0 + rpt);
  for (int c = blockIdx.y; c < ncand; c += gridDim.y) {
    uint32_t lo, hi;
    if (p.final_pass) {
      lo = uint32_t(p.pairs[region].low);
      hi = uint32_t(p.pairs[region].high);
    } else {
      lo = p.cand[c].low;
      hi = p.cand[c].high;
    }
    for (size_t i = threadIdx.x; i < words; i += blockDim.x) {
      const int y = int(i / nw), kk = int(i % nw);
      const uint4* qp = reinterpret_cast<const uint4*>(p.q + (size_t(k0 + kk) * H + y) * kStripWidth);
      uint32_t hb = 0, ub = 0;
#pragma unroll
      for (int v = 0; v < 4; ++v) {
        const uint4 d = qp[v];
        const uint32_t dw[4] = {d.x, d.y, d.z, d.w};
#pragma unroll
        for (int e = 0; e < 8; ++e) {
          const uint32_t code = (dw[e >> 1] >> (16 * (e & 1))) & 0xffffu;
          const uint32_t A = code & 0xffu, B = code >> 8;
          const int j = v * 8 + e;
          hb |= uint32_t(A >= hi) << j;
          ub |= uint32_t(B >= lo && A < hi) << j;
        }
      }
      Hm[i] = hb;
      Um[i] = ub;
      Em[i] = hb;
    }
    __syncthreads();
    bool changed;
    do {
      bool ch = false;
      for (int y = y0; y < y1; ++y) ch |= update_row(Em, Um, y, H, nw, true);
      for (int y = y1 - 1; y >= y0; --y) ch |= update_row(Em, Um, y, H, nw, false);
      changed = __syncthreads_or(ch) != 0;
    } while (changed);
    if (!p.final_pass) {
      for (size_t i = threadIdx.x; i < words; i += blockDim.x) {
        uint32_t l = Em[i] & ~Hm[i];  // the linking map
        if (!l) continue;
        const int y = int(i / nw), kk = int(i % nw);
        uint32_t* row = p.sm + size_t(y) * p.width + size_t(k0 + kk) * kStripWidth;
        while (l) {
          const int j = __ffs(l) - 1;
          l &= l - 1;
          atomicAdd(row + j, 1u);
        }
      }
    } else {
      const int x0 = k0 * kStripWidth;
      const int rw = min(p.width, (k0 + nw) * kStripWidth) - x0;
      const size_t npix = size_t(rw) * H;
      for (size_t i = threadIdx.x; i < npix; i += blockDim.x) {
        const int y = int(i / rw), cx = int(i % rw);
        const uint32_t w = Em[size_t(y) * nw + cx / kStripWidth];
        p.edges[size_t(y) * p.edges_pitch + x0 + cx] = ((w >> (cx % kStripWidth)) & 1u) ? 255 : 0;
      }
    }
    __syncthreads();  // the maps are rebuilt for the next candidate
  }
}

// Medina-Carnicer's histogram and local maxima on one region (blockIdx.x): columns [x0, min(W, x0 + rcols)),
// x0 = blockIdx.x * rcols. Writes pairs[blockIdx.x], or every one of the ns entries when `all` is set.
__global__ void __launch_bounds__(kSelectThreads)
select_kernel(const float* __restrict__ g, const uint32_t* __restrict__ sm, int W, int H, int rcols, int nc,
              int nx, int fb_low, int fb_high, ThresholdPair* pairs, int ns, int all) {
  __shared__ uint32_t g_count[kMaxThreshold + 1];
  __shared__ uint32_t p_hist[kMaxThreshold + 2];
  for (int j = threadIdx.x; j < kMaxThreshold + 2; j += blockDim.x) {
    if (j <= kMaxThreshold) g_count[j] = 0;
    p_hist[j] = 0;
  }
  __syncthreads();
  const int x0 = blockIdx.x * rcols, x1 = min(W, x0 + rcols), w = x1 - x0;
  const size_t n = size_t(w) * H;
  const uint32_t unc = uint32_t(nc);
  uint32_t zeros = 0;
  for (size_t i = threadIdx.x; i < n; i += blockDim.x) {
    const int y = int(i / w), x = x0 + int(i % w);
    const uint32_t s = sm[size_t(y) * W + x];
    const uint32_t bin_p = (200u * s + unc) / (2u * unc);  // s <= nc <= 4950: no overflow
    if (bin_p == 0) ++zeros; else atomicAdd(&p_hist[bin_p], 1u);
    const float v = g[size_t(y) * W + x];
    const int bin_g = int(__fadd_rn(__fmul_rn(v, 100.0f), 0.5f));
    if (bin_g >= 1 && bin_g <= nx && 100u * s >= uint32_t(bin_g) * unc) atomicAdd(&g_count[bin_g], 1u);
  }
  if (zeros) atomicAdd(&p_hist[0], zeros);
  __syncthreads();
  if (threadIdx.x != 0) return;
  __shared__ int d[kMaxThreshold + 1];  // thread 0 only (shared: no local-memory stack frame)
  const ThresholdPair out = pick_pair(g_count, p_hist, nx, d, fb_low, fb_high);
  if (all) {
    for (int s = 0; s < ns; ++s) pairs[s] = out;
  } else {
    pairs[blockIdx.x] = out;
  }
}

__global__ void fill_pairs_kernel(ThresholdPair* pairs, int ns, ThresholdPair p) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < ns) pairs[i] = p;
}

// Steps 1-3 into g (pitch g_pitch); arguments already checked.
gpu::CudaError run_gradient(const uint8_t* src, int W, int H, int pitch, const Taps& taps, float* g, int g_pitch,
                            const Workspace& ws, cudaStream_t stream) {
  const dim3 block(kTileX, kTileY);
  const dim3 grid((W + kTileX - 1) / kTileX, (H + kTileY - 1) / kTileY);
  GPUEC_CUDA_CHECK(cudaMemsetAsync(ws.max2, 0, sizeof(uint32_t), stream));
  smooth_rows_kernel<<<grid, block, 0, stream>>>(src, pitch, W, H, taps, ws.h);
  GPUEC_CUDA_CHECK_LAUNCH();
  smooth_cols_kernel<<<grid, block, 0, stream>>>(ws.h, W, H, taps, ws.s);
  GPUEC_CUDA_CHECK_LAUNCH();
  gradient_kernel<<<grid, block, 0, stream>>>(ws.s, W, H, ws.gx, ws.gy, ws.m, ws.max2);
  GPUEC_CUDA_CHECK_LAUNCH();
  nms_kernel<<<grid, block, 0, stream>>>(ws.gx, ws.gy, ws.m, ws.max2, W, H, g, g_pitch);
  GPUEC_CUDA_CHECK_LAUNCH();
  return {};
}

gpu::CudaError launch_link(const LinkParams& p, int nregions, int slots, cudaStream_t stream) {
  const size_t region_words = size_t(p.nw) * p.height;
  const size_t smem = p.use_smem ? 3 * region_words * sizeof(uint32_t) : 0;
  if (smem > 48 * 1024)
    GPUEC_CUDA_CHECK(cudaFuncSetAttribute(link_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          int(3 * kSmemWords * sizeof(uint32_t))));
  link_kernel<<<dim3(nregions, slots), kLinkThreads, smem, stream>>>(p);
  GPUEC_CUDA_CHECK_LAUNCH();
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
  return run_gradient(src, width, height, pitch, taps, g, g_pitch, ws, stream);
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

  if (const gpu::CudaError e = run_gradient(src, W, H, pitch, taps, ws.g, W, ws, stream)) return e;
  {
    const dim3 block(kTileX, kTileY);
    const dim3 grid(unsigned(ns), (H + kTileY - 1) / kTileY);
    codes_kernel<<<grid, block, 0, stream>>>(ws.g, W, H, ns, ws.q);
    GPUEC_CUDA_CHECK_LAUNCH();
  }

  const bool strips = mode == ThresholdMode::kStrip;
  LinkParams p{};
  p.q = ws.q;
  p.width = W;
  p.height = H;
  p.ns = ns;
  p.nw = strips ? 1 : ns;
  p.gmaps = ws.maps;
  p.use_smem = size_t(p.nw) * H <= size_t(kSmemWords);
  p.pairs = pairs;
  p.edges = edges;
  p.edges_pitch = edges_pitch;
  const int nregions = strips ? ns : 1;

  if (mode == ThresholdMode::kFixed) {
    const ThresholdPair f{options.fixed.low, options.fixed.high, 1};
    fill_pairs_kernel<<<(ns + 255) / 256, 256, 0, stream>>>(pairs, ns, f);
    GPUEC_CUDA_CHECK_LAUNCH();
  } else {
    const int nc = options.n_candidates;
    int nx = 0, fb_low = 0, fb_high = 0;
    for (int c = 0; c < nc; ++c) {
      const CandidatePair cp = options.candidates[c];
      nx = std::max(nx, int(cp.high));
      if (cp.high > fb_high || (cp.high == fb_high && cp.low > fb_low)) {
        fb_high = cp.high;
        fb_low = cp.low;
      }
    }
    GPUEC_CUDA_CHECK(cudaMemcpyAsync(ws.cand, options.candidates, sizeof(CandidatePair) * size_t(nc),
                                     cudaMemcpyHostToDevice, stream));
    GPUEC_CUDA_CHECK(cudaMemsetAsync(ws.sm, 0, size_t(W) * H * sizeof(uint32_t), stream));
    p.cand = ws.cand;
    p.nc = nc;
    p.sm = ws.sm;
    p.final_pass = 0;
    const int slots = std::min(nc, p.use_smem ? kSmemSlots : kGlobalSlots);
    if (const gpu::CudaError e = launch_link(p, nregions, slots, stream)) return e;
    select_kernel<<<nregions, kSelectThreads, 0, stream>>>(ws.g, ws.sm, W, H, strips ? kStripWidth : W, nc, nx,
                                                           fb_low, fb_high, pairs, ns, strips ? 0 : 1);
    GPUEC_CUDA_CHECK_LAUNCH();
  }
  p.final_pass = 1;
  return launch_link(p, nregions, 1, stream);
}

}  // namespace canny
