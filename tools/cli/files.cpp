// tools/cli/files.h: inputs and outputs of the user programs.
#include "files.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <csignal>
#include <cstdlib>
#include <cstring>

namespace files {

namespace {

constexpr size_t kBufferBytes = size_t{1} << 20;

std::string reason(const std::string& name) { return name + ": " + std::strerror(errno); }

// The temporary files the signal handler removes: fixed slots, written before the handler may see them
// (async-signal-safe: the handler only reads the paths and calls unlink).
constexpr int kSlots = 8;
char g_tmp[kSlots][PATH_MAX];
volatile sig_atomic_t g_used[kSlots];

int take_slot(const std::string& path) {
  if (path.size() >= PATH_MAX) return -1;
  for (int i = 0; i < kSlots; ++i)
    if (!g_used[i]) {
      std::memcpy(g_tmp[i], path.c_str(), path.size() + 1);
      g_used[i] = 1;
      return i;
    }
  return -1;
}

void on_signal(int sig) {
  for (int i = 0; i < kSlots; ++i)
    if (g_used[i]) unlink(g_tmp[i]);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

// The file a path names after its symlinks, also when the last one dangles (the file a write would create).
std::string resolve_links(const std::string& path) {
  std::string p = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st;
    if (lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p;
    char buf[PATH_MAX];
    const ssize_t n = readlink(p.c_str(), buf, sizeof buf - 1);
    if (n < 0) return p;
    buf[n] = '\0';
    const std::string link(buf);
    const size_t slash = p.rfind('/');
    p = link[0] == '/' || slash == std::string::npos ? link : p.substr(0, slash + 1) + link;
  }
  return p;
}

bool write_fd(int fd, const uint8_t* p, size_t n, const std::string& name, std::string* err) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, std::min(n, kBufferBytes));
    if (w < 0) {
      if (errno == EINTR) continue;
      *err = reason(name);
      return false;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

}  // namespace

std::string display_name(const std::string& path, bool output) {
  return is_stdio(path) ? (output ? "stdout" : "stdin") : path;
}

bool read_all(const std::string& path, std::vector<uint8_t>* out, std::string* err) {
  out->clear();
  const std::string name = display_name(path, false);
  const int fd = is_stdio(path) ? 0 : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *err = reason(name);
    return false;
  }
  struct stat st;
  bool ok = fstat(fd, &st) == 0;
  if (!ok) *err = reason(name);
  if (ok && S_ISDIR(st.st_mode)) {
    *err = name + ": is a directory";
    ok = false;
  }
  if (ok && S_ISREG(st.st_mode)) out->reserve(static_cast<size_t>(st.st_size));
  while (ok) {
    const size_t at = out->size();
    out->resize(at + kBufferBytes);
    const ssize_t r = ::read(fd, out->data() + at, kBufferBytes);
    out->resize(at + static_cast<size_t>(std::max<ssize_t>(r, 0)));
    if (r == 0) break;
    if (r < 0 && errno != EINTR) {
      *err = reason(name);
      ok = false;
    }
  }
  if (fd != 0) close(fd);
  if (!ok) out->clear();
  return ok;
}

InputBytes::~InputBytes() {
  if (map_) munmap(map_, map_bytes_);
}

bool InputBytes::open(const std::string& path, std::string* err) {
  if (map_) munmap(map_, map_bytes_);
  map_ = nullptr;
  map_bytes_ = 0;
  read_.clear();
  if (!is_stdio(path)) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      *err = reason(display_name(path, false));
      return false;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= off_t{1} << 20 &&
        static_cast<uint64_t>(st.st_size) <= SIZE_MAX) {
      void* m = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
      if (m != MAP_FAILED) {
        map_ = m;
        map_bytes_ = static_cast<size_t>(st.st_size);
      }
    }
    close(fd);
    if (map_) return true;
  }
  return read_all(path, &read_, err);  // small files, stdin, pipes, and a file that could not be mapped
}

std::string stdin_as_path(std::string* err) {
  std::vector<uint8_t> data;
  if (!read_all("-", &data, err)) return "";
  const int fd = memfd_create("stdin", MFD_CLOEXEC);
  if (fd < 0) {
    *err = reason("stdin (memfd_create)");
    return "";
  }
  if (!write_fd(fd, data.data(), data.size(), "stdin (a copy in memory)", err)) {
    close(fd);
    return "";
  }
  return "/proc/self/fd/" + std::to_string(fd);
}

Output::~Output() { abandon(); }

