// libFuzzer target for the Annex B/NAL parser, the parameter sets, the slice layer and the re-coding behind
// avc::reentropy_stream (avc/reentropy.h): a refused stream carries a status and a message; a parsed one is
// re-coded to a canonical stream that re-codes to itself byte for byte (docs/fuzzing.md).
#include <cstdint>
#include <vector>

#include "avc/reentropy.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> out, again;
  avc::Error err;
  if (!avc::reentropy_stream(data, size, out, nullptr, err)) {
    if (err.status == avc::Status::kOk) fuzz::broken("refused with status kOk: " + err.describe());
    fuzz::check_refusal(err.message, "");
    return 0;
  }
  avc::Error err2;
  if (!avc::reentropy_stream(out.data(), out.size(), again, nullptr, err2))
    fuzz::broken("the canonical re-coding is refused: " + err2.describe());
  if (again != out) fuzz::broken("the canonical re-coding is not a fixed point");
  return 0;
}
