// gudcanny: GUD-Canny edge detection of one image (canny/canny.h) from the command line.
// Options and exit codes: usage text below and canny/README.md ("gudcanny tool").
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "canny/canny.h"
#include "canny/canny_cpu.h"
#include "cli.h"
#include "files.h"
#include "images.h"
#include "json_string.h"
#ifdef GPUEC_HAVE_CANNY_CUDA
#include <cuda_runtime_api.h>

#include "canny/canny_cuda.h"
#endif
#include "clip.h"  // gpuec_sequences: the y4m reader (probe_local_clip, copy_y4m)

namespace {

constexpr int kExitOk = 0, kExitUsage = 1, kExitIo = 2;

#ifdef GPUEC_HAVE_PNG
#define GUDCANNY_INPUTS "binary PGM (P5, maxval 255), 8-bit grayscale PNG or YUV4MPEG2 (y4m, .y4m.xz)"
#else
#define GUDCANNY_INPUTS "binary PGM (P5, maxval 255) or YUV4MPEG2 (y4m, .y4m.xz); PNG: not built (no libpng)"
#endif

const char kUsage[] =
    "usage: gudcanny [options] IN OUT\n"
    "\n"
    "GUD-Canny (unsupervised, distributed Canny; canny/canny.h): Gaussian smoothing, gradient, non-maximum\n"
    "suppression, Medina-Carnicer thresholds chosen per 32-column strip, hysteresis per strip.\n"
    "\n"
    "  IN   " GUDCANNY_INPUTS "; '-': stdin.\n"
    "       The format is told from the first bytes. y4m: the luma plane of frame 0 (see --frame).\n"
    "  OUT  the edge map, binary PGM (P5, maxval 255) of the input's size: 255 edge, 0 not. '-': stdout.\n"
    "       OUT and the --json file are written through temporary files renamed onto them at the end (a\n"
    "       failure or an interrupt leaves the old files intact); devices and FIFOs are written directly;\n"
    "       an output that is the same file as IN is refused.\n"
    "\n"
    "options:\n"
    "  --backend cpu|cuda   cpu (default): canny::CpuDetector, the CPU twin's bytes (detect_edges_ref) on\n"
    "                       --threads threads. cuda: detect_edges_cuda on device 0 (bit-identical; in builds\n"
    "                       with CUDA only, else exit 2).\n"
    "  --threads N          threads of the cpu backend, 0..256 (default 0: every core); the same output for\n"
    "                       every N.\n"
    "  --sigma S            Gaussian standard deviation, 0.1..2.0 (default 1.0).\n"
    "  --step 0.01|0.03     standard candidate set: C_0.01 (300 pairs) or C_0.03 (36 pairs, default).\n"
    "  --candidates FILE    custom candidate set instead: one \"low high\" pair per line, each a decimal\n"
    "                       with two decimals in [0.01, 1.00], low < high (e.g. \"0.05 0.20\"); blank\n"
    "                       lines and lines starting with '#' are skipped; at most 4950 pairs.\n"
    "  --frame-level        one Medina-Carnicer pair for the whole image, hysteresis over the whole\n"
    "                       image (ThresholdMode::kFrame) instead of one per strip.\n"
    "  --fixed LOW,HIGH     classic Canny with a fixed pair (two decimals, 0.01 <= LOW <= HIGH <= 1.00),\n"
    "                       hysteresis over the whole image (kFixed); --step/--candidates are ignored.\n"
    "  --frame N            y4m input: use frame N (0-based, default 0).\n"
    "  --json FILE          write a JSON report to FILE ('-': stdout): width, height, sigma, mode,\n"
    "                       candidate set, the pair of every strip (low, high as decimals, found) and\n"
    "                       the edge pixel count.\n"
    "  -q, --quiet          no summary line on stderr (errors are still printed).\n"
    "  -h, --help           this text.\n"
    "\n"
    "exit codes: 0 ok; 1 usage error (unknown option, bad value); 2 input/output error (unreadable,\n"
    "truncated or unsupported input, unwritable output, bad candidate file, backend not available).\n";

using cli::fail;
using images::check_size;
using images::Image;
using images::parse_hundredths;

std::vector<uint8_t> read_prefix(const std::string& path, size_t n) {
  const cli::File f = cli::open_for_reading(path, kExitIo);
  std::vector<uint8_t> buf(n);
  buf.resize(std::fread(buf.data(), 1, n, f.get()));
  return buf;
}

void write_pgm(files::Output& out, int width, int height, const std::vector<uint8_t>& pixels) {
  const std::string head = "P5\n" + std::to_string(width) + " " + std::to_string(height) + "\n255\n";
  std::string why;
  if (!out.write(head.data(), head.size(), &why) || !out.write(pixels.data(), pixels.size(), &why))
    fail(kExitIo, why);
}

// ---------------------------------------------------------------- y4m (gpuec_sequences reader)

// The luma plane of frame `frame`: the header and frame checks are the sequences library's (8-bit 4:2:0;
// .y4m.xz through xz -dc); copy_y4m hands over the header, then FRAME line and frame data in turn.
Image read_y4m(const std::string& path, long frame) {
  try {
    const gpuec::clip::LocalClip clip = gpuec::clip::probe_local_clip(path);
    check_size(path, clip.width, clip.height);
    if (clip.frames >= 0 && frame >= clip.frames)
      fail(kExitIo, path + ": has " + std::to_string(clip.frames) + " frames (0.." + std::to_string(clip.frames - 1) +
                        "), --frame " + std::to_string(frame) + " is out of range");
    Image im;
    im.width = clip.width;
    im.height = clip.height;
    im.format = "y4m";
    const size_t luma = size_t(im.width) * im.height;
    long piece = 0;
    gpuec::clip::copy_y4m(path, frame + 1, [&](const void* data, size_t size) {
      // piece 0: header; 2k + 1: FRAME line of frame k; 2k + 2: data of frame k
      if (piece == 2 * frame + 2 && size >= luma) {
        const uint8_t* p = static_cast<const uint8_t*>(data);
        im.pixels.assign(p, p + luma);
      }
      ++piece;
    });
    if (im.pixels.size() != luma) fail(kExitIo, path + ": frame " + std::to_string(frame) + " not read");
    return im;
  } catch (const gpuec::clip::Error& e) {
    fail(kExitIo, e.what());
  }
}

Image read_image(const std::string& path, long frame, bool frame_given) {
  const std::vector<uint8_t> head = read_prefix(path, 9);
  const std::string h(head.begin(), head.end());
  if (h.compare(0, 9, "YUV4MPEG2") == 0) return read_y4m(path, frame);
  if (head.size() >= 6 && head[0] == 0xFD && h.compare(1, 4, "7zXZ") == 0 && head[5] == 0)  // xz: .y4m.xz
    return read_y4m(path, frame);
  if (frame_given) fail(kExitUsage, "--frame applies to y4m input only");
  if (head.size() >= 2 && head[0] == 'P') return images::read_pgm(cli::open_for_reading(path, kExitIo).get(), path);
  if (head.size() >= 4 && head[0] == 0x89 && h.compare(1, 3, "PNG") == 0) {
#ifdef GPUEC_HAVE_PNG
    return images::read_png(cli::open_for_reading(path, kExitIo).get(), path);
#else
    fail(kExitIo, path + ": PNG input is not available in this build (no libpng): convert it to PGM");
#endif
  }
  if (head.empty()) fail(kExitIo, path + ": empty file");
  fail(kExitIo, path + ": unknown format (expected " GUDCANNY_INPUTS ")");
}

// ---------------------------------------------------------------- options

std::string decimal(int hundredths) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%d.%02d", hundredths / 100, hundredths % 100);
  return buf;
}

