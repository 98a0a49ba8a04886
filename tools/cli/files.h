// tools/cli/files.h: how every user program reads its inputs and writes its outputs (library gpuec_cli_files).
// One rule set, so that no tool ever loses a file (README "Files"):
//
//   - "-" is standard input for an input and standard output for an output, in every tool.
//   - A read error (a directory, EIO, no permission) is reported as one, with the system's reason.
//   - An output that is a regular file (or does not exist yet) is written to a temporary file beside it
//     (".NAME.tmp-XXXXXX"), fsynced and renamed over it at commit(); an error, an abandon() or a signal (after
//     remove_temporaries_on_signal()) leaves the old file, or none, and no temporary file.
//   - A symlink is followed: its target is replaced and the link stays.
//   - An output that exists and is not a regular file (a character device, a FIFO, a socket, anything under
//     /dev or /proc such as /dev/stdout) is written directly, and never removed or replaced.
//   - An output that is the same file (device and inode) as one of the inputs is refused.
//   - Without `overwrite`, an existing regular file is refused ("exists (use -f to overwrite)"), also one made
//     meanwhile (the temporary file is linked, not renamed, onto it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace files {

inline bool is_stdio(const std::string& path) { return path == "-"; }

// "stdin" / "stdout" for "-", else the path: how messages name a file.
std::string display_name(const std::string& path, bool output);

// The whole of `path` ("-": standard input) in *out. false, with *err "NAME: REASON", when it cannot be read.
bool read_all(const std::string& path, std::vector<uint8_t>* out, std::string* err);

// The whole of an input in memory, for the tools that read large streams (avc-reentropy): a regular file
// of 1 MiB or more is mapped read-only with its pages populated at once (no copy, nothing zero-filled);
// anything else (standard input, a pipe, a small file) is read as read_all does. A mapped file that
// shrinks while it is read ends the process by SIGBUS, which remove_temporaries_on_signal() handles: the
// outputs' temporary files are removed, the targets left as they were.
class InputBytes {
 public:
  InputBytes() = default;
  InputBytes(const InputBytes&) = delete;
  InputBytes& operator=(const InputBytes&) = delete;
  ~InputBytes();
  // false, with *err "NAME: REASON", when `path` cannot be read.
  bool open(const std::string& path, std::string* err);
  const uint8_t* data() const { return map_ ? static_cast<const uint8_t*>(map_) : read_.data(); }
  size_t size() const { return map_ ? map_bytes_ : read_.size(); }

 private:
  void* map_ = nullptr;
  size_t map_bytes_ = 0;
  std::vector<uint8_t> read_;
};

// For readers that need a path (libpng, the y4m reader): standard input read to its end into an anonymous
// in-memory file, and that file's path ("/proc/self/fd/N", valid until the process ends; nothing is left on
// disk, also after a signal). "" with *err when stdin cannot be read.
std::string stdin_as_path(std::string* err);

class Output {
 public:
  struct Options {
    bool overwrite = true;            // replace an existing regular file
    std::vector<std::string> inputs;  // paths the output must not be ("-" and missing ones are ignored)
  };

  Output() = default;
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;
  ~Output();  // abandon() unless committed

  // Opens `path` for writing by the rules above. false, with *err "NAME: REASON", when it cannot.
  bool open(const std::string& path, const Options& options, std::string* err);
  // Appends n bytes (buffered). false, with *err, on a write error (a full disk...); the output is then
  // unusable: abandon it.
  bool write(const void* data, size_t n, std::string* err);
  // write() of printf-formatted text.
  bool print(std::string* err, const char* format, ...) __attribute__((format(printf, 3, 4)));
  // Makes the output permanent: flush; for a temporary file fsync and rename (or link) onto the target. false,
  // with *err, on an error: the target is then as it was and the temporary file is gone.
  bool commit(std::string* err);
  // Gives up: the temporary file is removed, the target left as it was. Direct outputs (stdout, devices,
  // FIFOs) keep what was written already.
  void abandon();

  bool is_open() const { return fd_ >= 0; }
  // True when the output is written directly (stdout or a non-regular file), not through a temporary file.
  bool direct() const { return direct_; }
  const std::string& name() const { return name_; }

 private:
  bool flush(std::string* err);
  void close_fd();
  int fd_ = -1;
  bool direct_ = false, overwrite_ = true;
  int slot_ = -1;  // the signal handler's record of the temporary file
  std::string name_, target_, tmp_;
  std::vector<uint8_t> buf_;
};

// SIGINT, SIGTERM, SIGHUP and SIGBUS (a mapped input that shrank: InputBytes) remove the temporary files of the open Outputs, then end the process by the
// signal as before. Call once, early in main.
void remove_temporaries_on_signal();

}  // namespace files
