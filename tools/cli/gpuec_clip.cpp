// gpuec-clip: list and write the test clips (derf collection and synthetic), see sequences/README.md.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "clip.h"
#include "files.h"

using namespace gpuec::clip;

namespace {

const char kUsage[] =
    "usage: gpuec-clip <command> [options]\n"
    "\n"
    "Test clips for gpuec: the xiph derf collection (sequences/derf.tsv, files found in the clips\n"
    "folder) and synthetic clips generated bit-exactly on every machine.\n"
    "\n"
    "commands:\n"
    "  list                          show derf, local and synthetic clips and what is available\n"
    "  get NAME -o OUT.y4m [...]     write clip NAME as 8-bit 4:2:0 y4m\n"
    "  help [COMMAND]                show this help or a command's help\n"
    "\n"
    "clips folder: $GPUEC_SEQUENCES, else $GPUEC_SHARED_DIR/sequences, else\n"
    "  " GPUEC_DEFAULT_SHARED_DIR "/sequences\n"
    "photos (pan clips): $GPUEC_IMAGES/photos, else $GPUEC_SHARED_DIR/images/photos, else\n"
    "  " GPUEC_DEFAULT_SHARED_DIR "/images/photos\n"
    "\n"
    "exit codes: 0 ok, 1 usage error, 2 data error (unknown or missing clip, too few frames, I/O)\n";

const char kListUsage[] =
    "usage: gpuec-clip list [--available] [--names]\n"
    "\n"
    "Lists the derf manifest (with the frames found locally), other y4m files in the clips folder,\n"
    "and the synthetic clips.\n"
    "\n"
    "  --available   only clips that `get` can write here (local files and synthetic clips)\n"
    "  --names       print names only, one per line\n"
    "  -h, --help    this help\n";

const char kGetUsage[] =
    "usage: gpuec-clip get NAME -o OUT.y4m [--frames N] [--photo FILE]\n"
    "\n"
    "Writes clip NAME as an 8-bit 4:2:0 YUV4MPEG2 file.\n"
    "  derf or other local clip: copies the header and the first N frames byte for byte from\n"
    "    NAME.y4m / NAME.y4m.xz (or the derf file name) in the clips folder; .xz through xz -dc.\n"
    "    Without --frames all frames are copied; asking for more frames than exist is an error.\n"
    "  synthetic clip: KIND_SIZE with KIND pan, noise or checkerboard and SIZE qcif, cif, 4cif,\n"
    "    360p, 720p, 1080p, 2160p or WxH (even), e.g. pan_1080p, noise_cif, checkerboard_cif.\n"
    "    30 fps, default 60 frames; same bytes on every machine.\n"
    "\n"
    "  -o, --output OUT   output file ('-' for stdout), written through a temporary file renamed onto\n"
    "                     it at the end: an error or an interrupt leaves the old OUT (or none)\n"
    "  --frames N         number of frames (N >= 1)\n"
    "  --photo FILE       pan clips: photo name in the photos folder or a path\n"
    "                     (default " "forest_path_2560x1600.jpg" ")\n"
    "  -h, --help         this help\n";

int usage_error(const std::string& msg, const char* usage) {
  std::fprintf(stderr, "gpuec-clip: %s\n\n%s", msg.c_str(), usage);
  return kExitUsage;
}

bool is_help(const std::string& a) { return a == "-h" || a == "--help"; }

// Takes the value of option `a` (either "--opt=value" or the next argument).
bool option_value(const std::vector<std::string>& args, std::size_t* i, const std::string& opt, std::string* value) {
  const std::string& a = args[*i];
  if (a.compare(0, opt.size() + 1, opt + "=") == 0 && opt.size() > 2) {
    *value = a.substr(opt.size() + 1);
    return true;
  }
  if (a != opt) return false;
  if (*i + 1 >= args.size()) throw Error(kExitUsage, opt + " needs a value");
  *value = args[++*i];
  return true;
}

std::string local_status(const std::string& path) {
  if (path.empty()) return "-";
  const std::string name = path.substr(path.rfind('/') + 1);
  try {
    const LocalClip c = probe_local_clip(path);
    return (c.frames >= 0 ? std::to_string(c.frames) + " frames" : std::string("? frames")) + " (" + name + ")";
  } catch (const Error& e) {  // one damaged file does not end the list
    return "unreadable (" + name + "): " + e.what();
  }
}

int cmd_list(const std::vector<std::string>& args) {
  bool available = false, names = false;
  for (const auto& a : args) {
    if (is_help(a)) {
      std::fputs(kListUsage, stdout);
      return kExitOk;
    }
    if (a == "--available") available = true;
    else if (a == "--names") names = true;
    else return usage_error("list: unknown argument '" + a + "'", kListUsage);
  }
  auto row = [&](const std::string& name, const std::string& size, const std::string& fps, const std::string& frames,
                 const std::string& status) {
    if (names) std::printf("%s\n", name.c_str());
    else std::printf("  %-28s %-10s %-11s %6s  %s\n", name.c_str(), size.c_str(), fps.c_str(), frames.c_str(), status.c_str());
  };
  auto section = [&](const std::string& title) {
    if (!names) std::printf("\n%s\n  %-28s %-10s %-11s %6s  %s\n", title.c_str(), "NAME", "SIZE", "FPS", "FRAMES", "LOCAL");
  };
  if (!names) std::printf("clips folder: %s\nphotos folder: %s/photos\n", sequences_dir().c_str(), images_dir().c_str());

  section("DERF CLIPS (sequences/derf.tsv; FRAMES = full xiph clip; fetch with sequences/download.sh NAME)");
  for (const auto& e : derf_manifest()) {
    const std::string path = find_local_clip(e.name);
    if (available && path.empty()) continue;
    row(e.name, std::to_string(e.width) + "x" + std::to_string(e.height),
        std::to_string(e.fps_num) + ":" + std::to_string(e.fps_den), std::to_string(e.frames), local_status(path));
  }

  const auto extra = extra_local_clips();
  if (!extra.empty()) section("OTHER LOCAL CLIPS (in the clips folder, not in derf.tsv)");
  for (const auto& name : extra) {
    const std::string path = find_local_clip(name);
    LocalClip c;
    try {
      c = probe_local_clip(path);
    } catch (const Error& e) {  // one damaged file does not end the list
      row(name, "?", "?", "?", std::string("unreadable: ") + e.what());
      continue;
    }
    row(name, std::to_string(c.width) + "x" + std::to_string(c.height), c.fps,
        c.frames >= 0 ? std::to_string(c.frames) : "?", path.substr(path.rfind('/') + 1));
  }

  section("SYNTHETIC CLIPS (generated; 30 fps; FRAMES = default; any KIND_SIZE works, see get --help)");
  for (const auto& name : synthetic_names()) {
    SynthSpec s;
    parse_synthetic(name, &s);
    std::string status = "generated: " + synthetic_description(s.kind);
    if (s.kind == "pan") {
      try {
        status += " (photo " + find_photo("") + ")";
      } catch (const Error&) {
        if (available) continue;
        status += " (photo " + std::string(kDefaultPhoto) + " NOT FOUND)";
      }
    }
    row(name, std::to_string(s.width) + "x" + std::to_string(s.height), "30:1", std::to_string(kDefaultSyntheticFrames),
        status);
  }
  return kExitOk;
}

int cmd_get(const std::vector<std::string>& args) {
  std::string name, out, frames_text, photo;
  bool have_frames = false, have_photo = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string v;
    if (is_help(a)) {
      std::fputs(kGetUsage, stdout);
      return kExitOk;
    } else if (option_value(args, &i, "-o", &out) || option_value(args, &i, "--output", &out)) {
    } else if (option_value(args, &i, "--frames", &frames_text)) {
      have_frames = true;
    } else if (option_value(args, &i, "--photo", &photo)) {
      have_photo = true;
    } else if (!a.empty() && a[0] == '-') {
      return usage_error("get: unknown option '" + a + "'", kGetUsage);
    } else if (name.empty()) {
      name = a;
    } else {
      return usage_error("get: more than one clip name given ('" + name + "', '" + a + "')", kGetUsage);
    }
  }
  if (name.empty()) return usage_error("get: no clip name given", kGetUsage);
  if (out.empty()) return usage_error("get: no output file given (-o OUT.y4m)", kGetUsage);
  GetOptions opt;
  if (have_frames) {
    char* end = nullptr;
    long n = std::strtol(frames_text.c_str(), &end, 10);
    if (frames_text.empty() || *end != '\0' || n < 1 || n > 1000000)
      return usage_error("get: --frames needs a whole number >= 1, not '" + frames_text + "'", kGetUsage);
    opt.frames = n;
  }
  SynthSpec spec;
  const bool synthetic = parse_synthetic(name, &spec);
  if (have_photo && !(synthetic && spec.kind == "pan"))
    return usage_error("get: --photo applies to pan clips only", kGetUsage);
  opt.photo = photo;