struct Args {
  std::string backend = "cpu";
  int threads = 0;
  float sigma = 1.0f;
  int step = 3;
  std::string candidates_file;
  bool frame_level = false;
  bool fixed = false;
  int fixed_low = 0, fixed_high = 0;
  long frame = 0;
  bool frame_given = false;
  std::string json;
  bool quiet = false;
  std::string in, out;
};

Args parse_args(int argc, char** argv) {
  Args a;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) fail(kExitUsage, arg + " needs a value");
      return argv[++i];
    };
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(kExitOk);
    } else if (arg == "-q" || arg == "--quiet") {
      a.quiet = true;
    } else if (arg == "--backend") {
      a.backend = value();
      if (a.backend != "cpu" && a.backend != "cuda") fail(kExitUsage, "--backend: cpu or cuda, got \"" + a.backend + "\"");
    } else if (arg == "--threads") {
      const std::string v = value();
      char* end = nullptr;
      const long t = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || t < 0 || t > canny::CpuDetector::kMaxCpuThreads)
        fail(kExitUsage, "--threads: an integer in 0.." + std::to_string(canny::CpuDetector::kMaxCpuThreads) +
                             " (0: every core), got \"" + v + "\"");
      a.threads = int(t);
    } else if (arg == "--sigma") {
      const std::string v = value();
      char* end = nullptr;
      const double s = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !(s >= canny::kMinSigma && s <= canny::kMaxSigma))
        fail(kExitUsage, "--sigma: a number in 0.1..2.0, got \"" + v + "\"");
      a.sigma = float(s);
    } else if (arg == "--step") {
      const std::string v = value();
      if (v == "0.01") a.step = 1;
      else if (v == "0.03") a.step = 3;
      else fail(kExitUsage, "--step: 0.01 or 0.03, got \"" + v + "\"");
    } else if (arg == "--candidates") {
      a.candidates_file = value();
    } else if (arg == "--frame-level") {
      a.frame_level = true;
    } else if (arg == "--fixed") {
      const std::string v = value();
      const size_t comma = v.find(',');
      const int low = comma == std::string::npos ? -1 : parse_hundredths(v.substr(0, comma));
      const int high = comma == std::string::npos ? -1 : parse_hundredths(v.substr(comma + 1));
      if (low < 0 || high < 0 || low > high)
        fail(kExitUsage, "--fixed: LOW,HIGH with two decimals each, 0.01 <= LOW <= HIGH <= 1.00, got \"" + v + "\"");
      a.fixed = true;
      a.fixed_low = low;
      a.fixed_high = high;
    } else if (arg == "--frame") {
      const std::string v = value();
      char* end = nullptr;
      const long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || n < 0 || n > 100000000) fail(kExitUsage, "--frame: a frame number >= 0, got \"" + v + "\"");
      a.frame = n;
      a.frame_given = true;
    } else if (arg == "--json") {
      a.json = value();
    } else if (arg.size() > 1 && arg[0] == '-') {
      fail(kExitUsage, "unknown option " + arg);
    } else {
      positional.push_back(arg);
    }
  }
  if (positional.size() != 2)
    fail(kExitUsage, positional.empty() ? "no IN and OUT given" : positional.size() == 1 ? "no OUT given"
                                                                                       : "more than IN and OUT given");
  if (positional[1] == "-" && a.json == "-") fail(kExitUsage, "OUT and --json cannot both be '-' (stdout)");
  if (positional[0] == "-" && a.candidates_file == "-") fail(kExitUsage, "IN and --candidates cannot both be '-' (stdin)");
  if (a.fixed && a.frame_level) fail(kExitUsage, "--fixed and --frame-level exclude each other");
  a.in = positional[0];
  a.out = positional[1];
  return a;
}

