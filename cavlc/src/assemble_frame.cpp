#include "cavlc/assemble_frame.h"

#include "cavlc/frame.h"
#include "vle/bitwriter.h"

namespace cavlc {
namespace {

constexpr uint64_t kRecordBits = sizeof(gpuec_mb) * 8;
constexpr uint64_t kSlotBits = kSlotBytes * 8;
constexpr uint64_t kPcmBits = 384 * 8;

// Calls put(src_bit, len, zero) for every segment of slice s in order (zero: len zero bits, src_bit
// unused) and returns the slice length. The I_PCM alignment depends on the slice position only, since
// every slice starts on a 32-bit boundary of the output.
template <class Put>
uint64_t for_each_segment(const FrameAssembly& in, const FrameSlice& s, Put&& put) {
  uint64_t at = 0;
  auto add = [&](uint64_t src_bit, uint64_t len, bool zero) {
    put(src_bit, len, zero);
    at += len;
  };
  for (int i = s.first_mb; i < s.first_mb + s.mb_count; ++i) {
    const uint8_t kind = in.records[i].kind;
    if (kind == GPUEC_MB_SKIP) continue;
    add(in.lead[i].src_bit, in.lead[i].len, false);
    if (kind == GPUEC_MB_PCM) {
      add(0, (8 - (at & 7)) & 7, true);  // pcm_alignment_zero_bit
      add(in.records_bit + static_cast<uint64_t>(i) * kRecordBits, kPcmBits, false);
      continue;
    }
    for (int k = 0; k < kMbSlots; ++k) {
      const uint64_t slot = static_cast<uint64_t>(i) * kMbSlots + k;
      add(in.slots_bit + slot * kSlotBits, in.slot_len[slot], false);
    }
  }
  add(s.tail_src_bit, s.tail_len, false);
  return at;
}

}  // namespace

uint64_t assemble_frame_ref(const FrameAssembly& in, uint8_t* out, uint64_t out_bytes, SliceResult* results) {
  if (in.n_mbs < 1 || in.n_slices < 1) return UINT64_MAX;
  int64_t next = 0;
  for (int k = 0; k < in.n_slices; ++k) {
    const FrameSlice& s = in.slices[k];
    if (s.first_mb < next || s.mb_count < 1 || int64_t{s.first_mb} + s.mb_count > in.n_mbs) return UINT64_MAX;
    next = int64_t{s.first_mb} + s.mb_count;
  }
  uint64_t total = 0;
  for (int k = 0; k < in.n_slices; ++k) {
    const uint64_t bits = for_each_segment(in, in.slices[k], [](uint64_t, uint64_t, bool) {});
    results[k] = {total, bits};
    total += (bits + 31) & ~uint64_t{31};
  }
  if (out_bytes < vle::packed_bytes(total)) return UINT64_MAX;
  vle::BitWriter bw(out, static_cast<size_t>(out_bytes));
  for (int k = 0; k < in.n_slices; ++k) {
    for_each_segment(in, in.slices[k], [&](uint64_t src_bit, uint64_t len, bool zero) {
      if (zero) bw.put(0, static_cast<int>(len));
      else bw.copy_bits(in.arena, src_bit, len);
    });
    bw.put(0, static_cast<int>((32 - (bw.bits() & 31)) & 31));
  }
  bw.flush();
  return total;
}

}  // namespace cavlc
