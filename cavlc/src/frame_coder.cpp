// The frame coder (cavlc/frame_coder.h): create() and its CPU backend, encode_frame_ref on plain host
// arrays. submit() does the work, complete() hands it out.
#include "cavlc/frame_coder.h"

#include <algorithm>
#include <future>
#include <new>
#include <system_error>
#include <type_traits>
#include <vector>

#include "cavlc/frame.h"
#include "frame_coder_cuda.h"
#include "vle/bitwriter.h"

namespace cavlc {
namespace {

constexpr size_t kOutSlack = 64;  // readable bytes after the output (frame_coder.h)

// An array left uninitialized at allocation (the caller writes every input before submit): creating a
// coder touches no page of its arrays, so the threads that fill them fault them in, not the creator (the
// threaded re-entropy creates a coder per batch on its dispatching thread).
template <class T>
struct HostArray {
  static_assert(std::is_trivially_default_constructible<T>::value, "left uninitialized");
  std::unique_ptr<T[]> p;
  bool allocate(size_t n) {
    p.reset(new (std::nothrow) T[n]);
    return p != nullptr;
  }
  T* data() { return p.get(); }
};

class CpuCoder final : public FrameCoder {
 public:
  bool init(int mb_width, int mb_height, std::string* why) {
    mbw_ = mb_width;
    mbs_ = static_cast<size_t>(mb_width) * mb_height;
    const size_t n = mbs_ + 1;
    if (recs_.allocate(n) && ids_.allocate(n) && leads_.allocate(n) && slices_.allocate(n) && totals_.allocate(n) &&
        results_.allocate(n))
      return true;
    *why = "out of memory";
    return false;
  }

  gpu::Backend backend() const override { return gpu::Backend::kCpu; }
  FrameCoderMemory memory() const override { return {}; }  // plain host memory only
  gpuec_mb* records() override { return recs_.data(); }
  int32_t* slice_ids() override { return ids_.data(); }
  MbLead* leads() override { return leads_.data(); }
  FrameSlice* slices() override { return slices_.data(); }
  uint8_t* tc_records() override { return nullptr; }
  uint8_t* skeleton(size_t bytes) override {
    if (bytes > skel_.size() || skel_.empty()) {
      try {  // 4 readable bytes past the end: the bit copies read whole words
        skel_.resize(std::max(bytes + 4, 2 * skel_.size()));
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
    FrameAssembly in{};
    in.arena = skel_.data();
    in.records = recs_.data();
    in.lead = leads_.data();
    in.slices = slices_.data();
    in.n_mbs = static_cast<int32_t>(n);
    in.n_slices = n_slices;
    const uint64_t bound = vle::packed_bytes(assemble_frame_bound_bits(skeleton_bytes * 8, n, n_slices));
    try {
      if (out_.size() < bound + kOutSlack) out_.resize(bound + kOutSlack);  // grows only
    } catch (const std::bad_alloc&) {
      *why = "out of memory";
      return false;
    }
    if (encode_frame_ref(in, mbw_, ids_.data(), out_.data(), bound, results_.data(), totals_.data()) == UINT64_MAX) {
      *why = "the frame part's records or slices are malformed";
      return false;
    }
    done_ = true;
    return true;
  }

  bool complete(const uint8_t** out, const SliceResult** results, std::string* why) override {
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
  HostArray<gpuec_mb> recs_;
  HostArray<int32_t> ids_;
  HostArray<MbLead> leads_;
  HostArray<FrameSlice> slices_;
  std::vector<uint8_t> skel_, out_;
  HostArray<MbTotals> totals_;
  HostArray<SliceResult> results_;
};

}  // namespace

std::unique_ptr<FrameCoder> FrameCoder::create(gpu::Backend backend, int mb_width, int mb_height, int device,
                                               std::string* why) {
  if (mb_width < 1 || mb_height < 1 || int64_t{mb_width} * mb_height > kFrameCoderMaxMbs) {
    *why = "frame size out of range";
    return nullptr;
  }
  if (backend == gpu::Backend::kCuda || backend == gpu::Backend::kAuto) {
    std::string reason;
    std::unique_ptr<FrameCoder> c = create_cuda_frame_coder(mb_width, mb_height, device, &reason);
    if (c || backend == gpu::Backend::kCuda) {
      if (!c) *why = reason;
      return c;
    }
  } else if (backend != gpu::Backend::kCpu) {
    *why = std::string("backend ") + gpu::backend_name(backend) + " is not a frame coder backend";
    return nullptr;
  }
  std::unique_ptr<CpuCoder> c(new (std::nothrow) CpuCoder);
  if (!c) {
    *why = "out of memory";
    return nullptr;
  }
  if (!c->init(mb_width, mb_height, why)) return nullptr;
  return c;
}

struct PendingCudaCoder::State {
  struct Result {
    std::unique_ptr<FrameCoder> coder;
    std::string why;
  };
  std::future<Result> future;  // from std::async: its destructor waits for the thread
  Result now;                  // the result when no thread could be started
  bool taken = false;
};

PendingCudaCoder::PendingCudaCoder(int mb_width, int mb_height, int device) : state_(new State) {
  auto make = [mb_width, mb_height, device] {
    State::Result r;
    r.coder = FrameCoder::create(gpu::Backend::kCuda, mb_width, mb_height, device, &r.why);
    return r;
  };
  try {
    state_->future = std::async(std::launch::async, make);
  } catch (const std::system_error&) {
    state_->now = make();
  }
}

PendingCudaCoder::~PendingCudaCoder() = default;

bool PendingCudaCoder::ready() const {
  return !state_->future.valid() || state_->future.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

std::unique_ptr<FrameCoder> PendingCudaCoder::take(std::string* why) {
  if (state_->taken) {
    *why = "the pending CUDA coder was taken already";
    return nullptr;
  }
  state_->taken = true;
  State::Result r = state_->future.valid() ? state_->future.get() : std::move(state_->now);
  if (!r.coder) *why = r.why;
  return std::move(r.coder);
}

}  // namespace cavlc
