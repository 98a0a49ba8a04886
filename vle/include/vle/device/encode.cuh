// vle/device/encode.cuh: the GVLE encoder kernel of vle/encode_cuda.h as device code, a template over its
// tuning (threads per block, minimum blocks per SM, kLate). Production code calls encode_cuda (vle/encode_cuda.h),
// which runs the tuning of the tuning record (vle/src/cuda/encode.cu: kEncodeThreads, kEncodeMinBlocks,
// kEncodeLate); the benchmarks instantiate the other tunings and keep the retired kernel generations on this
// thread code (tools/bench/kernels). CUDA sources only.
//
// Layers: thread (load 32 symbols, 16 segments, emit the thread code with a gpu::device::WordSink), block
// (intra-block scan, block code in shared memory, coalesced 16-byte write-out), device (persistent grid,
// atomic block-input counter, the segmented look-back scan of gpu/device/lookback.cuh).
//
// Bit-level invariants:
//   - A block code is built unshifted in shared memory: word u of s_code holds block-code bits [32 u, 32 u +
//     32), MSB first, bits past the code zero. The block's start bit `pos` is only needed when the words are
//     copied out (funnel shift by pos % 32), so the inter-block look-back overlaps the assembly: each block
//     code is placed and written one block-input late, while the next block-input is encoded.
//   - Inside the block the threads' codes meet at seams as WordSink documents: the owner of a word is the
//     thread whose code holds the word's last bit (it stores the word with zeros for the bits before its
//     code), a thread whose code ends inside a word ORs its trailing bits in after a barrier; the thread
//     whose code ends the block code stores its trailing word plainly.
//   - Between blocks: the output word holding the boundary between block-code i-1 and i (when the boundary
//     is not word aligned) gets bits from both. Each side adds its bits plus 1 << 32 to edge[i] (the bit sets
//     are disjoint, so the add is an OR); the side that sees the other's bits already there stores the
//     merged word. So every output word is stored exactly once and `out` needs no clearing. Every block code
//     except the last is >= 32 bits (>= 4096 symbols of >= 1 bit), so a word never holds bits of three
//     blocks (with invalid symbols it may: unspecified output, as documented, but never a write out of
//     bounds).
//   - Code table: one 32-bit entry per symbol, code left-aligned in bits [32 - len, 32) and len in bits 0..4
//     (kEntryBad in bit 10 for a symbol without code; bits 5..15 otherwise zero). One shared load per symbol;
//     two funnel shifts (which use only the low 5 bits of the shift, so the entry is its own shift count)
//     append a code to a segment: (s << len) | code. The entries' sum keeps the lengths in its low 16 bits
//     (codes sit at bit 16 and up and only carry upward): the thread length is (sum & 0x3ff), a bad symbol
//     shows in bits 10..15, and the low byte of a pair's sum is the segment length (packed 4 per register).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "gpu/cuda_check.h"
#include "gpu/device/lookback.cuh"
#include "gpu/device/word_sink.cuh"
#include "vle/encode.h"
#include "vle/encode_cuda.h"
#include "vle/huffman.h"

