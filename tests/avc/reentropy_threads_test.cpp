// The threaded re-entropy (RecoderOptions::threads > 1, avc/reentropy.h): for every number of threads and
// every backend available (cpu; auto, which is cuda on the GPU machine), the output and the statistics
// equal the one-thread path's, on the JVT conformance streams (slice groups, redundant slices, many
// slices per picture), on the same streams with every picture's slices in reverse order (ASO), with
// batches of one macroblock to many pictures, and on damaged streams (the threaded path hands them to the
// sequential one, which gives the same bytes or the same error).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "avc/annexb.h"
#include "avc/headers.h"
#include "avc/reentropy.h"
#include "conformance_streams.h"
#include "gpu/device.h"
#include "test_seed.h"

namespace {

using avc_test::conformance_streams;
using avc_test::read_file;

constexpr gpu::Backend kBackends[] = {gpu::Backend::kCpu, gpu::Backend::kAuto};
constexpr int kThreads[] = {2, 3, 8};

void expect_same_stats(const avc::ReentropyStats& a, const avc::ReentropyStats& b) {
  EXPECT_EQ(a.nal_units, b.nal_units);
  EXPECT_EQ(a.slices, b.slices);
  EXPECT_EQ(a.redundant_slices, b.redundant_slices);
  EXPECT_EQ(a.macroblocks, b.macroblocks);
  EXPECT_EQ(a.coded_macroblocks, b.coded_macroblocks);
  EXPECT_EQ(a.pictures, b.pictures);
  EXPECT_EQ(a.residual_bits, b.residual_bits);
  EXPECT_EQ(a.nonstandard_escaping, b.nonstandard_escaping);
  EXPECT_EQ(a.recoded_differs, b.recoded_differs);
}

// Every thread count and backend against threads = 1 (cpu); the threaded path must have run.
void check_stream(const std::vector<uint8_t>& in, int batch_mbs) {
  avc::RecoderOptions one;
  std::vector<uint8_t> want, got;
  avc::ReentropyStats want_st, st;
  avc::Error err;
  ASSERT_TRUE(avc::reentropy_stream(in.data(), in.size(), want, &want_st, err, nullptr, one)) << err.describe();
  EXPECT_FALSE(want_st.threaded);
  for (gpu::Backend b : kBackends)
    for (int t : kThreads) {
      SCOPED_TRACE(std::string(gpu::backend_name(b)) + ", threads " + std::to_string(t) + ", batch " +
                   std::to_string(batch_mbs));
      avc::RecoderOptions opt;
      opt.backend = b;
      opt.threads = t;
      opt.batch_mbs = batch_mbs;
      ASSERT_TRUE(avc::reentropy_stream(in.data(), in.size(), got, &st, err, nullptr, opt)) << err.describe();
      EXPECT_TRUE(st.threaded);
      EXPECT_TRUE(got == want);
      expect_same_stats(st, want_st);
    }
}

TEST(AvcReentropyThreads, ConformanceStreamsAsOneThread) {
  std::string dir;
  const std::vector<std::string> names = conformance_streams(&dir);
  if (names.empty()) GTEST_SKIP() << "skipped: no GPUEC_SHARED_DIR/conformance/MANIFEST.tsv";
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    std::vector<uint8_t> in;
    ASSERT_TRUE(read_file(dir + "/" + name, &in));
    check_stream(in, 1 << 16);
  }
}

TEST(AvcReentropyThreads, SmallAndLargeBatches) {
  std::string dir;
  if (conformance_streams(&dir).empty()) GTEST_SKIP() << "skipped: no GPUEC_SHARED_DIR/conformance/MANIFEST.tsv";
  for (const char* name : {"CI1_FT_B.264", "MIDR_MW_D.264", "SVA_BA1_B.264"})
    for (int batch : {1, 150, 1 << 20}) {
      SCOPED_TRACE(name);
      std::vector<uint8_t> in;
      ASSERT_TRUE(read_file(dir + "/" + name, &in));
      check_stream(in, batch);
    }
}

// Every picture's slices in reverse order (arbitrary slice order): ranges cannot be bounded by the next
// slice, so slices take the picture's end as theirs and further bands.
TEST(AvcReentropyThreads, ReversedSliceOrder) {
  std::string dir;
  if (conformance_streams(&dir).empty()) GTEST_SKIP() << "skipped: no GPUEC_SHARED_DIR/conformance/MANIFEST.tsv";
  for (const char* name : {"SVA_Base_B.264", "CI1_FT_B.264", "BA1_FT_C.264"}) {
    SCOPED_TRACE(name);
    std::vector<uint8_t> in;
    ASSERT_TRUE(read_file(dir + "/" + name, &in));
    std::vector<uint8_t> aso;
    avc::Error err;
    int reordered = 0;
    ASSERT_TRUE(avc_test::reverse_slices(in, &aso, &reordered, &err)) << err.describe();
    ASSERT_NE(aso, in);
    check_stream(aso, 1 << 16);
  }
}

