// bench_kernels/gvle_encode_variants.h: the GVLE encoder's kernel configurations measured in the tuning record
// of vle/src/cuda/encode.cu, kept for comparison with the production encoder (vle::encode_cuda, which runs
// variant 0): the other tunings of the kernel (vle/device/encode.cuh) and the two earlier kernel generations
// (the paper's kernel as published and as first tuned, and the first sm_90 re-tuning). Every variant produces
// the bytes of vle::encode_ref. Benchmarks (gvle-bench-gpu) and the tests that check them for bit-exactness
// (tests/vle/encode_cuda_test) link gpuec_bench_kernels; CUDA builds only. Host C++ API; no CUDA headers.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpu/device.h"
#include "vle/huffman.h"

struct CUstream_st;
typedef CUstream_st* cudaStream_t;  // the same declaration as in cuda_runtime_api.h

namespace gpuec_bench {

// A configuration: block size (symbols per block-input = threads * 32, a divisor of vle::kChunkSymbols),
// whether the next block-input is loaded while the current one is encoded, whether each block code is placed
// and written one block-input late, and the code generation of the inner loops ("paper": as published).
struct EncodeCudaVariant {
  int threads;    // threads per block
  bool prefetch;  // load the next block-input during the current one
  bool pipe;      // place and write each block code one block-input late (no barrier waits on the scan)
  bool fast;      // byte permutes for the table indices, branch-free word emission
  const char* name;
};
int encode_cuda_variant_count();
EncodeCudaVariant encode_cuda_variant(int i);
// The production encoder's configuration (vle::encode_cuda): 0.
int encode_cuda_default_variant();

// Device workspace bytes for n symbols, enough for every variant (the production encoder needs less:
// vle::encode_cuda_workspace_bytes).
size_t encode_cuda_variant_workspace_bytes(uint64_t n);

// vle::encode_cuda (same contract) with variant `variant` (0 <= variant < encode_cuda_variant_count(); the
// default variant with max_blocks_per_sm == 0 is vle::encode_cuda itself); max_blocks_per_sm > 0 caps the
// persistent grid below full occupancy (0: full occupancy).
gpu::CudaError encode_cuda_variant_run(int variant, int max_blocks_per_sm, const uint8_t* in, uint64_t n,
                                       const vle::CodeTable& table, uint8_t* out, uint64_t* chunk_bits,
                                       uint64_t* total_bits, void* workspace, size_t workspace_bytes,
                                       cudaStream_t stream);

}  // namespace gpuec_bench
