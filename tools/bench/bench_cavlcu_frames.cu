// cavlcu-bench-frames: the GPU entropy stage per frame on real frames (stage captures, cavlc/capture.h),
// against the CPU stage on one core. Driven by tools/bench/bench-cavlcu.sh; plotted by tools/bench/plot-cavlcu.py.
//
// A capture is one x264 --threads 1 encode; its frames are the runs of slices that start with a slice
// whose first_mb is 0, which is exactly the frame part the stage gets (one part = one whole frame; a
// frame whose slices do not cover it in order is an error here, the stage would not send it to the GPU
// as one part). Per frame, with the inputs built as the stage builds them (stage.cpp, cuda/coder.cu: the
// records, slice ids, leads, slices and the skeleton copies with the rbsp_stop_one_bit in one arena):
//   gpu_code_us           code_frame_cuda with FrameCudaVariant::kFused, data resident on the GPU;
//   gpu_code_twopass_us   the same with FrameCudaVariant::kTwoPass;
//   gpu_stage_us          code_frame_cuda + assemble_frame_cuda (code + scan + pack), data resident;
//   gpu_stage_twopass_us  the same with kTwoPass;
//   gpu_encode_us         encode_frame_cuda kFused (coding and scan fused, then emit: 2 kernels, no memset);
//   gpu_encode_twopass_us encode_frame_cuda kTwoPass (count, code, scan, emit chained by programmatic
//                         dependent launch, no memset);
//   gpu_encode_hosttc_us  the same with the TotalCoeff records from the host (cavlc::tc_record of the commit
//                         check's totals, uploaded with the records), no count kernel: what the stage runs;
//   stage_xfer_us         gpuec_frame_submit + gpuec_frame_complete through the stage's C API, backend
//                         cuda (host clock): H2D from pinned memory, the kernels, D2H. The slices are fed
//                         (gpuec_slice_begin, gpuec_mb_skip / gpuec_mb_next + commit, gpuec_slice_defer)
//                         untimed before every run;
//   cpu_stage_us          cavlc::encode_slice_ref over the frame's slices, one core (as gpuec-bench-stage);
//   cpu_twin_us           code_frame_ref + assemble_frame_ref, the kernels' CPU twin, one core.
// GPU times: CUDA events around the calls on one stream, W warm-up calls, median of R. Host times:
// steady_clock, median of R (CPU: of --cpu-repeats). Bytes per frame as the stage moves them: H2D the
// records (n * 832), slice ids (n * 4), leads (n * 16), TotalCoeff records (n * 32), slices (24 each) and
// the skeleton copies; D2H
// the frame output (whole 16-byte units), the slice results (16 each) and the total (8).
//
// Checks (any failure: exit 1): per frame once, the CPU twin's slices equal the capture (bit count and
// capture_hash), and the GPU's slots, lengths, frame output, slice results and total equal the twin's
// byte for byte, for both variants; after every stage run, every slice's payload (gpuec_frame_slice)
// has the captured bit count and hash and equals the twin's bytes, and the stage is still on the GPU.
// --cpu-only runs the CPU side alone (no CUDA call), for machines without a GPU.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <functional>
#include <string>
#include <vector>

#include "cavlc/assemble_frame.h"
#include "cavlc/assemble_frame_cuda.h"
#include "cavlc/encode_frame_cuda.h"
#include "cavlc/frame.h"
#include "cavlc/frame_cuda.h"
#include "cavlc/slice.h"
#include "cavlc/capture.h"
#include "gpuec/stage.h"
#include "vle/bitwriter.h"
#include "bench_util.h"
#include "files.h"

namespace {

// Exit status.
constexpr int kExitMismatch = 1, kExitUsage = 2, kExitCapture = 3, kExitCuda = 4;

#define CHECK_CUDA(call) GPUEC_BENCH_CHECK_CUDA(call, kExitCuda)

void check_call(const gpu::CudaError& e, const char* what) {
  if (!e) return;
  std::fprintf(stderr, "cavlcu-bench-frames: %s: %s\n", what, e.str().c_str());
  std::exit(kExitCuda);
}

[[noreturn]] void mismatch(const std::string& what) {
  std::fprintf(stderr, "cavlcu-bench-frames: MISMATCH: %s\n", what.c_str());
  std::exit(kExitMismatch);
}

using Clock = std::chrono::steady_clock;

using gpuec_bench::median;

size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

void usage(FILE* out) {
  std::fprintf(out,
               "usage: cavlcu-bench-frames [--repeats N] [--warmup W] [--cpu-repeats C] [--csv FILE]\n"
               "                           [--device D] [--link-gbs G] [--cpu-only] CAPTURE...\n"
               "\n"
               "CAPTURE  a stage capture (GPUEC_CAPTURE=FILE, x264 --threads 1); without any: the *.cap files\n"
               "         of $GPUEC_CAPTURES, else $GPUEC_SHARED_DIR/captures (none there: skipped, exit 0)\n"
               "  --repeats N      timed runs per frame and measurement (default 30); medians are reported\n"
               "  --warmup W       untimed runs before them (default 5)\n"
               "  --cpu-repeats C  timed runs of the CPU stage and the CPU twin (default: N)\n"
               "  --csv FILE       one row per frame (capture, frame, sizes, times in us, bytes)\n"
               "  --device D       CUDA device (default 0)\n"
               "  --link-gbs G     host link rate for the 'link_us' column (default 55 GB/s)\n"
               "  --cpu-only       no GPU: check the CPU twin against the captures and time the CPU side only\n"
               "                   (the GPU columns are nan)\n"
               "\n"
               "Output on stdout: one summary row per capture, medians over its frames of the per-frame\n"
               "medians. Exit status: 0 ok, 1 an output differs (from the capture or the CPU twin), 2 usage,\n"
               "3 unreadable or unusable capture, 4 CUDA or stage failure.\n");
}

using gpuec_bench::parse_int;

std::string capture_name(const std::string& path) {
  std::string n = path.substr(path.find_last_of('/') + 1);
  if (n.size() > 4 && n.compare(n.size() - 4, 4, ".cap") == 0) n.resize(n.size() - 4);
  return n;
}

std::vector<std::string> default_captures(std::string* dir) {
  if (const char* d = std::getenv("GPUEC_CAPTURES"))
    *dir = d;
  else if (const char* s = std::getenv("GPUEC_SHARED_DIR"))
    *dir = std::string(s) + "/captures";
  else
    *dir = "../shared/captures";
  std::vector<std::string> v;
  if (DIR* d = opendir(dir->c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n.size() > 4 && n.compare(n.size() - 4, 4, ".cap") == 0) v.push_back(*dir + "/" + n);
    }
    closedir(d);
  }
  std::sort(v.begin(), v.end());
  return v;
}

