// The frame coder (cavlc/frame_coder.h): create() and its CPU backend, encode_frame_ref on plain host
// arrays. submit() does the work, complete() hands it out.
#include "cavlc/frame_coder.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <new>
#include <system_error>
#include <type_traits>
#include <vector>

#include "cavlc/frame.h"
#include "commit.h"
#include "frame_coder_cuda.h"
#include "gpu/device.h"
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
  T& operator[](size_t i) { return p[i]; }
};

// A byte array that grows without zero-filling it: only the bytes written are touched (an output area is
// sized for the worst case, about 2 KiB a macroblock, of which a frame writes a tenth or less; a batch's
// skeleton area starts at 1 MiB).
class RawBytes {
 public:
  uint8_t* data() { return p_.get(); }
  size_t size() const { return n_; }
  // n bytes, the first `keep` of the old ones kept.
  bool grow(size_t n, size_t keep) {
    std::unique_ptr<uint8_t[]> q(new (std::nothrow) uint8_t[n]);
    if (!q) return false;
    if (keep) std::memcpy(q.get(), p_.get(), std::min(keep, n_));
    p_ = std::move(q);
    n_ = n;
    return true;
  }

 private:
  std::unique_ptr<uint8_t[]> p_;
  size_t n_ = 0;
};

class CpuCoder final : public FrameCoder {
 public:
  bool init(int mb_width, int mb_height, std::string* why) {
    mbw_ = mb_width;
    mbs_ = static_cast<size_t>(mb_width) * mb_height;
    const size_t n = mbs_ + 1;
    if (recs_.allocate(n) && ids_.allocate(n) && leads_.allocate(n) && slices_.allocate(n) && totals_.allocate(n) &&
        results_.allocate(n) && kinds_.allocate(n))
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
    // 8 readable bytes past the end: the bit copies read whole words
    if (bytes + 8 > skel_.size() && !skel_.grow(std::max(bytes + 8, 2 * skel_.size()), skel_.size()))
      return nullptr;
    return skel_.data();
  }

