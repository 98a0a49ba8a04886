// The fast CPU path of GUD-Canny (canny/canny_cpu.h): the oracle's steps in bands of rows and strips on a
// persistent thread pool. Compiled with -ffp-contract=off (canny/CMakeLists.txt) like canny.cpp, plus
// -fno-math-errno so that sqrtf vectorises (sqrt is correctly rounded either way; its argument is >= 0).
#include "canny/canny_cpu.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include "pick_pair.h"

namespace canny {

// Runs fn(ctx, task, worker) for every task in [0, n) on the calling thread (worker 0) and the pool's
// threads (workers 1..), each taking the next task from one counter; run() returns when all are done.
class CpuPool {
 public:
  using Task = void (*)(void* ctx, int task, int worker);

  explicit CpuPool(int threads) {
    for (int id = 1; id < threads; ++id) workers_.emplace_back([this, id] { serve(id); });
  }
  ~CpuPool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
  }

  void run(int n, Task fn, void* ctx) {
    if (workers_.empty() || n <= 1) {
      for (int t = 0; t < n; ++t) fn(ctx, t, 0);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      fn_ = fn;
      ctx_ = ctx;
      n_ = n;
      next_.store(0, std::memory_order_relaxed);
      busy_ = int(workers_.size());
      ++generation_;
    }
    wake_.notify_all();
    drain(fn, ctx, n, 0);
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [this] { return busy_ == 0; });
  }

 private:
  void drain(Task fn, void* ctx, int n, int worker) {
    for (int t; (t = next_.fetch_add(1, std::memory_order_relaxed)) < n;) fn(ctx, t, worker);
  }

  void serve(int id) {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      const Task fn = fn_;
      void* const ctx = ctx_;
      const int n = n_;
      lock.unlock();
      drain(fn, ctx, n, id);
      lock.lock();
      if (--busy_ == 0) done_.notify_one();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  uint64_t generation_ = 0;
  bool stop_ = false;
  Task fn_ = nullptr;
  void* ctx_ = nullptr;
  int n_ = 0;
  int busy_ = 0;
  std::atomic<int> next_{0};
};

