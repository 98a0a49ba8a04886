// The cuda backend of gudcanny.h (../cuda_detector.h): per frame one upload of the plane from a slot's
// pinned buffer (none for a plane already on the device), detect_edges_cuda, the edge pixels per 16x16
// macroblock, one download of the edge map, the counts and the pairs into the slot's pinned buffers (or
// the map written into the caller's device plane, then only the pairs), and the slot's event. The work
// runs on the detector's own non-blocking stream; with a caller's context and stream it is ordered after
// the caller's earlier work on that stream (an event), and the caller's stream waits for it only when it
// wrote into a plane of the caller. Waiting is separate.
#include <cuda_runtime.h>

#include <string>
#include <utility>
#include <vector>

#include "../cuda_detector.h"
#include "canny/canny_cuda.h"
#include "gpu/context.h"
#include "gpu/cuda_check.h"

namespace canny {
namespace {

constexpr int kMbSize = 16;  // the macroblocks of the edge counts (gudcanny_receive_regions)

// out |= edges over width x height: the edges (255) drawn over the caller's plane.
__global__ void mark_kernel(const uint8_t* __restrict__ edges, int edges_pitch, uint8_t* __restrict__ out,
                            int out_pitch, int width, int height) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < width && y < height) out[size_t(y) * out_pitch + x] |= edges[size_t(y) * edges_pitch + x];
}

// Edge pixels (value != 0) of each 16x16 macroblock (its part inside the frame): one block of 16 x 16
// threads per macroblock, counts in raster order of the macroblocks.
__global__ void mb_count_kernel(const uint8_t* __restrict__ edges, int pitch, int width, int height,
                                uint16_t* __restrict__ counts) {
  const int x = blockIdx.x * kMbSize + threadIdx.x, y = blockIdx.y * kMbSize + threadIdx.y;
  const int edge = x < width && y < height && edges[size_t(y) * pitch + x] != 0;
  const int n = __syncthreads_count(edge);
  if (threadIdx.x == 0 && threadIdx.y == 0) counts[size_t(blockIdx.y) * gridDim.x + blockIdx.x] = uint16_t(n);
}

class Detector final : public CudaDetector {
 public:
  ~Detector() override {
    const gpu::ContextScope scope(context_);
    if (!context_ && device_ >= 0) cudaSetDevice(device_);
    if (stream_) cudaStreamSynchronize(stream_);
    for (void* p : {static_cast<void*>(d_src_), static_cast<void*>(d_edges_), static_cast<void*>(d_pairs_),
                    static_cast<void*>(d_counts_), d_ws_})
      if (p) cudaFree(p);
    for (Slot& s : slots_) {
      for (void* p : {static_cast<void*>(s.src), static_cast<void*>(s.edges), static_cast<void*>(s.pairs),
                      static_cast<void*>(s.counts)})
        if (p) cudaFreeHost(p);
      if (s.done) cudaEventDestroy(s.done);
    }
    if (ready_) cudaEventDestroy(ready_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  bool init(int width, int height, int device, void* context, void* stream, int slots, std::string* why) {
    width_ = width;
    height_ = height;
    mb_w_ = (width + kMbSize - 1) / kMbSize;
    mb_h_ = (height + kMbSize - 1) / kMbSize;
    const size_t n = size_t(width) * height, nc = size_t(mb_w_) * mb_h_ * sizeof(uint16_t);
    const size_t np = size_t(strip_count(width)) * sizeof(ThresholdPair);
    ws_bytes_ = detect_edges_cuda_workspace_bytes(width, height);
    if (ws_bytes_ == 0 || slots < 1) {
      *why = "frame size " + std::to_string(width) + "x" + std::to_string(height) + " or " + std::to_string(slots) +
             " slots not supported";
      return false;
    }
    cudaError_t e;
    context_ = context;
    caller_stream_ = static_cast<cudaStream_t>(stream);
    const gpu::ContextScope scope(context_);
    if (!pushed(scope, why)) return false;
    if (!context_) {
      if ((e = cudaSetDevice(device)) != cudaSuccess) return gpu::fail(why, e, "cudaSetDevice");
      device_ = device;
    }
    if ((e = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)) != cudaSuccess)
      return gpu::fail(why, e, "cudaStreamCreate");
    if (context_ && (e = cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming)) != cudaSuccess)
      return gpu::fail(why, e, "cudaEventCreate");
    if ((e = cudaMalloc(reinterpret_cast<void**>(&d_src_), n)) != cudaSuccess ||
        (e = cudaMalloc(reinterpret_cast<void**>(&d_edges_), n)) != cudaSuccess ||
        (e = cudaMalloc(reinterpret_cast<void**>(&d_pairs_), np)) != cudaSuccess ||
        (e = cudaMalloc(reinterpret_cast<void**>(&d_counts_), nc)) != cudaSuccess ||
        (e = cudaMalloc(&d_ws_, ws_bytes_)) != cudaSuccess)
      return gpu::fail(why, e, "cudaMalloc");
    slots_.resize(size_t(slots));
    for (Slot& s : slots_) {
      if ((e = cudaMallocHost(reinterpret_cast<void**>(&s.src), n)) != cudaSuccess ||
          (e = cudaMallocHost(reinterpret_cast<void**>(&s.edges), n)) != cudaSuccess ||
          (e = cudaMallocHost(reinterpret_cast<void**>(&s.pairs), np)) != cudaSuccess ||
          (e = cudaMallocHost(reinterpret_cast<void**>(&s.counts), nc)) != cudaSuccess)
        return gpu::fail(why, e, "cudaMallocHost");
      if ((e = cudaEventCreateWithFlags(&s.done, cudaEventDisableTiming)) != cudaSuccess)
        return gpu::fail(why, e, "cudaEventCreate");
    }
    return true;
  }

