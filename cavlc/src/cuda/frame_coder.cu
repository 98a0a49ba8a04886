// The frame coder's CUDA backend (cavlc/frame_coder.h): one frame part per submission on the coder's own stream.
//
// Device arena (one allocation, so that vle's packer reads every source from one base):
//   [0, skel_cap)                 skeleton copies (the MbLead / FrameSlice bits are arena bits)
//   [skel_cap, +256)              zero bytes (I_PCM alignment and slice padding)
//   [rec_off, + cap * 832)        records
//   [slot_off, + cap * 27 * 96)   slot bits of code_frame_cuda
// sized by the first part (cap: its macroblocks) and grown only for a larger part (frame_coder.h, Memory).
// Per submission: 4 host-to-device copies from pinned memory (records; slice ids, leads and the TotalCoeff
// records the stage computed at commit, in one block; slices; skeletons), encode_frame_cuda two-pass
// without its count pass (code, scan, emit; no memset: its workspace is zeroed once here and left zeroed
// by every call), one kernel that copies exactly the output's bytes (its size is only known on the device)
// into mapped pinned host memory, one small device-to-host copy of the slice results, one event.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "../frame_coder_cuda.h"
#include "cavlc/encode_frame_cuda.h"
#include "gpu/cuda_check.h"
#include "gpu/device.h"
#include "gpu/device/pdl.cuh"
#include "vle/bitwriter.h"

namespace cavlc {
namespace {

constexpr size_t kZeroBytes = 256;
constexpr size_t kOutSlack = 64;  // readable bytes after the output (frame_coder.h)
constexpr size_t kOutputBytesPerMb = 256;  // the output area at create (frame_coder.h, README "Memory per encoder")

size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

// Copies packed_bytes(*total_bits) bytes (at most cap) of src to dst (mapped host memory), 16 bytes a thread.
// Launched with programmatic dependent launch after encode_frame_cuda's last kernel: waits for it first.
__global__ void copy_output(const uint4* __restrict__ src, uint4* __restrict__ dst, const uint64_t* total_bits,
                            uint64_t cap) {
  gpu::pdl_wait();
  const uint64_t bytes = min(((*total_bits + 31) >> 5) << 2, cap);  // vle::packed_bytes
  const uint64_t n = (bytes + 15) / 16;
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < n; i += uint64_t{gridDim.x} * blockDim.x)
    dst[i] = src[i];
}

class Coder final : public FrameCoder {
 public:
  ~Coder() override { release(); }
  gpu::Backend backend() const override { return gpu::Backend::kCuda; }

  FrameCoderMemory memory() const override {
    FrameCoderMemory m;
    m.pinned_bytes = static_cast<int64_t>(h_recs_bytes_ + h_small_bytes_ + h_slices_bytes_ + h_results_bytes_ +
                                          h_skel_cap_ + h_out_bytes_);
    m.device_bytes = static_cast<int64_t>(d_small_bytes_ + d_slices_bytes_ + d_results_bytes_ + arena_bytes_ +
                                          len_bytes_ + ws_bytes_ + d_out_cap_);
    return m;
  }

