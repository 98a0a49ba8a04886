// canny-lanes-gpu: a first GPU build of item 2's labelling of every low at once (issue 18; docs/benchmarks.md, "a
// lane a low"), measured alone: not called by the library. Strip mode's counting labels S(low) = {B >= low} of every
// 32-column strip once for every distinct low of the candidate set, a block a (strip, low). Here a block takes a strip
// and every low at once, a warp a chunk of rows, in one of two designs (lows_kernel<LaneDesign | PairDesign>):
//   lanes: a lane a low (lanes past the set's lows idle). Each lane walks its own low's runs of a row with a
//          union-find over runs (a run takes the node of the first run of the row above it that it touches, joins the
//          others', or takes a new node), so a row costs the warp what its busiest low's runs cost, for any number of
//          lows. canny-lows-work's kernel_model is this kernel on the CPU;
//   pairs: a lane a (low, run) pair: the row's runs of every low numbered, 32 a step (see PairDesign).
// Both designs, in turn:
//   pass 1: a row's codes, one a lane; each lane's mask of its low from a 32 x 32 bit transpose of the lanes' masks
//           of lows (k(B): the lows at most B, a table); the row's new runs counted from the masks and their nodes
//           taken from a block counter, a row at a time (so that pass 2 finds them again: rowbase); the walk;
//   joins:  each chunk's first row against the last row of the chunk above (lock-free unions across warps);
//   fold:   every node's maximum of A into its root (atomicMax on the root's word: kAcc | max), then each node's
//           component maximum in its byte;
//   pass 2: the same walk finds each run's node again; lane l writes F_l(max) at its run's columns in a 32 x 32
//           matrix a warp, and lane x sums its column's row of it: SM = the sum less G(k(B), A) (the sum over the
//           lows at most B of F_low(A)).
// It writes SM only, not the planes of component maxima (strip mode's map reads the picked low's; the library would
// label that one low again, as strip_final_kernel does). Its SM is checked here against the CPU twin's
// (select_thresholds_ref a strip); the program exits 3 where they differ, where a block's nodes or a row's pairs
// overflow, or where a design's shared memory does not fit the device.
// Timed: the kernel alone, event-timed, median of --repeats after --warmup, on canny-bench-gpu's images (the same
// synthetic 1080p and 2160p frames), C_0.03 and C_0.01.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench_images.h"
#include "bench_util.h"
#include "canny/canny.h"