namespace {

bool valid_size(int width, int height) {
  return width >= 1 && height >= 1 && width <= kMaxDim && height <= kMaxDim &&
         int64_t(width) * height <= kMaxPixels;
}

// Gaussian passes for radius R (canny.h NUMBERS), one tap at a time over a row of uint32 sums (`acc`, width
// entries) so that each loop is a plain vectorisable one. Unsigned arithmetic is exact here (products <= 16384
// * 65280, sums < 2^31), so the results equal the oracle's int32 ones; the clamp is only at the borders.
template <int R>
void horizontal_row(const uint8_t* __restrict row, int w, const uint16_t* taps, uint32_t* __restrict acc,
                    uint16_t* __restrict out) {
  const int inner0 = std::min(R, w), inner1 = std::max(inner0, w - R);
  for (int x = inner0; x < inner1; ++x) acc[x] = uint32_t(taps[0]) * row[x - R];
  for (int i = 1; i <= 2 * R; ++i) {
    const uint32_t tap = taps[i];
    for (int x = inner0; x < inner1; ++x) acc[x] += tap * row[x - R + i];
  }
  for (int x = inner0; x < inner1; ++x) out[x] = uint16_t((acc[x] + 32) >> 6);
  auto clamped = [&](int x) {
    uint32_t sum = 0;
    for (int i = -R; i <= R; ++i) sum += uint32_t(taps[i + R]) * row[std::min(std::max(x + i, 0), w - 1)];
    out[x] = uint16_t((sum + 32) >> 6);
  };
  for (int x = 0; x < inner0; ++x) clamped(x);
  for (int x = inner1; x < w; ++x) clamped(x);
}

template <int R>
void vertical_row(const uint16_t* h, int w, int height, int y, const uint16_t* taps, uint32_t* __restrict acc,
                  uint8_t* __restrict out) {
  auto row = [&](int i) -> const uint16_t* {
    return h + size_t(std::min(std::max(y - R + i, 0), height - 1)) * w;
  };
  {
    const uint16_t* __restrict src = row(0);
    const uint32_t tap = taps[0];
    for (int x = 0; x < w; ++x) acc[x] = tap * src[x];
  }
  for (int i = 1; i <= 2 * R; ++i) {
    const uint16_t* __restrict src = row(i);
    const uint32_t tap = taps[i];
    for (int x = 0; x < w; ++x) acc[x] += tap * src[x];
  }
  for (int x = 0; x < w; ++x) out[x] = uint8_t((acc[x] + (1u << 21)) >> 22);
}

using HorizontalRow = void (*)(const uint8_t*, int, const uint16_t*, uint32_t*, uint16_t*);
using VerticalRow = void (*)(const uint16_t*, int, int, int, const uint16_t*, uint32_t*, uint8_t*);
constexpr HorizontalRow kHorizontal[kMaxRadius + 1] = {nullptr,            horizontal_row<1>, horizontal_row<2>,
                                                       horizontal_row<3>,  horizontal_row<4>, horizontal_row<5>,
                                                       horizontal_row<6>};
constexpr VerticalRow kVertical[kMaxRadius + 1] = {nullptr,          vertical_row<1>, vertical_row<2>, vertical_row<3>,
                                                   vertical_row<4>,  vertical_row<5>, vertical_row<6>};

// A strip (at most 32 columns) as bit rows, bit x = column x0 + x: for every distinct threshold value t_j of
// the candidate set (ascending), ge[j * height + y] holds G >= t_j and gt[j * height + y] holds G > t_j, the
// very float comparisons of the oracle's labels (t_j = (float)k / 100.0f). A candidate (low, high) = (t_a, t_b)
// then has HIGH = ge[b] and UNSTABLE = gt[a] & ~ge[b], exactly label_hysteresis' labels.
void strip_bits(const float* g, int g_pitch, int height, int x0, int w, const float* t, int nt, uint32_t* ge,
                uint32_t* gt) {
  std::fill(ge, ge + size_t(nt) * height, 0u);
  std::fill(gt, gt + size_t(nt) * height, 0u);
  for (int y = 0; y < height; ++y) {
    const float* row = g + size_t(y) * g_pitch + x0;
    for (int x = 0; x < w; ++x) {
      const float v = row[x];
      if (!(v >= t[0])) continue;  // no bit (0 and NaN included)
      int r = 1;
      while (r < nt && v >= t[r]) ++r;
      const uint32_t bit = 1u << x;
      for (int j = 0; j < r; ++j) ge[size_t(j) * height + y] |= bit;
      for (int j = 0; j + 1 < r; ++j) gt[size_t(j) * height + y] |= bit;
      if (v > t[r - 1]) gt[size_t(r - 1) * height + y] |= bit;
    }
  }
}

// Hysteresis of one strip on bit rows: reached = HIGH, grown into 8-neighbouring UNSTABLE pixels by downward
// and upward sweeps (each row closed horizontally) until a whole pass changes nothing: the least fixed point,
// the same set as the oracle's flood fill.
void reach_bits(const uint32_t* high, const uint32_t* above_low, int height, uint32_t* reached) {
  for (int y = 0; y < height; ++y) reached[y] = high[y];
  auto grow = [&](int y, uint32_t from) {
    const uint32_t unstable = above_low[y] & ~high[y];
    const uint32_t cur = reached[y];
    uint32_t next = cur | ((from | from << 1 | from >> 1) & unstable);
    for (uint32_t wider; (wider = next | ((next << 1 | next >> 1) & unstable)) != next;) next = wider;
    reached[y] = next;
    return next != cur;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (int y = 0; y < height; ++y) changed |= grow(y, y > 0 ? reached[y - 1] : 0u);
    for (int y = height - 1; y >= 0; --y) changed |= grow(y, y + 1 < height ? reached[y + 1] : 0u);
  }
}

// ---- SM in one pass over the lows (issue 18, item 2) ----------------------------------------------------------
// SM[p] = the sum over the lows l <= B(p) of F_l(maxA over p's component of S_l) - F_l(A(p)) (canny.h NUMBERS;
// S_l = {B >= l}, its components 8-connected inside the region; A and B the threshold codes), for every low at
// once: the lows from the largest down, each adding its pixels of S (B from that low up to the low before it) to
// one union-find over the region and joining them with their neighbours of S; then every root adds F_l(its
// component's maximum of A) to all its members at once. For that a node keeps an offset: a member's sum is the
// sum of the offsets on its path to the root, the root's included (hanging root b under root a subtracts a's
// offset from b's, path compression folds the offsets it skips), and a root keeps its component's maximum of A.
// The work is one union-find over the region's pixels of S and a pass over each low's roots, where
// select_thresholds_ref labels the region once for every candidate.
struct LowPass {
  int n = 0;                                 // the distinct lows, largest first: low[0] > low[1] > ...
  uint8_t level_of[kMaxThreshold + 1] = {};  // B -> the first i with low[i] <= B (n: B under every low)
  std::vector<uint16_t> f;                   // n x (kMaxThreshold + 1): F_low[i](v)
  std::vector<uint32_t> own;                 // n x (kMaxThreshold + 1): the sum over j >= i of F_low[j](v)
  float t[kMaxThreshold + 1] = {};           // threshold_codes' floats

