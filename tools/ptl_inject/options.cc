// SPDX-License-Identifier: BSD-3-Clause
#include "options.h"

#include <arpa/inet.h>

#include <functional>
#include <limits>
#include <map>

#include "ptl_tool/parse.h"

namespace ptl_inject {

namespace {

using ptl::tool::ParseU64;  // decimal or 0x hex, no sign, overflow refused
using ptl::tool::SplitList;

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

}  // namespace

std::optional<uint32_t> ParseNid(std::string_view s) {
  if (s.find('.') != std::string_view::npos) {
    in_addr a{};
    if (inet_pton(AF_INET, std::string(s).c_str(), &a) != 1) return std::nullopt;
    return ntohl(a.s_addr);
  }
  return ptl::tool::ParseU32(s);
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
  partial   from each of --peers N fake nodes (default 1), --msgs K PUTs of
            --length bytes that carry only --eager of them (or none: --rts),
            then silence: messages the receiver can only hold open
  credit    one fake node (--src-nid) that ignores the request credit: --gets N
            GETs to --target, past every grant, never acknowledging a REPLY;
            reports the grants, acknowledgements and REPLYs that came back
  forge     frames that claim to come from another node (--src-nid) in the
            incarnations --incs N[,N...], one each, from --src-mac
  record    the transport's frames this host sends on --iface, for
            --wait-ms (default 2000) or until --count of them, into
            --file (pcap), as an eavesdropper on the segment sees them
  replay    every frame of --file sent again on --iface, as it was (but
            from --src-mac if given)
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
                          stream), msg-tagged (the same with the AUTH flag and a tag
                          made without the key), syn (a valid SYN MSG from a new nid
                          each, --first-nid)

peers:
  --target NID:PID        the receiving node and Portals pid (required)
  --peers N               fake nodes (default 1000)
  --first-nid NID         nid of the first (default 10.0.1.0)
  --portal N, --match-bits N, --src-pid N, --payload BYTES (default 0, 0, 1, 32)
  --seed N                incarnations and streams derive from it (default 1)
  --wait-ms MS            time to wait for ACKs after each round (default 2000)
  --retries N             rounds that resend to nodes not yet ACKed (default 2)
  --repeat N              send each node's MSG N times in the first round (default 1:
                          the copies after the first are duplicates, which the target
                          acknowledges again: the cost of a frame to a known peer)
  --no-listen             send only
  --own-mac               send from the interface's MAC, not 02:50:<nid>

forge (also --dst-nid, --src-nid, --src-mac, --dst-inc):
  --incs N[,N...]         the incarnations claimed, one frame each (required)
  --type ack|challenge-ack  what is forged (default ack: 64 bytes, no ack fields)

