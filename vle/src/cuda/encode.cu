// The GVLE encoder (vle/encode_cuda.h): the kernel of vle/device/encode.cuh at the tuning below. The other
// tunings and the two earlier kernel generations measured in the record stay comparable in the benchmarks
// (tools/bench/kernels/src/gvle_encode_variants.cu, gvle-bench-gpu); the names: b<threads>-<kernel: paper/pipe =
// 1, v2, v3>-<options>.
//
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
//   run 7  (tools/gpu-run.sh: tests plain, memcheck 0 errors, racecheck 0 hazards, then the bench)
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
#include <algorithm>
#include <atomic>

#include "gpu/cuda_check.h"
#include "vle/device/encode.cuh"
#include "vle/encode_cuda.h"

namespace vle {
namespace {

using device::EncodeParams;

// The default tuning, b256-v3-late of the record.
constexpr int kEncodeThreads = 256;
constexpr int kEncodeMinBlocks = 4;
constexpr bool kEncodeLate = true;
constexpr size_t kEncodeSmem = 2 * device::code_buffer_words(kEncodeThreads) * 4;

using KernelFn = void (*)(EncodeParams);
KernelFn kernel_for(bool check) {
  return check ? device::gvle_encode_kernel<kEncodeThreads, kEncodeMinBlocks, kEncodeLate, true>
               : device::gvle_encode_kernel<kEncodeThreads, kEncodeMinBlocks, kEncodeLate, false>;
}

// Persistent grid size per (device, check), cached: blocks per SM at full occupancy.
constexpr int kMaxDevices = 64;
std::atomic<int> g_sm_count[kMaxDevices];
std::atomic<int> g_occupancy[kMaxDevices][2];

gpu::CudaError grid_limit(bool check, int* sms, int* per_sm) {
  int dev = 0;
  GPUEC_CUDA_CHECK(cudaGetDevice(&dev));
  if (dev < 0 || dev >= kMaxDevices) return device::occupancy(kernel_for(check), kEncodeThreads, kEncodeSmem, sms, per_sm);
  int s = g_sm_count[dev].load(std::memory_order_relaxed);
  int o = g_occupancy[dev][check].load(std::memory_order_relaxed);
  if (s == 0 || o == 0) {
    if (const gpu::CudaError e = device::occupancy(kernel_for(check), kEncodeThreads, kEncodeSmem, &s, &o)) return e;
    g_sm_count[dev].store(s, std::memory_order_relaxed);
    g_occupancy[dev][check].store(o, std::memory_order_relaxed);
  }
  *sms = s;
  *per_sm = o;
  return {};
}

}  // namespace

size_t encode_cuda_workspace_bytes(uint64_t n) {
  if (n == 0) return 0;
  const uint64_t block_symbols = uint64_t{kEncodeThreads} * device::kSymbolsPerThread;
  return device::workspace_for((n + block_symbols - 1) / block_symbols);
}

gpu::CudaError encode_cuda(const uint8_t* in, uint64_t n, const CodeTable& table, uint8_t* out, uint64_t* chunk_bits,
                           uint64_t* total_bits, void* workspace, size_t workspace_bytes, cudaStream_t stream) {
  EncodeParams p;
  bool check = false, empty = false;
  size_t clear = 0;
  if (const gpu::CudaError e = device::prepare_call(kEncodeThreads, in, n, table, out, chunk_bits, total_bits, workspace,
                                                    workspace_bytes, stream, &p, &check, &clear, &empty))
    return e;
  if (empty) return {};
  int sms = 0, per_sm = 0;
  if (const gpu::CudaError e = grid_limit(check, &sms, &per_sm)) return e;
  const uint64_t grid = std::min<uint64_t>(p.num_blocks, uint64_t(std::max(per_sm, 1)) * sms);
  GPUEC_CUDA_CHECK(cudaMemsetAsync(workspace, 0, clear, stream));
  kernel_for(check)<<<static_cast<unsigned>(grid), kEncodeThreads, kEncodeSmem, stream>>>(p);
  GPUEC_CUDA_CHECK_LAUNCH();
  return {};
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