// SPDX-License-Identifier: BSD-3-Clause
// Text and JSON output (see render.h).
#include "render.h"

#include <linux/portals_netlink.h>
#include <p3api/types.h>

#include <algorithm>
#include <concepts>
#include <cstdio>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "parse.h"

namespace ptlctl {

namespace {

std::string Hex(uint32_t v, int digits) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%0*x", digits, v);
  return buf;
}

// A name from a table, or the number for a value this ptlctl does not know.
std::string NameOr(std::string_view name, uint64_t v) {
  return name.empty() ? std::to_string(v) : std::string(name);
}

void NameOrJson(JsonWriter& w, std::string_view key, std::string_view name, uint64_t v) {
  w.Key(key);
  if (name.empty())
    w.Value(v);
  else
    w.Value(name);
}

std::string Uid(uint32_t uid) {
  std::string name = UserName(uid);
  return std::to_string(uid) + (name.empty() ? "" : " (" + Printable(name) + ")");
}

std::string Jid(uint32_t jid) {
  if (jid == PTL_JID_NONE) return "none";
  if (jid == PTL_JID_ANY) return "any";
  return std::to_string(jid);
}

// Appends " key value" for a present field. (Built with append(): GCC 12
// at -O3 warns wrongly (-Wrestrict, its bug 105651) about
// `" " + std::string(...)` chains.)
template <typename T, typename F>
requires std::invocable<F, const T&>
void Add(std::string& line, std::string_view key, const std::optional<T>& v, F format) {
  if (v) line.append(" ").append(key).append(" ").append(format(*v));
}
template <typename T>
void Add(std::string& line, std::string_view key, const std::optional<T>& v,
         std::string_view unit = "") {
  if (v) line.append(" ").append(key).append(" ").append(std::to_string(*v)).append(unit);
}

template <typename T>
void JsonIf(JsonWriter& w, std::string_view key, const std::optional<T>& v) {
  if (v) w.Field(key, *v);
}
void JsonIf(JsonWriter& w, std::string_view key, const std::optional<std::string>& v) {
  if (v) w.Field(key, std::string_view(*v));
}

// A block: the head line, then indented lines, never an empty one.
std::string Block(const std::string& head, const std::vector<std::string>& lines) {
  std::string out = head + "\n";
  for (const std::string& l : lines)
    if (!l.empty()) out += "    " + l.substr(l[0] == ' ' ? 1 : 0) + "\n";
  return out;
}

// The text layout of the counters: a row label and short column names.
struct Column {
  uint16_t id;
  std::string_view name;
};
struct Group {
  std::string_view label;
  std::vector<Column> columns;
};

const std::vector<Group>& Groups() {
  static const std::vector<Group> groups = {
      {"TX:",
       {{PTL_STAT_TX_FRAMES, "frames"},
        {PTL_STAT_TX_BYTES, "bytes"},
        {PTL_STAT_MSGS_TX, "msgs"},
        {PTL_STAT_RTS, "rts"},
        {PTL_STAT_SINK_GETS, "sink_gets"},
        {PTL_STAT_RETRANSMITS, "retransmits"},
        {PTL_STAT_TIMEOUTS, "timeouts"},
        {PTL_STAT_LATE_TIMERS, "late_timers"},
        {PTL_STAT_CREDIT_WAITS, "credit_waits"},
        {PTL_STAT_TX_SUPERFRAMES, "superframes"},
        {PTL_STAT_TX_RIDERS, "riders"}}},
      {"RX:",
       {{PTL_STAT_RX_FRAMES, "frames"},
        {PTL_STAT_RX_BYTES, "bytes"},
        {PTL_STAT_MSGS_RX, "msgs"},
        {PTL_STAT_DUPLICATES, "duplicates"},
        {PTL_STAT_OUT_OF_ORDER, "out_of_order"},
        {PTL_STAT_BAD_FRAMES, "bad"},
        {PTL_STAT_AUTH_FAILED, "auth_failed"},
        {PTL_STAT_STALE_FRAMES, "stale"},
        {PTL_STAT_NO_BUFFER, "no_buffer"},
        {PTL_STAT_CREDIT_REFUSED, "credit_refused"},
        {PTL_STAT_RX_SUPERFRAMES, "superframes"},
        {PTL_STAT_RX_RIDERS, "riders"}}},
      {"held:",
       {{PTL_STAT_OOO_BYTES, "ooo_bytes"},
        {PTL_STAT_OOO_DROPPED, "ooo_dropped"},
        {PTL_STAT_OOO_EXPIRED, "ooo_expired"},
        {PTL_STAT_RX_OPEN, "rx_open"},
        {PTL_STAT_RX_OPEN_DROPPED, "rx_open_dropped"},
        {PTL_STAT_RX_REQS, "rx_reqs"},
        {PTL_STAT_MEM_BYTES, "mem_bytes"}}},
      {"errors:",
       {{PTL_STAT_MSGS_FAILED, "msgs_failed"},
        {PTL_STAT_LATE_RESPONSES, "late_responses"},
        {PTL_STAT_DROPS, "drops"}}},
      {"peers:",
       {{PTL_STAT_PEERS_UNRESOLVED, "unresolved"},
        {PTL_STAT_PEERS_TIMERS, "timers"},
        {PTL_STAT_PEERS_MAX, "max"},
        {PTL_STAT_PEERS_USER_MAX, "per_uid_max"},
        {PTL_STAT_PEERS_EVICTED, "evicted"},
        {PTL_STAT_PEERS_REFUSED, "refused"},
        {PTL_STAT_PEERS_RECLAIMED, "reclaimed"},
        {PTL_STAT_PEER_RESTARTS, "restarts"},
        {PTL_STAT_CHALLENGES, "challenges"},
        {PTL_STAT_RESOLVE_TRIES, "resolve_tries"},
        {PTL_STAT_PEERS_REMEMBERED, "remembered"},
        {PTL_STAT_PEERS_RECALLED, "recalled"},
        {PTL_STAT_PEERS_FORGOTTEN, "forgotten"},
        {PTL_STAT_NO_DST_INC, "no_dst_inc"},
        {PTL_STAT_CONNS_REFUSED, "conns_refused"},
        {PTL_STAT_CONNS_BAD_NID, "bad_nid"},
        {PTL_STAT_CLOSE_TIMEOUTS, "close_timeouts"}}},
      {"local:", {{PTL_STAT_INTRA_MSGS, "msgs"}}},
      {"objects:",
       {{PTL_STAT_OPEN_FILES, "open_files"},
        {PTL_STAT_NIS, "nis"},
        {PTL_STAT_MDS, "mds"},
        {PTL_STAT_EQS, "eqs"},
        {PTL_STAT_CORE_OBJECTS, "core_objects"},
        {PTL_STAT_PINNED_PAGES, "pinned_pages"},
        {PTL_STAT_NI_MES, "mes"},
        {PTL_STAT_NI_MDS, "mds"},
        {PTL_STAT_NI_EQS, "eqs"},
        {PTL_STAT_NI_MSGS_IN_FLIGHT, "msgs_in_flight"}}},
  };
  return groups;
}

// One group as two lines: names, then values under them.
void Table(std::string& out, std::string_view label,
           const std::vector<std::pair<std::string, uint64_t>>& cells) {
  if (cells.empty()) return;
  std::string names = "    " + std::string(label);
  std::string values = "    ";
  names.resize(13, ' ');
  values.resize(13, ' ');
  for (std::size_t i = 0; i < cells.size(); ++i) {
    std::string v = std::to_string(cells[i].second);
    std::size_t width = std::max(cells[i].first.size(), v.size());
    std::string n = cells[i].first;
    if (i + 1 < cells.size()) {
      n.resize(width + 2, ' ');
      v.resize(width + 2, ' ');
    }
    names += n;
    values += v;
  }
  out += names + "\n" + values + "\n";
}

// The names of the known PTL_PEER_F_* flags; others are shown in hex.
constexpr std::pair<uint32_t, std::string_view> kPeerFlags[] = {
    {PTL_PEER_F_STATIC, "static"},
    {PTL_PEER_F_ACTIVE, "active"},
    {PTL_PEER_F_SENDS, "sends"},
    {PTL_PEER_F_CLOSING, "closing"},
};
constexpr uint32_t kKnownPeerFlags =
    PTL_PEER_F_STATIC | PTL_PEER_F_ACTIVE | PTL_PEER_F_SENDS | PTL_PEER_F_CLOSING;

std::string PeerFlags(uint32_t flags) {
  std::string out;
  for (const auto& [bit, name] : kPeerFlags)
    if (flags & bit) out.append(" ").append(name);
  if (uint32_t rest = flags & ~kKnownPeerFlags) out += " flags " + Hex(rest, 0);
  return out;
}

}  // namespace

