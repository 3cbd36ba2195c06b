// SPDX-License-Identifier: BSD-3-Clause
// JSON output for the tools' -j modes and reports: JsonWriter streams any
// nesting of objects and arrays, compact or pretty-printed; JsonObject is
// the shorthand for one flat object. Strings are fully escaped and invalid
// UTF-8 becomes U+FFFD, so what they write always parses.
#pragma once

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace ptl::tool {

// s as a JSON string literal, quotes included.
std::string JsonQuote(std::string_view s);

class JsonWriter {
 public:
  explicit JsonWriter(bool pretty = false) : pretty_(pretty) {}

  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  // The key of the next value inside an object.
  JsonWriter& Key(std::string_view key);
  // Unsigned integers of any width; the others have names of their own so
  // that no call is ambiguous.
  JsonWriter& Value(uint64_t v);
  JsonWriter& Value(std::string_view s);
  JsonWriter& Value(const char* s) { return Value(std::string_view(s)); }
  JsonWriter& Int(int64_t v);
  // %.6g; NaN and infinities, which JSON cannot say, are null.
  JsonWriter& Real(double v);
  // A fixed number of decimals (%.3f for decimals 3); null if not finite.
  JsonWriter& Fixed(double v, int decimals);
  JsonWriter& Bool(bool b);
  JsonWriter& Null();
  // Text that is JSON already (a nested document built elsewhere).
  JsonWriter& Raw(std::string_view json);

  // Shorthands for a key and its value.
  template <typename T>
  JsonWriter& Field(std::string_view key, const T& v) {
    return Key(key).Value(v);
  }

  // The document so far (complete once every object and array is closed).
  const std::string& str() const { return out_; }

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

// One compact object, members in the order added: {"a":1,"b":"x"}.
class JsonObject {
 public:
  JsonObject() { w_.BeginObject(); }

  // Integers of any width and sign, and bool (true/false).
  template <std::integral T>
  JsonObject& Add(std::string_view key, T v) {
    if constexpr (std::is_same_v<T, bool>)
      Put(key).Bool(v);
    else if constexpr (std::is_signed_v<T>)
      Put(key).Int(v);
    else
      Put(key).Value(uint64_t{v});
    return *this;
  }
  JsonObject& Add(std::string_view key, double v) {
    Put(key).Real(v);
    return *this;
  }
  JsonObject& Add(std::string_view key, std::string_view v) {
    Put(key).Value(v);
    return *this;
  }
  JsonObject& Add(std::string_view key, const char* v) { return Add(key, std::string_view(v)); }
  JsonObject& AddFixed(std::string_view key, double v, int decimals) {
    Put(key).Fixed(v, decimals);
    return *this;
  }
  JsonObject& AddRaw(std::string_view key, std::string_view json) {
    Put(key).Raw(json);
    return *this;
  }
  std::string str() const { return w_.str() + "}"; }

 private:
  JsonWriter& Put(std::string_view key) { return w_.Key(key); }
  JsonWriter w_;
};

}  // namespace ptl::tool
