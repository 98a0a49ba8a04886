// libFuzzer target for the JPEG luma decoder of gpuec_sequences (sequences/clip.h, jpeg_luma: libjpeg-turbo),
// which the pan clips read their photo with: a refusal is a clip::Error with a message; a photo that is read
// has width x height luma bytes.
#include <cstdint>
#include <string>
#include <vector>

#include "clip.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fuzz::MemFile file(data, size);
  try {
    int w = 0, h = 0;
    const std::vector<uint8_t> y = gpuec::clip::jpeg_luma(file.path(), &w, &h);
    if (w < 1 || h < 1 || y.size() != size_t(w) * size_t(h)) fuzz::broken("luma does not fill the photo");
  } catch (const gpuec::clip::Error& e) {
    fuzz::check_refusal(e.what(), "");
  }
  return 0;
}
