// cavlc/frame_coder.h: THE frame coder: every slice of a frame part coded and assembled in one submission,
// on the CPU or on a CUDA device, behind one interface created from one gpu::Backend value. The x264 stage
// (plugin/stage) and the compressed-domain re-entropy (avc/recoder.h) both code through it.
//
// Frame part. `rows` whole macroblock rows of a frame mb_width macroblocks wide: rows * mb_width records
// in raster order from the part's first macroblock (index i of the arrays below is macroblock i of the
// part). Slices are ranges of those indices, in order, not overlapping (cavlc::FrameSlice); slice_ids()[i]
// is the index k of the slice (slices()[k]) whose range holds macroblock i. A neighbour is available when
// it has the same index. A SKIPPED macroblock may carry an index outside [0, n_slices) (-1): it is then
// no neighbour of anything and adds nothing to the output, inside a slice's range or outside every range
// (filler macroblocks: parts that do not start or end on a row, gaps between slices, the re-entropy's
// bands; cavlc/encode_frame_cuda.h states the same contract for the kernels).
//
// Skeleton. The skeleton area (skeleton()) holds each slice's skeleton: the encoder's syntax bits without
// the residual blocks, MSB first (vle/bitwriter.h). MbLead / FrameSlice source bits are bits of this area:
// lead[i] is the skeleton piece in front of coded macroblock i's residual, a slice's tail the piece after
// its last insertion point. put_skeleton() copies one slice's skeleton in with rbsp_stop_one_bit after it,
// which the coder writes as the slice's last bit (the slice's tail_len counts it).
//
// Output (complete()): the slices in order, slice k at bit results[k].out_bit (a multiple of 32) with
// results[k].bits bits, zero bits to the next multiple of 32; the layout of cavlc/assemble_frame.h. The
// output is readable 64 bytes past the last slice.
//
// Backends (create()):
//   kCpu   encode_frame_ref below, on plain host arrays; submit() codes, complete() hands out.
//   kCuda  encode_frame_cuda (the CAVLCU kernel and the GPU assembly) on device `device`, on the coder's
//          own stream, from pinned host arrays the caller fills directly; submit() enqueues and returns,
//          complete() waits. nullptr with the reason when no device is usable or the build has no CUDA.
//   kAuto  kCuda when a device is usable, else kCpu.
// The two give the same bytes (tests/bitexact and the frame coder tests check it).
//
// Memory of a kCuda coder (memory() says what it holds now; README "Memory per encoder" sizes a host from
// it). M = mb_width * mb_height. At create, for a whole frame: pinned host arrays for M + 1 records (records,
// slice ids, leads, TotalCoeff records, slices, results: 924 bytes a macroblock), a pinned skeleton area of
// 64 M + 64 KiB and a mapped pinned output of 256 M + 64 KiB, their device twins (small arrays, output), and
// the device arena (skeletons, records, slots: 3424 bytes a macroblock), the slot lengths and the kernel
// workspace: allocating during the encode stalls it (docs/benchmarks.md, issue 17), and the stage creates its
// coder in the background (PendingCudaCoder). The skeleton area doubles when a frame's skeletons need more;
// the output (host and device alike) grows to 1.5x a part's output when that part's output did not fit:
// complete() then codes the part again on the device, synchronously, into the larger output (same bits).
// So after the largest part and the largest output, nothing is allocated any more.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "cavlc/assemble_frame.h"
#include "cavlc/frame_cuda.h"
#include "cavlc/mb.h"
#include "cavlc/slice.h"
#include "gpu/backend.h"

