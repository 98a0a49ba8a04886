// exclusive_scan_cuda (bench_kernels/scan.h): the GVLE paper's segmented atomic inter-block scan as a
// stand-alone scan kernel, and CUB's DeviceScan behind the same call.
#include <algorithm>
#include <atomic>

#include <cub/device/device_scan.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/tabulate_output_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "gpu/cuda_check.h"
#include "gpu/device/lookback.cuh"
#include "bench_kernels/scan.h"

namespace gpuec_bench {
namespace {

using gpu::device::segscan_publish;
using gpu::device::segscan_resolve;
using gpu::device::segscan_words;

// Tile: kScanThreads threads x kScanItems consecutive lengths each (4096 lengths); the next tile's
// lengths are loaded while the current one is scanned and stored (+25% at 2^28 items on the H200).
// Tuning record with scan_default_method() in src/scan.cpp.
constexpr int kScanThreads = 256;
constexpr int kScanItems = 16;
constexpr uint64_t kTileItems = uint64_t{kScanThreads} * kScanItems;
constexpr size_t kCountersBytes = 256;

struct ScanParams {
  const uint32_t* len;
  uint64_t n;
  uint64_t* offsets;
  uint64_t* total;
  uint32_t* counter;
  uint64_t* scan;
  uint32_t num_tiles;
  int len_aligned;  // len is 16-byte aligned
};

__device__ __forceinline__ uint32_t pad(uint32_t i) { return i + (i >> 4); }  // one spare word per 16

template <int kThreads, int kItems>
__global__ void __launch_bounds__(kThreads) segmented_scan_kernel(const ScanParams p) {
  constexpr int kWarps = kThreads / 32;
  constexpr uint32_t kWarpItems = 32 * kItems;
  static_assert(kItems % 16 == 0, "transpose padding and 16-byte loads assume 16 items per thread");
  __shared__ uint64_t s_warp_sum[kWarps];
  __shared__ uint32_t s_first, s_next;
  __shared__ uint64_t s_prefix;
  // Per-warp transpose buffer for coalesced stores: blocked (thread-contiguous) in, striped out.
  __shared__ uint64_t s_out[kWarps][kWarpItems + kWarpItems / 16];

  const uint32_t tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  if (tid == 0) s_first = atomicAdd(p.counter, 1u);
  __syncthreads();
  uint32_t idx = s_first;

  // This thread's kItems lengths of tile t (zeros past n).
  auto load = [&](uint32_t t, uint32_t (&v)[kItems]) {
    const uint64_t b = uint64_t{t} * (kThreads * kItems) + uint64_t{tid} * kItems;
    if (p.len_aligned && b + kItems <= p.n) {
      const uint4* q = reinterpret_cast<const uint4*>(p.len + b);
#pragma unroll
      for (int k = 0; k < kItems / 4; ++k) {
        const uint4 x = __ldcs(q + k);
        v[4 * k] = x.x, v[4 * k + 1] = x.y, v[4 * k + 2] = x.z, v[4 * k + 3] = x.w;
      }
    } else {
#pragma unroll
      for (int k = 0; k < kItems; ++k) v[k] = b + k < p.n ? __ldcs(p.len + b + k) : 0;
    }
  };
  uint32_t v[kItems], v_next[kItems];
  if (idx < p.num_tiles) load(idx, v);

  while (idx < p.num_tiles) {
    if (tid == 0) s_next = atomicAdd(p.counter, 1u);
    const uint64_t tile_base = uint64_t{idx} * (kThreads * kItems);
    const uint64_t base = tile_base + uint64_t{tid} * kItems;
    uint64_t sum = 0;
#pragma unroll
    for (int k = 0; k < kItems; ++k) sum += v[k];

    uint64_t incl = sum;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      const uint64_t y = __shfl_up_sync(0xffffffffu, incl, d);
      if (lane >= static_cast<uint32_t>(d)) incl += y;
    }
    if (lane == 31) s_warp_sum[warp] = incl;
    __syncthreads();  // A

    const uint32_t next = s_next;
    if (next < p.num_tiles) load(next, v_next);  // in flight while this tile is scanned and stored
    const uint64_t ws = lane < static_cast<uint32_t>(kWarps) ? s_warp_sum[lane] : 0;
    uint64_t wincl = ws;
#pragma unroll
    for (int d = 1; d < kWarps; d <<= 1) {
      const uint64_t y = __shfl_up_sync(0xffffffffu, wincl, d);
      if (lane >= static_cast<uint32_t>(d)) wincl += y;
    }
    const uint64_t tile_sum = __shfl_sync(0xffffffffu, wincl, kWarps - 1);
    const uint64_t warp_start = __shfl_sync(0xffffffffu, wincl - ws, warp);
    if (warp == 0) {
      segscan_publish(p.scan, idx, tile_sum);
      const uint64_t prefix = segscan_resolve(p.scan, idx, tile_sum);
      if (lane == 0) {
        s_prefix = prefix;
        if (idx == p.num_tiles - 1) *p.total = prefix + tile_sum;
      }
    }
    __syncthreads();  // B

    if (p.offsets) {
      uint64_t run = s_prefix + warp_start + incl - sum;
      const uint64_t warp_base = tile_base + uint64_t{warp} * kWarpItems;
      if (warp_base + kWarpItems <= p.n) {
        uint64_t* const t = s_out[warp];
#pragma unroll
        for (int k = 0; k < kItems; ++k) {
          t[pad(lane * kItems + k)] = run;
          run += v[k];
        }
        __syncwarp();
#pragma unroll
        for (int r = 0; r < kItems; ++r) {
          const uint32_t i = r * 32 + lane;
          __stcs(p.offsets + warp_base + i, t[pad(i)]);
        }
        __syncwarp();
      } else {
#pragma unroll
        for (int k = 0; k < kItems; ++k) {
          if (base + k < p.n) p.offsets[base + k] = run;
          run += v[k];
        }
      }
    }
    idx = next;
#pragma unroll
    for (int k = 0; k < kItems; ++k) v[k] = v_next[k];
  }
}

// ---- CUB: lengths widened on load; item n (a zero) carries the total to *total. ----
struct WidenOrZero {
  const uint32_t* len;
  uint64_t n;
  __host__ __device__ uint64_t operator()(int64_t i) const { return static_cast<uint64_t>(i) < n ? len[i] : 0; }
};

struct StoreOffset {
  uint64_t* offsets;
  uint64_t* total;
  uint64_t n;
  __host__ __device__ void operator()(int64_t i, uint64_t v) const {
    if (static_cast<uint64_t>(i) < n) {
      if (offsets) offsets[i] = v;
    } else {
      *total = v;
    }
  }
};

using CubIn = thrust::transform_iterator<WidenOrZero, thrust::counting_iterator<int64_t>>;
using CubOut = thrust::tabulate_output_iterator<StoreOffset>;

cudaError_t cub_scan(void* temp, size_t& temp_bytes, const uint32_t* len, uint64_t n, uint64_t* offsets,
                     uint64_t* total, cudaStream_t stream) {
  const CubIn in(thrust::counting_iterator<int64_t>(0), WidenOrZero{len, n});
  const CubOut out(StoreOffset{offsets, total, n});
  return cub::DeviceScan::ExclusiveSum(temp, temp_bytes, in, out, static_cast<int64_t>(n + 1), stream);
}


constexpr size_t align256(size_t x) { return (x + 255) & ~size_t{255}; }

constexpr int kMaxDevices = 64;
std::atomic<int> g_grid[kMaxDevices];  // persistent grid size per device

ScanMethod resolve(ScanMethod m) { return m == ScanMethod::kDefault ? scan_default_method() : m; }

}  // namespace

