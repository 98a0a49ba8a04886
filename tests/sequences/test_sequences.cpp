// Tests of sequences/: derf manifest, synthetic clip generators (determinism and pinned hashes),
// local clip copying and the gpuec-clip command line.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <utility>

#include "clip.h"

namespace fs = std::filesystem;
using namespace gpuec::clip;

namespace {

std::string generate(const std::string& name, long frames) {
  std::string out;
  GetOptions opt;
  opt.frames = frames;
  write_clip(name, opt, [&](const void* d, std::size_t n) { out.append(static_cast<const char*>(d), n); });
  return out;
}

bool photos_available() {
  try {
    find_photo("");
    return true;
  } catch (const Error&) {
    return false;
  }
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

std::string run_capture(const std::string& cmd, int* status) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) {
    *status = -1;
    return out;
  }
  char buf[65536];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int rc = ::pclose(p);
  *status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  return out;
}

// Runs gpuec-clip with arguments (shell syntax); returns its exit code; stdout into *out.
int clip_tool(const std::string& args, std::string* out = nullptr) {
  int status = 0;
  std::string o = run_capture(std::string(GPUEC_CLIP_EXE) + " " + args + " 2>/dev/null", &status);
  if (out) *out = o;
  return status;
}

// A fresh scratch folder per test.
class Scratch {
 public:
  Scratch() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("gpuec_seq_" + std::string(info->test_suite_name()) + "_" + info->name() + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~Scratch() { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string dir() const { return dir_.string(); }

 private:
  fs::path dir_;
};

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (had_) ::setenv(name_, old_.c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

std::string xz_decompress(const std::string& path) {
  int status = 0;
  std::string out = run_capture("xz -dc -- '" + path + "'", &status);
  EXPECT_EQ(status, 0);
  return out;
}

}  // namespace

// ------------------------------------------------------------------ manifest

TEST(SequencesManifest, ParsesAndListsTheStandardClips) {
  const auto& m = derf_manifest();
  ASSERT_GT(m.size(), 60u);
  std::set<std::string> names;
  for (const auto& e : m) {
    EXPECT_TRUE(names.insert(e.name).second) << "duplicate " << e.name;
    EXPECT_GT(e.frames, 0) << e.name;
    EXPECT_GT(e.fps_num, 0) << e.name;
    EXPECT_EQ(e.file.substr(e.file.size() - 4), ".y4m") << e.name;
    // The size named in the clip name matches the size column.
    auto has = [&](const char* s) { return e.name.find(s) != std::string::npos; };
    std::pair<int, int> size{e.width, e.height};
    if (has("_qcif")) {
      EXPECT_EQ(size, std::make_pair(176, 144)) << e.name;
    } else if (has("_4cif")) {
      EXPECT_EQ(size, std::make_pair(704, 576)) << e.name;
    } else if (has("_cif")) {
      EXPECT_EQ(size, std::make_pair(352, 288)) << e.name;
    } else if (has("720p")) {
      EXPECT_EQ(size, std::make_pair(1280, 720)) << e.name;
    } else if (has("1080p")) {
      EXPECT_EQ(size, std::make_pair(1920, 1080)) << e.name;
    } else if (has("2160p")) {
      EXPECT_EQ(size, std::make_pair(3840, 2160)) << e.name;
    }
  }
  for (const char* n : {"akiyo", "bus", "city", "coastguard", "container", "crew", "foreman", "hall_monitor", "harbour",
                        "ice", "mobile", "mother_daughter", "news", "paris", "silent", "soccer"}) {
    EXPECT_TRUE(names.count(std::string(n) + "_qcif")) << n << "_qcif";
    EXPECT_TRUE(names.count(std::string(n) + "_cif")) << n << "_cif";
  }
  for (const char* n : {"flower_cif", "football_cif", "stefan_cif", "tempete_cif", "waterfall_cif",
                        "ducks_take_off_720p50", "ducks_take_off_1080p50", "crowd_run_1080p50", "in_to_tree_1080p50",
                        "old_town_cross_1080p50", "park_joy_1080p50"})
    EXPECT_TRUE(names.count(n)) << n;
  ASSERT_NE(find_derf("foreman_cif"), nullptr);
  EXPECT_EQ(find_derf("foreman_cif")->shared, 21);
  EXPECT_EQ(find_derf("foreman_qcif")->shared, 21);
  EXPECT_EQ(find_derf("akiyo_qcif")->shared, 0);
  EXPECT_EQ(find_derf("no_such_clip"), nullptr);
}

// ------------------------------------------------------------------ synthetic clips

TEST(SequencesSynthetic, ParsesNames) {
  SynthSpec s;
  ASSERT_TRUE(parse_synthetic("pan_1080p", &s));
  EXPECT_EQ(s.kind, "pan");
  EXPECT_EQ(s.width, 1920);
  EXPECT_EQ(s.height, 1080);
  ASSERT_TRUE(parse_synthetic("checkerboard_cif", &s));
  EXPECT_EQ(s.width, 352);
  ASSERT_TRUE(parse_synthetic("noise_64x48", &s));
  EXPECT_EQ(s.kind, "noise");
  EXPECT_EQ(s.width, 64);
  EXPECT_EQ(s.height, 48);
  for (const char* bad : {"noise", "noise_", "noise_63x48", "noise_64x", "noise_x48", "blur_cif", "pan_1080", "foreman_cif"})
    EXPECT_FALSE(parse_synthetic(bad, nullptr)) << bad;
  for (const auto& n : synthetic_names()) EXPECT_TRUE(parse_synthetic(n, nullptr)) << n;
}

TEST(SequencesSynthetic, DeterministicAndWellFormed) {
  struct Case {
    const char* name;
    int w, h;
    long frames;
  };
  const Case cases[] = {{"checkerboard_cif", 352, 288, 4}, {"noise_cif", 352, 288, 4}, {"noise_64x48", 64, 48, 3},
                        {"checkerboard_qcif", 176, 144, 2}, {"pan_720p", 1280, 720, 3}, {"pan_320x240", 320, 240, 2}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    if (std::string(c.name).rfind("pan_", 0) == 0 && !photos_available()) continue;
    const std::string a = generate(c.name, c.frames), b = generate(c.name, c.frames);
    ASSERT_EQ(a, b);
    const std::string header = "YUV4MPEG2 W" + std::to_string(c.w) + " H" + std::to_string(c.h) + " F30:1 Ip A1:1 C420jpeg\n";
    ASSERT_EQ(a.compare(0, header.size(), header), 0);
    const std::size_t frame = std::size_t(c.w) * c.h * 3 / 2;
    ASSERT_EQ(a.size(), header.size() + c.frames * (6 + frame));
    std::set<std::string> distinct;
    for (long t = 0; t < c.frames; ++t) {
      const std::size_t at = header.size() + t * (6 + frame);
      EXPECT_EQ(a.compare(at, 6, "FRAME\n"), 0) << "frame " << t;
      distinct.insert(a.substr(at + 6, frame));
    }
    EXPECT_EQ(distinct.size(), std::size_t(c.frames)) << "every frame differs (motion/noise; checkerboard repeats after 4)";
    // A longer clip starts with the shorter one.
    const std::string longer = generate(c.name, c.frames + 1);
    EXPECT_EQ(longer.compare(0, a.size(), a), 0);
  }
}

// Pins the generator output: a change here changes every result measured on these clips. If the
// change is intended, update the hash and say so in the commit message.
TEST(SequencesSynthetic, PinnedHashes) {
  struct Pin {
    const char* name;
    long frames;
    uint64_t fnv;
  };
  const Pin pins[] = {
      {"checkerboard_cif", 8, 0x3108d5304e9cbbe4ull},
      {"noise_cif", 3, 0xe526c956173c920bull},
      {"pan_720p", 3, 0x0ceb4cc5289c28cbull},
      {"pan_1080p", 2, 0x8ec6c2f1667129e4ull},
  };
  for (const auto& p : pins) {
    if (std::string(p.name).rfind("pan_", 0) == 0 && !photos_available()) {
      std::printf("skipping %s: photo %s not found\n", p.name, kDefaultPhoto);
      continue;
    }
    const std::string data = generate(p.name, p.frames);
    const uint64_t h = fnv1a64(data.data(), data.size());
    EXPECT_EQ(h, p.fnv) << p.name << " " << p.frames << " frames: FNV-1a 0x" << std::hex << h;
  }
}

TEST(SequencesSynthetic, CheckerboardIsFlatWithMaximalContrast) {
  const std::string clip = generate("checkerboard_cif", 5);
  const std::size_t header = clip.find('\n') + 1, w = 352, h = 288, frame = w * h * 3 / 2;
  auto plane = [&](int t) { return reinterpret_cast<const uint8_t*>(clip.data() + header + t * (6 + frame) + 6); };
  for (int t : {0, 4}) {  // macroblock-aligned frames: every MB flat, neighbours inverted
    const uint8_t* y = plane(t);
    const uint8_t* cb = y + w * h;
    const uint8_t* cr = cb + w * h / 4;
    for (std::size_t mby = 0; mby < h / 16; ++mby)
      for (std::size_t mbx = 0; mbx < w / 16; ++mbx) {
        const uint8_t v = y[mby * 16 * w + mbx * 16];
        ASSERT_TRUE(v == 0 || v == 255);
        for (std::size_t i = 0; i < 16; ++i)
          for (std::size_t j = 0; j < 16; ++j) ASSERT_EQ(y[(mby * 16 + i) * w + mbx * 16 + j], v);
        if (mbx > 0) {
          ASSERT_EQ(y[mby * 16 * w + mbx * 16 - 1], 255 - v);
        }
        const std::size_t ci = mby * 8 * (w / 2) + mbx * 8;
        ASSERT_EQ(cb[ci], v == 255 ? 0 : 255);
        ASSERT_EQ(cr[ci], v == 255 ? 255 : 0);
      }
  }
  // Other frames are shifted by 4 px per frame.
  const uint8_t* f0 = plane(0);
  const uint8_t* f1 = plane(1);
  for (std::size_t x = 0; x + 4 < w; ++x) ASSERT_EQ(f1[x], f0[x + 4]);
}

TEST(SequencesSynthetic, PanUsesLimitedRangeAndMoves) {
  if (!photos_available()) GTEST_SKIP() << "photo " << kDefaultPhoto << " not found";
  const std::string clip = generate("pan_720p", 2);
  const std::size_t header = clip.find('\n') + 1, w = 1280, h = 720, frame = w * h * 3 / 2;
  const uint8_t* f0 = reinterpret_cast<const uint8_t*>(clip.data() + header + 6);
  const uint8_t* f1 = f0 + frame + 6;
  long long mean_abs_diff = 0;
  for (std::size_t i = 0; i < frame; ++i) {
    const int lo = 16, hi = i < w * h ? 235 : 240;
    ASSERT_TRUE(f0[i] >= lo && f0[i] <= hi) << i;
  }
  // Frame 1 is frame 0 moved by (4.625, 1.625) px: compare with the shift (4, 2) undone.
  for (std::size_t y = 0; y + 2 < h; ++y)
    for (std::size_t x = 0; x + 5 < w; ++x) mean_abs_diff += std::abs(int(f1[y * w + x]) - int(f0[(y + 2) * w + x + 5]));
  mean_abs_diff /= (long long)((h - 2) * (w - 5));
  EXPECT_LT(mean_abs_diff, 12) << "frame 1 is not a shifted frame 0";
}

TEST(SequencesSynthetic, PanErrorsAreDataErrors) {
  GetOptions opt;
  opt.frames = 1;
  opt.photo = "/nonexistent/photo.jpg";
  try {
    write_clip("pan_720p", opt, [](const void*, std::size_t) {});
    FAIL() << "no error for a missing photo";
  } catch (const Error& e) {
    EXPECT_EQ(e.code, kExitData);
  }
  if (!photos_available()) return;
  opt.photo = "";
  try {
    write_clip("pan_2160p", opt, [](const void*, std::size_t) {});  // larger than the 2560x1600 photo
    FAIL() << "no error for a photo smaller than the clip";
  } catch (const Error& e) {
    EXPECT_EQ(e.code, kExitData);
  }
}

// ------------------------------------------------------------------ local clips

TEST(SequencesLocal, GetTrimsForemanQcif) {
  const std::string path = find_local_clip("foreman_qcif");
  if (path.empty()) GTEST_SKIP() << "foreman_qcif not in " << sequences_dir();
  const std::string full = xz_decompress(path);
  const std::size_t header = full.find('\n') + 1, frame = 176 * 144 * 3 / 2 + 6;
  ASSERT_EQ(full.size(), header + 21 * frame);
  EXPECT_EQ(generate("foreman_qcif", 5), full.substr(0, header + 5 * frame));
  EXPECT_EQ(generate("foreman_qcif", 21), full);
  EXPECT_EQ(generate("foreman_qcif", -1), full);
  LocalClip info = probe_local_clip(path);
  EXPECT_EQ(info.width, 176);
  EXPECT_EQ(info.height, 144);
  EXPECT_EQ(info.frames, 21);

  // The same through the tool.
  Scratch s;
  ASSERT_EQ(clip_tool("get foreman_qcif -o " + s.path("f7.y4m") + " --frames 7"), 0);
  EXPECT_EQ(read_file(s.path("f7.y4m")), full.substr(0, header + 7 * frame));
  ASSERT_EQ(clip_tool("get foreman_qcif --frames=3 --output=-", nullptr), 0);
  std::string piped;
  ASSERT_EQ(clip_tool("get foreman_qcif --frames 3 -o -", &piped), 0);
  EXPECT_EQ(piped, full.substr(0, header + 3 * frame));
}

TEST(SequencesLocal, TooManyFramesIsAnError) {
  const std::string path = find_local_clip("foreman_qcif");
  if (path.empty()) GTEST_SKIP() << "foreman_qcif not in " << sequences_dir();
  try {
    generate("foreman_qcif", 22);
    FAIL() << "no error for 22 of 21 frames";
  } catch (const Error& e) {
    EXPECT_EQ(e.code, kExitData);
    EXPECT_NE(std::string(e.what()).find("only 21 frames"), std::string::npos) << e.what();
  }
  Scratch s;
  EXPECT_EQ(clip_tool("get foreman_qcif --frames 22 -o " + s.path("x.y4m")), kExitData);
  EXPECT_FALSE(fs::exists(s.path("x.y4m"))) << "partial output left behind";
}

TEST(SequencesLocal, PlainY4mInAClipsFolderFromTheEnvironment) {
  Scratch s;
  const std::string clip = generate("checkerboard_qcif", 4);
  std::ofstream(s.path("mini.y4m"), std::ios::binary) << clip;
  std::ofstream(s.path("akiyo_qcif.y4m"), std::ios::binary) << clip;  // a derf name, found by name
  ScopedEnv env("GPUEC_SEQUENCES", s.dir());
  EXPECT_EQ(sequences_dir(), s.dir());
  EXPECT_EQ(find_local_clip("mini"), s.path("mini.y4m"));
  EXPECT_EQ(find_local_clip("foreman_qcif"), "");
  const std::size_t header = clip.find('\n') + 1, frame = 176 * 144 * 3 / 2 + 6;
  EXPECT_EQ(generate("mini", 2), clip.substr(0, header + 2 * frame));
  EXPECT_EQ(generate("akiyo_qcif", -1), clip);
  EXPECT_EQ(probe_local_clip(s.path("mini.y4m")).frames, 4);
  const auto extra = extra_local_clips();
  ASSERT_EQ(extra.size(), 1u);
  EXPECT_EQ(extra[0], "mini");

  std::string out;
  ASSERT_EQ(clip_tool("list --available --names", &out), 0);
  out = "\n" + out;
  EXPECT_NE(out.find("\nmini\n"), std::string::npos);
  EXPECT_NE(out.find("\nakiyo_qcif\n"), std::string::npos);
  EXPECT_EQ(out.find("\nforeman_qcif\n"), std::string::npos);
  EXPECT_NE(out.find("\ncheckerboard_cif\n"), std::string::npos);
  // A derf clip that is not there: a clear data error.
  EXPECT_EQ(clip_tool("get mobile_cif -o " + s.path("m.y4m")), kExitData);
  try {
    generate("mobile_cif", 1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("download.sh"), std::string::npos) << e.what();
  }
}

// ------------------------------------------------------------------ command line

TEST(SequencesCli, ExitCodes) {
  Scratch s;
  const std::string o = " -o " + s.path("o.y4m");
  EXPECT_EQ(clip_tool("--help"), 0);
  EXPECT_EQ(clip_tool("help get"), 0);
  EXPECT_EQ(clip_tool("list --help"), 0);
  EXPECT_EQ(clip_tool("get --help"), 0);
  EXPECT_EQ(clip_tool(""), kExitUsage);
  EXPECT_EQ(clip_tool("frobnicate"), kExitUsage);
  EXPECT_EQ(clip_tool("help frobnicate"), kExitUsage);
  EXPECT_EQ(clip_tool("list --bogus"), kExitUsage);
  EXPECT_EQ(clip_tool("get"), kExitUsage);
  EXPECT_EQ(clip_tool("get noise_cif"), kExitUsage);  // no -o
  EXPECT_EQ(clip_tool("get noise_cif -o"), kExitUsage);
  EXPECT_EQ(clip_tool("get noise_cif checkerboard_cif" + o), kExitUsage);
  EXPECT_EQ(clip_tool("get noise_cif --frames 0" + o), kExitUsage);
  EXPECT_EQ(clip_tool("get noise_cif --frames abc" + o), kExitUsage);
  EXPECT_EQ(clip_tool("get noise_cif --frames -3" + o), kExitUsage);
  EXPECT_EQ(clip_tool("get noise_cif --bogus" + o), kExitUsage);
  EXPECT_EQ(clip_tool("get noise_cif --photo x.jpg" + o), kExitUsage);
  EXPECT_EQ(clip_tool("get no_such_clip" + o), kExitData);
  EXPECT_EQ(clip_tool("get noise_63x48" + o), kExitData);
  EXPECT_EQ(clip_tool("get noise_cif -o " + s.path("missing_dir/o.y4m")), kExitData);
  EXPECT_FALSE(fs::exists(s.path("o.y4m")));
  EXPECT_EQ(clip_tool("get noise_cif --frames 2" + o), 0);
  EXPECT_EQ(read_file(s.path("o.y4m")), generate("noise_cif", 2));
  EXPECT_EQ(clip_tool("get checkerboard_cif" + o), 0);  // default frame count
  EXPECT_EQ(read_file(s.path("o.y4m")).size(), generate("checkerboard_cif", kDefaultSyntheticFrames).size());
}

TEST(SequencesCli, ListShowsManifestLocalAndSynthetic) {
  std::string out;
  ASSERT_EQ(clip_tool("list", &out), 0);
  for (const char* n : {"akiyo_qcif", "foreman_cif", "park_joy_1080p50", "pan_720p", "pan_1080p", "noise_cif", "checkerboard_cif"})
    EXPECT_NE(out.find(n), std::string::npos) << n;
  ASSERT_EQ(clip_tool("list --names", &out), 0);
  out = "\n" + out;
  EXPECT_NE(out.find("\nakiyo_qcif\n"), std::string::npos);
  EXPECT_NE(out.find("\npan_1080p\n"), std::string::npos);
  if (!find_local_clip("foreman_qcif").empty()) {
    ASSERT_EQ(clip_tool("list --available --names", &out), 0);
    out = "\n" + out;
    EXPECT_NE(out.find("\nforeman_qcif\n"), std::string::npos);
    EXPECT_EQ(out.find("\nakiyo_qcif\n"), std::string::npos);
  }
}
