// The gpu pair of gpuec-bitexact: the CUDA build probe (gpu/device.h, probe_ref / probe_cuda), out[i] = i * i + seed.
#include <cstdint>
#include <string>
#include <vector>

#include "canary.h"
#include "gpu/device.h"
#include "harness.h"

namespace bitexact {
namespace {

constexpr size_t kMargin = 16;  // uint32 canaries behind the output

std::vector<int> probe_sizes() {
  std::vector<int> v;
  for (uint64_t n : tile_sizes(256, 300, false)) v.push_back(static_cast<int>(n));
  return v;
}

template <class Fn>
void for_each_probe(Context& ctx, Fn fn) {
  for (int n : probe_sizes()) {
    ctx.begin_case("n " + std::to_string(n));
    const uint32_t seed = n == 1 ? 0xFFFFFFFFu : static_cast<uint32_t>(ctx.rng());  // the maximal seed: wraps
    std::vector<uint32_t> want(static_cast<size_t>(n) + kMargin, gpuec_test::canary<uint32_t>());
    gpu::probe_ref(want.data(), n, seed);
    if (!ctx.canary_intact("probe_ref output", want.data(), size_t(n) * 4, want.size() * 4)) return;
    fn(n, seed, want);
    if (!ctx.ok()) return;
  }
}

void probe_oracle(Context& ctx) {
  for_each_probe(ctx, [&](int n, uint32_t seed, const std::vector<uint32_t>& got) {
    std::vector<uint32_t> want(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) want[size_t(i)] = static_cast<uint32_t>(uint64_t(i) * uint64_t(i) + seed);
    ctx.same_bytes("out", want.data(), got.data(), size_t(n) * 4);
  });
}

void probe_gpu(Context& ctx) {
  for_each_probe(ctx, [&](int n, uint32_t seed, const std::vector<uint32_t>& want) {
    std::vector<uint32_t> got(static_cast<size_t>(n) + kMargin, gpuec_test::canary<uint32_t>());
    const gpu::CudaError e = gpu::probe_cuda(got.data(), n, seed);
    if (e) {
      ctx.fail("probe_cuda returned " + e.str());
      return;
    }
    if (!ctx.same_bytes("out", want.data(), got.data(), size_t(n) * 4)) return;
    ctx.canary_intact("probe_cuda output", got.data(), size_t(n) * 4, got.size() * 4);
  });
}

}  // namespace

void register_gpu_pairs(std::vector<Pair>& pairs) {
  pairs.push_back({"gpu.probe", "probe_ref / probe_cuda (the CUDA build probe)", "the formula i * i + seed", probe_oracle,
                   gpu::built_with_cuda() ? probe_gpu : nullptr, nullptr});
}

}  // namespace bitexact
