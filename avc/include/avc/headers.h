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
#include <utility>

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

  const Rbsp& rbsp() const { return rbsp_; }            // of the last NAL parsed
  // Exchanges the last NAL's RBSP with `other` (a slice handed to another thread without a copy; the
  // parser reuses other's buffers from the next NAL on).
  void swap_rbsp(Rbsp& other) { std::swap(rbsp_, other); }
  const SliceHeader& slice() const { return slice_; }   // of the last slice NAL parsed
  const ParamSets& params() const { return params_; }
  ParamSets& params() { return params_; }

 private:
  Rbsp rbsp_;
  SliceHeader slice_;
  ParamSets params_;
};

}  // namespace avc
