// The C interface of GUD-Canny (canny/gudcanny.h): contexts over canny::CpuDetector (canny/canny_cpu.h, the same
// bytes as detect_edges_ref on config.cpu_threads threads) and the cuda backend
// (cuda_detector.h), and the macroblock edge-density regions.
#include "canny/gudcanny.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "canny/canny.h"
#include "canny/canny_cpu.h"
#include "gpu/backend.h"
#include "cuda_detector.h"

struct gudcanny_ctx {
  int width = 0, height = 0;
  int backend = GUDCANNY_BACKEND_CPU;  // in use now
  int depth = 0;                       // frames that may be in flight (gudcanny_submit)
  canny::Options options;
  std::vector<canny::CandidatePair> candidates;
  std::vector<canny::ThresholdPair> pairs;    // cpu backend output
  int cpu_threads = 0;                        // config.cpu_threads
  canny::CpuDetector cpu;                     // cpu backend (or after a fallback); threads() 0: not made yet
  std::vector<uint8_t> staging_in;            // width * height each: a bottom-up plane and edge map
  std::vector<uint8_t> staging_out;           // on the cpu backend
  std::vector<std::vector<uint8_t>> planes;   // cpu backend: the plane of each slot's frame in flight
  std::unique_ptr<canny::CudaDetector> cuda;  // slots 0..depth-1: gudcanny_submit's; slot depth: gudcanny_detect's
  int head = 0, pending = 0;                  // the oldest slot in flight; frames in flight
  long long frames = 0;                       // frames taken (detect and submit), for the forced failures
  std::vector<long long> slot_frame;          // the frame each cuda slot holds
  std::vector<char> slot_device;              // 1: the slot's frame is in device memory (gudcanny_submit_cuda)
  std::vector<char> slot_kept;                // what the slot's frame brings to the host: kKeeps* bits
  long long fail_at_wait = -1, fail_at_launch = -1;  // GPUEC_GUDCANNY_FAIL_AT_FRAME, _AT_SUBMIT
};

static_assert(GUDCANNY_BACKEND_CPU == static_cast<int>(gpu::Backend::kCpu) &&
                  GUDCANNY_BACKEND_CUDA == static_cast<int>(gpu::Backend::kCuda) &&
                  GUDCANNY_BACKEND_AUTO == static_cast<int>(gpu::Backend::kAuto),
              "gudcanny_backend is gpu::Backend");

