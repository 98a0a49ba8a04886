// The C interface of GUD-Canny (canny/gudcanny.h): contexts over detect_edges_ref and the cuda backend
// (cuda_detector.h), and the macroblock edge-density regions.
#include "canny/gudcanny.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "canny/canny.h"
#include "cuda_detector.h"
#include "gpu/device.h"

struct gudcanny_ctx {
  int width = 0, height = 0;
  int backend = GUDCANNY_BACKEND_CPU;  // in use now
  canny::Options options;
  std::vector<canny::CandidatePair> candidates;
  std::vector<canny::ThresholdPair> pairs;  // cpu backend output
  std::vector<uint8_t> work;                // detect_edges_ref workspace (cpu backend, or after a fallback)
  std::vector<uint8_t> staging_in;          // width * height each: a bottom-up plane and edge map
  std::vector<uint8_t> staging_out;         // on the cpu backend
  std::unique_ptr<canny::CudaDetector> cuda;
};

namespace {

constexpr int kMbSize = 16;

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
  try {
    if (c->work.empty()) c->work.resize(canny::workspace_bytes_ref(c->width, c->height));
    if (c->staging_in.empty()) c->staging_in.resize(size_t(c->width) * c->height);
    if (c->staging_out.empty()) c->staging_out.resize(size_t(c->width) * c->height);
  } catch (const std::bad_alloc&) {
    *why = "out of memory for the cpu workspace (" + std::to_string(c->width) + "x" + std::to_string(c->height) + ")";
    return GUDCANNY_ENOMEM;
  }
  return GUDCANNY_OK;
}

// detect_edges_ref takes int pitches >= width; other planes go through the staging planes.
bool direct_pitch(ptrdiff_t pitch) { return pitch > 0 && pitch <= INT_MAX; }