// ---------------------------------------------------------------- JSON report

void write_json(files::Output& out, const Args& a, const Image& im, const char* mode,
                const std::vector<canny::CandidatePair>& cands, const std::vector<canny::ThresholdPair>& pairs,
                long edge_pixels) {
  std::string j = "{\n";
  char buf[64];
  j += "  \"input\": " + json_string(a.in) + ",\n";
  j += "  \"format\": \"" + im.format + "\",\n";
  j += "  \"width\": " + std::to_string(im.width) + ",\n";
  j += "  \"height\": " + std::to_string(im.height) + ",\n";
  for (int precision = 1; precision <= 9; ++precision) {  // the shortest decimal that reads back as sigma
    std::snprintf(buf, sizeof buf, "%.*g", precision, double(a.sigma));
    if (std::strtof(buf, nullptr) == a.sigma) break;
  }
  j += std::string("  \"sigma\": ") + buf + ",\n";
  j += std::string("  \"backend\": \"") + a.backend + "\",\n";
  j += std::string("  \"mode\": \"") + mode + "\",\n";
  if (a.fixed) {
    j += "  \"candidates\": null,\n";
  } else {
    j += "  \"candidates\": {\"source\": " +
         (a.candidates_file.empty() ? json_string(a.step == 1 ? "step 0.01" : "step 0.03")
                                    : json_string(a.candidates_file)) +
         ", \"count\": " + std::to_string(cands.size()) + ", \"pairs\": [";
    for (size_t i = 0; i < cands.size(); ++i)
      j += (i ? ", [" : "[") + decimal(cands[i].low) + ", " + decimal(cands[i].high) + "]";
    j += "]},\n";
  }
  j += "  \"strip_width\": " + std::to_string(canny::kStripWidth) + ",\n";
  j += "  \"strips\": [\n";
  for (size_t s = 0; s < pairs.size(); ++s) {
    const int x0 = int(s) * canny::kStripWidth;
    const int x1 = std::min(im.width, x0 + canny::kStripWidth);
    j += "    {\"x0\": " + std::to_string(x0) + ", \"x1\": " + std::to_string(x1) + ", \"low\": " +
         decimal(pairs[s].low) + ", \"high\": " + decimal(pairs[s].high) + ", \"found\": " +
         (pairs[s].found ? "true" : "false") + "}" + (s + 1 < pairs.size() ? ",\n" : "\n");
  }
  j += "  ],\n";
  j += "  \"edge_pixels\": " + std::to_string(edge_pixels) + "\n}\n";
  std::string why;
  if (!out.write(j.data(), j.size(), &why)) fail(kExitIo, why);
}