namespace {

constexpr int kStrip = 32;                     // columns a strip
constexpr int kMaxRuns = 16;                   // runs of a row of 32 columns
constexpr int kV = canny::kMaxThreshold + 1;   // values of A (0 .. 100)
constexpr int kFPitch = 104;                   // a table row of F (u16), padded
constexpr uint32_t kAcc = 0x80000000u;         // a root's word once its maximum is folded: kAcc | max

struct Params {
  const uint16_t* q;      // codes: A | B << 8, W x H
  int W, H;
  const uint16_t* f;      // kStrip x kFPitch: F_l(v), the candidates (low_l, high) with high <= v (rows past n: 0)
  const uint8_t* klut;    // 256: the lows at most B (lows ascending, so pixel in S(low_l) iff l < klut[B])
  uint16_t* sm;           // W x H (only pixels in some S written)
  uint32_t* stats;        // per strip: nodes taken, overflow (2 words)
  int cap;                // nodes a block
};

// Dynamic shared memory of a block of `warps` warps for H rows (bytes, 16-aligned parts) and `cap` nodes after it: for
// the lane-a-low kernel a byte of maximum a node and buffers of the runs' nodes a lane (kMaxRuns a row); for the
// pairs kernel a word of maximum a node (its lanes update a node's together: atomicMax) and buffers of kMaxPairs.
constexpr int kMaxPairs = 256;  // the pairs kernel: (low, run) pairs of a row (more: the block reports an overflow)
struct Layout {
  size_t f, g, klut, rowa, rowbase, bufs, mat, last, counter, parent, maxv, total;
  int buf;  // entries of a row's buffer
};
__host__ __device__ inline size_t up16(size_t x) { return (x + 15) & ~size_t(15); }
__host__ __device__ inline Layout layout(bool pairs, int warps, int H, int cap) {
  Layout L{};
  L.buf = pairs ? kMaxPairs : kMaxRuns * kStrip;
  size_t at = 0;
  L.f = at;       at += up16(size_t(kStrip) * kFPitch * 2);
  L.g = at;       at += up16(size_t(kStrip + 1) * kFPitch * 2);
  L.klut = at;    at += 256;
  L.rowa = at;    at += up16(size_t(warps) * kStrip);
  L.rowbase = at; at += up16(size_t(H) * 4);
  L.bufs = at;    at += up16(size_t(warps) * 2 * L.buf * 2);
  L.mat = at;     at += up16(size_t(warps) * kStrip * kStrip * 2);
  L.last = at;    at += up16(size_t(warps) * 4);
  L.counter = at; at += 16;
  L.parent = at;  at += up16(size_t(cap) * 4);
  L.maxv = at;    at += up16(size_t(cap) * (pairs ? 4 : 1));
  L.total = at;
  return L;
}
__host__ __device__ inline size_t node_bytes(bool pairs) { return pairs ? 8 : 5; }

// Lane l's bit x of the result is bit l of lane x's v (a 32 x 32 bit transpose, five shuffle stages).
__device__ __forceinline__ uint32_t transpose32(uint32_t v, int lane) {
  constexpr uint32_t kMask[5] = {0x0000ffffu, 0x00ff00ffu, 0x0f0f0f0fu, 0x33333333u, 0x55555555u};
#pragma unroll
  for (int i = 0, j = 16; i < 5; ++i, j >>= 1) {
    const uint32_t o = __shfl_xor_sync(0xffffffffu, v, j);
    v = (lane & j) ? (v & ~kMask[i]) | ((o >> j) & kMask[i]) : (v & kMask[i]) | ((o & kMask[i]) << j);
  }
  return v;
}

// The runs of m that touch no pixel of pm (8-connected: columns s - 1 .. e + 1 of the row above): the new runs.
// A run of u = m less the touched pixels that starts where a run of m starts carries, when added to u, to the column
// past the run's end (outside m) if it holds no touched pixel, else to its first touched pixel (inside m).
__device__ __forceinline__ int new_runs(uint32_t m, uint32_t pm) {
  const uint32_t t = m & (pm | (pm << 1) | (pm >> 1));
  const uint32_t u = m & ~t, st = m & ~(m << 1);
  const uint64_t c = uint64_t(u) + uint64_t(st & u);
  return __popcll(c & ~uint64_t(m) & ~uint64_t(u));
}

struct Row {
  uint32_t m;  // this lane's low's mask of S in the row (bit x: column x)
  uint32_t k;  // this lane's column: the lows its pixel is in (l < k)
  uint32_t a;  // this lane's column: A
};
// Row y of the strip from column x0 (the whole warp, converged): false where no pixel of it is in any S (then r->m is
// not set); else each lane's mask of its low, from a transpose of the lanes' masks of lows (bit l: l < k).
__device__ __forceinline__ bool load_row(const Params& p, int x0, int y, int lane, const uint8_t* klut, Row* r) {
  const int x = x0 + lane;
  const uint32_t code = x < p.W ? uint32_t(__ldg(p.q + size_t(y) * p.W + x)) : 0u;
  r->a = code & 0xffu;
  r->k = klut[code >> 8];
  if (!__any_sync(0xffffffffu, r->k != 0u)) return false;
  r->m = transpose32(r->k >= 32 ? 0xffffffffu : (1u << r->k) - 1u, lane);
  return true;
}

// A run of m from bit s: its last bit e.
__device__ __forceinline__ int run_end(uint32_t m, int s) {
  const uint32_t gap = ~m & (0xffffffffu << s);
  return gap ? __ffs(gap) - 2 : 31;
}
// The runs of m in turn: the next run [*s, *e] of those left in *todo (not 0), taken out of it.
__device__ __forceinline__ void next_run(uint32_t m, uint32_t* todo, int* s, int* e) {
  *s = __ffs(*todo) - 1;
  *e = run_end(m, *s);
  *todo &= *e == 31 ? 0u : (0xffffffffu << (*e + 1));
}

// The exclusive prefix of v over the lanes, and the total.
__device__ __forceinline__ uint32_t lane_scan(uint32_t v, int lane, uint32_t* total) {
  uint32_t s = v;
#pragma unroll
  for (int j = 1; j < 32; j <<= 1) {
    const uint32_t o = __shfl_up_sync(0xffffffffu, s, j);
    if (lane >= j) s += o;
  }
  *total = __shfl_sync(0xffffffffu, s, 31);
  return s - v;
}

// The pixels of pm in columns s - 1 .. e + 1.
__device__ __forceinline__ uint32_t window(uint32_t pm, int s, int e) {
  const uint32_t lo = s ? (0xffffffffu << (s - 1)) : 0xffffffffu;
  const uint32_t hi = e >= 30 ? 0xffffffffu : ((4u << e) - 1u);
  return pm & lo & hi;
}
// The ordinal of the run of pm holding bit b (pst: pm's run starts).
__device__ __forceinline__ int run_ordinal(uint32_t pst, int b) {
  return __popc(pst & (b == 31 ? 0xffffffffu : ((2u << b) - 1u))) - 1;
}

// Pass 1's find (a lane's own nodes: no other thread touches them), path halving.
__device__ __forceinline__ uint32_t find_own(uint32_t* parent, uint32_t a) {
  uint32_t p;
  while ((p = parent[a]) != a) {
    const uint32_t g = parent[p];
    parent[a] = g;
    a = g;
  }
  return a;
}
// The joins' find and union (nodes of two warps' chunks: other warps link them too), parents at smaller indices.
__device__ __forceinline__ uint32_t find_shared(const volatile uint32_t* parent, uint32_t a) {
  uint32_t p;
  while ((p = parent[a]) != a) a = p;
  return a;
}
__device__ __forceinline__ void unite(uint32_t* parent, uint32_t a, uint32_t b) {
  for (;;) {
    a = find_shared(parent, a);
    b = find_shared(parent, b);
    if (a == b) return;
    if (a < b) {
      const uint32_t t = a;
      a = b;
      b = t;
    }
    const uint32_t old = atomicMin(parent + a, b);
    if (old == a) return;
    a = old;
  }
}
// After the joins: the root of a, a word that is its own index or kAcc | max.
__device__ __forceinline__ uint32_t find_root(const volatile uint32_t* parent, uint32_t a, uint32_t* word) {
  uint32_t p;
  while ((p = parent[a]) != a && p < kAcc) a = p;
  *word = p;
  return a;
}

// A block's shared memory (layout()) and its start: the tables (F, G, k(B)), the warps' matrices zeroed.
template <class MaxT>
struct Block {
  int warps, wp, lane, x0, H;
  int y0, y1;  // this warp's chunk of rows
  Layout L;
  uint16_t *f, *g;
  uint8_t *klut, *rowa;
  uint32_t* rowbase;
  uint16_t *bufs, *mat;  // this warp's
  int* last;
  uint32_t* counter;  // [0] nodes taken, [1] overflow
  uint32_t* parent;
  MaxT* maxv;
  __device__ Block(unsigned char* smem, const Params& p, bool pairs) {
    warps = int(blockDim.x) / 32, wp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
    x0 = int(blockIdx.x) * kStrip, H = p.H;
    const int per = (H + warps - 1) / warps;
    y0 = min(H, wp * per), y1 = min(H, y0 + per);
    L = layout(pairs, warps, H, p.cap);
    f = reinterpret_cast<uint16_t*>(smem + L.f);
    g = reinterpret_cast<uint16_t*>(smem + L.g);
    klut = smem + L.klut;
    rowa = smem + L.rowa + wp * kStrip;
    rowbase = reinterpret_cast<uint32_t*>(smem + L.rowbase);
    bufs = reinterpret_cast<uint16_t*>(smem + L.bufs) + size_t(wp) * 2 * L.buf;
    mat = reinterpret_cast<uint16_t*>(smem + L.mat) + size_t(wp) * kStrip * kStrip;
    last = reinterpret_cast<int*>(smem + L.last);
    counter = reinterpret_cast<uint32_t*>(smem + L.counter);
    parent = reinterpret_cast<uint32_t*>(smem + L.parent);
    maxv = reinterpret_cast<MaxT*>(smem + L.maxv);
    for (int i = threadIdx.x; i < kStrip * kFPitch; i += blockDim.x) f[i] = p.f[i];
    for (int i = threadIdx.x; i < 256; i += blockDim.x) klut[i] = p.klut[i];
    for (int i = threadIdx.x; i < warps * kStrip * kStrip / 2; i += blockDim.x)
      reinterpret_cast<uint32_t*>(smem + L.mat)[i] = 0u;
    if (threadIdx.x < 2) counter[threadIdx.x] = 0;
    __syncthreads();
    for (int v = threadIdx.x; v < kV; v += blockDim.x) {  // G(k, v) = sum over l < k of F_l(v)
      uint32_t s = 0;
      for (int k = 0; k <= kStrip; ++k) {
        g[k * kFPitch + v] = uint16_t(s);
        if (k < kStrip) s += f[k * kFPitch + v];
      }
    }
  }
  // The nodes of a row's `total` new runs from the block's counter (the row's first in rowbase[y]); 0 and the block
  // marked where they overflow (its nodes are garbage from there, in bounds while a row's nodes are at most cap: the
  // host's rule; it writes no SM).
  __device__ uint32_t take_nodes(uint32_t total, int y, uint32_t cap) const {
    uint32_t base = 0;
    if (lane == 0) {
      base = atomicAdd(counter, total);
      if (base + total > cap) {
        counter[1] = 1;
        base = 0;
      }
      rowbase[y] = base;
    }
    base = __shfl_sync(0xffffffffu, base, 0);
    return base + total > cap ? 0u : base;
  }
  // After the joins: every node's maximum into its root (each node's maximum is at most its component's, and every
  // run's maximum went into some node of it), then each node's component maximum in its place; the block's counts to
  // stats.
  // False where the nodes overflowed (the block writes nothing more).
  __device__ bool fold(const Params& p) {
    __syncthreads();
    const bool overflow = counter[1] != 0;
    const uint32_t nodes = min(counter[0], uint32_t(p.cap));
    if (!overflow)
      for (uint32_t n = threadIdx.x; n < nodes; n += blockDim.x) {
        uint32_t w;
        const uint32_t r = find_root(parent, n, &w);
        const uint32_t v = kAcc | uint32_t(maxv[n]);
        if (w < v) atomicMax(parent + r, v);
      }
    __syncthreads();
    if (!overflow)
      for (uint32_t n = threadIdx.x; n < nodes; n += blockDim.x) {
        uint32_t w;
        find_root(parent, n, &w);
        maxv[n] = MaxT(w & 0xffu);
      }
    __syncthreads();
    if (threadIdx.x == 0) {
      p.stats[2 * blockIdx.x] = counter[0];
      p.stats[2 * blockIdx.x + 1] = counter[1];
    }
    return !overflow;
  }
  // Pass 2's end of a row (its lanes wrote F_low(max) at their runs' columns of the warp's matrix): lane x sums its
  // column's entries (and zeroes them) and writes SM there.
  __device__ void column_sum(const Params& p, const Row& r, int y) const {
    __syncwarp();
    uint4* row = reinterpret_cast<uint4*>(mat + lane * kStrip);
    uint32_t s2 = 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const uint4 v = row[i];
      s2 += v.x + v.y + v.z + v.w;
      row[i] = make_uint4(0u, 0u, 0u, 0u);
    }
    const uint32_t sum = (s2 & 0xffffu) + (s2 >> 16) - g[r.k * kFPitch + r.a];
    if (r.k && x0 + lane < p.W) p.sm[size_t(y) * p.W + x0 + lane] = uint16_t(sum);
    __syncwarp();
  }
};