namespace {

constexpr int kMbSize = 16;
constexpr char kKeepsMap = 1, kKeepsCounts = 2;  // gudcanny_ctx::slot_kept: the map, the macroblock counts
constexpr int kMaxDepth = 16;

void set_error(char* err, size_t err_size, const std::string& message) {
  if (!err || err_size == 0) return;
  const size_t n = std::min(message.size(), err_size - 1);
  std::memcpy(err, message.data(), n);
  err[n] = '\0';
}

bool valid_size(int width, int height) {
  return width >= 1 && height >= 1 && width <= canny::kMaxDim && height <= canny::kMaxDim &&
         int64_t(width) * height <= canny::kMaxPixels;
}

ptrdiff_t magnitude(ptrdiff_t v) { return v < 0 ? -v : v; }

// Copies rows of `width` bytes between planes of any pitch sign.
void copy_plane(uint8_t* dst, ptrdiff_t dst_pitch, const uint8_t* src, ptrdiff_t src_pitch, int width, int height) {
  for (int y = 0; y < height; ++y) std::memcpy(dst + y * dst_pitch, src + y * src_pitch, size_t(width));
}

// Allocates the cpu backend's buffers (once; also when the cuda backend falls back).
int prepare_cpu(gudcanny_ctx* c, std::string* why) {
  const size_t n = size_t(c->width) * c->height;
  if (c->cpu.threads() == 0) {
    const int rc = c->cpu.init(c->width, c->height, c->options, c->cpu_threads);
    if (rc != canny::kOk) {
      *why = "cannot make the cpu detector (" + std::to_string(c->width) + "x" + std::to_string(c->height) + ", " +
             std::to_string(c->cpu_threads) + " threads): status " + std::to_string(rc);
      return rc == canny::kErrWorkspace ? GUDCANNY_ENOMEM : GUDCANNY_EINVAL;
    }
  }
  try {
    if (c->staging_in.empty()) c->staging_in.resize(n);
    if (c->staging_out.empty()) c->staging_out.resize(n);
    if (c->planes.empty()) c->planes.assign(size_t(c->depth), std::vector<uint8_t>(n));
  } catch (const std::bad_alloc&) {
    *why = "out of memory for the cpu workspace (" + std::to_string(c->width) + "x" + std::to_string(c->height) + ")";
    return GUDCANNY_ENOMEM;
  }
  return GUDCANNY_OK;
}

// Writes a width x height edge map (rows of 0 or 255) into out as `how` says.
void write_map(uint8_t* out, ptrdiff_t out_pitch, const uint8_t* map, ptrdiff_t map_pitch, int width, int height,
               int how) {
  if (how == GUDCANNY_OUT_MAP) {
    copy_plane(out, out_pitch, map, map_pitch, width, height);
    return;
  }
  for (int y = 0; y < height; ++y) {  // 255 | v = 255, 0 | v = v: no branch, vectorized
    uint8_t* __restrict d = out + y * out_pitch;
    const uint8_t* __restrict e = map + y * map_pitch;
    for (int x = 0; x < width; ++x) d[x] |= e[x];
  }
}

// The cpu detector takes int pitches >= width; other planes go through the staging planes.
bool direct_pitch(ptrdiff_t pitch) { return pitch > 0 && pitch <= INT_MAX; }

// The cpu detector on one plane; the map is written into out as `how` says (out may be null: dropped).
int detect_cpu(gudcanny_ctx* c, const uint8_t* plane, ptrdiff_t pitch, uint8_t* out, ptrdiff_t out_pitch, int how,
               std::string* why) {
  const uint8_t* src = plane;
  int src_pitch = int(pitch);
  if (!direct_pitch(pitch)) {
    copy_plane(c->staging_in.data(), c->width, plane, pitch, c->width, c->height);
    src = c->staging_in.data();
    src_pitch = c->width;
  }
  const bool direct = out && how == GUDCANNY_OUT_MAP && direct_pitch(out_pitch);
  uint8_t* dst = direct ? out : c->staging_out.data();
  const int dst_pitch = direct ? int(out_pitch) : c->width;
  const int rc = c->cpu.detect(src, src_pitch, dst, dst_pitch, c->pairs.data());
  if (rc != canny::kOk) {
    *why = "the cpu detector failed with status " + std::to_string(rc);
    return GUDCANNY_EINVAL;
  }
  if (out && dst != out) write_map(out, out_pitch, dst, c->width, c->width, c->height, how);
  return GUDCANNY_OK;
}

void copy_pairs(gudcanny_pair* out, const canny::ThresholdPair* chosen, size_t n) {
  if (out)
    for (size_t i = 0; i < n; ++i) out[i] = {chosen[i].low, chosen[i].high, chosen[i].found};
}

bool device_in_flight(const gudcanny_ctx* c) {
  for (int k = 0; k < c->pending; ++k)
    if (c->slot_device[size_t((c->head + k) % c->depth)]) return true;
  return false;
}

// The cuda backend failed with frames in device memory in flight: they are dropped (the CPU cannot read
// them), and so is the cuda backend. *why gets the report.
int drop_device_frames(gudcanny_ctx* c, std::string* why) {
  *why = "the cuda backend failed (" + *why + "); " + std::to_string(c->pending) +
         " frames in flight in device memory are lost, the context is on the cpu backend from here on";
  c->head = c->pending = 0;
  c->cuda.reset();
  c->backend = GUDCANNY_BACKEND_CPU;
  return GUDCANNY_EBACKEND;
}

// The cuda backend failed: keep the planes of the frames in flight (from the pinned slots) for the cpu
// backend, drop the cuda backend for good. *why gets the report.
int fall_back(gudcanny_ctx* c, std::string* why) {
  if (device_in_flight(c)) return drop_device_frames(c, why);
  *why = "the cuda backend failed (" + *why + "); the cpu backend detects edges from here on, the output is unchanged";
  std::string cpu_why;
  const int rc = prepare_cpu(c, &cpu_why);
  if (rc == GUDCANNY_OK) {
    for (int k = 0; k < c->pending; ++k) {
      const int slot = (c->head + k) % c->depth;
      std::memcpy(c->planes[size_t(slot)].data(), c->cuda->source(slot), size_t(c->width) * c->height);
    }
  } else {
    *why += "; then: " + cpu_why + " (" + std::to_string(c->pending) + " frames in flight lost)";
    c->head = c->pending = 0;
  }
  c->cuda.reset();
  c->backend = GUDCANNY_BACKEND_CPU;
  return rc;
}

// A frame in device memory (gudcanny_submit_cuda): its plane and where its map goes.
struct DeviceFrame {
  const uint8_t* plane;
  int pitch;
  uint8_t* out;  // null: the map is downloaded into the slot
  int out_pitch;
  canny::MapWrite write;
};

// The cuda backend's launch of `slot` (the slot's pinned source, or `dev`) and the wait for it, with the
// forced failures.
bool launch_cuda(gudcanny_ctx* c, int slot, long long frame, std::string* why, const DeviceFrame* dev = nullptr) {
  c->slot_frame[size_t(slot)] = frame;
  c->slot_device[size_t(slot)] = dev != nullptr;
  c->slot_kept[size_t(slot)] = char(!dev ? kKeepsMap | kKeepsCounts
                                   : dev->out ? 0
                                   : dev->write == canny::MapWrite::kCountsOnly ? kKeepsCounts
                                                                                : kKeepsMap | kKeepsCounts);
  if (frame == c->fail_at_launch) {
    *why = "failure forced by GPUEC_GUDCANNY_FAIL_AT_SUBMIT=" + std::to_string(frame);
    return false;
  }
  return dev ? c->cuda->launch_device(slot, dev->plane, dev->pitch, dev->out, dev->out_pitch, dev->write, c->options, why)
             : c->cuda->launch(slot, c->options, why);
}

// GUDCANNY_EAGAIN with its message when `depth` frames are in flight, else GUDCANNY_OK.
int check_room(const gudcanny_ctx* c, char* err, size_t err_size) {
  if (c->pending < c->depth) return GUDCANNY_OK;
  set_error(err, err_size, std::to_string(c->pending) + " frames in flight (depth " + std::to_string(c->depth) +
                               "): receive one before submitting another");
  return GUDCANNY_EAGAIN;
}

bool wait_cuda(gudcanny_ctx* c, int slot, std::string* why) {
  if (c->slot_frame[size_t(slot)] == c->fail_at_wait) {
    *why = "failure forced by GPUEC_GUDCANNY_FAIL_AT_FRAME=" + std::to_string(c->fail_at_wait);
    return false;
  }
  return c->cuda->wait(slot, why);
}

int create(const gudcanny_config* cfg, gudcanny_ctx** out, std::string* why) {
  if (!cfg || !out) {
    *why = "null argument";
    return GUDCANNY_EINVAL;
  }
  if (!valid_size(cfg->width, cfg->height)) {
    *why = "frame size " + std::to_string(cfg->width) + "x" + std::to_string(cfg->height) +
           " not supported (width and height 1.." + std::to_string(canny::kMaxDim) + ", at most " +
           std::to_string(canny::kMaxPixels) + " pixels)";
    return GUDCANNY_EINVAL;
  }
  if (!(cfg->sigma >= canny::kMinSigma && cfg->sigma <= canny::kMaxSigma)) {
    *why = "sigma must be in [0.1, 2.0]";
    return GUDCANNY_EINVAL;
  }
  if (cfg->step < 1 || cfg->step > 24) {
    *why = "step must be in [1, 24] (1: C_0.01, 3: C_0.03)";
    return GUDCANNY_EINVAL;
  }
  if (cfg->thresholds != GUDCANNY_STRIP && cfg->thresholds != GUDCANNY_FRAME) {
    *why = "thresholds must be GUDCANNY_STRIP or GUDCANNY_FRAME";
    return GUDCANNY_EINVAL;
  }
  if (cfg->backend != GUDCANNY_BACKEND_CPU && cfg->backend != GUDCANNY_BACKEND_CUDA &&
      cfg->backend != GUDCANNY_BACKEND_AUTO) {
    *why = "backend must be cpu, cuda or auto";
    return GUDCANNY_EINVAL;
  }
  if (cfg->device < 0) {
    *why = "device must be >= 0";
    return GUDCANNY_EINVAL;
  }
  if (cfg->depth < 1 || cfg->depth > kMaxDepth) {
    *why = "depth must be in [1, " + std::to_string(kMaxDepth) + "]";
    return GUDCANNY_EINVAL;
  }
  if (cfg->cpu_threads < 0 || cfg->cpu_threads > canny::CpuDetector::kMaxCpuThreads) {
    *why = "cpu_threads must be in [0, " + std::to_string(canny::CpuDetector::kMaxCpuThreads) + "] (0: every core)";
    return GUDCANNY_EINVAL;
  }
  if (cfg->cuda_stream && !cfg->cuda_context) {
    *why = "a CUDA stream without its CUDA context";
    return GUDCANNY_EINVAL;
  }
  if (cfg->cuda_context && cfg->backend == GUDCANNY_BACKEND_CPU) {
    *why = "a CUDA context of the caller needs backend cuda or auto";
    return GUDCANNY_EINVAL;
  }

  std::unique_ptr<gudcanny_ctx> c(new (std::nothrow) gudcanny_ctx);
  if (!c) {
    *why = "out of memory";
    return GUDCANNY_ENOMEM;
  }
  c->width = cfg->width;
  c->height = cfg->height;
  c->depth = cfg->depth;
  c->cpu_threads = cfg->cpu_threads;
  c->fail_at_wait = gpu::fail_at_frame("GPUEC_GUDCANNY_FAIL_AT_FRAME");
  c->fail_at_launch = gpu::fail_at_frame("GPUEC_GUDCANNY_FAIL_AT_SUBMIT");
  try {
    c->candidates.resize(size_t(canny::make_candidate_set(cfg->step, nullptr, 0)));
    canny::make_candidate_set(cfg->step, c->candidates.data(), int(c->candidates.size()));
    c->pairs.resize(size_t(canny::strip_count(cfg->width)));
    c->slot_frame.assign(size_t(cfg->depth) + 1, -1);
    c->slot_device.assign(size_t(cfg->depth) + 1, 0);
    c->slot_kept.assign(size_t(cfg->depth) + 1, 0);
  } catch (const std::bad_alloc&) {
    *why = "out of memory";
    return GUDCANNY_ENOMEM;
  }
  c->options.sigma = cfg->sigma;
  c->options.mode = cfg->thresholds == GUDCANNY_FRAME ? canny::ThresholdMode::kFrame : canny::ThresholdMode::kStrip;
  c->options.candidates = c->candidates.data();
  c->options.n_candidates = int(c->candidates.size());

  if (cfg->backend != GUDCANNY_BACKEND_CPU) {
    // With the caller's context, auto means cuda: the caller's frames are on that device.
    const bool required = cfg->backend == GUDCANNY_BACKEND_CUDA || cfg->cuda_context;
    std::string reason;
    if (canny::CudaDetector::available(cfg->cuda_context ? 0 : cfg->device, &reason)) {
      c->cuda = canny::CudaDetector::create(cfg->width, cfg->height, cfg->device, cfg->cuda_context, cfg->cuda_stream,
                                            cfg->depth + 1, &reason);
      if (!c->cuda && required) {
        *why = "cuda backend: " + reason;
        return GUDCANNY_EBACKEND;
      }
    } else if (required) {
      *why = "cuda backend not available: " + reason;
      return GUDCANNY_EUNAVAILABLE;
    }
  }
  if (c->cuda) {
    c->backend = GUDCANNY_BACKEND_CUDA;
  } else {
    const int rc = prepare_cpu(c.get(), why);
    if (rc != GUDCANNY_OK) return rc;
  }
  *out = c.release();
  return GUDCANNY_OK;
}

constexpr int kMaxMbRow = (canny::kMaxDim + kMbSize - 1) / kMbSize;

bool valid_regions_args(double density, const gudcanny_rect* out, int capacity) {
  return density >= 0.0 && density <= 1.0 && capacity >= 0 && (capacity == 0 || out);
}

// The regions of macroblock row my from its edge counts (count[mx], mx < mbw), appended at *n: selected
// macroblocks (count > 0 and count >= density * its pixels inside the frame) of the row that touch are
// merged into one rectangle; *n counts every rectangle, those past capacity are not written.
template <typename Count>
void row_regions(const Count* count, int mbw, int my, int width, int height, double density, gudcanny_rect* out,
                 int capacity, int* n) {
  const int y0 = my * kMbSize, y1 = std::min(height, y0 + kMbSize);
  int run_start = -1;  // first macroblock of the open run
  for (int mx = 0; mx <= mbw; ++mx) {
    bool selected = false;
    if (mx < mbw) {
      const int x0 = mx * kMbSize, x1 = std::min(width, x0 + kMbSize);
      selected = count[mx] > 0 && double(count[mx]) >= density * double((x1 - x0) * (y1 - y0));
    }
    if (selected && run_start < 0) run_start = mx;
    if (!selected && run_start >= 0) {
      if (*n < capacity) out[*n] = {run_start * kMbSize, y0, std::min(width, mx * kMbSize), y1};
      ++*n;
      run_start = -1;
    }
  }
}

struct Regions {  // gudcanny_receive_regions's arguments and result
  double density;
  gudcanny_rect* rects;
  int capacity;
  int count;
};

// gudcanny_receive, and gudcanny_receive_regions when `regions` is given: the regions of the frame (from
// the cuda backend's macroblock counts, or from the map the cpu detects into region_map) instead of a map.
int receive(gudcanny_ctx* ctx, uint8_t* out, ptrdiff_t out_pitch, int how, gudcanny_pair* pairs, char* err,
            size_t err_size, Regions* regions) {
  if (!ctx) {
    set_error(err, err_size, "null argument");
    return GUDCANNY_EINVAL;
  }
  if (how != GUDCANNY_OUT_MAP && how != GUDCANNY_OUT_MARK) {
    set_error(err, err_size, "how must be GUDCANNY_OUT_MAP or GUDCANNY_OUT_MARK");
    return GUDCANNY_EINVAL;
  }
  if (out && magnitude(out_pitch) < ctx->width) {
    set_error(err, err_size, "pitch smaller than the width " + std::to_string(ctx->width));
    return GUDCANNY_EINVAL;
  }
  if (ctx->pending == 0) {
    set_error(err, err_size, "no frame in flight: submit one first");
    return GUDCANNY_EAGAIN;
  }
  const int slot = ctx->head;
  const char kept = ctx->slot_kept[size_t(slot)];
  if ((out && !(kept & kKeepsMap)) || (regions && !(kept & kKeepsCounts))) {
    set_error(err, err_size, regions ? "this frame's edge map went to the device plane given to gudcanny_submit_cuda"
                                     : "this frame of gudcanny_submit_cuda kept its edge map on the device (a device "
                                       "plane, or GUDCANNY_OUT_REGIONS): out must be NULL");
    return GUDCANNY_EINVAL;
  }
  std::string why;
  int status = GUDCANNY_OK;
  if (ctx->cuda) {
    if (wait_cuda(ctx, slot, &why)) {
      if (out) write_map(out, out_pitch, ctx->cuda->edges(slot), ctx->width, ctx->width, ctx->height, how);
      if (regions) {
        const uint16_t* mb = ctx->cuda->mb_counts(slot);
        const int mbw = (ctx->width + kMbSize - 1) / kMbSize, mbh = (ctx->height + kMbSize - 1) / kMbSize;
        for (int my = 0; my < mbh; ++my)
          row_regions(mb + size_t(my) * mbw, mbw, my, ctx->width, ctx->height, regions->density, regions->rects,
                      regions->capacity, &regions->count);
      }
      copy_pairs(pairs, ctx->cuda->pairs(slot), ctx->pairs.size());
      ctx->head = (ctx->head + 1) % ctx->depth;
      --ctx->pending;
      set_error(err, err_size, "");
      return GUDCANNY_OK;
    }
    status = GUDCANNY_FELL_BACK;
    const int rc = fall_back(ctx, &why);  // the planes in flight move to the cpu slots
    if (rc != GUDCANNY_OK) {
      set_error(err, err_size, why);
      return rc;
    }
  }
  std::string cpu_why;
  int rc = prepare_cpu(ctx, &cpu_why);
  if (rc == GUDCANNY_OK && regions) {
    out = ctx->staging_out.data();  // detect_cpu writes the map there in any case: no copy
    out_pitch = ctx->width;
    how = GUDCANNY_OUT_MAP;
  }
  if (rc == GUDCANNY_OK)
    rc = detect_cpu(ctx, ctx->planes[size_t(slot)].data(), ctx->width, out, out_pitch, how, &cpu_why);
  if (rc == GUDCANNY_OK && regions)
    regions->count = gudcanny_roi_regions(out, ctx->width, ctx->width, ctx->height, regions->density, regions->rects,
                                          regions->capacity);
  ctx->head = (ctx->head + 1) % ctx->depth;
  --ctx->pending;
  if (rc != GUDCANNY_OK) {
    set_error(err, err_size, status == GUDCANNY_FELL_BACK ? why + "; then: " + cpu_why : cpu_why);
    return rc;
  }
  copy_pairs(pairs, ctx->pairs.data(), ctx->pairs.size());
  set_error(err, err_size, why);
  return status;
}

}  // namespace

