// libFuzzer target for gudcanny's image readers (tools/cli/images.h): read_pgm (binary P5, maxval 255; target pgm)
// or, with GPUEC_FUZZ_PNG, read_png (libpng's simplified API, 8-bit grayscale; target png). A refusal is a
// cli::Failure with exit code 2 and a message that starts with the input's name; an image that is read has a size
// GUD-Canny accepts and width x height pixels.
#include <cstdint>
#include <string>

#include "cli.h"
#include "fuzz_input.h"
#include "images.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fuzz::MemFile file(data, size);
  const cli::File f(file.open());
  try {
#ifdef GPUEC_FUZZ_PNG
    const images::Image im = images::read_png(f.get(), "IN");
#else
    const images::Image im = images::read_pgm(f.get(), "IN");
#endif
    images::check_size("IN", im.width, im.height);
    if (im.pixels.size() != size_t(im.width) * size_t(im.height)) fuzz::broken("pixels do not fill the image");
  } catch (const cli::Failure& e) {
    if (e.code != images::kExitData) fuzz::broken("exit code " + std::to_string(e.code) + ": " + e.message);
    fuzz::check_refusal(e.message, "IN: ");
  }
  return 0;
}
