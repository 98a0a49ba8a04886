// The cavlc pairs of gpuec-bitexact: the block coder (code_frame_ref / code_frame_cuda), the frame assembly
// (assemble_frame_ref / assemble_frame_cuda) and the frame coder (code_frame_ref + assemble_frame_ref /
// encode_frame_cuda, both variants). Frames: tests/cavlc/random_mb.h records (x264-like statistics, extreme and
// dense blocks, I_PCM, skipped runs, scan and raster coefficient order), tests/cavlc/frame_arena.h skeletons and
// slice layouts; sizes around the kernel's 8-macroblock regions and the assembly's 256-macroblock scan tiles.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "canary.h"
#include "cavlc/assemble_frame.h"
#include "cavlc/frame.h"
#include "cavlc/frame_coder.h"
#include "cavlc/mb.h"
#include "cavlc/slice.h"
#include "frame_arena.h"
#include "harness.h"
#include "random_mb.h"
#include "raster.h"
#include "vle/bitwriter.h"

#if defined(GPUEC_HAVE_CUDA)
#include "cavlc/assemble_frame_cuda.h"
#include "cavlc/encode_frame_cuda.h"
#include "cavlc/frame_cuda.h"
#include "device_buffer.h"
#endif

namespace bitexact {
namespace {

constexpr uint16_t kLenCanary = gpuec_test::canary<uint16_t>();
constexpr size_t kMargin = 64;

struct Size {
  int w, h;
};
// 1 macroblock; regions of 8 (7, 8, 9); QCIF-like; scan tiles of 256 (255, 256, 257); 720p and 1080p;
// 32 tiles of look-back (8192 +- 1).
constexpr Size kSizes[] = {{1, 1},  {1, 9},   {9, 1},  {7, 1},   {8, 1},    {7, 3},    {11, 9},   {22, 18},
                       {255, 1}, {256, 1}, {257, 1}, {80, 45}, {120, 68}, {97, 89}, {128, 64}, {8193, 1}};
// The largest of them (the shared workspace of the GPU frame check is sized for it).
constexpr int max_mbs() {
  int m = 0;
  for (const Size& z : kSizes) m = z.w * z.h > m ? z.w * z.h : m;
  return m;
}
constexpr int kMaxMbs = max_mbs();

enum class Mix { kPlain, kPcm, kSkipSlices, kSkipRuns, kEmptyLeads, kExtreme, kDense, kMixedOrder, kRaster };
constexpr Kind<Mix> kMixes[] = {
    {Mix::kPlain, "x264-like"}, {Mix::kPcm, "many I_PCM"}, {Mix::kSkipSlices, "all-skip slices"},
    {Mix::kSkipRuns, "long skip runs"}, {Mix::kEmptyLeads, "empty leads and tails"},
    {Mix::kExtreme, "extreme blocks"}, {Mix::kDense, "dense blocks (nC 8..16)"},
    {Mix::kMixedOrder, "mixed scan / raster order"}, {Mix::kRaster, "all raster order"},
};
constexpr int kMixCount = int(sizeof kMixes / sizeof kMixes[0]);

// The frame of a case. filler_gaps: macroblocks outside every slice are skipped (encode_frame_cuda's filler
// macroblocks; its contract leaves coded ones there unspecified).
cavlc_test::FrameArena make_frame(std::mt19937& rng, Size s, cavlc_test::SliceLayout l, Mix mix, bool filler_gaps) {
  const int n = s.w * s.h;
  std::vector<gpuec_mb> recs;
  if (mix == Mix::kExtreme) {
    for (int a = 0; a < n; ++a) recs.push_back(cavlc_test::extreme_mb(rng, a));
  } else if (mix == Mix::kDense) {
    for (int a = 0; a < n; ++a) recs.push_back(cavlc_test::dense_mb(rng, a));
  } else {
    recs = cavlc_test::random_frame(rng, n, 1 + static_cast<int>(rng() % 50));
  }
  const cavlc_test::Ranges ranges = cavlc_test::slice_ranges(l, s.w, s.h, rng);
  int empty_pct = 10;
  switch (mix) {
    case Mix::kPcm: cavlc_test::make_pcm(recs, rng, 40); break;
    case Mix::kSkipSlices: cavlc_test::make_skip_slices(recs, ranges, rng, 40); break;
    case Mix::kSkipRuns: cavlc_test::make_skips(recs, rng, 97); break;
    case Mix::kEmptyLeads: empty_pct = 100; cavlc_test::make_pcm(recs, rng, 10); break;
    case Mix::kMixedOrder: recs = cavlc_test::mixed_orders(recs, rng, 50); break;
    case Mix::kRaster: recs = cavlc_test::mixed_orders(recs, rng, 100); break;
    default: break;
  }
  if (filler_gaps) {
    std::vector<bool> in_slice(static_cast<size_t>(n), false);
    for (const auto& r : ranges)
      for (int a = r.first; a < r.first + r.second; ++a) in_slice[a] = true;
    for (int a = 0; a < n; ++a)
      if (!in_slice[a]) {
        std::memset(&recs[a], 0, sizeof(gpuec_mb));
        recs[a].mb_addr = a;
        recs[a].kind = GPUEC_MB_SKIP;
      }
  }
  return cavlc_test::make_frame_arena(rng, s.w, s.h, std::move(recs), ranges, empty_pct);
}

// Every size with every slice layout, the record mix rotating; then the harder mixes on CIF with every layout.
// random_ids: also frames with a random slice id per macroblock (code_frame_* only).
template <class Fn>
void for_each_frame(Context& ctx, bool filler_gaps, bool random_ids, Fn fn) {
  int k = 0;
  auto one = [&](Size s, cavlc_test::SliceLayout l, Mix m, bool ids) {
    ctx.begin_case(std::to_string(s.w) + "x" + std::to_string(s.h) + " MBs, " +
                   (ids ? std::string("random slice id per MB") : cavlc_test::slice_layout_name(l)) + ", " +
                   kind_name(kMixes, m));
    cavlc_test::FrameArena f = make_frame(ctx.rng, s, l, m, filler_gaps);
    if (ids)
      for (auto& id : f.slice_id) id = static_cast<int32_t>(ctx.rng() % 3);
    fn(f);
  };
  for (const Size& s : kSizes)
    for (cavlc_test::SliceLayout l : cavlc_test::kSliceLayouts) {
      if (s.w * s.h > 4000 && l != cavlc_test::SliceLayout::kOne && l != cavlc_test::SliceLayout::kRandomGaps &&
          l != cavlc_test::SliceLayout::kPerMb)
        continue;  // the big frames: three layouts
      one(s, l, kMixes[k++ % kMixCount].value, false);
      if (!ctx.ok()) return;
    }
  for (const Kind<Mix>& m : kMixes)
    for (cavlc_test::SliceLayout l : cavlc_test::kSliceLayouts) {
      one({22, 18}, l, m.value, false);
      if (!ctx.ok()) return;
    }
  if (!random_ids) return;
  for (const Kind<Mix>& m : kMixes) {
    one({22, 18}, cavlc_test::SliceLayout::kOne, m.value, true);
    if (!ctx.ok()) return;
  }
}

std::string mb_where(const cavlc_test::FrameArena& f, int a) {
  const gpuec_mb& m = f.recs[a];
  return "mb " + std::to_string(a) + " (x " + std::to_string(a % f.w) + ", y " + std::to_string(a / f.w) + ", kind " +
         std::to_string(m.kind) + ", cbp 0x" + [&] {
           char s[8];
           std::snprintf(s, sizeof s, "%02x", m.cbp);
           return std::string(s);
         }() + ", coef_order " + std::to_string(m.coef_order) + ", slice id " + std::to_string(f.slice_id[a]) + ")";
}

// ---------------------------------------------------------------- block coder

struct Slots {
  Bytes bits;
  std::vector<uint16_t> len;
};

bool code_ref(Context& ctx, const cavlc_test::FrameArena& f, Slots* s) {
  const size_t nslots = static_cast<size_t>(f.n_mbs) * cavlc::kMbSlots;
  s->bits.assign(nslots * cavlc::kSlotBytes, kCanary);
  s->len.assign(nslots, kLenCanary);
  if (cavlc::code_frame_ref(f.recs.data(), f.w, f.h, f.slice_id.data(), s->bits.data(), s->len.data()) != 0)
    return ctx.fail("code_frame_ref refused the frame");
  return true;
}

// Every slot's bytes past its written words keep the canary.
bool slot_canaries(Context& ctx, const char* twin, const Slots& s) {
  for (size_t i = 0; i < s.len.size(); ++i) {
    const size_t used = (s.len[i] + 31u) / 32u * 4u;
    if (used > cavlc::kSlotBytes) return ctx.fail(std::string(twin) + ": slot " + std::to_string(i) + " length " +
                                                  std::to_string(s.len[i]) + " exceeds the slot");
    if (!ctx.canary_intact(twin, s.bits.data() + i * cavlc::kSlotBytes, used, cavlc::kSlotBytes)) return false;
  }
  return true;
}

// Compares two twins' slots: the first differing slot named with its macroblock, then the whole arrays.
[[maybe_unused]] bool same_slots(Context& ctx, const cavlc_test::FrameArena& f, const Slots& want, const Slots& got) {
  for (size_t i = 0; i < want.len.size(); ++i) {
    const uint8_t* a = want.bits.data() + i * cavlc::kSlotBytes;
    const uint8_t* b = got.bits.data() + i * cavlc::kSlotBytes;
    if (want.len[i] == got.len[i] && std::memcmp(a, b, cavlc::kSlotBytes) == 0) continue;
    const std::string where =
        mb_where(f, static_cast<int>(i / cavlc::kMbSlots)) + " slot " + std::to_string(i % cavlc::kMbSlots);
    if (!ctx.same_value((where + " length").c_str(), want.len[i], got.len[i])) return false;
    return ctx.same_bytes((where + " bytes").c_str(), a, b, cavlc::kSlotBytes);
  }
  return ctx.same_bytes("slot lengths", want.len.data(), got.len.data(), want.len.size() * 2) &&
         ctx.same_bytes("slot bytes", want.bits.data(), got.bits.data(), want.bits.size());
}

// The oracle: for every slice (the macroblocks of one id, in address order) the concatenated slots, with
// I_PCM alignment and samples, equal what the slice coder writes over an empty skeleton.
void block_oracle(Context& ctx) {
  for_each_frame(ctx, false, true, [&](const cavlc_test::FrameArena& f) {
    Slots s;
    if (!code_ref(ctx, f, &s) || !slot_canaries(ctx, "code_frame_ref slot", s)) return;
    std::map<int32_t, std::vector<int>> slices;
    for (int a = 0; a < f.n_mbs; ++a) slices[f.slice_id[a]].push_back(a);
    std::vector<cavlc::MbTotals> totals(static_cast<size_t>(f.n_mbs));
    for (const auto& [id, mbs] : slices) {
      std::vector<gpuec_mb> recs;
      for (int a : mbs) {
        recs.push_back(f.recs[a]);
        recs.back().skel_bit = 0;
      }
      const size_t cap = mbs.size() * (cavlc::kMaxMbResidualBits / 8 + 400) + 64;
      Bytes want(cap), got(cap, 0);
      vle::BitWriter bw(want.data(), want.size());
      cavlc::SliceLayout layout{f.w, mbs[0], 0, 0};
      layout.slice_of_mb = f.slice_id.data();
      layout.slice_id = id;
      layout.n_mbs = f.n_mbs;
      const uint8_t skel[8] = {};
      if (cavlc::encode_slice_ref(recs.data(), recs.size(), layout, skel, totals.data(), bw) != 0) {
        ctx.fail("encode_slice_ref refused slice id " + std::to_string(id));
        return;
      }
      const uint64_t want_bits = bw.bits();
      bw.flush();
      vle::BitWriter gw(got.data(), got.size());
      for (int a : mbs) {
        if (f.recs[a].kind == GPUEC_MB_PCM) {
          gw.align_zero();
          for (uint8_t v : f.recs[a].u.pcm) gw.put(v, 8);
          continue;
        }
        for (int k = 0; k < cavlc::kMbSlots; ++k) {
          const size_t i = static_cast<size_t>(a) * cavlc::kMbSlots + k;
          gw.copy_bits(s.bits.data() + i * cavlc::kSlotBytes, 0, s.len[i]);
        }
      }
      const uint64_t got_bits = gw.bits();
      gw.flush();
      const std::string what = "slice id " + std::to_string(id) + " (" + std::to_string(mbs.size()) +
                               " MBs from " + std::to_string(mbs[0]) + "): slots vs encode_slice_ref";
      if (!ctx.same_value((what + ", bits").c_str(), want_bits, got_bits)) return;
      if (!ctx.same_bits(what.c_str(), want.data(), got.data(), want_bits)) return;
    }
  });
}

// ---------------------------------------------------------------- frame assembly

bool copy_bit_range(Bytes& out, uint64_t& pos, const uint8_t* src, uint64_t src_bit, uint64_t n) {
  for (uint64_t j = 0; j < n; ++j, ++pos) {
    if (pos >= out.size() * 8) return false;
    const uint64_t b = src_bit + j;
    if ((src[b >> 3] >> (7 - (b & 7))) & 1) out[pos >> 3] |= static_cast<uint8_t>(0x80u >> (pos & 7));
  }
  return true;
}

// The oracle: cavlc/assemble_frame.h read literally, one bit at a time from the arena.
uint64_t plain_assemble(const cavlc_test::FrameArena& f, Bytes* out, std::vector<cavlc::SliceResult>* res) {
  out->assign(static_cast<size_t>(vle::packed_bytes(f.bound_bits())), 0);
  res->clear();
  const uint8_t* arena = f.arena.data();
  uint64_t pos = 0;
  for (const cavlc::FrameSlice& s : f.slices) {
    const uint64_t start = pos;
    for (int i = s.first_mb; i < s.first_mb + s.mb_count; ++i) {
      const gpuec_mb& m = *reinterpret_cast<const gpuec_mb*>(arena + f.records_off + size_t(i) * sizeof(gpuec_mb));
      if (m.kind == GPUEC_MB_SKIP) continue;
      if (!copy_bit_range(*out, pos, arena, f.lead[i].src_bit, f.lead[i].len)) return UINT64_MAX;
      if (m.kind == GPUEC_MB_PCM) {
        pos = (pos + 7) / 8 * 8;  // slices start at multiples of 32: output and slice alignment agree
        if (!copy_bit_range(*out, pos, arena, (f.records_off + size_t(i) * sizeof(gpuec_mb)) * 8, 3072))
          return UINT64_MAX;
        continue;
      }
      for (int k = 0; k < cavlc::kMbSlots; ++k) {
        const size_t slot = static_cast<size_t>(i) * cavlc::kMbSlots + k;
        if (!copy_bit_range(*out, pos, arena, (f.slots_off + slot * cavlc::kSlotBytes) * 8, f.slot_len[slot]))
          return UINT64_MAX;
      }
    }
    if (!copy_bit_range(*out, pos, arena, s.tail_src_bit, s.tail_len)) return UINT64_MAX;
    res->push_back({start, pos - start});
    pos = (pos + 31) / 32 * 32;
  }
  out->resize(static_cast<size_t>(vle::packed_bytes(pos)));
  return pos;
}

struct Assembly {
  Bytes out;  // packed_bytes(bound) + kMargin, canary-filled before the call
  std::vector<cavlc::SliceResult> res;
  uint64_t total = 0;
};

// code_frame_ref into the arena, then assemble_frame_ref into canary-filled outputs; checks its canaries.
bool assemble_ref(Context& ctx, cavlc_test::FrameArena& f, Assembly* a) {
  if (f.code_ref() != 0) return ctx.fail("code_frame_ref refused the frame");
  a->out.assign(static_cast<size_t>(vle::packed_bytes(f.bound_bits())) + kMargin, kCanary);
  a->res.assign(f.slices.size(), {~uint64_t{0}, ~uint64_t{0}});
  a->total = cavlc::assemble_frame_ref(f.view(), a->out.data(), a->out.size() - kMargin, a->res.data());
  if (a->total == UINT64_MAX) return ctx.fail("assemble_frame_ref refused the frame part");
  return ctx.canary_intact("assemble_frame_ref output", a->out.data(), vle::packed_bytes(a->total), a->out.size());
}

// Compares a twin's assembly with the reference: total, every slice's position and length, the output bytes
// (the first differing bit named with its slice), and the canary past packed_bytes(total).
bool same_assembly(Context& ctx, const cavlc_test::FrameArena& f, const char* twin, uint64_t want_total,
                   const std::vector<cavlc::SliceResult>& want_res, const uint8_t* want_out, const Assembly& got) {
  if (!ctx.same_value((std::string(twin) + ": total bits").c_str(), want_total, got.total)) return false;
  for (size_t k = 0; k < want_res.size(); ++k) {
    const std::string s = std::string(twin) + ": slice " + std::to_string(k) + " (MBs [" +
                          std::to_string(f.slices[k].first_mb) + ", " +
                          std::to_string(f.slices[k].first_mb + f.slices[k].mb_count) + "))";
    if (!ctx.same_value((s + " out_bit").c_str(), want_res[k].out_bit, got.res[k].out_bit) ||
        !ctx.same_value((s + " bits").c_str(), want_res[k].bits, got.res[k].bits))
      return false;
    if (std::memcmp(want_out + want_res[k].out_bit / 8, got.out.data() + want_res[k].out_bit / 8,
                    static_cast<size_t>(vle::packed_bytes(want_res[k].bits))) != 0)
      return ctx.same_bits((s + " bits (bit numbers relative to the slice)").c_str(), want_out + want_res[k].out_bit / 8,
                           got.out.data() + want_res[k].out_bit / 8, vle::packed_bytes(want_res[k].bits) * 8);
  }
  const uint64_t bytes = vle::packed_bytes(want_total);
  return ctx.same_bytes((std::string(twin) + ": frame output").c_str(), want_out, got.out.data(), bytes) &&
         ctx.canary_intact((std::string(twin) + ": output").c_str(), got.out.data(), bytes, got.out.size());
}

void assemble_oracle(Context& ctx) {
  for_each_frame(ctx, false, false, [&](cavlc_test::FrameArena& f) {
    Assembly got;
    if (!assemble_ref(ctx, f, &got)) return;
    Bytes want;
    std::vector<cavlc::SliceResult> res;
    const uint64_t total = plain_assemble(f, &want, &res);
    if (total == UINT64_MAX) {
      ctx.fail("the plain assembly ran past the bound (assemble_frame_bound_bits)");
      return;
    }
    same_assembly(ctx, f, "assemble_frame_ref vs plain assembly", total, res, want.data(), got);
  });
}

// ---------------------------------------------------------------- frame coder

void frame_oracle(Context& ctx) {
  for_each_frame(ctx, true, false, [&](cavlc_test::FrameArena& f) {
    Assembly got;
    if (!assemble_ref(ctx, f, &got)) return;
    std::vector<cavlc::MbTotals> totals(static_cast<size_t>(f.n_mbs));
    for (size_t k = 0; k < f.spans.size(); ++k) {
      const cavlc_test::SliceSpan& sp = f.spans[k];
      const int count = sp.last_mb - sp.first_mb + 1;
      Bytes want(static_cast<size_t>(count) * (cavlc::kMaxMbResidualBits / 8 + 400) + f.skel[k].size() + 64);
      vle::BitWriter bw(want.data(), want.size());
      const cavlc::SliceLayout layout{f.w, sp.first_mb, sp.skel_start, sp.skel_end};
      if (cavlc::encode_slice_ref(f.recs.data() + sp.first_mb, static_cast<size_t>(count), layout, f.skel[k].data(),
                                  totals.data(), bw) != 0) {
        ctx.fail("encode_slice_ref refused slice " + std::to_string(k));
        return;
      }
      const uint64_t bits = bw.bits();
      bw.flush();
      const std::string what = "slice " + std::to_string(k) + " (MBs [" + std::to_string(sp.first_mb) + ", " +
                               std::to_string(sp.last_mb + 1) + ")) vs encode_slice_ref";
      if (!ctx.same_value((what + ", bits").c_str(), bits, got.res[k].bits)) return;
      if (!ctx.same_bits(what.c_str(), want.data(), got.out.data() + got.res[k].out_bit / 8, bits)) return;
      // Zero bits after the slice up to the next multiple of 32.
      const uint64_t end = got.res[k].out_bit + bits, padded = (end + 31) / 32 * 32;
      for (uint64_t b = end; b < padded; ++b)
        if ((got.out[b >> 3] >> (7 - (b & 7))) & 1) {
          ctx.fail(what + ": padding bit " + std::to_string(b) + " of the frame output is 1");
          return;
        }
    }
  });
}

// ---------------------------------------------------------------- GPU twins

#if defined(GPUEC_HAVE_CUDA)

template <class T>
bool upload(Context& ctx, DeviceBuffer<T>& d, const T* p, size_t n) {
  if (!d.alloc(n)) return ctx.fail("cudaMalloc of " + std::to_string(n * sizeof(T)) + " bytes");
  return n == 0 || BX_CUDA(ctx, cudaMemcpy(d.p, p, n * sizeof(T), cudaMemcpyHostToDevice));
}

void block_gpu(Context& ctx) {
  for_each_frame(ctx, false, true, [&](const cavlc_test::FrameArena& f) {
    Slots want;
    if (!code_ref(ctx, f, &want)) return;
    const size_t nslots = want.len.size();
    DeviceBuffer<gpuec_mb> d_recs;
    DeviceBuffer<int32_t> d_sid;
    DeviceBuffer<uint8_t> d_bits(want.bits.size()), d_ws(cavlc::code_frame_cuda_workspace_bytes(f.w, f.h));
    DeviceBuffer<uint16_t> d_len(nslots);
    if (!upload(ctx, d_recs, f.recs.data(), f.recs.size()) || !upload(ctx, d_sid, f.slice_id.data(), f.slice_id.size()))
      return;
    for (int rep = 0; rep < 2; ++rep) {  // the second run on the workspace as the first left it
      if (!BX_CUDA(ctx, cudaMemset(d_bits.p, kCanary, want.bits.size())) ||
          !BX_CUDA(ctx, cudaMemset(d_len.p, kCanary, nslots * 2)) ||
          (rep == 0 && !BX_CUDA(ctx, cudaMemset(d_ws.p, 0x5C, d_ws.bytes()))))
        return;
      if (!twin_ok(ctx, cavlc::code_frame_cuda(d_recs.p, f.w, f.h, d_sid.p, d_bits.p, d_len.p, d_ws.p, d_ws.bytes(), nullptr),
                   "code_frame_cuda") ||
          !BX_CUDA(ctx, cudaDeviceSynchronize()))
        return;
      Slots got;
      got.bits.resize(want.bits.size());
      got.len.resize(nslots);
      if (!BX_CUDA(ctx, cudaMemcpy(got.bits.data(), d_bits.p, got.bits.size(), cudaMemcpyDeviceToHost)) ||
          !BX_CUDA(ctx, cudaMemcpy(got.len.data(), d_len.p, nslots * 2, cudaMemcpyDeviceToHost)))
        return;
      if (!same_slots(ctx, f, want, got) || !slot_canaries(ctx, "code_frame_cuda slot", got)) return;
    }
  });
}

// The frame part on the device: the arena (slots as code_frame_ref wrote them, or canary), lengths, leads,
// slices, slice ids, TotalCoeff records.
struct DeviceFrame {
  DeviceBuffer<uint8_t> arena, tc;
  DeviceBuffer<uint16_t> len;
  DeviceBuffer<cavlc::MbLead> lead;
  DeviceBuffer<cavlc::FrameSlice> slices;
  DeviceBuffer<int32_t> sid;

