// libFuzzer target for the y4m reader of gpuec_sequences (sequences/clip.h: probe_local_clip, copy_y4m), the
// one gudcanny and gpuec-clip use. Plain: the input is the .y4m file (a memfd). With GPUEC_FUZZ_Y4M_XZ (target
// y4m_xz): the input is compressed in-process with liblzma into a temporary NAME.y4m.xz, so the .xz path
// (xz --robot --list, xz -dc) reads a mutated y4m. A refusal is a clip::Error with a message that starts with the
// path; a clip that is read hands over its header, then a FRAME line and the frame's 4:2:0 bytes (chroma planes
// of odd sizes rounded up) per frame.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "clip.h"
#include "fuzz_input.h"
#ifdef GPUEC_FUZZ_Y4M_XZ
#include <lzma.h>
#include <unistd.h>
#endif

namespace {

void read_clip(const std::string& path) {
  try {
    const gpuec::clip::LocalClip clip = gpuec::clip::probe_local_clip(path);
    if (clip.width < 1 || clip.height < 1) fuzz::broken("a clip of size " + std::to_string(clip.width) + "x" +
                                                        std::to_string(clip.height));
    const size_t frame_bytes = size_t(clip.width) * size_t(clip.height) +  // chroma: odd sizes round up
                               2 * ((size_t(clip.width) + 1) / 2) * ((size_t(clip.height) + 1) / 2);
    long piece = 0;
    const long frames = gpuec::clip::copy_y4m(path, -1, [&](const void*, size_t size) {
      if (piece > 0 && piece % 2 == 0 && size != frame_bytes)
        fuzz::broken("frame data of " + std::to_string(size) + " bytes, expected " + std::to_string(frame_bytes));
      ++piece;
    });
    if (piece != 1 + 2 * frames) fuzz::broken("copy_y4m handed over " + std::to_string(piece) + " pieces for " +
                                              std::to_string(frames) + " frames");
  } catch (const gpuec::clip::Error& e) {
    fuzz::check_refusal(e.what(), path);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
#ifndef GPUEC_FUZZ_Y4M_XZ
  const fuzz::MemFile file(data, size);
  read_clip(file.path());
#else
  std::vector<uint8_t> xz(lzma_stream_buffer_bound(size));
  size_t xz_size = 0;
  if (lzma_easy_buffer_encode(0, LZMA_CHECK_CRC64, nullptr, data, size, xz.data(), &xz_size, xz.size()) != LZMA_OK)
    fuzz::broken("lzma_easy_buffer_encode failed");
  const char* tmp = std::getenv("TMPDIR");
  std::string name = std::string(tmp && *tmp ? tmp : "/tmp") + "/gpuec-fuzz-XXXXXX.y4m.xz";
  const int fd = mkstemps(name.data(), 7);
  if (fd < 0) fuzz::broken("mkstemps failed");
  std::FILE* f = fdopen(fd, "wb");
  if (!f || std::fwrite(xz.data(), 1, xz_size, f) != xz_size || std::fclose(f) != 0) fuzz::broken("write failed");
  read_clip(name);
  unlink(name.c_str());
#endif
  return 0;
}
