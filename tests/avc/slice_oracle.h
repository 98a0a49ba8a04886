// The oracle of the re-entropy's re-coding (avc/recoder.h), for the tests: every slice coded when it is
// added, slice by slice, by the independent slice coder cavlc::encode_slice_ref with the slice's own
// macroblock map (so slice groups and redundant slices get their own neighbours), into one buffer.
#pragma once

#include <algorithm>
#include <climits>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "avc/recoder.h"
#include "cavlc/slice.h"
#include "vle/bitwriter.h"

namespace avc_test {

class SliceOracle final : public avc::SliceRecoder {
 public:
  bool add(int mb_width, int pic_mbs, const avc::SliceRecords& recs, const Sink&, std::string* why) override {
    if (recs.mbs.empty() || mb_width < 1 || pic_mbs < mb_width) return refuse(why, "empty slice");
    try {
      if (stamp_.size() != size_t(pic_mbs) || next_stamp_ == INT32_MAX) {
        stamp_.assign(size_t(pic_mbs), -1);
        totals_.resize(size_t(pic_mbs));
        next_stamp_ = 0;
      }
      const int32_t id = next_stamp_++;
      for (const gpuec_mb& m : recs.mbs) {
        if (m.mb_addr < 0 || m.mb_addr >= pic_mbs) return refuse(why, "macroblock address outside the picture");
        stamp_[size_t(m.mb_addr)] = id;
      }
      // A bound, not a guess: random records can carry the largest residual of a macroblock.
      const size_t cap = recs.skel.size() + 16 + recs.mbs.size() * size_t((cavlc::kMaxMbResidualBits + 7) / 8);
      if (buf_.size() < used_ + cap) buf_.resize(std::max(used_ + cap, 2 * buf_.size()));
      vle::BitWriter bw(buf_.data() + used_, cap);
      cavlc::SliceLayout layout{mb_width, recs.mbs.front().mb_addr, 0, int64_t(recs.skel_bits)};
      layout.slice_of_mb = stamp_.data();
      layout.slice_id = id;
      layout.n_mbs = pic_mbs;
      if (cavlc::encode_slice_ref(recs.mbs.data(), recs.mbs.size(), layout, recs.skel.data(), totals_.data(), bw) != 0)
        return refuse(why, "the slice coder refused the slice's records");
      const uint64_t residual = bw.bits() - recs.skel_bits;
      bw.put_bit(1);  // rbsp_stop_one_bit
      bw.align_zero();
      const size_t n = size_t(bw.bits() / 8);
      bw.flush();
      if (bw.overflowed()) return refuse(why, "re-coded slice larger than its buffer");
      done_.push_back({used_, n, residual});
      used_ += n;
    } catch (const std::bad_alloc&) {
      return refuse(why, "out of memory");
    }
    return true;
  }

  bool flush(const Sink& sink, std::string* why) override {
    bool ok = true;
    for (size_t i = 0; i < done_.size() && ok; ++i)
      ok = sink(i, avc::RecodedSlice{buf_.data() + done_[i].at, done_[i].bytes, done_[i].residual});
    done_.clear();
    used_ = 0;
    return ok || refuse(why, "the receiver stopped");
  }

  size_t queued() const override { return done_.size(); }

 private:
  static bool refuse(std::string* why, const char* text) {
    *why = text;
    return false;
  }
  struct Done {
    size_t at, bytes;
    uint64_t residual;
  };
  std::vector<int32_t> stamp_;  // the slice each macroblock was last coded in (encode_slice_ref's map)
  int32_t next_stamp_ = 0;
  std::vector<cavlc::MbTotals> totals_;
  std::vector<uint8_t> buf_;  // the coded slices, [0, used_)
  size_t used_ = 0;
  std::vector<Done> done_;
};

}  // namespace avc_test
