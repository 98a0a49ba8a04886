// canny/canny.h: GUD-Canny, unsupervised distributed Canny edge detection (thesis section 2.2,
// ../shared/docs/DESIGN.md section 5) — the CPU twin (`_ref`); the CUDA twin is canny/canny_cuda.h. Every
// step below is specified so that one can reproduce this output bit for bit.
//
// PIPELINE (detect_edges_ref), W x H 8-bit gray plane in, 0/255 edge map out:
//   1. Gaussian smoothing, separable, integer (gaussian_taps): horizontal pass, then vertical pass.
//   2. Gradient by central differences (-1, 0, 1) on the smoothed plane; magnitude sqrtf(gx^2 + gy^2).
//   3. Non-maximum suppression with linear interpolation; the survivors divided by the maximum
//      magnitude of step 2 (taken over ALL pixels, before suppression, as in the paper) -> G in [0, 1].
//   4. Thresholds: per 32-column strip (ThresholdMode::kStrip; strip s = columns [32 s, min(W, 32 s + 32)),
//      the last one may be narrower), or once for the whole frame (kFrame), Medina-Carnicer's method over a
//      candidate set (select_thresholds_ref), or a fixed pair (kFixed).
//   5. Hysteresis with 8-connectivity (hysteresis_ref): inside each strip in kStrip mode (a strip never
//      links across its borders, as in the paper), over the whole frame in kFrame and kFixed mode.
//
// NUMBERS (all decisions a device twin must copy):
//   * Thresholds and candidate values are integers in HUNDREDTHS (k means k / 100). Whenever a threshold
//     is compared with G it is the float (float)k / 100.0f (an IEEE division, correctly rounded).
//   * Gaussian: radius r = ceil(3 sigma) computed in double from the float sigma, at least 1, at most 6
//     (sigma in [0.1, 2.0]). Taps w[i], i = -r..r, in Q14: w[i] = llround(16384 * g(i) / sum_j g(j)) with
//     g(i) = exp(-i^2 / (2 sigma^2)) in double for i != 0, and w[0] = 16384 - sum_{i != 0} w[i], so the taps
//     are non-negative and sum to exactly 16384. They are computed ONCE on the host (gaussian_taps) and are
//     data for a device twin (no exp on the device).
//     Horizontal pass: h = (sum_i w[i] * src[clamp(x + i)] + 32) >> 6   (Q8, 0..65280, uint16)
//     Vertical pass:   s = (sum_i w[i] * h[clamp(y + i)] + (1 << 21)) >> 22   (0..255, uint8)
//     Borders replicate the edge pixel (clamp). The paper reads zeros outside the image; that makes a flat
//     bright image have edges along its border, so this twin deviates on purpose. A flat plane stays flat.
//   * Gradient: gx = s[y][clamp(x+1)] - s[y][clamp(x-1)], gy = s[clamp(y+1)][x] - s[clamp(y-1)][x]
//     (int, -255..255; so border pixels get one-sided differences). M = sqrtf((float)(gx*gx + gy*gy))
//     (the argument is an exact integer <= 130050; sqrtf is correctly rounded on host and device).
//     Mmax = sqrtf((float)max(gx*gx + gy*gy)) over the whole image (same as the max of M: sqrtf is monotone;
//     a device can atomicMax the integer).
//   * NMS: for a pixel with M > 0, ax = |gx|, ay = |gy|. If ax >= ay the major step is (sx, 0) with
//     sx = sign(gx) and the minor step (0, sy) with sy = sign(gy) (0 when gy == 0), t = (float)ay / (float)ax;
//     otherwise major (0, sy), minor (sx, 0), t = (float)ax / (float)ay. Neighbours along the gradient:
//       fwd = a + t * (b - a), a = M(p + major), b = M(p + major + minor)
//       bwd = c + t * (d - c), c = M(p - major), d = M(p - major - minor)
//     each operation a separate float rounding (no FMA: build with -ffp-contract=off, nvcc --fmad=false),
//     M outside the image = 0. The pixel survives iff M > fwd && M >= bwd: on a plateau of equal magnitudes
//     along the gradient the LAST pixel in the gradient direction (the bright side) is kept, so a step edge
//     gives a one-pixel-thick line. This is the 8-direction quantisation with interpolation of the paper
//     (octant boundaries at multiples of pi/4, interpolation between the two pixels bounding the direction).
//     G = M / Mmax (float division) for survivors, 0 otherwise; G = 0 everywhere when Mmax == 0.
//   * Hysteresis with pair (low, high): a pixel is HIGH when G >= high, UNSTABLE when low < G < high (as
//     in the paper's Algorithm 2). The edge map is every HIGH pixel plus every UNSTABLE pixel joined to a
//     HIGH pixel by a path of UNSTABLE pixels, each step to one of the 8 neighbours, inside the region.
//     That is the fixed point of the paper's iteration with the link mask corrected (OR of the 8
//     neighbours, not AND; DESIGN.md section 5); the CPU computes it by flood fill, a device by iterating
//     until nothing changes; the set is the same.
//   * Medina-Carnicer on a region (select_thresholds_ref), NC = number of candidate pairs:
//       SM[p]  = number of candidate pairs whose linking map (hysteresis map minus HIGH map) holds p.
//       Prob[p] = SM[p] / NC. Comparisons with Prob are done exactly in integers:
//         "Prob >= x" (x in hundredths)  <=>  100 * SM >= x * NC.
//       THE x GRID. The paper reads "|F(x)|, the elements of F(x) with value x" and "the histogram of Prob" at
//       the points x of a grid; a float rarely equals a grid point, so every value is read in the BIN of its
//       nearest grid point. The grid is the set of distinct threshold values of the candidate set,
//       x_0 < x_1 < ... < x_{m-1} in hundredths (m >= 2): 1, 2, ..., 25 for C_0.01, 1, 4, ..., 25 for C_0.03.
//       (A grid of 0.01 steps for C_0.03 is degenerate: Prob = SM / 36 moves in steps of 0.028, so most
//       0.01 bins of its histogram are empty, every non-empty bin is a "local maximum" and the search
//       returns (0.03, 0.19) for every image.) Bin edges in half-hundredths (integers):
//         e_0 = 2 x_0 - (x_1 - x_0),  e_i = x_{i-1} + x_i (0 < i < m),  e_m = 2 x_{m-1} + (x_{m-1} - x_{m-2}),
//       and a value v > 0 with h(v) in [e_i, e_{i+1}) lies in the bin of x_i (h < e_0 or h >= e_m: in no
//       bin; v = 0 is in no bin, nor is a G outside (0, 1]), where h(v) = floor(200 v) is computed as
//         h(Prob) = (200 * SM) / NC (integer division, exact), h(G) = (int)(G * 200.0f) (one float rounding).
//       For C_0.01 the bin of x is [x - 0.005, x + 0.005), the round-half-up reading at 0.01.
//       For every grid point x:  P(F(x)) != 0  <=>  some p has binG(p) == x and 100 * SM[p] >= x * NC.
//                                D = { x : P(F(x)) != 0 } (the instability zone).
//                                hist[x] = #{ p : binProb(p) == x } for x in D (the histogram of Prob on D).
//       A j in D is a LOCAL MAXIMUM when it has a previous and a next member of D (j- < j < j+, the nearest
//       ones) and hist[j] > hist[j-] and hist[j] > hist[j+] (strict; equal neighbours are not maxima; the
//       first and last members of D never are), as in the paper's Algorithm 5.
//       low = first local maximum, high = last local maximum (equal when there is only one: then the map is
//       a plain threshold at high). With no local maximum (flat or almost empty region) the pair is the
//       FALLBACK: the candidate with the largest high, ties broken by the largest low ((24, 25) for the step
//       0.01 set, (22, 25) for step 0.03), and `found` is 0.
//   * Candidate sets (make_candidate_set): values v_i = 1 + i * step, i >= 0, v_i <= 25 (hundredths), and
//     every pair (v_a, v_b) with a < b, ordered by low then high. step 1: 25 values, 300 pairs; step 3:
//     values 1, 4, ..., 25 (9 values), 36 pairs — the paper's C_0.01 and C_0.03. Any other list of pairs
//     with 1 <= low < high <= 100, 1 <= count <= kMaxCandidates (duplicates allowed: they weight a pair) is
//     accepted.
//
// MEMORY: no allocation inside the calls. detect_edges_ref takes a caller-owned workspace of
// workspace_bytes_ref(width, height) bytes (any alignment). Nothing synchronizes (CPU only).
// ERRORS: every function returns kOk (0) or a negative Status; invalid input never reads or writes out of
// bounds and never leaves partially defined behaviour (outputs may be partly written on error).
#pragma once

