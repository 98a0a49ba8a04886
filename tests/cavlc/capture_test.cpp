// Real macroblock data (captures of the patched x264, tools/scripts/make-captures.sh) through the frame
// path: code_frame_ref + assemble_slice_ref must give exactly the slices the stage produced during
// the encode (bit count and hash recorded in the capture), and the CAVLCU kernel (every variant)
// must fill the same slots as code_frame_ref. Each frame also goes through both coders as a random mix of
// scan- and raster-order records (tests/common/raster.h, cavlc/mb.h coef_order), which must give the
// scan-order frame's slots. Captures: every *.cap or *.cap.xz in $GPUEC_CAPTURES
// (default $GPUEC_SHARED_DIR/captures). Frames: a slice with first_mb 0 starts a frame (captures of
// --threads 1 encodes).
#include <gtest/gtest.h>
#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "capture_files.h"
#include "slice_assembly.h"
#include "cavlc/frame.h"
#include "gpu/device.h"
#include "cavlc/capture.h"
#include "raster.h"
#include "vle/bitwriter.h"
#ifdef GPUEC_CAPTURE_TEST_CUDA
#include <cuda_runtime_api.h>

#include "cavlc/frame_cuda.h"
#endif

namespace {

struct Frame {
  int mb_width = 0, mb_height = 0;
  std::vector<gpuec_mb> recs;
  std::vector<int32_t> slice_id;
  std::vector<const cavlc::CapturedSlice*> slices;
};

using cavlc_test::capture_files;
using cavlc_test::captures_dir;

bool load(const std::string& path, std::vector<cavlc::CapturedSlice>* slices, std::string* err) {
  return cavlc_test::load_capture(path, "capture-test", slices, err);
}

std::vector<Frame> frames_of(const std::vector<cavlc::CapturedSlice>& slices) {
  std::vector<Frame> frames;
  for (const auto& s : slices) {
    if (s.head.first_mb == 0 || frames.empty()) {
      frames.emplace_back();
      frames.back().mb_width = static_cast<int>(s.head.mb_width);
      frames.back().mb_height = static_cast<int>(s.head.mb_height);
    }
    Frame& f = frames.back();
    const int32_t id = static_cast<int32_t>(f.slices.size());
    f.slices.push_back(&s);
    f.recs.insert(f.recs.end(), s.recs.begin(), s.recs.end());
    f.slice_id.insert(f.slice_id.end(), s.recs.size(), id);
  }
  return frames;
}

// Calls fn(path, frame) for every frame of every capture; fails the test on an unreadable capture or a
// frame its slices do not cover. Returns the number of capture files.
template <class Fn>
size_t for_each_frame(Fn fn) {
  const std::vector<std::string> files = capture_files();
  for (const std::string& path : files) {
    std::vector<cavlc::CapturedSlice> slices;
    std::string err;
    EXPECT_TRUE(load(path, &slices, &err)) << err;
    for (const Frame& f : frames_of(slices)) {
      EXPECT_EQ(static_cast<int>(f.recs.size()), f.mb_width * f.mb_height)
          << path << ": a frame's slices do not cover it";
      if (::testing::Test::HasFailure()) return files.size();
      fn(path, f);
      if (::testing::Test::HasFailure()) return files.size();
    }
  }
  return files.size();
}

TEST(CavlcCapture, FramePathReproducesTheStageOutput) {
  if (capture_files().empty())
    GTEST_SKIP() << "skipped: no captures in " << captures_dir() << " (tools/scripts/make-captures.sh)";
  size_t nframes = 0, nslices = 0;
  std::mt19937 rng(1);
  const size_t nfiles = for_each_frame([&](const std::string& path, const Frame& f) {
      const int nmb = f.mb_width * f.mb_height;
      std::vector<uint8_t> bits(static_cast<size_t>(nmb) * cavlc::kMbSlots * cavlc::kSlotBytes);
      std::vector<uint16_t> len(static_cast<size_t>(nmb) * cavlc::kMbSlots);
      ASSERT_EQ(cavlc::code_frame_ref(f.recs.data(), f.mb_width, f.mb_height, f.slice_id.data(), bits.data(),
                                      len.data()), 0) << path;
      {  // the frame with raster-order records mixed in: the same slots
        const std::vector<gpuec_mb> mixed = cavlc_test::mixed_orders(f.recs, rng);
        std::vector<uint8_t> mixed_bits(bits.size());
        std::vector<uint16_t> mixed_len(len.size());
        ASSERT_EQ(cavlc::code_frame_ref(mixed.data(), f.mb_width, f.mb_height, f.slice_id.data(), mixed_bits.data(),
                                        mixed_len.data()), 0) << path;
        ASSERT_TRUE(mixed_len == len) << path << " frame " << nframes << ": raster-order records, lengths differ";
        ASSERT_TRUE(mixed_bits == bits) << path << " frame " << nframes << ": raster-order records, slots differ";
      }
      int first = 0;
      for (const cavlc::CapturedSlice* s : f.slices) {
        const int last = first + static_cast<int>(s->recs.size()) - 1;
        // The capture's skeleton starts at byte start_bit / 8 of the encoder's buffer; records hold
        // insertion points in buffer coordinates: rebase the span onto the skeleton copy.
        const int64_t base = (s->head.start_bit / 8) * 8;
        std::vector<gpuec_mb> recs(f.recs);
        for (int a = first; a <= last; ++a) recs[a].skel_bit -= base;
        const cavlc_test::SliceSpan span{first, last, s->head.start_bit - base, s->head.end_bit - base};
        std::vector<uint8_t> out(vle::bits_to_bytes(static_cast<uint64_t>(s->head.out_bits)) + 1024);
        const int64_t got = cavlc_test::assemble_slice_ref(recs.data(), bits.data(), len.data(), span,
                                                      s->skeleton.data(), out.data(), out.size());
        ASSERT_EQ(got, s->head.out_bits) << path << " slice " << s->head.slice_index;
        ASSERT_EQ(cavlc::capture_hash(out.data(), got), s->head.out_hash) << path << " slice " << s->head.slice_index;
        first = last + 1;
        ++nslices;
      }
      ++nframes;
  });
  std::printf("%zu capture files, %zu frames, %zu slices reproduced bit for bit\n", nfiles, nframes, nslices);
}

#ifdef GPUEC_CAPTURE_TEST_CUDA
TEST(CavlcCaptureCuda, KernelMatchesTheCpuTwinOnRealFrames) {
  std::string why;
  if (gpu::device_count(&why) == 0) GTEST_SKIP() << "skipped: " << why;
  if (capture_files().empty()) GTEST_SKIP() << "skipped: no captures in " << captures_dir();
  size_t nframes = 0;
  std::mt19937 rng(1);
  const size_t nfiles = for_each_frame([&](const std::string& path, const Frame& f) {
      const int nmb = f.mb_width * f.mb_height;
      const std::vector<gpuec_mb> mixed = cavlc_test::mixed_orders(f.recs, rng);  // scan and raster records
      const size_t nbits = static_cast<size_t>(nmb) * cavlc::kMbSlots * cavlc::kSlotBytes;
      const size_t nlen = static_cast<size_t>(nmb) * cavlc::kMbSlots;
      std::vector<uint8_t> ref(nbits, 0xA5);
      std::vector<uint16_t> ref_len(nlen, 0xBEEF);
      ASSERT_EQ(cavlc::code_frame_ref(f.recs.data(), f.mb_width, f.mb_height, f.slice_id.data(), ref.data(),
                                      ref_len.data()), 0);
      void *d_recs = nullptr, *d_ids = nullptr, *d_bits = nullptr, *d_len = nullptr, *d_ws = nullptr;
      const size_t ws = cavlc::code_frame_cuda_workspace_bytes(f.mb_width, f.mb_height);
      ASSERT_EQ(cudaMalloc(&d_recs, f.recs.size() * sizeof(gpuec_mb)), cudaSuccess);
      ASSERT_EQ(cudaMalloc(&d_ids, f.slice_id.size() * 4), cudaSuccess);
      ASSERT_EQ(cudaMalloc(&d_bits, nbits), cudaSuccess);
      ASSERT_EQ(cudaMalloc(&d_len, nlen * 2), cudaSuccess);
      ASSERT_EQ(cudaMalloc(&d_ws, ws), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(d_ids, f.slice_id.data(), f.slice_id.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
      for (const std::vector<gpuec_mb>* in : {&f.recs, &mixed}) {
        ASSERT_EQ(cudaMemcpy(d_recs, in->data(), in->size() * sizeof(gpuec_mb), cudaMemcpyHostToDevice), cudaSuccess);
        for (cavlc::FrameCudaVariant v : {cavlc::FrameCudaVariant::kFused, cavlc::FrameCudaVariant::kTwoPass}) {
          ASSERT_EQ(cudaMemset(d_bits, 0xA5, nbits), cudaSuccess);
          ASSERT_EQ(cudaMemset(d_len, 0xEF, nlen * 2), cudaSuccess);
          const gpu::CudaError e = cavlc::code_frame_cuda_variant(
              v, static_cast<const gpuec_mb*>(d_recs), f.mb_width, f.mb_height, static_cast<const int32_t*>(d_ids),
              static_cast<uint8_t*>(d_bits), static_cast<uint16_t*>(d_len), d_ws, ws, nullptr);
          ASSERT_FALSE(e) << e.str();
          ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
          std::vector<uint8_t> got(nbits);
          std::vector<uint16_t> got_len(nlen);
          ASSERT_EQ(cudaMemcpy(got.data(), d_bits, nbits, cudaMemcpyDeviceToHost), cudaSuccess);
          ASSERT_EQ(cudaMemcpy(got_len.data(), d_len, nlen * 2, cudaMemcpyDeviceToHost), cudaSuccess);
          for (size_t s = 0; s < nlen; ++s) {
            ASSERT_EQ(got_len[s], ref_len[s]) << path << " frame " << nframes << " mb " << s / cavlc::kMbSlots
                                              << " slot " << s % cavlc::kMbSlots << " variant " << int(v)
                                              << (in == &mixed ? ", scan / raster mix" : "");
            const size_t used = (ref_len[s] + 31u) / 32u * 4u;
            ASSERT_TRUE(std::equal(ref.begin() + s * cavlc::kSlotBytes, ref.begin() + s * cavlc::kSlotBytes + used,
                                   got.begin() + s * cavlc::kSlotBytes))
                << path << " frame " << nframes << " mb " << s / cavlc::kMbSlots << " slot " << s % cavlc::kMbSlots
                << (in == &mixed ? ", scan / raster mix" : "");
          }
        }
      }
      cudaFree(d_recs); cudaFree(d_ids); cudaFree(d_bits); cudaFree(d_len); cudaFree(d_ws);
      ++nframes;
  });
  std::printf("%zu capture files, %zu frames: kernel == CPU twin\n", nfiles, nframes);
}
#endif

}  // namespace
