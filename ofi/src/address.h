// SPDX-License-Identifier: BSD-3-Clause
// An endpoint's address: the Portals process (nid, pid) and the endpoint's
// index in that process (which portals it owns, protocol.h). fi_getname
// gives these 8 bytes; with FI_AV_MAP an fi_addr_t is the same three
// fields packed, so no table is consulted on the data path.
#ifndef PTL_OFI_ADDRESS_H
#define PTL_OFI_ADDRESS_H

#include <rdma/fabric.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

namespace ptl::ofi {

inline constexpr uint8_t kAddressVersion = 1;

struct Address {
  uint32_t nid = 0;
  uint16_t pid = 0;
  uint8_t ep = 0;
  uint8_t version = kAddressVersion;

  friend bool operator==(const Address&, const Address&) = default;
};
static_assert(sizeof(Address) == 8);

// nid in the high 32 bits, pid in 8..23, endpoint in 0..7: never all ones
// (pids stop at 65534), so never FI_ADDR_UNSPEC / FI_ADDR_NOTAVAIL.
constexpr fi_addr_t Pack(const Address& a) {
  return (fi_addr_t{a.nid} << 32) | (fi_addr_t{a.pid} << 8) | a.ep;
}
constexpr Address Unpack(fi_addr_t f) {
  Address a;
  a.nid = static_cast<uint32_t>(f >> 32);
  a.pid = static_cast<uint16_t>((f >> 8) & 0xffff);
  a.ep = static_cast<uint8_t>(f & 0xff);
  return a;
}

// Reads an address from an application's buffer (no alignment assumed);
// false if it is not one of ours.
inline bool ReadAddress(const void* raw, Address* out) {
  std::memcpy(out, raw, sizeof(*out));
  return out->version == kAddressVersion && out->pid != 0xffff;
}

// "fi_ptl://NID:PID/EP", NID dotted as the module prints nids.
inline int FormatAddress(const Address& a, char* buf, size_t len) {
  return std::snprintf(buf, len, "fi_ptl://%u.%u.%u.%u:%u/%u", a.nid >> 24, (a.nid >> 16) & 0xff,
                       (a.nid >> 8) & 0xff, a.nid & 0xff, a.pid, a.ep);
}

}  // namespace ptl::ofi

#endif  // PTL_OFI_ADDRESS_H
