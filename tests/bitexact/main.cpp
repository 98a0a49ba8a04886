// gpuec-bitexact: every CPU/GPU twin pair of the project, checked bit for bit on chosen and random inputs
// (tests/bitexact/harness.h). Run with --help for the options.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gpu/device.h"
#include "harness.h"
#include "test_seed.h"

namespace {

const char kUsage[] =
    "usage: gpuec-bitexact [--seed N] [--filter SUBSTR]... [--list] [--bench [--repeats N] [--warmup N]]\n"
    "                      [--self-test bit|canary] [--verbose]\n"
    "\n"
    "Checks every CPU/GPU twin pair of gpuec bit for bit (in the spirit of dav1d's checkasm): the GPU twin\n"
    "against the CPU twin on chosen edge cases (sizes 1, tile - 1, tile, tile + 1, many tiles; empty,\n"
    "all-zero and maximal inputs) and random inputs, outputs canary-filled first; and the CPU twin against\n"
    "an independent oracle (a plain definition, a decoder round trip, the slice coder). Without a GPU (or\n"
    "in a build without CUDA) the GPU twins are skipped, said once, and the CPU twins are still checked.\n"
    "\n"
    "  --seed N            seed of every random input (default: GPUEC_SEED, else random); printed at the start.\n"
    "                      With the same seed and --filter a case gets the same input again.\n"
    "  --filter SUBSTR     run only the pairs whose name contains SUBSTR (may be repeated: any of them).\n"
    "  --list              list the pairs (name, twins, oracle) and exit.\n"
    "  --bench             after the checks, time both twins of each pair (warm-up, then the median of the\n"
    "                      repeats) and print the GPU/CPU time ratio.\n"
    "  --repeats N         timed runs per twin (default 15); --warmup N: untimed runs first (default 3).\n"
    "  --self-test MODE    plant a bug in every check, as a broken twin would: 'bit' flips one bit of the\n"
    "                      first output compared, 'canary' overwrites one byte past the first output checked.\n"
    "                      Every check must then report a MISMATCH (CTest bitexact_self_test).\n"
    "  --verbose           one line per case.\n"
    "  -h, --help          this text.\n"
    "\n"
    "A mismatch prints a line starting with MISMATCH: the pair, which side (cpu twin vs oracle, or gpu twin\n"
    "vs cpu twin), the case, the first differing bit (byte offset, bit from the MSB, expected and actual\n"
    "byte) and the seed with the command that replays it.\n"
    "exit status: 0 every check passed; 1 a mismatch; 2 usage error.\n";

bool parse_int(const char* s, int lo, int hi, int* out) {
  if (!s || !*s) return false;
  char* end = nullptr;
  const long v = std::strtol(s, &end, 10);
  if (*end || v < lo || v > hi) return false;
  *out = static_cast<int>(v);
  return true;
}

int usage_error(const std::string& msg) {
  std::fprintf(stderr, "gpuec-bitexact: %s (--help for the options)\n", msg.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  bitexact::Options opt;
  std::vector<std::string> filters;
  bool list = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* name) -> const char* {
      const std::string eq = std::string(name) + "=";
      if (a.rfind(eq, 0) == 0) return argv[i] + eq.size();
      if (i + 1 < argc) return argv[++i];
      return nullptr;
    };
    auto is = [&](const char* name) { return a == name || a.rfind(std::string(name) + "=", 0) == 0; };
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (is("--seed")) {
      const char* v = value("--seed");
      uint32_t s;
      if (!gpuec_test::parse_seed(v, &s)) return usage_error("--seed wants a number 0..4294967295");
    } else if (is("--filter")) {
      const char* v = value("--filter");
      if (!v) return usage_error("--filter wants a substring");
      filters.push_back(v);
    } else if (a == "--list") {
      list = true;
    } else if (a == "--bench") {
      opt.bench = true;
    } else if (is("--repeats")) {
      if (!parse_int(value("--repeats"), 1, 100000, &opt.repeats)) return usage_error("--repeats wants 1..100000");
    } else if (is("--warmup")) {
      if (!parse_int(value("--warmup"), 0, 100000, &opt.warmup)) return usage_error("--warmup wants 0..100000");
    } else if (is("--self-test")) {
      const char* v = value("--self-test");
      if (v && std::strcmp(v, "bit") == 0) opt.self_test = bitexact::SelfTest::kBit;
      else if (v && std::strcmp(v, "canary") == 0) opt.self_test = bitexact::SelfTest::kCanary;
      else return usage_error("--self-test wants bit or canary");
    } else if (a == "--verbose" || a == "-v") {
      opt.verbose = true;
    } else {
      return usage_error("unknown argument '" + a + "'");
    }
  }
  if (!gpuec_test::seed_from_args(argc, argv, &opt.seed)) return usage_error("bad seed (--seed or GPUEC_SEED)");

