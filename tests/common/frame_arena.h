// Test input for the frame assembly (cavlc/assemble_frame.h): a frame's records, random slice
// skeletons and insertion points, everything in one arena, and the expected output built slice by slice
// with assemble_slice_ref (slice_assembly.h). Shared by the CPU and the CUDA tests of the assembly.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "slice_assembly.h"
#include "cavlc/assemble_frame.h"
#include "cavlc/frame.h"
#include "cavlc/mb.h"
#include "vle/bitwriter.h"

namespace cavlc_test {

// Slices as [first_mb, first_mb + count) ranges, in order, disjoint; macroblocks in no range are gaps.
using Ranges = std::vector<std::pair<int, int>>;

enum class SliceLayout { kOne, kTwo, kSeven, kPerRow, kPerMb, kRandomCuts, kRandomGaps };
constexpr SliceLayout kSliceLayouts[] = {SliceLayout::kOne,   SliceLayout::kTwo,        SliceLayout::kSeven,
                                         SliceLayout::kPerRow, SliceLayout::kPerMb,     SliceLayout::kRandomCuts,
                                         SliceLayout::kRandomGaps};

inline const char* slice_layout_name(SliceLayout l) {
  switch (l) {
    case SliceLayout::kOne: return "1 slice";
    case SliceLayout::kTwo: return "2 slices";
    case SliceLayout::kSeven: return "7 slices";
    case SliceLayout::kPerRow: return "slice per row";
    case SliceLayout::kPerMb: return "slice per MB";
    case SliceLayout::kRandomCuts: return "random cuts";
    case SliceLayout::kRandomGaps: return "random slices with gaps";
  }
  return "?";
}

inline Ranges slice_ranges(SliceLayout l, int w, int h, std::mt19937& rng) {
  const int n = w * h;
  Ranges r;
  auto split = [&](int k) {  // k slices of equal macroblock counts (fewer when n < k)
    for (int s = 0; s < k; ++s) {
      const int a = static_cast<int>(int64_t{n} * s / k), b = static_cast<int>(int64_t{n} * (s + 1) / k);
      if (b > a) r.push_back({a, b - a});
    }
  };
  switch (l) {
    case SliceLayout::kOne: r.push_back({0, n}); break;
    case SliceLayout::kTwo: split(2); break;
    case SliceLayout::kSeven: split(7); break;
    case SliceLayout::kPerRow: for (int y = 0; y < h; ++y) r.push_back({y * w, w}); break;
    case SliceLayout::kPerMb: for (int a = 0; a < n; ++a) r.push_back({a, 1}); break;
    case SliceLayout::kRandomCuts: {
      const int every = 1 + static_cast<int>(rng() % 40);
      int first = 0;
      for (int a = 1; a <= n; ++a)
        if (a == n || rng() % every == 0) {
          r.push_back({first, a - first});
          first = a;
        }
      break;
    }
    case SliceLayout::kRandomGaps: {
      int a = static_cast<int>(rng() % 3);
      while (a < n) {
        const int count = std::min(n - a, 1 + static_cast<int>(rng() % 30));
        r.push_back({a, count});
        a += count + static_cast<int>(rng() % 4 == 0 ? rng() % 5 : 0);
      }
      if (r.empty()) r.push_back({n - 1, 1});
      break;
    }
  }
  return r;
}

// Makes about pct percent of the coded macroblocks I_PCM (random samples).
inline void make_pcm(std::vector<gpuec_mb>& recs, std::mt19937& rng, int pct) {
  for (gpuec_mb& m : recs) {
    if (m.kind == GPUEC_MB_SKIP || static_cast<int>(rng() % 100) >= pct) continue;
    m.kind = GPUEC_MB_PCM;
    m.cbp = 0x2F;
    for (auto& s : m.u.pcm) s = static_cast<uint8_t>(rng());
  }
}

// Makes every macroblock of about pct percent of the slices skipped.
inline void make_skip_slices(std::vector<gpuec_mb>& recs, const Ranges& ranges, std::mt19937& rng, int pct) {
  for (const auto& r : ranges) {
    if (static_cast<int>(rng() % 100) >= pct) continue;
    for (int a = r.first; a < r.first + r.second; ++a) {
      const int addr = recs[a].mb_addr;
      std::memset(&recs[a], 0, sizeof(gpuec_mb));
      recs[a].mb_addr = addr;
      recs[a].kind = GPUEC_MB_SKIP;
    }
  }
}

// Makes about pct percent of the macroblocks skipped (long runs of skipped macroblocks for pct near 100).
inline void make_skips(std::vector<gpuec_mb>& recs, std::mt19937& rng, int pct) {
  for (gpuec_mb& m : recs) {
    if (static_cast<int>(rng() % 100) >= pct) continue;
    const int addr = m.mb_addr;
    std::memset(&m, 0, sizeof(gpuec_mb));
    m.mb_addr = addr;
    m.kind = GPUEC_MB_SKIP;
  }
}

// One frame part, ready for code_frame_* and assemble_frame_*. Arena layout (bytes): the slice skeletons
// (each at a random byte offset), the records (256-byte aligned: code_frame_cuda wants 32), the slots
// (256-byte aligned), 4 zero bytes; the size is a multiple of 4.
struct FrameArena {
  int w = 0, h = 0, n_mbs = 0;
  std::vector<gpuec_mb> recs;  // skel_bit relative to the slice's own skeleton (assemble_slice_ref)
  std::vector<int32_t> slice_id;
  Ranges ranges;
  std::vector<std::vector<uint8_t>> skel;  // per slice
  std::vector<cavlc_test::SliceSpan> spans;     // per slice
  std::vector<size_t> skel_off;            // per slice: arena byte of skel[k][0]
  std::vector<cavlc::MbLead> lead;
  std::vector<cavlc::FrameSlice> slices;
  std::vector<uint16_t> slot_len;
  std::vector<uint8_t> arena;
  size_t records_off = 0, slots_off = 0, zero_off = 0;

