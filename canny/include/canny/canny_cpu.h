// canny/canny_cpu.h: the fast CPU path of GUD-Canny for machines without a GPU. Same output as the oracle
// detect_edges_ref (canny/canny.h) BIT FOR BIT — edge map and pairs — in every ThresholdMode; the oracle stays
// the plain single-threaded definition and tests/canny/canny_cpu_test.cpp holds this path to it.
//
// HOW (every step is the oracle's arithmetic, only distributed):
//   * A CpuDetector is made once for one width x height, one Options and a thread count, and owns a
//     persistent pool of (threads - 1) std::threads (the calling thread is the last worker) and every buffer
//     a frame needs. detect() allocates nothing and creates no thread.
//   * Steps 1-3 (Gaussian horizontal pass, vertical pass, gradient, NMS) run in bands of rows, one barrier
//     between passes. The integer Gaussian passes are specialised per radius (1..6) with the row clamp
//     moved out of the inner loop, so that the compiler vectorises them; integer arithmetic makes that
//     exact. The maximum of gx^2 + gy^2 is an integer maximum per band, combined after the barrier (exact).
//     The float steps (sqrtf, NMS interpolation, G = M / Mmax) are the oracle's operations in the oracle's
//     order, compiled with -ffp-contract=off like canny.cpp.
//   * kStrip: each 32-column strip is one task, taken by the threads dynamically (strips are independent):
//     select_thresholds_ref + hysteresis_ref of canny.h on that strip. SM, for sets of up to 48 candidates
//     (C_0.03's 36), on bit rows: for every distinct threshold value t of the candidate set, one 32-bit word per
//     row holds G >= t and one G > t (the oracle's float comparisons, made once per strip); a candidate (low,
//     high) then has HIGH = [G >= high] and UNSTABLE = [G > low] & ~[G >= high], and its hysteresis is grown
//     from HIGH through UNSTABLE by downward and upward sweeps (8-neighbours, each row closed horizontally)
//     until a pass changes nothing: the least fixed point, the set of the oracle's flood fill. For larger sets
//     (C_0.01's 300) SM comes in one pass over the lows: pixel p is linked by (low, high) exactly where
//     A(p) < high <= the maximum of A over p's component of S_low = {G > low} (threshold_codes' A and B), so
//     SM is a sum over the lows of a per-low count of the component's maximum; the lows are taken from the
//     largest down, each adding its pixels of S to one union-find over the strip, and after each low every
//     root adds its count to all its members at once (an offset a node). The x grid and pick_pair (the CUDA
//     twin's too) follow as in select_thresholds_ref, in integers; then the pair's hysteresis on bit rows.
//   * kFrame: SM of the whole frame in the same one pass (its union-find on the calling thread; its codes, its
//     pixels' order by low, its sums and the grid's histograms on bands of rows on the pool), pick_pair, then the
//     oracle's whole-frame hysteresis_ref. kFixed: the oracle's hysteresis_ref. Steps 1-3 are threaded.
//
// MEMORY: CpuDetector::init allocates everything: about 17 bytes a pixel, plus per thread 4 * width bytes and
// in kStrip 4 * 32 * height (SM) + (2 * values + 1) * 4 * height bytes (values: the distinct thresholds of the
// candidate set, 9 for C_0.03), or with the one pass 23 * 32 * height + 5 * 4 * height; in kFrame 31 bytes a pixel
// once, in kFixed 8. THREADS: one detect() at a time per detector; different detectors are independent. detect()
// returns when the frame is done (it synchronizes with its workers).
// ERRORS: kOk or a negative canny::Status, as the oracle's; init reports the oracle's argument errors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "canny/canny.h"

namespace canny {

class CpuPool;  // private (canny/src/canny_cpu.cpp)

class CpuDetector {
 public:
  CpuDetector();
  ~CpuDetector();  // joins the threads
  CpuDetector(const CpuDetector&) = delete;
  CpuDetector& operator=(const CpuDetector&) = delete;

  // Sets the detector up for frames of width x height with options (the candidate set is copied: the
  // caller's array need not outlive this call) on `threads` threads: 0 = std::thread::hardware_concurrency()
  // (1 if that is unknown), at most kMaxCpuThreads. Returns kOk, or kErrSize / kErrSigma / kErrMode /
  // kErrThresholds / kErrCandidates / kErrNull as detect_edges_ref would for these arguments, or kErrSize
  // for threads outside [0, kMaxCpuThreads]. May be called again (threads and buffers are remade); on
  // error the detector is left empty (detect returns kErrSize).
  int init(int width, int height, const Options& options, int threads);

  // The threads a frame runs on (the calling thread included); 0 before a successful init.
  int threads() const;

  // detect_edges_ref's contract with this detector's size and options: src row y at src + y * pitch
  // (pitch >= width), edges row y at edges + y * edges_pitch (edges_pitch >= width; bytes past the width
  // are not touched), pairs: strip_count(width) entries. Same bytes as detect_edges_ref.
  int detect(const uint8_t* src, int pitch, uint8_t* edges, int edges_pitch, ThresholdPair* pairs);

  static constexpr int kMaxCpuThreads = 256;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace canny
