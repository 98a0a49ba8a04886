// The threaded re-entropy (reentropy_threads.h). The calling thread reads the headers in stream order and
// lays every slice into a band of a batch (avc/recoder.h's bands) before it is parsed: its range is
// [first_mb, the next slice's first_mb - 1] when the next slice of the same picture starts after it (raster
// slices, one slice group), else up to the picture's end. Worker threads parse each slice straight into the
// batch coder's arrays (parse_slice_into: records, slice indices, leads, TotalCoeff records, skeleton); a
// closed batch whose last slice is parsed is coded by an idle worker (parse tasks go first), or by that
// worker when no parse waits (kCuda: on the GPU while the next batches are parsed), which escapes its
// slices. The calling thread writes the pieces in stream order. The calling thread reads only each slice's
// header (from an unescaped prefix); the worker unescapes the slice.
// kCuda (kAuto with a device): the GPU coders are made (kCuda: their device check at the first batch) and
// started in the background once the CPU work left outlasts their start (gpu_worth_starting); batches begun
// before they are ready, and batches that find every GPU coder busy, are CPU batches (one picture).
// A slice that runs past its range (overlapping slices), any parse error or backend failure stops this
// path: the caller then runs the sequential one.
#include "reentropy_threads.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "avc/headers.h"
#include "avc/slice_data.h"
#include "avc/slice_group.h"
#include "cavlc/frame.h"
#include "cavlc/frame_coder.h"
#include "gpu/device.h"

namespace avc {

namespace {

struct SliceJob {
  uint64_t nal_header = 0, nal_size = 0;  // the NAL unit in the input
  Rbsp rbsp;       // unescaped by the worker
  SliceHeader sh;  // parsed by the calling thread (stop_bit: by the worker)
  int64_t nal_index = 0;
  int32_t uid = 0;  // unique in the stream: a worker's PictureContext never holds it from another slice
  SliceTarget target;
  cavlc::FrameSlice fs{};
  // the output piece
  uint64_t begin = 0, end = 0, tail_begin = 0, tail_end = 0;
  size_t out_at = 0, out_bytes = 0;
  uint64_t residual_bits = 0;
  bool same = false;
};

struct Batch {
  // The coder it is filled into: its own CPU coder (one picture), or a GPU coder from the driver's pool
  // (many pictures), held until the batch is written.
  std::unique_ptr<cavlc::FrameCoder> cpu_coder, gpu_coder;
  int cpu_width = 0, cpu_rows = 0, gpu_width = 0, gpu_rows = 0;
  cavlc::FrameCoder* coder = nullptr;
  int width = 0, pic_mbs = 0, bands = 0, bands_used = 0;
  std::vector<uint8_t> occupied;  // the last band's reserved positions
  size_t skel_used = 0, skel_cap = 0;
  uint8_t* skel = nullptr;
  std::deque<SliceJob> jobs;  // references stay valid as it grows
  size_t n = 0;        // jobs in use
  size_t written = 0;  // jobs written out
  std::vector<int32_t> order, rank;
  std::vector<uint8_t> out;  // the escaped slices
  // guarded by the driver's mutex
  int parsing = 0;
  bool closed = false, coded = false;
};

class Driver {
 public:
  Driver(const uint8_t* data, const RecoderOptions& opt, ThreadedGpuCoders* gpu)
      : data_(data), opt_(opt), gpu_(gpu ? *gpu : own_gpu_) {}
  ~Driver() {
    {
      std::lock_guard<std::mutex> l(mu_);
      failed_ = true;  // what is still queued is dropped
    }
    stop_workers();
    for (std::unique_ptr<Batch>& b : ring_)  // a failed stream's GPU coders back to the pool (the session's)
      if (b->gpu_coder) gpu_.pool.push_back(ThreadedGpuCoders::Pooled{std::move(b->gpu_coder), b->gpu_width, b->gpu_rows});
  }

  bool run(const std::vector<NalUnit>& nals, std::vector<uint8_t>& out, ReentropyStats& st);

