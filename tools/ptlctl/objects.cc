// SPDX-License-Identifier: BSD-3-Clause
// Decoding the family's messages into objects (see objects.h).
#include "objects.h"

#include <linux/portals_netlink.h>

#include <array>
#include <utility>

#include "attrs.h"

namespace ptlctl {

namespace {

// Sets `field` from `a` if the payload has the field's size.
void Set(std::optional<uint8_t>& field, const AttrView& a) {
  if (auto v = a.U8()) field = v;
}
void Set(std::optional<uint16_t>& field, const AttrView& a) {
  if (auto v = a.U16()) field = v;
}
void Set(std::optional<uint32_t>& field, const AttrView& a) {
  if (auto v = a.U32()) field = v;
}
void Set(std::optional<std::string>& field, const AttrView& a) { field = a.String(); }
void Set(std::optional<std::vector<uint8_t>>& field, const AttrView& a) { field = a.Bytes(); }
void Set(std::optional<Counters>& field, const AttrView& a) { field = DecodeCounters(a.payload); }

template <std::size_t N>
constexpr std::array<std::string_view, N> Table(
    std::initializer_list<std::pair<std::size_t, std::string_view>> entries) {
  std::array<std::string_view, N> t{};
  for (auto [i, name] : entries) t[i] = name;
  return t;
}

constexpr auto kStatNames = Table<__PTL_STAT_MAX>({
    {PTL_STAT_TX_FRAMES, "tx_frames"},
    {PTL_STAT_TX_BYTES, "tx_bytes"},
    {PTL_STAT_RX_FRAMES, "rx_frames"},
    {PTL_STAT_RX_BYTES, "rx_bytes"},
    {PTL_STAT_RETRANSMITS, "retransmits"},
    {PTL_STAT_TIMEOUTS, "timeouts"},
    {PTL_STAT_DUPLICATES, "duplicates"},
    {PTL_STAT_OUT_OF_ORDER, "out_of_order"},
    {PTL_STAT_BAD_FRAMES, "bad_frames"},
    {PTL_STAT_STALE_FRAMES, "stale_frames"},
    {PTL_STAT_NO_BUFFER, "no_buffer"},
    {PTL_STAT_MSGS_TX, "msgs_tx"},
    {PTL_STAT_MSGS_RX, "msgs_rx"},
    {PTL_STAT_MSGS_FAILED, "msgs_failed"},
    {PTL_STAT_RTS, "rts"},
    {PTL_STAT_LATE_RESPONSES, "late_responses"},
    {PTL_STAT_PEER_RESTARTS, "peer_restarts"},
    {PTL_STAT_PEERS_RECLAIMED, "peers_reclaimed"},
    {PTL_STAT_OPEN_FILES, "open_files"},
    {PTL_STAT_NIS, "nis"},
    {PTL_STAT_MDS, "mds"},
    {PTL_STAT_EQS, "eqs"},
    {PTL_STAT_PINNED_PAGES, "pinned_pages"},
    {PTL_STAT_INTRA_MSGS, "intra_msgs"},
    {PTL_STAT_DROPS, "drops"},
    {PTL_STAT_CORE_OBJECTS, "core_objects"},
    {PTL_STAT_NI_MES, "ni_mes"},
    {PTL_STAT_NI_MDS, "ni_mds"},
    {PTL_STAT_NI_EQS, "ni_eqs"},
    {PTL_STAT_NI_MSGS_IN_FLIGHT, "ni_msgs_in_flight"},
    {PTL_STAT_SINK_GETS, "sink_gets"},
    {PTL_STAT_OOO_BYTES, "ooo_bytes"},
    {PTL_STAT_OOO_DROPPED, "ooo_dropped"},
    {PTL_STAT_OOO_EXPIRED, "ooo_expired"},
    {PTL_STAT_CONNS_REFUSED, "conns_refused"},
    {PTL_STAT_CONNS_BAD_NID, "conns_bad_nid"},
    {PTL_STAT_CLOSE_TIMEOUTS, "close_timeouts"},
    {PTL_STAT_AUTH_FAILED, "auth_failed"},
    {PTL_STAT_RX_OPEN, "rx_open"},
    {PTL_STAT_RX_OPEN_DROPPED, "rx_open_dropped"},
    {PTL_STAT_PEERS_EVICTED, "peers_evicted"},
    {PTL_STAT_PEERS_REFUSED, "peers_refused"},
    {PTL_STAT_PEERS_UNRESOLVED, "peers_unresolved"},
    {PTL_STAT_PEERS_MAX, "peers_max"},
    {PTL_STAT_PEERS_USER_MAX, "peers_user_max"},
    {PTL_STAT_RESOLVE_TRIES, "resolve_tries"},
    {PTL_STAT_CHALLENGES, "challenges"},
    {PTL_STAT_PEERS_REMEMBERED, "peers_remembered"},
    {PTL_STAT_PEERS_RECALLED, "peers_recalled"},
    {PTL_STAT_PEERS_FORGOTTEN, "peers_forgotten"},
    {PTL_STAT_NO_DST_INC, "no_dst_inc"},
    {PTL_STAT_CREDIT_WAITS, "credit_waits"},
    {PTL_STAT_CREDIT_REFUSED, "credit_refused"},
    {PTL_STAT_RX_REQS, "rx_reqs"},
    {PTL_STAT_PEERS_TIMERS, "peers_timers"},
    {PTL_STAT_MEM_BYTES, "mem_bytes"},
    {PTL_STAT_TX_SUPERFRAMES, "tx_superframes"},
    {PTL_STAT_RX_SUPERFRAMES, "rx_superframes"},
    {PTL_STAT_TX_RIDERS, "tx_riders"},
    {PTL_STAT_RX_RIDERS, "rx_riders"},
    {PTL_STAT_LATE_TIMERS, "late_timers"},
});

constexpr auto kAttrNames = Table<__PTL_A_MAX>({
    {PTL_A_IFACE, "iface"},
    {PTL_A_NID, "nid"},
    {PTL_A_STATE, "state"},
    {PTL_A_IFINDEX, "ifindex"},
    {PTL_A_IFNAME, "ifname"},
    {PTL_A_TRANSPORT, "transport"},
    {PTL_A_MTU, "mtu"},
    {PTL_A_EAGER_MAX, "eager_max"},
    {PTL_A_ETHERTYPE, "ethertype"},
    {PTL_A_NIS, "nis"},
    {PTL_A_PEERS, "peers"},
    {PTL_A_STATS, "stats"},
    {PTL_A_PEER_LLADDR, "peer_lladdr"},
    {PTL_A_PEER_STATE, "peer_state"},
    {PTL_A_PEER_FLAGS, "peer_flags"},
    {PTL_A_PEER_INCARNATION, "peer_incarnation"},
    {PTL_A_PEER_RTT_US, "peer_rtt_us"},
    {PTL_A_PEER_RTTVAR_US, "peer_rttvar_us"},
    {PTL_A_PEER_RTO_US, "peer_rto_us"},
    {PTL_A_PEER_CWND, "peer_cwnd"},
    {PTL_A_PEER_INFLIGHT, "peer_inflight"},
    {PTL_A_PEER_QUEUED, "peer_queued"},
    {PTL_A_PEER_IDLE_MS, "peer_idle_ms"},
    {PTL_A_PEER_STATS, "peer_stats"},
    {PTL_A_PID, "pid"},
    {PTL_A_PID_LAST, "pid_last"},
    {PTL_A_UID, "uid"},
    {PTL_A_JID, "jid"},
    {PTL_A_OWNER_PID, "owner_pid"},
    {PTL_A_COMM, "comm"},
    {PTL_A_EVENT, "event"},
    {PTL_A_FAILED, "failed"},
    {PTL_A_PEER_CREDITS, "peer_credits"},
    {PTL_A_PEER_CREDITS_OWED, "peer_credits_owed"},
    {PTL_A_AUTH_KEY, "auth_key"},
    {PTL_A_AUTH, "auth"},
    {PTL_A_PEER_TX_BUFS, "peer_tx_bufs"},
    {PTL_A_PEER_MRS, "peer_mrs"},
});

template <std::size_t N>
std::string_view Lookup(const std::array<std::string_view, N>& table, std::size_t i) {
  return i < N ? table[i] : std::string_view();
}

}  // namespace

Counters DecodeCounters(std::span<const uint8_t> nest) {
  Counters out;
  for (const AttrView& a : ParseAttrs(nest)) {
    if (a.type == PTL_STAT_UNSPEC || a.type == PTL_STAT_PAD) continue;
    if (auto v = a.U64()) out.push_back({a.type, *v});
  }
  return out;
}

Iface DecodeIface(std::span<const uint8_t> attrs) {
  Iface o;
  for (const AttrView& a : ParseAttrs(attrs)) {
    switch (a.type) {
      // clang-format off
      case PTL_A_IFACE:     Set(o.iface, a); break;
      case PTL_A_NID:       Set(o.nid, a); break;
      case PTL_A_STATE:     Set(o.state, a); break;
      case PTL_A_IFINDEX:   Set(o.ifindex, a); break;
      case PTL_A_IFNAME:    Set(o.ifname, a); break;
      case PTL_A_TRANSPORT: Set(o.transport, a); break;
      case PTL_A_MTU:       Set(o.mtu, a); break;
      case PTL_A_EAGER_MAX: Set(o.eager_max, a); break;
      case PTL_A_ETHERTYPE: Set(o.ethertype, a); break;
      case PTL_A_NIS:       Set(o.nis, a); break;
      case PTL_A_PEERS:     Set(o.peers, a); break;
      case PTL_A_AUTH:      Set(o.auth, a); break;
      case PTL_A_STATS:     Set(o.stats, a); break;
      default:              break;  // newer than this ptlctl
        // clang-format on
    }
  }
  return o;
}

Peer DecodePeer(std::span<const uint8_t> attrs) {
  Peer o;
  for (const AttrView& a : ParseAttrs(attrs)) {
    switch (a.type) {
      // clang-format off
      case PTL_A_IFACE:            Set(o.iface, a); break;
      case PTL_A_NID:              Set(o.nid, a); break;
      case PTL_A_PEER_LLADDR:      Set(o.lladdr, a); break;
      case PTL_A_PEER_STATE:       Set(o.state, a); break;
      case PTL_A_PEER_FLAGS:       Set(o.flags, a); break;
      case PTL_A_PEER_INCARNATION: Set(o.incarnation, a); break;
      case PTL_A_PEER_RTT_US:      Set(o.rtt_us, a); break;
      case PTL_A_PEER_RTTVAR_US:   Set(o.rttvar_us, a); break;
      case PTL_A_PEER_RTO_US:      Set(o.rto_us, a); break;
      case PTL_A_PEER_CWND:        Set(o.cwnd, a); break;
      case PTL_A_PEER_INFLIGHT:    Set(o.inflight, a); break;
      case PTL_A_PEER_QUEUED:      Set(o.queued, a); break;
      case PTL_A_PEER_IDLE_MS:     Set(o.idle_ms, a); break;
      case PTL_A_UID:              Set(o.uid, a); break;
      case PTL_A_PEER_CREDITS:     Set(o.credits, a); break;
      case PTL_A_PEER_CREDITS_OWED: Set(o.credits_owed, a); break;
      case PTL_A_PEER_TX_BUFS:     Set(o.tx_bufs, a); break;
      case PTL_A_PEER_MRS:         Set(o.mrs, a); break;
      case PTL_A_PEER_STATS:       Set(o.stats, a); break;
      default:                     break;
        // clang-format on
    }
  }
  return o;
}

Ni DecodeNi(std::span<const uint8_t> attrs) {
  Ni o;
  for (const AttrView& a : ParseAttrs(attrs)) {
    switch (a.type) {
      // clang-format off
      case PTL_A_IFACE:     Set(o.iface, a); break;
      case PTL_A_NID:       Set(o.nid, a); break;
      case PTL_A_PID:       Set(o.pid, a); break;
      case PTL_A_UID:       Set(o.uid, a); break;
      case PTL_A_JID:       Set(o.jid, a); break;
      case PTL_A_OWNER_PID: Set(o.owner_pid, a); break;
      case PTL_A_COMM:      Set(o.comm, a); break;
      case PTL_A_STATS:     Set(o.stats, a); break;
      default:              break;
        // clang-format on
    }
  }
  return o;
}

PidRes DecodePidRes(std::span<const uint8_t> attrs) {
  PidRes o;
  for (const AttrView& a : ParseAttrs(attrs)) {
    switch (a.type) {
      // clang-format off
      case PTL_A_IFACE:    Set(o.iface, a); break;
      case PTL_A_PID:      Set(o.pid, a); break;
      case PTL_A_PID_LAST: Set(o.pid_last, a); break;
      case PTL_A_UID:      Set(o.uid, a); break;
      default:             break;
        // clang-format on
    }
  }
  return o;
}

PeerEvent DecodePeerEvent(std::span<const uint8_t> attrs) {
  PeerEvent o;
  for (const AttrView& a : ParseAttrs(attrs)) {
    switch (a.type) {
      // clang-format off
      case PTL_A_IFACE:            Set(o.iface, a); break;
      case PTL_A_NID:              Set(o.nid, a); break;
      case PTL_A_EVENT:            Set(o.event, a); break;
      case PTL_A_PEER_INCARNATION: Set(o.incarnation, a); break;
      case PTL_A_FAILED:           Set(o.failed, a); break;
      default:                     break;
        // clang-format on
    }
  }
  return o;
}

Counters DecodeStats(std::span<const uint8_t> attrs) {
  Counters out;
  for (const AttrView& a : ParseAttrs(attrs))
    if (a.type == PTL_A_STATS) {
      Counters more = DecodeCounters(a.payload);
      out.insert(out.end(), more.begin(), more.end());
    }
  return out;
}

std::string_view StatName(uint16_t id) { return Lookup(kStatNames, id); }

std::string_view IfaceStateName(uint8_t state) {
  switch (state) {
    case PTL_IFACE_LOCAL:
      return "local";
    case PTL_IFACE_UP:
      return "up";
    case PTL_IFACE_DOWN:
      return "down";
  }
  return {};
}

std::string_view PeerStateName(uint8_t state) {
  switch (state) {
    case PTL_PEER_RESOLVING:
      return "resolving";
    case PTL_PEER_UP:
      return "up";
    case PTL_PEER_UNREACHABLE:
      return "unreachable";
    case PTL_PEER_CONNECTING:
      return "connecting";
    case PTL_PEER_DEAD:
      return "dead";
  }
  return {};
}

std::string_view EventName(uint8_t event) {
  switch (event) {
    case PTL_EVENT_PEER_UP:
      return "up";
    case PTL_EVENT_PEER_UNREACHABLE:
      return "unreachable";
    case PTL_EVENT_PEER_RESTARTED:
      return "restarted";
    case PTL_EVENT_PEER_RESET:
      return "reset";
  }
  return {};
}

std::string AttrName(uint16_t type) {
  std::string_view name = Lookup(kAttrNames, type);
  return name.empty() ? "attribute " + std::to_string(type) : std::string(name);
}

}  // namespace ptlctl