  uint8_t* source(int slot) override { return slots_[size_t(slot)].src; }
  const uint8_t* edges(int slot) const override { return slots_[size_t(slot)].edges; }
  const ThresholdPair* pairs(int slot) const override { return slots_[size_t(slot)].pairs; }
  const uint16_t* mb_counts(int slot) const override { return slots_[size_t(slot)].counts; }

  bool launch(int slot, const Options& options, std::string* why) override {
    const gpu::ContextScope scope(context_);
    if (!enter(scope, why)) return false;
    const cudaError_t e =
        cudaMemcpyAsync(d_src_, slots_[size_t(slot)].src, size_t(width_) * height_, cudaMemcpyHostToDevice, stream_);
    if (e != cudaSuccess) return gpu::fail(why, e, "cudaMemcpyAsync (plane)");
    return run(slot, d_src_, width_, nullptr, 0, MapWrite::kMap, options, why);
  }

  bool launch_device(int slot, const uint8_t* plane, int pitch, uint8_t* out, int out_pitch, MapWrite write,
                     const Options& options, std::string* why) override {
    const gpu::ContextScope scope(context_);
    if (!enter(scope, why)) return false;
    if (context_) {  // after what the caller enqueued on its stream (the plane's writer, say)
      cudaError_t e;
      if ((e = cudaEventRecord(ready_, caller_stream_)) != cudaSuccess ||
          (e = cudaStreamWaitEvent(stream_, ready_, 0)) != cudaSuccess)
        return gpu::fail(why, e, "cudaStreamWaitEvent (the caller's stream)");
    }
    if (!run(slot, plane, pitch, out, out_pitch, write, options, why)) return false;
    const cudaError_t e = out && context_ ? cudaStreamWaitEvent(caller_stream_, slots_[size_t(slot)].done, 0)
                                          : cudaSuccess;  // the caller's later work reads `out`
    return e == cudaSuccess || gpu::fail(why, e, "cudaStreamWaitEvent (for the caller's stream)");
  }

  bool wait(int slot, std::string* why) override {
    const gpu::ContextScope scope(context_);
    if (!pushed(scope, why)) return false;
    const cudaError_t e = cudaEventSynchronize(slots_[size_t(slot)].done);
    return e == cudaSuccess || gpu::fail(why, e, "detect_edges_cuda");
  }

