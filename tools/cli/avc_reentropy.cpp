// avc-reentropy: compressed-domain re-entropy of an H.264 baseline CAVLC stream (issue 6; avc/reentropy.h).
// Every slice is parsed to its macroblock records and skeleton, its residual is coded again by the entropy
// stage, and the stream is written back; for a stream coded and escaped as the standard prescribes the
// output equals the input byte for byte.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <cerrno>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "avc/reentropy.h"
#include "gpu/backend.h"

namespace {

constexpr int kExitOk = 0, kExitUsage = 1, kExitInput = 2, kExitDiffers = 3;

void usage(FILE* f) {
  std::fprintf(f,
               "usage: avc-reentropy [options] IN.264 OUT.264\n"
               "\n"
               "Parses every slice of the H.264 Annex B stream IN (baseline profile, CAVLC) down to its macroblock\n"
               "records and skeleton, codes the residual again with gpuec's entropy stage and writes the stream to\n"
               "OUT ('-': standard output). Parameter sets, SEI and all other NAL units are copied unchanged.\n"
               "Slice groups (FMO), arbitrary slice order and redundant slices are supported.\n"
               "\n"
               "options:\n"
               "  --backend NAME      the frame coder to code with (many pictures per submission):\n"
               "                        cpu   on the CPU (default);\n"
               "                        cuda  the CAVLCU kernel and the GPU slice assembly (exit 2 when no GPU\n"
               "                              or no CUDA in this build);\n"
               "                        auto  cuda when a GPU is usable, else cpu.\n"
               "                      Every backend writes the same bytes.\n"
               "  --device N          CUDA device ordinal (cuda; default 0).\n"
               "  --batch-mbs N       macroblocks re-coded per batch (default 65536: max(1, N / picture size)\n"
               "                      pictures per submission).\n"
               "  --check             exit 3 when OUT differs from IN (it does when IN was not coded or escaped\n"
               "                      as the standard prescribes; the summary says where).\n"
               "  -q, --quiet         no summary line on stderr (errors are still printed).\n"
               "  -h, --help          this text.\n"
               "\n"
               "The summary (stderr) gives NAL units, pictures, slices (redundant ones), macroblocks, the residual\n"
               "bits re-coded and the time of the whole run (reading, parsing, re-coding, writing) in MB/s; the\n"
               "re-coding alone is measured by reentropy-bench (docs/benchmarks.md).\n"
               "\n"
               "exit codes: 0 ok; 1 usage error; 2 input/output error, a stream that is not baseline CAVLC or is\n"
               "damaged (the message names the NAL unit, its byte offset and the macroblock), or a backend that\n"
               "is not available or failed; 3 with --check, the output differs from the input.\n");
}

bool read_all(const std::string& path, std::vector<uint8_t>* out) {
  if (path == "-") {
    out->assign(std::istreambuf_iterator<char>(std::cin.rdbuf()), std::istreambuf_iterator<char>());
    return true;
  }
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  out->assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  return !f.bad();
}

}  // namespace

int main(int argc, char** argv) {
  std::string backend = "cpu", in_path, out_path;
  avc::RecoderOptions opt;
  bool check = false, quiet = false;
  std::vector<std::string> pos;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      usage(stdout);
      return kExitOk;
    } else if (a == "--backend" && i + 1 < argc) {
      backend = argv[++i];
    } else if ((a == "--device" || a == "--batch-mbs") && i + 1 < argc) {
      char* end = nullptr;
      errno = 0;
      const long v = std::strtol(argv[++i], &end, 10);
      if (errno || !end || *end || v < (a == "--device" ? 0 : 1) || v > (1L << 22)) {
        std::fprintf(stderr, "avc-reentropy: %s '%s': not a number in range\n", a.c_str(), argv[i]);
        return kExitUsage;
      }
      (a == "--device" ? opt.device : opt.batch_mbs) = static_cast<int>(v);
    } else if (a == "--check") {
      check = true;
    } else if (a == "-q" || a == "--quiet") {
      quiet = true;
    } else if (a.size() > 1 && a[0] == '-' && a != "-") {
      std::fprintf(stderr, "avc-reentropy: unknown option '%s'\n", a.c_str());
      usage(stderr);
      return kExitUsage;
    } else {
      pos.push_back(a);
    }
  }
  if (pos.size() != 2) {
    usage(stderr);
    return kExitUsage;
  }
  if (!gpu::parse_backend(backend, &opt.backend)) {
    std::fprintf(stderr, "avc-reentropy: --backend '%s': use cpu, cuda or auto\n", backend.c_str());
    return kExitUsage;
  }
  in_path = pos[0];
  out_path = pos[1];
  std::vector<uint8_t> in, out;
  if (!read_all(in_path, &in)) {
    std::fprintf(stderr, "avc-reentropy: cannot read %s: %s\n", in_path.c_str(), std::strerror(errno));
    return kExitInput;
  }
  const auto t0 = std::chrono::steady_clock::now();
  avc::Error err;
  avc::ReentropyStats st;
  if (!avc::reentropy_stream(in.data(), in.size(), out, &st, err, nullptr, opt)) {
    std::fprintf(stderr, "avc-reentropy: %s: %s\n", in_path.c_str(), err.describe().c_str());
    return kExitInput;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  FILE* f = out_path == "-" ? stdout : std::fopen(out_path.c_str(), "wb");
  if (!f || std::fwrite(out.data(), 1, out.size(), f) != out.size() || (f != stdout && std::fclose(f) != 0)) {
    std::fprintf(stderr, "avc-reentropy: cannot write %s: %s\n", out_path.c_str(), std::strerror(errno));
    return kExitInput;
  }
  const bool same = out == in;
  if (!quiet)
    std::fprintf(stderr,
                 "avc-reentropy: %s: %lld NAL units, %lld pictures, %lld slices (%lld redundant), %lld macroblocks "
                 "(%lld not skipped), %lld residual bits; %s; %.3f s, %.2f M MB/s (%s)%s%s\n",
                 in_path.c_str(), static_cast<long long>(st.nal_units), static_cast<long long>(st.pictures),
                 static_cast<long long>(st.slices), static_cast<long long>(st.redundant_slices),
                 static_cast<long long>(st.macroblocks), static_cast<long long>(st.coded_macroblocks),
                 static_cast<long long>(st.residual_bits), same ? "output identical to the input" : "output DIFFERS",
                 s, s > 0 ? double(st.macroblocks) / s / 1e6 : 0.0, backend.c_str(),
                 st.recoded_differs ? "; slices whose re-coded RBSP differs: " : "",
                 st.recoded_differs ? std::to_string(st.recoded_differs).c_str() : "");
  if (!same && st.nonstandard_escaping && !quiet)
    std::fprintf(stderr, "avc-reentropy: %lld NAL units of the input are not escaped as 7.4.1 prescribes\n",
                 static_cast<long long>(st.nonstandard_escaping));
  return check && !same ? kExitDiffers : kExitOk;
}
