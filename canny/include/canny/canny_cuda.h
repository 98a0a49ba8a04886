// canny/canny_cuda.h: the CUDA twin of GUD-Canny (canny/canny.h, detect_edges_ref): the same edge map and
// the same pairs per strip, bit for bit. Host C++ API; no CUDA headers needed. Library gpuec_canny_cuda.
// Status: bit-identical to detect_edges_ref on the H200 (tests/canny/canny_cuda_test.cpp, gpu/bitexact,
// memcheck and racecheck clean); speed in docs/benchmarks.md.
//
// Kernels (canny/src/cuda/canny.cu; DESIGN.md section 5, thesis Algorithms 1-6): one fused kernel per tile of 32 x 32
// pixels (32 x 16 on small frames) for the Gaussian (Q14 taps from canny::gaussian_taps), the central differences,
// sqrtf, NMS (explicit __f*_rn intrinsics: one rounding per operation, as the CPU twin) and the atomicMax of gx^2 +
// gy^2; one for the normalisation and two 7-bit threshold codes per pixel (threshold_codes, canny.h), which turn every
// threshold comparison into an integer one (of G itself detect_edges_cuda keeps only what the histograms read, its
// half step, a byte a pixel; SM is 16 bits a pixel). Hysteresis is connected-component labelling instead of
// the paper's iteration: for a pair (low, high) the edge map is every pixel of S = {G > low} u {G >= high}
// whose 8-connected component (inside its strip) reaches high, so one labelling per distinct low of the
// candidate set serves all its highs, and SM (the linking-map counts) follows from each component's
// maximum without building any map. Labelling (strip_label): a warp takes a chunk of rows, a row at a time and
// a run of S at a time: a run takes the label of the first run above it (found in the masks of the two rows),
// and only junctions (a run under two runs or more) merge in the union-find; then each chunk's first row joins the
// row above a run at a time too (a run merges once with each run above it); every labelling kernel keeps a byte a
// code for its low and lists each warp's pixels of S for the passes after the union (the fold of the component
// maxima and the count). Strip mode: one block per (strip, low) labels a whole strip of up to
// 1184 rows in its shared memory (where its labels and codes are too many for two blocks a multiprocessor, about 600
// to 1100 rows on an H100 or H200, and the blocks outnumber the multiprocessors, the union-find is kept over the
// warps' lists of pixels of S instead of a label a pixel, so that two blocks share one: strip_count_listed_kernel;
// a block whose lists overflow leaves its pair to the per-pixel labelling after it); taller strips are labelled by a
// cluster of up to 8 blocks (the rows split evenly, at most about 600 a block so that two blocks share a
// multiprocessor: up to 4808 rows on an H100 or H200; one union-find over the cluster's distributed shared memory;
// sm_90), over the lists where they hold half a warp's pixels in the fewest blocks (two blocks of 1080 rows at 2160p,
// up to about 3640 rows: strip_count_listed_cluster_kernel, its overflowing pairs left to the per-pixel clusters).
// Either keeps each pixel's component maximum in a byte plane per low (32 planes up to 16 Mpixels); several
// blocks per strip build the histograms and the last picks the pair (select_kernel), then a thread per pixel writes
// the edge map from the plane of the pair's low; on frames of at most 2^18 pixels (512x512) with sets of up to 16
// lows and at most 8 such blocks a strip (sm_90), a strip's blocks are one cluster instead, which adds their
// histograms in distributed shared memory, picks the pair and writes the map in the same launch
// (select_map_cluster_kernel). Where the select blocks launch while the counts run (the clusters; select_kernel in
// strip mode on frames of up to 2^19 pixels, in frame mode up to 2^20), they read the codes' outputs before their wait
// for the counts (canny.cu, "launches"). Where a pair's low may have no plane (a candidate set with more lows
// than planes, or a grid value that is not a low; never the standard sets), one block per strip labels
// again (up to 1184 rows). The row limits shrink with the device's shared memory per block (about 840 rows
// for one block on an A100), and clusters need a device of compute capability 9.0 or more running code built
// for sm_90 or later (a newer GPU running the default build's compute_75 PTX has no cluster path). Frame mode
// on frames of up to 1184 rows (frame_count_joined_kernel): a block per (strip, low) labels its strip in shared memory
// as strip mode does; then the border pixels of S (the first and last columns of the strips) are the nodes of one
// union-find a low in global memory, a node's parent its local component's first border pixel; the first column of
// each strip merges with the last of the strip to its left (rows y - 1 .. y + 1) once that strip has published its
// nodes (a flag a strip and low), the components' maxima are folded at their roots and read back into each strip's
// local roots, the low's blocks waiting for each other after the merges and after the fold (a barrier on a counter; a
// cooperative launch, so that a low's blocks are all resident, of as many lows as the device holds blocks for). Then
// the planes, one histogram for the frame and the map as in strip mode. Used where
// at most 2 such launches take all the lows: on an H100 or H200, C_0.03 (8 lows) up to 2112 columns below about 720
// rows (two blocks a multiprocessor) and 1056 above, C_0.01 (24 lows) up to 704 and 352 columns (each launch waits for
// its slowest strip). Beyond that (1080p, 2160p C_0.03; C_0.01 from 1024 columns up to about 1088 rows), frame mode in
// split passes with no block waiting for another (frame_split_label_kernel .. frame_split_finish_kernel), on tiles of
// as many rows as the lists allow two blocks a multiprocessor (about 1088: one a strip at 1080p, two at 2160p): each
// block labels its (tile, low) over the lists as strip mode does and counts from the local maxima, publishing its
// border nodes (a local root's representative: its smallest border pixel) and the pixels of the components that touch
// a border; then a launch merges the tile borders in a global union-find whose roots keep their trees' maxima as
// they link, and one adds to SM and the planes where a component's frame maximum exceeds its local one.
// The default build's compute_75 PTX runs both (no cluster). Taller
// strips, those cases, and other frames in frame mode (the tile path): tiles of 32 columns and as many rows as a block
// holds (the whole strip up to about 600 rows, else equal parts of it, so that two blocks share a
// multiprocessor; a strip of 603 to 1184 rows is one tile over the lists instead, ccl_tile_listed_kernel) are
// labelled in shared memory as the strips are; then the adjacencies across tile borders
// are merged in global memory (Playne-Hawick lock-free union, each distinct pair of parents once per warp),
// the tile roots (marked in bit rows) are hung under their roots and given their component's maximum, and a
// pixel's component maximum is mx[lab[p]]. Up to 8 lows a batch (4 above 4 Mpixels), the largest lows first;
// the map's pass reads the components of the pair's low from the last batch's label planes where they are
// there, and labels S again only otherwise (the histograms: every warp of select_kernel's blocks at work, a
// block may hold a single row of the frame).
//
// detect_edges_cuda(src, width, height, pitch, options, edges, edges_pitch, pairs, workspace,
//                   workspace_bytes, stream):
//   - src, edges, pairs and workspace are DEVICE pointers. options.candidates is a HOST pointer: the call
//     checks the set (check_candidates) and passes what the kernels need of it (its distinct lows and the
//     count of highs per low) as kernel parameters, so the caller may free or reuse the array as soon as the
//     call returns; no copy, no synchronization.
//   - The contract is detect_edges_ref's: src row y at src + y * pitch (pitch >= width), edges row y at
//     edges + y * edges_pitch (edges_pitch >= width; bytes past the width are not touched), pairs has
//     strip_count(width) entries. Same outputs as detect_edges_ref.
//   - workspace: at least detect_edges_cuda_workspace_bytes(width, height) bytes, 256-byte aligned
//     (cudaMalloc), any contents (the call clears what it needs). Scratch for this call only.
//   - Asynchronous: enqueued on `stream`; no allocation; no synchronization. Its kernels after the first are
//     launched with programmatic dependent launch (each may start while the one before it ends, and waits for it
//     before touching memory, but for the select kernels' reads of the codes: canny.cu, "launches"), so work the
//     caller enqueues on `stream` after the call still starts after all of them (an ordinary launch, copy or event
//     waits for every kernel before it).
//   - Errors are values: cudaErrorInvalidValue (this library's file and line) where detect_edges_ref
//     returns a Status < 0 (null pointers, sizes, pitches, sigma, mode, candidates, fixed pair) and for
//     a short or misaligned workspace; else the first failing CUDA call. Kernel faults appear at the next
//     synchronization.
#pragma once

#include <cstddef>
#include <cstdint>

#include "canny/canny.h"
#include "gpu/device.h"

struct CUstream_st;
typedef CUstream_st* cudaStream_t;  // the same declaration as in cuda_runtime_api.h

namespace canny {

// Device workspace bytes detect_edges_cuda and gradient_map_cuda need (0 for invalid sizes).
size_t detect_edges_cuda_workspace_bytes(int width, int height);

gpu::CudaError detect_edges_cuda(const uint8_t* src, int width, int height, int pitch, const Options& options,
                                 uint8_t* edges, int edges_pitch, ThresholdPair* pairs, void* workspace,
                                 size_t workspace_bytes, cudaStream_t stream);

// Steps 1-3 alone (twin of gradient_map_ref): G into the device array g (row y at g + y * g_pitch floats,
// g_pitch >= width; floats past the width are not touched). Same workspace rules as detect_edges_cuda.
gpu::CudaError gradient_map_cuda(const uint8_t* src, int width, int height, int pitch, float sigma, float* g,
                                 int g_pitch, void* workspace, size_t workspace_bytes, cudaStream_t stream);

// threshold_codes (canny.h): the codes of a value of G, the same on the device and on the host.

}  // namespace canny