// The joins, after pass 1 (every warp, after a barrier): this warp's chunk's first row against the row above it
// (the last of the chunk above), a lane a low, by lock-free unions. The first row's runs all took new nodes (pass 1
// starts a chunk with no row above), in order from its rowbase; the row above's nodes are in the chunk above's last
// buffer: a lane's run o at o * kStrip + lane (the lane-a-low kernel), or pair off + o of the row (the pairs kernel).
template <class MaxT>
__device__ void join_chunk(const Params& p, const Block<MaxT>& B, bool pairs) {
  const int y0 = B.y0;
  if (B.counter[1] != 0 || B.wp == 0 || y0 >= B.y1) return;
  Row r, u;
  const bool here = load_row(p, B.x0, y0, B.lane, B.klut, &r), above = load_row(p, B.x0, y0 - 1, B.lane, B.klut, &u);
  if (!here || !above) return;
  const uint32_t m = r.m, pm = u.m, pst = pm & ~(pm << 1);
  uint32_t total;
  uint32_t next = B.rowbase[y0] + lane_scan(uint32_t(__popc(m & ~(m << 1))), B.lane, &total);
  const uint32_t uoff = lane_scan(uint32_t(__popc(pst)), B.lane, &total);
  const uint16_t* prev = B.bufs - 2 * B.L.buf + B.last[B.wp - 1] * B.L.buf;
  for (uint32_t todo = m; todo; ++next) {
    int s, e;
    next_run(m, &todo, &s, &e);
    const uint32_t w = window(pm, s, e);
    if (!w) continue;
    const int o1 = run_ordinal(pst, __ffs(w) - 1), o2 = run_ordinal(pst, 31 - __clz(w));
    for (int o = o1; o <= o2; ++o) unite(B.parent, prev[pairs ? uoff + o : o * kStrip + B.lane], next);
  }
}

