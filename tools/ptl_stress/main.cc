// SPDX-License-Identifier: BSD-3-Clause
// ptl_stress: Portals traffic generator and verifier. It proves
// exactly-once, in-order, intact delivery of puts between clients and a
// server, and checks gets and getputs against known content.
//
//   ptl_stress server [--pid 77] [--clients N] [options]
//   ptl_stress client --server NID:PID [--id N] [options]
//   ptl_stress selftest [--clients N] [--servers S] [options]
//
// See usage() and Documentation/ptl_stress.md.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "ptl_stress.h"

namespace ptl_stress {
namespace {

const char kUsage[] =
    "usage: ptl_stress server   [--pid PID] [--clients N] [options]\n"
    "       ptl_stress client   --server NID:PID [--id N] [options]\n"
    "       ptl_stress selftest [--clients N] [--servers S] [options]\n"
    "\n"
    "Traffic (client, selftest):\n"
    "  --count N          operations per client (default 1000 unless --seconds)\n"
    "  --seconds S        issue operations for S seconds per client\n"
    "  --window W         operations in flight per client (default 16, max 4096)\n"
    "  --min-size B       smallest message (default 0)\n"
    "  --max-size B       largest message (default 1M); sizes are log-uniform in\n"
    "                     [min, max], with both ends drawn 1/32 of the time each\n"
    "  --sizes B,B,...    a fixed list of sizes instead (uniform choice)\n"
    "  --mix put=50,ack=25,get=20,getput=5\n"
    "                     relative weights: puts without ACK, puts with ACK,\n"
    "                     gets, getputs\n"
    "  --ring B           receive ring per client (default max(2 * max, 256K))\n"
    "  --seed N           seed of sizes, operations and contents (default 1)\n"
    "  --inject dup:N,reorder:N,drop:N,corrupt:N,stray:N\n"
    "                     the client spoils its own put N: sent twice, after\n"
    "                     N+1, not at all, altered after its checksum, or\n"
    "                     labelled so that nothing matches it (Portals drops\n"
    "                     it); the server must count each (selftest: client 0\n"
    "                     of the first server only)\n"
    "Server:\n"
    "  --pid PID          Portals pid (default 77)\n"
    "  --clients N        clients to serve before exiting (default 1); in\n"
    "                     selftest, clients per server\n"
    "  --get-bytes B      size of the buffer clients get from (default\n"
    "                     max(max-size, 64K))\n"
    "  --max-window W     largest client window accepted (default 64; the\n"
    "                     event queue holds clients * (4 * W + 32) events)\n"
    "  --max-ring B       largest client ring accepted (default 256M)\n"
    "Client:\n"
    "  --server NID:PID   the server\n"
    "  --id N             client id, unique per server, 0-4095 (default 0)\n"
    "Selftest:\n"
    "  --servers S        servers (pids PID, PID+1, ...), each with --clients\n"
    "Interface:\n"
    "  --iface N          the NIs open on Portals interface N, 0-3 (default 0)\n"
    "Output and limits:\n"
    "  --timeout-ms T     any single wait longer than T is a hang: reported,\n"
    "                     exit status 1 (default 20000)\n"
    "  --progress S       a progress line every S seconds (clients)\n"
    "  --quiet            only the final report (and errors)\n"
    "  --json             the final report as one JSON object\n"
    "\n"
    "Exit status: 0 every check passed; 1 errors, a hang or a vanished peer;\n"
    "2 bad options or the run could not start.\n";

// Replaces the %s in fmt by arg (fmt is always one of the literals below).
[[noreturn]] void Usage(std::string_view fmt, const std::string& arg) {
  std::string msg(fmt);
  if (auto at = msg.find("%s"); at != std::string::npos) msg.replace(at, 2, arg);
  std::fprintf(stderr, "ptl_stress: %s\n\n%s", msg.c_str(), kUsage);
  std::exit(kExitUsage);
}

uint64_t Number(const std::string& opt, const std::string& v, uint64_t lo, uint64_t hi) {
  auto n = ParseSize(v);
  if (!n || *n < lo || *n > hi)
    Usage("%s", opt + ": '" + v + "' is not a number in [" + std::to_string(lo) + ", " +
                    std::to_string(hi) + "]");
  return *n;
}

Mix ParseMix(const std::string& v) {
  Mix m{0, 0, 0, 0};
  std::string_view s = v;
  while (!s.empty()) {
    auto comma = s.find(',');
    std::string_view item = s.substr(0, comma);
    auto eq = item.find('=');
    if (eq == std::string_view::npos) Usage("--mix: '%s' is not NAME=WEIGHT", std::string(item));
    std::string name(item.substr(0, eq));
    uint32_t w = static_cast<uint32_t>(
        Number("--mix " + name, std::string(item.substr(eq + 1)), 0, 1000000));
    if (name == "put")
      m.put = w;
    else if (name == "ack")
      m.ack = w;
    else if (name == "get")
      m.get = w;
    else if (name == "getput")
      m.getput = w;
    else
      Usage("--mix: unknown operation '%s' (put, ack, get, getput)", name);
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  if (m.Total() == 0) Usage("--mix: %s", "every weight is 0");
  return m;
}

Inject ParseInject(const std::string& v) {
  Inject in;
  std::string_view s = v;
  while (!s.empty()) {
    auto comma = s.find(',');
    std::string_view item = s.substr(0, comma);
    auto colon = item.find(':');
    if (colon == std::string_view::npos) Usage("--inject: '%s' is not KIND:SEQ", std::string(item));
    std::string kind(item.substr(0, colon));
    uint64_t seq = Number("--inject " + kind, std::string(item.substr(colon + 1)), 0, UINT64_MAX);
    if (kind == "dup")
      in.dup = seq;
    else if (kind == "reorder")
      in.reorder = seq;
    else if (kind == "drop")
      in.drop = seq;
    else if (kind == "corrupt")
      in.corrupt = seq;
    else if (kind == "stray")
      in.stray = seq;
    else
      Usage("--inject: unknown fault '%s' (dup, reorder, drop, corrupt, stray)", kind);
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  return in;
}

Options Parse(int argc, char** argv) {
  Options o;
  if (argc < 2) Usage("%s", "no role given");
  o.role = argv[1];
  if (o.role == "-h" || o.role == "--help" || o.role == "help") {
    std::fputs(kUsage, stdout);
    std::exit(0);
  }
  if (o.role != "server" && o.role != "client" && o.role != "selftest")
    Usage("unknown role '%s' (server, client, selftest)", o.role);
  bool count_given = false, ring_given = false;
  for (int i = 2; i < argc; i++) {
    std::string opt = argv[i], val;
    bool has_val = false;
    if (auto eq = opt.find('='); opt.rfind("--", 0) == 0 && eq != std::string::npos) {
      val = opt.substr(eq + 1);
      opt = opt.substr(0, eq);
      has_val = true;
    }
    auto value = [&]() -> std::string {
      if (has_val) return val;
      if (i + 1 >= argc) Usage("%s needs a value", opt);
      return argv[++i];
    };
    if (opt == "--quiet" || opt == "-q") {
      o.quiet = true;
    } else if (opt == "--json") {
      o.json = true;
    } else if (opt == "-h" || opt == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (opt == "--seed") {
      o.seed = Number(opt, value(), 0, UINT64_MAX);
    } else if (opt == "--timeout-ms") {
      o.timeout_ms = static_cast<int>(Number(opt, value(), 1, 3600000));
    } else if (opt == "--min-size") {
      o.min_size = Number(opt, value(), 0, uint64_t{1} << 30);
    } else if (opt == "--max-size") {
      o.max_size = Number(opt, value(), 0, uint64_t{1} << 30);
    } else if (opt == "--sizes") {
      std::string v = value();
      auto list = ParseSizeList(v);
      if (!list) Usage("--sizes: '%s' is not a list of sizes", v);
      for (uint64_t n : *list)
        if (n > (uint64_t{1} << 30)) Usage("--sizes: %s is above 1G", std::to_string(n));
      o.sizes = *list;
    } else if (opt == "--window") {
      o.window = static_cast<uint32_t>(Number(opt, value(), 1, 4096));
    } else if (opt == "--count") {
      o.count = Number(opt, value(), 1, UINT64_MAX);
      count_given = true;
    } else if (opt == "--seconds") {
      std::string v = value();
      char* end = nullptr;
      o.seconds = std::strtod(v.c_str(), &end);
      if (!end || *end || !(o.seconds > 0)) Usage("--seconds: '%s' is not a positive number", v);
    } else if (opt == "--progress") {
      std::string v = value();
      char* end = nullptr;
      o.progress = std::strtod(v.c_str(), &end);
      if (!end || *end || !(o.progress > 0)) Usage("--progress: '%s' is not a positive number", v);
    } else if (opt == "--mix") {
      o.mix = ParseMix(value());
    } else if (opt == "--ring") {
      o.ring = Number(opt, value(), 4096, uint64_t{1} << 32);
      ring_given = true;
    } else if (opt == "--iface") {
      o.iface = static_cast<uint32_t>(Number(opt, value(), 0, 3));
    } else if (opt == "--pid") {
      o.pid = static_cast<uint32_t>(Number(opt, value(), 0, 65534));
    } else if (opt == "--clients") {
      o.clients = static_cast<uint32_t>(Number(opt, value(), 1, kMaxClientId + 1));
    } else if (opt == "--servers") {
      o.servers = static_cast<uint32_t>(Number(opt, value(), 1, 64));
    } else if (opt == "--get-bytes") {
      o.get_bytes = Number(opt, value(), 1, uint64_t{1} << 32);
    } else if (opt == "--max-window") {
      o.max_window = static_cast<uint32_t>(Number(opt, value(), 1, 4096));
    } else if (opt == "--max-ring") {
      o.max_ring = Number(opt, value(), 4096, uint64_t{1} << 36);
    } else if (opt == "--server") {
      std::string v = value();
      auto id = ParseNidPid(v);
      if (!id) Usage("--server: '%s' is not NID:PID", v);
      o.server = {id->first, id->second};
      o.server_given = true;
    } else if (opt == "--id") {
      o.id = static_cast<uint32_t>(Number(opt, value(), 0, kMaxClientId));
    } else if (opt == "--inject") {
      o.inject = ParseInject(value());
    } else {
      Usage("unknown option '%s'", opt);
    }
  }
  if (o.role == "client" && !o.server_given) Usage("%s", "client: --server NID:PID is required");
  if (!count_given && o.seconds <= 0) o.count = 1000;
  if (o.sizes.empty() && o.min_size > o.max_size) Usage("%s", "--min-size is above --max-size");
  uint64_t max = o.sizes.empty() ? o.max_size : *std::max_element(o.sizes.begin(), o.sizes.end());
  if (ring_given && o.ring < max)
    Usage("%s", "--ring must hold the largest message (" + std::to_string(max) + " bytes)");
  if (o.role == "selftest") o.max_window = std::max(o.max_window, o.window);
  if (o.role == "selftest" && o.RingBytes() > o.max_ring)
    Usage("%s", "--ring is above the server's --max-ring");
  if (o.role == "selftest" && o.pid + o.servers - 1 > 65534)
    Usage("%s", "--pid + --servers is beyond pid 65534");
  return o;
}

}  // namespace
}  // namespace ptl_stress

int main(int argc, char** argv) {
  using namespace ptl_stress;
  setvbuf(stdout, nullptr, _IOLBF, 0);
  SetWho("ptl_stress");
  Options o = Parse(argc, argv);
  if (o.role == "server") return RunServer(o);
  if (o.role == "client") return RunClient(o);
  return RunSelftest(o);
}
