// avc/residual.h: CAVLC residual decoding of H.264 baseline 4:2:0 (clause 9.2, syntax 7.3.5.3 and
// 7.3.5.3.2), the inverse of cavlc::write_block and of the encoder's macroblock residual path
// (cavlc::encode_slice_ref): what these functions decode, those re-code bit for bit.
//
// Coefficients come out as cavlc/mb.h records them: int16 levels in scan (zigzag) order of each block
// (gpuec_mb coef_order GPUEC_COEF_SCAN); an AC block (maxNumCoeff 15: Intra16x16 AC, chroma AC) puts scan
// position k of the block at index k + 1, index 0 (the DC position) is 0.
//
// Errors are negative values of ResidualError; every function also calls BitReader::fail() on an error,
// so the sticky flag records it. After an error the outputs are unspecified (partly written) and the
// reader's position lies somewhere in [its position at the call, end]. Nothing is read outside the
// reader's [begin, end) range, whatever the data: bits past the end read as zeros, and a block that
// needs them fails with kResidualTruncated.
//
// Bit order: the reader's (MSB first, avc/bitreader.h). All functions are pure apart from the reader and
// the outputs, thread-safe, and allocate nothing. The code tables are decode tables built at compile time
// from cavlc/tables.h's encode tables (H.264 Tables 9-5, 9-7, 9-8, 9-9(a), 9-10), so both directions
// share one copy of the standard.
#pragma once

#include <cstdint>

#include "avc/bitreader.h"
#include "cavlc/cavlc.h"
#include "cavlc/mb.h"
#include "cavlc/slice.h"

namespace avc {

// What went wrong; a caller maps them to its error report (residual_error_name gives the words). All
// are Status::kMalformed in avc/error.h's terms except kResidualLevelPrefix, which is valid H.264 in the
// High profiles (level_prefix > 15) and so Status::kUnsupported for a baseline parser.
enum ResidualError : int {
  kResidualInvalidCode = -1,    // a bit pattern that is no code of coeff_token, total_zeros or run_before
  kResidualTooManyCoeffs = -2,  // coeff_token's TotalCoeff > maxNumCoeff (16 in a 15-coefficient block)
  kResidualLevelPrefix = -3,    // level_prefix > 15: not allowed in baseline (7.4.5.3.3)
  kResidualPastBlockEnd = -4,   // TotalCoeff + total_zeros > maxNumCoeff, or run_before > zerosLeft
  kResidualTruncated = -5,      // the block runs past the reader's end (or the reader had already failed)
  kResidualBadArgument = -6,    // nC, maxNumCoeff, kind or cbp out of range
};

// "invalid code", "level_prefix > 15", ... for a ResidualError; "?" for anything else.
const char* residual_error_name(int err);

// Decodes one residual_block_cavlc() (7.3.5.3.2 with 9.2): coeff_token with the table of nC (Table
// 9-5), the trailing-one signs, the levels (level_prefix / level_suffix with the escapes of 9.2.2.1),
// total_zeros (Tables 9-7 and 9-8, or 9-9(a) when maxNumCoeff is 4), run_before (Table 9-10).
//   nC:          -1 with max_num_coeff 4 (chroma DC 4:2:0); 0..16 (any value >= 8 is the FLC column)
//                with max_num_coeff 15 or 16, as cavlc::predict_nc gives it.
//   coeffs:      max_num_coeff 4: 4 entries, the 2x2 DC levels c0..c3; 15 or 16: 16 entries, all written
//                (zeros where no level; index 0 is 0 for 15).
// Returns TotalCoeff (0..max_num_coeff) and leaves the reader right after the block, or a ResidualError.
// Every level of a successful decode fits int16 (baseline levels are below 2^12 in magnitude).
int decode_residual_block(BitReader& br, int nC, int max_num_coeff, int16_t* coeffs);

// The neighbours of the current macroblock for nC (9.2.1): the totals of macroblock mbAddrA (left) and
// mbAddrB (top) as the caller recorded them, nullptr when that macroblock is not available (outside the
// picture or in another slice, 6.4.x). The caller records a skipped macroblock as all 0 and an I_PCM one
// as all 16 (cavlc::MbTotals layout: luma raster y * 4 + x, chroma raster 2x2 per component).
struct ResidualNeighbours {
  const cavlc::MbTotals* left = nullptr;
  const cavlc::MbTotals* top = nullptr;
};

// Where decode_mb_residual failed: the block category and the block's index within it (luma4x4BlkIdx
// for kLuma4x4 / kLumaAC; 0 for kLumaDC; the component 0 (Cb) / 1 (Cr) for kChromaDC; 0..7, Cb 0..3 then
// Cr 0..3, for kChromaAC).
struct ResidualBlockRef {
  cavlc::BlockCat cat = cavlc::kLuma4x4;
  int index = 0;
};

// Decodes residual( 0, 15 ) of one macroblock (7.3.5.3; 4:2:0, no 8x8 transform) in syntax order: the
// Intra16x16 DC block (nC of luma block 0), the luma blocks of every coded 8x8 quadrant in
// luma4x4BlkIdx order (Intra16x16: the 16 AC blocks when cbp luma is 15), the two chroma DC blocks
// (nC -1) when cbp chroma > 0, the eight chroma AC blocks when cbp chroma == 2; each block's nC from the
// blocks left and above it (in this macroblock, or in nb), exactly as cavlc::encode_slice_ref computes
// it.
//   kind:   GPUEC_MB_NORMAL (I_NxN and inter macroblocks) or GPUEC_MB_I16x16.
//   cbp:    coded_block_pattern as gpuec_mb stores it: bits 0..3 luma 8x8 quadrants, (cbp >> 4) the
//           chroma pattern 0..2; Intra16x16 cbp luma must be 0 or 15 (its mb_type implies one of them).
//   rec:    u.coef is entirely written (blocks not coded are zero), kind, cbp and coef_order
//           (GPUEC_COEF_SCAN) are set; skel_bit, mb_addr and reserved are left as they were.
//   totals: the macroblock's totals as later neighbours must see them: TotalCoeff of each coded luma and
//           chroma AC block (Intra16x16: the AC blocks' counts, 0 with cbp luma 0), 0 for blocks not coded.
//           May alias neither nb.left nor nb.top.
//   failed: when not null and a block fails, that block (unchanged on success, on kResidualBadArgument
//           and when the reader had already failed).
//   dc_totals: when not null, 3 entries: TotalCoeff of the Intra16x16 DC block, of the Cb and of the Cr DC
//           block (0 where not coded). With totals, every count cavlc::mb_totals gives for rec.
// Returns 0, or a ResidualError (kResidualBadArgument for a kind or cbp out of range, without reading).
int decode_mb_residual(BitReader& br, gpuec_mb_kind kind, unsigned cbp, const ResidualNeighbours& nb,
                       gpuec_mb& rec, cavlc::MbTotals& totals, ResidualBlockRef* failed = nullptr,
                       uint8_t* dc_totals = nullptr);

// "Intra16x16 DC", "luma 4x4", ... for messages.
const char* residual_block_name(cavlc::BlockCat cat);

}  // namespace avc