// A warp's walk of its chunk, row by row (both kernels, both passes): row(r, y, prev, out) labels a row with S from
// the row above's buffer of nodes into its own (false: the warp stops, its block marked); none() where a row has no S
// (the next row has none above); end(r, y) closes a row. The chunk's last buffer in B.last (the joins read pass 1's).
template <class MaxT, class RowF, class None, class End>
__device__ void walk_rows(const Params& p, const Block<MaxT>& B, RowF row, None none, End end) {
  int cur = 0;  // the buffer of the row above's nodes
  for (int y = B.y0; y < B.y1; ++y) {
    Row r;
    if (!load_row(p, B.x0, y, B.lane, B.klut, &r)) {
      none();
      continue;
    }
    B.rowa[B.lane] = uint8_t(r.a);  // pass 1's runs read it (after its first()'s __syncwarp)
    if (!row(r, y, B.bufs + cur * B.L.buf, B.bufs + (cur ^ 1) * B.L.buf)) break;
    cur ^= 1;
    end(r, y);
  }
  if (B.lane == 0) B.last[B.wp] = cur;
}

// A warp's walk of its chunk a lane a low (both passes of LaneDesign): for each row with S, first(r, y,
// total) gives the first node of the row's `total` new runs, then each run of the lane's low gets its node from
// run(s, e, w, pst, prev, &next) (w: the window of the row above, pst its run starts, prev its runs' nodes, next the
// lane's next new node), kept in the row's buffer, and end(r, y) closes the row.
template <class First, class Run, class End>
__device__ void lanes_walk(const Params& p, const Block<uint8_t>& B, First first, Run run, End end) {
  uint32_t pm = 0;  // the row above's mask of this lane's low (0 above the chunk or a row without S)
  walk_rows(
      p, B,
      [&](const Row& r, int y, const uint16_t* prev, uint16_t* out) {
        const uint32_t m = r.m, pst = pm & ~(pm << 1);
        uint32_t total;
        const uint32_t excl = lane_scan(uint32_t(new_runs(m, pm)), B.lane, &total);
        uint32_t next = first(r, y, total) + excl;
        int ord = 0;
        for (uint32_t todo = m; todo; ++ord) {
          int s, e;
          next_run(m, &todo, &s, &e);
          out[ord * kStrip + B.lane] = uint16_t(run(s, e, window(pm, s, e), pst, prev, &next));
        }
        pm = m;
        return true;
      },
      [&] { pm = 0; }, end);
}

