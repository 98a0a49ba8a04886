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

// device_usable, answered by a process of its own, for a program that may end without needing the GPU
// (avc-reentropy --backend cuda on a short stream): on a GPU host the driver's initialisation takes about
// 0.1 s and, beside the program's threads in one address space, slows their page faults, and its teardown
// at the program's exit takes about 0.05 s more (docs/benchmarks.md, issue 17). The checking process, a
// child of the program, pays both; the program waits only for its answer, never for the child's exit: the
// destructor reaps the child when it has ended, else leaves a thread to reap it. A program that ends
// first leaves the child's end to the process that adopts it (the init process; a container's PID 1 that
// reaps no children keeps it as a zombie: run such containers with an init, `docker run --init`).
// Construct it while the process has one thread and has not used CUDA: it forks. The checking process
// keeps none of the program's files open (its standard streams are /dev/null) and takes the default
// action on every signal. When no process can be made, usable() checks in this process.
// GPUEC_DEVICE_CHECK_HOLD_MS=N (tests): the checking process waits N ms before it checks.
class DeviceCheck {
 public:
  explicit DeviceCheck(int device);
  ~DeviceCheck();
  DeviceCheck(const DeviceCheck&) = delete;
  DeviceCheck& operator=(const DeviceCheck&) = delete;
  // device_usable(device, why)'s answer; waits for it at the first call, the same answer at every call.
  bool usable(std::string* why);

 private:
  int device_;
  int fd_ = -1;  // the answer's pipe, -1 once read (or when there is no checking process)
  int pid_ = -1;  // the checking process
  bool answered_ = false, usable_ = false;
  std::string why_;
};

// Name and compute capability of device 0, e.g. "NVIDIA H200 (sm_90)"; empty when none.
std::string device_description();

// The build probe: out[i] = i * i + seed (mod 2^32) for i < n. probe_ref is the CPU twin; probe_cuda
// runs the kernel on device 0 (synchronous; allocates and frees its own device buffer).
void probe_ref(uint32_t* out, int n, uint32_t seed);
CudaError probe_cuda(uint32_t* out, int n, uint32_t seed);

}  // namespace gpu
