/* gpuec/stage.h: the entropy stage's C interface, called by the patched x264.
 *
 * Data path (one stage per encoder thread context; calls on one stage are not reentrant, different
 * stages are independent). A FRAME PART is the run of slices one thread context writes for a picture
 * (x264: the whole picture, or one thread's rows with --sliced-threads):
 *   per slice, in order:
 *     gpuec_slice_begin(stage, first_mb, start_bit)       when the encoder starts the slice NAL
 *     per macroblock, in order:
 *       skipped:  gpuec_mb_skip(stage, mb_addr)
 *       coded:    m = gpuec_mb_next(stage); fill *m;  gpuec_mb_commit_bits(stage, totals, buf)
 *                 (or gpuec_mb_commit(stage, totals) when the skeleton is not in memory yet)
 *     gpuec_slice_defer(stage, buf, end_bit, tag)         after the last skip run
 *   gpuec_frame_submit(stage)                             after the part's last slice
 *   gpuec_frame_complete(stage)                           before the NAL units are escaped; then
 *   gpuec_frame_slice(stage, k, ...)                      for each deferred slice k
 * The encoder writes every syntax element except residual blocks (the "skeleton") into its own buffer.
 * The stage codes the residual of all recorded macroblocks and returns each slice's NAL payload: the
 * skeleton bits [start_bit, end_bit) with each residual inserted at its record's skel_bit (I_PCM
 * alignment resolved from the final positions), then rbsp_slice_trailing_bits. Bits are MSB first
 * (vle/bitwriter.h). Both backends are cavlc's frame coder (cavlc/frame_coder.h). The cpu backend, when
 * the commits come with the encoder's buffer (gpuec_mb_commit_bits), writes each slice's payload once, as
 * it goes: at each commit the skeleton bits since the previous insertion point and the macroblock's
 * residual, at gpuec_slice_defer the tail and the stop bit (FrameCoder::commit_streamed); gpuec_frame_submit
 * then has nothing left to do. Otherwise (the cuda backend, commits without a buffer, GPUEC_CAPTURE) the
 * records go into the coder's arrays as they are committed, gpuec_slice_defer copies the slice's
 * skeleton, and gpuec_frame_submit codes every slice of the part in one submission: the cpu backend there
 * and then on the encoder's thread; the cuda backend copies the part to the GPU and returns at once, so
 * that the encoder thread goes on while the GPU works. gpuec_frame_complete waits for it. gpuec_slice_finish is the one-slice
 * shortcut (defer, submit, complete). Slices of a part come in increasing macroblock order and hold at
 * least one macroblock each; a part may start and end anywhere in a row and have gaps between slices.
 *
 * CUDA failures (no device, out of memory, a failed launch or copy) never reach the stream: the stage
 * codes the frame part on the CPU from the same records, reports it once through gpuec_stage_note(),
 * and every stage of the process uses the cpu backend from then on. Environment:
 *   GPUEC_CUDA_FAIL_AT_FRAME=N  the cuda backend fails on purpose at the N-th frame part submitted in
 *                               the process (counting from 0), to test the fallback.
 *   GPUEC_CUDA_WAIT_AT_OPEN=1   gpuec_stage_create creates the CUDA context and buffers itself (see below)
 *                               instead of in the background, so that every frame part runs on the GPU
 *                               (the GPU tests set it).
 *
 * Opening. With the cuda (or auto) backend, gpuec_stage_create checks that the device exists (the driver's
 * initialisation, about 0.1 s) and starts creating the CUDA context and the stage's pinned and device
 * buffers on a thread of its own: about 0.13 s in one process, over 2 s when 16 processes open at once (the
 * driver creates contexts one at a time). Until that is done the stage codes on the CPU (the same bytes);
 * the first frame part after it runs on the GPU. A failure of that creation is a CUDA failure after open
 * (below). gpuec_stage_destroy waits for the creation to end.
 *
 * Errors are negative return values (GPUEC_E*); no exception crosses this interface. Nothing here
 * allocates per macroblock; buffers grow only when a frame part is larger than any before. */
#ifndef GPUEC_STAGE_H
#define GPUEC_STAGE_H

#include <stddef.h>
#include <stdint.h>