// The lane-a-low kernel's passes (lows_kernel<LaneDesign>).
struct LaneDesign {
  using MaxT = uint8_t;
  static constexpr bool kPairs = false;
  static __device__ void pass1(const Params& p, const Block<uint8_t>& B) {
    // Pass 1: a run takes a new node, or the root of the first run above, joined with the others' roots (this lane's
    // nodes alone: plain loads and stores); the root keeps the tree's maximum of A.
    lanes_walk(
        p, B,
        [&](const Row&, int y, uint32_t total) {
          const uint32_t base = total ? B.take_nodes(total, y, uint32_t(p.cap)) : 0u;
          __syncwarp();
          return base;
        },
        [&](int s, int e, uint32_t w, uint32_t pst, const uint16_t* prev, uint32_t* next) {
          uint32_t mx = 0;
          for (int x = s; x <= e; ++x) mx = max(mx, uint32_t(B.rowa[x]));
          if (!w) {
            const uint32_t node = (*next)++;
            B.parent[node] = node;
            B.maxv[node] = uint8_t(mx);
            return node;
          }
          const int o1 = run_ordinal(pst, __ffs(w) - 1), o2 = run_ordinal(pst, 31 - __clz(w));
          uint32_t root = find_own(B.parent, prev[o1 * kStrip + B.lane]);
          mx = max(mx, uint32_t(B.maxv[root]));
          for (int o = o1 + 1; o <= o2; ++o) {
            const uint32_t r2 = find_own(B.parent, prev[o * kStrip + B.lane]);
            if (r2 == root) continue;
            mx = max(mx, uint32_t(B.maxv[r2]));
            if (r2 < root) {
              B.parent[root] = r2;
              root = r2;
            } else {
              B.parent[r2] = root;
            }
          }
          B.maxv[root] = uint8_t(mx);
          return root;
        },
        [&](const Row&, int) { __syncwarp(); });  // rowa
  }
  static __device__ void pass2(const Params& p, const Block<uint8_t>& B) {
    // Pass 2: the same walk finds each run's node again (the first run above's, or the next new one); F_low(max) at
    // the run's columns of the warp's matrix, summed a column.
    const uint16_t* fl = B.f + B.lane * kFPitch;
    lanes_walk(
        p, B, [&](const Row&, int y, uint32_t total) { return total ? B.rowbase[y] : 0u; },
        [&](int s, int e, uint32_t w, uint32_t pst, const uint16_t* prev, uint32_t* next) {
          const uint32_t node = w ? prev[run_ordinal(pst, __ffs(w) - 1) * kStrip + B.lane] : (*next)++;
          const uint16_t v = fl[B.maxv[node]];
          for (int x = s; x <= e; ++x) B.mat[x * kStrip + B.lane] = v;
          return node;
        },
        [&](const Row& r, int y) { B.column_sum(p, r, y); });
  }
};

// ---- a lane a (low, run) pair ----------------------------------------------------------------------------------
// The lane-a-low kernel's run loop runs as many steps as its busiest low has runs, with a fifth of the lanes busy
// (docs/benchmarks.md). Here a row's runs of every low are numbered in order of (low, run), off_l the first of low l
// (a scan over the lanes), and lane t takes pair i0 + t, 32 at a time: its low is the last lane l with off_l <= i (a
// binary search over the lanes' off), its run the (i - off_l)-th start of the low's mask. A pair's node: a new one
// (the row's new runs counted a low at a time from the masks first, so that pass 2 finds them again), or the first
// run above's, joined with the others' by lock-free unions (the lanes of a row link nodes of the rows above
// together); the run's maximum of A goes to its node by atomicMax, the nodes' words folded into the roots at the end.

// The last lane l whose off_l is at most i (off: nondecreasing over the lanes, lane 0's 0).
__device__ __forceinline__ int pair_owner(uint32_t off, uint32_t i) {
  int lo = 0;
#pragma unroll
  for (int step = 16; step >= 1; step >>= 1)
    if (__shfl_sync(0xffffffffu, off, lo + step) <= i) lo += step;
  return lo;
}
// The position of set bit number r (from 0) of v (it has more than r).
__device__ __forceinline__ int nth_bit(uint32_t v, uint32_t r) {
  int pos = 0;
#pragma unroll
  for (int step = 16; step >= 1; step >>= 1)
    if (uint32_t(__popc(v & ((1u << (pos + step)) - 1u))) <= r) pos += step;
  return pos;
}

// A row's pairs as the pairs kernel's passes see them.
struct Pairs {
  uint32_t m, pm;     // this lane's low's masks: the row's, the row above's (0 above the chunk)
  uint32_t off, poff; // this lane's low's first pair in the row, in the row above
  uint32_t noff;      // this lane's low's first new node in the row (from the row's base)
  uint32_t R, N;      // the row's pairs and new runs
};
__device__ __forceinline__ void row_pairs(Pairs& q, uint32_t m, int lane) {
  q.pm = q.m;
  q.poff = q.off;
  q.m = m;
  q.off = lane_scan(uint32_t(__popc(m & ~(m << 1))), lane, &q.R);
  q.noff = lane_scan(uint32_t(new_runs(m, q.pm)), lane, &q.N);
}
// Pair i of the row (every lane calls it, converged; the pair valid where i < R): its low l, run [s, e], the
// window of the row above and the pair index there of that low's first run.
struct Pair {
  int l, s, e;
  uint32_t ml, pml, w, pofl, nl;
};
__device__ __forceinline__ Pair pair_at(const Pairs& q, uint32_t i) {
  Pair a;
  a.l = pair_owner(q.off, i);
  a.ml = __shfl_sync(0xffffffffu, q.m, a.l);
  a.pml = __shfl_sync(0xffffffffu, q.pm, a.l);
  a.pofl = __shfl_sync(0xffffffffu, q.poff, a.l);
  a.nl = __shfl_sync(0xffffffffu, q.noff, a.l);
  const uint32_t offl = __shfl_sync(0xffffffffu, q.off, a.l);
  a.s = nth_bit(a.ml & ~(a.ml << 1), i - offl);
  a.e = run_end(a.ml, a.s);
  a.w = window(a.pml, a.s, a.e);
  return a;
}
// A new run's node: the row's base, the low's first, and the low's new runs before it.
__device__ __forceinline__ uint32_t new_node(const Pair& a, uint32_t base) {
  return base + a.nl + uint32_t(new_runs(a.ml & ((1u << a.s) - 1u), a.pml));
}

