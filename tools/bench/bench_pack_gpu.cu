// pack-bench-gpu: throughput of the CUDA segment packer and byte histogram (bench_kernels/pack_cuda.h,
// bench_kernels/histogram_cuda.h) against the device's copy bandwidth, measured in the same run.
// Each case: 3 warm-up runs, then `--runs` (default 50) runs timed one by one with CUDA events; the
// median is printed. Traffic counts the bytes a kernel must move at least: for the packer 16 bytes of
// metadata per segment (len, offset, source index), the source words and the output; for the
// histogram the input. Copy bandwidth counts read + write bytes of cudaMemcpyAsync device to device.
// Every case is also checked once against the CPU twin (exit status 1 on a mismatch).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "bench_kernels/histogram_cuda.h"
#include "bench_kernels/pack.h"
#include "bench_kernels/pack_cuda.h"
#include "gpu/device.h"
#include "bench_util.h"

namespace {

int g_runs = 50;
bool g_failed = false;

void die(const char* what, cudaError_t e) {
  std::fprintf(stderr, "pack-bench-gpu: %s: %s\n", what, cudaGetErrorName(e));
  std::exit(2);
}
#define CK(call)                                  \
  do {                                            \
    const cudaError_t e_ = (call);                \
    if (e_ != cudaSuccess) die(#call, e_);        \
  } while (0)
#define CKG(call)                                                                         \
  do {                                                                                    \
    const gpu::CudaError e_ = (call);                                                     \
    if (e_) { std::fprintf(stderr, "pack-bench-gpu: %s\n", e_.str().c_str()); std::exit(2); } \
  } while (0)

// Median time in microseconds of fn() on stream s.
double time_us(cudaStream_t s, const std::function<void()>& fn) {
  for (int i = 0; i < 3; ++i) fn();
  CK(cudaStreamSynchronize(s));
  std::vector<cudaEvent_t> ev(2 * g_runs);
  for (auto& e : ev) CK(cudaEventCreate(&e));
  for (int i = 0; i < g_runs; ++i) {
    CK(cudaEventRecord(ev[2 * i], s));
    fn();
    CK(cudaEventRecord(ev[2 * i + 1], s));
  }
  CK(cudaStreamSynchronize(s));
  std::vector<double> t(g_runs);
  for (int i = 0; i < g_runs; ++i) {
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
    t[i] = ms * 1000.0;
  }
  for (auto& e : ev) cudaEventDestroy(e);
  return gpuec_bench::upper_median(t);
}

template <class T>
T* device_copy(const std::vector<T>& v) {
  T* p = nullptr;
  CK(cudaMalloc(&p, sizeof(T) * std::max<size_t>(v.size(), 1)));
  if (!v.empty()) CK(cudaMemcpy(p, v.data(), sizeof(T) * v.size(), cudaMemcpyHostToDevice));
  return p;
}

double copy_us(cudaStream_t s, void* dst, const void* src, size_t bytes) {
  return time_us(s, [&] { CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s)); });
}

