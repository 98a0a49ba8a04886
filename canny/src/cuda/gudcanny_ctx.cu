// The cuda backend of gudcanny.h (../cuda_detector.h): per frame one upload of the plane from a slot's
// pinned buffer (none for a plane already on the device), detect_edges_cuda, one download of the edge map
// (or its write into the caller's device plane) and one of the pairs into the slot's pinned buffers and
// the slot's event, all on one stream (the detector's own non-blocking one, or the caller's in the
// caller's context); waiting is separate.
#include <cuda_runtime.h>

#include <string>
#include <utility>
#include <vector>

#include "../cuda_detector.h"
#include "canny/canny_cuda.h"
#include "gpu/context.h"

namespace canny {
namespace {

// out |= edges over width x height: the edges (255) drawn over the caller's plane.
__global__ void mark_kernel(const uint8_t* __restrict__ edges, int edges_pitch, uint8_t* __restrict__ out,
                            int out_pitch, int width, int height) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < width && y < height) out[size_t(y) * out_pitch + x] |= edges[size_t(y) * edges_pitch + x];
}

std::string describe(cudaError_t e, const char* what) {
  return std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
}

class Detector final : public CudaDetector {
 public:
  ~Detector() override {
    const gpu::ContextScope scope(context_);
    if (!context_ && device_ >= 0) cudaSetDevice(device_);
    if (stream_) cudaStreamSynchronize(stream_);
    for (void* p : {static_cast<void*>(d_src_), static_cast<void*>(d_edges_), static_cast<void*>(d_pairs_), d_ws_})
      if (p) cudaFree(p);
    for (Slot& s : slots_) {
      for (void* p : {static_cast<void*>(s.src), static_cast<void*>(s.edges), static_cast<void*>(s.pairs)})
        if (p) cudaFreeHost(p);
      if (s.done) cudaEventDestroy(s.done);
    }
    if (stream_ && !context_) cudaStreamDestroy(stream_);  // a caller's stream stays the caller's
  }

  bool init(int width, int height, int device, void* context, void* stream, int slots, std::string* why) {
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
    context_ = context;
    const gpu::ContextScope scope(context_);
    if (scope.error()) return fail(why, "cuCtxPushCurrent (the caller's CUDA context): " + scope.error().str());
    if (context_) {
      stream_ = static_cast<cudaStream_t>(stream);
    } else {
      if ((e = cudaSetDevice(device)) != cudaSuccess) return fail(why, describe(e, "cudaSetDevice"));
      device_ = device;
      if ((e = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)) != cudaSuccess)
        return fail(why, describe(e, "cudaStreamCreate"));
    }
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
    const gpu::ContextScope scope(context_);
    if (!enter(scope, why)) return false;
    const cudaError_t e =
        cudaMemcpyAsync(d_src_, slots_[size_t(slot)].src, size_t(width_) * height_, cudaMemcpyHostToDevice, stream_);
    if (e != cudaSuccess) return fail(why, describe(e, "cudaMemcpyAsync (plane)"));
    return run(slot, d_src_, width_, nullptr, 0, MapWrite::kMap, options, why);
  }

  bool launch_device(int slot, const uint8_t* plane, int pitch, uint8_t* out, int out_pitch, MapWrite write,
                     const Options& options, std::string* why) override {
    const gpu::ContextScope scope(context_);
    return enter(scope, why) && run(slot, plane, pitch, out, out_pitch, write, options, why);
  }

  bool wait(int slot, std::string* why) override {
    const gpu::ContextScope scope(context_);
    if (scope.error()) return fail(why, "cuCtxPushCurrent: " + scope.error().str());
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

  // The context of every call: the caller's (pushed by `scope`), or the device's primary one.
  bool enter(const gpu::ContextScope& scope, std::string* why) const {
    if (scope.error()) return fail(why, "cuCtxPushCurrent (the caller's CUDA context): " + scope.error().str());
    const cudaError_t e = context_ ? cudaSuccess : cudaSetDevice(device_);
    return e == cudaSuccess || fail(why, describe(e, "cudaSetDevice"));
  }

  // Detection of the device plane src, then the map into out (or downloaded into the slot), the pairs
  // downloaded, the slot's event recorded.
  bool run(int slot, const uint8_t* src, int pitch, uint8_t* out, int out_pitch, MapWrite write,
           const Options& options, std::string* why) {
    const Slot& s = slots_[size_t(slot)];
    const bool direct = out && write == MapWrite::kMap;  // the kernels write the map where it goes
    gpu::CudaError ce = detect_edges_cuda(src, width_, height_, pitch, options, direct ? out : d_edges_,
                                          direct ? out_pitch : width_, d_pairs_, d_ws_, ws_bytes_, stream_);
    if (ce) return fail(why, "detect_edges_cuda: " + ce.str());
    cudaError_t e = cudaSuccess;
    if (out && !direct) {
      const dim3 block(32, 8), grid(unsigned(width_ + 31) / 32, unsigned(height_ + 7) / 8);
      mark_kernel<<<grid, block, 0, stream_>>>(d_edges_, width_, out, out_pitch, width_, height_);
      if ((e = cudaGetLastError()) != cudaSuccess) return fail(why, describe(e, "mark_kernel"));
    }
    if (!out && (e = cudaMemcpyAsync(s.edges, d_edges_, size_t(width_) * height_, cudaMemcpyDeviceToHost,
                                     stream_)) != cudaSuccess)
      return fail(why, describe(e, "cudaMemcpyAsync (edge map)"));
    if ((e = cudaMemcpyAsync(s.pairs, d_pairs_, size_t(strip_count(width_)) * sizeof(ThresholdPair),
                             cudaMemcpyDeviceToHost, stream_)) != cudaSuccess)
      return fail(why, describe(e, "cudaMemcpyAsync (pairs)"));
    if ((e = cudaEventRecord(s.done, stream_)) != cudaSuccess) return fail(why, describe(e, "cudaEventRecord"));
    return true;
  }

  static bool fail(std::string* why, std::string what) {
    *why = std::move(what);
    return false;
  }

  int width_ = 0, height_ = 0, device_ = -1;
  void* context_ = nullptr;  // the caller's CUcontext, or null: device_'s primary context
  cudaStream_t stream_ = nullptr;
  uint8_t *d_src_ = nullptr, *d_edges_ = nullptr;
  ThresholdPair* d_pairs_ = nullptr;
  void* d_ws_ = nullptr;
  size_t ws_bytes_ = 0;
  std::vector<Slot> slots_;
};

}  // namespace

bool CudaDetector::available(int device, std::string* why) { return cuda_device_usable(device, why); }

std::unique_ptr<CudaDetector> CudaDetector::create(int width, int height, int device, void* context, void* stream,
                                                   int slots, std::string* why) {
  std::unique_ptr<Detector> d(new Detector);
  if (!d->init(width, height, device, context, stream, slots, why)) return nullptr;
  return d;
}

}  // namespace canny
