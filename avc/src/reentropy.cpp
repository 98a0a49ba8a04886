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
#include "reentropy_threads.h"

namespace avc {

namespace {

// An output piece waiting for its batch: NAL units before a slice are copied as they are; a slice's
// start code, header byte(s) and trailing zero bytes come from the input around its re-coded RBSP.
struct Piece {
  uint64_t begin, end;       // input bytes copied (a whole NAL unit; for a slice: start code + header bytes)
  uint64_t tail_begin = 0, tail_end = 0;  // slice: the trailing zero bytes (tail_begin: the NAL's end)
  bool slice = false;
  bool standard_escaping = true;
  std::vector<uint8_t> odd_rbsp;  // a slice escaped otherwise: its input RBSP (else empty, no allocation)
};

}  // namespace

namespace {

bool recode_stream(const uint8_t* data, size_t size, std::vector<uint8_t>& out, ReentropyStats* stats, Error& err,
                   const SliceEdit& edit, const RecoderOptions& opt, SliceRecoder* recoder, ThreadedGpuCoders* gpu) {
  ReentropyStats st;
  out.clear();
  err.clear();
  std::vector<NalUnit> nals;
  if (!split_annexb(data, size, nals, err)) return false;
  out.reserve(size + size / 16 + 64);
  if (!recoder && !edit && opt.threads > 1) {
    if (reentropy_threaded(data, size, nals, out, st, opt, gpu)) {
      st.threaded = true;
      if (stats) *stats = st;
      return true;
    }
    out.clear();  // the sequential path below gives the error (or the output) exactly
    st = ReentropyStats();
  }
  std::string why;
  std::unique_ptr<SliceRecoder> own;
  if (!recoder) {
    own = SliceRecoder::create(opt, &why);
    if (!own) return fail(err, Status::kBackend, "%s: %s", gpu::backend_name(opt.backend), why.c_str());
  }
  SliceRecoder* const rec = recoder ? recoder : own.get();

  HeaderParser hp;
  SliceGroupMap groups;
  PictureContext pic;
  SliceRecords recs;
  SliceHeader prev;  // the last primary slice
  bool have_prev = false;
  int32_t slice_index = 0;
  std::vector<Piece> pieces;  // [next_piece, size) not written yet
  size_t next_piece = 0;

  // Writes the pending pieces before the next slice piece.
  auto emit_raw = [&]() {
    for (; next_piece < pieces.size() && !pieces[next_piece].slice; ++next_piece)
      out.insert(out.end(), data + pieces[next_piece].begin, data + pieces[next_piece].end);
  };
  // Receives the re-coded slices in stream order: writes each with the pieces before it. Whether the
  // re-coded RBSP equals the input's: for standard escaping (escaping is a bijection), compare the escaped
  // bytes with the input's; otherwise with the input RBSP kept for it.
  const SliceRecoder::Sink sink = [&](size_t i, const RecodedSlice& r) {
    if (i == 0) {  // a new hand-over: drop the pieces written before it
      pieces.erase(pieces.begin(), pieces.begin() + int64_t(next_piece));
      next_piece = 0;
    }
    emit_raw();
    const Piece& p = pieces[next_piece++];
    st.residual_bits += int64_t(r.residual_bits);
    out.insert(out.end(), data + p.begin, data + p.end);
    const size_t at = out.size();
    escape_rbsp(r.rbsp, r.bytes, out);  // appends
    const size_t n = out.size() - at;
    const bool same = p.standard_escaping ? n == p.tail_begin - p.end && std::memcmp(out.data() + at, data + p.end, n) == 0
                                          : r.bytes == p.odd_rbsp.size() &&
                                                std::memcmp(r.rbsp, p.odd_rbsp.data(), r.bytes) == 0;
    st.recoded_differs += !same;
    st.nonstandard_escaping += !p.standard_escaping;
    out.insert(out.end(), data + p.tail_begin, data + p.tail_end);
    return true;
  };
  auto backend_failed = [&](int64_t nal_index) {
    err.nal_index = nal_index;
    return fail(err, Status::kBackend, "%s: %s", recoder ? "recoder" : gpu::backend_name(opt.backend), why.c_str());
  };
  // On an error: the NAL units before the faulty one are written, when the backend can code them.
  auto failed = [&]() {
    if (rec->flush(sink, &why)) emit_raw();
    return false;
  };

  for (size_t i = 0; i < nals.size(); ++i) {
    const NalUnit& nal = nals[i];
    ++st.nal_units;
    if (!hp.parse(data, nal, int64_t(i), err)) return failed();
    if (!nal.is_slice()) {
      pieces.push_back(Piece{nal.begin, nal.range_end, 0, 0, false, true, {}});
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
      return failed();
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
          return failed();
        }
      }
    }
    for (const gpuec_mb& m : recs.mbs) st.coded_macroblocks += m.kind != GPUEC_MB_SKIP;

    Piece p{nal.begin, nal.header + uint64_t(rb.header_bytes), nal.end, nal.range_end, true, rb.standard_escaping, {}};
    if (!p.standard_escaping) p.odd_rbsp = rb.bytes;
    pieces.push_back(std::move(p));
    if (!rec->add(pic.mb_width, pic.n_mbs, recs, sink, &why)) {
      where(err);
      return backend_failed(int64_t(i));
    }
  }
  if (!rec->flush(sink, &why)) return backend_failed(int64_t(nals.size()) - 1);
  emit_raw();
  if (stats) *stats = st;
  return true;
}

}  // namespace

bool reentropy_stream(const uint8_t* data, size_t size, std::vector<uint8_t>& out, ReentropyStats* stats,
                      Error& err, const SliceEdit& edit, const RecoderOptions& opt, SliceRecoder* recoder) {
  return recode_stream(data, size, out, stats, err, edit, opt, recoder, nullptr);
}

ReentropySession::ReentropySession(const RecoderOptions& opt) : opt_(opt), gpu_(new ThreadedGpuCoders) {}
ReentropySession::~ReentropySession() = default;

bool ReentropySession::recode(const uint8_t* data, size_t size, std::vector<uint8_t>& out, ReentropyStats* stats,
                              Error& err) {
  return recode_stream(data, size, out, stats, err, nullptr, opt_, nullptr, gpu_.get());
}

}  // namespace avc
