// cavlc/src/neighbours.h (private): nC from the left and top neighbours' TotalCoeff (9.2.1), shared by
// the slice coder and the frame coder; they differ only in which neighbouring macroblock is available.
#pragma once

#include <cstdint>

#include "cavlc/cavlc.h"
#include "cavlc/slice.h"

namespace cavlc {

// luma4x4BlkIdx -> raster index y * 4 + x of the 4x4 block (6.4.3).
constexpr uint8_t kBlkToRaster[16] = {0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15};

// Avail: bool(int addr, int neighbour_addr), whether a macroblock inside the frame is in the same
// slice. `cur` holds the totals of macroblock addr's blocks coded so far.
template <class Avail>
struct NcPredictor {
  const MbTotals* totals;  // indexed by macroblock address
  int mb_width;
  Avail avail;

  bool left(int addr) const { return addr % mb_width > 0 && avail(addr, addr - 1); }
  bool top(int addr) const { return addr >= mb_width && avail(addr, addr - mb_width); }

  // nC of the luma block at raster position (x, y).
  int luma(int addr, const MbTotals& cur, int x, int y) const {
    const bool aa = x > 0 || left(addr), ab = y > 0 || top(addr);
    const int na = x > 0 ? cur.luma[y * 4 + x - 1] : aa ? totals[addr - 1].luma[y * 4 + 3] : 0;
    const int nb = y > 0 ? cur.luma[(y - 1) * 4 + x] : ab ? totals[addr - mb_width].luma[12 + x] : 0;
    return predict_nc(aa, na, ab, nb);
  }
  // nC of the chroma AC block at (x, y) of component ch.
  int chroma(int addr, const MbTotals& cur, int ch, int x, int y) const {
    const bool aa = x > 0 || left(addr), ab = y > 0 || top(addr);
    const int na = x > 0 ? cur.chroma[ch][y * 2] : aa ? totals[addr - 1].chroma[ch][y * 2 + 1] : 0;
    const int nb = y > 0 ? cur.chroma[ch][x] : ab ? totals[addr - mb_width].chroma[ch][2 + x] : 0;
    return predict_nc(aa, na, ab, nb);
  }
};

// The same predictions for one macroblock whose left and top neighbours' totals are known up front
// (nullptr: not available), without a per-block availability test.
struct MbNeighbours {
  const MbTotals* left;
  const MbTotals* top;

  int luma(int, const MbTotals& cur, int x, int y) const {
    const bool aa = x > 0 || left, ab = y > 0 || top;
    const int na = x > 0 ? cur.luma[y * 4 + x - 1] : aa ? left->luma[y * 4 + 3] : 0;
    const int nb = y > 0 ? cur.luma[(y - 1) * 4 + x] : ab ? top->luma[12 + x] : 0;
    return predict_nc(aa, na, ab, nb);
  }
  int chroma(int, const MbTotals& cur, int ch, int x, int y) const {
    const bool aa = x > 0 || left, ab = y > 0 || top;
    const int na = x > 0 ? cur.chroma[ch][y * 2] : aa ? left->chroma[ch][y * 2 + 1] : 0;
    const int nb = y > 0 ? cur.chroma[ch][x] : ab ? top->chroma[ch][2 + x] : 0;
    return predict_nc(aa, na, ab, nb);
  }
};

}  // namespace cavlc
