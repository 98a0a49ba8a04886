// CudaCoder::create_cpu_twin (gpuec/cuda_coder.h): the CUDA coder's frame part coded by the CPU twins of
// the kernels it runs (cavlc::code_frame_ref, cavlc::assemble_frame_ref). Plain host arrays; submit() does
// the work, complete() hands it out. The arena is built at submit: [skeleton | zeros | records | slots], so
// the MbLead / FrameSlice bits of the skeleton area are arena bits as on the GPU.
#include <algorithm>
#include <cstring>
#include <new>
#include <vector>

#include "cavlc/assemble_frame.h"
#include "cavlc/frame.h"
#include "gpuec/cuda_coder.h"
#include "vle/bitwriter.h"

namespace gpuec {
namespace {

constexpr size_t kZeroBytes = 256;
constexpr size_t kOutSlack = 64;  // readable bytes after the output (cuda_coder.h)
constexpr int64_t kMaxMbs = int64_t{1} << 22;  // the CUDA coder's limit (cavlc::kFrameCudaMaxMbs)

size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

class CpuTwinCoder final : public CudaCoder {
 public:
  bool init(int mb_width, int mb_height, std::string* why) {
    if (mb_width < 1 || mb_height < 1 || int64_t{mb_width} * mb_height > kMaxMbs) {
      *why = "frame size out of range";
      return false;
    }
    mbw_ = mb_width;
    mbs_ = static_cast<size_t>(mb_width) * mb_height;
    try {
      recs_.resize(mbs_ + 1);
      ids_.resize(mbs_ + 1);
      leads_.resize(mbs_ + 1);
      slices_.resize(mbs_ + 1);
      tc_.resize((mbs_ + 1) * cavlc::kTcRecordBytes);
      len_.resize(mbs_ * cavlc::kMbSlots);
      results_.resize(mbs_ + 1);
    } catch (const std::bad_alloc&) {
      *why = "out of memory";
      return false;
    }
    return true;
  }

  gpuec_mb* records() override { return recs_.data(); }
  int32_t* slice_ids() override { return ids_.data(); }
  cavlc::MbLead* leads() override { return leads_.data(); }
  cavlc::FrameSlice* slices() override { return slices_.data(); }
  uint8_t* tc_records() override { return tc_.data(); }
  uint8_t* skeleton(size_t bytes) override {
    if (bytes > skel_.size()) {
      try {
        skel_.resize(std::max(bytes, 2 * skel_.size()));
      } catch (const std::bad_alloc&) {
        return nullptr;
      }
    }
    return skel_.data();
  }

  bool submit(int rows, int n_slices, size_t skeleton_bytes, std::string* why) override {
    const size_t n = static_cast<size_t>(rows) * static_cast<size_t>(mbw_);
    if (rows <= 0 || n > mbs_ || n_slices <= 0 || static_cast<size_t>(n_slices) > n ||
        skeleton_bytes > skel_.size()) {
      *why = "frame part out of range";
      return false;
    }
    const size_t rec_off = round_up(skeleton_bytes, 256) + kZeroBytes;
    const size_t slot_off = rec_off + n * sizeof(gpuec_mb);
    const size_t slot_bytes = n * cavlc::kMbSlots * cavlc::kSlotBytes;
    try {  // grows only: like the device arena, nothing in it is read before this call writes it
      if (arena_.size() < slot_off + slot_bytes + 4) arena_.resize(slot_off + slot_bytes + 4);
    } catch (const std::bad_alloc&) {
      *why = "out of memory";
      return false;
    }
    std::memcpy(arena_.data(), skel_.data(), skeleton_bytes);
    std::memcpy(arena_.data() + rec_off, recs_.data(), n * sizeof(gpuec_mb));
    // code_frame_ref checks mb_addr == index; the CUDA kernel does not read the addresses.
    gpuec_mb* recs = reinterpret_cast<gpuec_mb*>(arena_.data() + rec_off);
    for (size_t i = 0; i < n; ++i) recs[i].mb_addr = static_cast<int32_t>(i);
    if (cavlc::code_frame_ref(recs, mbw_, rows, ids_.data(), arena_.data() + slot_off, len_.data()) != 0) {
      *why = "code_frame_ref refused the records";
      return false;
    }
    cavlc::FrameAssembly in{};
    in.arena = arena_.data();
    in.records_bit = uint64_t{rec_off} * 8;
    in.slots_bit = uint64_t{slot_off} * 8;
    in.zero_bit = uint64_t{round_up(skeleton_bytes, 256)} * 8;
    in.records = recs;
    in.slot_len = len_.data();
    in.lead = leads_.data();
    in.slices = slices_.data();
    in.n_mbs = static_cast<int32_t>(n);
    in.n_slices = n_slices;
    const uint64_t bound = vle::packed_bytes(cavlc::assemble_frame_bound_bits(skeleton_bytes * 8, n, n_slices));
    try {
      if (out_.size() < bound + kOutSlack) out_.resize(bound + kOutSlack);  // grows only
    } catch (const std::bad_alloc&) {
      *why = "out of memory";
      return false;
    }
    if (cavlc::assemble_frame_ref(in, out_.data(), bound, results_.data()) == UINT64_MAX) {
      *why = "assemble_frame_ref refused the slices";
      return false;
    }
    done_ = true;
    return true;
  }

  bool complete(const uint8_t** out, const cavlc::SliceResult** results, std::string* why) override {
    if (!done_) {
      *why = "nothing submitted";
      return false;
    }
    done_ = false;
    *out = out_.data();
    *results = results_.data();
    return true;
  }

 private:
  int mbw_ = 0;
  size_t mbs_ = 0;
  bool done_ = false;
  std::vector<gpuec_mb> recs_;
  std::vector<int32_t> ids_;
  std::vector<cavlc::MbLead> leads_;
  std::vector<cavlc::FrameSlice> slices_;
  std::vector<uint8_t> tc_, skel_, arena_, out_;
  std::vector<uint16_t> len_;
  std::vector<cavlc::SliceResult> results_;
};

}  // namespace

std::unique_ptr<CudaCoder> CudaCoder::create_cpu_twin(int mb_width, int mb_height, std::string* why) {
  std::unique_ptr<CpuTwinCoder> c(new CpuTwinCoder);
  if (!c->init(mb_width, mb_height, why)) return nullptr;
  return c;
}

}  // namespace gpuec