bool Output::open(const std::string& path, const Options& options, std::string* err) {
  abandon();
  name_ = display_name(path, true);
  overwrite_ = options.overwrite;
  buf_.clear();
  buf_.reserve(kBufferBytes);
  if (path.empty()) {
    *err = "empty output file name";
    return false;
  }
  struct stat out_st;
  const bool exists = !is_stdio(path) && stat(path.c_str(), &out_st) == 0;
  if (exists)
    for (const std::string& in : options.inputs) {
      struct stat in_st;
      if (!is_stdio(in) && stat(in.c_str(), &in_st) == 0 && in_st.st_dev == out_st.st_dev &&
          in_st.st_ino == out_st.st_ino) {
        *err = name_ + ": the same file as the input " + in + " (write to another file)";
        return false;
      }
    }
  if (is_stdio(path)) {
    fd_ = 1;
    direct_ = true;
    return true;
  }
  target_ = resolve_links(path);
  const bool special = target_.compare(0, 5, "/dev/") == 0 || target_.compare(0, 6, "/proc/") == 0;
  if ((exists && !S_ISREG(out_st.st_mode)) || special) {
    if (exists && S_ISDIR(out_st.st_mode)) {
      *err = name_ + ": is a directory";
      return false;
    }
    // Written in place, never created: a device, FIFO or /dev, /proc entry that is not there is an error.
    fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0) {
      *err = reason(name_);
      return false;
    }
    direct_ = true;
    return true;
  }
  if (exists && !overwrite_) {
    *err = name_ + ": exists (use -f to overwrite)";
    return false;
  }
  const size_t slash = target_.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : target_.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? target_ : target_.substr(slash + 1);
  std::string tmp = dir + "." + base + ".tmp-XXXXXX";
  std::vector<char> t(tmp.begin(), tmp.end());
  t.push_back('\0');
  // Blocked signals while the slot is taken: a signal between mkostemp and the slot would leave the file.
  sigset_t all, old;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, &old);
  fd_ = mkostemp(t.data(), O_CLOEXEC);
  if (fd_ >= 0) {
    tmp_ = t.data();
    slot_ = take_slot(tmp_);
  }
  sigprocmask(SIG_SETMASK, &old, nullptr);
  if (fd_ < 0) {
    *err = reason(name_) + " (creating a temporary file in " + (dir.empty() ? std::string(".") : dir) + ")";
    return false;
  }
  // The new file gets the old file's permissions, else what a plain create would give.
  mode_t mode = 0666;
  if (exists) {
    mode = out_st.st_mode & 07777;
  } else {
    const mode_t mask = umask(0);
    umask(mask);
    mode &= ~mask;
  }
  if (fchmod(fd_, mode) != 0) {
    *err = reason(name_);
    abandon();
    return false;
  }
  direct_ = false;
  return true;
}

bool Output::flush(std::string* err) {
  const bool ok = write_fd(fd_, buf_.data(), buf_.size(), name_, err);
  buf_.clear();
  return ok;
}

bool Output::write(const void* data, size_t n, std::string* err) {
  if (fd_ < 0) {
    *err = name_ + ": not open";
    return false;
  }
  const uint8_t* p = static_cast<const uint8_t*>(data);
  if (buf_.size() + n > kBufferBytes && !flush(err)) return false;
  if (n >= kBufferBytes) return write_fd(fd_, p, n, name_, err);
  buf_.insert(buf_.end(), p, p + n);
  return true;
}

bool Output::print(std::string* err, const char* format, ...) {
  va_list ap, ap2;
  va_start(ap, format);
  va_copy(ap2, ap);
  const int n = std::vsnprintf(nullptr, 0, format, ap);
  va_end(ap);
  std::string text(n > 0 ? size_t(n) : 0, '\0');
  if (n > 0) std::vsnprintf(&text[0], text.size() + 1, format, ap2);
  va_end(ap2);
  return write(text.data(), text.size(), err);
}

void Output::close_fd() {
  if (fd_ > 1) close(fd_);
  fd_ = -1;
}

bool Output::commit(std::string* err) {
  if (fd_ < 0) {
    *err = name_ + ": not open";
    return false;
  }
  bool ok = flush(err);
  if (direct_) {
    close_fd();
    return ok;
  }
  if (ok && fsync(fd_) != 0) {
    *err = reason(name_);
    ok = false;
  }
  if (close(fd_) != 0 && ok) {
    *err = reason(name_);
    ok = false;
  }
  fd_ = -1;
  if (ok && overwrite_ && rename(tmp_.c_str(), target_.c_str()) != 0) {
    *err = reason(name_);
    ok = false;
  }
  if (ok && !overwrite_ && link(tmp_.c_str(), target_.c_str()) != 0) {  // link: never replaces
    *err = errno == EEXIST ? name_ + ": exists (use -f to overwrite)" : reason(name_);
    ok = false;
  }
  if (ok && overwrite_) tmp_.clear();  // renamed: nothing left to remove
  abandon();
  return ok;
}

void Output::abandon() {
  close_fd();
  if (!tmp_.empty()) unlink(tmp_.c_str());
  if (slot_ >= 0) g_used[slot_] = 0;
  slot_ = -1;
  tmp_.clear();
  buf_.clear();
}

void remove_temporaries_on_signal() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGBUS}) std::signal(sig, on_signal);
}

}  // namespace files
