// SPDX-License-Identifier: BSD-3-Clause
// What the kernel reports, decoded from the attributes of the "portals"
// family (uapi/linux/portals_netlink.h): interfaces, peers, NIs, pid
// reservations, counters and peer events. Every field is optional: a kernel
// sends what applies, and attributes or counters this ptlctl does not know
// (from a newer kernel) are skipped, never an error.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ptlctl {

// One counter of a PTL_A_STATS or PTL_A_PEER_STATS nest: an enum ptl_stat
// value, known or not.
struct Counter {
  uint16_t id = 0;
  uint64_t value = 0;
  bool operator==(const Counter&) const = default;
};
using Counters = std::vector<Counter>;

struct Iface {
  std::optional<uint32_t> iface, nid;
  std::optional<uint8_t> state;  // enum ptl_iface_state
  std::optional<uint32_t> ifindex;
  std::optional<std::string> ifname, transport;
  std::optional<std::string> auth;  // the frames' MAC; absent: none
  std::optional<uint32_t> mtu, eager_max;
  std::optional<uint16_t> ethertype;
  std::optional<uint32_t> nis, peers;
  std::optional<Counters> stats;
};

struct Peer {
  std::optional<uint32_t> iface, nid;
  std::optional<std::vector<uint8_t>> lladdr;
  std::optional<uint8_t> state;  // enum ptl_peer_state
  std::optional<uint32_t> flags, incarnation;
  std::optional<uint32_t> rtt_us, rttvar_us, rto_us, cwnd, inflight, queued, idle_ms;
  std::optional<uint32_t> uid;                    // rtscts: charged to it
  std::optional<uint32_t> credits, credits_owed;  // rdma
  std::optional<uint32_t> tx_bufs, mrs;           // rdma: held now
  std::optional<Counters> stats;
};

struct Ni {
  std::optional<uint32_t> iface, nid, pid, uid, jid, owner_pid;
  std::optional<std::string> comm;
  std::optional<Counters> stats;
};

struct PidRes {
  std::optional<uint32_t> iface, pid, pid_last, uid;
};

struct PeerEvent {
  std::optional<uint32_t> iface, nid;
  std::optional<uint8_t> event;  // enum ptl_event
  std::optional<uint32_t> incarnation, failed;
};

// Decoders of one message's attributes (the payload after genlmsghdr).
Iface DecodeIface(std::span<const uint8_t> attrs);
Peer DecodePeer(std::span<const uint8_t> attrs);
Ni DecodeNi(std::span<const uint8_t> attrs);
PidRes DecodePidRes(std::span<const uint8_t> attrs);
PeerEvent DecodePeerEvent(std::span<const uint8_t> attrs);
// The counters of PTL_CMD_GET_STATS's reply (its PTL_A_STATS nest).
Counters DecodeStats(std::span<const uint8_t> attrs);
// The counters inside one stats nest.
Counters DecodeCounters(std::span<const uint8_t> nest);

// Names. Known values give the snake_case of the enum name without its
// prefix ("tx_frames", "up"); unknown ones "" (callers print them
// generically).
std::string_view StatName(uint16_t id);
std::string_view IfaceStateName(uint8_t state);
std::string_view PeerStateName(uint8_t state);
std::string_view EventName(uint8_t event);
// The name of an attribute of enum ptl_attr ("ifname", "peer_lladdr"),
// for error messages; "attribute N" if unknown.
std::string AttrName(uint16_t type);

}  // namespace ptlctl
