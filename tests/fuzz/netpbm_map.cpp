// libFuzzer target for canny-eval's PBM/PGM reader (tools/cli/images.h, read_map: P1, P2, P4, P5): a refusal is a
// cli::Failure with exit code 2 and a message that starts with the input's name; a map that is read has
// width x height pixels, each 0 or 1.
#include <cstdint>
#include <string>

#include "cli.h"
#include "fuzz_input.h"
#include "images.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fuzz::MemFile file(data, size);
  const cli::File f(file.open());
  try {
    const images::Map m = images::read_map(f.get(), "GT");
    if (m.width < 1 || m.height < 1 || m.on.size() != size_t(m.width) * size_t(m.height))
      fuzz::broken("pixels do not fill the map");
    for (uint8_t v : m.on)
      if (v > 1) fuzz::broken("a map pixel that is not 0 or 1");
  } catch (const cli::Failure& e) {
    if (e.code != images::kExitData) fuzz::broken("exit code " + std::to_string(e.code) + ": " + e.message);
    fuzz::check_refusal(e.message, "GT: ");
  }
  return 0;
}
