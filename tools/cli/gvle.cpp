// gvle: compress / decompress files in the .gvle format (vle/format.h) and benchmark the CPU coder.
// Options and exit codes: usage text below and vle/README.md.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cli.h"
#include "files.h"
#include "vle/decode.h"
#include "vle/encode.h"
#include "vle/encoders.h"
#include "vle/format.h"
#include "vle/huffman.h"
#include "../bench/bench_util.h"

extern char** environ;

namespace {

constexpr int kExitOk = 0, kExitUsage = 1, kExitIo = 2, kExitCorrupt = 3;
constexpr uint64_t kAutoProgressBytes = uint64_t{64} << 20;

const char kUsage[] =
    "usage: gvle compress   [-o OUT] [-f] [--backend cpu|cuda|auto] [--progress] [IN]\n"
    "       gvle decompress [-o OUT] [-f] [--threads N] [--progress] [IN]\n"
    "       gvle bench      [--repeat N] [--warmup N] [--threads N] [IN|DIR]...\n"
    "\n"
    "GVLE: byte-wise canonical Huffman coding (codes of at most 16 bits, package-merge), the data\n"
    "coded in chunks of 65536 symbols that decode in parallel; the .gvle format is in vle/README.md.\n"
    "\n"
    "IN and OUT default to stdin and stdout; '-' names them too. The whole input is read into memory.\n"
    "  -o, --output OUT  write to OUT: through a temporary file in OUT's folder renamed onto OUT at\n"
    "                    the end, so a failure or an interrupt leaves no partial OUT and the old\n"
    "                    one intact; a symlink's target is replaced (the link stays); a device or a\n"
    "                    FIFO is written directly; OUT the same file as IN is refused\n"
    "  -f, --force       overwrite an existing OUT; allow compressed data on a terminal\n"
    "  --backend B       compress encoder: cpu; cuda (an error in a build without the CUDA\n"
    "                    encoder, and when a CUDA call fails); auto (default: cuda when built in and\n"
    "                    a GPU is usable, else cpu; when the CUDA encoder fails, one warning and the\n"
    "                    CPU encoder codes the file). Every backend writes the same bytes.\n"
    "  --threads N       decode threads at most, 0 = one per core (default 0); a thread takes four\n"
    "                    64 Ki-symbol chunks at least\n"
    "  --progress        progress and a summary on stderr (automatic for inputs over 64 MiB when\n"
    "                    stderr is a terminal); --no-progress turns it off\n"
    "  -h, --help        this help\n"
    "\n"
    "bench: times the CPU coder on each file (a folder: each regular file in it but MANIFEST.tsv;\n"
    "  a .xz file is unpacked with xz -dc first) and prints MB/s (10^6 bytes of original per second,\n"
    "  median of the repeats): compress and decompress (whole format: histogram, code, encode,\n"
    "  checksums / checks, decode, checksum), encode (encode_ref alone) and decode (decode_ref\n"
    "  alone) with 1 thread and with --threads. Each timed sample loops over the data for at least\n"
    "  20 ms. The round trip is checked first.\n"
    "  --repeat N        timed samples per measurement (default 7)\n"
    "  --warmup N        untimed samples first (default 1)\n"
    "\n"
    "exit status: 0 ok, 1 usage error (also: backend not in this build), 2 I/O error (also: OUT\n"
    "exists without -f, out of memory), 3 corrupt, truncated or foreign input (decompress)\n";

int usage_error(const std::string& msg) {
  std::fprintf(stderr, "gvle: %s\nTry 'gvle --help'.\n", msg.c_str());
  return kExitUsage;
}

int io_error(const std::string& what) {
  std::fprintf(stderr, "gvle: %s\n", what.c_str());
  return kExitIo;
}

std::string errno_text(const std::string& path) { return path + ": " + std::strerror(errno); }

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string mib(uint64_t b) {
  char s[32];
  std::snprintf(s, sizeof s, "%.1f MiB", static_cast<double>(b) / (1 << 20));
  return s;
}

// Progress on stderr: one line rewritten in place (a terminal) or one line per phase (otherwise).
class Progress {
 public:
  void enable(bool on) { on_ = on; }
  bool on() const { return on_; }
  void update(const char* phase, uint64_t done, uint64_t total) {
    if (!on_) return;
    const double t = now_s();
    if (phase == last_phase_ && t - last_ < 0.1 && done != total) return;
    const bool tty = isatty(2);
    if (!tty && phase == last_phase_) return;
    last_ = t;
    last_phase_ = phase;
    if (total)
      std::fprintf(stderr, "%sgvle: %s %3.0f%% (%s of %s)%s", tty ? "\r\033[K" : "", phase,
                   100.0 * static_cast<double>(done) / static_cast<double>(total), mib(done).c_str(),
                   mib(total).c_str(), tty ? "" : "\n");
    else
      std::fprintf(stderr, "%sgvle: %s%s%s%s", tty ? "\r\033[K" : "", phase, done ? " " : "",
                   done ? mib(done).c_str() : "", tty ? "" : "\n");
    open_ = tty;
  }
  void done(const std::string& summary) {
    if (!on_) return;
    std::fprintf(stderr, "%sgvle: %s\n", open_ ? "\r\033[K" : "", summary.c_str());
    open_ = false;
  }
  void clear() {
    if (open_) std::fprintf(stderr, "\r\033[K");
    open_ = false;
  }

