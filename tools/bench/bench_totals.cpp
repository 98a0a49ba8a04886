// gpuec-bench-totals: times cavlc::mb_totals, the check gpuec_mb_commit runs inside x264's macroblock
// loop, against its plain twin (the block-by-block total_coeff + level_overflow loop it replaced) on
// the coded (not skipped) records of real captures (cavlc/capture.h).
//
// Before timing, both must agree on every record (return value and all 27 totals). Two timings per
// capture, each the median of R runs after W warm-up runs, the twin and mb_totals alternating run by run:
//   stream: one pass over all coded records of the capture (records come from L2/L3 or memory);
//   hot:    the records in chunks of C; each chunk once untimed, then P timed passes over it (the
//           records are in L1, as in x264, which has just written the record it commits).
// Hot repeats the same few records, so branch predictors learn them: that flatters the twin's
// data-dependent loops more than mb_totals, whose flow depends only on kind and cbp.
// --raster times mb_totals on raster-order copies of the records (cavlc/mb.h GPUEC_COEF_RASTER, converted
// by tests/common/raster.h), checked against the twin on the scan-order originals; the twin still reads
// those (it knows scan order only), so in the stream timing the twin no longer warms the caches for
// mb_totals: compare raster stream times with care.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cavlc/cavlc.h"
#include "cavlc/slice.h"
#include "cavlc/capture.h"
#include "raster.h"
#include "totals_twin.h"
#include "bench_util.h"

namespace {

using Clock = std::chrono::steady_clock;

volatile unsigned g_sink;  // keeps the timed results alive

void usage(FILE* out) {
  std::fprintf(out,
               "usage: gpuec-bench-totals CAPTURE... [--repeats R] [--warmup W] [--chunk C] [--passes P] [--raster]\n"
               "\n"
               "CAPTURE  an uncompressed capture written by the stage (GPUEC_CAPTURE=FILE)\n"
               "  --repeats R  timed runs (default 21); the median is reported\n"
               "  --warmup W   untimed runs before them (default 3)\n"
               "  --chunk C    records per chunk of the hot timing (default 16, 13 KiB)\n"
               "  --passes P   timed passes per chunk of the hot timing (default 8)\n"
               "  --raster     mb_totals reads raster-order copies of the records (the twin the originals)\n"
               "\n"
               "Output: one line per capture (times in ns per coded macroblock, i.e. per commit call):\n"
               "  NAME coded_mbs= beyond_bound_mbs= overflow_mbs= stream_twin_ns= stream_ns=\n"
               "       hot_twin_ns= hot_ns= [order=raster]\n"
               "  beyond_bound_mbs: records with a coded |level| > kMaxSafeAbsLevel (exact check taken)\n"
               "Exit status: 0 ok, 1 usage, 2 unreadable capture, 3 mb_totals differs from its twin.\n");
}

using cavlc_test::mb_totals_twin;

// Whether some coded level of m lies beyond kMaxSafeAbsLevel (mb_totals then runs the exact check).
bool beyond_bound(const gpuec_mb& m) {
  const bool i16 = m.kind == GPUEC_MB_I16x16;
  const int cbp_chroma = m.cbp >> 4;
  const auto& c = m.u.coef;
  auto big = [](const int16_t* l, int n) {
    for (int i = 0; i < n; ++i)
      if (l[i] > cavlc::kMaxSafeAbsLevel || l[i] < -cavlc::kMaxSafeAbsLevel) return true;
    return false;
  };
  bool r = false;
  for (int b = 0; b < 16; ++b)
    if (i16 ? (m.cbp & 15) != 0 : ((m.cbp >> (b >> 2)) & 1)) r |= i16 ? big(c.luma[b] + 1, 15) : big(c.luma[b], 16);
  if (i16) r |= big(c.luma_dc, 16);
  if (cbp_chroma) r |= big(c.chroma_dc[0], 4) || big(c.chroma_dc[1], 4);
  if (cbp_chroma == 2)
    for (const auto& ac : c.chroma_ac) r |= big(ac + 1, 15);
  return r;
}

using gpuec_bench::median;

using TotalsFn = int (*)(const gpuec_mb&, uint8_t*);

unsigned pass(TotalsFn fn, const gpuec_mb* recs, size_t n) {
  unsigned sink = 0;
  uint8_t t[GPUEC_TC_COUNT];
  for (size_t i = 0; i < n; ++i) sink += static_cast<unsigned>(fn(recs[i], t)) + t[0] + t[15] + t[16] + t[26];
  return sink;
}

double ns_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
}

// ns per record of one stream run.
double run_stream(TotalsFn fn, const std::vector<gpuec_mb>& recs, unsigned& sink) {
  const auto t0 = Clock::now();
  sink += pass(fn, recs.data(), recs.size());
  return ns_since(t0) / static_cast<double>(recs.size());
}

