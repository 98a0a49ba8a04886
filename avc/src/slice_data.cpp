// The macroblock layer of baseline CAVLC slices (avc/slice_data.h).
#include "avc/slice_data.h"

#include <algorithm>
#include <cstring>

#include "avc/bitreader.h"
#include "avc/residual.h"
#include "vle/bitwriter.h"

namespace avc {

// Table 9-4, ChromaArrayType 1 or 2: codeNum -> coded_block_pattern {Intra_4x4, Inter}.
const uint8_t kCbpOfCodeNum[48][2] = {
    {47, 0},  {31, 16}, {15, 1},  {0, 2},   {23, 4},  {27, 8},  {29, 32}, {30, 3},  {7, 5},   {11, 10},
    {13, 12}, {14, 15}, {39, 47}, {43, 7},  {45, 11}, {46, 13}, {16, 14}, {3, 6},   {5, 9},   {10, 31},
    {12, 35}, {19, 37}, {21, 42}, {26, 44}, {28, 33}, {35, 34}, {37, 36}, {42, 40}, {44, 39}, {1, 43},
    {2, 45},  {4, 46},  {8, 17},  {17, 18}, {18, 20}, {20, 24}, {24, 19}, {6, 21},  {9, 26},  {22, 28},
    {25, 23}, {32, 27}, {33, 29}, {34, 30}, {36, 22}, {40, 25}, {38, 38}, {41, 41}};

void PictureContext::reset(int width_in_mbs, int size_in_mbs) {
  mb_width = width_in_mbs;
  n_mbs = size_in_mbs;
  owner.assign(size_t(size_in_mbs), -1);
  totals.resize(size_t(size_in_mbs));
}

namespace {

// gpuec_mb cbp from the standard's coded_block_pattern (luma bits 0..3, chroma in bits 4..5).
inline uint8_t record_cbp(unsigned luma, unsigned chroma) { return uint8_t(luma | (chroma << 4)); }

constexpr int kNumSubMbPart[4] = {1, 2, 2, 4};  // P_L0_8x8, P_L0_8x4, P_L0_4x8, P_L0_4x4 (Table 7-17)

struct MbParser {
  BitReader& br;
  const SliceHeader& sh;
  Error& err;
  int32_t addr = 0;

  bool bad(const char* what, long long value) {
    err.mb_addr = addr;
    return fail(err, Status::kMalformed, "%s %lld out of range", what, value);
  }
  bool truncated(const char* what) {
    err.mb_addr = addr;
    return fail(err, Status::kMalformed, "%s runs past the end of the slice data", what);
  }

