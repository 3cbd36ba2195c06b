// SPDX-License-Identifier: BSD-3-Clause
// The JSON writer (see json.h).
#include "ptl_tool/json.h"

#include <cmath>
#include <cstdio>

namespace ptl::tool {

namespace {

// Length of the valid UTF-8 sequence at s[i], or 0 if there is none.
std::size_t Utf8Length(std::string_view s, std::size_t i) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  std::size_t n;
  uint32_t cp;
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
    cp = c & 0x1f;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    cp = c & 0x0f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    cp = cp << 6 | (byte(i + k) & 0x3f);
  }
  // Overlong forms, surrogates and values past U+10FFFF are invalid.
  if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
      (cp >= 0xd800 && cp <= 0xdfff))
    return 0;
  return n;
}

// One ASCII character, escaped as JSON requires (and DEL too, so that the
// output stays printable).
void AppendAscii(std::string& out, unsigned char c) {
  switch (c) {
    case '"':
      out += "\\\"";
      return;
    case '\\':
      out += "\\\\";
      return;
    case '\n':
      out += "\\n";
      return;
    case '\t':
      out += "\\t";
      return;
    case '\r':
      out += "\\r";
      return;
    default:
      break;
  }
  if (c < 0x20 || c == 0x7f) {
    char buf[8];
    std::snprintf(buf, sizeof(buf), "\\u%04x", c);
    out += buf;
  } else {
    out += static_cast<char>(c);
  }
}

// %.6g, or %.Nf with `fixed`; null for what JSON has no number for.
std::string FormatReal(double v, bool fixed, int decimals) {
  if (!std::isfinite(v)) return "null";
  char buf[400];  // %f of DBL_MAX has 309 digits before the point
  if (fixed)
    std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  else
    std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

}  // namespace

std::string JsonQuote(std::string_view s) {
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size();) {
    std::size_t n = Utf8Length(s, i);
    if (n == 0) {
      out += "\\ufffd";
      ++i;
    } else if (n > 1) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      AppendAscii(out, static_cast<unsigned char>(s[i++]));
    }
  }
  out += '"';
  return out;
}

void JsonWriter::Newline() {
  if (!pretty_) return;
  out_ += '\n';
  out_.append(2 * has_element_.size(), ' ');
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (has_element_.empty()) return;
  if (has_element_.back()) out_ += ',';
  has_element_.back() = true;
  Newline();
}

JsonWriter& JsonWriter::BeginObject() {
  BeforeValue();
  out_ += '{';
  has_element_.push_back(false);
  return *this;
}

JsonWriter& JsonWriter::Close(char bracket) {
  bool had = has_element_.back();
  has_element_.pop_back();
  if (had) Newline();
  out_ += bracket;
  return *this;
}

JsonWriter& JsonWriter::EndObject() { return Close('}'); }

JsonWriter& JsonWriter::BeginArray() {
  BeforeValue();
  out_ += '[';
  has_element_.push_back(false);
  return *this;
}

JsonWriter& JsonWriter::EndArray() { return Close(']'); }

JsonWriter& JsonWriter::Key(std::string_view key) {
  BeforeValue();
  out_ += JsonQuote(key);
  out_ += pretty_ ? ": " : ":";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::Value(uint64_t v) { return Raw(std::to_string(v)); }

JsonWriter& JsonWriter::Value(std::string_view s) { return Raw(JsonQuote(s)); }

JsonWriter& JsonWriter::Int(int64_t v) { return Raw(std::to_string(v)); }

JsonWriter& JsonWriter::Real(double v) { return Raw(FormatReal(v, false, 0)); }

JsonWriter& JsonWriter::Fixed(double v, int decimals) { return Raw(FormatReal(v, true, decimals)); }

JsonWriter& JsonWriter::Bool(bool b) { return Raw(b ? "true" : "false"); }

JsonWriter& JsonWriter::Null() { return Raw("null"); }

JsonWriter& JsonWriter::Raw(std::string_view json) {
  BeforeValue();
  out_ += json;
  return *this;
}

}  // namespace ptl::tool
