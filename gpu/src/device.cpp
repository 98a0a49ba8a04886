#include "gpu/device.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <system_error>
#include <thread>

namespace gpu {

std::string CudaError::str() const {
  if (!code) return "no error";
  return std::string(name) + " (" + std::to_string(code) + ") at " + file + ":" + std::to_string(line);
}

void probe_ref(uint32_t* out, int n, uint32_t seed) {
  for (int i = 0; i < n; ++i) out[i] = static_cast<uint32_t>(i) * static_cast<uint32_t>(i) + seed;
}

#ifndef GPUEC_HAVE_CUDA
bool built_with_cuda() { return false; }
int device_count(std::string* why) {
  if (why) *why = "this build has no CUDA support (nvcc was not found at configure time)";
  return 0;
}
std::string device_description() { return {}; }
CudaError probe_cuda(uint32_t*, int, uint32_t) {
  return CudaError{100, __FILE__, __LINE__, "cudaErrorNoDevice"};
}
#endif

bool device_usable(int device, std::string* why) {
  const int n = device_count(why);
  if (n < 1) return false;
  if (device < 0 || device >= n) {
    if (why) *why = "device " + std::to_string(device) + " asked for, " + std::to_string(n) + " present";
    return false;
  }
  return true;
}

namespace {

// The checking process: the answer ('1', or '0' and the reason) on fd, then _exit, which leaves the
// driver's teardown to this process (no exit handlers: the program's buffers are not flushed twice).
[[noreturn]] void answer_and_exit(int device, int fd) {
  for (int sig = 1; sig < NSIG; ++sig) signal(sig, SIG_DFL);  // not the program's handlers (its temporaries)
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  const int null = open("/dev/null", O_RDWR);
  if (null >= 0)
    for (int std_fd = 0; std_fd < 3; ++std_fd) dup2(null, std_fd);
  if (dup2(fd, 3) != 3) _exit(1);
  if (close_range(4, ~0u, 0) != 0) {
    const long max_fd = sysconf(_SC_OPEN_MAX);
    for (long f = 4; f < (max_fd > 0 && max_fd < 65536 ? max_fd : 65536); ++f) close(static_cast<int>(f));
  }
  if (const char* hold = std::getenv("GPUEC_DEVICE_CHECK_HOLD_MS")) usleep(static_cast<useconds_t>(std::atoi(hold)) * 1000);  // tests
  std::string why;
  const std::string msg = device_usable(device, &why) ? std::string("1") : "0" + why;
  for (size_t at = 0; at < msg.size();) {
    const ssize_t w = write(3, msg.data() + at, msg.size() - at);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    at += static_cast<size_t>(w);
  }
  close(3);
  _exit(0);
}

}  // namespace

DeviceCheck::DeviceCheck(int device) : device_(device) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return;
  const pid_t child = fork();
  if (child == 0) answer_and_exit(device, fds[1]);
  close(fds[1]);
  if (child > 0) {
    pid_ = child;
    fd_ = fds[0];
  } else {
    close(fds[0]);  // no checking process: usable() checks here
  }
}

DeviceCheck::~DeviceCheck() {
  if (fd_ >= 0) close(fd_);
  if (pid_ <= 0) return;
  // Reaped now when it has ended, else by a thread of its own once it ends (the driver's teardown, about
  // 0.05 s after the answer), or, when this process ends first, by whatever adopts it (the init process).
  int status = 0;
  const pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r != 0) return;
  const pid_t pid = pid_;
  try {
    std::thread([pid] {
      int st = 0;
      while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
      }
    }).detach();
  } catch (const std::system_error&) {  // no thread: left to whatever adopts it
  }
}

bool DeviceCheck::usable(std::string* why) {
  if (!answered_) {
    std::string msg;
    if (fd_ >= 0) {
      char buf[512];
      for (;;) {
        const ssize_t r = read(fd_, buf, sizeof buf);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        msg.append(buf, static_cast<size_t>(r));
      }
      close(fd_);
      fd_ = -1;
    }
    if (!msg.empty() && (msg[0] == '1' || msg[0] == '0')) {
      usable_ = msg[0] == '1';
      why_ = msg.substr(1);
    } else {  // the checking process died or never was: check here
      usable_ = device_usable(device_, &why_);
    }
    answered_ = true;
  }
  if (!usable_ && why) *why = why_;
  return usable_;
}

}  // namespace gpu
