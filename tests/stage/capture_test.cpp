// The stage's capture file (cavlc/capture.h): written through the C interface with GPUEC_CAPTURE set,
// read back with cavlc::read_capture, and replayed through the CPU coder as the benchmark does.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "cavlc/slice.h"
#include "cavlc/capture.h"
#include "gpuec/stage.h"

namespace {

std::string temp_path(const char* name) {
  return ::testing::TempDir() + "gpuec_capture_test_" + std::to_string(getpid()) + "_" + name;
}

// Sets GPUEC_CAPTURE for the lifetime of the object.
struct CaptureEnv {
  explicit CaptureEnv(const std::string& path) { setenv("GPUEC_CAPTURE", path.c_str(), 1); }
  ~CaptureEnv() { unsetenv("GPUEC_CAPTURE"); }
};

struct FinishedSlice {
  int first_mb;
  int64_t start_bit, end_bit;
  std::vector<gpuec_mb> recs;     // as handed to the stage (skipped ones: mb_addr and kind)
  std::vector<uint8_t> out;       // the stage's output
  int64_t out_bits;
};

// Codes one slice of a 2x2-macroblock frame through the C interface. `kinds` gives each macroblock's
// kind from first_mb on; each coded macroblock gets a few levels and its residual is inserted after
// 5 more skeleton bits.
FinishedSlice code_slice(gpuec_stage* st, const uint8_t* skel, int first_mb, int64_t start_bit,
                         const std::vector<int>& kinds) {
  FinishedSlice f{first_mb, start_bit, 0, {}, {}, 0};
  gpuec_slice_begin(st, first_mb, start_bit);
  int64_t pos = start_bit + 3;
  for (size_t i = 0; i < kinds.size(); ++i) {
    const int addr = first_mb + static_cast<int>(i);
    gpuec_mb rec;
    std::memset(&rec, 0, sizeof rec);
    rec.mb_addr = addr;
    rec.kind = static_cast<uint8_t>(kinds[i]);
    if (kinds[i] == GPUEC_MB_SKIP) {
      EXPECT_EQ(gpuec_mb_skip(st, addr), GPUEC_OK);
      f.recs.push_back(rec);
      continue;
    }
    pos += 5;
    rec.skel_bit = pos;
    if (kinds[i] == GPUEC_MB_NORMAL) {
      rec.cbp = 0x21;  // luma quadrant 0, chroma DC + AC
      rec.u.coef.luma[1][0] = 3;
      rec.u.coef.luma[1][1] = -1;
      rec.u.coef.chroma_dc[1][2] = 2;
      rec.u.coef.chroma_ac[5][3] = -1;
    } else if (kinds[i] == GPUEC_MB_I16x16) {
      rec.cbp = 0x0f;
      rec.u.coef.luma_dc[0] = 7;
      rec.u.coef.luma[4][2] = 1;
    } else {
      for (int k = 0; k < 384; ++k) rec.u.pcm[k] = static_cast<uint8_t>(k * 7);
    }
    gpuec_mb* slot = gpuec_mb_next(st);
    *slot = rec;
    uint8_t totals[GPUEC_TC_COUNT];
    EXPECT_EQ(gpuec_mb_commit(st, totals), GPUEC_OK);
    f.recs.push_back(rec);
  }
  f.end_bit = pos + 4;
  const uint8_t* rbsp = nullptr;
  EXPECT_EQ(gpuec_slice_finish(st, skel, f.end_bit, &rbsp, &f.out_bits), GPUEC_OK);
  f.out.assign(rbsp, rbsp + (f.out_bits + 7) / 8);
  return f;
}

std::vector<uint8_t> skeleton_buffer() {
  std::vector<uint8_t> skel(64);
  for (size_t i = 0; i < skel.size(); ++i) skel[i] = static_cast<uint8_t>(0x5a ^ (i * 37));
  return skel;
}

TEST(StageCapture, WritesEveryFinishedSliceAndReadsBack) {
  const std::string path = temp_path("roundtrip.cap");
  const std::vector<uint8_t> skel = skeleton_buffer();
  std::vector<FinishedSlice> done;
  {
    CaptureEnv env(path);
    char note[200];
    gpuec_stage* st = gpuec_stage_create(2, 2, GPUEC_BACKEND_CPU, 0, note, sizeof note);
    ASSERT_NE(st, nullptr) << note;
    done.push_back(code_slice(st, skel.data(), 0, 16,
                              {GPUEC_MB_NORMAL, GPUEC_MB_SKIP, GPUEC_MB_I16x16, GPUEC_MB_PCM}));
    done.push_back(code_slice(st, skel.data(), 0, 8, {GPUEC_MB_SKIP, GPUEC_MB_NORMAL}));
    done.push_back(code_slice(st, skel.data(), 2, 200, {GPUEC_MB_I16x16, GPUEC_MB_SKIP}));
    gpuec_stage_destroy(st);
  }
  std::vector<cavlc::CapturedSlice> slices;
  std::string error;
  ASSERT_TRUE(cavlc::read_capture(path, slices, error)) << error;
  ASSERT_EQ(slices.size(), done.size());
  std::vector<uint8_t> out(4096);
  std::vector<cavlc::MbTotals> totals(4);
  for (size_t i = 0; i < done.size(); ++i) {
    SCOPED_TRACE("slice " + std::to_string(i));
    const cavlc::CaptureSliceHeader& h = slices[i].head;
    const FinishedSlice& f = done[i];
    EXPECT_EQ(h.slice_index, i);
    EXPECT_EQ(h.mb_width, 2u);
    EXPECT_EQ(h.mb_height, 2u);
    EXPECT_EQ(h.first_mb, f.first_mb);
    EXPECT_EQ(h.start_bit, f.start_bit);
    EXPECT_EQ(h.end_bit, f.end_bit);
    EXPECT_EQ(h.out_bits, f.out_bits);
    EXPECT_EQ(h.out_hash, cavlc::capture_hash(f.out.data(), f.out_bits));
    std::vector<uint8_t> want_skel(skel.begin() + f.start_bit / 8, skel.begin() + (f.end_bit + 7) / 8);
    if (f.end_bit & 7) want_skel.back() &= uint8_t(0xff00u >> (f.end_bit & 7));  // bits after end_bit: zero
    EXPECT_EQ(slices[i].skeleton, want_skel);
    ASSERT_EQ(slices[i].recs.size(), f.recs.size());
    for (size_t k = 0; k < f.recs.size(); ++k) {
      const gpuec_mb& got = slices[i].recs[k];
      EXPECT_EQ(got.mb_addr, f.recs[k].mb_addr);
      EXPECT_EQ(got.kind, f.recs[k].kind);
      if (got.kind != GPUEC_MB_SKIP) {
        EXPECT_EQ(std::memcmp(&got, &f.recs[k], sizeof got), 0) << "record " << k;
      }
    }
    // Replay as tools/bench/bench_stage.cpp does: skeleton rebased to bit 0, same output bits.
    std::vector<gpuec_mb> recs = slices[i].recs;
    for (gpuec_mb& r : recs)
      if (r.kind != GPUEC_MB_SKIP) r.skel_bit -= h.start_bit;
    vle::BitWriter bw(out.data(), out.size());
    const cavlc::SliceLayout layout{2, h.first_mb, 0, h.end_bit - h.start_bit};
    ASSERT_EQ(cavlc::encode_slice_ref(recs.data(), recs.size(), layout, slices[i].skeleton.data(),
                                      totals.data(), bw), 0);
    EXPECT_EQ(static_cast<int64_t>(bw.bits()), h.out_bits);
    bw.flush();
    EXPECT_EQ(cavlc::capture_hash(out.data(), h.out_bits), h.out_hash);
  }
  std::remove(path.c_str());
}

TEST(StageCapture, StagesOfOneProcessShareTheFile) {
  const std::string path = temp_path("shared.cap");
  const std::vector<uint8_t> skel = skeleton_buffer();
  {
    CaptureEnv env(path);
    gpuec_stage* a = gpuec_stage_create(2, 2, GPUEC_BACKEND_CPU, 0, nullptr, 0);
    gpuec_stage* b = gpuec_stage_create(2, 2, GPUEC_BACKEND_CPU, 0, nullptr, 0);
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    code_slice(a, skel.data(), 0, 0, {GPUEC_MB_NORMAL});
    code_slice(b, skel.data(), 0, 0, {GPUEC_MB_PCM});
    gpuec_stage_destroy(a);
    code_slice(b, skel.data(), 1, 0, {GPUEC_MB_I16x16});
    gpuec_stage_destroy(b);
  }
  std::vector<cavlc::CapturedSlice> slices;
  std::string error;
  ASSERT_TRUE(cavlc::read_capture(path, slices, error)) << error;
  ASSERT_EQ(slices.size(), 3u);
  EXPECT_EQ(slices[0].recs[0].kind, GPUEC_MB_NORMAL);
  EXPECT_EQ(slices[1].recs[0].kind, GPUEC_MB_PCM);
  EXPECT_EQ(slices[2].head.first_mb, 1);
  EXPECT_EQ(slices[2].head.slice_index, 2u);
  std::remove(path.c_str());
}

TEST(StageCapture, OffWithoutTheVariable) {
  unsetenv("GPUEC_CAPTURE");
  const std::vector<uint8_t> skel = skeleton_buffer();
  gpuec_stage* st = gpuec_stage_create(2, 2, GPUEC_BACKEND_CPU, 0, nullptr, 0);
  ASSERT_NE(st, nullptr);
  code_slice(st, skel.data(), 0, 0, {GPUEC_MB_NORMAL});
  gpuec_stage_destroy(st);
}

TEST(StageCapture, UnwritableFileFailsStageCreation) {
  CaptureEnv env("/nonexistent-gpuec-dir/capture.bin");
  char note[200] = "";
  gpuec_stage* st = gpuec_stage_create(2, 2, GPUEC_BACKEND_CPU, 0, note, sizeof note);
  EXPECT_EQ(st, nullptr);
  EXPECT_NE(std::string(note).find("GPUEC_CAPTURE"), std::string::npos) << note;
  gpuec_stage_destroy(st);
}

TEST(StageCapture, ReaderRejectsBadFiles) {
  const std::string path = temp_path("bad.cap");
  const std::vector<uint8_t> skel = skeleton_buffer();
  {
    CaptureEnv env(path);
    gpuec_stage* st = gpuec_stage_create(2, 2, GPUEC_BACKEND_CPU, 0, nullptr, 0);
    ASSERT_NE(st, nullptr);
    code_slice(st, skel.data(), 0, 0, {GPUEC_MB_NORMAL, GPUEC_MB_PCM});
    gpuec_stage_destroy(st);
  }
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  auto write = [&](const std::string& b) { std::ofstream(path, std::ios::binary | std::ios::trunc) << b; };
  std::vector<cavlc::CapturedSlice> slices;
  std::string error;

  write(bytes.substr(0, bytes.size() - 1));  // last record cut short
  EXPECT_FALSE(cavlc::read_capture(path, slices, error));
  EXPECT_NE(error.find("truncated records"), std::string::npos) << error;

  write(bytes.substr(0, 16 + 20));  // inside the slice header
  EXPECT_FALSE(cavlc::read_capture(path, slices, error));
  EXPECT_NE(error.find("truncated slice header"), std::string::npos) << error;

  std::string bad = bytes;
  bad[0] = 'X';
  write(bad);
  EXPECT_FALSE(cavlc::read_capture(path, slices, error));
  EXPECT_NE(error.find("bad magic"), std::string::npos) << error;

  bad = bytes;
  bad[16 + 12] = 100;  // record_count 100 > 4 macroblocks
  write(bad);
  EXPECT_FALSE(cavlc::read_capture(path, slices, error));
  EXPECT_NE(error.find("record count"), std::string::npos) << error;

  write(bytes.substr(0, 16));  // a header and no slices is a valid, empty capture
  EXPECT_TRUE(cavlc::read_capture(path, slices, error)) << error;
  EXPECT_TRUE(slices.empty());

  std::remove(path.c_str());
  EXPECT_FALSE(cavlc::read_capture(path, slices, error));
  EXPECT_NE(error.find(path), std::string::npos) << error;
}

}  // namespace
