// The CUDA segment packer (bench_kernels/pack_cuda.h): one kernel, one block per output tile (grid-stride
// over tiles, a resident grid).
//   - The block finds the segment that holds the tile's first bit with a 256-way search over the
//     offsets (3 rounds of probes for 16M segments), so no pre-pass and no workspace.
//   - It walks the tile's segments kThreads at a time (metadata loaded one chunk ahead). A segment
//     touching at most kDirectWords tile words is written by its own thread ("direct": CAVLC codes);
//     longer ones become items (segment, word) that a block scan shares out evenly over all threads
//     ("cooperative"), so a 2^20-bit segment costs the same per word as a run of short ones.
//   - Each word's bits come from one or two source words by a funnel shift and go into the tile in
//     shared memory (atomicOr at seams, plain store for a word one segment covers); the tile then
//     leaves as coalesced big-endian words. Every output word is written once; no global atomics.
// Why, measured on the H200 (tools/bench/bench_pack_gpu.cu; copy bandwidth 4.26 TB/s read + write):
//   1080p frame (220k segments of 0..200 bits, 2.75 MB): 13.7 us (a memcpy of the same traffic: 7.3)
//   16 frames (3.5M segments, 44 MB): 115 us; 16M segments of 0..32 bits: 237 us
//   2048 segments of 0..2^20 bits (137 MB): 207 us, 1.3 TB/s of traffic (31 % of copy)
// Alternatives measured in the same harness: a thread per segment with global atomicOr at the seams
// after a memset of the output: 13.8 us, 130 us, 177 us and 11950 us (one thread per long segment);
// tiles with every segment shared out as items and a tile_first pre-pass instead of the search:
// 18.1, 167, 410 and 239 us. So: the direct path for short segments, items only for long ones, the
// in-kernel search; 8 KiB tiles keep a single frame spread over the GPU (16 KiB: 19.8 us for it),
// 16 KiB tiles with 6 blocks per SM move more bytes per round trip on outputs of 32 MiB or more
// (2048 x 2^20: 204 vs 269 us). Nsight Compute on the 2^20 case: SM 60 %, DRAM 25 %, 66 % occupancy
// (registers): instruction-bound per item, so a whole-tile-in-one-segment fast path is the next step.
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/cuda_check.h"
#include "gpu/device/search.cuh"
#include "bench_kernels/pack_cuda.h"