size_t scan_cuda_workspace_bytes(uint64_t n, ScanMethod m) {
  if (n == 0 || n > kScanCudaMaxItems) return 0;
  if (resolve(m) == ScanMethod::kCub) {
    size_t bytes = 0;
    if (cub_scan(nullptr, bytes, nullptr, n, nullptr, nullptr, nullptr) != cudaSuccess) return 0;
    return align256(bytes);
  }
  const uint64_t tiles = (n + kTileItems - 1) / kTileItems;
  return kCountersBytes + align256(segscan_words(tiles) * 8);
}

gpu::CudaError exclusive_scan_cuda(const uint32_t* len, uint64_t n, uint64_t* offsets, uint64_t* total,
                                   void* workspace, size_t workspace_bytes, ScanMethod m, cudaStream_t stream) {
  if (!total || n > kScanCudaMaxItems) return GPUEC_CUDA_INVALID();
  if (n == 0) {
    GPUEC_CUDA_CHECK(cudaMemsetAsync(total, 0, sizeof(uint64_t), stream));
    return {};
  }
  if (!len || !workspace || (reinterpret_cast<uintptr_t>(len) & 3) || (reinterpret_cast<uintptr_t>(offsets) & 7) ||
      (reinterpret_cast<uintptr_t>(workspace) & 255) || workspace_bytes < scan_cuda_workspace_bytes(n, m))
    return GPUEC_CUDA_INVALID();

  if (resolve(m) == ScanMethod::kCub) {
    size_t bytes = workspace_bytes;
    GPUEC_CUDA_CHECK(cub_scan(workspace, bytes, len, n, offsets, total, stream));
    return {};
  }

  const uint64_t tiles = (n + kTileItems - 1) / kTileItems;
  ScanParams p;
  p.len = len;
  p.n = n;
  p.offsets = offsets;
  p.total = total;
  p.counter = static_cast<uint32_t*>(workspace);
  p.scan = reinterpret_cast<uint64_t*>(static_cast<uint8_t*>(workspace) + kCountersBytes);
  p.num_tiles = static_cast<uint32_t>(tiles);
  p.len_aligned = (reinterpret_cast<uintptr_t>(len) & 15) == 0;

  // Persistent grid: full occupancy, cached per device.
  int dev = 0;
  GPUEC_CUDA_CHECK(cudaGetDevice(&dev));
  int grid = dev >= 0 && dev < kMaxDevices ? g_grid[dev].load(std::memory_order_relaxed) : 0;
  if (grid == 0) {
    int sms = 0, per_sm = 0;
    GPUEC_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    GPUEC_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, segmented_scan_kernel<kScanThreads, kScanItems>, kScanThreads, 0));
    grid = sms * (per_sm > 0 ? per_sm : 1);
    if (dev >= 0 && dev < kMaxDevices) g_grid[dev].store(grid, std::memory_order_relaxed);
  }
  const unsigned blocks = static_cast<unsigned>(std::min<uint64_t>(tiles, static_cast<uint64_t>(grid)));
  GPUEC_CUDA_CHECK(cudaMemsetAsync(workspace, 0, kCountersBytes + segscan_words(tiles) * 8, stream));
  segmented_scan_kernel<kScanThreads, kScanItems><<<blocks, kScanThreads, 0, stream>>>(p);
  GPUEC_CUDA_CHECK_LAUNCH();
  return {};
}

}  // namespace gpuec_bench
