// SPDX-License-Identifier: BSD-3-Clause
// Netlink attributes as plain bytes: the requests ptlctl builds and the
// replies it decodes, independent of libnl so that both can be tested
// without a kernel.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ptlctl {

// One attribute to send: its type and its payload (host order).
struct Attr {
  uint16_t type = 0;
  std::vector<uint8_t> payload;
  bool operator==(const Attr&) const = default;
};

Attr U8Attr(uint16_t type, uint8_t v);
Attr U16Attr(uint16_t type, uint16_t v);
Attr U32Attr(uint16_t type, uint32_t v);
Attr U64Attr(uint16_t type, uint64_t v);
// A NUL-terminated string, as NLA_NUL_STRING and NLA_STRING policies take.
Attr StringAttr(uint16_t type, std::string_view s);
Attr BinaryAttr(uint16_t type, std::span<const uint8_t> bytes);
// A nest holding `inner`.
Attr NestAttr(uint16_t type, const std::vector<Attr>& inner);

// The wire form of a list of attributes: each a struct nlattr header, the
// payload, and padding to 4 bytes.
std::vector<uint8_t> EncodeAttrs(const std::vector<Attr>& attrs);

// A received attribute: its type (without the NLA_F_NESTED and
// NLA_F_NET_BYTEORDER bits) and a view of its payload.
struct AttrView {
  uint16_t type;
  std::span<const uint8_t> payload;

  // The payload as an integer of exactly that size, else nothing: an
  // attribute of the wrong size is treated as absent, never trusted.
  std::optional<uint8_t> U8() const;
  std::optional<uint16_t> U16() const;
  std::optional<uint32_t> U32() const;
  // A u64, or a u32 widened (counters may be either on the wire).
  std::optional<uint64_t> U64() const;
  // A string, without the trailing NULs.
  std::string String() const;
  std::vector<uint8_t> Bytes() const { return {payload.begin(), payload.end()}; }
};

// The attributes in `bytes`, in order. Parsing stops at the first
// malformed header (a truncated message loses only its tail).
std::vector<AttrView> ParseAttrs(std::span<const uint8_t> bytes);

}  // namespace ptlctl
