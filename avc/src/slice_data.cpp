// The macroblock layer of baseline CAVLC slices (avc/slice_data.h).
#include "avc/slice_data.h"

#include <algorithm>
#include <cstring>

#include "avc/bitreader.h"
#include "avc/residual.h"
#include "cavlc/frame.h"
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

// Where the records go: SliceRecords (in decoding order) or a frame coder's arrays (SliceTarget).
struct VectorSink {
  SliceRecords& out;
  bool begin(const SliceHeader& sh, uint8_t** skel, size_t* cap) {
    out.mbs.clear();
    const size_t need = size_t(sh.stop_bit / 8) + 16;
    if (out.skel.size() < need) out.skel.resize(need);  // grows only: the writer writes every byte it uses
    *skel = out.skel.data();
    *cap = out.skel.size();
    return true;
  }
  bool allowed(int32_t) const { return true; }
  void skipped(int32_t a) { coded(a, GPUEC_MB_SKIP); }
  gpuec_mb& coded(int32_t a, uint8_t kind) {
    out.mbs.emplace_back();
    gpuec_mb& m = out.mbs.back();
    std::memset(&m, 0, sizeof m);
    m.mb_addr = a;
    m.kind = kind;
    m.coef_order = GPUEC_COEF_SCAN;
    return m;
  }
  void finish(const gpuec_mb&, const cavlc::MbTotals&, const uint8_t*) {}
  void end(uint64_t bits) { out.skel_bits = bits; }
};

void write_filler(const SliceTarget& t, size_t g) {
  gpuec_mb& m = t.records[g];
  m.kind = GPUEC_MB_SKIP;
  m.cbp = 0;
  m.coef_order = GPUEC_COEF_SCAN;
  m.reserved = 0;
  m.skel_bit = 0;
  m.mb_addr = int32_t(g);
  t.slice_ids[g] = -1;
  t.leads[g] = cavlc::MbLead{0, 0, 0};
  if (t.tc_records) std::memset(t.tc_records + g * cavlc::kTcRecordBytes, 0, cavlc::kTcRecordBytes);
}

struct TargetSink {
  SliceTarget& t;
  uint64_t pos = 0;  // skeleton bit after the previous insertion point
  bool begin(const SliceHeader& sh, uint8_t** skel, size_t* cap) {
    t.n_mbs = t.coded_mbs = 0;
    t.first_mb = t.last_mb = -1;
    *skel = t.skel;
    *cap = t.skel_capacity;
    return t.skel_capacity >= size_t(sh.stop_bit / 8) + 16;
  }
  bool allowed(int32_t a) const { return a >= t.first_allowed && a <= t.last_allowed; }
  void note(int32_t a) {
    if (t.first_mb < 0) t.first_mb = a;
    t.last_mb = a;
    ++t.n_mbs;
  }
  void skipped(int32_t a) {  // a filler record (the frame coder's skipped macroblock) with the slice's index
    note(a);
    const size_t g = t.base + size_t(a);
    write_filler(t, g);
    t.slice_ids[g] = t.slice_id;
  }
  gpuec_mb& coded(int32_t a, uint8_t kind) {
    note(a);
    ++t.coded_mbs;
    const size_t g = t.base + size_t(a);
    t.slice_ids[g] = t.slice_id;
    gpuec_mb& m = t.records[g];
    std::memset(&m, 0, sizeof m);
    m.mb_addr = int32_t(g);
    m.kind = kind;
    m.coef_order = GPUEC_COEF_SCAN;
    return m;
  }
  // The lead and the TotalCoeff record: the counts the parser decoded (a parsed level always fits baseline
  // CAVLC: it was read with level_prefix <= 15, and coding it again takes the same code).
  void finish(const gpuec_mb& m, const cavlc::MbTotals& tot, const uint8_t* dc) {
    const size_t g = size_t(m.mb_addr);
    t.leads[g] = cavlc::MbLead{t.skel_bit0 + pos, uint32_t(uint64_t(m.skel_bit) - pos), 0};
    pos = uint64_t(m.skel_bit);
    if (!t.tc_records) return;
    uint8_t* r = t.tc_records + g * cavlc::kTcRecordBytes;
    std::memcpy(r, tot.luma, 16);
    std::memcpy(r + 16, tot.chroma, 8);
    if (m.kind == GPUEC_MB_PCM) {
      r[24] = r[25] = r[26] = 16;
    } else {
      r[24] = dc[0];
      r[25] = dc[1];
      r[26] = dc[2];
    }
    std::memset(r + 27, 0, cavlc::kTcRecordBytes - 27);
  }
  void end(uint64_t bits) {
    t.skel_bits = bits;
    t.tail_bit = pos;
  }
};

