// tests/gudcanny/frames.h: what the tests of the asynchronous C interface (gudcanny_submit / _receive)
// share: a moving synthetic scene, planes with padding and a bottom-up variant, the synchronous result
// (gudcanny_detect) of a frame, and the comparison of a received frame with it.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "canny/gudcanny.h"
#include "gudcanny_config.h"

namespace gudcanny_test {

// Frame t of a scene: a bright disc moving right, a dark square, a ramp and LCG noise seeded by t and seed.
inline std::vector<uint8_t> scene(int w, int h, int t, uint32_t seed = 1) {
  std::vector<uint8_t> px(size_t(w) * h);
  uint32_t s = seed * 2654435761u + uint32_t(t) * 40503u + 12345u;
  const int cx = w / 4 + t * (w / 16 + 1), cy = h / 2, r = h / 3;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      s = s * 1103515245u + 12345u;
      int v = 30 + x / 2 + int((s >> 16) % 13);
      if ((x - cx) * (x - cx) + (y - cy) * (y - cy) < r * r) v = 190 + int((s >> 16) % 9);
      if (x > 2 * w / 3 && x < 2 * w / 3 + 12 && y > 4 + t && y < 16 + t) v = 10;
      px[size_t(y) * w + x] = uint8_t(v > 255 ? 255 : v);
    }
  return px;
}

// A plane of `px` with row pitch `pitch` (> 0: rows top-down, padding bytes `pad`; < 0: bottom-up, the
// first row last in memory). data() is what gudcanny_submit gets: the first row.
struct Plane {
  std::vector<uint8_t> mem;
  ptrdiff_t pitch = 0;
  int h = 0;
  const uint8_t* data() const { return pitch > 0 ? mem.data() : mem.data() + size_t(h - 1) * size_t(-pitch); }
};

inline Plane make_plane(const std::vector<uint8_t>& px, int w, int h, ptrdiff_t pitch, uint8_t pad = 77) {
  Plane p;
  p.pitch = pitch;
  p.h = h;
  const size_t stride = size_t(pitch > 0 ? pitch : -pitch);
  p.mem.assign(stride * h, pad);
  for (int y = 0; y < h; ++y) {
    const size_t row = pitch > 0 ? size_t(y) : size_t(h - 1 - y);
    std::memcpy(&p.mem[row * stride], &px[size_t(y) * w], size_t(w));
  }
  return p;
}

struct Result {
  std::vector<uint8_t> edges;  // w * h, pitch w
  std::vector<gudcanny_pair> pairs;
};

// gudcanny_detect of px on a fresh context of `backend`: the synchronous answer.
inline Result detect(const gudcanny_config& base, int backend, const std::vector<uint8_t>& px) {
  gudcanny_config cfg = base;
  cfg.backend = backend;
  char err[256] = "";
  gudcanny_ctx* ctx = nullptr;
  Result r;
  EXPECT_EQ(gudcanny_create(&cfg, &ctx, err, sizeof err), GUDCANNY_OK) << err;
  if (!ctx) return r;
  r.edges.assign(px.size(), 0xA5);
  r.pairs.assign(size_t(gudcanny_pair_count(ctx)), gudcanny_pair{-1, -1, -1});
  EXPECT_EQ(gudcanny_detect(ctx, px.data(), cfg.width, r.edges.data(), cfg.width, r.pairs.data(), err, sizeof err),
            GUDCANNY_OK)
      << err;
  gudcanny_destroy(ctx);
  return r;
}