 private:
  struct Task {
    Batch* batch;
    SliceJob* job;  // nullptr: code the batch. A pointer, not an index: the dispatching thread may grow
                    // b.jobs (deque::emplace_back moves its map) while a worker parses
  };
  struct Item {  // an output piece in stream order: a NAL copied as it is, or a slice of a batch
    uint64_t begin, end;
    Batch* batch;
    size_t job;
  };

  void start_workers(int n);
  void stop_workers();
  void worker();
  void parse(Batch& b, SliceJob& job, PictureContext& pic);
  void code(Batch& b);

  bool configure(Batch& b, int width, int pic_mbs);
  bool take_gpu_coders();  // the pending ones into the pool; false: kCuda and they failed
  // Whether the CPU work left, at the workers' measured rate, lasts longer than starting the GPU costs.
  bool gpu_worth_starting();
  Batch* acquire();  // the next batch of the ring, written out and free
  void close();      // the batch being filled: coded once its slices are parsed
  bool dispatch(int32_t last_allowed);  // the pending slice, with its range
  bool wait_parsed(const Batch* b);     // b's slices (nullptr: every batch's) parsed
  bool write_until(const Batch* b);     // writes the pieces up to b's last (nullptr: all)
  bool failed() {
    std::lock_guard<std::mutex> l(mu_);
    return failed_;
  }

  const uint8_t* data_;
  RecoderOptions opt_;
  // The CUDA mode (kCuda, or kAuto): kGpuCoders GPU coders (one batch on the GPU, two being filled), made in
  // the background when worth it (configure); until they are ready, and while all are in use, batches are
  // CPU batches of one picture, as with kCpu.
  static constexpr int kGpuCoders = 3;
  bool cuda_mode_ = false;
  ThreadedGpuCoders own_gpu_;
  ThreadedGpuCoders& gpu_;  // own_gpu_ or the session's
  std::deque<Batch*> gpu_batches_;     // the batches holding one, in write order
  long long cuda_from_batch_ = -1;     // the test hook GPUEC_REENTROPY_CUDA_FROM_BATCH
  long long configured_ = 0;           // batches configured so far
  std::vector<std::unique_ptr<Batch>> ring_;
  size_t next_batch_ = 0;
  Batch* cur_ = nullptr;
  std::vector<Item> items_;
  size_t next_item_ = 0;
  std::vector<uint8_t>* out_ = nullptr;
  ReentropyStats* st_ = nullptr;

