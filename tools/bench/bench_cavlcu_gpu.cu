// cavlcu-bench-gpu: per-frame time of the CAVLCU kernel (cavlc/frame_cuda.h, both variants) and of its
// CPU twin code_frame_ref on this machine's CPU (one thread), for random x264-like frames
// (tests/common/random_mb.h) at QCIF, CIF, 720p, 1080p and 2160p and three coefficient densities
// (roughly x264 at QP 40, 26 and 10). GPU: data resident on the device, CUDA events around each call
// (the memset of the fused variant's flags included), 5 warm-up calls, median of 50. CPU: median of up to
// 20 calls. Every GPU result is checked against the CPU twin once (lengths and slot bytes).
// Usage: cavlcu-bench-gpu [--seed N]
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cavlc/frame.h"
#include "cavlc/frame_cuda.h"
#include "random_mb.h"
#include "bench_util.h"

#define CHECK_CUDA(call) GPUEC_BENCH_CHECK_CUDA(call, 1)

using gpuec_bench::upper_median;

int main(int argc, char** argv) {
  const uint32_t seed = gpuec_bench::seed_option(argc, argv, 12345);
  std::printf("cavlcu-bench-gpu: %s, seed %u\n", gpuec_bench::device_description(0, 1).c_str(), seed);
  const cavlc::FrameCudaVariant variants[] = {cavlc::FrameCudaVariant::kFused, cavlc::FrameCudaVariant::kTwoPass};
  std::mt19937 rng(seed);
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreate(&stream));
  std::printf("%-6s %-5s %7s %8s %9s %12s %10s %10s\n", "size", "dens", "MBs", "bits/MB", "fused us",
              "two-pass us", "CPU us", "CPU/fused");
  int mismatches = 0;
  for (const auto& s : gpuec_bench::kFrameSizes) {
    for (const auto& d : gpuec_bench::kDensities) {
      const int n = s.w * s.h;
      const size_t nslots = static_cast<size_t>(n) * cavlc::kMbSlots;
      const auto recs = cavlc_test::random_frame(rng, n, d.pct);
      std::vector<int32_t> sid(static_cast<size_t>(n), 0);
      std::vector<uint8_t> ref_bits(nslots * cavlc::kSlotBytes, 0);
      std::vector<uint16_t> ref_len(nslots, 0);
      std::vector<double> cpu;
      const int cpu_reps = n > 10000 ? 7 : 20;
      for (int r = 0; r < cpu_reps; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        if (cavlc::code_frame_ref(recs.data(), s.w, s.h, sid.data(), ref_bits.data(), ref_len.data()) != 0) {
          std::fprintf(stderr, "code_frame_ref failed\n");
          return 1;
        }
        const auto t1 = std::chrono::steady_clock::now();
        cpu.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
      }
      uint64_t total_bits = 0;
      for (uint16_t l : ref_len) total_bits += l;

      gpuec_mb* d_recs;
      int32_t* d_sid;
      uint8_t* d_bits;
      uint16_t* d_len;
      void* d_ws;
      const size_t ws_bytes = cavlc::code_frame_cuda_workspace_bytes(s.w, s.h);
      CHECK_CUDA(cudaMalloc(&d_recs, n * sizeof(gpuec_mb)));
      CHECK_CUDA(cudaMalloc(&d_sid, n * sizeof(int32_t)));
      CHECK_CUDA(cudaMalloc(&d_bits, nslots * cavlc::kSlotBytes));
      CHECK_CUDA(cudaMalloc(&d_len, nslots * 2));
      CHECK_CUDA(cudaMalloc(&d_ws, ws_bytes));
      CHECK_CUDA(cudaMemcpy(d_recs, recs.data(), n * sizeof(gpuec_mb), cudaMemcpyHostToDevice));
      CHECK_CUDA(cudaMemcpy(d_sid, sid.data(), n * sizeof(int32_t), cudaMemcpyHostToDevice));
      double gpu_us[2] = {0, 0};
      for (int vi = 0; vi < 2; ++vi) {
        auto call = [&] {
          const gpu::CudaError err = cavlc::code_frame_cuda_variant(variants[vi], d_recs, s.w, s.h, d_sid, d_bits,
                                                                    d_len, d_ws, ws_bytes, stream);
          if (err) {
            std::fprintf(stderr, "code_frame_cuda: %s\n", err.str().c_str());
            std::exit(1);
          }
        };
        CHECK_CUDA(cudaMemset(d_bits, 0, nslots * cavlc::kSlotBytes));
        gpu_us[vi] = upper_median(gpuec_bench::event_times_us(stream, 5, 50, call, 1));
        std::vector<uint8_t> bits(nslots * cavlc::kSlotBytes);
        std::vector<uint16_t> len(nslots);
        CHECK_CUDA(cudaMemcpy(bits.data(), d_bits, bits.size(), cudaMemcpyDeviceToHost));
        CHECK_CUDA(cudaMemcpy(len.data(), d_len, nslots * 2, cudaMemcpyDeviceToHost));
        // ref_bits was zero-filled and the device buffer too: every byte must match
        if (len != ref_len || bits != ref_bits) {
          ++mismatches;
          std::fprintf(stderr, "MISMATCH: %s %s %s\n", s.name, d.name, cavlc::frame_cuda_variant_name(variants[vi]));
        }
      }
      const double cpu_us = upper_median(cpu);
      std::printf("%-6s %-5s %7d %8.1f %9.1f %12.1f %10.1f %10.1f\n", s.name, d.name, n,
                  static_cast<double>(total_bits) / n, gpu_us[0], gpu_us[1], cpu_us, cpu_us / gpu_us[0]);
      CHECK_CUDA(cudaFree(d_recs));
      CHECK_CUDA(cudaFree(d_sid));
      CHECK_CUDA(cudaFree(d_bits));
      CHECK_CUDA(cudaFree(d_len));
      CHECK_CUDA(cudaFree(d_ws));
    }
  }
  std::printf("%s\n", mismatches ? "RESULT: MISMATCH" : "RESULT: all GPU results equal the CPU twin");
  return mismatches ? 1 : 0;
}
