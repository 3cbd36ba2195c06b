// SPDX-License-Identifier: BSD-3-Clause
// Numbers and sizes (see parse.h).
#include "ptl_tool/parse.h"

#include <charconv>
#include <cstdint>
#include <limits>

#include "ptl_tool/die.h"

namespace ptl::tool {

namespace {

// from_chars takes no sign, prefix or blank, and reports overflow: exactly
// the strictness wanted, once the 0x is taken off by hand.
std::optional<uint64_t> ParseDigits(std::string_view s, int base) {
  uint64_t v = 0;
  if (s.empty()) return std::nullopt;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// The multiplier of a size's suffix, removed from `num`; 1 if none.
uint64_t TakeMultiplier(std::string_view& num) {
  auto strip = [&](std::string_view suffix) {
    if (num.size() <= suffix.size() || !num.ends_with(suffix)) return false;
    num.remove_suffix(suffix.size());
    return true;
  };
  // In hex a final B is a digit (0x1B is 27), so only "iB" is a unit there.
  bool hex = num.size() > 2 && num[0] == '0' && (num[1] == 'x' || num[1] == 'X');
  strip("iB") || (!hex && strip("B"));
  if (num.size() < 2) return 1;  // a lone "K" has no number
  int shift = 0;
  switch (num.back()) {
    case 'k':
    case 'K':
      shift = 10;
      break;
    case 'm':
    case 'M':
      shift = 20;
      break;
    case 'g':
    case 'G':
      shift = 30;
      break;
    default:
      return 1;
  }
  num.remove_suffix(1);
  return uint64_t{1} << shift;
}

}  // namespace

std::optional<uint64_t> ParseU64(std::string_view text) {
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
    return ParseDigits(text.substr(2), 16);
  return ParseDigits(text, 10);
}

std::optional<uint32_t> ParseU32(std::string_view text) {
  auto v = ParseU64(text);
  if (!v || *v > std::numeric_limits<uint32_t>::max()) return std::nullopt;
  return static_cast<uint32_t>(*v);
}

std::optional<uint64_t> ParseSize(std::string_view text) {
  uint64_t mult = TakeMultiplier(text);
  auto v = ParseU64(text);
  if (!v || *v > std::numeric_limits<uint64_t>::max() / mult) return std::nullopt;
  return *v * mult;
}

std::optional<uint32_t> ParseSize32(std::string_view text) {
  auto v = ParseSize(text);
  if (!v || *v > std::numeric_limits<uint32_t>::max()) return std::nullopt;
  return static_cast<uint32_t>(*v);
}

std::optional<std::vector<uint64_t>> ParseSizeList(std::string_view text) {
  std::vector<uint64_t> out;
  while (!text.empty()) {
    auto comma = text.find(',');
    auto v = ParseSize(text.substr(0, comma));
    if (!v) return std::nullopt;
    out.push_back(*v);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  if (out.empty()) return std::nullopt;
  return out;
}

uint64_t ParseSizeOrDie(std::string_view text) {
  auto v = ParseSize(text);
  if (!v) Die("bad size '%.*s'", static_cast<int>(text.size()), text.data());
  return *v;
}

uint32_t ParseU32OrDie(std::string_view text, const char* what) {
  auto v = ParseU32(text);
  if (!v) Die("bad %s '%.*s'", what, static_cast<int>(text.size()), text.data());
  return *v;
}

std::vector<std::string> SplitList(std::string_view text, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); i++) {
    if (i < text.size() && text[i] != sep) continue;
    if (i > start) out.emplace_back(text.substr(start, i - start));
    start = i + 1;
  }
  return out;
}

}  // namespace ptl::tool
