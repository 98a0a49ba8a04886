// The cuda backend of gudcanny.h: buffers, stream and detect_edges_cuda per frame (cuda/gudcanny_ctx.cu).
// Host C++ only; in builds without CUDA, available() and create() (cuda_detector_none.cpp) say why not;
// cuda_detector_fake.cpp is a CPU stand-in for the tests of gudcanny_c.cpp's cuda paths.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "canny/canny.h"
#include "gpu/device.h"

namespace canny {

// Whether CUDA device `device` can be used: gpu::device_count's answer, with its reason in *why when not.
inline bool cuda_device_usable(int device, std::string* why) {
  const int count = gpu::device_count(why);
  if (count > 0 && device >= count)
    *why = "CUDA device " + std::to_string(device) + " asked for, " + std::to_string(count) + " present";
  return count > device;
}

// How an edge map is written into a plane of the caller (gudcanny.h's enum gudcanny_out).
// kMap: the map (0 / 255); kMark: 255 on edges, other bytes untouched; kCountsOnly (no caller's plane):
// the macroblock counts are downloaded, the map is not.
enum class MapWrite { kMap, kMark, kCountsOnly };

// `slots` frames can be in flight at once, one per slot: each slot has pinned host buffers (source, edge
// map, pairs) and an event; the device buffers and the workspace are shared, which is safe because every
// slot's work runs on the one stream of the detector, in launch order.
class CudaDetector {
 public:
  // Whether create() can be tried on device `device` (cuda_device_usable; in builds without CUDA: no, and
  // why). false with the reason in *why.
  static bool available(int device, std::string* why);
  // Frames of width x height, slots >= 1; the work runs on a non-blocking stream of the detector's own.
  // context null: device `device` (a valid ordinal) and its primary context. context a CUcontext of the
  // caller: every call (the destructor too) makes it current for its duration, and launch_device orders
  // its work after the caller's earlier work on `stream` (a CUstream of that context; null: its default
  // stream) and, when it writes into a plane of the caller, the caller's later work on `stream` after it;
  // `device` is not used. nullptr with the reason in *why.
  static std::unique_ptr<CudaDetector> create(int width, int height, int device, void* context, void* stream,
                                              int slots, std::string* why);
  virtual ~CudaDetector() = default;  // waits for the stream

  // Pinned host plane of slot `slot`, width * height bytes (pitch = width): the caller writes the source
  // here before launch(slot); it stays as written until the next launch of that slot.
  virtual uint8_t* source(int slot) = 0;
  // Enqueues the upload of source(slot), detect_edges_cuda with `options` (its candidates a host array),
  // the downloads into edges(slot) and pairs(slot), and the slot's event; does not wait. false with the
  // reason (a CUDA error) in *why.
  virtual bool launch(int slot, const Options& options, std::string* why) = 0;
  // The same for a plane already in device memory (row y at plane + y * pitch, pitch >= width), read in
  // place: it must stay unchanged until wait(slot) returns. out null: the edge map and the counts are
  // downloaded into edges(slot) and mb_counts(slot) as by launch (only the counts with kCountsOnly). out a device plane (pitch out_pitch >= width): the map is written there as
  // `write` says and edges(slot) is not touched. The pairs are downloaded in both cases.
  virtual bool launch_device(int slot, const uint8_t* plane, int pitch, uint8_t* out, int out_pitch, MapWrite write,
                             const Options& options, std::string* why) = 0;
  // Waits for the slot's event: then edges(slot) (width * height, pitch = width) and pairs(slot)
  // (strip_count(width) entries) hold the results of its last launch. false with the reason in *why.
  virtual bool wait(int slot, std::string* why) = 0;
  virtual const uint8_t* edges(int slot) const = 0;
  virtual const ThresholdPair* pairs(int slot) const = 0;
  // Edge pixels per 16x16 macroblock (its part inside the frame), ceil(width / 16) * ceil(height / 16)
  // entries in raster order, of the slot's last launch whose map was not written into a caller's plane.
  virtual const uint16_t* mb_counts(int slot) const = 0;
};

}  // namespace canny
