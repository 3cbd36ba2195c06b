// SPDX-License-Identifier: BSD-3-Clause
// Parsing and printing of command-line values (see parse.h).
#include "parse.h"

#include <arpa/inet.h>
#include <linux/portals.h>
#include <p3api/types.h>
#include <pwd.h>
#include <unistd.h>

#include <cstdio>
#include <vector>

namespace ptlctl {

namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<uint32_t> ParseNid(std::string_view text) {
  if (text.find('.') != std::string_view::npos) {
    // inet_pton accepts exactly four decimal parts, no octal, no blanks.
    std::string s(text);
    in_addr addr{};
    if (inet_pton(AF_INET, s.c_str(), &addr) != 1) return std::nullopt;
    return ntohl(addr.s_addr);
  }
  return ParseU32(text);
}

std::string NidToDotted(uint32_t nid) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%u.%u.%u.%u", nid >> 24, (nid >> 16) & 0xff, (nid >> 8) & 0xff,
                nid & 0xff);
  return buf;
}

std::string FormatNid(uint32_t nid) {
  if (nid == PTL_NID_ANY) return "any";
  if (nid >> 24 == 0) return std::to_string(nid);
  return NidToDotted(nid) + " (" + std::to_string(nid) + ")";
}

std::optional<std::vector<uint8_t>> ParseLladdr(std::string_view text) {
  constexpr std::size_t kMaxAddrLen = 32;  // MAX_ADDR_LEN of <linux/netdevice.h>
  std::vector<uint8_t> addr;
  std::size_t i = 0;
  while (true) {
    int hi = i < text.size() ? HexDigit(text[i]) : -1;
    if (hi < 0) return std::nullopt;
    int value = hi;
    ++i;
    if (i < text.size() && HexDigit(text[i]) >= 0) value = value * 16 + HexDigit(text[i++]);
    addr.push_back(static_cast<uint8_t>(value));
    if (addr.size() > kMaxAddrLen) return std::nullopt;
    if (i == text.size()) break;
    if (text[i] != ':' && text[i] != '-') return std::nullopt;
    ++i;
  }
  return addr;
}

std::string FormatLladdr(const std::vector<uint8_t>& addr) {
  std::string out;
  char buf[4];
  for (std::size_t i = 0; i < addr.size(); ++i) {
    std::snprintf(buf, sizeof(buf), i ? ":%02x" : "%02x", addr[i]);
    out += buf;
  }
  return out;
}

std::optional<uint16_t> ParseEthertype(std::string_view text) {
  auto value = ParseU32(text);
  if (!value || *value < 0x0600 || *value > 0xffff) return std::nullopt;
  return static_cast<uint16_t>(*value);
}

std::optional<std::vector<uint8_t>> ParseKey(std::string_view contents, size_t len) {
  if (contents.size() == len) return std::vector<uint8_t>(contents.begin(), contents.end());
  size_t end = contents.find_last_not_of(" \t\r\n");
  if (end == std::string_view::npos || end + 1 != 2 * len) return std::nullopt;
  std::vector<uint8_t> key(len);
  for (size_t i = 0; i < len; i++) {
    int hi = HexDigit(contents[2 * i]), lo = HexDigit(contents[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    key[i] = static_cast<uint8_t>(hi * 16 + lo);
  }
  return key;
}

std::optional<uint32_t> ParsePid(std::string_view text) {
  auto value = ParseU32(text);
  if (!value || *value > PTL_PID_MAX) return std::nullopt;
  return value;
}

std::optional<PidRange> ParsePidRange(std::string_view text) {
  std::size_t dash = text.find('-');
  auto first = ParsePid(text.substr(0, dash));
  if (!first) return std::nullopt;
  if (dash == std::string_view::npos) return PidRange{*first, *first};
  auto last = ParsePid(text.substr(dash + 1));
  if (!last || *last < *first) return std::nullopt;
  return PidRange{*first, *last};
}

std::optional<uint32_t> ParseUid(std::string_view text) {
  if (auto uid = ParseU32(text)) {
    // (uid_t)-1 means "no change" to the kernel's uid interfaces.
    if (*uid == UINT32_MAX) return std::nullopt;
    return uid;
  }
  if (text.empty()) return std::nullopt;
  std::string name(text);
  long size = sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buf(size > 0 ? size : 16384);
  passwd pw{};
  passwd* found = nullptr;
  if (getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &found) != 0 || !found)
    return std::nullopt;
  return found->pw_uid;
}

std::string UserName(uint32_t uid) {
  long size = sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buf(size > 0 ? size : 16384);
  passwd pw{};
  passwd* found = nullptr;
  if (getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) != 0 || !found) return "";
  return found->pw_name;
}

std::string Printable(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  return out;
}

}  // namespace ptlctl
