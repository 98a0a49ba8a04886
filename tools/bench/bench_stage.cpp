// gpuec-bench-stage: times the CPU entropy stage on captured slices (cavlc/capture.h), and the
// machine's memcpy bandwidth as a reference. Driven by tools/bench/bench-stage.sh; see docs/benchmarks.md.
//
// For every frame of the capture (a frame starts at a slice with first_mb 0; capture with x264
// --threads 1) it times everything the stage's cpu backend costs the encoder's thread for the frame, by
// calling the stage (gpuec/stage.h) as the patched x264 does: per slice gpuec_slice_begin, per macroblock
// gpuec_mb_skip or gpuec_mb_next + gpuec_mb_commit_bits (the commit check: TotalCoeff of every block and the
// level-overflow verdict, and whatever coding the backend does there: the cpu backend writes the skeleton
// piece and the residual into the slice's output), gpuec_slice_defer (the slice's tail, or the skeleton
// copy); then gpuec_frame_submit, gpuec_frame_complete and gpuec_frame_slice per slice (the coding where
// the backend does not code at commit). Each captured record is copied into the slot
// gpuec_mb_next hands out inside the timed loop (x264 fills the slot in its macroblock loop; the copy is
// counted against the stage). The "commit" time is the macroblock loop's part (begin .. defer).
// Before timing, every slice is coded once and its bit count and output hash must equal the captured
// ones, so the benchmark runs the real inputs to the real output.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cavlc/capture.h"
#include "cavlc/frame.h"
#include "cavlc/frame_coder.h"
#include "cavlc/slice.h"
#include "gpuec/stage.h"
#include "bench_util.h"

namespace {

using Clock = std::chrono::steady_clock;

void usage(FILE* out) {
  std::fprintf(out,
               "usage: gpuec-bench-stage CAPTURE [--repeats R] [--warmup W] [--interleave] [--thread-time]\n"
               "       gpuec-bench-stage --memcpy [--size MIB] [--repeats R] [--warmup W]\n"
               "\n"
               "CAPTURE  a capture written by the stage with GPUEC_CAPTURE=FILE (x264 --threads 1)\n"
               "  --repeats R   timed runs per frame (default 30); the median is reported\n"
               "  --warmup W    untimed runs before them (default 3)\n"
               "  --interleave  run pass by pass over all frames (each frame's data is cold again,\n"
               "                unless all frames fit in the caches) instead of W + R runs of one\n"
               "                frame after the other (its data stays cache-warm)\n"
               "  --thread-time the thread's CPU time instead of the wall clock (leaves out the time other\n"
               "                processes hold the core: for comparisons on a loaded machine)\n"
               "  --memcpy      time memcpy of MIB MiB (default 64) instead; reports GB/s copied\n"
               "                (bytes copied per second; the memory traffic is twice that)\n"
               "\n"
               "Output: one 'frame' line per frame, then a 'summary' line of key=value pairs (times in us):\n"
               "  frame INDEX SLICES MBS CODED_MBS RESIDUAL_MBS INPUT_BYTES STAGE_US COMMIT_US\n"
               "  (STAGE_US: every stage call for the frame; COMMIT_US: the part of it in the macroblock\n"
               "  loop, gpuec_slice_begin .. gpuec_slice_defer)\n"
               "  (CODED_MBS: not skipped; RESIDUAL_MBS: with residual blocks or I_PCM samples)\n"
               "  summary frames= mbs= stage_us_median= stage_us_mean= commit_us_median=\n"
               "          commit_us_mean= input_bytes_mean= mb_per_s=\n"
               "Exit status: 0 ok, 1 usage, 2 unreadable capture, 3 output differs from the capture.\n");
}

using gpuec_bench::median;

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

double us_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

// --thread-time: the stage's times on the thread's CPU clock (time the thread ran), which leaves out the
// time other processes take the core: for comparisons on a loaded machine. x264's writer is timed on the
// wall clock (TSC), so the driver's ratios use the default.
bool g_thread_time = false;
double now_us() {
  if (g_thread_time) {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) * 1e-3;
  }
  return std::chrono::duration<double, std::micro>(Clock::now().time_since_epoch()).count();
}

