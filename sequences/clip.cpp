// gpuec sequences library: derf manifest, clip lookup, y4m copying and synthetic clips.
#include "clip.h"

#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>

#include <jpeglib.h>

#ifndef GPUEC_DEFAULT_SHARED_DIR
#define GPUEC_DEFAULT_SHARED_DIR "../shared"
#endif

namespace fs = std::filesystem;

namespace gpuec::clip {
namespace {

// ---------------------------------------------------------------- small helpers

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string::size_type start = 0;
  for (;;) {
    auto pos = s.find(sep, start);
    out.push_back(s.substr(start, pos == std::string::npos ? std::string::npos : pos - start));
    if (pos == std::string::npos) return out;
    start = pos + 1;
  }
}

bool parse_long(const std::string& s, long* out) {
  if (s.empty() || s.size() > 12) return false;
  long v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

bool is_file(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

// A FILE* from fopen or popen, closed on scope exit (early pclose: xz just gets SIGPIPE).
struct Stream {
  std::FILE* f = nullptr;
  bool pipe = false;
  Stream(const std::string& path, bool xz) : pipe(xz) {
    f = xz ? ::popen(("xz -dc -- " + shell_quote(path) + " 2>/dev/null").c_str(), "r")
           : std::fopen(path.c_str(), "rb");
    if (!f) throw Error(kExitData, "cannot open " + path);
  }
  int close() {  // exit status for pipes, 0/EOF for files
    int rc = 0;
    if (f) rc = pipe ? ::pclose(f) : std::fclose(f);
    f = nullptr;
    return rc;
  }
  ~Stream() { close(); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
};

// Reads one '\n'-terminated line (without the '\n'). False at end of file before any byte.
bool read_line(std::FILE* f, std::string* line, const std::string& what) {
  line->clear();
  for (;;) {
    int c = std::getc(f);
    if (c == EOF) {
      if (line->empty()) return false;
      throw Error(kExitData, what + ": truncated line");
    }
    if (c == '\n') return true;
    if (line->size() >= 4096) throw Error(kExitData, what + ": line too long (not a y4m file?)");
    line->push_back(static_cast<char>(c));
  }
}

struct Y4mHeader {
  int width = 0, height = 0;
  std::string fps = "?";
  std::size_t frame_bytes() const {
    std::size_t cw = (width + 1) / 2, ch = (height + 1) / 2;
    return std::size_t(width) * height + 2 * cw * ch;
  }
};

Y4mHeader parse_y4m_header(const std::string& line, const std::string& what) {
  auto tokens = split(line, ' ');
  if (tokens.empty() || tokens[0] != "YUV4MPEG2") throw Error(kExitData, what + ": not a YUV4MPEG2 file");
  Y4mHeader h;
  long v = 0;
  for (std::size_t i = 1; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    if (t.empty()) continue;
    std::string rest = t.substr(1);
    if (t[0] == 'W' && parse_long(rest, &v)) h.width = int(v);
    if (t[0] == 'H' && parse_long(rest, &v)) h.height = int(v);
    if (t[0] == 'F') h.fps = rest;
    if (t[0] == 'C' && rest != "420jpeg" && rest != "420paldv" && rest != "420mpeg2" && rest != "420")
      throw Error(kExitData, what + ": colour space C" + rest + " is not supported (8-bit 4:2:0 only)");
  }
  if (h.width <= 0 || h.height <= 0 || h.width > 16384 || h.height > 16384)
    throw Error(kExitData, what + ": bad or missing W/H in the y4m header");
  return h;
}

// ---------------------------------------------------------------- deterministic generators

// SplitMix64 (Steele, Lea, Flood 2014): a fixed, portable 64-bit PRNG.
struct SplitMix64 {
  uint64_t s;
  explicit SplitMix64(uint64_t seed) : s(seed) {}
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
};

// One independent random stream per (clip kind, frame, plane).
uint64_t stream_seed(uint64_t kind, uint64_t frame, uint64_t plane) {
  SplitMix64 m(kind ^ (frame * 0xD1B54A32D192ED03ull) ^ (plane * 0xAEF17502108EF2D9ull));
  return m.next();
}

uint64_t hash3(uint64_t a, uint64_t b, uint64_t c) {
  SplitMix64 m(a * 0x9E3779B97F4A7C15ull ^ b * 0xC2B2AE3D27D4EB4Full ^ c * 0x165667B19E3779F9ull);
  return m.next();
}

inline uint8_t clamp8(int v, int lo, int hi) { return uint8_t(v < lo ? lo : (v > hi ? hi : v)); }

constexpr uint64_t kSeedPan = 0x70616e2d67726e31ull;      // "pan-grn1"
constexpr uint64_t kSeedNoise = 0x6e6f6973652d7631ull;    // "noise-v1"

struct Frame {
  int w, h;
  std::vector<uint8_t> buf;  // Y, then Cb, then Cr (4:2:0)
  Frame(int w_, int h_) : w(w_), h(h_), buf(std::size_t(w_) * h_ * 3 / 2) {}
  uint8_t* y() { return buf.data(); }
  uint8_t* cb() { return buf.data() + std::size_t(w) * h; }
  uint8_t* cr() { return buf.data() + std::size_t(w) * h * 5 / 4; }
};

void write_header(const Sink& sink, int w, int h) {
  char line[128];
  int n = std::snprintf(line, sizeof line, "YUV4MPEG2 W%d H%d F30:1 Ip A1:1 C420jpeg\n", w, h);
  sink(line, std::size_t(n));
}

void write_frame(const Sink& sink, const Frame& f) {
  sink("FRAME\n", 6);
  sink(f.buf.data(), f.buf.size());
}

// checkerboard: 16x16 flat squares, luma 0/255, chroma (Cb,Cr) = (0,255)/(255,0), moving 4 px right
// and 4 px down per frame; frames 0, 4, 8, ... are macroblock aligned.
void checkerboard_frame(Frame& f, long t) {
  const int off = int((4 * t) % 32);
  for (int y = 0; y < f.h; ++y)
    for (int x = 0; x < f.w; ++x)
      f.y()[std::size_t(y) * f.w + x] = (((x + off) >> 4) + ((y + off) >> 4)) & 1 ? 0 : 255;
  const int cw = f.w / 2, ch = f.h / 2, coff = off / 2;
  for (int y = 0; y < ch; ++y)
    for (int x = 0; x < cw; ++x) {
      bool odd = (((x + coff) >> 3) + ((y + coff) >> 3)) & 1;
      f.cb()[std::size_t(y) * cw + x] = odd ? 255 : 0;
      f.cr()[std::size_t(y) * cw + x] = odd ? 0 : 255;
    }
}

// noise: a smooth random field (value noise on a 2^cell_log2 grid, bilinear) moving (2,1) px per
// frame, plus fresh uniform noise of +-amp on every sample.
void noise_plane(uint8_t* out, int w, int h, long t, int plane, int cell_log2, int lo, int range, int amp,
                 long ox, long oy) {
  const int cell = 1 << cell_log2, mask = cell - 1;
  SplitMix64 rng(stream_seed(kSeedNoise, uint64_t(t), uint64_t(plane)));
  auto grid = [&](long i, long j) { return lo + int(hash3(uint64_t(i), uint64_t(j), uint64_t(plane) + 17) % uint64_t(range)); };
  for (int y = 0; y < h; ++y) {
    long Y = y + oy, j = Y >> cell_log2;
    int fy = int(Y & mask);
    for (int x = 0; x < w; ++x) {
      long X = x + ox, i = X >> cell_log2;
      int fx = int(X & mask);
      int v = (grid(i, j) * (cell - fx) * (cell - fy) + grid(i + 1, j) * fx * (cell - fy) +
               grid(i, j + 1) * (cell - fx) * fy + grid(i + 1, j + 1) * fx * fy + (1 << (2 * cell_log2 - 1))) >>
              (2 * cell_log2);
      int n = int(rng.next() % uint64_t(2 * amp + 1)) - amp;
      out[std::size_t(y) * w + x] = clamp8(v + n, 0, 255);
    }
  }
}

void noise_frame(Frame& f, long t) {
  noise_plane(f.y(), f.w, f.h, t, 0, 5, 48, 161, 40, 2 * t, t);
  noise_plane(f.cb(), f.w / 2, f.h / 2, t, 1, 4, 64, 129, 24, t, t / 2);
  noise_plane(f.cr(), f.w / 2, f.h / 2, t, 2, 4, 64, 129, 24, t, t / 2);
}

// ---------------------------------------------------------------- photos (pan clips)

// A photo as limited-range BT.601 YCbCr 4:2:0, even size.
struct Photo {
  int w = 0, h = 0;
  std::vector<uint8_t> y, cb, cr;
};

struct JpegError {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void jpeg_fail(j_common_ptr c) {
  auto* e = reinterpret_cast<JpegError*>(c->err);
  (*c->err->format_message)(c, e->message);
  std::longjmp(e->jump, 1);
}

void jpeg_quiet(j_common_ptr) {}

// Decodes with settings that make the RGB output the same on every libjpeg-turbo build: the
// accurate integer IDCT (JDCT_ISLOW), no fancy upsampling, no block smoothing.
std::unique_ptr<std::vector<uint8_t>> decode_jpeg(std::FILE* f, const std::string& path, int* w, int* h) {
  auto rgb = std::make_unique<std::vector<uint8_t>>();
  jpeg_decompress_struct cinfo;
  JpegError err;
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = jpeg_fail;
  err.mgr.output_message = jpeg_quiet;
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    throw Error(kExitData, "cannot decode photo " + path + ": " + err.message);
  }
  jpeg_create_decompress(&cinfo);
  jpeg_stdio_src(&cinfo, f);
  jpeg_read_header(&cinfo, TRUE);
  // The header's size is checked before the RGB buffer is sized from it: a few hundred bytes can claim
  // 65500 x 65500 (12 GB).
  if (uint64_t(cinfo.image_width) * cinfo.image_height > uint64_t(kMaxPhotoPixels)) {
    const std::string size = std::to_string(cinfo.image_width) + "x" + std::to_string(cinfo.image_height);
    jpeg_destroy_decompress(&cinfo);
    throw Error(kExitData, "cannot decode photo " + path + ": " + size + " is more than " +
                               std::to_string(kMaxPhotoPixels) + " pixels");
  }
  cinfo.out_color_space = JCS_RGB;
  cinfo.dct_method = JDCT_ISLOW;
  cinfo.do_fancy_upsampling = FALSE;
  cinfo.do_block_smoothing = FALSE;
  cinfo.scale_num = 1;
  cinfo.scale_denom = 1;
  jpeg_start_decompress(&cinfo);
  *w = int(cinfo.output_width);
  *h = int(cinfo.output_height);
  rgb->resize(std::size_t(*w) * *h * 3);
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = rgb->data() + std::size_t(cinfo.output_scanline) * *w * 3;
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);
  const long warnings = err.mgr.num_warnings;  // libjpeg only warns for truncated or corrupt data
  jpeg_destroy_decompress(&cinfo);
  if (warnings > 0) throw Error(kExitData, "cannot decode photo " + path + ": truncated or corrupt JPEG data");
  return rgb;
}

inline uint8_t luma601(int r, int g, int b) { return uint8_t((66 * r + 129 * g + 25 * b + 128 + (16 << 8)) >> 8); }

std::unique_ptr<std::vector<uint8_t>> decode_jpeg_file(const std::string& path, int* w, int* h) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw Error(kExitData, "cannot open photo " + path);
  std::unique_ptr<std::vector<uint8_t>> rgb;
  try {
    rgb = decode_jpeg(f, path, w, h);
  } catch (...) {
    std::fclose(f);
    throw;
  }
  std::fclose(f);
  return rgb;
}

std::shared_ptr<const Photo> load_photo(const std::string& path) {
  static std::map<std::string, std::shared_ptr<const Photo>> cache;
  auto it = cache.find(path);
  if (it != cache.end()) return it->second;

  int w = 0, h = 0;
  const std::unique_ptr<std::vector<uint8_t>> rgb = decode_jpeg_file(path, &w, &h);

  // Integer BT.601 limited range (the usual 8-bit fixed-point coefficients), offsets added
  // before the shift so that only non-negative values are shifted.
  auto p = std::make_shared<Photo>();
  p->w = w & ~1;
  p->h = h & ~1;
  if (p->w < 2 || p->h < 2) throw Error(kExitData, "photo too small: " + path);
  p->y.resize(std::size_t(p->w) * p->h);
  p->cb.resize(std::size_t(p->w / 2) * (p->h / 2));
  p->cr.resize(p->cb.size());
  const uint8_t* src = rgb->data();
  for (int y = 0; y < p->h; y += 2)
    for (int x = 0; x < p->w; x += 2) {
      int sum_cb = 0, sum_cr = 0;
      for (int dy = 0; dy < 2; ++dy)
        for (int dx = 0; dx < 2; ++dx) {
          const uint8_t* px = src + (std::size_t(y + dy) * w + x + dx) * 3;
          int r = px[0], g = px[1], b = px[2];
          p->y[std::size_t(y + dy) * p->w + x + dx] = luma601(r, g, b);
          sum_cb += (-38 * r - 74 * g + 112 * b + 128 + (128 << 8)) >> 8;
          sum_cr += (112 * r - 94 * g - 18 * b + 128 + (128 << 8)) >> 8;
        }
      std::size_t ci = std::size_t(y / 2) * (p->w / 2) + x / 2;
      p->cb[ci] = uint8_t((sum_cb + 2) >> 2);
      p->cr[ci] = uint8_t((sum_cr + 2) >> 2);
    }
  cache[path] = p;
  return p;
}

// Triangle wave: position a folded into [0, r].
long bounce(long a, long r) {
  if (r <= 0) return 0;
  long m = a % (2 * r);
  return m <= r ? m : 2 * r - m;
}

// Bilinear pan of one plane: position in 1/2^shift sample units, plus zero-mean triangular grain
// ((a + b) - bias with a, b uniform in [0, 2^bits)), clipped to [lo, hi].
void pan_plane(uint8_t* out, int w, int h, const uint8_t* src, int src_w, long px, long py, int shift,
               uint64_t seed, int grain_bits, int lo, int hi) {
  const int one = 1 << shift, fx = int(px & (one - 1)), fy = int(py & (one - 1));
  const long ix = px >> shift, iy = py >> shift;
  const int w00 = (one - fx) * (one - fy), w01 = fx * (one - fy), w10 = (one - fx) * fy, w11 = fx * fy;
  const int round = 1 << (2 * shift - 1), gmask = (1 << grain_bits) - 1, gbias = gmask;
  const int per_word = 64 / (2 * grain_bits);
  SplitMix64 rng(seed);
  uint64_t r = 0;
  int left = 0;
  for (int y = 0; y < h; ++y) {
    const uint8_t* s0 = src + std::size_t(iy + y) * src_w + ix;
    const uint8_t* s1 = s0 + src_w;
    uint8_t* o = out + std::size_t(y) * w;
    for (int x = 0; x < w; ++x) {
      int v = (w00 * s0[x] + w01 * s0[x + 1] + w10 * s1[x] + w11 * s1[x + 1] + round) >> (2 * shift);
      if (left == 0) {
        r = rng.next();
        left = per_word;
      }
      int n = int(r & gmask) + int((r >> grain_bits) & gmask) - gbias;
      r >>= 2 * grain_bits;
      --left;
      o[x] = clamp8(v + n, lo, hi);
    }
  }
}

// pan: the frame window moves over the photo by (4.625, 1.625) px per frame, bouncing at the
// photo edges. Luma position in 1/8 px; chroma uses the same number as 1/16 chroma px.
void pan_frame(Frame& f, long t, const Photo& p) {
  const long range_x = long(p.w - f.w - 1) * 8, range_y = long(p.h - f.h - 1) * 8;
  const long px = bounce(37 * t, range_x), py = bounce(range_y / 2 + 13 * t, range_y);
  pan_plane(f.y(), f.w, f.h, p.y.data(), p.w, px, py, 3, stream_seed(kSeedPan, uint64_t(t), 0), 3, 16, 235);
  pan_plane(f.cb(), f.w / 2, f.h / 2, p.cb.data(), p.w / 2, px, py, 4, stream_seed(kSeedPan, uint64_t(t), 1), 2, 16, 240);
  pan_plane(f.cr(), f.w / 2, f.h / 2, p.cr.data(), p.w / 2, px, py, 4, stream_seed(kSeedPan, uint64_t(t), 2), 2, 16, 240);
}

const char* kManifestColumns[] = {"name", "file", "width", "height", "fps", "frames", "shared", "notes"};

}  // namespace

// ---------------------------------------------------------------- manifest and folders

const std::vector<DerfEntry>& derf_manifest() {
  static const std::vector<DerfEntry> entries = [] {
    std::vector<DerfEntry> out;
    std::istringstream in(derf_manifest_text());
    std::string line;
    int lineno = 0;
    while (std::getline(in, line)) {
      ++lineno;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty() || line[0] == '#') continue;
      auto f = split(line, '\t');
      if (f.size() != 8) throw Error(kExitData, "derf.tsv line " + std::to_string(lineno) + ": expected 8 columns");
      if (f[0] == kManifestColumns[0]) continue;  // header row
      DerfEntry e;
      long w = 0, h = 0, n = 0, d = 0, frames = 0, shared = 0;
      auto fps = split(f[4], ':');
      bool ok = parse_long(f[2], &w) && parse_long(f[3], &h) && fps.size() == 2 && parse_long(fps[0], &n) &&
                parse_long(fps[1], &d) && d > 0 && parse_long(f[5], &frames) &&
                (f[6] == "-" || parse_long(f[6], &shared));
      if (!ok) throw Error(kExitData, "derf.tsv line " + std::to_string(lineno) + ": bad value");
      e.name = f[0];
      e.file = f[1];
      e.width = int(w);
      e.height = int(h);
      e.fps_num = int(n);
      e.fps_den = int(d);
      e.frames = frames;
      e.shared = shared;
      e.notes = f[7];
      out.push_back(e);
    }
    return out;
  }();
  return entries;
}