namespace cavlc {

// The largest frame (in macroblocks) the frame coder takes: the CUDA kernel's limit.
constexpr int64_t kFrameCoderMaxMbs = kFrameCudaMaxMbs;

// A slice's skeleton in the skeleton area: its `bits` skeleton bits (MSB first, from a byte boundary),
// then rbsp_stop_one_bit, zero bits to the byte boundary. skeleton_bytes: its size in bytes; put_skeleton
// writes it from src (ceil(bits / 8) bytes read) to dst and returns that size.
inline size_t skeleton_bytes(uint64_t bits) { return static_cast<size_t>(bits / 8 + 1); }
inline size_t put_skeleton(uint8_t* dst, const uint8_t* src, uint64_t bits) {
  std::memcpy(dst, src, static_cast<size_t>((bits + 7) / 8));
  const unsigned r = static_cast<unsigned>(bits & 7);
  dst[bits >> 3] = static_cast<uint8_t>((r ? dst[bits >> 3] & (0xff00u >> r) : 0) | (0x80u >> r));
  return skeleton_bytes(bits);
}

// Memory a frame coder holds: device bytes (cudaMalloc) and pinned host bytes (cudaHostAlloc), as asked
// of the CUDA runtime (which rounds up to its pages). Not counted: the CUDA context of the process (one per
// device, shared by every coder of the process), streams, events, plain host memory.
struct FrameCoderMemory {
  int64_t device_bytes = 0;
  int64_t pinned_bytes = 0;
};

class FrameCoder {
 public:
  // A coder for frames of mb_width x mb_height macroblocks on `backend` (kCpu, kCuda or kAuto; kOff is
  // refused), CUDA device `device`. nullptr with the reason in *why.
  static std::unique_ptr<FrameCoder> create(gpu::Backend backend, int mb_width, int mb_height, int device,
                                            std::string* why);
  virtual ~FrameCoder() = default;

  // kCpu or kCuda: what this coder runs on.
  virtual gpu::Backend backend() const = 0;

  // What the coder holds now (it grows as described above; kCpu: 0 and 0, its arrays are plain host
  // memory). Any time, a part in flight or not: it reads sizes only.
  virtual FrameCoderMemory memory() const = 0;

  // Host arrays for one frame part, capacity mb_width * mb_height + 1 entries (pinned with kCuda): the
  // caller writes the inputs here, every entry a part reads (they are not initialized at create).
  // records()[i].mb_addr is not read.
  virtual gpuec_mb* records() = 0;
  virtual int32_t* slice_ids() = 0;
  virtual MbLead* leads() = 0;
  virtual FrameSlice* slices() = 0;
  // kTcRecordBytes per record: each record's TotalCoeff record (cavlc::tc_record of cavlc::mb_totals; zero
  // when skipped), which kCuda reads instead of counting on the GPU. nullptr on kCpu, which needs none.
  virtual uint8_t* tc_records() = 0;
  // The skeleton area, with room for `bytes`; may move (contents kept). nullptr when it cannot grow. Not
  // while a part is in flight.
  virtual uint8_t* skeleton(size_t bytes) = 0;

  // Commits coded macroblock i of the part being filled, whose record is m: slice_ids()[0..i] are written,
  // and so are the records of i's left and top neighbours in its slice (committed, or skipped: kind
  // GPUEC_MB_SKIP in records()). Writes the TotalCoeff of each block to totals (cavlc::mb_totals's
  // values, GPUEC_TC_* order) and returns 0; 1 on a level overflow (cavlc::level_overflow: nothing is
  // kept, and the caller re-encodes the macroblock and commits it again); -1 for a malformed record
  // (mb_totals's -1, or a skipped one).
  //   kCpu   m may be any record (it is copied to records()[i] unless it is that record); submit() codes
  //          the part whole (encode_frame_ref). For a part coded once, at commit, see commit_streamed.
  //   kCuda  m must be records()[i], which must not change until the part is submitted: the coder
  //          counts (cavlc::mb_totals) and writes i's TotalCoeff record (tc_records()), which the GPU
  //          reads instead of counting; required before submit.
  virtual int commit(int32_t i, const gpuec_mb& m, uint8_t totals[GPUEC_TC_COUNT]);

  // Streamed parts (kCpu only; kCuda refuses: -1, false). The caller holds each slice's skeleton in its
  // own buffer (the x264 stage: x264's bitstream buffer, which may move between calls) and hands the bits
  // as they are written, so that each slice's output is written once, in order, and submit() has nothing
  // left to do: no skeleton area, no leads, no FrameSlice entries. A part is streamed when its first call
  // is one of these; then every coded macroblock goes through commit_streamed and every slice ends with
  // end_slice_streamed (slice k at its turn, k = 0, 1, ...), and submit() checks that n_slices ended.
  //   commit_streamed: as commit (same preconditions, return values and totals), and appends to slice
  //     slice_ids()[i]'s output the skeleton bits [from_bit, to_bit) of skel (the piece in front of i's
  //     residual), then i's residual (I_PCM: pcm_alignment_zero_bits and the samples). On a level overflow
  //     (1) nothing is appended. skel must be readable 8 bytes past the byte of bit to_bit - 1.
  //   end_slice_streamed: appends slice k's tail, the skeleton bits [from_bit, to_bit) of skel, and
  //     rbsp_stop_one_bit; slice k is then complete (its SliceResult as complete() gives it).
  //   drop_slice_streamed: slice k, not ended, is dropped from the output (the caller abandoned it).
  //   restart_stream: forgets a streamed part that was not submitted (a new part starts).
  virtual int commit_streamed(int32_t i, const gpuec_mb& m, uint8_t totals[GPUEC_TC_COUNT], const uint8_t* skel,
                              uint64_t from_bit, uint64_t to_bit);
  virtual bool end_slice_streamed(int k, const uint8_t* skel, uint64_t from_bit, uint64_t to_bit);
  virtual void drop_slice_streamed(int k);
  virtual void restart_stream();

