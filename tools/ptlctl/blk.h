// SPDX-License-Identifier: BSD-3-Clause
// The `blk` object: ptlblk.ko's block devices over the generic netlink
// family "ptlblk" (uapi/linux/ptlblk_netlink.h), a family of its own
// because the module is: ptlctl talks to it only for this object.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "attrs.h"
#include "ptl_tool/json.h"

namespace ptlctl {

using ptl::tool::JsonWriter;  // tools/lib

// The commands (what the user gave).
struct BlkShow {
  std::optional<uint32_t> index;  // nothing: every device of the namespace
};
struct BlkAttach {
  uint32_t nid = 0;
  std::optional<uint32_t> pid, iface, queue_depth, max_sectors, timeout_ms;
};
struct BlkDetach {
  uint32_t index = 0;
};

// A device as the kernel reports it.
struct BlkDev {
  std::optional<uint32_t> index, server_nid, server_pid, iface, local_pid;
  std::optional<std::string> name;
  std::optional<uint8_t> state;  // enum ptlblk_state
  std::optional<uint64_t> size;
  std::optional<uint32_t> block_size, features, queue_depth, max_sectors, timeout_ms, inflight;
  std::vector<std::pair<uint16_t, uint64_t>> stats;  // enum ptlblk_stat
};

BlkDev DecodeBlkDev(std::span<const uint8_t> attrs);

// The requests: PTLBLK_CMD_*, do or dump, attributes.
struct BlkRequest {
  uint8_t cmd = 0;
  bool dump = false;
  std::vector<Attr> attrs;
};
BlkRequest BuildBlkRequest(const BlkShow& c);
BlkRequest BuildBlkRequest(const BlkAttach& c);
BlkRequest BuildBlkRequest(const BlkDetach& c);

// "ptlblk0: state up server 10.0.0.2 (167772162) pid 42 ..." with -s the counters.
std::string BlkText(const BlkDev& d, bool stats);
void BlkJson(JsonWriter& w, const BlkDev& d, bool stats);
// "flush,fua,discard"
std::string BlkFeatures(uint32_t f);
// "reads", "write_bytes", ...; "" if unknown.
std::string BlkStatName(uint16_t id);

}  // namespace ptlctl