  bool init(int mb_width, int mb_height, int device, std::string* why) {
    mbw_ = mb_width;
    mbh_ = mb_height;
    mbs_ = static_cast<size_t>(mb_width) * mb_height;
    cap_ = mbs_ + 1;
    cudaError_t e;
    if (!gpu::device_usable(device, why)) return false;
    if ((e = cudaSetDevice(device)) != cudaSuccess) return gpu::fail(why, e, "cudaSetDevice");
    device_ = device;  // only a valid ordinal: release() selects it
    if ((e = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)) != cudaSuccess)
      return gpu::fail(why, e, "cudaStreamCreate");
    if ((e = cudaEventCreateWithFlags(&done_, cudaEventDisableTiming)) != cudaSuccess)
      return gpu::fail(why, e, "cudaEventCreate");
    // Slice ids, leads and TotalCoeff records in one block, host and device alike: one upload per part.
    lead_off_ = round_up(cap_ * sizeof(int32_t), 256);
    tc_off_ = round_up(lead_off_ + cap_ * sizeof(cavlc::MbLead), 256);
    const size_t small_bytes = tc_off_ + cap_ * cavlc::kTcRecordBytes;
    const size_t slices_bytes = cap_ * sizeof(cavlc::FrameSlice);
    const size_t results_bytes = cap_ * sizeof(cavlc::SliceResult) + 64;
    if (!host_alloc(reinterpret_cast<void**>(&h_recs_), cap_ * sizeof(gpuec_mb), 0, &h_recs_bytes_, why) ||
        !host_alloc(reinterpret_cast<void**>(&h_small_), small_bytes, 0, &h_small_bytes_, why) ||
        !host_alloc(reinterpret_cast<void**>(&h_slices_), slices_bytes, 0, &h_slices_bytes_, why) ||
        !host_alloc(reinterpret_cast<void**>(&h_results_), results_bytes, 0, &h_results_bytes_, why))
      return false;
    h_total_ = reinterpret_cast<uint64_t*>(h_results_ + cap_);
    if (!grow_host_skeleton(mbs_ * 64 + 65536, why)) return false;
    if (!device_alloc(reinterpret_cast<void**>(&d_small_), small_bytes, &d_small_bytes_, "small arrays", why) ||
        !device_alloc(reinterpret_cast<void**>(&d_slices_), slices_bytes, &d_slices_bytes_, "slices", why) ||
        !device_alloc(reinterpret_cast<void**>(&d_results_), results_bytes, &d_results_bytes_, "results", why))
      return false;
    d_total_ = reinterpret_cast<uint64_t*>(d_results_ + cap_);
    // Everything a whole frame needs is allocated here, where it costs the encoder nothing (the stage creates
    // its coder on a thread of its own): allocated during the encode, the arena and a grown output cost every
    // stage a synchronous re-code and device-wide waits (cudaFreeHost), 9 % of the frame rate at 16 threads.
    // The output area holds kOutputBytesPerMb a macroblock (QP 10 1080p frames: about 165); a larger output
    // still grows it (complete()).
    return grow_output(mbs_ * kOutputBytesPerMb + 65536, why) && reserve_part(mbs_, 0, why);
  }

  gpuec_mb* records() override { return h_recs_; }
  int32_t* slice_ids() override { return reinterpret_cast<int32_t*>(h_small_); }
  cavlc::MbLead* leads() override { return reinterpret_cast<cavlc::MbLead*>(h_small_ + lead_off_); }
  cavlc::FrameSlice* slices() override { return h_slices_; }
  uint8_t* tc_records() override { return h_small_ + tc_off_; }

  uint8_t* skeleton(size_t bytes) override {
    if (bytes > h_skel_cap_) {
      std::string why;
      if (!grow_host_skeleton(std::max(bytes, 2 * h_skel_cap_), &why)) return nullptr;
    }
    return h_skel_;
  }

