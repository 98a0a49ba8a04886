// The GVLE inter-block scan (thesis section 2.3, GVLE paper section 3.4.1), shared by the encoder
// kernel (encode.cu) and the scan primitive (scan.cu). Device code only; private to vle/.
//
// Block-inputs take their index from an atomic counter, so a block that waits here waits only on
// indices handed out earlier, to blocks that are running (forward progress without co-residency).
//
// Array `scan`: one 64-bit word per index, zero before the launch, grouped in segments of 32
// (the paper's sub-vectors; a "sub-grid" is the 32 indices of one segment). Word 32 g + j:
//   bits 0..56   sum of the lengths of indices 32 g .. 32 g + j   (segmented inclusive scan)
//   bits 57..62  how many indices have added to it (each add carries 1 << 57)
//   bit  63      flag P, only on word 32 g + 31 once index 32 g + 31 has stored the inclusive
//                prefix of everything up to and including segment g there (bits 57..62 then 0).
// Index i = 32 g + j adds (1 << 57) + len to words j..31 of its segment (publish), then finds:
//   - its place inside the segment: word j - 1 once its count is j (j = 0: 0);
//   - the place of the segment: word 31 of segments g-1, g-2, ... read 32 at a time by one warp
//     (one segment per lane), summing complete segments (count 32) back to the nearest P.
// Index 32 g + 31 then waits for word 31 to be complete (count 32: no add is still in flight)
// and replaces it by P | (prefix + segment sum). The one change to the paper: the look-back
// reads 32 earlier segments at once instead of one after the other.
// Sums must stay below 2^57 (the scan's total, for the encoder 16 bits times the symbol count).
#pragma once

#include <cstdint>

namespace vle {
namespace detail {

constexpr uint64_t kScanCountOne = uint64_t{1} << 57;
constexpr uint64_t kScanCountMask = uint64_t{63} << 57;
constexpr uint64_t kScanFlagP = uint64_t{1} << 63;
constexpr uint64_t kScanValueMask = kScanCountOne - 1;
constexpr uint64_t kScanFull = uint64_t{32} << 57;

// Words of `scan` for `count` indices (whole segments).
constexpr uint64_t scan_words(uint64_t count) { return (count + 31) / 32 * 32; }

__device__ __forceinline__ uint64_t load_relaxed(const uint64_t* p) {
  uint64_t v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ uint64_t warp_sum64(uint64_t v) {
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(0xffffffffu, v, d);
  return v;
}

// Step 1 (whole warp): add this index's length to words j..31 of its segment. Fire and forget.
__device__ __forceinline__ void scan_publish(uint64_t* scan, uint32_t idx, uint64_t len) {
  const uint32_t lane = threadIdx.x & 31;
  const uint32_t j = idx & 31;
  if (lane >= j) atomicAdd(reinterpret_cast<unsigned long long*>(scan + (idx - j) + lane), kScanCountOne + len);
}

// The first reads of scan_resolve, issued early (right after scan_publish) so that their latency
// overlaps other work; scan_resolve re-reads whatever was not ready yet.
struct ScanPeek {
  uint64_t in_seg;  // lane 0: word j - 1 (word 31 for j == 31) of the own segment
  uint64_t window;  // every lane: word 31 of segment g - 1 - lane
};

__device__ __forceinline__ ScanPeek scan_peek(const uint64_t* scan, uint32_t idx) {
  const uint32_t lane = threadIdx.x & 31;
  const uint32_t j = idx & 31;
  const int64_t g = static_cast<int64_t>(idx >> 5) - 1 - lane;
  ScanPeek pk;
  pk.in_seg = (j > 0 && lane == 0) ? load_relaxed(scan + (idx - j) + (j == 31 ? 31 : j - 1)) : 0;
  pk.window = g >= 0 ? load_relaxed(scan + g * 32 + 31) : kScanFlagP;
  return pk;
}

// Steps 2 to 5 (whole warp, after scan_publish; pk from scan_peek after that publish): returns the
// exclusive prefix of index idx in all lanes; index 32 g + 31 also stores flag P for its segment.
__device__ __forceinline__ uint64_t scan_resolve(uint64_t* scan, uint32_t idx, uint64_t len, ScanPeek pk) {
  const uint32_t lane = threadIdx.x & 31;
  const uint32_t j = idx & 31;
  uint64_t* seg = scan + (idx - j);

  // Place in the segment. The last index reads word 31 itself: complete means every add landed,
  // which it must know before it overwrites the word with P.
  uint64_t in_seg = 0, seg_sum = 0;
  if (j > 0 && lane == 0) {
    const uint64_t* w = seg + (j == 31 ? 31 : j - 1);
    const uint64_t want = (j == 31 ? uint64_t{32} : uint64_t{j}) << 57;
    uint64_t v = pk.in_seg;
    while ((v & kScanCountMask) != want) v = load_relaxed(w);
    if (j == 31) {
      seg_sum = v & kScanValueMask;
      in_seg = seg_sum - len;
    } else {
      in_seg = v & kScanValueMask;
    }
  }

  // Place of the segment: decoupled look-back over word 31 of the earlier segments.
  uint64_t prefix = 0;
  int64_t g = static_cast<int64_t>(idx >> 5) - 1 - lane;
  uint64_t v = pk.window;
  for (;;) {
    const bool is_p = (v & kScanFlagP) != 0;
    const bool ready = is_p || (v & kScanCountMask) == kScanFull;
    const uint32_t p_mask = __ballot_sync(0xffffffffu, is_p);
    const uint32_t ready_mask = __ballot_sync(0xffffffffu, ready);
    // Lanes up to and including the nearest P (all 32 when there is none) must be ready.
    const uint32_t need = p_mask ? (p_mask ^ (p_mask - 1)) : 0xffffffffu;
    if ((ready_mask & need) == need) {
      prefix += warp_sum64(((need >> lane) & 1) ? (v & kScanValueMask) : 0);
      if (p_mask) break;
      g -= 32;
    }
    v = g >= 0 ? load_relaxed(scan + g * 32 + 31) : kScanFlagP;
  }

  in_seg = __shfl_sync(0xffffffffu, in_seg, 0);
  if (j == 31 && lane == 0)
    atomicExch(reinterpret_cast<unsigned long long*>(seg + 31), kScanFlagP | (prefix + seg_sum));
  return prefix + in_seg;
}

__device__ __forceinline__ uint64_t scan_resolve(uint64_t* scan, uint32_t idx, uint64_t len) {
  return scan_resolve(scan, idx, len, scan_peek(scan, idx));
}

}  // namespace detail
}  // namespace vle