namespace vle {
namespace device {

using gpu::device::segscan_peek;
using gpu::device::segscan_publish;
using gpu::device::segscan_resolve;
using gpu::device::segscan_words;
using gpu::device::SegScanPeek;

constexpr int kSymbolsPerThread = 32;
constexpr int kSegments = kSymbolsPerThread / 2;

struct DeviceTable {
  uint16_t val[256];  // code, right-aligned, masked to len bits
  uint8_t len[256];   // 0: no code
};

struct EncodeParams {
  DeviceTable table;          // the retired kernel 1 only (tools/bench/kernels)
  uint32_t packed[256];       // left-aligned code | len, or kEntryBad
  const uint8_t* in;
  uint64_t n;
  uint32_t num_blocks;        // block-inputs
  uint32_t blocks_per_chunk;  // kChunkSymbols / symbols per block-input
  uint32_t* out;
  uint64_t* chunk_bits;
  uint64_t* total_bits;
  uint32_t* counters;  // [0] next block-input, [1] blocks finished, [2] some symbol had no code
  uint64_t* scan;      // segscan_words(num_blocks)
  uint64_t* edges;     // [num_blocks] merge slots for the word at the start of block-code i
  int aligned;         // in is 16-byte aligned
  uint32_t full_blocks;  // block-inputs [0, full_blocks) are whole and `in` is aligned
};

// Workspace layout: counters | scan | edges, each 256-byte aligned.
constexpr size_t kCountersBytes = 256;
constexpr size_t align256(size_t x) { return (x + 255) & ~size_t{255}; }
constexpr size_t workspace_for(uint64_t num_blocks) {
  return kCountersBytes + align256(segscan_words(num_blocks) * 8) + align256(num_blocks * 8);
}

__device__ __forceinline__ uint32_t shared_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

struct ThreadInput {
  uint32_t w[8];   // symbols 4 k .. 4 k + 3 in bytes 0..3 of w[k]
  uint32_t count;  // valid symbols, 0..32
};

__device__ __forceinline__ void load_input(const EncodeParams& p, uint64_t ti, ThreadInput& t) {
  const uint64_t first = ti * kSymbolsPerThread;
  if (p.aligned && first + kSymbolsPerThread <= p.n) {
    // The paper's uchar32: one 32-byte load (two 16-byte vectors on sm_90), read once: streaming.
    const uint4* q = reinterpret_cast<const uint4*>(p.in + first);
    const uint4 a = __ldcs(q), b = __ldcs(q + 1);
    t.w[0] = a.x, t.w[1] = a.y, t.w[2] = a.z, t.w[3] = a.w;
    t.w[4] = b.x, t.w[5] = b.y, t.w[6] = b.z, t.w[7] = b.w;
    t.count = kSymbolsPerThread;
    return;
  }
  const uint64_t left = first < p.n ? p.n - first : 0;
  t.count = static_cast<uint32_t>(left < kSymbolsPerThread ? left : kSymbolsPerThread);
#pragma unroll
  for (int k = 0; k < 8; ++k) t.w[k] = 0;
#pragma unroll
  for (int i = 0; i < kSymbolsPerThread; ++i)
    if (i < static_cast<int>(t.count)) t.w[i >> 2] |= static_cast<uint32_t>(__ldcs(p.in + first + i)) << (8 * (i & 3));
}

// Dynamic shared memory of a tuning: its two block-code buffers (s_code[-1] .. s_code[kCodeWords]).
__host__ __device__ constexpr size_t code_buffer_words(int threads) { return size_t(threads) * kSymbolsPerThread * kMaxCodeLength / 32 + 2; }

constexpr uint32_t kEntryBad = 1u << 10;

template <int kRep>
__device__ __forceinline__ uint32_t tab_entry(const uint32_t* s_tab, uint32_t b, uint32_t lane) {
  return kRep == 1 ? s_tab[b] : s_tab[b * kRep + (lane & (kRep - 1))];
}

// Steps 4-5: 16 segments seg[k] = code(2k) code(2k+1) right-aligned, lengths as bytes of lens.
// Returns the raw entry sum (thread length in bits 0..9, bad symbols in bits 10..15).
template <bool kTail, int kRep>
__device__ __forceinline__ uint32_t build_segments(const ThreadInput& t, const uint32_t* s_tab, uint32_t lane,
                                                    uint32_t (&seg)[kSegments], uint32_t (&lens)[kSegments / 4]) {
  uint32_t raw = 0, half = 0, two = 0;
#pragma unroll
  for (int k = 0; k < kSegments; ++k) {
    const uint32_t word = t.w[k >> 1];
    uint32_t e0 = tab_entry<kRep>(s_tab, __byte_perm(word, 0, 0x4440 | (2 * (k & 1))), lane);
    uint32_t e1 = tab_entry<kRep>(s_tab, __byte_perm(word, 0, 0x4441 | (2 * (k & 1))), lane);
    if (kTail) {
      e0 = 2 * k < static_cast<int>(t.count) ? e0 : 0u;
      e1 = 2 * k + 1 < static_cast<int>(t.count) ? e1 : 0u;
    }
    seg[k] = __funnelshift_l(e1, __funnelshift_l(e0, 0u, e0), e1);
    const uint32_t p = e0 + e1;
    raw += p;
    if ((k & 1) == 0) {
      half = p;
    } else {
      const uint32_t b2 = __byte_perm(half, p, 0x0040);  // bytes: L(k-1), L(k)
      if ((k & 2) == 0) two = b2;
      else lens[k >> 2] = __byte_perm(two, b2, 0x5410);
    }
  }
  return raw;
}

// ---- The kernel (kernel 3 of the tuning record; kernel 2's thread code on a leaner loop) ----
// Per block-input overhead cut against kernel 2: warp scan with predicated shuffles (2 instructions a step),
// block scan with two warp reductions (REDUX), the emission's store address advanced by 4 at each crossing,
// the write-out parameters of a block computed once (warp 0, lane 0) and read from shared memory, 32-bit
// index arithmetic for whole block-inputs.

// Inclusive warp scan: shfl.up's predicate says whether the source lane exists.
__device__ __forceinline__ uint32_t warp_incl_scan(uint32_t x) {
#pragma unroll
  for (int d = 1; d < 32; d <<= 1)
    asm("{\n\t.reg .u32 y;\n\t.reg .pred p;\n\tshfl.sync.up.b32 y|p, %0, %1, 0, -1;\n\t@p add.u32 %0, %0, y;\n\t}"
        : "+r"(x)
        : "r"(d));
  return x;
}

// Sum over the warp: one REDUX on sm_80 and later (the build also embeds compute_75 PTX).
__device__ __forceinline__ uint32_t warp_sum(uint32_t x) {
#if __CUDA_ARCH__ >= 800
  return __reduce_add_sync(0xffffffffu, x);
#else
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) x += __shfl_xor_sync(0xffffffffu, x, d);
  return x;
#endif
}

// Step 7: the thread code (16 segments, starting at block-code bit `start`) into the block code in shared
// memory through a WordSink: `addr` (shared) is the word holding bit `start`; words stored as they complete.
// Returns the end bit; *tail = the trailing partial word (WordSink::tail, valid when end % 32 != 0).
__device__ __forceinline__ uint32_t emit_thread_code(const uint32_t (&seg)[kSegments],
                                                     const uint32_t (&lens)[kSegments / 4], uint32_t start,
                                                     uint32_t addr, uint32_t* tail) {
  gpu::device::WordSink<gpu::device::SharedWords> sink(start, gpu::device::SharedWords{addr});
#pragma unroll
  for (int k = 0; k < kSegments; ++k) sink.put(seg[k], __byte_perm(lens[k >> 2], 0, 0x4440 | (k & 3)));
  *tail = sink.tail();
  return sink.q;
}

// Write-out parameters of a placed block code, made by one thread: 16-byte stores for the words aligned
// to 16 bytes in `out`, the up to 3 + 3 words around them and the two edge words one per thread.
struct WriteOutPlan {
  uint32_t* out;    // word 0 of the block code in `out` (pos / 32)
  uint32_t shift;   // pos % 32
  uint32_t ka;      // first word of the 16-byte groups
  uint32_t groups;  // 16-byte groups
  uint32_t kb;      // first plain word
  uint32_t ke;      // end of the plain words
  uint32_t edges;   // bit 0: word 0 is the head edge; bit 1: word nw - 1 is the tail edge
  uint32_t nw;      // words
  uint32_t idx;     // block-input
};

__device__ __forceinline__ void plan_write_out(const EncodeParams& p, uint64_t pos, uint32_t bits, uint32_t idx,
                                               WriteOutPlan* w) {
  const uint32_t shift = static_cast<uint32_t>(pos & 31);
  uint32_t* const out = p.out + (pos >> 5);
  const uint32_t nw = (shift + bits + 31) >> 5;
  const bool head = shift != 0;
  const bool tail = ((shift + bits) & 31) != 0 && idx != p.num_blocks - 1 && !(head && nw == 1);
  const uint32_t kb = head ? 1u : 0u, ke = nw - (tail ? 1u : 0u);
  const uint32_t ka = kb + ((0u - static_cast<uint32_t>(reinterpret_cast<uintptr_t>(out + kb) >> 2)) & 3u);
  w->out = out;
  w->shift = shift;
  w->ka = ka;
  w->groups = ka < ke ? (ke - ka) >> 2 : 0u;
  w->kb = kb;
  w->ke = ke;
  w->edges = (head ? 1u : 0u) | (tail ? 2u : 0u);
  w->nw = nw;
  w->idx = idx;
}

// Step 8 from a plan. kEarlyEdges: the two edge words' atomics
// first and their dependent stores last, so that the groups hide the atomics' round trip.
template <int kThreads, bool kEarlyEdges>
__device__ __forceinline__ void write_out(const EncodeParams& p, const uint32_t* s_code, const WriteOutPlan& w) {
  const uint32_t shift = w.shift, groups = w.groups;
  uint32_t* const out = w.out;
  const uint32_t r = kThreads - 1 - threadIdx.x;  // the last 8 threads take the single words
  unsigned long long old = 0;
  uint32_t ek = 0xffffffffu, ew = 0;
  if (kEarlyEdges && r - 6 < 2) {
    if (w.edges & (r == 6 ? 1u : 2u)) {
      ek = r == 6 ? 0u : w.nw - 1;
      ew = __funnelshift_r(s_code[ek], s_code[static_cast<int>(ek) - 1], shift);
      old = atomicAdd(reinterpret_cast<unsigned long long*>(p.edges + (r == 6 ? w.idx : w.idx + 1)),
                      (1ull << 32) | ew);
    }
  }
#pragma unroll 1
  for (uint32_t g = threadIdx.x; g < groups; g += kThreads) {
    const int k = static_cast<int>(w.ka + 4 * g);
    const uint32_t a = s_code[k - 1], b = s_code[k], c = s_code[k + 1], d = s_code[k + 2], e = s_code[k + 3];
    uint4 v;
    v.x = __byte_perm(__funnelshift_r(b, a, shift), 0, 0x0123);
    v.y = __byte_perm(__funnelshift_r(c, b, shift), 0, 0x0123);
    v.z = __byte_perm(__funnelshift_r(d, c, shift), 0, 0x0123);
    v.w = __byte_perm(__funnelshift_r(e, d, shift), 0, 0x0123);
    *reinterpret_cast<uint4*>(out + k) = v;
  }
  if (r < (kEarlyEdges ? 6u : 8u)) {
    const uint32_t ka = w.ka, ke = w.ke, kb = w.kb;
    const uint32_t lo_end = ka < ke ? ka : ke;
    const uint32_t hi_beg = ka + 4 * groups;
    uint32_t k = 0xffffffffu;
    if (r < 3) k = kb + r < lo_end ? kb + r : k;
    else if (r < 6) k = hi_beg + (r - 3) < ke ? hi_beg + (r - 3) : k;
    else if (r == 6) k = (w.edges & 1) ? 0u : k;
    else k = (w.edges & 2) ? w.nw - 1 : k;
    if (k != 0xffffffffu) {
      const uint32_t word = __funnelshift_r(s_code[k], s_code[static_cast<int>(k) - 1], shift);
      if (r >= 6) {
        const unsigned long long o = atomicAdd(
            reinterpret_cast<unsigned long long*>(p.edges + (r == 6 ? w.idx : w.idx + 1)), (1ull << 32) | word);
        if (o >> 32) out[k] = __byte_perm(word | static_cast<uint32_t>(o), 0, 0x0123);
      } else {
        out[k] = __byte_perm(word, 0, 0x0123);
      }
    }
  }
  if (kEarlyEdges && ek != 0xffffffffu && (old >> 32)) out[ek] = __byte_perm(ew | static_cast<uint32_t>(old), 0, 0x0123);
}

// Warp 0, once block-input idx1 has its position: chunk index, total, write-out plan.
template <int kThreads>
__device__ __forceinline__ void place_block(const EncodeParams& p, uint32_t idx1, uint32_t bits1, uint64_t pos,
                                            WriteOutPlan* s_plan) {
  constexpr uint32_t kBlocksPerChunk = static_cast<uint32_t>(kChunkSymbols / (uint64_t(kThreads) * kSymbolsPerThread));
  if ((threadIdx.x & 31) == 0) {
    if (p.chunk_bits && idx1 % kBlocksPerChunk == 0) p.chunk_bits[idx1 / kBlocksPerChunk] = pos;
    if (p.total_bits && idx1 == p.num_blocks - 1) *p.total_bits = pos + bits1;
    plan_write_out(p, pos, bits1, idx1, s_plan);
  }
}

template <int kThreads, int kMinBlocks, bool kLate, bool kCheck>
__global__ void __launch_bounds__(kThreads, kMinBlocks) gvle_encode_kernel(const __grid_constant__ EncodeParams p) {
  constexpr int kWarps = kThreads / 32;
  constexpr uint32_t kBufWords = static_cast<uint32_t>(code_buffer_words(kThreads));
  static_assert(kWarps <= 32 && kThreads % 32 == 0, "block size");

  __shared__ uint32_t s_tab[256];
  __shared__ uint32_t s_warp_bits[kWarps];
  __shared__ uint32_t s_first, s_next;
  __shared__ WriteOutPlan s_plan;
  extern __shared__ uint32_t s_words[];  // two buffers of kBufWords; word 0 of each stays 0

  const uint32_t tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;

  for (uint32_t i = tid; i < 256; i += kThreads) s_tab[i] = p.packed[i];
  if (tid < 2) s_words[tid * kBufWords] = 0;
  if (tid == 0) s_first = atomicAdd(&p.counters[0], 1u);
  __syncthreads();

  // Whole block-inputs (16-byte aligned input): two 16-byte loads at in_t + idx * kThreads * 2.
  const uint4* const in_t = reinterpret_cast<const uint4*>(p.in) + tid * 2;
  uint32_t idx = s_first;
  ThreadInput cur;
  if (idx < p.full_blocks) {
    const uint4* q = in_t + static_cast<uint64_t>(idx) * (kThreads * 2);
    const uint4 a = __ldcs(q), b = __ldcs(q + 1);
    cur.w[0] = a.x, cur.w[1] = a.y, cur.w[2] = a.z, cur.w[3] = a.w;
    cur.w[4] = b.x, cur.w[5] = b.y, cur.w[6] = b.z, cur.w[7] = b.w;
    cur.count = kSymbolsPerThread;
  } else if (idx < p.num_blocks) {
    load_input(p, static_cast<uint64_t>(idx) * kThreads + tid, cur);
  }
  uint32_t bad = 0;
  uint32_t idx1 = 0xffffffffu, bits1 = 0, buf = 0;  // block-input 1: assembled last iteration
  SegScanPeek peek{};

  while (idx < p.num_blocks) {
    // kLate: the counter's answer is stored just before barrier A (its round trip overlaps pass 1
    // instead of holding warp 0 at the store).
    uint32_t next_t0 = 0;
    if (tid == 0) {
      next_t0 = atomicAdd(&p.counters[0], 1u);
      if (!kLate) s_next = next_t0;
    }
    if (warp == 0 && idx1 != 0xffffffffu) peek = segscan_peek(p.scan, idx1);

    uint32_t seg[kSegments], lens[kSegments / 4];
    const uint32_t raw = cur.count == kSymbolsPerThread ? build_segments<false, 1>(cur, s_tab, lane, seg, lens)
                                                        : build_segments<true, 1>(cur, s_tab, lane, seg, lens);
    const uint32_t my_bits = raw & 0x3ffu;
    if (kCheck) bad |= raw;

    // Step 6: intra-block scan of the thread-code lengths.
    const uint32_t incl = warp_incl_scan(my_bits);
    if (lane == 31) s_warp_bits[warp] = incl;
    if (kLate && tid == 0) s_next = next_t0;
    __syncthreads();  // A

    const uint32_t next = s_next;
    ThreadInput nxt;
    nxt.count = 0;
    if (next < p.full_blocks) {
      const uint4* q = in_t + static_cast<uint64_t>(next) * (kThreads * 2);
      const uint4 a = __ldcs(q), b = __ldcs(q + 1);
      nxt.w[0] = a.x, nxt.w[1] = a.y, nxt.w[2] = a.z, nxt.w[3] = a.w;
      nxt.w[4] = b.x, nxt.w[5] = b.y, nxt.w[6] = b.z, nxt.w[7] = b.w;
      nxt.count = kSymbolsPerThread;
    } else if (next < p.num_blocks) {
      load_input(p, static_cast<uint64_t>(next) * kThreads + tid, nxt);
    }

    const uint32_t wb = lane < static_cast<uint32_t>(kWarps) ? s_warp_bits[lane] : 0u;
    const uint32_t block_bits = warp_sum(wb);
    const uint32_t start = warp_sum(lane < warp ? wb : 0u) + incl - my_bits;

    if (warp == 0) {
      segscan_publish(p.scan, idx, block_bits);
      if (idx1 != 0xffffffffu) place_block<kThreads>(p, idx1, bits1, segscan_resolve(p.scan, idx1, bits1, peek), &s_plan);
    }

    // Step 7: this block-input into buffer buf.
    uint32_t* const s_code = s_words + buf * kBufWords + 1;
    uint32_t tail;
    const uint32_t end = emit_thread_code(seg, lens, start, shared_addr(s_code + (start >> 5)), &tail);
    const bool has_tail = (end & 31) != 0 && my_bits != 0;
    if (has_tail && end == block_bits) s_code[end >> 5] = tail;  // the last word: nobody else stores it
    if (tid == 0) s_code[(block_bits + 31) >> 5] = 0;
    __syncthreads();  // C
    if (has_tail && end != block_bits) atomicOr(&s_code[end >> 5], tail);
    // Block-input 1: complete since barrier C, placed by warp 0 above.
    if (idx1 != 0xffffffffu) write_out<kThreads, kLate>(p, s_words + (buf ^ 1) * kBufWords + 1, s_plan);

    idx1 = idx, bits1 = block_bits;
    buf ^= 1;
    idx = next;
    cur = nxt;
  }

  if (idx1 != 0xffffffffu) {
    __syncthreads();  // every thread has read s_plan in the last iteration
    if (warp == 0) place_block<kThreads>(p, idx1, bits1, segscan_resolve(p.scan, idx1, bits1), &s_plan);
    __syncthreads();  // the last block-input's trailing words and s_plan
    write_out<kThreads, kLate>(p, s_words + (buf ^ 1) * kBufWords + 1, s_plan);
  }

  if (kCheck) {
    const int any = __syncthreads_or((bad & 0xfc00u) != 0);
    if (tid == 0) {
      if (any) atomicOr(&p.counters[2], 1u);
      __threadfence();
      if (atomicAdd(&p.counters[1], 1u) == gridDim.x - 1) {
        __threadfence();
        if (p.total_bits && *reinterpret_cast<volatile uint32_t*>(&p.counters[2])) *p.total_bits = UINT64_MAX;
      }
    }
  }
}


// ---- Host side of a call, shared by encode_cuda and the benchmarks' tunings ----

// A call on n symbols with block-inputs of `threads` threads, its arguments checked as encode_cuda documents
// (vle/encode_cuda.h). *empty: n == 0 (total_bits written, nothing to launch). Otherwise *p holds the kernel
// parameters (the code table packed), *check whether some symbol of the table has no code (run the kernel
// with kCheck) and *clear the workspace bytes to zero before the launch.
inline gpu::CudaError prepare_call(int threads, const uint8_t* in, uint64_t n, const CodeTable& table, uint8_t* out,
                                   uint64_t* chunk_bits, uint64_t* total_bits, void* workspace,
                                   size_t workspace_bytes, cudaStream_t stream, EncodeParams* p, bool* check,
                                   size_t* clear, bool* empty) {
  *empty = false;
  if (n > kEncodeCudaMaxSymbols) return GPUEC_CUDA_INVALID();
  if (n == 0) {
    *empty = true;
    if (total_bits) GPUEC_CUDA_CHECK(cudaMemsetAsync(total_bits, 0, sizeof(uint64_t), stream));
    return {};
  }
  if (!in || !out || !workspace || (reinterpret_cast<uintptr_t>(out) & 3) ||
      (reinterpret_cast<uintptr_t>(workspace) & 255))
    return GPUEC_CUDA_INVALID();
  const uint64_t block_symbols = uint64_t(threads) * kSymbolsPerThread;
  const uint64_t num_blocks = (n + block_symbols - 1) / block_symbols;
  const size_t need = workspace_for(num_blocks);
  if (workspace_bytes < need) return GPUEC_CUDA_INVALID();

  *check = false;
  for (int s = 0; s < 256; ++s) {
    const int len = table.len[s];
    const bool ok = len >= 1 && len <= kMaxCodeLength;
    p->table.len[s] = static_cast<uint8_t>(ok ? len : 0);
    p->table.val[s] = static_cast<uint16_t>(ok ? table.code[s] & ((1u << len) - 1) : 0);
    p->packed[s] = ok ? (static_cast<uint32_t>(p->table.val[s]) << (32 - len)) | static_cast<uint32_t>(len) : kEntryBad;
    *check |= !ok;
  }
  uint8_t* const ws = static_cast<uint8_t*>(workspace);
  p->in = in;
  p->n = n;
  p->num_blocks = static_cast<uint32_t>(num_blocks);
  p->blocks_per_chunk = static_cast<uint32_t>(kChunkSymbols / block_symbols);
  p->out = reinterpret_cast<uint32_t*>(out);
  p->chunk_bits = chunk_bits;
  p->total_bits = total_bits;
  p->counters = reinterpret_cast<uint32_t*>(ws);
  p->scan = reinterpret_cast<uint64_t*>(ws + kCountersBytes);
  p->edges = reinterpret_cast<uint64_t*>(ws + kCountersBytes + align256(segscan_words(num_blocks) * 8));
  p->aligned = (reinterpret_cast<uintptr_t>(in) & 15) == 0;
  p->full_blocks = p->aligned ? static_cast<uint32_t>(n / block_symbols) : 0u;
  *clear = need;
  return {};
}

// The multiprocessor count and the blocks per SM of `kernel` at full occupancy (`threads` threads, `smem`
// bytes of dynamic shared memory, which above 48 KiB must be allowed explicitly, per device).
template <class Params>
gpu::CudaError occupancy(void (*kernel)(Params), int threads, size_t smem, int* sms, int* per_sm) {
  int dev = 0;
  GPUEC_CUDA_CHECK(cudaGetDevice(&dev));
  GPUEC_CUDA_CHECK(cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, dev));
  GPUEC_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  GPUEC_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(per_sm, kernel, threads, smem));
  return {};
}

}  // namespace device
}  // namespace vle
