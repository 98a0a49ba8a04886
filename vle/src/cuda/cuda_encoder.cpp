// vle/encoders.h's CUDA encoder, in a build with CUDA (gpuec_vle_encoders links gpuec_vle_cuda).
#include <atomic>

#include "gpu/backend.h"
#include "vle/encode_cuda.h"
#include "vle/encoders.h"

namespace vle {

namespace {

thread_local std::string t_error;
std::atomic<long long> g_calls{0};

uint64_t encode_with_cuda(const uint8_t* in, uint64_t n, const CodeTable& t, uint8_t* out, uint64_t* chunk_bits) {
  // The test hook (vle/README.md): the N-th call of the process fails on purpose.
  if (g_calls++ == gpu::fail_at_frame("GPUEC_GVLE_FAIL_AT_CALL")) {
    t_error = "failed on purpose (GPUEC_GVLE_FAIL_AT_CALL)";
    return UINT64_MAX;
  }
  uint64_t total = UINT64_MAX;
  const gpu::CudaError err = encode_cuda_host(in, n, t, out, chunk_bits, &total);
  t_error = err ? err.str() : std::string();
  return err ? UINT64_MAX : total;
}

}  // namespace

EncodeFn cuda_encoder() { return encode_with_cuda; }
std::string cuda_encoder_error() { return t_error; }

}  // namespace vle
