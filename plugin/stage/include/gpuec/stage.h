/* gpuec/stage.h: the entropy stage's C interface, called by the patched x264.
 *
 * Data path (one stage per encoder thread context; calls on one stage are not reentrant, different
 * stages are independent):
 *   gpuec_slice_begin(stage, first_mb, start_bit)       when the encoder starts a slice NAL
 *   per macroblock, in order:
 *     skipped:  gpuec_mb_skip(stage, mb_addr)
 *     coded:    m = gpuec_mb_next(stage); fill *m;  gpuec_mb_commit(stage, totals)
 *   gpuec_slice_finish(stage, buf, end_bit, &rbsp, &rbsp_bits)   after the last skip run
 * The encoder writes every syntax element except residual blocks (the "skeleton") into its own buffer;
 * gpuec_slice_finish codes the residual of all recorded macroblocks and returns the slice bits
 * [start_bit, end_bit) of the skeleton with each residual inserted at its record's skel_bit, I_PCM
 * alignment resolved from the final positions. Bits are MSB first (vle/bitwriter.h).
 *
 * Errors are negative return values (GPUEC_E*); no exception crosses this interface. Nothing here
 * allocates per macroblock; the output buffer grows only when a slice is larger than any before. */
#ifndef GPUEC_STAGE_H
#define GPUEC_STAGE_H

#include <stddef.h>
#include <stdint.h>

#include "cavlc/mb.h"

#ifdef __cplusplus
extern "C" {
#endif

enum gpuec_backend {
    GPUEC_BACKEND_OFF  = 0,
    GPUEC_BACKEND_CPU  = 1, /* the CPU reference coder */
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
 * asked for; the stage may use another (CUDA asked but unavailable: CPU), see gpuec_stage_backend()
 * and the note written to `note` (may be NULL; always NUL-terminated when note_size > 0; empty when the
 * request was met). Returns NULL on failure, with the reason in `note`. */
gpuec_stage *gpuec_stage_create(int mb_width, int mb_height, int backend, char *note, size_t note_size);
void gpuec_stage_destroy(gpuec_stage *stage);

int gpuec_stage_backend(const gpuec_stage *stage);  /* GPUEC_BACKEND_CPU or GPUEC_BACKEND_CUDA */
const char *gpuec_backend_name(int backend);          /* "off", "cpu", "cuda", "auto" */

/* Totals over the stage's life (for the encoder's closing log line): slices and macroblocks coded,
 * and macroblocks that gpuec_mb_commit sent back for a level-overflow re-encode. NULL: not wanted. */
void gpuec_stage_counts(const gpuec_stage *stage, int64_t *slices, int64_t *macroblocks,
                        int64_t *overflows);

/* Starts a slice whose first macroblock is first_mb and whose NAL payload starts at the (byte-aligned)
 * bit position start_bit of the encoder's bitstream buffer. Drops any records of an unfinished slice. */
void gpuec_slice_begin(gpuec_stage *stage, int first_mb, int64_t start_bit);

/* Records a skipped macroblock. Returns 0 or GPUEC_EINVAL (mb_addr out of order). */
int gpuec_mb_skip(gpuec_stage *stage, int mb_addr);

/* Slot for the next coded macroblock's record; the caller fills all of it (kind, cbp, mb_addr,
 * skel_bit, coefficients or pcm) and then calls gpuec_mb_commit. Never NULL. */
gpuec_mb *gpuec_mb_next(gpuec_stage *stage);

/* Checks the record filled in gpuec_mb_next's slot and keeps it. Writes the TotalCoeff of each block
 * to totals[GPUEC_TC_COUNT] (indices in cavlc/mb.h; blocks not coded under the record's cbp are 0,
 * I_PCM blocks 16). Returns 0; 1 when a level cannot be coded in baseline CAVLC (the encoder must
 * re-encode the macroblock at a higher QP; the record is dropped and the slot is reused); or
 * GPUEC_EINVAL for a malformed record (bad kind or cbp, address out of order). */
int gpuec_mb_commit(gpuec_stage *stage, uint8_t totals[GPUEC_TC_COUNT]);

/* Codes and splices the slice. `buf` is the encoder's bitstream buffer and end_bit the position after
 * the skeleton's last bit (after the final mb_skip_run, before rbsp_slice_trailing_bits); bits
 * [start_bit, end_bit) must be in memory. On success *rbsp points to the slice's bits (valid until the
 * next call on this stage), *rbsp_bits is their count, and 0 is returned. */
int gpuec_slice_finish(gpuec_stage *stage, const uint8_t *buf, int64_t end_bit, const uint8_t **rbsp,
                       int64_t *rbsp_bits);

#ifdef __cplusplus
}
#endif

#endif
