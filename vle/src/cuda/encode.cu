// The GVLE encoder kernel (vle/encode_cuda.h). Layers: thread (load 32 symbols, 16 segments, emit
// words), block (intra-block scan, block code in shared memory, coalesced write), device (persistent
// grid, atomic block-input counter, inter-block scan of interblock_scan.cuh). Three generations, all
// bit-identical and all in the variant list (tuning record at the end): kernel 1 (the paper's, as
// tuned for the first H200 runs), kernel 2 (sm_90 thread code: one 32-bit table entry per symbol,
// funnel-shift segments, 64-bit window emission), kernel 3 (kernel 2's thread code, leaner
// per-block-input loop; the default).
//
// Bit-level invariants:
//   - A block code is built unshifted in shared memory: word u of s_code holds block-code bits
//     [32 u, 32 u + 32), MSB first, bits past the code zero. The block's start bit `pos` is only
//     needed when the words are copied out (funnel shift by pos % 32), so the inter-block look-back
//     overlaps the assembly (kPipe: it runs while the next block-input is encoded).
//   - Inside the block each word is written by one "owner" with a plain store, the other thread
//     with bits in it ORs them in after a barrier (the paper's first/last chunk split). Kernel 1:
//     the owner is the thread whose code holds the word's first bit, a thread whose code starts
//     inside a word ORs its leading bits. Kernels 2 and 3: the owner is the thread whose code holds
//     the word's last bit (it stores the word with zeros for the bits before its code), a thread
//     whose code ends inside a word ORs its trailing bits; the thread whose code ends the block
//     code stores its trailing word plainly.
//   - Between blocks: the output word holding the boundary between block-code i-1 and i (when the
//     boundary is not word aligned) gets bits from both. Each side adds its bits plus 1 << 32 to
//     edge[i] (the bit sets are disjoint, so the add is an OR); the side that sees the other's bits
//     already there stores the merged word. So every output word is stored exactly once and `out`
//     needs no clearing. Every block code except the last is >= 32 bits (>= 4096 symbols of >= 1
//     bit), so a word never holds bits of three blocks (with invalid symbols it may: unspecified
//     output, as documented, but never a write out of bounds).
#include <algorithm>
#include <atomic>
#include <cstring>

#include "gpu/cuda_check.h"
#include "interblock_scan.cuh"
#include "vle/encode_cuda.h"