// One captured slice, with the encoder's bitstream buffer as the stage sees it: the skeleton at byte
// start_bit / 8 (gpuec_slice_defer reads bits [start_bit, end_bit) of it).
struct Slice {
  const cavlc::CapturedSlice* cap;
  std::vector<gpuec_mb> recs;
  std::vector<uint8_t> buf;
};

struct Frame {
  std::vector<Slice> slices;
  int mb_width = 0, mb_height = 0;
  int mbs = 0;
  int coded = 0;
  int residual = 0;  // macroblocks x264's writer writes residual for: Intra16x16, I_PCM, cbp != 0
  size_t input_bytes = 0;  // coded records + skeleton: what an upload to a GPU would carry
};

// The stage's cpu backend driven through its C interface (gpuec/stage.h), call for call as the patched
// x264 drives it.
struct Bench {
  gpuec_stage* stage = nullptr;
  int stage_w = 0, stage_h = 0;
  ~Bench() { gpuec_stage_destroy(stage); }

  // Makes the stage for the frame's size (once) and ends the previous part. False when the stage cannot
  // be made.
  bool fill(const Frame& f) {
    if (!stage || stage_w != f.mb_width || stage_h != f.mb_height) {
      gpuec_stage_destroy(stage);
      char note[256] = "";
      stage = gpuec_stage_create(f.mb_width, f.mb_height, GPUEC_BACKEND_CPU, 0, note, sizeof note);
      if (!stage) {
        std::fprintf(stderr, "gpuec-bench-stage: stage: %s\n", note);
        return false;
      }
      stage_w = f.mb_width;
      stage_h = f.mb_height;
    }
    gpuec_frame_complete(stage);  // ends the previous part, if any
    return true;
  }

  // The stage's calls for the frame (after fill), up to the last gpuec_frame_slice. *commit_us: the time
  // of the macroblock loop (gpuec_slice_begin .. gpuec_slice_defer: the commits). Returns the number of
  // slices coded correctly, i.e. all of them unless `check` finds a difference from the capture
  // (reported on stderr), or an error from the stage.
  size_t run(const Frame& f, bool check, double* commit_us) {
    const double t0 = now_us();
    size_t n = 0;
    int bad = 0;
    uint8_t totals[GPUEC_TC_COUNT];
    for (const Slice& s : f.slices) {
      const cavlc::CaptureSliceHeader& h = s.cap->head;
      gpuec_slice_begin(stage, static_cast<int>(h.first_mb), h.start_bit);
      for (const gpuec_mb& m : s.recs) {
        if (m.kind == GPUEC_MB_SKIP) {
          bad |= gpuec_mb_skip(stage, m.mb_addr);
        } else {
          *gpuec_mb_next(stage) = m;  // x264 fills the slot in its macroblock loop: a copy here
          // with the buffer, as x264 calls it; 1 (overflow) cannot happen: x264 re-encoded those
          bad |= gpuec_mb_commit_bits(stage, totals, s.buf.data());
        }
        ++n;
      }
      if (gpuec_slice_defer(stage, s.buf.data(), h.end_bit, 0) < 0) bad = 1;
    }
    if (commit_us) *commit_us = now_us() - t0;
    const int submitted = gpuec_frame_submit(stage);
    const int n_slices = gpuec_frame_complete(stage);
    const uint8_t* payload = nullptr;
    int64_t bytes = 0, added = 0;
    size_t ok = 0;
    for (size_t k = 0; k < f.slices.size(); ++k) {
      const cavlc::CaptureSliceHeader& h = f.slices[k].cap->head;
      if (gpuec_frame_slice(stage, static_cast<int>(k), nullptr, &payload, &bytes, &added) < 0) break;
      if (!check) continue;
      const int64_t bits = h.end_bit - h.start_bit + added;
      if (const uint64_t hash = cavlc::capture_hash(payload, bits); bits != h.out_bits || hash != h.out_hash) {
        std::fprintf(stderr, "gpuec-bench-stage: slice %llu: %lld bits (hash %016llx), captured %lld bits "
                     "(hash %016llx)\n", static_cast<unsigned long long>(h.slice_index),
                     static_cast<long long>(bits), static_cast<unsigned long long>(hash),
                     static_cast<long long>(h.out_bits), static_cast<unsigned long long>(h.out_hash));
      } else {
        ++ok;
      }
    }
    if (check && (bad || submitted < 0 || n_slices != static_cast<int>(f.slices.size())))
      std::fprintf(stderr, "gpuec-bench-stage: the stage rejects the captured frame (commit/defer %d, submit %d, "
                   "complete %d)\n", bad, submitted, n_slices);
    return bad || submitted < 0 ? 0 : ok;
  }
};

