// SPDX-License-Identifier: BSD-3-Clause
// Numbers and sizes from the command line, parsed strictly: decimal or 0x
// hex (a leading 0 is still decimal, never octal), no sign, no blanks, and
// nullopt rather than a wrapped value when the number does not fit.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ptl::tool {

std::optional<uint64_t> ParseU64(std::string_view text);
std::optional<uint32_t> ParseU32(std::string_view text);

// A byte count: a number, then optionally K, M or G (binary multiples, either
// case), then optionally B or iB: "4096", "64K", "1M", "2GiB", "0x10", "4kB".
// In hex a final B is a digit: "0x1B" is 27.
std::optional<uint64_t> ParseSize(std::string_view text);
// The same, limited to 32 bits.
std::optional<uint32_t> ParseSize32(std::string_view text);
// Comma-separated sizes, at least one, none empty: "0,4K,1M".
std::optional<std::vector<uint64_t>> ParseSizeList(std::string_view text);

// For tools that stop at the first bad option: the value, or Die (die.h)
// with "bad size 'TEXT'" / "bad WHAT 'TEXT'".
uint64_t ParseSizeOrDie(std::string_view text);
uint32_t ParseU32OrDie(std::string_view text, const char* what);

// The non-empty pieces between the commas of "a,,b" ("a", "b").
std::vector<std::string> SplitList(std::string_view text, char sep = ',');

}  // namespace ptl::tool