 private:
  bool on_ = false, open_ = false;
  double last_ = 0;
  const char* last_phase_ = nullptr;
};

Progress g_progress;

bool is_stdio(const std::string& p) { return p.empty() || p == "-"; }

// Reads a whole file descriptor; size_hint > 0 sizes the buffer and the progress.
bool read_fd(int fd, uint64_t size_hint, const std::string& name, std::vector<uint8_t>* out, std::string* err,
             bool auto_progress) {
  out->clear();
  if (size_hint) out->reserve(size_hint);
  const size_t block = size_t{1} << 20;
  for (;;) {
    const size_t at = out->size();
    out->resize(at + block);
    const ssize_t r = read(fd, out->data() + at, block);
    if (r < 0) {
      if (errno == EINTR) {
        out->resize(at);
        continue;
      }
      *err = errno_text(name);
      return false;
    }
    out->resize(at + static_cast<size_t>(r));
    if (r == 0) break;
    if (auto_progress && !g_progress.on() && out->size() > kAutoProgressBytes && isatty(2)) g_progress.enable(true);
    g_progress.update("reading", out->size(), size_hint);
  }
  return true;
}

bool read_input(const std::string& path, std::vector<uint8_t>* out, std::string* err, bool auto_progress) {
  if (is_stdio(path)) return read_fd(0, 0, "stdin", out, err, auto_progress);
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *err = errno_text(path);
    return false;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
    *err = S_ISDIR(st.st_mode) ? path + ": is a directory" : errno_text(path);
    close(fd);
    return false;
  }
  const uint64_t size = S_ISREG(st.st_mode) ? static_cast<uint64_t>(st.st_size) : 0;
  if (auto_progress && size > kAutoProgressBytes && isatty(2)) g_progress.enable(true);
  const bool ok = read_fd(fd, size, path, out, err, auto_progress);
  close(fd);
  return ok;
}

// Writes data to path by files::Output's rules (a temporary file renamed onto a regular OUT; devices and FIFOs
// directly; OUT == IN refused). Without force an existing regular file is never replaced.
bool write_output(const std::string& path, const std::string& in, const std::vector<uint8_t>& data, bool force,
                  std::string* err) {
  files::Output out;
  if (!out.open(is_stdio(path) ? "-" : path, files::Output::Options{force, {in}}, err)) return false;
  for (size_t done = 0; done < data.size();) {
    const size_t chunk = std::min<size_t>(data.size() - done, size_t{1} << 20);
    if (!out.write(data.data() + done, chunk, err)) return false;
    done += chunk;
    g_progress.update("writing", done, data.size());
  }
  return out.commit(err);
}

int exit_code_for(vle::FormatStatus s) {
  switch (s) {
    case vle::FormatStatus::kOk: return kExitOk;
    case vle::FormatStatus::kNoEncoder: return kExitUsage;
    case vle::FormatStatus::kEncodeFailed:
    case vle::FormatStatus::kOutOfMemory: return kExitIo;
    default: return kExitCorrupt;
  }
}

std::string input_name(const std::string& in) { return is_stdio(in) ? "stdin" : in; }

struct Options {
  std::string command, out;
  std::vector<std::string> inputs;
  bool force = false;
  int progress = -1;  // -1: automatic
  gpu::Backend backend = gpu::Backend::kAuto;
  unsigned threads = 0;
  int repeat = 7, warmup = 1;
};