  // Codes (kCpu) or enqueues (kCuda) the part: rows whole macroblock rows, n_slices slices, skeleton_bytes
  // bytes of the skeleton area. False with the reason in *why (out of range, malformed records, a CUDA
  // error); the inputs are then untouched, and a CPU coder can code them (the stage's fallback).
  virtual bool submit(int rows, int n_slices, size_t skeleton_bytes, std::string* why) = 0;
  // Waits for the part. On success *out is the output and *results its slices (valid until the next
  // submit); false with the reason otherwise. kCuda: when the part's output is larger than the output
  // area, the area grows and the part is coded again before complete() returns.
  virtual bool complete(const uint8_t** out, const SliceResult** results, std::string* why) = 0;
};

// A kCuda coder created on a thread of its own. Creating a process's CUDA context and a coder's pinned and
// device buffers takes about 130 ms in one process and over 2 s when 16 processes open at once (the driver
// creates contexts one at a time; docs/benchmarks.md, issue 17), so a caller starts it at once and codes
// on a kCpu coder until ready() (the bytes are the same). The destructor waits for the thread.
class PendingCudaCoder {
 public:
  // Starts creating FrameCoder::create(kCuda, mb_width, mb_height, device) (on the calling thread when no
  // thread can be started). With held, only the device check runs (device_usable below); the context and
  // the buffers wait for start().
  PendingCudaCoder(int mb_width, int mb_height, int device, bool held = false);
  ~PendingCudaCoder();
  PendingCudaCoder(const PendingCudaCoder&) = delete;
  PendingCudaCoder& operator=(const PendingCudaCoder&) = delete;
  // Whether take() would return at once. Never blocks.
  bool ready() const;
  // Waits for the creation (starting a held one) and hands its coder over (once); nullptr with the reason in
  // *why when it failed.
  std::unique_ptr<FrameCoder> take(std::string* why);
  // Waits only for the first step, gpu::device_usable (the driver's initialisation, 0.1-0.2 s on a GPU
  // host, at once without one): whether the device is usable, with the reason in *why when not.
  bool device_usable(std::string* why);
  // Lets a held creation go on past the device check (once; nothing otherwise).
  void start();
  // Makes the destructor leave a creation still running to finish on its own thread (detached) instead of
  // waiting for it. A program that lets it do so must end by std::_Exit (after writing its outputs), not
  // by returning from main, while abandoned() is non-zero: the CUDA runtime's exit handlers must not run
  // beside the thread. avc-reentropy does so, for a stream the CPU finished before the GPU was ready.
  void abandon_on_destroy();
  // Creations left running by destructors (see abandon_on_destroy), in the whole process.
  static int abandoned();

 private:
  struct State;
  static void create(State& s, int mb_width, int mb_height, int device);
  std::shared_ptr<State> state_;
};

// The frame coder's CPU path: the frame part `in` (host pointers; in.arena is the skeleton area, and
// in.records_bit, slots_bit, zero_bit and slot_len are not read: the residual is coded straight into the
// output) with slice_index as above, coded and assembled as encode_frame_cuda does (the same bits as
// code_frame_ref followed by assemble_frame_ref). totals: scratch of in.n_mbs entries. Writes results and
// out[0, packed_bytes(total)) and returns the total bits; UINT64_MAX when slices are out of order or out
// of range, a coded macroblock is not in its slice or malformed, or out_bytes is too small.
uint64_t encode_frame_ref(const FrameAssembly& in, int mb_width, const int32_t* slice_index, uint8_t* out,
                          uint64_t out_bytes, SliceResult* results, MbTotals* totals);

}  // namespace cavlc
