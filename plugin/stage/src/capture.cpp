// The stage's capture file writer (GPUEC_CAPTURE; the format in cavlc/capture.h).
#include "cavlc/capture.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "capture_writer.h"

namespace gpuec {

using cavlc::CaptureSliceHeader;
using cavlc::capture_hash;
using cavlc::kCaptureMagic;
using cavlc::kCaptureSliceTag;
using cavlc::kCaptureVersion;

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
  // The bits after end_bit in the skeleton's last byte are written as zero (the stage's copy holds the
  // stop bit there).
  const uint8_t last = h.skeleton_bytes == 0 ? 0
                       : (end_bit & 7) ? static_cast<uint8_t>(skel_first_byte[h.skeleton_bytes - 1] & (0xff00u >> (end_bit & 7)))
                                       : skel_first_byte[h.skeleton_bytes - 1];
  const bool ok = w.file && std::fwrite(&h, sizeof h, 1, w.file) == 1 &&
                  (h.skeleton_bytes <= 1 ||
                   std::fwrite(skel_first_byte, h.skeleton_bytes - 1, 1, w.file) == 1) &&
                  (h.skeleton_bytes == 0 || std::fwrite(&last, 1, 1, w.file) == 1) &&
                  (n == 0 || std::fwrite(recs, sizeof(gpuec_mb), n, w.file) == n) &&
                  std::fflush(w.file) == 0;
  if (!ok) {
    std::fprintf(stderr, "gpuec: GPUEC_CAPTURE: writing slice %llu to %s failed: %s\n",
                 static_cast<unsigned long long>(h.slice_index), w.path.c_str(), std::strerror(errno));
    return -1;
  }
  return 0;
}

}  // namespace gpuec
