// SPDX-License-Identifier: BSD-3-Clause
// The generic netlink request of each command: which PTL_CMD_*, do or
// dump, and the attributes, exactly as uapi/linux/portals_netlink.h asks.
#pragma once

#include <cstdint>
#include <vector>

#include "attrs.h"
#include "cli.h"

namespace ptlctl {

struct Request {
  uint8_t cmd = 0;
  bool dump = false;
  std::vector<Attr> attrs;
};

// The request for a command that talks to the kernel (not Help, Version
// or Monitor, which has none).
Request BuildRequest(const Command& command);

}  // namespace ptlctl
