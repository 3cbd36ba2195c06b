// SPDX-License-Identifier: BSD-3-Clause
// A small streaming JSON writer: objects, arrays, strings and unsigned
// integers, compact or pretty-printed. Strings are escaped and invalid
// UTF-8 is replaced by U+FFFD, so the output always parses.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ptlctl {

class JsonWriter {
 public:
  explicit JsonWriter(bool pretty = false) : pretty_(pretty) {}

  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  // The key of the next value inside an object.
  JsonWriter& Key(std::string_view key);
  JsonWriter& Value(uint64_t v);
  JsonWriter& Value(std::string_view s);
  JsonWriter& Value(const char* s) { return Value(std::string_view(s)); }
  JsonWriter& Bool(bool b);

  // Shorthands for a key and its value.
  template <typename T>
  JsonWriter& Field(std::string_view key, const T& v) {
    return Key(key).Value(v);
  }

  // The document so far (complete once every object and array is closed).
  const std::string& str() const { return out_; }

  static std::string Quote(std::string_view s);

 private:
  void BeforeValue();
  JsonWriter& Close(char bracket);
  void Newline();

  bool pretty_;
  std::string out_;
  // One entry per open container: whether it has an element yet.
  std::vector<bool> has_element_;
  bool after_key_ = false;
};

}  // namespace ptlctl