 private:
  struct Slot {
    uint8_t* src = nullptr;
    uint8_t* edges = nullptr;
    ThresholdPair* pairs = nullptr;
    uint16_t* counts = nullptr;
    cudaEvent_t done = nullptr;
  };

  static bool pushed(const gpu::ContextScope& scope, std::string* why) {
    return !scope.error() || gpu::fail(why, "cuCtxPushCurrent (the caller's CUDA context): " + scope.error().str());
  }

  // The context of every call: the caller's (pushed by `scope`), or the device's primary one.
  bool enter(const gpu::ContextScope& scope, std::string* why) const {
    if (!pushed(scope, why)) return false;
    const cudaError_t e = context_ ? cudaSuccess : cudaSetDevice(device_);
    return e == cudaSuccess || gpu::fail(why, e, "cudaSetDevice");
  }

  // Detection of the device plane src, then the map into out (or the macroblock counts and, unless
  // kCountsOnly, the map downloaded into the slot), the pairs downloaded, the slot's event recorded.
  bool run(int slot, const uint8_t* src, int pitch, uint8_t* out, int out_pitch, MapWrite write,
           const Options& options, std::string* why) {
    const Slot& s = slots_[size_t(slot)];
    const bool direct = out && write == MapWrite::kMap;  // the kernels write the map where it goes
    gpu::CudaError ce = detect_edges_cuda(src, width_, height_, pitch, options, direct ? out : d_edges_,
                                          direct ? out_pitch : width_, d_pairs_, d_ws_, ws_bytes_, stream_);
    if (ce) return gpu::fail(why, "detect_edges_cuda: " + ce.str());
    cudaError_t e = cudaSuccess;
    if (out && !direct) {
      const dim3 block(32, 8), grid(unsigned(width_ + 31) / 32, unsigned(height_ + 7) / 8);
      mark_kernel<<<grid, block, 0, stream_>>>(d_edges_, width_, out, out_pitch, width_, height_);
      if ((e = cudaGetLastError()) != cudaSuccess) return gpu::fail(why, e, "mark_kernel");
    }
    if (!out) {
      mb_count_kernel<<<dim3(unsigned(mb_w_), unsigned(mb_h_)), dim3(kMbSize, kMbSize), 0, stream_>>>(
          d_edges_, width_, width_, height_, d_counts_);
      if ((e = cudaGetLastError()) != cudaSuccess) return gpu::fail(why, e, "mb_count_kernel");
      if ((e = cudaMemcpyAsync(s.counts, d_counts_, size_t(mb_w_) * mb_h_ * sizeof(uint16_t),
                               cudaMemcpyDeviceToHost, stream_)) != cudaSuccess ||
          (write != MapWrite::kCountsOnly &&
           (e = cudaMemcpyAsync(s.edges, d_edges_, size_t(width_) * height_, cudaMemcpyDeviceToHost, stream_)) !=
               cudaSuccess))
        return gpu::fail(why, e, "cudaMemcpyAsync (edge map)");
    }
    if ((e = cudaMemcpyAsync(s.pairs, d_pairs_, size_t(strip_count(width_)) * sizeof(ThresholdPair),
                             cudaMemcpyDeviceToHost, stream_)) != cudaSuccess)
      return gpu::fail(why, e, "cudaMemcpyAsync (pairs)");
    if ((e = cudaEventRecord(s.done, stream_)) != cudaSuccess) return gpu::fail(why, e, "cudaEventRecord");
    return true;
  }

  int width_ = 0, height_ = 0, mb_w_ = 0, mb_h_ = 0, device_ = -1;
  void* context_ = nullptr;              // the caller's CUcontext, or null: device_'s primary context
  cudaStream_t caller_stream_ = nullptr;  // with context_: the caller's stream the work is ordered with
  cudaStream_t stream_ = nullptr;         // the detector's own
  cudaEvent_t ready_ = nullptr;           // with context_: the caller's stream reached a launch
  uint8_t *d_src_ = nullptr, *d_edges_ = nullptr;
  ThresholdPair* d_pairs_ = nullptr;
  uint16_t* d_counts_ = nullptr;
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
