// SPDX-License-Identifier: BSD-3-Clause
// ptl_inject's command line: a mode, then options (--name VALUE or
// --name=VALUE). Parsing is pure; mistakes throw UsageError (exit 2).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "credit.h"
#include "hostile.h"
#include "packet_socket.h"
#include "peers.h"

namespace ptl_inject {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Mode {
  kHelp,
  kHostile,
  kFlood,
  kPeers,
  kGap,
  kPartial,
  kCredit,
  kForge,
  kRecord,
  kReplay,
  kList
};
enum class FloodWhat { kRandom, kCatalogue, kMsg, kSyn, kMsgTagged };

struct Options {
  Mode mode = Mode::kHelp;
  bool json = false;
  bool verbose = false;
  // link
  std::string iface;
  Mac dst_mac = kBroadcast;
  std::optional<Mac> src_mac;  // default: the interface's
  uint16_t ethertype = 0x88B5;
  uint32_t gap_us = 0;  // pause between frames
  // hostile, flood, list
  HostileParams hostile;
  uint32_t repeat = 1;             // hostile: times the catalogue is sent; peers: each MSG
  std::vector<std::string> kinds;  // hostile: only these kinds (empty: all)
  uint64_t count = 0;              // flood: frames
  FloodWhat flood = FloodWhat::kRandom;
  // peers
  PeersParams peers;
  bool listen = true;
  bool own_mac = false;  // peers send with the interface's MAC, not 02:50:<nid>
  uint32_t wait_ms = 2000;
  uint32_t retries = 2;
  // gap
  uint32_t gap_frames = 64;  // frames per node, seq 1 .. gap_frames
  uint32_t frame_size = 0;   // bytes of each frame; 0: the interface's MTU
  // partial
  uint32_t partial_msgs = 100;        // messages per node, none finished
  uint64_t partial_length = 1 << 20;  // bytes each PUT announces
  uint32_t partial_eager = 1;         // bytes a MSG carries of them
  bool partial_rts = false;           // RTS frames instead of MSG
  // credit (also --target, --src-nid, --wait-ms, --retries)
  CreditParams credit;
  // forge: one frame of `forge_type` from --src-nid per incarnation
  std::vector<uint32_t> forge_incs;
  uint8_t forge_type = RTSCTS_ACK;
  // record (frames this host sends, for --wait-ms or --count of them),
  // replay (every frame of the file, sent again)
  std::string file;
};

// Parses argv[1..].
Options ParseCommandLine(const std::vector<std::string>& args);

std::string Usage();

// A nid: dotted IPv4 ("10.0.0.2", host order like the default nids),
// decimal or 0x hex; nullopt if it is none of these or above 2^32-1.
std::optional<uint32_t> ParseNid(std::string_view s);
std::string FormatNid(uint32_t nid);

}  // namespace ptl_inject