namespace vle {
namespace {

using detail::scan_publish;
using detail::scan_resolve;
using detail::scan_words;

constexpr int kSymbolsPerThread = 32;
constexpr int kSegments = kSymbolsPerThread / 2;

struct DeviceTable {
  uint16_t val[256];  // code, right-aligned, masked to len bits
  uint8_t len[256];   // 0: no code
};

struct EncodeParams {
  DeviceTable table;          // kernel 1
  uint32_t packed[256];       // kernel 2: left-aligned code | len, or kEntryBad
  const uint8_t* in;
  uint64_t n;
  uint32_t num_blocks;        // block-inputs
  uint32_t blocks_per_chunk;  // kChunkSymbols / symbols per block-input
  uint32_t* out;
  uint64_t* chunk_bits;
  uint64_t* total_bits;
  uint32_t* counters;  // [0] next block-input, [1] blocks finished, [2] some symbol had no code
  uint64_t* scan;      // scan_words(num_blocks)
  uint64_t* edges;     // [num_blocks] merge slots for the word at the start of block-code i
  int aligned;         // in is 16-byte aligned
  uint32_t full_blocks;  // kernel 3: block-inputs [0, full_blocks) are whole and `in` is aligned
};

// Workspace layout: counters | scan | edges, each 256-byte aligned.
constexpr size_t kCountersBytes = 256;
constexpr size_t align256(size_t x) { return (x + 255) & ~size_t{255}; }
constexpr size_t workspace_for(uint64_t num_blocks) {
  return kCountersBytes + align256(scan_words(num_blocks) * 8) + align256(num_blocks * 8);
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

// Step 5 of the paper: segment k = code(2k) followed by code(2k+1) (<= 32 bits). Returns the thread
// code length; min_len tracks the smallest length seen (0: a symbol without code) when kCheck.
template <bool kTail, bool kCheck, bool kFast>
__device__ __forceinline__ uint32_t build_segments(const ThreadInput& t, const uint16_t* s_val, const uint8_t* s_len,
                                                   uint32_t (&seg_val)[kSegments], uint32_t (&seg_len)[kSegments],
                                                   uint32_t& min_len) {
  uint32_t total = 0;
#pragma unroll
  for (int k = 0; k < kSegments; ++k) {
    const uint32_t word = t.w[k >> 1];
    // kFast: one byte permute per symbol index instead of a shift and a mask.
    const uint32_t b0 = kFast ? __byte_perm(word, 0, 0x4440 | (2 * (k & 1))) : (word >> (16 * (k & 1))) & 0xff;
    const uint32_t b1 = kFast ? __byte_perm(word, 0, 0x4441 | (2 * (k & 1))) : (word >> (16 * (k & 1) + 8)) & 0xff;
    uint32_t v0 = s_val[b0], v1 = s_val[b1];
    uint32_t l0 = s_len[b0], l1 = s_len[b1];
    if (kTail) {
      const bool ok0 = 2 * k < static_cast<int>(t.count), ok1 = 2 * k + 1 < static_cast<int>(t.count);
      if (kCheck) min_len = min(min_len, min(ok0 ? l0 : 255u, ok1 ? l1 : 255u));
      v0 = ok0 ? v0 : 0, l0 = ok0 ? l0 : 0;
      v1 = ok1 ? v1 : 0, l1 = ok1 ? l1 : 0;
    } else if (kCheck) {
      min_len = min(min_len, min(l0, l1));
    }
    seg_val[k] = (v0 << l1) | v1;
    seg_len[k] = l0 + l1;
    total += l0 + l1;
  }
  return total;
}


// Stores `word` at shared address `addr` when `pred` is nonzero, without a branch.
__device__ __forceinline__ void st_shared_if(uint32_t pred, uint32_t addr, uint32_t word) {
  asm volatile(
      "{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %0, 0;\n\t@p st.shared.u32 [%1], %2;\n\t}" ::"r"(pred), "r"(addr),
      "r"(word)
      : "memory");
}

// Step 7 for one thread: its code (16 segments, my_bits long, starting at block-code bit `start`)
// into the unshifted block code s_code. Words whose first bit is in this code are stored plainly;
// the leading partial word (start not word aligned) is returned in *lead (lead_word its index,
// 0xffffffff when there is none), to be ORed in after a barrier.
__device__ __forceinline__ void emit_branchy(const uint32_t (&seg_val)[kSegments], const uint32_t (&seg_len)[kSegments],
                                             uint32_t start, uint32_t my_bits, uint32_t* s_code, uint32_t* lead,
                                             uint32_t* lead_word) {
  uint32_t w = start >> 5, nb = start & 31;
  const uint32_t lw = (nb != 0 && my_bits != 0) ? w : 0xffffffffu;
  uint32_t ld = 0;
  uint64_t acc = 0;  // nb pending bits, right-aligned; the bits above them are stale
#pragma unroll
  for (int k = 0; k < kSegments; ++k) {
    acc = (acc << seg_len[k]) | seg_val[k];
    nb += seg_len[k];
    if (nb >= 32) {
      nb -= 32;
      const uint32_t word = static_cast<uint32_t>(acc >> nb);
      if (w == lw) ld = word; else s_code[w] = word;
      ++w;
    }
  }
  if (nb != 0 && my_bits != 0) {
    const uint32_t word = static_cast<uint32_t>(acc << (32 - nb));
    if (w == lw) ld = word; else s_code[w] = word;
  }
  *lead = ld;
  *lead_word = lw;
}

// The same without branches: q is the block-code bit after the last appended one; acc holds the
// latest <= 64 appended bits (bits before `start` count as zeros). A segment that crosses a word
// boundary completes the word ending there, acc >> (q % 32); the first completed word is the
// leading partial word when start is not word aligned and goes to *s_lead_slot instead.
__device__ __forceinline__ void emit_flat(const uint32_t (&seg_val)[kSegments], const uint32_t (&seg_len)[kSegments],
                                          uint32_t start, uint32_t my_bits, uint32_t* s_code, uint32_t* s_lead_slot,
                                          uint32_t* lead_word) {
  const bool has_lead = (start & 31) != 0 && my_bits != 0;
  uint32_t addr = has_lead ? shared_addr(s_lead_slot) : shared_addr(&s_code[start >> 5]);
  uint32_t next = shared_addr(&s_code[(start >> 5) + 1]);
  uint32_t q = start;
  uint64_t acc = 0;
#pragma unroll
  for (int k = 0; k < kSegments; ++k) {
    acc = (acc << seg_len[k]) | seg_val[k];
    const uint32_t q1 = q + seg_len[k];
    const uint32_t crossed = (q ^ q1) & ~31u;
    st_shared_if(crossed, addr, __funnelshift_r(static_cast<uint32_t>(acc), static_cast<uint32_t>(acc >> 32), q1));
    addr = crossed ? next : addr;
    next = crossed ? next + 4 : next;
    q = q1;
  }
  st_shared_if((q & 31) != 0 && my_bits != 0, addr, static_cast<uint32_t>(acc) << (32 - (q & 31)));
  *lead_word = has_lead ? start >> 5 : 0xffffffffu;
}

// Step 8: block code (bits long, unshifted in s_code, s_code[-1] == 0 and s_code[ceil(bits/32)]
// == 0) to stream bit pos, with coalesced big-endian stores; the edge words merge through p.edges.
template <int kThreads>
__device__ __forceinline__ void write_block_code(const EncodeParams& p, const uint32_t* s_code, uint64_t pos,
                                                 uint32_t bits, uint32_t idx) {
  const uint32_t shift = static_cast<uint32_t>(pos & 31);
  uint32_t* const out = p.out + (pos >> 5);
  const uint32_t nw = (shift + bits + 31) >> 5;
  const bool tail_shared = ((shift + bits) & 31) != 0 && idx != p.num_blocks - 1;
  for (uint32_t k = threadIdx.x; k < nw; k += kThreads) {
    const uint32_t word = __funnelshift_r(s_code[k], s_code[static_cast<int>(k) - 1], shift);
    const bool head = k == 0 && shift != 0;
    const bool tail = k == nw - 1 && tail_shared && !head;
    if (head || tail) {
      const unsigned long long old = atomicAdd(
          reinterpret_cast<unsigned long long*>(p.edges + (head ? idx : idx + 1)), (1ull << 32) | word);
      if (old >> 32) out[k] = __byte_perm(word | static_cast<uint32_t>(old), 0, 0x0123);
    } else {
      out[k] = __byte_perm(word, 0, 0x0123);
    }
  }
}

// Warp 0, lane 0, once the block-input idx has its stream bit pos: chunk index and total.
__device__ __forceinline__ void record_position(const EncodeParams& p, uint32_t idx, uint64_t pos, uint32_t bits) {
  if (p.chunk_bits && idx % p.blocks_per_chunk == 0) p.chunk_bits[idx / p.blocks_per_chunk] = pos;
  if (p.total_bits && idx == p.num_blocks - 1) *p.total_bits = pos + bits;
}

// Dynamic shared memory of a variant: its block-code buffers (s_code[-1] .. s_code[kCodeWords]).
__host__ __device__ constexpr size_t code_buffer_words(int threads) { return size_t(threads) * kSymbolsPerThread * kMaxCodeLength / 32 + 2; }

// kPrefetch: load the next block-input while encoding the current one.
// kPipe: resolve the block offset and write the block code one iteration late, from a second
//   buffer, so that the look-back of block-input k runs while k + 1 is encoded (its predecessors
//   have long published) and no barrier waits for it; two barriers per block-input instead of three.
// kFast: byte permutes for the table indices and branch-free word emission (emit_flat).
// kPrefetch = kPipe = kFast = false is the paper's kernel as published.
template <int kThreads, bool kPrefetch, bool kPipe, bool kFast, bool kCheck>
__global__ void __launch_bounds__(kThreads, 1024 / kThreads) gvle_encode_kernel(const __grid_constant__ EncodeParams p) {
  constexpr int kWarps = kThreads / 32;
  constexpr uint32_t kBufWords = static_cast<uint32_t>(code_buffer_words(kThreads));
  static_assert(kWarps <= 32 && kThreads % 32 == 0, "block size");

  __shared__ uint16_t s_val[256];
  __shared__ uint8_t s_len[256];
  __shared__ uint32_t s_warp_bits[kWarps];
  __shared__ uint32_t s_first, s_next;
  __shared__ uint64_t s_pos;
  __shared__ uint32_t s_lead[kFast ? kThreads : 1];  // kFast: each thread's leading partial word
  // One or two (kPipe) block-code buffers; buffer b is s_words[b * kBufWords ..], its s_code[-1]
  // (first word) stays 0 for the funnel shift of word 0.
  extern __shared__ uint32_t s_words[];

  const uint32_t tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;

  // Step 1: the code table into shared memory.
  for (uint32_t i = tid; i < 256; i += kThreads) {
    s_val[i] = p.table.val[i];
    s_len[i] = p.table.len[i];
  }
  if (tid == 0) {
    s_words[0] = 0;
    if (kPipe) s_words[kBufWords] = 0;
    s_first = atomicAdd(&p.counters[0], 1u);
  }
  __syncthreads();

  // Step 2: the first block-input.
  uint32_t idx = s_first;
  ThreadInput cur;
  if (idx < p.num_blocks) load_input(p, static_cast<uint64_t>(idx) * kThreads + tid, cur);
  uint32_t min_len = 255;
  // kPipe: the previous block-input, assembled in buffer prev_buf, not yet placed.
  uint32_t prev_idx = 0xffffffffu, prev_bits = 0, buf = 0;
  detail::ScanPeek peek{};

  while (idx < p.num_blocks) {
    if (tid == 0) s_next = atomicAdd(&p.counters[0], 1u);
    if (kPipe && warp == 0 && prev_idx != 0xffffffffu) peek = detail::scan_peek(p.scan, prev_idx);
    uint32_t* const s_code = s_words + buf * kBufWords + 1;

    // Steps 4-5: thread code as 16 segments in registers.
    uint32_t seg_val[kSegments], seg_len[kSegments];
    const uint32_t my_bits = cur.count == kSymbolsPerThread
                                 ? build_segments<false, kCheck, kFast>(cur, s_val, s_len, seg_val, seg_len, min_len)
                                 : build_segments<true, kCheck, kFast>(cur, s_val, s_len, seg_val, seg_len, min_len);

    // Step 6: intra-block scan of the thread-code lengths.
    uint32_t incl = my_bits;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      const uint32_t y = __shfl_up_sync(0xffffffffu, incl, d);
      if (lane >= static_cast<uint32_t>(d)) incl += y;
    }
    if (lane == 31) s_warp_bits[warp] = incl;
    __syncthreads();  // A

    const uint32_t next = s_next;
    ThreadInput nxt;
    nxt.count = 0;
    if (kPrefetch && next < p.num_blocks) load_input(p, static_cast<uint64_t>(next) * kThreads + tid, nxt);

    const uint32_t wb = lane < static_cast<uint32_t>(kWarps) ? s_warp_bits[lane] : 0;
    uint32_t wincl = wb;
#pragma unroll
    for (int d = 1; d < kWarps; d <<= 1) {
      const uint32_t y = __shfl_up_sync(0xffffffffu, wincl, d);
      if (lane >= static_cast<uint32_t>(d)) wincl += y;
    }
    const uint32_t block_bits = __shfl_sync(0xffffffffu, wincl, kWarps - 1);
    const uint32_t start = __shfl_sync(0xffffffffu, wincl - wb, warp) + incl - my_bits;

    if (warp == 0) {
      scan_publish(p.scan, idx, block_bits);
      if (kPipe && prev_idx != 0xffffffffu) {
        const uint64_t pos = scan_resolve(p.scan, prev_idx, prev_bits, peek);
        if (lane == 0) {
          s_pos = pos;
          record_position(p, prev_idx, pos, prev_bits);
        }
      }
    }

    // Step 7: the block code in shared memory.
    uint32_t lead = 0, lead_word;
    if (kFast) emit_flat(seg_val, seg_len, start, my_bits, s_code, &s_lead[tid], &lead_word);
    else emit_branchy(seg_val, seg_len, start, my_bits, s_code, &lead, &lead_word);
    if (tid == 0) s_code[(block_bits + 31) >> 5] = 0;
    __syncthreads();  // C
    if (lead_word != 0xffffffffu) atomicOr(&s_code[lead_word], kFast ? s_lead[tid] : lead);

    if (kPipe) {
      // Step 8 for the previous block-input (its buffer is not touched in this iteration).
      if (prev_idx != 0xffffffffu) write_block_code<kThreads>(p, s_words + (buf ^ 1) * kBufWords + 1, s_pos, prev_bits, prev_idx);
      prev_idx = idx;
      prev_bits = block_bits;
      buf ^= 1;
    } else {
      if (warp == 0) {
        const uint64_t pos = scan_resolve(p.scan, idx, block_bits);
        if (lane == 0) {
          s_pos = pos;
          record_position(p, idx, pos, block_bits);
        }
      }
      __syncthreads();  // D
      write_block_code<kThreads>(p, s_code, s_pos, block_bits, idx);
    }

    // Step 9: the next block-input.
    idx = next;
    if (kPrefetch) {
      cur = nxt;
    } else if (idx < p.num_blocks) {
      load_input(p, static_cast<uint64_t>(idx) * kThreads + tid, cur);
    }
  }

  if (kPipe && prev_idx != 0xffffffffu) {
    __syncthreads();  // every thread has read s_pos in the last iteration's write-out
    if (warp == 0) {
      const uint64_t pos = scan_resolve(p.scan, prev_idx, prev_bits);
      if (lane == 0) {
        s_pos = pos;
        record_position(p, prev_idx, pos, prev_bits);
      }
    }
    __syncthreads();  // the last block-input's leading words and s_pos
    write_block_code<kThreads>(p, s_words + (buf ^ 1) * kBufWords + 1, s_pos, prev_bits, prev_idx);
  }

  if (kCheck) {
    // A symbol without code makes the total UINT64_MAX; the last block to finish decides.
    const int bad = __syncthreads_or(min_len == 0);
    if (tid == 0) {
      if (bad) atomicOr(&p.counters[2], 1u);
      __threadfence();
      if (atomicAdd(&p.counters[1], 1u) == gridDim.x - 1) {
        __threadfence();
        if (p.total_bits && *reinterpret_cast<volatile uint32_t*>(&p.counters[2])) *p.total_bits = UINT64_MAX;
      }
    }
  }
}

// ---- Kernel 2 (sm_90 re-tuning; tuning record below) ----
// The same block-input / block-code / inter-block structure, with fewer instructions per symbol:
//   - Code table: one 32-bit entry per symbol, code left-aligned in bits [32 - len, 32) and len in
//     bits 0..4 (kEntryBad in bit 10 for a symbol without code; bits 5..15 otherwise zero). One
//     shared load per symbol; two funnel shifts (which use only the low 5 bits of the shift, so
//     the entry is its own shift count) append a code to a segment: (s << len) | code.
//   - The entries' sum keeps the lengths in its low 16 bits (codes sit at bit 16 and up and only
//     carry upward): the thread length is (sum & 0x3ff), a bad symbol shows in bits 10..15, and
//     the low byte of a pair's sum is the segment length (packed 4 per register for step 7).
//   - Step 7 appends segments to a 64-bit window (two funnel shifts); after each segment the last
//     completed word of the block code is floor(q / 32) - 1, read out of the window with one funnel
//     shift by q. The word where the thread starts is stored like the others, with zeros in the
//     bits of the previous thread; a thread's trailing partial word is ORed in after the barrier
//     (plainly stored by the thread whose code ends the block code).
//   - kOneBar: one barrier per block-input instead of two: three code buffers; block-input i is
//     assembled in iteration i, its trailing words ORed in iteration i + 1, placed and written in
//     iteration i + 2 (the look-back for i runs in iteration i + 1).
//   - kVecOut: the block code is written with 16-byte stores (words aligned to 16 bytes in `out`;
//     the up to 3 + 3 words around them and the two edge words one per thread).
//   - kRep: the table replicated kRep times (entry s of copy c at s * kRep + c, copy lane % kRep),
//     fewer bank conflicts for one more address instruction.
constexpr uint32_t kEntryBad = 1u << 10;

template <int kRep>
__device__ __forceinline__ uint32_t tab_entry(const uint32_t* s_tab, uint32_t b, uint32_t lane) {
  return kRep == 1 ? s_tab[b] : s_tab[b * kRep + (lane & (kRep - 1))];
}

// Steps 4-5: 16 segments seg[k] = code(2k) code(2k+1) right-aligned, lengths as bytes of lens.
// Returns the raw entry sum (thread length in bits 0..9, bad symbols in bits 10..15).
template <bool kTail, int kRep>
__device__ __forceinline__ uint32_t build_segments2(const ThreadInput& t, const uint32_t* s_tab, uint32_t lane,
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

// Step 7: the thread code from block-code bit `start` into s_code (see above). Returns the end bit;
// *tail = the trailing partial word (valid when end % 32 != 0).
template <bool kStoreAll>
__device__ __forceinline__ uint32_t emit2(const uint32_t (&seg)[kSegments], const uint32_t (&lens)[kSegments / 4],
                                          uint32_t start, uint32_t* s_code, uint32_t* tail) {
  uint32_t lo = 0, hi = 0, q = start;
  const uint32_t thr = (start | 31u) + 1u;  // the first word touched is complete from here on
#pragma unroll
  for (int k = 0; k < kSegments; ++k) {
    const uint32_t len = __byte_perm(lens[k >> 2], 0, 0x4440 | (k & 3));
    hi = __funnelshift_lc(lo, hi, len);
    lo = __funnelshift_lc(0u, lo, len) | seg[k];
    const uint32_t q1 = q + len;
    const uint32_t word = __funnelshift_r(lo, hi, q1);
    // kStoreAll: store the last completed word after every segment (again when nothing crossed);
    // else only when this segment crossed a word boundary.
    const bool st = kStoreAll ? q1 >= thr : (q ^ q1) >= 32u;
    if (st) s_code[(q1 >> 5) - 1] = word;
    q = q1;
  }
  *tail = __funnelshift_l(0u, lo, 0u - q);
  return q;
}

// Step 8 with 16-byte stores; same contract as write_block_code.
template <int kThreads>
__device__ __forceinline__ void write_block_code_vec(const EncodeParams& p, const uint32_t* s_code, uint64_t pos,
                                                     uint32_t bits, uint32_t idx) {
  const uint32_t shift = static_cast<uint32_t>(pos & 31);
  uint32_t* const out = p.out + (pos >> 5);
  const uint32_t nw = (shift + bits + 31) >> 5;
  const bool head = shift != 0;
  const bool tail = ((shift + bits) & 31) != 0 && idx != p.num_blocks - 1 && !(head && nw == 1);
  const uint32_t kb = head ? 1u : 0u, ke = nw - (tail ? 1u : 0u);  // plain words [kb, ke)
  // First k >= kb with out + k 16-byte aligned, the number of whole 4-word groups from there.
  const uint32_t ka = kb + ((0u - static_cast<uint32_t>(reinterpret_cast<uintptr_t>(out + kb) >> 2)) & 3u);
  const uint32_t groups = ka < ke ? (ke - ka) >> 2 : 0u;
  for (uint32_t g = threadIdx.x; g < groups; g += kThreads) {
    const int k = static_cast<int>(ka + 4 * g);
    const uint32_t a = s_code[k - 1], b = s_code[k], c = s_code[k + 1], d = s_code[k + 2], e = s_code[k + 3];
    uint4 v;
    v.x = __byte_perm(__funnelshift_r(b, a, shift), 0, 0x0123);
    v.y = __byte_perm(__funnelshift_r(c, b, shift), 0, 0x0123);
    v.z = __byte_perm(__funnelshift_r(d, c, shift), 0, 0x0123);
    v.w = __byte_perm(__funnelshift_r(e, d, shift), 0, 0x0123);
    *reinterpret_cast<uint4*>(out + k) = v;
  }
  // The rest, one word per thread from the top: up to 3 before the groups, 3 after, head, tail.
  const uint32_t r = kThreads - 1 - threadIdx.x;
  if (r < 8) {
    const uint32_t lo_end = ka < ke ? ka : ke;
    const uint32_t hi_beg = ka + 4 * groups;
    uint32_t k = 0xffffffffu;
    if (r < 3) k = kb + r < lo_end ? kb + r : k;
    else if (r < 6) k = hi_beg + (r - 3) < ke ? hi_beg + (r - 3) : k;
    else if (r == 6) k = head ? 0u : k;
    else k = tail ? nw - 1 : k;
    if (k != 0xffffffffu) {
      const uint32_t word = __funnelshift_r(s_code[k], s_code[static_cast<int>(k) - 1], shift);
      if (r >= 6) {
        const unsigned long long old = atomicAdd(
            reinterpret_cast<unsigned long long*>(p.edges + (r == 6 ? idx : idx + 1)), (1ull << 32) | word);
        if (old >> 32) out[k] = __byte_perm(word | static_cast<uint32_t>(old), 0, 0x0123);
      } else {
        out[k] = __byte_perm(word, 0, 0x0123);
      }
    }
  }
}

template <int kThreads, bool kVecOut>
__device__ __forceinline__ void write_out(const EncodeParams& p, const uint32_t* s_code, uint64_t pos, uint32_t bits,
                                          uint32_t idx) {
  if (kVecOut) write_block_code_vec<kThreads>(p, s_code, pos, bits, idx);
  else write_block_code<kThreads>(p, s_code, pos, bits, idx);
}

template <int kThreads, int kRep, bool kStoreAll, bool kVecOut, bool kOneBar, bool kCheck>
__global__ void __launch_bounds__(kThreads, 1024 / kThreads) gvle_encode_kernel2(const __grid_constant__ EncodeParams p) {
  constexpr int kWarps = kThreads / 32;
  constexpr uint32_t kBufWords = static_cast<uint32_t>(code_buffer_words(kThreads));
  constexpr int kBufs = kOneBar ? 3 : 2;
  static_assert(kWarps <= 32 && kThreads % 32 == 0, "block size");

  __shared__ uint32_t s_tab[256 * kRep];
  __shared__ uint32_t s_warp_bits[2][kWarps];
  __shared__ uint32_t s_next[2];
  __shared__ uint64_t s_pos[2];
  extern __shared__ uint32_t s_words[];  // kBufs buffers of kBufWords; word 0 of each stays 0

  const uint32_t tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;

  for (uint32_t i = tid; i < 256 * kRep; i += kThreads) s_tab[i] = p.packed[i / kRep];
  if (tid < kBufs) s_words[tid * kBufWords] = 0;
  // Slot 1: iteration 0 writes slot 0 while slow threads may still read this one.
  if (tid == 0) s_next[1] = atomicAdd(&p.counters[0], 1u);
  __syncthreads();

  uint32_t idx = s_next[1];
  ThreadInput cur;
  if (idx < p.num_blocks) load_input(p, static_cast<uint64_t>(idx) * kThreads + tid, cur);
  uint32_t bad = 0;
  // Block-inputs in flight: 1 assembled last iteration (trailing words not yet ORed in), 2 the one
  // before (kOneBar: waiting for its write-out). Their buffers: (it - 1) % kBufs, (it - 2) % kBufs.
  uint32_t idx1 = 0xffffffffu, bits1 = 0, idx2 = 0xffffffffu, bits2 = 0;
  uint32_t tail1 = 0, tailw1 = 0xffffffffu;  // this thread's trailing word of block-input 1
  uint32_t b0 = 0;                            // buffer of the current iteration
  uint32_t it = 0;
  detail::ScanPeek peek{};

  while (idx < p.num_blocks || (kOneBar && (idx1 != 0xffffffffu || idx2 != 0xffffffffu))) {
    const bool have = idx < p.num_blocks;
    const uint32_t par = it & 1;
    if (tid == 0) s_next[par] = have ? atomicAdd(&p.counters[0], 1u) : p.num_blocks;
    if (warp == 0 && idx1 != 0xffffffffu) peek = detail::scan_peek(p.scan, idx1);
    uint32_t* const s_code = s_words + b0 * kBufWords + 1;

    uint32_t seg[kSegments], lens[kSegments / 4];
    uint32_t my_bits = 0;
    if (have) {
      const uint32_t raw = cur.count == kSymbolsPerThread
                               ? build_segments2<false, kRep>(cur, s_tab, lane, seg, lens)
                               : build_segments2<true, kRep>(cur, s_tab, lane, seg, lens);
      my_bits = raw & 0x3ffu;
      if (kCheck) bad |= raw & 0xfc00u;
    }

    // Step 6: intra-block scan of the thread-code lengths.
    uint32_t incl = my_bits;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      const uint32_t y = __shfl_up_sync(0xffffffffu, incl, d);
      if (lane >= static_cast<uint32_t>(d)) incl += y;
    }
    if (lane == 31) s_warp_bits[par][warp] = incl;
    __syncthreads();  // A (kOneBar: the only one)

    const uint32_t next = s_next[par];
    ThreadInput nxt;
    nxt.count = 0;
    if (next < p.num_blocks) load_input(p, static_cast<uint64_t>(next) * kThreads + tid, nxt);

    const uint32_t wb = lane < static_cast<uint32_t>(kWarps) ? s_warp_bits[par][lane] : 0;
    uint32_t wincl = wb;
#pragma unroll
    for (int d = 1; d < kWarps; d <<= 1) {
      const uint32_t y = __shfl_up_sync(0xffffffffu, wincl, d);
      if (lane >= static_cast<uint32_t>(d)) wincl += y;
    }
    const uint32_t block_bits = __shfl_sync(0xffffffffu, wincl, kWarps - 1);
    const uint32_t start = __shfl_sync(0xffffffffu, wincl - wb, warp) + incl - my_bits;

    if (warp == 0 && have) detail::scan_publish(p.scan, idx, block_bits);

    // Step 7: this block-input into s_code.
    uint32_t tail = 0, tailw = 0xffffffffu;
    if (have) {
      const uint32_t end = emit2<kStoreAll>(seg, lens, start, s_code, &tail);
      if ((end & 31) != 0 && my_bits != 0) {
        if (end == block_bits) s_code[end >> 5] = tail;  // the last word: nobody else stores it
        else tailw = end >> 5;
      }
      if (tid == 0) s_code[(block_bits + 31) >> 5] = 0;
    }

    if (warp == 0 && idx1 != 0xffffffffu) {
      const uint64_t pos = detail::scan_resolve(p.scan, idx1, bits1, peek);
      if (lane == 0) {
        s_pos[par] = pos;
        record_position(p, idx1, pos, bits1);
      }
    }

    if (kOneBar) {
      // Block-input 1 (assembled before barrier A): its trailing words.
      if (tailw1 != 0xffffffffu) atomicOr(s_words + (b0 == 0 ? kBufs - 1 : b0 - 1) * kBufWords + 1 + tailw1, tail1);
      // Block-input 2 (complete before barrier A; its position resolved last iteration): out.
      if (idx2 != 0xffffffffu)
        write_out<kThreads, kVecOut>(p, s_words + (b0 >= 2 ? b0 - 2 : b0 + kBufs - 2) * kBufWords + 1, s_pos[par ^ 1],
                                     bits2, idx2);
    } else {
      __syncthreads();  // C
      if (tailw != 0xffffffffu) atomicOr(&s_code[tailw], tail);
      // Block-input 1: complete since barrier C; placed by warp 0 above.
      if (idx1 != 0xffffffffu)
        write_out<kThreads, kVecOut>(p, s_words + (b0 ^ 1) * kBufWords + 1, s_pos[par], bits1, idx1);
    }

    idx2 = idx1, bits2 = bits1;
    idx1 = have ? idx : 0xffffffffu, bits1 = block_bits;
    tail1 = tail, tailw1 = tailw;
    b0 = b0 + 1 == kBufs ? 0 : b0 + 1;
    ++it;
    idx = next;
    cur = nxt;
  }

  if (!kOneBar && idx1 != 0xffffffffu) {
    const uint32_t par = it & 1;
    if (warp == 0) {
      const uint64_t pos = detail::scan_resolve(p.scan, idx1, bits1);
      if (lane == 0) {
        s_pos[par] = pos;
        record_position(p, idx1, pos, bits1);
      }
    }
    __syncthreads();  // s_pos
    write_out<kThreads, kVecOut>(p, s_words + (b0 ^ 1) * kBufWords + 1, s_pos[par], bits1, idx1);
  }

  if (kCheck) {
    const int any = __syncthreads_or(bad != 0);
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

// ---- Kernel 3: kernel 2's thread code on a leaner loop (tuning record below) ----
// Same structure and bit layout as kernel 2 with two barriers; per block-input overhead cut:
// warp scan with predicated shuffles (2 instructions a step), block scan with two warp
// reductions (REDUX), the emission's store address advanced by 4 at each crossing, the write-out
// parameters of a block computed once (warp 0, lane 0) and read from shared memory, 32-bit index
// arithmetic for whole block-inputs.

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

// Step 7 as emit2 (crossing stores) with the word address carried along: `addr` (shared) is the
// word being filled, stored and advanced when a segment crosses its end.
__device__ __forceinline__ uint32_t emit3(const uint32_t (&seg)[kSegments], const uint32_t (&lens)[kSegments / 4],
                                          uint32_t start, uint32_t addr, uint32_t* tail) {
  uint32_t lo = 0, hi = 0, q = start;
#pragma unroll
  for (int k = 0; k < kSegments; ++k) {
    const uint32_t len = __byte_perm(lens[k >> 2], 0, 0x4440 | (k & 3));
    hi = __funnelshift_lc(lo, hi, len);
    lo = __funnelshift_lc(0u, lo, len) | seg[k];
    const uint32_t q1 = q + len;
    const uint32_t word = __funnelshift_r(lo, hi, q1);
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ge.u32 p, %1, 32;\n\t@p st.shared.u32 [%0], %2;\n\t@p add.u32 %0, %0, 4;\n\t}"
                 : "+r"(addr)
                 : "r"(q ^ q1), "r"(word)
                 : "memory");
    q = q1;
  }
  *tail = __funnelshift_l(0u, lo, 0u - q);
  return q;
}

// Write-out parameters of a placed block code (see write_block_code_vec), made by one thread.
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

// Step 8 from a plan (write_block_code_vec's work split). kEarlyEdges: the two edge words' atomics
// first and their dependent stores last, so that the groups hide the atomics' round trip.
template <int kThreads, bool kEarlyEdges>
__device__ __forceinline__ void write_out3(const EncodeParams& p, const uint32_t* s_code, const WriteOutPlan& w) {
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
__global__ void __launch_bounds__(kThreads, kMinBlocks) gvle_encode_kernel3(const __grid_constant__ EncodeParams p) {
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
  detail::ScanPeek peek{};

  while (idx < p.num_blocks) {
    // kLate: the counter's answer is stored just before barrier A (its round trip overlaps pass 1
    // instead of holding warp 0 at the store).
    uint32_t next_t0 = 0;
    if (tid == 0) {
      next_t0 = atomicAdd(&p.counters[0], 1u);
      if (!kLate) s_next = next_t0;
    }
    if (warp == 0 && idx1 != 0xffffffffu) peek = detail::scan_peek(p.scan, idx1);

    uint32_t seg[kSegments], lens[kSegments / 4];
    const uint32_t raw = cur.count == kSymbolsPerThread ? build_segments2<false, 1>(cur, s_tab, lane, seg, lens)
                                                        : build_segments2<true, 1>(cur, s_tab, lane, seg, lens);
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
      detail::scan_publish(p.scan, idx, block_bits);
      if (idx1 != 0xffffffffu) place_block<kThreads>(p, idx1, bits1, detail::scan_resolve(p.scan, idx1, bits1, peek), &s_plan);
    }

    // Step 7: this block-input into buffer buf.
    uint32_t* const s_code = s_words + buf * kBufWords + 1;
    uint32_t tail;
    const uint32_t end = emit3(seg, lens, start, shared_addr(s_code + (start >> 5)), &tail);
    const bool has_tail = (end & 31) != 0 && my_bits != 0;
    if (has_tail && end == block_bits) s_code[end >> 5] = tail;  // the last word: nobody else stores it
    if (tid == 0) s_code[(block_bits + 31) >> 5] = 0;
    __syncthreads();  // C
    if (has_tail && end != block_bits) atomicOr(&s_code[end >> 5], tail);
    // Block-input 1: complete since barrier C, placed by warp 0 above.
    if (idx1 != 0xffffffffu) write_out3<kThreads, kLate>(p, s_words + (buf ^ 1) * kBufWords + 1, s_plan);

    idx1 = idx, bits1 = block_bits;
    buf ^= 1;
    idx = next;
    cur = nxt;
  }

  if (idx1 != 0xffffffffu) {
    __syncthreads();  // every thread has read s_plan in the last iteration
    if (warp == 0) place_block<kThreads>(p, idx1, bits1, detail::scan_resolve(p.scan, idx1, bits1), &s_plan);
    __syncthreads();  // the last block-input's trailing words and s_plan
    write_out3<kThreads, kLate>(p, s_words + (buf ^ 1) * kBufWords + 1, s_plan);
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

// ---- Variants and tuning ----
// Tuning record: NVIDIA H200 (sm_90, 132 SMs, driver 580), CUDA 13.0, tools/bench/bench_gvle_gpu.cu (14
// Canterbury files replicated to >= 100 MiB, Huffman tables from build_code, median kernel time of 50
// runs; average GB/s of input; a device-to-device copy moved 1.84 TB/s, 3.67 TB/s read + write).
//   run 1  b128 (paper kernel + prefetch) 705, b256 740, b512 766; paper kernel as published 595
//   run 2  branch-free emission + early look-back reads, 3 barriers: b128 564, b512 675 (slower:
//          ncu showed warps waiting at the barrier behind the look-back)
//   run 3  kPipe (placement one block-input late, 2 barriers): b256 786, b512 769, b128 784;
//          kPipe + kFast: b256 903, b512 880; b512 + prefetch 818; paper kernel 735
//          ncu (b256-pipe): 11 cycles between issues, of them 2.8 barrier, 1.8 wait, 1.4 not
//          selected: near issue-bound at 64 registers (1024 threads/SM, __launch_bounds__ cap)
//   run 4  b256-pipe-fast 885 (0.49 of the copy), b512-pipe-fast 865, b512-prefetch 804, paper
//          kernel 723 (per file: 845 sum .. 999 E.coli). Staging the next block-input in shared
//          memory with coalesced cp.async (ncu had flagged 43% excess input sectors of the two
//          16-byte loads per thread) was slower (b256 810, b512 774, b128 803) and was dropped.
//          ncu (b256-pipe-fast-async, bible.txt): 24 instructions per symbol, 12 cycles between
//          issues per warp.
// (Runs 1-4: kernel 1, whose default was b256-pipe-fast: 256 threads x 32 symbols = 8192 symbols
// per block-input, 8 per chunk, 4 blocks per SM, 528 persistent blocks; 64 registers capped by
// __launch_bounds__, more blocks per SM than that did not pay.)
// Re-tuning for sm_90, same machine and bench (the copy: 1.80-1.82 TB/s, 3.6 TB/s read + write, at
// 100 MiB; the 4.26 TB/s read + write seen elsewhere was on 1 GiB), old default in the same runs:
//   run 5  kernel 2 (one 32-bit entry per symbol, funnel-shift segments, 64-bit window emission,
//          trailing words ORed in, 16-byte write-out): b256 one barrier 907, two barriers 959,
//          storing after every segment 914, table replicated x16 (two barriers) 918, 4-byte
//          write-out 885, b512 856, b128 903; old default 885, paper kernel 722. Predicted 1150-1300
//          from ~15 instructions per symbol: missed. ncu (bible.txt): kernel 2 and kernel 1 both
//          executed ~21.6 instructions per symbol. SASS: pass 1 (5.3 per symbol) and emission (6.1)
//          as planned, the rest (~9 per symbol) per block-input overhead: loop head, scans whose
//          predicates ptxas parked in a register's bits, write-out set-up in every thread, 64-bit
//          index math, look-back. The packed entry (one load per symbol; lowercase text spreads over
//          the banks) beat the paper's two arrays: the x16 copies cut bank conflicts but cost an
//          address instruction per symbol. One barrier with 3 buffers cost more registers (spills)
//          and index arithmetic than the barrier saved.
//   run 6  kernel 3 (the same thread code on a leaner loop): b256 1098 (0.60 of the copy; per file
//          1055 sum .. 1244 E.coli), b512 1089, b128 1064, b256 with 80 registers (3 blocks per SM)
//          1005; kernel 2 two barriers 968; old default 892 (846 .. 997), paper kernel 731.
//          ncu (b256, bible.txt): 16.2 instructions per symbol, no spills; 12.8 cycles between
//          issues per warp, of them 5.2 barrier (samples: 23% at barrier C behind warp 0's look-back,
//          16% at barrier A), 1.6 short scoreboard, 1.5 not selected, 1.1 math pipe, 1.1 wait.
//          kLate: the counter's answer stored just before barrier A (warp 0 held at that store for
//          the atomic's round trip before its pass 1) and the edge-word atomics issued before the
//          16-byte groups (the last warp waited for their answer before its next pass 1).
//   run 7  (tools/scripts/gpu-run.sh: tests plain, memcheck 0 errors, racecheck 0 hazards, then the bench)
//          b256-v3-late 1125 (0.62 of the copy; per file 1068 asyoulik .. 1266 E.coli: alice29
//          1123, asyoulik 1068, cp.html 1086, fields.c 1076, grammar.lsp 1075, kennedy.xls 1116,
//          lcet10 1124, plrabn12 1130, ptt5 1230, sum 1075, xargs.1 1117, bible 1162, E.coli 1266,
//          world192 1102), b256-v3 1103, b512-v3-late 1120, b512-v3 1096, b128-v3 1071,
//          b256-v3-r80 1014, kernel 2: two barriers 974, one 919, store-all 923, x16 table 924,
//          4-byte write-out 890; old default b256-pipe-fast 893 (848 sum .. 1008 E.coli), paper
//          kernel 729. kLate +2% at b256 and b512 (b256-v3 moved 0.4% between runs 6 and 7).
// Default b256-v3-late (kernel 3, 256 threads, 4 blocks per SM, 64 registers, no spills).
// Kernel 1 (gvle_encode_kernel) takes threads/prefetch/pipe/fast; kernel 2 (gvle_encode_kernel2)
// rep/store_all/vec_out/one_bar (always prefetching and pipelined); kernel 3 (gvle_encode_kernel3)
// min_blocks/late. The names: b<threads>-<kernel: paper/pipe = 1, v2, v3>-<options>.
struct VariantImpl {
  EncodeCudaVariant pub;
  int kernel;  // 1, 2 or 3
  int rep;
  bool store_all, vec_out, one_bar;
  int min_blocks;  // kernel 3: __launch_bounds__ minimum blocks per SM (register cap 65536 / (threads * it))
  bool late;       // kernel 3: kLate
};
constexpr VariantImpl kVariants[] = {
    {{256, true, true, true, "b256-v3-late"}, 3, 1, false, true, false, 4, true},
    {{256, true, true, true, "b256-v3"}, 3, 1, false, true, false, 4, false},
    {{512, true, true, true, "b512-v3-late"}, 3, 1, false, true, false, 2, true},
    {{512, true, true, true, "b512-v3"}, 3, 1, false, true, false, 2, false},
    {{128, true, true, true, "b128-v3"}, 3, 1, false, true, false, 8, false},
    {{256, true, true, true, "b256-v3-r80"}, 3, 1, false, true, false, 3, false},
    {{256, true, true, true, "b256-v2-2bar"}, 2, 1, false, true, false, 0, false},
    {{256, true, true, true, "b256-v2"}, 2, 1, false, true, true, 0, false},
    {{256, true, true, true, "b256-v2-storeall"}, 2, 1, true, true, true, 0, false},
    {{256, true, true, true, "b256-v2-rep16-2bar"}, 2, 16, false, true, false, 0, false},
    {{256, true, true, true, "b256-v2-scalarout"}, 2, 1, false, false, true, 0, false},
    {{256, true, true, true, "b256-pipe-fast"}, 1, 1, false, false, false, 0, false},
    {{128, false, false, false, "b128-paper"}, 1, 1, false, false, false, 0, false},
};
constexpr int kVariantCount = sizeof(kVariants) / sizeof(kVariants[0]);
constexpr int kDefaultVariant = 0;
static_assert(kVariantCount == 13, "variant_kernel has a case per variant");
constexpr int kMinThreads = 128;
static_assert(kVariants[kDefaultVariant].kernel == 3, "the default runs kernel 3");

using KernelFn = void (*)(EncodeParams);

template <int kThreads, bool kPrefetch, bool kPipe, bool kFast>
KernelFn pick_kernel(bool check) {
  return check ? gvle_encode_kernel<kThreads, kPrefetch, kPipe, kFast, true>
               : gvle_encode_kernel<kThreads, kPrefetch, kPipe, kFast, false>;
}

template <int kThreads, int kRep, bool kStoreAll, bool kVecOut, bool kOneBar>
KernelFn pick_kernel2(bool check) {
  return check ? gvle_encode_kernel2<kThreads, kRep, kStoreAll, kVecOut, kOneBar, true>
               : gvle_encode_kernel2<kThreads, kRep, kStoreAll, kVecOut, kOneBar, false>;
}

template <int kThreads, int kMinBlocks, bool kLate>
KernelFn pick_kernel3(bool check) {
  return check ? gvle_encode_kernel3<kThreads, kMinBlocks, kLate, true>
               : gvle_encode_kernel3<kThreads, kMinBlocks, kLate, false>;
}

KernelFn variant_kernel(int v, bool check) {
  switch (v) {
    case 0: return pick_kernel3<256, 4, true>(check);
    case 1: return pick_kernel3<256, 4, false>(check);
    case 2: return pick_kernel3<512, 2, true>(check);
    case 3: return pick_kernel3<512, 2, false>(check);
    case 4: return pick_kernel3<128, 8, false>(check);
    case 5: return pick_kernel3<256, 3, false>(check);
    case 6: return pick_kernel2<256, 1, false, true, false>(check);
    case 7: return pick_kernel2<256, 1, false, true, true>(check);
    case 8: return pick_kernel2<256, 1, true, true, true>(check);
    case 9: return pick_kernel2<256, 16, false, true, false>(check);
    case 10: return pick_kernel2<256, 1, false, false, true>(check);
    case 11: return pick_kernel<256, true, true, true>(check);
    default: return pick_kernel<128, false, false, false>(check);
  }
}

// variant_kernel's cases against the table.
constexpr bool is1(int v, int t, bool prefetch, bool pipe, bool fast) {
  return kVariants[v].kernel == 1 && kVariants[v].pub.threads == t && kVariants[v].pub.prefetch == prefetch &&
         kVariants[v].pub.pipe == pipe && kVariants[v].pub.fast == fast;
}
constexpr bool is2(int v, int t, int rep, bool store_all, bool vec_out, bool one_bar) {
  return kVariants[v].kernel == 2 && kVariants[v].pub.threads == t && kVariants[v].rep == rep &&
         kVariants[v].store_all == store_all && kVariants[v].vec_out == vec_out && kVariants[v].one_bar == one_bar;
}
constexpr bool is3(int v, int t, int min_blocks, bool late) {
  return kVariants[v].kernel == 3 && kVariants[v].pub.threads == t && kVariants[v].min_blocks == min_blocks &&
         kVariants[v].late == late;
}
static_assert(is3(0, 256, 4, true) && is3(1, 256, 4, false) && is3(2, 512, 2, true) && is3(3, 512, 2, false) &&
                  is3(4, 128, 8, false) && is3(5, 256, 3, false) && is2(6, 256, 1, false, true, false) &&
                  is2(7, 256, 1, false, true, true) && is2(8, 256, 1, true, true, true) &&
                  is2(9, 256, 16, false, true, false) && is2(10, 256, 1, false, false, true) &&
                  is1(11, 256, true, true, true) && is1(12, 128, false, false, false),
              "variant_kernel and kVariants disagree");

size_t variant_smem(int v) {
  const VariantImpl& x = kVariants[v];
  const int buffers = x.kernel == 3 ? 2 : x.kernel == 2 ? (x.one_bar ? 3 : 2) : (x.pub.pipe ? 2 : 1);
  return buffers * code_buffer_words(x.pub.threads) * 4;
}

// Persistent grid size per (device, variant, check), cached: blocks per SM at full occupancy.
constexpr int kMaxDevices = 64;
std::atomic<int> g_sm_count[kMaxDevices];
std::atomic<int> g_occupancy[kMaxDevices][kVariantCount][2];

gpu::CudaError grid_limit(int v, bool check, int* sms, int* per_sm) {
  int dev = 0;
  GPUEC_CUDA_CHECK(cudaGetDevice(&dev));
  if (dev < 0 || dev >= kMaxDevices) {
    GPUEC_CUDA_CHECK(cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, dev));
    GPUEC_CUDA_CHECK(cudaFuncSetAttribute(variant_kernel(v, check), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(variant_smem(v))));
    GPUEC_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(per_sm, variant_kernel(v, check),
                                                                   kVariants[v].pub.threads, variant_smem(v)));
    return {};
  }
  int s = g_sm_count[dev].load(std::memory_order_relaxed);
  if (s == 0) {
    GPUEC_CUDA_CHECK(cudaDeviceGetAttribute(&s, cudaDevAttrMultiProcessorCount, dev));
    g_sm_count[dev].store(s, std::memory_order_relaxed);
  }
  int o = g_occupancy[dev][v][check].load(std::memory_order_relaxed);
  if (o == 0) {
    // Above 48 KiB a kernel's dynamic shared memory must be allowed explicitly (per device).
    GPUEC_CUDA_CHECK(cudaFuncSetAttribute(variant_kernel(v, check), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(variant_smem(v))));
    GPUEC_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&o, variant_kernel(v, check), kVariants[v].pub.threads,
                                                                   variant_smem(v)));
    g_occupancy[dev][v][check].store(o, std::memory_order_relaxed);
  }
  *sms = s;
  *per_sm = o;
  return {};
}


}  // namespace