  void init(const CandidatePair* candidates, int nc) {
    bool has[kMaxThreshold + 1] = {};
    for (int c = 0; c < nc; ++c) has[candidates[c].low] = true;
    int low[kMaxThreshold + 1];
    n = 0;
    for (int v = kMaxThreshold; v >= 1; --v)
      if (has[v]) low[n++] = v;
    for (int b = 0; b <= kMaxThreshold; ++b) {
      int i = 0;
      while (i < n && low[i] > b) ++i;
      level_of[b] = uint8_t(i);
    }
    constexpr int kV = kMaxThreshold + 1;
    f.resize(size_t(n) * kV);
    own.assign(size_t(n + 1) * kV, 0);
    low_tables(candidates, nc, low, n, f.data());
    for (int i = n - 1; i >= 0; --i)
      for (int v = 0; v < kV; ++v) own[size_t(i) * kV + v] = own[size_t(i + 1) * kV + v] + f[size_t(i) * kV + v];
    for (int k = 0; k <= kMaxThreshold; ++k) t[k] = float(k) / 100.0f;
  }
};

// Strip mode counts SM on bit rows for sets of up to this many candidates, in one pass over the lows for larger
// ones: on this project's 2-core machine, one thread, 1080p strips, the one pass took 382 ms against 292 for C_0.03's
// 36 candidates and 451 against 1274 for C_0.01's 300 (docs/benchmarks.md).
constexpr int kOnePassCandidates = 48;

// one_pass_sm's arrays, for regions of up to `pixels` pixels.
struct LowPassScratch {
  std::vector<int32_t> parent, acc, size, order, roots;
  std::vector<uint8_t> a, level, mx;
  void resize(size_t pixels) {
    parent.resize(pixels);
    acc.resize(pixels);
    size.resize(pixels);
    order.resize(pixels);
    roots.reserve(pixels);
    a.resize(pixels);
    level.resize(pixels);
    mx.resize(pixels);
  }
};

// The root of x, with the sum of the offsets on x's path to it, the root's excluded (*below); compresses the path.
inline int32_t find_offset(int32_t* parent, int32_t* acc, int32_t x, int32_t* below) {
  int32_t r = x, s = 0;
  while (parent[r] != r) {
    s += acc[r];
    r = parent[r];
  }
  *below = s;
  for (int32_t y = x; y != r && parent[y] != r;) {  // every node on the path points at r, its offset its sum
    const int32_t next = parent[y], own = acc[y];
    parent[y] = r;
    acc[y] = s;
    s -= own;
    y = next;
  }
  return r;
}

// one_pass_sm in steps over rows, so that frame mode can run all but the union-find on bands of rows in parallel
// (CpuDetector::detect); a region of w columns from x0 of g (pitch g_pitch), pixel (x, y) at index y * w + x of
// the scratch. Rows [y0, y1) each:
//   low_pass_codes: the codes, each pixel's first low (level; lp.n: in no S) and parent -1 (not in S yet), and the
//     pixels of each level counted into count[level + 1];
//   low_pass_order: the pixels of each level written to order from next[level] on (a counting sort's second pass);
//   low_pass_sums: SM (row y at sm + y * w): each pixel's path sum less own[level][A]; it only reads the union-find,
//     so bands may run at once.
// low_pass_levels is the union-find itself, over the whole region (one thread), between the order and the sums.
void low_pass_codes(const float* g, int g_pitch, int x0, int w, int y0, int y1, const LowPass& lp, LowPassScratch& sc,
                    int32_t* count) {
  for (int y = y0; y < y1; ++y) {
    const float* row = g + size_t(y) * g_pitch + x0;
    for (int x = 0; x < w; ++x) {
      const float v = row[x];
      const uint32_t code = v > 0.0f ? threshold_codes(v, lp.t) : 0u;
      const size_t i = size_t(y) * w + x;
      sc.a[i] = uint8_t(code & 0xffu);
      sc.level[i] = lp.level_of[code >> 8];
      sc.parent[i] = -1;
      ++count[sc.level[i] + 1];
    }
  }
}

// The counting sort's offsets, from the counts of bands of rows (band b's count of level l at count[b * kLevelWords +
// l + 1], as low_pass_codes leaves them): where band b's pixels of level l go in the order, next[b * kLevelWords + l]
// (the bands in row order, as one thread writes them), and where level l starts, start[l] (start[n]: the end).
constexpr int kLevelWords = kMaxThreshold + 2;
void low_pass_offsets(const int32_t* count, int bands, int n, int32_t* next, int32_t* start) {
  start[0] = 0;
  for (int l = 0; l < n; ++l) {
    int32_t at = start[l];
    for (int b = 0; b < bands; ++b) {
      next[size_t(b) * kLevelWords + l] = at;
      at += count[size_t(b) * kLevelWords + l + 1];
    }
    start[l + 1] = at;
  }
}

void low_pass_order(int w, int y0, int y1, const LowPass& lp, LowPassScratch& sc, int32_t* next) {
  const size_t e = size_t(y1) * w;
  for (size_t i = size_t(y0) * w; i < e; ++i)
    if (sc.level[i] < lp.n) sc.order[size_t(next[sc.level[i]]++)] = int32_t(i);
}

// start[l] .. start[l + 1]: level l's pixels in sc.order.
void low_pass_levels(int w, int height, const LowPass& lp, LowPassScratch& sc, const int32_t* start) {
  constexpr int kV = kMaxThreshold + 1;
  const int n = lp.n;
  int32_t* parent = sc.parent.data();
  int32_t* acc = sc.acc.data();
  int32_t* size = sc.size.data();
  const uint8_t* a = sc.a.data();
  uint8_t* mx = sc.mx.data();
  auto unite = [&](int32_t p, int32_t q) {
    int32_t sp, sq;
    int32_t rp = find_offset(parent, acc, p, &sp), rq = find_offset(parent, acc, q, &sq);
    if (rp == rq) return;
    if (size[rp] < size[rq]) std::swap(rp, rq);
    parent[rq] = rp;
    acc[rq] -= acc[rp];
    size[rp] += size[rq];
    mx[rp] = std::max(mx[rp], mx[rq]);
  };
  std::vector<int32_t>& roots = sc.roots;
  roots.clear();
  for (int l = 0; l < n; ++l) {
    const int32_t* b = sc.order.data() + start[l];
    const int32_t* e = sc.order.data() + start[l + 1];
    for (const int32_t* it = b; it != e; ++it) {
      const int32_t p = *it;
      parent[p] = p;
      acc[p] = 0;
      size[p] = 1;
      mx[p] = a[p];
      roots.push_back(p);
    }
    for (const int32_t* it = b; it != e; ++it) {
      const int32_t p = *it, y = p / w, x = p % w;
      for (int dy = -1; dy <= 1; ++dy) {
        const int yy = y + dy;
        if (yy < 0 || yy >= height) continue;
        for (int dx = -1; dx <= 1; ++dx) {
          const int xx = x + dx;
          if (xx < 0 || xx >= w || (dx == 0 && dy == 0)) continue;
          const int32_t q = yy * w + xx;
          if (parent[q] >= 0) unite(p, q);
        }
      }
    }
    // Every root adds F_low(its maximum) to its members; roots that were hung leave the list.
    const uint16_t* fl = lp.f.data() + size_t(l) * kV;
    size_t kept = 0;
    for (const int32_t r : roots)
      if (parent[r] == r) {
        acc[r] += fl[mx[r]];
        roots[kept++] = r;
      }
    roots.resize(kept);
  }
}

void low_pass_sums(int w, int y0, int y1, const LowPass& lp, const LowPassScratch& sc, uint32_t* sm) {
  constexpr int kV = kMaxThreshold + 1;
  const int32_t* parent = sc.parent.data();
  const int32_t* acc = sc.acc.data();
  const size_t e = size_t(y1) * w;
  for (size_t i = size_t(y0) * w; i < e; ++i) {
    if (sc.level[i] >= lp.n) {
      sm[i] = 0;
      continue;
    }
    int32_t s = 0, r = int32_t(i);  // the offsets on the path, the root's included
    for (;; r = parent[r]) {
      s += acc[r];
      if (parent[r] == r) break;
    }
    sm[i] = uint32_t(s - int32_t(lp.own[size_t(sc.level[i]) * kV + sc.a[i]]));
  }
}

// SM (w x height, pitch w) of the region of columns [x0, x0 + w) of g, on one thread.
void one_pass_sm(const float* g, int g_pitch, int x0, int w, int height, const LowPass& lp, LowPassScratch& sc,
                 uint32_t* sm) {
  int32_t count[kLevelWords] = {}, next[kLevelWords], start[kLevelWords];
  low_pass_codes(g, g_pitch, x0, w, 0, height, lp, sc, count);
  low_pass_offsets(count, 1, lp.n, next, start);
  low_pass_order(w, 0, height, lp, sc, next);
  low_pass_levels(w, height, lp, sc, start);
  low_pass_sums(w, 0, height, lp, sc, sm);
}

}  // namespace

