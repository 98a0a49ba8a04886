// avc/headers.h: everything above the macroblock layer for one NAL unit at a time, in stream order.
//
//   std::vector<avc::NalUnit> nals;  avc::Error err;
//   if (!avc::split_annexb(data, size, nals, err)) ...           // err.describe()
//   avc::HeaderParser hp;
//   for (size_t i = 0; i < nals.size(); ++i) {
//     if (!hp.parse(data, nals[i], i, err)) ...                     // NAL index and offset are set
//     if (nals[i].is_slice()) use(hp.slice(), hp.rbsp());          // slice_data() at hp.slice().data_bit
//   }
//
// What parse() does per nal_unit_type: every NAL's RBSP is extracted (rbsp(), with the emulation
// prevention positions and whether the escaping is standard); 7 (SPS) and 8 (PPS) are parsed and stored,
// replacing an earlier set with the same id; 1 and 5 (slices) get their header parsed against the stored
// sets; 2..4 (data partitioning) are refused (Status::kUnsupported). All other types (SEI, AUD, end of
// sequence/stream, filler, SPS extension, SVC/MVC NAL units, reserved and unspecified types) are left
// alone: a re-coding tool copies them unchanged.
//
// The buffers are reused from NAL to NAL: no allocation once the largest NAL has been seen (apart from a
// type 6 PPS's slice_group_id array).
#pragma once

#include <cstdint>

#include "avc/annexb.h"
#include "avc/error.h"
#include "avc/params.h"
#include "avc/slice_header.h"

namespace avc {

class HeaderParser {
 public:
  // Parses NAL unit `nal` of `stream` (an entry of split_annexb's output; index = its position there). On
  // failure err also gets nal_index = index and offset = the stream offset of the NAL header byte (or of
  // the problem, for emulation prevention errors).
  bool parse(const uint8_t* stream, const NalUnit& nal, int64_t index, Error& err);
  // A slice NAL unit (nal.is_slice()) read only as far as its header: the header is parsed from the
  // shortest prefix of the RBSP that holds it (the NAL's first 64 bytes unescaped, then 128, ..., up to
  // the whole NAL), for a caller that unescapes the slice data elsewhere (the threaded re-entropy, on its
  // workers). The unescaped prefix of a NAL is a prefix of its RBSP, and a header read below the prefix's
  // last 1 bit reads the same bits with the whole RBSP, so on success slice() equals parse()'s except
  // stop_bit: 0 unless the prefix was the whole NAL (rbsp_stop_bit() of the whole RBSP gives it; the
  // header ends before it). rbsp() then holds the prefix only. On failure err is parse()'s exactly (the
  // whole NAL was read).
  bool parse_slice_header_only(const uint8_t* stream, const NalUnit& nal, int64_t index, Error& err);

  const Rbsp& rbsp() const { return rbsp_; }            // of the last NAL parsed
  const SliceHeader& slice() const { return slice_; }   // of the last slice NAL parsed
  const ParamSets& params() const { return params_; }
  ParamSets& params() { return params_; }

 private:
  Rbsp rbsp_;
  SliceHeader slice_;
  ParamSets params_;
};

}  // namespace avc
