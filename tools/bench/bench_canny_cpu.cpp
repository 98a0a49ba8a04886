// canny-bench-cpu: the fast CPU path of GUD-Canny (canny::CpuDetector, canny/canny_cpu.h) against the oracle
// detect_edges_ref (one core) per frame, in the same run: synthetic 512x512, 1920x1080 and 3840x2160 frames
// (bench_images.h), C_0.03 (or --step 1: C_0.01) in strip mode (or --mode frame|fixed). Per frame and per
// thread count: W warm-up calls of each, then R rounds; each round times one oracle call and one call of
// every detector (steady_clock), so load from elsewhere falls on all of them alike. Reported: the median of
// each (ms), the ratio oracle median / detector median, and the cores the detector's calls used (process CPU
// time over wall time, summed over its rounds: below its thread count when other work holds the cores).
// Every detector's output (edge map and pairs) is compared with the oracle's; a difference exits 1.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench_images.h"
#include "bench_util.h"
#include "canny/canny.h"
#include "canny/canny_cpu.h"

namespace {

constexpr int kExitMismatch = 1, kExitUsage = 2;

const char kUsage[] =
    "usage: canny-bench-cpu [--threads N]... [--size 512|1080|2160]... [--step 1|3] [--mode strip|frame|fixed]\n"
    "                       [--sigma S] [--repeats R] [--warmup W]\n"
    "  The oracle detect_edges_ref (one core) against canny::CpuDetector on synthetic frames, in the same run.\n"
    "  --threads N  a detector with N threads (0: every core; repeatable; default: 1 and every core)\n"
    "  --size       frame heights to run (default: 512, 1080 and 2160; 512 is 512x512)\n"
    "  --step       candidate set C_0.03 (3, default) or C_0.01 (1)\n"
    "  --mode       threshold mode (default strip; fixed uses the pair 0.10, 0.20)\n"
    "  --sigma      Gaussian sigma, 0.1..2.0 (default 1.0)\n"
    "  --repeats R  timed rounds (default 7), --warmup W untimed calls of each first (default 1)\n"
    "  Output: per frame and detector the median ms, the ratio oracle / detector and the cores its calls used\n"
    "  (process CPU time / wall time); exit 1 when an output differs from the oracle's, 2 on a usage error.\n";

double cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

bool same(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, const std::vector<canny::ThresholdPair>& pa,
          const std::vector<canny::ThresholdPair>& pb) {
  if (a != b || pa.size() != pb.size()) return false;
  for (size_t i = 0; i < pa.size(); ++i)
    if (pa[i].low != pb[i].low || pa[i].high != pb[i].high || pa[i].found != pb[i].found) return false;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> threads, sizes;
  int step = 3, repeats = 7, warmup = 1;
  float sigma = 1.0f;
  canny::ThresholdMode mode = canny::ThresholdMode::kStrip;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has = i + 1 < argc;
    int v = 0;
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (const int t = gpuec_bench::timing_option(argc, argv, i, &repeats, &warmup); t != 0) {
      if (t < 0) return std::fputs(kUsage, stderr), kExitUsage;
    } else if (a == "--threads" && has && gpuec_bench::parse_int(argv[++i], 0, &v) &&
               v <= canny::CpuDetector::kMaxCpuThreads) {
      threads.push_back(v);
    } else if (a == "--size" && has && gpuec_bench::parse_int(argv[++i], 1, &v) && (v == 512 || v == 1080 || v == 2160)) {
      sizes.push_back(v);
    } else if (a == "--step" && has && gpuec_bench::parse_int(argv[++i], 1, &step) && (step == 1 || step == 3)) {
    } else if (a == "--mode" && has) {
      const std::string m = argv[++i];
      if (m == "strip") mode = canny::ThresholdMode::kStrip;
      else if (m == "frame") mode = canny::ThresholdMode::kFrame;
      else if (m == "fixed") mode = canny::ThresholdMode::kFixed;
      else return std::fputs(kUsage, stderr), kExitUsage;
    } else if (a == "--sigma" && has) {
      sigma = float(std::atof(argv[++i]));
    } else {
      return std::fputs(kUsage, stderr), kExitUsage;
    }
  }
  if (threads.empty()) threads = {1, 0};
  if (sizes.empty()) sizes = {512, 1080, 2160};