struct CpuDetector::State {
  int width = 0, height = 0, threads = 0;
  Options options;
  std::vector<CandidatePair> candidates;
  int radius = 0;
  uint16_t taps[kMaxTaps] = {};
  // Steps 1-3: the oracle's planes (pitch width).
  std::vector<uint16_t> h;
  std::vector<uint8_t> s;
  std::vector<int16_t> gx, gy;
  std::vector<float> m, g;
  std::vector<uint32_t> row_sums;  // per thread: one row of the Gaussian passes' sums
  // Bands of rows for steps 1-3 and the per-band maximum of gx^2 + gy^2.
  int band_rows = 1, bands = 1;
  std::vector<int32_t> band_max2;
  float mmax = 0.0f;
  // Step 4-5 scratch: per thread for one strip (kStrip), or one for the whole frame (kFrame / kFixed).
  size_t scratch_pixels = 0;
  std::vector<uint32_t> sm;
  std::vector<int32_t> stack;  // kFrame and kFixed: hysteresis_ref's
  // kStrip on bit rows: the distinct threshold values (hundredths, ascending; their floats; index of a value,
  // -1 for none), per thread nt * height words of ge, of gt, and height words of reached.
  std::vector<int> values;
  std::vector<float> value_floats;
  int value_index[kMaxThreshold + 1] = {};
  std::vector<uint32_t> bits;
  size_t bits_words = 0;
  Bins bins;
  PickLimits limits;
  // SM in one pass over the lows (kFrame, and kStrip with one_pass): the lows' tables, and scratch per thread
  // (kStrip) or one (kFrame).
  bool one_pass = false;
  LowPass low_pass;
  std::vector<LowPassScratch> low_scratch;
  // kFrame's steps on bands of rows (frame_pair): per band, kLevelWords counts and offsets (low_pass_offsets) and
  // the grid's histograms.
  std::vector<int32_t> band_count, band_next;
  std::vector<uint32_t> band_hist;  // per band g_count, then p_hist (kMaxThreshold + 1 each)
  std::unique_ptr<CpuPool> pool;
  // The frame being detected.
  const uint8_t* src = nullptr;
  int pitch = 0;
  uint8_t* edges = nullptr;
  int edges_pitch = 0;
  ThresholdPair* pairs = nullptr;
  std::atomic<int> status{kOk};

