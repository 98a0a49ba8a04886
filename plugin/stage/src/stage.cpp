// The entropy stage behind gpuec/stage.h: frame-part bookkeeping, backend choice (cpu coder, or the CUDA
// coder of cuda_coder.h with the CPU as fallback), capture.
#include "gpuec/stage.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "capture_writer.h"
#include "cavlc/assemble_frame.h"
#include "cavlc/frame.h"
#include "cavlc/slice.h"
#include "gpuec/cuda_coder.h"

namespace {

// Process-wide CUDA state: after one failure every stage uses the CPU (a sticky CUDA error poisons the
// context anyway); parts submitted so far, for GPUEC_CUDA_FAIL_AT_FRAME.
std::atomic<bool> g_cuda_failed{false};
std::atomic<long long> g_cuda_parts{0};

long long fail_at_frame() {
  const char* v = std::getenv("GPUEC_CUDA_FAIL_AT_FRAME");
  if (!v || !*v) return -1;
  char* end = nullptr;
  const long long n = std::strtoll(v, &end, 10);
  return (*end == '\0' && n >= 0) ? n : -1;
}

void set_note(char* note, size_t size, const char* text) {
  if (note && size) std::snprintf(note, size, "%s", text);
}

constexpr size_t kPayloadSlack = 64;  // bytes readable after a payload (x264's SIMD NAL escaping)

struct SliceState {
  int first = 0;            // index of its first record in the frame part
  int count = 0;            // records (skipped macroblocks included)
  int first_mb = 0;
  int64_t start_bit = 0;    // skeleton bits [start_bit, end_bit) in the encoder's buffer
  int64_t end_bit = 0;
  int64_t pos = 0;          // end of the last skeleton piece handed out (a coded macroblock's skel_bit)
  size_t skel_off = 0;      // byte offset of the skeleton copy (cuda): byte start_bit / 8 lives there
  int tag = 0;
  // result
  size_t out_off = 0;       // payload: bytes [out_off, out_off + payload_bytes) of the output
  int64_t rbsp_bits = 0;    // without rbsp_slice_trailing_bits
  int64_t payload_bytes = 0;
};

enum class Part { kEmpty, kOpen, kSubmitted, kDone };

}  // namespace

struct gpuec_stage {
  int mb_width = 0;
  int mb_height = 0;
  int backend = GPUEC_BACKEND_CPU;     // now
  std::unique_ptr<gpuec::CudaCoder> cuda;
  std::string note;                    // not reported yet (gpuec_stage_note)
  long long fail_at = -1;              // GPUEC_CUDA_FAIL_AT_FRAME

  // Frame-part inputs: the CUDA coder's pinned arrays, or the vectors below for the cpu backend.
  gpuec_mb* recs = nullptr;            // one frame + 1 (the slot handed out after a full frame)
  int32_t* slice_id = nullptr;
  cavlc::MbLead* lead = nullptr;
  uint8_t* tc = nullptr;               // cuda arrays only: TotalCoeff records (cavlc::tc_record) per record
  std::vector<gpuec_mb> cpu_recs;
  std::vector<int32_t> cpu_slice_id;
  std::vector<cavlc::MbLead> cpu_lead;
  size_t capacity = 0;                 // records

  Part part = Part::kEmpty;
  int part_first_mb = 0;
  size_t n = 0;                        // committed records of the part
  bool slice_open = false;
  bool part_cuda = false;              // the part goes to the GPU (whole rows, contiguous slices)
  std::vector<SliceState> slices;
  size_t skel_used = 0;                // bytes of the skeleton area in use (cuda)

  std::vector<cavlc::MbTotals> totals; // scratch of the CPU coder, indexed by mb_addr
  std::vector<uint8_t> out;            // cpu output: payloads at 4-byte aligned offsets; grows, never shrinks
  size_t out_used = 0;                 // bytes of `out` used by the current part
  const uint8_t* cuda_out = nullptr;   // cuda output of the completed part
  int64_t slices_coded = 0;
  int64_t macroblocks = 0;
  int64_t overflows = 0;
  bool capture = false;                // GPUEC_CAPTURE: append every coded slice (gpuec/capture.h)
};