gap (also --dst-nid, --peers, --first-nid, --seed, --own-mac):
  --frames K              frames per node (default 64)
  --size BYTES            bytes of each frame, headers included (default: the
                          interface's MTU, at most 65535)

partial (also --target, --peers, --first-nid, --portal, --match-bits,
         --src-pid, --seed, --own-mac):
  --msgs K                messages per node, frames 0..K-1 of its stream (default 100)
  --length BYTES          bytes each PUT announces (default 1048576)
  --eager BYTES           bytes of it the MSG carries (default 1; less than --length)
  --rts                   announce each with an RTS frame (no payload) instead

credit (also --target, --src-nid, --portal, --match-bits, --src-pid,
        --seed, --dst-inc, --src-mac, --wait-ms, --retries):
  --gets N                GETs, frames 0..N-1 of the fake node's stream (default 2000)
  --length BYTES          bytes each GET asks for (default 64)
  --rounds N              times what the target did not acknowledge is sent
                          again, --wait-ms apart (default 2)
  --src-uid N             the uid the GETs claim (default 0; the target's
                          access control admits its own uid by default)
  --put-riders N          each GET also carries N riders that are PUTs of
                          0 bytes (0..8, default 0): requests where only
                          responses may ride, which the target must refuse
  GET 0 opens the stream (sent up to --retries more times until acknowledged);
  exit status 1 if the target never answered it.

record, replay:
  --file PATH             the recording (pcap: tcpdump -r reads it; required)
  --wait-ms MS, --count N record: for how long, or how many frames (at most)
  --src-mac MAC           replay: the frames' source address instead

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
  if (i == args.size())
    throw UsageError(
        "no mode given (hostile, flood, peers, gap, partial, credit, forge, record, replay, "
        "list)");
  const std::map<std::string, Mode> modes = {
      {"hostile", Mode::kHostile}, {"flood", Mode::kFlood},     {"peers", Mode::kPeers},
      {"gap", Mode::kGap},         {"partial", Mode::kPartial}, {"credit", Mode::kCredit},
      {"forge", Mode::kForge},     {"record", Mode::kRecord},   {"replay", Mode::kReplay},
      {"list", Mode::kList},       {"help", Mode::kHelp}};
  auto m = modes.find(args[i]);
  if (m == modes.end()) throw UsageError("unknown mode '" + args[i] + "'");
  o.mode = m->second;
  if (o.mode == Mode::kHelp) return o;

  bool have_dst_nid = false, have_target = false, have_count = false, have_peers = false;
  bool have_length = false;
  using Handler = std::function<void(std::string_view)>;
  const std::map<std::string, Handler> valued = {
      {"iface", [&](std::string_view v) { o.iface = v; }},
      {"file", [&](std::string_view v) { o.file = v; }},
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
      {"kind", [&](std::string_view v) { o.kinds = SplitList(v); }},
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
                                                          {"msg-tagged", FloodWhat::kMsgTagged},
                                                          {"syn", FloodWhat::kSyn}};
         auto it = w.find(v);
         if (it == w.end()) throw UsageError("--what: random, catalogue, msg, msg-tagged or syn");
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
      {"msgs",
       [&](std::string_view v) { o.partial_msgs = Number<uint32_t>("msgs", v, 1, 1u << 24); }},
      {"length",
       [&](std::string_view v) {
         o.partial_length = Number<uint64_t>("length", v, 1, (uint64_t(1) << 48) - 1);
         have_length = true;
       }},
      {"gets",
       [&](std::string_view v) { o.credit.gets = Number<uint32_t>("gets", v, 1, 1u << 24); }},
      {"rounds",
       [&](std::string_view v) { o.credit.rounds = Number<uint32_t>("rounds", v, 0, 1000); }},
      {"src-uid", [&](std::string_view v) { o.credit.src_uid = Number<uint32_t>("src-uid", v); }},
      {"put-riders",
       [&](std::string_view v) {
         o.credit.put_riders = Number<uint32_t>("put-riders", v, 0, RTSCTS_MAX_RIDERS);
       }},
      {"eager",
       [&](std::string_view v) { o.partial_eager = Number<uint32_t>("eager", v, 0, 1200); }},
      {"first-nid", [&](std::string_view v) { o.peers.first_nid = Nid("first-nid", v); }},
      {"match-bits",
       [&](std::string_view v) { o.peers.match_bits = Number<uint64_t>("match-bits", v); }},
      {"src-pid", [&](std::string_view v) { o.peers.src_pid = Number<uint32_t>("src-pid", v); }},
      {"payload",
       [&](std::string_view v) { o.peers.payload = Number<uint32_t>("payload", v, 0, 1200); }},
      {"wait-ms",
       [&](std::string_view v) { o.wait_ms = Number<uint32_t>("wait-ms", v, 0, 3600000); }},
      {"retries", [&](std::string_view v) { o.retries = Number<uint32_t>("retries", v, 0, 100); }},
      {"incs",
       [&](std::string_view v) {
         for (const std::string& n : SplitList(v))
           o.forge_incs.push_back(Number<uint32_t>("incs", n, 1));
       }},
      {"type",
       [&](std::string_view v) {
         if (v == "ack")
           o.forge_type = RTSCTS_ACK;
         else if (v == "challenge-ack")
           o.forge_type = RTSCTS_CHALLENGE_ACK;
         else
           throw UsageError("--type: ack or challenge-ack");
       }},
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
    if (a == "--rts") {
      o.partial_rts = true;
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
  if (o.mode == Mode::kRecord || o.mode == Mode::kReplay) {
    if (o.file.empty()) throw UsageError("record, replay: --file PATH is required");
  } else if (o.mode == Mode::kCredit) {
    if (!have_target) throw UsageError("credit: --target NID:PID is required");
    if (have_length) o.credit.length = o.partial_length;
    if (o.hostile.src_nid == o.peers.target.nid)
      throw UsageError("credit: --src-nid must not be the target's nid");
  } else if (o.mode == Mode::kPeers || o.mode == Mode::kPartial) {
    if (!have_target) throw UsageError("peers, partial: --target NID:PID is required");
    if (o.mode == Mode::kPartial && !have_peers) o.peers.count = 1;
    if (uint64_t(o.peers.first_nid) + o.peers.count - 1 > 0xfffffffeULL || !o.peers.first_nid)
      throw UsageError("peers, partial: the nids must stay within 1..2^32-2");
    if (o.mode == Mode::kPartial && !o.partial_rts && o.partial_eager >= o.partial_length)
      throw UsageError("partial: --eager must be less than --length (the message stays open)");
  } else {
    if (!have_dst_nid) throw UsageError("--dst-nid is required");
    o.peers.target.nid = o.hostile.dst_nid;  // flood --what syn
    o.peers.target.pid = o.hostile.dst_pid;
  }
  if (o.mode == Mode::kFlood && !have_count) throw UsageError("flood: --count N is required");
  if (o.mode == Mode::kForge && o.forge_incs.empty())
    throw UsageError("forge: --incs N[,N...] is required");
  if (o.mode == Mode::kGap) {
    if (!have_peers) o.peers.count = 64;
    if (uint64_t(o.peers.first_nid) + o.peers.count - 1 > 0xfffffffeULL || !o.peers.first_nid)
      throw UsageError("gap: the nids must stay within 1..2^32-2");
  }
  return o;
}

}  // namespace ptl_inject
