/* canny/gudcanny.h: the C interface of GUD-Canny for C callers (the FFmpeg filter `gudcanny`,
 * plugin/ffmpeg). Library gpuec_gudcanny (static), built with or without CUDA.
 *
 * A context is made for one frame size and one set of options and owns every buffer a frame needs:
 *   cpu:  a canny::CpuDetector (canny/canny_cpu.h: the same bytes as detect_edges_ref of canny/canny.h,
 *         on config.cpu_threads threads of its own, made at create), staging planes, and one plane per
 *         frame that may be in flight (config.depth);
 *   cuda: device buffers (source, edges, pairs, the detect_edges_cuda workspace), depth + 1 slots of
 *         pinned host buffers (source, edge map, pairs) with a CUDA event each, and its own non-blocking
 *         stream (or the caller's CUDA context and stream: config.cuda_context). A frame is copied into a
 *         slot's pinned source, uploaded once, run through detect_edges_cuda, and its edge map and pairs
 *         are downloaded once into the slot. A frame already in device memory (gudcanny_submit_cuda) is
 *         read in place, and its map can be written into a device plane of the caller.
 * Two ways to run a frame: gudcanny_detect (synchronous: the results are there when it returns), and
 * gudcanny_submit / gudcanny_receive (asynchronous: up to `depth` frames in flight, so that the GPU works
 * on frame N while the caller reads frame N+1). No allocation happens in either. The edge map and the
 * pairs are the same bit for bit on both backends and both ways (the twins of canny/canny.h and
 * canny/canny_cuda.h).
 *
 * Backends: GUDCANNY_BACKEND_CPU, GUDCANNY_BACKEND_CUDA (an error at create when the build has no CUDA
 * or no usable device, the message says which), GUDCANNY_BACKEND_AUTO (cuda when the build has CUDA
 * and the device can be used, else cpu; the choice is reported by gudcanny_backend). When the cuda
 * backend fails at run time (a CUDA error in gudcanny_detect, gudcanny_submit or gudcanny_receive), the
 * context switches to the cpu backend for good, and the call that saw the failure returns
 * GUDCANNY_FELL_BACK with the CUDA error in the message buffer. Nothing is lost: that frame and every
 * frame submitted and not yet received are computed on the CPU from the copies of their planes in the
 * slots, so every output is still right; the caller warns once. Environment, to test this:
 *   GPUEC_GUDCANNY_FAIL_AT_FRAME=N   the cuda backend of a context fails on purpose when the results of
 *                                    its frame N are waited for (as a kernel fault would show);
 *   GPUEC_GUDCANNY_FAIL_AT_SUBMIT=N  ... when its frame N is launched.
 *   Frames count from 0 per context, in the order gudcanny_detect and gudcanny_submit took them; the
 *   variables are read by gudcanny_create.
 *
 * Errors are negative return values (GUDCANNY_E*) with a NUL-terminated message in the caller's
 * buffer (may be NULL when err_size is 0); no exception crosses this interface. A context is used by
 * one thread at a time; different contexts are independent. */
#ifndef CANNY_GUDCANNY_H
#define CANNY_GUDCANNY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The numbers of the project's one backend vocabulary (gpu/backend.h: 0 is "off", which gudcanny refuses). */
enum gudcanny_backend {
  GUDCANNY_BACKEND_CPU = 1,
  GUDCANNY_BACKEND_CUDA = 2,
  GUDCANNY_BACKEND_AUTO = 3
};

enum gudcanny_status {
  GUDCANNY_OK = 0,
  GUDCANNY_FELL_BACK = 1,      /* the cuda backend failed, the cpu does this frame and those in flight */
  GUDCANNY_EINVAL = -1,        /* bad argument (size, pitch, sigma, step, backend, null pointer) */
  GUDCANNY_ENOMEM = -2,        /* a host allocation failed */
  GUDCANNY_EUNAVAILABLE = -3,  /* cuda asked for: no CUDA in this build, or no usable device */
  GUDCANNY_EBACKEND = -4,      /* the backend failed (a CUDA error at create, or with device frames) */
  GUDCANNY_EAGAIN = -5         /* gudcanny_submit: `depth` frames in flight, receive one first;
                                  gudcanny_receive: no frame in flight */
};

