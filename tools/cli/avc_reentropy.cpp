// avc-reentropy: compressed-domain re-entropy of an H.264 baseline CAVLC stream (issue 6; avc/reentropy.h).
// Every slice is parsed to its macroblock records and skeleton, its residual is coded again by the entropy
// stage, and the stream is written back; for a stream coded and escaped as the standard prescribes the
// output equals the input byte for byte.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <cerrno>
#include <iostream>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <thread>
#include <vector>

#include "avc/reentropy.h"
#include "cavlc/frame_coder.h"
#include "cli.h"
#include "files.h"
#include "gpu/backend.h"
#include "gpu/device.h"

namespace {

constexpr int kExitOk = 0, kExitUsage = 1, kExitInput = 2, kExitDiffers = 3;
constexpr char kHint[] = "(avc-reentropy --help for usage)";

unsigned default_threads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n ? n : 1;
}

void usage(FILE* f) {
  std::fprintf(f,
               "usage: avc-reentropy [options] IN.264 OUT.264\n"
               "       avc-reentropy [options] --out-dir DIR IN.264...\n"
               "\n"
               "Parses every slice of the H.264 Annex B stream IN (baseline profile, CAVLC) down to its macroblock\n"
               "records and skeleton, codes the residual again with gpuec's entropy stage and writes the stream to\n"
               "OUT ('-': standard output). Parameter sets, SEI and all other NAL units are copied unchanged.\n"
               "IN '-' is standard input. OUT is written through a temporary file renamed onto it at the end (a\n"
               "failure or an interrupt leaves the old OUT intact); a device or FIFO is written directly; OUT the\n"
               "same file as IN is refused.\n"
               "Slice groups (FMO), arbitrary slice order and redundant slices are supported.\n"
               "With --out-dir, every IN is re-coded in turn in one process, to DIR/NAME (NAME: the last part of\n"
               "IN's path; two INs with the same NAME are refused): with cuda the GPU, once started, codes\n"
               "for all of them (one CUDA start). A stream that fails is reported and the others are still\n"
               "written.\n"
               "\n"
               "options:\n"
               "  --backend NAME      the frame coder to code with (many pictures per submission):\n"
               "                        cpu   on the CPU (default);\n"
               "                        cuda  the CAVLCU kernel and the GPU slice assembly (exit 2 when no GPU\n"
               "                              or no CUDA in this build). With --threads N > 1 the CPU codes\n"
               "                              while the GPU is not ready: the GPU's context and buffers are\n"
               "                              made in the background once the work left (at the workers'\n"
               "                              measured rate) outlasts what they cost to make and tear down\n"
               "                              (0.3 s), and from then on the GPU codes every batch it has a\n"
               "                              free coder for. A stream the CPU finishes first waits only\n"
               "                              for the check that a GPU is there (about 0.1 s), which a\n"
               "                              process of its own makes from the start (it may outlive\n"
               "                              this one by the driver's teardown, about 0.1 s);\n"
               "                        auto  cuda when a GPU is usable, else cpu. With --threads N > 1 the\n"
               "                              GPU is looked for only when the work left is worth it, so a\n"
               "                              short stream never touches the CUDA driver.\n"
               "                      Every backend writes the same bytes.\n"
               "  --device N          CUDA device ordinal (cuda; default 0).\n"
               "  --batch-mbs N       macroblocks re-coded per batch (default 65536: max(1, N / picture size)\n"
               "                      pictures per submission).\n"
               "  --threads N         threads that parse slices and code batches (default: the number of cores,\n"
               "                      here %u; 1: parse and code on one thread). Every N writes the same bytes.\n"
               "                      Memory: up to 1.5 N + 2 pictures in flight, about 9 MB each at 1080p, and\n"
               "                      the input and output streams (a 32 MB 1080p stream: 350 MB with 16).\n"
               "  --stats             one more stderr line, also with -q: avc-reentropy-stats: in_bytes= macroblocks=\n"
               "                      seconds= in_MB_per_s= mb_per_s= threads= backend= threaded= (read to write;\n"
               "                      threaded=0: the stream went to the one-thread path) cpu_batches= cpu_mbs=\n"
               "                      cuda_batches= cuda_mbs= (batches and macroblocks each backend coded; 0 on\n"
               "                      the one-thread path) read_s= recode_s= write_s= (reading IN; parsing and\n"
               "                      re-coding; writing OUT, its fsync and rename) headers_s= (the threaded\n"
               "                      path: when every header was read, from the start of recode) parse_s=\n"
               "                      code_s= (the threaded path: the workers' parsing and coding, summed).\n"
               "                      With --out-dir, one such line per stream, then avc-reentropy-stats-total:\n"
               "                      streams= failed= in_bytes= macroblocks= seconds= in_MB_per_s= mb_per_s=\n"
               "                      (seconds: the whole run, from the first read to the last write).\n"
               "  --out-dir DIR       many INs, each written to DIR/NAME (above); DIR must exist.\n"
               "  --check             exit 3 when OUT differs from IN (it does when IN was not coded or escaped\n"
               "                      as the standard prescribes; the summary says where).\n"
               "  -q, --quiet         no summary line on stderr (errors are still printed).\n"
               "  -h, --help          this text.\n"
               "\n"
               "The summary (stderr) gives NAL units, pictures, slices (redundant ones), macroblocks, the residual\n"
               "bits re-coded and the time of the whole run, read to write (reading IN, parsing, re-coding, writing\n"
               "OUT), as input MB/s and millions of macroblocks per second; the re-coding alone is measured by\n"
               "reentropy-bench, the whole tool by tools/bench/bench-reentropy-tool.sh (docs/benchmarks.md).\n"
               "\n"
               "exit codes: 0 ok; 1 usage error; 2 input/output error, a stream that is not baseline CAVLC or is\n"
               "damaged (the message names the NAL unit, its byte offset and the macroblock), or a backend that\n"
               "is not available or failed; 3 with --check, the output differs from the input. With --out-dir:\n"
               "2 when any stream failed, else 3 when any output differs (--check), else 0.\n",
               default_threads());
}