  // the slice waiting for the next header (its range)
  bool have_pending_ = false;
  SliceHeader pending_sh_;
  const NalUnit* pending_unit_ = nullptr;
  int32_t next_uid_ = 0;
  int64_t slice_nals_ = 0;  // slice NAL units in the stream
  SliceGroupMap groups_;  // the current picture's; changed only while no slice is being parsed

  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  std::deque<Task> tasks_, code_tasks_;  // parse tasks, code tasks
  std::vector<std::thread> threads_;
  bool stopping_ = false, failed_ = false;
  int parsing_total_ = 0;
  double parse_seconds_ = 0, code_seconds_ = 0;  // summed over the workers
  uint64_t parsed_bytes_ = 0;                    // slice NAL bytes parsed
  uint64_t slice_bytes_ = 0;                     // slice NAL bytes of the stream (set before the workers start)
};

void Driver::start_workers(int n) {
  for (int i = 0; i < n; ++i) threads_.emplace_back([this] { worker(); });
}

void Driver::stop_workers() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

void Driver::worker() {
  PictureContext pic;
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    work_cv_.wait(l, [&] { return stopping_ || !tasks_.empty() || !code_tasks_.empty(); });
    // Parsing first: a slice's parse is the long sequential part, coding a closed batch waits for an idle
    // worker (so with fewer slices than 2 x threads the second round of parses starts at once).
    std::deque<Task>& q = !tasks_.empty() ? tasks_ : code_tasks_;
    if (q.empty()) return;
    const Task t = q.front();
    q.pop_front();
    l.unlock();
    if (!t.job)
      code(*t.batch);
    else
      parse(*t.batch, *t.job, pic);
    l.lock();
  }
}

void Driver::parse(Batch& b, SliceJob& job, PictureContext& pic) {
  const auto t0 = std::chrono::steady_clock::now();
  bool ok = !failed();
  if (ok) {
    if (pic.n_mbs != b.pic_mbs || pic.mb_width != b.width) pic.reset(b.width, b.pic_mbs);
    Error err;
    // The calling thread read the header from a prefix (HeaderParser::parse_slice_header_only): the whole
    // RBSP and its stop bit here.
    ok = extract_rbsp(data_ + job.nal_header, size_t(job.nal_size), job.rbsp, err) &&
         rbsp_stop_bit(job.rbsp.bytes.data(), job.rbsp.bytes.size(), &job.sh.stop_bit) &&
         parse_slice_into(job.rbsp.bytes.data(), job.rbsp.bytes.size(), job.sh, groups_, job.uid, pic, job.target, err);
    if (ok) {
      SliceTarget& t = job.target;
      // rbsp_stop_one_bit after the skeleton, in place (cavlc::put_skeleton's layout)
      const unsigned r = unsigned(t.skel_bits & 7);
      uint8_t& last = t.skel[t.skel_bits >> 3];
      last = uint8_t((r ? last & (0xff00u >> r) : 0) | (0x80u >> r));
      job.fs = cavlc::FrameSlice{int32_t(t.base) + t.first_mb, t.last_mb - t.first_mb + 1, t.skel_bit0 + t.tail_bit,
                                 uint32_t(t.skel_bits - t.tail_bit + 1), 0};
    }
  }
  bool code_now = false, queued = false;
  {
    std::lock_guard<std::mutex> l(mu_);
    parse_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    parsed_bytes_ += uint64_t(job.nal_size);
    if (!ok) failed_ = true;
    --b.parsing;
    --parsing_total_;
    code_now = b.closed && b.parsing == 0;
    if (code_now && !tasks_.empty()) {  // this worker parses on; an idle one codes
      code_tasks_.push_back(Task{&b, nullptr});
      queued = true;
    }
  }
  done_cv_.notify_all();
  if (queued)
    work_cv_.notify_one();
  else if (code_now)
    code(b);
}


void Driver::code(Batch& b) {
  const auto t0 = std::chrono::steady_clock::now();
  bool ok = !failed();
  std::string why;
  if (ok) {
    const size_t n = b.n;
    b.order.resize(n);
    b.rank.resize(n);
    for (size_t i = 0; i < n; ++i) b.order[i] = int32_t(i);
    std::sort(b.order.begin(), b.order.end(),
              [&](int32_t x, int32_t y) { return b.jobs[size_t(x)].fs.first_mb < b.jobs[size_t(y)].fs.first_mb; });
    bool identity = true;
    cavlc::FrameSlice* fs = b.coder->slices();
    for (size_t r = 0; r < n; ++r) {
      b.rank[size_t(b.order[r])] = int32_t(r);
      identity &= b.order[r] == int32_t(r);
      fs[r] = b.jobs[size_t(b.order[r])].fs;
    }
    // Filler where no slice reserved (reserved ranges, in the same order, are disjoint).
    SliceTarget all;
    all.records = b.coder->records();
    all.slice_ids = b.coder->slice_ids();
    all.leads = b.coder->leads();
    all.tc_records = b.coder->tc_records();
    const int32_t used = b.bands_used * b.pic_mbs;
    int32_t next = 0;
    for (size_t r = 0; r < n; ++r) {
      const SliceTarget& t = b.jobs[size_t(b.order[r])].target;
      const int32_t lo = int32_t(t.base) + t.first_allowed, hi = int32_t(t.base) + t.last_allowed;
      if (lo > next) write_filler(all, next, lo - 1);
      next = std::max(next, hi + 1);
    }
    if (next < used) write_filler(all, next, used - 1);
    if (!identity) {
      int32_t* ids = all.slice_ids;
      for (int32_t g = 0; g < used; ++g)
        if (ids[g] >= 0) ids[g] = b.rank[size_t(ids[g])];
    }
    const uint8_t* coded = nullptr;
    const cavlc::SliceResult* res = nullptr;
    ok = b.coder->submit(used / b.width, int(n), b.skel_used, &why) && b.coder->complete(&coded, &res, &why);
    if (ok) {
      size_t bound = 0;
      for (size_t i = 0; i < n; ++i) bound += escaped_size_bound(size_t((res[i].bits + 7) / 8));
      if (b.out.size() < bound) b.out.resize(std::max(bound, 2 * b.out.size()));
      size_t at = 0;
      for (size_t i = 0; i < n; ++i) {
        SliceJob& job = b.jobs[i];
        const cavlc::SliceResult& r = res[size_t(b.rank[i])];
        const uint8_t* rbsp = coded + r.out_bit / 8;
        const size_t bytes = size_t((r.bits + 7) / 8);
        job.residual_bits = r.bits - 1 - job.target.skel_bits;
        job.out_at = at;
        job.out_bytes = escape_rbsp(rbsp, bytes, b.out.data() + at);
        job.same = job.rbsp.standard_escaping
                       ? job.out_bytes == job.tail_begin - job.end &&
                             std::memcmp(b.out.data() + at, data_ + job.end, job.out_bytes) == 0
                       : bytes == job.rbsp.bytes.size() && std::memcmp(rbsp, job.rbsp.bytes.data(), bytes) == 0;
        at += job.out_bytes;
      }
    }
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    code_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!ok) failed_ = true;
    b.coded = true;
  }
  done_cv_.notify_all();
}