/* Threshold modes: one Medina-Carnicer pair per 32-column strip (GUD-Canny) or one for the frame. */
enum gudcanny_thresholds {
  GUDCANNY_STRIP = 0,
  GUDCANNY_FRAME = 1
};

typedef struct gudcanny_config {
  int width, height; /* 1..32768 each, width * height <= 2^26 */
  int backend;       /* enum gudcanny_backend */
  int device;        /* CUDA device index for cuda/auto (0: the first) */
  float sigma;       /* Gaussian standard deviation, 0.1..2.0 */
  int step;          /* candidate set: values 0.01 + k * step / 100 <= 0.25, all pairs low < high;
                        1 = C_0.01 (300 pairs), 3 = C_0.03 (36 pairs); 1..24 */
  int thresholds;    /* enum gudcanny_thresholds */
  int depth;         /* frames that may be submitted and not yet received (gudcanny_submit), 1..16;
                        cuda: one slot of pinned buffers each (2 * width * height bytes), plus one for
                        gudcanny_detect; cpu: one plane each. 2 overlaps one frame with the next */
  void *cuda_context; /* NULL: the library's own CUDA context and stream, on device `device`. Else a
                         CUcontext of the caller (FFmpeg: AVCUDADeviceContext.cuda_ctx): every call on
                         this gudcanny context, gudcanny_destroy included, makes it current for its
                         duration (cuCtxPushCurrent / cuCtxPopCurrent), the device buffers are allocated
                         in it, `device` is not used, and it must outlive the gudcanny context. backend
                         must be cuda or auto, and both mean cuda: without CUDA in this build or with an
                         unusable context, create fails (GUDCANNY_EUNAVAILABLE, GUDCANNY_EBACKEND) */
  void *cuda_stream;  /* with cuda_context: the CUstream of that context every call enqueues on, in order
                         with the caller's own work there (NULL: the context's default stream); the
                         library never destroys it. Must be NULL without cuda_context */
  int cpu_threads;    /* threads of the cpu backend (also after a fall-back from cuda): 0 = every core
                         (std::thread::hardware_concurrency), 1 = the calling thread only, at most 256;
                         the calling thread is one of them, the others are made once (at create, or at
                         the fall-back) and wait between frames. Same output for every count */
} gudcanny_config;

/* The chosen pair of one strip (of the frame in GUDCANNY_FRAME mode), in hundredths; found is 1 when
 * Medina-Carnicer found local maxima, 0 when the fallback pair was used (canny/canny.h). */
typedef struct gudcanny_pair {
  int32_t low, high, found;
} gudcanny_pair;

/* A rectangle in pixels, right and bottom exclusive. */
typedef struct gudcanny_rect {
  int left, top, right, bottom;
} gudcanny_rect;

typedef struct gudcanny_ctx gudcanny_ctx;

/* Fills *config with the defaults: backend auto, device 0, sigma 1.0, step 3, strip thresholds, depth 2,
 * no CUDA context or stream of the caller, cpu_threads 0 (every core), and the given size. */
void gudcanny_config_default(gudcanny_config *config, int width, int height);

/* Creates a context. Returns GUDCANNY_OK and *ctx, or a negative status with *ctx = NULL and the
 * reason in err (GUDCANNY_EINVAL also for a depth outside 1..16). */
int gudcanny_create(const gudcanny_config *config, gudcanny_ctx **ctx, char *err, size_t err_size);
void gudcanny_destroy(gudcanny_ctx *ctx); /* NULL is a no-op */

/* The backend in use now: GUDCANNY_BACKEND_CPU or GUDCANNY_BACKEND_CUDA. */
int gudcanny_backend(const gudcanny_ctx *ctx);
const char *gudcanny_backend_name(int backend); /* "cpu", "cuda", "auto"; "?" otherwise */

/* Number of pairs gudcanny_detect writes: ceil(width / 32) (one per strip, in both modes). */
int gudcanny_pair_count(const gudcanny_ctx *ctx);