const DerfEntry* find_derf(const std::string& name) {
  for (const auto& e : derf_manifest())
    if (e.name == name) return &e;
  return nullptr;
}

std::string sequences_dir() {
  if (auto v = env("GPUEC_SEQUENCES"); !v.empty()) return v;
  if (auto v = env("GPUEC_SHARED_DIR"); !v.empty()) return v + "/sequences";
  return std::string(GPUEC_DEFAULT_SHARED_DIR) + "/sequences";
}

std::string images_dir() {
  if (auto v = env("GPUEC_IMAGES"); !v.empty()) return v;
  if (auto v = env("GPUEC_SHARED_DIR"); !v.empty()) return v + "/images";
  return std::string(GPUEC_DEFAULT_SHARED_DIR) + "/images";
}

std::string find_local_clip(const std::string& name) {
  if (name.empty() || name.find('/') != std::string::npos) return "";
  const std::string dir = sequences_dir() + "/";
  std::vector<std::string> candidates = {name + ".y4m", name + ".y4m.xz"};
  if (const DerfEntry* e = find_derf(name)) {
    candidates.push_back(e->file);
    candidates.push_back(e->file + ".xz");
  }
  for (const auto& c : candidates)
    if (is_file(dir + c)) return dir + c;
  return "";
}

LocalClip probe_local_clip(const std::string& path) {
  LocalClip info;
  info.path = path;
  const bool xz = ends_with(path, ".xz");
  std::string line;
  {
    Stream s(path, xz);
    if (!read_line(s.f, &line, path)) throw Error(kExitData, path + ": empty or unreadable" + std::string(xz ? " (is xz installed?)" : ""));
  }
  Y4mHeader h = parse_y4m_header(line, path);
  info.width = h.width;
  info.height = h.height;
  info.fps = h.fps;
  long long total = -1;
  if (!xz) {
    std::error_code ec;
    auto size = fs::file_size(path, ec);
    if (!ec) total = (long long)size;
  } else if (std::FILE* p = ::popen(("xz --robot --list -- " + shell_quote(path) + " 2>/dev/null").c_str(), "r")) {
    std::string l;
    try {
      while (read_line(p, &l, path)) {
        auto f = split(l, '\t');
        long v = 0;
        if (f.size() > 4 && f[0] == "totals" && parse_long(f[4], &v)) total = v;
      }
    } catch (const Error&) {
    }
    if (::pclose(p) != 0 || total < 0)  // xz could not read the index: a truncated or damaged file
      throw Error(kExitData, path + ": a truncated or damaged .xz file (xz --list cannot read it)");
  }
  if (total >= 0) {
    long long payload = total - (long long)line.size() - 1;
    // Exact when every frame header is a plain "FRAME\n" (true for xiph clips and ours).
    info.frames = payload >= 0 ? long(payload / (long long)(h.frame_bytes() + 6)) : 0;
  }
  return info;
}