  void rows_of(int band, int* y0, int* y1) const {
    *y0 = band * band_rows;
    *y1 = std::min(height, *y0 + band_rows);
  }

  // The Gaussian's horizontal pass (src -> h) or its vertical pass (h -> s) on a band of rows.
  template <bool kVerticalPass>
  static void gaussian_band(void* ctx, int band, int worker) {
    State& st = *static_cast<State*>(ctx);
    int y0, y1;
    st.rows_of(band, &y0, &y1);
    uint32_t* acc = &st.row_sums[size_t(worker) * st.width];
    for (int y = y0; y < y1; ++y) {
      const size_t row = size_t(y) * st.width;
      if (kVerticalPass)
        kVertical[st.radius](st.h.data(), st.width, st.height, y, st.taps, acc, &st.s[row]);
      else
        kHorizontal[st.radius](st.src + size_t(y) * st.pitch, st.width, st.taps, acc, &st.h[row]);
    }
  }

  // Central differences (borders: one-sided through the clamp), sqrtf of the integer, the band's max.
  static void gradient_band(void* ctx, int band, int) {
    State& st = *static_cast<State*>(ctx);
    const int w = st.width, hgt = st.height;
    int y0, y1;
    st.rows_of(band, &y0, &y1);
    int32_t max2 = 0;
    for (int y = y0; y < y1; ++y) {
      const uint8_t* up = &st.s[size_t(std::max(y - 1, 0)) * w];
      const uint8_t* mid = &st.s[size_t(y) * w];
      const uint8_t* down = &st.s[size_t(std::min(y + 1, hgt - 1)) * w];
      int16_t* gxr = &st.gx[size_t(y) * w];
      int16_t* gyr = &st.gy[size_t(y) * w];
      float* mr = &st.m[size_t(y) * w];
      auto at = [&](int x, int left, int right) {  // x's neighbours left and right (clamped at the borders)
        const int32_t dx = int32_t(mid[right]) - int32_t(mid[left]);
        const int32_t dy = int32_t(down[x]) - int32_t(up[x]);
        const int32_t m2 = dx * dx + dy * dy;
        gxr[x] = int16_t(dx);
        gyr[x] = int16_t(dy);
        mr[x] = std::sqrt(float(m2));
        return m2;
      };
      max2 = std::max(max2, at(0, 0, std::min(1, w - 1)));
      for (int x = 1; x < w - 1; ++x) max2 = std::max(max2, at(x, x - 1, x + 1));
      if (w > 1) max2 = std::max(max2, at(w - 1, w - 2, w - 1));
    }
    st.band_max2[size_t(band)] = max2;
  }

