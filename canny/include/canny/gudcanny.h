/* canny/gudcanny.h: the C interface of GUD-Canny for C callers (the FFmpeg filter `gudcanny`,
 * plugin/ffmpeg). Library gpuec_gudcanny (static), built with or without CUDA.
 *
 * A context is made for one frame size and one set of options and owns every buffer a frame needs:
 *   cpu:  the workspace of detect_edges_ref (canny/canny.h) and a staging plane;
 *   cuda: device buffers (source, edges, pairs, the detect_edges_cuda workspace), pinned host buffers
 *         for the source and the results, and its own non-blocking stream. gudcanny_detect copies the
 *         plane into pinned memory, uploads it once, runs detect_edges_cuda, downloads the edge map and
 *         the pairs once, and waits for the stream (the call is synchronous).
 * No allocation happens in gudcanny_detect. The edge map and the pairs are the same bit for bit on
 * both backends (the twins of canny/canny.h and canny/canny_cuda.h).
 *
 * Backends: GUDCANNY_BACKEND_CPU, GUDCANNY_BACKEND_CUDA (an error at create when the build has no CUDA
 * or no usable device, the message says which), GUDCANNY_BACKEND_AUTO (cuda when the build has CUDA
 * and the device can be used, else cpu; the choice is reported by gudcanny_backend). When the cuda
 * backend fails inside gudcanny_detect (a CUDA error at run time), the context switches to the cpu
 * backend for good, computes that frame on the CPU, and gudcanny_detect returns GUDCANNY_FELL_BACK
 * with the CUDA error in the message buffer: the output is still right; the caller warns once.
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

enum gudcanny_backend {
  GUDCANNY_BACKEND_CPU = 0,
  GUDCANNY_BACKEND_CUDA = 1,
  GUDCANNY_BACKEND_AUTO = 2
};

enum gudcanny_status {
  GUDCANNY_OK = 0,
  GUDCANNY_FELL_BACK = 1,      /* gudcanny_detect: the cuda backend failed, the cpu did this frame */
  GUDCANNY_EINVAL = -1,        /* bad argument (size, pitch, sigma, step, backend, null pointer) */
  GUDCANNY_ENOMEM = -2,        /* a host allocation failed */
  GUDCANNY_EUNAVAILABLE = -3,  /* cuda asked for: no CUDA in this build, or no usable device */
  GUDCANNY_EBACKEND = -4       /* the backend failed (a CUDA error at create) */
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

/* Fills *config with the defaults: backend auto, device 0, sigma 1.0, step 3, strip thresholds, and
 * the given size. */
void gudcanny_config_default(gudcanny_config *config, int width, int height);

/* Creates a context. Returns GUDCANNY_OK and *ctx, or a negative status with *ctx = NULL and the
 * reason in err. */
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
int gudcanny_roi_capacity(int width, int height);

#ifdef __cplusplus
}
#endif

#endif /* CANNY_GUDCANNY_H */
