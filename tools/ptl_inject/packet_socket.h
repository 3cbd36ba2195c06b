// SPDX-License-Identifier: BSD-3-Clause
// Raw Ethernet frames through an AF_PACKET socket (SOCK_RAW: the caller
// writes the Ethernet header), bound to one interface and one ethertype.
// Needs CAP_NET_RAW.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ptl_inject {

using Mac = std::array<uint8_t, 6>;
using Bytes = std::vector<uint8_t>;

inline constexpr size_t kEthHeader = 14;
inline constexpr Mac kBroadcast = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

// "02:50:0a:00:01:00" (also with '-'); nullopt if it is not six hex octets.
std::optional<Mac> ParseMac(std::string_view s);
std::string FormatMac(const Mac& m);

// dst, src, ethertype (big-endian, as on the wire), payload.
Bytes EthernetFrame(const Mac& dst, const Mac& src, uint16_t ethertype,
                    std::span<const uint8_t> payload);

// The frames of one packet. A burst the transport sent to one peer may
// cross a veth or a bridge as one super-frame (rtscts/gso.c): its frames
// back to back, each with its Ethernet header. Those are cut apart; any
// other packet, or bytes that do not parse as the next frame, stay whole.
std::vector<std::span<const uint8_t>> SplitFrames(std::span<const uint8_t> packet);

struct Received {
  Mac dst{}, src{};
  Bytes payload;  // after the Ethernet header
};

enum class Direction { kIncoming, kOutgoing };

class PacketSocket {
 public:
  // Opens and binds; throws std::system_error naming what failed. The
  // socket receives the frames of @seen: those arriving at the interface
  // (the default), or those this host sends through it (for `record`).
  PacketSocket(const std::string& ifname, uint16_t ethertype,
               Direction seen = Direction::kIncoming);
  ~PacketSocket();
  PacketSocket(const PacketSocket&) = delete;
  PacketSocket& operator=(const PacketSocket&) = delete;

  const Mac& mac() const { return mac_; }
  unsigned mtu() const { return mtu_; }

  // Sends one frame, Ethernet header included: 0, or the errno.
  int Send(std::span<const uint8_t> frame);
  // The same without waiting: EAGAIN (or ENOBUFS) when the socket's send
  // buffer is full, as it stays while a receiver on this host holds the
  // frames sent (they are the socket's until freed).
  int SendNoWait(std::span<const uint8_t> frame);

  // Receives frames addressed to any MAC (the interface turns promiscuous
  // while the socket lives): fake nodes have MACs of their own.
  void Promiscuous();

  // The next incoming frame of the ethertype within timeout_ms (frames this
  // host sends are skipped); nullopt on timeout.
  std::optional<Received> Receive(int timeout_ms);

  // The next frame of the ethertype this host sends within timeout_ms,
  // Ethernet header included (Direction::kOutgoing); nullopt on timeout.
  std::optional<Bytes> ReceiveSent(int timeout_ms);

 private:
  // The next frame within the deadline, whole, with its packet type.
  std::optional<Bytes> Next(std::chrono::steady_clock::time_point deadline, int* pkttype);

  struct Pending {
    Bytes frame;
    int pkttype;
  };
  std::deque<Pending> pending_;  // the rest of a super-frame

  int fd_ = -1;
  int ifindex_ = 0;
  uint16_t ethertype_ = 0;
  unsigned mtu_ = 0;
  Mac mac_{};
};

}  // namespace ptl_inject