// One packer case: lengths from `len_of`, word sources laid out back to back (each segment starts
// a new word, as a per-block code buffer would), byte sources at random bit positions.
void pack_case(cudaStream_t s, const char* name, size_t n, const std::function<uint32_t(std::mt19937_64&)>& len_of,
               bool byte_sources, void* scratch_a, void* scratch_b, uint64_t cap = 0) {
  std::mt19937_64 rng(0x5eed + n);
  std::vector<uint32_t> len(n), first(n);
  std::vector<uint64_t> off(n), src_bit;
  uint64_t total = 0, src_words = 0;
  for (size_t i = 0; i < n; ++i) {
    len[i] = len_of(rng);
    off[i] = total;
    total += len[i];
    first[i] = static_cast<uint32_t>(src_words);
    src_words += (len[i] + 31) / 32;
  }
  std::vector<uint32_t> words(src_words + 1);
  for (auto& w : words) w = static_cast<uint32_t>(rng());
  std::vector<uint8_t> bytes;
  if (byte_sources) {  // the same bits, as a byte stream, each segment at its word's first bit
    bytes.resize(words.size() * 4);
    for (size_t i = 0; i < words.size(); ++i)
      for (int b = 0; b < 4; ++b) bytes[4 * i + b] = static_cast<uint8_t>(words[i] >> (24 - 8 * b));
    src_bit.resize(n);
    for (size_t i = 0; i < n; ++i) src_bit[i] = uint64_t{first[i]} * 32;
  }
  const uint64_t out_bytes = vle::packed_bytes(total);
  const uint64_t cap_bytes = std::max(cap, out_bytes);  // the capacity passed (the tile size depends on it)
  uint32_t* d_len = device_copy(len);
  uint32_t* d_first = device_copy(first);
  uint64_t* d_off = device_copy(off);
  uint32_t* d_words = device_copy(words);
  uint8_t* d_bytes = byte_sources ? device_copy(bytes) : nullptr;
  uint64_t* d_src_bit = byte_sources ? device_copy(src_bit) : nullptr;
  uint8_t* d_out = nullptr;
  CK(cudaMalloc(&d_out, std::max<uint64_t>(cap_bytes, 4)));
  const gpuec_bench::WordSegments wseg{d_words, d_first, d_len, d_off, n};
  const gpuec_bench::ByteSegments bseg{d_bytes, d_src_bit, d_len, d_off, n};
  auto run = [&] {
    if (byte_sources) CKG(gpuec_bench::pack_cuda(bseg, d_out, cap_bytes, s));
    else CKG(gpuec_bench::pack_cuda(wseg, d_out, cap_bytes, s));
  };
  // Check once against the CPU twin.
  run();
  CK(cudaStreamSynchronize(s));
  std::vector<uint8_t> got(out_bytes), want(out_bytes);
  CK(cudaMemcpy(got.data(), d_out, out_bytes, cudaMemcpyDeviceToHost));
  gpuec_bench::pack_ref(gpuec_bench::WordSegments{words.data(), first.data(), len.data(), off.data(), n}, want.data(), out_bytes);
  const bool ok = got == want;
  if (!ok) g_failed = true;
  const double us = time_us(s, run);
  const double traffic = 16.0 * n + 4.0 * src_words + out_bytes;  // metadata + sources + output
  const size_t copy_bytes = static_cast<size_t>(traffic / 2);      // a copy of the same traffic
  const double cus = copy_us(s, scratch_a, scratch_b, copy_bytes);
  std::printf("pack %-34s n %9zu  out %9.3f MB  %9.1f us  %7.1f Gbit/s out  %7.1f GB/s traffic  "
              "(same-traffic copy %8.1f us: %5.1f%%)  %s\n",
              name, n, out_bytes / 1e6, us, total / us / 1e3, traffic / us / 1e3, cus, 100.0 * cus / us,
              ok ? "bitexact" : "MISMATCH vs pack_ref");
  cudaFree(d_len);
  cudaFree(d_first);
  cudaFree(d_off);
  cudaFree(d_words);
  cudaFree(d_bytes);
  cudaFree(d_src_bit);
  cudaFree(d_out);
}

void histogram_case(cudaStream_t s, const char* name, uint8_t* d_data, size_t n, const std::vector<uint64_t>& want,
                    uint64_t* d_counts, double copy_gbs) {
  auto run = [&] { CKG(gpuec_bench::histogram_cuda(d_data, n, d_counts, s)); };
  run();
  std::vector<uint64_t> got(256);
  CK(cudaStreamSynchronize(s));
  CK(cudaMemcpy(got.data(), d_counts, 256 * sizeof(uint64_t), cudaMemcpyDeviceToHost));
  const bool ok = got == want;
  if (!ok) g_failed = true;
  const double us = time_us(s, run);
  const double gbs = n / us / 1e3;
  std::printf("histogram %-29s %9.3f GB  %9.1f us  %7.1f GB/s read  (%5.1f%% of copy read+write)  %s\n", name,
              n / 1e9, us, gbs, 100.0 * gbs / copy_gbs, ok ? "exact" : "MISMATCH");
}

uint32_t uniform(std::mt19937_64& r, uint32_t lo, uint32_t hi) { return lo + r() % (uint64_t{hi} - lo + 1); }

}  // namespace

