// The re-coding backends of the re-entropy (avc/recoder.h).
#include "avc/recoder.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>
#include <new>
#include <vector>

#include "cavlc/assemble_frame.h"
#include "cavlc/frame.h"
#include "cavlc/slice.h"
#include "cavlc/frame_coder.h"
#include "vle/bitwriter.h"

namespace avc {

namespace {

// Adds the seconds of its lifetime to `total`.
struct Timer {
  explicit Timer(double& total) : total_(total), t0_(std::chrono::steady_clock::now()) {}
  ~Timer() { total_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count(); }
  double& total_;
  std::chrono::steady_clock::time_point t0_;
};

bool refuse(std::string* why, const char* text) {
  *why = text;
  return false;
}

// Slices placed in bands of a tall frame (recoder.h), coded by the frame coder.
class FrameRecoder final : public SliceRecoder {
 public:
  FrameRecoder(const RecoderOptions& opt) : opt_(opt) {}

  bool probe(std::string* why) {  // a coder for a small frame: says now whether the backend works
    if (opt_.backend == gpu::Backend::kOff) return refuse(why, "backend off is not a re-coding backend");
    if (!make_coder(1, 1, why)) return false;
    opt_.backend = coder_->backend();  // kAuto decided once
    return true;
  }

  bool add(int mb_width, int pic_mbs, const SliceRecords& recs, const Sink& sink, std::string* why) override {
    if (recs.mbs.empty() || mb_width < 1 || pic_mbs < mb_width || pic_mbs % mb_width)
      return refuse(why, "empty slice or bad picture size");
    const int first = recs.mbs.front().mb_addr, last = recs.mbs.back().mb_addr;
    if (first < 0 || last >= pic_mbs || first > last)
      return refuse(why, "macroblock addresses outside the picture");
    if (mb_width != width_ || pic_mbs != pic_mbs_) {
      if (!flush(sink, why)) return false;
      const int height = pic_mbs / mb_width;
      const int bands = std::max(1, std::min(opt_.batch_mbs / pic_mbs, (1 << 22) / pic_mbs));
      if (!make_coder(mb_width, height * bands, why)) return false;
      width_ = mb_width;
      pic_mbs_ = pic_mbs;
      bands_ = bands;
      bands_used_ = 0;
      occupied_.assign(size_t(pic_mbs), 0);
    }
    // The band: the last one, unless the slice's range meets a range already there.
    bool fits = bands_used_ > 0;
    for (int a = first; fits && a <= last; ++a) fits = !occupied_[size_t(a)];
    if (!fits) {
      if (bands_used_ == bands_ && !flush(sink, why)) return false;
      open_band();
    }
    const size_t base = size_t(bands_used_ - 1) * size_t(pic_mbs_);

    // Skeleton with rbsp_stop_one_bit after it (the assembly writes it as the slice's last bit).
    const uint64_t bits = recs.skel_bits;
    uint8_t* area = coder_->skeleton(skel_used_ + cavlc::skeleton_bytes(bits) + 4);
    if (!area) return refuse(why, "out of memory (skeleton)");
    const size_t bytes = cavlc::put_skeleton(area + skel_used_, recs.skel.data(), bits);
    const uint64_t skel_bit0 = uint64_t(skel_used_) * 8;

    gpuec_mb* records = coder_->records();
    int32_t* ids = coder_->slice_ids();
    cavlc::MbLead* leads = coder_->leads();
    uint8_t* tc = coder_->tc_records();
    const int32_t k = int32_t(slices_.size());
    uint64_t pos = 0;  // skeleton bit after the previous insertion point
    for (const gpuec_mb& m : recs.mbs) {
      const size_t g = base + size_t(m.mb_addr);
      uint8_t totals[GPUEC_TC_COUNT];
      if (cavlc::mb_totals(m, totals) != 0 || (m.kind != GPUEC_MB_SKIP && (m.skel_bit < int64_t(pos) ||
                                                                           uint64_t(m.skel_bit) > bits)))
        return refuse(why, "malformed or unordered record");
      ids[g] = k;
      // A skipped macroblock is the band's filler record as it is (open_band), lead and TotalCoeff zero:
      // only its slice index changes (a position is written by one slice of the band at most).
      if (m.kind != GPUEC_MB_SKIP) {
        records[g] = m;
        records[g].mb_addr = int32_t(g);
        leads[g] = cavlc::MbLead{skel_bit0 + pos, uint32_t(uint64_t(m.skel_bit) - pos), 0};
        if (tc) cavlc::tc_record(totals, tc + g * cavlc::kTcRecordBytes);  // the cuda coder's only
        pos = uint64_t(m.skel_bit);
      }
    }
    std::fill(occupied_.begin() + first, occupied_.begin() + last + 1, uint8_t{1});
    cavlc::FrameSlice fs{int32_t(base) + first, last - first + 1, skel_bit0 + pos, uint32_t(bits - pos + 1), 0};
    slices_.push_back({fs, bits});
    skel_used_ = (skel_used_ + bytes + 3) & ~size_t{3};
    return true;
  }

