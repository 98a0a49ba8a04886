// Real captures for the tests (cavlc/capture.h): the folder ($GPUEC_CAPTURES, else
// $GPUEC_SHARED_DIR/captures), its .cap and .cap.xz files, and loading one (xz-compressed ones through a
// temporary file named after `tag` and the process).
#pragma once

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cavlc/capture.h"

namespace cavlc_test {

inline std::string captures_dir() {
  if (const char* d = std::getenv("GPUEC_CAPTURES")) return d;
  const char* s = std::getenv("GPUEC_SHARED_DIR");
  return std::string(s ? s : "../shared") + "/captures";
}

inline std::vector<std::string> capture_files() {
  std::vector<std::string> v;
  const std::string dir = captures_dir();
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if ((n.size() > 4 && n.compare(n.size() - 4, 4, ".cap") == 0) ||
          (n.size() > 7 && n.compare(n.size() - 7, 7, ".cap.xz") == 0))
        v.push_back(dir + "/" + n);
    }
    closedir(d);
  }
  std::sort(v.begin(), v.end());
  return v;
}

inline bool load_capture(const std::string& path, const char* tag, std::vector<cavlc::CapturedSlice>* slices,
                         std::string* err) {
  std::string file = path;
  if (path.size() > 3 && path.compare(path.size() - 3, 3, ".xz") == 0) {
    file = "/tmp/gpuec-" + std::string(tag) + "." + std::to_string(getpid()) + ".cap";
    if (std::system(("xz -dc '" + path + "' > '" + file + "'").c_str()) != 0) {
      *err = "xz -dc failed on " + path;
      return false;
    }
  }
  const bool ok = cavlc::read_capture(file, *slices, *err);
  if (file != path) std::remove(file.c_str());
  return ok;
}

}  // namespace cavlc_test