#include <cstddef>
#include <cstdint>

namespace canny {

enum Status : int {
  kOk = 0,
  kErrNull = -1,        // a required pointer is null
  kErrSize = -2,        // width/height outside [1, kMaxDim], width * height > kMaxPixels, or a bad region
  kErrPitch = -3,       // a pitch smaller than the width
  kErrSigma = -4,       // sigma not in [kMinSigma, kMaxSigma] (NaN included)
  kErrCandidates = -5,  // empty/too large candidate set, or a pair outside 1 <= low < high <= 100
  kErrWorkspace = -6,   // workspace smaller than workspace_bytes_ref
  kErrMode = -7,        // unknown ThresholdMode
  kErrThresholds = -8,  // fixed pair outside 1 <= low <= high <= 100
};

constexpr int kStripWidth = 32;          // columns per strip (one 32-bit region per row on the GPU)
constexpr int kMaxDim = 1 << 15;         // width and height are in [1, kMaxDim]
constexpr int64_t kMaxPixels = 1 << 26;  // width * height at most this
constexpr float kMinSigma = 0.1f;
constexpr float kMaxSigma = 2.0f;
constexpr int kMaxRadius = 6;            // ceil(3 * 2.0)
constexpr int kMaxTaps = 2 * kMaxRadius + 1;
constexpr int kTapsOne = 16384;          // taps are Q14
constexpr int kMaxCandidates = 4950;     // every pair of 1..100
constexpr int kMaxThreshold = 100;       // hundredths

// One candidate pair, in hundredths: low / 100 < high / 100.
struct CandidatePair {
  uint8_t low;
  uint8_t high;
};

// A chosen pair, in hundredths (the thresholds are (float)low / 100.0f and (float)high / 100.0f); found is
// 1 when Medina-Carnicer found local maxima, 0 when the fallback was used (always 1 in kFixed mode).
struct ThresholdPair {
  int32_t low;
  int32_t high;
  int32_t found;
};

enum class ThresholdMode : int {
  kStrip = 0,  // one Medina-Carnicer pair and one hysteresis per 32-column strip (GUD-Canny)
  kFrame = 1,  // one Medina-Carnicer pair from the whole image, hysteresis over the whole image
  kFixed = 2,  // Options::fixed for the whole image (classic Canny), hysteresis over the whole image
};

struct Options {
  float sigma = 1.0f;                         // Gaussian standard deviation, [0.1, 2.0]
  ThresholdMode mode = ThresholdMode::kStrip;
  const CandidatePair* candidates = nullptr;  // kStrip / kFrame: the candidate set (see make_candidate_set)
  int n_candidates = 0;
  ThresholdPair fixed = {10, 20, 1};          // kFixed: 1 <= low <= high <= 100
};

// Number of strips of a width: ceil(width / 32).
constexpr int strip_count(int width) { return (width + kStripWidth - 1) / kStripWidth; }

// The standard candidate sets: values 1, 1 + step, ... <= 25 and all pairs low < high (order: by low, then
// high). Writes min(count, capacity) pairs and returns count (300 for step 1, 36 for step 3), or kErrSize
// when step is not in [1, 24], kErrNull when out is null and capacity > 0.
int make_candidate_set(int step, CandidatePair* out, int capacity);

// Checks a candidate set: kOk or kErrNull / kErrCandidates.
int check_candidates(const CandidatePair* pairs, int count);

// The x grid of NUMBERS, used by both twins: the bin of every h = floor(200 v) (half-hundredths 0..200)
// under a candidate set's grid.
constexpr int kHalfSteps = 2 * kMaxThreshold;  // h = floor(200 v) of a value v in [0, 1]: 0..200

// of_half[h]: the grid value (hundredths) whose bin holds h, 0 for none. Index 0 is also used for values
// 0 < v < 0.005; the callers never look up v = 0 (SM = 0 or G = 0).
struct Bins {
  uint8_t of_half[kHalfSteps + 1];
};

// candidates: already checked (check_candidates), so there are at least two distinct values.
inline void make_bins(const CandidatePair* candidates, int n, Bins* b) {
  bool has[kMaxThreshold + 1] = {};
  for (int c = 0; c < n; ++c) has[candidates[c].low] = has[candidates[c].high] = true;
  int x[kMaxThreshold + 1], m = 0;
  for (int v = 1; v <= kMaxThreshold; ++v)
    if (has[v]) x[m++] = v;
  for (int h = 0; h <= kHalfSteps; ++h) b->of_half[h] = 0;
  for (int i = 0; i < m; ++i) {
    const int e0 = i == 0 ? 2 * x[0] - (x[1] - x[0]) : x[i - 1] + x[i];
    const int e1 = i == m - 1 ? 2 * x[m - 1] + (x[m - 1] - x[m - 2]) : x[i] + x[i + 1];
    for (int h = e0 < 0 ? 0 : e0; h < e1 && h <= kHalfSteps; ++h) b->of_half[h] = uint8_t(x[i]);
  }
}

// The Q14 Gaussian taps for sigma (see NUMBERS): writes taps[0..2r] (taps[r] is the centre) and *radius.
// kErrSigma for sigma outside [0.1, 2.0] or NaN.
int gaussian_taps(float sigma, int32_t taps[kMaxTaps], int* radius);

// Bytes of workspace detect_edges_ref needs for a width x height image (0 for invalid sizes).
size_t workspace_bytes_ref(int width, int height);

// Steps 1-3: the normalised, non-maximum-suppressed gradient magnitude G (floats in [0, 1], row y at
// g + y * g_pitch floats, g_pitch >= width). `work` must hold workspace_bytes_ref(width, height) bytes.
int gradient_map_ref(const uint8_t* src, int width, int height, int pitch, float sigma, float* g,
                     int g_pitch, void* work, size_t work_bytes);

// Step 4 on the region of G made of columns [x0, x1) of all `height` rows: Medina-Carnicer's pair from
// the candidate set. `sm` holds (x1 - x0) * height uint32: on return the region's SM (NUMBERS), row-major, x1 - x0
// a row (what the GPU twin's counting must equal; tools/bench/bench_canny_lanes_gpu.cu checks against it). `mask` is
// scratch of (x1 - x0) * height bytes, `stack` scratch of (x1 - x0) * height int32. kErrSize for an empty or
// out-of-range region.
int select_thresholds_ref(const float* g, int g_pitch, int width, int height, int x0, int x1,
                          const CandidatePair* candidates, int n_candidates, ThresholdPair* out,
                          uint32_t* sm, uint8_t* mask, int32_t* stack);

// Step 5 on the region [x0, x1) x [0, height) of G with pair (low, high) in hundredths: writes the
// region's bytes of `edges` (0 or 255, row y at edges + y * edges_pitch). `stack` is scratch of
// (x1 - x0) * height int32. Pixels of `edges` outside the region are not touched.
int hysteresis_ref(const float* g, int g_pitch, int width, int height, int x0, int x1, int low, int high,
                   uint8_t* edges, int edges_pitch, int32_t* stack);

// The whole pipeline. src: row y at src + y * pitch (pitch >= width). edges: row y at edges + y *
// edges_pitch (edges_pitch >= width; bytes past the width are not touched). pairs: strip_count(width)
// entries, the pair used for each strip (in kFrame and kFixed mode all entries are the one pair).
int detect_edges_ref(const uint8_t* src, int width, int height, int pitch, const Options& options,
                     uint8_t* edges, int edges_pitch, ThresholdPair* pairs, void* work, size_t work_bytes);

// The threshold codes of a value v of G, 0 < v <= 1 (the CUDA twin's, on the device and on the host, and the CPU
// path's one-pass count):
// A | B << 8 with A = #{k in 1..100 : v >= t[k]} and B = #{k in 1..100 : v > t[k]}, where t holds
// kMaxThreshold + 1 floats t[k] = (float)k / 100.0f (strictly increasing, t[0] = 0). Then G >= high/100 <=>
// A >= high and G > low/100 <=> B >= low. v * 100 (one rounding) lands within one step of both counts, and
// one correction each way makes them exact (tests/canny/threshold_codes_test.cpp checks the floats where
// that could fail).
#if defined(__CUDACC__)
__host__ __device__ __forceinline__
#else
inline
#endif
uint32_t threshold_codes(float v, const float* t) {
#if defined(__CUDA_ARCH__)
  const int k = int(__fmul_rn(v, 100.0f));
#else
  const int k = int(v * 100.0f);  // one rounding (a conversion follows, nothing to contract with)
#endif
  const int k0 = k < kMaxThreshold ? k : kMaxThreshold;
  int a = k0, b = k0;
  if (a < kMaxThreshold && v >= t[a + 1]) ++a;
  else if (v < t[a]) --a;
  if (b < kMaxThreshold && v > t[b + 1]) ++b;
  else if (!(v > t[b])) --b;
  return uint32_t(a) | (uint32_t(b) << 8);
}

}  // namespace canny