  bool flush(const Sink& sink, std::string* why) override {
    if (slices_.empty()) return true;
    const Timer timer(flush_seconds_);
    const size_t n = slices_.size();
    // Assembly order: by first index (ranges of one band are disjoint, bands follow each other).
    order_.resize(n);
    rank_.resize(n);
    for (size_t i = 0; i < n; ++i) order_[i] = int32_t(i);
    std::sort(order_.begin(), order_.end(),
              [&](int32_t a, int32_t b) { return slices_[size_t(a)].fs.first_mb < slices_[size_t(b)].fs.first_mb; });
    cavlc::FrameSlice* fs = coder_->slices();
    for (size_t r = 0; r < n; ++r) {
      rank_[size_t(order_[r])] = int32_t(r);
      fs[r] = slices_[size_t(order_[r])].fs;
    }
    int32_t* ids = coder_->slice_ids();
    const size_t used = size_t(bands_used_) * size_t(pic_mbs_);
    for (size_t g = 0; g < used; ++g)
      if (ids[g] >= 0) ids[g] = rank_[size_t(ids[g])];
    const uint8_t* out = nullptr;
    const cavlc::SliceResult* res = nullptr;
    const int rows = int(used / size_t(width_));
    const bool coded = coder_->submit(rows, int(n), skel_used_, why) && coder_->complete(&out, &res, why);
    bool ok = coded;
    for (size_t i = 0; i < n && ok; ++i) {
      const cavlc::SliceResult& r = res[size_t(rank_[i])];
      ok = sink(i, RecodedSlice{out + r.out_bit / 8, size_t((r.bits + 7) / 8), r.bits - 1 - slices_[i].skel_bits});
    }
    slices_.clear();
    skel_used_ = 0;
    bands_used_ = 0;
    return ok || (coded && refuse(why, "the receiver stopped"));
  }

  size_t queued() const override { return slices_.size(); }

 private:
  struct Pending {
    cavlc::FrameSlice fs;
    uint64_t skel_bits;
  };

  bool make_coder(int width, int height, std::string* why) {
    coder_.reset();  // the old one's memory first
    coder_ = cavlc::FrameCoder::create(opt_.backend, width, height, opt_.device, why);
    width_ = 0;
    return coder_ != nullptr;
  }

  // The next band, all filler: skipped, slice index -1, no lead, TotalCoeff 0.
  void open_band() {
    const size_t base = size_t(bands_used_++) * size_t(pic_mbs_);
    gpuec_mb* records = coder_->records();
    for (size_t g = base; g < base + size_t(pic_mbs_); ++g) {
      records[g].kind = GPUEC_MB_SKIP;
      records[g].cbp = 0;
      records[g].coef_order = GPUEC_COEF_SCAN;
      records[g].reserved = 0;
      records[g].skel_bit = 0;
      records[g].mb_addr = int32_t(g);
    }
    std::fill(coder_->slice_ids() + base, coder_->slice_ids() + base + size_t(pic_mbs_), -1);
    std::fill(coder_->leads() + base, coder_->leads() + base + size_t(pic_mbs_), cavlc::MbLead{0, 0, 0});
    if (uint8_t* tc = coder_->tc_records())
      std::memset(tc + base * cavlc::kTcRecordBytes, 0, size_t(pic_mbs_) * cavlc::kTcRecordBytes);
    std::fill(occupied_.begin(), occupied_.end(), uint8_t{0});
  }

  RecoderOptions opt_;
  std::unique_ptr<cavlc::FrameCoder> coder_;
  int width_ = 0, pic_mbs_ = 0, bands_ = 0, bands_used_ = 0;
  std::vector<uint8_t> occupied_;  // the last band's macroblocks inside a slice's range
  std::vector<Pending> slices_;    // in the order added
  std::vector<int32_t> order_, rank_;
  size_t skel_used_ = 0;
};

}  // namespace

std::unique_ptr<SliceRecoder> SliceRecoder::create(const RecoderOptions& opt, std::string* why) {
  if (opt.batch_mbs < 1) {
    *why = "batch size must be at least one macroblock";
    return nullptr;
  }
  std::unique_ptr<FrameRecoder> r(new FrameRecoder(opt));
  if (!r->probe(why)) return nullptr;
  return r;
}

}  // namespace avc