namespace gpuec_bench {
namespace {

constexpr int kThreads = 256;    // threads per block, also segments per chunk
constexpr int kBatch = 4;        // cooperative items per thread in flight (independent loads)
constexpr int kDirectWords = 8;  // segments touching up to this many tile words are written by their thread

// Source word access: start(i) is segment i's first source bit, word(w) source word w as a value
// whose most significant bit is source bit 32 w.
struct WordSource {
  const uint32_t* words;
  const uint32_t* first_word;
  __device__ uint64_t start(uint64_t i) const { return uint64_t{__ldg(first_word + i)} << 5; }
  __device__ uint32_t word(uint64_t w) const { return __ldg(words + w); }
};

struct ByteSource {
  const uint32_t* words;  // the byte stream, 4-byte aligned
  const uint64_t* src_bit;
  __device__ uint64_t start(uint64_t i) const { return __ldg(src_bit + i); }
  __device__ uint32_t word(uint64_t w) const { return __byte_perm(__ldg(words + w), 0, 0x0123); }
};

// Mask of m bits (1..32) starting d bits (0..31) below the most significant bit.
__device__ __forceinline__ uint32_t bit_mask(int d, int m) {
  const uint32_t below = d + m >= 32 ? 0u : 0xFFFFFFFFu >> (d + m);
  return (0xFFFFFFFFu >> d) & ~below;
}

// The bits that segment [so, se) (stream bits, source starting at source bit q0) puts into the
// stream word whose first bit is wb, placed where they belong in that word; *full when the segment
// covers the whole word. Reads the one or two source words that hold those bits.
template <class Src>
__device__ __forceinline__ uint32_t word_bits(const Src& src, uint64_t so, uint64_t se, uint64_t q0, uint64_t wb,
                                              bool* full) {
  const uint64_t a = so > wb ? so : wb;
  const uint64_t e = se < wb + 32 ? se : wb + 32;
  const int m = static_cast<int>(e - a), d = static_cast<int>(a - wb);
  const uint64_t q = q0 + (a - so);
  const int sh = static_cast<int>(q & 31);
  const uint32_t hi = src.word(q >> 5);
  const uint32_t lo = sh + m > 32 ? src.word((q >> 5) + 1) : 0u;
  const uint32_t v = __funnelshift_l(lo, hi, sh);
  *full = m == 32;
  return m == 32 ? v : (v >> d) & bit_mask(d, m);
}

// Index of the segment holding stream bit tb (< total): the last i with offset[i] <= tb, found by
// the whole block in ceil(log256(n)) rounds of kThreads probes.
__device__ __forceinline__ uint64_t find_segment(const uint64_t* __restrict__ offset, uint64_t n, uint64_t tb) {
  return gpu::device::search_last<gpu::device::BlockGroup<kThreads>>(
      uint64_t{0}, n, [&](uint64_t i) { return offset[i] <= tb; });
}

// One block per output tile (grid-stride over tiles); see the file comment.
//   K: segments touching at most K tile words are written by their own thread ("direct");
//      longer ones are shared out as items over the whole block ("cooperative").
template <int TileWords, int Batch, int K, int MinBlocks, class Src>
__global__ void __launch_bounds__(kThreads, MinBlocks) pack_kernel(Src src, const uint32_t* __restrict__ len,
                                                        const uint64_t* __restrict__ offset, uint32_t n,
                                                        uint32_t* __restrict__ out, uint64_t out_words) {
  constexpr uint64_t kTileBits = uint64_t{TileWords} * 32;
  constexpr int kWarps = kThreads / 32;
  __shared__ uint32_t tile[TileWords];
  __shared__ uint64_t s_off[kThreads];
  __shared__ uint64_t s_q0[kThreads];
  __shared__ uint32_t s_len[kThreads];
  __shared__ uint32_t s_lo[kThreads];     // first tile word the segment touches
  __shared__ uint32_t s_start[kThreads];  // exclusive scan of the cooperative items per segment
  __shared__ uint32_t s_warp[kWarps];
  __shared__ int s_more[2];  // double-buffered: written before a barrier, read after it

  const int tid = threadIdx.x;
  const int lane = tid & 31, warp = tid >> 5;
  const uint64_t total = offset[n - 1] + len[n - 1];
  uint64_t words = (total + 31) >> 5;
  if (words > out_words) words = out_words;
  const uint64_t tiles = (words + TileWords - 1) / TileWords;

  for (uint64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    for (int i = tid; i < TileWords; i += kThreads) tile[i] = 0;
    const uint64_t tb = t * kTileBits;
    const uint64_t te = tb + kTileBits < total ? tb + kTileBits : total;
    __syncthreads();  // the zeroed tile before any thread's bits (find_segment has no barrier when n == 1)
    uint64_t s = find_segment(offset, n, tb);
    // Metadata of the chunk's segments, loaded one chunk ahead.
    uint64_t next_off = 0, next_q0 = 0;
    uint32_t next_len = 0;
    if (s + tid < n) {
      next_off = offset[s + tid];
      next_len = len[s + tid];
      next_q0 = src.start(s + tid);
    }
    for (int chunk = 0;; ++chunk) {
      const uint64_t i = s + tid;
      const uint64_t off = next_off, q0 = next_q0;
      const uint32_t l = next_len;
      if (i + kThreads < n) {
        next_off = offset[i + kThreads];
        next_len = len[i + kThreads];
        next_q0 = src.start(i + kThreads);
      }
      const uint64_t end = off + l;
      uint32_t lo_word = 0, c = 0;
      if (i < n && l != 0 && off < te && end > tb) {
        const uint64_t lo = off > tb ? off : tb;
        const uint64_t hi = end < te ? end : te;
        lo_word = static_cast<uint32_t>((lo - tb) >> 5);
        c = static_cast<uint32_t>((hi - 1 - tb) >> 5) - lo_word + 1;
      }
      if (c <= K) {
        for (uint32_t w = 0; w < c; ++w) {
          bool full;
          const uint32_t v = word_bits(src, off, end, q0, tb + uint64_t{lo_word + w} * 32, &full);
          if (full) tile[lo_word + w] = v; else atomicOr(&tile[lo_word + w], v);
        }
      }
      if (tid == kThreads - 1) s_more[chunk & 1] = i + 1 < n && end < te;
      if (__syncthreads_or(c > K)) {  // block-uniform: some segment needs the cooperative path
        const uint32_t items_mine = c > K ? c : 0;
        uint32_t incl = items_mine;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
          const uint32_t v = __shfl_up_sync(0xFFFFFFFFu, incl, d);
          if (lane >= d) incl += v;
        }
        if (lane == 31) s_warp[warp] = incl;
        s_off[tid] = off;
        s_q0[tid] = q0;
        s_len[tid] = l;
        s_lo[tid] = lo_word;
        // Segments starting before te are a prefix of the chunk: search only those.
        const int live = __syncthreads_count(i < n && off < te);
        uint32_t warp_base = 0, items = 0;
#pragma unroll
        for (int w = 0; w < kWarps; ++w) {
          const uint32_t v = s_warp[w];
          if (w < warp) warp_base += v;
          items += v;
        }
        s_start[tid] = warp_base + incl - items_mine;
        __syncthreads();
        for (uint32_t k0 = 0; k0 < items; k0 += kThreads * Batch) {
          uint32_t val[Batch];
          int wrel[Batch];
          bool full[Batch];
#pragma unroll
          for (int b = 0; b < Batch; ++b) {
            const uint32_t k = k0 + b * kThreads + tid;
            wrel[b] = -1;
            if (k < items) {
              int j = 0, hi = live - 1;  // the last j with s_start[j] <= k
              while (j < hi) {
                const int mid = (j + hi + 1) >> 1;
                if (s_start[mid] <= k) j = mid; else hi = mid - 1;
              }
              const uint64_t so = s_off[j];
              wrel[b] = static_cast<int>(s_lo[j] + (k - s_start[j]));
              val[b] = word_bits(src, so, so + s_len[j], s_q0[j], tb + uint64_t(wrel[b]) * 32, &full[b]);
            }
          }
#pragma unroll
          for (int b = 0; b < Batch; ++b) {
            if (wrel[b] < 0) continue;
            if (full[b]) tile[wrel[b]] = val[b]; else atomicOr(&tile[wrel[b]], val[b]);
          }
        }
        __syncthreads();
      }
      if (!s_more[chunk & 1]) break;
      s += kThreads;
    }
    __syncthreads();
    const uint64_t w0 = t * TileWords;
    for (int i = tid; i < TileWords; i += kThreads)
      if (w0 + i < words) out[w0 + i] = __byte_perm(tile[i], 0, 0x0123);
    __syncthreads();
  }
}

template <int TileWords, int MinBlocks, class Src>
gpu::CudaError pack_launch(Src src, const uint32_t* len, const uint64_t* offset, size_t n, uint8_t* out,
                           uint64_t out_bytes, cudaStream_t stream) {
  if (n >= (uint64_t{1} << 32) || out_bytes % 4 != 0 || reinterpret_cast<uintptr_t>(out) % 4 != 0)
    return GPUEC_CUDA_INVALID();
  const uint64_t tiles = (out_bytes / 4 + TileWords - 1) / TileWords;
  if (n == 0 || tiles == 0) return {};
  auto kernel = pack_kernel<TileWords, kBatch, kDirectWords, MinBlocks, Src>;
  int dev = 0, sms = 0, per_sm = 0;
  GPUEC_CUDA_CHECK(cudaGetDevice(&dev));
  GPUEC_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  GPUEC_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0));
  if (per_sm < 1) per_sm = 1;
  const uint64_t resident = uint64_t(sms) * per_sm;
  const unsigned grid = static_cast<unsigned>(tiles < resident ? tiles : resident);
  kernel<<<grid, kThreads, 0, stream>>>(src, len, offset, static_cast<uint32_t>(n), reinterpret_cast<uint32_t*>(out),
                                        out_bytes / 4);
  GPUEC_CUDA_CHECK_LAUNCH();
  return {};
}

