// Capture file writer (used by the stage when GPUEC_CAPTURE is set) and reader (gpuec/capture.h).
#include "gpuec/capture.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "capture_writer.h"

namespace gpuec {

static_assert(sizeof(gpuec_mb) == 832, "capture record size");

uint64_t capture_hash(const uint8_t* data, int64_t bits) {
  uint64_t h = 0xcbf29ce484222325ull;
  const size_t whole = static_cast<size_t>(bits >> 3);
  for (size_t i = 0; i < whole; ++i) h = (h ^ data[i]) * 0x100000001b3ull;
  if (bits & 7) h = (h ^ (data[whole] & (0xff00u >> (bits & 7)))) * 0x100000001b3ull;
  return h;
}

// ---- writer ----

namespace {

struct Writer {
  std::mutex lock;
  FILE* file = nullptr;
  std::string path;        // the path open now, or the last one opened
  int users = 0;           // stages capturing
  uint64_t next_slice = 0;
};

Writer& writer() {
  static Writer w;
  return w;
}

}  // namespace

int capture_acquire(char* note, size_t note_size) {
  const char* path = std::getenv("GPUEC_CAPTURE");
  if (!path || !path[0]) return 0;
  Writer& w = writer();
  std::lock_guard<std::mutex> g(w.lock);
  if (w.users > 0 && w.path != path) {
    if (note && note_size)
      std::snprintf(note, note_size, "GPUEC_CAPTURE: %s changed to %s while the capture is open",
                    w.path.c_str(), path);
    return -1;
  }
  if (w.users == 0) {
    const bool append = w.path == path;  // a later encoder of this process continues the file
    FILE* f = std::fopen(path, append ? "ab" : "wb");
    bool ok = f != nullptr;
    if (ok && !append) {
      uint32_t head[2] = {kCaptureVersion, static_cast<uint32_t>(sizeof(gpuec_mb))};
      ok = std::fwrite(kCaptureMagic, 8, 1, f) == 1 && std::fwrite(head, 8, 1, f) == 1 &&
           std::fflush(f) == 0;
    }
    if (!ok) {
      if (note && note_size)
        std::snprintf(note, note_size, "GPUEC_CAPTURE: cannot write %s: %s", path, std::strerror(errno));
      if (f) std::fclose(f);
      return -1;
    }
    if (!append) w.next_slice = 0;
    w.file = f;
    w.path = path;
  }
  ++w.users;
  return 1;
}

void capture_release() {
  Writer& w = writer();
  std::lock_guard<std::mutex> g(w.lock);
  if (w.users <= 0 || --w.users > 0) return;
  if (std::fclose(w.file) != 0)
    std::fprintf(stderr, "gpuec: GPUEC_CAPTURE: closing %s failed: %s\n", w.path.c_str(),
                 std::strerror(errno));
  w.file = nullptr;
}

int capture_slice(int mb_width, int mb_height, int first_mb, int64_t start_bit, int64_t end_bit,
                  const uint8_t* skel_first_byte, const gpuec_mb* recs, size_t n, const uint8_t* out,
                  int64_t out_bits) {
  CaptureSliceHeader h{};
  h.tag = kCaptureSliceTag;
  h.mb_width = static_cast<uint32_t>(mb_width);
  h.mb_height = static_cast<uint32_t>(mb_height);
  h.record_count = static_cast<uint32_t>(n);
  h.first_mb = first_mb;
  const int64_t first_byte = start_bit >> 3;
  h.skeleton_bytes = static_cast<uint32_t>(((end_bit + 7) >> 3) - first_byte);
  h.start_bit = start_bit;
  h.end_bit = end_bit;
  h.out_bits = out_bits;
  h.out_hash = capture_hash(out, out_bits);
  Writer& w = writer();
  std::lock_guard<std::mutex> g(w.lock);
  h.slice_index = w.next_slice++;
  const bool ok = w.file && std::fwrite(&h, sizeof h, 1, w.file) == 1 &&
                  (h.skeleton_bytes == 0 ||
                   std::fwrite(skel_first_byte, h.skeleton_bytes, 1, w.file) == 1) &&
                  (n == 0 || std::fwrite(recs, sizeof(gpuec_mb), n, w.file) == n) &&
                  std::fflush(w.file) == 0;
  if (!ok) {
    std::fprintf(stderr, "gpuec: GPUEC_CAPTURE: writing slice %llu to %s failed: %s\n",
                 static_cast<unsigned long long>(h.slice_index), w.path.c_str(), std::strerror(errno));
    return -1;
  }
  return 0;
}

// ---- reader ----

namespace {

struct Reader {
  FILE* f;
  const std::string& path;
  std::string& error;
  long long offset = 0;

