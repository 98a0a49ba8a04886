// Frame parts for the stage tests (gpuec/stage.h): random records, skeletons and slices as an encoder
// hands them over, and run_part, which puts a part through the C interface and checks every slice
// against the slice coder (cavlc::encode_slice_ref) plus rbsp_slice_trailing_bits.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "random_mb.h"
#include "cavlc/slice.h"
#include "gpu/device.h"
#include "gpuec/stage.h"
#include "vle/bitwriter.h"

namespace stage_test {

// The stage's tests create the cuda coder at open (gpuec/stage.h, GPUEC_CUDA_WAIT_AT_OPEN), so that every
// frame part of a cuda stage runs on the GPU; StageFrame.CudaCoderFromTheBackgroundTakesOver unsets it.
inline const bool kWaitAtOpen = setenv("GPUEC_CUDA_WAIT_AT_OPEN", "1", 0) == 0;

struct Slice {
  int first_mb, count;
  int64_t start_bit, end_bit;
};

// A frame part as an encoder hands it over: records, a skeleton buffer, slice positions.
struct Part {
  int mb_width, first_mb, n;
  std::vector<gpuec_mb> recs;
  std::vector<uint8_t> skel;
  std::vector<Slice> slices;
};

inline Part make_part(std::mt19937& rng, int mb_width, int first_mb, int n, const std::vector<int>& cuts, int density) {
  Part p{mb_width, first_mb, n, {}, {}, {}};
  p.recs = cavlc_test::random_frame(rng, first_mb + n, density);
  p.recs.erase(p.recs.begin(), p.recs.begin() + first_mb);
  p.skel.assign(static_cast<size_t>(n) * 16 + 4096, 0);
  for (auto& b : p.skel) b = static_cast<uint8_t>(rng());
  int64_t bit = 8 * static_cast<int64_t>(rng() % 64);  // slices do not start at 0 in the encoder's buffer
  std::vector<int> bounds = cuts;
  bounds.insert(bounds.begin(), 0);
  bounds.push_back(n);
  for (size_t k = 0; k + 1 < bounds.size(); ++k) {
    Slice s{first_mb + bounds[k], bounds[k + 1] - bounds[k], bit, 0};
    int64_t pos = bit + 8 + static_cast<int64_t>(rng() % 40);  // slice header
    for (int i = bounds[k]; i < bounds[k + 1]; ++i) {
      gpuec_mb& m = p.recs[static_cast<size_t>(i)];
      if (m.kind == GPUEC_MB_SKIP) continue;
      pos += static_cast<int64_t>(rng() % 30);  // mb_type, prediction, cbp, qp delta
      m.skel_bit = pos;
    }
    s.end_bit = pos + static_cast<int64_t>(rng() % 20);
    p.slices.push_back(s);
    bit = (s.end_bit + 8 + 7) & ~int64_t{7};  // trailing bits, next NAL
  }
  if (static_cast<size_t>(bit / 8 + 16) > p.skel.size()) p.skel.resize(static_cast<size_t>(bit / 8 + 16));
  return p;
}

// The payload the stage must return for slice s: the slice coder's bits, rbsp_stop_one_bit, zero bits.
inline std::vector<uint8_t> expected_payload(const Part& p, const Slice& s, int64_t* rbsp_bits) {
  std::vector<uint8_t> out(static_cast<size_t>(s.end_bit - s.start_bit) / 8 + 64 +
                           static_cast<size_t>(s.count) * cavlc::kMaxMbResidualBits / 8);
  std::vector<cavlc::MbTotals> totals(static_cast<size_t>(s.first_mb + s.count));
  vle::BitWriter bw(out.data(), out.size());
  const cavlc::SliceLayout layout{p.mb_width, s.first_mb, s.start_bit, s.end_bit};
  EXPECT_EQ(cavlc::encode_slice_ref(p.recs.data() + (s.first_mb - p.first_mb), static_cast<size_t>(s.count), layout,
                                    p.skel.data(), totals.data(), bw),
            0);
  *rbsp_bits = static_cast<int64_t>(bw.bits());
  bw.put(1, 1);
  bw.align_zero();
  out.resize(bw.bits() / 8);
  bw.flush();
  return out;
}

// Before a coded record is committed (run_part with probe): the slot first holds a copy with a level
// that overflows, which the commit must send back (1) without keeping anything, then a malformed copy,
// which it must refuse. Then the record itself: its totals must be cavlc::mb_totals's.
// How the records are committed: with the encoder's buffer (gpuec_mb_commit_bits, as the patched x264
// does: the cpu backend then writes the payload at commit), or without (gpuec_mb_commit).
enum class Commit { kWithBuffer, kWithoutBuffer };

inline int commit(gpuec_stage* st, uint8_t totals[GPUEC_TC_COUNT], const Part& p, Commit how) {
  return how == Commit::kWithBuffer ? gpuec_mb_commit_bits(st, totals, p.skel.data()) : gpuec_mb_commit(st, totals);
}

inline void probe_commit(gpuec_stage* st, const gpuec_mb& m, const std::string& what, const Part& p, Commit how) {
  uint8_t totals[GPUEC_TC_COUNT], want[GPUEC_TC_COUNT];
  gpuec_mb* slot = gpuec_mb_next(st);
  *slot = m;
  if (m.kind == GPUEC_MB_PCM) {
    slot->kind = GPUEC_MB_NORMAL;
    slot->cbp = 0;
    std::memset(&slot->u, 0, sizeof slot->u);
  }
  slot->cbp |= slot->kind == GPUEC_MB_I16x16 ? 0x0F : 0x01;
  slot->u.coef.luma[0][slot->kind == GPUEC_MB_I16x16 ? 1 : 0] = -32768 + 1;  // overflows at any suffixLength
  EXPECT_EQ(cavlc::mb_totals(*slot, want), 1) << what;
  EXPECT_EQ(commit(st, totals, p, how), 1) << what << " mb " << m.mb_addr << ": an overflow not sent back";
  slot = gpuec_mb_next(st);
  *slot = m;
  slot->cbp = 0x30 | 0x40;  // cbp chroma 3: malformed
  slot->kind = GPUEC_MB_NORMAL;
  EXPECT_EQ(commit(st, totals, p, how), GPUEC_EINVAL) << what << " mb " << m.mb_addr;
  *gpuec_mb_next(st) = m;
  ASSERT_EQ(commit(st, totals, p, how), GPUEC_OK) << what << " mb " << m.mb_addr;
  ASSERT_EQ(cavlc::mb_totals(m, want), 0) << what;
  EXPECT_TRUE(std::equal(totals, totals + GPUEC_TC_COUNT, want)) << what << " mb " << m.mb_addr << ": totals";
}

// Hands the part to the stage and checks every slice it returns against the slice coder on `reference`
// (default: p itself; a scan-order copy when p's records are in raster order). probe: every coded record
// goes through probe_commit. how: see Commit.
inline void run_part(gpuec_stage* st, const Part& p, const std::string& what, const Part* reference = nullptr,
                     bool probe = false, Commit how = Commit::kWithBuffer) {
  const Part& ref = reference ? *reference : p;
  for (size_t k = 0; k < p.slices.size(); ++k) {
    const Slice& s = p.slices[k];
    gpuec_slice_begin(st, s.first_mb, s.start_bit);
    for (int i = 0; i < s.count; ++i) {
      const gpuec_mb& m = p.recs[static_cast<size_t>(s.first_mb - p.first_mb + i)];
      if (m.kind == GPUEC_MB_SKIP) {
        ASSERT_EQ(gpuec_mb_skip(st, m.mb_addr), GPUEC_OK) << what;
        continue;
      }
      if (probe) {
        probe_commit(st, m, what, p, how);
        if (::testing::Test::HasFatalFailure()) return;
        continue;
      }
      *gpuec_mb_next(st) = m;
      uint8_t totals[GPUEC_TC_COUNT];
      ASSERT_EQ(commit(st, totals, p, how), GPUEC_OK) << what << " mb " << m.mb_addr;
    }
    ASSERT_EQ(gpuec_slice_defer(st, p.skel.data(), s.end_bit, 100 + static_cast<int>(k)), static_cast<int>(k)) << what;
  }
  ASSERT_EQ(gpuec_frame_submit(st), GPUEC_OK) << what;
  ASSERT_EQ(gpuec_frame_complete(st), static_cast<int>(p.slices.size())) << what;
  for (size_t k = 0; k < p.slices.size(); ++k) {
    const Slice& s = p.slices[k];
    int64_t rbsp_bits = 0;
    const std::vector<uint8_t> want = expected_payload(ref, s, &rbsp_bits);
    int tag = -1;
    const uint8_t* payload = nullptr;
    int64_t bytes = 0, added = 0;
    ASSERT_EQ(gpuec_frame_slice(st, static_cast<int>(k), &tag, &payload, &bytes, &added), GPUEC_OK) << what;
    EXPECT_EQ(tag, 100 + static_cast<int>(k)) << what;
    EXPECT_EQ(added, rbsp_bits - (s.end_bit - s.start_bit)) << what << " slice " << k;
    ASSERT_EQ(bytes, static_cast<int64_t>(want.size())) << what << " slice " << k;
    const std::vector<uint8_t> got(payload, payload + bytes);
    EXPECT_TRUE(got == want) << what << " slice " << k << " (first_mb " << s.first_mb << ", " << s.count << " MBs)";
  }
  EXPECT_EQ(gpuec_frame_slice(st, static_cast<int>(p.slices.size()), nullptr, nullptr, nullptr, nullptr), GPUEC_EINVAL);
}

// The backend the test program is about: cpu (stage_frame_test), or cuda (stage_frame_cuda_test, built
// with STAGE_TEST_CUDA; the tests then skip without a GPU).
inline std::vector<int> backends() {
#ifdef STAGE_TEST_CUDA
  return {GPUEC_BACKEND_CUDA};
#else
  return {GPUEC_BACKEND_CPU};
#endif
}

// Slice cuts inside a part of n macroblocks of a frame mb_width wide.
inline std::vector<std::vector<int>> layouts(std::mt19937& rng, int mb_width, int n) {
  std::vector<std::vector<int>> v{{}};
  if (n >= 2) v.push_back({n / 2});
  if (n >= 7) {
    std::vector<int> c;
    for (int k = 1; k < 7; ++k) c.push_back(n * k / 7);
    v.push_back(c);
  }
  std::vector<int> rows;
  for (int a = mb_width; a < n; a += mb_width) rows.push_back(a);
  if (!rows.empty()) v.push_back(rows);
  std::vector<int> random_cuts;
  for (int a = 1; a < n; ++a)
    if (rng() % 5 == 0) random_cuts.push_back(a);
  v.push_back(random_cuts);
  if (n <= 400) {
    std::vector<int> each;
    for (int a = 1; a < n; ++a) each.push_back(a);
    v.push_back(each);
  }
  return v;
}

}  // namespace stage_test
