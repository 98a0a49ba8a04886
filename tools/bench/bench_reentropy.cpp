// reentropy-bench: throughput of the re-entropy's re-coding stage (avc/recoder.h), per stream and
// backend, in macroblocks per second. See docs/benchmarks.md ("Compressed-domain re-entropy").
//
// Per stream: one untimed avc::reentropy_stream per backend whose output must equal the input (the
// benchmark runs real inputs to the real output); the slices are parsed once (records and skeletons kept
// in memory); then for each backend W warm-up and R timed passes of the re-coding stage alone: every slice
// added to the backend's SliceRecoder and flushed (for cuda: filling the pinned batch, the uploads, the
// CAVLCU kernel and the GPU assembly, the download; the recoder and its buffers are made before timing),
// and every pass's output compared with the cpu backend's. Reported: the median pass, MB/s (every
// macroblock counted, skipped ones included), and the ratio to the cpu backend measured in the same run.
// References measured in the same run: the parse (the whole cpu reentropy_stream minus its re-coding
// pass: approximately), and memcpy of the records' bytes (832 per macroblock) as "copy" MB/s.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "avc/recoder.h"
#include "avc/reentropy.h"
#include "bench_util.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kExitOk = 0, kExitUsage = 1, kExitInput = 2, kExitDiffers = 3;

// The --help text.
constexpr char kUsage[] = R"(usage: reentropy-bench [options] [STREAM.264...]

Times the re-coding stage of avc-reentropy (parsed slices in, re-coded RBSPs out) per stream.
Without STREAMs: every stream of $GPUEC_SHARED_DIR/conformance/MANIFEST.tsv (default ../shared).
  --backends LIST  comma-separated backends to time (default cpu,cuda; cpu, cuda, auto); cpu is
                   always timed, as the baseline of the ratios
  --repeats R      timed passes per stream and backend (default 15); the median is reported
  --warmup W       untimed passes before them (default 2)
  --batch-mbs N    batch size of the frame backends (default 65536)
  --device N       CUDA device (default 0)

Output: a 'stream' line per stream and a 'total' line, key=value (times in us, rates in M MB/s):
  stream NAME mbs= slices= parse_us= copy_mbps= BACKEND_us= BACKEND_fill_us= BACKEND_mbps= BACKEND_x=
  (BACKEND_fill_us: the part outside the recoder's flushes, i.e. filling the batch on the host;
  BACKEND_x: the cpu time over the backend's)
exit: 0 ok; 1 usage; 2 unreadable or refused stream, or a backend that cannot start;
3 a backend's output differs.
)";

void usage(FILE* f) { std::fputs(kUsage, f); }

struct Captured {
  int mb_width, pic_mbs;
  avc::SliceRecords recs;
};