// A warp's walk of its chunk a lane a pair (both passes of PairDesign): for each row with S, first(r, y,
// q) gives the first node of the row's new runs (false: stop, the block marked), then each pair gets its node from
// pair(a, i, prev), kept in the row's buffer at its index, and end(r, y) closes the row.
template <class First, class PairF, class End>
__device__ void pairs_walk(const Params& p, const Block<uint32_t>& B, First first, PairF pair, End end) {
  Pairs q{};
  walk_rows(
      p, B,
      [&](const Row& r, int y, const uint16_t* prev, uint16_t* out) {
        row_pairs(q, r.m, B.lane);
        uint32_t base;
        if (!first(r, y, q, &base)) return false;
        for (uint32_t i0 = 0; i0 < q.R; i0 += 32) {
          const uint32_t i = i0 + uint32_t(B.lane);
          const Pair a = pair_at(q, i);
          if (i < q.R) out[i] = uint16_t(pair(a, a.w ? 0u : new_node(a, base), prev));
        }
        return true;
      },
      [&] { q.m = 0; }, end);
}

// The pairs kernel's passes (lows_kernel<PairDesign>).
struct PairDesign {
  using MaxT = uint32_t;
  static constexpr bool kPairs = true;
  static __device__ void pass1(const Params& p, const Block<uint32_t>& B) {
    // Pass 1: a pair takes a new node, or the first run above's root, joined with the other runs above's by lock-free
    // unions (the lanes of a row link the same trees); its maximum of A into that node (atomicMax).
    pairs_walk(
        p, B,
        [&](const Row&, int y, const Pairs& q, uint32_t* base) {
          if (q.R > uint32_t(kMaxPairs)) {  // more pairs than a buffer holds: the block reports an overflow
            if (B.lane == 0) B.counter[1] = 1;
            return false;
          }
          *base = q.N ? B.take_nodes(q.N, y, uint32_t(p.cap)) : 0u;
          __syncwarp();
          return true;
        },
        [&](const Pair& a, uint32_t fresh, const uint16_t* prev) {
          uint32_t mx = 0;
          for (int x = a.s; x <= a.e; ++x) mx = max(mx, uint32_t(B.rowa[x]));
          if (!a.w) {
            B.parent[fresh] = fresh;
            B.maxv[fresh] = mx;
            return fresh;
          }
          const uint32_t pst = a.pml & ~(a.pml << 1);
          const int o1 = run_ordinal(pst, __ffs(a.w) - 1), o2 = run_ordinal(pst, 31 - __clz(a.w));
          const uint32_t node = find_shared(B.parent, prev[a.pofl + o1]);
          for (int o = o1 + 1; o <= o2; ++o) unite(B.parent, node, prev[a.pofl + o]);
          atomicMax(B.maxv + node, mx);
          return node;
        },
        [&](const Row&, int) { __syncwarp(); });  // rowa, the buffers, the unions
  }
  static __device__ void pass2(const Params& p, const Block<uint32_t>& B) {
    // Pass 2: the same pairs find their nodes again (the first run above's, or the new one); F_low(max) at the run's
    // columns of the warp's matrix, summed a column.
    pairs_walk(
        p, B,
        [&](const Row&, int y, const Pairs& q, uint32_t* base) {
          *base = q.N ? B.rowbase[y] : 0u;
          return true;
        },
        [&](const Pair& a, uint32_t fresh, const uint16_t* prev) {
          const uint32_t node = a.w ? prev[a.pofl + run_ordinal(a.pml & ~(a.pml << 1), __ffs(a.w) - 1)] : fresh;
          const uint16_t v = B.f[a.l * kFPitch + B.maxv[node]];
          for (int x = a.s; x <= a.e; ++x) B.mat[x * kStrip + a.l] = v;
          return node;
        },
        [&](const Row& r, int y) { B.column_sum(p, r, y); });
  }
};

// A block a strip, every low: pass 1, the chunks' joins, the fold, pass 2 (SM).
template <class Design>
__global__ void __launch_bounds__(1024, 1) lows_kernel(Params p) {
  extern __shared__ __align__(16) unsigned char smem[];
  Block<typename Design::MaxT> B(smem, p, Design::kPairs);
  Design::pass1(p, B);
  __syncthreads();
  join_chunk(p, B, Design::kPairs);
  if (!B.fold(p)) return;
  Design::pass2(p, B);
}

// The reference: SM of strip mode's counting as the CPU twin defines it (select_thresholds_ref on each strip of G,
// whose sm holds the strip's SM on return: for each pixel, how many candidate pairs' linking maps hold it).
std::vector<uint16_t> reference_sm(const std::vector<float>& g, int W, int H,
                                   const std::vector<canny::CandidatePair>& set) {
  std::vector<uint16_t> out(size_t(W) * H);
  std::vector<uint32_t> sm(size_t(kStrip) * H);
  std::vector<uint8_t> mask(sm.size());
  std::vector<int32_t> stack(sm.size());
  for (int x0 = 0; x0 < W; x0 += kStrip) {
    const int x1 = std::min(W, x0 + kStrip), w = x1 - x0;
    canny::ThresholdPair pair;
    if (canny::select_thresholds_ref(g.data(), W, W, H, x0, x1, set.data(), int(set.size()), &pair, sm.data(),
                                     mask.data(), stack.data()) != canny::kOk)
      return {};
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < w; ++x) out[size_t(y) * W + x0 + x] = uint16_t(sm[size_t(y) * w + x]);
  }
  return out;
}