int bench_memcpy(double mib, int repeats, int warmup) {
  const size_t bytes = static_cast<size_t>(mib * 1024 * 1024);
  if (bytes == 0) {
    std::fprintf(stderr, "gpuec-bench-stage: --size must be > 0\n");
    return 1;
  }
  std::vector<uint8_t> src(bytes), dst(bytes);
  for (size_t i = 0; i < bytes; ++i) src[i] = static_cast<uint8_t>(i * 131);
  std::memset(dst.data(), 1, bytes);
  std::vector<double> gbs;
  for (int i = 0; i < warmup + repeats; ++i) {
    src[static_cast<size_t>(i) % bytes] ^= 1;  // a different copy every time
    const auto t0 = Clock::now();
    std::memcpy(dst.data(), src.data(), bytes);
    const double us = us_since(t0);
    if (dst[static_cast<size_t>(i) % bytes] != src[static_cast<size_t>(i) % bytes]) return 3;
    if (i >= warmup) gbs.push_back(static_cast<double>(bytes) / us * 1e-3);
  }
  std::printf("memcpy size_mib=%g repeats=%d gb_per_s_median=%.2f gb_per_s_min=%.2f gb_per_s_max=%.2f\n", mib,
              repeats, median(gbs), *std::min_element(gbs.begin(), gbs.end()),
              *std::max_element(gbs.begin(), gbs.end()));
  return 0;
}

using gpuec_bench::parse_int;

}  // namespace