  size_t slot_bytes() const { return static_cast<size_t>(n_mbs) * cavlc::kMbSlots * cavlc::kSlotBytes; }

  // Host view.
  cavlc::FrameAssembly view() const { return view(arena.data(), slot_len.data(), lead.data(), slices.data()); }
  // The same frame with its arena, slot lengths, leads and slices at other addresses (the CUDA tests' device
  // copies).
  cavlc::FrameAssembly view(const uint8_t* arena_at, const uint16_t* slot_len_at, const cavlc::MbLead* lead_at,
                            const cavlc::FrameSlice* slices_at) const {
    cavlc::FrameAssembly in{};
    in.arena = arena_at;
    in.records_bit = records_off * 8;
    in.slots_bit = slots_off * 8;
    in.zero_bit = zero_off * 8;
    in.records = reinterpret_cast<const gpuec_mb*>(arena_at + records_off);
    in.slot_len = slot_len_at;
    in.lead = lead_at;
    in.slices = slices_at;
    in.n_mbs = n_mbs;
    in.n_slices = static_cast<int32_t>(slices.size());
    return in;
  }

  // code_frame_ref into the arena's slots. Returns its result.
  int code_ref() {
    return cavlc::code_frame_ref(reinterpret_cast<const gpuec_mb*>(arena.data() + records_off), w, h,
                                 slice_id.data(), arena.data() + slots_off, slot_len.data());
  }

  // assemble_frame_bound_bits for this frame part.
  uint64_t bound_bits() const {
    uint64_t skeleton = 0, coded = 0;
    for (const cavlc_test::SliceSpan& s : spans) {
      skeleton += static_cast<uint64_t>(s.skel_end - s.skel_start);
      for (int a = s.first_mb; a <= s.last_mb; ++a) coded += recs[a].kind != GPUEC_MB_SKIP;
    }
    return cavlc::assemble_frame_bound_bits(skeleton, coded, spans.size());
  }

