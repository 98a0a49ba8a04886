// gpuec-bench-stage-open: what opening the entropy stage costs a process (issue 17, many encoders on one GPU).
// One process: gpu::device_count (the driver's initialisation), then --stages N gpuec_stage_create calls with
// the cuda backend for a W x H macroblock frame (the first one also creates the process's CUDA context), then
// their destruction; each step's wall time. Run several copies at once to see how processes that open
// together slow each other down (tools/bench/bench-many-encoders.sh measures whole encodes).
// Output, one line: device_count_ms= first_stage_ms= more_stages_ms= (N-1 of them) destroy_ms= backend=
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_util.h"
#include "gpu/device.h"
#include "gpuec/stage.h"

namespace {
using Clock = std::chrono::steady_clock;

constexpr char kUsage[] = R"(usage: gpuec-bench-stage-open [--stages N] [--mb-width W] [--mb-height H]
Times a process's opening of N cuda entropy stages (default 16, 120 x 68 macroblocks: 1080p).
exit: 0 ok; 1 usage; 2 no usable cuda stage.
)";

bool int_arg(const char* s, int lo, int hi, int* v) {
  char* end = nullptr;
  const long x = std::strtol(s, &end, 10);
  if (!*s || *end || x < lo || x > hi) return false;
  *v = static_cast<int>(x);
  return true;
}
}  // namespace

int main(int argc, char** argv) {
  int stages = 16, w = 120, h = 68;
  for (int i = 1; i < argc; ++i) {
    const bool has = i + 1 < argc;
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (!std::strcmp(argv[i], "--stages") && has && int_arg(argv[i + 1], 1, 256, &stages)) {
      ++i;
    } else if (!std::strcmp(argv[i], "--mb-width") && has && int_arg(argv[i + 1], 1, 1024, &w)) {
      ++i;
    } else if (!std::strcmp(argv[i], "--mb-height") && has && int_arg(argv[i + 1], 1, 1024, &h)) {
      ++i;
    } else {
      std::fprintf(stderr, "gpuec-bench-stage-open: bad argument '%s'\n%s", argv[i], kUsage);
      return 1;
    }
  }
  auto t0 = Clock::now();
  std::string why;
  const int devices = gpu::device_count(&why);
  const double count_ms = gpuec_bench::ms_since(t0);
  if (devices < 1) {
    std::fprintf(stderr, "gpuec-bench-stage-open: %s\n", why.c_str());
    return 2;
  }
  std::vector<gpuec_stage*> st;
  std::vector<double> ms;
  for (int i = 0; i < stages; ++i) {
    char note[256];
    t0 = Clock::now();
    gpuec_stage* s = gpuec_stage_create(w, h, GPUEC_BACKEND_CUDA, 0, note, sizeof note);
    ms.push_back(gpuec_bench::ms_since(t0));
    if (!s || gpuec_stage_backend(s) != GPUEC_BACKEND_CUDA) {
      std::fprintf(stderr, "gpuec-bench-stage-open: stage %d is not cuda: %s\n", i, note);
      return 2;
    }
    st.push_back(s);
  }
  t0 = Clock::now();
  for (gpuec_stage* s : st) gpuec_stage_destroy(s);
  const double destroy_ms = gpuec_bench::ms_since(t0);
  double more = 0;
  for (size_t i = 1; i < ms.size(); ++i) more += ms[i];
  std::printf("device_count_ms=%.1f first_stage_ms=%.1f more_stages_ms=%.1f stages=%d destroy_ms=%.1f\n", count_ms, ms[0],
              more, stages, destroy_ms);
  return 0;
}
