// The image and list readers of gudcanny and canny-eval (images.h).
#include "images.h"

#include <cerrno>
#include <cstring>

#include "cli.h"
#ifdef GPUEC_HAVE_PNG
#include <png.h>
#endif

namespace images {

using cli::fail;

namespace {
constexpr long kMapMaxDim = 1 << 15;
constexpr long long kMapMaxPixels = 1LL << 26;
}  // namespace

void check_size(const std::string& path, long w, long h) {
  if (w < 1 || h < 1 || w > canny::kMaxDim || h > canny::kMaxDim || int64_t(w) * h > canny::kMaxPixels)
    fail(kExitData, path + ": image size " + std::to_string(w) + "x" + std::to_string(h) +
                      " not supported (width and height 1.." + std::to_string(canny::kMaxDim) + ", at most " +
                      std::to_string(canny::kMaxPixels) + " pixels)");
}

// ---------------------------------------------------------------- PGM (P5)

Image read_pgm(std::FILE* f, const std::string& path) {
  const std::string what = path + ": ";
  char magic[2];
  if (std::fread(magic, 1, 2, f) != 2 || magic[0] != 'P') fail(kExitData, what + "not a PGM file");
  if (magic[1] == '2') fail(kExitData, what + "ASCII PGM (P2) is not supported: binary PGM (P5) only");
  if (magic[1] != '5') fail(kExitData, what + "not a binary PGM (P5) file (magic P" + std::string(1, magic[1]) + ")");
  // Header: three decimal numbers separated by whitespace and '#' comments (to the end of the line), then
  // exactly one whitespace byte before the raster.
  long values[3];
  int c = std::getc(f);
  for (long& v : values) {
    for (;;) {
      if (c == '#') {
        while (c != EOF && c != '\n' && c != '\r') c = std::getc(f);
      } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') {
        c = std::getc(f);
      } else {
        break;
      }
    }
    if (c == EOF) fail(kExitData, what + "truncated PGM header");
    if (c < '0' || c > '9') fail(kExitData, what + "corrupt PGM header (expected a number)");
    v = 0;
    while (c >= '0' && c <= '9') {
      if (v > 100000000) fail(kExitData, what + "corrupt PGM header (number too large)");
      v = v * 10 + (c - '0');
      c = std::getc(f);
    }
  }
  if (c == EOF) fail(kExitData, what + "truncated PGM header");
  if (!(c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'))
    fail(kExitData, what + "corrupt PGM header (no whitespace after maxval)");
  if (values[2] != 255)
    fail(kExitData, what + "maxval " + std::to_string(values[2]) +
                      (values[2] > 255 ? " (16-bit PGM)" : "") + " is not supported: 8-bit PGM with maxval 255 only");
  check_size(path, values[0], values[1]);
  Image im;
  im.width = int(values[0]);
  im.height = int(values[1]);
  im.format = "pgm";
  im.pixels.resize(size_t(im.width) * im.height);
  const size_t got = std::fread(im.pixels.data(), 1, im.pixels.size(), f);
  if (got != im.pixels.size())
    fail(kExitData, what + "truncated PGM raster (" + std::to_string(got) + " of " + std::to_string(im.pixels.size()) +
                      " bytes)");
  return im;
}

// ---------------------------------------------------------------- PNG (libpng simplified API)

#ifdef GPUEC_HAVE_PNG
Image read_png(std::FILE* f, const std::string& path) {
  png_image png;
  std::memset(&png, 0, sizeof png);
  png.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_stdio(&png, f)) fail(kExitData, path + ": bad PNG: " + png.message);
  // Only 8-bit (or 1/2/4-bit) grayscale without alpha: libpng would otherwise convert colour to gray
  // and 16-bit (treated as linear) to sRGB behind our back. Convert such files first.
  if (png.format != PNG_FORMAT_GRAY) {
    const bool linear = png.format & PNG_FORMAT_FLAG_LINEAR;
    const bool colour = png.format & (PNG_FORMAT_FLAG_COLOR | PNG_FORMAT_FLAG_COLORMAP);
    const bool alpha = png.format & PNG_FORMAT_FLAG_ALPHA;
    png_image_free(&png);
    fail(kExitData, path + ": PNG " + std::string(colour ? "colour " : "") + (alpha ? "with alpha " : "") +
                      (linear ? "16-bit " : "") + "is not supported: 8-bit grayscale PNG without alpha only");
  }
  check_size(path, long(png.width), long(png.height));
  Image im;
  im.width = int(png.width);
  im.height = int(png.height);
  im.format = "png";
  im.pixels.resize(size_t(im.width) * im.height);
  if (!png_image_finish_read(&png, nullptr, im.pixels.data(), im.width, nullptr)) {
    std::string message = png.message;
    png_image_free(&png);
    fail(kExitData, path + ": bad PNG: " + message);
  }
  return im;
}
#endif

// ---------------------------------------------------------------- netpbm (canny-eval)

namespace {

class Reader {
 public:
  Reader(std::FILE* f, const std::string& path) : f_(f), what_(path + ": ") {}
  int get() { return std::getc(f_); }
  static bool space(int c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
  // Skips whitespace and '#' comments; returns the first other byte (or EOF).
  int skip(int c) {
    for (;;) {
      if (c == '#') {
        while (c != EOF && c != '\n' && c != '\r') c = get();
      } else if (space(c)) {
        c = get();
      } else {
        return c;
      }
    }
  }
  // A decimal number of the header; *next receives the byte after it.
  long number(const char* part, int* next) {
    int c = skip(get());
    if (c == EOF) fail(kExitData, what_ + "truncated header (no " + part + ")");
    if (c < '0' || c > '9') fail(kExitData, what_ + "corrupt header (" + part + " is not a number)");
    long v = 0;
    while (c >= '0' && c <= '9') {
      if (v > 100000000) fail(kExitData, what_ + "corrupt header (" + part + " too large)");
      v = v * 10 + (c - '0');
      c = get();
    }
    *next = c;
    return v;
  }
  const std::string& what() const { return what_; }

 private:
  std::FILE* f_;
  std::string what_;
};

}  // namespace

Map read_map(std::FILE* f, const std::string& path) {
  Reader r(f, path);
  const std::string& what = r.what();
  const int m0 = r.get(), m1 = r.get();
  if (m0 != 'P' || m1 < '1' || m1 > '6') fail(kExitData, what + "not a PBM/PGM file");
  if (m1 == '3' || m1 == '6') fail(kExitData, what + "colour PPM (P" + std::string(1, char(m1)) + ") is not supported");
  const bool pbm = (m1 == '1' || m1 == '4');
  int c = 0;
  const long w = r.number("width", &c);
  const long h = r.number("height", &c);
  long maxval = 1;
  if (!pbm) {
    maxval = r.number("maxval", &c);
    if (maxval < 1 || maxval > 65535) fail(kExitData, what + "maxval " + std::to_string(maxval) + " outside 1..65535");
  }
  if (w < 1 || h < 1 || w > kMapMaxDim || h > kMapMaxDim || (long long)w * h > kMapMaxPixels)
    fail(kExitData, what + "image size " + std::to_string(w) + "x" + std::to_string(h) + " not supported");
  if (c == EOF) fail(kExitData, what + "truncated header");
  if (!Reader::space(c)) fail(kExitData, what + "corrupt header (no whitespace before the raster)");
  Map m;
  m.width = int(w);
  m.height = int(h);
  const size_t n = size_t(w) * size_t(h);
  m.on.assign(n, 0);
  if (m1 == '1') {  // P1: '0'/'1' characters, whitespace optional between them
    int ch = c;
    for (size_t i = 0; i < n; ++i) {
      ch = r.skip(r.get());
      if (ch == EOF)
        fail(kExitData, what + "truncated PBM raster (" + std::to_string(i) + " of " + std::to_string(n) + " pixels)");
      if (ch != '0' && ch != '1') fail(kExitData, what + "corrupt P1 raster (byte '" + std::string(1, char(ch)) + "')");
      m.on[i] = uint8_t(ch == '1');
    }
  } else if (m1 == '2') {  // P2: decimal numbers <= maxval
    for (size_t i = 0; i < n; ++i) {
      int ch = r.skip(r.get());
      if (ch == EOF)
        fail(kExitData, what + "truncated PGM raster (" + std::to_string(i) + " of " + std::to_string(n) + " pixels)");
      if (ch < '0' || ch > '9') fail(kExitData, what + "corrupt P2 raster (not a number)");
      long v = 0;
      while (ch >= '0' && ch <= '9') {
        v = v * 10 + (ch - '0');
        if (v > maxval) fail(kExitData, what + "corrupt P2 raster (value above maxval)");
        ch = r.get();
      }
      if (ch != EOF && !Reader::space(ch) && ch != '#') fail(kExitData, what + "corrupt P2 raster");
      m.on[i] = uint8_t(v != 0);
    }
  } else if (m1 == '4') {  // P4: rows of ceil(w / 8) bytes, MSB first, 1 = black = boundary
    const size_t row_bytes = (size_t(w) + 7) / 8;
    std::vector<uint8_t> row(row_bytes);
    for (long y = 0; y < h; ++y) {
      const size_t got = std::fread(row.data(), 1, row_bytes, f);
      if (got != row_bytes)
        fail(kExitData, what + "truncated PBM raster (" + std::to_string(size_t(y) * row_bytes + got) + " of " +
                            std::to_string(row_bytes * size_t(h)) + " bytes)");
      for (long x = 0; x < w; ++x)
        m.on[size_t(y) * size_t(w) + size_t(x)] = (row[size_t(x) >> 3] >> (7 - (x & 7))) & 1;
    }
  } else {  // P5: 1 byte per pixel (maxval < 256) or 2 bytes big-endian
    const size_t bpp = maxval < 256 ? 1 : 2;
    std::vector<uint8_t> raw(n * bpp);
    const size_t got = std::fread(raw.data(), 1, raw.size(), f);
    if (got != raw.size())
      fail(kExitData, what + "truncated PGM raster (" + std::to_string(got) + " of " + std::to_string(raw.size()) + " bytes)");
    for (size_t i = 0; i < n; ++i) {
      const long v = bpp == 1 ? raw[i] : (long(raw[2 * i]) << 8 | raw[2 * i + 1]);
      if (v > maxval) fail(kExitData, what + "corrupt PGM raster (value " + std::to_string(v) + " above maxval)");
      m.on[i] = uint8_t(v != 0);
    }
  }
  return m;
}

int parse_hundredths(const std::string& s) {
  if (s.size() != 4 || s[1] != '.' || s[0] < '0' || s[0] > '1') return -1;
  for (int i : {2, 3})
    if (s[i] < '0' || s[i] > '9') return -1;
  const int v = (s[0] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
  return (v >= 1 && v <= canny::kMaxThreshold) ? v : -1;
}

std::vector<canny::CandidatePair> read_candidates(std::FILE* f, const std::string& path) {
  std::vector<canny::CandidatePair> pairs;
  std::string line;
  long number = 0;
  bool eof = false;
  while (!eof) {
    line.clear();
    int c;
    while ((c = std::getc(f)) != EOF && c != '\n') line.push_back(char(c));
    eof = (c == EOF);
    if (eof && line.empty()) break;
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    size_t b = line.find_first_not_of(" \t");
    if (b == std::string::npos || line[b] == '#') continue;
    std::vector<std::string> tokens;
    for (size_t i = b; i < line.size();) {
      size_t e = line.find_first_of(" \t", i);
      if (e == std::string::npos) e = line.size();
      tokens.push_back(line.substr(i, e - i));
      i = line.find_first_not_of(" \t", e);
      if (i == std::string::npos) break;
    }
    const std::string where = path + ":" + std::to_string(number) + ": ";
    if (tokens.size() != 2)
      fail(kExitData, where + "expected \"low high\" (two decimals each, e.g. \"0.05 0.20\"), got \"" + line + "\"");
    const int low = parse_hundredths(tokens[0]), high = parse_hundredths(tokens[1]);
    if (low < 0 || high < 0 || low >= high)
      fail(kExitData, where + "bad pair \"" + line + "\": need 0.01 <= low < high <= 1.00, two decimals each");
    if (int(pairs.size()) == canny::kMaxCandidates)
      fail(kExitData, where + "more than " + std::to_string(canny::kMaxCandidates) + " pairs");
    pairs.push_back({uint8_t(low), uint8_t(high)});
  }
  if (std::ferror(f)) fail(kExitData, path + ": read error: " + std::strerror(errno));
  if (pairs.empty()) fail(kExitData, path + ": no candidate pairs");
  return pairs;
}
}  // namespace images
