#include "cavlc/assemble.h"

#include "cavlc/frame.h"
#include "vle/bitwriter.h"

namespace cavlc {

bool slice_segments(const gpuec_mb* recs, const uint8_t* slot_bits, const uint16_t* slot_len, const SliceSpan& span,
                    const uint8_t* skel, std::vector<SliceSegment>* out) {
  out->clear();
  int64_t pos = span.skel_start;  // next skeleton bit
  uint64_t at = 0;                // output bits so far
  auto add = [&](const uint8_t* src, uint64_t src_bit, uint64_t len) {
    if (len) out->push_back({src, src_bit, static_cast<uint32_t>(len)});
    at += len;
  };
  for (int a = span.first_mb; a <= span.last_mb; ++a) {
    const gpuec_mb& m = recs[a];
    if (m.mb_addr != a) return false;
    if (m.kind == GPUEC_MB_SKIP) continue;
    if (m.skel_bit < pos || m.skel_bit > span.skel_end) return false;
    add(skel, static_cast<uint64_t>(pos), static_cast<uint64_t>(m.skel_bit - pos));
    pos = m.skel_bit;
    if (m.kind == GPUEC_MB_PCM) {
      add(nullptr, 0, (8 - (at & 7)) & 7);  // pcm_alignment_zero_bit
      add(m.u.pcm, 0, 384 * 8);
      continue;
    }
    for (int s = 0; s < kMbSlots; ++s) {
      const size_t slot = static_cast<size_t>(a) * kMbSlots + s;
      add(slot_bits + slot * kSlotBytes, 0, slot_len[slot]);
    }
  }
  if (span.skel_end < pos) return false;
  add(skel, static_cast<uint64_t>(pos), static_cast<uint64_t>(span.skel_end - pos));
  return true;
}

int64_t assemble_slice_ref(const gpuec_mb* recs, const uint8_t* slot_bits, const uint16_t* slot_len,
                           const SliceSpan& span, const uint8_t* skel, uint8_t* out, size_t out_bytes) {
  std::vector<SliceSegment> segs;
  if (!slice_segments(recs, slot_bits, slot_len, span, skel, &segs)) return -1;
  vle::BitWriter bw(out, out_bytes);
  for (const SliceSegment& s : segs) {
    if (s.src) bw.copy_bits(s.src, s.src_bit, s.len);
    else bw.put(0, static_cast<int>(s.len));
  }
  const int64_t bits = static_cast<int64_t>(bw.bits());
  bw.flush();
  return bw.overflowed() ? -1 : bits;
}

}  // namespace cavlc
