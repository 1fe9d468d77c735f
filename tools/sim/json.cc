#include "json.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace mroce::sim {

void JsonWriter::separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back())
      out_ += ",";
    first_.back() = false;
  }
}

JsonWriter &JsonWriter::begin_object() {
  separate();
  out_ += "{";
  first_.push_back(true);
  return *this;
}

JsonWriter &JsonWriter::end_object() {
  out_ += "}";
  first_.pop_back();
  return *this;
}

JsonWriter &JsonWriter::begin_array() {
  separate();
  out_ += "[";
  first_.push_back(true);
  return *this;
}

JsonWriter &JsonWriter::end_array() {
  out_ += "]";
  first_.pop_back();
  return *this;
}

JsonWriter &JsonWriter::key(const std::string &k) {
  separate();
  out_ += escape(k) + ":";
  after_key_ = true;
  return *this;
}

JsonWriter &JsonWriter::value(const std::string &s) {
  separate();
  out_ += escape(s);
  return *this;
}

JsonWriter &JsonWriter::value(uint64_t v) {
  separate();
  out_ += std::to_string(v);
  return *this;
}

JsonWriter &JsonWriter::value(int64_t v) {
  separate();
  out_ += std::to_string(v);
  return *this;
}

JsonWriter &JsonWriter::value(double v) {
  separate();
  if (!std::isfinite(v)) {
    out_ += "null";
    return *this;
  }
  char buf[32];
  // Shortest of %.{1..17}g that reads back as the same double.
  for (int prec = 6; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof(buf), "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v)
      break;
  }
  out_ += buf;
  return *this;
}

JsonWriter &JsonWriter::value(bool v) {
  separate();
  out_ += v ? "true" : "false";
  return *this;
}

std::string JsonWriter::escape(const std::string &s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    switch (c) {
    case '"':
      o += "\\\"";
      break;
    case '\\':
      o += "\\\\";
      break;
    case '\n':
      o += "\\n";
      break;
    case '\t':
      o += "\\t";
      break;
    default:
      if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\u%04x", c);
        o += buf;
      } else {
        o += static_cast<char>(c);
      }
    }
  }
  return o + "\"";
}

} // namespace mroce::sim