namespace {

SliceState& cur(gpuec_stage* s) { return s->slices.back(); }

bool next_addr_ok(const gpuec_stage* s, int mb_addr) {
  const SliceState& c = s->slices.back();
  return s->slice_open && mb_addr == c.first_mb + static_cast<int>(s->n - static_cast<size_t>(c.first)) &&
         mb_addr < s->mb_width * s->mb_height && s->n < s->capacity;
}

void use_cpu_arrays(gpuec_stage* s) {
  s->recs = s->cpu_recs.data();
  s->slice_id = s->cpu_slice_id.data();
  s->lead = s->cpu_lead.data();
  s->tc = nullptr;
}

// The CUDA backend failed: from now on the CPU codes, in this stage and (through g_cuda_failed) in every
// stage of the process. Records, slice ids and leads stay in the coder's arrays until the part is done.
void cuda_failed(gpuec_stage* s, const std::string& why) {
  g_cuda_failed = true;
  s->note = "the cuda backend failed (" + why + "); the cpu backend codes from here on, the stream is unchanged";
  s->backend = GPUEC_BACKEND_CPU;
}

// Codes slice c on the CPU into s->out and appends rbsp_slice_trailing_bits. skel_abs addresses the
// skeleton with the encoder's bit positions (byte start_bit / 8 is the slice's first). Returns 0 or a
// GPUEC_E* code.
int code_slice_cpu(gpuec_stage* s, SliceState& c, const uint8_t* skel_abs) {
  const int64_t bound = c.end_bit - c.start_bit + static_cast<int64_t>(c.count) * cavlc::kMaxMbResidualBits + 8;
  const size_t off = (s->out_used + 3) & ~size_t{3};
  const size_t bytes = static_cast<size_t>((bound + 7) >> 3);
  try {
    // Grows only (no per-part zero fill): the bound is far above the real size at low QP.
    if (s->out.size() < off + bytes + kPayloadSlack) s->out.resize(off + bytes + kPayloadSlack);
  } catch (const std::bad_alloc&) {
    return GPUEC_ENOMEM;
  }
  vle::BitWriter bw(s->out.data() + off, bytes);
  const cavlc::SliceLayout layout{s->mb_width, c.first_mb, c.start_bit, c.end_bit};
  if (cavlc::encode_slice_ref(s->recs + c.first, static_cast<size_t>(c.count), layout, skel_abs, s->totals.data(),
                              bw) < 0)
    return GPUEC_EINVAL;
  c.rbsp_bits = static_cast<int64_t>(bw.bits());
  bw.put(1, 1);  // rbsp_stop_one_bit, then rbsp_alignment_zero_bits
  bw.align_zero();
  c.payload_bytes = static_cast<int64_t>(bw.bits() >> 3);
  bw.flush();
  if (bw.overflowed()) return GPUEC_EBACKEND;  // cannot happen with the bound above
  c.out_off = off;
  s->out_used = off + static_cast<size_t>(c.payload_bytes);
  return GPUEC_OK;
}

int capture(gpuec_stage* s, const SliceState& c, const uint8_t* skel_first_byte, const uint8_t* out) {
  if (!s->capture) return GPUEC_OK;
  return gpuec::capture_slice(s->mb_width, s->mb_height, c.first_mb, c.start_bit, c.end_bit, skel_first_byte,
                              s->recs + c.first, static_cast<size_t>(c.count), out, c.rbsp_bits) < 0
             ? GPUEC_EBACKEND
             : GPUEC_OK;
}

// Codes a frame part that was meant for the GPU on the CPU, from the skeleton copies (the fallback).
int code_part_cpu(gpuec_stage* s, const uint8_t* skel_area) {
  s->out_used = 0;
  s->cuda_out = nullptr;
  std::vector<uint8_t> abs;  // a slice's skeleton copy at its position in the encoder's buffer
  for (SliceState& c : s->slices) {
    const size_t first = static_cast<size_t>(c.start_bit >> 3);
    const size_t bytes = static_cast<size_t>(((c.end_bit + 7) >> 3) - (c.start_bit >> 3));
    try {
      abs.assign(first + bytes, 0);
    } catch (const std::bad_alloc&) {
      return GPUEC_ENOMEM;
    }
    std::memcpy(abs.data() + first, skel_area + c.skel_off, bytes);
    const int r = code_slice_cpu(s, c, abs.data());
    if (r < 0) return r;
  }
  for (const SliceState& c : s->slices)
    if (capture(s, c, skel_area + c.skel_off, s->out.data() + c.out_off) < 0) return GPUEC_EBACKEND;
  return GPUEC_OK;
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

gpuec_stage* gpuec_stage_create(int mb_width, int mb_height, int backend, int device, char* note,
                                size_t note_size) {
  set_note(note, note_size, "");
  if (mb_width <= 0 || mb_height <= 0 || mb_width > 1024 || mb_height > 1024 || device < 0 ||
      backend < GPUEC_BACKEND_CPU || backend > GPUEC_BACKEND_AUTO) {
    set_note(note, note_size, "invalid frame size, backend or device");
    return nullptr;
  }
  std::unique_ptr<gpuec_stage> s(new (std::nothrow) gpuec_stage);
  if (!s) {
    set_note(note, note_size, "out of memory");
    return nullptr;
  }
  s->mb_width = mb_width;
  s->mb_height = mb_height;
  s->capacity = static_cast<size_t>(mb_width) * mb_height + 1;
  s->fail_at = fail_at_frame();
  try {
    s->totals.resize(s->capacity);
    s->slices.reserve(64);
    if (backend == GPUEC_BACKEND_CUDA || backend == GPUEC_BACKEND_AUTO) {
      std::string why;
      if (g_cuda_failed)
        why = "the cuda backend failed earlier in this process";
      else
        s->cuda = gpuec::CudaCoder::create(mb_width, mb_height, device, &why);
      if (s->cuda) {
        s->backend = GPUEC_BACKEND_CUDA;
        s->recs = s->cuda->records();
        s->slice_id = s->cuda->slice_ids();
        s->lead = s->cuda->leads();
        s->tc = s->cuda->tc_records();
      } else if (backend == GPUEC_BACKEND_CUDA) {
        set_note(note, note_size, ("cuda backend unavailable (" + why + "); using the cpu backend").c_str());
      }
    }
    if (!s->cuda) {
      s->cpu_recs.resize(s->capacity);
      s->cpu_slice_id.resize(s->capacity);
      s->cpu_lead.resize(s->capacity);
      use_cpu_arrays(s.get());
      s->backend = GPUEC_BACKEND_CPU;
    }
  } catch (const std::bad_alloc&) {
    set_note(note, note_size, "out of memory");
    return nullptr;
  }
  char capture_note[256] = "";
  const int capture = gpuec::capture_acquire(capture_note, sizeof capture_note);
  if (capture < 0) {
    set_note(note, note_size, capture_note);
    return nullptr;
  }
  s->capture = capture > 0;
  return s.release();
}

void gpuec_stage_destroy(gpuec_stage* s) {
  if (s && s->capture) gpuec::capture_release();
  delete s;
}

int gpuec_stage_backend(const gpuec_stage* s) { return s->backend; }

int gpuec_stage_note(gpuec_stage* s, char* note, size_t note_size) {
  if (s->note.empty()) return 0;
  set_note(note, note_size, s->note.c_str());
  s->note.clear();
  return 1;
}

void gpuec_stage_counts(const gpuec_stage* s, int64_t* slices, int64_t* macroblocks, int64_t* overflows) {
  if (slices) *slices = s->slices_coded;
  if (macroblocks) *macroblocks = s->macroblocks;
  if (overflows) *overflows = s->overflows;
}

void gpuec_slice_begin(gpuec_stage* s, int first_mb, int64_t start_bit) {
  if (s->part != Part::kOpen || s->slices.empty()) {  // a new frame part
    s->part = Part::kOpen;
    s->slices.clear();
    s->n = 0;
    s->skel_used = 0;
    s->part_first_mb = first_mb;
    s->part_cuda = s->backend == GPUEC_BACKEND_CUDA && first_mb % s->mb_width == 0;
    s->cuda_out = nullptr;
    if (s->backend != GPUEC_BACKEND_CUDA && s->recs != s->cpu_recs.data()) use_cpu_arrays(s);
  } else if (s->slice_open) {  // the open slice was abandoned: drop its records
    s->n = static_cast<size_t>(cur(s).first);
    s->skel_used = cur(s).skel_off;
    s->slices.pop_back();
  }
  if (first_mb != s->part_first_mb + static_cast<int>(s->n)) s->part_cuda = false;
  SliceState c;
  c.first = static_cast<int>(s->n);
  c.first_mb = first_mb;
  c.start_bit = start_bit;
  c.end_bit = start_bit;
  c.pos = start_bit;
  c.skel_off = s->skel_used;
  s->slices.push_back(c);  // reserved: reallocates only past 64 slices per part
  s->slice_open = true;
}

int gpuec_mb_skip(gpuec_stage* s, int mb_addr) {
  if (!next_addr_ok(s, mb_addr)) return GPUEC_EINVAL;
  gpuec_mb& m = s->recs[s->n];
  m.mb_addr = mb_addr;
  m.kind = GPUEC_MB_SKIP;
  m.cbp = 0;
  m.skel_bit = 0;
  s->slice_id[s->n] = static_cast<int32_t>(s->slices.size() - 1);
  s->lead[s->n] = cavlc::MbLead{0, 0, 0};
  if (s->tc) std::memset(s->tc + s->n * cavlc::kTcRecordBytes, 0, cavlc::kTcRecordBytes);
  ++s->n;
  return GPUEC_OK;
}

gpuec_mb* gpuec_mb_next(gpuec_stage* s) {
  gpuec_mb* m = &s->recs[s->n < s->capacity ? s->n : s->capacity - 1];
  m->coef_order = GPUEC_COEF_SCAN;  // the record memory is reused (and pinned memory starts undefined)
  m->reserved = 0;
  return m;
}

int gpuec_mb_commit(gpuec_stage* s, uint8_t totals[GPUEC_TC_COUNT]) {
  const gpuec_mb& m = s->recs[s->n < s->capacity ? s->n : s->capacity - 1];
  if (!next_addr_ok(s, m.mb_addr) || m.kind == GPUEC_MB_SKIP) return GPUEC_EINVAL;
  SliceState& c = cur(s);
  if (m.skel_bit < c.pos || m.skel_bit - c.pos >= (INT64_C(1) << 32)) return GPUEC_EINVAL;
  const int r = cavlc::mb_totals(m, totals);
  if (r < 0) return GPUEC_EINVAL;
  if (r == 1) {  // level overflow: the encoder re-encodes this macroblock
    ++s->overflows;
    return 1;
  }
  s->slice_id[s->n] = static_cast<int32_t>(s->slices.size() - 1);
  s->lead[s->n] = cavlc::MbLead{static_cast<uint64_t>(c.skel_off) * 8 + static_cast<uint64_t>(c.pos - c.start_bit),
                                static_cast<uint32_t>(m.skel_bit - c.pos), 0};
  if (s->tc) cavlc::tc_record(totals, s->tc + s->n * cavlc::kTcRecordBytes);  // the GPU skips its count pass
  c.pos = m.skel_bit;
  ++s->n;
  return GPUEC_OK;
}

int gpuec_slice_defer(gpuec_stage* s, const uint8_t* buf, int64_t end_bit, int tag) {
  if (!s->slice_open || !buf || (cur(s).start_bit & 7) || end_bit < cur(s).pos) return GPUEC_EINVAL;
  SliceState& c = cur(s);
  c.end_bit = end_bit;
  c.count = static_cast<int>(s->n) - c.first;
  c.tag = tag;
  if (c.end_bit - c.start_bit > INT64_C(1) << 32) return GPUEC_EINVAL;
  const uint8_t* first_byte = buf + (c.start_bit >> 3);
  if (s->backend == GPUEC_BACKEND_CUDA) {
    // Copy the skeleton, with rbsp_stop_one_bit after it: the GPU assembles it as the slice's last bit.
    const uint64_t bits = static_cast<uint64_t>(end_bit - c.start_bit);
    uint8_t* area = s->cuda->skeleton(c.skel_off + gpuec::skeleton_bytes(bits) + 4);
    if (!area) return GPUEC_ENOMEM;
    s->skel_used = (c.skel_off + gpuec::put_skeleton(area + c.skel_off, first_byte, bits) + 3) & ~size_t{3};
    if (c.count == 0 || s->slices.size() >= s->capacity) s->part_cuda = false;
    if (!s->part_cuda) {
      s->slice_open = false;
      return static_cast<int>(s->slices.size() - 1);
    }
    cavlc::FrameSlice& f = s->cuda->slices()[s->slices.size() - 1];
    f.first_mb = c.first;
    f.mb_count = c.count;
    f.tail_src_bit = static_cast<uint64_t>(c.skel_off) * 8 + static_cast<uint64_t>(c.pos - c.start_bit);
    f.tail_len = static_cast<uint32_t>(end_bit - c.pos + 1);
    f.reserved = 0;
  } else {
    if (s->slices.size() == 1) s->out_used = 0;
    const int r = code_slice_cpu(s, c, buf);
    if (r < 0) return r;
    if (capture(s, c, first_byte, s->out.data() + c.out_off) < 0) return GPUEC_EBACKEND;
  }
  s->slice_open = false;
  return static_cast<int>(s->slices.size() - 1);
}

int gpuec_frame_submit(gpuec_stage* s) {
  if (s->part != Part::kOpen || s->slice_open) return GPUEC_EINVAL;
  s->part = Part::kSubmitted;
  if (s->slices.empty() || s->backend != GPUEC_BACKEND_CUDA || !s->cuda) return GPUEC_OK;
  if (!s->part_cuda || s->n % static_cast<size_t>(s->mb_width)) return GPUEC_OK;  // coded at completion
  if (g_cuda_failed) {
    cuda_failed(s, "an earlier failure in another stage");
    s->note.clear();  // that stage reported it
    return GPUEC_OK;
  }
  const long long part = g_cuda_parts++;
  std::string why;
  if (part == s->fail_at)
    why = "failure forced by GPUEC_CUDA_FAIL_AT_FRAME=" + std::to_string(s->fail_at);
  else if (s->cuda->submit(static_cast<int>(s->n / static_cast<size_t>(s->mb_width)),
                           static_cast<int>(s->slices.size()), s->skel_used, &why))
    return GPUEC_OK;
  cuda_failed(s, why);
  return GPUEC_OK;
}

int gpuec_frame_complete(gpuec_stage* s) {
  if (s->part == Part::kEmpty || s->part == Part::kDone) return 0;
  if (s->part != Part::kSubmitted) return GPUEC_EINVAL;
  s->part = Part::kDone;
  if (s->slices.empty()) return 0;
  if (s->cuda && s->recs == s->cuda->records()) {  // the part's inputs are on the CUDA path
    bool on_gpu = s->backend == GPUEC_BACKEND_CUDA && s->part_cuda && s->n % static_cast<size_t>(s->mb_width) == 0;
    const cavlc::SliceResult* res = nullptr;
    if (on_gpu) {
      std::string why;
      if (!s->cuda->complete(&s->cuda_out, &res, &why)) {
        cuda_failed(s, why);
        on_gpu = false;
      }
    }
    const uint8_t* area = s->cuda->skeleton(0);
    if (on_gpu) {
      for (size_t k = 0; k < s->slices.size(); ++k) {
        SliceState& c = s->slices[k];
        c.out_off = static_cast<size_t>(res[k].out_bit >> 3);
        c.rbsp_bits = static_cast<int64_t>(res[k].bits) - 1;  // the stop bit came with the skeleton
        c.payload_bytes = static_cast<int64_t>((res[k].bits + 7) >> 3);
        if (capture(s, c, area + c.skel_off, s->cuda_out + c.out_off) < 0) return GPUEC_EBACKEND;
      }
    } else {
      const int r = code_part_cpu(s, area);
      if (r < 0) return r;
    }
    if (s->backend != GPUEC_BACKEND_CUDA) {  // switch the next parts to the CPU arrays
      try {
        s->cpu_recs.resize(s->capacity);
        s->cpu_slice_id.resize(s->capacity);
        s->cpu_lead.resize(s->capacity);
      } catch (const std::bad_alloc&) {
        return GPUEC_ENOMEM;
      }
    }
  }
  for (const SliceState& c : s->slices) {
    ++s->slices_coded;
    s->macroblocks += c.count;
  }
  return static_cast<int>(s->slices.size());
}

int gpuec_frame_slice(const gpuec_stage* s, int k, int* tag, const uint8_t** payload, int64_t* payload_bytes,
                      int64_t* added_bits) {
  if (s->part != Part::kDone || k < 0 || static_cast<size_t>(k) >= s->slices.size()) return GPUEC_EINVAL;
  const SliceState& c = s->slices[static_cast<size_t>(k)];
  if (tag) *tag = c.tag;
  if (payload) *payload = (s->cuda_out ? s->cuda_out : s->out.data()) + c.out_off;
  if (payload_bytes) *payload_bytes = c.payload_bytes;
  if (added_bits) *added_bits = c.rbsp_bits - (c.end_bit - c.start_bit);
  return GPUEC_OK;
}

int gpuec_slice_finish(gpuec_stage* s, const uint8_t* buf, int64_t end_bit, const uint8_t** rbsp,
                       int64_t* rbsp_bits) {
  int r = gpuec_slice_defer(s, buf, end_bit, 0);
  if (r < 0) return r;
  const int k = r;
  if ((r = gpuec_frame_submit(s)) < 0 || (r = gpuec_frame_complete(s)) < 0) return r;
  int64_t bytes = 0, added = 0;
  if ((r = gpuec_frame_slice(s, k, nullptr, rbsp, &bytes, &added)) < 0) return r;
  *rbsp_bits = s->slices[static_cast<size_t>(k)].rbsp_bits;
  return GPUEC_OK;
}

}  // extern "C"