#ifdef GPUEC_HAVE_CANNY_CUDA
// The CUDA twin on device 0: the image up, detect_edges_cuda, the edge map and the pairs down.
void detect_cuda(const Image& im, const canny::Options& opt, uint8_t* edges, canny::ThresholdPair* pairs) {
  auto check = [](cudaError_t e, const char* what) {
    if (e != cudaSuccess)
      fail(kExitIo, std::string("--backend cuda: ") + what + ": " + cudaGetErrorName(e) + " (" +
                        cudaGetErrorString(e) + ")");
  };
  const size_t n = im.pixels.size(), np = size_t(canny::strip_count(im.width));
  const size_t ws = canny::detect_edges_cuda_workspace_bytes(im.width, im.height);
  uint8_t *d_src = nullptr, *d_edges = nullptr;
  void* d_ws = nullptr;
  canny::ThresholdPair* d_pairs = nullptr;
  struct Free {
    std::vector<void*> p;
    ~Free() {
      for (void* q : p) cudaFree(q);
    }
  } guard;
  check(cudaMalloc(reinterpret_cast<void**>(&d_src), n), "cudaMalloc");
  guard.p.push_back(d_src);
  check(cudaMalloc(reinterpret_cast<void**>(&d_edges), n), "cudaMalloc");
  guard.p.push_back(d_edges);
  check(cudaMalloc(reinterpret_cast<void**>(&d_pairs), np * sizeof(canny::ThresholdPair)), "cudaMalloc");
  guard.p.push_back(d_pairs);
  check(cudaMalloc(&d_ws, ws), "cudaMalloc (workspace)");
  guard.p.push_back(d_ws);
  check(cudaMemcpy(d_src, im.pixels.data(), n, cudaMemcpyHostToDevice), "cudaMemcpy");
  const gpu::CudaError e = canny::detect_edges_cuda(d_src, im.width, im.height, im.width, opt, d_edges, im.width,
                                                    d_pairs, d_ws, ws, nullptr);
  if (e) fail(kExitIo, "--backend cuda: detect_edges_cuda: " + e.str());
  check(cudaDeviceSynchronize(), "detect_edges_cuda");
  check(cudaMemcpy(edges, d_edges, n, cudaMemcpyDeviceToHost), "cudaMemcpy");
  check(cudaMemcpy(pairs, d_pairs, np * sizeof(canny::ThresholdPair), cudaMemcpyDeviceToHost), "cudaMemcpy");
}
#endif