  float mag(int x, int y) const {
    if (x < 0 || y < 0 || x >= width || y >= height) return 0.0f;
    return m[size_t(y) * width + x];
  }

  // NMS with interpolation and the division by Mmax: the oracle's float operations in its order.
  static void suppress_band(void* ctx, int band, int) {
    State& st = *static_cast<State*>(ctx);
    const int w = st.width, hgt = st.height;
    int y0, y1;
    st.rows_of(band, &y0, &y1);
    for (int y = y0; y < y1; ++y) {
      const size_t row = size_t(y) * w;
      const bool inner_row = y > 0 && y < hgt - 1;
      for (int x = 0; x < w; ++x) {
        const float mc = st.m[row + x];
        if (mc == 0.0f) {
          st.g[row + x] = 0.0f;
          continue;
        }
        const int dx = st.gx[row + x], dy = st.gy[row + x];
        const int ax = std::abs(dx), ay = std::abs(dy);
        const int sx = (dx > 0) - (dx < 0), sy = (dy > 0) - (dy < 0);
        const bool x_major = ax >= ay;
        const int major_x = x_major ? sx : 0, major_y = x_major ? 0 : sy;
        const int minor_x = x_major ? 0 : sx, minor_y = x_major ? sy : 0;
        const float t = x_major ? float(ay) / float(ax) : float(ax) / float(ay);
        float a, b, c, d;
        if (inner_row && x > 0 && x < w - 1) {
          const float* p = &st.m[row + x];
          const ptrdiff_t major = ptrdiff_t(major_y) * w + major_x, minor = ptrdiff_t(minor_y) * w + minor_x;
          a = p[major];
          b = p[major + minor];
          c = p[-major];
          d = p[-major - minor];
        } else {
          a = st.mag(x + major_x, y + major_y);
          b = st.mag(x + major_x + minor_x, y + major_y + minor_y);
          c = st.mag(x - major_x, y - major_y);
          d = st.mag(x - major_x - minor_x, y - major_y - minor_y);
        }
        const float forward = a + t * (b - a);
        const float backward = c + t * (d - c);
        st.g[row + x] = (mc > forward && mc >= backward) ? mc / st.mmax : 0.0f;
      }
    }
  }

  // kFrame: SM of the whole frame in one pass over the lows (one_pass_sm's steps) and the pair, with all but the
  // union-find (low_pass_levels, on the calling thread) on bands of rows on the pool: the same SM and pair.
  ThresholdPair frame_pair() {
    constexpr int kH = kMaxThreshold + 1;
    pool->run(bands, [](void* ctx, int band, int) {
      State& st = *static_cast<State*>(ctx);
      int y0, y1;
      st.rows_of(band, &y0, &y1);
      int32_t* count = &st.band_count[size_t(band) * kLevelWords];
      std::fill(count, count + kLevelWords, 0);
      low_pass_codes(st.g.data(), st.width, 0, st.width, y0, y1, st.low_pass, st.low_scratch[0], count);
    }, this);
    int32_t level_start[kLevelWords];
    low_pass_offsets(band_count.data(), bands, low_pass.n, band_next.data(), level_start);
    pool->run(bands, [](void* ctx, int band, int) {
      State& st = *static_cast<State*>(ctx);
      int y0, y1;
      st.rows_of(band, &y0, &y1);
      low_pass_order(st.width, y0, y1, st.low_pass, st.low_scratch[0], &st.band_next[size_t(band) * kLevelWords]);
    }, this);
    low_pass_levels(width, height, low_pass, low_scratch[0], level_start);
    pool->run(bands, [](void* ctx, int band, int) {
      State& st = *static_cast<State*>(ctx);
      int y0, y1;
      st.rows_of(band, &y0, &y1);
      low_pass_sums(st.width, y0, y1, st.low_pass, st.low_scratch[0], st.sm.data());
      uint32_t* h = &st.band_hist[size_t(band) * 2 * kH];
      std::fill(h, h + 2 * kH, 0u);
      add_histograms(st.g.data(), st.width, 0, st.width, y0, y1, st.sm.data(), int64_t(st.candidates.size()), st.bins,
                     h, h + kH);
    }, this);
    uint32_t g_count[kH] = {}, p_hist[kH] = {};
    for (int b = 0; b < bands; ++b)
      for (int x = 0; x < kH; ++x) {
        g_count[x] += band_hist[size_t(b) * 2 * kH + x];
        p_hist[x] += band_hist[size_t(b) * 2 * kH + kH + x];
      }
    int d[kH];
    return pick_pair(g_count, p_hist, limits.nx, d, limits.fb_low, limits.fb_high);
  }