std::string CountersText(const Counters& counters) {
  std::string out;
  auto find = [&](uint16_t id) -> std::optional<uint64_t> {
    for (const Counter& c : counters)
      if (c.id == id) return c.value;
    return std::nullopt;
  };
  std::vector<uint16_t> shown;
  for (const Group& g : Groups()) {
    std::vector<std::pair<std::string, uint64_t>> cells;
    for (const Column& col : g.columns)
      if (auto v = find(col.id)) {
        cells.emplace_back(col.name, *v);
        shown.push_back(col.id);
      }
    Table(out, g.label, cells);
  }
  // Counters of a newer kernel, by name if this ptlctl knows one.
  std::vector<std::pair<std::string, uint64_t>> other;
  for (const Counter& c : counters)
    if (std::find(shown.begin(), shown.end(), c.id) == shown.end())
      other.emplace_back(
          StatName(c.id).empty() ? "stat_" + std::to_string(c.id) : std::string(StatName(c.id)),
          c.value);
  Table(out, "other:", other);
  return out;
}

void CountersJson(JsonWriter& w, const Counters& counters) {
  w.BeginObject();
  for (const Counter& c : counters) {
    std::string_view name = StatName(c.id);
    w.Field(name.empty() ? "stat_" + std::to_string(c.id) : std::string(name), c.value);
  }
  w.EndObject();
}

