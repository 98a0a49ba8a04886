// libFuzzer target for the .gvle reader (vle/format.h) and, behind it, the decoder (vle/decode.h).
// Built by -DGPUEC_FUZZ=ON (fuzz_gvle) and replayed by CTest fuzz.gvle; tools/scripts/fuzz.sh gvle runs it
// (docs/fuzzing.md).
//
// Each input is used three ways:
//   1. decompressed as is: success must mean the output matches the content hash, failure must
//      leave the output empty (a crash, a sanitizer report or a broken invariant aborts);
//   2. decompressed without the header and payload hashes, so that mutations reach the field
//      checks, the code-length parser and the decoder instead of stopping at a checksum;
//   3. compressed as raw data and decompressed again: the round trip must give the input back.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "vle/format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> out;
  vle::DecompressOptions opt;
  opt.threads = 2;  // one per chunk at most: multi-chunk inputs exercise the worker split
  vle::Status s = vle::decompress(data, size, &out, opt);
  if (!s.ok() && (!out.empty() || s.message.empty())) std::abort();

  opt.verify_checksums = false;
  s = vle::decompress(data, size, &out, opt);
  if (!s.ok() && (!out.empty() || s.message.empty())) std::abort();

  const std::vector<uint8_t> file = vle::compress_ref(data, size);
  opt.verify_checksums = true;
  s = vle::decompress(file.data(), file.size(), &out, opt);
  if (!s.ok() || out.size() != size || (size && std::vector<uint8_t>(data, data + size) != out)) std::abort();
  return 0;
}
