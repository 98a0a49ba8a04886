// Per-NAL dispatch above the macroblock layer (avc/headers.h).
#include "avc/headers.h"

namespace avc {

bool HeaderParser::parse(const uint8_t* stream, const NalUnit& nal, int64_t index, Error& err) {
  err.nal_index = index;
  err.offset = static_cast<int64_t>(nal.header);
  err.mb_addr = -1;
  const uint8_t* bytes = stream + nal.header;
  if (!extract_rbsp(bytes, nal.size(), rbsp_, err)) {
    err.offset = static_cast<int64_t>(nal.header) + (err.offset >= 0 ? err.offset : 0);
    return false;
  }
  err.offset = static_cast<int64_t>(nal.header);
  const uint8_t* r = rbsp_.bytes.data();
  const size_t n = rbsp_.bytes.size();
  switch (nal.nal_unit_type) {
    case kNalSps:
      return params_.store_sps(r, n, err);
    case kNalPps:
      return params_.store_pps(r, n, err);
    case kNalSlice:
    case kNalIdrSlice:
    case kNalSliceDpA:
    case kNalSliceDpB:
    case kNalSliceDpC:
      return parse_slice_header(bytes[0], r, n, params_, slice_, err);
    default:
      return true;
  }
}

bool HeaderParser::parse_slice_header_only(const uint8_t* stream, const NalUnit& nal, int64_t index, Error& err) {
  const uint8_t* bytes = stream + nal.header;
  for (uint64_t take = 64; take < nal.size(); take *= 2) {
    Error prefix_err;
    if (extract_rbsp(bytes, size_t(take), rbsp_, prefix_err) &&
        parse_slice_header(bytes[0], rbsp_.bytes.data(), rbsp_.bytes.size(), params_, slice_, prefix_err)) {
      slice_.stop_bit = 0;
      return true;
    }
  }
  return parse(stream, nal, index, err);  // the whole NAL: parse()'s result and error exactly
}

}  // namespace avc