  bool submit(int rows, int n_slices, size_t skeleton_bytes, std::string* why) override {
    cudaError_t e;
    if ((e = cudaSetDevice(device_)) != cudaSuccess) return gpu::fail(why, e, "cudaSetDevice");
    const size_t n = static_cast<size_t>(rows) * mbw_;
    if (rows <= 0 || n > mbs_ || n_slices <= 0 || static_cast<size_t>(n_slices) > n) {
      *why = "frame part out of range";
      return false;
    }
    if (!reserve_part(n, skeleton_bytes, why)) return false;
    uint8_t* d_recs = d_arena_ + rec_off_;
    if ((e = cudaMemcpyAsync(d_recs, h_recs_, n * sizeof(gpuec_mb), cudaMemcpyHostToDevice, stream_)) ||
        (e = cudaMemcpyAsync(d_small_, h_small_, tc_off_ + n * cavlc::kTcRecordBytes, cudaMemcpyHostToDevice,
                             stream_)) ||
        (e = cudaMemcpyAsync(d_slices_, h_slices_, n_slices * sizeof(cavlc::FrameSlice), cudaMemcpyHostToDevice,
                             stream_)) ||
        (e = cudaMemcpyAsync(d_arena_, h_skel_, skeleton_bytes, cudaMemcpyHostToDevice, stream_)))
      return gpu::fail(why, e, "cudaMemcpyAsync (to the device)");
    cavlc::FrameAssembly& in = part_;
    in = cavlc::FrameAssembly{};
    in.arena = d_arena_;
    in.records_bit = uint64_t{rec_off_} * 8;
    in.slots_bit = uint64_t{slot_off_} * 8;
    in.zero_bit = uint64_t{skel_cap_} * 8;
    in.records = reinterpret_cast<const gpuec_mb*>(d_recs);
    in.slot_len = d_len_;
    in.lead = reinterpret_cast<const cavlc::MbLead*>(d_small_ + lead_off_);
    in.slices = d_slices_;
    in.n_mbs = static_cast<int32_t>(n);
    in.n_slices = n_slices;
    // The output area need not hold the worst case (assemble_frame_bound_bits): the kernels write nothing
    // past it and still report the total, and complete() codes the part again when it did not fit.
    if (!encode(why)) return false;
    if ((e = gpu::launch_pdl(copy_output, 64, 256, stream_, reinterpret_cast<const uint4*>(d_out_),
                             reinterpret_cast<uint4*>(d_hout_), static_cast<const uint64_t*>(d_total_),
                             static_cast<uint64_t>(d_out_cap_))) != cudaSuccess)
      return gpu::fail(why, e, "copy_output launch");
    if ((e = cudaMemcpyAsync(h_results_, d_results_, n_slices * sizeof(cavlc::SliceResult), cudaMemcpyDeviceToHost,
                             stream_)) ||
        (e = cudaMemcpyAsync(h_total_, d_total_, sizeof(uint64_t), cudaMemcpyDeviceToHost, stream_)))
      return gpu::fail(why, e, "cudaMemcpyAsync (to the host)");
    if ((e = cudaEventRecord(done_, stream_)) != cudaSuccess) return gpu::fail(why, e, "cudaEventRecord");
    in_flight_ = true;
    return true;
  }

  bool complete(const uint8_t** out, const cavlc::SliceResult** results, std::string* why) override {
    if (!in_flight_) {
      *why = "nothing submitted";
      return false;
    }
    in_flight_ = false;
    cudaError_t e;
    if ((e = cudaSetDevice(device_)) != cudaSuccess) return gpu::fail(why, e, "cudaSetDevice");
    if ((e = cudaEventSynchronize(done_)) != cudaSuccess) return gpu::fail(why, e, "frame part on the GPU");
    const uint64_t bytes = vle::packed_bytes(*h_total_);
    if (bytes > d_out_cap_) {  // larger than the output area: grow it and code the part again (same inputs)
      if (!grow_output(round_up(bytes + bytes / 2, 4096), why) || !encode(why)) return false;
      if ((e = cudaMemcpyAsync(h_out_, d_out_, bytes, cudaMemcpyDeviceToHost, stream_)) != cudaSuccess)
        return gpu::fail(why, e, "cudaMemcpyAsync (output)");
      if ((e = cudaStreamSynchronize(stream_)) != cudaSuccess) return gpu::fail(why, e, "frame part on the GPU");
    }
    *out = h_out_;
    *results = h_results_;
    return true;
  }

 private:
  // encode_frame_cuda on part_ into the output area (results and total included), on the stream.
  bool encode(std::string* why) {
    // The slice ids the stage writes are the slices' indices in the part (encode_frame_cuda's slice_index).
    const gpu::CudaError ce = cavlc::encode_frame_cuda(
        cavlc::kEncodeFrameCudaDefault, part_, mbw_, reinterpret_cast<const int32_t*>(d_small_), d_len_, d_out_,
        d_out_cap_, d_results_, d_total_, d_ws_, ws_bytes_, stream_, d_small_ + tc_off_);
    if (ce) return gpu::fail(why, ce, "encode_frame_cuda");
    return true;
  }

