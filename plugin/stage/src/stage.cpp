// The entropy stage behind gpuec/stage.h: frame-part bookkeeping on top of the frame coder
// (cavlc/frame_coder.h: its cuda backend, or its cpu backend, which is also the fallback), and capture.
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
#include "cavlc/frame.h"
#include "cavlc/frame_coder.h"
#include "cavlc/slice.h"
#include "gpu/backend.h"
#include "gpu/device.h"

static_assert(GPUEC_BACKEND_OFF == static_cast<int>(gpu::Backend::kOff) &&
                  GPUEC_BACKEND_CPU == static_cast<int>(gpu::Backend::kCpu) &&
                  GPUEC_BACKEND_CUDA == static_cast<int>(gpu::Backend::kCuda) &&
                  GPUEC_BACKEND_AUTO == static_cast<int>(gpu::Backend::kAuto),
              "gpuec_backend is gpu::Backend");

namespace {

// Process-wide CUDA state: after one failure every stage uses the CPU (a sticky CUDA error poisons the
// context anyway); parts submitted so far, for GPUEC_CUDA_FAIL_AT_FRAME.
std::atomic<bool> g_cuda_failed{false};
std::atomic<long long> g_cuda_parts{0};

void set_note(char* note, size_t size, const char* text) {
  if (note && size) std::snprintf(note, size, "%s", text);
}

struct SliceState {
  int first = 0;            // index of its first record in the frame coder's arrays
  int count = 0;            // records (skipped macroblocks included)
  int first_mb = 0;
  int64_t start_bit = 0;    // skeleton bits [start_bit, end_bit) in the encoder's buffer
  int64_t end_bit = 0;
  int64_t pos = 0;          // end of the last skeleton piece handed out (a coded macroblock's skel_bit)
  size_t skel_off = 0;      // byte offset of the skeleton copy in the coder's skeleton area
  int tag = 0;
  // result
  size_t out_off = 0;       // payload: bytes [out_off, out_off + payload_bytes) of the output
  int64_t rbsp_bits = 0;    // without rbsp_slice_trailing_bits
  int64_t payload_bytes = 0;
};

enum class Part { kEmpty, kOpen, kSubmitted, kDone };

// Whether the part's output is written at commit (FrameCoder::commit_streamed: the cpu coder, commits with
// the encoder's buffer, no capture): decided by its first commit or defer.
enum class Stream { kUnknown, kYes, kNo };

}  // namespace

struct gpuec_stage {
  int mb_width = 0;
  int mb_height = 0;
  std::unique_ptr<cavlc::FrameCoder> coder;   // the one that codes the next part
  std::unique_ptr<cavlc::FrameCoder> failed;  // a cuda coder that failed (kept until the stage goes)
  // The cuda coder being created on its own thread (GPUEC_CUDA_WAIT_AT_OPEN unset): `coder` is a cpu coder
  // until it is ready, then it becomes `coder` at the start of the next frame part.
  std::unique_ptr<cavlc::PendingCudaCoder> pending;
  // coder's input arrays (use_coder): the records are written here as x264 commits them
  gpuec_mb* recs = nullptr;
  int32_t* ids = nullptr;
  cavlc::MbLead* leads = nullptr;
  uint8_t* tc = nullptr;                      // TotalCoeff records: cuda only (null on the cpu coder)
  std::string note;                    // not reported yet (gpuec_stage_note)
  long long fail_at = -1;              // GPUEC_CUDA_FAIL_AT_FRAME
  size_t capacity = 0;                 // records of the coder's arrays

  Part part = Part::kEmpty;
  int base = 0;                        // frame address of the coder's record 0: the part's first row
  size_t n = 0;                        // records of the part so far (fillers included)
  bool slice_open = false;
  bool part_bad = false;               // a slice began before the end of the previous one
  bool part_on_coder = false;          // the part was submitted to `coder` and waits in complete()
  Stream stream = Stream::kNo;
  std::vector<SliceState> slices;
  size_t skel_used = 0;                // bytes of the skeleton area in use
  const uint8_t* out = nullptr;        // output of the completed part
  int64_t slices_coded = 0;
  int64_t macroblocks = 0;
  int64_t overflows = 0;
  bool capture = false;                // GPUEC_CAPTURE: append every coded slice (cavlc/capture.h)
  gpuec_mb hot_slot;                   // gpuec_mb_next's slot with the cpu coder (slot())
};

