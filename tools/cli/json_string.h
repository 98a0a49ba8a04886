// tools/cli/json_string.h: a string as a JSON string literal (quotes, backslashes and control characters
// escaped), for the JSON reports of gudcanny and canny-eval.
#pragma once

#include <cstdio>
#include <string>

inline std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char ch : s) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += char(ch);
    } else if (ch < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", ch);
      out += buf;
    } else {
      out += char(ch);
    }
  }
  return out + "\"";
}