template <class Src>
gpu::CudaError pack_dispatch(Src src, const uint32_t* len, const uint64_t* offset, size_t n, uint8_t* out,
                             uint64_t out_bytes, cudaStream_t stream) {
  if (out_bytes < kPackLargeOutputBytes)
    return pack_launch<kPackTileBytes / 4, 1>(src, len, offset, n, out, out_bytes, stream);
  return pack_launch<kPackLargeTileBytes / 4, 6>(src, len, offset, n, out, out_bytes, stream);
}

}  // namespace

gpu::CudaError pack_cuda(const WordSegments& s, uint8_t* out, uint64_t out_bytes, cudaStream_t stream) {
  return pack_dispatch(WordSource{s.words, s.first_word}, s.len, s.offset, s.n, out, out_bytes, stream);
}

gpu::CudaError pack_cuda(const ByteSegments& s, uint8_t* out, uint64_t out_bytes, cudaStream_t stream) {
  if (reinterpret_cast<uintptr_t>(s.src) % 4 != 0) return GPUEC_CUDA_INVALID();
  return pack_dispatch(ByteSource{reinterpret_cast<const uint32_t*>(s.src), s.src_bit}, s.len, s.offset, s.n, out,
                       out_bytes, stream);
}

}  // namespace gpuec_bench