double us_since(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

// One pass of the re-coding stage over the slices; the RBSPs are appended to out (cleared first).
// *fill_us: the time not spent in the recoder's flushes (for the frame backends: filling the batches on
// the host; for cpu: the coding, which happens in add()).
bool recode(avc::SliceRecoder& rec, const std::vector<Captured>& slices, std::vector<uint8_t>* out,
            double* fill_us, std::string* why) {
  out->clear();
  const auto t0 = Clock::now();
  const double flushed0 = rec.flush_seconds();
  auto take = [&](size_t, const avc::RecodedSlice& r) {
    out->insert(out->end(), r.rbsp, r.rbsp + r.bytes);
    return true;
  };
  for (const Captured& s : slices)
    if (!rec.add(s.mb_width, s.pic_mbs, s.recs, take, why)) return false;
  const bool ok = rec.flush(take, why);
  *fill_us = us_since(t0) - (rec.flush_seconds() - flushed0) * 1e6;
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 15, warmup = 2;
  avc::RecoderOptions base;
  std::vector<gpu::Backend> backends = {gpu::Backend::kCpu, gpu::Backend::kCuda};
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto number = [&](int lo) {
      char* end = nullptr;
      const long v = i + 1 < argc ? std::strtol(argv[++i], &end, 10) : -1;
      if (!end || *end || v < lo || v > (1L << 22)) {
        std::fprintf(stderr, "reentropy-bench: %s needs a number >= %d\n", a.c_str(), lo);
        std::exit(kExitUsage);
      }
      return static_cast<int>(v);
    };
    if (a == "-h" || a == "--help") {
      usage(stdout);
      return kExitOk;
    } else if (a == "--repeats") {
      repeats = number(1);
    } else if (a == "--warmup") {
      warmup = number(0);
    } else if (a == "--batch-mbs") {
      base.batch_mbs = number(1);
    } else if (a == "--device") {
      base.device = number(0);
    } else if (a == "--backends" && i + 1 < argc) {
      backends = {gpu::Backend::kCpu};
      std::string list = argv[++i];
      for (size_t at = 0; at <= list.size();) {
        const size_t comma = std::min(list.find(',', at), list.size());
        gpu::Backend b;
        if (!gpu::parse_backend(list.substr(at, comma - at), &b)) {
          std::fprintf(stderr, "reentropy-bench: unknown backend in '%s'\n", list.c_str());
          return kExitUsage;
        }
        if (b != gpu::Backend::kCpu) backends.push_back(b);
        at = comma + 1;
      }
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "reentropy-bench: unknown option '%s'\n", a.c_str());
      usage(stderr);
      return kExitUsage;
    } else {
      paths.push_back(a);
    }
  }
  if (paths.empty()) {
    const char* env = std::getenv("GPUEC_SHARED_DIR");
    const std::string dir = std::string(env && *env ? env : "../shared") + "/conformance";
    std::ifstream manifest(dir + "/MANIFEST.tsv");
    std::string row;
    std::getline(manifest, row);  // header
    while (std::getline(manifest, row))
      if (!row.empty()) paths.push_back(dir + "/" + row.substr(0, row.find('\t')));
    if (paths.empty()) {
      std::fprintf(stderr, "reentropy-bench: no STREAM given and no %s/MANIFEST.tsv\n", dir.c_str());
      usage(stderr);
      return kExitUsage;
    }
  }
  std::vector<std::unique_ptr<avc::SliceRecoder>> recoders;
  for (gpu::Backend b : backends) {
    avc::RecoderOptions o = base;
    o.backend = b;
    std::string why;
    recoders.push_back(avc::SliceRecoder::create(o, &why));
    if (!recoders.back()) {
      std::fprintf(stderr, "reentropy-bench: backend %s: %s\n", gpu::backend_name(b), why.c_str());
      return kExitInput;
    }
  }
  std::vector<double> total_us(backends.size(), 0.0);
  int64_t total_mbs = 0;
  for (const std::string& path : paths) {
    std::ifstream f(path, std::ios::binary);
    const std::vector<uint8_t> in((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (!f && !f.eof()) {
      std::fprintf(stderr, "reentropy-bench: cannot read %s\n", path.c_str());
      return kExitInput;
    }
    std::string name = path.substr(path.find_last_of('/') + 1);
    // The real thing once per backend, and the slices captured.
    std::vector<Captured> slices;
    auto keep = [&](int64_t, const avc::SliceHeader& sh, avc::SliceRecords& r) {
      slices.push_back(Captured{int(sh.pic_width_in_mbs), int(sh.pic_size_in_mbs), r});
    };
    std::vector<uint8_t> out;
    for (size_t k = 0; k < backends.size(); ++k) {
      avc::RecoderOptions o = base;
      o.backend = backends[k];
      avc::Error err;
      slices.clear();
      if (!avc::reentropy_stream(in.data(), in.size(), out, nullptr, err, keep, o)) {
        std::fprintf(stderr, "reentropy-bench: %s (%s): %s\n", name.c_str(), gpu::backend_name(backends[k]),
                     err.describe().c_str());
        return kExitInput;
      }
      if (out != in) {
        std::fprintf(stderr, "reentropy-bench: %s: the %s backend's output differs from the input\n", name.c_str(),
                     gpu::backend_name(backends[k]));
        return kExitDiffers;
      }
    }
    int64_t mbs = 0;
    for (const Captured& s : slices) mbs += int64_t(s.recs.mbs.size());
    // The parse, approximately: a whole cpu run minus a cpu re-coding pass (medians).
    std::vector<double> whole, copy;
    for (int r = 0; r < warmup + repeats; ++r) {
      avc::Error err;
      avc::RecoderOptions o = base;
      const auto t0 = Clock::now();
      avc::reentropy_stream(in.data(), in.size(), out, nullptr, err, nullptr, o);
      if (r >= warmup) whole.push_back(us_since(t0));
    }
    // memcpy of the records' bytes.
    std::vector<gpuec_mb> src(size_t(std::max<int64_t>(mbs, 1))), dst(src.size());
    for (int r = 0; r < warmup + repeats; ++r) {
      const auto t0 = Clock::now();
      std::memcpy(dst.data(), src.data(), src.size() * sizeof(gpuec_mb));
      if (r >= warmup) copy.push_back(us_since(t0));
    }
    std::vector<uint8_t> want, got;
    std::string line;
    char buf[256];
    double cpu_us = 0;
    for (size_t k = 0; k < backends.size(); ++k) {
      std::vector<double> t, t_fill;
      for (int r = 0; r < warmup + repeats; ++r) {
        std::string why;
        double fill_us = 0;
        const auto t0 = Clock::now();
        const bool ok = recode(*recoders[k], slices, k == 0 ? &want : &got, &fill_us, &why);
        const double us = us_since(t0);
        if (!ok) {
          std::fprintf(stderr, "reentropy-bench: %s (%s): %s\n", name.c_str(), gpu::backend_name(backends[k]),
                       why.c_str());
          return kExitInput;
        }
        if (k > 0 && got != want) {
          std::fprintf(stderr, "reentropy-bench: %s: the %s backend's re-coding differs from cpu's\n", name.c_str(),
                       gpu::backend_name(backends[k]));
          return kExitDiffers;
        }
        if (r >= warmup) {
          t.push_back(us);
          t_fill.push_back(fill_us);
        }
      }
      const double med = gpuec_bench::median(t);
      if (k == 0) cpu_us = med;
      total_us[k] += med;
      const char* bn = gpu::backend_name(backends[k]);
      std::snprintf(buf, sizeof buf, " %s_us=%.1f %s_fill_us=%.1f %s_mbps=%.3f %s_x=%.2f", bn, med, bn,
                    gpuec_bench::median(t_fill), bn, double(mbs) / med, bn, cpu_us / med);
      line += buf;
    }
    total_mbs += mbs;
    const double parse_us = std::max(0.0, gpuec_bench::median(whole) - cpu_us);
    std::printf("stream %s mbs=%lld slices=%zu parse_us=%.1f copy_mbps=%.1f%s\n", name.c_str(),
                static_cast<long long>(mbs), slices.size(), parse_us, double(mbs) / gpuec_bench::median(copy),
                line.c_str());
    std::fflush(stdout);
  }
  std::printf("total streams=%zu mbs=%lld", paths.size(), static_cast<long long>(total_mbs));
  for (size_t k = 0; k < backends.size(); ++k)
    std::printf(" %s_us=%.1f %s_mbps=%.3f %s_x=%.2f", gpu::backend_name(backends[k]), total_us[k],
                gpu::backend_name(backends[k]), double(total_mbs) / total_us[k], gpu::backend_name(backends[k]),
                total_us[0] / total_us[k]);
  std::printf("\n");
  return kExitOk;
}
