// avc/recoder.h: the re-coding half of the compressed-domain re-entropy (avc/reentropy.h): slices parsed
// to their records and skeleton (avc/slice_data.h) go in, their RBSPs with the residual coded again by
// cavlc's frame coder (cavlc/frame_coder.h) come out, many pictures per submission (see BANDS below).
// Backends (gpu/backend.h), the same bytes: kCpu the frame coder's CPU path; kCuda its CUDA backend (the
// CAVLCU kernel and the GPU slice assembly, encode_frame_cuda); kAuto kCuda when a device is usable, else
// kCpu.
//
// BANDS. The frame coder codes a frame of whole macroblock rows in which every slice is a range of
// macroblock indices, and a neighbour is available when it has the same slice index. A batch is a tall
// frame of `bands` pictures stacked vertically (band b holds picture-sized rows b * height ..). A slice
// goes into a band at its own raster addresses, covering the index range [first, last] of its first and
// last macroblock; it shares the band with earlier slices whose ranges it does not meet, else it opens
// the next band. Band positions no slice of the band codes hold filler macroblocks: skipped, slice index
// -1, so they are nobody's neighbour and add nothing, even inside a slice's range (cavlc/
// encode_frame_cuda.h). So raster slices of a picture share one band; slices in arbitrary order too;
// slices of interleaved slice groups (FMO), whose ranges overlap, and redundant slices, which overlap
// their primary picture, take further bands; pictures never see each other (different slice indices).
// The slices are assembled in index order and handed back in the order they were added.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "avc/slice_data.h"
#include "gpu/backend.h"

namespace gpu {
class DeviceCheck;
}

namespace avc {

struct RecoderOptions {
  gpu::Backend backend = gpu::Backend::kCpu;  // kCpu, kCuda or kAuto
  int device = 0;              // CUDA device ordinal (kCuda, kAuto)
  int batch_mbs = 1 << 16;     // macroblocks per batch (bands = max(1, batch / picture))
  // Threads of reentropy_stream (avc/reentropy.h): 1 parses and codes on the calling thread; N > 1 parses
  // slices on N threads straight into the batches' arrays, codes batches while the next ones are parsed
  // (kCpu: one picture per batch, batches coded on those threads; kCuda, and kAuto with a device: the GPU
  // coders are created in the background once the CPU work left, at the workers' measured rate, outlasts
  // their start and teardown (kCuda checks the device at the first batch, or has device_check below do it;
  // kAuto looks only then); batches begun before they are ready, and batches that find every GPU coder
  // busy, are coded on the CPU, one picture each, the others on the GPU). The output is the same for every N.
  int threads = 1;
  // threads > 1, kCuda or kAuto: a stream finished on the CPU before the GPU coders are ready does not wait
  // for them (kCuda waits only for the device check, so that no GPU is still an error); their creation is
  // left to finish on its own thread. The program must then end by std::_Exit while
  // cavlc::PendingCudaCoder::abandoned() > 0 (cavlc/frame_coder.h), as avc-reentropy does.
  bool abandon_gpu_start = false;
  // threads > 1, kCuda: the device check, made by the program at its start in a process of its own
  // (gpu/device.h). The GPU coders are then made only once worth starting, as with kAuto, and a stream
  // finished on the CPU asks this check whether the backend works (no GPU is still an error) instead of
  // initialising the CUDA driver in this process. Not owned; it must outlive the recoding.
  gpu::DeviceCheck* device_check = nullptr;
};

// One re-coded slice: its RBSP (rbsp_trailing_bits included), valid while the sink runs.
struct RecodedSlice {
  const uint8_t* rbsp;
  size_t bytes;
  uint64_t residual_bits;  // bits of the re-coded residual (the RBSP minus skeleton and trailing bits)
};

class SliceRecoder {
 public:
  // Receives the i-th slice added since the previous hand-over, in the order added; false stops.
  using Sink = std::function<bool(size_t i, const RecodedSlice& slice)>;

  // nullptr with the reason in *why (kCuda: no GPU, or a build without CUDA; kOff).
  static std::unique_ptr<SliceRecoder> create(const RecoderOptions& opt, std::string* why);
  virtual ~SliceRecoder() = default;

  // Queues the slice `recs` of a picture mb_width macroblocks wide with pic_mbs macroblocks (records in
  // decoding order, addresses increasing and inside the picture, levels as cavlc::mb_totals accepts).
  // When the batch has no room for it (or the picture size changed), what is queued is coded and handed
  // to done first, as flush() does. False with *why: malformed records, out of memory, CUDA, or done
  // returned false.
  virtual bool add(int mb_width, int pic_mbs, const SliceRecords& recs, const Sink& done, std::string* why) = 0;
  // Codes what is queued and hands it to done. False with *why when coding failed, or when done returned
  // false. The batch is empty afterwards either way.
  virtual bool flush(const Sink& done, std::string* why) = 0;
  virtual size_t queued() const = 0;
  // Seconds spent in flushes so far (explicit or inside add): coding the batches and handing them over.
  // For benchmarks: the rest of the time in add() is filling the batches.
  double flush_seconds() const { return flush_seconds_; }

 protected:
  double flush_seconds_ = 0;
};

}  // namespace avc