int run(int argc, char** argv) {
  std::string backend = "cpu", out_dir;
  avc::RecoderOptions opt;
  bool check = false, quiet = false, stats = false;
  opt.threads = int(std::min(default_threads(), 1024u));
  opt.abandon_gpu_start = true;  // main() ends by std::_Exit when a start was left running
  std::vector<std::string> pos;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      usage(stdout);
      return kExitOk;
    } else if ((a == "--backend" || a == "--device" || a == "--batch-mbs" || a == "--threads" || a == "--out-dir") &&
               i + 1 >= argc) {
      std::fprintf(stderr, "avc-reentropy: %s needs a value\n%s\n", a.c_str(), kHint);
      return kExitUsage;
    } else if (a == "--backend") {
      backend = argv[++i];
    } else if (a == "--device" || a == "--batch-mbs" || a == "--threads") {
      char* end = nullptr;
      errno = 0;
      const long v = std::strtol(argv[++i], &end, 10);
      const long hi = a == "--threads" ? 1024 : (1L << 22);
      if (errno || !end || *end || end == argv[i] || v < (a == "--device" ? 0 : 1) || v > hi) {
        std::fprintf(stderr, "avc-reentropy: %s '%s': not a number in range (%s..%ld)\n%s\n", a.c_str(), argv[i],
                     a == "--device" ? "0" : "1", hi, kHint);
        return kExitUsage;
      }
      (a == "--device" ? opt.device : a == "--threads" ? opt.threads : opt.batch_mbs) = static_cast<int>(v);
    } else if (a == "--out-dir") {
      out_dir = argv[++i];
    } else if (a == "--stats") {
      stats = true;
    } else if (a == "--check") {
      check = true;
    } else if (a == "-q" || a == "--quiet") {
      quiet = true;
    } else if (a.size() > 1 && a[0] == '-' && a != "-") {
      std::fprintf(stderr, "avc-reentropy: unknown option '%s'\n%s\n", a.c_str(), kHint);
      return kExitUsage;
    } else {
      pos.push_back(a);
    }
  }
  if (!gpu::parse_backend(backend, &opt.backend)) {
    std::fprintf(stderr, "avc-reentropy: --backend '%s': use cpu, cuda or auto\n", backend.c_str());
    return kExitUsage;
  }
  // (IN, OUT) pairs
  std::vector<std::pair<std::string, std::string>> jobs;
  if (out_dir.empty()) {
    if (pos.size() != 2) {
      std::fprintf(stderr, "avc-reentropy: %s\n%s\n",
                   pos.empty() ? "no IN and OUT given" : pos.size() == 1 ? "no OUT given" : "more than IN and OUT given",
                   kHint);
      return kExitUsage;
    }
    jobs.emplace_back(pos[0], pos[1]);
  } else {
    if (pos.empty()) {
      std::fprintf(stderr, "avc-reentropy: --out-dir: no IN given\n%s\n", kHint);
      return kExitUsage;
    }
    std::set<std::string> names;
    for (const std::string& in : pos) {
      const size_t slash = in.find_last_of('/');
      const std::string name = slash == std::string::npos ? in : in.substr(slash + 1);
      if (in == "-" || name.empty()) {
        std::fprintf(stderr, "avc-reentropy: --out-dir: '%s' names no file\n%s\n", in.c_str(), kHint);
        return kExitUsage;
      }
      if (!names.insert(name).second) {
        std::fprintf(stderr, "avc-reentropy: --out-dir: two inputs named '%s'\n%s\n", name.c_str(), kHint);
        return kExitUsage;
      }
      jobs.emplace_back(in, out_dir + "/" + name);
    }
  }

  auto seconds = [](std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  };
  // cuda: the device is checked in a process of its own, from now on, beside the reading and parsing; this
  // process initialises the CUDA driver only when a stream is long enough for the GPU (gpu/device.h).
  std::unique_ptr<gpu::DeviceCheck> device_check;
  if (opt.backend == gpu::Backend::kCuda && opt.threads > 1) {
    device_check.reset(new gpu::DeviceCheck(opt.device));
    opt.device_check = device_check.get();
  }
  avc::ReentropySession session(opt);
  const auto t_first = std::chrono::steady_clock::now();
  int failed = 0, differs = 0;
  size_t total_bytes = 0;
  long long total_mbs = 0;
  for (const auto& job : jobs) {
    const std::string& in_path = job.first;
    const std::string& out_path = job.second;
    files::InputBytes in;
    std::vector<uint8_t> out;
    std::string why;
    const auto t0 = std::chrono::steady_clock::now();
    if (!in.open(in_path, &why)) {
      std::fprintf(stderr, "avc-reentropy: %s\n", why.c_str());
      ++failed;
      continue;
    }
    const auto t_read = std::chrono::steady_clock::now();
    avc::Error err;
    avc::ReentropyStats st;
    if (!session.recode(in.data(), in.size(), out, &st, err)) {
      std::fprintf(stderr, "avc-reentropy: %s: %s\n", in_path.c_str(), err.describe().c_str());
      ++failed;
      continue;
    }
    const auto t_recode = std::chrono::steady_clock::now();
    files::Output o;
    if (!o.open(out_path, files::Output::Options{true, {in_path}}, &why) || !o.write(out.data(), out.size(), &why) ||
        !o.commit(&why)) {
      std::fprintf(stderr, "avc-reentropy: %s\n", why.c_str());
      ++failed;
      continue;
    }
    const auto t_end = std::chrono::steady_clock::now();
    const double s = seconds(t0, t_end);
    const double in_mb_s = s > 0 ? double(in.size()) / s / 1e6 : 0.0, mbs_s = s > 0 ? double(st.macroblocks) / s : 0.0;
    const bool same = out.size() == in.size() && std::memcmp(out.data(), in.data(), in.size()) == 0;
    differs += !same;
    total_bytes += in.size();
    total_mbs += static_cast<long long>(st.macroblocks);
    if (!quiet)
      std::fprintf(stderr,
                   "avc-reentropy: %s: %lld NAL units, %lld pictures, %lld slices (%lld redundant), %lld macroblocks "
                   "(%lld not skipped), %lld residual bits; %s; read to write %.3f s, %.1f MB/s in, %.2f M macroblocks/s "
                   "(%s, %d threads)%s%s\n",
                   in_path.c_str(), static_cast<long long>(st.nal_units), static_cast<long long>(st.pictures),
                   static_cast<long long>(st.slices), static_cast<long long>(st.redundant_slices),
                   static_cast<long long>(st.macroblocks), static_cast<long long>(st.coded_macroblocks),
                   static_cast<long long>(st.residual_bits), same ? "output identical to the input" : "output DIFFERS",
                   s, in_mb_s, mbs_s / 1e6, backend.c_str(), opt.threads,
                   st.recoded_differs ? "; slices whose re-coded RBSP differs: " : "",
                   st.recoded_differs ? std::to_string(st.recoded_differs).c_str() : "");
    if (!same && st.nonstandard_escaping && !quiet)
      std::fprintf(stderr, "avc-reentropy: %lld NAL units of the input are not escaped as 7.4.1 prescribes\n",
                   static_cast<long long>(st.nonstandard_escaping));
    if (stats)
      std::fprintf(stderr,
                   "avc-reentropy-stats: in_bytes=%zu macroblocks=%lld seconds=%.6f in_MB_per_s=%.3f mb_per_s=%.0f "
                   "threads=%d backend=%s threaded=%d cpu_batches=%lld cpu_mbs=%lld cuda_batches=%lld cuda_mbs=%lld "
                   "read_s=%.6f recode_s=%.6f write_s=%.6f headers_s=%.6f parse_s=%.6f code_s=%.6f\n",
                   in.size(), static_cast<long long>(st.macroblocks), s, in_mb_s, mbs_s, opt.threads, backend.c_str(),
                   st.threaded ? 1 : 0, static_cast<long long>(st.cpu_batches), static_cast<long long>(st.cpu_macroblocks),
                   static_cast<long long>(st.cuda_batches), static_cast<long long>(st.cuda_macroblocks),
                   seconds(t0, t_read), seconds(t_read, t_recode), seconds(t_recode, t_end), st.headers_seconds,
                   st.parse_seconds, st.code_seconds);
  }
  const double total_s = seconds(t_first, std::chrono::steady_clock::now());
  const double total_mb_s = total_s > 0 ? double(total_bytes) / total_s / 1e6 : 0.0;
  const double total_mbs_s = total_s > 0 ? double(total_mbs) / total_s : 0.0;
  if (!out_dir.empty() && !quiet)
    std::fprintf(stderr, "avc-reentropy: %zu streams (%d failed), %.3f s, %.1f MB/s in, %.2f M macroblocks/s\n",
                 jobs.size(), failed, total_s, total_mb_s, total_mbs_s / 1e6);
  if (!out_dir.empty() && stats)
    std::fprintf(stderr,
                 "avc-reentropy-stats-total: streams=%zu failed=%d in_bytes=%zu macroblocks=%lld seconds=%.6f "
                 "in_MB_per_s=%.3f mb_per_s=%.0f\n",
                 jobs.size(), failed, total_bytes, total_mbs, total_s, total_mb_s, total_mbs_s);
  return failed ? kExitInput : check && differs ? kExitDiffers : kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  files::remove_temporaries_on_signal();
  const int rc = cli::main_of("avc-reentropy", run, argc, argv, kExitUsage, kHint, kExitInput);
  // A GPU start the streams did not need is still running (RecoderOptions::abandon_gpu_start): the outputs
  // are written and committed; end without the exit handlers, which must not run beside it.
  if (cavlc::PendingCudaCoder::abandoned() > 0) {
    std::fflush(nullptr);
    std::_Exit(rc);
  }
  return rc;
}
