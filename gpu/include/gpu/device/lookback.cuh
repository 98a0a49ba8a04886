// gpu/device/lookback.cuh: the decoupled look-back of a single-pass scan across thread blocks (Merrill and
// Garland, "Single-pass Parallel Prefix Scan with Decoupled Look-back", 2016), one warp wide. Device code.
//
// A scan over tiles (one tile per block-input, any number per thread block): tile i publishes its
// aggregate (the combination of its own items) as soon as it has it, then finds its exclusive prefix (the
// combination of every tile before it) by looking back over its predecessors' published states: one warp
// reads 32 predecessors at a time (lane k: tile i - 1 - k), and combines the aggregates up to the newest
// predecessor that has published its inclusive prefix; then tile i publishes its own inclusive prefix.
// Tiles must take their index from an atomic counter (not blockIdx), so that a tile only waits on tiles
// handed out earlier, to blocks that are running: forward progress without co-residency.
//
// lookback<Tiles>() is that window loop; the template parameter Tiles supplies what differs between users:
//   - the tile status layout: Index (tile numbers), State (what one lane reads about one predecessor),
//     read(t), before_first() (the virtual tile -1: an inclusive prefix of nothing), is_inclusive(s),
//     is_aggregate(s), and kReadWaits (read() waits until the tile has published something, so every state
//     is ready and a window is never read twice);
//   - the value types and the combine op: Carry (what the windows read so far add up to, start()),
//     fold(carry, s, t, need, inc_mask, lane) (adds one window: the lanes in `need` hold the aggregates and,
//     when inc_mask != 0, the inclusive prefix of the lowest lane in inc_mask), finish(carry) -> Prefix.
// Two layouts are defined here:
//   SegmentedCounters  the GVLE paper's segmented atomic scan of uint64 sums (thesis section 2.3): one 64-bit
//                      word per index carrying count, flag and value; used by the GVLE encoder
//                      (vle/src/cuda/encode.cu) and the stand-alone scan (tools/bench/kernels).
//   StatusTiles<Op>    one 32-bit status word per tile (0, aggregate + 24-bit payload, inclusive) with the
//                      values in arrays of the caller's Op, which also gives the (associative, not
//                      necessarily commutative) combine; used by the CAVLC frame assembly's position scan
//                      (cavlc/src/cuda/assemble_device.cuh, steps x -> ceil(x + a) + b).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/device/memory.cuh"

