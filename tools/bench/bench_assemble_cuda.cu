// assemble-bench-gpu: per-frame time of the GPU stage without transfers: the CAVLCU kernel
// (code_frame_cuda) followed by the frame assembly (assemble_frame_cuda, cavlc/assemble_frame_cuda.h),
// and of the assembly alone, for random x264-like frames (tests/common/random_mb.h) with random skeletons
// (tests/common/frame_arena.h: 0..99-bit first leads, 1..23-bit leads, up to 29-bit tails) at QCIF, CIF,
// 720p, 1080p and 2160p, three coefficient densities (roughly x264 at QP 40, 26 and 10) and two slice
// layouts (one slice; a slice per macroblock row). Data resident on the device, output sized with
// assemble_frame_bound_bits, CUDA events around the calls on one stream (memsets included), 5 warm-up
// calls, median of 50. Every frame's output is checked once against code_frame_ref + assemble_frame_ref.
// Usage: assemble-bench-gpu [--seed N]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "cavlc/assemble_frame.h"
#include "cavlc/assemble_frame_cuda.h"
#include "cavlc/frame.h"
#include "cavlc/frame_cuda.h"
#include "frame_arena.h"
#include "random_mb.h"
#include "vle/bitwriter.h"
#include "bench_util.h"

#define CHECK_CUDA(call) GPUEC_BENCH_CHECK_CUDA(call, 1)
#define CHECK_GPUEC(call) GPUEC_BENCH_CHECK(call, 1)