#include "cavlc/mb.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The numbers of the project's one backend vocabulary, gpu::Backend (gpu/backend.h); x264's
 * X264_GPU_ENTROPY_* are the same (static_asserts in the stage and in the x264 patch). */
enum gpuec_backend {
    GPUEC_BACKEND_OFF  = 0,
    GPUEC_BACKEND_CPU  = 1, /* the frame coder's CPU path */
    GPUEC_BACKEND_CUDA = 2, /* the CUDA kernel (when built and a GPU is present) */
    GPUEC_BACKEND_AUTO = 3  /* CUDA when usable, else CPU */
};

enum gpuec_error {
    GPUEC_OK = 0,
    GPUEC_EINVAL = -1,   /* bad argument or records out of order / outside the slice */
    GPUEC_ENOMEM = -2,
    GPUEC_EBACKEND = -3  /* the backend failed */
};

typedef struct gpuec_stage gpuec_stage;

/* Creates a stage for frames of mb_width x mb_height macroblocks (4:2:0, 8-bit). `backend` is the one
 * asked for; the stage may use another, see gpuec_stage_backend() and the note written to `note` (may be
 * NULL; always NUL-terminated when note_size > 0):
 *   CPU:  the CPU; the note is empty.
 *   CUDA: the CUDA backend, note empty; when no device is usable, the CPU with the note
 *         "cuda backend unavailable (<reason>); using the cpu backend".
 *   AUTO: the CUDA backend when a device is usable (note empty), else the CPU with the note
 *         <reason> (gpu::device_usable's: no driver, no device, the ordinal out of range, no CUDA in this
 *         build; or an earlier CUDA failure in the process). x264 then closes the stage and keeps its own
 *         writer, which is at least as fast as the CPU stage.
 * `device` is the CUDA device index (0: the first). Returns NULL on failure, with the reason in `note`. */
gpuec_stage *gpuec_stage_create(int mb_width, int mb_height, int backend, int device, char *note,
                                size_t note_size);
void gpuec_stage_destroy(gpuec_stage *stage);

/* GPUEC_BACKEND_CUDA while the stage codes on the GPU or its CUDA context and buffers are being created
 * (frame parts coded on the CPU meanwhile), else GPUEC_BACKEND_CPU. */
int gpuec_stage_backend(const gpuec_stage *stage);

/* A note the stage has not reported yet (the CUDA backend failed and the CPU took over), copied to
 * `note`; returns 1 when there was one (it is then cleared), 0 when not. */
int gpuec_stage_note(gpuec_stage *stage, char *note, size_t note_size);
const char *gpuec_backend_name(int backend);          /* "off", "cpu", "cuda", "auto" */

/* Totals over the stage's life (for the encoder's closing log line): slices and macroblocks coded,
 * and macroblocks that gpuec_mb_commit sent back for a level-overflow re-encode. NULL: not wanted. */
void gpuec_stage_counts(const gpuec_stage *stage, int64_t *slices, int64_t *macroblocks,
                        int64_t *overflows);

/* Memory the stage holds now (for the encoder's closing log line and for sizing a host): device bytes
 * (cudaMalloc) and pinned host bytes (cudaHostAlloc) of its frame coder, and of the cuda coder that failed
 * if the stage fell back to the CPU (kept until the stage is destroyed). The cpu backend holds none (0, 0):
 * its arrays are plain host memory. Not counted: the process's CUDA context (one per device, shared by all
 * stages; hundreds of MiB of device memory, see README "Memory per encoder"), streams, events. A cuda
 * stage grows with the frame parts it has coded (cavlc/frame_coder.h, Memory): at create it holds no slot
 * area yet; after the largest part and the largest output it no longer grows. Call it at close for what an
 * encode needed. Reads sizes only: any time, on any thread that owns the stage. NULL: not wanted. */
void gpuec_stage_memory(const gpuec_stage *stage, int64_t *device_bytes, int64_t *pinned_bytes);

/* Starts a slice whose first macroblock is first_mb and whose NAL payload starts at the (byte-aligned)
 * bit position start_bit of the encoder's bitstream buffer. Drops any records of an unfinished slice.
 * The first slice after gpuec_frame_complete (or after create) starts a new frame part. */
void gpuec_slice_begin(gpuec_stage *stage, int first_mb, int64_t start_bit);

