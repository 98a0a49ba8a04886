// cavlc/cavlc.h: CAVLC residual block coding (H.264 7.3.5.3.2, 9.2), the CPU reference.
//
// Coefficients are int16 levels in scan (zigzag) order, as x264 stores them (records in raster order,
// cavlc/mb.h GPUEC_COEF_RASTER, are permuted through kRasterOfScan first). Bits are written MSB first
// through vle::BitWriter (see vle/bitwriter.h for the bit format). All functions are pure and thread-safe.
// The code tables live once in cavlc/tables.h and are shared with the CUDA kernel.
#pragma once

#include <cstdint>

#include "vle/bitwriter.h"

namespace cavlc {

// Residual block categories of baseline 4:2:0 (maxNumCoeff in parentheses).
enum BlockCat : uint8_t {
  kLumaDC = 0,    // Intra16x16 DC (16)
  kLumaAC = 1,    // Intra16x16 AC (15)
  kLuma4x4 = 2,   // luma 4x4 (16)
  kChromaDC = 3,  // chroma DC 2x2 (4), always coded with nC = -1
  kChromaAC = 4,  // chroma AC (15)
};

constexpr int max_coeffs(BlockCat cat) {
  return cat == kChromaDC ? 4 : (cat == kLumaAC || cat == kChromaAC) ? 15 : 16;
}

// The frame (progressive) zigzag scan of a 4x4 block, H.264 8.5.6 Table 8-13 (Figure 8-8 a): scan index
// i -> raster position 4 * y + x in the block. Used for Intra16x16 DC, luma and chroma AC blocks; the
// 2x2 chroma DC scan is the identity. Scan index 0 is raster position 0 (the DC of an AC block).
constexpr uint8_t kRasterOfScan[16] = {0, 1, 4, 8, 5, 2, 3, 6, 9, 12, 13, 10, 7, 11, 14, 15};

// Number of non-zero coefficients among the first n.
int total_coeff(const int16_t* coeffs, int n);

// nC from the neighbours' TotalCoeff (9.2.1): both available (nA + nB + 1) >> 1, one: its value, none: 0.
constexpr int predict_nc(bool avail_a, int n_a, bool avail_b, int n_b) {
  return (avail_a && avail_b) ? (n_a + n_b + 1) >> 1 : avail_a ? n_a : avail_b ? n_b : 0;
}

// Writes residual_block_cavlc() for one block: coeff_token, trailing-one signs, levels (prefix/suffix
// with escapes), total_zeros and run_before. n is max_coeffs(cat); nC is 0..16, or -1 for chroma DC.
// Returns TotalCoeff. Levels must be codable in baseline (see level_overflow); otherwise the written
// code is truncated to 12 suffix bits exactly as x264 does before it re-encodes the macroblock.
int write_block(vle::BitWriter& bw, const int16_t* coeffs, int n, int nC);
// The same, and sets *overflow (leaves it otherwise) when level_overflow(coeffs, n): the verdict comes
// from the coding itself, without a second pass over the levels.
int write_block(vle::BitWriter& bw, const int16_t* coeffs, int n, int nC, bool* overflow);

// Number of bits write_block would write (same arguments), without writing.
int block_bits(const int16_t* coeffs, int n, int nC);

// True when some level of the block cannot be coded in baseline/main profile: its level_prefix would
// exceed 15 (level_code - (15 << suffixLength) - (suffixLength == 0 ? 15 : 0) >= 4096). x264 calls this
// an overflow and re-encodes the macroblock at QP + 1. Depends on the level sequence, not on nC.
bool level_overflow(const int16_t* coeffs, int n);

// The largest |level| that never overflows: level_overflow is false for every block whose levels all
// lie in [-kMaxSafeAbsLevel, kMaxSafeAbsLevel], whatever their positions, TotalCoeff and TrailingOnes.
// Derivation (9.2.2.1, tables::level_vlc): a level of magnitude A has levelCode 2A - 2 (positive) or
// 2A - 1 (negative), 2 less for the first level after fewer than 3 trailing ones, so at most 2A - 1.
// It overflows when it takes the escape (level_prefix 15) and the 12-bit suffix
// levelCode - (15 << suffixLength) - (suffixLength == 0 ? 15 : 0) reaches 4096: levelCode >= 4126 at
// suffixLength 0 or 1, >= 4096 + (15 << suffixLength) > 4126 at 2..6. 2A - 1 <= 4125 gives A <= 2063.
// The bound is tight: A = 2064 unreduced at suffixLength 0 (after three trailing ones, {2064, 1, 1, 1})
// or 1 (after a small level, {2064, 2}) has levelCode 4126 (+2064) or 4127 (-2064) and overflows.
// cavlc.cpp checks the arithmetic against level_vlc at compile time.
constexpr int kMaxSafeAbsLevel = 2063;

}  // namespace cavlc
