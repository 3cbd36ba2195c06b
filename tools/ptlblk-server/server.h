// SPDX-License-Identifier: BSD-3-Clause
// ptlblk-server: serves a file or a block device to ptlblk.ko clients
// over Portals (Documentation/ptlblk.md). One thread reads the event
// queue and schedules; worker threads do the blocking file I/O and answer.
#pragma once

#include <signal.h>

#include <cstdint>
#include <string>

#include "protocol.h"

namespace ptlblk {

struct Options {
  std::string path;
  uint32_t pid = PTLBLK_SERVER_PID;
  uint32_t iface = 0;
  uint32_t slots = 16;          // staging buffers (requests with data at once)
  uint32_t max_xfer = 1 << 20;  // bytes per staging buffer
  uint32_t workers = 4;
  uint32_t block_size = 0;      // 0: 512, or the block device's logical size
  uint32_t get_timeout_s = 30;  // a WRITE's data not fetched by then: cancelled
  bool read_only = false;
  bool verbose = false;
};

// Serves until *stop is set (SIGTERM, SIGINT); returns the exit status.
int Serve(const Options& o, const volatile sig_atomic_t* stop);

}  // namespace ptlblk
