// libFuzzer target for gudcanny's --candidates parser (tools/cli/images.h, read_candidates): a refusal is a
// cli::Failure with exit code 2 and a message that starts with the file's name; a list that is read holds
// 1..canny::kMaxCandidates pairs with 1 <= low < high <= 100.
#include <cstdint>
#include <string>

#include "cli.h"
#include "fuzz_input.h"
#include "images.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fuzz::MemFile file(data, size);
  const cli::File f(file.open());
  try {
    const std::vector<canny::CandidatePair> pairs = images::read_candidates(f.get(), "CANDS");
    if (pairs.empty() || pairs.size() > size_t(canny::kMaxCandidates)) fuzz::broken("a list of " + std::to_string(pairs.size()) + " pairs");
    for (const canny::CandidatePair& p : pairs)
      if (p.low < 1 || p.low >= p.high || p.high > 100) fuzz::broken("a pair outside 1 <= low < high <= 100");
  } catch (const cli::Failure& e) {
    if (e.code != images::kExitData) fuzz::broken("exit code " + std::to_string(e.code) + ": " + e.message);
    fuzz::check_refusal(e.message, "CANDS");
  }
  return 0;
}
