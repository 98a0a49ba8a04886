// gpuec/capture.h: the stage's capture file (the inputs and result of every coded slice), and its reader.
//
// C++ only; x264 never includes it. The stage writes a capture when the environment variable
// GPUEC_CAPTURE names a file at gpuec_stage_create(): every slice the stage codes (gpuec_slice_defer with
// the cpu backend, gpuec_frame_complete with cuda) then appends one slice block. The benchmark (tools/bench/bench_stage.cpp) replays captures through the CPU coder.
//
// Writing:
// - One file per process. The first stage that opens a path truncates it and writes the file header;
//   every stage of the process appends to the same file (slice blocks are written whole, under a lock)
//   and the file is closed when the last stage is destroyed. A later stage that opens the same path
//   again appends.
// - gpuec_stage_create() fails (NULL, reason in its note) when the file cannot be opened, and
//   the call that codes the slice returns GPUEC_EBACKEND (after a message on stderr) when a block cannot be
//   written in full; every block is flushed, so a full disk shows at the slice that hit it.
// - With the capture off the stage pays one pointer test per slice.
//
// Order and frames: blocks are in the order the slices were coded (slice_index counts them,
// from 0, over the process). x264 starts every frame with a slice whose first_mb is 0, so a block with
// first_mb == 0 begins a new frame. With x264 --threads 1 (one stage, one frame at a time) the slices
// of a frame are consecutive and frames are in coded order; with frame threads, blocks of different
// frames interleave and the grouping by first_mb does not hold.
//
// File format, version 1. Integers are little-endian (the x86-64 host order the file is written in),
// with no padding between fields or blocks:
//   file header, 16 bytes:
//     char[8] magic       "GPUECCAP"
//     u32     version     1
//     u32     record_size sizeof(gpuec_mb) = 832
//   then one slice block per coded slice:
//     header, 64 bytes (CaptureSliceHeader below):
//       u32 tag            "SLCE" (bytes 'S','L','C','E')
//       u32 mb_width, mb_height      frame size of the stage in macroblocks
//       u32 record_count   records of the slice, skipped macroblocks included
//       u64 slice_index
//       i32 first_mb
//       u32 skeleton_bytes ceil(end_bit / 8) - start_bit / 8
//       i64 start_bit      slice start in the encoder's buffer (byte-aligned, as given to gpuec_slice_begin)
//       i64 end_bit        skeleton end (as given to gpuec_slice_defer / gpuec_slice_finish)
//       i64 out_bits       bits of the slice the stage produced (*rbsp_bits)
//       u64 out_hash       capture_hash() of those bits
//     skeleton: bytes [start_bit / 8, ceil(end_bit / 8)) of the encoder's buffer, as it was
//     records:  record_count raw gpuec_mb records, as committed (skel_bit in the encoder's buffer
//               coordinates; fields a skipped record does not use hold whatever the slot held)
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cavlc/mb.h"

namespace gpuec {

constexpr char kCaptureMagic[8] = {'G', 'P', 'U', 'E', 'C', 'C', 'A', 'P'};
constexpr uint32_t kCaptureVersion = 1;
constexpr uint32_t kCaptureSliceTag = 0x45434c53u;  // "SLCE" read as a little-endian u32

struct CaptureSliceHeader {
  uint32_t tag;
  uint32_t mb_width;
  uint32_t mb_height;
  uint32_t record_count;
  uint64_t slice_index;
  int32_t first_mb;
  uint32_t skeleton_bytes;
  int64_t start_bit;
  int64_t end_bit;
  int64_t out_bits;
  uint64_t out_hash;
};
static_assert(sizeof(CaptureSliceHeader) == 64, "capture slice header is 64 bytes on disk");

// One slice block of a capture, as read back.
struct CapturedSlice {
  CaptureSliceHeader head;
  std::vector<uint8_t> skeleton;  // bytes [start_bit / 8, ceil(end_bit / 8)) of the encoder's buffer
  std::vector<gpuec_mb> recs;     // head.record_count records
};

// 64-bit FNV-1a over the ceil(bits / 8) bytes of a bit string, the bits after `bits` in the last byte
// taken as zero (the stage's output as vle::BitWriter::flush leaves it).
uint64_t capture_hash(const uint8_t* data, int64_t bits);

// Reads a whole capture file. Returns true with `slices` filled, or false with a message naming the
// file and the byte offset of the problem (missing file, bad magic, version or record size, a
// truncated block, inconsistent header fields). Checks sizes only; the records are checked by whoever
// codes them.
bool read_capture(const std::string& path, std::vector<CapturedSlice>& slices, std::string& error);

}  // namespace gpuec
