// The cuda backend of gudcanny.h: buffers, stream and one detect_edges_cuda per frame (cuda/gudcanny_ctx.cu).
// Host C++ only; in builds without CUDA, create() (cuda_detector_none.cpp) says why not.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "canny/canny.h"

namespace canny {

class CudaDetector {
 public:
  // Device `device` (a valid ordinal), frames of width x height. nullptr with the reason in *why.
  static std::unique_ptr<CudaDetector> create(int width, int height, int device, std::string* why);
  virtual ~CudaDetector() = default;

  // Pinned host plane of width * height bytes (pitch = width): the caller writes the source here.
  virtual uint8_t* source() = 0;
  // Uploads source(), runs detect_edges_cuda with `options` (its candidates a host array) and downloads
  // the results into edges() (width * height, pitch = width) and pairs() (strip_count(width) entries);
  // waits for the stream. false with the reason (a CUDA error) in *why.
  virtual bool run(const Options& options, std::string* why) = 0;
  virtual const uint8_t* edges() const = 0;
  virtual const ThresholdPair* pairs() const = 0;
};

}  // namespace canny