// The usage on `out`; returns `code` (--help: stdout and 0; a bad option: stderr and 1).
int usage(const char* prog, FILE* out = stderr, int code = 1) {
  std::fprintf(out,
               "usage: %s [--repeats N] [--warmup N] [--warps N] [--design lanes|pairs] [--image PREFIX]...\n"
               "  Times item 2's labelling of every low at once (a block a strip; SM only) on\n"
               "  canny-bench-gpu's images, C_0.03 and C_0.01, in two designs (lanes: a lane a low;\n"
               "  pairs: a lane a (low, run) pair), and checks SM against the CPU twin's.\n"
               "  Exit 3 where they differ, a block's nodes or a row's pairs overflow, or the shared\n"
               "  memory does not fit.\n"
               "  --warps N        warps a block (default 32; 1 to 32)\n"
               "  --design D       one design only: lanes or pairs (default both)\n"
               "  --image PREFIX   only the images whose names start with PREFIX (barbara, synthetic_1920)\n"
               "  Images from GPUEC_SHARED_DIR/images/standard, if set, then the synthetic 1080p and 2160p frames.\n",
               prog);
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  const char* prog = "canny-lanes-gpu";
  int repeats = 30, warmup = 5, warps = 32;
  std::vector<std::string> only;
  bool designs[2] = {true, true};  // lanes, pairs
  for (int i = 1; i < argc; ++i) {
    const int t = gpuec_bench::timing_option(argc, argv, i, &repeats, &warmup);
    if (t < 0) return usage(prog);
    if (t > 0) continue;
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) return usage(prog, stdout, 0);
    if (!std::strcmp(argv[i], "--warps") && i + 1 < argc) {
      if (!gpuec_bench::parse_int(argv[++i], 1, &warps) || warps > 32) return usage(prog);
    } else if (!std::strcmp(argv[i], "--design") && i + 1 < argc) {
      ++i;
      if (std::strcmp(argv[i], "lanes") && std::strcmp(argv[i], "pairs")) return usage(prog);
      designs[0] = !std::strcmp(argv[i], "lanes");
      designs[1] = !designs[0];
    } else if (!std::strcmp(argv[i], "--image") && i + 1 < argc) {
      only.push_back(argv[++i]);
    } else {
      return usage(prog);
    }
  }
  if (gpuec_bench::no_device(prog)) return 0;
  std::printf("# %s on %s; a block a strip, %d warps; the kernel alone, median of %d after %d\n", prog,
              gpuec_bench::device_description(0, 2).c_str(), warps, repeats, warmup);
  int optin = 0;
  GPUEC_BENCH_CHECK_CUDA(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0), 2);
  constexpr cudaFuncAttribute kSmem = cudaFuncAttributeMaxDynamicSharedMemorySize;
  GPUEC_BENCH_CHECK_CUDA(cudaFuncSetAttribute(lows_kernel<LaneDesign>, kSmem, optin), 2);
  GPUEC_BENCH_CHECK_CUDA(cudaFuncSetAttribute(lows_kernel<PairDesign>, kSmem, optin), 2);
  std::vector<canny::CandidatePair> c03(canny::kMaxCandidates), c01(canny::kMaxCandidates);
  c03.resize(size_t(canny::make_candidate_set(3, c03.data(), int(c03.size()))));
  c01.resize(size_t(canny::make_candidate_set(1, c01.data(), int(c01.size()))));
  cudaStream_t stream;
  GPUEC_BENCH_CHECK_CUDA(cudaStreamCreate(&stream), 2);
  bool all_ok = true;
  std::printf("%-22s %-7s %-6s %5s %8s %8s %10s %6s\n", "image", "set", "design", "lows", "us", "nodes", "cap", "SM");
  for (const canny_bench::Image& im :
       canny_bench::benchmark_images({"cameraman_256.pgm", "barbara_512.pgm", "boat_512.pgm", "goldhill_512.pgm"})) {
    if (!only.empty() && std::none_of(only.begin(), only.end(),
                                      [&](const std::string& o) { return im.name.compare(0, o.size(), o) == 0; }))
      continue;
    const int W = im.w, H = im.h, ns = (W + kStrip - 1) / kStrip;
    std::vector<float> gm(size_t(W) * H);
    std::vector<uint8_t> work(canny::workspace_bytes_ref(W, H));
    if (canny::gradient_map_ref(im.px.data(), W, H, W, 1.0f, gm.data(), W, work.data(), work.size()) != canny::kOk) {
      std::fprintf(stderr, "%s: %s: gradient_map_ref failed\n", prog, im.name.c_str());
      return 2;
    }
    float t[canny::kMaxThreshold + 1];
    for (int k = 0; k <= canny::kMaxThreshold; ++k) t[k] = float(k) / 100.0f;
    std::vector<uint16_t> q(gm.size());
    for (size_t i = 0; i < gm.size(); ++i) q[i] = uint16_t(gm[i] > 0.0f ? canny::threshold_codes(gm[i], t) : 0u);
    for (const auto* set : {&c03, &c01}) {
      bool has[256] = {};
      for (const canny::CandidatePair& c : *set) has[c.low] = true;
      std::vector<int> lows;
      for (int v = 1; v < 256; ++v)
        if (has[v]) lows.push_back(v);
      if (lows.size() > size_t(kStrip)) {
        std::fprintf(stderr, "%s: more than %d lows\n", prog, kStrip);
        return 2;
      }
      std::vector<uint16_t> ftab(size_t(kStrip) * kFPitch, 0);  // F_l(v), a row a low (rows past the lows: 0)
      for (size_t l = 0; l < lows.size(); ++l)
        for (const canny::CandidatePair& c : *set)
          if (c.low == lows[l])
            for (int v = c.high; v < kV; ++v) ++ftab[l * kFPitch + size_t(v)];
      std::vector<uint8_t> klut(256, 0);
      for (int b = 0; b < 256; ++b)
        for (const int lo : lows) klut[size_t(b)] += b >= lo;
      uint16_t *dq, *df, *dsm;
      uint8_t* dk;
      uint32_t* dstats;
      GPUEC_BENCH_CHECK_CUDA(cudaMalloc(&dq, q.size() * 2), 2);
      GPUEC_BENCH_CHECK_CUDA(cudaMalloc(&df, ftab.size() * 2), 2);
      GPUEC_BENCH_CHECK_CUDA(cudaMalloc(&dsm, q.size() * 2), 2);
      GPUEC_BENCH_CHECK_CUDA(cudaMalloc(&dk, 256), 2);
      GPUEC_BENCH_CHECK_CUDA(cudaMalloc(&dstats, size_t(ns) * 8), 2);
      GPUEC_BENCH_CHECK_CUDA(cudaMemcpy(dq, q.data(), q.size() * 2, cudaMemcpyHostToDevice), 2);
      GPUEC_BENCH_CHECK_CUDA(cudaMemcpy(df, ftab.data(), ftab.size() * 2, cudaMemcpyHostToDevice), 2);
      GPUEC_BENCH_CHECK_CUDA(cudaMemcpy(dk, klut.data(), 256, cudaMemcpyHostToDevice), 2);
      const std::vector<uint16_t> ref = reference_sm(gm, W, H, *set);
      if (ref.empty()) {
        std::fprintf(stderr, "%s: %s: select_thresholds_ref failed\n", prog, im.name.c_str());
        return 2;
      }
      for (const bool pairs : {false, true}) {
        if (!designs[pairs]) continue;
        const char* design = pairs ? "pairs" : "lanes";
        const Layout fixed = layout(pairs, warps, H, 0);
        const int cap = fixed.total < size_t(optin)
                            ? int(std::min<size_t>(0xffff, (size_t(optin) - fixed.total) / node_bytes(pairs))) & ~15
                            : 0;
        const size_t smem = layout(pairs, warps, H, cap).total;
        // A row may take this many new nodes at once; an overflowing block numbers a row's from 0 (in bounds only so).
        const int row_most = pairs ? kMaxPairs : kStrip * kMaxRuns;
        if (cap < row_most || smem > size_t(optin)) {
          std::printf("%-22s %-7s %-6s: room for %d nodes (%zu bytes of shared memory fixed, of the %d a block may "
                      "have), fewer than the %d a row may take\n",
                      im.name.c_str(), set == &c03 ? "C_0.03" : "C_0.01", design, cap, fixed.total, optin, row_most);
          all_ok = false;
          continue;
        }
        GPUEC_BENCH_CHECK_CUDA(cudaMemset(dsm, 0, q.size() * 2), 2);
        const Params prm{dq, W, H, df, dk, dsm, dstats, cap};
        const double us = gpuec_bench::event_median_us(
            stream, warmup, repeats,
            [&] {
              if (pairs)
                lows_kernel<PairDesign><<<ns, warps * 32, smem, stream>>>(prm);
              else
                lows_kernel<LaneDesign><<<ns, warps * 32, smem, stream>>>(prm);
              GPUEC_BENCH_CHECK_CUDA(cudaGetLastError(), 2);
            },
            2);
        GPUEC_BENCH_CHECK_CUDA(cudaGetLastError(), 2);
        std::vector<uint16_t> sm(q.size());
        std::vector<uint32_t> stats(size_t(ns) * 2);
        GPUEC_BENCH_CHECK_CUDA(cudaMemcpy(sm.data(), dsm, sm.size() * 2, cudaMemcpyDeviceToHost), 2);
        GPUEC_BENCH_CHECK_CUDA(cudaMemcpy(stats.data(), dstats, stats.size() * 4, cudaMemcpyDeviceToHost), 2);
        uint32_t most = 0;
        bool over = false;
        for (int k = 0; k < ns; ++k) {
          most = std::max(most, stats[size_t(2 * k)]);
          over = over || stats[size_t(2 * k + 1)];
        }
        size_t bad = 0;
        for (size_t i = 0; i < ref.size(); ++i) bad += sm[i] != ref[i];
        const bool ok = !over && bad == 0;
        all_ok = all_ok && ok;
        std::printf("%-22s %-7s %-6s %5zu %8.1f %8u %10d %6s", im.name.c_str(), set == &c03 ? "C_0.03" : "C_0.01",
                    design, lows.size(), us, most, cap, ok ? "equal" : "DIFF");
        if (!ok) std::printf(" (%zu pixels differ%s)", bad, over ? ", the nodes or pairs overflowed" : "");
        std::printf("\n");
        std::fflush(stdout);
      }
      cudaFree(dq);
      cudaFree(df);
      cudaFree(dsm);
      cudaFree(dk);
      cudaFree(dstats);
    }
  }
  cudaStreamDestroy(stream);
  return all_ok ? 0 : 3;
}
