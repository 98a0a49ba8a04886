// avc/slice_data.h: the macroblock layer of baseline CAVLC slices (7.3.4 slice_data, 7.3.5
// macroblock_layer, mb_pred, sub_mb_pred), parsed without reconstructing pixels into what the entropy
// stage consumes: one cavlc/mb.h record per macroblock (skipped ones included) and the slice's skeleton,
// the bits of the RBSP that are not residual. Re-coding the records into the skeleton with
// cavlc::encode_slice_ref (cavlc/slice.h; SliceLayout with the picture's slice map) gives back the slice
// data bit for bit.
//
// Skeleton: RBSP bits [0, stop_bit) (slice header and slice data, up to the rbsp_stop_one_bit exclusive)
// with the residual of every macroblock cut out. record.skel_bit is where that macroblock's residual goes:
//   coded macroblock: after mb_qp_delta (the residual( 0, 15 ) syntax);
//   macroblock without residual (cbp 0, not Intra16x16): after coded_block_pattern (nothing is inserted);
//   I_PCM: after mb_type (the record writes pcm_alignment_zero_bit and the 384 samples);
//   skipped: not used (0).
// The caller appends rbsp_trailing_bits (a 1, then zeros to the byte boundary) after re-coding.
//
// Neighbours for nC (9.2.1) are the macroblocks of the same slice: PictureContext keeps, for every
// macroblock of the picture being parsed, the index of the slice that coded it and its TotalCoeff counts,
// so slices in any order (ASO), slice groups (FMO) and redundant slices (a slice index of their own) are
// handled alike. Errors: avc/error.h (kMalformed for broken syntax, with the macroblock address).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "avc/error.h"
#include "avc/slice_group.h"
#include "avc/slice_header.h"
#include "cavlc/assemble_frame.h"
#include "cavlc/mb.h"
#include "cavlc/slice.h"

namespace avc {

// coded_block_pattern from its me(v) codeNum (Table 9-4, ChromaArrayType 1): [codeNum][0] for Intra_4x4
// macroblocks, [codeNum][1] for inter macroblocks; cbp = luma (bits 0..3) | chroma << 4.
extern const uint8_t kCbpOfCodeNum[48][2];

// Per picture: who coded each macroblock and its TotalCoeff counts as neighbours see them.
struct PictureContext {
  int mb_width = 0;
  int n_mbs = 0;
  std::vector<int32_t> owner;              // slice index of the picture that coded the macroblock, -1 none
  std::vector<cavlc::MbTotals> totals;     // valid where owner >= 0
  // Starts a picture of mb_width x (n_mbs / mb_width) macroblocks: nothing coded yet.
  void reset(int width_in_mbs, int size_in_mbs);
};

struct SliceRecords {
  std::vector<gpuec_mb> mbs;   // every macroblock of the slice in decoding order
  std::vector<uint8_t> skel;   // the skeleton, MSB first (vle/bitwriter.h format), zero-padded
  uint64_t skel_bits = 0;      // its length in bits
};

// Parses slice_data() of the slice whose header is sh, RBSP rbsp[0, size) (as parse_slice_header read
// it). groups: the picture's slice group map (slice_group.h), for NextMbAddress (8.2.2.8); pic: sized for
// the picture (reset()). slice_index: a number unique to this slice within the picture (pic.owner gets
// it). Fills out (its vectors are reused: no allocation once they are large enough) and pic. Returns
// false with err (mb_addr set) on malformed data.
bool parse_slice_data(const uint8_t* rbsp, size_t size, const SliceHeader& sh, const SliceGroupMap& groups,
                      int32_t slice_index, PictureContext& pic, SliceRecords& out, Error& err);

// The same parse written straight into a frame coder's arrays (cavlc/frame_coder.h), as the re-coder lays
// a slice into a band (avc/recoder.h): no SliceRecords, no second copy of the 832-byte records.
// Macroblock a goes to index base + a: a coded one's record (mb_addr = base + a), lead (skeleton bits from
// skel_bit0 + the previous insertion point) and, when tc_records is set, its TotalCoeff record
// (cavlc::tc_record layout, from the counts the residual decoder read, which are cavlc::mb_totals' counts
// of the record); every one's slice_ids entry = slice_id. A skipped macroblock's record, lead and
// TotalCoeff record are not written (the caller's filler: skipped, all zero). The skeleton is written to
// skel[0, skel_capacity), which must hold sh.stop_bit / 8 + 16 bytes. A macroblock address outside
// [first_allowed, last_allowed] stops the parse (kMalformed, err.mb_addr set) before anything is written
// for it. Outputs: skel_bits, tail_bit (the skeleton bit after the last insertion point), first_mb,
// last_mb (addresses), n_mbs and coded_mbs (not skipped).
struct SliceTarget {
  gpuec_mb* records = nullptr;
  int32_t* slice_ids = nullptr;
  cavlc::MbLead* leads = nullptr;
  uint8_t* tc_records = nullptr;  // kTcRecordBytes each, or nullptr
  size_t base = 0;
  int32_t slice_id = 0;
  int32_t first_allowed = 0, last_allowed = 0;
  uint8_t* skel = nullptr;
  size_t skel_capacity = 0;
  uint64_t skel_bit0 = 0;  // bit of skel[0] in the coder's skeleton area
  // outputs
  uint64_t skel_bits = 0, tail_bit = 0;
  int32_t first_mb = -1, last_mb = -1;
  int64_t n_mbs = 0, coded_mbs = 0;
};
// On success every position of [first_allowed, last_allowed] the slice did not code holds a filler (below).
// pic.owner must hold no entry equal to slice_index from an earlier slice.
bool parse_slice_into(const uint8_t* rbsp, size_t size, const SliceHeader& sh, const SliceGroupMap& groups,
                      int32_t slice_index, PictureContext& pic, SliceTarget& target, Error& err);
// Filler at positions base + [first, last] of t's arrays: a skipped record, slice index -1, lead and
// TotalCoeff record zero (nobody's neighbour, nothing in the output; cavlc/frame_coder.h).
void write_filler(const SliceTarget& t, int32_t first, int32_t last);

}  // namespace avc