std::vector<std::string> extra_local_clips() {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(sequences_dir(), ec), end; !ec && it != end; it.increment(ec)) {
    std::string n = it->path().filename().string();
    std::string base;
    if (ends_with(n, ".y4m")) base = n.substr(0, n.size() - 4);
    else if (ends_with(n, ".y4m.xz")) base = n.substr(0, n.size() - 7);
    else continue;
    bool known = find_derf(base) != nullptr;
    for (const auto& e : derf_manifest()) known = known || e.file == base + ".y4m";
    if (!known && std::find(out.begin(), out.end(), base) == out.end()) out.push_back(base);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// ---------------------------------------------------------------- synthetic clips

bool parse_synthetic(const std::string& name, SynthSpec* spec) {
  auto us = name.find('_');
  if (us == std::string::npos) return false;
  SynthSpec s;
  s.kind = name.substr(0, us);
  if (s.kind != "pan" && s.kind != "noise" && s.kind != "checkerboard") return false;
  const std::string size = name.substr(us + 1);
  static const std::map<std::string, std::pair<int, int>> named = {
      {"qcif", {176, 144}}, {"cif", {352, 288}},    {"4cif", {704, 576}},    {"360p", {640, 360}},
      {"720p", {1280, 720}}, {"1080p", {1920, 1080}}, {"2160p", {3840, 2160}}};
  if (auto it = named.find(size); it != named.end()) {
    s.width = it->second.first;
    s.height = it->second.second;
  } else {
    auto x = size.find('x');
    long w = 0, h = 0;
    if (x == std::string::npos || !parse_long(size.substr(0, x), &w) || !parse_long(size.substr(x + 1), &h)) return false;
    if (w < 2 || h < 2 || w > 16384 || h > 16384 || (w & 1) || (h & 1)) return false;
    s.width = int(w);
    s.height = int(h);
  }
  if (spec) *spec = s;
  return true;
}

const std::vector<std::string>& synthetic_names() {
  static const std::vector<std::string> names = {"pan_720p", "pan_1080p", "noise_cif", "checkerboard_cif"};
  return names;
}

std::string synthetic_description(const std::string& kind) {
  if (kind == "pan") return "camera pan over a photo (4.625,1.625 px/frame) with film grain";
  if (kind == "noise") return "uniform noise (+-40) over a slowly moving smooth random field";
  if (kind == "checkerboard") return "16x16 squares, Y 0/255, Cb/Cr 0/255, moving 4 px/frame (CAVLC level overflow)";
  return "";
}

std::string find_photo(const std::string& name_or_path) {
  const std::string name = name_or_path.empty() ? kDefaultPhoto : name_or_path;
  if (name.find('/') != std::string::npos) {
    if (is_file(name)) return name;
    throw Error(kExitData, "photo not found: " + name);
  }
  const std::string dir = images_dir();
  for (const auto& c : {dir + "/photos/" + name, dir + "/" + name})
    if (is_file(c)) return c;
  throw Error(kExitData, "photo " + name + " not found in " + dir + "/photos (set GPUEC_IMAGES or GPUEC_SHARED_DIR)");
}

long write_synthetic(const SynthSpec& spec, long frames, const std::string& photo, const Sink& sink) {
  if (frames < 1) throw Error(kExitUsage, "frame count must be at least 1");
  std::shared_ptr<const Photo> p;
  if (spec.kind == "pan") {
    const std::string path = find_photo(photo);
    p = load_photo(path);
    if (p->w <= spec.width || p->h <= spec.height)
      throw Error(kExitData, "photo " + path + " (" + std::to_string(p->w) + "x" + std::to_string(p->h) +
                                 ") is not larger than the clip (" + std::to_string(spec.width) + "x" +
                                 std::to_string(spec.height) + ")");
  }
  write_header(sink, spec.width, spec.height);
  Frame f(spec.width, spec.height);
  for (long t = 0; t < frames; ++t) {
    if (spec.kind == "pan") pan_frame(f, t, *p);
    else if (spec.kind == "noise") noise_frame(f, t);
    else checkerboard_frame(f, t);
    write_frame(sink, f);
  }
  return frames;
}

// ---------------------------------------------------------------- local clips

long copy_y4m(const std::string& path, long frames, const Sink& sink) {
  const bool xz = ends_with(path, ".xz");
  Stream s(path, xz);
  std::string line;
  if (!read_line(s.f, &line, path)) {
    int rc = s.close();
    throw Error(kExitData, path + ": empty or unreadable" +
                               std::string(xz && rc != 0 ? " (xz -dc failed: is xz installed and the file intact?)" : ""));
  }
  const Y4mHeader h = parse_y4m_header(line, path);
  line.push_back('\n');
  sink(line.data(), line.size());
  std::vector<uint8_t> buf(h.frame_bytes());
  long n = 0;
  while (frames < 0 || n < frames) {
    if (!read_line(s.f, &line, path)) break;
    if (line.compare(0, 5, "FRAME") != 0) throw Error(kExitData, path + ": bad frame header at frame " + std::to_string(n));
    if (std::fread(buf.data(), 1, buf.size(), s.f) != buf.size())
      throw Error(kExitData, path + ": truncated frame " + std::to_string(n));
    line.push_back('\n');
    sink(line.data(), line.size());
    sink(buf.data(), buf.size());
    ++n;
  }
  if (frames < 0 || n < frames) {  // read to the end: the decompressor must have succeeded
    int rc = s.close();
    if (xz && rc != 0) throw Error(kExitData, path + ": xz -dc failed (status " + std::to_string(rc) + ")");
  }
  if (frames >= 0 && n < frames)
    throw Error(kExitData, path + " has only " + std::to_string(n) + " frames, " + std::to_string(frames) + " requested");
  return n;
}

long write_clip(const std::string& name, const GetOptions& options, const Sink& sink) {
  SynthSpec spec;
  if (parse_synthetic(name, &spec))
    return write_synthetic(spec, options.frames < 0 ? kDefaultSyntheticFrames : options.frames, options.photo, sink);
  if (options.frames == 0) throw Error(kExitUsage, "frame count must be at least 1");
  const std::string path = find_local_clip(name);
  if (path.empty()) {
    if (const DerfEntry* e = find_derf(name)) {
      const std::string looked = e->file == name + ".y4m" || e->file == name
                                     ? name + ".y4m[.xz]"
                                     : name + ".y4m[.xz] and " + e->file + "[.xz]";
      throw Error(kExitData, "derf clip " + name + " is not in " + sequences_dir() + " (looked for " + looked +
                                 "); fetch it with sequences/download.sh " + name + ", or set GPUEC_SEQUENCES");
    }
    const size_t us = name.find('_');
    const std::string kind = us == std::string::npos ? "" : name.substr(0, us);
    if (kind == "pan" || kind == "noise" || kind == "checkerboard")
      throw Error(kExitData, "synthetic clip '" + name + "': bad size '" + name.substr(us + 1) +
                                  "' (qcif, cif, 4cif, 360p, 720p, 1080p, 2160p or WxH, even, 2..16384)");
    throw Error(kExitData, "unknown clip '" + name + "' (see gpuec-clip list)");
  }
  return copy_y4m(path, options.frames, sink);
}

uint64_t fnv1a64(const void* data, std::size_t size, uint64_t hash) {
  const auto* p = static_cast<const uint8_t*>(data);
  for (std::size_t i = 0; i < size; ++i) hash = (hash ^ p[i]) * 0x100000001b3ull;
  return hash;
}

std::vector<uint8_t> jpeg_luma(const std::string& path, int* width, int* height) {
  int w = 0, h = 0;
  const std::unique_ptr<std::vector<uint8_t>> rgb = decode_jpeg_file(path, &w, &h);
  std::vector<uint8_t> y(std::size_t(w) * h);
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = luma601((*rgb)[3 * i], (*rgb)[3 * i + 1], (*rgb)[3 * i + 2]);
  *width = w;
  *height = h;
  return y;
}

}  // namespace gpuec::clip