  bool host_alloc(void** p, size_t bytes, unsigned flags, size_t* held, std::string* why) {
    const cudaError_t e = cudaHostAlloc(p, bytes, flags);
    if (e != cudaSuccess) {
      *p = nullptr;
      return gpu::fail(why, e, "cudaHostAlloc");
    }
    *held = bytes;
    return true;
  }

  bool device_alloc(void** p, size_t bytes, size_t* held, const char* what, std::string* why) {
    const cudaError_t e = cudaMalloc(p, bytes);
    if (e != cudaSuccess) {
      *p = nullptr;
      return gpu::fail(why, e, (std::string("cudaMalloc (") + what + ")").c_str());
    }
    *held = bytes;
    return true;
  }

  template <typename T>
  static void device_free(T*& p, size_t* held) {
    if (p) cudaFree(p);
    p = nullptr;
    *held = 0;
  }

  bool grow_host_skeleton(size_t bytes, std::string* why) {
    bytes = round_up(bytes, 4096);
    uint8_t* p = nullptr;
    size_t held = 0;
    if (!host_alloc(reinterpret_cast<void**>(&p), bytes, 0, &held, why)) return false;
    if (h_skel_) {
      std::memcpy(p, h_skel_, h_skel_cap_);
      cudaFreeHost(h_skel_);
    }
    h_skel_ = p;
    h_skel_cap_ = held;
    return true;
  }

  // The output area: d_out_ on the device and h_out_, mapped pinned memory of the same capacity (the copy
  // kernel writes it through d_hout_) with kOutSlack readable bytes after it. Contents are not kept.
  bool grow_output(size_t bytes, std::string* why) {
    bytes = round_up(bytes, 4096);
    uint8_t* p = nullptr;
    size_t held = 0;
    if (!host_alloc(reinterpret_cast<void**>(&p), bytes + kOutSlack, cudaHostAllocMapped, &held, why)) return false;
    void* dp = nullptr;
    cudaError_t e = cudaHostGetDevicePointer(&dp, p, 0);
    if (e != cudaSuccess) {
      cudaFreeHost(p);
      return gpu::fail(why, e, "cudaHostGetDevicePointer");
    }
    if (h_out_) cudaFreeHost(h_out_);
    h_out_ = p;
    d_hout_ = static_cast<uint8_t*>(dp);
    h_out_bytes_ = held;
    device_free(d_out_, &d_out_cap_);
    return device_alloc(reinterpret_cast<void**>(&d_out_), bytes, &d_out_cap_, "output", why);
  }

  // The device arena ([skeletons | zero bytes | records | slots]), the slot lengths and the workspace for a
  // part of n macroblocks with skel_bytes of skeletons. Grows only: to at least twice the macroblocks (at
  // most the frame's) and to the host skeleton area's size.
  bool reserve_part(size_t n, size_t skel_bytes, std::string* why) {
    const bool more_mbs = n > part_cap_;
    if (!more_mbs && skel_bytes <= skel_cap_) return true;
    const size_t cap = more_mbs ? std::min(mbs_, std::max(n, 2 * part_cap_)) : part_cap_;
    const size_t skel_cap = round_up(std::max(skel_bytes, h_skel_cap_), 256);
    const size_t rec_off = skel_cap + kZeroBytes;
    const size_t slot_off = round_up(rec_off + cap * sizeof(gpuec_mb), 256);
    device_free(d_arena_, &arena_bytes_);
    part_cap_ = 0;
    if (!device_alloc(reinterpret_cast<void**>(&d_arena_), slot_off + cap * cavlc::kMbSlots * cavlc::kSlotBytes,
                      &arena_bytes_, "arena", why))
      return false;
    cudaError_t e;
    if ((e = cudaMemsetAsync(d_arena_ + skel_cap, 0, kZeroBytes, stream_)) != cudaSuccess)
      return gpu::fail(why, e, "cudaMemsetAsync");
    if (more_mbs || !d_len_) {
      device_free(d_len_, &len_bytes_);
      device_free(d_ws_, &ws_bytes_);
      const size_t ws_bytes = cavlc::encode_frame_cuda_workspace_bytes(static_cast<int>(cap));
      if (!device_alloc(reinterpret_cast<void**>(&d_len_), cap * cavlc::kMbSlots * sizeof(uint16_t), &len_bytes_,
                        "slot lengths", why) ||
          !device_alloc(&d_ws_, ws_bytes, &ws_bytes_, "workspace", why))
        return false;
      // On the coder's stream: a non-blocking stream is not ordered after work on the legacy default stream.
      if ((e = cudaMemsetAsync(d_ws_, 0, ws_bytes_, stream_)) != cudaSuccess)
        return gpu::fail(why, e, "cudaMemsetAsync (workspace)");
    }
    skel_cap_ = skel_cap;
    rec_off_ = rec_off;
    slot_off_ = slot_off;
    part_cap_ = cap;
    return true;
  }