int encode_cuda_variant_count() { return kVariantCount; }

EncodeCudaVariant encode_cuda_variant(int i) {
  return i >= 0 && i < kVariantCount ? kVariants[i].pub : EncodeCudaVariant{0, false, false, false, "none"};
}

int encode_cuda_default_variant() { return kDefaultVariant; }  // tuning record above

size_t encode_cuda_workspace_bytes(uint64_t n) {
  if (n == 0) return 0;
  const uint64_t block_symbols = uint64_t{kMinThreads} * kSymbolsPerThread;
  return workspace_for((n + block_symbols - 1) / block_symbols);
}

gpu::CudaError encode_cuda_variant_run(int variant, int max_blocks_per_sm, const uint8_t* in, uint64_t n,
                                       const CodeTable& table, uint8_t* out, uint64_t* chunk_bits,
                                       uint64_t* total_bits, void* workspace, size_t workspace_bytes,
                                       cudaStream_t stream) {
  if (variant < 0 || variant >= kVariantCount || n > kEncodeCudaMaxSymbols) return GPUEC_CUDA_INVALID();
  if (n == 0) {
    if (total_bits) GPUEC_CUDA_CHECK(cudaMemsetAsync(total_bits, 0, sizeof(uint64_t), stream));
    return {};
  }
  if (!in || !out || !workspace || (reinterpret_cast<uintptr_t>(out) & 3) ||
      (reinterpret_cast<uintptr_t>(workspace) & 255))
    return GPUEC_CUDA_INVALID();
  const int threads = kVariants[variant].pub.threads;
  const uint64_t block_symbols = uint64_t(threads) * kSymbolsPerThread;
  const uint64_t num_blocks = (n + block_symbols - 1) / block_symbols;
  const size_t need = workspace_for(num_blocks);
  if (workspace_bytes < need) return GPUEC_CUDA_INVALID();

  EncodeParams p;
  bool check = false;
  for (int s = 0; s < 256; ++s) {
    const int len = table.len[s];
    const bool ok = len >= 1 && len <= kMaxCodeLength;
    p.table.len[s] = static_cast<uint8_t>(ok ? len : 0);
    p.table.val[s] = static_cast<uint16_t>(ok ? table.code[s] & ((1u << len) - 1) : 0);
    p.packed[s] = ok ? (static_cast<uint32_t>(p.table.val[s]) << (32 - len)) | static_cast<uint32_t>(len) : kEntryBad;
    check |= !ok;
  }
  uint8_t* const ws = static_cast<uint8_t*>(workspace);
  p.in = in;
  p.n = n;
  p.num_blocks = static_cast<uint32_t>(num_blocks);
  p.blocks_per_chunk = static_cast<uint32_t>(kChunkSymbols / block_symbols);
  p.out = reinterpret_cast<uint32_t*>(out);
  p.chunk_bits = chunk_bits;
  p.total_bits = total_bits;
  p.counters = reinterpret_cast<uint32_t*>(ws);
  p.scan = reinterpret_cast<uint64_t*>(ws + kCountersBytes);
  p.edges = reinterpret_cast<uint64_t*>(ws + kCountersBytes + align256(scan_words(num_blocks) * 8));
  p.aligned = (reinterpret_cast<uintptr_t>(in) & 15) == 0;
  p.full_blocks = p.aligned ? static_cast<uint32_t>(n / block_symbols) : 0u;

  int sms = 0, per_sm = 0;
  if (const gpu::CudaError e = grid_limit(variant, check, &sms, &per_sm)) return e;
  if (max_blocks_per_sm > 0) per_sm = std::min(per_sm, max_blocks_per_sm);
  const uint64_t grid = std::min<uint64_t>(num_blocks, uint64_t(std::max(per_sm, 1)) * sms);

  GPUEC_CUDA_CHECK(cudaMemsetAsync(workspace, 0, need, stream));
  variant_kernel(variant, check)<<<static_cast<unsigned>(grid), threads, variant_smem(variant), stream>>>(p);
  GPUEC_CUDA_CHECK_LAUNCH();
  return {};
}

