// SPDX-License-Identifier: BSD-3-Clause
#include "options.h"

#include <arpa/inet.h>

#include <cerrno>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>

namespace ptl_inject {

namespace {

std::optional<uint64_t> ParseU64(std::string_view s) {
  if (s.empty() || s[0] == '-' || s[0] == '+' || s[0] == ' ') return std::nullopt;
  std::string str(s);
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(str.c_str(), &end, 0);
  if (errno || *end) return std::nullopt;
  return v;
}

template <typename T>
T Number(std::string_view name, std::string_view v, uint64_t min = 0,
         uint64_t max = std::numeric_limits<T>::max()) {
  auto n = ParseU64(v);
  if (!n || *n < min || *n > max)
    throw UsageError("--" + std::string(name) + ": expected a number in " + std::to_string(min) +
                     ".." + std::to_string(max) + ", got '" + std::string(v) + "'");
  return T(*n);
}

uint32_t Nid(std::string_view name, std::string_view v) {
  auto n = ParseNid(v);
  if (!n) throw UsageError("--" + std::string(name) + ": not a nid: '" + std::string(v) + "'");
  return *n;
}

Mac MacArg(std::string_view name, std::string_view v) {
  auto m = ParseMac(v);
  if (!m)
    throw UsageError("--" + std::string(name) + ": not a MAC address: '" + std::string(v) + "'");
  return *m;
}

std::vector<std::string> Split(std::string_view v) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= v.size(); i++)
    if (i == v.size() || v[i] == ',') {
      if (i > start) out.emplace_back(v.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

}  // namespace

std::optional<uint32_t> ParseNid(std::string_view s) {
  if (s.find('.') != std::string_view::npos) {
    in_addr a{};
    if (inet_pton(AF_INET, std::string(s).c_str(), &a) != 1) return std::nullopt;
    return ntohl(a.s_addr);
  }
  auto n = ParseU64(s);
  if (!n || *n > 0xffffffffULL) return std::nullopt;
  return uint32_t(*n);
}

std::string FormatNid(uint32_t nid) {
  return std::to_string(nid >> 24) + "." + std::to_string((nid >> 16) & 0xff) + "." +
         std::to_string((nid >> 8) & 0xff) + "." + std::to_string(nid & 0xff);
}

std::string Usage() {
  return R"(usage: ptl_inject [-j] [-v] MODE OPTIONS
Sends raw frames of the RTS/CTS transport (ptl_rtscts.ko) to test a receiver.
Needs CAP_NET_RAW. See Documentation/ptl_inject.md.

modes:
  hostile   the catalogue of malformed and semantically wrong frames, once
            (--repeat N: N times); reports how many of each kind it sent
  flood     --count N frames as fast as possible (--what random|catalogue|msg|syn)
  peers     one valid MSG (SYN|ACK_REQ, a Portals PUT) from each of --peers N
            fake nodes, then counts the ACKs that come back
  gap       from each of --peers N fake nodes (default 64), --frames K DATA
            frames of a new stream (SYN) with sequence 1..K: sequence 0
            never comes, so the receiver can only hold them ahead of the gap
  list      print the hostile catalogue without sending anything

link options (hostile, flood, peers, gap):
  -i, --iface NAME        interface to send on (required)
  --dst-mac MAC           destination (default ff:ff:ff:ff:ff:ff)
  --src-mac MAC           source (default: the interface's)
  --ethertype N           default 0x88B5
  --gap-us N              pause between frames (default 0)

hostile, flood and list:
  --dst-nid NID           the receiver's nid (required; 10.0.0.2, 0x0a000002 or 167772162)
  --src-nid NID           the fake sender (default 10.0.255.254)
  --src-inc N, --stream N its incarnation and stream (nonzero)
  --dst-inc N             the receiver's incarnation if known (default 0)
  --dst-pid N, --portal N what the MSG frames address (default 0, 0)
  --random N              random frames in the catalogue (default 16)
  --seed N                of everything random (default 1)
  --repeat N              hostile: send the catalogue N times
  --kind K[,K...]         hostile: only these kinds (see `list`)
  --count N               flood: frames to send (required)
  --what W                flood: random (default), catalogue, msg (valid MSGs on one
                          stream), syn (a valid SYN MSG from a new nid each, --first-nid)

peers:
  --target NID:PID        the receiving node and Portals pid (required)
  --peers N               fake nodes (default 1000)
  --first-nid NID         nid of the first (default 10.0.1.0)
  --portal N, --match-bits N, --src-pid N, --payload BYTES (default 0, 0, 1, 32)
  --seed N                incarnations and streams derive from it (default 1)
  --wait-ms MS            time to wait for ACKs after each round (default 2000)
  --retries N             rounds that resend to nodes not yet ACKed (default 2)
  --no-listen             send only
  --own-mac               send from the interface's MAC, not 02:50:<nid>

gap (also --dst-nid, --peers, --first-nid, --seed, --own-mac):
  --frames K              frames per node (default 64)
  --size BYTES            bytes of each frame, headers included (default: the
                          interface's MTU, at most 65535)

global: -j, --json (one JSON object on stdout), -v, --verbose, -h, --help
exit status: 0 sent everything, 1 a send failed, 2 usage
)";
}

Options ParseCommandLine(const std::vector<std::string>& args) {
  Options o;
  size_t i = 0;
  for (; i < args.size(); i++) {
    const std::string& a = args[i];
    if (a == "-j" || a == "--json")
      o.json = true;
    else if (a == "-v" || a == "--verbose")
      o.verbose = true;
    else if (a == "-h" || a == "--help")
      return o;
    else
      break;
  }
  if (i == args.size()) throw UsageError("no mode given (hostile, flood, peers, gap, list)");
  const std::map<std::string, Mode> modes = {{"hostile", Mode::kHostile}, {"flood", Mode::kFlood},
                                             {"peers", Mode::kPeers},     {"gap", Mode::kGap},
                                             {"list", Mode::kList},       {"help", Mode::kHelp}};
  auto m = modes.find(args[i]);
  if (m == modes.end()) throw UsageError("unknown mode '" + args[i] + "'");
  o.mode = m->second;
  if (o.mode == Mode::kHelp) return o;

  bool have_dst_nid = false, have_target = false, have_count = false, have_peers = false;
  using Handler = std::function<void(std::string_view)>;
  const std::map<std::string, Handler> valued = {
      {"iface", [&](std::string_view v) { o.iface = v; }},
      {"dst-mac", [&](std::string_view v) { o.dst_mac = MacArg("dst-mac", v); }},
      {"src-mac", [&](std::string_view v) { o.src_mac = MacArg("src-mac", v); }},
      {"ethertype",
       [&](std::string_view v) { o.ethertype = Number<uint16_t>("ethertype", v, 0x0600); }},
      {"gap-us",
       [&](std::string_view v) { o.gap_us = Number<uint32_t>("gap-us", v, 0, 10000000); }},
      {"dst-nid",
       [&](std::string_view v) {
         o.hostile.dst_nid = Nid("dst-nid", v);
         have_dst_nid = true;
       }},
      {"src-nid", [&](std::string_view v) { o.hostile.src_nid = Nid("src-nid", v); }},
      {"src-inc",
       [&](std::string_view v) { o.hostile.src_inc = Number<uint32_t>("src-inc", v, 1); }},
      {"stream", [&](std::string_view v) { o.hostile.stream = Number<uint32_t>("stream", v, 1); }},
      {"dst-inc", [&](std::string_view v) { o.hostile.dst_inc = Number<uint32_t>("dst-inc", v); }},
      {"dst-pid", [&](std::string_view v) { o.hostile.dst_pid = Number<uint32_t>("dst-pid", v); }},
      {"portal",
       [&](std::string_view v) {
         o.hostile.portal = o.peers.portal = Number<uint32_t>("portal", v);
       }},
      {"random",
       [&](std::string_view v) { o.hostile.random = Number<uint32_t>("random", v, 0, 100000); }},
      {"seed",
       [&](std::string_view v) { o.hostile.seed = o.peers.seed = Number<uint64_t>("seed", v); }},
      {"repeat", [&](std::string_view v) { o.repeat = Number<uint32_t>("repeat", v, 1); }},
      {"kind", [&](std::string_view v) { o.kinds = Split(v); }},
      {"count",
       [&](std::string_view v) {
         o.count = Number<uint64_t>("count", v, 1);
         have_count = true;
       }},
      {"what",
       [&](std::string_view v) {
         const std::map<std::string_view, FloodWhat> w = {{"random", FloodWhat::kRandom},
                                                          {"catalogue", FloodWhat::kCatalogue},
                                                          {"msg", FloodWhat::kMsg},
                                                          {"syn", FloodWhat::kSyn}};
         auto it = w.find(v);
         if (it == w.end()) throw UsageError("--what: random, catalogue, msg or syn");
         o.flood = it->second;
       }},
      {"target",
       [&](std::string_view v) {
         size_t colon = v.rfind(':');
         auto nid = colon == v.npos ? std::nullopt : ParseNid(v.substr(0, colon));
         if (!nid) throw UsageError("--target: expected NID:PID, got '" + std::string(v) + "'");
         o.peers.target = {*nid, Number<uint32_t>("target", v.substr(colon + 1))};
         have_target = true;
       }},
      {"peers",
       [&](std::string_view v) {
         o.peers.count = Number<uint32_t>("peers", v, 1, 1u << 24);
         have_peers = true;
       }},
      {"frames",
       [&](std::string_view v) { o.gap_frames = Number<uint32_t>("frames", v, 1, 1u << 20); }},
      {"size",
       [&](std::string_view v) {
         o.frame_size = Number<uint32_t>("size", v, RTSCTS_DATA_HDR_LEN + 1, RTSCTS_MAX_FRAME);
       }},
      {"first-nid", [&](std::string_view v) { o.peers.first_nid = Nid("first-nid", v); }},
      {"match-bits",
       [&](std::string_view v) { o.peers.match_bits = Number<uint64_t>("match-bits", v); }},
      {"src-pid", [&](std::string_view v) { o.peers.src_pid = Number<uint32_t>("src-pid", v); }},
      {"payload",
       [&](std::string_view v) { o.peers.payload = Number<uint32_t>("payload", v, 0, 1200); }},
      {"wait-ms",
       [&](std::string_view v) { o.wait_ms = Number<uint32_t>("wait-ms", v, 0, 3600000); }},
      {"retries", [&](std::string_view v) { o.retries = Number<uint32_t>("retries", v, 0, 100); }},
  };
  for (i++; i < args.size(); i++) {
    std::string a = args[i];
    if (a == "-j" || a == "--json") {
      o.json = true;
      continue;
    }
    if (a == "-v" || a == "--verbose") {
      o.verbose = true;
      continue;
    }
    if (a == "--no-listen") {
      o.listen = false;
      continue;
    }
    if (a == "--own-mac") {
      o.own_mac = true;
      continue;
    }
    if (a == "-i") a = "--iface";
    if (a.rfind("--", 0) != 0) throw UsageError("unexpected argument '" + a + "'");
    std::string name = a.substr(2), value;
    size_t eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    } else {
      if (i + 1 == args.size()) throw UsageError("--" + name + " needs a value");
      value = args[++i];
    }
    auto h = valued.find(name);
    if (h == valued.end()) throw UsageError("unknown option --" + name);
    h->second(value);
  }

  bool sends = o.mode != Mode::kList;
  if (sends && o.iface.empty()) throw UsageError("-i/--iface is required");
  if (o.mode == Mode::kPeers) {
    if (!have_target) throw UsageError("peers: --target NID:PID is required");
    if (uint64_t(o.peers.first_nid) + o.peers.count - 1 > 0xfffffffeULL || !o.peers.first_nid)
      throw UsageError("peers: the nids must stay within 1..2^32-2");
  } else {
    if (!have_dst_nid) throw UsageError("--dst-nid is required");
    o.peers.target.nid = o.hostile.dst_nid;  // flood --what syn
    o.peers.target.pid = o.hostile.dst_pid;
  }
  if (o.mode == Mode::kFlood && !have_count) throw UsageError("flood: --count N is required");
  if (o.mode == Mode::kGap) {
    if (!have_peers) o.peers.count = 64;
    if (uint64_t(o.peers.first_nid) + o.peers.count - 1 > 0xfffffffeULL || !o.peers.first_nid)
      throw UsageError("gap: the nids must stay within 1..2^32-2");
  }
  return o;
}

}  // namespace ptl_inject
