#include "vle/decode.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

namespace vle {

const char* decode_status_message(DecodeStatus s) {
  switch (s) {
    case DecodeStatus::kOk: return "ok";
    case DecodeStatus::kBadTable: return "the code lengths do not form a valid canonical code";
    case DecodeStatus::kBadChunkCount: return "the chunk count does not match the symbol count";
    case DecodeStatus::kBadChunkIndex:
      return "the chunk index is inconsistent (not starting at bit 0, decreasing, or past the payload end)";
    case DecodeStatus::kPayloadTooShort: return "the payload is shorter than its bit length";
    case DecodeStatus::kInvalidCode: return "the payload holds a bit pattern that is no code word";
    case DecodeStatus::kChunkOverrun: return "a chunk's codes run past the start of the next chunk";
    case DecodeStatus::kChunkUnderrun: return "a chunk's codes end before the start of the next chunk";
    case DecodeStatus::kNullArgument: return "a null buffer was passed";
  }
  return "unknown decode status";
}

namespace {

constexpr int kLutBits = 11;

// Lookup for the decoder, built from the code lengths. Codes of up to kLutBits bits resolve with
// one lookup of the next kLutBits stream bits: lut[] = (len << 8) | symbol, 0 when the prefix
// starts a longer code or no code. Longer codes use the canonical ranges per length: codes of
// length l are the values [first[l], first[l] + count[l]) and belong to sorted[offset[l] + ...].
struct Decoder {
  uint16_t lut[1 << kLutBits];
  uint32_t first[kMaxCodeLength + 1];
  uint32_t count[kMaxCodeLength + 1];
  uint32_t offset[kMaxCodeLength + 1];
  uint8_t sorted[256];
};

bool build_decoder(const CodeTable& t, Decoder* d) {
  CodeTable canon;
  if (canonical_code(t.len, &canon) != 0) return false;
  for (int s = 0; s < 256; ++s)
    if (t.len[s] && t.code[s] != canon.code[s]) return false;
  std::memset(d, 0, sizeof *d);
  for (int s = 0; s < 256; ++s)
    if (t.len[s]) ++d->count[t.len[s]];
  uint32_t code = 0, off = 0;
  for (int l = 1; l <= kMaxCodeLength; ++l) {
    code = (code + d->count[l - 1]) << 1;
    d->first[l] = code;
    d->offset[l] = off;
    off += d->count[l];
  }
  uint32_t fill[kMaxCodeLength + 1];
  std::memcpy(fill, d->offset, sizeof fill);
  for (int l = 1; l <= kMaxCodeLength; ++l)
    for (int s = 0; s < 256; ++s)
      if (t.len[s] == l) d->sorted[fill[l]++] = static_cast<uint8_t>(s);
  for (int s = 0; s < 256; ++s) {
    const int l = t.len[s];
    if (l == 0 || l > kLutBits) continue;
    const uint32_t lo = uint32_t{canon.code[s]} << (kLutBits - l);
    const uint32_t hi = lo + (1u << (kLutBits - l));
    for (uint32_t i = lo; i < hi; ++i) d->lut[i] = static_cast<uint16_t>((l << 8) | s);
  }
  return true;
}

// Resolves a code longer than kLutBits from the next 16 stream bits; false: no code word.
inline bool decode_long(const Decoder& d, uint32_t v16, uint8_t* sym, unsigned* len) {
  for (int l = kLutBits + 1; l <= kMaxCodeLength; ++l) {
    const uint32_t c = v16 >> (kMaxCodeLength - l);
    if (c - d.first[l] < d.count[l]) {  // unsigned: also rejects c < first[l]
      *sym = d.sorted[d.offset[l] + (c - d.first[l])];
      *len = static_cast<unsigned>(l);
      return true;
    }
  }
  return false;
}

struct Reader {
  const uint8_t* p;
  size_t bytes;
  // The 64 stream bits from bit pos on, MSB-aligned (at least 57 of them real, the rest zero);
  // bytes at or past the end of the payload read as zero.
  uint64_t peek(uint64_t pos) const {
    const uint64_t byte = pos >> 3;
    uint64_t v;
    if (byte + 8 <= bytes) {
      std::memcpy(&v, p + byte, 8);
      v = __builtin_bswap64(v);
    } else {
      v = 0;
      for (int i = 0; i < 8; ++i) v = (v << 8) | (byte + i < bytes ? p[byte + i] : 0);
    }
    return v << (pos & 7);
  }
};

// One code from the MSB-aligned bit buffer buf; 0: no code word, 1: done (buf and pos advanced).
// An int, not a bool, so that results combine with & without short-circuit branches.
inline unsigned decode_one(const Decoder& d, uint64_t& buf, uint64_t& pos, uint8_t* o) {
  const uint32_t e = d.lut[buf >> (64 - kLutBits)];
  uint8_t sym;
  unsigned len;
  if (e) {
    sym = static_cast<uint8_t>(e);
    len = e >> 8;
  } else if (!decode_long(d, static_cast<uint32_t>(buf >> 48), &sym, &len)) {
    return 0;
  }
  *o = sym;
  buf <<= len;
  pos += len;
  return 1;
}

DecodeStatus chunk_end_status(uint64_t pos, uint64_t end) {
  if (pos > end) return DecodeStatus::kChunkOverrun;
  if (pos < end) return DecodeStatus::kChunkUnderrun;
  return DecodeStatus::kOk;
}

// Decodes symbols [i, m) of a chunk starting at stream bit pos; the chunk must end at bit end.
DecodeStatus decode_chunk(const Decoder& d, const Reader& r, uint64_t pos, uint64_t end, uint8_t* o,
                          uint64_t i, uint64_t m) {
  // Three codes (48 bits at most) per 64-bit peek (57 real bits at least).
  for (; i + 3 <= m; i += 3) {
    uint64_t buf = r.peek(pos);
    if (!decode_one(d, buf, pos, o + i) || !decode_one(d, buf, pos, o + i + 1) ||
        !decode_one(d, buf, pos, o + i + 2))
      return DecodeStatus::kInvalidCode;
    if (pos > end) return DecodeStatus::kChunkOverrun;
  }
  for (; i < m; ++i) {
    uint64_t buf = r.peek(pos);
    if (!decode_one(d, buf, pos, o + i)) return DecodeStatus::kInvalidCode;
  }
  return chunk_end_status(pos, end);
}

// Two whole chunks interleaved: two independent dependency chains (lookup, length, shift) keep the
// core busy while one waits on its table load. Stops at the first group of three codes where either
// chunk fails or overruns and finishes each chunk alone from there, so the checks and statuses are
// those of decode_chunk.
void decode_chunk_pair(const Decoder& d, const Reader& r, uint64_t pa, uint64_t end_a, uint8_t* oa,
                       uint64_t pb, uint64_t end_b, uint8_t* ob, DecodeStatus st[2]) {
  uint64_t i = 0;
  for (; i + 3 <= kChunkSymbols; i += 3) {
    uint64_t a = r.peek(pa), b = r.peek(pb);
    uint64_t na = pa, nb = pb;
    const unsigned ok = decode_one(d, a, na, oa + i) & decode_one(d, b, nb, ob + i) &
                    decode_one(d, a, na, oa + i + 1) & decode_one(d, b, nb, ob + i + 1) &
                    decode_one(d, a, na, oa + i + 2) & decode_one(d, b, nb, ob + i + 2);
    if (!ok || na > end_a || nb > end_b) break;
    pa = na;
    pb = nb;
  }
  st[0] = decode_chunk(d, r, pa, end_a, oa, i, kChunkSymbols);
  st[1] = decode_chunk(d, r, pb, end_b, ob, i, kChunkSymbols);
}

}  // namespace

DecodeStatus decode_ref(const uint8_t* payload, size_t payload_bytes, uint64_t total_bits,
                        const uint64_t* chunk_bits, uint64_t nchunks, const CodeTable& table,
                        uint8_t* out, uint64_t n, unsigned threads) {
  if (nchunks != chunk_count(n)) return DecodeStatus::kBadChunkCount;
  if ((!payload && payload_bytes) || (n && (!out || !chunk_bits))) return DecodeStatus::kNullArgument;
  if (total_bits > UINT64_MAX - 7 || (total_bits + 7) / 8 > payload_bytes)
    return DecodeStatus::kPayloadTooShort;
  if (n == 0) return total_bits == 0 ? DecodeStatus::kOk : DecodeStatus::kChunkUnderrun;
  if (chunk_bits[0] != 0) return DecodeStatus::kBadChunkIndex;
  for (uint64_t k = 0; k < nchunks; ++k) {
    const uint64_t end = k + 1 < nchunks ? chunk_bits[k + 1] : total_bits;
    if (end < chunk_bits[k] || end > total_bits) return DecodeStatus::kBadChunkIndex;
  }
  Decoder d;
  if (!build_decoder(table, &d)) return DecodeStatus::kBadTable;
  const Reader r{payload, payload_bytes};

  uint64_t workers = threads ? threads : std::max(1u, std::thread::hardware_concurrency());
  // A thread costs ~70 us to start and join (more when it wakes an idle core), a chunk ~150 us to
  // decode: a worker gets kMinChunksPerThread chunks at least.
  constexpr uint64_t kMinChunksPerThread = 4;
  workers = std::min<uint64_t>({workers, std::max<uint64_t>(1, nchunks / kMinChunksPerThread), 1024});
  std::atomic<uint64_t> first_bad{UINT64_MAX};
  std::vector<DecodeStatus> status(workers, DecodeStatus::kOk);
  std::vector<uint64_t> bad_chunk(workers, UINT64_MAX);
  auto run = [&](uint64_t w) {
    const uint64_t k0 = nchunks * w / workers, k1 = nchunks * (w + 1) / workers;
    auto end_of = [&](uint64_t k) { return k + 1 < nchunks ? chunk_bits[k + 1] : total_bits; };
    auto failed = [&](uint64_t k, DecodeStatus s) {
      status[w] = s;
      bad_chunk[w] = k;
      uint64_t cur = first_bad.load();
      while (k < cur && !first_bad.compare_exchange_weak(cur, k)) {
      }
    };
    for (uint64_t k = k0; k < k1;) {
      if (k > first_bad.load(std::memory_order_relaxed)) return;
      if (k + 2 <= k1 && (k + 2) * kChunkSymbols <= n) {
        DecodeStatus st[2];
        decode_chunk_pair(d, r, chunk_bits[k], end_of(k), out + k * kChunkSymbols, chunk_bits[k + 1],
                          end_of(k + 1), out + (k + 1) * kChunkSymbols, st);
        if (st[0] != DecodeStatus::kOk) return failed(k, st[0]);
        if (st[1] != DecodeStatus::kOk) return failed(k + 1, st[1]);
        k += 2;
      } else {
        const uint64_t m = std::min(kChunkSymbols, n - k * kChunkSymbols);
        const DecodeStatus s = decode_chunk(d, r, chunk_bits[k], end_of(k), out + k * kChunkSymbols, 0, m);
        if (s != DecodeStatus::kOk) return failed(k, s);
        ++k;
      }
    }
  };
  std::vector<std::thread> pool;
  std::vector<uint64_t> inline_workers;
  for (uint64_t w = 1; w < workers; ++w) {
    try {
      pool.emplace_back(run, w);
    } catch (...) {  // no thread available: run that share here
      inline_workers.push_back(w);
    }
  }
  run(0);
  for (uint64_t w : inline_workers) run(w);
  for (auto& t : pool) t.join();
  uint64_t best = UINT64_MAX;
  DecodeStatus result = DecodeStatus::kOk;
  for (uint64_t w = 0; w < workers; ++w)
    if (bad_chunk[w] < best) {
      best = bad_chunk[w];
      result = status[w];
    }
  return result;
}

}  // namespace vle
