// tools/cli/images.h (gpuec_cli_images): the image and list readers of the user programs, read from an open
// FILE* so that the tools (files opened by cli::open_for_reading) and the fuzz targets (tests/fuzz/, inputs in
// memory) share them. `path` only names the input in messages. Every failure is a cli::Failure with exit code 2
// and a message that starts with "PATH: "; nothing else is thrown but std::bad_alloc.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "canny/canny.h"

namespace images {

constexpr int kExitData = 2;  // gudcanny's and canny-eval's exit code for a bad input

// An 8-bit grayscale image as gudcanny reads it.
struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> pixels;  // width * height, row-major
  std::string format;           // "pgm", "png", "y4m"
};

// Fails unless 1 <= w, h <= canny::kMaxDim and w * h <= canny::kMaxPixels (what GUD-Canny accepts).
void check_size(const std::string& path, long w, long h);

// gudcanny's PGM: binary P5 with maxval 255 only; header numbers separated by whitespace and '#' comments, one
// whitespace byte before the raster.
Image read_pgm(std::FILE* f, const std::string& path);

// gudcanny's PNG (libpng's simplified API): 8-bit (or 1/2/4-bit) grayscale without alpha only. Only in builds
// with libpng (GPUEC_HAVE_PNG defined for gpuec_cli_images and its users).
#ifdef GPUEC_HAVE_PNG
Image read_png(std::FILE* f, const std::string& path);
#endif

// A binary map as canny-eval reads edge maps and human boundary maps.
struct Map {
  int width = 0, height = 0;
  std::vector<uint8_t> on;  // width * height, 1 = edge/boundary pixel
};

// canny-eval's netpbm reader: PBM (P1, P4; 1 = on) or PGM (P2, P5, maxval 1..65535; nonzero = on), at most
// 32768 x 32768 and 2^26 pixels.
Map read_map(std::FILE* f, const std::string& path);

// A decimal with exactly two decimals in [0.01, 1.00], in hundredths; -1 when malformed or out of range.
int parse_hundredths(const std::string& s);

// gudcanny's --candidates file: one "low high" pair per line (parse_hundredths each, low < high); blank lines
// and lines starting with '#' skipped; at most canny::kMaxCandidates pairs, at least one.
std::vector<canny::CandidatePair> read_candidates(std::FILE* f, const std::string& path);

}  // namespace images