extern "C" {

void gudcanny_config_default(gudcanny_config* config, int width, int height) {
  if (!config) return;
  config->width = width;
  config->height = height;
  config->backend = GUDCANNY_BACKEND_AUTO;
  config->device = 0;
  config->sigma = 1.0f;
  config->step = 3;
  config->thresholds = GUDCANNY_STRIP;
  config->depth = 2;
  config->cuda_context = nullptr;
  config->cuda_stream = nullptr;
  config->cpu_threads = 0;
}

int gudcanny_create(const gudcanny_config* config, gudcanny_ctx** ctx, char* err, size_t err_size) {
  if (ctx) *ctx = nullptr;
  std::string why;
  int rc;
  try {
    rc = create(config, ctx, &why);
  } catch (const std::exception& e) {
    why = e.what();
    rc = GUDCANNY_ENOMEM;
  }
  set_error(err, err_size, rc == GUDCANNY_OK ? std::string() : why);
  return rc;
}

void gudcanny_destroy(gudcanny_ctx* ctx) { delete ctx; }

int gudcanny_backend(const gudcanny_ctx* ctx) { return ctx ? ctx->backend : GUDCANNY_BACKEND_CPU; }

const char* gudcanny_backend_name(int backend) {
  gpu::Backend b;
  return gpu::backend_from_int(backend, &b) && b != gpu::Backend::kOff ? gpu::backend_name(b) : "?";
}

int gudcanny_pair_count(const gudcanny_ctx* ctx) { return ctx ? canny::strip_count(ctx->width) : 0; }

int gudcanny_detect(gudcanny_ctx* ctx, const uint8_t* plane, ptrdiff_t pitch, uint8_t* out, ptrdiff_t out_pitch,
                    gudcanny_pair* pairs, char* err, size_t err_size) {
  std::string why;
  if (!ctx || !plane || !out) {
    set_error(err, err_size, "null argument");
    return GUDCANNY_EINVAL;
  }
  if (magnitude(pitch) < ctx->width || magnitude(out_pitch) < ctx->width) {
    set_error(err, err_size, "pitch smaller than the width " + std::to_string(ctx->width));
    return GUDCANNY_EINVAL;
  }
  const long long frame = ctx->frames++;
  int status = GUDCANNY_OK;
  const canny::ThresholdPair* chosen = ctx->pairs.data();
  if (ctx->cuda) {
    const int slot = ctx->depth;  // gudcanny_detect's own slot: the frames in flight keep theirs
    copy_plane(ctx->cuda->source(slot), ctx->width, plane, pitch, ctx->width, ctx->height);
    if (launch_cuda(ctx, slot, frame, &why) && wait_cuda(ctx, slot, &why)) {
      copy_plane(out, out_pitch, ctx->cuda->edges(slot), ctx->width, ctx->width, ctx->height);
      chosen = ctx->cuda->pairs(slot);
    } else {  // one report, then the cpu for good: same output
      status = GUDCANNY_FELL_BACK;
      const int rc = fall_back(ctx, &why);
      if (rc != GUDCANNY_OK) {
        set_error(err, err_size, why);
        return rc;
      }
    }
  }
  if (!ctx->cuda) {
    std::string cpu_why;
    int rc = prepare_cpu(ctx, &cpu_why);
    if (rc == GUDCANNY_OK) rc = detect_cpu(ctx, plane, pitch, out, out_pitch, GUDCANNY_OUT_MAP, &cpu_why);
    if (rc != GUDCANNY_OK) {
      set_error(err, err_size, status == GUDCANNY_FELL_BACK ? why + "; then: " + cpu_why : cpu_why);
      return rc;
    }
  }
  copy_pairs(pairs, chosen, ctx->pairs.size());
  set_error(err, err_size, why);
  return status;
}

int gudcanny_submit(gudcanny_ctx* ctx, const uint8_t* plane, ptrdiff_t pitch, char* err, size_t err_size) {
  if (!ctx || !plane) {
    set_error(err, err_size, "null argument");
    return GUDCANNY_EINVAL;
  }
  if (magnitude(pitch) < ctx->width) {
    set_error(err, err_size, "pitch smaller than the width " + std::to_string(ctx->width));
    return GUDCANNY_EINVAL;
  }
  if (const int rc = check_room(ctx, err, err_size)) return rc;
  const long long frame = ctx->frames++;
  const int slot = (ctx->head + ctx->pending) % ctx->depth;
  std::string why;
  int status = GUDCANNY_OK;
  if (ctx->cuda) {
    copy_plane(ctx->cuda->source(slot), ctx->width, plane, pitch, ctx->width, ctx->height);
    ++ctx->pending;  // in flight from here on, also when it falls back below
    if (!launch_cuda(ctx, slot, frame, &why)) {
      status = GUDCANNY_FELL_BACK;
      const int rc = fall_back(ctx, &why);
      set_error(err, err_size, why);
      return rc == GUDCANNY_OK ? status : rc;
    }
  } else {
    std::string cpu_why;
    const int rc = prepare_cpu(ctx, &cpu_why);
    if (rc != GUDCANNY_OK) {
      set_error(err, err_size, cpu_why);
      return rc;
    }
    copy_plane(ctx->planes[size_t(slot)].data(), ctx->width, plane, pitch, ctx->width, ctx->height);
    ctx->slot_kept[size_t(slot)] = kKeepsMap | kKeepsCounts;  // the cpu detects the map in receive
    ++ctx->pending;
  }
  set_error(err, err_size, why);
  return status;
}

int gudcanny_receive(gudcanny_ctx* ctx, uint8_t* out, ptrdiff_t out_pitch, int how, gudcanny_pair* pairs, char* err,
                     size_t err_size) {
  return receive(ctx, out, out_pitch, how, pairs, err, err_size, nullptr);
}

int gudcanny_pending(const gudcanny_ctx* ctx) { return ctx ? ctx->pending : 0; }

int gudcanny_submit_cuda(gudcanny_ctx* ctx, const uint8_t* plane, ptrdiff_t pitch, uint8_t* out, ptrdiff_t out_pitch,
                         int how, char* err, size_t err_size) {
  if (!ctx || !plane) {
    set_error(err, err_size, "null argument");
    return GUDCANNY_EINVAL;
  }
  if (pitch < ctx->width || pitch > INT_MAX || (out && (out_pitch < ctx->width || out_pitch > INT_MAX))) {
    set_error(err, err_size, "device plane pitches must be in [width " + std::to_string(ctx->width) + ", INT_MAX]");
    return GUDCANNY_EINVAL;
  }
  if (how != GUDCANNY_OUT_MAP && how != GUDCANNY_OUT_MARK && !(how == GUDCANNY_OUT_REGIONS && !out)) {
    set_error(err, err_size, "how must be GUDCANNY_OUT_MAP or GUDCANNY_OUT_MARK, or GUDCANNY_OUT_REGIONS with out NULL");
    return GUDCANNY_EINVAL;
  }
  if (!ctx->cuda) {
    set_error(err, err_size, "device planes need the cuda backend, and this context is on the cpu backend");
    return GUDCANNY_EUNAVAILABLE;
  }
  if (const int rc = check_room(ctx, err, err_size)) return rc;
  const long long frame = ctx->frames++;
  const int slot = (ctx->head + ctx->pending) % ctx->depth;
  const DeviceFrame dev{plane, int(pitch), out, int(out_pitch),
                        how == GUDCANNY_OUT_MARK      ? canny::MapWrite::kMark
                        : how == GUDCANNY_OUT_REGIONS ? canny::MapWrite::kCountsOnly
                                                      : canny::MapWrite::kMap};
  std::string why;
  if (!launch_cuda(ctx, slot, frame, &why, &dev)) {  // this frame is not taken; any in flight are lost with the device
    const int rc = drop_device_frames(ctx, &why);
    set_error(err, err_size, why);
    return rc;
  }
  ++ctx->pending;
  set_error(err, err_size, "");
  return GUDCANNY_OK;
}

int gudcanny_roi_capacity(int width, int height) {
  if (!valid_size(width, height)) return 0;
  const int mbw = (width + kMbSize - 1) / kMbSize, mbh = (height + kMbSize - 1) / kMbSize;
  return (mbw + 1) / 2 * mbh;
}

int gudcanny_roi_regions(const uint8_t* edges, ptrdiff_t pitch, int width, int height, double density,
                         gudcanny_rect* out, int capacity) {
  if (!edges || !valid_size(width, height) || magnitude(pitch) < width || !valid_regions_args(density, out, capacity))
    return GUDCANNY_EINVAL;
  const int mbw = (width + kMbSize - 1) / kMbSize, mbh = (height + kMbSize - 1) / kMbSize;
  // Edge pixels per column of a macroblock row (at most 16: a byte), for kChunk columns at a time: the
  // column loop is a byte compare-and-subtract the compiler vectorizes; no allocation.
  constexpr int kChunk = 4096;
  static_assert(kChunk % kMbSize == 0, "a macroblock never straddles two chunks");
  uint8_t column[kChunk];
  int mb[kMaxMbRow];
  int n = 0;
  for (int my = 0; my < mbh; ++my) {
    const int y0 = my * kMbSize, y1 = std::min(height, y0 + kMbSize);
    for (int c0 = 0; c0 < width; c0 += kChunk) {
      const int cw = std::min(kChunk, width - c0);
      std::memset(column, 0, size_t(cw));
      for (int y = y0; y < y1; ++y) {
        const uint8_t* __restrict row = edges + y * pitch + c0;
        uint8_t* __restrict col = column;
        for (int x = 0; x < cw; ++x) col[x] = uint8_t(col[x] + (row[x] != 0));
      }
      for (int x0 = 0; x0 < cw; x0 += kMbSize) {
        int count = 0;
        for (int x = x0; x < std::min(cw, x0 + kMbSize); ++x) count += column[x];
        mb[(c0 + x0) / kMbSize] = count;
      }
    }
    row_regions(mb, mbw, my, width, height, density, out, capacity, &n);
  }
  return n;
}

int gudcanny_receive_regions(gudcanny_ctx* ctx, double density, gudcanny_rect* rects, int capacity, int* count,
                             gudcanny_pair* pairs, char* err, size_t err_size) {
  if (count) *count = 0;
  if (!ctx || !count || !valid_regions_args(density, rects, capacity)) {
    set_error(err, err_size, "null argument, density outside [0, 1], or rects NULL with a capacity");
    return GUDCANNY_EINVAL;
  }
  Regions r{density, rects, capacity, 0};
  const int rc = receive(ctx, nullptr, 0, GUDCANNY_OUT_MAP, pairs, err, err_size, &r);
  if (rc >= 0) *count = r.count;
  return rc;
}

}  // extern "C"
