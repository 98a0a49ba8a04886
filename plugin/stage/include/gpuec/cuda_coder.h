// gpuec/cuda_coder.h: the entropy stage's CUDA backend: one frame part per submission (encode_frame_cuda),
// pinned host arrays the caller fills directly, one stream. Used by the stage (x264) and by the
// compressed-domain re-entropy (avc/recoder.h). Host C++ only; built when the build has CUDA
// (GPUEC_HAVE_CUDA), otherwise create() says why not.
//
// A frame part is rows whole macroblock rows of a frame mb_width wide. Slices are ranges of the part's
// macroblocks in order (cavlc::FrameSlice); slice_ids()[i] is the index of the slice holding macroblock i
// (neighbour availability). A SKIPPED macroblock may carry an index outside [0, n_slices) (-1): it is then
// no neighbour of anything and adds nothing to the output, inside a slice's range or outside every range
// (the re-entropy's filler macroblocks, cavlc/encode_frame_cuda.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "cavlc/assemble_frame.h"
#include "cavlc/mb.h"

namespace gpuec {

// A slice's skeleton in the coder's skeleton area: its `bits` skeleton bits (MSB first, from a byte
// boundary), then rbsp_stop_one_bit, which the assembly writes as the slice's last bit (the slice's
// FrameSlice::tail_len counts it), zero bits to the byte boundary. skeleton_bytes: its size in bytes;
// put_skeleton writes it from src (ceil(bits / 8) bytes read) to dst and returns that size.
inline size_t skeleton_bytes(uint64_t bits) { return static_cast<size_t>(bits / 8 + 1); }
inline size_t put_skeleton(uint8_t* dst, const uint8_t* src, uint64_t bits) {
  std::memcpy(dst, src, static_cast<size_t>((bits + 7) / 8));
  const unsigned r = static_cast<unsigned>(bits & 7);
  dst[bits >> 3] = static_cast<uint8_t>((r ? dst[bits >> 3] & (0xff00u >> r) : 0) | (0x80u >> r));
  return skeleton_bytes(bits);
}

class CudaCoder {
 public:
  // Device `device`, frames of mb_width x mb_height macroblocks. nullptr with the reason in *why.
  static std::unique_ptr<CudaCoder> create(int mb_width, int mb_height, int device, std::string* why);
  // The same interface on the CPU: cavlc::code_frame_ref + cavlc::assemble_frame_ref, the twins of what
  // the CUDA coder runs, on plain host arrays (stage/src/cpu_frame_coder.cpp). Same outputs, bit for bit;
  // for tests of what callers build around the coder, on machines without a GPU. nullptr with the reason
  // when the sizes are out of range or memory runs out.
  static std::unique_ptr<CudaCoder> create_cpu_twin(int mb_width, int mb_height, std::string* why);
  virtual ~CudaCoder() = default;

  // Pinned host arrays for one frame part, capacity mb_width * mb_height (+1 record): the stage
  // writes the inputs here (records in raster order from the part's first macroblock).
  virtual gpuec_mb* records() = 0;
  virtual int32_t* slice_ids() = 0;
  virtual cavlc::MbLead* leads() = 0;
  virtual cavlc::FrameSlice* slices() = 0;
  // cavlc::kTcRecordBytes per record: each record's TotalCoeff record (cavlc::tc_record; zero when skipped).
  virtual uint8_t* tc_records() = 0;
  // Pinned skeleton area (the arena bits of MbLead / FrameSlice are bits of this area) with room for
  // `bytes`; may move (contents kept). nullptr when it cannot grow. Not while a part is in flight.
  virtual uint8_t* skeleton(size_t bytes) = 0;

  // Enqueues the part: rows whole macroblock rows (rows * mb_width records), n_slices slices,
  // skeleton_bytes of the skeleton area. Returns false with the reason (a CUDA error) in *why; the
  // inputs are then untouched and the part can be coded on the CPU.
  virtual bool submit(int rows, int n_slices, size_t skeleton_bytes, std::string* why) = 0;
  // Waits for the part. On success *out is the frame output (cavlc/assemble_frame.h layout, readable
  // 64 bytes past the last slice) and *results its slices; false with the reason otherwise.
  virtual bool complete(const uint8_t** out, const cavlc::SliceResult** results, std::string* why) = 0;
};

}  // namespace gpuec
