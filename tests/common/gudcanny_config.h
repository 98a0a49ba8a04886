// tests/common/gudcanny_config.h: the gudcanny_config of a test: gudcanny_config_default with the fields the
// tests of the C interface (tests/canny/gudcanny_c_test, tests/gudcanny/) vary.
#pragma once

#include "canny/gudcanny.h"

namespace gudcanny_test {

inline gudcanny_config config(int w, int h, int backend, int depth, int step = 3, int thresholds = GUDCANNY_STRIP) {
  gudcanny_config cfg;
  gudcanny_config_default(&cfg, w, h);
  cfg.backend = backend;
  cfg.depth = depth;
  cfg.step = step;
  cfg.thresholds = thresholds;
  return cfg;
}

}  // namespace gudcanny_test