namespace gpu {
namespace device {

constexpr uint32_t kFullWarp = 0xffffffffu;

// The exclusive prefix of a tile from its predecessors (whole warp; every lane gets the result). t0: the
// predecessor of this lane in the first window (tile - 1 - lane); s0: its state, read by the caller (early,
// to hide the latency) or tiles.read(t) / tiles.before_first() for t < 0. A window is combined once every
// lane up to and including the newest inclusive one is ready; otherwise it is read again (unless kReadWaits).
template <class Tiles>
__device__ __forceinline__ typename Tiles::Prefix lookback(const Tiles& tiles, typename Tiles::Index t0,
                                                           typename Tiles::State s0, uint32_t lane) {
  typename Tiles::Carry carry = tiles.start();
  typename Tiles::Index t = t0;
  typename Tiles::State s = s0;
  for (;;) {
    const bool inc = tiles.is_inclusive(s);
    const bool ready = Tiles::kReadWaits || inc || tiles.is_aggregate(s);
    const uint32_t inc_mask = __ballot_sync(kFullWarp, inc);
    const uint32_t ready_mask = Tiles::kReadWaits ? kFullWarp : __ballot_sync(kFullWarp, ready);
    // Lanes up to and including the newest inclusive one (all 32 when there is none) must be ready.
    const uint32_t need = inc_mask ? (inc_mask ^ (inc_mask - 1)) : kFullWarp;
    if ((ready_mask & need) == need) {
      carry = tiles.fold(carry, s, t, need, inc_mask, lane);
      if (inc_mask) break;
      t -= 32;
    }
    s = t >= 0 ? tiles.read(t) : tiles.before_first();
  }
  return tiles.finish(carry);
}

// ---- SegmentedCounters: the GVLE paper's segmented atomic scan (sums of uint64 lengths) ----
// Array `words`: one 64-bit word per index, zero before the launch, grouped in segments of 32 (the paper's
// sub-vectors). Word 32 g + j:
//   bits 0..56   sum of the lengths of indices 32 g .. 32 g + j   (segmented inclusive scan)
//   bits 57..62  how many indices have added to it (each add carries 1 << 57)
//   bit  63      flag P, only on word 32 g + 31 once index 32 g + 31 has stored the inclusive prefix of
//                everything up to and including segment g there (bits 57..62 then 0).
// Index i = 32 g + j adds (1 << 57) + len to words j..31 of its segment (segscan_publish), then finds
// (segscan_resolve): its place inside the segment (word j - 1 once its count is j; j = 0: 0), and the place
// of the segment by lookback() over word 31 of segments g-1, g-2, ... (aggregate: count 32; inclusive: P).
// Index 32 g + 31 then waits for word 31 to be complete (no add still in flight) and replaces it by
// P | (prefix + segment sum). The one change to the paper: the look-back reads 32 earlier segments at once
// instead of one after the other. Sums must stay below 2^57.
constexpr uint64_t kSegScanCountOne = uint64_t{1} << 57;
constexpr uint64_t kSegScanCountMask = uint64_t{63} << 57;
constexpr uint64_t kSegScanFlagP = uint64_t{1} << 63;
constexpr uint64_t kSegScanValueMask = kSegScanCountOne - 1;
constexpr uint64_t kSegScanFull = uint64_t{32} << 57;

// Words of `words` for `count` indices (whole segments).
__host__ __device__ constexpr uint64_t segscan_words(uint64_t count) { return (count + 31) / 32 * 32; }

__device__ __forceinline__ uint64_t warp_sum64(uint64_t v) {
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(kFullWarp, v, d);
  return v;
}

// The cross-segment part as lookback()'s Tiles: tile t is segment t, its state word 31.
struct SegmentedCounters {
  using State = uint64_t;
  using Carry = uint64_t;
  using Prefix = uint64_t;
  using Index = int64_t;
  static constexpr bool kReadWaits = false;
  const uint64_t* words;
  __device__ __forceinline__ State read(int64_t t) const { return load_relaxed(words + t * 32 + 31); }
  __device__ __forceinline__ static State before_first() { return kSegScanFlagP; }
  __device__ __forceinline__ static bool is_inclusive(State s) { return (s & kSegScanFlagP) != 0; }
  __device__ __forceinline__ static bool is_aggregate(State s) { return (s & kSegScanCountMask) == kSegScanFull; }
  __device__ __forceinline__ static Carry start() { return 0; }
  __device__ __forceinline__ static Carry fold(Carry c, State s, int64_t, uint32_t need, uint32_t, uint32_t lane) {
    return c + warp_sum64(((need >> lane) & 1) ? (s & kSegScanValueMask) : 0);
  }
  __device__ __forceinline__ static Prefix finish(Carry c) { return c; }
};

// Step 1 (whole warp): add this index's length to words j..31 of its segment. Fire and forget.
__device__ __forceinline__ void segscan_publish(uint64_t* words, uint32_t idx, uint64_t len) {
  const uint32_t lane = threadIdx.x & 31;
  const uint32_t j = idx & 31;
  if (lane >= j)
    atomicAdd(reinterpret_cast<unsigned long long*>(words + (idx - j) + lane), kSegScanCountOne + len);
}

// The first reads of segscan_resolve, issued early (right after segscan_publish) so that their latency
// overlaps other work; segscan_resolve re-reads whatever was not ready yet.
struct SegScanPeek {
  uint64_t in_seg;  // lane 0: word j - 1 (word 31 for j == 31) of the own segment
  uint64_t window;  // every lane: word 31 of segment g - 1 - lane
};

__device__ __forceinline__ SegScanPeek segscan_peek(const uint64_t* words, uint32_t idx) {
  const uint32_t lane = threadIdx.x & 31;
  const uint32_t j = idx & 31;
  const int64_t g = static_cast<int64_t>(idx >> 5) - 1 - lane;
  SegScanPeek pk;
  pk.in_seg = (j > 0 && lane == 0) ? load_relaxed(words + (idx - j) + (j == 31 ? 31 : j - 1)) : 0;
  pk.window = g >= 0 ? load_relaxed(words + g * 32 + 31) : kSegScanFlagP;
  return pk;
}

// Steps 2 to 5 (whole warp, after segscan_publish; pk from segscan_peek after that publish): returns the
// exclusive prefix of index idx in all lanes; index 32 g + 31 also stores flag P for its segment.
__device__ __forceinline__ uint64_t segscan_resolve(uint64_t* words, uint32_t idx, uint64_t len, SegScanPeek pk) {
  const uint32_t lane = threadIdx.x & 31;
  const uint32_t j = idx & 31;
  uint64_t* seg = words + (idx - j);

  // Place in the segment. The last index reads word 31 itself: complete means every add landed, which it
  // must know before it overwrites the word with P.
  uint64_t in_seg = 0, seg_sum = 0;
  if (j > 0 && lane == 0) {
    const uint64_t* w = seg + (j == 31 ? 31 : j - 1);
    const uint64_t want = (j == 31 ? uint64_t{32} : uint64_t{j}) << 57;
    uint64_t v = pk.in_seg;
    while ((v & kSegScanCountMask) != want) v = load_relaxed(w);
    if (j == 31) {
      seg_sum = v & kSegScanValueMask;
      in_seg = seg_sum - len;
    } else {
      in_seg = v & kSegScanValueMask;
    }
  }

  // Place of the segment: decoupled look-back over word 31 of the earlier segments.
  const uint64_t prefix =
      lookback(SegmentedCounters{words}, static_cast<int64_t>(idx >> 5) - 1 - lane, pk.window, lane);

  in_seg = __shfl_sync(kFullWarp, in_seg, 0);
  if (j == 31 && lane == 0)
    atomicExch(reinterpret_cast<unsigned long long*>(seg + 31), kSegScanFlagP | (prefix + seg_sum));
  return prefix + in_seg;
}

__device__ __forceinline__ uint64_t segscan_resolve(uint64_t* words, uint32_t idx, uint64_t len) {
  return segscan_resolve(words, idx, len, segscan_peek(words, idx));
}

// ---- StatusTiles<Op>: status words and value arrays (the classic layout) ----
// status[t] (uint32, 0 before the tile publishes): kTileAggregate | payload << 8 once the tile's aggregate is
// in Op's arrays (payload: 24 bits Op keeps in the status word), kTileInclusive once its inclusive prefix
// is. A lane waits on its predecessor until it has published something, so every state is ready.
// Op provides:
//   using Aggregate; using Prefix;           the tile aggregate (a monoid) and the scanned value
//   static Aggregate identity();
//   static Aggregate then(Aggregate f, Aggregate g);   f, then g (older first)
//   static Prefix apply(Aggregate f, Prefix x);        x carried over f
//   uint32_t store_aggregate(int t, Aggregate) const;  writes the arrays, returns the payload
//   Aggregate load_aggregate(int t, uint32_t payload) const;   (after an acquire of the status)
//   void store_prefix(int t, Prefix) const;  Prefix load_prefix(int t) const;
//   static Aggregate shfl_down(Aggregate, int d); static Aggregate shfl(Aggregate, int src);
constexpr uint32_t kTileAggregate = 1;
constexpr uint32_t kTileInclusive = 2;

template <class Op>
struct StatusTiles {
  using State = uint32_t;
  using Aggregate = typename Op::Aggregate;
  using Prefix = typename Op::Prefix;
  struct Carry {
    Aggregate later;  // the windows read so far, composed (oldest first)
    Prefix end;       // this lane's inclusive prefix (the lane `stop` holds the one that counts)
    int stop;
  };
  using Index = int;
  static constexpr bool kReadWaits = true;
  const uint32_t* status;
  Op op;

