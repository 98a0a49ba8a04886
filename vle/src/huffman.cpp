#include "vle/huffman.h"

#include <algorithm>
#include <cstring>

namespace vle {

void histogram_ref(const uint8_t* data, size_t n, uint64_t counts[256]) {
  // Four tables so that runs of one byte value do not serialize on one counter (store-to-load
  // forwarding stalls); 32-bit counters, folded into the 64-bit result every 2^31 bytes.
  uint32_t c[4][256];
  std::memset(counts, 0, 256 * sizeof(uint64_t));
  size_t done = 0;
  while (done < n) {
    std::memset(c, 0, sizeof c);
    const size_t block = std::min<size_t>(n - done, size_t{1} << 31);
    const uint8_t* p = data + done;
    size_t i = 0;
    for (; i + 16 <= block; i += 16) {
      uint64_t a, b;
      std::memcpy(&a, p + i, 8);
      std::memcpy(&b, p + i + 8, 8);
      for (int k = 0; k < 8; k += 2) {
        ++c[0][static_cast<uint8_t>(a >> (8 * k))];
        ++c[1][static_cast<uint8_t>(a >> (8 * k + 8))];
        ++c[2][static_cast<uint8_t>(b >> (8 * k))];
        ++c[3][static_cast<uint8_t>(b >> (8 * k + 8))];
      }
    }
    for (; i < block; ++i) ++c[0][p[i]];
    for (int s = 0; s < 256; ++s) counts[s] += uint64_t{c[0][s]} + c[1][s] + c[2][s] + c[3][s];
    done += block;
  }
}

namespace {

// Package weights can exceed 64 bits (up to 16 levels of sums of 256 64-bit counts).
__extension__ typedef unsigned __int128 Weight;

}  // namespace

int build_code(const uint64_t counts[256], int max_len, CodeTable* table) {
  if (max_len < 1 || max_len > kMaxCodeLength) return -1;
  // Leaves sorted by (count, symbol): the tie-break that makes the result deterministic.
  uint8_t sym[256];
  int n = 0;
  for (int s = 0; s < 256; ++s)
    if (counts[s] > 0) sym[n++] = static_cast<uint8_t>(s);
  if (n > (1 << max_len)) return -1;
  std::stable_sort(sym, sym + n, [&](uint8_t a, uint8_t b) { return counts[a] < counts[b]; });

  uint8_t len[256] = {};
  if (n == 1) {
    len[sym[0]] = 1;
  } else if (n >= 2) {
    // Package-merge (Larmore & Hirschberg), one list per level. Level max_len holds the leaves;
    // every shallower level merges the leaves with the packages (pairs) of the level below, a leaf
    // first on equal weights. Taking the first 2n-2 items of level 1 and expanding packages into
    // the first 2p items of the level below selects, on each level, a prefix of the sorted leaves;
    // a leaf's code length is the number of levels whose selected prefix contains it.
    // Only the first 2n-2 items of a list can ever be selected, so lists are cut there.
    const int keep = 2 * n - 2;
    static_assert(kMaxCodeLength <= 16, "level arrays below are sized for 16 levels");
    bool is_package[kMaxCodeLength + 1][2 * 256];
    Weight cur[2 * 256], next[2 * 256];
    int cur_size = std::min(n, keep);
    for (int i = 0; i < cur_size; ++i) {
      cur[i] = counts[sym[i]];
      is_package[max_len][i] = false;
    }
    for (int level = max_len - 1; level >= 1; --level) {
      const int packages = cur_size / 2;
      int li = 0, pi = 0, out = 0;
      while (out < keep && (li < n || pi < packages)) {
        const bool take_leaf =
            pi >= packages || (li < n && Weight{counts[sym[li]]} <= cur[2 * pi] + cur[2 * pi + 1]);
        if (take_leaf) {
          next[out] = counts[sym[li++]];
          is_package[level][out++] = false;
        } else {
          next[out] = cur[2 * pi] + cur[2 * pi + 1];
          ++pi;
          is_package[level][out++] = true;
        }
      }
      std::copy(next, next + out, cur);
      cur_size = out;
    }
    int take = keep;  // items selected on the current level
    for (int level = 1; level <= max_len && take > 0; ++level) {
      int leaves = 0, packages = 0;
      for (int i = 0; i < take; ++i) (is_package[level][i] ? packages : leaves)++;
      for (int i = 0; i < leaves; ++i) ++len[sym[i]];
      take = 2 * packages;
    }
  }
  // With n <= 2^max_len the selection above always succeeds; the guard is defensive.
  for (int s = 0; s < 256; ++s)
    if (len[s] > max_len) return -1;
  return canonical_code(len, table);
}

int canonical_code(const uint8_t len[256], CodeTable* table) {
  int count[kMaxCodeLength + 1] = {};
  int used = 0;
  for (int s = 0; s < 256; ++s) {
    if (len[s] > kMaxCodeLength) return -1;
    if (len[s]) {
      ++count[len[s]];
      ++used;
    }
  }
  // Kraft sum in units of 2^-16.
  uint32_t kraft = 0;
  for (int l = 1; l <= kMaxCodeLength; ++l) kraft += static_cast<uint32_t>(count[l]) << (kMaxCodeLength - l);
  const uint32_t full = uint32_t{1} << kMaxCodeLength;
  if (kraft > full) return -1;
  if (kraft < full && used != 0 && !(used == 1 && count[1] == 1)) return -1;

  uint32_t next[kMaxCodeLength + 2] = {};
  uint32_t code = 0;
  for (int l = 1; l <= kMaxCodeLength; ++l) {
    code = (code + static_cast<uint32_t>(count[l - 1])) << 1;
    next[l] = code;
  }
  for (int s = 0; s < 256; ++s) {
    table->len[s] = len[s];
    table->code[s] = len[s] ? static_cast<uint16_t>(next[len[s]]++) : 0;
  }
  return 0;
}

}  // namespace vle