std::string IfaceText(const Iface& o, bool stats) {
  std::string head = "iface " + (o.iface ? std::to_string(*o.iface) : "?") + ":";
  Add(head, "state", o.state, [](uint8_t s) { return NameOr(IfaceStateName(s), s); });
  Add(head, "dev", o.ifname, [](const std::string& s) { return Printable(s); });
  Add(head, "ifindex", o.ifindex);
  Add(head, "transport", o.transport, [](const std::string& s) { return Printable(s); });
  std::string line1, line2;
  Add(line1, "nid", o.nid, FormatNid);
  Add(line1, "mtu", o.mtu);
  Add(line1, "eager", o.eager_max);
  Add(line1, "ethertype", o.ethertype, [](uint16_t t) { return Hex(t, 4); });
  Add(line2, "nis", o.nis);
  Add(line2, "peers", o.peers);
  // A bound interface says whether its frames are authenticated.
  if (o.auth)
    Add(line2, "auth", o.auth, [](const std::string& s) { return Printable(s); });
  else if (o.transport)
    line2.append(" unauthenticated");
  std::string out = Block(head, {line1, line2});
  if (stats && o.stats) out += CountersText(*o.stats);
  return out;
}

void IfaceJson(JsonWriter& w, const Iface& o, bool stats) {
  w.BeginObject();
  JsonIf(w, "iface", o.iface);
  JsonIf(w, "nid", o.nid);
  if (o.state) NameOrJson(w, "state", IfaceStateName(*o.state), *o.state);
  JsonIf(w, "ifindex", o.ifindex);
  JsonIf(w, "ifname", o.ifname);
  JsonIf(w, "transport", o.transport);
  JsonIf(w, "mtu", o.mtu);
  JsonIf(w, "eager_max", o.eager_max);
  JsonIf(w, "ethertype", o.ethertype);
  JsonIf(w, "nis", o.nis);
  JsonIf(w, "peers", o.peers);
  // Bound: "auth" is the frames' MAC, or "none".
  if (o.auth || o.transport) w.Field("auth", std::string_view(o.auth ? *o.auth : "none"));
  if (stats && o.stats) CountersJson(w.Key("stats"), *o.stats);
  w.EndObject();
}

std::string PeerText(const Peer& o, bool stats) {
  std::string head = "peer " + (o.nid ? FormatNid(*o.nid) : "?");
  Add(head, "iface", o.iface);
  Add(head, "lladdr", o.lladdr, FormatLladdr);
  Add(head, "state", o.state, [](uint8_t s) { return NameOr(PeerStateName(s), s); });
  if (o.flags) head += PeerFlags(*o.flags);
  std::string line1, line2;
  Add(line1, "incarnation", o.incarnation, [](uint32_t v) { return Hex(v, 8); });
  Add(line1, "idle", o.idle_ms, "ms");
  Add(line1, "uid", o.uid);
  Add(line2, "rtt", o.rtt_us, "us");
  Add(line2, "rttvar", o.rttvar_us, "us");
  Add(line2, "rto", o.rto_us, "us");
  Add(line2, "cwnd", o.cwnd);
  Add(line2, "inflight", o.inflight);
  Add(line2, "queued", o.queued);
  Add(line2, "credits", o.credits);
  Add(line2, "owed", o.credits_owed);
  Add(line2, "bufs", o.tx_bufs);
  Add(line2, "mrs", o.mrs);
  std::string out = Block(head, {line1, line2});
  if (stats && o.stats) out += CountersText(*o.stats);
  return out;
}