bool Driver::take_gpu_coders() {
  gpu_.taken = true;
  std::vector<std::unique_ptr<cavlc::PendingCudaCoder>> pending;
  pending.swap(gpu_.pending);
  for (std::unique_ptr<cavlc::PendingCudaCoder>& p : pending) {
    std::string why;
    std::unique_ptr<cavlc::FrameCoder> c = p->take(&why);
    if (!c) {  // kCuda: the sequential path reports it; kAuto: the CPU from here on
      gpu_.pool.clear();
      gpu_.failed = true;
      cuda_mode_ = false;
      return opt_.backend != gpu::Backend::kCuda;
    }
    gpu_.pool.push_back(ThreadedGpuCoders::Pooled{std::move(c), gpu_.width, gpu_.rows});
  }
  return true;
}

// What making the CUDA context and the GPU coders costs a process, and tearing them down at its end,
// measured on the H100 and H200 hosts (docs/benchmarks.md, issue 17): the driver's initialisation (about
// 0.1 s) is paid by the device check anyway; the context and three coders about 0.13 s, their teardown
// about 0.1 s. The GPU then takes the coding (about a third of the CPU's work) off the workers.
constexpr double kGpuStartSeconds = 0.3;

bool Driver::gpu_worth_starting() {
  std::lock_guard<std::mutex> l(mu_);
  if (parsed_bytes_ == 0 || parse_seconds_ + code_seconds_ <= 0) return false;  // no rate yet
  const double seconds_per_byte = (parse_seconds_ + code_seconds_) / double(parsed_bytes_);
  const double left = double(slice_bytes_ - parsed_bytes_) * seconds_per_byte / opt_.threads;
  return left > kGpuStartSeconds;
}