/* Edge detection of one 8-bit plane of the context's size. plane row y at plane + y * pitch, out row y
 * at out + y * out_pitch (0 or 255; bytes past the width are not touched); |pitch| and |out_pitch| >=
 * width, negative pitches allowed (bottom-up planes). pairs: gudcanny_pair_count entries, or NULL.
 * Returns GUDCANNY_OK, GUDCANNY_FELL_BACK (see above; the output is valid) or a negative status. */
int gudcanny_detect(gudcanny_ctx *ctx, const uint8_t *plane, ptrdiff_t pitch, uint8_t *out,
                    ptrdiff_t out_pitch, gudcanny_pair *pairs, char *err, size_t err_size);

/* How gudcanny_receive writes the edge map into `out`. */
enum gudcanny_out {
  GUDCANNY_OUT_MAP = 0,     /* the edge map: 255 on edges, 0 elsewhere (as gudcanny_detect) */
  GUDCANNY_OUT_MARK = 1,    /* 255 on edges, the other bytes untouched: the edges drawn over a picture */
  GUDCANNY_OUT_REGIONS = 2  /* gudcanny_submit_cuda with out NULL only: the frame is received with
                               gudcanny_receive_regions, so its map is not brought to the host */
};

/* Asynchronous detection, in the manner of avcodec_send_packet / avcodec_receive_frame: up to
 * config.depth frames may be submitted and not yet received; gudcanny_receive returns them in the order
 * they were submitted. Independent of gudcanny_detect, which may be called in between.
 *
 * gudcanny_submit takes one plane (the layout of gudcanny_detect) and copies it into a free slot: the
 * caller may reuse the plane as soon as the call returns. cuda: it then enqueues the upload, the kernels
 * and the downloads on the context's stream and returns without waiting. cpu: nothing more (the edges
 * are detected in gudcanny_receive). Returns GUDCANNY_OK, GUDCANNY_FELL_BACK (see above; the frame is
 * taken and will come out right), GUDCANNY_EAGAIN (`depth` frames in flight; nothing taken),
 * GUDCANNY_EINVAL (null pointers, |pitch| < width; nothing taken) or GUDCANNY_ENOMEM (a fall-back could
 * not make the cpu workspace; the frames in flight are lost).
 *
 * gudcanny_receive takes the oldest frame in flight: cuda: waits for its slot's event (only that frame's
 * work; later frames keep running) and copies its edge map out; cpu: detects its edges. For a frame of
 * gudcanny_submit_cuda whose map went to a device plane or stayed there (GUDCANNY_OUT_REGIONS), out must
 * be NULL (GUDCANNY_EINVAL otherwise, the frame stays in flight). out, out_pitch:
 * as in gudcanny_detect, written as `how` says (enum gudcanny_out); out may be NULL to drop the map.
 * pairs: gudcanny_pair_count entries, or NULL. Returns GUDCANNY_OK, GUDCANNY_FELL_BACK (the output is
 * valid), GUDCANNY_EBACKEND (a CUDA error with device frames in flight: see gudcanny_submit_cuda),
 * GUDCANNY_EAGAIN (no frame in flight), GUDCANNY_EINVAL (|out_pitch| < width, bad `how`; the frame
 * stays in flight) or GUDCANNY_ENOMEM (the cpu workspace could not be made after a fall-back; the frame
 * is lost).
 *
 * gudcanny_pending: frames submitted and not yet received (0 for NULL). gudcanny_destroy drops them. */
int gudcanny_submit(gudcanny_ctx *ctx, const uint8_t *plane, ptrdiff_t pitch, char *err, size_t err_size);
int gudcanny_receive(gudcanny_ctx *ctx, uint8_t *out, ptrdiff_t out_pitch, int how, gudcanny_pair *pairs,
                     char *err, size_t err_size);
int gudcanny_pending(const gudcanny_ctx *ctx);