// One slice of a frame: the records rebased onto the captured skeleton (start_bit is byte-aligned, so
// skeleton bit b is bit b - start_bit of `skeleton`), skipped records normalized as gpuec_mb_skip does.
struct Slice {
  const cavlc::CapturedSlice* cap = nullptr;
  std::vector<gpuec_mb> recs;
  int64_t skel_bits = 0;  // end_bit - start_bit
};

// A frame and the stage's inputs for it (host copies, the layouts of stage.cpp and cuda/coder.cu).
struct Frame {
  int w = 0, h = 0, n = 0;
  std::vector<Slice> slices;
  int coded = 0, residual = 0;
  std::vector<gpuec_mb> recs;             // n, raster order
  std::vector<int32_t> slice_id;          // n: index of the slice in the frame
  std::vector<cavlc::MbLead> lead;        // n
  std::vector<cavlc::FrameSlice> fslices;
  std::vector<uint8_t> skel;              // skeleton area: the slices' copies, each with the stop bit
  size_t skel_used = 0;                   // bytes of it the stage uploads (4-byte multiple)
};

// Groups the capture into frames and builds every frame's inputs. Returns false with a message.
bool build_frames(const std::vector<cavlc::CapturedSlice>& caps, std::vector<Frame>* frames, std::string* err) {
  if (caps.empty()) return *err = "no slices", false;
  if (caps[0].head.first_mb != 0) return *err = "the first slice does not start a frame (first_mb != 0)", false;
  for (const cavlc::CapturedSlice& c : caps) {
    const cavlc::CaptureSliceHeader& hd = c.head;
    if (hd.first_mb == 0) {
      frames->emplace_back();
      frames->back().w = static_cast<int>(hd.mb_width);
      frames->back().h = static_cast<int>(hd.mb_height);
    }
    Frame& f = frames->back();
    const std::string where = "slice " + std::to_string(hd.slice_index);
    if (static_cast<int>(hd.mb_width) != f.w || static_cast<int>(hd.mb_height) != f.h)
      return *err = where + ": frame size differs from the frame's first slice", false;
    if (hd.first_mb != f.n)
      return *err = where + ": first_mb " + std::to_string(hd.first_mb) + " does not follow the previous slice (" +
                    std::to_string(f.n) + "): not one frame part in order (x264 --threads 1 needed)", false;
    if (hd.record_count == 0) return *err = where + ": no macroblocks", false;
    if (static_cast<int64_t>(f.n) + hd.record_count > static_cast<int64_t>(f.w) * f.h)
      return *err = where + ": the frame's slices hold more macroblocks than the frame", false;
    if (hd.start_bit & 7) return *err = where + ": start_bit not byte-aligned", false;
    Slice s;
    s.cap = &c;
    s.recs = c.recs;
    s.skel_bits = hd.end_bit - hd.start_bit;
    const int k = static_cast<int>(f.slices.size());
    const size_t skel_off = f.skel_used;
    int64_t pos = 0;  // rebased: the slice starts at bit 0 of its skeleton copy
    for (size_t i = 0; i < s.recs.size(); ++i) {
      gpuec_mb& m = s.recs[i];
      if (m.mb_addr != f.n + static_cast<int>(i)) return *err = where + ": records out of order", false;
      cavlc::MbLead ld{0, 0, 0};
      if (m.kind == GPUEC_MB_SKIP) {
        m.cbp = 0;
        m.skel_bit = 0;
      } else {
        m.skel_bit -= hd.start_bit;
        if (m.skel_bit < pos || m.skel_bit > s.skel_bits)
          return *err = where + ": insertion points out of order", false;
        ld = cavlc::MbLead{uint64_t{skel_off} * 8 + static_cast<uint64_t>(pos),
                           static_cast<uint32_t>(m.skel_bit - pos), 0};
        pos = m.skel_bit;
        ++f.coded;
        if (m.kind != GPUEC_MB_NORMAL || m.cbp != 0) ++f.residual;
      }
      f.recs.push_back(m);
      f.slice_id.push_back(k);
      f.lead.push_back(ld);
    }
    // The skeleton copy with rbsp_stop_one_bit after it (stage.cpp, gpuec_slice_defer).
    const int64_t stop = s.skel_bits;
    f.skel.resize(skel_off + static_cast<size_t>(stop >> 3) + 1 + 4, 0);
    uint8_t* dst = f.skel.data() + skel_off;
    std::memcpy(dst, c.skeleton.data(), c.skeleton.size());
    dst[stop >> 3] = static_cast<uint8_t>((stop & 7 ? dst[stop >> 3] & (0xff00u >> (stop & 7)) : 0) |
                                          (0x80u >> (stop & 7)));
    f.skel_used = (skel_off + static_cast<size_t>(stop >> 3) + 1 + 3) & ~size_t{3};
    f.fslices.push_back(cavlc::FrameSlice{f.n, static_cast<int32_t>(hd.record_count),
                                          uint64_t{skel_off} * 8 + static_cast<uint64_t>(pos),
                                          static_cast<uint32_t>(s.skel_bits - pos + 1), 0});
    f.n += static_cast<int>(hd.record_count);
    f.slices.push_back(std::move(s));
  }
  for (size_t i = 0; i < frames->size(); ++i)
    if ((*frames)[i].n != (*frames)[i].w * (*frames)[i].h)
      return *err = "frame " + std::to_string(i) + ": its slices cover " + std::to_string((*frames)[i].n) + " of " +
                    std::to_string((*frames)[i].w * (*frames)[i].h) + " macroblocks", false;
  return true;
}

