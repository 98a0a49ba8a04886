// The .gvle file made with the CUDA encoder equals the CPU one byte for byte (what `gvle compress
// --backend cuda` writes), on the Canterbury corpus and on edge cases; and it decompresses.
#include <gtest/gtest.h>

#include "gpu_test.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "gpu/device.h"
#include "vle/encoders.h"
#include "vle/format.h"
#include "vle_inputs.h"

namespace {

using Bytes = std::vector<uint8_t>;

bool load(const std::string& path, Bytes* out) {
  out->clear();
  const bool xz = path.size() > 3 && path.compare(path.size() - 3, 3, ".xz") == 0;
  FILE* f = xz ? popen(("xz -dc -- '" + path + "'").c_str(), "r") : std::fopen(path.c_str(), "rb");
  if (!f) return false;
  uint8_t buf[1 << 16];
  size_t r;
  while ((r = std::fread(buf, 1, sizeof buf, f)) > 0) out->insert(out->end(), buf, buf + r);
  return xz ? pclose(f) == 0 : std::fclose(f) == 0;
}

void expect_same_file(const Bytes& in, const std::string& what) {
  Bytes cpu, cuda;
  ASSERT_TRUE(vle::compress(in.data(), in.size(), gpu::Backend::kCpu, &cpu).ok()) << what;
  const vle::Status s = vle::compress(in.data(), in.size(), gpu::Backend::kCuda, &cuda);
  ASSERT_TRUE(s.ok()) << what << ": " << s.message;
  ASSERT_EQ(vle::cuda_encoder_error(), "") << what;
  ASSERT_EQ(cuda.size(), cpu.size()) << what;
  size_t i = 0;
  while (i < cpu.size() && cpu[i] == cuda[i]) ++i;
  EXPECT_EQ(i, cpu.size()) << what << ": first differing byte " << i;
  Bytes back;
  const vle::Status d = vle::decompress(cuda.data(), cuda.size(), &back, vle::DecompressOptions{});
  EXPECT_TRUE(d.ok() && back == in) << what << ": " << d.message;
}

TEST(GvleFormatCuda, CanterburyFilesMatchTheCpuFile) {
  REQUIRE_GPU();
  const char* shared = std::getenv("GPUEC_SHARED_DIR");
  ASSERT_TRUE(shared) << "GPUEC_SHARED_DIR not set";
  const char* names[] = {"alice29.txt", "asyoulik.txt", "cp.html",      "fields.c", "grammar.lsp",
                         "kennedy.xls", "lcet10.txt",   "plrabn12.txt", "ptt5",     "sum",
                         "xargs.1",     "bible.txt.xz", "E.coli.xz",    "world192.txt.xz"};
  for (const char* name : names) {
    Bytes in;
    ASSERT_TRUE(load(std::string(shared) + "/corpus/canterbury/" + name, &in)) << name;
    expect_same_file(in, name);
  }
}

TEST(GvleFormatCuda, EdgeCasesMatchTheCpuFile) {
  REQUIRE_GPU();
  expect_same_file({}, "empty");
  expect_same_file({42}, "one byte");
  expect_same_file(Bytes(100000, 7), "one-symbol alphabet");
  expect_same_file(vle_test::all_symbols(256 * 300), "all 256 symbols");
  // Fibonacci-like counts force the 16-bit limit.
  Bytes fib = vle_test::fibonacci_bytes(26);
  std::shuffle(fib.begin(), fib.end(), std::mt19937(7));
  expect_same_file(fib, "16-bit codes");
  for (size_t n : {size_t{65535}, size_t{65536}, size_t{65537}, size_t{8191}, size_t{8192}, size_t{8193}}) {
    Bytes r(n);
    std::mt19937 rng(static_cast<uint32_t>(n));
    for (auto& v : r) v = static_cast<uint8_t>(rng() % 40);
    expect_same_file(r, "random " + std::to_string(n));
  }
}

// GPUEC_GVLE_FAIL_AT_CALL=0 (vle/README.md): the first call of the CUDA encoder in a fresh process fails. The
// death-test child is a fresh process (threadsafe style: the test program run again, for this test only).
// Not under compute-sanitizer, which follows the re-run child and then does not return (the fallback is host
// code; the CUDA encoder's kernels are checked by the tests above).
TEST(GvleFormatCuda, AutoFallsBackToTheCpuWhenTheCudaEncoderFails) {
  REQUIRE_GPU();
  if (gpuec_test::under_sanitizer()) GTEST_SKIP() << "skipped under compute-sanitizer (a death test)";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const Bytes in = vle_test::all_symbols(256 * 300);
  const Bytes want = vle::compress_ref(in.data(), in.size());
  auto child = [&](gpu::Backend b) {
    setenv("GPUEC_GVLE_FAIL_AT_CALL", "0", 1);
    Bytes f;
    std::string note;
    const vle::Status s = vle::compress(in.data(), in.size(), b, &f, &note);
    std::fprintf(stderr, "status %d [%s] note [%s] same %d\n", int(s.code), s.message.c_str(), note.c_str(),
                 int(f == want));
    std::exit(0);
  };
  EXPECT_EXIT(child(gpu::Backend::kAuto), ::testing::ExitedWithCode(0),
              "status 0 \\[\\] note \\[the CUDA encoder failed \\(failed on purpose \\(GPUEC_GVLE_FAIL_AT_CALL\\)\\); "
              "the CPU encoder coded the file\\] same 1");
  EXPECT_EXIT(child(gpu::Backend::kCuda), ::testing::ExitedWithCode(0),
              "status [0-9]+ \\[.*\\(CUDA encoder: failed on purpose \\(GPUEC_GVLE_FAIL_AT_CALL\\)\\)\\] note");
}

}  // namespace