  std::vector<canny::CandidatePair> cands(size_t(canny::make_candidate_set(step, nullptr, 0)));
  canny::make_candidate_set(step, cands.data(), int(cands.size()));
  canny::Options opt;
  opt.sigma = sigma;
  opt.mode = mode;
  opt.candidates = cands.data();
  opt.n_candidates = int(cands.size());

  const char* mode_name = mode == canny::ThresholdMode::kStrip ? "strip" : mode == canny::ThresholdMode::kFrame ? "frame" : "fixed";
  std::printf("canny-bench-cpu: %s C_0.0%d sigma %.2f, %u hardware threads, warm-up %d, %d rounds, medians (ms)\n",
              mode_name, step, double(sigma), std::thread::hardware_concurrency(), warmup, repeats);
  std::printf("%-10s %8s %12s %12s %8s %6s\n", "frame", "threads", "oracle_ms", "fast_ms", "ratio", "cores");
  int exit_code = 0;
  for (int size : sizes) {
    const int w = size == 512 ? 512 : size == 1080 ? 1920 : 3840;
    const canny_bench::Image im = canny_bench::synthetic(std::to_string(w) + "x" + std::to_string(size), w, size, uint32_t(size));
    const size_t ns = size_t(canny::strip_count(w));
    std::vector<uint8_t> work(canny::workspace_bytes_ref(w, size));
    std::vector<uint8_t> want(im.px.size()), got(im.px.size());
    std::vector<canny::ThresholdPair> want_pairs(ns), got_pairs(ns);
    std::vector<std::unique_ptr<canny::CpuDetector>> dets;
    for (int t : threads) {
      dets.push_back(std::make_unique<canny::CpuDetector>());
      if (int e = dets.back()->init(w, size, opt, t); e != canny::kOk) {
        std::fprintf(stderr, "canny-bench-cpu: CpuDetector::init failed with status %d\n", e);
        return kExitUsage;
      }
    }
    auto run_oracle = [&] {
      return canny::detect_edges_ref(im.px.data(), w, size, w, opt, want.data(), w, want_pairs.data(), work.data(),
                                     work.size());
    };
    for (int k = 0; k < warmup; ++k) {
      run_oracle();
      for (auto& d : dets) d->detect(im.px.data(), w, got.data(), w, got_pairs.data());
    }
    std::vector<double> oracle_ms;
    std::vector<std::vector<double>> fast_ms(dets.size());
    std::vector<double> fast_cpu(dets.size()), fast_wall(dets.size());
    for (int r = 0; r < repeats; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      if (run_oracle() != canny::kOk) return std::fputs("canny-bench-cpu: detect_edges_ref failed\n", stderr), kExitUsage;
      oracle_ms.push_back(gpuec_bench::ms_since(t0));
      for (size_t d = 0; d < dets.size(); ++d) {
        std::fill(got.begin(), got.end(), uint8_t(0x5a));
        const double c0 = cpu_ms();
        t0 = std::chrono::steady_clock::now();
        const int e = dets[d]->detect(im.px.data(), w, got.data(), w, got_pairs.data());
        fast_ms[d].push_back(gpuec_bench::ms_since(t0));
        fast_cpu[d] += cpu_ms() - c0;
        fast_wall[d] += fast_ms[d].back();
        if (e != canny::kOk || !same(want, got, want_pairs, got_pairs)) {
          std::fprintf(stderr, "canny-bench-cpu: %s, %d threads: output differs from the oracle (status %d)\n",
                       im.name.c_str(), dets[d]->threads(), e);
          exit_code = kExitMismatch;
        }
      }
    }
    const double om = gpuec_bench::median(oracle_ms);
    for (size_t d = 0; d < dets.size(); ++d) {
      const double fm = gpuec_bench::median(fast_ms[d]);
      std::printf("%-10s %8d %12.2f %12.2f %7.2fx %6.2f\n", im.name.c_str(), dets[d]->threads(), om, fm, om / fm,
                  fast_cpu[d] / fast_wall[d]);
    }
    std::fflush(stdout);
  }
  return exit_code;
}
