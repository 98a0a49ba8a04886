// The cuda backend of gudcanny.h (../cuda_detector.h): per frame one upload of the plane from a slot's
// pinned buffer, detect_edges_cuda, one download of the edge map and one of the pairs into the slot's
// pinned buffers and the slot's event, all on the detector's non-blocking stream; waiting is separate.
#include <cuda_runtime.h>

#include <string>
#include <utility>
#include <vector>

#include "../cuda_detector.h"
#include "canny/canny_cuda.h"

namespace canny {
namespace {

std::string describe(cudaError_t e, const char* what) {
  return std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
}

class Detector final : public CudaDetector {
 public:
  ~Detector() override {
    if (device_ >= 0) cudaSetDevice(device_);
    if (stream_) cudaStreamSynchronize(stream_);
    for (void* p : {static_cast<void*>(d_src_), static_cast<void*>(d_edges_), static_cast<void*>(d_pairs_), d_ws_})
      if (p) cudaFree(p);
    for (Slot& s : slots_) {
      for (void* p : {static_cast<void*>(s.src), static_cast<void*>(s.edges), static_cast<void*>(s.pairs)})
        if (p) cudaFreeHost(p);
      if (s.done) cudaEventDestroy(s.done);
    }
    if (stream_) cudaStreamDestroy(stream_);
  }

  bool init(int width, int height, int device, int slots, std::string* why) {
    width_ = width;
    height_ = height;
    const size_t n = size_t(width) * height;
    const size_t np = size_t(strip_count(width)) * sizeof(ThresholdPair);
    ws_bytes_ = detect_edges_cuda_workspace_bytes(width, height);
    if (ws_bytes_ == 0 || slots < 1) {
      *why = "frame size " + std::to_string(width) + "x" + std::to_string(height) + " or " + std::to_string(slots) +
             " slots not supported";
      return false;
    }
    cudaError_t e;
    if ((e = cudaSetDevice(device)) != cudaSuccess) return fail(why, describe(e, "cudaSetDevice"));
    device_ = device;
    if ((e = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)) != cudaSuccess)
      return fail(why, describe(e, "cudaStreamCreate"));
    if ((e = cudaMalloc(reinterpret_cast<void**>(&d_src_), n)) != cudaSuccess ||
        (e = cudaMalloc(reinterpret_cast<void**>(&d_edges_), n)) != cudaSuccess ||
        (e = cudaMalloc(reinterpret_cast<void**>(&d_pairs_), np)) != cudaSuccess ||
        (e = cudaMalloc(&d_ws_, ws_bytes_)) != cudaSuccess)
      return fail(why, describe(e, "cudaMalloc"));
    slots_.resize(size_t(slots));
    for (Slot& s : slots_) {
      if ((e = cudaMallocHost(reinterpret_cast<void**>(&s.src), n)) != cudaSuccess ||
          (e = cudaMallocHost(reinterpret_cast<void**>(&s.edges), n)) != cudaSuccess ||
          (e = cudaMallocHost(reinterpret_cast<void**>(&s.pairs), np)) != cudaSuccess)
        return fail(why, describe(e, "cudaMallocHost"));
      if ((e = cudaEventCreateWithFlags(&s.done, cudaEventDisableTiming)) != cudaSuccess)
        return fail(why, describe(e, "cudaEventCreate"));
    }
    return true;
  }

  uint8_t* source(int slot) override { return slots_[size_t(slot)].src; }
  const uint8_t* edges(int slot) const override { return slots_[size_t(slot)].edges; }
  const ThresholdPair* pairs(int slot) const override { return slots_[size_t(slot)].pairs; }

  bool launch(int slot, const Options& options, std::string* why) override {
    const Slot& s = slots_[size_t(slot)];
    const size_t n = size_t(width_) * height_;
    const size_t np = size_t(strip_count(width_)) * sizeof(ThresholdPair);
    cudaError_t e;
    if ((e = cudaSetDevice(device_)) != cudaSuccess) return fail(why, describe(e, "cudaSetDevice"));
    if ((e = cudaMemcpyAsync(d_src_, s.src, n, cudaMemcpyHostToDevice, stream_)) != cudaSuccess)
      return fail(why, describe(e, "cudaMemcpyAsync (plane)"));
    const gpu::CudaError ce = detect_edges_cuda(d_src_, width_, height_, width_, options, d_edges_, width_, d_pairs_,
                                                d_ws_, ws_bytes_, stream_);
    if (ce) return fail(why, "detect_edges_cuda: " + ce.str());
    if ((e = cudaMemcpyAsync(s.edges, d_edges_, n, cudaMemcpyDeviceToHost, stream_)) != cudaSuccess ||
        (e = cudaMemcpyAsync(s.pairs, d_pairs_, np, cudaMemcpyDeviceToHost, stream_)) != cudaSuccess)
      return fail(why, describe(e, "cudaMemcpyAsync (results)"));
    if ((e = cudaEventRecord(s.done, stream_)) != cudaSuccess) return fail(why, describe(e, "cudaEventRecord"));
    return true;
  }

  bool wait(int slot, std::string* why) override {
    const cudaError_t e = cudaEventSynchronize(slots_[size_t(slot)].done);
    return e == cudaSuccess || fail(why, describe(e, "detect_edges_cuda"));
  }

 private:
  struct Slot {
    uint8_t* src = nullptr;
    uint8_t* edges = nullptr;
    ThresholdPair* pairs = nullptr;
    cudaEvent_t done = nullptr;
  };

  static bool fail(std::string* why, std::string what) {
    *why = std::move(what);
    return false;
  }

  int width_ = 0, height_ = 0, device_ = -1;
  cudaStream_t stream_ = nullptr;
  uint8_t *d_src_ = nullptr, *d_edges_ = nullptr;
  ThresholdPair* d_pairs_ = nullptr;
  void* d_ws_ = nullptr;
  size_t ws_bytes_ = 0;
  std::vector<Slot> slots_;
};

}  // namespace

bool CudaDetector::available(int device, std::string* why) { return cuda_device_usable(device, why); }

std::unique_ptr<CudaDetector> CudaDetector::create(int width, int height, int device, int slots, std::string* why) {
  std::unique_ptr<Detector> d(new Detector);
  if (!d->init(width, height, device, slots, why)) return nullptr;
  return d;
}

}  // namespace canny