  std::vector<bitexact::Pair> pairs;
  bitexact::register_vle_pairs(pairs);
  bitexact::register_cavlc_pairs(pairs);
  bitexact::register_canny_pairs(pairs);
  bitexact::register_gpu_pairs(pairs);
  std::vector<const bitexact::Pair*> chosen;
  for (const auto& p : pairs) {
    bool match = filters.empty();
    for (const auto& f : filters) match = match || std::strstr(p.name, f.c_str()) != nullptr;
    if (match) chosen.push_back(&p);
  }
  if (list) {
    for (const auto* p : chosen)
      std::printf("%-16s %s%s; cpu twin checked against %s\n", p->name, p->twins,
                  p->gpu ? "" : " (GPU twin not in this build)", p->oracle_description);
    return 0;
  }
  if (chosen.empty()) return usage_error("no pair matches the filter (--list shows them)");

  std::printf("gpuec-bitexact: seed %u (rerun: gpuec-bitexact --seed %u)\n", opt.seed, opt.seed);
  std::string why;
  if (!gpu::built_with_cuda()) {
    why = "this build has no CUDA";
  } else if (gpu::device_count(&why) > 0) {
    opt.gpu = true;
  }
  if (opt.gpu)
    std::printf("gpuec-bitexact: GPU %s: GPU twins against CPU twins, CPU twins against oracles\n",
                gpu::device_description().c_str());
  else
    std::printf("gpuec-bitexact: GPU twins SKIPPED (%s); the CPU twins are checked against their oracles\n",
                why.c_str());
  if (opt.self_test != bitexact::SelfTest::kNone)
    std::printf("gpuec-bitexact: self-test: a %s is planted in every check; each must report a MISMATCH\n",
                opt.self_test == bitexact::SelfTest::kBit ? "flipped output bit" : "write past the output");
  std::fflush(stdout);

  int failed = 0;
  for (const auto* p : chosen) {
    std::string line;
    bool pair_failed = false;
    if (p->oracle) {
      bitexact::Context ctx(opt, p->name, "cpu twin vs oracle");
      p->oracle(ctx);
      pair_failed |= ctx.failed();
      line += "cpu twin vs oracle " + std::to_string(ctx.cases()) + " cases";
    }
    if (!line.empty()) line += "; ";
    if (!p->gpu) {
      line += "gpu twin not built";
    } else if (!opt.gpu) {
      line += "gpu twin skipped (no GPU)";
    } else {
      bitexact::Context ctx(opt, p->name, "gpu twin vs cpu twin");
      p->gpu(ctx);
      pair_failed |= ctx.failed();
      line += "gpu twin vs cpu twin " + std::to_string(ctx.cases()) + " cases";
    }
    failed += pair_failed;
    std::printf("%s %-16s %s\n", pair_failed ? "FAIL" : "ok  ", p->name, line.c_str());
    std::fflush(stdout);
  }

  if (opt.bench && failed == 0) {
    std::printf("\nbench (median of %d runs after %d warm-up runs; GPU: device-resident data, synchronized)\n",
                opt.repeats, opt.warmup);
    for (const auto* p : chosen) {
      if (!p->bench) continue;
      const bitexact::BenchResult r = p->bench(opt);
      char cpu[32] = "-", gpu_s[32] = "skipped", ratio[64] = "";
      if (r.cpu_us >= 0) std::snprintf(cpu, sizeof cpu, "%.1f us", r.cpu_us);
      if (r.gpu_us >= 0) std::snprintf(gpu_s, sizeof gpu_s, "%.1f us", r.gpu_us);
      if (r.cpu_us > 0 && r.gpu_us > 0)
        std::snprintf(ratio, sizeof ratio, "  gpu/cpu %.4f (%.1fx)", r.gpu_us / r.cpu_us, r.cpu_us / r.gpu_us);
      std::printf("  %-16s %-40s cpu %12s  gpu %12s%s\n", p->name, r.input.c_str(), cpu, gpu_s, ratio);
      std::fflush(stdout);
    }
  }

  std::printf("gpuec-bitexact: %zu pairs, %zu ok, %d failed%s; seed %u\n", chosen.size(), chosen.size() - failed,
              failed, opt.gpu ? "" : " (GPU twins skipped)", opt.seed);
  return failed ? 1 : 0;
}