// One row of the CSV.
struct Row {
  int frame = 0, w = 0, h = 0, slices = 0, mbs = 0, coded = 0, residual = 0;
  uint64_t skel_bytes = 0, payload_bytes = 0, out_bytes = 0, h2d = 0, d2h = 0;
  double gpu_code = 0, gpu_code_2p = 0, gpu_stage = 0, gpu_stage_2p = 0, gpu_enc = 0, gpu_enc_2p = 0,
         gpu_enc_tc = 0, xfer = 0, cpu_stage = 0, cpu_twin = 0;
};

// The arena of a frame part, host and device alike (cuda/coder.cu): [0, skel_cap) skeleton copies,
// 256 zero bytes, the records (256-byte aligned), the slots (256-byte aligned).
struct ArenaLayout {
  size_t skel_cap = 0, rec_off = 0, slot_off = 0, bytes = 0;
  ArenaLayout(size_t skel_bytes, size_t mbs) {
    skel_cap = round_up(std::max<size_t>(skel_bytes, 1), 256);
    rec_off = skel_cap + 256;
    slot_off = round_up(rec_off + mbs * sizeof(gpuec_mb), 256);
    bytes = slot_off + mbs * cavlc::kMbSlots * cavlc::kSlotBytes;
  }
};

cavlc::FrameAssembly assembly(const uint8_t* arena, const ArenaLayout& a, const uint16_t* len,
                              const cavlc::MbLead* lead, const cavlc::FrameSlice* slices, const Frame& f) {
  cavlc::FrameAssembly in{};
  in.arena = arena;
  in.records_bit = uint64_t{a.rec_off} * 8;
  in.slots_bit = uint64_t{a.slot_off} * 8;
  in.zero_bit = uint64_t{a.skel_cap} * 8;
  in.records = reinterpret_cast<const gpuec_mb*>(arena + a.rec_off);
  in.slot_len = len;
  in.lead = lead;
  in.slices = slices;
  in.n_mbs = f.n;
  in.n_slices = static_cast<int32_t>(f.fslices.size());
  return in;
}

struct Options {
  int repeats = 30, warmup = 5, cpu_repeats = -1, device = 0;
  double link_gbs = 55;
  bool cpu_only = false;
};

double time_host(int warmup, int repeats, const std::function<void()>& call) {
  for (int r = 0; r < warmup; ++r) call();
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = Clock::now();
    call();
    t.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  return median(t);
}

