// The gvle tool as a subprocess: round trips through stdin/stdout and files, exit codes, refusals,
// atomic output (nothing left behind on failure).
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "vle/encoders.h"

#ifndef GVLE_BIN
#error "GVLE_BIN (path of the gvle binary) must be defined by the build"
#endif

namespace {

struct Result {
  int code = -1;
  std::string err;
};

class GvleCli : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gvle-cli-test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    const std::string cmd = "rm -rf -- '" + dir_ + "'";
    (void)std::system(cmd.c_str());
  }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }

  // Runs `gvle ARGS` through sh (ARGS may hold redirections); stderr is captured.
  Result gvle(const std::string& args) const {
    const std::string err = path("stderr.txt");
    const std::string cmd = std::string("'") + GVLE_BIN + "' " + args + " 2>'" + err + "'";
    const int st = std::system(cmd.c_str());
    Result r;
    r.code = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
    r.err = read(err);
    return r;
  }
  static std::string read(const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  }
  static void write(const std::string& p, const std::string& data) {
    std::ofstream f(p, std::ios::binary);
    f << data;
  }
  static bool exists(const std::string& p) {
    struct stat st;
    return stat(p.c_str(), &st) == 0;
  }
  // Names in the temporary folder other than the ones given.
  std::vector<std::string> others(const std::vector<std::string>& known) const {
    std::vector<std::string> v;
    DIR* d = opendir(dir_.c_str());
    while (const dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n == "." || n == ".." || n == "stderr.txt") continue;
      bool k = false;
      for (const auto& x : known) k = k || x == n;
      if (!k) v.push_back(n);
    }
    closedir(d);
    return v;
  }
  std::string sample(size_t n) const {
    std::mt19937 rng(static_cast<uint32_t>(n));
    std::string s;
    while (s.size() < n) s += "lorem ipsum dolor sit amet "[rng() % 27];
    return s;
  }
  std::string dir_;
};

TEST_F(GvleCli, StdinStdoutRoundTrip) {
  const std::string data = sample(200000);
  write(path("in"), data);
  Result r = gvle("compress < '" + path("in") + "' > '" + path("in.gvle") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  // The default backend (auto) says nothing: a machine without a GPU simply compresses on the CPU.
  EXPECT_EQ(r.err, "");
  EXPECT_LT(read(path("in.gvle")).size(), data.size());
  r = gvle("decompress - -o - < '" + path("in.gvle") + "' > '" + path("out") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(read(path("out")) == data);
  // A pipe from compress straight into decompress.
  const std::string cmd = std::string("'") + GVLE_BIN + "' compress < '" + path("in") + "' | '" + GVLE_BIN +
                          "' decompress --threads 2 > '" + path("piped") + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  EXPECT_TRUE(read(path("piped")) == data);
}

TEST_F(GvleCli, FilesForceAndNoClobber) {
  const std::string data = sample(70000);
  write(path("in"), data);
  ASSERT_EQ(gvle("compress -o '" + path("c.gvle") + "' '" + path("in") + "'").code, 0);
  const std::string packed = read(path("c.gvle"));
  write(path("out"), "keep me");
  Result r = gvle("decompress -o '" + path("out") + "' '" + path("c.gvle") + "'");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("exists"), std::string::npos) << r.err;
  EXPECT_EQ(read(path("out")), "keep me");
  r = gvle("decompress -f -o '" + path("out") + "' '" + path("c.gvle") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(read(path("out")) == data);
  r = gvle("decompress --force --progress --output='" + path("out") + "' '" + path("c.gvle") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("decompressed"), std::string::npos) << "--progress prints a summary: " << r.err;
  EXPECT_TRUE(others({"in", "c.gvle", "out"}).empty()) << "temporary files left behind";
}

TEST_F(GvleCli, CorruptAndForeignInputExitThreeAndLeaveNothing) {
  write(path("plain.txt"), sample(5000));
  Result r = gvle("decompress -o '" + path("o1") + "' '" + path("plain.txt") + "'");
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("not a gvle file"), std::string::npos) << r.err;
  EXPECT_FALSE(exists(path("o1")));

  ASSERT_EQ(gvle("compress -o '" + path("c.gvle") + "' '" + path("plain.txt") + "'").code, 0);
  std::string packed = read(path("c.gvle"));
  write(path("trunc.gvle"), packed.substr(0, packed.size() - 3));
  r = gvle("decompress -o '" + path("o2") + "' '" + path("trunc.gvle") + "'");
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("truncated"), std::string::npos) << r.err;
  EXPECT_FALSE(exists(path("o2")));

  packed[packed.size() - 5] ^= 0x10;
  write(path("flip.gvle"), packed);
  r = gvle("decompress < '" + path("flip.gvle") + "' > '" + path("o3") + "'");
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("corrupt"), std::string::npos) << r.err;
  EXPECT_EQ(read(path("o3")), "") << "nothing written to stdout on failure";
  EXPECT_TRUE(others({"plain.txt", "c.gvle", "trunc.gvle", "flip.gvle", "o3"}).empty());
}

TEST_F(GvleCli, UsageAndIoErrors) {
  EXPECT_EQ(gvle("").code, 1);
  EXPECT_EQ(gvle("frobnicate").code, 1);
  EXPECT_EQ(gvle("compress --bogus < /dev/null").code, 1);
  EXPECT_EQ(gvle("compress --threads < /dev/null").code, 1);
  EXPECT_EQ(gvle("compress --backend gpu < /dev/null").code, 1);
  EXPECT_EQ(gvle("compress a b").code, 1);
  Result r = gvle("compress --backend cuda < /dev/null > /dev/null");
  if (!vle::cuda_encoder()) {  // gvle links the same gpuec_vle_encoders
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("not built with the CUDA encoder"), std::string::npos) << r.err;
  }
  r = gvle("compress --backend cpu < /dev/null > '" + path("empty.gvle") + "'");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(read(path("empty.gvle")).size(), 104u);
  r = gvle("decompress '" + path("missing") + "'");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("missing"), std::string::npos) << r.err;
  r = gvle("compress -o '" + path("no/such/dir/x") + "' < /dev/null");
  EXPECT_EQ(r.code, 2) << r.err;
  r = gvle("compress '" + dir_ + "' > /dev/null");
  EXPECT_EQ(r.code, 2) << r.err;
  r = gvle("--help > '" + path("help.txt") + "'");
  EXPECT_EQ(r.code, 0);
  const std::string help = read(path("help.txt"));
  for (const char* opt : {"compress", "decompress", "bench", "--backend", "--threads", "--force", "--progress",
                          "--output", "exit status"})
    EXPECT_NE(help.find(opt), std::string::npos) << opt;
}

TEST_F(GvleCli, BenchRunsOnAFileAndAFolder) {
  ASSERT_EQ(mkdir(path("corpus").c_str(), 0755), 0);
  write(path("corpus/a.txt"), sample(30000));
  write(path("corpus/b.txt"), sample(1000));
  Result r = gvle("bench --repeat 1 --warmup 0 '" + path("corpus/a.txt") + "' > '" + path("bench.txt") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(read(path("bench.txt")).find("a.txt"), std::string::npos);
  r = gvle("bench --repeat 1 --warmup 0 --threads 2 '" + path("corpus") + "' > '" + path("bench2.txt") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string out = read(path("bench2.txt"));
  EXPECT_NE(out.find("b.txt"), std::string::npos) << out;
  EXPECT_NE(out.find("all (sum)"), std::string::npos) << out;
}

}  // namespace
