// The threaded path of reentropy_stream (avc/reentropy.h, RecoderOptions::threads > 1). Private to avc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "avc/annexb.h"
#include "avc/recoder.h"
#include "avc/reentropy.h"
#include "cavlc/frame_coder.h"

namespace avc {

// The threaded path's GPU coders (the cuda mode): created in the background from the first batch on, then
// a pool of the free ones. A ReentropySession keeps them from one stream to the next; without one, each
// stream has its own.
struct ThreadedGpuCoders {
  std::vector<std::unique_ptr<cavlc::PendingCudaCoder>> pending;
  int width = 0, rows = 0;  // the size the pending ones are made for
  bool started = false;     // the pending ones were told to go on past the device check
  bool taken = false;       // the pending ones were handed over (to the pool, or failed)
  bool failed = false;      // their creation failed: kAuto codes on the CPU from then on
  struct Pooled {
    std::unique_ptr<cavlc::FrameCoder> coder;
    int width, rows;
  };
  std::vector<Pooled> pool;  // free coders
};

// Re-codes the stream `nals` of data with opt.threads threads into out (cleared first) and fills st.
// Returns false when the stream is not one this path takes as it is (a parse error, a backend failure,
// slices that overlap the range predicted for them): out and st are then unspecified and the caller runs
// the sequential path, which gives the same bytes or the error with its exact report.
// gpu: the session's GPU coders (nullptr: the stream's own).
bool reentropy_threaded(const uint8_t* data, size_t size, const std::vector<NalUnit>& nals,
                        std::vector<uint8_t>& out, ReentropyStats& st, const RecoderOptions& opt,
                        ThreadedGpuCoders* gpu = nullptr);

}  // namespace avc
