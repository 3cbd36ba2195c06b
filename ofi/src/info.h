// SPDX-License-Identifier: BSD-3-Clause
// What the ptl provider offers (fi_getinfo) and whether an application's
// hints can be met. Pure logic on struct fi_info: unit-tested on the host.
#ifndef PTL_OFI_INFO_H
#define PTL_OFI_INFO_H

#include <rdma/fabric.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace ptl::ofi {

inline constexpr char kProviderName[] = "ptl";
inline constexpr char kFabricName[] = "portals";
inline constexpr uint32_t kProviderVersion = FI_VERSION(1, 0);
inline constexpr uint32_t kApiVersion = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION);

inline constexpr uint64_t kPrimaryCaps =
    FI_TAGGED | FI_MSG | FI_SEND | FI_RECV | FI_DIRECTED_RECV | FI_SOURCE;
inline constexpr uint64_t kSecondaryCaps = FI_LOCAL_COMM | FI_REMOTE_COMM;
inline constexpr uint64_t kCaps = kPrimaryCaps | kSecondaryCaps;
inline constexpr uint64_t kTagFormat = 0x00ffffffffffffffULL;  // 56 bits, protocol.h

// Tunables, from FI_PTL_* (fi_param) with these defaults.
struct Limits {
  size_t eager_size = 8192;   // larger sends expose the buffer and are pulled
  size_t inject_size = 4096;  // fi_inject*, and what tx_attr reports
  size_t bounce_slots = 128;  // eager sends in flight per endpoint
  size_t heap_block = 128 * 1024;
  size_t heap_blocks = 4;  // per receive queue (tagged, untagged)
  // Receives of at most this many bytes are matched by the provider as
  // their messages reach the heap, not posted to the kernel (recv.cc).
  size_t recv_match_size = 4096;
  size_t max_msg_size = 1ULL << 31;
  // Peer liveness (liveness.cc): state that has waited this long on a peer
  // probes it; a probe unanswered this long means the peer is gone. The
  // timeout must exceed the transport's peer timeout (rtscts: 10 s), so a
  // dead node is reported by the transport, as unreachable.
  unsigned probe_interval_ms = 1000;
  unsigned probe_timeout_ms = 15000;
  unsigned iface = 0;  // Portals interface: domain "ptl<iface>"
};
Limits& ProviderLimits();

// How often the liveness watch looks at what waits on peers: a few times
// per probe interval (liveness.cc, and a CQ's FI_WAIT_FD timer).
inline unsigned WatchPeriodMs(const Limits& l) {
  return l.probe_interval_ms / 4 > 10 ? l.probe_interval_ms / 4 : 10;
}

// The domain name of an interface: "ptl0" .. "ptl3".
std::string DomainName(unsigned iface);

// A freshly allocated fi_info describing the provider on `iface`, shaped by
// `hints` where they choose among what we support (threading, av_type,
// progress, caps asked for). nullptr with *err set (-FI_ENODATA when the
// hints ask for something we do not do, -FI_ENOMEM).
fi_info* MakeInfo(uint32_t version, const fi_info* hints, const Limits& limits, unsigned iface,
                  int* err);

// Why hints cannot be met, or nullptr: used by MakeInfo and its tests.
const char* HintsRefused(const fi_info* hints, const Limits& limits, unsigned iface);

}  // namespace ptl::ofi

#endif  // PTL_OFI_INFO_H