  // kStrip: Medina-Carnicer's pair and the hysteresis of one strip (select_thresholds_ref and hysteresis_ref
  // on that strip), with the worker's scratch. SM: on bit rows, every candidate's labels and hysteresis, for sets
  // of up to kOnePassCandidates candidates (C_0.03's 36); in one pass over the lows (one_pass_sm) for larger ones
  // (C_0.01's 300). Then the pair's hysteresis on the bit rows of its two values.
  static void strip(void* ctx, int s, int worker) {
    State& st = *static_cast<State*>(ctx);
    const int hgt = st.height, x0 = s * kStripWidth, w = std::min(st.width, x0 + kStripWidth) - x0;
    const int nt = int(st.values.size());
    uint32_t* sm = &st.sm[size_t(worker) * st.scratch_pixels];
    uint32_t* ge = &st.bits[size_t(worker) * st.bits_words];
    uint32_t* gt = ge + size_t(nt) * hgt;
    uint32_t* reached = gt + size_t(nt) * hgt;
    if (st.one_pass) {
      one_pass_sm(st.g.data(), st.width, x0, w, hgt, st.low_pass, st.low_scratch[size_t(worker)], sm);
    } else {
      strip_bits(st.g.data(), st.width, hgt, x0, w, st.value_floats.data(), nt, ge, gt);
      std::fill(sm, sm + size_t(w) * hgt, 0u);
      for (const CandidatePair& c : st.candidates) {
        const uint32_t* high = ge + size_t(st.value_index[c.high]) * hgt;
        reach_bits(high, gt + size_t(st.value_index[c.low]) * hgt, hgt, reached);
        for (int y = 0; y < hgt; ++y)
          for (uint32_t linked = reached[y] & ~high[y]; linked; linked &= linked - 1)
            ++sm[size_t(y) * w + unsigned(__builtin_ctz(linked))];
      }
    }

    // The grid's histograms and the pick, as select_thresholds_ref.
    const ThresholdPair p = pair_of_sm(st.g.data(), st.width, x0, w, hgt, sm, int64_t(st.candidates.size()), st.bins,
                                       st.limits);
    st.pairs[s] = p;

    // The pair's hysteresis on bit rows: those of every value where SM was counted on them (a picked pair's values
    // are the candidates'), else those of the pair's two values alone (low <= high: ge[1] is HIGH, gt[0] & ~ge[1]
    // UNSTABLE; bits_words >= 5 * height: five rows with the one pass, a set having two values or more without).
    if (st.one_pass || st.value_index[p.low] < 0 || st.value_index[p.high] < 0) {
      const float pair_values[2] = {float(p.low) / 100.0f, float(p.high) / 100.0f};
      uint32_t* pgt = ge + size_t(2) * hgt;
      reached = ge + size_t(4) * hgt;
      strip_bits(st.g.data(), st.width, hgt, x0, w, pair_values, 2, ge, pgt);
      reach_bits(ge + hgt, pgt, hgt, reached);
    } else {
      reach_bits(ge + size_t(st.value_index[p.high]) * hgt, gt + size_t(st.value_index[p.low]) * hgt, hgt, reached);
    }
    for (int y = 0; y < hgt; ++y) {
      uint8_t* out = st.edges + size_t(y) * st.edges_pitch + x0;
      const uint32_t r = reached[y];
      for (int x = 0; x < w; ++x) out[x] = (r >> x) & 1u ? 255 : 0;
    }
  }
};

CpuDetector::CpuDetector() = default;
CpuDetector::~CpuDetector() = default;

int CpuDetector::threads() const { return state_ ? state_->threads : 0; }