bool Driver::configure(Batch& b, int width, int pic_mbs) {
  // A GPU batch holds at least one slice a band: no more bands than the stream has slices (a short
  // stream's coders, their pinned and device memory, stay small; each process pays their allocation).
  const int gpu_bands =
      int(std::max<int64_t>(1, std::min<int64_t>({opt_.batch_mbs / pic_mbs, (1 << 22) / pic_mbs, slice_nals_})));
  const int height = pic_mbs / width;
  if (cuda_mode_ && !gpu_.taken) {
    const bool want = !gpu_.started && (cuda_from_batch_ >= 0 || gpu_worth_starting());
    // Made at the first batch with kCuda (its device check tells at once whether there is a GPU: no GPU is
    // an error), held after the check until they are worth starting; with kAuto, and with kCuda when the
    // program checks the device in a process of its own (opt_.device_check), only then (a stream too short
    // for the GPU never touches the CUDA driver in this process). Sized for the batch's pictures.
    if (gpu_.pending.empty() && ((opt_.backend == gpu::Backend::kCuda && !opt_.device_check) || want)) {
      gpu_.width = width;
      gpu_.rows = height * gpu_bands;
      for (int i = 0; i < kGpuCoders; ++i)
        gpu_.pending.emplace_back(new cavlc::PendingCudaCoder(gpu_.width, gpu_.rows, opt_.device, true));
    }
    if (want) {
      for (const auto& p : gpu_.pending) p->start();
      gpu_.started = true;
    }
    bool ready = gpu_.started;
    for (const auto& p : gpu_.pending) ready = ready && p->ready();
    if ((cuda_from_batch_ >= 0 ? configured_ >= cuda_from_batch_ : ready) && !take_gpu_coders()) return false;
  }
  ++configured_;
  std::string why;
  // With every GPU coder in a batch not yet written, this batch goes to the CPU rather than waiting for one
  // (the test hook's batches wait).
  const bool gpu_batch = cuda_mode_ && gpu_.taken &&
                         (b.gpu_coder || !gpu_.pool.empty() || gpu_batches_.empty() || cuda_from_batch_ >= 0);
  if (gpu_batch) {
    if (!b.gpu_coder) {
      // The oldest batch holding one frees its coder when written (none: an earlier stream of the session
      // failed with its coders; a new one is made below).
      if (gpu_.pool.empty() && !gpu_batches_.empty() && !write_until(gpu_batches_.front())) return false;
      if (!gpu_.pool.empty()) {
        ThreadedGpuCoders::Pooled& c = gpu_.pool.back();
        b.gpu_coder = std::move(c.coder);
        b.gpu_width = c.width;
        b.gpu_rows = c.rows;
        gpu_.pool.pop_back();
      } else {
        b.gpu_width = b.gpu_rows = 0;
      }
      gpu_batches_.push_back(&b);
    }
    if (b.gpu_width != width || b.gpu_rows < height * gpu_bands) {  // another picture size
      b.gpu_coder.reset();
      b.gpu_coder = cavlc::FrameCoder::create(gpu::Backend::kCuda, width, height * gpu_bands, opt_.device, &why);
      if (!b.gpu_coder) return false;
      b.gpu_width = width;
      b.gpu_rows = height * gpu_bands;
    }
    b.coder = b.gpu_coder.get();
    b.bands = gpu_bands;
  } else {
    if (!b.cpu_coder || b.cpu_width != width || b.cpu_rows != height) {
      b.cpu_coder.reset();
      b.cpu_coder = cavlc::FrameCoder::create(gpu::Backend::kCpu, width, height, opt_.device, &why);
      if (!b.cpu_coder) return false;
      b.cpu_width = width;
      b.cpu_rows = height;
    }
    b.coder = b.cpu_coder.get();
    b.bands = 1;
  }
  b.skel = nullptr;  // the coder's area, asked for by the first slice
  b.skel_cap = 0;
  b.width = width;
  b.pic_mbs = pic_mbs;
  b.bands_used = 0;
  b.skel_used = 0;
  b.occupied.assign(size_t(pic_mbs), 0);
  return true;
}

Batch* Driver::acquire() {
  Batch* b = ring_[next_batch_].get();
  next_batch_ = (next_batch_ + 1) % ring_.size();
  if (b->n > 0 && !write_until(b)) return nullptr;
  return b;
}