// The cuda backend's background start: batches begun before the GPU coders are ready are coded on the
// CPU (one picture each), the later ones on the GPU. GPUEC_REENTROPY_CUDA_FROM_BATCH=K makes the switch
// happen at batch K (the GPU coders taken, waited for, there): for every K the bytes and statistics are the
// one-thread path's, the CPU codes exactly K batches (all of them when the stream has fewer), the GPU the
// rest. Without a GPU: kCuda fails with the sequential path's error, whatever the threads.
TEST(AvcReentropyThreads, CudaBeforeAndAfterTheGpuIsReady) {
  std::string dir;
  if (conformance_streams(&dir).empty()) GTEST_SKIP() << "skipped: no GPUEC_SHARED_DIR/conformance/MANIFEST.tsv";
  std::string why;
  const bool gpu = gpu::device_count(&why) > 0;
  for (const char* name : {"BA1_FT_C.264", "CI1_FT_B.264", "MIDR_MW_D.264", "SVA_BA1_B.264"}) {
    SCOPED_TRACE(name);
    std::vector<uint8_t> in, want, got;
    ASSERT_TRUE(read_file(dir + "/" + name, &in));
    avc::ReentropyStats want_st, st;
    avc::Error err, err1;
    ASSERT_TRUE(avc::reentropy_stream(in.data(), in.size(), want, &want_st, err, nullptr, avc::RecoderOptions()));
    if (!gpu) {
      avc::RecoderOptions one, many;
      one.backend = many.backend = gpu::Backend::kCuda;
      many.threads = 4;
      EXPECT_FALSE(avc::reentropy_stream(in.data(), in.size(), got, &st, err1, nullptr, one));
      EXPECT_FALSE(avc::reentropy_stream(in.data(), in.size(), got, &st, err, nullptr, many));
      EXPECT_EQ(err.status, avc::Status::kBackend);
      EXPECT_EQ(err.describe(), err1.describe());
      continue;
    }
    for (const int k : {0, 1, 3, 7, 100000})
      for (const int threads : {3, 8}) {
        SCOPED_TRACE("from batch " + std::to_string(k) + ", threads " + std::to_string(threads));
        setenv("GPUEC_REENTROPY_CUDA_FROM_BATCH", std::to_string(k).c_str(), 1);
        avc::RecoderOptions opt;
        opt.backend = gpu::Backend::kCuda;
        opt.threads = threads;
        const bool ok = avc::reentropy_stream(in.data(), in.size(), got, &st, err, nullptr, opt);
        unsetenv("GPUEC_REENTROPY_CUDA_FROM_BATCH");
        ASSERT_TRUE(ok) << err.describe();
        EXPECT_TRUE(st.threaded);
        EXPECT_TRUE(got == want);
        expect_same_stats(st, want_st);
        EXPECT_EQ(st.cpu_macroblocks + st.cuda_macroblocks, st.macroblocks);
        EXPECT_EQ(st.cpu_batches > 0, st.cpu_macroblocks > 0);
        EXPECT_EQ(st.cuda_batches > 0, st.cuda_macroblocks > 0);
        if (st.cuda_batches > 0) {
          EXPECT_EQ(st.cpu_batches, k);
        }
        if (k == 0) {
          EXPECT_EQ(st.cpu_batches, 0);
        }
        if (k == 100000) {
          EXPECT_EQ(st.cuda_batches, 0);
        }
        if (k > 0 && k <= 3) {
          EXPECT_GT(st.cuda_batches, 0) << "the stream has more than " << k << " pictures";
        }
      }
  }
}

// Damaged streams: the same acceptance, the same bytes (the NAL units before the faulty one on an error)
// and the same error as one thread.
TEST(AvcReentropyThreads, MutatedStreamsAsOneThread) {
  std::vector<std::vector<uint8_t>> seeds;
  if (!avc_test::fuzz_seeds(&seeds)) GTEST_SKIP() << "skipped: no GPUEC_SHARED_DIR/conformance/MANIFEST.tsv";
  std::mt19937 rng(gpuec_test::test_seed("avc_reentropy_threads_test"));
  std::vector<uint8_t> m, want, got;
  int parsed = 0, threaded = 0;
  const int kRuns = 150;
  for (int iter = 0; iter < kRuns; ++iter) {
    avc_test::mutated_stream(seeds, rng, &m);
    avc::RecoderOptions opt;
    avc::Error e1, e2;
    avc::ReentropyStats s1, s2;
    const bool ok1 = avc::reentropy_stream(m.data(), m.size(), want, &s1, e1, nullptr, opt);
    opt.threads = 2 + int(rng() % 7);
    opt.backend = kBackends[rng() % 2];
    opt.batch_mbs = 1 + int(rng() % 2000);
    const bool ok2 = avc::reentropy_stream(m.data(), m.size(), got, &s2, e2, nullptr, opt);
    ASSERT_EQ(ok1, ok2) << e1.describe() << " / " << e2.describe();
    if (!ok1) {
      EXPECT_EQ(e1.describe(), e2.describe()) << "iteration " << iter;
    }
    EXPECT_TRUE(got == want) << "iteration " << iter;
    if (ok1) expect_same_stats(s1, s2);
    parsed += ok1;
    threaded += s2.threaded;
  }
  std::printf("%d of %d mutated streams parsed, %d by the threaded path\n", parsed, kRuns, threaded);
}

}  // namespace
