// The GVLE encoder's measured configurations (bench_kernels/gvle_encode_variants.h), moved out of gpuec_vle_cuda
// as they were measured: kernel 1 (the paper's, as published and as tuned for the first H200 runs) and kernel 2
// (the first sm_90 re-tuning) below, on the thread code and write-out of vle/device/encode.cuh where they shared
// it; kernel 3 is the production kernel of vle/device/encode.cuh at other tunings. Tuning record and the
// measured numbers: vle/src/cuda/encode.cu.
//
// Bit-level invariants as in vle/device/encode.cuh, except that in kernel 1 the owner of a word of the block
// code is the thread whose code holds the word's FIRST bit: a thread whose code starts inside a word ORs its
// leading bits in after a barrier.
#include <algorithm>
#include <atomic>

#include "bench_kernels/gvle_encode_variants.h"
#include "gpu/cuda_check.h"
#include "vle/device/encode.cuh"
#include "vle/encode_cuda.h"

namespace gpuec_bench {
namespace {

using namespace vle::device;
using vle::kMaxCodeLength;

// ---- Kernel 1 (the paper's) ----
// Step 5 of the paper: segment k = code(2k) followed by code(2k+1) (<= 32 bits). Returns the thread
// code length; min_len tracks the smallest length seen (0: a symbol without code) when kCheck.
template <bool kTail, bool kCheck, bool kFast>
__device__ __forceinline__ uint32_t build_segments1(const ThreadInput& t, const uint16_t* s_val, const uint8_t* s_len,
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


// kPrefetch: load the next block-input while encoding the current one.
// kPipe: resolve the block offset and write the block code one iteration late, from a second
//   buffer, so that the look-back of block-input k runs while k + 1 is encoded (its predecessors
//   have long published) and no barrier waits for it; two barriers per block-input instead of three.
// kFast: byte permutes for the table indices and branch-free word emission (emit_flat).
// kPrefetch = kPipe = kFast = false is the paper's kernel as published.
template <int kThreads, bool kPrefetch, bool kPipe, bool kFast, bool kCheck>
__global__ void __launch_bounds__(kThreads, 1024 / kThreads) gvle_encode_kernel1(const __grid_constant__ EncodeParams p) {
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
  SegScanPeek peek{};

  while (idx < p.num_blocks) {
    if (tid == 0) s_next = atomicAdd(&p.counters[0], 1u);
    if (kPipe && warp == 0 && prev_idx != 0xffffffffu) peek = segscan_peek(p.scan, prev_idx);
    uint32_t* const s_code = s_words + buf * kBufWords + 1;

    // Steps 4-5: thread code as 16 segments in registers.
    uint32_t seg_val[kSegments], seg_len[kSegments];
    const uint32_t my_bits = cur.count == kSymbolsPerThread
                                 ? build_segments1<false, kCheck, kFast>(cur, s_val, s_len, seg_val, seg_len, min_len)
                                 : build_segments1<true, kCheck, kFast>(cur, s_val, s_len, seg_val, seg_len, min_len);

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
      segscan_publish(p.scan, idx, block_bits);
      if (kPipe && prev_idx != 0xffffffffu) {
        const uint64_t pos = segscan_resolve(p.scan, prev_idx, prev_bits, peek);
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
        const uint64_t pos = segscan_resolve(p.scan, idx, block_bits);
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
      const uint64_t pos = segscan_resolve(p.scan, prev_idx, prev_bits);
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

// ---- Kernel 2 (sm_90 re-tuning): the thread code of vle/device/encode.cuh (packed table entries, funnel-shift
// segments, 64-bit window emission; the word address computed from q here instead of carried), and:
//   - kOneBar: one barrier per block-input instead of two: three code buffers; block-input i is
//     assembled in iteration i, its trailing words ORed in iteration i + 1, placed and written in
//     iteration i + 2 (the look-back for i runs in iteration i + 1).
//   - kVecOut: the block code is written with 16-byte stores (words aligned to 16 bytes in `out`;
//     the up to 3 + 3 words around them and the two edge words one per thread).
//   - kRep: the table replicated kRep times (entry s of copy c at s * kRep + c, copy lane % kRep),
//     fewer bank conflicts for one more address instruction.
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
__device__ __forceinline__ void write_out2(const EncodeParams& p, const uint32_t* s_code, uint64_t pos, uint32_t bits,
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
  SegScanPeek peek{};

  while (idx < p.num_blocks || (kOneBar && (idx1 != 0xffffffffu || idx2 != 0xffffffffu))) {
    const bool have = idx < p.num_blocks;
    const uint32_t par = it & 1;
    if (tid == 0) s_next[par] = have ? atomicAdd(&p.counters[0], 1u) : p.num_blocks;
    if (warp == 0 && idx1 != 0xffffffffu) peek = segscan_peek(p.scan, idx1);
    uint32_t* const s_code = s_words + b0 * kBufWords + 1;

    uint32_t seg[kSegments], lens[kSegments / 4];
    uint32_t my_bits = 0;
    if (have) {
      const uint32_t raw = cur.count == kSymbolsPerThread
                               ? build_segments<false, kRep>(cur, s_tab, lane, seg, lens)
                               : build_segments<true, kRep>(cur, s_tab, lane, seg, lens);
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

    if (warp == 0 && have) segscan_publish(p.scan, idx, block_bits);

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
      const uint64_t pos = segscan_resolve(p.scan, idx1, bits1, peek);
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
        write_out2<kThreads, kVecOut>(p, s_words + (b0 >= 2 ? b0 - 2 : b0 + kBufs - 2) * kBufWords + 1, s_pos[par ^ 1],
                                     bits2, idx2);
    } else {
      __syncthreads();  // C
      if (tailw != 0xffffffffu) atomicOr(&s_code[tailw], tail);
      // Block-input 1: complete since barrier C; placed by warp 0 above.
      if (idx1 != 0xffffffffu)
        write_out2<kThreads, kVecOut>(p, s_words + (b0 ^ 1) * kBufWords + 1, s_pos[par], bits1, idx1);
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
      const uint64_t pos = segscan_resolve(p.scan, idx1, bits1);
      if (lane == 0) {
        s_pos[par] = pos;
        record_position(p, idx1, pos, bits1);
      }
    }
    __syncthreads();  // s_pos
    write_out2<kThreads, kVecOut>(p, s_words + (b0 ^ 1) * kBufWords + 1, s_pos[par], bits1, idx1);
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

// ---- Variants ----
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
  return check ? gvle_encode_kernel1<kThreads, kPrefetch, kPipe, kFast, true>
               : gvle_encode_kernel1<kThreads, kPrefetch, kPipe, kFast, false>;
}

template <int kThreads, int kRep, bool kStoreAll, bool kVecOut, bool kOneBar>
KernelFn pick_kernel2(bool check) {
  return check ? gvle_encode_kernel2<kThreads, kRep, kStoreAll, kVecOut, kOneBar, true>
               : gvle_encode_kernel2<kThreads, kRep, kStoreAll, kVecOut, kOneBar, false>;
}

template <int kThreads, int kMinBlocks, bool kLate>
KernelFn pick_kernel3(bool check) {
  return check ? gvle_encode_kernel<kThreads, kMinBlocks, kLate, true>
               : gvle_encode_kernel<kThreads, kMinBlocks, kLate, false>;
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

int encode_cuda_default_variant() { return kDefaultVariant; }

size_t encode_cuda_variant_workspace_bytes(uint64_t n) {
  if (n == 0) return 0;
  const uint64_t block_symbols = uint64_t{kMinThreads} * kSymbolsPerThread;
  return workspace_for((n + block_symbols - 1) / block_symbols);
}

gpu::CudaError encode_cuda_variant_run(int variant, int max_blocks_per_sm, const uint8_t* in, uint64_t n,
                                       const vle::CodeTable& table, uint8_t* out, uint64_t* chunk_bits,
                                       uint64_t* total_bits, void* workspace, size_t workspace_bytes,
                                       cudaStream_t stream) {
  if (variant < 0 || variant >= kVariantCount) return GPUEC_CUDA_INVALID();
  if (variant == kDefaultVariant && max_blocks_per_sm == 0)  // the production encoder itself
    return vle::encode_cuda(in, n, table, out, chunk_bits, total_bits, workspace, workspace_bytes, stream);
  EncodeParams p;
  bool check = false, empty = false;
  size_t clear = 0;
  if (const gpu::CudaError e = prepare_call(kVariants[variant].pub.threads, in, n, table, out, chunk_bits, total_bits,
                                            workspace, workspace_bytes, stream, &p, &check, &clear, &empty))
    return e;
  if (empty) return {};
  int sms = 0, per_sm = 0;
  if (const gpu::CudaError e = grid_limit(variant, check, &sms, &per_sm)) return e;
  if (max_blocks_per_sm > 0) per_sm = std::min(per_sm, max_blocks_per_sm);
  const uint64_t grid = std::min<uint64_t>(p.num_blocks, uint64_t(std::max(per_sm, 1)) * sms);
  GPUEC_CUDA_CHECK(cudaMemsetAsync(workspace, 0, clear, stream));
  variant_kernel(variant, check)<<<static_cast<unsigned>(grid), kVariants[variant].pub.threads, variant_smem(variant),
                                   stream>>>(p);
  GPUEC_CUDA_CHECK_LAUNCH();
  return {};
}

}  // namespace gpuec_bench
