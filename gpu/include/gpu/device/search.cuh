// gpu/device/search.cuh: cooperative search of a sorted array by a whole thread block or a warp: each round
// probes N evenly spaced indices at once (N = the group's threads) and narrows the range to one gap between
// probes, so ceil(log_N(n)) rounds and N loads per round instead of log2(n) dependent loads. Used by the
// segment packer (the segment holding a tile's first bit; tools/bench/kernels), the CAVLC frame assembly's
// scan (the first slice meeting a tile) and its emit kernel (the macroblock holding a bit). Device code.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace gpu {
namespace device {

// The groups: Size threads, this thread's rank, and how many of them pass `pred` (a barrier for the group).
template <int kThreads>
struct BlockGroup {  // every thread of a 1-D block of kThreads threads; __syncthreads_count
  static constexpr int kSize = kThreads;
  __device__ __forceinline__ static unsigned rank() { return threadIdx.x; }
  __device__ __forceinline__ static int count(bool pred) { return __syncthreads_count(pred); }
};
struct WarpGroup {  // the 32 lanes of a warp (all active); __ballot_sync
  static constexpr int kSize = 32;
  __device__ __forceinline__ static unsigned rank() { return threadIdx.x & 31; }
  __device__ __forceinline__ static int count(bool pred) { return __popc(__ballot_sync(0xffffffffu, pred)); }
};

// The last index i in [lo, hi) with pred(i), where pred is true then false over [lo, hi) and true at lo
// (lo < hi). Every thread of the group calls it with the same lo, hi (group-uniform) and gets the answer.
// pred(i) is evaluated only for i in [lo, hi). Index: a signed or unsigned integer type.
template <class Group, class Index, class Pred>
__device__ __forceinline__ Index search_last(Index lo, Index hi, Pred pred) {
  while (hi - lo > 1) {
    const Index step = (hi - lo + Group::kSize - 1) / Group::kSize;  // probes lo, lo + step, ... (< hi)
    const Index probe = lo + step * static_cast<Index>(Group::rank());
    const int below = Group::count(probe < hi && pred(probe));
    const Index new_lo = lo + step * (below > 0 ? below - 1 : 0);  // 0 only off contract (pred(lo) false)
    hi = new_lo + step < hi ? new_lo + step : hi;
    lo = new_lo;
  }
  return lo;
}

}  // namespace device
}  // namespace gpu