  bool submit(int rows, int n_slices, size_t skeleton_bytes, std::string* why) override {
    const size_t n = static_cast<size_t>(rows) * static_cast<size_t>(mbw_);
    const bool streamed = streamed_slices_ > 0 || stream_slice_ >= 0;
    const int streamed_slices = streamed_slices_;
    restart_stream();
    if (rows <= 0 || n > mbs_ || n_slices <= 0 || static_cast<size_t>(n_slices) > n || skeleton_bytes > skel_.size()) {
      *why = "frame part out of range";
      return false;
    }
    if (streamed) {  // every slice is in the output already
      if (streamed_slices != n_slices) {
        *why = "a streamed frame part with slices not ended by end_slice_streamed";
        return false;
      }
      done_ = true;
      return true;
    }
    if (skeleton_bytes && skeleton_bytes + 8 > skel_.size()) {  // skeleton() gives 8 bytes more
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
    if (!reserve_out(bound, why)) return false;
    if (encode_frame_words(in, mbw_, ids_.data(), out_.data(), out_.size(), results_.data(), totals_.data()) ==
        UINT64_MAX) {
      *why = "the frame part's records or slices are malformed";
      return false;
    }
    done_ = true;
    return true;
  }

  // Room for `bytes` of output and the readable slack; grows by half at least, so that parts a little
  // larger than any before do not reallocate (and touch fresh pages) every time. Keeps the contents.
  bool reserve_out(uint64_t bytes, std::string* why) {
    if (out_.size() >= bytes + kOutSlack) return true;
    if (out_.grow(std::max(static_cast<size_t>(bytes + kOutSlack), out_.size() + out_.size() / 2), (stream_bit_ + 7) / 8))
      return true;
    *why = "out of memory";
    return false;
  }

  int commit(int32_t i, const gpuec_mb& m, uint8_t totals[GPUEC_TC_COUNT]) override {
    if (i < 0 || static_cast<size_t>(i) >= mbs_) return -1;
    const int r = FrameCoder::commit(i, m, totals);
    if (r == 0 && &m != &recs_[static_cast<size_t>(i)]) recs_[static_cast<size_t>(i)] = m;  // submit codes it
    return r;
  }

  int commit_streamed(int32_t i, const gpuec_mb& m, uint8_t totals[GPUEC_TC_COUNT], const uint8_t* skel,
                      uint64_t from_bit, uint64_t to_bit) override {
    if (i < 0 || static_cast<size_t>(i) >= mbs_ || to_bit < from_bit || !open_slice(ids_[static_cast<size_t>(i)]))
      return -1;
    std::string why;
    if (!reserve_out(stream_bit_ / 8 + (to_bit - from_bit) / 8 + 1 + kMaxMbWordBytes, &why)) return -1;
    block_code::WordWriter w = writer();
    copy_into(w, skel, from_bit, to_bit);
    // The macroblocks since the previous commit were skipped (a part's macroblocks come in order): their
    // kind, and this one's, for the neighbours' commits (a byte each: the records are 832 bytes apart).
    for (int32_t j = kinds_next_; j < i; ++j) kinds_[static_cast<size_t>(j)] = GPUEC_MB_SKIP;
    kinds_next_ = std::max(kinds_next_, i);
    const int r = commit_mb_ref(m, kinds_.data(), ids_.data(), mbw_, i, totals_.data(), totals, w);
    if (r != 0) return r;  // an overflow's bits are dropped: stream_bit_ stays before the skeleton piece
    kinds_[static_cast<size_t>(i)] = m.kind;
    kinds_next_ = i + 1;
    stream_bit_ = w.finish(out_.data());
    return 0;
  }

  bool end_slice_streamed(int k, const uint8_t* skel, uint64_t from_bit, uint64_t to_bit) override {
    if (to_bit < from_bit || !open_slice(k)) return false;
    std::string why;
    if (!reserve_out(stream_bit_ / 8 + (to_bit - from_bit) / 8 + 16, &why)) return false;
    block_code::WordWriter w = writer();
    copy_into(w, skel, from_bit, to_bit);
    w.put(1, 1);  // rbsp_stop_one_bit
    const uint64_t end = w.finish(out_.data());
    results_[static_cast<size_t>(k)] = SliceResult{stream_start_, end - stream_start_};
    const int pad = static_cast<int>((32 - (end & 31)) & 31);  // zero bits to the next 32-bit word
    if (pad) w.put(0, pad);
    stream_bit_ = w.finish(out_.data());
    stream_slice_ = -1;
    ++streamed_slices_;
    return true;
  }

  void drop_slice_streamed(int k) override {
    if (stream_slice_ != k) return;
    stream_bit_ = stream_start_;
    kinds_next_ = stream_kinds_start_;  // its macroblocks come again
    stream_slice_ = -1;
  }

  void restart_stream() override {
    kinds_next_ = 0;
    stream_bit_ = 0;
    stream_start_ = 0;
    stream_slice_ = -1;
    streamed_slices_ = 0;
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
  // Slice k of the streamed part is the one being written: it starts now if it is the next one.
  bool open_slice(int32_t k) {
    if (k == stream_slice_) return true;
    if (stream_slice_ >= 0 || k != streamed_slices_) return false;
    stream_slice_ = k;
    stream_start_ = stream_bit_;
    stream_kinds_start_ = kinds_next_;
    return true;
  }
  // A writer that appends at stream_bit_ (the pending bits of its partial byte taken back from out_).
  block_code::WordWriter writer() {
    uint8_t* p = out_.data() + stream_bit_ / 8;
    const int n = static_cast<int>(stream_bit_ & 7);
    return block_code::WordWriter{p, n ? static_cast<uint64_t>(*p >> (8 - n)) : 0, n};
  }

  int mbw_ = 0;
  size_t mbs_ = 0;
  bool done_ = false;
  HostArray<gpuec_mb> recs_;
  HostArray<int32_t> ids_;
  HostArray<MbLead> leads_;
  HostArray<FrameSlice> slices_;
  RawBytes skel_, out_;
  HostArray<MbTotals> totals_;
  HostArray<SliceResult> results_;
  HostArray<uint8_t> kinds_;  // the streamed part's kinds, [0, kinds_next_) written
  int32_t kinds_next_ = 0, stream_kinds_start_ = 0;
  // The streamed part (commit_streamed): its output ends at stream_bit_; slice stream_slice_ (-1: none)
  // is being written from stream_start_; streamed_slices_ slices are complete.
  uint64_t stream_bit_ = 0;
  uint64_t stream_start_ = 0;
  int32_t stream_slice_ = -1;
  int streamed_slices_ = 0;
};

}  // namespace

int FrameCoder::commit(int32_t i, const gpuec_mb& m, uint8_t totals[GPUEC_TC_COUNT]) {
  const int r = mb_totals(m, totals);
  if (r != 0) return r;
  if (m.kind == GPUEC_MB_SKIP) return -1;
  if (uint8_t* tc = tc_records()) tc_record(totals, tc + static_cast<size_t>(i) * kTcRecordBytes);
  return 0;
}

int FrameCoder::commit_streamed(int32_t, const gpuec_mb&, uint8_t*, const uint8_t*, uint64_t, uint64_t) { return -1; }
bool FrameCoder::end_slice_streamed(int, const uint8_t*, uint64_t, uint64_t) { return false; }
void FrameCoder::drop_slice_streamed(int) {}
void FrameCoder::restart_stream() {}

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
  std::mutex mu;
  std::condition_variable cv;
  bool checked = false, usable = false, done = false, taken = false, abandon = false, abandoned = false;
  bool held = false;     // waiting for start() after the device check
  bool started = false;  // start() was called
  std::string why;
  std::unique_ptr<FrameCoder> coder;
  std::thread thread;
};

