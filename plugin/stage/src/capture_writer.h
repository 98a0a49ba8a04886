// The stage's side of the capture file (format in cavlc/capture.h). Process-wide and thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cavlc/mb.h"

namespace gpuec {

// Called by each new stage: 0 when GPUEC_CAPTURE is unset or empty (capture off), 1 when this stage
// captures (the file is open), -1 when the file cannot be opened (reason in note).
int capture_acquire(char* note, size_t note_size);
// Called by each stage that got 1 from capture_acquire, when it is destroyed.
void capture_release();

// Appends one slice block. skel_first_byte points to byte start_bit / 8 of the skeleton (bytes up to
// ceil(end_bit / 8) are read), out to the stage's output of out_bits bits (bits after them in the last
// byte are ignored). Returns 0, or -1 after a message on stderr.
int capture_slice(int mb_width, int mb_height, int first_mb, int64_t start_bit, int64_t end_bit,
                  const uint8_t* skel_first_byte, const gpuec_mb* recs, size_t n, const uint8_t* out,
                  int64_t out_bits);

}  // namespace gpuec