  // The frame output as assemble_slice_ref gives it slice by slice: each slice's bits, zero bits to the next
  // multiple of 32: the packed bytes in *bytes, out_bit and bits per slice in *want. False when
  // assemble_slice_ref fails.
  bool expected(std::vector<uint8_t>* bytes, std::vector<cavlc::SliceResult>* want) const {
    const uint64_t total_cap = bound_bits();
    std::vector<uint8_t> frame(static_cast<size_t>(vle::packed_bytes(total_cap)) + 8, 0);
    std::vector<uint8_t> one(static_cast<size_t>(total_cap / 8) + 64);
    vle::BitWriter bw(frame.data(), frame.size());
    want->clear();
    for (size_t k = 0; k < spans.size(); ++k) {
      const int64_t bits = cavlc_test::assemble_slice_ref(recs.data(), arena.data() + slots_off, slot_len.data(),
                                                     spans[k], skel[k].data(), one.data(), one.size());
      if (bits < 0) return false;
      want->push_back({bw.bits(), static_cast<uint64_t>(bits)});
      bw.copy_bits(one.data(), 0, static_cast<uint64_t>(bits));
      bw.put(0, static_cast<int>((32 - (bw.bits() & 31)) & 31));
    }
    const uint64_t total = bw.bits();
    bw.flush();
    frame.resize(static_cast<size_t>(vle::packed_bytes(total)));
    *bytes = std::move(frame);
    return true;
  }
};

// Lays out the arena of a FrameArena whose w, h, n_mbs, recs (skel_bit relative to the slice's skeleton),
// slice_id, ranges, skel and spans are set, and derives the leads and tails from the insertion points.
// Skipped macroblocks get garbage leads (the assembly must ignore them).
inline void build_arena(FrameArena& f, std::mt19937& rng) {
  size_t at = 0;
  f.skel_off.clear();
  for (const auto& s : f.skel) {
    at += rng() % 5;
    f.skel_off.push_back(at);
    at += s.size();
  }
  auto align = [](size_t x, size_t a) { return (x + a - 1) / a * a; };
  f.records_off = align(at, 256);
  f.slots_off = align(f.records_off + static_cast<size_t>(f.n_mbs) * sizeof(gpuec_mb), 256);
  f.zero_off = f.slots_off + f.slot_bytes();
  f.arena.assign(align(f.zero_off + 4, 4), 0);
  for (size_t i = 0; i < f.zero_off; ++i) f.arena[i] = static_cast<uint8_t>(rng());
  for (size_t k = 0; k < f.skel.size(); ++k) std::copy(f.skel[k].begin(), f.skel[k].end(), f.arena.begin() + f.skel_off[k]);
  std::memcpy(f.arena.data() + f.records_off, f.recs.data(), f.recs.size() * sizeof(gpuec_mb));
  f.slot_len.assign(static_cast<size_t>(f.n_mbs) * cavlc::kMbSlots, 0);
  f.lead.resize(static_cast<size_t>(f.n_mbs));
  for (auto& l : f.lead) l = {static_cast<uint64_t>(rng()), static_cast<uint32_t>(rng() % 1000), 0};
  f.slices.clear();
  for (size_t k = 0; k < f.spans.size(); ++k) {
    const uint64_t base = f.skel_off[k] * 8;
    int64_t prev = f.spans[k].skel_start;
    for (int a = f.spans[k].first_mb; a <= f.spans[k].last_mb; ++a) {
      if (f.recs[a].kind == GPUEC_MB_SKIP) continue;
      f.lead[a] = {base + static_cast<uint64_t>(prev), static_cast<uint32_t>(f.recs[a].skel_bit - prev), 0};
      prev = f.recs[a].skel_bit;
    }
    cavlc::FrameSlice s{};
    s.first_mb = f.spans[k].first_mb;
    s.mb_count = f.spans[k].last_mb - f.spans[k].first_mb + 1;
    s.tail_src_bit = base + static_cast<uint64_t>(prev);
    s.tail_len = static_cast<uint32_t>(f.spans[k].skel_end - prev);
    f.slices.push_back(s);
  }
}

// A frame part with random skeletons for the records and slice ranges. empty_pct: percent of leads and
// tails that are empty; leads are otherwise 1..23 bits (a slice's first lead also carries a header of up
// to 99 bits), tails up to 29 bits.
inline FrameArena make_frame_arena(std::mt19937& rng, int w, int h, std::vector<gpuec_mb> recs, const Ranges& ranges,
                                   int empty_pct) {
  FrameArena f;
  f.w = w;
  f.h = h;
  f.n_mbs = w * h;
  f.recs = std::move(recs);
  f.ranges = ranges;
  f.slice_id.assign(static_cast<size_t>(f.n_mbs), -1);
  auto empty = [&] { return static_cast<int>(rng() % 100) < empty_pct; };
  for (size_t k = 0; k < ranges.size(); ++k) {
    const int first = ranges[k].first, last = first + ranges[k].second - 1;
    const int64_t start = 8 * static_cast<int64_t>(rng() % 64);
    int64_t pos = start + (empty() ? 0 : static_cast<int64_t>(rng() % 100));
    for (int a = first; a <= last; ++a) {
      f.slice_id[a] = static_cast<int32_t>(k);
      if (f.recs[a].kind == GPUEC_MB_SKIP) {
        f.recs[a].skel_bit = static_cast<int64_t>(rng());  // unused
        continue;
      }
      if (a != first) pos += empty() ? 0 : 1 + static_cast<int64_t>(rng() % 23);
      f.recs[a].skel_bit = pos;
    }
    const int64_t end = pos + (empty() ? 0 : static_cast<int64_t>(rng() % 30));
    std::vector<uint8_t> s(static_cast<size_t>((end + 7) / 8) + 1);
    for (auto& b : s) b = static_cast<uint8_t>(rng());
    f.skel.push_back(std::move(s));
    f.spans.push_back({first, last, start, end});
  }
  build_arena(f, rng);
  return f;
}

// Index of the first differing bit of two packed streams of `bits` bits (bits if none).
inline uint64_t first_bit_difference(const uint8_t* a, const uint8_t* b, uint64_t bits) {
  for (uint64_t byte = 0; byte * 8 < bits; ++byte) {
    if (a[byte] == b[byte]) continue;
    for (uint64_t i = byte * 8; i < bits; ++i)
      if (((a[i >> 3] ^ b[i >> 3]) >> (7 - (i & 7))) & 1) return i;
    break;
  }
  return bits;
}

}  // namespace cavlc_test
