#include "vle/format.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

#include "vle/decode.h"

namespace vle {

namespace {

constexpr uint8_t kMagic[4] = {'G', 'V', 'L', 'E'};
constexpr uint64_t kMaxChunkBits = kChunkSymbols * kMaxCodeLength;

void put_le(uint8_t* p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint64_t get_le(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
uint64_t hash(const uint8_t* p, size_t n) { return XXH3_64bits(p, n); }

Status fail(FormatStatus code, std::string message) { return Status{code, std::move(message)}; }

std::string num(uint64_t v) { return std::to_string(v); }

}  // namespace

Status compress(const uint8_t* in, size_t n, EncodeFn encode, std::vector<uint8_t>* out) {
  out->clear();
  if (!encode) return fail(FormatStatus::kNoEncoder, "no encoder for this backend in this build");
  try {
    uint64_t counts[256];
    histogram_ref(in, n, counts);
    CodeTable table;
    if (build_code(counts, kMaxCodeLength, &table) != 0)
      return fail(FormatStatus::kEncodeFailed, "building the code failed");
    unsigned m = 0;
    uint64_t expect_bits = 0;
    for (int s = 0; s < 256; ++s)
      if (table.len[s]) {
        ++m;
        expect_bits += counts[s] * table.len[s];
      }
    const uint64_t chunks = chunk_count(n);
    const uint64_t hbytes = header_bytes(m, chunks);
    std::vector<uint64_t> chunk_bits(chunks);
    out->assign(hbytes + encoded_bound_bytes(n), 0);
    uint8_t* f = out->data();
    uint8_t* payload = f + hbytes;
    const uint64_t bits = encode(in, n, table, payload, chunk_bits.data());
    if (bits == UINT64_MAX) {
      out->clear();
      return fail(FormatStatus::kEncodeFailed, "the encoder failed");
    }
    if (bits != expect_bits) {
      out->clear();
      return fail(FormatStatus::kEncodeFailed, "the encoder returned " + num(bits) + " bits, the code gives " +
                                                   num(expect_bits));
    }
    const uint64_t pbytes = (bits + 31) / 32 * 4;

    std::memcpy(f, kMagic, 4);
    f[4] = kFormatVersion;
    f[5] = 0;
    put_le(f + 6, m, 2);
    put_le(f + 8, n, 8);
    put_le(f + 16, hash(in, n), 8);
    put_le(f + 24, bits, 8);
    put_le(f + 32, chunks, 8);
    put_le(f + 40, kChunkSymbols, 4);
    put_le(f + 44, 0, 4);
    put_le(f + 48, hash(f, 48), 8);
    uint8_t* p = f + kFixedHeaderBytes;
    for (int s = 0; s < 256; ++s)
      if (table.len[s]) p[s >> 3] |= static_cast<uint8_t>(1u << (s & 7));
    p += 32;
    unsigned j = 0;
    for (int s = 0; s < 256; ++s)
      if (table.len[s]) {
        p[j >> 1] |= static_cast<uint8_t>((table.len[s] - 1) << (4 * (j & 1)));
        ++j;
      }
    p += (m + 1) / 2;
    for (uint64_t k = 0; k < chunks; ++k) {
      const uint64_t end = k + 1 < chunks ? chunk_bits[k + 1] : bits;
      if ((k == 0 && chunk_bits[0] != 0) || end < chunk_bits[k] || end - chunk_bits[k] > kMaxChunkBits) {
        out->clear();
        return fail(FormatStatus::kEncodeFailed, "the encoder returned an inconsistent chunk index");
      }
      put_le(p, end - chunk_bits[k], 4);
      p += 4;
    }
    put_le(p, hash(payload, pbytes), 8);
    p += 8;
    put_le(p, hash(f + kFixedHeaderBytes, static_cast<size_t>(p - f - kFixedHeaderBytes)), 8);
    out->resize(hbytes + pbytes);
    return Status{};
  } catch (const std::bad_alloc&) {
    out->clear();
    out->shrink_to_fit();
    return fail(FormatStatus::kOutOfMemory, "out of memory compressing " + num(n) + " bytes");
  }
}

std::vector<uint8_t> compress_ref(const uint8_t* in, size_t n) {
  std::vector<uint8_t> out;
  const Status s = compress(in, n, encode_ref, &out);
  if (s.code == FormatStatus::kOutOfMemory) throw std::bad_alloc();
  return out;
}

namespace {

// read_header's work, also returning the chunk bit offsets for decompress.
Status parse(const uint8_t* f, size_t size, HeaderInfo* h, std::vector<uint64_t>* chunk_bits,
             const DecompressOptions& opt) {
  if (size == 0) return fail(FormatStatus::kNotGvle, "empty input, not a gvle file");
  if (std::memcmp(f, kMagic, std::min<size_t>(size, 4)) != 0)
    return fail(FormatStatus::kNotGvle, "not a gvle file (no GVLE magic)");
  if (size < 5) return fail(FormatStatus::kTruncated, "truncated: " + num(size) + " bytes, inside the magic");
  if (f[4] != kFormatVersion)
    return fail(FormatStatus::kUnsupportedVersion,
                "unsupported gvle format version " + num(f[4]) + " (this reader knows version 1)");
  if (size < kFixedHeaderBytes)
    return fail(FormatStatus::kTruncated, "truncated header: " + num(size) + " bytes, the fixed header needs " +
                                              num(kFixedHeaderBytes));
  if (opt.verify_checksums && get_le(f + 48, 8) != hash(f, 48))
    return fail(FormatStatus::kHeaderCorrupt, "corrupt header: fixed header checksum mismatch");
  h->version = f[4];
  h->used_symbols = static_cast<unsigned>(get_le(f + 6, 2));
  h->original_size = get_le(f + 8, 8);
  h->content_hash = get_le(f + 16, 8);
  h->payload_bits = get_le(f + 24, 8);
  h->chunk_count = get_le(f + 32, 8);
  const uint64_t n = h->original_size, bits = h->payload_bits;
  const char* bad = nullptr;
  if (f[5] != 0) bad = "unknown flags";
  else if (get_le(f + 40, 4) != kChunkSymbols) bad = "chunk size is not 65536 symbols";
  else if (get_le(f + 44, 4) != 0) bad = "reserved field is not 0";
  else if (h->used_symbols > 256) bad = "more than 256 used symbols";
  else if (h->chunk_count != chunk_count(n)) bad = "chunk count does not match the original size";
  else if ((n == 0) != (h->used_symbols == 0)) bad = "used symbols do not match the original size";
  else if (bits < n || bits / kMaxCodeLength > n || (bits % kMaxCodeLength && bits / kMaxCodeLength == n))
    bad = "payload length does not match the original size";
  if (bad) return fail(FormatStatus::kHeaderCorrupt, std::string("corrupt header: ") + bad);
  // From here n <= bits <= 16 n with n < 2^64, so the sizes below do not overflow.
  h->header_bytes = header_bytes(h->used_symbols, h->chunk_count);
  h->payload_bytes = (bits / 32 + (bits % 32 != 0)) * 4;
  if (size < h->header_bytes)
    return fail(FormatStatus::kTruncated, "truncated header: " + num(size) + " bytes, the header needs " +
                                              num(h->header_bytes));
  const uint64_t tables_end = h->header_bytes - 8;
  if (opt.verify_checksums &&
      get_le(f + tables_end, 8) != hash(f + kFixedHeaderBytes, tables_end - kFixedHeaderBytes))
    return fail(FormatStatus::kHeaderCorrupt, "corrupt header: code table / chunk index checksum mismatch");

  const uint8_t* p = f + kFixedHeaderBytes;
  unsigned j = 0;
  for (int s = 0; s < 256; ++s) {
    h->len[s] = 0;
    if ((p[s >> 3] >> (s & 7)) & 1) {
      if (j < h->used_symbols) h->len[s] = static_cast<uint8_t>(((p[32 + (j >> 1)] >> (4 * (j & 1))) & 15) + 1);
      ++j;
    }
  }
  if (j != h->used_symbols)
    return fail(FormatStatus::kHeaderCorrupt, "corrupt header: symbol bitmap does not match the used symbol count");
  if ((h->used_symbols & 1) && (p[32 + h->used_symbols / 2] >> 4) != 0)
    return fail(FormatStatus::kHeaderCorrupt, "corrupt header: non-zero padding nibble");
  CodeTable t;
  if (canonical_code(h->len, &t) != 0)
    return fail(FormatStatus::kHeaderCorrupt, "corrupt header: the code lengths are not a valid prefix code");
  p += 32 + (h->used_symbols + 1) / 2;
  if (chunk_bits) chunk_bits->resize(h->chunk_count);
  uint64_t at = 0;
  for (uint64_t k = 0; k < h->chunk_count; ++k, p += 4) {
    const uint64_t len = get_le(p, 4);
    if (len > kMaxChunkBits)
      return fail(FormatStatus::kHeaderCorrupt, "corrupt header: chunk " + num(k) + " is too long");
    if (chunk_bits) (*chunk_bits)[k] = at;
    at += len;
  }
  if (at != bits)
    return fail(FormatStatus::kHeaderCorrupt, "corrupt header: chunk lengths do not add up to the payload length");

  const uint64_t have = size - h->header_bytes;
  if (have < h->payload_bytes)
    return fail(FormatStatus::kTruncated, "truncated payload: " + num(have) + " of " + num(h->payload_bytes) +
                                              " bytes");
  if (have > h->payload_bytes)
    return fail(FormatStatus::kTrailingData,
                num(have - h->payload_bytes) + " unexpected bytes after the payload");
  const uint8_t* payload = f + h->header_bytes;
  if (opt.verify_checksums && get_le(p, 8) != hash(payload, h->payload_bytes))
    return fail(FormatStatus::kPayloadCorrupt, "corrupt payload: checksum mismatch");
  // Zero padding after payload_bits (at most 31 bits, in the last 4 bytes).
  for (uint64_t b = bits; b < h->payload_bytes * 8; ++b)
    if ((payload[b >> 3] >> (7 - (b & 7))) & 1)
      return fail(FormatStatus::kPayloadCorrupt, "corrupt payload: non-zero padding bits");
  return Status{};
}

}  // namespace

Status read_header(const uint8_t* file, size_t size, HeaderInfo* info, const DecompressOptions& opt) {
  HeaderInfo h;
  try {
    Status s = parse(file, size, &h, nullptr, opt);
    if (s.ok() && info) *info = h;
    return s;
  } catch (const std::bad_alloc&) {
    return fail(FormatStatus::kOutOfMemory, "out of memory reading the header");
  }
}

Status decompress(const uint8_t* file, size_t size, std::vector<uint8_t>* out, const DecompressOptions& opt) {
  out->clear();
  try {
    HeaderInfo h;
    std::vector<uint64_t> chunk_bits;
    Status s = parse(file, size, &h, &chunk_bits, opt);
    if (!s.ok()) return s;
    CodeTable t;
    canonical_code(h.len, &t);  // checked by parse
    out->resize(h.original_size);
    const DecodeStatus d = decode_ref(file + h.header_bytes, h.payload_bytes, h.payload_bits, chunk_bits.data(),
                                      h.chunk_count, t, out->data(), h.original_size, opt.threads);
    if (d != DecodeStatus::kOk) {
      out->clear();
      return fail(FormatStatus::kDecodeFailed, std::string("corrupt payload: ") + decode_status_message(d));
    }
    if (hash(out->data(), out->size()) != h.content_hash) {
      out->clear();
      return fail(FormatStatus::kContentMismatch, "corrupt data: the decoded bytes do not match the content checksum");
    }
    return Status{};
  } catch (const std::bad_alloc&) {
    out->clear();
    out->shrink_to_fit();
    return fail(FormatStatus::kOutOfMemory, "out of memory decompressing");
  } catch (const std::length_error&) {
    out->clear();
    return fail(FormatStatus::kOutOfMemory, "the original size does not fit in memory");
  }
}

}  // namespace vle