namespace {

SliceState& cur(gpuec_stage* s) { return s->slices.back(); }

// Makes c the stage's coder and takes its input arrays.
void use_coder(gpuec_stage* s, std::unique_ptr<cavlc::FrameCoder> c) {
  s->coder = std::move(c);
  s->recs = s->coder->records();
  s->ids = s->coder->slice_ids();
  s->leads = s->coder->leads();
  s->tc = s->coder->tc_records();
}

// The record slot gpuec_mb_next hands out: the coder's record of the next macroblock, or with the cpu
// coder (which codes at commit and keeps what it needs) one reused slot that stays in the cache, unless
// capture wants every record of the part at completion.
gpuec_mb* slot(gpuec_stage* s) {
  if (s->coder->backend() == gpu::Backend::kCpu && !s->capture) return &s->hot_slot;
  return &s->recs[s->n < s->capacity ? s->n : s->capacity - 1];
}

bool next_addr_ok(const gpuec_stage* s, int mb_addr) {
  const SliceState& c = s->slices.back();
  return s->slice_open && !s->part_bad &&
         mb_addr == c.first_mb + static_cast<int>(s->n - static_cast<size_t>(c.first)) &&
         mb_addr < s->mb_width * s->mb_height && s->n < s->capacity;
}

// Records [from, to) of the coder's arrays become fillers: skipped, in no slice (cavlc/frame_coder.h).
void fill(gpuec_stage* s, size_t from, size_t to) {
  for (size_t i = from; i < to; ++i) {
    s->recs[i].kind = GPUEC_MB_SKIP;
    s->ids[i] = -1;
    s->leads[i] = cavlc::MbLead{0, 0, 0};
    if (s->tc) std::memset(s->tc + i * cavlc::kTcRecordBytes, 0, cavlc::kTcRecordBytes);
  }
}

// The CUDA backend failed: from now on the CPU codes, in this stage and (through g_cuda_failed) in every
// stage of the process. The part in hand is coded by a cpu coder from a copy of the cuda coder's inputs.
int cuda_failed(gpuec_stage* s, const std::string& why, bool report) {
  g_cuda_failed = true;
  if (report)
    s->note = "the cuda backend failed (" + why + "); the cpu backend codes from here on, the stream is unchanged";
  std::string reason;
  std::unique_ptr<cavlc::FrameCoder> cpu =
      cavlc::FrameCoder::create(gpu::Backend::kCpu, s->mb_width, s->mb_height, 0, &reason);
  if (!cpu) return GPUEC_ENOMEM;
  uint8_t* area = cpu->skeleton(s->skel_used);
  if (!area) return GPUEC_ENOMEM;
  std::memcpy(area, s->coder->skeleton(0), s->skel_used);
  std::memcpy(cpu->records(), s->recs, s->n * sizeof(gpuec_mb));
  std::memcpy(cpu->slice_ids(), s->ids, s->n * sizeof(int32_t));
  std::memcpy(cpu->leads(), s->leads, s->n * sizeof(cavlc::MbLead));
  std::memcpy(cpu->slices(), s->coder->slices(), s->slices.size() * sizeof(cavlc::FrameSlice));
  s->failed = std::move(s->coder);
  use_coder(s, std::move(cpu));
  return GPUEC_OK;
}

// At the start of a frame part: the cuda coder created in the background, when it is ready, codes from
// this part on. A failed creation is a cuda failure after open (one note, the cpu from then on).
void adopt_pending(gpuec_stage* s) {
  if (!s->pending || !s->pending->ready()) return;
  std::string why;
  std::unique_ptr<cavlc::FrameCoder> c = s->pending->take(&why);
  s->pending.reset();
  if (g_cuda_failed) return;  // another stage failed meanwhile and reported it
  if (!c) {
    g_cuda_failed = true;
    s->note = "the cuda backend failed (" + why + "); the cpu backend codes from here on, the stream is unchanged";
    return;
  }
  use_coder(s, std::move(c));
}

// Submits the part to the coder (the cuda one, or the cpu one after a failure). Returns 0 or GPUEC_E*.
int submit_part(gpuec_stage* s) {
  const int rows = static_cast<int>((s->n + static_cast<size_t>(s->mb_width) - 1) / static_cast<size_t>(s->mb_width));
  const int n_slices = static_cast<int>(s->slices.size());
  std::string why;
  if (s->coder->backend() == gpu::Backend::kCuda) {
    const long long part = g_cuda_parts++;
    if (g_cuda_failed) {
      const int r = cuda_failed(s, "an earlier failure in another stage", false);  // that stage reported it
      if (r < 0) return r;
    } else if (part == s->fail_at) {
      const int r = cuda_failed(s, "failure forced by GPUEC_CUDA_FAIL_AT_FRAME=" + std::to_string(s->fail_at), true);
      if (r < 0) return r;
    } else if (s->coder->submit(rows, n_slices, s->skel_used, &why)) {
      return GPUEC_OK;
    } else {
      const int r = cuda_failed(s, why, true);
      if (r < 0) return r;
    }
  }
  return s->coder->submit(rows, n_slices, s->skel_used, &why) ? GPUEC_OK : GPUEC_EINVAL;
}

int capture(gpuec_stage* s, const SliceState& c) {
  if (!s->capture) return GPUEC_OK;
  return gpuec::capture_slice(s->mb_width, s->mb_height, c.first_mb, c.start_bit, c.end_bit,
                              s->coder->skeleton(0) + c.skel_off, s->recs + c.first,
                              static_cast<size_t>(c.count), s->out + c.out_off, c.rbsp_bits) < 0
             ? GPUEC_EBACKEND
             : GPUEC_OK;
}

}  // namespace