void PeerJson(JsonWriter& w, const Peer& o, bool stats) {
  w.BeginObject();
  JsonIf(w, "iface", o.iface);
  JsonIf(w, "nid", o.nid);
  if (o.lladdr) w.Field("lladdr", FormatLladdr(*o.lladdr));
  if (o.state) NameOrJson(w, "state", PeerStateName(*o.state), *o.state);
  if (o.flags) {
    w.Key("flags").BeginArray();
    for (const auto& [bit, name] : kPeerFlags)
      if (*o.flags & bit) w.Value(name);
    if (uint32_t rest = *o.flags & ~kKnownPeerFlags) w.Value(Hex(rest, 0));
    w.EndArray();
  }
  JsonIf(w, "incarnation", o.incarnation);
  JsonIf(w, "rtt_us", o.rtt_us);
  JsonIf(w, "rttvar_us", o.rttvar_us);
  JsonIf(w, "rto_us", o.rto_us);
  JsonIf(w, "cwnd", o.cwnd);
  JsonIf(w, "inflight", o.inflight);
  JsonIf(w, "queued", o.queued);
  JsonIf(w, "idle_ms", o.idle_ms);
  JsonIf(w, "uid", o.uid);
  JsonIf(w, "credits", o.credits);
  JsonIf(w, "credits_owed", o.credits_owed);
  JsonIf(w, "tx_bufs", o.tx_bufs);
  JsonIf(w, "mrs", o.mrs);
  if (stats && o.stats) CountersJson(w.Key("stats"), *o.stats);
  w.EndObject();
}

std::string NiText(const Ni& o, bool stats) {
  std::string head = "ni";
  Add(head, "iface", o.iface);
  Add(head, "nid", o.nid, FormatNid);
  Add(head, "pid", o.pid);
  Add(head, "uid", o.uid, Uid);
  Add(head, "jid", o.jid, Jid);
  if (o.owner_pid || o.comm) {
    head += " owner ";
    head += o.owner_pid && *o.owner_pid ? std::to_string(*o.owner_pid) : "none";
    if (o.comm) head += " (" + Printable(*o.comm) + ")";
  }
  std::string out = head + "\n";
  if (stats && o.stats) out += CountersText(*o.stats);
  return out;
}

void NiJson(JsonWriter& w, const Ni& o, bool stats) {
  w.BeginObject();
  JsonIf(w, "iface", o.iface);
  JsonIf(w, "nid", o.nid);
  JsonIf(w, "pid", o.pid);
  JsonIf(w, "uid", o.uid);
  JsonIf(w, "jid", o.jid);
  JsonIf(w, "owner_pid", o.owner_pid);
  JsonIf(w, "comm", o.comm);
  if (stats && o.stats) CountersJson(w.Key("stats"), *o.stats);
  w.EndObject();
}

std::string PidResText(const PidRes& o) {
  std::string out = "pid ";
  out += o.pid ? std::to_string(*o.pid) : "?";
  if (o.pid_last && (!o.pid || *o.pid_last != *o.pid))
    out.append("-").append(std::to_string(*o.pid_last));
  Add(out, "iface", o.iface);
  Add(out, "uid", o.uid, Uid);
  return out + "\n";
}

void PidResJson(JsonWriter& w, const PidRes& o) {
  w.BeginObject();
  JsonIf(w, "iface", o.iface);
  JsonIf(w, "pid", o.pid);
  // The header makes PTL_A_PID_LAST default to PTL_A_PID: say it anyway.
  if (o.pid_last)
    w.Field("pid_last", *o.pid_last);
  else if (o.pid)
    w.Field("pid_last", *o.pid);
  JsonIf(w, "uid", o.uid);
  w.EndObject();
}

std::string EventText(const PeerEvent& o) {
  std::string out;
  Add(out, "iface", o.iface);
  out += " peer " + (o.nid ? FormatNid(*o.nid) : "?");
  if (o.event) out.append(" ").append(NameOr(EventName(*o.event), *o.event));
  Add(out, "incarnation", o.incarnation, [](uint32_t v) { return Hex(v, 8); });
  Add(out, "failed", o.failed);
  return out.substr(1) + "\n";
}

void EventJson(JsonWriter& w, const PeerEvent& o) {
  w.BeginObject();
  JsonIf(w, "iface", o.iface);
  JsonIf(w, "nid", o.nid);
  if (o.event) NameOrJson(w, "event", EventName(*o.event), *o.event);
  JsonIf(w, "incarnation", o.incarnation);
  JsonIf(w, "failed", o.failed);
  w.EndObject();
}

}  // namespace ptlctl
