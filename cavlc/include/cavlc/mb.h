/* cavlc/mb.h: the per-macroblock residual record handed from the encoder to the entropy stage.
 *
 * Plain C (it is filled by the x264 patch). One record per macroblock of a slice, in decoding order,
 * skipped macroblocks included. The layout is fixed and shared by the CPU coder and the CUDA kernel:
 * 832 bytes, every coefficient array 32-byte aligned relative to the record start, so a 4x4 block
 * (16 x int16) is one 32-byte load. Coefficients are quantized levels in zigzag (scan) order, exactly as
 * x264 stores them, or in raster order of each 4x4 block (coef_order, enum gpuec_coef_order); a block
 * that the encoder's nnz says is empty must be all zero. */
#ifndef CAVLC_MB_H
#define CAVLC_MB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum gpuec_mb_kind {
    GPUEC_MB_SKIP   = 0, /* P_SKIP: no residual; its blocks count as TotalCoeff 0 for neighbours */
    GPUEC_MB_NORMAL = 1, /* I4x4 or inter: luma 4x4 blocks per cbp bit, then chroma */
    GPUEC_MB_I16x16 = 2, /* Intra16x16: luma DC, the 16 luma AC blocks if cbp luma (0 or 15), chroma */
    GPUEC_MB_PCM    = 3  /* I_PCM: zero bits to a byte boundary, then the 384 samples of pcm[] */
};

/* Order of the 16 levels of each 4x4 block of u.coef (luma[b], chroma_ac[b], luma_dc).
 *   GPUEC_COEF_SCAN:   index i is scan position i (frame zigzag), as x264 stores them.
 *   GPUEC_COEF_RASTER: index 4 * y + x is the level at column x, row y of the 4x4 block (row-major);
 *                      the coders apply the zigzag themselves (the CUDA kernel in registers).
 * The frame (progressive) zigzag, H.264 8.5.6 Table 8-13: scan index i is at raster position
 *   0, 1, 4, 8, 5, 2, 3, 6, 9, 12, 13, 10, 7, 11, 14, 15   (i = 0..15; cavlc::kRasterOfScan).
 * Index [0] is the DC position in both orders: for the AC blocks (Intra16x16 luma AC, chroma AC) it must
 * be 0, the DC lives in luma_dc / chroma_dc. chroma_dc[c] is c0..c3 in both orders (the 2x2 chroma DC
 * scan is its raster order). Field scans are not supported. coef_order is ignored (any value) for
 * GPUEC_MB_SKIP and GPUEC_MB_PCM records; in a GPUEC_MB_NORMAL or GPUEC_MB_I16x16 record any other value
 * makes the record malformed (cavlc::mb_totals returns -1). */
enum gpuec_coef_order {
    GPUEC_COEF_SCAN   = 0,
    GPUEC_COEF_RASTER = 1
};

typedef struct gpuec_mb {
    union {
        struct {
            /* Luma 4x4 blocks in luma4x4BlkIdx order (x264's block order). For GPUEC_MB_I16x16
             * the AC levels are in [1..15] and [0] is 0 (the DC lives in luma_dc). */
            int16_t luma[16][16];
            /* Chroma AC blocks: Cb 0..3 then Cr 0..3 (raster order of the 2x2 blocks); AC levels in
             * [1..15], [0] is 0 (the DC lives in chroma_dc). */
            int16_t chroma_ac[8][16];
            int16_t luma_dc[16];     /* Intra16x16 DC levels of the 4x4 DC matrix (entry x, y = DC of luma
                                        block x, y), in the order coef_order gives: scan = its zigzag,
                                        raster = index 4 * y + x */
            int16_t chroma_dc[2][4]; /* Cb, Cr DC levels, c0..c3 (raster order = scan order) */
        } coef;
        /* GPUEC_MB_PCM: Y 16x16 raster, then Cb 8x8, then Cr 8x8 (384 bytes). */
        uint8_t pcm[384];
    } u;
    /* Bit position of this macroblock's residual in the encoder's skeleton bitstream buffer (the
     * position right after mb_qp_delta, or after coded_block_pattern / mb_type when none follows).
     * The stage subtracts the slice start given to gpuec_slice_begin(). Unused for GPUEC_MB_SKIP. */
    int64_t skel_bit;
    int32_t mb_addr; /* raster macroblock address in the frame */
    uint8_t kind;    /* enum gpuec_mb_kind */
    uint8_t cbp;     /* bits 0..3: luma 8x8 quadrants; bits 4..5: chroma (0 none, 1 DC, 2 DC+AC) */
    uint8_t coef_order; /* enum gpuec_coef_order: order of the levels in u.coef (byte 830) */
    uint8_t reserved;
} gpuec_mb;

/* Index of each block's TotalCoeff in the gpuec_mb_totals[] array returned by the stage. */
enum {
    GPUEC_TC_LUMA = 0,       /* 16 entries, luma4x4BlkIdx order (Intra16x16: AC counts) */
    GPUEC_TC_CHROMA_AC = 16, /* 8 entries: Cb 0..3, Cr 0..3 */
    GPUEC_TC_LUMA_DC = 24,
    GPUEC_TC_CHROMA_DC = 25, /* 2 entries: Cb, Cr */
    GPUEC_TC_COUNT = 27
};

#ifdef __cplusplus
}
static_assert(sizeof(gpuec_mb) == 832, "gpuec_mb layout is shared with the CUDA kernel");
static_assert(offsetof(gpuec_mb, coef_order) == 830, "the kernel reads kind, cbp and coef_order as one word");
#endif

#endif
