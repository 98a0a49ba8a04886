// avc/annexb.h: H.264 Annex B byte streams: splitting into NAL units, the NAL unit header (7.3.1),
// emulation prevention (7.4.1) both ways.
//
// Byte ranges. split_annexb() cuts the stream into consecutive ranges, one per NAL unit, that cover every
// byte of the stream exactly once, so the stream is rebuilt byte for byte by writing, for each NAL,
//     stream[begin, header)        leading zeros + start code: zero_byte / leading_zero_8bits, 00 00 01
//     the NAL unit                 stream[header, end) (or a re-coded NAL unit in its place)
//     stream[end, range_end)       trailing_zero_8bits
// Zero bytes between two NAL units: the last one before 00 00 01 is the next NAL's zero_byte (a 4-byte
// start code), the others are trailing_zero_8bits of the previous NAL. All zeros before the first start
// code belong to the first NAL (leading_zero_8bits). A NAL unit never ends with 0x00 (7.4.1), so `end` is
// unambiguous.
//
// RBSP. extract_rbsp() removes every emulation_prevention_three_byte (00 00 03 -> 00 00, at any
// byte-aligned position after the NAL header, exactly as the nal_unit() syntax of 7.3.1 does) and records
// where they were. escape_rbsp() is the standard escaping of 7.4.1: 0x03 is inserted before any byte
// 0x00..0x03 that follows two 0x00 bytes, and appended when the RBSP ends with 0x00 (cabac_zero_word).
// The only escaping a decoder accepts that differs from this is a superfluous 0x03 (00 00 03 followed by
// a byte > 0x03, which 7.4.1 forbids but 7.3.1 removes all the same); Rbsp::standard_escaping says
// whether the NAL escaped exactly as escape_rbsp() would.
//
// Errors (Error::status kMalformed, Error::offset = the stream offset of the problem): empty stream,
// data before the first start code (missing start code), a start code with no NAL unit after it
// (truncated stream, or an empty NAL unit), forbidden_zero_bit set, 0x000000 or 0x000002 inside a NAL unit
// (0x000000 followed by anything but zeros and a start code, or the end of the stream); 0x000001 always
// starts the next NAL unit.
//
// Speed: split_annexb() and extract_rbsp() reuse the caller's vectors (cleared, not shrunk): no
// allocation per NAL once their capacity is reached.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "avc/error.h"

namespace avc {

// nal_unit_type values (Table 7-1) this project names.
enum NalType : uint8_t {
  kNalSlice = 1,        // coded slice of a non-IDR picture
  kNalSliceDpA = 2,     // data partitions A, B, C: not baseline (refused)
  kNalSliceDpB = 3,
  kNalSliceDpC = 4,
  kNalIdrSlice = 5,     // coded slice of an IDR picture
  kNalSei = 6,
  kNalSps = 7,
  kNalPps = 8,
  kNalAud = 9,
  kNalEndOfSeq = 10,
  kNalEndOfStream = 11,
  kNalFiller = 12,
  kNalSpsExt = 13,
  kNalPrefix = 14,      // SVC prefix NAL: 3 more header bytes
  kNalSubsetSps = 15,
  kNalAuxSlice = 19,
  kNalSliceExt = 20,    // SVC/MVC slice: 3 more header bytes
  kNalSliceExt3d = 21,  // 3D-AVC slice: 3 more header bytes
};

// Short name of a nal_unit_type ("slice", "IDR", "SPS", ...; "reserved"/"unspecified" for the rest).
const char* nal_type_name(uint8_t nal_unit_type);

// Bytes of nal_unit_header (7.3.1): 1, or 4 for types 14, 20, 21 (their extension header). The RBSP and
// emulation prevention start after them.
inline int nal_header_bytes(uint8_t nal_unit_type) {
  return (nal_unit_type == kNalPrefix || nal_unit_type == kNalSliceExt || nal_unit_type == kNalSliceExt3d) ? 4 : 1;
}

struct NalUnit {
  uint64_t begin;      // first byte of this NAL's range: its leading zero bytes, then 00 00 01
  uint64_t header;     // the nal_unit_header byte (right after 00 00 01)
  uint64_t end;        // one past the NAL unit's last byte (never 0x00)
  uint64_t range_end;  // one past its trailing_zero_8bits: the next NAL's begin, or the stream size
  uint8_t nal_ref_idc;    // 0..3
  uint8_t nal_unit_type;  // 0..31

  uint64_t size() const { return end - header; }  // NumBytesInNALunit
  // Zero bytes before 00 00 01 (0 = 3-byte start code, 1 = zero_byte + 00 00 01, more: leading zeros).
  uint64_t leading_zeros() const { return header - 3 - begin; }
  uint64_t trailing_zeros() const { return range_end - end; }
  bool is_slice() const { return nal_unit_type == kNalSlice || nal_unit_type == kNalIdrSlice; }
  bool idr() const { return nal_unit_type == kNalIdrSlice; }
};

// Splits an Annex B byte stream into NAL units (appended to `out` after clearing it). Returns false with
// err filled (status, message, offset; nal_index = the index the faulty NAL would have had) on the errors
// listed above; `out` then holds the NAL units before the faulty one.
bool split_annexb(const uint8_t* data, size_t size, std::vector<NalUnit>& out, Error& err);

// The RBSP of one NAL unit and where its emulation prevention bytes were.
struct Rbsp {
  std::vector<uint8_t> bytes;  // rbsp bytes: the NAL after its header bytes, emulation prevention removed
  // Offsets of the removed 0x03 bytes in the NAL unit (0 = its header byte), increasing. The RBSP byte
  // that followed the k-th one (k = 0, 1, ...) is bytes[epb[k] - header_bytes - k] (when not at the end).
  std::vector<uint32_t> epb;
  bool standard_escaping = true;  // false: some 0x03 was not needed (00 00 03 followed by a byte > 0x03)
  int header_bytes = 1;
};

// nal: the NAL unit's bytes (stream + NalUnit::header, NalUnit::size() bytes). Fills rbsp (reusing its
// vectors). Fails (kMalformed, err.offset = offset inside the NAL) on an empty NAL or a NAL shorter than
// its header; the stream-level errors (0x000000/01/02 inside) are split_annexb()'s.
bool extract_rbsp(const uint8_t* nal, size_t size, Rbsp& rbsp, Error& err);

// Upper bound of escape_rbsp()'s output for an RBSP of n bytes (one 0x03 per two input bytes, + 1).
inline size_t escaped_size_bound(size_t n) { return n + n / 2 + 1; }

// Standard escaping (7.4.1) of rbsp[0, n) appended to out. The bytes before (the NAL header) do not count
// as preceding zeros, as in 7.3.1.
void escape_rbsp(const uint8_t* rbsp, size_t n, std::vector<uint8_t>& out);
// The same into a caller buffer of at least escaped_size_bound(n) bytes; returns the bytes written.
size_t escape_rbsp(const uint8_t* rbsp, size_t n, uint8_t* out);

// Whether payload[0, payload_size) (a NAL unit after its header bytes) is exactly the standard escaping of
// rbsp[0, rbsp_size). Compares on the fly, no allocation.
bool is_standard_escaping(const uint8_t* payload, size_t payload_size, const uint8_t* rbsp, size_t rbsp_size);

}  // namespace avc
