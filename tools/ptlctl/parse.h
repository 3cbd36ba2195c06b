// SPDX-License-Identifier: BSD-3-Clause
// The values ptlctl reads from its command line and prints back: nids,
// link-layer addresses, uids, pids, sizes. Pure functions, no kernel.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ptl_tool/parse.h"

namespace ptlctl {

// Numbers and byte counts are tools/lib's: a u32 in decimal or in hex with
// 0x (no sign, no octal, no blanks; "010" is ten), and a u32 byte count
// with an optional K, M or G suffix (1024-based).
using ptl::tool::ParseSize32;
using ptl::tool::ParseU32;

// A nid: "10.0.0.1" (dotted quad, read as an IPv4 address in host order,
// the default nid of a bound interface), "167772161" or "0x0a000001".
std::optional<uint32_t> ParseNid(std::string_view text);

// "10.0.0.1 (167772161)" for nids that look like IPv4 addresses (top byte
// set), "7" for small ones, "any" for PTL_NID_ANY.
std::string FormatNid(uint32_t nid);
// The dotted-quad form alone: "10.0.0.1".
std::string NidToDotted(uint32_t nid);

// A link-layer address: 1 to 32 bytes of one or two hex digits separated
// by ':' (or '-'): "02:00:0a:00:00:01".
std::optional<std::vector<uint8_t>> ParseLladdr(std::string_view text);
std::string FormatLladdr(const std::vector<uint8_t>& addr);

// An ethertype: a u16 of at least 0x0600 (smaller values are 802.3
// lengths, not types).
std::optional<uint16_t> ParseEthertype(std::string_view text);

// The contents of a key file: exactly `len` bytes, or 2 * `len` hex digits
// followed by nothing but white space (a newline).
std::optional<std::vector<uint8_t>> ParseKey(std::string_view contents, size_t len);

// A Portals pid (0 .. PTL_PID_MAX) or a range "FIRST-LAST".
struct PidRange {
  uint32_t first = 0;
  uint32_t last = 0;
  bool operator==(const PidRange&) const = default;
};
std::optional<uint32_t> ParsePid(std::string_view text);
std::optional<PidRange> ParsePidRange(std::string_view text);

// A uid as a number or a user name (looked up with getpwnam_r).
std::optional<uint32_t> ParseUid(std::string_view text);
// The user name of a uid, or "" if it has none.
std::string UserName(uint32_t uid);

// The text with every control or non-ASCII byte replaced by '?', for
// strings from the kernel (comm) printed on a terminal.
std::string Printable(std::string_view text);

}  // namespace ptlctl