  // ref_idx_l0 of one partition (te(v), range num_ref_idx_l0_active - 1; absent with one reference).
  bool ref_idx() {
    const uint32_t range = uint32_t(sh.num_ref_idx_l0_active) - 1;
    if (range == 0) return true;
    const uint32_t v = br.te(range);
    if (!br.ok()) return truncated("ref_idx_l0");
    if (v > range) return bad("ref_idx_l0", v);
    return true;
  }
  bool mvd(int pairs) {
    for (int i = 0; i < 2 * pairs; ++i) {
      const int32_t v = br.se();
      if (!br.ok()) return truncated("mvd_l0");
      // 7.4.5.1: mvd_l0 in [-8192, 8191.75] quarter samples for the horizontal component, the level's
      // vertical range for the vertical one; the widest legal range is -2^15 .. 2^15 - 1.
      if (v < -32768 || v > 32767) return bad("mvd_l0", v);
    }
    return true;
  }
};

}  // namespace

bool parse_slice_data(const uint8_t* rbsp, size_t size, const SliceHeader& sh, const SliceGroupMap& groups,
                      int32_t slice_index, PictureContext& pic, SliceRecords& out, Error& err) {
  const int n_mbs = pic.n_mbs, w = pic.mb_width;
  if (w <= 0 || uint32_t(n_mbs) != groups.size() || uint32_t(n_mbs) != sh.pic_size_in_mbs)
    return fail(err, Status::kMalformed, "picture context (%d macroblocks) does not match the slice (%u)", n_mbs,
                sh.pic_size_in_mbs);
  auto next_mb = [&](int32_t a) { return int32_t(groups.next(uint32_t(a))); };
  out.mbs.clear();
  if (sh.stop_bit > uint64_t(size) * 8 || sh.data_bit > sh.stop_bit)
    return fail(err, Status::kMalformed, "slice data range [%llu, %llu) outside the RBSP",
                static_cast<unsigned long long>(sh.data_bit), static_cast<unsigned long long>(sh.stop_bit));
  // The skeleton is never longer than the slice's RBSP.
  const size_t skel_cap = size_t(sh.stop_bit / 8) + 16;
  if (out.skel.size() < skel_cap) out.skel.resize(skel_cap);  // grows only: the writer writes every byte it uses
  vle::BitWriter sk(out.skel.data(), out.skel.size());
  sk.copy_bits(rbsp, 0, sh.data_bit);
  uint64_t copied = sh.data_bit;  // RBSP bits before this one are in the skeleton (or cut out)

  BitReader br(rbsp, sh.data_bit, sh.stop_bit);
  MbParser mp{br, sh, err};
  auto more_data = [&] { return br.pos() < sh.stop_bit; };
  // The skeleton up to the current reader position; returns the skeleton bit there.
  auto cut = [&]() -> int64_t {
    sk.copy_bits(rbsp, copied, br.pos() - copied);
    copied = br.pos();
    return int64_t(sk.bits());
  };
  auto available = [&](int32_t nb) { return pic.owner[size_t(nb)] == slice_index; };
  auto push = [&](int32_t a, uint8_t kind) -> gpuec_mb& {
    out.mbs.emplace_back();
    gpuec_mb& m = out.mbs.back();
    std::memset(&m, 0, sizeof m);
    m.mb_addr = a;
    m.kind = kind;
    m.coef_order = GPUEC_COEF_SCAN;
    return m;
  };

  int32_t addr = int32_t(sh.first_mb_in_slice);
  bool more = true;
  while (more) {
    mp.addr = addr;
    if (!sh.is_i()) {
      const uint32_t run = br.ue();
      if (!br.ok()) return mp.truncated("mb_skip_run");
      for (uint32_t i = 0; i < run; ++i) {
        if (addr < 0 || addr >= n_mbs) return mp.bad("mb_skip_run", run);
        push(addr, GPUEC_MB_SKIP);
        pic.owner[size_t(addr)] = slice_index;
        pic.totals[size_t(addr)] = cavlc::MbTotals{};
        addr = next_mb(addr);
        mp.addr = addr;
      }
      if (run > 0 && !more_data()) break;
    }
    if (addr < 0 || addr >= n_mbs) {
      err.mb_addr = addr;
      return fail(err, Status::kMalformed, "macroblock address %d past the picture (%d macroblocks)", addr, n_mbs);
    }
    uint32_t mb_type = br.ue();
    if (!br.ok()) return mp.truncated("mb_type");
    bool intra = sh.is_i();
    if (!intra) {
      if (mb_type > 30) return mp.bad("mb_type (P slice)", mb_type);
      if (mb_type >= 5) {
        intra = true;
        mb_type -= 5;
      }
    } else if (mb_type > 25) {
      return mp.bad("mb_type (I slice)", mb_type);
    }

    gpuec_mb_kind kind = GPUEC_MB_NORMAL;
    unsigned cbp_luma = 0, cbp_chroma = 0;
    bool has_cbp = true;
    if (intra && mb_type == 25) {  // I_PCM: the record holds the alignment bits and the samples
      gpuec_mb& m = push(addr, GPUEC_MB_PCM);
      m.skel_bit = cut();
      while (!br.byte_aligned()) {
        if (br.u(1) != 0) {
          err.mb_addr = addr;
          return fail(err, Status::kMalformed, "pcm_alignment_zero_bit is 1");
        }
      }
      for (int i = 0; i < 384; ++i) m.u.pcm[i] = uint8_t(br.u(8));
      if (!br.ok()) return mp.truncated("pcm_sample");
      copied = br.pos();  // cut out
      cavlc::MbTotals& t = pic.totals[size_t(addr)];
      std::memset(t.luma, 16, sizeof t.luma);
      std::memset(t.chroma, 16, sizeof t.chroma);
      pic.owner[size_t(addr)] = slice_index;
    } else {
      if (intra) {
        if (mb_type == 0) {  // I_NxN: 16 prev_intra4x4_pred_mode_flag / rem_intra4x4_pred_mode
          for (int b = 0; b < 16; ++b)
            if (!br.u(1)) br.skip(3);
        } else {  // Intra_16x16: prediction mode and cbp from mb_type (Table 7-11)
          kind = GPUEC_MB_I16x16;
          cbp_chroma = ((mb_type - 1) / 4) % 3;
          cbp_luma = mb_type >= 13 ? 15 : 0;
          has_cbp = false;
        }
        const uint32_t chroma_mode = br.ue();
        if (!br.ok()) return mp.truncated("intra prediction modes");
        if (chroma_mode > 3) return mp.bad("intra_chroma_pred_mode", chroma_mode);
      } else if (mb_type <= 2) {  // P_L0_16x16, P_L0_L0_16x8, P_L0_L0_8x16
        const int parts = mb_type == 0 ? 1 : 2;
        for (int p = 0; p < parts; ++p)
          if (!mp.ref_idx()) return false;
        if (!mp.mvd(parts)) return false;
      } else {  // P_8x8 (3), P_8x8ref0 (4)
        uint32_t sub[4];
        for (uint32_t& s : sub) {
          s = br.ue();
          if (!br.ok()) return mp.truncated("sub_mb_type");
          if (s > 3) return mp.bad("sub_mb_type", s);
        }
        if (mb_type == 3)
          for (int p = 0; p < 4; ++p)
            if (!mp.ref_idx()) return false;
        for (uint32_t s : sub)
          if (!mp.mvd(kNumSubMbPart[s])) return false;
      }
      if (has_cbp) {
        const uint32_t code = br.ue();
        if (!br.ok()) return mp.truncated("coded_block_pattern");
        if (code > 47) return mp.bad("coded_block_pattern codeNum", code);
        const uint8_t cbp = kCbpOfCodeNum[code][intra ? 0 : 1];
        cbp_luma = cbp & 15;
        cbp_chroma = cbp >> 4;
      }
      gpuec_mb& m = push(addr, uint8_t(kind));
      m.cbp = record_cbp(cbp_luma, cbp_chroma);
      cavlc::MbTotals& t = pic.totals[size_t(addr)];
      if (cbp_luma || cbp_chroma || kind == GPUEC_MB_I16x16) {
        const int32_t qp_delta = br.se();
        if (!br.ok()) return mp.truncated("mb_qp_delta");
        if (qp_delta < -26 || qp_delta > 25) return mp.bad("mb_qp_delta", qp_delta);
        m.skel_bit = cut();
        ResidualNeighbours nb;
        if (addr % w > 0 && available(addr - 1)) nb.left = &pic.totals[size_t(addr - 1)];
        if (addr >= w && available(addr - w)) nb.top = &pic.totals[size_t(addr - w)];
        ResidualBlockRef where;
        const int r = decode_mb_residual(br, kind, m.cbp, nb, m, t, &where);
        if (r != 0) {
          err.mb_addr = addr;
          return fail(err, r == kResidualLevelPrefix ? Status::kUnsupported : Status::kMalformed,
                      "residual: %s block %d: %s", residual_block_name(where.cat), where.index,
                      residual_error_name(r));
        }
        copied = br.pos();  // the residual is cut out
      } else {
        m.skel_bit = cut();
        t = cavlc::MbTotals{};
      }
      pic.owner[size_t(addr)] = slice_index;
    }
    more = more_data();
    addr = next_mb(addr);
  }
  if (!br.ok()) return mp.truncated("slice data");
  // The rest of the slice data (nothing, when the last macroblock ended at the stop bit).
  sk.copy_bits(rbsp, copied, sh.stop_bit - copied);
  out.skel_bits = sk.bits();
  sk.flush();
  if (sk.overflowed()) return fail(err, Status::kMalformed, "skeleton longer than the slice (internal error)");
  return true;
}

}  // namespace avc
