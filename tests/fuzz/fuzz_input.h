// tests/fuzz/fuzz_input.h: what the fuzz targets share. A fuzz input as a file, for the readers that take a
// path or an open FILE* (memfd: no file system), and the check that a reader's refusal carries a message.
#pragma once
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace fuzz {

// Aborts (the fuzzer's failure) with `what` on stderr.
[[noreturn]] inline void broken(const std::string& what) {
  std::fprintf(stderr, "fuzz invariant broken: %s\n", what.c_str());
  std::abort();
}

// The input in an anonymous memory file; path() is "/proc/self/fd/N", open() a fresh FILE* at offset 0.
class MemFile {
 public:
  MemFile(const uint8_t* data, size_t size) {
    fd_ = memfd_create("gpuec-fuzz-input", MFD_CLOEXEC);
    if (fd_ < 0) broken("memfd_create failed");
    for (size_t done = 0; done < size;) {
      const ssize_t n = write(fd_, data + done, size - done);
      if (n <= 0) broken("write to the memfd failed");
      done += size_t(n);
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemFile() { close(fd_); }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;
  const std::string& path() const { return path_; }
  std::FILE* open() const {
    std::FILE* f = std::fopen(path_.c_str(), "rb");
    if (!f) broken("cannot open " + path_);
    return f;
  }

 private:
  int fd_ = -1;
  std::string path_;
};

// A refusal must say what is wrong, starting with `prefix` (the input's name; "" for none).
inline void check_refusal(const std::string& message, const std::string& prefix) {
  if (message.size() <= prefix.size()) broken("a refusal without a message");
  if (message.compare(0, prefix.size(), prefix) != 0)
    broken("a refusal that does not start with \"" + prefix + "\": " + message);
}

}  // namespace fuzz