/* Frames in device memory (the cuda backend; usually with config.cuda_context, as for FFmpeg's
 * AV_PIX_FMT_CUDA frames): plane and out are device pointers of the context's CUDA context, with
 * 0 < pitch, out_pitch <= INT_MAX (>= width). The frame takes a slot like gudcanny_submit's, and
 * gudcanny_receive returns it in order with the others; no host copy of the plane is made.
 *
 * gudcanny_submit_cuda enqueues the detection of `plane` in place: the plane must stay unchanged until
 * the frame is received (work the caller enqueues later on the same stream runs after the detection).
 *   out NULL: the edge map is downloaded into the slot, and gudcanny_receive writes it into a host `out`
 *             as for gudcanny_submit; with how = GUDCANNY_OUT_REGIONS only the edge counts per macroblock
 *             are, and the frame must be received with gudcanny_receive_regions.
 *   out set:  the edge map is written into the device plane `out` as `how` says (enum gudcanny_out), on
 *             the stream, and nothing is downloaded but the pairs; work enqueued later on the same stream
 *             may read `out` without waiting. gudcanny_receive must then get out = NULL: it waits for the
 *             frame and gives its pairs.
 * Returns GUDCANNY_OK; GUDCANNY_EAGAIN (`depth` frames in flight; nothing taken); GUDCANNY_EINVAL (null
 * plane, pitches, bad `how`; nothing taken); GUDCANNY_EUNAVAILABLE (the backend in use is cpu: no CUDA
 * in this build, auto without a device, or after a fall-back); GUDCANNY_EBACKEND (a CUDA error). A CUDA
 * error while any frame in flight is in device memory (here, or in gudcanny_receive) cannot fall back:
 * those frames' planes are out of the CPU's reach. Every frame in flight is dropped, the call returns
 * GUDCANNY_EBACKEND with the CUDA error, and the context is on the cpu backend from then on (host planes
 * still work, device planes give GUDCANNY_EUNAVAILABLE). With the planes in host memory the usual
 * fall-back applies (GUDCANNY_FELL_BACK). */
int gudcanny_submit_cuda(gudcanny_ctx *ctx, const uint8_t *plane, ptrdiff_t pitch, uint8_t *out,
                         ptrdiff_t out_pitch, int how, char *err, size_t err_size);

/* Edge density per 16x16 macroblock, as regions of interest. A macroblock (the part of it inside the
 * width x height frame at the borders) is selected when it holds at least one edge pixel (value != 0)
 * and edge_pixels >= density * its pixel count (compared in double). Selected macroblocks of one
 * macroblock row that touch are merged into one rectangle; rectangles are written row by row, left to
 * right, clipped to the frame. Writes at most `capacity` rectangles and returns how many there are (a
 * return above capacity means the list was cut), or GUDCANNY_EINVAL (null pointers, sizes, |pitch| <
 * width, density outside [0, 1] or NaN). gudcanny_roi_capacity(width, height) rectangles are always
 * enough: ceil(mb_width / 2) per macroblock row. */
int gudcanny_roi_regions(const uint8_t *edges, ptrdiff_t pitch, int width, int height, double density,
                         gudcanny_rect *out, int capacity);

/* gudcanny_receive for regions of interest: takes the oldest frame in flight as gudcanny_receive does
 * and writes, instead of its edge map, the regions gudcanny_roi_regions would find in it (the same rule
 * and order): at most `capacity` rectangles into rects, their number (above capacity: the list was cut)
 * into *count. The cuda backend counts the edge pixels per macroblock on the device, so only those
 * counts are read on the host (no pass over the map). Returns the status of gudcanny_receive;
 * GUDCANNY_EINVAL also for count NULL, density outside [0, 1] or NaN, capacity < 0, rects NULL with a
 * capacity, or a frame of gudcanny_submit_cuda whose map went to a device plane (it stays in flight).
 * Frames submitted with gudcanny_submit_cuda(..., NULL, 0, GUDCANNY_OUT_REGIONS, ...) bring only their
 * counts to the host. */
int gudcanny_receive_regions(gudcanny_ctx *ctx, double density, gudcanny_rect *rects, int capacity, int *count,
                             gudcanny_pair *pairs, char *err, size_t err_size);
int gudcanny_roi_capacity(int width, int height);

#ifdef __cplusplus
}
#endif

#endif /* CANNY_GUDCANNY_H */