// Everything one capture needs, sized for its largest frame: the twin's host arena and outputs, the
// device copies for the resident measurements, and a stage (backend cuda) for the C API measurement.
class CaptureBench {
 public:
  CaptureBench(const std::vector<Frame>& frames, const Options& o) : o_(o), w_(frames[0].w), h_(frames[0].h) {
    const int mbs = w_ * h_;
    size_t max_skel = 0;
    int64_t max_slice_bound = 0;
    for (const Frame& f : frames) {
      max_skel = std::max(max_skel, f.skel_used);
      max_slices_ = std::max(max_slices_, f.fslices.size());
      max_out_ = std::max(max_out_, vle::packed_bytes(cavlc::assemble_frame_bound_bits(f.skel_used * 8, f.n,
                                                                                         f.fslices.size())));
      for (const Slice& s : f.slices)
        max_slice_bound = std::max(max_slice_bound, s.skel_bits + static_cast<int64_t>(s.recs.size()) *
                                                                      cavlc::kMaxMbResidualBits + 8);
    }
    max_out_ = round_up(max_out_, 4096);
    lay_ = ArenaLayout(max_skel, static_cast<size_t>(mbs));
    nslots_ = static_cast<size_t>(mbs) * cavlc::kMbSlots;
    h_arena_.assign(lay_.bytes, 0);
    twin_out_.resize(max_out_);
    twin_len_.resize(nslots_);
    twin_res_.resize(max_slices_);
    cpu_out_.resize(vle::bits_to_bytes(static_cast<uint64_t>(max_slice_bound)));
    totals_.resize(static_cast<size_t>(mbs));
    if (o_.cpu_only) return;

    g_out_.resize(max_out_);
    g_len_.resize(nslots_);
    g_slots_.resize(nslots_ * cavlc::kSlotBytes);
    g_res_.resize(max_slices_);
    ws_code_ = cavlc::code_frame_cuda_workspace_bytes(w_, h_);
    ws_asm_ = cavlc::assemble_frame_cuda_workspace_bytes(mbs, static_cast<int>(max_slices_));
    CHECK_CUDA(cudaSetDevice(o_.device));
    CHECK_CUDA(cudaMalloc(&d_arena_, lay_.bytes));
    CHECK_CUDA(cudaMalloc(&d_out_, max_out_));
    CHECK_CUDA(cudaMalloc(&d_sid_, mbs * sizeof(int32_t)));
    CHECK_CUDA(cudaMalloc(&d_lead_, mbs * sizeof(cavlc::MbLead)));
    CHECK_CUDA(cudaMalloc(&d_slices_, max_slices_ * sizeof(cavlc::FrameSlice)));
    CHECK_CUDA(cudaMalloc(&d_res_, max_slices_ * sizeof(cavlc::SliceResult)));
    CHECK_CUDA(cudaMalloc(&d_total_, sizeof(uint64_t)));
    CHECK_CUDA(cudaMalloc(&d_len_, nslots_ * sizeof(uint16_t)));
    CHECK_CUDA(cudaMalloc(&d_ws_code_, ws_code_));
    CHECK_CUDA(cudaMalloc(&d_ws_asm_, ws_asm_));
    ws_enc_ = cavlc::encode_frame_cuda_workspace_bytes(mbs);
    CHECK_CUDA(cudaMalloc(&d_ws_enc_, ws_enc_));
    CHECK_CUDA(cudaMemset(d_ws_enc_, 0, ws_enc_));
    CHECK_CUDA(cudaMalloc(&d_tc_, static_cast<size_t>(mbs) * cavlc::kTcRecordBytes));
    CHECK_CUDA(cudaMemset(d_arena_, 0, lay_.bytes));
    CHECK_CUDA(cudaStreamCreate(&stream_));
    stage_ = gpuec_stage_create(w_, h_, GPUEC_BACKEND_CUDA, o_.device, note_, sizeof note_);
    if (!stage_ || gpuec_stage_backend(stage_) != GPUEC_BACKEND_CUDA) {
      std::fprintf(stderr, "cavlcu-bench-frames: the stage has no cuda backend: %s\n", note_);
      std::exit(kExitCuda);
    }
  }

  ~CaptureBench() {
    if (o_.cpu_only) return;
    gpuec_stage_destroy(stage_);
    CHECK_CUDA(cudaStreamDestroy(stream_));
    for (void* p : {static_cast<void*>(d_arena_), static_cast<void*>(d_out_), static_cast<void*>(d_sid_),
                    static_cast<void*>(d_lead_), static_cast<void*>(d_slices_), static_cast<void*>(d_res_),
                    static_cast<void*>(d_total_), static_cast<void*>(d_len_), d_ws_code_, d_ws_asm_, d_ws_enc_,
                    static_cast<void*>(d_tc_)})
      CHECK_CUDA(cudaFree(p));
  }

  Row frame(const Frame& f, const std::string& what) {
    Row row;
    row.w = f.w;
    row.h = f.h;
    row.slices = static_cast<int>(f.fslices.size());
    row.mbs = f.n;
    row.coded = f.coded;
    row.residual = f.residual;
    row.skel_bytes = f.skel_used;
    const int ns = row.slices;

    // The CPU twin, against the capture.
    std::memcpy(h_arena_.data(), f.skel.data(), f.skel_used);
    std::memcpy(h_arena_.data() + lay_.rec_off, f.recs.data(), f.recs.size() * sizeof(gpuec_mb));
    std::memset(h_arena_.data() + lay_.slot_off, 0, nslots_ * cavlc::kSlotBytes);
    const cavlc::FrameAssembly h_in = assembly(h_arena_.data(), lay_, twin_len_.data(), f.lead.data(),
                                               f.fslices.data(), f);
    auto twin = [&] {
      if (cavlc::code_frame_ref(h_in.records, f.w, f.h, f.slice_id.data(), h_arena_.data() + lay_.slot_off,
                                twin_len_.data()) != 0)
        mismatch(what + ": code_frame_ref rejects the records");
      return cavlc::assemble_frame_ref(h_in, twin_out_.data(), twin_out_.size(), twin_res_.data());
    };
    twin_total_ = twin();
    if (twin_total_ == UINT64_MAX) mismatch(what + ": assemble_frame_ref rejects the frame part");
    row.out_bytes = vle::packed_bytes(twin_total_);
    for (int k = 0; k < ns; ++k) {
      const cavlc::CaptureSliceHeader& hd = f.slices[k].cap->head;
      const int64_t rbsp = static_cast<int64_t>(twin_res_[k].bits) - 1;  // the stop bit came with the skeleton
      if (rbsp != hd.out_bits ||
          cavlc::capture_hash(twin_out_.data() + twin_res_[k].out_bit / 8, rbsp) != hd.out_hash)
        mismatch(what + " slice " + std::to_string(k) + ": the CPU twin gives " + std::to_string(rbsp) +
                 " bits, the capture " + std::to_string(hd.out_bits) + " (or another hash)");
      row.payload_bytes += (twin_res_[k].bits + 7) / 8;
    }
    // As cuda/coder.cu moves them: 4 uploads; the output in whole 16-byte units, the results, the total.
    row.h2d = static_cast<uint64_t>(f.n) *
                  (sizeof(gpuec_mb) + sizeof(int32_t) + sizeof(cavlc::MbLead) + cavlc::kTcRecordBytes) +
              static_cast<uint64_t>(ns) * sizeof(cavlc::FrameSlice) + f.skel_used;
    row.d2h = round_up(row.out_bytes, 16) + static_cast<uint64_t>(ns) * sizeof(cavlc::SliceResult) + sizeof(uint64_t);

    if (!o_.cpu_only) {
      gpu_resident(f, what, &row);
      through_stage(f, what, &row);
    } else {
      row.gpu_code = row.gpu_code_2p = row.gpu_stage = row.gpu_stage_2p = row.gpu_enc = row.gpu_enc_2p = row.gpu_enc_tc = row.xfer = NAN;
    }

    // The CPU stage (encode_slice_ref per slice, as gpuec-bench-stage) and the CPU twin, one core.
    auto cpu_stage = [&](bool check) {
      for (int k = 0; k < ns; ++k) {
        const Slice& s = f.slices[k];
        vle::BitWriter bw(cpu_out_.data(), cpu_out_.size());
        const cavlc::SliceLayout layout{f.w, s.cap->head.first_mb, 0, s.skel_bits};
        const int r = cavlc::encode_slice_ref(s.recs.data(), s.recs.size(), layout, s.cap->skeleton.data(),
                                              totals_.data(), bw);
        const int64_t bits = static_cast<int64_t>(bw.bits());
        bw.flush();
        if (check && (r != 0 || bw.overflowed() || bits != s.cap->head.out_bits ||
                      cavlc::capture_hash(cpu_out_.data(), bits) != s.cap->head.out_hash))
          mismatch(what + " slice " + std::to_string(k) + ": encode_slice_ref differs from the capture");
      }
    };
    cpu_stage(true);
    const int cpu_reps = o_.cpu_repeats > 0 ? o_.cpu_repeats : o_.repeats;
    const int cpu_warm = std::min(o_.warmup, 2);
    row.cpu_stage = time_host(cpu_warm, cpu_reps, [&] { cpu_stage(false); });
    row.cpu_twin = time_host(cpu_warm, cpu_reps, [&] { twin(); });
    return row;
  }