int run_compress(const Options& o, bool decompress) {
  const std::string in = o.inputs.empty() ? "-" : o.inputs[0];
  struct stat out_st;  // an existing regular OUT needs -f (devices and FIFOs are written directly)
  if (!o.force && !is_stdio(o.out) && stat(o.out.c_str(), &out_st) == 0 && S_ISREG(out_st.st_mode))
    return io_error(o.out + ": exists (use -f to overwrite)");
  if (!decompress && !o.force && is_stdio(o.out) && isatty(1))
    return usage_error("compressed data not written to a terminal (use -o OUT, a redirection or -f)");
  if (decompress && o.backend == gpu::Backend::kCuda) return usage_error("--backend applies to compress only");
  if (!decompress && !vle::encoder_for(o.backend))
    return usage_error("--backend cuda: not built with the CUDA encoder");
  g_progress.enable(o.progress == 1);
  const double t0 = now_s();
  std::vector<uint8_t> data, result;
  std::string err;
  if (!read_input(in, &data, &err, o.progress == -1)) {
    g_progress.clear();
    return io_error(err);
  }
  g_progress.update(decompress ? "decompressing" : "compressing", 0, 0);
  vle::Status s;
  if (decompress) {
    vle::DecompressOptions dopt;
    dopt.threads = o.threads;
    s = vle::decompress(data.data(), data.size(), &result, dopt);
  } else {
    std::string note;
    s = vle::compress(data.data(), data.size(), o.backend, &result, &note);
    if (!note.empty()) {
      g_progress.clear();
      std::fprintf(stderr, "gvle: warning: %s\n", note.c_str());
    }
  }
  if (!s.ok()) {
    g_progress.clear();
    std::fprintf(stderr, "gvle: %s: %s\n", input_name(in).c_str(), s.message.c_str());
    return exit_code_for(s.code);
  }
  const uint64_t in_bytes = data.size();
  std::vector<uint8_t>().swap(data);
  if (!write_output(o.out, in, result, o.force, &err)) {
    g_progress.clear();
    return io_error(err);
  }
  const double dt = now_s() - t0;
  char line[256];
  const uint64_t orig = decompress ? result.size() : in_bytes, packed = decompress ? in_bytes : result.size();
  std::snprintf(line, sizeof line, "%s %llu -> %llu bytes (%.2f%% of the original), %.3f s, %.1f MB/s",
                decompress ? "decompressed" : "compressed", static_cast<unsigned long long>(in_bytes),
                static_cast<unsigned long long>(result.size()),
                orig ? 100.0 * static_cast<double>(packed) / static_cast<double>(orig) : 0.0, dt,
                dt > 0 ? static_cast<double>(orig) / 1e6 / dt : 0.0);
  g_progress.done(line);
  return kExitOk;
}

// ---- bench ----

