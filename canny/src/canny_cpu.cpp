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

// Gaussian passes for radius R (canny.h NUMBERS): unsigned arithmetic is exact here (products <= 16384 *
// 65280 and sums < 2^31), so the results equal the oracle's int32 ones; the clamp is only at the borders.
template <int R>
void horizontal_row(const uint8_t* row, int w, const uint16_t* taps, uint16_t* out) {
  uint16_t t[2 * R + 1];
  for (int i = 0; i <= 2 * R; ++i) t[i] = taps[i];
  auto clamped = [&](int x) {
    uint32_t acc = 0;
    for (int i = -R; i <= R; ++i) acc += uint32_t(t[i + R]) * row[std::min(std::max(x + i, 0), w - 1)];
    out[x] = uint16_t((acc + 32) >> 6);
  };
  const int inner0 = std::min(R, w), inner1 = std::max(inner0, w - R);
  for (int x = 0; x < inner0; ++x) clamped(x);
  for (int x = inner0; x < inner1; ++x) {
    uint32_t acc = 0;
    for (int i = 0; i <= 2 * R; ++i) acc += uint32_t(t[i]) * uint16_t(row[x - R + i]);
    out[x] = uint16_t((acc + 32) >> 6);
  }
  for (int x = inner1; x < w; ++x) clamped(x);
}

template <int R>
void vertical_row(const uint16_t* h, int w, int height, int y, const uint16_t* taps, uint8_t* out) {
  const uint16_t* rows[2 * R + 1];
  uint16_t t[2 * R + 1];
  for (int i = 0; i <= 2 * R; ++i) {
    rows[i] = h + size_t(std::min(std::max(y - R + i, 0), height - 1)) * w;
    t[i] = taps[i];
  }
  for (int x = 0; x < w; ++x) {
    uint32_t acc = 0;
    for (int i = 0; i <= 2 * R; ++i) acc += uint32_t(t[i]) * rows[i][x];
    out[x] = uint8_t((acc + (1u << 21)) >> 22);
  }
}

using HorizontalRow = void (*)(const uint8_t*, int, const uint16_t*, uint16_t*);
using VerticalRow = void (*)(const uint16_t*, int, int, int, const uint16_t*, uint8_t*);
constexpr HorizontalRow kHorizontal[kMaxRadius + 1] = {nullptr,            horizontal_row<1>, horizontal_row<2>,
                                                       horizontal_row<3>,  horizontal_row<4>, horizontal_row<5>,
                                                       horizontal_row<6>};
