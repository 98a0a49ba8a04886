// avc/reentropy.h: compressed-domain re-entropy of a baseline CAVLC Annex B stream (issue 6): every
// slice is parsed down to its macroblock records and skeleton (avc/slice_data.h), its residual is coded
// again by the entropy stage (avc/recoder.h: the CPU slice coder, or the CUDA frame coder over batches of
// pictures; slice groups, arbitrary slice order and redundant slices get their own neighbours), and the NAL
// unit is written back: start code and zero bytes as the input had them, the RBSP with its
// rbsp_trailing_bits, standard emulation prevention (7.4.1). Every other NAL unit is copied unchanged.
// For a stream that our parser accepts, the output equals the input byte for byte exactly when the input
// was coded and escaped as the standard prescribes; ReentropyStats says where it was not.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <functional>
#include <memory>

#include "avc/error.h"
#include "avc/recoder.h"
#include "avc/slice_data.h"

namespace avc {

struct ReentropyStats {
  int64_t nal_units = 0;
  int64_t slices = 0;
  int64_t redundant_slices = 0;
  int64_t macroblocks = 0;          // skipped ones included
  int64_t coded_macroblocks = 0;    // with residual syntax (cbp or Intra16x16) or I_PCM
  int64_t pictures = 0;             // primary coded pictures
  int64_t residual_bits = 0;        // residual bits of the input (the output's, when identical)
  int64_t nonstandard_escaping = 0; // NAL units whose input escaping is not 7.4.1's (output differs there)
  int64_t recoded_differs = 0;      // slices whose re-coded RBSP differs from the input's
  // RecoderOptions::threads > 1: whether the threaded path coded the stream (false: it gave the stream to
  // the sequential path, for a parse error, a backend failure or slices that overlap).
  bool threaded = false;
  // The threaded path: batches and their macroblocks coded by each backend. With kCuda (and kAuto on a
  // GPU) the CPU codes the batches begun before the GPU coders were ready, the GPU every later one.
  int64_t cpu_batches = 0, cpu_macroblocks = 0;
  int64_t cuda_batches = 0, cuda_macroblocks = 0;
  // The threaded path, for finding where the time goes (avc-reentropy --stats): when the calling thread had
  // read every header and handed out every slice (seconds from the call's start), and the time the workers
  // spent parsing and coding, summed over the workers.
  double headers_seconds = 0, parse_seconds = 0, code_seconds = 0;
};

// Re-codes `data` (an Annex B byte stream) into `out` (cleared first). Returns false with err (NAL index,
// byte offset, macroblock address where known) when the stream is not baseline CAVLC as supported
// (Status::kUnsupported), is damaged (kMalformed) or refers to a missing parameter set (kMissing); out then
// holds the NAL units before the faulty one.
// edit: when set, called for every slice between parsing and re-coding with the NAL index, the slice
// header and the records; it may change coefficients (the compressed-domain tools: selective encryption,
// watermarking), which then go into the output. It must keep every record's kind, address and skel_bit,
// and keep levels within what baseline CAVLC can code (cavlc::level_overflow), else the call fails.
// Levels in blocks that the record's cbp does not code are not written (the cbp is the skeleton's).
using SliceEdit = std::function<void(int64_t nal_index, const SliceHeader& sh, SliceRecords& recs)>;
// opt: the re-coding backend (avc/recoder.h; the output is the same with every backend) and the threads
// (RecoderOptions::threads; used without edit and recoder only: the output is the same for every number). Slices are
// re-coded in batches of opt.batch_mbs macroblocks; the output is written as each batch completes.
// A backend that cannot start (kCuda without a GPU) or fails fails with Status::kBackend and says why.
// recoder: when set, it re-codes instead of one created from opt (opt is then not read): another
// SliceRecoder, such as the tests' slice-by-slice oracle.
bool reentropy_stream(const uint8_t* data, size_t size, std::vector<uint8_t>& out, ReentropyStats* stats,
                      Error& err, const SliceEdit& edit = nullptr, const RecoderOptions& opt = RecoderOptions(),
                      SliceRecoder* recoder = nullptr);

struct ThreadedGpuCoders;

// Many streams re-coded one after another with the same options (avc-reentropy --out-dir). recode() is
// reentropy_stream(data, size, out, stats, err, nullptr, opt), except that with threads > 1 and the cuda
// backend (or auto on a GPU) the GPU coders, and with them the process's CUDA context, are made once, in
// the background while the first stream is parsed (its batches coded on the CPU until they are ready),
// and kept for the streams after it. A stream that fails leaves the session usable for the next.
class ReentropySession {
 public:
  explicit ReentropySession(const RecoderOptions& opt);
  ~ReentropySession();
  ReentropySession(const ReentropySession&) = delete;
  ReentropySession& operator=(const ReentropySession&) = delete;
  bool recode(const uint8_t* data, size_t size, std::vector<uint8_t>& out, ReentropyStats* stats, Error& err);

 private:
  RecoderOptions opt_;
  std::unique_ptr<ThreadedGpuCoders> gpu_;
};

}  // namespace avc