// Runs xz -dc PATH and collects its stdout.
bool read_xz(const std::string& path, std::vector<uint8_t>* out, std::string* err) {
  int fds[2];
  if (pipe(fds) != 0) {
    *err = errno_text("pipe");
    return false;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  posix_spawn_file_actions_addclose(&fa, fds[1]);
  std::string p = path;
  char arg0[] = "xz", arg1[] = "-dc", arg2[] = "--";
  char* argv[] = {arg0, arg1, arg2, p.data(), nullptr};
  pid_t pid;
  const int rc = posix_spawnp(&pid, "xz", &fa, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    *err = "xz: " + std::string(std::strerror(rc));
    return false;
  }
  const bool ok = read_fd(fds[0], 0, path, out, err, false);
  close(fds[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  if (ok && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
    *err = path + ": xz -dc failed";
    return false;
  }
  return ok;
}

using gpuec_bench::median;

// Median seconds per call of fn: warmup samples, then repeat samples of k calls each, k chosen so
// that a sample lasts at least 20 ms.
template <class F>
double time_median(F&& fn, int warmup, int repeat) {
  const double t0 = now_s();
  fn();
  const double one = std::max(now_s() - t0, 1e-7);
  const int k = std::max(1, static_cast<int>(0.02 / one));
  for (int w = 0; w < warmup; ++w)
    for (int i = 0; i < k; ++i) fn();
  std::vector<double> s;
  for (int r = 0; r < repeat; ++r) {
    const double a = now_s();
    for (int i = 0; i < k; ++i) fn();
    s.push_back((now_s() - a) / k);
  }
  return median(s);
}

struct BenchRow {
  std::string name;
  uint64_t bytes = 0, packed = 0;
  double t[6] = {};  // compress, encode, decompress 1t, decompress Nt, decode 1t, decode Nt
};

int bench_one(const Options& o, const std::string& name, const std::vector<uint8_t>& data, unsigned nthreads,
              std::vector<BenchRow>* rows) {
  std::vector<uint8_t> file, back;
  vle::Status s = vle::compress(data.data(), data.size(), gpu::Backend::kCpu, &file);
  if (!s.ok()) return io_error(name + ": " + s.message);
  vle::DecompressOptions d1, dn;
  d1.threads = 1;
  dn.threads = nthreads;
  s = vle::decompress(file.data(), file.size(), &back, dn);
  if (!s.ok() || back != data) {
    std::fprintf(stderr, "gvle: bench: %s: round trip failed: %s\n", name.c_str(), s.message.c_str());
    return kExitCorrupt;
  }
  // Encode / decode alone, on the table and index of the file.
  vle::HeaderInfo h;
  vle::read_header(file.data(), file.size(), &h);
  vle::CodeTable t;
  vle::canonical_code(h.len, &t);
  std::vector<uint8_t> payload(vle::encoded_bound_bytes(data.size()));
  std::vector<uint64_t> chunk_bits(vle::chunk_count(data.size()));
  const uint64_t bits = vle::encode_ref(data.data(), data.size(), t, payload.data(), chunk_bits.data());

  BenchRow r;
  r.name = name;
  r.bytes = data.size();
  r.packed = file.size();
  std::vector<uint8_t> tmp;
  r.t[0] = time_median([&] { vle::compress(data.data(), data.size(), gpu::Backend::kCpu, &tmp); }, o.warmup, o.repeat);
  r.t[1] = time_median([&] { vle::encode_ref(data.data(), data.size(), t, payload.data(), chunk_bits.data()); },
                       o.warmup, o.repeat);
  r.t[2] = time_median([&] { vle::decompress(file.data(), file.size(), &tmp, d1); }, o.warmup, o.repeat);
  r.t[3] = time_median([&] { vle::decompress(file.data(), file.size(), &tmp, dn); }, o.warmup, o.repeat);
  std::vector<uint8_t> out(data.size());
  auto decode = [&](unsigned th) {
    vle::decode_ref(payload.data(), payload.size(), bits, chunk_bits.data(), chunk_bits.size(), t, out.data(),
                    out.size(), th);
  };
  r.t[4] = time_median([&] { decode(1); }, o.warmup, o.repeat);
  r.t[5] = time_median([&] { decode(nthreads); }, o.warmup, o.repeat);
  rows->push_back(r);
  return kExitOk;
}

void print_row(const BenchRow& r) {
  auto mbs = [&](double t) { return t > 0 ? static_cast<double>(r.bytes) / 1e6 / t : 0.0; };
  std::printf("%-16s %10llu %7.2f%% %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f\n", r.name.c_str(),
              static_cast<unsigned long long>(r.bytes),
              r.bytes ? 100.0 * static_cast<double>(r.packed) / static_cast<double>(r.bytes) : 0.0, mbs(r.t[0]),
              mbs(r.t[1]), mbs(r.t[2]), mbs(r.t[3]), mbs(r.t[4]), mbs(r.t[5]));
  std::fflush(stdout);
}

int run_bench(const Options& o) {
  const unsigned nthreads = o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::string> inputs = o.inputs;
  if (inputs.empty()) inputs.push_back("-");
  std::printf("gvle bench: CPU, MB/s = 10^6 original bytes per second, median of %d; decode threads %u\n",
              o.repeat, nthreads);
  std::printf("%-16s %10s %8s %9s %9s %9s %9s %9s %9s\n", "file", "bytes", "size", "compress", "encode",
              "decomp1", "decomp" , "decode1", "decode");
  std::vector<BenchRow> rows;
  for (const std::string& in : inputs) {
    std::vector<std::string> files;
    struct stat st;
    if (!is_stdio(in) && stat(in.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      DIR* d = opendir(in.c_str());
      if (!d) return io_error(errno_text(in));
      while (const dirent* e = readdir(d)) {
        const std::string name = e->d_name;
        if (name == "." || name == ".." || name == "MANIFEST.tsv") continue;
        const std::string p = in + "/" + name;
        struct stat fst;
        if (stat(p.c_str(), &fst) == 0 && S_ISREG(fst.st_mode)) files.push_back(p);
      }
      closedir(d);
      std::sort(files.begin(), files.end());
    } else {
      files.push_back(in);
    }
    for (const std::string& f : files) {
      std::vector<uint8_t> data;
      std::string err;
      const bool xz = f.size() > 3 && f.compare(f.size() - 3, 3, ".xz") == 0;
      if (!(xz ? read_xz(f, &data, &err) : read_input(f, &data, &err, false))) return io_error(err);
      std::string name = is_stdio(f) ? "stdin" : f.substr(f.rfind('/') == std::string::npos ? 0 : f.rfind('/') + 1);
      if (xz) name.resize(name.size() - 3);
      const int rc = bench_one(o, name, data, nthreads, &rows);
      if (rc != kExitOk) return rc;
      print_row(rows.back());
    }
  }
  if (rows.size() > 1) {
    BenchRow all;
    all.name = "all (sum)";
    for (const BenchRow& r : rows) {
      all.bytes += r.bytes;
      all.packed += r.packed;
      for (int i = 0; i < 6; ++i) all.t[i] += r.t[i];
    }
    print_row(all);
    std::printf("%-16s %10s %8s", "mean of files", "", "");
    for (int i = 0; i < 6; ++i) {
      double s = 0;
      for (const BenchRow& r : rows) s += r.t[i] > 0 ? static_cast<double>(r.bytes) / 1e6 / r.t[i] : 0.0;
      std::printf(" %9.1f", s / static_cast<double>(rows.size()));
    }
    std::printf("\n");
  }
  std::printf("columns: size = compressed/original; compress, decomp* = whole format; encode, decode* = "
              "payload alone; *1 = 1 thread\n");
  return kExitOk;
}

bool parse_uint(const std::string& s, unsigned long max, unsigned long* v) {
  if (s.empty() || s.size() > 10) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  *v = std::stoul(s);
  return *v <= max;
}

}  // namespace

int run(int argc, char** argv) {
  Options o;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return usage_error("missing command (compress, decompress or bench)");
  bool only_inputs = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](std::string* v) {
      if (i + 1 >= args.size()) return false;
      *v = args[++i];
      return true;
    };
    std::string v;
    unsigned long n;
    if (only_inputs || a == "-" || a.empty() || a[0] != '-') {
      if (o.command.empty() && !only_inputs) o.command = a;
      else o.inputs.push_back(a);
    } else if (a == "--") {
      only_inputs = true;
    } else if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return kExitOk;
    } else if (a == "-o" || a == "--output") {
      if (!value(&o.out)) return usage_error(a + " needs a file name");
    } else if (a.compare(0, 9, "--output=") == 0) {
      o.out = a.substr(9);
    } else if (a == "-f" || a == "--force") {
      o.force = true;
    } else if (a == "--progress") {
      o.progress = 1;
    } else if (a == "--no-progress") {
      o.progress = 0;
    } else if (a == "--backend" || a.compare(0, 10, "--backend=") == 0) {
      if (a == "--backend" ? !value(&v) : (v = a.substr(10), false)) return usage_error("--backend needs a value");
      if (!gpu::parse_backend(v, &o.backend)) return usage_error("--backend: unknown backend '" + v + "' (cpu, cuda or auto)");
    } else if (a == "--threads" || a == "--repeat" || a == "--warmup") {
      if (!value(&v) || !parse_uint(v, a == "--threads" ? 1024 : 1000000, &n) || (a == "--repeat" && n == 0))
        return usage_error(a + " needs a number" +
                           (a == "--threads" ? " (0..1024)" : a == "--repeat" ? " (1..1000000)" : " (0..1000000)"));
      if (a == "--threads") o.threads = static_cast<unsigned>(n);
      else if (a == "--repeat") o.repeat = static_cast<int>(n);
      else o.warmup = static_cast<int>(n);
    } else {
      return usage_error("unknown option '" + a + "'");
    }
  }
  if (o.command.empty()) return usage_error("missing command (compress, decompress or bench)");
  if (o.command != "compress" && o.command != "decompress" && o.command != "bench")
    return usage_error("unknown command '" + o.command + "' (compress, decompress or bench)");
  if (o.command != "bench" && o.inputs.size() > 1) return usage_error("one input at most");

  signal(SIGPIPE, SIG_IGN);  // a closed pipe becomes an EPIPE write error (exit 2)
  files::remove_temporaries_on_signal();
  if (o.command == "bench") {
    if (o.backend == gpu::Backend::kCuda) return usage_error("bench: not built with the CUDA encoder");
    return run_bench(o);
  }
  return run_compress(o, o.command == "decompress");
}

// No exception leaves the program: one message and the documented exit code (tools/cli/cli.h).
int main(int argc, char** argv) { return cli::main_of("gvle", run, argc, argv, kExitUsage, "(gvle --help for usage)", kExitIo); }