  void release() {
    if (device_ >= 0) cudaSetDevice(device_);
    if (stream_) cudaStreamSynchronize(stream_);
    for (void* p : {static_cast<void*>(h_recs_), static_cast<void*>(h_small_), static_cast<void*>(h_slices_),
                    static_cast<void*>(h_results_), static_cast<void*>(h_skel_), static_cast<void*>(h_out_)})
      if (p) cudaFreeHost(p);
    for (void* p : {static_cast<void*>(d_small_), static_cast<void*>(d_slices_), static_cast<void*>(d_results_),
                    static_cast<void*>(d_len_), d_ws_, static_cast<void*>(d_arena_), static_cast<void*>(d_out_)})
      if (p) cudaFree(p);
    if (done_) cudaEventDestroy(done_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  int mbw_ = 0, mbh_ = 0, device_ = -1;
  size_t mbs_ = 0, cap_ = 0;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t done_ = nullptr;
  bool in_flight_ = false;
  cavlc::FrameAssembly part_{};  // the part submitted last (device pointers), for a second coding
  // pinned host; *_bytes_: what is held (memory())
  gpuec_mb* h_recs_ = nullptr;
  uint8_t* h_small_ = nullptr;  // [slice ids | leads at lead_off_ | TotalCoeff records at tc_off_]
  size_t lead_off_ = 0, tc_off_ = 0;
  cavlc::FrameSlice* h_slices_ = nullptr;
  cavlc::SliceResult* h_results_ = nullptr;
  uint64_t* h_total_ = nullptr;
  size_t h_recs_bytes_ = 0, h_small_bytes_ = 0, h_slices_bytes_ = 0, h_results_bytes_ = 0;
  uint8_t* h_skel_ = nullptr;
  size_t h_skel_cap_ = 0;
  uint8_t* h_out_ = nullptr;   // mapped, d_out_cap_ + kOutSlack bytes
  uint8_t* d_hout_ = nullptr;  // its device address
  size_t h_out_bytes_ = 0;
  // device
  uint8_t* d_arena_ = nullptr;  // for part_cap_ macroblocks
  size_t arena_bytes_ = 0, part_cap_ = 0, skel_cap_ = 0, rec_off_ = 0, slot_off_ = 0;
  uint8_t* d_small_ = nullptr;  // the same layout as h_small_
  cavlc::FrameSlice* d_slices_ = nullptr;
  cavlc::SliceResult* d_results_ = nullptr;
  size_t d_small_bytes_ = 0, d_slices_bytes_ = 0, d_results_bytes_ = 0;
  uint64_t* d_total_ = nullptr;
  uint16_t* d_len_ = nullptr;
  size_t len_bytes_ = 0;
  uint8_t* d_out_ = nullptr;
  size_t d_out_cap_ = 0;
  void* d_ws_ = nullptr;  // encode_frame_cuda's workspace: zero between calls
  size_t ws_bytes_ = 0;
};

}  // namespace

std::unique_ptr<FrameCoder> create_cuda_frame_coder(int mb_width, int mb_height, int device, std::string* why) {
  std::unique_ptr<Coder> c(new Coder);
  if (!c->init(mb_width, mb_height, device, why)) return nullptr;
  return c;
}

}  // namespace cavlc
