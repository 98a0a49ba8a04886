// gpu/device/word_sink.cuh: WordSink, the one GPU bit emitter of the project: one thread appends codes to a
// stream of 32-bit words. Used by the GVLE encoder (a thread's code into the block code in shared memory,
// vle/device/encode.cuh) and the CAVLCU kernel (a block's code into its slot, cavlc/src/cuda/frame_device.cuh).
// Device code.
//
// Bit order: MSB first. Stream bit b is bit 31 - (b % 32) of word b / 32; put(code, len) appends the low len
//   bits of code, its most significant bit first (the order of vle/bitwriter.h and of an H.264 RBSP once the
//   words are stored big-endian).
// Word size: 32 bits. The sink keeps the latest <= 64 appended bits in two registers and hands a word to its
//   Store policy the moment the word's last bit is appended (at most one word per put, len <= 32); the
//   policy decides where it goes and in which byte order:
//     SharedWords        native words in shared memory, address carried along, branch-free predicated store;
//     BigEndianWords     big-endian words (byte order of a bit stream in memory) through a global pointer.
// Seams: a sink may start at any stream bit `start`. Bits of the first word before `start` are stored as
//   zeros, so the sink OWNS (stores plainly) every word whose last bit it writes; the word holding its last
//   bits when those do not reach the word's end (tail(), left-aligned, zeros after) belongs to the next
//   writer: merge it into that word after the owner's store (atomicOr after a barrier), or store it plainly
//   when nothing follows (the end of the stream, or a private buffer). Every word is then stored once and
//   ORed into at most by the writers whose bits end inside it, with no zeroing of the output first.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace gpu {
namespace device {

template <class Store>
struct WordSink {
  uint32_t lo, hi;  // the latest <= 64 appended bits, right-aligned in hi:lo (bits before `start`: zero)
  uint32_t q;       // stream bit after the last appended one
  Store store;

  __device__ __forceinline__ WordSink(uint32_t start, Store s) : lo(0), hi(0), q(start), store(s) {}

  // Appends the low len bits of code (0 <= len <= 32; code < 2^len).
  __device__ __forceinline__ void put(const uint32_t& code, uint32_t len) {
    hi = __funnelshift_lc(lo, hi, len);
    lo = __funnelshift_lc(0u, lo, len) | code;
    const uint32_t q1 = q + len;
    const uint32_t word = __funnelshift_r(lo, hi, q1);
    // A word ends inside [q, q1] exactly when q and q1 differ above bit 4: it is the word before q1's.
    store.put_if(q ^ q1, word);
    q = q1;
  }

  // The bits appended after the last completed word, left-aligned, zeros after them (valid when q % 32 != 0):
  // the seam word this sink does not own.
  __device__ __forceinline__ uint32_t tail() const { return __funnelshift_l(0u, lo, 0u - q); }
};

// Native words into shared memory from the word that holds the sink's first bit on: `addr` (a shared-space
// address, __cvta_generic_to_shared) is the word being filled; stored and advanced by 4 when it completes.
// Branch-free: one predicated store and add.
struct SharedWords {
  uint32_t addr;
  __device__ __forceinline__ void put_if(uint32_t crossed, uint32_t word) {
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ge.u32 p, %1, 32;\n\t@p st.shared.u32 [%0], %2;\n\t@p add.u32 %0, %0, 4;\n\t}"
                 : "+r"(addr)
                 : "r"(crossed), "r"(word)
                 : "memory");
  }
};

// Big-endian words (the bytes of an MSB-first bit stream) through a pointer, any memory space: `p` is the
// word being filled, advanced when it completes.
struct BigEndianWords {
  uint32_t* p;
  __device__ __forceinline__ void put_if(uint32_t crossed, uint32_t word) {
    if (crossed >= 32) *p++ = __byte_perm(word, 0, 0x0123);
  }
  // Stores the sink's trailing partial word plainly (when it owns it: nothing follows).
  template <class Sink>
  __device__ __forceinline__ void store_tail(const Sink& s) {
    if (s.q & 31) *p = __byte_perm(s.tail(), 0, 0x0123);
  }
};

}  // namespace device
}  // namespace gpu
