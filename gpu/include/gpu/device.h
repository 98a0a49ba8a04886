// gpu/device.h: GPU availability and the CUDA build probe (host C++ API; no CUDA headers needed).
//
// Every call works in a CPU-only build: device_count() then returns 0 with the reason, and the _cuda
// functions return an error instead of running.
#pragma once

#include <cstdint>
#include <string>

namespace gpu {

// A failed CUDA call: code 0 means success. `file`, `line` and `name` point to static strings.
struct CudaError {
  int code = 0;
  const char* file = "";
  int line = 0;
  const char* name = "";
  explicit operator bool() const { return code != 0; }
  std::string str() const;
};

// True when this library was built with CUDA.
bool built_with_cuda();

// Number of usable CUDA devices; 0 with the reason in *why (no CUDA build, no driver, no device).
int device_count(std::string* why);

// Whether CUDA device ordinal `device` exists and is usable (device_count's check and the ordinal's range);
// false with the reason in *why ("device N asked for, M present" for an ordinal out of range).
bool device_usable(int device, std::string* why);

// Name and compute capability of device 0, e.g. "NVIDIA H200 (sm_90)"; empty when none.
std::string device_description();

// The build probe: out[i] = i * i + seed (mod 2^32) for i < n. probe_ref is the CPU twin; probe_cuda
// runs the kernel on device 0 (synchronous; allocates and frees its own device buffer).
void probe_ref(uint32_t* out, int n, uint32_t seed);
CudaError probe_cuda(uint32_t* out, int n, uint32_t seed);

}  // namespace gpu
