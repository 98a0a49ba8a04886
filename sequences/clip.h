// gpuec sequences: test clips for the encoder tests and benchmarks.
//
// Two sources of clips:
//  * the xiph "derf" collection (manifest sequences/derf.tsv, embedded at build time): clips are
//    looked up as y4m or y4m.xz files in the sequences folder (see sequences_dir());
//  * synthetic clips generated here, bit-exact on every machine (integer arithmetic and a fixed
//    PRNG only): pan_<size> (camera pan over a photo, with film grain), noise_<size> and
//    checkerboard_<size>.
// All output is 8-bit 4:2:0 YUV4MPEG2.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpuec::clip {

// Process exit codes of gpuec-clip (and download.sh).
enum ExitCode { kExitOk = 0, kExitUsage = 1, kExitData = 2 };

// Every failure is reported as an Error carrying the exit code the tool should return.
struct Error : std::runtime_error {
  int code;
  Error(int exit_code, const std::string& message) : std::runtime_error(message), code(exit_code) {}
};

// One row of sequences/derf.tsv.
struct DerfEntry {
  std::string name;    // what gpuec-clip and download.sh accept, e.g. foreman_cif
  std::string file;    // file name in the xiph derf y4m folder, e.g. foreman_cif.y4m
  int width = 0, height = 0;
  int fps_num = 0, fps_den = 1;
  long frames = 0;     // frames of the full xiph clip (best knowledge, see notes)
  long shared = 0;     // frames present in the shared folder, 0 if not there
  std::string notes;
};

const std::vector<DerfEntry>& derf_manifest();
const DerfEntry* find_derf(const std::string& name);  // nullptr if not in the manifest
const char* derf_manifest_text();                     // the embedded derf.tsv

// Folders. sequences: $GPUEC_SEQUENCES, else $GPUEC_SHARED_DIR/sequences, else the shared folder
// configured at build time (CMake GPUEC_SHARED_DIR, default <repo>/../shared) + /sequences.
// images: $GPUEC_IMAGES, else $GPUEC_SHARED_DIR/images, else <configured shared>/images.
std::string sequences_dir();
std::string images_dir();

// The local file holding clip `name` in sequences_dir(): NAME.y4m, NAME.y4m.xz, or the derf file
// name (+ .xz). Empty if there is none.
std::string find_local_clip(const std::string& name);
// What a local .y4m / .y4m.xz file holds: its header, and its frame count told from the file size
// (.xz: from `xz --robot --list`; -1 if it cannot be told cheaply). Throws Error(kExitData).
struct LocalClip {
  std::string path;
  int width = 0, height = 0;
  std::string fps;  // "N:D" from the header ("?" if absent)
  long frames = -1;
};
LocalClip probe_local_clip(const std::string& path);
// Names of y4m / y4m.xz files in sequences_dir() that are not in the derf manifest.
std::vector<std::string> extra_local_clips();

// Synthetic clips: <kind>_<size>, kind in {pan, noise, checkerboard}, size in {qcif, cif, 4cif,
// 360p, 720p, 1080p, 2160p, WxH} (even W and H).
struct SynthSpec {
  std::string kind;
  int width = 0, height = 0;
};
bool parse_synthetic(const std::string& name, SynthSpec* spec);
const std::vector<std::string>& synthetic_names();  // the documented ones
std::string synthetic_description(const std::string& kind);
constexpr long kDefaultSyntheticFrames = 60;
constexpr const char* kDefaultPhoto = "forest_path_2560x1600.jpg";

// Where bytes go. The y4m stream is written in pieces (header, FRAME lines, frame data).
using Sink = std::function<void(const void* data, std::size_t size)>;

struct GetOptions {
  long frames = -1;   // -1: whole local clip / kDefaultSyntheticFrames
  std::string photo;  // pan only: photo file name (searched in images_dir()/photos) or path
};

// Writes clip `name` (synthetic or local derf/shared file) to sink; returns the frame count.
// Throws Error(kExitData) for an unknown name, a missing clip or too few frames.
long write_clip(const std::string& name, const GetOptions& options, const Sink& sink);
long write_synthetic(const SynthSpec& spec, long frames, const std::string& photo, const Sink& sink);
// Copies the header and the first `frames` frames (-1: all) of a 4:2:0 8-bit y4m (.xz through
// `xz -dc`) byte for byte.
long copy_y4m(const std::string& path, long frames, const Sink& sink);

// The luma plane of a JPEG file, W x H bytes (BT.601 limited range, the integer formula of the pan clips;
// libjpeg-turbo with the accurate integer IDCT, so the same bytes on every machine). Throws Error(kExitData)
// for a missing, truncated or corrupt file, and for one of more than kMaxPhotoPixels pixels (checked from the
// header, before anything is allocated).
constexpr long kMaxPhotoPixels = 1L << 26;  // 8192 x 8192; pan clips of 2160p need 3840 x 2160
std::vector<uint8_t> jpeg_luma(const std::string& path, int* width, int* height);

// Resolves a photo name for pan clips to a path ("" = kDefaultPhoto).
std::string find_photo(const std::string& name_or_path);

// 64-bit FNV-1a, used to pin generator output in the tests.
uint64_t fnv1a64(const void* data, std::size_t size, uint64_t hash = 0xcbf29ce484222325ull);

}  // namespace gpuec::clip
