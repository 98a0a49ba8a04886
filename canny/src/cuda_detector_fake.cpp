// A CPU stand-in for the cuda backend of gudcanny.h (library gpuec_gudcanny_fake, tests only): every device
// is "usable", and a slot's frame is computed with detect_edges_ref only when it is waited for, from the
// slot's source as it is then. Between launch and wait the slot's results hold a pattern no detection
// writes. So a caller that reads results before the wait, or writes a slot's source while its frame is in
// flight, gets wrong frames here, as it could on a GPU; the slot and fall-back logic of gudcanny_c.cpp runs
// unchanged (GPUEC_GUDCANNY_FAIL_AT_* included). "Device" planes (launch_device) are host memory here: a
// plane is read, and the map written into the caller's plane, when the frame is waited for, so a caller
// that changes its plane or reads its output before the wait sees it.
#include <cstring>
#include <vector>

#include "cuda_detector.h"

namespace canny {
namespace {

class FakeDetector final : public CudaDetector {
 public:
  FakeDetector(int width, int height, int slots) : width_(width), height_(height), slots_(size_t(slots)) {
    const size_t n = size_t(width) * height;
    for (Slot& s : slots_) {
      s.src.assign(n, 0);
      s.edges.assign(n, 0x77);
      s.pairs.assign(size_t(strip_count(width)), ThresholdPair{-9, -9, -9});
    }
    work_.resize(workspace_bytes_ref(width, height));
  }

  uint8_t* source(int slot) override { return slots_[size_t(slot)].src.data(); }
  const uint8_t* edges(int slot) const override { return slots_[size_t(slot)].edges.data(); }
  const ThresholdPair* pairs(int slot) const override { return slots_[size_t(slot)].pairs.data(); }
  const uint16_t* mb_counts(int slot) const override { return slots_[size_t(slot)].counts.data(); }

  bool launch(int slot, const Options& options, std::string* why) override {
    return launch_device(slot, nullptr, width_, nullptr, 0, MapWrite::kMap, options, why);
  }

  bool launch_device(int slot, const uint8_t* plane, int pitch, uint8_t* out, int out_pitch, MapWrite write,
                     const Options& options, std::string*) override {
    Slot& s = slots_[size_t(slot)];
    s.options = options;  // its candidates point into the context, which outlives the detector
    s.launched = true;
    s.plane = plane;
    s.pitch = pitch;
    s.out = out;
    s.out_pitch = out_pitch;
    s.write = write;
    if (!out) s.edges.assign(s.edges.size(), 0x77);
    s.counts.assign(s.counts.size(), 0x7777);
    s.pairs.assign(s.pairs.size(), ThresholdPair{-9, -9, -9});
    return true;
  }

  bool wait(int slot, std::string* why) override {
    Slot& s = slots_[size_t(slot)];
    if (!s.launched) return true;
    s.launched = false;
    const bool keep_map = !s.out && s.write != MapWrite::kCountsOnly;  // the map stays in the slot
    std::vector<uint8_t> map(keep_map ? 0 : s.edges.size());
    uint8_t* dst = keep_map ? s.edges.data() : map.data();
    const int rc = detect_edges_ref(s.plane ? s.plane : s.src.data(), width_, height_, s.plane ? s.pitch : width_,
                                    s.options, dst, width_, s.pairs.data(), work_.data(), work_.size());
    if (rc != kOk) {
      *why = "detect_edges_ref failed with status " + std::to_string(rc);
      return false;
    }
    const int mbw = (width_ + 15) / 16;
    s.counts.assign(size_t(mbw) * ((height_ + 15) / 16), 0);
    for (int y = 0; !s.out && y < height_; ++y)
      for (int x = 0; x < width_; ++x) s.counts[size_t(y / 16) * mbw + x / 16] += dst[size_t(y) * width_ + x] != 0;
    for (int y = 0; s.out && y < height_; ++y) {
      uint8_t* o = s.out + size_t(y) * s.out_pitch;
      const uint8_t* m = dst + size_t(y) * width_;
      if (s.write == MapWrite::kMap) std::memcpy(o, m, size_t(width_));
      else for (int x = 0; x < width_; ++x) o[x] |= m[x];
    }
    return true;
  }

 private:
  struct Slot {
    std::vector<uint8_t> src, edges;
    std::vector<ThresholdPair> pairs;
    std::vector<uint16_t> counts;
    Options options;
    bool launched = false;
    const uint8_t* plane = nullptr;  // launch_device's plane, or null: src
    int pitch = 0, out_pitch = 0;
    uint8_t* out = nullptr;
    MapWrite write = MapWrite::kMap;
  };

  int width_, height_;
  std::vector<Slot> slots_;
  std::vector<uint8_t> work_;
};

}  // namespace

bool CudaDetector::available(int, std::string*) { return true; }

std::unique_ptr<CudaDetector> CudaDetector::create(int width, int height, int, void*, void*, int slots, std::string*) {
  return std::unique_ptr<CudaDetector>(new FakeDetector(width, height, slots));
}

}  // namespace canny