// out (pitch out_pitch, canary `canary` past the width) and pairs (one canary entry past the last) against
// the synchronous result `want`; `picture` given: MARK mode, out must be 255 on edges and picture elsewhere.
inline void expect_same(const Result& want, const std::vector<uint8_t>& out, int w, int h, int out_pitch,
                        const std::vector<gudcanny_pair>& pairs, const std::string& what, uint8_t canary,
                        const std::vector<uint8_t>* picture = nullptr) {
  SCOPED_TRACE(what);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const uint8_t e = want.edges[size_t(y) * w + x];
      const uint8_t expect = picture ? (e ? 255 : (*picture)[size_t(y) * w + x]) : e;
      ASSERT_EQ(out[size_t(y) * out_pitch + x], expect) << "first difference at x " << x << " y " << y;
    }
    for (int x = w; x < out_pitch; ++x)
      ASSERT_EQ(out[size_t(y) * out_pitch + x], canary) << "padding written, row " << y;
  }
  ASSERT_EQ(pairs.size(), want.pairs.size() + 1);
  for (size_t i = 0; i < want.pairs.size(); ++i) {
    EXPECT_EQ(pairs[i].low, want.pairs[i].low) << "strip " << i;
    EXPECT_EQ(pairs[i].high, want.pairs[i].high) << "strip " << i;
    EXPECT_EQ(pairs[i].found, want.pairs[i].found) << "strip " << i;
  }
  EXPECT_EQ(pairs.back().low, -7) << "pair written past the last strip";
}

// Receives the oldest frame into a fresh canary-filled buffer and compares it with `want`.
inline int receive_and_check(gudcanny_ctx* ctx, const Result& want, int w, int h, const std::string& what,
                             std::string* message = nullptr) {
  const int out_pitch = w + 3;
  std::vector<uint8_t> out(size_t(out_pitch) * h, 0x5a);
  std::vector<gudcanny_pair> pairs(want.pairs.size() + 1, gudcanny_pair{-7, -7, -7});
  char err[512] = "x";
  const int rc = gudcanny_receive(ctx, out.data(), out_pitch, GUDCANNY_OUT_MAP, pairs.data(), err, sizeof err);
  if (message) *message = err;
  if (rc >= 0) expect_same(want, out, w, h, out_pitch, pairs, what, 0x5a);
  return rc;
}

// Receives the oldest frame's regions (gudcanny_receive_regions, density `density`, one canary entry past
// the capacity) and compares them and its pairs with gudcanny_roi_regions of the synchronous map `want`.
inline int receive_regions_and_check(gudcanny_ctx* ctx, const Result& want, int w, int h, double density,
                                     const std::string& what, std::string* message = nullptr) {
  SCOPED_TRACE(what + ", regions at density " + std::to_string(density));
  const int capacity = gudcanny_roi_capacity(w, h);
  std::vector<gudcanny_rect> expect(static_cast<size_t>(capacity));
  std::vector<gudcanny_rect> got(static_cast<size_t>(capacity) + 1, gudcanny_rect{-3, -3, -3, -3});
  const int n = gudcanny_roi_regions(want.edges.data(), w, w, h, density, expect.data(), capacity);
  std::vector<gudcanny_pair> pairs(want.pairs.size() + 1, gudcanny_pair{-7, -7, -7});
  char err[512] = "x";
  int count = -1;
  const int rc = gudcanny_receive_regions(ctx, density, got.data(), capacity, &count, pairs.data(), err, sizeof err);
  if (message) *message = err;
  if (rc < 0) return rc;
  EXPECT_EQ(count, n);
  for (int i = 0; i < std::min(n, count); ++i) {
    EXPECT_EQ(got[size_t(i)].left, expect[size_t(i)].left) << "region " << i;
    EXPECT_EQ(got[size_t(i)].top, expect[size_t(i)].top) << "region " << i;
    EXPECT_EQ(got[size_t(i)].right, expect[size_t(i)].right) << "region " << i;
    EXPECT_EQ(got[size_t(i)].bottom, expect[size_t(i)].bottom) << "region " << i;
  }
  EXPECT_EQ(got.back().left, -3) << "region written past the capacity";
  for (size_t i = 0; i < want.pairs.size(); ++i) EXPECT_EQ(pairs[i].high, want.pairs[i].high) << "strip " << i;
  EXPECT_EQ(pairs.back().low, -7) << "pair written past the last strip";
  return rc;
}

}  // namespace gudcanny_test