int run(int argc, char** argv) {
  const Args a = parse_args(argc, argv);
#ifndef GPUEC_HAVE_CANNY_CUDA
  if (a.backend == "cuda")
    fail(kExitIo, "--backend cuda: this build has no CUDA (no nvcc when it was configured); use --backend cpu");
#endif

  std::vector<canny::CandidatePair> cands;
  if (!a.fixed) {
    if (!a.candidates_file.empty()) {
      cands = images::read_candidates(cli::open_for_reading(a.candidates_file, kExitIo).get(), a.candidates_file);
    } else {
      cands.resize(size_t(canny::make_candidate_set(a.step, nullptr, 0)));
      canny::make_candidate_set(a.step, cands.data(), int(cands.size()));
    }
  }
  // Both outputs are opened (and checked) before anything is read or written: a bad --json leaves no OUT, and
  // both are made permanent only at the end.
  files::Output out, json;
  std::string why;
  const files::Output::Options oo{true, {a.in, a.candidates_file}};
  if (!out.open(a.out, oo, &why) || (!a.json.empty() && !json.open(a.json, oo, &why))) fail(kExitIo, why);
  std::string in_path = a.in;
  if (a.in == "-" && (in_path = files::stdin_as_path(&why)).empty()) fail(kExitIo, why);  // read more than once
  const Image im = read_image(in_path, a.frame, a.frame_given);

  canny::Options opt;
  opt.sigma = a.sigma;
  opt.mode = a.fixed ? canny::ThresholdMode::kFixed
                     : (a.frame_level ? canny::ThresholdMode::kFrame : canny::ThresholdMode::kStrip);
  opt.candidates = cands.data();
  opt.n_candidates = int(cands.size());
  opt.fixed = {a.fixed_low, a.fixed_high, 1};
  const char* mode = a.fixed ? "fixed" : (a.frame_level ? "frame" : "strip");

  std::vector<uint8_t> edges(im.pixels.size());
  std::vector<canny::ThresholdPair> pairs(size_t(canny::strip_count(im.width)));
  if (a.backend == "cuda") {
#ifdef GPUEC_HAVE_CANNY_CUDA
    detect_cuda(im, opt, edges.data(), pairs.data());
#endif
  } else {
    canny::CpuDetector detector;
    int rc = detector.init(im.width, im.height, opt, a.threads);
    if (rc == canny::kOk) rc = detector.detect(im.pixels.data(), im.width, edges.data(), im.width, pairs.data());
    if (rc != canny::kOk) fail(kExitIo, "the cpu detector failed with status " + std::to_string(rc));
  }
  long edge_pixels = 0;
  for (uint8_t e : edges) edge_pixels += (e != 0);

  write_pgm(out, im.width, im.height, edges);
  if (!a.json.empty()) write_json(json, a, im, mode, cands, pairs, edge_pixels);
  if (!out.commit(&why) || (!a.json.empty() && !json.commit(&why))) fail(kExitIo, why);
  if (!a.quiet)
    std::fprintf(stderr, "gudcanny: %s %dx%d, sigma %.2f, %s mode, %d strip%s, %ld edge pixels -> %s\n",
                 im.format.c_str(), im.width, im.height, double(a.sigma), mode, int(pairs.size()),
                 pairs.size() == 1 ? "" : "s", edge_pixels, a.out.c_str());
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  files::remove_temporaries_on_signal();
  return cli::main_of("gudcanny", run, argc, argv, kExitUsage, "run gudcanny --help for the options", kExitIo);
}