  bool read(void* dst, size_t bytes, const char* what) {
    const size_t got = bytes ? std::fread(dst, 1, bytes, f) : 0;
    if (got != bytes) {
      fail(std::string("truncated ") + what + " (" + std::to_string(got) + " of " +
           std::to_string(bytes) + " bytes)");
      return false;
    }
    offset += static_cast<long long>(bytes);
    return true;
  }
  bool fail(const std::string& what) {
    error = path + ": offset " + std::to_string(offset) + ": " + what;
    return false;
  }
};

}  // namespace

bool read_capture(const std::string& path, std::vector<CapturedSlice>& slices, std::string& error) {
  slices.clear();
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    error = path + ": " + std::strerror(errno);
    return false;
  }
  struct Closer {
    FILE* f;
    ~Closer() { std::fclose(f); }
  } closer{f};
  Reader r{f, path, error};
  char magic[8];
  uint32_t head[2];
  if (!r.read(magic, 8, "file header") || !r.read(head, 8, "file header")) return false;
  if (std::memcmp(magic, kCaptureMagic, 8) != 0) return r.fail("not a gpuec capture (bad magic)");
  if (head[0] != kCaptureVersion)
    return r.fail("capture version " + std::to_string(head[0]) + ", expected " +
                  std::to_string(kCaptureVersion));
  if (head[1] != sizeof(gpuec_mb))
    return r.fail("record size " + std::to_string(head[1]) + ", expected " +
                  std::to_string(sizeof(gpuec_mb)));
  for (;;) {
    CapturedSlice s;
    const size_t got = std::fread(&s.head, 1, sizeof s.head, f);
    if (got == 0 && std::feof(f)) break;
    if (got != sizeof s.head) return r.fail("truncated slice header");
    const CaptureSliceHeader& h = s.head;
    if (h.tag != kCaptureSliceTag) return r.fail("bad slice tag");
    const int64_t mbs = static_cast<int64_t>(h.mb_width) * h.mb_height;
    if (h.mb_width == 0 || h.mb_height == 0 || h.mb_width > 1024 || h.mb_height > 1024 ||
        h.first_mb < 0 || h.first_mb + static_cast<int64_t>(h.record_count) > mbs)
      return r.fail("slice " + std::to_string(h.slice_index) + ": bad frame size, first_mb or record count");
    if ((h.start_bit & 7) || h.start_bit < 0 || h.end_bit < h.start_bit || h.out_bits < 0 ||
        h.skeleton_bytes != static_cast<uint64_t>(((h.end_bit + 7) >> 3) - (h.start_bit >> 3)))
      return r.fail("slice " + std::to_string(h.slice_index) + ": inconsistent bit positions");
    r.offset += static_cast<long long>(sizeof s.head);
    s.skeleton.resize(h.skeleton_bytes);
    s.recs.resize(h.record_count);
    if (!r.read(s.skeleton.data(), s.skeleton.size(), "skeleton") ||
        !r.read(s.recs.data(), s.recs.size() * sizeof(gpuec_mb), "records"))
      return false;
    slices.push_back(std::move(s));
  }
  if (std::ferror(f)) return r.fail(std::strerror(errno));
  return true;
}

}  // namespace gpuec