/* Records a skipped macroblock. Returns 0 or GPUEC_EINVAL (mb_addr out of order). */
int gpuec_mb_skip(gpuec_stage *stage, int mb_addr);

/* Slot for the next coded macroblock's record; the caller fills it (kind, cbp, mb_addr, skel_bit,
 * coefficients or pcm) and then calls gpuec_mb_commit. Never NULL. The slot is the caller's only until
 * that commit: the cpu backend hands out the same slot for every macroblock (it codes the residual at
 * commit and keeps what it needs), so that the record the encoder fills stays in its cache. coef_order comes preset to
 * GPUEC_COEF_SCAN (x264's order) and reserved to 0; set coef_order to GPUEC_COEF_RASTER for levels in
 * raster order (cavlc/mb.h). */
gpuec_mb *gpuec_mb_next(gpuec_stage *stage);

/* Checks the record filled in gpuec_mb_next's slot and keeps it. Writes the TotalCoeff of each block
 * to totals[GPUEC_TC_COUNT] (indices in cavlc/mb.h; blocks not coded under the record's cbp are 0,
 * I_PCM blocks 16). Returns 0; 1 when a level cannot be coded in baseline CAVLC (the encoder must
 * re-encode the macroblock at a higher QP; the record is dropped and the slot is reused); or
 * GPUEC_EINVAL for a malformed record (bad kind or cbp, address out of order). */
int gpuec_mb_commit(gpuec_stage *stage, uint8_t totals[GPUEC_TC_COUNT]);

/* gpuec_mb_commit with the encoder's bitstream buffer as it is now (it may have moved since the last
 * call: x264 reallocates it between macroblocks): bits [start_bit, skel_bit) of the slice must be in
 * memory at buf, which must be readable 8 bytes past the byte of bit skel_bit - 1. With the cpu backend
 * the stage then copies the skeleton bits since the previous insertion point and codes the residual into
 * the slice's payload now, so that nothing is copied or spliced later. A frame part whose first commit
 * comes with a buffer needs one with every commit (GPUEC_EINVAL otherwise); buf NULL is gpuec_mb_commit. */
int gpuec_mb_commit_bits(gpuec_stage *stage, uint8_t totals[GPUEC_TC_COUNT], const uint8_t *buf);

/* Ends the slice: `buf` is the encoder's bitstream buffer and end_bit the position after the skeleton's
 * last bit (after the final mb_skip_run, before rbsp_slice_trailing_bits); bits [start_bit, end_bit)
 * must be in memory now (they are copied or coded before the call returns). `tag` is the caller's
 * (x264: the NAL index) and comes back with the slice. Returns the slice's index in the frame part
 * (0, 1, ...) or a negative error (GPUEC_EINVAL: positions inconsistent with the records). */
int gpuec_slice_defer(gpuec_stage *stage, const uint8_t *buf, int64_t end_bit, int tag);

/* Starts coding the frame part (the slices deferred since the last completion). Returns 0 or a
 * negative error; a CUDA failure is not an error (see above). */
int gpuec_frame_submit(gpuec_stage *stage);

/* Waits for the submitted frame part. Returns the number of its slices (0: nothing was deferred) or a
 * negative error. */
int gpuec_frame_complete(gpuec_stage *stage);

/* Slice k (0 <= k < gpuec_frame_complete's count) of the completed frame part: its tag, its NAL
 * payload (RBSP with rbsp_slice_trailing_bits, *payload_bytes bytes; valid until the next
 * gpuec_slice_begin on this stage, and readable 64 bytes past its end), and the bits the stage added to
 * the skeleton (residual and I_PCM samples with their alignment). Returns 0 or GPUEC_EINVAL. */
int gpuec_frame_slice(const gpuec_stage *stage, int k, int *tag, const uint8_t **payload,
                      int64_t *payload_bytes, int64_t *added_bits);

/* One slice at once: gpuec_slice_defer, gpuec_frame_submit, gpuec_frame_complete. On success *rbsp
 * points to the slice's bits WITHOUT the trailing bits (valid until the next gpuec_slice_begin),
 * *rbsp_bits is their count, and 0 is returned. */
int gpuec_slice_finish(gpuec_stage *stage, const uint8_t *buf, int64_t end_bit, const uint8_t **rbsp,
                       int64_t *rbsp_bits);

#ifdef __cplusplus
}
#endif

#endif
