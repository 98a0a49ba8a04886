// Compressed-domain re-entropy of a baseline CAVLC stream (avc/reentropy.h), CPU backend.
#include "avc/reentropy.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "avc/annexb.h"
#include "avc/headers.h"
#include "avc/slice_data.h"
#include "avc/slice_group.h"
#include "avc/recoder.h"
#include "cavlc/mb.h"

namespace avc {

namespace {

// An output piece waiting for its batch: NAL units before a slice are copied as they are; a slice's
// start code, header byte(s) and trailing zero bytes come from the input around its re-coded RBSP.
struct Piece {
  uint64_t begin, end;       // input bytes copied (a whole NAL unit; for a slice: start code + header bytes)
  uint64_t tail_begin = 0, tail_end = 0;  // slice: the trailing zero bytes
  bool slice = false;
  bool standard_escaping = true;
  size_t rbsp_at = 0, rbsp_bytes = 0;  // slice: its input RBSP in `input_rbsp`
};

}  // namespace

bool reentropy_stream(const uint8_t* data, size_t size, std::vector<uint8_t>& out, ReentropyStats* stats,
                      Error& err, const SliceEdit& edit, const RecoderOptions& opt) {
  ReentropyStats st;
  out.clear();
  err.clear();
  std::vector<NalUnit> nals;
  if (!split_annexb(data, size, nals, err)) return false;
  out.reserve(size + size / 16 + 64);
  std::string why;
  std::unique_ptr<SliceRecoder> rec = SliceRecoder::create(opt, &why);
  if (!rec) return fail(err, Status::kBackend, "%s: %s", backend_name(opt.backend), why.c_str());

  HeaderParser hp;
  SliceGroupMap groups;
  PictureContext pic;
  SliceRecords recs;
  SliceHeader prev;  // the last primary slice
  bool have_prev = false;
  int32_t slice_index = 0;
  std::vector<Piece> pieces;
  std::vector<uint8_t> input_rbsp;
  size_t next_piece = 0;

  // Writes the pending pieces before the next slice piece.
  auto emit_raw = [&]() {
    for (; next_piece < pieces.size() && !pieces[next_piece].slice; ++next_piece)
      out.insert(out.end(), data + pieces[next_piece].begin, data + pieces[next_piece].end);
  };
  // Codes the batch and writes every pending piece.
  auto flush = [&](int64_t nal_index) -> bool {
    const bool ok = rec->flush(
        [&](size_t, const RecodedSlice& r) {
          emit_raw();
          const Piece& p = pieces[next_piece++];
          st.residual_bits += int64_t(r.residual_bits);
          if (r.bytes != p.rbsp_bytes || std::memcmp(r.rbsp, input_rbsp.data() + p.rbsp_at, r.bytes) != 0)
            ++st.recoded_differs;
          if (!p.standard_escaping) ++st.nonstandard_escaping;
          out.insert(out.end(), data + p.begin, data + p.end);
          escape_rbsp(r.rbsp, r.bytes, out);  // appends
          out.insert(out.end(), data + p.tail_begin, data + p.tail_end);
          return true;
        },
        &why);
    if (!ok) {
      err.nal_index = nal_index;
      return fail(err, Status::kBackend, "%s: %s", backend_name(opt.backend), why.c_str());
    }
    emit_raw();
    pieces.clear();
    input_rbsp.clear();
    next_piece = 0;
    return true;
  };
  // On an error: the NAL units before the faulty one are written, when the backend can code them.
  auto failed = [&](int64_t nal_index) {
    Error saved = err;
    flush(nal_index);
    err = saved;
    return false;
  };

  for (size_t i = 0; i < nals.size(); ++i) {
    const NalUnit& nal = nals[i];
    ++st.nal_units;
    if (!hp.parse(data, nal, int64_t(i), err)) return failed(int64_t(i));
    if (!nal.is_slice()) {
      pieces.push_back(Piece{nal.begin, nal.range_end});
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
      return failed(int64_t(i));
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
          fail(err, Status::kMalformed, r < 0 ? "edited record is malformed" : "edited levels overflow baseline CAVLC");
          return failed(int64_t(i));
        }
      }
    }
    for (const gpuec_mb& m : recs.mbs) st.coded_macroblocks += m.kind != GPUEC_MB_SKIP;

    SliceRecoder::Add a = rec->add(pic.mb_width, pic.n_mbs, recs, &why);
    if (a == SliceRecoder::Add::kFull) {
      if (!flush(int64_t(i))) return false;
      a = rec->add(pic.mb_width, pic.n_mbs, recs, &why);
    }
    if (a != SliceRecoder::Add::kQueued) {
      where(err);
      fail(err, Status::kBackend, "%s: %s", backend_name(opt.backend),
           a == SliceRecoder::Add::kFull ? "a slice larger than a batch" : why.c_str());
      return failed(int64_t(i));
    }
    Piece p{nal.begin, nal.header + uint64_t(rb.header_bytes), nal.end, nal.range_end, true, rb.standard_escaping};
    p.rbsp_at = input_rbsp.size();
    p.rbsp_bytes = rb.bytes.size();
    input_rbsp.insert(input_rbsp.end(), rb.bytes.begin(), rb.bytes.end());
    pieces.push_back(p);
  }
  if (!flush(int64_t(nals.size()) - 1)) return false;
  if (stats) *stats = st;
  return true;
}

}  // namespace avc