constexpr VerticalRow kVertical[kMaxRadius + 1] = {nullptr,          vertical_row<1>, vertical_row<2>, vertical_row<3>,
                                                   vertical_row<4>,  vertical_row<5>, vertical_row<6>};

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
  // Bands of rows for steps 1-3 and the per-band maximum of gx^2 + gy^2.
  int band_rows = 1, bands = 1;
  std::vector<int32_t> band_max2;
  float mmax = 0.0f;
  // Step 4-5 scratch: per thread for one strip (kStrip), or one for the whole frame (kFrame / kFixed).
  size_t scratch_pixels = 0;
  std::vector<uint32_t> sm;
  std::vector<uint8_t> mask;
  std::vector<int32_t> stack;
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

  static void horizontal_band(void* ctx, int band, int) {
    State& st = *static_cast<State*>(ctx);
    int y0, y1;
    st.rows_of(band, &y0, &y1);
    const HorizontalRow row = kHorizontal[st.radius];
    for (int y = y0; y < y1; ++y) row(st.src + size_t(y) * st.pitch, st.width, st.taps, &st.h[size_t(y) * st.width]);
  }

  static void vertical_band(void* ctx, int band, int) {
    State& st = *static_cast<State*>(ctx);
    int y0, y1;
    st.rows_of(band, &y0, &y1);
    const VerticalRow row = kVertical[st.radius];
    for (int y = y0; y < y1; ++y) row(st.h.data(), st.width, st.height, y, st.taps, &st.s[size_t(y) * st.width]);
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
      auto at = [&](int x, int left, int right) {
        const int32_t dx = int32_t(mid[right]) - int32_t(mid[left]);
        const int32_t dy = int32_t(down[x]) - int32_t(up[x]);
        const int32_t m2 = dx * dx + dy * dy;
        gxr[x] = int16_t(dx);
        gyr[x] = int16_t(dy);
        mr[x] = std::sqrt(float(m2));
        return m2;
      };
      max2 = std::max(max2, at(0, 0, std::min(1, w - 1)));
      for (int x = 1; x < w - 1; ++x) {
        const int32_t dx = int32_t(mid[x + 1]) - int32_t(mid[x - 1]);
        const int32_t dy = int32_t(down[x]) - int32_t(up[x]);
        const int32_t m2 = dx * dx + dy * dy;
        max2 = std::max(max2, m2);
        gxr[x] = int16_t(dx);
        gyr[x] = int16_t(dy);
        mr[x] = std::sqrt(float(m2));
      }
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

  // kStrip: Medina-Carnicer's pair and the hysteresis of one strip, with the worker's scratch.
  static void strip(void* ctx, int s, int worker) {
    State& st = *static_cast<State*>(ctx);
    const int x0 = s * kStripWidth, x1 = std::min(st.width, x0 + kStripWidth);
    const size_t off = size_t(worker) * st.scratch_pixels;
    int e = select_thresholds_ref(st.g.data(), st.width, st.width, st.height, x0, x1, st.candidates.data(),
                                  int(st.candidates.size()), &st.pairs[s], &st.sm[off], &st.mask[off],
                                  &st.stack[off]);
    if (e == kOk)
      e = hysteresis_ref(st.g.data(), st.width, st.width, st.height, x0, x1, st.pairs[s].low, st.pairs[s].high,
                         st.edges, st.edges_pitch, &st.stack[off]);
    if (e != kOk) st.status.store(e);
  }
};

CpuDetector::CpuDetector() = default;
CpuDetector::~CpuDetector() = default;

int CpuDetector::threads() const { return state_ ? state_->threads : 0; }

int CpuDetector::init(int width, int height, const Options& options, int threads) {
  state_.reset();
  if (!valid_size(width, height) || threads < 0 || threads > kMaxCpuThreads) return kErrSize;
  int32_t taps[kMaxTaps];
  int radius = 0;
  if (int e = gaussian_taps(options.sigma, taps, &radius); e != kOk) return e;
  const ThresholdMode mode = options.mode;
  if (mode != ThresholdMode::kStrip && mode != ThresholdMode::kFrame && mode != ThresholdMode::kFixed)
    return kErrMode;
  if (mode == ThresholdMode::kFixed) {
    const ThresholdPair f = options.fixed;
    if (f.low < 1 || f.low > f.high || f.high > kMaxThreshold) return kErrThresholds;
  } else if (int e = check_candidates(options.candidates, options.n_candidates); e != kOk) {
    return e;
  }
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
    // About four bands per thread (the threads take them dynamically), at least 8 rows each.
    st->band_rows = std::max(8, (height + 4 * threads - 1) / (4 * threads));
    st->bands = (height + st->band_rows - 1) / st->band_rows;
    st->band_max2.resize(size_t(st->bands));
    const int scratch_copies = mode == ThresholdMode::kStrip ? threads : 1;
    st->scratch_pixels = mode == ThresholdMode::kStrip ? size_t(std::min(width, kStripWidth)) * height : n;
    st->sm.resize(st->scratch_pixels * scratch_copies);
    st->mask.resize(st->scratch_pixels * scratch_copies);
    st->stack.resize(st->scratch_pixels * scratch_copies);
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
  pool.run(st.bands, State::horizontal_band, &st);
  pool.run(st.bands, State::vertical_band, &st);
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
  if (st.options.mode == ThresholdMode::kFrame) {
    if (int e = select_thresholds_ref(st.g.data(), width, width, height, 0, width, st.candidates.data(),
                                      int(st.candidates.size()), &p, st.sm.data(), st.mask.data(), st.stack.data());
        e != kOk)
      return e;
  }
  for (int s = 0; s < ns; ++s) pairs[s] = p;
  return hysteresis_ref(st.g.data(), width, width, height, 0, width, p.low, p.high, edges, edges_pitch,
                        st.stack.data());
}

}  // namespace canny
