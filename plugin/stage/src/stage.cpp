// The entropy stage behind gpuec/stage.h: capture buffers, backend choice, and the slice splice.
#include "gpuec/stage.h"

#include <cstdio>
#include <cstring>
#include <new>
#include <vector>

#include "capture_writer.h"
#include "cavlc/slice.h"

struct gpuec_stage {
  int mb_width = 0;
  int mb_height = 0;
  int backend = GPUEC_BACKEND_CPU;
  int first_mb = 0;
  int64_t start_bit = 0;
  std::vector<gpuec_mb> recs;            // capacity: one frame; never reallocated after create
  size_t n = 0;                          // committed records of the current slice
  std::vector<cavlc::MbTotals> totals;   // one frame, indexed by mb_addr
  std::vector<uint8_t> out;              // slice RBSP; grows only for a slice larger than any before
  int64_t slices = 0;
  int64_t macroblocks = 0;
  int64_t overflows = 0;
  bool capture = false;                  // GPUEC_CAPTURE: append every finished slice (gpuec/capture.h)
};

namespace {

void set_note(char* note, size_t size, const char* text) {
  if (note && size) std::snprintf(note, size, "%s", text);
}

}  // namespace

extern "C" {

const char* gpuec_backend_name(int backend) {
  switch (backend) {
    case GPUEC_BACKEND_OFF: return "off";
    case GPUEC_BACKEND_CPU: return "cpu";
    case GPUEC_BACKEND_CUDA: return "cuda";
    case GPUEC_BACKEND_AUTO: return "auto";
    default: return "unknown";
  }
}

gpuec_stage* gpuec_stage_create(int mb_width, int mb_height, int backend, char* note, size_t note_size) {
  set_note(note, note_size, "");
  if (mb_width <= 0 || mb_height <= 0 || mb_width > 1024 || mb_height > 1024 ||
      backend < GPUEC_BACKEND_CPU || backend > GPUEC_BACKEND_AUTO) {
    set_note(note, note_size, "invalid frame size or backend");
    return nullptr;
  }
  gpuec_stage* s = new (std::nothrow) gpuec_stage;
  if (!s) {
    set_note(note, note_size, "out of memory");
    return nullptr;
  }
  try {
    const size_t mbs = static_cast<size_t>(mb_width) * mb_height;
    s->recs.resize(mbs + 1);  // +1: the slot handed out by gpuec_mb_next after a full frame
    s->totals.resize(mbs);
  } catch (const std::bad_alloc&) {
    delete s;
    set_note(note, note_size, "out of memory");
    return nullptr;
  }
  s->mb_width = mb_width;
  s->mb_height = mb_height;
  const int capture = gpuec::capture_acquire(note, note_size);
  if (capture < 0) {
    delete s;
    return nullptr;
  }
  s->capture = capture > 0;
  // The CUDA backend comes with the CAVLCU kernel; until then CUDA requests run on the CPU coder.
  if (backend == GPUEC_BACKEND_CUDA)
    set_note(note, note_size, "this build has no CUDA backend; using the cpu backend");
  s->backend = GPUEC_BACKEND_CPU;
  return s;
}

void gpuec_stage_destroy(gpuec_stage* s) {
  if (s && s->capture) gpuec::capture_release();
  delete s;
}

int gpuec_stage_backend(const gpuec_stage* s) { return s->backend; }

void gpuec_stage_counts(const gpuec_stage* s, int64_t* slices, int64_t* macroblocks, int64_t* overflows) {
  if (slices) *slices = s->slices;
  if (macroblocks) *macroblocks = s->macroblocks;
  if (overflows) *overflows = s->overflows;
}

void gpuec_slice_begin(gpuec_stage* s, int first_mb, int64_t start_bit) {
  s->first_mb = first_mb;
  s->start_bit = start_bit;
  s->n = 0;
}

static bool next_addr_ok(const gpuec_stage* s, int mb_addr) {
  return mb_addr == s->first_mb + static_cast<int>(s->n) &&
         mb_addr < s->mb_width * s->mb_height;
}

int gpuec_mb_skip(gpuec_stage* s, int mb_addr) {
  if (!next_addr_ok(s, mb_addr)) return GPUEC_EINVAL;
  gpuec_mb& m = s->recs[s->n++];
  m.mb_addr = mb_addr;
  m.kind = GPUEC_MB_SKIP;
  m.cbp = 0;
  m.skel_bit = 0;
  return GPUEC_OK;
}

gpuec_mb* gpuec_mb_next(gpuec_stage* s) {
  return &s->recs[s->n < s->recs.size() ? s->n : s->recs.size() - 1];
}

int gpuec_mb_commit(gpuec_stage* s, uint8_t totals[GPUEC_TC_COUNT]) {
  const gpuec_mb& m = s->recs[s->n < s->recs.size() ? s->n : s->recs.size() - 1];
  if (!next_addr_ok(s, m.mb_addr) || m.kind == GPUEC_MB_SKIP) return GPUEC_EINVAL;
  const int r = cavlc::mb_totals(m, totals);
  if (r < 0) return GPUEC_EINVAL;
  if (r == 1) {  // level overflow: the encoder re-encodes this macroblock
    ++s->overflows;
    return 1;
  }
  ++s->n;
  return GPUEC_OK;
}

int gpuec_slice_finish(gpuec_stage* s, const uint8_t* buf, int64_t end_bit, const uint8_t** rbsp,
                       int64_t* rbsp_bits) {
  if (!buf || end_bit < s->start_bit || (s->start_bit & 7)) return GPUEC_EINVAL;
  const int64_t bound = end_bit - s->start_bit + static_cast<int64_t>(s->n) * cavlc::kMaxMbResidualBits;
  const size_t bytes = vle::bits_to_bytes(static_cast<uint64_t>(bound));
  try {
    if (s->out.size() < bytes) s->out.resize(bytes);
  } catch (const std::bad_alloc&) {
    return GPUEC_ENOMEM;
  }
  vle::BitWriter bw(s->out.data(), s->out.size());
  const cavlc::SliceLayout layout{s->mb_width, s->first_mb, s->start_bit, end_bit};
  if (cavlc::encode_slice_ref(s->recs.data(), s->n, layout, buf, s->totals.data(), bw) < 0)
    return GPUEC_EINVAL;
  const int64_t bits = static_cast<int64_t>(bw.bits());
  bw.flush();
  if (bw.overflowed()) return GPUEC_EBACKEND;  // cannot happen with the bound above
  if (s->capture && gpuec::capture_slice(s->mb_width, s->mb_height, s->first_mb, s->start_bit, end_bit, buf,
                                         s->recs.data(), s->n, s->out.data(), bits) < 0)
    return GPUEC_EBACKEND;
  ++s->slices;
  s->macroblocks += static_cast<int64_t>(s->n);
  s->n = 0;
  *rbsp = s->out.data();
  *rbsp_bits = bits;
  return GPUEC_OK;
}

}  // extern "C"
