// SPDX-License-Identifier: BSD-3-Clause
// The `blk` object (see blk.h).
#include "blk.h"

#include <linux/ptlblk.h>
#include <linux/ptlblk_netlink.h>

#include "parse.h"

namespace ptlctl {

namespace {

void Set(std::optional<uint8_t>& f, const AttrView& a) {
  if (auto v = a.U8()) f = v;
}
void Set(std::optional<uint32_t>& f, const AttrView& a) {
  if (auto v = a.U32()) f = v;
}
void Set(std::optional<uint64_t>& f, const AttrView& a) {
  if (auto v = a.U64()) f = v;
}
void Set(std::optional<std::string>& f, const AttrView& a) { f = a.String(); }

std::string Bytes(uint64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && b % 1024 == 0 && u < 4) b /= 1024, ++u;
  return std::to_string(b) + " " + units[u];
}

}  // namespace

BlkDev DecodeBlkDev(std::span<const uint8_t> attrs) {
  BlkDev d;
  for (const AttrView& a : ParseAttrs(attrs)) {
    switch (a.type) {
      // clang-format off
      case PTLBLK_A_INDEX:       Set(d.index, a); break;
      case PTLBLK_A_NAME:        Set(d.name, a); break;
      case PTLBLK_A_SERVER_NID:  Set(d.server_nid, a); break;
      case PTLBLK_A_SERVER_PID:  Set(d.server_pid, a); break;
      case PTLBLK_A_IFACE:       Set(d.iface, a); break;
      case PTLBLK_A_LOCAL_PID:   Set(d.local_pid, a); break;
      case PTLBLK_A_STATE:       Set(d.state, a); break;
      case PTLBLK_A_SIZE:        Set(d.size, a); break;
      case PTLBLK_A_BLOCK_SIZE:  Set(d.block_size, a); break;
      case PTLBLK_A_FEATURES:    Set(d.features, a); break;
      case PTLBLK_A_QUEUE_DEPTH: Set(d.queue_depth, a); break;
      case PTLBLK_A_MAX_SECTORS: Set(d.max_sectors, a); break;
      case PTLBLK_A_TIMEOUT_MS:  Set(d.timeout_ms, a); break;
      case PTLBLK_A_INFLIGHT:    Set(d.inflight, a); break;
      // clang-format on
      case PTLBLK_A_STATS:
        for (const AttrView& c : ParseAttrs(a.payload))
          if (auto v = c.U64(); v && c.type != PTLBLK_STAT_PAD) d.stats.emplace_back(c.type, *v);
        break;
      default:
        break;
    }
  }
  return d;
}

BlkRequest BuildBlkRequest(const BlkShow& c) {
  if (!c.index) return {PTLBLK_CMD_GET, true, {}};
  return {PTLBLK_CMD_GET, false, {U32Attr(PTLBLK_A_INDEX, *c.index)}};
}

BlkRequest BuildBlkRequest(const BlkAttach& c) {
  BlkRequest r{PTLBLK_CMD_ATTACH, false, {U32Attr(PTLBLK_A_SERVER_NID, c.nid)}};
  if (c.pid) r.attrs.push_back(U32Attr(PTLBLK_A_SERVER_PID, *c.pid));
  if (c.iface) r.attrs.push_back(U32Attr(PTLBLK_A_IFACE, *c.iface));
  if (c.queue_depth) r.attrs.push_back(U32Attr(PTLBLK_A_QUEUE_DEPTH, *c.queue_depth));
  if (c.max_sectors) r.attrs.push_back(U32Attr(PTLBLK_A_MAX_SECTORS, *c.max_sectors));
  if (c.timeout_ms) r.attrs.push_back(U32Attr(PTLBLK_A_TIMEOUT_MS, *c.timeout_ms));
  return r;
}

BlkRequest BuildBlkRequest(const BlkDetach& c) {
  return {PTLBLK_CMD_DETACH, false, {U32Attr(PTLBLK_A_INDEX, c.index)}};
}

