// SPDX-License-Identifier: BSD-3-Clause
// Commands to requests (see request.h).
#include "request.h"

#include <linux/portals_netlink.h>

#include <span>
#include <stdexcept>
#include <type_traits>

namespace ptlctl {

namespace {

Request Build(const IfaceShow& c) {
  if (!c.iface) return {PTL_CMD_GET_IFACE, true, {}};
  return {PTL_CMD_GET_IFACE, false, {U32Attr(PTL_A_IFACE, *c.iface)}};
}

Request Build(const IfaceSet& c) {
  Request r{PTL_CMD_SET_IFACE, false, {U32Attr(PTL_A_IFACE, c.iface)}};
  if (c.dev) r.attrs.push_back(StringAttr(PTL_A_IFNAME, *c.dev));
  if (c.transport) r.attrs.push_back(StringAttr(PTL_A_TRANSPORT, *c.transport));
  if (c.nid) r.attrs.push_back(U32Attr(PTL_A_NID, *c.nid));
  if (c.eager) r.attrs.push_back(U32Attr(PTL_A_EAGER_MAX, *c.eager));
  if (c.ethertype) r.attrs.push_back(U16Attr(PTL_A_ETHERTYPE, *c.ethertype));
  if (!c.key.empty())
    r.attrs.push_back(BinaryAttr(PTL_A_AUTH_KEY, std::span<const uint8_t>(c.key)));
  return r;
}

Request Build(const IfaceUnbind& c) {
  return {PTL_CMD_DEL_IFACE, false, {U32Attr(PTL_A_IFACE, c.iface)}};
}

Request Build(const PeerShow& c) {
  return {PTL_CMD_GET_PEER, true, {U32Attr(PTL_A_IFACE, c.iface)}};
}

Request Build(const PeerAdd& c) {
  return {PTL_CMD_NEW_PEER,
          false,
          {U32Attr(PTL_A_IFACE, c.iface), U32Attr(PTL_A_NID, c.nid),
           BinaryAttr(PTL_A_PEER_LLADDR, std::span<const uint8_t>(c.lladdr))}};
}

Request Build(const PeerDel& c) {
  return {PTL_CMD_DEL_PEER, false, {U32Attr(PTL_A_IFACE, c.iface), U32Attr(PTL_A_NID, c.nid)}};
}

Request Build(const NiShow&) { return {PTL_CMD_GET_NI, true, {}}; }

Request Build(const StatsShow&) { return {PTL_CMD_GET_STATS, false, {}}; }

// The header lists PTL_A_IFACE among the replies of this dump and does not
// say whether the request may filter by it; ptlctl sends it when the user
// names an interface and also filters the replies itself.
Request Build(const PidShow& c) {
  Request r{PTL_CMD_GET_PIDRES, true, {}};
  if (c.iface) r.attrs.push_back(U32Attr(PTL_A_IFACE, *c.iface));
  return r;
}

Request Build(const PidReserve& c) {
  Request r{PTL_CMD_NEW_PIDRES,
            false,
            {U32Attr(PTL_A_IFACE, c.iface), U32Attr(PTL_A_PID, c.range.first),
             U32Attr(PTL_A_UID, c.uid)}};
  if (c.range.last != c.range.first) r.attrs.push_back(U32Attr(PTL_A_PID_LAST, c.range.last));
  return r;
}

Request Build(const PidUnreserve& c) {
  return {PTL_CMD_DEL_PIDRES, false, {U32Attr(PTL_A_IFACE, c.iface), U32Attr(PTL_A_PID, c.pid)}};
}

}  // namespace

Request BuildRequest(const Command& command) {
  return std::visit(
      [](const auto& c) -> Request {
        using T = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<T, Help> || std::is_same_v<T, Version> ||
                      std::is_same_v<T, Monitor> || std::is_same_v<T, BlkShow> ||
                      std::is_same_v<T, BlkAttach> || std::is_same_v<T, BlkDetach>)
          throw std::logic_error("no request for this command");
        else
          return Build(c);
      },
      command);
}

}  // namespace ptlctl