int main(int argc, char** argv) {
  const uint32_t seed = gpuec_bench::seed_option(argc, argv, 12345);
  std::printf("assemble-bench-gpu: %s, seed %u\n", gpuec_bench::device_description(0, 1).c_str(), seed);
  std::mt19937 rng(seed);
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreate(&stream));
  std::printf("%-6s %-5s %-8s %7s %7s %9s %12s %14s %12s\n", "size", "dens", "slices", "MBs", "n_slc", "kbit",
              "code us", "code+asm us", "asm us");
  int mismatches = 0;
  for (const auto& s : gpuec_bench::kFrameSizes) {
    for (const auto& d : gpuec_bench::kDensities) {
      for (int per_row = 0; per_row < 2; ++per_row) {
        const int n = s.w * s.h;
        auto recs = cavlc_test::random_frame(rng, n, d.pct);
        const auto layout = per_row ? cavlc_test::SliceLayout::kPerRow : cavlc_test::SliceLayout::kOne;
        cavlc_test::FrameArena f =
            cavlc_test::make_frame_arena(rng, s.w, s.h, std::move(recs), cavlc_test::slice_ranges(layout, s.w, s.h, rng), 5);
        if (f.code_ref() != 0) {
          std::fprintf(stderr, "code_frame_ref failed\n");
          return 1;
        }
        const int n_slices = static_cast<int>(f.slices.size());
        const uint64_t out_bytes = vle::packed_bytes(f.bound_bits());
        std::vector<cavlc::SliceResult> ref_res(static_cast<size_t>(n_slices));
        std::vector<uint8_t> ref_out(static_cast<size_t>(out_bytes), 0);
        const uint64_t ref_total = cavlc::assemble_frame_ref(f.view(), ref_out.data(), out_bytes, ref_res.data());

        uint8_t *d_arena, *d_out, *d_cws, *d_aws;
        uint16_t* d_len;
        int32_t* d_sid;
        cavlc::MbLead* d_lead;
        cavlc::FrameSlice* d_slices;
        cavlc::SliceResult* d_res;
        uint64_t* d_total;
        const size_t cws = cavlc::code_frame_cuda_workspace_bytes(s.w, s.h);
        const size_t aws = cavlc::assemble_frame_cuda_workspace_bytes(n, n_slices);
        CHECK_CUDA(cudaMalloc(&d_arena, f.arena.size()));
        CHECK_CUDA(cudaMalloc(&d_out, out_bytes));
        CHECK_CUDA(cudaMalloc(&d_cws, cws));
        CHECK_CUDA(cudaMalloc(&d_aws, aws));
        CHECK_CUDA(cudaMalloc(&d_len, f.slot_len.size() * 2));
        CHECK_CUDA(cudaMalloc(&d_sid, f.slice_id.size() * 4));
        CHECK_CUDA(cudaMalloc(&d_lead, f.lead.size() * sizeof(cavlc::MbLead)));
        CHECK_CUDA(cudaMalloc(&d_slices, f.slices.size() * sizeof(cavlc::FrameSlice)));
        CHECK_CUDA(cudaMalloc(&d_res, f.slices.size() * sizeof(cavlc::SliceResult)));
        CHECK_CUDA(cudaMalloc(&d_total, 8));
        CHECK_CUDA(cudaMemcpy(d_arena, f.arena.data(), f.arena.size(), cudaMemcpyHostToDevice));
        CHECK_CUDA(cudaMemset(d_arena + f.slots_off, 0, f.slot_bytes()));
        CHECK_CUDA(cudaMemcpy(d_sid, f.slice_id.data(), f.slice_id.size() * 4, cudaMemcpyHostToDevice));
        CHECK_CUDA(cudaMemcpy(d_lead, f.lead.data(), f.lead.size() * sizeof(cavlc::MbLead), cudaMemcpyHostToDevice));
        CHECK_CUDA(cudaMemcpy(d_slices, f.slices.data(), f.slices.size() * sizeof(cavlc::FrameSlice),
                              cudaMemcpyHostToDevice));
        cavlc::FrameAssembly in = f.view();
        in.arena = d_arena;
        in.records = reinterpret_cast<const gpuec_mb*>(d_arena + f.records_off);
        in.slot_len = d_len;
        in.lead = d_lead;
        in.slices = d_slices;
        auto code = [&] {
          CHECK_GPUEC(cavlc::code_frame_cuda(in.records, s.w, s.h, d_sid, d_arena + f.slots_off, d_len, d_cws, cws,
                                             stream));
        };
        auto assemble = [&] {
          CHECK_GPUEC(cavlc::assemble_frame_cuda(in, d_out, out_bytes, d_res, d_total, d_aws, aws, stream));
        };
        auto time = [&](auto&& fn) {
          return gpuec_bench::upper_median(gpuec_bench::event_times_us(stream, 5, 50, fn, 1));
        };
        const double code_us = time(code);
        const double both_us = time([&] {
          code();
          assemble();
        });
        const double asm_us = time(assemble);
        uint64_t total = 0;
        std::vector<uint8_t> out(static_cast<size_t>(vle::packed_bytes(ref_total)));
        std::vector<cavlc::SliceResult> res(static_cast<size_t>(n_slices));
        CHECK_CUDA(cudaMemcpy(&total, d_total, 8, cudaMemcpyDeviceToHost));
        CHECK_CUDA(cudaMemcpy(out.data(), d_out, out.size(), cudaMemcpyDeviceToHost));
        CHECK_CUDA(cudaMemcpy(res.data(), d_res, res.size() * sizeof(cavlc::SliceResult), cudaMemcpyDeviceToHost));
        ref_out.resize(out.size());
        bool same = total == ref_total && out == ref_out;
        for (int k = 0; k < n_slices; ++k)
          same = same && res[k].out_bit == ref_res[k].out_bit && res[k].bits == ref_res[k].bits;
        if (!same) {
          ++mismatches;
          std::fprintf(stderr, "MISMATCH: %s %s %s\n", s.name, d.name, per_row ? "per row" : "one");
        }
        std::printf("%-6s %-5s %-8s %7d %7d %9.1f %12.1f %14.1f %12.1f\n", s.name, d.name, per_row ? "per-row" : "one",
                    n, n_slices, static_cast<double>(ref_total) / 1000.0, code_us, both_us, asm_us);
        for (void* p : {static_cast<void*>(d_arena), static_cast<void*>(d_out), static_cast<void*>(d_cws),
                        static_cast<void*>(d_aws), static_cast<void*>(d_len), static_cast<void*>(d_sid),
                        static_cast<void*>(d_lead), static_cast<void*>(d_slices), static_cast<void*>(d_res),
                        static_cast<void*>(d_total)})
          CHECK_CUDA(cudaFree(p));
      }
    }
  }
  std::printf("%s\n", mismatches ? "RESULT: MISMATCH" : "RESULT: all GPU results equal the CPU twin");
  return mismatches ? 1 : 0;
}
