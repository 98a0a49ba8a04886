// libFuzzer target for the capture reader (cavlc/capture.h, read_capture): a refusal carries a message; a
// capture that is read has slices whose skeleton and records have the sizes their headers give.
#include <cstdint>
#include <string>
#include <vector>

#include "cavlc/capture.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fuzz::MemFile file(data, size);
  std::vector<cavlc::CapturedSlice> slices;
  std::string error;
  if (!cavlc::read_capture(file.path(), slices, error)) {
    fuzz::check_refusal(error, file.path() + ": ");
    return 0;
  }
  for (const cavlc::CapturedSlice& s : slices)
    if (s.skeleton.size() != s.head.skeleton_bytes || s.recs.size() != s.head.record_count)
      fuzz::broken("a slice whose sizes differ from its header");
  return 0;
}