namespace {
std::atomic<int> g_abandoned{0};
}  // namespace

PendingCudaCoder::PendingCudaCoder(int mb_width, int mb_height, int device, bool held)
    : state_(std::make_shared<State>()) {
  state_->held = held;
  std::shared_ptr<State> s = state_;
  try {
    state_->thread = std::thread([s, mb_width, mb_height, device] { create(*s, mb_width, mb_height, device); });
  } catch (const std::system_error&) {
    state_->held = false;  // no thread to wait on
    create(*state_, mb_width, mb_height, device);
  }
}

void PendingCudaCoder::start() {
  {
    std::lock_guard<std::mutex> l(state_->mu);
    state_->held = false;
    state_->started = true;
  }
  state_->cv.notify_all();
}

PendingCudaCoder::~PendingCudaCoder() {
  State& s = *state_;
  if (!s.thread.joinable()) return;
  {
    std::lock_guard<std::mutex> l(s.mu);
    if (s.abandon && !s.done) {
      s.abandoned = true;
      ++g_abandoned;
    }
    s.held = false;  // a held creation is not waited for: it ends after its check (below)
  }
  s.cv.notify_all();
  if (s.abandoned)
    s.thread.detach();  // the thread holds the state; it ends with it
  else
    s.thread.join();
}

bool PendingCudaCoder::ready() const {
  std::lock_guard<std::mutex> l(state_->mu);
  return state_->done;
}

std::unique_ptr<FrameCoder> PendingCudaCoder::take(std::string* why) {
  State& s = *state_;
  std::unique_lock<std::mutex> l(s.mu);
  if (s.taken) {
    *why = "the pending CUDA coder was taken already";
    return nullptr;
  }
  s.held = false;  // a held creation starts now
  s.started = true;
  s.cv.notify_all();
  s.cv.wait(l, [&] { return s.done; });
  s.taken = true;
  if (!s.coder) *why = s.why;
  return std::move(s.coder);
}

bool PendingCudaCoder::device_usable(std::string* why) {
  State& s = *state_;
  std::unique_lock<std::mutex> l(s.mu);
  s.cv.wait(l, [&] { return s.checked; });
  if (!s.usable) *why = s.why;
  return s.usable;
}

void PendingCudaCoder::abandon_on_destroy() {
  std::lock_guard<std::mutex> l(state_->mu);
  state_->abandon = true;
}

int PendingCudaCoder::abandoned() { return g_abandoned.load(); }

void PendingCudaCoder::create(State& s, int mb_width, int mb_height, int device) {
  std::string why;
  const bool usable = gpu::device_usable(device, &why);
  {
    std::lock_guard<std::mutex> l(s.mu);
    s.checked = true;
    s.usable = usable;
    s.why = why;
  }
  s.cv.notify_all();
  bool go = usable;
  if (usable) {  // a held creation waits for start(), or ends when its owner goes (not started: no coder)
    std::unique_lock<std::mutex> l(s.mu);
    const bool was_held = s.held;
    s.cv.wait(l, [&] { return !s.held; });
    go = !was_held || s.started;
  }
  std::unique_ptr<FrameCoder> c;
  if (go) c = FrameCoder::create(gpu::Backend::kCuda, mb_width, mb_height, device, &why);
  else why = "not started";
  std::lock_guard<std::mutex> l(s.mu);
  s.coder = std::move(c);
  if (!s.coder) s.why = why;
  s.done = true;
  if (s.abandoned) --g_abandoned;  // the process is still here: nothing was left behind after all
  s.cv.notify_all();
}

}  // namespace cavlc