gpu::CudaError encode_cuda(const uint8_t* in, uint64_t n, const CodeTable& table, uint8_t* out, uint64_t* chunk_bits,
                           uint64_t* total_bits, void* workspace, size_t workspace_bytes, cudaStream_t stream) {
  return encode_cuda_variant_run(encode_cuda_default_variant(), 0, in, n, table, out, chunk_bits, total_bits,
                                 workspace, workspace_bytes, stream);
}

namespace {

struct DeviceBuffers {
  void* p[5] = {};
  ~DeviceBuffers() {
    for (void* q : p)
      if (q) cudaFree(q);
  }
};

}  // namespace

gpu::CudaError encode_cuda_host(const uint8_t* in, uint64_t n, const CodeTable& table, uint8_t* out,
                                uint64_t* chunk_bits, uint64_t* total_bits) {
  if (!total_bits || n > kEncodeCudaMaxSymbols || (n > 0 && (!in || !out))) return GPUEC_CUDA_INVALID();
  if (n == 0) {
    *total_bits = 0;
    return {};
  }
  DeviceBuffers b;
  const uint64_t chunks = chunk_count(n);
  const size_t ws_bytes = encode_cuda_workspace_bytes(n);
  GPUEC_CUDA_CHECK(cudaMalloc(&b.p[0], n));
  GPUEC_CUDA_CHECK(cudaMalloc(&b.p[1], encoded_bound_bytes(n)));
  GPUEC_CUDA_CHECK(cudaMalloc(&b.p[2], chunks * sizeof(uint64_t)));
  GPUEC_CUDA_CHECK(cudaMalloc(&b.p[3], sizeof(uint64_t)));
  GPUEC_CUDA_CHECK(cudaMalloc(&b.p[4], ws_bytes));
  GPUEC_CUDA_CHECK(cudaMemcpy(b.p[0], in, n, cudaMemcpyHostToDevice));
  const gpu::CudaError e =
      encode_cuda(static_cast<const uint8_t*>(b.p[0]), n, table, static_cast<uint8_t*>(b.p[1]),
                  static_cast<uint64_t*>(b.p[2]), static_cast<uint64_t*>(b.p[3]), b.p[4], ws_bytes, nullptr);
  if (e) return e;
  uint64_t total = 0;
  GPUEC_CUDA_CHECK(cudaMemcpy(&total, b.p[3], sizeof total, cudaMemcpyDeviceToHost));
  *total_bits = total;
  if (total == UINT64_MAX) return {};
  GPUEC_CUDA_CHECK(cudaMemcpy(out, b.p[1], (total + 31) / 32 * 4, cudaMemcpyDeviceToHost));
  if (chunk_bits) GPUEC_CUDA_CHECK(cudaMemcpy(chunk_bits, b.p[2], chunks * sizeof(uint64_t), cudaMemcpyDeviceToHost));
  return {};
}

}  // namespace vle