int CpuDetector::init(int width, int height, const Options& options, int threads) {
  state_.reset();
  if (!valid_size(width, height) || threads < 0 || threads > kMaxCpuThreads) return kErrSize;
  // The options are checked by the oracle itself, on one pixel: the same errors in the same order.
  {
    uint8_t pixel = 0, edge = 0;
    ThresholdPair pair;
    alignas(16) uint8_t work[256];
    if (workspace_bytes_ref(1, 1) > sizeof work) return kErrWorkspace;
    if (int e = detect_edges_ref(&pixel, 1, 1, 1, options, &edge, 1, &pair, work, sizeof work); e != kOk) return e;
  }
  int32_t taps[kMaxTaps];
  int radius = 0;
  if (int e = gaussian_taps(options.sigma, taps, &radius); e != kOk) return e;
  const ThresholdMode mode = options.mode;
  if (threads == 0) threads = int(std::max(1u, std::thread::hardware_concurrency()));
  threads = std::min(threads, kMaxCpuThreads);
  try {
    auto st = std::make_unique<State>();
    st->width = width;
    st->height = height;
    st->threads = threads;
    st->options = options;
    if (mode != ThresholdMode::kFixed)
      st->candidates.assign(options.candidates, options.candidates + options.n_candidates);
    st->options.candidates = st->candidates.data();
    st->radius = radius;
    for (int i = 0; i < kMaxTaps; ++i) st->taps[i] = uint16_t(taps[i]);
    const size_t n = size_t(width) * height;
    st->h.resize(n);
    st->s.resize(n);
    st->gx.resize(n);
    st->gy.resize(n);
    st->m.resize(n);
    st->g.resize(n);
    st->row_sums.resize(size_t(width) * threads);
    // About four bands per thread (the threads take them dynamically), at least 8 rows each.
    st->band_rows = std::max(8, (height + 4 * threads - 1) / (4 * threads));
    st->bands = (height + st->band_rows - 1) / st->band_rows;
    st->band_max2.resize(size_t(st->bands));
    const int scratch_copies = mode == ThresholdMode::kStrip ? threads : 1;
    st->scratch_pixels = mode == ThresholdMode::kStrip ? size_t(std::min(width, kStripWidth)) * height : n;
    st->sm.resize(st->scratch_pixels * scratch_copies);
    if (mode != ThresholdMode::kStrip) st->stack.resize(st->scratch_pixels);
    if (mode != ThresholdMode::kFixed) {
      st->limits = pick_limits(st->candidates.data(), int(st->candidates.size()));
      make_bins(st->candidates.data(), int(st->candidates.size()), &st->bins);
      st->one_pass = mode == ThresholdMode::kFrame || st->candidates.size() > size_t(kOnePassCandidates);
      if (st->one_pass) {
        st->low_pass.init(st->candidates.data(), int(st->candidates.size()));
        st->low_scratch.resize(size_t(scratch_copies));
        for (LowPassScratch& sc : st->low_scratch) sc.resize(st->scratch_pixels);
      }
      if (mode == ThresholdMode::kFrame) {
        st->band_count.resize(size_t(st->bands) * kLevelWords);
        st->band_next.resize(size_t(st->bands) * kLevelWords);
        st->band_hist.resize(size_t(st->bands) * 2 * (kMaxThreshold + 1));
      }
    }
    if (mode == ThresholdMode::kStrip) {
      bool has[kMaxThreshold + 1] = {};
      for (const CandidatePair& c : st->candidates) has[c.low] = has[c.high] = true;
      for (int v = 0; v <= kMaxThreshold; ++v) {
        st->value_index[v] = has[v] ? int(st->values.size()) : -1;
        if (has[v]) {
          st->values.push_back(v);
          st->value_floats.push_back(float(v) / 100.0f);
        }
      }
      // Bit rows: ge and gt of every value and `reached` where SM is counted on them; with the one pass only the
      // pair's hysteresis (ge and gt of its two values, and reached).
      st->bits_words = (st->one_pass ? 5 : 2 * st->values.size() + 1) * size_t(height);
      st->bits.resize(st->bits_words * size_t(threads));
    }
    st->pool = std::make_unique<CpuPool>(threads);
    state_ = std::move(st);
  } catch (const std::bad_alloc&) {
    return kErrWorkspace;
  } catch (const std::system_error&) {
    return kErrWorkspace;
  }
  return kOk;
}

int CpuDetector::detect(const uint8_t* src, int pitch, uint8_t* edges, int edges_pitch, ThresholdPair* pairs) {
  if (!state_) return kErrSize;
  if (!src || !edges || !pairs) return kErrNull;
  State& st = *state_;
  if (pitch < st.width || edges_pitch < st.width) return kErrPitch;
  st.src = src;
  st.pitch = pitch;
  st.edges = edges;
  st.edges_pitch = edges_pitch;
  st.pairs = pairs;
  st.status.store(kOk);

  CpuPool& pool = *st.pool;
  pool.run(st.bands, State::gaussian_band<false>, &st);
  pool.run(st.bands, State::gaussian_band<true>, &st);
  pool.run(st.bands, State::gradient_band, &st);
  const int32_t max2 = *std::max_element(st.band_max2.begin(), st.band_max2.end());
  st.mmax = std::sqrt(float(max2));
  pool.run(st.bands, State::suppress_band, &st);

  const int width = st.width, height = st.height, ns = strip_count(width);
  if (st.options.mode == ThresholdMode::kStrip) {
    pool.run(ns, State::strip, &st);
    return st.status.load();
  }
  ThresholdPair p = st.options.fixed;
  p.found = 1;
  if (st.options.mode == ThresholdMode::kFrame) p = st.frame_pair();
  for (int s = 0; s < ns; ++s) pairs[s] = p;
  return hysteresis_ref(st.g.data(), width, width, height, 0, width, p.low, p.high, edges, edges_pitch,
                        st.stack.data());
}

}  // namespace canny