 private:
  // code_frame_cuda (+ assemble_frame_cuda) on the resident inputs: checked against the twin once per
  // variant, then timed with CUDA events.
  void gpu_resident(const Frame& f, const std::string& what, Row* row) {
    const int ns = static_cast<int>(f.fslices.size());
    CHECK_CUDA(cudaMemcpy(d_arena_, f.skel.data(), f.skel_used, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(d_arena_ + lay_.rec_off, f.recs.data(), f.recs.size() * sizeof(gpuec_mb),
                          cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(d_sid_, f.slice_id.data(), f.n * sizeof(int32_t), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(d_lead_, f.lead.data(), f.n * sizeof(cavlc::MbLead), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(d_slices_, f.fslices.data(), ns * sizeof(cavlc::FrameSlice), cudaMemcpyHostToDevice));
    const cavlc::FrameAssembly d_in = assembly(d_arena_, lay_, d_len_, d_lead_, d_slices_, f);
    auto code = [&](cavlc::FrameCudaVariant v) {
      check_call(cavlc::code_frame_cuda_variant(v, d_in.records, f.w, f.h, d_sid_, d_arena_ + lay_.slot_off, d_len_,
                                                d_ws_code_, ws_code_, stream_),
                 "code_frame_cuda");
    };
    auto stage = [&](cavlc::FrameCudaVariant v) {
      code(v);
      check_call(cavlc::assemble_frame_cuda(d_in, d_out_, max_out_, d_res_, d_total_, d_ws_asm_, ws_asm_, stream_),
                 "assemble_frame_cuda");
    };
    // The stage's TotalCoeff records (computed at its commit check), uploaded with the other inputs.
    std::vector<uint8_t> tc(static_cast<size_t>(f.n) * cavlc::kTcRecordBytes, 0);
    for (int a = 0; a < f.n; ++a) {
      uint8_t totals[GPUEC_TC_COUNT];
      if (cavlc::mb_totals(f.recs[static_cast<size_t>(a)], totals) >= 0)
        cavlc::tc_record(totals, tc.data() + static_cast<size_t>(a) * cavlc::kTcRecordBytes);
    }
    CHECK_CUDA(cudaMemcpy(d_tc_, tc.data(), tc.size(), cudaMemcpyHostToDevice));
    auto encode = [&](cavlc::FrameCudaVariant v, bool host_tc = false) {
      check_call(cavlc::encode_frame_cuda(v, d_in, f.w, d_sid_, d_len_, d_out_, max_out_, d_res_, d_total_, d_ws_enc_,
                                          ws_enc_, stream_, host_tc ? d_tc_ : nullptr),
                 "encode_frame_cuda");
    };
    const uint64_t out_bytes = vle::packed_bytes(twin_total_);
    for (int run = 0; run < 5; ++run) {
      const cavlc::FrameCudaVariant v = run % 2 || run == 4 ? cavlc::FrameCudaVariant::kTwoPass
                                                            : cavlc::FrameCudaVariant::kFused;
      const std::string vw = what + " (" + (run < 2 ? "code + assemble, " : "encode_frame_cuda, ") +
                             cavlc::frame_cuda_variant_name(v) + (run == 4 ? ", host TotalCoeff records" : "") + ")";
      // Slots zeroed on both sides (only the code words are written, frame_cuda.h); a canary after the output.
      CHECK_CUDA(cudaMemset(d_arena_ + lay_.slot_off, 0, nslots_ * cavlc::kSlotBytes));
      CHECK_CUDA(cudaMemset(d_out_, 0xA5, max_out_));
      if (run < 2) stage(v); else encode(v, run == 4);
      CHECK_CUDA(cudaStreamSynchronize(stream_));
      uint64_t total = 0;
      CHECK_CUDA(cudaMemcpy(&total, d_total_, sizeof total, cudaMemcpyDeviceToHost));
      CHECK_CUDA(cudaMemcpy(g_len_.data(), d_len_, nslots_ * sizeof(uint16_t), cudaMemcpyDeviceToHost));
      CHECK_CUDA(cudaMemcpy(g_slots_.data(), d_arena_ + lay_.slot_off, g_slots_.size(), cudaMemcpyDeviceToHost));
      CHECK_CUDA(cudaMemcpy(g_res_.data(), d_res_, ns * sizeof(cavlc::SliceResult), cudaMemcpyDeviceToHost));
      if (g_len_ != twin_len_) mismatch(vw + ": slot lengths differ from code_frame_ref");
      if (std::memcmp(g_slots_.data(), h_arena_.data() + lay_.slot_off, g_slots_.size()) != 0)
        mismatch(vw + ": slot bits differ from code_frame_ref");
      if (total != twin_total_) mismatch(vw + ": total bits differ from assemble_frame_ref");
      if (std::memcmp(g_res_.data(), twin_res_.data(), ns * sizeof(cavlc::SliceResult)) != 0)
        mismatch(vw + ": slice results differ from assemble_frame_ref");
      const size_t past = std::min<size_t>(64, max_out_ - out_bytes);
      CHECK_CUDA(cudaMemcpy(g_out_.data(), d_out_, out_bytes + past, cudaMemcpyDeviceToHost));
      if (std::memcmp(g_out_.data(), twin_out_.data(), out_bytes) != 0)
        mismatch(vw + ": frame output differs from assemble_frame_ref");
      for (size_t i = 0; i < past; ++i)
        if (g_out_[out_bytes + i] != 0xA5) mismatch(vw + ": assemble_frame_cuda writes past the frame output");
    }
    row->gpu_code = time_gpu([&] { code(cavlc::FrameCudaVariant::kFused); });
    row->gpu_code_2p = time_gpu([&] { code(cavlc::FrameCudaVariant::kTwoPass); });
    row->gpu_stage = time_gpu([&] { stage(cavlc::FrameCudaVariant::kFused); });
    row->gpu_stage_2p = time_gpu([&] { stage(cavlc::FrameCudaVariant::kTwoPass); });
    row->gpu_enc = time_gpu([&] { encode(cavlc::FrameCudaVariant::kFused); });
    row->gpu_enc_2p = time_gpu([&] { encode(cavlc::FrameCudaVariant::kTwoPass); });
    row->gpu_enc_tc = time_gpu([&] { encode(cavlc::FrameCudaVariant::kTwoPass, true); });
  }

  double time_gpu(const std::function<void()>& call) {
    return gpuec_bench::event_median_us(stream_, o_.warmup, o_.repeats, call, kExitCuda);
  }

  // The stage's C API, backend cuda: the frame's slices fed untimed, gpuec_frame_submit +
  // gpuec_frame_complete timed on the host clock, every slice checked after every run.
  void through_stage(const Frame& f, const std::string& what, Row* row) {
    const int ns = static_cast<int>(f.fslices.size());
    uint8_t tc[GPUEC_TC_COUNT];
    auto feed = [&] {
      for (int k = 0; k < ns; ++k) {
        const Slice& s = f.slices[k];
        gpuec_slice_begin(stage_, s.cap->head.first_mb, 0);
        for (const gpuec_mb& m : s.recs) {
          if (m.kind == GPUEC_MB_SKIP) {
            if (gpuec_mb_skip(stage_, m.mb_addr) != GPUEC_OK) mismatch(what + ": gpuec_mb_skip refuses a record");
          } else {
            *gpuec_mb_next(stage_) = m;
            if (gpuec_mb_commit(stage_, tc) != GPUEC_OK) mismatch(what + ": gpuec_mb_commit refuses a record");
          }
        }
        if (gpuec_slice_defer(stage_, s.cap->skeleton.data(), s.skel_bits, k) != k)
          mismatch(what + ": gpuec_slice_defer refuses slice " + std::to_string(k));
      }
    };
    auto check = [&](int n) {
      if (gpuec_stage_note(stage_, note_, sizeof note_) || gpuec_stage_backend(stage_) != GPUEC_BACKEND_CUDA) {
        std::fprintf(stderr, "cavlcu-bench-frames: %s: the stage left the GPU: %s\n", what.c_str(), note_);
        std::exit(kExitCuda);
      }
      if (n != ns) mismatch(what + ": gpuec_frame_complete returns " + std::to_string(n));
      for (int k = 0; k < ns; ++k) {
        const cavlc::CaptureSliceHeader& hd = f.slices[k].cap->head;
        int tag = -1;
        const uint8_t* payload = nullptr;
        int64_t bytes = 0, added = 0;
        if (gpuec_frame_slice(stage_, k, &tag, &payload, &bytes, &added) != GPUEC_OK || tag != k)
          mismatch(what + ": gpuec_frame_slice fails for slice " + std::to_string(k));
        const int64_t rbsp = f.slices[k].skel_bits + added;  // payload bits without rbsp_slice_trailing_bits
        if (rbsp != hd.out_bits || cavlc::capture_hash(payload, rbsp) != hd.out_hash)
          mismatch(what + " slice " + std::to_string(k) + ": the stage gives " + std::to_string(rbsp) +
                   " bits, the capture " + std::to_string(hd.out_bits) + " (or another hash)");
        if (bytes != static_cast<int64_t>((twin_res_[k].bits + 7) / 8) ||
            std::memcmp(payload, twin_out_.data() + twin_res_[k].out_bit / 8, static_cast<size_t>(bytes)) != 0)
          mismatch(what + " slice " + std::to_string(k) + ": the stage's payload differs from the CPU twin's");
      }
    };
    std::vector<double> t;
    for (int r = 0; r < o_.warmup + o_.repeats; ++r) {
      feed();
      const auto t0 = Clock::now();
      if (gpuec_frame_submit(stage_) != GPUEC_OK) mismatch(what + ": gpuec_frame_submit fails");
      const int n = gpuec_frame_complete(stage_);
      const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
      check(n);
      if (r >= o_.warmup) t.push_back(us);
    }
    row->xfer = median(t);
  }

  const Options& o_;
  int w_, h_;
  size_t max_slices_ = 0, nslots_ = 0;
  uint64_t max_out_ = 0;
  ArenaLayout lay_{0, 0};
  // host
  std::vector<uint8_t> h_arena_, twin_out_, g_out_, g_slots_, cpu_out_;
  std::vector<uint16_t> twin_len_, g_len_;
  std::vector<cavlc::SliceResult> twin_res_, g_res_;
  std::vector<cavlc::MbTotals> totals_;
  uint64_t twin_total_ = 0;
  // device
  uint8_t *d_arena_ = nullptr, *d_out_ = nullptr;
  int32_t* d_sid_ = nullptr;
  cavlc::MbLead* d_lead_ = nullptr;
  cavlc::FrameSlice* d_slices_ = nullptr;
  cavlc::SliceResult* d_res_ = nullptr;
  uint64_t* d_total_ = nullptr;
  uint16_t* d_len_ = nullptr;
  void *d_ws_code_ = nullptr, *d_ws_asm_ = nullptr, *d_ws_enc_ = nullptr;
  uint8_t* d_tc_ = nullptr;
  size_t ws_code_ = 0, ws_asm_ = 0, ws_enc_ = 0;
  cudaStream_t stream_ = nullptr;
  gpuec_stage* stage_ = nullptr;
  char note_[512] = "";
};

// Benchmarks one capture. Exits on any failure.
std::vector<Row> bench_capture(const std::string& path, const Options& o) {
  std::vector<cavlc::CapturedSlice> caps;
  std::string err;
  if (!cavlc::read_capture(path, caps, err)) {
    std::fprintf(stderr, "cavlcu-bench-frames: %s\n", err.c_str());
    std::exit(kExitCapture);
  }
  std::vector<Frame> frames;
  if (!build_frames(caps, &frames, &err)) {
    std::fprintf(stderr, "cavlcu-bench-frames: %s: %s\n", path.c_str(), err.c_str());
    std::exit(kExitCapture);
  }
  const std::string name = capture_name(path);
  CaptureBench bench(frames, o);
  std::vector<Row> rows;
  for (size_t fi = 0; fi < frames.size(); ++fi) {
    const std::string what = name + " frame " + std::to_string(fi);
    rows.push_back(bench.frame(frames[fi], what));
    Row& r = rows.back();
    r.frame = static_cast<int>(fi);
    std::fprintf(stderr, "cavlcu-bench-frames: %s: %d slices, %d MBs (%d coded): gpu stage %.1f us, with transfers "
                 "%.1f us, cpu stage %.1f us\n", what.c_str(), r.slices, r.mbs, r.coded, r.gpu_stage, r.xfer,
                 r.cpu_stage);
  }
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::string csv_path;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "-h" || a == "--help") {
      usage(stdout);
      return 0;
    } else if (const int t = gpuec_bench::timing_option(argc, argv, i, &o.repeats, &o.warmup)) {
      if (t < 0) return usage(stderr), kExitUsage;
    } else if (a == "--cpu-repeats" && has_value) {
      if (!parse_int(argv[++i], 1, &o.cpu_repeats)) return usage(stderr), kExitUsage;
    } else if (a == "--device" && has_value) {
      if (!parse_int(argv[++i], 0, &o.device)) return usage(stderr), kExitUsage;
    } else if (a == "--link-gbs" && has_value) {
      char* end = nullptr;
      o.link_gbs = std::strtod(argv[++i], &end);
      if (*end || !(o.link_gbs > 0)) return usage(stderr), kExitUsage;
    } else if (a == "--cpu-only") {
      o.cpu_only = true;
    } else if (a == "--csv" && has_value) {
      csv_path = argv[++i];
    } else if (a.size() > 1 && a[0] == '-') {
      std::fprintf(stderr, "cavlcu-bench-frames: unknown option or missing value: %s\n", a.c_str());
      return usage(stderr), kExitUsage;
    } else {
      paths.push_back(a);
    }
  }
  if (paths.empty()) {
    std::string dir;
    paths = default_captures(&dir);
    if (paths.empty()) {
      std::printf("cavlcu-bench-frames: skipped: no CAPTURE given and no *.cap in %s (tools/bench/bench-cavlcu.sh "
                  "makes captures and runs this benchmark)\n", dir.c_str());
      return 0;
    }
  }
  // This process must not write a capture of its own (GPUEC_CAPTURE) or fail on purpose.
  unsetenv("GPUEC_CAPTURE");
  unsetenv("GPUEC_CUDA_FAIL_AT_FRAME");

  files::Output csv_out;  // tools/cli/files.h: a temporary file renamed onto FILE at the end
  files::Output* csv = nullptr;
  std::string why;
  bool csv_ok = true;
  if (!csv_path.empty()) {
    if (!csv_out.open(csv_path, files::Output::Options{true, paths}, &why)) {
      std::fprintf(stderr, "cavlcu-bench-frames: %s\n", why.c_str());
      return kExitUsage;
    }
    csv = &csv_out;
    csv_ok = csv->print(&why, "capture,frame,mb_width,mb_height,slices,mbs,coded_mbs,residual_mbs,skeleton_bytes,"
                      "payload_bytes,output_bytes,h2d_bytes,d2h_bytes,gpu_code_us,gpu_code_twopass_us,gpu_stage_us,"
                      "gpu_stage_twopass_us,stage_xfer_us,cpu_stage_us,cpu_twin_us,gpu_encode_us,"
                      "gpu_encode_twopass_us,gpu_encode_hosttc_us\n");
  }
  std::string gpu_name = "no GPU (--cpu-only)";
  if (!o.cpu_only) gpu_name = gpuec_bench::device_description(o.device, kExitCuda);
  std::printf("# cavlcu-bench-frames: %s; GPU: CUDA events, median of %d after %d warm-up; stage with transfers: "
              "host clock; CPU: one core, median of %d\n", gpu_name.c_str(), o.repeats, o.warmup,
              o.cpu_repeats > 0 ? o.cpu_repeats : o.repeats);
  std::printf("# medians over the frames of the per-frame medians; times in us; link_us: (H2D + D2H) bytes at %.0f "
              "GB/s; xfer_gbs: (H2D + D2H) bytes / stage_xfer\n", o.link_gbs);
  std::printf("%-24s %6s %7s %7s %8s %8s %9s %9s %8s %8s %8s %9s %10s %10s %10s %9s %9s %9s %8s %8s\n",
              "capture", "frames", "MBs", "coded", "gpu_code", "code_2p", "gpu_stage", "stage_2p", "encode", "enc_2p",
              "enc_htc", "xfer",
              "cpu_stage", "cpu_twin",
              "cpu/stage", "cpu/xfer", "h2d_KiB", "d2h_KiB", "link_us", "xfer_gbs");
  for (const std::string& path : paths) {
    const std::vector<Row> rows = bench_capture(path, o);
    const std::string name = capture_name(path);
    auto col = [&](auto get) {
      std::vector<double> v;
      for (const Row& r : rows) v.push_back(static_cast<double>(get(r)));
      return median(v);
    };
    for (const Row& r : rows)
      if (csv)
        csv_ok = csv_ok && csv->print(&why, "%s,%d,%d,%d,%d,%d,%d,%d,%llu,%llu,%llu,%llu,%llu,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f\n",
                     name.c_str(), r.frame, r.w, r.h, r.slices, r.mbs, r.coded, r.residual,
                     static_cast<unsigned long long>(r.skel_bytes), static_cast<unsigned long long>(r.payload_bytes),
                     static_cast<unsigned long long>(r.out_bytes), static_cast<unsigned long long>(r.h2d),
                     static_cast<unsigned long long>(r.d2h), r.gpu_code, r.gpu_code_2p, r.gpu_stage, r.gpu_stage_2p,
                     r.xfer, r.cpu_stage, r.cpu_twin, r.gpu_enc, r.gpu_enc_2p, r.gpu_enc_tc);
    const double gs = col([](const Row& r) { return r.gpu_stage; });
    const double xf = col([](const Row& r) { return r.xfer; });
    const double cs = col([](const Row& r) { return r.cpu_stage; });
    const double moved = col([](const Row& r) { return r.h2d + r.d2h; });
    std::printf("%-24s %6zu %7.0f %7.0f %8.1f %8.1f %9.1f %9.1f %8.1f %8.1f %8.1f %9.1f %10.1f %10.1f %10.2f %9.2f "
                "%9.0f %9.0f %8.1f %8.2f\n",
                name.c_str(), rows.size(), col([](const Row& r) { return r.mbs; }),
                col([](const Row& r) { return r.coded; }), col([](const Row& r) { return r.gpu_code; }),
                col([](const Row& r) { return r.gpu_code_2p; }), gs, col([](const Row& r) { return r.gpu_stage_2p; }),
                col([](const Row& r) { return r.gpu_enc; }), col([](const Row& r) { return r.gpu_enc_2p; }),
                col([](const Row& r) { return r.gpu_enc_tc; }), xf, cs, col([](const Row& r) { return r.cpu_twin; }), cs / gs, cs / xf,
                col([](const Row& r) { return r.h2d; }) / 1024, col([](const Row& r) { return r.d2h; }) / 1024,
                moved / (o.link_gbs * 1e3), moved / xf * 1e-3);
    std::fflush(stdout);
  }
  if (csv && !(csv_ok && csv->commit(&why))) {
    std::fprintf(stderr, "cavlcu-bench-frames: %s\n", why.c_str());
    return kExitUsage;
  }
  std::printf(o.cpu_only ? "RESULT: every frame's CPU twin output equals the capture (GPU not run)\n"
                         : "RESULT: every frame's GPU output equals the CPU twin and the capture\n");
  return 0;
}