void Driver::close() {
  Batch* b = cur_;
  cur_ = nullptr;
  if (!b || b->n == 0) return;
  {
    std::lock_guard<std::mutex> l(mu_);
    b->closed = true;
    if (b->parsing == 0) code_tasks_.push_back(Task{b, nullptr});
  }
  work_cv_.notify_one();
}

bool Driver::wait_parsed(const Batch* b) {
  std::unique_lock<std::mutex> l(mu_);
  done_cv_.wait(l, [&] { return failed_ || (b ? b->parsing : parsing_total_) == 0; });
  return !failed_;
}

bool Driver::write_until(const Batch* until) {
  std::vector<uint8_t>& out = *out_;
  ReentropyStats& st = *st_;
  while (next_item_ < items_.size()) {
    const Item& it = items_[next_item_];
    if (!it.batch) {
      out.insert(out.end(), data_ + it.begin, data_ + it.end);
      ++next_item_;
      continue;
    }
    Batch& b = *it.batch;
    {
      std::unique_lock<std::mutex> l(mu_);
      done_cv_.wait(l, [&] { return failed_ || b.coded; });
      if (failed_) return false;
    }
    const SliceJob& job = b.jobs[it.job];
    out.insert(out.end(), data_ + job.begin, data_ + job.end);
    out.insert(out.end(), b.out.data() + job.out_at, b.out.data() + job.out_at + job.out_bytes);
    out.insert(out.end(), data_ + job.tail_begin, data_ + job.tail_end);
    ++st.slices;
    st.macroblocks += job.target.n_mbs;
    const bool on_gpu = b.coder->backend() == gpu::Backend::kCuda;
    (on_gpu ? st.cuda_macroblocks : st.cpu_macroblocks) += job.target.n_mbs;
    st.coded_macroblocks += job.target.coded_mbs;
    st.residual_bits += int64_t(job.residual_bits);
    st.recoded_differs += !job.same;
    st.nonstandard_escaping += !job.rbsp.standard_escaping;
    ++next_item_;
    if (++b.written == b.n) {
      ++(on_gpu ? st.cuda_batches : st.cpu_batches);
      if (b.gpu_coder) {  // back to the pool (the batches holding one are written in the order they took it)
        gpu_.pool.push_back(ThreadedGpuCoders::Pooled{std::move(b.gpu_coder), b.gpu_width, b.gpu_rows});
        gpu_batches_.pop_front();
      }
      b.coder = nullptr;
      b.n = b.written = 0;
      b.closed = b.coded = false;
      b.bands_used = 0;
      b.skel_used = 0;
      if (&b == until) return true;
    }
  }
  return true;
}

