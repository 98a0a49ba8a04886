// gudcanny_ref: the reference edge map for tests/tools/gudcanny_test.sh, straight from the library
// (canny::detect_edges_ref), so the test can check that gudcanny adds nothing of its own.
// usage: gudcanny_ref strip|frame|fixed STEP SIGMA IN.pgm OUT.pgm   (IN: "P5\nW H\n255\n" + raster, as the
// test writes it; fixed mode uses the pair 0.10,0.20)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "canny/canny.h"

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: gudcanny_ref strip|frame|fixed STEP SIGMA IN.pgm OUT.pgm\n");
    return 1;
  }
  std::FILE* f = std::fopen(argv[4], "rb");
  int w = 0, h = 0, maxval = 0;
  if (!f || std::fscanf(f, "P5 %d %d %d", &w, &h, &maxval) != 3 || maxval != 255 || std::fgetc(f) == EOF) {
    std::fprintf(stderr, "gudcanny_ref: %s: not a simple P5 file\n", argv[4]);
    return 2;
  }
  std::vector<uint8_t> src(size_t(w) * h), edges(src.size());
  if (std::fread(src.data(), 1, src.size(), f) != src.size()) return 2;
  std::fclose(f);
  std::vector<canny::CandidatePair> cands(size_t(canny::make_candidate_set(std::atoi(argv[2]), nullptr, 0)));
  canny::make_candidate_set(std::atoi(argv[2]), cands.data(), int(cands.size()));
  canny::Options opt;
  opt.sigma = float(std::atof(argv[3]));
  opt.mode = !std::strcmp(argv[1], "fixed")   ? canny::ThresholdMode::kFixed
             : !std::strcmp(argv[1], "frame") ? canny::ThresholdMode::kFrame
                                              : canny::ThresholdMode::kStrip;
  opt.candidates = cands.data();
  opt.n_candidates = int(cands.size());
  opt.fixed = {10, 20, 1};
  std::vector<canny::ThresholdPair> pairs(size_t(canny::strip_count(w)));
  std::vector<uint8_t> work(canny::workspace_bytes_ref(w, h));
  const int rc = canny::detect_edges_ref(src.data(), w, h, w, opt, edges.data(), w, pairs.data(), work.data(),
                                         work.size());
  if (rc != canny::kOk) {
    std::fprintf(stderr, "gudcanny_ref: status %d\n", rc);
    return 2;
  }
  f = std::fopen(argv[5], "wb");
  if (!f) return 2;
  std::fprintf(f, "P5\n%d %d\n255\n", w, h);
  std::fwrite(edges.data(), 1, edges.size(), f);
  return std::fclose(f) == 0 ? 0 : 2;
}
