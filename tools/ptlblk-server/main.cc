// SPDX-License-Identifier: BSD-3-Clause
// ptlblk-server's command line and signals.
#include <getopt.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "ptl_tool/parse.h"
#include "server.h"

namespace {

volatile sig_atomic_t g_stop = 0;

void OnSignal(int) { g_stop = 1; }

void Usage(FILE* f) {
  std::fputs(
      "Usage: ptlblk-server [OPTIONS] PATH\n"
      "Exports the file or block device PATH to ptlblk.ko clients over Portals\n"
      "(ptlctl blk attach NID on the client). SIGTERM or SIGINT stop it cleanly.\n"
      "  -p, --pid N          Portals pid (default 42)\n"
      "  -i, --iface N        Portals interface (default 0)\n"
      "  -s, --slots N        staging buffers: READs and WRITEs worked on at once (16)\n"
      "  -x, --max-xfer BYTES largest request (1M; K and M suffixes)\n"
      "  -w, --workers N      I/O threads (4)\n"
      "  -b, --block-size N   logical block size, 512..4096 (default 512, or the device's)\n"
      "  -t, --get-timeout S  cancel a WRITE whose data has not come in S seconds (30)\n"
      "  -r, --read-only      refuse writes and discards\n"
      "  -v, --verbose        log every request\n",
      f);
}

// tools/lib's parsers (no sign, no octal, overflow refused), shaped for
// the option loop's `ok = ... && range`.
bool ParseUint(const char* s, uint32_t* out, bool size_suffix = false) {
  auto v = size_suffix ? ptl::tool::ParseSize32(s) : ptl::tool::ParseU32(s);
  if (v) *out = *v;
  return v.has_value();
}

}  // namespace

int main(int argc, char** argv) {
  ptlblk::Options o;
  static const option longs[] = {
      {"pid", required_argument, nullptr, 'p'},
      {"iface", required_argument, nullptr, 'i'},
      {"slots", required_argument, nullptr, 's'},
      {"max-xfer", required_argument, nullptr, 'x'},
      {"workers", required_argument, nullptr, 'w'},
      {"block-size", required_argument, nullptr, 'b'},
      {"get-timeout", required_argument, nullptr, 't'},
      {"read-only", no_argument, nullptr, 'r'},
      {"verbose", no_argument, nullptr, 'v'},
      {"help", no_argument, nullptr, 'h'},
      {nullptr, 0, nullptr, 0},
  };
  int c;
  while ((c = getopt_long(argc, argv, "p:i:s:x:w:b:t:rvh", longs, nullptr)) != -1) {
    bool ok = true;
    switch (c) {
      case 'p':
        ok = ParseUint(optarg, &o.pid) && o.pid < 65535;
        break;
      case 'i':
        ok = ParseUint(optarg, &o.iface) && o.iface < 8;
        break;
      case 's':
        ok = ParseUint(optarg, &o.slots) && o.slots >= 1 && o.slots <= 1024;
        break;
      case 'x':
        ok = ParseUint(optarg, &o.max_xfer, true) && o.max_xfer >= 4096 &&
             o.max_xfer <= (64u << 20) && o.max_xfer % 4096 == 0;
        break;
      case 'w':
        ok = ParseUint(optarg, &o.workers) && o.workers >= 1 && o.workers <= 256;
        break;
      case 'b':
        ok = ParseUint(optarg, &o.block_size) && o.block_size >= 512 && o.block_size <= 4096 &&
             (o.block_size & (o.block_size - 1)) == 0;
        break;
      case 't':
        ok = ParseUint(optarg, &o.get_timeout_s) && o.get_timeout_s >= 1;
        break;
      case 'r':
        o.read_only = true;
        break;
      case 'v':
        o.verbose = true;
        break;
      case 'h':
        Usage(stdout);
        return 0;
      default:
        Usage(stderr);
        return 2;
    }
    if (!ok) {
      std::fprintf(stderr, "ptlblk-server: bad value '%s' for -%c\n", optarg, c);
      Usage(stderr);
      return 2;
    }
  }
  if (optind != argc - 1) {
    Usage(stderr);
    return 2;
  }
  o.path = argv[optind];

  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
  return ptlblk::Serve(o, &g_stop);
}
