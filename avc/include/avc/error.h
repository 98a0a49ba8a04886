// avc/error.h: how the parser reports a problem.
//
// Errors are values: every parsing function returns bool (true = ok) and on failure fills an Error with
// a status, the message (which names the syntax element and the offending value) and, where known, the
// index of the NAL unit in the stream and the macroblock address. Nothing throws, nothing aborts; after a
// failure the output record of that call is unspecified (partly filled) and must not be used.
//
// Status tells the caller what kind of refusal it is:
//   kMalformed:   the data break the H.264 syntax or its value ranges (damaged or truncated stream);
//   kUnsupported: valid H.264, but outside baseline CAVLC as the entropy stage supports it (CABAC,
//                 interlace, B/SP/SI slices, 4:2:2, high bit depth, 8x8 transform, scaling lists,
//                 weighted prediction, data partitioning); the message names the feature;
//   kMissing:     a slice refers to a parameter set that the stream has not sent (yet);
//   kBackend:     not the stream: the re-coding backend failed or is not available (no GPU, a CUDA
//                 error, out of memory; avc/recoder.h).
// Formatting the message allocates; that only happens on the error path.
#pragma once

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <string>

namespace avc {

enum class Status : uint8_t { kOk = 0, kMalformed, kUnsupported, kMissing, kBackend };

inline const char* status_name(Status s) {
  switch (s) {
    case Status::kOk: return "ok";
    case Status::kMalformed: return "malformed";
    case Status::kUnsupported: return "unsupported";
    case Status::kMissing: return "missing parameter set";
    case Status::kBackend: return "backend";
  }
  return "?";
}

struct Error {
  Status status = Status::kOk;
  int64_t nal_index = -1;  // index of the NAL unit in the stream (0 = first), -1 when not known
  int64_t offset = -1;     // byte offset in the stream where the problem is (or its NAL starts), -1 unknown
  int32_t mb_addr = -1;    // macroblock address for macroblock-layer errors, -1 otherwise
  std::string message;     // what is wrong, without the NAL index / MB address (describe() adds them)

  bool ok() const { return status == Status::kOk; }
  void clear() {
    status = Status::kOk;
    nal_index = offset = -1;
    mb_addr = -1;
    message.clear();
  }
  // "NAL 12 at byte 3456, MB 34: malformed: slice header: slice_qp_delta 40 gives QP 66 (0..51)"
  std::string describe() const {
    std::string s;
    char buf[96];
    if (nal_index >= 0) {
      std::snprintf(buf, sizeof buf, "NAL %lld", static_cast<long long>(nal_index));
      s += buf;
    }
    if (offset >= 0) {
      std::snprintf(buf, sizeof buf, "%sat byte %lld", s.empty() ? "" : " ", static_cast<long long>(offset));
      s += buf;
    }
    if (mb_addr >= 0) {
      std::snprintf(buf, sizeof buf, "%sMB %d", s.empty() ? "" : ", ", mb_addr);
      s += buf;
    }
    if (!s.empty()) s += ": ";
    s += status_name(status);
    s += ": ";
    s += message;
    return s;
  }
};

// Sets e (status and printf-style message; NAL index, offset and MB address untouched) and returns false,
// so that parsing code can write `return fail(err, Status::kMalformed, "...", ...);`.
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
inline bool
fail(Error& e, Status s, const char* fmt, ...) {
  e.status = s;
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  e.message = buf;
  return false;
}

}  // namespace avc
