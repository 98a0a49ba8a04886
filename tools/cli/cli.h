// tools/cli/cli.h: what the user programs that report errors by exception share: Failure (an exit code and a
// message), fail(), the main that turns them into the message and the exit status, and input files opened
// with that error.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>

namespace cli {

struct Failure {
  int code;
  std::string message;
};

[[noreturn]] inline void fail(int code, const std::string& message) { throw Failure{code, message}; }

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

// `path` opened for reading (binary; "-": standard input), closed when the File goes; a Failure with `code` ("PATH: cannot open:
// REASON", "PATH: is a directory") when it cannot be opened or is a directory.
inline File open_for_reading(const std::string& path, int code) {
  if (path == "-") {  // standard input (read once: a caller reads "-" at most once)
    File f(fdopen(dup(0), "rb"));
    if (!f) fail(code, "stdin: " + std::string(std::strerror(errno)));
    return f;
  }
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) fail(code, path + ": cannot open: " + std::strerror(errno));
  struct stat st;
  if (fstat(fileno(f.get()), &st) == 0 && S_ISDIR(st.st_mode)) fail(code, path + ": is a directory");
  return f;
}

// Runs run(argc, argv) and returns its status. A Failure prints "PROG: message" on stderr (and `usage_hint`
// on a line of its own when its code is `usage_code`) and returns its code; any other exception prints
// "PROG: what" ("out of memory" for std::bad_alloc) and returns `other_code`.
inline int main_of(const char* prog, int (*run)(int, char**), int argc, char** argv, int usage_code,
                   const char* usage_hint, int other_code) {
  try {
    return run(argc, argv);
  } catch (const Failure& f) {
    std::fprintf(stderr, "%s: %s\n", prog, f.message.c_str());
    if (f.code == usage_code) std::fprintf(stderr, "%s\n", usage_hint);
    return f.code;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: out of memory\n", prog);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", prog, e.what());
  }
  return other_code;
}

}  // namespace cli