extern "C" {

const char* gpuec_backend_name(int backend) {
  gpu::Backend b;
  return gpu::backend_from_int(backend, &b) ? gpu::backend_name(b) : "unknown";
}

gpuec_stage* gpuec_stage_create(int mb_width, int mb_height, int backend, int device, char* note,
                                size_t note_size) {
  set_note(note, note_size, "");
  gpu::Backend asked;
  if (mb_width <= 0 || mb_height <= 0 || mb_width > 1024 || mb_height > 1024 || device < 0 ||
      !gpu::backend_from_int(backend, &asked) || asked == gpu::Backend::kOff) {
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
  s->fail_at = gpu::fail_at_frame("GPUEC_CUDA_FAIL_AT_FRAME");
  try {
    s->slices.reserve(64);
  } catch (const std::bad_alloc&) {
    set_note(note, note_size, "out of memory");
    return nullptr;
  }
  std::string why;
  std::unique_ptr<cavlc::FrameCoder> coder;
  if (asked != gpu::Backend::kCpu) {
    const char* wait = std::getenv("GPUEC_CUDA_WAIT_AT_OPEN");
    if (g_cuda_failed) {
      why = "the cuda backend failed earlier in this process";
    } else if (wait && *wait && std::strcmp(wait, "0") != 0) {
      coder = cavlc::FrameCoder::create(gpu::Backend::kCuda, mb_width, mb_height, device, &why);
    } else if (gpu::device_usable(device, &why)) {  // the driver is up; the context and buffers come in the background
      s->pending.reset(new (std::nothrow) cavlc::PendingCudaCoder(mb_width, mb_height, device));
      if (!s->pending) why = "out of memory";
    }
    if (s->pending) {
      // the cpu coder below codes until the cuda one is ready
    } else if (!coder && asked == gpu::Backend::kCuda)
      set_note(note, note_size, ("cuda backend unavailable (" + why + "); using the cpu backend").c_str());
    else if (!coder)  // auto: why the cpu backend (x264 then keeps its own writer: the encoder's choice)
      set_note(note, note_size, why.c_str());
  }
  if (!coder) coder = cavlc::FrameCoder::create(gpu::Backend::kCpu, mb_width, mb_height, 0, &why);
  if (!coder) {
    set_note(note, note_size, why.c_str());
    return nullptr;
  }
  use_coder(s.get(), std::move(coder));
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

int gpuec_stage_backend(const gpuec_stage* s) {
  return s->pending ? GPUEC_BACKEND_CUDA : static_cast<int>(s->coder->backend());
}

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

void gpuec_stage_memory(const gpuec_stage* s, int64_t* device_bytes, int64_t* pinned_bytes) {
  cavlc::FrameCoderMemory m = s->coder->memory();
  if (s->failed) {
    const cavlc::FrameCoderMemory f = s->failed->memory();
    m.device_bytes += f.device_bytes;
    m.pinned_bytes += f.pinned_bytes;
  }
  if (device_bytes) *device_bytes = m.device_bytes;
  if (pinned_bytes) *pinned_bytes = m.pinned_bytes;
}

void gpuec_slice_begin(gpuec_stage* s, int first_mb, int64_t start_bit) {
  if (s->part != Part::kOpen || s->slices.empty()) {  // a new frame part
    adopt_pending(s);
    s->stream = s->coder->backend() == gpu::Backend::kCpu && !s->capture ? Stream::kUnknown : Stream::kNo;
    s->coder->restart_stream();
    s->part = Part::kOpen;
    s->slices.clear();
    s->skel_used = 0;
    s->part_bad = false;
    s->part_on_coder = false;
    s->out = nullptr;
    s->base = first_mb >= 0 && first_mb < s->mb_width * s->mb_height ? first_mb - first_mb % s->mb_width : 0;
    s->n = 0;
  } else if (s->slice_open) {  // the open slice was abandoned: drop its records (and its streamed output)
    if (s->stream == Stream::kYes) s->coder->drop_slice_streamed(static_cast<int>(s->slices.size() - 1));
    s->n = static_cast<size_t>(cur(s).first);
    s->skel_used = cur(s).skel_off;
    s->slices.pop_back();
  }
  // The part's records are at their frame addresses from its first row; a gap becomes fillers.
  const int64_t at = int64_t{first_mb} - s->base;
  if (at < static_cast<int64_t>(s->n) || first_mb >= s->mb_width * s->mb_height) {
    s->part_bad = true;  // out of order or outside the frame: the calls that follow fail
  } else {
    fill(s, s->n, static_cast<size_t>(at));
    s->n = static_cast<size_t>(at);
  }
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
  s->ids[s->n] = static_cast<int32_t>(s->slices.size() - 1);
  s->leads[s->n] = cavlc::MbLead{0, 0, 0};
  if (s->tc) std::memset(s->tc + s->n * cavlc::kTcRecordBytes, 0, cavlc::kTcRecordBytes);
  ++s->n;
  return GPUEC_OK;
}

gpuec_mb* gpuec_mb_next(gpuec_stage* s) {
  gpuec_mb* m = slot(s);
  m->coef_order = GPUEC_COEF_SCAN;  // the record memory is reused (and pinned memory starts undefined)
  m->reserved = 0;
  return m;
}

int gpuec_mb_commit(gpuec_stage* s, uint8_t totals[GPUEC_TC_COUNT]) { return gpuec_mb_commit_bits(s, totals, nullptr); }

int gpuec_mb_commit_bits(gpuec_stage* s, uint8_t totals[GPUEC_TC_COUNT], const uint8_t* buf) {
  const gpuec_mb& m = *slot(s);
  if (!next_addr_ok(s, m.mb_addr) || m.kind == GPUEC_MB_SKIP) return GPUEC_EINVAL;
  SliceState& c = cur(s);
  if (m.skel_bit < c.pos || m.skel_bit - c.pos >= (INT64_C(1) << 32)) return GPUEC_EINVAL;
  if (s->stream == Stream::kUnknown) s->stream = buf ? Stream::kYes : Stream::kNo;
  if (s->stream == Stream::kYes && !buf) return GPUEC_EINVAL;  // a streamed part needs the buffer every time
  // The coder checks and counts (the cpu backend, streamed, writes the skeleton piece and codes the
  // residual here; the cuda one writes the TotalCoeff record that spares the GPU its count pass). It
  // reads the slice index of the record.
  s->ids[s->n] = static_cast<int32_t>(s->slices.size() - 1);
  const int r = s->stream == Stream::kYes
                    ? s->coder->commit_streamed(static_cast<int32_t>(s->n), m, totals, buf,
                                                static_cast<uint64_t>(c.pos), static_cast<uint64_t>(m.skel_bit))
                    : s->coder->commit(static_cast<int32_t>(s->n), m, totals);
  if (r < 0) return GPUEC_EINVAL;
  if (r == 1) {  // level overflow: the encoder re-encodes this macroblock
    ++s->overflows;
    return 1;
  }
  if (s->stream != Stream::kYes)
    s->leads[s->n] = cavlc::MbLead{static_cast<uint64_t>(c.skel_off) * 8 + static_cast<uint64_t>(c.pos - c.start_bit),
                                   static_cast<uint32_t>(m.skel_bit - c.pos), 0};
  c.pos = m.skel_bit;
  ++s->n;
  return GPUEC_OK;
}

int gpuec_slice_defer(gpuec_stage* s, const uint8_t* buf, int64_t end_bit, int tag) {
  if (!s->slice_open || s->part_bad || !buf || (cur(s).start_bit & 7) || end_bit < cur(s).pos) return GPUEC_EINVAL;
  SliceState& c = cur(s);
  c.end_bit = end_bit;
  c.count = static_cast<int>(s->n) - c.first;
  c.tag = tag;
  if (c.count == 0 || c.end_bit - c.start_bit > INT64_C(1) << 32) return GPUEC_EINVAL;
  if (s->stream == Stream::kYes) {  // the tail and the stop bit complete the slice's output
    if (!s->coder->end_slice_streamed(static_cast<int>(s->slices.size() - 1), buf, static_cast<uint64_t>(c.pos),
                                      static_cast<uint64_t>(end_bit)))
      return GPUEC_EINVAL;
    s->slice_open = false;
    return static_cast<int>(s->slices.size() - 1);
  }
  s->stream = Stream::kNo;  // a slice without commits: the part is not streamed
  // Copy the skeleton, with rbsp_stop_one_bit after it: the coder writes it as the slice's last bit.
  const uint64_t bits = static_cast<uint64_t>(end_bit - c.start_bit);
  uint8_t* area = s->coder->skeleton(c.skel_off + cavlc::skeleton_bytes(bits) + 4);
  if (!area) return GPUEC_ENOMEM;
  s->skel_used = (c.skel_off + cavlc::put_skeleton(area + c.skel_off, buf + (c.start_bit >> 3), bits) + 3) & ~size_t{3};
  cavlc::FrameSlice& f = s->coder->slices()[s->slices.size() - 1];
  f.first_mb = c.first;
  f.mb_count = c.count;
  f.tail_src_bit = static_cast<uint64_t>(c.skel_off) * 8 + static_cast<uint64_t>(c.pos - c.start_bit);
  f.tail_len = static_cast<uint32_t>(end_bit - c.pos + 1);
  f.reserved = 0;
  s->slice_open = false;
  return static_cast<int>(s->slices.size() - 1);
}

int gpuec_frame_submit(gpuec_stage* s) {
  if (s->part != Part::kOpen || s->slice_open) return GPUEC_EINVAL;
  s->part = Part::kSubmitted;
  if (s->slices.empty()) return GPUEC_OK;
  if (s->part_bad) return GPUEC_EINVAL;
  // Whole rows: the rest of the last row is fillers.
  const size_t w = static_cast<size_t>(s->mb_width);
  fill(s, s->n, (s->n + w - 1) / w * w);
  s->n = (s->n + w - 1) / w * w;
  const int r = submit_part(s);
  if (r < 0) return r;
  s->part_on_coder = true;
  return GPUEC_OK;
}

int gpuec_frame_complete(gpuec_stage* s) {
  if (s->part == Part::kEmpty || s->part == Part::kDone) return 0;
  if (s->part != Part::kSubmitted) return GPUEC_EINVAL;
  s->part = Part::kDone;
  if (s->slices.empty()) return 0;
  if (!s->part_on_coder) return GPUEC_EINVAL;
  s->part_on_coder = false;
  const cavlc::SliceResult* res = nullptr;
  std::string why;
  if (!s->coder->complete(&s->out, &res, &why)) {
    if (s->coder->backend() != gpu::Backend::kCuda) return GPUEC_EBACKEND;
    int r = cuda_failed(s, why, true);
    if (r < 0) return r;
    if ((r = submit_part(s)) < 0) return r;
    if (!s->coder->complete(&s->out, &res, &why)) return GPUEC_EBACKEND;
  }
  for (size_t k = 0; k < s->slices.size(); ++k) {
    SliceState& c = s->slices[k];
    c.out_off = static_cast<size_t>(res[k].out_bit >> 3);
    c.rbsp_bits = static_cast<int64_t>(res[k].bits) - 1;  // the stop bit came with the skeleton
    c.payload_bytes = static_cast<int64_t>((res[k].bits + 7) >> 3);
    if (capture(s, c) < 0) return GPUEC_EBACKEND;
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
  if (payload) *payload = s->out + c.out_off;
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
