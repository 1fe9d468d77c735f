// A minimal streaming JSON writer: objects, arrays, strings, integers,
// doubles (shortest round-trip-safe text, so equal runs print equal bytes).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mroce::sim {

class JsonWriter {
public:
  JsonWriter &begin_object();
  JsonWriter &end_object();
  JsonWriter &begin_array();
  JsonWriter &end_array();
  JsonWriter &key(const std::string &k);
  JsonWriter &value(const std::string &s);
  JsonWriter &value(const char *s) { return value(std::string(s)); }
  JsonWriter &value(uint64_t v);
  JsonWriter &value(int64_t v);
  JsonWriter &value(uint32_t v) { return value(uint64_t{v}); }
  JsonWriter &value(int v) { return value(int64_t{v}); }
  JsonWriter &value(double v);
  JsonWriter &value(bool v);
  template <typename T> JsonWriter &field(const std::string &k, const T &v) {
    key(k);
    return value(v);
  }
  const std::string &str() const { return out_; }

private:
  void separate();
  static std::string escape(const std::string &s);
  std::string out_;
  std::vector<bool> first_; // per open container: nothing written yet
  bool after_key_ = false;
};

} // namespace mroce::sim