  bool upload_all(Context& ctx, const cavlc_test::FrameArena& f, bool canary_slots) {
    if (!upload(ctx, arena, f.arena.data(), f.arena.size()) || !upload(ctx, len, f.slot_len.data(), f.slot_len.size()) ||
        !upload(ctx, lead, f.lead.data(), f.lead.size()) || !upload(ctx, slices, f.slices.data(), f.slices.size()) ||
        !upload(ctx, sid, f.slice_id.data(), f.slice_id.size()))
      return false;
    Bytes records(f.recs.size() * cavlc::kTcRecordBytes, 0);
    for (size_t a = 0; a < f.recs.size(); ++a) {
      uint8_t totals[GPUEC_TC_COUNT];
      if (f.recs[a].kind == GPUEC_MB_SKIP || cavlc::mb_totals(f.recs[a], totals) < 0) continue;
      cavlc::tc_record(totals, records.data() + a * cavlc::kTcRecordBytes);
    }
    if (!upload(ctx, tc, records.data(), records.size())) return false;
    return !canary_slots || canary(ctx, f);
  }
  bool canary(Context& ctx, const cavlc_test::FrameArena& f) {
    return BX_CUDA(ctx, cudaMemset(arena.p + f.slots_off, kCanary, f.slot_bytes())) &&
           BX_CUDA(ctx, cudaMemset(len.p, kCanary, f.slot_len.size() * 2));
  }
  cavlc::FrameAssembly view(const cavlc_test::FrameArena& f) const { return f.view(arena.p, len.p, lead.p, slices.p); }
};

// Runs `launch` (a GPU assembly into canary-filled out / results / total) and downloads the results.
template <class Launch>
bool run_gpu_assembly(Context& ctx, const cavlc_test::FrameArena& f, const char* twin, Launch launch, Assembly* got) {
  const size_t out_bytes = static_cast<size_t>(vle::packed_bytes(f.bound_bits()));
  DeviceBuffer<uint8_t> d_out(out_bytes + kMargin);
  DeviceBuffer<cavlc::SliceResult> d_res(f.slices.size());
  DeviceBuffer<uint64_t> d_total(1);
  if (!BX_CUDA(ctx, cudaMemset(d_out.p, kCanary, out_bytes + kMargin)) ||
      !BX_CUDA(ctx, cudaMemset(d_res.p, 0xEE, f.slices.size() * sizeof(cavlc::SliceResult))) ||
      !BX_CUDA(ctx, cudaMemset(d_total.p, 0xEE, 8)))
    return false;
  if (!twin_ok(ctx, launch(d_out.p, out_bytes, d_res.p, d_total.p), twin) || !BX_CUDA(ctx, cudaDeviceSynchronize()))
    return false;
  got->out.resize(out_bytes + kMargin);
  got->res.resize(f.slices.size());
  return BX_CUDA(ctx, cudaMemcpy(got->out.data(), d_out.p, got->out.size(), cudaMemcpyDeviceToHost)) &&
         BX_CUDA(ctx, cudaMemcpy(got->res.data(), d_res.p, f.slices.size() * sizeof(cavlc::SliceResult),
                                 cudaMemcpyDeviceToHost)) &&
         BX_CUDA(ctx, cudaMemcpy(&got->total, d_total.p, 8, cudaMemcpyDeviceToHost));
}

void assemble_gpu(Context& ctx) {
  for_each_frame(ctx, false, false, [&](cavlc_test::FrameArena& f) {
    Assembly want;
    if (!assemble_ref(ctx, f, &want)) return;
    DeviceFrame d;
    if (!d.upload_all(ctx, f, false)) return;  // the slots code_frame_ref wrote: the assembly alone is tested
    const size_t ws = cavlc::assemble_frame_cuda_workspace_bytes(f.n_mbs, static_cast<int>(f.slices.size()));
    DeviceBuffer<uint8_t> d_ws(ws);
    if (!BX_CUDA(ctx, cudaMemset(d_ws.p, 0x5C, std::max<size_t>(ws, 1)))) return;
    const cavlc::FrameAssembly in = d.view(f);
    for (int rep = 0; rep < 2; ++rep) {
      Assembly got;
      if (!run_gpu_assembly(ctx, f, "assemble_frame_cuda",
                            [&](uint8_t* out, uint64_t ob, cavlc::SliceResult* res, uint64_t* total) {
                              return cavlc::assemble_frame_cuda(in, out, ob, res, total, d_ws.p, ws, nullptr);
                            },
                            &got))
        return;
      if (!same_assembly(ctx, f, rep ? "assemble_frame_cuda (second run)" : "assemble_frame_cuda", want.total, want.res,
                         want.out.data(), got))
        return;
    }
  });
}

void frame_gpu(Context& ctx) {
  // One workspace for every call (zeroed once; each call leaves it ready for the next), sized for the largest
  // frame: calls of any size share it when they pass the same workspace_bytes.
  const size_t ws = cavlc::encode_frame_cuda_workspace_bytes(kMaxMbs);
  DeviceBuffer<uint8_t> d_ws(ws);
  if (!d_ws.p || !twin_ok(ctx, cavlc::encode_frame_cuda_workspace_clear(d_ws.p, ws, nullptr), "workspace clear")) return;
  struct Variant {
    cavlc::FrameCudaVariant v;
    bool host_totals;
    const char* name;
  };
  const Variant variants[] = {{cavlc::FrameCudaVariant::kTwoPass, false, "encode_frame_cuda two-pass"},
                              {cavlc::FrameCudaVariant::kTwoPass, true, "encode_frame_cuda two-pass, host TotalCoeff records"},
                              {cavlc::FrameCudaVariant::kFused, false, "encode_frame_cuda fused"}};
  for_each_frame(ctx, true, false, [&](cavlc_test::FrameArena& f) {
    Assembly want;
    if (!assemble_ref(ctx, f, &want)) return;
    DeviceFrame d;
    if (!d.upload_all(ctx, f, true)) return;
    const cavlc::FrameAssembly in = d.view(f);
    for (const Variant& v : variants) {
      Assembly got;
      if (!d.canary(ctx, f)) return;  // the call writes the slots and their lengths
      if (!run_gpu_assembly(ctx, f, v.name,
                            [&](uint8_t* out, uint64_t ob, cavlc::SliceResult* res, uint64_t* total) {
                              return cavlc::encode_frame_cuda(v.v, in, f.w, d.sid.p, d.len.p, out, ob, res, total,
                                                              d_ws.p, ws, nullptr, v.host_totals ? d.tc.p : nullptr);
                            },
                            &got))
        return;
      if (!same_assembly(ctx, f, v.name, want.total, want.res, want.out.data(), got)) return;
    }
  });
}

#endif  // GPUEC_HAVE_CUDA

// ---------------------------------------------------------------- bench

cavlc_test::FrameArena bench_frame(const Options& opt) {
  std::mt19937 rng(opt.seed);
  return make_frame(rng, {120, 68}, cavlc_test::SliceLayout::kSeven, Mix::kPlain, true);
}

BenchResult block_bench(const Options& opt) {
  cavlc_test::FrameArena f = bench_frame(opt);
  BenchResult r{"1080p frame (120x68 MBs), 7 slices", -1, -1};
  Slots s;
  s.bits.resize(size_t(f.n_mbs) * cavlc::kMbSlots * cavlc::kSlotBytes);
  s.len.resize(size_t(f.n_mbs) * cavlc::kMbSlots);
  r.cpu_us = median_us(opt, [&] { cavlc::code_frame_ref(f.recs.data(), f.w, f.h, f.slice_id.data(), s.bits.data(), s.len.data()); });
#if defined(GPUEC_HAVE_CUDA)
  if (opt.gpu) {
    DeviceBuffer<gpuec_mb> d_recs(f.recs);
    DeviceBuffer<int32_t> d_sid(f.slice_id);
    DeviceBuffer<uint8_t> d_bits(s.bits.size()), d_ws(cavlc::code_frame_cuda_workspace_bytes(f.w, f.h));
    DeviceBuffer<uint16_t> d_len(s.len.size());
    r.gpu_us = median_gpu_us(opt, [&] {
      cavlc::code_frame_cuda(d_recs.p, f.w, f.h, d_sid.p, d_bits.p, d_len.p, d_ws.p, d_ws.bytes(), nullptr);
    });
  }
#endif
  return r;
}

BenchResult assemble_bench(const Options& opt) {
  cavlc_test::FrameArena f = bench_frame(opt);
  f.code_ref();
  BenchResult r{"1080p frame, 7 slices (slots given)", -1, -1};
  Bytes out(vle::packed_bytes(f.bound_bits()));
  std::vector<cavlc::SliceResult> res(f.slices.size());
  r.cpu_us = median_us(opt, [&] { cavlc::assemble_frame_ref(f.view(), out.data(), out.size(), res.data()); });
#if defined(GPUEC_HAVE_CUDA)
  if (opt.gpu) {
    Context ctx(opt, "cavlc.assemble", "bench");
    DeviceFrame d;
    if (!d.upload_all(ctx, f, false)) return r;
    const size_t ws = cavlc::assemble_frame_cuda_workspace_bytes(f.n_mbs, static_cast<int>(f.slices.size()));
    DeviceBuffer<uint8_t> d_ws(ws), d_out(out.size());
    DeviceBuffer<cavlc::SliceResult> d_res(res.size());
    DeviceBuffer<uint64_t> d_total(1);
    const cavlc::FrameAssembly in = d.view(f);
    r.gpu_us = median_gpu_us(opt, [&] {
      cavlc::assemble_frame_cuda(in, d_out.p, out.size(), d_res.p, d_total.p, d_ws.p, ws, nullptr);
    });
  }
#endif
  return r;
}

BenchResult frame_bench(const Options& opt) {
  cavlc_test::FrameArena f = bench_frame(opt);
  BenchResult r{"1080p frame, 7 slices: code + assemble", -1, -1};
  Bytes out(vle::packed_bytes(f.bound_bits()));
  std::vector<cavlc::SliceResult> res(f.slices.size());
  r.cpu_us = median_us(opt, [&] {
    f.code_ref();
    cavlc::assemble_frame_ref(f.view(), out.data(), out.size(), res.data());
  });
#if defined(GPUEC_HAVE_CUDA)
  if (opt.gpu) {
    Context ctx(opt, "cavlc.frame", "bench");
    DeviceFrame d;
    if (!d.upload_all(ctx, f, true)) return r;
    const size_t ws = cavlc::encode_frame_cuda_workspace_bytes(f.n_mbs);
    DeviceBuffer<uint8_t> d_ws(ws), d_out(out.size());
    DeviceBuffer<cavlc::SliceResult> d_res(res.size());
    DeviceBuffer<uint64_t> d_total(1);
    cavlc::encode_frame_cuda_workspace_clear(d_ws.p, ws, nullptr);
    const cavlc::FrameAssembly in = d.view(f);
    r.gpu_us = median_us(opt, [&] {
      cavlc::encode_frame_cuda(cavlc::kEncodeFrameCudaDefault, in, f.w, d.sid.p, d.len.p, d_out.p, out.size(), d_res.p,
                               d_total.p, d_ws.p, ws, nullptr,
                               cavlc::kEncodeFrameCudaDefault == cavlc::FrameCudaVariant::kTwoPass ? d.tc.p : nullptr);
      cudaDeviceSynchronize();
    });
  }
#endif
  return r;
}

// ---------------------------------------------------------------- the frame coder (cavlc/frame_coder.h)

// Its CPU path, encode_frame_ref, straight from the arena (leads and tails are arena bits, the skeleton area's
// place in the coder), into canary-filled outputs.
bool frame_coder_ref(Context& ctx, const cavlc_test::FrameArena& f, Assembly* a) {
  a->out.assign(static_cast<size_t>(vle::packed_bytes(f.bound_bits())) + kMargin, kCanary);
  a->res.assign(f.slices.size(), {~uint64_t{0}, ~uint64_t{0}});
  std::vector<cavlc::MbTotals> totals(static_cast<size_t>(f.n_mbs));
  a->total = cavlc::encode_frame_ref(f.view(), f.w, f.slice_id.data(), a->out.data(), a->out.size() - kMargin,
                                     a->res.data(), totals.data());
  if (a->total == UINT64_MAX) return ctx.fail("encode_frame_ref refused the frame part");
  return ctx.canary_intact("encode_frame_ref output", a->out.data(), vle::packed_bytes(a->total), a->out.size());
}

// A FrameCoder of `backend` fed the arena's frame through its interface (the skeleton area is the arena up to
// its records); the output copied into canary-filled memory as the caller would read it.
bool frame_coder_run(Context& ctx, gpu::Backend backend, const cavlc_test::FrameArena& f, Assembly* a) {
  std::string why;
  std::unique_ptr<cavlc::FrameCoder> c = cavlc::FrameCoder::create(backend, f.w, f.h, 0, &why);
  if (!c) return ctx.fail(std::string("FrameCoder::create(") + gpu::backend_name(backend) + "): " + why);
  const auto* recs = reinterpret_cast<const gpuec_mb*>(f.arena.data() + f.records_off);
  const size_t n = static_cast<size_t>(f.n_mbs);
  std::memcpy(c->records(), recs, n * sizeof(gpuec_mb));
  std::memcpy(c->slice_ids(), f.slice_id.data(), n * sizeof(int32_t));
  const cavlc::FrameAssembly v = f.view();
  std::memcpy(c->leads(), v.lead, n * sizeof(cavlc::MbLead));
  std::memcpy(c->slices(), v.slices, f.slices.size() * sizeof(cavlc::FrameSlice));
  if (uint8_t* tc = c->tc_records())  // the cuda coder's only
    for (size_t i = 0; i < n; ++i) {
      uint8_t t[GPUEC_TC_COUNT] = {};
      if (recs[i].kind != GPUEC_MB_SKIP && cavlc::mb_totals(recs[i], t) < 0) return ctx.fail("mb_totals refused a record");
      cavlc::tc_record(t, tc + i * cavlc::kTcRecordBytes);
    }
  uint8_t* area = c->skeleton(f.records_off);
  if (!area) return ctx.fail("FrameCoder::skeleton");
  std::memcpy(area, f.arena.data(), f.records_off);
  const uint8_t* out = nullptr;
  const cavlc::SliceResult* res = nullptr;
  if (!c->submit(f.h, static_cast<int>(f.slices.size()), f.records_off, &why) || !c->complete(&out, &res, &why))
    return ctx.fail(std::string(gpu::backend_name(backend)) + " frame coder: " + why);
  a->res.assign(res, res + f.slices.size());
  const cavlc::SliceResult& last = a->res.back();
  a->total = (last.out_bit + last.bits + 31) / 32 * 32;
  a->out.assign(static_cast<size_t>(vle::packed_bytes(a->total)) + kMargin, kCanary);
  std::memcpy(a->out.data(), out, static_cast<size_t>(vle::packed_bytes(a->total)));
  return true;
}

// encode_frame_ref against the kernels' CPU twins (code_frame_ref + assemble_frame_ref, themselves checked
// against the slice coder above), and the cpu FrameCoder against encode_frame_ref.
void frame_coder_oracle(Context& ctx) {
  for_each_frame(ctx, true, false, [&](cavlc_test::FrameArena& f) {
    Assembly want, got, coder;
    if (!assemble_ref(ctx, f, &want) || !frame_coder_ref(ctx, f, &got)) return;
    if (!same_assembly(ctx, f, "encode_frame_ref vs code_frame_ref + assemble_frame_ref", want.total, want.res,
                       want.out.data(), got))
      return;
    if (!frame_coder_run(ctx, gpu::Backend::kCpu, f, &coder)) return;
    same_assembly(ctx, f, "FrameCoder cpu vs encode_frame_ref", got.total, got.res, got.out.data(), coder);
  });
}

#if defined(GPUEC_HAVE_CUDA)
void frame_coder_gpu(Context& ctx) {
  for_each_frame(ctx, true, false, [&](cavlc_test::FrameArena& f) {
    Assembly want, got;
    if (!frame_coder_ref(ctx, f, &want) || !frame_coder_run(ctx, gpu::Backend::kCuda, f, &got)) return;
    same_assembly(ctx, f, "FrameCoder cuda vs encode_frame_ref", want.total, want.res, want.out.data(), got);
  });
}
constexpr CheckFn kFrameCoderGpu = frame_coder_gpu;
#else
constexpr CheckFn kFrameCoderGpu = nullptr;
#endif

BenchResult frame_coder_bench(const Options& opt) {
  cavlc_test::FrameArena f = bench_frame(opt);
  BenchResult r{"1080p frame, 7 slices: the frame coder's CPU path (encode_frame_ref)", -1, -1};
  Bytes out(vle::packed_bytes(f.bound_bits()));
  std::vector<cavlc::SliceResult> res(f.slices.size());
  std::vector<cavlc::MbTotals> totals(static_cast<size_t>(f.n_mbs));
  r.cpu_us = median_us(opt, [&] {
    cavlc::encode_frame_ref(f.view(), f.w, f.slice_id.data(), out.data(), out.size(), res.data(), totals.data());
  });
  return r;
}

#if defined(GPUEC_HAVE_CUDA)
constexpr CheckFn kBlockGpu = block_gpu, kAssembleGpu = assemble_gpu, kFrameGpu = frame_gpu;
#else
constexpr CheckFn kBlockGpu = nullptr, kAssembleGpu = nullptr, kFrameGpu = nullptr;
#endif

}  // namespace

void register_cavlc_pairs(std::vector<Pair>& pairs) {
  pairs.push_back({"cavlc.block", "code_frame_ref / code_frame_cuda",
                   "encode_slice_ref (the slice coder) over an empty skeleton, per slice id", block_oracle, kBlockGpu,
                   block_bench});
  pairs.push_back({"cavlc.assemble", "assemble_frame_ref / assemble_frame_cuda",
                   "a plain bit-by-bit reading of cavlc/assemble_frame.h", assemble_oracle, kAssembleGpu,
                   assemble_bench});
  pairs.push_back({"cavlc.frame", "code_frame_ref + assemble_frame_ref / encode_frame_cuda (two-pass, fused)",
                   "encode_slice_ref per slice, skeleton included", frame_oracle, kFrameGpu, frame_bench});
  pairs.push_back({"cavlc.frame_coder", "FrameCoder cpu (encode_frame_ref) / FrameCoder cuda",
                   "code_frame_ref + assemble_frame_ref (the kernels' CPU twins)", frame_coder_oracle, kFrameCoderGpu,
                   frame_coder_bench});
}

}  // namespace bitexact