std::string BlkFeatures(uint32_t f) {
  std::string out;
  auto add = [&](uint32_t bit, const char* name) {
    if (f & bit) out += (out.empty() ? "" : ",") + std::string(name);
  };
  add(PTLBLK_F_READ_ONLY, "read-only");
  add(PTLBLK_F_FLUSH, "flush");
  add(PTLBLK_F_FUA, "fua");
  add(PTLBLK_F_DISCARD, "discard");
  add(PTLBLK_F_ROTATIONAL, "rotational");
  return out.empty() ? "none" : out;
}

std::string BlkStatName(uint16_t id) {
  switch (id) {
    case PTLBLK_STAT_READS:
      return "reads";
    case PTLBLK_STAT_WRITES:
      return "writes";
    case PTLBLK_STAT_FLUSHES:
      return "flushes";
    case PTLBLK_STAT_DISCARDS:
      return "discards";
    case PTLBLK_STAT_READ_BYTES:
      return "read_bytes";
    case PTLBLK_STAT_WRITE_BYTES:
      return "write_bytes";
    case PTLBLK_STAT_ERRORS:
      return "errors";
    case PTLBLK_STAT_TIMEOUTS:
      return "timeouts";
  }
  return "";
}

static std::string StateName(uint8_t s) {
  if (s == PTLBLK_STATE_UP) return "up";
  if (s == PTLBLK_STATE_DEAD) return "dead";
  return std::to_string(s);
}

std::string BlkText(const BlkDev& d, bool stats) {
  std::string out = d.name ? Printable(*d.name) : "ptlblk" + std::to_string(d.index.value_or(0));
  out += ":";
  if (d.state) out += " state " + StateName(*d.state);
  if (d.server_nid) out += " server " + FormatNid(*d.server_nid);
  if (d.server_pid) out += " pid " + std::to_string(*d.server_pid);
  if (d.iface) out += " iface " + std::to_string(*d.iface);
  out += "\n   ";
  if (d.size) out += " size " + Bytes(*d.size);
  if (d.block_size) out += " block " + std::to_string(*d.block_size);
  if (d.features) out += " features " + BlkFeatures(*d.features);
  out += "\n   ";
  if (d.queue_depth) out += " queue_depth " + std::to_string(*d.queue_depth);
  if (d.max_sectors) out += " max_request " + Bytes(uint64_t{*d.max_sectors} * 512);
  if (d.timeout_ms) out += " timeout " + std::to_string(*d.timeout_ms) + "ms";
  if (d.inflight) out += " inflight " + std::to_string(*d.inflight);
  if (d.local_pid) out += " local_pid " + std::to_string(*d.local_pid);
  out += "\n";
  if (stats && !d.stats.empty()) {
    std::string names = "    ", values = "    ";
    for (auto [id, v] : d.stats) {
      std::string n = BlkStatName(id);
      if (n.empty()) n = "stat_" + std::to_string(id);
      std::string val = std::to_string(v);
      std::size_t w = std::max(n.size(), val.size()) + 2;
      names += n + std::string(w - n.size(), ' ');
      values += val + std::string(w - val.size(), ' ');
    }
    while (!names.empty() && names.back() == ' ') names.pop_back();
    while (!values.empty() && values.back() == ' ') values.pop_back();
    out += names + "\n" + values + "\n";
  }
  return out;
}

void BlkJson(JsonWriter& w, const BlkDev& d, bool stats) {
  w.BeginObject();
  auto field = [&](const char* k, const auto& v) {
    if (v) w.Field(k, *v);
  };
  field("index", d.index);
  if (d.name) w.Field("name", std::string_view(*d.name));
  if (d.state) w.Field("state", std::string_view(StateName(*d.state)));
  field("server_nid", d.server_nid);
  field("server_pid", d.server_pid);
  field("iface", d.iface);
  field("local_pid", d.local_pid);
  field("size", d.size);
  field("block_size", d.block_size);
  if (d.features) w.Field("features", std::string_view(BlkFeatures(*d.features)));
  field("queue_depth", d.queue_depth);
  field("max_sectors", d.max_sectors);
  field("timeout_ms", d.timeout_ms);
  field("inflight", d.inflight);
  if (stats) {
    w.Key("stats").BeginObject();
    for (auto [id, v] : d.stats) {
      std::string n = BlkStatName(id);
      w.Field(n.empty() ? "stat_" + std::to_string(id) : n, v);
    }
    w.EndObject();
  }
  w.EndObject();
}

}  // namespace ptlctl