template <class Sink>
bool parse_slice(const uint8_t* rbsp, size_t size, const SliceHeader& sh, const SliceGroupMap& groups,
                 int32_t slice_index, PictureContext& pic, Sink& out, Error& err) {
  const int n_mbs = pic.n_mbs, w = pic.mb_width;
  if (w <= 0 || uint32_t(n_mbs) != groups.size() || uint32_t(n_mbs) != sh.pic_size_in_mbs)
    return fail(err, Status::kMalformed, "picture context (%d macroblocks) does not match the slice (%u)", n_mbs,
                sh.pic_size_in_mbs);
  auto next_mb = [&](int32_t a) { return int32_t(groups.next(uint32_t(a))); };
  if (sh.stop_bit > uint64_t(size) * 8 || sh.data_bit > sh.stop_bit)
    return fail(err, Status::kMalformed, "slice data range [%llu, %llu) outside the RBSP",
                static_cast<unsigned long long>(sh.data_bit), static_cast<unsigned long long>(sh.stop_bit));
  // The skeleton is never longer than the slice's RBSP.
  uint8_t* skel = nullptr;
  size_t skel_cap = 0;
  if (!out.begin(sh, &skel, &skel_cap)) return fail(err, Status::kMalformed, "skeleton area too small (internal error)");
  vle::BitWriter sk(skel, skel_cap);
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
  // Outside what the sink may write (SliceTarget's range): stop.
  auto outside = [&](int32_t a) {
    err.mb_addr = a;
    return fail(err, Status::kMalformed, "macroblock %d outside the range reserved for the slice", a);
  };
  uint8_t dc[3] = {0, 0, 0};

  int32_t addr = int32_t(sh.first_mb_in_slice);
  bool more = true;
  while (more) {
    mp.addr = addr;
    if (!sh.is_i()) {
      const uint32_t run = br.ue();
      if (!br.ok()) return mp.truncated("mb_skip_run");
      for (uint32_t i = 0; i < run; ++i) {
        if (addr < 0 || addr >= n_mbs) return mp.bad("mb_skip_run", run);
        if (!out.allowed(addr)) return outside(addr);
        out.skipped(addr);
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
    if (!out.allowed(addr)) return outside(addr);
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
      gpuec_mb& m = out.coded(addr, GPUEC_MB_PCM);
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
      out.finish(m, t, dc);
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
      gpuec_mb& m = out.coded(addr, uint8_t(kind));
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
        const int r = decode_mb_residual(br, kind, m.cbp, nb, m, t, &where, dc);
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
        dc[0] = dc[1] = dc[2] = 0;
      }
      pic.owner[size_t(addr)] = slice_index;
      out.finish(m, t, dc);
    }
    more = more_data();
    addr = next_mb(addr);
  }
  if (!br.ok()) return mp.truncated("slice data");
  // The rest of the slice data (nothing, when the last macroblock ended at the stop bit).
  sk.copy_bits(rbsp, copied, sh.stop_bit - copied);
  out.end(sk.bits());
  sk.flush();
  if (sk.overflowed()) return fail(err, Status::kMalformed, "skeleton longer than the slice (internal error)");
  return true;
}

}  // namespace

bool parse_slice_data(const uint8_t* rbsp, size_t size, const SliceHeader& sh, const SliceGroupMap& groups,
                      int32_t slice_index, PictureContext& pic, SliceRecords& out, Error& err) {
  VectorSink sink{out};
  return parse_slice(rbsp, size, sh, groups, slice_index, pic, sink, err);
}

bool parse_slice_into(const uint8_t* rbsp, size_t size, const SliceHeader& sh, const SliceGroupMap& groups,
                      int32_t slice_index, PictureContext& pic, SliceTarget& target, Error& err) {
  TargetSink sink{target};
  if (!parse_slice(rbsp, size, sh, groups, slice_index, pic, sink, err)) return false;
  // The reserved positions the slice did not code (a slice group's other macroblocks, a shorter slice).
  for (int32_t a = target.first_allowed; a <= target.last_allowed; ++a)
    if (pic.owner[size_t(a)] != slice_index) write_filler(target, target.base + size_t(a));
  return true;
}

void write_filler(const SliceTarget& t, int32_t first, int32_t last) {
  for (int32_t a = first; a <= last; ++a) write_filler(t, t.base + size_t(a));
}

}  // namespace avc
