// The threaded path of reentropy_stream (avc/reentropy.h, RecoderOptions::threads > 1). Private to avc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "avc/annexb.h"
#include "avc/recoder.h"
#include "avc/reentropy.h"

namespace avc {

// Re-codes the stream `nals` of data with opt.threads threads into out (cleared first) and fills st.
// Returns false when the stream is not one this path takes as it is (a parse error, a backend failure,
// slices that overlap the range predicted for them): out and st are then unspecified and the caller runs
// the sequential path, which gives the same bytes or the error with its exact report.
bool reentropy_threaded(const uint8_t* data, size_t size, const std::vector<NalUnit>& nals,
                        std::vector<uint8_t>& out, ReentropyStats& st, const RecoderOptions& opt);

}  // namespace avc
