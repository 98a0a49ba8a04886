// tests/common/fuzz_budget.h: how long a fuzz loop runs: a fixed number of iterations, or, with
// GPUEC_FUZZ_SECONDS=N in the environment, N seconds from the budget's creation (docs/fuzzing.md).
#pragma once

#include <chrono>
#include <cstdlib>

namespace gpuec_test {

class FuzzBudget {
 public:
  explicit FuzzBudget(int iterations) : iterations_(iterations) {
    if (const char* e = std::getenv("GPUEC_FUZZ_SECONDS")) seconds_ = std::atof(e);
  }
  // Whether iteration `iter` (counted from 0) runs.
  bool more(int iter) const {
    if (seconds_ > 0) return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count() <= seconds_;
    return iter < iterations_;
  }

 private:
  int iterations_;
  double seconds_ = 0;
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
};

}  // namespace gpuec_test