  __device__ __forceinline__ State read(int t) const {
    State st;
    do {
      st = load_acquire(status + t);
    } while (st == 0);
    return st;
  }
  __device__ __forceinline__ static State before_first() { return kTileInclusive; }  // position 0
  __device__ __forceinline__ static bool is_inclusive(State s) { return (s & 3u) == kTileInclusive; }
  __device__ __forceinline__ static bool is_aggregate(State s) { return (s & 3u) != kTileInclusive; }
  __device__ __forceinline__ static Carry start() { return Carry{Op::identity(), Prefix{}, 0}; }
  __device__ __forceinline__ Carry fold(Carry c, State s, int t, uint32_t, uint32_t inc_mask,
                                        uint32_t lane) const {
    const int stop = inc_mask ? __ffs(inc_mask) - 1 : 32;
    Aggregate f = Op::identity();
    Prefix end{};
    if (t >= 0 && static_cast<int>(lane) < stop) f = op.load_aggregate(t, s >> 8);
    if (t >= 0 && static_cast<int>(lane) == stop) end = op.load_prefix(t);
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {  // lane 0: lanes 31..0 composed, oldest first
      const Aggregate o = Op::shfl_down(f, d);
      if (static_cast<int>(lane) + d < 32) f = Op::then(o, f);
    }
    return Carry{Op::then(Op::shfl(f, 0), c.later), end, stop};
  }
  __device__ __forceinline__ static Prefix finish(const Carry& c) {
    return Op::apply(c.later, __shfl_sync(kFullWarp, c.end, c.stop));
  }
};

// The whole protocol for tile `tile` whose items compose to `agg` (whole warp, every lane gets the result):
// publishes the aggregate, looks back, publishes the inclusive prefix and returns the exclusive one (tile 0:
// Prefix{}). status[] holds 0 for tiles that have not published; op's arrays have room for every tile.
template <class Op>
__device__ __forceinline__ typename Op::Prefix tile_exclusive_prefix(int tile, const typename Op::Aggregate& agg,
                                                                     uint32_t* status, const Op& op, int lane) {
  typename Op::Prefix start{};
  if (tile > 0) {
    if (lane == 0) store_release(status + tile, kTileAggregate | op.store_aggregate(tile, agg) << 8);
    const StatusTiles<Op> tiles{status, op};
    const int t = tile - 1 - lane;
    start = lookback(tiles, t, t >= 0 ? tiles.read(t) : tiles.before_first(), static_cast<uint32_t>(lane));
  }
  if (lane == 0) {
    op.store_prefix(tile, Op::apply(agg, start));
    store_release(status + tile, kTileInclusive);
  }
  return start;
}

}  // namespace device
}  // namespace gpu
