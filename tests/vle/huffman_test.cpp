// Histogram, package-merge lengths and canonical codes (vle/huffman.h): known answers, edge cases,
// optimality against brute force and against unlimited Huffman where the limit does not bind.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <queue>
#include <random>
#include <vector>

#include "vle/huffman.h"

namespace {

__extension__ typedef unsigned __int128 u128;

u128 cost(const uint64_t counts[256], const vle::CodeTable& t) {
  u128 c = 0;
  for (int s = 0; s < 256; ++s) c += u128{counts[s]} * t.len[s];
  return c;
}

// Kraft sum in units of 2^-16.
uint64_t kraft(const vle::CodeTable& t) {
  uint64_t k = 0;
  for (int s = 0; s < 256; ++s)
    if (t.len[s]) k += uint64_t{1} << (16 - t.len[s]);
  return k;
}

int max_len(const vle::CodeTable& t) { return *std::max_element(t.len, t.len + 256); }

// Checks the canonical rule of vle/huffman.h directly: sorted by (length, symbol), each code is the
// previous plus one, shifted left when the length grows; the first is all zeros.
void expect_canonical(const vle::CodeTable& t) {
  std::vector<int> syms;
  for (int s = 0; s < 256; ++s)
    if (t.len[s]) syms.push_back(s);
  std::stable_sort(syms.begin(), syms.end(), [&](int a, int b) { return t.len[a] < t.len[b]; });
  uint32_t code = 0;
  int len = 0;
  for (size_t i = 0; i < syms.size(); ++i) {
    const int s = syms[i];
    if (i == 0) {
      code = 0;
    } else {
      code = (code + 1) << (t.len[s] - len);
    }
    len = t.len[s];
    EXPECT_EQ(t.code[s], code) << "symbol " << s;
    EXPECT_LT(t.code[s], 1u << len);
  }
  for (int s = 0; s < 256; ++s) {
    if (!t.len[s]) {
      EXPECT_EQ(t.code[s], 0) << "unused symbol " << s;
    }
  }
}

// Unlimited Huffman code lengths (the test's own, priority-queue based), for the cost comparison.
std::vector<int> huffman_lengths(const uint64_t counts[256]) {
  struct Node {
    u128 w;
    int id;
  };
  auto cmp = [](const Node& a, const Node& b) { return a.w > b.w || (a.w == b.w && a.id > b.id); };
  std::priority_queue<Node, std::vector<Node>, decltype(cmp)> q(cmp);
  std::vector<int> parent(512, -1);
  int next = 256, used = 0;
  for (int s = 0; s < 256; ++s)
    if (counts[s]) {
      q.push({counts[s], s});
      ++used;
    }
  std::vector<int> len(256, 0);
  if (used == 1) {
    for (int s = 0; s < 256; ++s)
      if (counts[s]) len[s] = 1;
    return len;
  }
  while (q.size() > 1) {
    const Node a = q.top();
    q.pop();
    const Node b = q.top();
    q.pop();
    parent[a.id] = parent[b.id] = next;
    q.push({a.w + b.w, next++});
  }
  for (int s = 0; s < 256; ++s)
    if (counts[s])
      for (int p = parent[s]; p != -1; p = parent[p]) ++len[s];
  return len;
}

// Minimal cost over all length vectors with lengths 1..L satisfying Kraft (brute force, small n).
u128 brute_force_cost(const std::vector<uint64_t>& w, int L) {
  const size_t n = w.size();
  std::vector<int> len(n, 1);
  u128 best = ~u128{0};
  for (;;) {
    uint64_t k = 0;
    for (int l : len) k += uint64_t{1} << (L - l);
    if (k <= (uint64_t{1} << L)) {
      u128 c = 0;
      for (size_t i = 0; i < n; ++i) c += u128{w[i]} * len[i];
      best = std::min(best, c);
    }
    size_t i = 0;
    while (i < n && len[i] == L) len[i++] = 1;
    if (i == n) break;
    ++len[i];
  }
  return best;
}

TEST(Histogram, MatchesNaiveCountAtEveryTailLength) {
  std::mt19937 rng(7);
  std::vector<uint8_t> data(5000);
  for (auto& b : data) b = static_cast<uint8_t>(rng() % 7 == 0 ? rng() : 'e');
  for (size_t n : {size_t{0}, size_t{1}, size_t{15}, size_t{16}, size_t{17}, size_t{31}, size_t{4999}, size_t{5000}}) {
    uint64_t got[256], want[256] = {};
    for (auto& g : got) g = 12345;  // overwritten, not accumulated
    for (size_t i = 0; i < n; ++i) ++want[data[i]];
    vle::histogram_ref(data.data(), n, got);
    for (int s = 0; s < 256; ++s) ASSERT_EQ(got[s], want[s]) << "n " << n << " symbol " << s;
  }
}

TEST(BuildCode, EmptyAlphabetHasNoCodes) {
  uint64_t counts[256] = {};
  vle::CodeTable t;
  ASSERT_EQ(vle::build_code(counts, 16, &t), 0);
  for (int s = 0; s < 256; ++s) {
    EXPECT_EQ(t.len[s], 0);
    EXPECT_EQ(t.code[s], 0);
  }
}

TEST(BuildCode, OneSymbolGetsLengthOne) {
  uint64_t counts[256] = {};
  counts[200] = 99;
  vle::CodeTable t;
  ASSERT_EQ(vle::build_code(counts, 16, &t), 0);
  EXPECT_EQ(t.len[200], 1);
  EXPECT_EQ(t.code[200], 0);
  EXPECT_EQ(max_len(t), 1);
  ASSERT_EQ(vle::build_code(counts, 1, &t), 0);
  EXPECT_EQ(t.len[200], 1);
}

TEST(BuildCode, TwoSymbolsAreZeroAndOneBySymbolValue) {
  uint64_t counts[256] = {};
  counts[int{'b'}] = 1000;
  counts[int{'a'}] = 1;
  vle::CodeTable t;
  ASSERT_EQ(vle::build_code(counts, 16, &t), 0);
  EXPECT_EQ(t.len[int{'a'}], 1);
  EXPECT_EQ(t.len[int{'b'}], 1);
  EXPECT_EQ(t.code[int{'a'}], 0);
  EXPECT_EQ(t.code[int{'b'}], 1);
}

TEST(BuildCode, TiesAreBrokenBySymbolValue) {
  // Three equal counts: the two lowest symbols are merged first, the highest gets the short code.
  uint64_t counts[256] = {};
  counts[10] = counts[20] = counts[30] = 5;
  vle::CodeTable t;
  ASSERT_EQ(vle::build_code(counts, 16, &t), 0);
  EXPECT_EQ(t.len[10], 2);
  EXPECT_EQ(t.len[20], 2);
  EXPECT_EQ(t.len[30], 1);
  EXPECT_EQ(t.code[30], 0b0);
  EXPECT_EQ(t.code[10], 0b10);
  EXPECT_EQ(t.code[20], 0b11);
}

TEST(BuildCode, All256EqualSymbolsGetEightBits) {
  uint64_t counts[256];
  for (auto& c : counts) c = 3;
  vle::CodeTable t;
  ASSERT_EQ(vle::build_code(counts, 16, &t), 0);
  for (int s = 0; s < 256; ++s) {
    EXPECT_EQ(t.len[s], 8);
    EXPECT_EQ(t.code[s], s);
  }
  ASSERT_EQ(vle::build_code(counts, 8, &t), 0);
  EXPECT_EQ(max_len(t), 8);
  EXPECT_EQ(vle::build_code(counts, 7, &t), -1) << "256 symbols need 8 bits";
}

TEST(BuildCode, RejectsBadLimits) {
  uint64_t counts[256] = {};
  counts[1] = counts[2] = counts[3] = 1;
  vle::CodeTable t;
  EXPECT_EQ(vle::build_code(counts, 0, &t), -1);
  EXPECT_EQ(vle::build_code(counts, 17, &t), -1);
  EXPECT_EQ(vle::build_code(counts, 1, &t), -1) << "three symbols do not fit in 1 bit";
  EXPECT_EQ(vle::build_code(counts, 2, &t), 0);
}

TEST(BuildCode, FibonacciCountsAreLimitedToSixteenBits) {
  // Fibonacci counts make unlimited Huffman a chain: 40 symbols would need 39 bits.
  uint64_t counts[256] = {};
  uint64_t a = 1, b = 1;
  for (int s = 0; s < 40; ++s) {
    counts[s * 3] = a;
    const uint64_t c = a + b;
    a = b;
    b = c;
  }
  const std::vector<int> unlimited = huffman_lengths(counts);
  EXPECT_EQ(*std::max_element(unlimited.begin(), unlimited.end()), 39);
  vle::CodeTable t;
  ASSERT_EQ(vle::build_code(counts, 16, &t), 0);
  EXPECT_EQ(max_len(t), 16);
  EXPECT_EQ(kraft(t), uint64_t{1} << 16) << "a limited optimal code is complete";
  expect_canonical(t);
  // Lengths never increase with the count.
  for (int s = 0; s + 1 < 40; ++s) EXPECT_GE(t.len[s * 3], t.len[s * 3 + 3]);
  for (int L = 6; L <= 16; ++L) {
    ASSERT_EQ(vle::build_code(counts, L, &t), 0) << L;
    EXPECT_EQ(max_len(t), L);
    EXPECT_EQ(kraft(t), uint64_t{1} << 16);
  }
}

TEST(BuildCode, HugeCountsDoNotOverflow) {
  uint64_t counts[256] = {};
  for (int s = 0; s < 256; ++s) counts[s] = UINT64_MAX - static_cast<uint64_t>(s) * 977;
  vle::CodeTable t;
  ASSERT_EQ(vle::build_code(counts, 16, &t), 0);
  EXPECT_EQ(kraft(t), uint64_t{1} << 16);
  EXPECT_EQ(max_len(t), 8);

  uint64_t few[256] = {};
  few[0] = UINT64_MAX;
  few[1] = UINT64_MAX;
  few[2] = 1;
  ASSERT_EQ(vle::build_code(few, 16, &t), 0);
  const std::vector<uint64_t> w = {UINT64_MAX, UINT64_MAX, 1};
  EXPECT_TRUE(cost(few, t) == brute_force_cost(w, 2));
  EXPECT_EQ(t.len[1], 1) << "sorted (count, symbol): symbol 1 is the heaviest";

  // Fibonacci up to the 64-bit range: 90 symbols, all counts distinct and huge.
  uint64_t fib[256] = {};
  uint64_t a = 1, b = 2;
  for (int s = 0; s < 90; ++s) {
    fib[s] = a;
    const uint64_t c = a + b;
    a = b;
    b = c;
  }
  ASSERT_EQ(vle::build_code(fib, 16, &t), 0);
  EXPECT_EQ(max_len(t), 16);
  EXPECT_EQ(kraft(t), uint64_t{1} << 16);
}

TEST(BuildCode, OptimalAgainstBruteForceOnSmallAlphabets) {
  std::mt19937_64 rng(1234);
  for (int iter = 0; iter < 300; ++iter) {
    const int n = 2 + static_cast<int>(rng() % 6);   // 2..7 symbols
    const int L = 2 + static_cast<int>(rng() % 3);   // limit 2..4 (often binding)
    if (n > (1 << L)) continue;
    uint64_t counts[256] = {};
    std::vector<uint64_t> w;
    for (int i = 0; i < n; ++i) {
      const int s = static_cast<int>(rng() % 256);
      if (counts[s]) continue;
      const uint64_t c = (rng() % 4 == 0) ? (uint64_t{1} << (rng() % 40)) : 1 + rng() % 50;
      counts[s] = c;
      w.push_back(c);
    }
    if (w.size() < 2) continue;
    vle::CodeTable t;
    ASSERT_EQ(vle::build_code(counts, L, &t), 0);
    EXPECT_LE(max_len(t), L);
    EXPECT_LE(kraft(t), uint64_t{1} << 16);
    expect_canonical(t);
    ASSERT_TRUE(cost(counts, t) == brute_force_cost(w, L))
        << "iteration " << iter << ", n " << w.size() << ", limit " << L;
  }
}

TEST(BuildCode, EqualsUnlimitedHuffmanWhereTheLimitDoesNotBind) {
  std::mt19937_64 rng(99);
  int compared = 0;
  for (int iter = 0; iter < 200; ++iter) {
    uint64_t counts[256] = {};
    const int n = 2 + static_cast<int>(rng() % 255);
    for (int i = 0; i < n; ++i) counts[rng() % 256] = 1 + (rng() % 1000) * (rng() % 1000);
    const std::vector<int> ul = huffman_lengths(counts);
    u128 want = 0;
    for (int s = 0; s < 256; ++s) want += u128{counts[s]} * ul[s];
    if (*std::max_element(ul.begin(), ul.end()) > 16) continue;
    vle::CodeTable t;
    ASSERT_EQ(vle::build_code(counts, 16, &t), 0);
    ASSERT_TRUE(cost(counts, t) == want) << "iteration " << iter;
    EXPECT_EQ(kraft(t), uint64_t{1} << 16);
    expect_canonical(t);
    ++compared;
  }
  EXPECT_GT(compared, 150);
}

TEST(BuildCode, IsDeterministic) {
  std::mt19937_64 rng(5);
  uint64_t counts[256];
  for (auto& c : counts) c = rng() % 4;  // many ties and zeros
  vle::CodeTable a, b;
  ASSERT_EQ(vle::build_code(counts, 12, &a), 0);
  ASSERT_EQ(vle::build_code(counts, 12, &b), 0);
  EXPECT_EQ(0, std::memcmp(&a, &b, sizeof a));
}

TEST(CanonicalCode, DeflateExample) {
  // RFC 1951 3.2.2: lengths (3, 3, 3, 3, 3, 2, 4, 4) for A..H.
  uint8_t len[256] = {};
  const uint8_t l[8] = {3, 3, 3, 3, 3, 2, 4, 4};
  for (int i = 0; i < 8; ++i) len['A' + i] = l[i];
  vle::CodeTable t;
  ASSERT_EQ(vle::canonical_code(len, &t), 0);
  const uint16_t want[8] = {0b010, 0b011, 0b100, 0b101, 0b110, 0b00, 0b1110, 0b1111};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(t.code['A' + i], want[i]) << static_cast<char>('A' + i);
}

TEST(CanonicalCode, ValidatesLengths) {
  vle::CodeTable t;
  uint8_t len[256] = {};
  EXPECT_EQ(vle::canonical_code(len, &t), 0) << "empty alphabet";
  len[7] = 1;
  EXPECT_EQ(vle::canonical_code(len, &t), 0) << "one symbol of length 1";
  len[7] = 2;
  EXPECT_EQ(vle::canonical_code(len, &t), -1) << "one symbol of length 2 is incomplete";
  len[7] = 1;
  len[8] = 1;
  EXPECT_EQ(vle::canonical_code(len, &t), 0);
  len[9] = 1;
  EXPECT_EQ(vle::canonical_code(len, &t), -1) << "three codes of length 1 over-subscribe";
  len[9] = 0;
  len[8] = 2;
  EXPECT_EQ(vle::canonical_code(len, &t), -1) << "lengths 1, 2 are incomplete";
  len[9] = 2;
  EXPECT_EQ(vle::canonical_code(len, &t), 0);
  len[10] = 16;
  EXPECT_EQ(vle::canonical_code(len, &t), -1) << "over-subscribed by 2^-16";
  uint8_t all[256];
  for (auto& l : all) l = 8;
  EXPECT_EQ(vle::canonical_code(all, &t), 0);
  all[0] = 17;
  EXPECT_EQ(vle::canonical_code(all, &t), -1) << "longer than 16";
  // 2^16 codes of 16 bits would be complete, but there are only 256 symbols: 255 x 16 + one 1-bit.
  uint8_t deep[256] = {};
  for (int s = 0; s < 16; ++s) deep[s] = static_cast<uint8_t>(s + 1);
  deep[16] = 16;  // lengths 1..16 plus a second 16: complete
  EXPECT_EQ(vle::canonical_code(deep, &t), 0);
  expect_canonical(t);
  EXPECT_EQ(t.code[15], 0xFFFE);
  EXPECT_EQ(t.code[16], 0xFFFF);
  deep[17] = 16;
  EXPECT_EQ(vle::canonical_code(deep, &t), -1);
}

}  // namespace