int main(int argc, char** argv) {
  bool big_histogram = true;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) g_runs = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--no-4g")) big_histogram = false;
    else {
      std::fprintf(stderr, "usage: pack-bench-gpu [--runs N] [--no-4g]\n");
      return 2;
    }
  }
  if (gpuec_bench::no_device("pack-bench-gpu")) return 0;
  std::printf("device: %s; %d timed runs per case, median\n", gpu::device_description().c_str(), g_runs);
  cudaStream_t s;
  CK(cudaStreamCreate(&s));

  const size_t gib = size_t{1} << 30;
  uint8_t *a = nullptr, *b = nullptr;
  CK(cudaMalloc(&a, gib));
  CK(cudaMalloc(&b, gib));
  CK(cudaMemset(a, 1, gib));
  CK(cudaMemset(b, 2, gib));
  const double cus = copy_us(s, b, a, gib);
  const double copy_gbs = 2.0 * gib / cus / 1e3;
  std::printf("copy 1 GiB device to device: %.1f us, %.1f GB/s (read + write)\n", cus, copy_gbs);

  auto cavlc = [](std::mt19937_64& r) { return uniform(r, 0, 200); };
  const size_t frame = 8160 * 27;
  pack_case(s, "1080p frame, 0..200 bits", frame, cavlc, false, b, a);
  pack_case(s, "1080p frame, 0..200 bits, byte src", frame, cavlc, true, b, a);
  pack_case(s, "1080p frame, out_bytes 64 MiB", frame, cavlc, false, b, a, uint64_t{64} << 20);
  pack_case(s, "16 frames, 0..200 bits", 16 * frame, cavlc, false, b, a);
  pack_case(s, "tiny: 0..32 bits", size_t{1} << 24, [](std::mt19937_64& r) { return uniform(r, 0, 32); }, false, b, a);
  pack_case(s, "large: 0..2^20 bits", 2048, [](std::mt19937_64& r) { return uniform(r, 0, 1u << 20); }, false, b, a);
  pack_case(s, "large: 0..2^20 bits, byte src", 2048, [](std::mt19937_64& r) { return uniform(r, 0, 1u << 20); },
            true, b, a);

  uint64_t* d_counts = nullptr;
  CK(cudaMalloc(&d_counts, 256 * sizeof(uint64_t)));
  {
    std::vector<uint8_t> host(gib);
    std::mt19937_64 rng(42);
    for (size_t i = 0; i < gib; i += 8) {
      const uint64_t v = rng();
      std::memcpy(&host[i], &v, 8);
    }
    std::vector<uint64_t> want(256, 0);
    for (uint8_t x : host) ++want[x];
    CK(cudaMemcpy(a, host.data(), gib, cudaMemcpyHostToDevice));
    histogram_case(s, "1 GiB random", a, gib, want, d_counts, copy_gbs);
    std::vector<uint64_t> one(256, 0);
    one[7] = gib;
    CK(cudaMemset(b, 7, gib));
    histogram_case(s, "1 GiB one value", b, gib, one, d_counts, copy_gbs);
  }
  CK(cudaFree(a));
  CK(cudaFree(b));
  if (big_histogram) {  // > 4 GiB, odd size and start, filled by regions with known counts
    const size_t n = 4 * gib + 4099;
    uint8_t* d = nullptr;
    CK(cudaMalloc(&d, n + 1));
    std::vector<uint64_t> want(256, 0);
    const size_t cut[] = {0, 12345, gib - 3, 2 * gib + 77, 3 * gib, 4 * gib + 1, n};
    for (int r = 0; r + 1 < 7; ++r) {
      const uint8_t v = static_cast<uint8_t>(37 * r + 200);
      CK(cudaMemset(d + 1 + cut[r], v, cut[r + 1] - cut[r]));
      want[v] += cut[r + 1] - cut[r];
    }
    const int saved = g_runs;
    g_runs = std::min(g_runs, 5);
    histogram_case(s, "4 GiB + 4099, regions", d + 1, n, want, d_counts, copy_gbs);
    g_runs = saved;
    CK(cudaFree(d));
  }
  CK(cudaFree(d_counts));
  CK(cudaStreamDestroy(s));
  std::printf("%s\n", g_failed ? "pack-bench-gpu: MISMATCH (see above)" : "pack-bench-gpu: all outputs exact");
  return g_failed ? 1 : 0;
}