int main(int argc, char** argv) {
  std::string path;
  int repeats = 30, warmup = 3;
  bool interleave = false, memcpy_mode = false;
  double size_mib = 64;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (const int t = gpuec_bench::timing_option(argc, argv, i, &repeats, &warmup)) {
      if (t < 0) return usage(stderr), 1;
    } else if (a == "-h" || a == "--help") {
      usage(stdout);
      return 0;
    } else if (a == "--size" && has_value) {
      char* end = nullptr;
      size_mib = std::strtod(argv[++i], &end);
      if (*end || !(size_mib > 0 && size_mib <= 4096)) return usage(stderr), 1;
    } else if (a == "--thread-time") {
      g_thread_time = true;
    } else if (a == "--interleave") {
      interleave = true;
    } else if (a == "--memcpy") {
      memcpy_mode = true;
    } else if (a.size() > 1 && a[0] == '-') {
      std::fprintf(stderr, "gpuec-bench-stage: unknown option or missing value: %s\n", a.c_str());
      return usage(stderr), 1;
    } else if (path.empty()) {
      path = a;
    } else {
      std::fprintf(stderr, "gpuec-bench-stage: more than one capture given\n");
      return 1;
    }
  }
  if (memcpy_mode) return bench_memcpy(size_mib, repeats, warmup);
  if (path.empty()) return usage(stderr), 1;

  std::vector<cavlc::CapturedSlice> caps;
  std::string error;
  if (!cavlc::read_capture(path, caps, error)) {
    std::fprintf(stderr, "gpuec-bench-stage: %s\n", error.c_str());
    return 2;
  }
  if (caps.empty() || caps[0].head.first_mb != 0) {
    std::fprintf(stderr, "gpuec-bench-stage: %s: %s\n", path.c_str(),
                 caps.empty() ? "no slices" : "the first slice does not start a frame (first_mb != 0)");
    return 2;
  }
  std::vector<Frame> frames;
  for (const cavlc::CapturedSlice& c : caps) {
    const cavlc::CaptureSliceHeader& h = c.head;
    if (h.first_mb == 0) frames.emplace_back();
    frames.back().mb_width = static_cast<int>(h.mb_width);
    frames.back().mb_height = static_cast<int>(h.mb_height);
    Slice s{&c, c.recs, std::vector<uint8_t>(static_cast<size_t>(h.start_bit >> 3), 0)};
    s.buf.insert(s.buf.end(), c.skeleton.begin(), c.skeleton.end());
    s.buf.resize(s.buf.size() + 8, 0);
    for (gpuec_mb& m : s.recs) {
      if (m.kind == GPUEC_MB_SKIP) continue;
      ++frames.back().coded;
      if (m.kind != GPUEC_MB_NORMAL || m.cbp != 0) ++frames.back().residual;
      frames.back().input_bytes += sizeof(gpuec_mb);
    }
    frames.back().mbs += static_cast<int>(h.record_count);
    frames.back().input_bytes += c.skeleton.size();
    frames.back().slices.push_back(std::move(s));
  }
  Bench bench;
  size_t n_slices = 0, ok = 0;
  for (const Frame& f : frames) {
    n_slices += f.slices.size();
    if (f.mbs != f.mb_width * f.mb_height) {
      std::fprintf(stderr, "gpuec-bench-stage: %s: a frame of %d macroblocks, not %d x %d\n", path.c_str(), f.mbs,
                   f.mb_width, f.mb_height);
      return 2;
    }
    if (!bench.fill(f)) return 2;
    ok += bench.run(f, true, nullptr);
  }
  if (ok != n_slices) {
    std::fprintf(stderr, "gpuec-bench-stage: %s: %zu of %zu slices differ from the capture\n", path.c_str(),
                 n_slices - ok, n_slices);
    return 3;
  }

  const size_t nf = frames.size();
  std::vector<std::vector<double>> stage_us(nf), commit_us(nf);
  auto time_frame = [&](size_t i, bool keep) {
    if (!bench.fill(frames[i])) std::exit(2);
    double c = 0;
    const double t0 = now_us();
    bench.run(frames[i], false, &c);
    const double s = now_us() - t0;
    if (keep) {
      stage_us[i].push_back(s);
      commit_us[i].push_back(c);
    }
  };
  if (interleave) {
    for (int r = 0; r < warmup + repeats; ++r)
      for (size_t i = 0; i < nf; ++i) time_frame(i, r >= warmup);
  } else {
    for (size_t i = 0; i < nf; ++i)
      for (int r = 0; r < warmup + repeats; ++r) time_frame(i, r >= warmup);
  }

  std::printf("# gpuec-bench-stage %s: %zu frames, %zu slices, %d repeats (+%d warm-up), %s order\n",
              path.c_str(), nf, n_slices, repeats, warmup, interleave ? "interleaved" : "frame-by-frame");
  std::printf("# frame slices mbs coded_mbs residual_mbs input_bytes stage_us commit_us (medians)\n");
  std::vector<double> stage_med(nf), commit_med(nf), input(nf);
  int64_t total_mbs = 0;
  for (size_t i = 0; i < nf; ++i) {
    stage_med[i] = median(stage_us[i]);
    commit_med[i] = median(commit_us[i]);
    input[i] = static_cast<double>(frames[i].input_bytes);
    total_mbs += frames[i].mbs;
    std::printf("frame %zu %zu %d %d %d %zu %.2f %.2f\n", i, frames[i].slices.size(), frames[i].mbs,
                frames[i].coded, frames[i].residual, frames[i].input_bytes, stage_med[i], commit_med[i]);
  }
  const double stage_sum = mean(stage_med) * static_cast<double>(nf);
  std::printf("summary frames=%zu mbs=%lld stage_us_median=%.2f stage_us_mean=%.2f commit_us_median=%.2f "
              "commit_us_mean=%.2f input_bytes_mean=%.0f mb_per_s=%.4g\n",
              nf, static_cast<long long>(total_mbs), median(stage_med), mean(stage_med), median(commit_med),
              mean(commit_med), mean(input), static_cast<double>(total_mbs) / stage_sum * 1e6);
  return 0;
}
