// The cuda backend of gudcanny.h (../cuda_detector.h): per frame one upload of the plane from pinned
// memory, detect_edges_cuda, one download of the edge map and one of the pairs, all on the detector's
// non-blocking stream, then one stream synchronization.
#include <cuda_runtime.h>

#include <string>
#include <utility>

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
    for (void* p : {static_cast<void*>(h_src_), static_cast<void*>(h_edges_), static_cast<void*>(h_pairs_)})
      if (p) cudaFreeHost(p);
    if (stream_) cudaStreamDestroy(stream_);
  }

  bool init(int width, int height, int device, std::string* why) {
    width_ = width;
    height_ = height;
    const size_t n = size_t(width) * height;
    const size_t np = size_t(strip_count(width)) * sizeof(ThresholdPair);
    ws_bytes_ = detect_edges_cuda_workspace_bytes(width, height);
    if (ws_bytes_ == 0) {
      *why = "frame size " + std::to_string(width) + "x" + std::to_string(height) + " not supported";
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
    if ((e = cudaMallocHost(reinterpret_cast<void**>(&h_src_), n)) != cudaSuccess ||
        (e = cudaMallocHost(reinterpret_cast<void**>(&h_edges_), n)) != cudaSuccess ||
        (e = cudaMallocHost(reinterpret_cast<void**>(&h_pairs_), np)) != cudaSuccess)
      return fail(why, describe(e, "cudaMallocHost"));
    return true;
  }

  uint8_t* source() override { return h_src_; }
  const uint8_t* edges() const override { return h_edges_; }
  const ThresholdPair* pairs() const override { return h_pairs_; }

  bool run(const Options& options, std::string* why) override {
    const size_t n = size_t(width_) * height_;
    const size_t np = size_t(strip_count(width_)) * sizeof(ThresholdPair);
    cudaError_t e;
    if ((e = cudaSetDevice(device_)) != cudaSuccess) return fail(why, describe(e, "cudaSetDevice"));
    if ((e = cudaMemcpyAsync(d_src_, h_src_, n, cudaMemcpyHostToDevice, stream_)) != cudaSuccess)
      return fail(why, describe(e, "cudaMemcpyAsync (plane)"));
    const gpu::CudaError ce = detect_edges_cuda(d_src_, width_, height_, width_, options, d_edges_, width_, d_pairs_,
                                                d_ws_, ws_bytes_, stream_);
    if (ce) {
      *why = "detect_edges_cuda: " + ce.str();
      cudaStreamSynchronize(stream_);
      return false;
    }
    if ((e = cudaMemcpyAsync(h_edges_, d_edges_, n, cudaMemcpyDeviceToHost, stream_)) != cudaSuccess ||
        (e = cudaMemcpyAsync(h_pairs_, d_pairs_, np, cudaMemcpyDeviceToHost, stream_)) != cudaSuccess)
      return fail(why, describe(e, "cudaMemcpyAsync (results)"));
    if ((e = cudaStreamSynchronize(stream_)) != cudaSuccess) return fail(why, describe(e, "detect_edges_cuda"));
    return true;
  }

 private:
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
  uint8_t *h_src_ = nullptr, *h_edges_ = nullptr;
  ThresholdPair* h_pairs_ = nullptr;
};

}  // namespace

std::unique_ptr<CudaDetector> CudaDetector::create(int width, int height, int device, std::string* why) {
  std::unique_ptr<Detector> d(new Detector);
  if (!d->init(width, height, device, why)) return nullptr;
  return d;
}

}  // namespace canny
