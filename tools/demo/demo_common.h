// SPDX-License-Identifier: BSD-3-Clause
// What the demo programs share: error checks (tools/lib's Die, the role in
// brackets), opening the interface, building MDs and waiting for events.
#pragma once

#include <fcntl.h>
#include <p3nal_linux.h>
#include <portals3.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

#include "ptl_tool/die.h"

namespace demo {

// Names this process in its messages ("ping", "receiver", ...).
inline const char* g_who = "?";

// Exits with the call's name and its Portals code unless rc is PTL_OK.
inline void Check(const char* what, int rc) {
  if (rc != PTL_OK) ptl::tool::Die("[%s] %s failed: %s", g_who, what, PtlErrorStr(rc));
}

// With PTL_PEER_NETNS=/run/netns/NAME the forked partner of a demo runs on
// another Portals node: that network namespace, joined to this one by a
// link (make demo's second act). Call before PtlInit; nothing otherwise.
inline void EnterPeerNode() {
  const char* path = std::getenv("PTL_PEER_NETNS");
  if (!path || !*path) return;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || setns(fd, CLONE_NEWNET) != 0)
    ptl::tool::Die("[%s] cannot enter %s: %s", g_who, path, std::strerror(errno));
  close(fd);
}

// PtlInit and the default interface with any pid.
inline ptl_handle_ni_t OpenInterface() {
  int max;
  ptl_handle_ni_t ni;
  Check("PtlInit", PtlInit(&max));
  Check("PtlNIInit", PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, nullptr, nullptr, &ni));
  return ni;
}

// An MD over [start, start + length) that never runs out of threshold.
inline ptl_md_t Md(void* start, std::size_t length, unsigned options, ptl_handle_eq_t eq) {
  ptl_md_t md{};
  md.start = start;
  md.length = length;
  md.threshold = PTL_MD_THRESH_INF;
  md.options = options;
  md.eq_handle = eq;
  return md;
}

// The next event of eq, waiting at most 10 s.
inline ptl_event_t NextEvent(ptl_handle_eq_t eq) {
  ptl_event_t ev;
  int which;
  Check("PtlEQPoll", PtlEQPoll(&eq, 1, 10000, &ev, &which));
  return ev;
}

}  // namespace demo