  // tools/cli/files.h: a temporary file renamed onto OUT at the end, so an error or a signal leaves the old
  // OUT (or none) and never a part of a clip; a device or FIFO is written directly.
  files::Output o;
  std::string why;
  if (!o.open(out, files::Output::Options{true, {photo}}, &why)) throw Error(kExitData, why);
  bool write_failed = false;
  Sink sink = [&](const void* data, std::size_t size) {
    if (!write_failed && !o.write(data, size, &why)) write_failed = true;
  };
  const long n = write_clip(name, opt, sink);
  if (write_failed || !o.commit(&why)) throw Error(kExitData, why);
  std::fprintf(stderr, "gpuec-clip: wrote %ld frames of %s to %s\n", n, name.c_str(), out.c_str());
  return kExitOk;
}

int run(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return usage_error("no command given", kUsage);
  const std::string cmd = args[0];
  args.erase(args.begin());
  if (is_help(cmd)) {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  if (cmd == "help") {
    if (args.empty()) std::fputs(kUsage, stdout);
    else if (args[0] == "list") std::fputs(kListUsage, stdout);
    else if (args[0] == "get") std::fputs(kGetUsage, stdout);
    else return usage_error("help: unknown command '" + args[0] + "'", kUsage);
    return kExitOk;
  }
  if (cmd == "list") return cmd_list(args);
  if (cmd == "get") return cmd_get(args);
  return usage_error("unknown command '" + cmd + "'", kUsage);
}

}  // namespace

int main(int argc, char** argv) {
  files::remove_temporaries_on_signal();
  try {
    return run(argc, argv);
  } catch (const Error& e) {
    std::fprintf(stderr, "gpuec-clip: error: %s\n", e.what());
    if (e.code == kExitUsage) std::fprintf(stderr, "(see gpuec-clip --help)\n");
    return e.code;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpuec-clip: error: %s\n", e.what());
    return kExitData;
  }
}
