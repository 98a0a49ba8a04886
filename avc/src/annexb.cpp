// Annex B splitting and emulation prevention (avc/annexb.h).
#include "avc/annexb.h"

#include <cstring>

namespace avc {

const char* nal_type_name(uint8_t t) {
  switch (t) {
    case 1: return "slice";
    case 2: return "DPA";
    case 3: return "DPB";
    case 4: return "DPC";
    case 5: return "IDR";
    case 6: return "SEI";
    case 7: return "SPS";
    case 8: return "PPS";
    case 9: return "AUD";
    case 10: return "EOSEQ";
    case 11: return "EOSTREAM";
    case 12: return "filler";
    case 13: return "SPSext";
    case 14: return "prefix";
    case 15: return "subsetSPS";
    case 16: return "DPS";
    case 19: return "auxslice";
    case 20: return "sliceext";
    case 21: return "slice3d";
    default: return (t == 0 || t >= 24) ? "unspecified" : "reserved";
  }
}

namespace {

// First p in [from, size - 3] with data[p] == data[p + 1] == 0 and data[p + 2] <= 2, or size.
size_t find_zero_pattern(const uint8_t* data, size_t from, size_t size) {
  size_t p = from;
  while (p + 2 < size) {
    if (data[p + 2] > 2) {
      p += 3;
    } else if (data[p + 1] != 0) {
      p += 2;
    } else if (data[p] != 0) {
      p += 1;
    } else {
      return p;
    }
  }
  return size;
}

bool split_fail(Error& err, size_t nal_index, size_t offset, const char* what) {
  err.nal_index = static_cast<int64_t>(nal_index);
  err.offset = static_cast<int64_t>(offset);
  err.mb_addr = -1;
  return fail(err, Status::kMalformed, "%s", what);
}

}  // namespace

bool split_annexb(const uint8_t* data, size_t size, std::vector<NalUnit>& out, Error& err) {
  out.clear();
  if (size == 0) return split_fail(err, 0, 0, "empty stream");
  size_t i = 0;
  while (i < size && data[i] == 0) ++i;
  if (i == size) return split_fail(err, 0, 0, "no start code: the stream holds only zero bytes");
  if (i < 2 || data[i] != 1)
    return split_fail(err, 0, i, "missing start code: the stream does not begin with 00 00 01 (or 00 00 00 01)");
  size_t begin = 0;
  size_t header = i + 1;
  for (;;) {
    const size_t index = out.size();
    if (header >= size) return split_fail(err, index, header - 3, "truncated stream: a start code with no NAL unit after it");
    const uint8_t h = data[header];
    if (h & 0x80) return split_fail(err, index, header, "forbidden_zero_bit is 1 in the NAL unit header");
    const size_t p = find_zero_pattern(data, header, size);
    NalUnit nal;
    nal.begin = begin;
    nal.header = header;
    nal.nal_ref_idc = uint8_t((h >> 5) & 3);
    nal.nal_unit_type = uint8_t(h & 31);
    if (p == size) {
      // Last NAL unit: zeros at the end of the stream are its trailing_zero_8bits.
      size_t e = size;
      while (e > header && data[e - 1] == 0) --e;
      if (e == header) return split_fail(err, index, header, "empty NAL unit (only zero bytes after the start code)");
      nal.end = e;
      nal.range_end = size;
      out.push_back(nal);
      return true;
    }
    if (p == header) return split_fail(err, index, header, "empty NAL unit (a start code followed by 00 00)");
    if (data[p + 2] == 2) return split_fail(err, index, p, "0x000002 inside a NAL unit");
    // data[p - 1] != 0 here: otherwise the pattern would have been found at p - 1.
    nal.end = p;
    size_t q = p;
    while (q < size && data[q] == 0) ++q;
    if (q == size) {
      nal.range_end = size;
      out.push_back(nal);
      return true;
    }
    if (data[q] != 1) return split_fail(err, index, p, "0x000000 inside a NAL unit (zero bytes not followed by a start code)");
    // q - p >= 2 zeros then 0x01: a start code. One more zero before it is the next NAL's zero_byte.
    begin = (q - p >= 3) ? q - 3 : q - 2;
    nal.range_end = begin;
    out.push_back(nal);
    header = q + 1;
  }
}

bool extract_rbsp(const uint8_t* nal, size_t size, Rbsp& rbsp, Error& err) {
  rbsp.bytes.clear();
  rbsp.epb.clear();
  rbsp.standard_escaping = true;
  if (size == 0) {
    err.offset = 0;
    return fail(err, Status::kMalformed, "empty NAL unit");
  }
  const int hb = nal_header_bytes(uint8_t(nal[0] & 31));
  rbsp.header_bytes = hb;
  if (size < size_t(hb)) {
    err.offset = 0;
    return fail(err, Status::kMalformed, "NAL unit of type %d is shorter than its %d-byte header", nal[0] & 31, hb);
  }
  rbsp.bytes.resize(size - size_t(hb));
  uint8_t* out = rbsp.bytes.data();
  size_t n = 0;
  // The plain stretches between two "00 00" are copied as a block; only after two zeros is the next byte
  // looked at for 0x03.
  size_t i = size_t(hb);
  while (i < size) {
    // Find the next 00 00 03 at or after i.
    size_t j = i;
    size_t found = size;
    while (j + 2 < size) {
      if (nal[j + 2] > 3) {
        j += 3;
      } else if (nal[j + 1] != 0) {
        j += 2;
      } else if (nal[j] != 0 || nal[j + 2] != 3) {
        j += 1;
      } else {
        found = j;
        break;
      }
    }
    if (found == size) {
      std::memcpy(out + n, nal + i, size - i);
      n += size - i;
      break;
    }
    std::memcpy(out + n, nal + i, found + 2 - i);
    n += found + 2 - i;
    rbsp.epb.push_back(uint32_t(found + 2));
    if (found + 3 < size && nal[found + 3] > 3) rbsp.standard_escaping = false;
    i = found + 3;
  }
  rbsp.bytes.resize(n);
  return true;
}

size_t escape_rbsp(const uint8_t* rbsp, size_t n, uint8_t* out) {
  size_t k = 0;
  int zeros = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint8_t b = rbsp[i];
    if (zeros >= 2 && b <= 3) {
      out[k++] = 3;
      zeros = 0;
    }
    out[k++] = b;
    zeros = b == 0 ? zeros + 1 : 0;
  }
  if (n > 0 && rbsp[n - 1] == 0) out[k++] = 3;
  return k;
}

void escape_rbsp(const uint8_t* rbsp, size_t n, std::vector<uint8_t>& out) {
  const size_t at = out.size();
  out.resize(at + escaped_size_bound(n));
  const size_t k = escape_rbsp(rbsp, n, out.data() + at);
  out.resize(at + k);
}

bool is_standard_escaping(const uint8_t* payload, size_t payload_size, const uint8_t* rbsp, size_t n) {
  size_t k = 0;
  int zeros = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint8_t b = rbsp[i];
    if (zeros >= 2 && b <= 3) {
      if (k >= payload_size || payload[k] != 3) return false;
      ++k;
      zeros = 0;
    }
    if (k >= payload_size || payload[k] != b) return false;
    ++k;
    zeros = b == 0 ? zeros + 1 : 0;
  }
  if (n > 0 && rbsp[n - 1] == 0) {
    if (k >= payload_size || payload[k] != 3) return false;
    ++k;
  }
  return k == payload_size;
}

}  // namespace avc
