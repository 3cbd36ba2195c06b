// SPDX-License-Identifier: BSD-3-Clause
// Encoding and decoding of netlink attributes (see attrs.h).
#include "attrs.h"

#include <linux/netlink.h>

#include <cstring>

namespace ptlctl {

namespace {

template <typename T>
Attr IntAttr(uint16_t type, T v) {
  Attr a{type, std::vector<uint8_t>(sizeof(T))};
  std::memcpy(a.payload.data(), &v, sizeof(T));
  return a;
}

template <typename T>
std::optional<T> Int(std::span<const uint8_t> payload) {
  if (payload.size() != sizeof(T)) return std::nullopt;
  T v;
  std::memcpy(&v, payload.data(), sizeof(T));
  return v;
}

}  // namespace

Attr U8Attr(uint16_t type, uint8_t v) { return IntAttr(type, v); }
Attr U16Attr(uint16_t type, uint16_t v) { return IntAttr(type, v); }
Attr U32Attr(uint16_t type, uint32_t v) { return IntAttr(type, v); }
Attr U64Attr(uint16_t type, uint64_t v) { return IntAttr(type, v); }

Attr StringAttr(uint16_t type, std::string_view s) {
  Attr a{type, std::vector<uint8_t>(s.begin(), s.end())};
  a.payload.push_back(0);
  return a;
}

Attr BinaryAttr(uint16_t type, std::span<const uint8_t> bytes) {
  return Attr{type, std::vector<uint8_t>(bytes.begin(), bytes.end())};
}

Attr NestAttr(uint16_t type, const std::vector<Attr>& inner) {
  return Attr{static_cast<uint16_t>(type | NLA_F_NESTED), EncodeAttrs(inner)};
}

std::vector<uint8_t> EncodeAttrs(const std::vector<Attr>& attrs) {
  std::vector<uint8_t> out;
  for (const Attr& a : attrs) {
    nlattr head{static_cast<uint16_t>(NLA_HDRLEN + a.payload.size()), a.type};
    std::size_t at = out.size();
    out.resize(at + NLA_ALIGN(head.nla_len), 0);
    std::memcpy(out.data() + at, &head, sizeof(head));
    if (!a.payload.empty())
      std::memcpy(out.data() + at + NLA_HDRLEN, a.payload.data(), a.payload.size());
  }
  return out;
}

std::optional<uint8_t> AttrView::U8() const { return Int<uint8_t>(payload); }
std::optional<uint16_t> AttrView::U16() const { return Int<uint16_t>(payload); }
std::optional<uint32_t> AttrView::U32() const { return Int<uint32_t>(payload); }

std::optional<uint64_t> AttrView::U64() const {
  if (auto v = Int<uint64_t>(payload)) return v;
  if (auto v = Int<uint32_t>(payload)) return *v;
  return std::nullopt;
}

std::string AttrView::String() const {
  std::size_t n = payload.size();
  while (n > 0 && payload[n - 1] == 0) --n;
  return std::string(payload.begin(), payload.begin() + n);
}

std::vector<AttrView> ParseAttrs(std::span<const uint8_t> bytes) {
  std::vector<AttrView> out;
  std::size_t at = 0;
  while (bytes.size() - at >= NLA_HDRLEN) {
    nlattr head;
    std::memcpy(&head, bytes.data() + at, sizeof(head));
    if (head.nla_len < NLA_HDRLEN || head.nla_len > bytes.size() - at) break;
    out.push_back({static_cast<uint16_t>(head.nla_type & NLA_TYPE_MASK),
                   bytes.subspan(at + NLA_HDRLEN, head.nla_len - NLA_HDRLEN)});
    at += NLA_ALIGN(head.nla_len);
    if (at > bytes.size()) break;
  }
  return out;
}

}  // namespace ptlctl
