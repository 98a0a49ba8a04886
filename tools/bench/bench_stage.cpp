// gpuec-bench-stage: times the CPU entropy stage on captured slices (gpuec/capture.h), and the
// machine's memcpy bandwidth as a reference. Driven by tools/bench/bench-stage.sh; see docs/benchmarks.md.
//
// For every frame of the capture (a frame starts at a slice with first_mb 0; capture with x264
// --threads 1) it times:
//   stage:  cavlc::encode_slice_ref over the frame's slices, as gpuec_slice_finish runs it: residual
//           coding of every macroblock plus the splice, i.e. copying the whole skeleton around it;
//   commit: cavlc::mb_totals over the frame's coded records, the check gpuec_mb_commit runs inside
//           x264's macroblock loop (TotalCoeff of every block, level overflow).
// Before timing, every slice is coded once and its bit count and output hash must equal the captured
// ones, so the benchmark runs the real inputs to the real output.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cavlc/slice.h"
#include "gpuec/capture.h"
#include "bench_util.h"

namespace {

using Clock = std::chrono::steady_clock;

void usage(FILE* out) {
  std::fprintf(out,
               "usage: gpuec-bench-stage CAPTURE [--repeats R] [--warmup W] [--interleave]\n"
               "       gpuec-bench-stage --memcpy [--size MIB] [--repeats R] [--warmup W]\n"
               "\n"
               "CAPTURE  a capture written by the stage with GPUEC_CAPTURE=FILE (x264 --threads 1)\n"
               "  --repeats R   timed runs per frame (default 30); the median is reported\n"
               "  --warmup W    untimed runs before them (default 3)\n"
               "  --interleave  run pass by pass over all frames (each frame's data is cold again,\n"
               "                unless all frames fit in the caches) instead of W + R runs of one\n"
               "                frame after the other (its data stays cache-warm)\n"
               "  --memcpy      time memcpy of MIB MiB (default 64) instead; reports GB/s copied\n"
               "                (bytes copied per second; the memory traffic is twice that)\n"
               "\n"
               "Output: one 'frame' line per frame, then a 'summary' line of key=value pairs (times in us):\n"
               "  frame INDEX SLICES MBS CODED_MBS RESIDUAL_MBS INPUT_BYTES STAGE_US COMMIT_US\n"
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

// One slice ready to code: records rebased so that the skeleton starts at bit 0 of `skeleton`
// (start_bit is byte-aligned, so every bit keeps its position within its byte).
struct Slice {
  const gpuec::CapturedSlice* cap;
  std::vector<gpuec_mb> recs;
  cavlc::SliceLayout layout;
};

struct Frame {
  std::vector<Slice> slices;
  int mbs = 0;
  int coded = 0;
  int residual = 0;  // macroblocks x264's writer writes residual for: Intra16x16, I_PCM, cbp != 0
  size_t input_bytes = 0;  // coded records + skeleton: what an upload to a GPU would carry
};

struct Bench {
  std::vector<uint8_t> out;
  std::vector<cavlc::MbTotals> totals;

  // Codes every slice of the frame; returns the number of slices coded correctly, i.e. all of them
  // unless `check` finds a difference from the capture (reported on stderr).
  size_t run_stage(const Frame& f, bool check) {
    size_t ok = 0;
    for (const Slice& s : f.slices) {
      vle::BitWriter bw(out.data(), out.size());
      const int r = cavlc::encode_slice_ref(s.recs.data(), s.recs.size(), s.layout, s.cap->skeleton.data(),
                                            totals.data(), bw);
      const int64_t bits = static_cast<int64_t>(bw.bits());
      bw.flush();
      if (!check) continue;
      const gpuec::CaptureSliceHeader& h = s.cap->head;
      if (r != 0 || bw.overflowed()) {
        std::fprintf(stderr, "gpuec-bench-stage: slice %llu: the coder rejects the captured records\n",
                     static_cast<unsigned long long>(h.slice_index));
      } else if (const uint64_t hash = gpuec::capture_hash(out.data(), bits);
                 bits != h.out_bits || hash != h.out_hash) {
        std::fprintf(stderr, "gpuec-bench-stage: slice %llu: %lld bits (hash %016llx), captured %lld bits "
                     "(hash %016llx)\n", static_cast<unsigned long long>(h.slice_index),
                     static_cast<long long>(bits), static_cast<unsigned long long>(hash),
                     static_cast<long long>(h.out_bits), static_cast<unsigned long long>(h.out_hash));
      } else {
        ++ok;
      }
    }
    return ok;
  }

  static unsigned run_commit(const Frame& f) {
    unsigned sink = 0;
    uint8_t t[GPUEC_TC_COUNT];
    for (const Slice& s : f.slices)
      for (const gpuec_mb& m : s.recs)
        if (m.kind != GPUEC_MB_SKIP) sink += static_cast<unsigned>(cavlc::mb_totals(m, t)) + t[0] + t[24];
    return sink;
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
    if (a == "-h" || a == "--help") {
      usage(stdout);
      return 0;
    } else if (a == "--repeats" && has_value) {
      if (!parse_int(argv[++i], 1, &repeats)) return usage(stderr), 1;
    } else if (a == "--warmup" && has_value) {
      if (!parse_int(argv[++i], 0, &warmup)) return usage(stderr), 1;
    } else if (a == "--size" && has_value) {
      char* end = nullptr;
      size_mib = std::strtod(argv[++i], &end);
      if (*end || !(size_mib > 0 && size_mib <= 4096)) return usage(stderr), 1;
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

  std::vector<gpuec::CapturedSlice> caps;
  std::string error;
  if (!gpuec::read_capture(path, caps, error)) {
    std::fprintf(stderr, "gpuec-bench-stage: %s\n", error.c_str());
    return 2;
  }
  if (caps.empty() || caps[0].head.first_mb != 0) {
    std::fprintf(stderr, "gpuec-bench-stage: %s: %s\n", path.c_str(),
                 caps.empty() ? "no slices" : "the first slice does not start a frame (first_mb != 0)");
    return 2;
  }
  std::vector<Frame> frames;
  int64_t max_bound = 0;
  size_t max_mbs = 0;
  for (const gpuec::CapturedSlice& c : caps) {
    const gpuec::CaptureSliceHeader& h = c.head;
    if (h.first_mb == 0) frames.emplace_back();
    Slice s{&c, c.recs, {static_cast<int>(h.mb_width), h.first_mb, 0, h.end_bit - h.start_bit}};
    for (gpuec_mb& m : s.recs) {
      if (m.kind == GPUEC_MB_SKIP) continue;
      m.skel_bit -= h.start_bit;
      ++frames.back().coded;
      if (m.kind != GPUEC_MB_NORMAL || m.cbp != 0) ++frames.back().residual;
      frames.back().input_bytes += sizeof(gpuec_mb);
    }
    frames.back().mbs += static_cast<int>(h.record_count);
    frames.back().input_bytes += c.skeleton.size();
    frames.back().slices.push_back(std::move(s));
    max_bound = std::max(max_bound, h.end_bit - h.start_bit + static_cast<int64_t>(h.record_count) *
                                                                  cavlc::kMaxMbResidualBits);
    max_mbs = std::max(max_mbs, static_cast<size_t>(h.mb_width) * h.mb_height);
  }
  Bench bench;
  bench.out.resize(vle::bits_to_bytes(static_cast<uint64_t>(max_bound)));
  bench.totals.resize(max_mbs);

  size_t n_slices = 0, ok = 0;
  for (const Frame& f : frames) {
    n_slices += f.slices.size();
    ok += bench.run_stage(f, true);
  }
  if (ok != n_slices) {
    std::fprintf(stderr, "gpuec-bench-stage: %s: %zu of %zu slices differ from the capture\n", path.c_str(),
                 n_slices - ok, n_slices);
    return 3;
  }

  const size_t nf = frames.size();
  std::vector<std::vector<double>> stage_us(nf), commit_us(nf);
  volatile unsigned sink = 0;
  auto time_frame = [&](size_t i, bool keep) {
    auto t0 = Clock::now();
    bench.run_stage(frames[i], false);
    const double s = us_since(t0);
    t0 = Clock::now();
    sink = sink + Bench::run_commit(frames[i]);
    const double c = us_since(t0);
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
