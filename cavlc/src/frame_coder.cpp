// The frame coder (cavlc/frame_coder.h): create() and its CPU backend, encode_frame_ref on plain host
// arrays. submit() does the work, complete() hands it out.
#include "cavlc/frame_coder.h"

#include <algorithm>
#include <cstring>
#include <future>
#include <new>
#include <system_error>
#include <type_traits>
#include <vector>

#include "cavlc/frame.h"
#include "commit.h"
#include "frame_coder_cuda.h"
#include "vle/bitwriter.h"

namespace cavlc {
namespace {

constexpr size_t kOutSlack = 64;  // readable bytes after the output (frame_coder.h)
constexpr size_t kMaxMbResidualBytes = kMaxMbResidualBits / 8 + 8;  // and the 4 bytes of a last word
constexpr uint64_t kNotCommitted = UINT64_MAX - 1;

// A committed macroblock's residual: bits [0, bits) from byte `offset` of the residual buffer, valid
// while `part` is the coder's part number.
struct ResidualPiece {
  uint64_t offset;
  uint32_t bits;
  uint32_t part;
};

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

class CpuCoder final : public FrameCoder {
 public:
  bool init(int mb_width, int mb_height, std::string* why) {
    mbw_ = mb_width;
    mbs_ = static_cast<size_t>(mb_width) * mb_height;
    const size_t n = mbs_ + 1;
    try {
      pieces_.resize(n, ResidualPiece{0, 0, 0});  // part 0: not committed (part_ starts at 1)
    } catch (const std::bad_alloc&) {
      *why = "out of memory";
      return false;
    }
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
    // The splice's output is at most the skeleton, the committed residual (whole bytes), an I_PCM
    // alignment per macroblock and each slice's padding: a bound near the real size, not the worst case
    // of every macroblock that the coding at submit needs.
    const uint64_t spliced = vle::packed_bytes(skeleton_bytes * 8 + uint64_t{residual_used_} * 8 + n * 8 +
                                               static_cast<uint64_t>(n_slices) * 64);
    if (!reserve_out(spliced, why)) return false;
    uint64_t r = splice(in, spliced);
    if (r == kNotCommitted) {
      const uint64_t bound = vle::packed_bytes(assemble_frame_bound_bits(skeleton_bytes * 8, n, n_slices));
      if (!reserve_out(bound, why)) return false;
      r = encode_frame_ref(in, mbw_, ids_.data(), out_.data(), bound, results_.data(), totals_.data());
    }
    ++part_;  // the residuals committed so far belong to this part only
    residual_used_ = 0;
    if (r == UINT64_MAX) {
      *why = "the frame part's records or slices are malformed";
      return false;
    }
    done_ = true;
    return true;
  }

  // Room for `bytes` of output and the readable slack; grows by half at least, so that parts a little
  // larger than any before do not reallocate (and touch fresh pages) every time.
  bool reserve_out(uint64_t bytes, std::string* why) {
    if (out_.size() >= bytes + kOutSlack) return true;
    try {
      out_.resize(std::max(static_cast<size_t>(bytes + kOutSlack), out_.size() + out_.size() / 2));
    } catch (const std::bad_alloc&) {
      *why = "out of memory";
      return false;
    }
    return true;
  }

  int commit(int32_t i, const gpuec_mb& m, uint8_t totals[GPUEC_TC_COUNT]) override {
    if (i < 0 || static_cast<size_t>(i) >= mbs_) return -1;
    const size_t k = static_cast<size_t>(i);
    pieces_[k].part = part_ - 1;  // not committed unless coded below (a slot may be reused)
    if (residual_.size() - residual_used_ < kMaxMbResidualBytes) {
      try {  // grows only: a part with more residual than any before
        residual_.resize(std::max(residual_.size() * 2, residual_used_ + 64 * kMaxMbResidualBytes));
      } catch (const std::bad_alloc&) {  // submit codes the record (not committed)
        const int r = mb_totals(m, totals);
        if (r < 0 || m.kind == GPUEC_MB_SKIP) return -1;
        if (r == 0 && &m != &recs_[k]) recs_[k] = m;
        return r;
      }
    }
    uint64_t bits = 0;
    uint8_t* out = residual_.data() + residual_used_;
    const int r = commit_mb_ref(m, recs_.data(), ids_.data(), mbw_, i, totals_.data(), totals, out, &bits);
    if (r != 0) return r;  // an overflow's bits are dropped: residual_used_ stays
    recs_[k].kind = m.kind;  // what the splice and the neighbours' commits read of the record
    if (m.kind == GPUEC_MB_PCM) {  // the samples; their alignment waits for the splice
      std::memcpy(out, m.u.pcm, sizeof m.u.pcm);
      bits = sizeof m.u.pcm * 8;
    }
    pieces_[k] = ResidualPiece{residual_used_, static_cast<uint32_t>(bits), part_};
    residual_used_ += static_cast<size_t>((bits + 7) / 8);
    return 0;
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
  // The part from committed residuals: skeleton pieces and residual pieces (I_PCM samples placed here),
  // with encode_frame_ref's checks of the slices. kNotCommitted when a coded macroblock was not
  // committed in this part; else as encode_frame_ref.
  uint64_t splice(const FrameAssembly& in, uint64_t out_bytes) {
    const int32_t* ids = ids_.data();
    const ResidualPiece* pieces = pieces_.data();
    const uint8_t* residual = residual_.data();
    vle::BitWriter bw(out_.data(), static_cast<size_t>(out_bytes));
    int32_t next = 0;
    for (int k = 0; k < in.n_slices; ++k) {
      const FrameSlice& s = in.slices[k];
      if (s.first_mb < next || s.mb_count < 1 || int64_t{s.first_mb} + s.mb_count > in.n_mbs) return UINT64_MAX;
      next = s.first_mb + s.mb_count;
      const uint64_t start = bw.bits();
      for (int i = s.first_mb; i < next; ++i) {
        const gpuec_mb& m = in.records[i];
        if (m.kind == GPUEC_MB_SKIP) continue;
        if (pieces[i].part != part_) return kNotCommitted;
        if (ids[i] != k) return UINT64_MAX;
        bw.copy_bits(in.arena, in.lead[i].src_bit, in.lead[i].len);
        if (m.kind == GPUEC_MB_PCM) bw.align_zero();  // pcm_alignment_zero_bit before the samples
        bw.copy_bits(residual + pieces[i].offset, 0, pieces[i].bits);
      }
      bw.copy_bits(in.arena, s.tail_src_bit, s.tail_len);
      results_[static_cast<size_t>(k)] = SliceResult{start, bw.bits() - start};
      bw.put(0, static_cast<int>((32 - (bw.bits() & 31)) & 31));
    }
    bw.flush();
    return bw.overflowed() ? UINT64_MAX : bw.bits();
  }

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
  // Committed residuals (commit): pieces_[i] of the part numbered part_ (from 1: a fresh coder's pieces
  // are of part 0, not committed), in residual_ up to residual_used_.
  std::vector<ResidualPiece> pieces_;
  std::vector<uint8_t> residual_;
  size_t residual_used_ = 0;
  uint32_t part_ = 1;
};

}  // namespace

int FrameCoder::commit(int32_t i, const gpuec_mb& m, uint8_t totals[GPUEC_TC_COUNT]) {
  const int r = mb_totals(m, totals);
  if (r != 0) return r;
  if (m.kind == GPUEC_MB_SKIP) return -1;
  if (uint8_t* tc = tc_records()) tc_record(totals, tc + static_cast<size_t>(i) * kTcRecordBytes);
  return 0;
}

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
