// Compressed-domain re-entropy of a baseline CAVLC stream (avc/reentropy.h), CPU backend.
#include "avc/reentropy.h"

#include <algorithm>
#include <cstring>

#include "avc/annexb.h"
#include "avc/headers.h"
#include "avc/slice_data.h"
#include "avc/slice_group.h"
#include "cavlc/slice.h"
#include "vle/bitwriter.h"

namespace avc {

bool reentropy_stream(const uint8_t* data, size_t size, std::vector<uint8_t>& out, ReentropyStats* stats,
                      Error& err, const SliceEdit& edit) {
  ReentropyStats st;
  out.clear();
  err.clear();
  std::vector<NalUnit> nals;
  if (!split_annexb(data, size, nals, err)) return false;
  out.reserve(size + size / 16 + 64);

  HeaderParser hp;
  SliceGroupMap groups;
  PictureContext pic;
  SliceRecords recs;
  std::vector<cavlc::MbTotals> enc_totals;
  std::vector<uint8_t> rbsp_out;
  SliceHeader prev;  // the last primary slice
  bool have_prev = false;
  int32_t slice_index = 0;

  for (size_t i = 0; i < nals.size(); ++i) {
    const NalUnit& nal = nals[i];
    ++st.nal_units;
    if (!hp.parse(data, nal, int64_t(i), err)) return false;
    if (!nal.is_slice()) {
      out.insert(out.end(), data + nal.begin, data + nal.range_end);
      continue;
    }
    const SliceHeader& sh = hp.slice();
    const Rbsp& rb = hp.rbsp();
    auto where = [&](Error& e) {
      e.nal_index = int64_t(i);
      if (e.offset < 0) e.offset = int64_t(nal.header);
    };
    // A new primary picture (7.4.1.2.4) starts a fresh macroblock context; redundant slices belong to the
    // picture of the primary slices before them.
    if (!sh.redundant()) {
      if (!have_prev || first_slice_of_new_picture(prev, sh) || pic.n_mbs != int(sh.pic_size_in_mbs)) {
        pic.reset(int(sh.pic_width_in_mbs), int(sh.pic_size_in_mbs));
        slice_index = 0;
        ++st.pictures;
      }
      prev = sh;
      have_prev = true;
    } else {
      ++st.redundant_slices;
      if (pic.n_mbs != int(sh.pic_size_in_mbs)) pic.reset(int(sh.pic_width_in_mbs), int(sh.pic_size_in_mbs));
    }
    groups.update(*sh.sps, *sh.pps, sh.slice_group_change_cycle, hp.params().generation());
    const int32_t index = slice_index++;
    if (!parse_slice_data(rb.bytes.data(), rb.bytes.size(), sh, groups, index, pic, recs, err)) {
      where(err);
      return false;
    }
    ++st.slices;
    st.macroblocks += int64_t(recs.mbs.size());
    if (edit) {
      edit(int64_t(i), sh, recs);
      for (const gpuec_mb& m : recs.mbs) {
        uint8_t t[GPUEC_TC_COUNT];
        const int r = cavlc::mb_totals(m, t);
        if (r != 0) {
          where(err);
          err.mb_addr = m.mb_addr;
          return fail(err, Status::kMalformed,
                      r < 0 ? "edited record is malformed" : "edited levels overflow baseline CAVLC");
        }
      }
    }

    // Re-code: skeleton with the residual of every record, then rbsp_trailing_bits.
    enc_totals.resize(size_t(pic.n_mbs));
    const size_t cap = rb.bytes.size() + rb.bytes.size() / 2 + 4096 + recs.mbs.size() * 64;
    if (rbsp_out.size() < cap) rbsp_out.resize(cap);  // grows only: BitWriter writes every byte it reports
    vle::BitWriter bw(rbsp_out.data(), rbsp_out.size());
    cavlc::SliceLayout layout{pic.mb_width, int(sh.first_mb_in_slice), 0, int64_t(recs.skel_bits)};
    layout.slice_of_mb = pic.owner.data();
    layout.slice_id = index;
    layout.n_mbs = pic.n_mbs;
    if (cavlc::encode_slice_ref(recs.mbs.data(), recs.mbs.size(), layout, recs.skel.data(), enc_totals.data(), bw) !=
        0) {
      where(err);
      return fail(err, Status::kMalformed, "the entropy stage refused the slice's records (internal error)");
    }
    const uint64_t recoded_bits = bw.bits() - recs.skel_bits;
    st.residual_bits += int64_t(recoded_bits);
    for (const gpuec_mb& m : recs.mbs) st.coded_macroblocks += m.kind != GPUEC_MB_SKIP;
    bw.put_bit(1);  // rbsp_stop_one_bit
    bw.align_zero();
    const size_t n = size_t(bw.bits() / 8);
    bw.flush();
    if (bw.overflowed()) {
      where(err);
      return fail(err, Status::kMalformed, "re-coded slice larger than its buffer (internal error)");
    }
    if (n != rb.bytes.size() || std::memcmp(rbsp_out.data(), rb.bytes.data(), n) != 0) ++st.recoded_differs;
    if (!rb.standard_escaping) ++st.nonstandard_escaping;

    // Start code and leading zeros, the header byte(s), the escaped RBSP, the trailing zero bytes.
    out.insert(out.end(), data + nal.begin, data + nal.header + uint64_t(rb.header_bytes));
    escape_rbsp(rbsp_out.data(), n, out);  // appends
    out.insert(out.end(), data + nal.end, data + nal.range_end);
  }
  if (stats) *stats = st;
  return true;
}

}  // namespace avc
