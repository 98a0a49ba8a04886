// cavlc::mb_totals (the check gpuec_mb_commit runs for every macroblock) against its plain twin: the
// original block-by-block total_coeff + level_overflow loop, kept here as the reference. Every field of
// the result must match on every input: the return value, all 27 totals, and, for a malformed record,
// the untouched (canary-filled) output. Records are random, including the levels mb_totals must ignore
// (blocks outside the cbp, level [0] of AC blocks) and levels at the overflow bound (cavlc.h
// kMaxSafeAbsLevel): bound, bound + 1, the first overflowing level codes, 32767 and -32768, at every
// position of every block with every TotalCoeff and TrailingOnes.
//
// Every record is checked twice: as given (scan order) and as its raster-order copy (tests/common/raster.h,
// cavlc/mb.h GPUEC_COEF_RASTER), which must give the reference's result on the scan-order record: the same
// totals and, near the overflow bound, the same exact level_overflow verdict.
//
// Built twice (tests/cavlc/CMakeLists.txt): against gpuec_cavlc (SSE2 on x86-64) and against a copy of
// the coder compiled with GPUEC_NO_SIMD (the portable code).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <random>
#include <string>

#include "canary.h"
#include "cavlc/cavlc.h"
#include "cavlc/slice.h"
#include "random_mb.h"
#include "raster.h"
#include "totals_twin.h"
#include "test_seed.h"

// Separate test names for the two builds (CTest registers both).
#ifdef GPUEC_NO_SIMD
#define TOTALS_SUITE CavlcTotalsPortable
#else
#define TOTALS_SUITE CavlcTotals
#endif