bool Driver::dispatch(int32_t last_allowed) {
  have_pending_ = false;
  const SliceHeader& sh = pending_sh_;
  const int width = int(sh.pic_width_in_mbs), pic_mbs = int(sh.pic_size_in_mbs);
  const int32_t first = int32_t(sh.first_mb_in_slice);
  if (width < 1 || pic_mbs < width || pic_mbs % width || first >= pic_mbs || last_allowed < first ||
      last_allowed >= pic_mbs)
    return false;
  Batch* b = cur_;
  if (b && (b->width != width || b->pic_mbs != pic_mbs)) {
    close();
    b = nullptr;
  }
  if (!b) {
    if (!(b = acquire()) || !configure(*b, width, pic_mbs)) return false;
    cur_ = b;
  }
  bool fits = b->bands_used > 0;
  for (int32_t a = first; fits && a <= last_allowed; ++a) fits = !b->occupied[size_t(a)];
  if (!fits) {
    if (b->bands_used == b->bands) {
      close();
      if (!(b = acquire()) || !configure(*b, width, pic_mbs)) return false;
      cur_ = b;
    }
    ++b->bands_used;
    std::fill(b->occupied.begin(), b->occupied.end(), uint8_t{0});
  }
  // parse_slice_into's skeleton bound, sh.stop_bit / 8 + 16, from the NAL's size (the RBSP is not shorter
  // than the NAL's payload by more than its emulation prevention bytes; stop_bit is the worker's).
  const NalUnit& nal = *pending_unit_;
  const size_t reserve = (size_t(nal.size()) + 16 + 3) & ~size_t{3};
  if (b->skel_used + reserve > b->skel_cap) {  // the area may move: nobody may be writing into it
    if (!wait_parsed(b)) return false;
    const size_t cap = std::max({b->skel_used + reserve, 2 * b->skel_cap, size_t(1) << 20});
    if (!(b->skel = b->coder->skeleton(cap))) return false;
    b->skel_cap = cap;
    for (size_t i = 0; i < b->n; ++i) b->jobs[i].target.skel = nullptr;  // parsed; not used again
  }
  if (b->jobs.size() == b->n) b->jobs.emplace_back();
  const size_t j = b->n;
  SliceJob& job = b->jobs[j];
  job.nal_header = nal.header;
  job.nal_size = nal.size();
  job.sh = sh;
  job.uid = next_uid_++;
  job.begin = nal.begin;
  job.end = nal.header + uint64_t(nal_header_bytes(nal.nal_unit_type));
  job.tail_begin = nal.end;
  job.tail_end = nal.range_end;
  SliceTarget& t = job.target;
  t = SliceTarget{};
  t.records = b->coder->records();
  t.slice_ids = b->coder->slice_ids();
  t.leads = b->coder->leads();
  t.tc_records = b->coder->tc_records();
  t.base = size_t(b->bands_used - 1) * size_t(pic_mbs);
  t.slice_id = int32_t(j);
  t.first_allowed = first;
  t.last_allowed = last_allowed;
  t.skel = b->skel + b->skel_used;
  t.skel_capacity = reserve;
  t.skel_bit0 = uint64_t(b->skel_used) * 8;
  std::fill(b->occupied.begin() + first, b->occupied.begin() + last_allowed + 1, uint8_t{1});
  b->skel_used += reserve;
  ++b->n;
  items_.push_back(Item{0, 0, b, j});
  {
    std::lock_guard<std::mutex> l(mu_);
    ++b->parsing;
    ++parsing_total_;
    tasks_.push_back(Task{b, &job});
  }
  work_cv_.notify_one();
  return true;
}