// ns per record of one hot run.
double run_hot(TotalsFn fn, const std::vector<gpuec_mb>& recs, size_t chunk, int passes, unsigned& sink) {
  double ns = 0;
  for (size_t i = 0; i < recs.size(); i += chunk) {
    const size_t n = std::min(chunk, recs.size() - i);
    sink += pass(fn, recs.data() + i, n);
    const auto t0 = Clock::now();
    for (int p = 0; p < passes; ++p) sink += pass(fn, recs.data() + i, n);
    ns += ns_since(t0);
  }
  return ns / (static_cast<double>(recs.size()) * passes);
}

const char* base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return path.c_str() + (slash == std::string::npos ? 0 : slash + 1);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> paths;
  int repeats = 21, warmup = 3, passes = 8;
  size_t chunk = 16;
  bool raster = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](int lo) {
      if (i + 1 >= argc) return -1;
      const int v = std::atoi(argv[++i]);
      return v >= lo ? v : -1;
    };
    int v = 0;
    if (a == "--repeats" && (v = value(1)) > 0) repeats = v;
    else if (a == "--warmup" && (v = value(0)) >= 0) warmup = v;
    else if (a == "--chunk" && (v = value(1)) > 0) chunk = static_cast<size_t>(v);
    else if (a == "--passes" && (v = value(1)) > 0) passes = v;
    else if (a == "--raster") raster = true;
    else if (a == "-h" || a == "--help") { usage(stdout); return 0; }
    else if (!a.empty() && a[0] != '-') paths.push_back(a);
    else { usage(stderr); return 1; }
  }
  if (paths.empty()) {
    usage(stderr);
    return 1;
  }

  unsigned sink = 0;
  for (const std::string& path : paths) {
    std::vector<cavlc::CapturedSlice> slices;
    std::string err;
    if (!cavlc::read_capture(path, slices, err)) {
      std::fprintf(stderr, "gpuec-bench-totals: %s\n", err.c_str());
      return 2;
    }
    std::vector<gpuec_mb> recs;  // what gpuec_mb_commit sees: the coded records, in order
    for (const auto& s : slices)
      for (const gpuec_mb& m : s.recs)
        if (m.kind != GPUEC_MB_SKIP) recs.push_back(m);
    if (recs.empty()) {
      std::printf("%s coded_mbs=0\n", base_name(path));
      continue;
    }

    std::vector<gpuec_mb> raster_recs;  // with --raster, what mb_totals reads
    if (raster)
      for (const gpuec_mb& m : recs) raster_recs.push_back(cavlc_test::to_raster(m));
    const std::vector<gpuec_mb>& timed = raster ? raster_recs : recs;  // the same array as the twin's if scan

    size_t beyond = 0, overflows = 0;
    for (size_t i = 0; i < recs.size(); ++i) {
      uint8_t want[GPUEC_TC_COUNT], got[GPUEC_TC_COUNT];
      std::memset(want, 0xA5, sizeof want);
      std::memset(got, 0xA5, sizeof got);
      const int r_want = mb_totals_twin(recs[i], want), r_got = cavlc::mb_totals(timed[i], got);
      if (r_want != r_got || std::memcmp(want, got, sizeof want) != 0) {
        std::fprintf(stderr, "gpuec-bench-totals: %s: coded record %zu (mb_addr %d): mb_totals returns %d, "
                     "its twin %d, or the totals differ\n", path.c_str(), i, recs[i].mb_addr, r_got, r_want);
        return 3;
      }
      beyond += beyond_bound(recs[i]);
      overflows += r_want == 1;
    }

    std::vector<double> stream_twin, stream_new, hot_twin, hot_new;
    for (int r = 0; r < warmup + repeats; ++r) {
      const double st = run_stream(mb_totals_twin, recs, sink), sn = run_stream(cavlc::mb_totals, timed, sink);
      const double ht = run_hot(mb_totals_twin, recs, chunk, passes, sink);
      const double hn = run_hot(cavlc::mb_totals, timed, chunk, passes, sink);
      if (r < warmup) continue;
      stream_twin.push_back(st);
      stream_new.push_back(sn);
      hot_twin.push_back(ht);
      hot_new.push_back(hn);
    }
    std::printf("%s coded_mbs=%zu beyond_bound_mbs=%zu overflow_mbs=%zu stream_twin_ns=%.1f stream_ns=%.1f "
                "hot_twin_ns=%.1f hot_ns=%.1f%s\n",
                base_name(path), recs.size(), beyond, overflows, median(stream_twin), median(stream_new),
                median(hot_twin), median(hot_new), raster ? " order=raster" : "");
  }
  g_sink = sink;
  return 0;
}