namespace {

constexpr int kBound = cavlc::kMaxSafeAbsLevel;
using gpuec_test::kCanary;

std::string dump(const int16_t* c, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += (i ? " " : "") + std::to_string(c[i]);
  return s;
}

// The record's state for a failure message: kind, cbp, coefficient order and every block's 16 levels.
std::string describe(const gpuec_mb& m) {
  std::string s = "kind " + std::to_string(m.kind) + " cbp 0x" + [&] {
    char b[8];
    std::snprintf(b, sizeof b, "%02x", m.cbp);
    return std::string(b);
  }() + " coef_order " + std::to_string(m.coef_order) + "\n";
  if (m.kind == GPUEC_MB_SKIP || m.kind == GPUEC_MB_PCM) return s;
  const auto& c = m.u.coef;
  for (int b = 0; b < 16; ++b) s += "  luma[" + std::to_string(b) + "] " + dump(c.luma[b], 16) + "\n";
  for (int b = 0; b < 8; ++b) s += "  chroma_ac[" + std::to_string(b) + "] " + dump(c.chroma_ac[b], 16) + "\n";
  s += "  luma_dc " + dump(c.luma_dc, 16) + "\n";
  for (int ch = 0; ch < 2; ++ch) s += "  chroma_dc[" + std::to_string(ch) + "] " + dump(c.chroma_dc[ch], 4) + "\n";
  return s;
}

// mb_totals on m against the reference's result; on a difference reports the first differing field.
bool matches(const gpuec_mb& m, int r_want, const uint8_t (&want)[GPUEC_TC_COUNT]) {
  uint8_t got[GPUEC_TC_COUNT];
  std::memset(got, kCanary, sizeof got);
  const int r_got = cavlc::mb_totals(m, got);
  if (r_want != r_got) {
    ADD_FAILURE() << "mb_totals returns " << r_got << ", the reference " << r_want << " for " << describe(m);
    return false;
  }
  for (int i = 0; i < GPUEC_TC_COUNT; ++i)
    if (want[i] != got[i]) {
      ADD_FAILURE() << "totals[" << i << "] = " << int(got[i]) << ", the reference " << int(want[i])
                    << " (canary " << int(kCanary) << ") for " << describe(m);
      return false;
    }
  return true;
}

// Runs the reference on m (scan order) and mb_totals on m and on its raster-order copy; on a difference
// reports the first differing field and the record. Returns whether all agree. *verdict (when given)
// receives the reference's return value.
bool same_as_ref(const gpuec_mb& m, int* verdict = nullptr) {
  uint8_t want[GPUEC_TC_COUNT];
  std::memset(want, kCanary, sizeof want);
  const int r_want = cavlc_test::mb_totals_twin(m, want);
  if (verdict) *verdict = r_want;
  return matches(m, r_want, want) && matches(cavlc_test::to_raster(m), r_want, want);
}

// Levels that sit at the bound and at the first overflowing level codes (cavlc.h).
constexpr int kEdgeLevels[] = {kBound, -kBound, kBound + 1, -(kBound + 1), kBound + 2, -(kBound + 2),
                               32767, -32767, -32768, 1, -1, 2};

int16_t random_level(std::mt19937& rng) {
  switch (rng() % 8) {
    case 0: return static_cast<int16_t>(kEdgeLevels[rng() % std::size(kEdgeLevels)]);
    case 1: return static_cast<int16_t>(static_cast<int>(rng() % 65536) - 32768);
    case 2: return static_cast<int16_t>(static_cast<int>(rng() % 64) - 32);
    default: return static_cast<int16_t>(rng() % 2 ? 1 : -1);
  }
}

// Every coefficient of every block (coded or not, level [0] of AC blocks included) random, mostly 0.
void fill_random(std::mt19937& rng, gpuec_mb& m, int density_pct) {
  auto fill = [&](int16_t* c, int n) {
    for (int i = 0; i < n; ++i) c[i] = static_cast<int>(rng() % 100) < density_pct ? random_level(rng) : 0;
  };
  auto& c = m.u.coef;
  for (auto& b : c.luma) fill(b, 16);
  for (auto& b : c.chroma_ac) fill(b, 16);
  fill(c.luma_dc, 16);
  for (auto& b : c.chroma_dc) fill(b, 4);
}

TEST(TOTALS_SUITE, EveryKindAndCbpOnRandomLevels) {
  std::mt19937 rng(gpuec_test::test_seed("mb_totals"));
  int verdicts[3] = {};  // -1, 0, 1
  for (int kind : {0, 1, 2, 3, 4, 7, 255})
    for (int cbp = 0; cbp < 256; ++cbp)
      for (int density : {0, 5, 30, 100})
        for (int rep = 0; rep < 4; ++rep) {
          gpuec_mb m;
          std::memset(&m, 0, sizeof m);
          m.kind = static_cast<uint8_t>(kind);
          m.cbp = static_cast<uint8_t>(cbp);
          fill_random(rng, m, density);
          int v = 0;
          if (!same_as_ref(m, &v)) return;
          ++verdicts[v + 1];
        }
  EXPECT_GT(verdicts[0], 0);
  EXPECT_GT(verdicts[1], 0);
  EXPECT_GT(verdicts[2], 0);
}

TEST(TOTALS_SUITE, X264LikeRecords) {
  std::mt19937 rng(gpuec_test::test_seed("mb_totals"));
  for (int i = 0; i < 20000; ++i)
    if (!same_as_ref(cavlc_test::random_mb(rng, i, static_cast<int>(rng() % 100)))) return;
}

// One block slot of a macroblock: where its levels live and which kind/cbp codes it.
struct Slot {
  const char* name;
  int kind, cbp;  // a record that codes the slot
  int first, n;   // levels [first, first + n) of the array are coded
  int16_t* (*levels)(gpuec_mb&, int);
  int count;  // blocks of this slot type
};

// A block with TotalCoeff tc and (up to) t1 trailing ones, whose coded level at position `pos` is
// `edge`: tc distinct positions including pos, the t1 highest of the others +-1 (TrailingOnes counts
// only those above the highest non-+-1 level), the remaining ones random small or edge levels.
void edge_block(std::mt19937& rng, int16_t* c, int first, int n, int pos, int edge, int tc, int t1) {
  int order[16];
  for (int i = 0; i < n; ++i) order[i] = i;
  std::shuffle(order, order + n, rng);
  std::swap(*std::find(order, order + n, pos), order[0]);
  bool others[16] = {};
  for (int k = 1; k < tc; ++k) others[order[k]] = true;
  for (int i = 0; i < 16; ++i) c[i] = 0;
  c[first + pos] = static_cast<int16_t>(edge);
  int ones = 0;
  for (int p = n - 1; p >= 0; --p) {  // highest frequency first
    if (!others[p]) continue;
    int v;
    if (ones < t1) v = 1, ++ones;
    else if (rng() % 4 == 0) v = kEdgeLevels[rng() % std::size(kEdgeLevels)];
    else v = 2 + static_cast<int>(rng() % 6);
    c[first + p] = static_cast<int16_t>(rng() % 2 || v == -32768 ? v : -v);
  }
  if (first == 1 && rng() % 2) c[0] = -32768;  // level [0] of an AC block: not coded
}

TEST(TOTALS_SUITE, EdgeLevelsAtEveryPositionTotalCoeffAndTrailingOnes) {
  std::mt19937 rng(gpuec_test::test_seed("mb_totals"));
  const Slot slots[] = {
      {"luma4x4", GPUEC_MB_NORMAL, 0x0f, 0, 16, [](gpuec_mb& m, int b) { return m.u.coef.luma[b]; }, 16},
      {"luma AC", GPUEC_MB_I16x16, 0x0f, 1, 15, [](gpuec_mb& m, int b) { return m.u.coef.luma[b]; }, 16},
      {"luma DC", GPUEC_MB_I16x16, 0x00, 0, 16, [](gpuec_mb& m, int) { return m.u.coef.luma_dc; }, 1},
      {"chroma DC", GPUEC_MB_NORMAL, 0x10, 0, 4, [](gpuec_mb& m, int b) { return m.u.coef.chroma_dc[b]; }, 2},
      {"chroma AC", GPUEC_MB_NORMAL, 0x20, 1, 15, [](gpuec_mb& m, int b) { return m.u.coef.chroma_ac[b]; }, 8},
  };
  int verdicts[2] = {};
  for (const Slot& s : slots)
    for (int blk = 0; blk < s.count; ++blk)
      for (int pos = 0; pos < s.n; ++pos)
        for (int edge : kEdgeLevels)
          for (int tc = 1; tc <= s.n; ++tc)
            for (int t1 = 0; t1 <= std::min(3, tc - 1); ++t1) {
              gpuec_mb m;
              std::memset(&m, 0, sizeof m);
              if (rng() % 4 == 0) fill_random(rng, m, 10);  // other blocks: mostly empty
              m.kind = static_cast<uint8_t>(s.kind);
              m.cbp = static_cast<uint8_t>(s.cbp);
              edge_block(rng, s.levels(m, blk), s.first, s.n, pos, edge, tc, t1);
              int v = 0;
              if (!same_as_ref(m, &v)) {
                ADD_FAILURE() << s.name << " block " << blk << " position " << pos << " level " << edge
                              << " TotalCoeff " << tc << " trailing ones " << t1;
                return;
              }
              if (v >= 0) ++verdicts[v];
              // The same record with the slot outside the cbp: its levels must not count.
              if (s.kind == GPUEC_MB_NORMAL) {
                m.cbp = static_cast<uint8_t>(s.cbp == 0x0f ? 0x0f & ~(1 << (blk >> 2)) : s.cbp == 0x20 ? 0x10 : 0);
                if (!same_as_ref(m)) return;
              }
            }
  EXPECT_GT(verdicts[0], 0);
  EXPECT_GT(verdicts[1], 0);
}

// The bound is exact: kMaxSafeAbsLevel never overflows, one more does where the level is coded
// unreduced at suffixLength 0 (after three trailing ones) or 1 (after a small level).
TEST(TOTALS_SUITE, BoundIsTight) {
  for (int sign : {1, -1}) {
    const int16_t safe = static_cast<int16_t>(sign * kBound), over = static_cast<int16_t>(sign * (kBound + 1));
    const int16_t after_t1[4][4] = {{safe, 1, 1, -1}, {over, 1, 1, -1}, {safe, 2}, {over, 2}};
    EXPECT_FALSE(cavlc::level_overflow(after_t1[0], 4)) << safe;
    EXPECT_TRUE(cavlc::level_overflow(after_t1[1], 4)) << over;
    EXPECT_FALSE(cavlc::level_overflow(after_t1[2], 4)) << safe;
    EXPECT_TRUE(cavlc::level_overflow(after_t1[3], 4)) << over;
    // Reduced (first level after fewer than 3 trailing ones): one more is still codable.
    const int16_t reduced[4] = {over, 1, 1, 0};
    EXPECT_FALSE(cavlc::level_overflow(reduced, 4)) << over;

    gpuec_mb m;
    std::memset(&m, 0, sizeof m);
    m.kind = GPUEC_MB_NORMAL;
    m.cbp = 0x01;
    std::copy(after_t1[1], after_t1[1] + 4, m.u.coef.luma[3]);
    uint8_t t[GPUEC_TC_COUNT];
    EXPECT_EQ(cavlc::mb_totals(m, t), 1);
    EXPECT_EQ(t[GPUEC_TC_LUMA + 3], 4);
    m.cbp = 0x02;  // the same block outside the cbp
    EXPECT_EQ(cavlc::mb_totals(m, t), 0);
    EXPECT_EQ(t[GPUEC_TC_LUMA + 3], 0);
  }
}

// coef_order other than GPUEC_COEF_SCAN (0) and GPUEC_COEF_RASTER (1) makes a coded record malformed
// (-1, totals untouched); skipped and I_PCM records ignore the field.
TEST(TOTALS_SUITE, CoefOrderBeyondRasterIsMalformed) {
  std::mt19937 rng(gpuec_test::test_seed("mb_totals"));
  int rejected = 0, ignored = 0;
  for (int order = 2; order < 256; ++order)
    for (int rep = 0; rep < 8; ++rep) {
      gpuec_mb m = cavlc_test::random_mb(rng, 0, 30);
      m.coef_order = static_cast<uint8_t>(order);
      uint8_t want[GPUEC_TC_COUNT];
      std::memset(want, kCanary, sizeof want);  // a rejected record leaves the canary
      const bool coded = m.kind == GPUEC_MB_NORMAL || m.kind == GPUEC_MB_I16x16;
      const int r_want = coded ? -1 : cavlc_test::mb_totals_twin(m, want);
      if (!matches(m, r_want, want)) return;
      ++(coded ? rejected : ignored);
    }
  EXPECT_GT(rejected, 0);
  EXPECT_GT(ignored, 0);
}

// Levels outside the coded range never count and never overflow: level [0] of Intra16x16 and chroma
// AC blocks (it lives in the DC arrays).
TEST(TOTALS_SUITE, LevelZeroOfAcBlocksIsIgnored) {
  gpuec_mb m;
  std::memset(&m, 0, sizeof m);
  m.kind = GPUEC_MB_I16x16;
  m.cbp = 0x2f;
  for (auto& b : m.u.coef.luma) b[0] = -32768;
  for (auto& b : m.u.coef.chroma_ac) b[0] = 32767;
  uint8_t t[GPUEC_TC_COUNT];
  EXPECT_EQ(cavlc::mb_totals(m, t), 0);
  for (int i = 0; i < GPUEC_TC_COUNT; ++i) EXPECT_EQ(t[i], 0) << i;
  m.kind = GPUEC_MB_NORMAL;  // now level [0] of the luma blocks is coded
  EXPECT_EQ(cavlc::mb_totals(m, t), 1);
  for (int b = 0; b < 16; ++b) EXPECT_EQ(t[GPUEC_TC_LUMA + b], 1) << b;
  EXPECT_TRUE(same_as_ref(m));
}

}  // namespace