bool Driver::run(const std::vector<NalUnit>& nals, std::vector<uint8_t>& out, ReentropyStats& st) {
  const auto t0 = std::chrono::steady_clock::now();
  out_ = &out;
  st_ = &st;
  for (const NalUnit& nal : nals)
    if (nal.is_slice()) {
      ++slice_nals_;
      slice_bytes_ += nal.end - nal.header;
    }
  if (gpu_.failed) {  // an earlier stream of the session found no GPU
    if (opt_.backend == gpu::Backend::kCuda) return false;  // the sequential path reports it
  } else if (opt_.backend == gpu::Backend::kCuda || opt_.backend == gpu::Backend::kAuto) {
    cuda_mode_ = true;  // kAuto: the background creation checks the device; without one, the CPU goes on
  } else if (opt_.backend != gpu::Backend::kCpu) {
    return false;
  }
  if (cuda_mode_) cuda_from_batch_ = gpu::fail_at_frame("GPUEC_REENTROPY_CUDA_FROM_BATCH");
  // CPU batches (one picture each): one and a half per thread and two more (while the oldest are coded
  // and written, the workers parse the next pictures), coded on the workers; at most kGpuCoders of them
  // hold a GPU coder.
  const size_t n_batches = size_t(opt_.threads) + size_t(opt_.threads) / 2 + 2;
  for (size_t i = 0; i < n_batches; ++i) ring_.emplace_back(new Batch);
  start_workers(opt_.threads);

  HeaderParser hp;
  SliceHeader prev;
  bool have_prev = false;
  uint32_t pic_mbs = 0;
  Error err;
  auto flush_pending = [&]() { return !have_pending_ || dispatch(int32_t(pending_sh_.pic_size_in_mbs) - 1); };
  for (size_t i = 0; i < nals.size(); ++i) {
    const NalUnit& nal = nals[i];
    ++st.nal_units;
    if (!nal.is_slice()) {  // the pending slice's piece comes first; a parameter set waits for the parsing
      if (!flush_pending()) return false;
      if ((nal.nal_unit_type == kNalSps || nal.nal_unit_type == kNalPps) && !wait_parsed(nullptr)) return false;
    }
    if (!(nal.is_slice() ? hp.parse_slice_header_only(data_, nal, int64_t(i), err) : hp.parse(data_, nal, int64_t(i), err)))
      return false;
    if (!nal.is_slice()) {
      items_.push_back(Item{nal.begin, nal.range_end, nullptr, 0});
      continue;
    }
    const SliceHeader& sh = hp.slice();
    bool new_picture = false;
    if (!sh.redundant()) {
      new_picture = !have_prev || first_slice_of_new_picture(prev, sh) || pic_mbs != sh.pic_size_in_mbs;
      if (new_picture) ++st.pictures;
      prev = sh;
      have_prev = true;
    } else {
      ++st.redundant_slices;
      new_picture = pic_mbs != sh.pic_size_in_mbs;
    }
    pic_mbs = sh.pic_size_in_mbs;
    if (have_pending_) {
      const SliceHeader& p = pending_sh_;
      const bool bounded = !new_picture && !p.redundant() && !sh.redundant() && p.pps->num_slice_groups == 1 &&
                           sh.first_mb_in_slice > p.first_mb_in_slice;
      if (!dispatch(bounded ? int32_t(sh.first_mb_in_slice) - 1 : int32_t(p.pic_size_in_mbs) - 1)) return false;
    }
    if (!groups_.current(*sh.sps, *sh.pps, sh.slice_group_change_cycle, hp.params().generation())) {
      if (!wait_parsed(nullptr)) return false;
      groups_.update(*sh.sps, *sh.pps, sh.slice_group_change_cycle, hp.params().generation());
    }
    pending_sh_ = sh;
    pending_unit_ = &nal;
    have_pending_ = true;
  }
  if (!flush_pending()) return false;
  close();
  st.headers_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!write_until(nullptr) || failed()) return false;
  {
    std::lock_guard<std::mutex> l(mu_);
    st.parse_seconds = parse_seconds_;
    st.code_seconds = code_seconds_;
  }
  // kCuda coded on the CPU only, the stream done before the GPU was ready: the backend must still work
  // (else the sequential path reports why). Without abandon_gpu_start the pending coders are taken (their
  // destructors would wait for them anyway); else only the device check is waited for: the pending
  // coders' own, the program's (opt_.device_check), or one made here (no slice, no coders).
  if (opt_.backend == gpu::Backend::kCuda && !gpu_.taken) {
    if (!opt_.abandon_gpu_start && !gpu_.pending.empty()) return take_gpu_coders();
    std::string why;
    const bool usable = !gpu_.pending.empty() ? gpu_.pending.front()->device_usable(&why)
                        : opt_.device_check   ? opt_.device_check->usable(&why)
                                              : gpu::device_usable(opt_.device, &why);
    if (!usable) {
      gpu_.failed = true;  // the session's later streams go to the sequential path at once
      return false;
    }
  }
  if (opt_.abandon_gpu_start && !gpu_.taken)
    for (std::unique_ptr<cavlc::PendingCudaCoder>& p : gpu_.pending) p->abandon_on_destroy();
  return true;
}

}  // namespace

bool reentropy_threaded(const uint8_t* data, size_t, const std::vector<NalUnit>& nals, std::vector<uint8_t>& out,
                        ReentropyStats& st, const RecoderOptions& opt, ThreadedGpuCoders* gpu) {
  Driver d(data, opt, gpu);
  return d.run(nals, out, st);
}

}  // namespace avc
