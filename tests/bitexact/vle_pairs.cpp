// The vle pairs of gpuec-bitexact: encode (encode_ref / encode_cuda), scan (exclusive_scan_ref /
// exclusive_scan_cuda, both methods), pack (pack_ref / pack_cuda, word and byte segments), histogram
// (histogram_ref / histogram_cuda) and format (compress with the CPU encoder / with the CUDA encoder of
// vle/encoders.h).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "canary.h"
#include "harness.h"
#include "vle_inputs.h"
#include "vle/decode.h"
#include "vle/encode.h"
#include "vle/encoders.h"
#include "vle/format.h"
#include "vle/huffman.h"
#include "bench_kernels/pack.h"
#include "bench_kernels/scan.h"

#if defined(GPUEC_HAVE_CUDA)
#include "device_buffer.h"
#include "vle/encode_cuda.h"
#include "bench_kernels/histogram_cuda.h"
#include "bench_kernels/pack_cuda.h"
#endif

namespace bitexact {
namespace {

constexpr size_t kMargin = 64;  // canary bytes behind every output

// The CUDA packer's output tiles (bench_kernels/pack_cuda.h), also for the CPU-only build's cases.
constexpr uint64_t kPackTile = 8192, kPackLargeTile = 16384, kPackLargeOutput = uint64_t{32} << 20;
#if defined(GPUEC_HAVE_CUDA)
static_assert(kPackTile == gpuec_bench::kPackTileBytes && kPackLargeTile == gpuec_bench::kPackLargeTileBytes &&
                  kPackLargeOutput == gpuec_bench::kPackLargeOutputBytes,
              "the pack cases aim at bench_kernels/pack_cuda.h tiles");
#endif

// ---------------------------------------------------------------- inputs

enum class Data { kRandom, kSkewed, kZero, kMax };
constexpr Kind<Data> kDataKinds[] = {
    {Data::kRandom, "random"}, {Data::kSkewed, "skewed"}, {Data::kZero, "all-zero"}, {Data::kMax, "all-0xff"},
};

Bytes make_bytes(std::mt19937& rng, uint64_t n, Data d) {
  Bytes v(n);
  switch (d) {
    case Data::kRandom: for (auto& b : v) b = static_cast<uint8_t>(rng()); break;
    case Data::kSkewed: {
      std::geometric_distribution<int> g(0.18);  // byte k with probability about 2^-(k/4 + 1), as text
      for (auto& b : v) b = static_cast<uint8_t>(std::min(g(rng), 255));
      break;
    }
    case Data::kZero: break;
    case Data::kMax: std::fill(v.begin(), v.end(), 0xFF); break;
  }
  return v;
}

enum class Table { kHuffman, kArbitrary, kAll16, kAll1, kMissing };
constexpr Kind<Table> kTables[] = {
    {Table::kHuffman, "huffman"}, {Table::kArbitrary, "arbitrary lengths 1..16"}, {Table::kAll16, "all 16-bit"},
    {Table::kAll1, "all 1-bit"}, {Table::kMissing, "a used symbol without code"},
};

// The encoder does not need a prefix code: any lengths 1..16 and codes. kMissing: the huffman table with one
// symbol of the input given length 0 (the encoders must report UINT64_MAX).
vle::CodeTable make_table(std::mt19937& rng, const Bytes& in, Table t) {
  vle::CodeTable c{};
  if (t == Table::kHuffman || t == Table::kMissing) {
    uint64_t counts[256];
    vle::histogram_ref(in.data(), in.size(), counts);
    vle::build_code(counts, vle::kMaxCodeLength, &c);
    if (t == Table::kMissing && !in.empty()) c.len[in[rng() % in.size()]] = 0;
    return c;
  }
  for (int s = 0; s < 256; ++s) {
    const int len = t == Table::kAll16 ? 16 : t == Table::kAll1 ? 1 : 1 + static_cast<int>(rng() % 16);
    c.len[s] = static_cast<uint8_t>(len);
    c.code[s] = static_cast<uint16_t>(t == Table::kAll16 ? 0xFFFF : rng() & ((1u << len) - 1));
  }
  return c;
}

// Symbol counts around the kernel's block-input (256 threads x 32 symbols) and the chunk (65536 symbols).
std::vector<uint64_t> encode_sizes() {
  std::vector<uint64_t> v = tile_sizes(8192, 3, true);
  for (uint64_t n : {uint64_t{31}, uint64_t{32}, uint64_t{33}})
    v.push_back(n);
  for (uint64_t n : tile_sizes(vle::kChunkSymbols, 4, false))
    if (std::find(v.begin(), v.end(), n) == v.end()) v.push_back(n);
  return v;
}

// ---------------------------------------------------------------- vle.encode

// The oracle: the codes one bit at a time (vle/encode.h layout), zero padding to 32 bits, the chunk index.
uint64_t plain_encode(const Bytes& in, const vle::CodeTable& t, Bytes* out, std::vector<uint64_t>* chunks) {
  out->assign(vle::encoded_bound_bytes(in.size()), 0);
  chunks->clear();
  uint64_t bit = 0;
  for (uint64_t i = 0; i < in.size(); ++i) {
    if (i % vle::kChunkSymbols == 0) chunks->push_back(bit);
    const int len = t.len[in[i]];
    if (len < 1 || len > vle::kMaxCodeLength) return UINT64_MAX;
    for (int k = len - 1; k >= 0; --k, ++bit)
      if ((t.code[in[i]] >> k) & 1) (*out)[bit >> 3] |= static_cast<uint8_t>(0x80u >> (bit & 7));
  }
  return bit;
}

uint64_t padded_bytes(uint64_t bits) { return (bits + 31) / 32 * 4; }

struct EncodeCase {
  std::string name;
  Bytes in;
  vle::CodeTable table;
  bool prefix_code;
};

template <class Fn>
void for_each_encode_case(Context& ctx, Fn fn) {
  for (uint64_t n : encode_sizes())
    for (const Kind<Data>& dk : kDataKinds)
      for (const Kind<Table>& tk : kTables) {
        const Table t = tk.value;
        if (t == Table::kMissing && n == 0) continue;
        if (n > 70000 && t != Table::kHuffman && t != Table::kArbitrary) continue;  // keep the big sizes few
        ctx.begin_case("n " + std::to_string(n) + ", " + dk.name + ", " + tk.name);
        EncodeCase c;
        c.name = "";
        c.in = make_bytes(ctx.rng, n, dk.value);
        c.table = make_table(ctx.rng, c.in, t);
        c.prefix_code = t == Table::kHuffman;
        fn(c);
        if (!ctx.ok()) return;
      }
}

// encode_ref into canary-filled buffers; checks its canaries. Returns false after a failure.
bool run_encode_ref(Context& ctx, const EncodeCase& c, Bytes* out, std::vector<uint64_t>* chunks, uint64_t* total) {
  const uint64_t n = c.in.size(), bound = vle::encoded_bound_bytes(n), nch = vle::chunk_count(n);
  out->assign(bound + kMargin, kCanary);
  chunks->assign(nch + 8, gpuec_test::canary<uint64_t>());
  *total = vle::encode_ref(c.in.data(), n, c.table, out->data(), chunks->data());
  if (*total == UINT64_MAX) return true;
  return ctx.canary_intact("encode_ref payload", out->data(), padded_bytes(*total), out->size()) &&
         ctx.canary_intact("encode_ref chunk index", chunks->data(), nch * 8, chunks->size() * 8);
}

void encode_oracle(Context& ctx) {
  for_each_encode_case(ctx, [&](const EncodeCase& c) {
    Bytes want, got;
    std::vector<uint64_t> want_chunks, got_chunks;
    const uint64_t want_total = plain_encode(c.in, c.table, &want, &want_chunks);
    uint64_t total = 0;
    if (!run_encode_ref(ctx, c, &got, &got_chunks, &total)) return;
    if (!ctx.same_value("payload bits (UINT64_MAX: a symbol without code)", want_total, total)) return;
    if (total == UINT64_MAX) return;
    if (!ctx.same_bytes("payload", want.data(), got.data(), padded_bytes(total))) return;
    if (!ctx.same_bytes("chunk index", want_chunks.data(), got_chunks.data(), want_chunks.size() * 8)) return;
    if (!c.prefix_code) return;
    // The decoder round trip (an independent reading of the layout).
    Bytes back(c.in.size() + kMargin, kCanary);
    const vle::DecodeStatus s = vle::decode_ref(got.data(), padded_bytes(total), total, got_chunks.data(),
                                                vle::chunk_count(c.in.size()), c.table, back.data(), c.in.size(), 1);
    if (s != vle::DecodeStatus::kOk) {
      ctx.fail(std::string("decode_ref of encode_ref's output: ") + vle::decode_status_message(s));
      return;
    }
    ctx.same_bytes("decode_ref(encode_ref(in)) vs in", c.in.data(), back.data(), c.in.size());
  });
}

// ---------------------------------------------------------------- vle.scan

enum class Lengths { kSmall, kZero, kMax, kAny };
constexpr Kind<Lengths> kLengths[] = {
    {Lengths::kSmall, "lengths 0..64"}, {Lengths::kZero, "all lengths 0"}, {Lengths::kMax, "all lengths 2^32-1"},
    {Lengths::kAny, "any 32-bit lengths"},
};

std::vector<uint32_t> make_lengths(std::mt19937& rng, uint64_t n, Lengths l) {
  std::vector<uint32_t> v(n);
  for (auto& x : v)
    x = l == Lengths::kSmall ? rng() % 65 : l == Lengths::kZero ? 0 : l == Lengths::kMax ? 0xFFFFFFFFu : rng();
  return v;
}

// Tiles of 4096 lengths; the segmented scan groups 32 tiles.
std::vector<uint64_t> scan_sizes() {
  std::vector<uint64_t> v = tile_sizes(4096, 5, true);
  for (uint64_t n : tile_sizes(32 * 4096, 2, false))
    if (std::find(v.begin(), v.end(), n) == v.end()) v.push_back(n);
  return v;
}

template <class Fn>
void for_each_scan_case(Context& ctx, Fn fn) {
  for (uint64_t n : scan_sizes())
    for (const Kind<Lengths>& lk : kLengths) {
      const Lengths l = lk.value;
      ctx.begin_case("n " + std::to_string(n) + ", " + lk.name);
      const std::vector<uint32_t> len = make_lengths(ctx.rng, n, l);
      fn(len);
      if (!ctx.ok()) return;
    }
}

void scan_oracle(Context& ctx) {
  for_each_scan_case(ctx, [&](const std::vector<uint32_t>& len) {
    const size_t n = len.size();
    std::vector<uint64_t> want(n);
    uint64_t sum = 0;
    for (size_t i = 0; i < n; ++i) {
      want[i] = sum;
      sum += len[i];
    }
    std::vector<uint64_t> got(n + 8, gpuec_test::canary<uint64_t>());
    const uint64_t total = gpuec_bench::exclusive_scan_ref(len.data(), n, got.data());
    if (!ctx.same_value("total", sum, total)) return;
    if (!ctx.same_bytes("offsets", want.data(), got.data(), n * 8)) return;
    if (!ctx.canary_intact("offsets", got.data(), n * 8, got.size() * 8)) return;
    ctx.same_value("total with offsets == null", sum, gpuec_bench::exclusive_scan_ref(len.data(), n, nullptr));
  });
}

// ---------------------------------------------------------------- vle.pack

struct Segments {
  std::vector<uint32_t> len, first_word, words;
  std::vector<uint64_t> offset, src_bit;
  Bytes src;  // multiple of 4 bytes
  uint64_t total = 0;
  gpuec_bench::WordSegments word_view() const {
    return {words.data(), first_word.data(), len.data(), offset.data(), len.size()};
  }
  gpuec_bench::ByteSegments byte_view() const { return {src.data(), src_bit.data(), len.data(), offset.data(), len.size()}; }
};

enum class SegMix { kCavlc, kOnes, kEmpty, kLong, kTileSized };
constexpr Kind<SegMix> kSegMixes[] = {
    {SegMix::kCavlc, "CAVLC-sized segments with empty ones"}, {SegMix::kOnes, "1-bit segments"},
    {SegMix::kEmpty, "mostly empty segments"}, {SegMix::kLong, "long and short segments"},
    {SegMix::kTileSized, "tile-sized segments"},
};

// Segments whose lengths add up to exactly `total` bits, with random word and byte sources.
Segments make_segments(std::mt19937& rng, uint64_t total, SegMix mix, uint64_t tile_bits) {
  Segments s;
  uint64_t left = total;
  while (left > 0) {
    uint32_t l = 0;
    switch (mix) {
      case SegMix::kCavlc: l = rng() % 4 == 0 ? 0 : 1 + rng() % 40; break;
      case SegMix::kOnes: l = 1; break;
      case SegMix::kEmpty: l = rng() % 8 == 0 ? 1 + rng() % 100 : 0; break;
      case SegMix::kLong: l = rng() % 5 == 0 ? 1 + rng() % (3 * tile_bits) : rng() % 30; break;
      case SegMix::kTileSized: l = static_cast<uint32_t>(tile_bits - 1 + rng() % 3); break;
    }
    l = static_cast<uint32_t>(std::min<uint64_t>(l, left));
    s.len.push_back(l);
    left -= l;
  }
  if (mix == SegMix::kEmpty || s.len.empty()) s.len.push_back(0);  // a trailing empty segment
  uint64_t off = 0, words = 0;
  for (uint32_t l : s.len) {
    s.offset.push_back(off);
    off += l;
    s.first_word.push_back(static_cast<uint32_t>(words));
    words += (l + 31) / 32 + rng() % 2;  // gaps between the sources
  }
  s.total = off;
  s.words.resize(words + 1);
  for (auto& w : s.words) w = static_cast<uint32_t>(rng());
  // Byte sources: any bit position inside a random buffer.
  const uint64_t src_bits = std::max<uint64_t>(off + 64, 1024);
  s.src.resize((src_bits / 8 + 4 + 3) / 4 * 4);
  for (auto& b : s.src) b = static_cast<uint8_t>(rng());
  for (uint32_t l : s.len) s.src_bit.push_back(rng() % (src_bits - l + 1));
  return s;
}

bool bit_at(const uint8_t* p, uint64_t b) { return (p[b >> 3] >> (7 - (b & 7))) & 1; }
void set_bit(uint8_t* p, uint64_t b) { p[b >> 3] |= static_cast<uint8_t>(0x80u >> (b & 7)); }

// The oracle: every segment bit copied on its own (bench_kernels/pack.h: words MSB first, byte streams MSB first).
Bytes plain_pack(const Segments& s, bool words) {
  Bytes out(vle::packed_bytes(s.total), 0);
  for (size_t i = 0; i < s.len.size(); ++i)
    for (uint64_t j = 0; j < s.len[i]; ++j) {
      const bool b = words ? (s.words[s.first_word[i] + j / 32] >> (31 - j % 32)) & 1 : bit_at(s.src.data(), s.src_bit[i] + j);
      if (b) set_bit(out.data(), s.offset[i] + j);
    }
  return out;
}

struct PackCase {
  std::string name;
  Segments seg;
  uint64_t out_bytes;  // what the twins are given (may be less than packed_bytes(total))
};

template <class Fn>
void for_each_pack_case(Context& ctx, bool large_tiles, Fn fn) {
  const uint64_t tile_bits = (large_tiles ? kPackLargeTile : kPackTile) * 8;
  std::vector<uint64_t> totals = tile_sizes(tile_bits, 4, true);
  for (uint64_t t : {uint64_t{31}, uint64_t{32}, uint64_t{33}}) totals.push_back(t);
  for (uint64_t total : totals)
    for (const Kind<SegMix>& mk : kSegMixes) {
      const SegMix m = mk.value;
      if (m == SegMix::kOnes && total > 3 * tile_bits) continue;
      ctx.begin_case("total " + std::to_string(total) + " bits, " + mk.name +
                     (large_tiles ? ", out_bytes >= kPackLargeOutputBytes (large tiles)" : ""));
      PackCase c;
      c.seg = make_segments(ctx.rng, total, m, tile_bits);
      c.out_bytes = large_tiles ? kPackLargeOutput : vle::packed_bytes(c.seg.total) + 4 * (ctx.rng() % 3);
      fn(c);
      if (!ctx.ok()) return;
    }
  if (large_tiles) return;
  ctx.begin_case("out_bytes too small: the first out_bytes bytes only");
  PackCase c;
  c.seg = make_segments(ctx.rng, 3 * tile_bits + 77, SegMix::kLong, tile_bits);
  c.out_bytes = vle::packed_bytes(c.seg.total) / 2 / 4 * 4;
  fn(c);
}

void pack_oracle(Context& ctx) {
  for_each_pack_case(ctx, false, [&](const PackCase& c) {
    for (bool words : {true, false}) {
      const Bytes want = plain_pack(c.seg, words);
      const uint64_t written = std::min<uint64_t>(c.out_bytes, want.size());
      Bytes got(c.out_bytes + kMargin, kCanary);
      const uint64_t total = words ? gpuec_bench::pack_ref(c.seg.word_view(), got.data(), c.out_bytes)
                                   : gpuec_bench::pack_ref(c.seg.byte_view(), got.data(), c.out_bytes);
      const char* what = words ? "pack_ref(WordSegments)" : "pack_ref(ByteSegments)";
      if (!ctx.same_value(what, c.seg.total, total)) return;
      if (!ctx.same_bytes(what, want.data(), got.data(), written)) return;
      if (!ctx.canary_intact(what, got.data(), written, got.size())) return;
    }
    // Offsets that are not the scan of the lengths are refused, nothing written.
    if (c.seg.len.size() >= 2 && c.seg.total > 0) {
      Segments bad = c.seg;
      bad.offset.back() += 1;
      Bytes got(c.out_bytes + kMargin, kCanary);
      if (!ctx.same_value("pack_ref with bad offsets", gpuec_bench::kPackBadOffsets,
                          gpuec_bench::pack_ref(bad.word_view(), got.data(), c.out_bytes)))
        return;
      ctx.canary_intact("pack_ref with bad offsets", got.data(), 0, got.size());
    }
  });
}

// ---------------------------------------------------------------- vle.histogram

// Sizes around a block's loop step (256 threads x 16 bytes x 4) and the 16-byte loads.
std::vector<uint64_t> histogram_sizes() {
  std::vector<uint64_t> v = tile_sizes(16, 3, true);
  for (uint64_t n : tile_sizes(256 * 16 * 4, 40, false)) v.push_back(n);
  return v;
}

template <class Fn>
void for_each_histogram_case(Context& ctx, Fn fn) {
  for (uint64_t n : histogram_sizes())
    for (const Kind<Data>& dk : kDataKinds) {
      const size_t misalign = ctx.rng() % 16;
      ctx.begin_case("n " + std::to_string(n) + ", " + dk.name + ", data at 16k + " + std::to_string(misalign));
      Bytes buf = make_bytes(ctx.rng, n + misalign, dk.value);
      fn(buf, misalign, n);
      if (!ctx.ok()) return;
    }
}

void histogram_oracle(Context& ctx) {
  for_each_histogram_case(ctx, [&](const Bytes& buf, size_t misalign, uint64_t n) {
    uint64_t want[256] = {};
    for (uint64_t i = 0; i < n; ++i) ++want[buf[misalign + i]];
    std::vector<uint64_t> got(256 + 4, gpuec_test::canary<uint64_t>());
    vle::histogram_ref(buf.data() + misalign, n, got.data());
    if (!ctx.same_bytes("counts", want, got.data(), sizeof want)) return;
    ctx.canary_intact("counts", got.data(), 256 * 8, got.size() * 8);
  });
}

// ---------------------------------------------------------------- vle.format

std::vector<std::pair<std::string, Bytes>> format_inputs(std::mt19937& rng) {
  std::vector<std::pair<std::string, Bytes>> v;
  v.push_back({"empty", {}});
  v.push_back({"one byte", {42}});
  v.push_back({"one-symbol alphabet", Bytes(100000, 7)});
  v.push_back({"all 256 symbols", vle_test::all_symbols(256 * 300)});
  Bytes fib = vle_test::fibonacci_bytes(26);  // Fibonacci-like counts: the 16-bit length limit binds
  std::shuffle(fib.begin(), fib.end(), rng);
  v.push_back({"Fibonacci counts (length limit)", fib});
  for (uint64_t n : tile_sizes(vle::kChunkSymbols, 3, false))
    for (const Kind<Data>& dk : kDataKinds) v.push_back({std::to_string(n) + " " + dk.name + " bytes", make_bytes(rng, n, dk.value)});
  return v;
}

// The encoder compress runs, wrapped: its output room (encoded_bound_bytes) canary-filled before the call and
// checked past the padded payload after it (vle/format.h EncodeFn: bytes past it are not touched).
Context* g_encoder_ctx = nullptr;
vle::EncodeFn g_encoder = nullptr;
uint64_t canary_encoder(const uint8_t* in, uint64_t n, const vle::CodeTable& t, uint8_t* out, uint64_t* chunks) {
  const uint64_t bound = vle::encoded_bound_bytes(n);
  gpuec_test::fill_canary(out, bound);
  const uint64_t total = g_encoder(in, n, t, out, chunks);
  if (total != UINT64_MAX && !g_encoder_ctx->canary_intact("the encoder inside compress", out, padded_bytes(total), bound))
    return UINT64_MAX;
  return total;
}

bool compress_with(Context& ctx, vle::EncodeFn encoder, const char* name, const Bytes& in, Bytes* file) {
  g_encoder_ctx = &ctx;
  g_encoder = encoder;
  const vle::Status s = vle::compress(in.data(), in.size(), canary_encoder, file);
  if (!s.ok()) return ctx.fail(std::string("compress with ") + name + ": " + s.message);
  return true;
}

void format_oracle(Context& ctx) {
  ctx.begin_case("inputs");
  const auto inputs = format_inputs(ctx.rng);
  for (const auto& [name, in] : inputs) {
    ctx.begin_case(name);
    Bytes file, cpu;
    if (!compress_with(ctx, vle::encode_ref, "encode_ref", in, &file)) return;
    const vle::Status s = vle::compress(in.data(), in.size(), gpu::Backend::kCpu, &cpu);
    if (!s.ok()) {
      ctx.fail("compress (cpu): " + s.message);
      return;
    }
    if (!ctx.same_value("file size", cpu.size(), file.size()) ||
        !ctx.same_bytes("compress(kCpu) vs compress(encode_ref)", cpu.data(), file.data(), file.size()) ||
        !ctx.same_bytes("compress_ref vs compress(encode_ref)", vle::compress_ref(in.data(), in.size()).data(),
                        file.data(), file.size()))
      return;
    Bytes back;
    const vle::Status d = vle::decompress(file.data(), file.size(), &back);
    if (!d.ok()) {
      ctx.fail("decompress of the compressed file: " + d.message);
      return;
    }
    if (!ctx.same_value("decompressed size", in.size(), back.size()) ||
        !ctx.same_bytes("decompress(compress(in)) vs in", in.data(), back.data(), in.size()))
      return;
    // The payload is the plain encoding with the canonical code of the header's lengths.
    vle::HeaderInfo info;
    if (!vle::read_header(file.data(), file.size(), &info).ok()) {
      ctx.fail("read_header refused the file");
      return;
    }
    vle::CodeTable t;
    if (vle::canonical_code(info.len, &t) != 0) {
      ctx.fail("the header's lengths are not a canonical code");
      return;
    }
    Bytes want;
    std::vector<uint64_t> chunks;
    const uint64_t bits = plain_encode(in, t, &want, &chunks);
    if (!ctx.same_value("payload bits", bits, info.payload_bits)) return;
    if (!ctx.same_value("payload bytes", padded_bytes(bits), file.size() - info.header_bytes)) return;
    if (!ctx.same_bytes("payload", want.data(), file.data() + info.header_bytes, padded_bytes(bits))) return;
  }
}

// ---------------------------------------------------------------- GPU twins

#if defined(GPUEC_HAVE_CUDA)

void encode_gpu(Context& ctx) {
  DeviceBuffer<uint8_t> d_in, d_out, d_ws;
  DeviceBuffer<uint64_t> d_chunks, d_total;
  if (!d_total.alloc(1)) {
    ctx.fail("cudaMalloc");
    return;
  }
  for_each_encode_case(ctx, [&](const EncodeCase& c) {
    Bytes want;
    std::vector<uint64_t> want_chunks;
    uint64_t want_total = 0;
    if (!run_encode_ref(ctx, c, &want, &want_chunks, &want_total)) return;
    const uint64_t n = c.in.size(), bound = vle::encoded_bound_bytes(n), nch = vle::chunk_count(n);
    const size_t misalign = n ? ctx.rng() % 16 : 0;  // 16-byte aligned input is the fast path; others too
    const size_t ws = vle::encode_cuda_workspace_bytes(n);
    if (!d_in.alloc(n + 16) || !d_out.alloc(bound + kMargin) || !d_ws.alloc(ws) || !d_chunks.alloc(nch + 8)) {
      ctx.fail("cudaMalloc");
      return;
    }
    if (!BX_CUDA(ctx, cudaMemcpy(d_in.p + misalign, c.in.data(), n, cudaMemcpyHostToDevice)) ||
        !BX_CUDA(ctx, cudaMemset(d_out.p, kCanary, bound + kMargin)) ||
        !BX_CUDA(ctx, cudaMemset(d_chunks.p, kCanary, (nch + 8) * 8)) ||
        !BX_CUDA(ctx, cudaMemset(d_total.p, kCanary, 8)) || !BX_CUDA(ctx, cudaMemset(d_ws.p, 0x5C, ws)))
      return;
    if (!twin_ok(ctx, vle::encode_cuda(d_in.p + misalign, n, c.table, d_out.p, d_chunks.p, d_total.p, d_ws.p, ws, nullptr),
                 "encode_cuda") ||
        !BX_CUDA(ctx, cudaDeviceSynchronize()))
      return;
    Bytes got(bound + kMargin);
    std::vector<uint64_t> got_chunks(nch + 8);
    uint64_t total = 0;
    if (!BX_CUDA(ctx, cudaMemcpy(got.data(), d_out.p, got.size(), cudaMemcpyDeviceToHost)) ||
        !BX_CUDA(ctx, cudaMemcpy(got_chunks.data(), d_chunks.p, got_chunks.size() * 8, cudaMemcpyDeviceToHost)) ||
        !BX_CUDA(ctx, cudaMemcpy(&total, d_total.p, 8, cudaMemcpyDeviceToHost)))
      return;
    if (!ctx.same_value("total bits", want_total, total)) return;
    if (total == UINT64_MAX) {  // unspecified output, but only inside the bounds
      ctx.canary_intact("encode_cuda payload (failed encode)", got.data(), bound, got.size());
      ctx.canary_intact("encode_cuda chunk index (failed encode)", got_chunks.data(), nch * 8, got_chunks.size() * 8);
      return;
    }
    if (!ctx.same_bytes("payload", want.data(), got.data(), padded_bytes(total))) return;
    if (!ctx.canary_intact("encode_cuda payload", got.data(), padded_bytes(total), got.size())) return;
    if (!ctx.same_bytes("chunk index", want_chunks.data(), got_chunks.data(), nch * 8)) return;
    ctx.canary_intact("encode_cuda chunk index", got_chunks.data(), nch * 8, got_chunks.size() * 8);
  });
}

void scan_gpu(Context& ctx) {
  for_each_scan_case(ctx, [&](const std::vector<uint32_t>& len) {
    const uint64_t n = len.size();
    std::vector<uint64_t> want(n + 8, gpuec_test::canary<uint64_t>());
    const uint64_t want_total = gpuec_bench::exclusive_scan_ref(len.data(), n, want.data());
    DeviceBuffer<uint32_t> d_len(n);
    DeviceBuffer<uint64_t> d_off(n + 8), d_total(1);
    if (!BX_CUDA(ctx, cudaMemcpy(d_len.p, len.data(), n * 4, cudaMemcpyHostToDevice))) return;
    for (gpuec_bench::ScanMethod m : {gpuec_bench::ScanMethod::kDefault, gpuec_bench::ScanMethod::kSegmentedAtomic, gpuec_bench::ScanMethod::kCub}) {
      const std::string what = std::string("exclusive_scan_cuda ") + gpuec_bench::scan_method_name(m) +
                               (m == gpuec_bench::ScanMethod::kDefault ? " (default)" : "");
      const size_t ws = gpuec_bench::scan_cuda_workspace_bytes(n, m);
      DeviceBuffer<uint8_t> d_ws(ws);
      if (!BX_CUDA(ctx, cudaMemset(d_off.p, kCanary, (n + 8) * 8)) || !BX_CUDA(ctx, cudaMemset(d_total.p, kCanary, 8)) ||
          !BX_CUDA(ctx, cudaMemset(d_ws.p, 0x5C, std::max<size_t>(ws, 1))))
        return;
      if (!twin_ok(ctx, gpuec_bench::exclusive_scan_cuda(d_len.p, n, d_off.p, d_total.p, d_ws.p, ws, m, nullptr), what.c_str()) ||
          !BX_CUDA(ctx, cudaDeviceSynchronize()))
        return;
      std::vector<uint64_t> got(n + 8);
      uint64_t total = 0;
      if (!BX_CUDA(ctx, cudaMemcpy(got.data(), d_off.p, got.size() * 8, cudaMemcpyDeviceToHost)) ||
          !BX_CUDA(ctx, cudaMemcpy(&total, d_total.p, 8, cudaMemcpyDeviceToHost)))
        return;
      if (!ctx.same_value((what + " total").c_str(), want_total, total)) return;
      if (!ctx.same_bytes((what + " offsets").c_str(), want.data(), got.data(), n * 8)) return;
      if (!ctx.canary_intact((what + " offsets").c_str(), got.data(), n * 8, got.size() * 8)) return;
    }
  });
}

template <class T>
bool upload(Context& ctx, DeviceBuffer<T>& d, const std::vector<T>& v) {
  if (!d.alloc(v.size())) return ctx.fail("cudaMalloc");
  return v.empty() || BX_CUDA(ctx, cudaMemcpy(d.p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
}

void pack_gpu_cases(Context& ctx, bool large_tiles) {
  for_each_pack_case(ctx, large_tiles, [&](const PackCase& c) {
    DeviceBuffer<uint32_t> d_len, d_first, d_words;
    DeviceBuffer<uint64_t> d_off, d_srcbit;
    DeviceBuffer<uint8_t> d_src, d_out(c.out_bytes + kMargin);
    if (!upload(ctx, d_len, c.seg.len) || !upload(ctx, d_first, c.seg.first_word) ||
        !upload(ctx, d_words, c.seg.words) || !upload(ctx, d_off, c.seg.offset) ||
        !upload(ctx, d_srcbit, c.seg.src_bit) || !upload(ctx, d_src, c.seg.src))
      return;
    for (bool words : {true, false}) {
      const char* what = words ? "pack_cuda(WordSegments)" : "pack_cuda(ByteSegments)";
      Bytes want(c.out_bytes + kMargin, kCanary);
      const uint64_t total = words ? gpuec_bench::pack_ref(c.seg.word_view(), want.data(), c.out_bytes)
                                   : gpuec_bench::pack_ref(c.seg.byte_view(), want.data(), c.out_bytes);
      const uint64_t written = std::min<uint64_t>(c.out_bytes, vle::packed_bytes(total));
      if (!BX_CUDA(ctx, cudaMemset(d_out.p, kCanary, c.out_bytes + kMargin))) return;
      const gpu::CudaError e =
          words ? gpuec_bench::pack_cuda(gpuec_bench::WordSegments{d_words.p, d_first.p, d_len.p, d_off.p, c.seg.len.size()}, d_out.p,
                                 c.out_bytes, nullptr)
                : gpuec_bench::pack_cuda(gpuec_bench::ByteSegments{d_src.p, d_srcbit.p, d_len.p, d_off.p, c.seg.len.size()}, d_out.p,
                                 c.out_bytes, nullptr);
      if (!twin_ok(ctx, e, what) || !BX_CUDA(ctx, cudaDeviceSynchronize())) return;
      Bytes got(c.out_bytes + kMargin);
      if (!BX_CUDA(ctx, cudaMemcpy(got.data(), d_out.p, got.size(), cudaMemcpyDeviceToHost))) return;
      if (!ctx.same_bytes(what, want.data(), got.data(), written)) return;
      if (!ctx.canary_intact(what, got.data(), written, got.size())) return;
    }
  });
}

void pack_gpu(Context& ctx) {
  pack_gpu_cases(ctx, false);
  if (ctx.ok()) pack_gpu_cases(ctx, true);
}

void histogram_gpu(Context& ctx) {
  for_each_histogram_case(ctx, [&](const Bytes& buf, size_t misalign, uint64_t n) {
    std::vector<uint64_t> want(256);
    vle::histogram_ref(buf.data() + misalign, n, want.data());
    DeviceBuffer<uint8_t> d_data(buf.size());
    DeviceBuffer<uint64_t> d_counts(256 + 4);
    if (!BX_CUDA(ctx, cudaMemcpy(d_data.p, buf.data(), buf.size(), cudaMemcpyHostToDevice)) ||
        !BX_CUDA(ctx, cudaMemset(d_counts.p, kCanary, (256 + 4) * 8)))
      return;
    if (!twin_ok(ctx, gpuec_bench::histogram_cuda(d_data.p + misalign, n, d_counts.p, nullptr), "histogram_cuda") ||
        !BX_CUDA(ctx, cudaDeviceSynchronize()))
      return;
    std::vector<uint64_t> got(256 + 4);
    if (!BX_CUDA(ctx, cudaMemcpy(got.data(), d_counts.p, got.size() * 8, cudaMemcpyDeviceToHost))) return;
    if (!ctx.same_bytes("counts", want.data(), got.data(), 256 * 8)) return;
    ctx.canary_intact("histogram_cuda counts", got.data(), 256 * 8, got.size() * 8);
  });
}

void format_gpu(Context& ctx) {
  ctx.begin_case("inputs");
  const auto inputs = format_inputs(ctx.rng);
  for (const auto& [name, in] : inputs) {
    ctx.begin_case(name);
    Bytes cpu, cuda, cuda_checked;
    const vle::Status a = vle::compress(in.data(), in.size(), gpu::Backend::kCpu, &cpu);
    const vle::Status b = vle::compress(in.data(), in.size(), gpu::Backend::kCuda, &cuda);
    if (!a.ok() || !b.ok()) {
      ctx.fail("compress: cpu '" + a.message + "', cuda '" + b.message + "'");
      break;
    }
    if (!compress_with(ctx, vle::cuda_encoder(), "encode_cuda_host", in, &cuda_checked) ||
        !ctx.same_value("file size (canary-checked encoder)", cpu.size(), cuda_checked.size()) ||
        !ctx.same_bytes(".gvle file (canary-checked encoder)", cpu.data(), cuda_checked.data(), cpu.size()))
      break;
    if (!ctx.same_value("file size", cpu.size(), cuda.size())) break;
    if (!ctx.same_bytes(".gvle file", cpu.data(), cuda.data(), cpu.size())) break;
  }
}

#endif  // GPUEC_HAVE_CUDA

// ---------------------------------------------------------------- bench

BenchResult encode_bench(const Options& opt) {
  std::mt19937 rng(opt.seed);
  const uint64_t n = uint64_t{64} << 20;
  const Bytes in = make_bytes(rng, n, Data::kSkewed);
  const vle::CodeTable t = make_table(rng, in, Table::kHuffman);
  BenchResult r{"64 MiB skewed bytes, huffman table", -1, -1};
  Bytes out(vle::encoded_bound_bytes(n));
  std::vector<uint64_t> chunks(vle::chunk_count(n));
  r.cpu_us = median_us(opt, [&] { vle::encode_ref(in.data(), n, t, out.data(), chunks.data()); });
#if defined(GPUEC_HAVE_CUDA)
  if (opt.gpu) {
    const size_t ws = vle::encode_cuda_workspace_bytes(n);
    DeviceBuffer<uint8_t> d_in(in), d_out(out.size()), d_ws(ws);
    DeviceBuffer<uint64_t> d_chunks(chunks.size()), d_total(1);
    r.gpu_us = median_gpu_us(opt, [&] { vle::encode_cuda(d_in.p, n, t, d_out.p, d_chunks.p, d_total.p, d_ws.p, ws, nullptr); });
  }
#endif
  return r;
}

BenchResult scan_bench(const Options& opt) {
  std::mt19937 rng(opt.seed);
  const uint64_t n = uint64_t{16} << 20;
  const std::vector<uint32_t> len = make_lengths(rng, n, Lengths::kSmall);
  std::vector<uint64_t> off(n);
  BenchResult r{"16 Mi lengths 0..64", -1, -1};
  r.cpu_us = median_us(opt, [&] { gpuec_bench::exclusive_scan_ref(len.data(), n, off.data()); });
#if defined(GPUEC_HAVE_CUDA)
  if (opt.gpu) {
    const size_t ws = gpuec_bench::scan_cuda_workspace_bytes(n);
    DeviceBuffer<uint32_t> d_len(len);
    DeviceBuffer<uint64_t> d_off(n), d_total(1);
    DeviceBuffer<uint8_t> d_ws(ws);
    r.gpu_us = median_gpu_us(opt, [&] {
      gpuec_bench::exclusive_scan_cuda(d_len.p, n, d_off.p, d_total.p, d_ws.p, ws, gpuec_bench::ScanMethod::kDefault, nullptr);
    });
  }
#endif
  return r;
}

BenchResult pack_bench(const Options& opt) {
  std::mt19937 rng(opt.seed);
  // About a 1080p frame of CAVLC-sized codes: 220k segments.
  const Segments s = make_segments(rng, 220000 * 15, SegMix::kCavlc, kPackTile * 8);
  const uint64_t out_bytes = vle::packed_bytes(s.total);
  Bytes out(out_bytes);
  BenchResult r{std::to_string(s.len.size() / 1000) + "k CAVLC-sized word segments", -1, -1};
  r.cpu_us = median_us(opt, [&] { gpuec_bench::pack_ref(s.word_view(), out.data(), out_bytes); });
#if defined(GPUEC_HAVE_CUDA)
  if (opt.gpu) {
    DeviceBuffer<uint32_t> d_len(s.len), d_first(s.first_word), d_words(s.words);
    DeviceBuffer<uint64_t> d_off(s.offset);
    DeviceBuffer<uint8_t> d_out(out_bytes);
    const gpuec_bench::WordSegments w{d_words.p, d_first.p, d_len.p, d_off.p, s.len.size()};
    r.gpu_us = median_gpu_us(opt, [&] { gpuec_bench::pack_cuda(w, d_out.p, out_bytes, nullptr); });
  }
#endif
  return r;
}

BenchResult histogram_bench(const Options& opt) {
  std::mt19937 rng(opt.seed);
  const uint64_t n = uint64_t{256} << 20;
  const Bytes in = make_bytes(rng, n, Data::kRandom);
  uint64_t counts[256];
  BenchResult r{"256 MiB random bytes", -1, -1};
  r.cpu_us = median_us(opt, [&] { vle::histogram_ref(in.data(), n, counts); });
#if defined(GPUEC_HAVE_CUDA)
  if (opt.gpu) {
    DeviceBuffer<uint8_t> d_in(in);
    DeviceBuffer<uint64_t> d_counts(256);
    r.gpu_us = median_gpu_us(opt, [&] { gpuec_bench::histogram_cuda(d_in.p, n, d_counts.p, nullptr); });
  }
#endif
  return r;
}

BenchResult format_bench(const Options& opt) {
  std::mt19937 rng(opt.seed);
  const Bytes in = make_bytes(rng, uint64_t{16} << 20, Data::kSkewed);
  Bytes file;
  BenchResult r{"compress 16 MiB skewed (host in and out)", -1, -1};
  r.cpu_us = median_us(opt, [&] { vle::compress(in.data(), in.size(), gpu::Backend::kCpu, &file); });
#if defined(GPUEC_HAVE_CUDA)
  if (opt.gpu) {
    r.gpu_us = median_us(opt, [&] { vle::compress(in.data(), in.size(), gpu::Backend::kCuda, &file); });
  }
#endif
  return r;
}

#if defined(GPUEC_HAVE_CUDA)
constexpr CheckFn kEncodeGpu = encode_gpu, kScanGpu = scan_gpu, kPackGpu = pack_gpu, kHistogramGpu = histogram_gpu,
                  kFormatGpu = format_gpu;
#else
constexpr CheckFn kEncodeGpu = nullptr, kScanGpu = nullptr, kPackGpu = nullptr, kHistogramGpu = nullptr,
                  kFormatGpu = nullptr;
#endif

}  // namespace

void register_vle_pairs(std::vector<Pair>& pairs) {
  pairs.push_back({"vle.encode", "encode_ref / encode_cuda (default kernel)",
                   "a plain bit-by-bit encoder and the decode_ref round trip", encode_oracle, kEncodeGpu, encode_bench});
  pairs.push_back({"vle.scan", "exclusive_scan_ref / exclusive_scan_cuda (default, segmented-atomic, cub)",
                   "a plain running sum", scan_oracle, kScanGpu, scan_bench});
  pairs.push_back({"vle.pack", "pack_ref / pack_cuda (word and byte segments)", "a plain bit-by-bit copy", pack_oracle,
                   kPackGpu, pack_bench});
  pairs.push_back({"vle.histogram", "histogram_ref / histogram_cuda", "a plain count", histogram_oracle,
                   kHistogramGpu, histogram_bench});
  pairs.push_back({"vle.format", "compress with encode_ref / with encode_cuda_host (gvle --backend cuda)",
                   "decompress round trip and the plain encoding of the header's code", format_oracle, kFormatGpu,
                   format_bench});
}

}  // namespace bitexact
