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

// A session (avc-reentropy --out-dir) over every conformance stream, twice and in two orders, with a damaged
// stream among them: each output and its statistics are the one-thread path's, the damaged one fails as
// with one thread and the session goes on. With cuda on a GPU and the GPU forced from the first batch
// (GPUEC_REENTROPY_CUDA_FROM_BATCH=0), every stream's batches are coded on the GPU, the coders kept from one
// stream to the next; without a GPU every cuda stream fails with the one-thread path's error.
TEST(AvcReentropyThreads, SessionOverManyStreams) {
  std::string dir;
  const std::vector<std::string> names = conformance_streams(&dir);
  if (names.empty()) GTEST_SKIP() << "skipped: no GPUEC_SHARED_DIR/conformance/MANIFEST.tsv";
  std::string why;
  const bool gpu = gpu::device_count(&why) > 0;
  std::vector<std::vector<uint8_t>> in, want;
  std::vector<avc::ReentropyStats> want_st;
  for (const std::string& name : names) {
    in.emplace_back();
    ASSERT_TRUE(read_file(dir + "/" + name, &in.back()));
  }
  in.push_back(std::vector<uint8_t>(in[0].begin(), in[0].begin() + in[0].size() / 2 + 7));  // cut in a slice
  for (const std::vector<uint8_t>& s : in) {
    want.emplace_back();
    want_st.emplace_back();
    avc::Error err;
    const bool ok =
        avc::reentropy_stream(s.data(), s.size(), want.back(), &want_st.back(), err, nullptr, avc::RecoderOptions());
    EXPECT_EQ(ok, &s != &in.back()) << "only the cut stream fails";
  }
  std::vector<size_t> order;
  for (size_t i = 0; i < in.size(); ++i) order.push_back(i);
  for (size_t i = in.size(); i-- > 0;) order.push_back(i);
  struct Config {
    gpu::Backend b;
    bool gpu_from_first_batch;  // GPUEC_REENTROPY_CUDA_FROM_BATCH=0: the GPU coders started and waited for
  };
  for (const Config cfg : {Config{gpu::Backend::kCpu, false}, Config{gpu::Backend::kAuto, false},
                           Config{gpu::Backend::kCuda, false}, Config{gpu::Backend::kCuda, true}}) {
    const gpu::Backend b = cfg.b;
    SCOPED_TRACE(std::string(gpu::backend_name(b)) + (cfg.gpu_from_first_batch ? ", GPU from the first batch" : ""));
    avc::RecoderOptions opt;
    opt.backend = b;
    opt.threads = 3;
    avc::ReentropySession session(opt);
    size_t done = 0;
    for (size_t i : order) {
      SCOPED_TRACE(i < names.size() ? names[i] : "the damaged stream");
      avc::RecoderOptions one;
      one.backend = b;
      std::vector<uint8_t> got, got1;
      avc::ReentropyStats st, st1;
      avc::Error err, err1;
      const bool ok1 = avc::reentropy_stream(in[i].data(), in[i].size(), got1, &st1, err1, nullptr, one);
      if (cfg.gpu_from_first_batch) setenv("GPUEC_REENTROPY_CUDA_FROM_BATCH", "0", 1);
      const bool ok = session.recode(in[i].data(), in[i].size(), got, &st, err);
      unsetenv("GPUEC_REENTROPY_CUDA_FROM_BATCH");
      ASSERT_EQ(ok, ok1);
      if (!ok) {
        EXPECT_EQ(err.describe(), err1.describe());
        EXPECT_TRUE(got == got1);
        EXPECT_TRUE(i == names.size() || (b == gpu::Backend::kCuda && !gpu)) << err.describe();
        continue;
      }
      EXPECT_TRUE(got == want[i]);
      expect_same_stats(st, want_st[i]);
      EXPECT_TRUE(st.threaded);
      if (cfg.gpu_from_first_batch) {
        EXPECT_EQ(st.cpu_batches, 0) << "every batch waits for a GPU coder";
        EXPECT_EQ(st.cuda_macroblocks, st.macroblocks);
      }
      ++done;
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