int detect_cpu(gudcanny_ctx* c, const uint8_t* plane, ptrdiff_t pitch, uint8_t* out, ptrdiff_t out_pitch,
               std::string* why) {
  const uint8_t* src = plane;
  int src_pitch = int(pitch);
  if (!direct_pitch(pitch)) {
    copy_plane(c->staging_in.data(), c->width, plane, pitch, c->width, c->height);
    src = c->staging_in.data();
    src_pitch = c->width;
  }
  uint8_t* dst = direct_pitch(out_pitch) ? out : c->staging_out.data();
  const int dst_pitch = direct_pitch(out_pitch) ? int(out_pitch) : c->width;
  const int rc = canny::detect_edges_ref(src, c->width, c->height, src_pitch, c->options, dst, dst_pitch,
                                         c->pairs.data(), c->work.data(), c->work.size());
  if (rc != canny::kOk) {
    *why = "detect_edges_ref failed with status " + std::to_string(rc);
    return GUDCANNY_EINVAL;
  }
  if (dst != out) copy_plane(out, out_pitch, dst, c->width, c->width, c->height);
  return GUDCANNY_OK;
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

  std::unique_ptr<gudcanny_ctx> c(new (std::nothrow) gudcanny_ctx);
  if (!c) {
    *why = "out of memory";
    return GUDCANNY_ENOMEM;
  }
  c->width = cfg->width;
  c->height = cfg->height;
  try {
    c->candidates.resize(size_t(canny::make_candidate_set(cfg->step, nullptr, 0)));
    canny::make_candidate_set(cfg->step, c->candidates.data(), int(c->candidates.size()));
    c->pairs.resize(size_t(canny::strip_count(cfg->width)));
  } catch (const std::bad_alloc&) {
    *why = "out of memory";
    return GUDCANNY_ENOMEM;
  }
  c->options.sigma = cfg->sigma;
  c->options.mode = cfg->thresholds == GUDCANNY_FRAME ? canny::ThresholdMode::kFrame : canny::ThresholdMode::kStrip;
  c->options.candidates = c->candidates.data();
  c->options.n_candidates = int(c->candidates.size());

  if (cfg->backend != GUDCANNY_BACKEND_CPU) {
    std::string reason;
    const int count = gpu::device_count(&reason);
    if (count > 0 && cfg->device >= count)
      reason = "CUDA device " + std::to_string(cfg->device) + " asked for, " + std::to_string(count) + " present";
    if (count > cfg->device) {
      c->cuda = canny::CudaDetector::create(cfg->width, cfg->height, cfg->device, &reason);
      if (!c->cuda && cfg->backend == GUDCANNY_BACKEND_CUDA) {
        *why = "cuda backend: " + reason;
        return GUDCANNY_EBACKEND;
      }
    } else if (cfg->backend == GUDCANNY_BACKEND_CUDA) {
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
  switch (backend) {
    case GUDCANNY_BACKEND_CPU: return "cpu";
    case GUDCANNY_BACKEND_CUDA: return "cuda";
    case GUDCANNY_BACKEND_AUTO: return "auto";
    default: return "?";
  }
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
  int status = GUDCANNY_OK;
  const canny::ThresholdPair* chosen = ctx->pairs.data();
  if (ctx->cuda) {
    copy_plane(ctx->cuda->source(), ctx->width, plane, pitch, ctx->width, ctx->height);
    if (ctx->cuda->run(ctx->options, &why)) {
      copy_plane(out, out_pitch, ctx->cuda->edges(), ctx->width, ctx->width, ctx->height);
      chosen = ctx->cuda->pairs();
    } else {  // one report, then the cpu for good: same output
      ctx->cuda.reset();
      ctx->backend = GUDCANNY_BACKEND_CPU;
      status = GUDCANNY_FELL_BACK;
      why = "the cuda backend failed (" + why + "); the cpu backend detects edges from here on, the output is unchanged";
    }
  }
  if (!ctx->cuda) {
    std::string cpu_why;
    int rc = prepare_cpu(ctx, &cpu_why);
    if (rc == GUDCANNY_OK) rc = detect_cpu(ctx, plane, pitch, out, out_pitch, &cpu_why);
    if (rc != GUDCANNY_OK) {
      set_error(err, err_size, status == GUDCANNY_FELL_BACK ? why + "; then: " + cpu_why : cpu_why);
      return rc;
    }
  }
  if (pairs)
    for (size_t i = 0; i < ctx->pairs.size(); ++i) pairs[i] = {chosen[i].low, chosen[i].high, chosen[i].found};
  set_error(err, err_size, why);
  return status;
}

int gudcanny_roi_capacity(int width, int height) {
  if (!valid_size(width, height)) return 0;
  const int mbw = (width + kMbSize - 1) / kMbSize, mbh = (height + kMbSize - 1) / kMbSize;
  return (mbw + 1) / 2 * mbh;
}

int gudcanny_roi_regions(const uint8_t* edges, ptrdiff_t pitch, int width, int height, double density,
                         gudcanny_rect* out, int capacity) {
  if (!edges || !valid_size(width, height) || magnitude(pitch) < width || !(density >= 0.0 && density <= 1.0) ||
      capacity < 0 || (capacity > 0 && !out))
    return GUDCANNY_EINVAL;
  const int mbw = (width + kMbSize - 1) / kMbSize, mbh = (height + kMbSize - 1) / kMbSize;
  int n = 0;
  for (int my = 0; my < mbh; ++my) {
    const int y0 = my * kMbSize, y1 = std::min(height, y0 + kMbSize);
    int run_start = -1;  // first macroblock of the open run
    for (int mx = 0; mx <= mbw; ++mx) {
      bool selected = false;
      if (mx < mbw) {
        const int x0 = mx * kMbSize, x1 = std::min(width, x0 + kMbSize);
        int count = 0;
        for (int y = y0; y < y1; ++y) {
          const uint8_t* row = edges + y * pitch;
          for (int x = x0; x < x1; ++x) count += row[x] != 0;
        }
        selected = count > 0 && double(count) >= density * double((x1 - x0) * (y1 - y0));
      }
      if (selected && run_start < 0) run_start = mx;
      if (!selected && run_start >= 0) {
        if (n < capacity) out[n] = {run_start * kMbSize, y0, std::min(width, mx * kMbSize), y1};
        ++n;
        run_start = -1;
      }
    }
  }
  return n;
}

}  // extern "C"
