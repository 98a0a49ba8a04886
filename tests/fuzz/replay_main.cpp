// The main of a fuzz target's CTest replay (tests/fuzz/CMakeLists.txt): runs LLVMFuzzerTestOneInput on every
// file named and every regular file in every folder named (not recursively, in name order). A missing path is
// skipped with a note (the shared data may be absent); a broken invariant aborts as in the fuzzer.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

void run_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", p.c_str());
    std::exit(2);
  }
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

}  // namespace

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  long inputs = 0;
  for (int i = 1; i < argc; ++i) {
    const fs::path p = argv[i];
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<fs::path> files;
      for (const fs::directory_entry& e : fs::directory_iterator(p))
        if (e.is_regular_file()) files.push_back(e.path());
      std::sort(files.begin(), files.end());
      for (const fs::path& f : files) run_file(f), ++inputs;
    } else if (fs::is_regular_file(p, ec)) {
      run_file(p), ++inputs;
    } else {
      std::printf("skipped (missing): %s\n", p.c_str());
    }
  }
  std::printf("%ld inputs, no failure\n", inputs);
  return 0;
}
