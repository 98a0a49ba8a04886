// The capture file's reader and hash (cavlc/capture.h).
#include "cavlc/capture.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace cavlc {

static_assert(sizeof(gpuec_mb) == 832, "capture record size");

uint64_t capture_hash(const uint8_t* data, int64_t bits) {
  uint64_t h = 0xcbf29ce484222325ull;
  const size_t whole = static_cast<size_t>(bits >> 3);
  for (size_t i = 0; i < whole; ++i) h = (h ^ data[i]) * 0x100000001b3ull;
  if (bits & 7) h = (h ^ (data[whole] & (0xff00u >> (bits & 7)))) * 0x100000001b3ull;
  return h;
}

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
    // The frame size is checked before it is multiplied (two u32 overflow int64), end_bit before it is rounded up.
    if (h.mb_width == 0 || h.mb_height == 0 || h.mb_width > 1024 || h.mb_height > 1024 || h.first_mb < 0 ||
        h.first_mb + static_cast<int64_t>(h.record_count) > static_cast<int64_t>(h.mb_width) * h.mb_height)
      return r.fail("slice " + std::to_string(h.slice_index) + ": bad frame size, first_mb or record count");
    if ((h.start_bit & 7) || h.start_bit < 0 || h.end_bit < h.start_bit || h.end_bit > INT64_MAX - 7 || h.out_bits < 0 ||
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

}  // namespace cavlc
