// gpu/backend.h: the one backend vocabulary of the project (host C++; no CUDA headers needed).
//
// Every component that can run on the CPU or on a CUDA device takes a Backend: the vle compressor, the
// cavlc frame coder (and so the x264 stage and the re-entropy), GUD-Canny. The C interfaces map to it at
// their boundary with static_asserts that their numbers agree: GPUEC_BACKEND_* (gpuec/stage.h),
// GUDCANNY_BACKEND_* (canny/gudcanny.h) and x264's X264_GPU_ENTROPY_* (the x264 patch).
//
//   kOff   the component is not used (x264: the stage is off, x264 writes the stream itself). Only where
//          a caller can turn a component off; elsewhere it is refused like any value out of range.
//   kCpu   the CPU twin.
//   kCuda  the CUDA twin on a device; without a usable one the component says why (and, where its
//          documentation says so, uses the CPU with a note).
//   kAuto  kCuda when a CUDA device is usable when the component is created, else kCpu, silently.
#pragma once

#include <string>

namespace gpu {

enum class Backend : int { kOff = 0, kCpu = 1, kCuda = 2, kAuto = 3 };

// "off", "cpu", "cuda", "auto"; "unknown" for a value out of range.
const char* backend_name(Backend b);
// The value whose backend_name is `name`, "off" excepted (no caller can turn its component off by name).
// False for other names.
bool parse_backend(const std::string& name, Backend* b);
// The value of an int from a C interface: false when out of [kOff, kAuto].
bool backend_from_int(int v, Backend* b);

// The test hook for failures of a CUDA backend: the N of the environment variable `variable` set to N (the
// backend fails on purpose at its N-th frame, from 0; GPUEC_CUDA_FAIL_AT_FRAME for the x264 stage,
// GPUEC_GUDCANNY_FAIL_AT_FRAME and _AT_SUBMIT for GUD-Canny, GPUEC_GVLE_FAIL_AT_CALL for the GVLE CUDA
// encoder's N-th call), or -1 when unset or not a number >= 0. The same parse reads
// GPUEC_REENTROPY_CUDA_FROM_BATCH (the threaded re-entropy's CUDA mode: batches 0..N-1 on the CPU, the
// GPU coders taken, waiting for them, at batch N: deterministic for the tests) and GPUEC_CANNY_LIST_CAP (at most N
// entries in each warp's list of pixels in GUD-Canny's CUDA counting kernels: their other path, for the tests; the
// kernel whose lists are its labels leaves the pairs whose lists overflow to the per-pixel one, and 0 keeps it out).
long long fail_at_frame(const char* variable);

}  // namespace gpu
