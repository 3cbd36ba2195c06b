// SPDX-License-Identifier: BSD-3-Clause
#include "packet_socket.h"

#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <system_error>

#include "frame_builder.h"

namespace ptl_inject {

namespace {

[[noreturn]] void Throw(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<Mac> ParseMac(std::string_view s) {
  Mac m{};
  if (s.size() != 17) return std::nullopt;
  for (size_t i = 0; i < 6; i++) {
    int hi = HexDigit(s[3 * i]), lo = HexDigit(s[3 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    if (i < 5 && s[3 * i + 2] != ':' && s[3 * i + 2] != '-') return std::nullopt;
    m[i] = uint8_t(hi << 4 | lo);
  }
  return m;
}

std::string FormatMac(const Mac& m) {
  char buf[18];
  std::snprintf(buf, sizeof(buf), "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4],
                m[5]);
  return buf;
}

Bytes EthernetFrame(const Mac& dst, const Mac& src, uint16_t ethertype,
                    std::span<const uint8_t> payload) {
  Bytes b;
  b.reserve(kEthHeader + payload.size());
  b.insert(b.end(), dst.begin(), dst.end());
  b.insert(b.end(), src.begin(), src.end());
  b.push_back(uint8_t(ethertype >> 8));
  b.push_back(uint8_t(ethertype));
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}

std::vector<std::span<const uint8_t>> SplitFrames(std::span<const uint8_t> packet) {
  std::vector<std::span<const uint8_t>> frames;
  size_t off = 0;
  for (;;) {
    std::span<const uint8_t> rest = packet.subspan(off);
    // Another frame follows only if a whole one (headers at least) fits.
    if (rest.size() < kEthHeader + RTSCTS_HDR_LEN) break;
    const uint8_t* h = rest.data() + kEthHeader;
    size_t frame_len = size_t(h[rtscts::off::kFrameLen] | h[rtscts::off::kFrameLen + 1] << 8);
    bool auth = h[rtscts::off::kFlags] & RTSCTS_F_AUTH;  // flags are little-endian
    size_t tag = auth ? RTSCTS_AUTH_TAG_LEN : 0;
    size_t len = kEthHeader + frame_len + tag;
    // What follows must itself be a frame of the same ethertype.
    if (frame_len < RTSCTS_HDR_LEN || len > rest.size() ||
        rest.size() - len < kEthHeader + RTSCTS_HDR_LEN || rest[len + 12] != rest[12] ||
        rest[len + 13] != rest[13])
      break;
    frames.push_back(rest.first(len));
    off += len;
  }
  frames.push_back(packet.subspan(off));
  return frames;
}

PacketSocket::PacketSocket(const std::string& ifname, uint16_t ethertype, Direction seen)
    : ethertype_(ethertype) {
  // The kernel shows the frames a host sends only to sockets of every
  // protocol (its taps, as tcpdump's): ReceiveSent() picks ours.
  uint16_t protocol = seen == Direction::kOutgoing ? ETH_P_ALL : ethertype;
  fd_ = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(protocol));
  if (fd_ < 0) Throw("socket(AF_PACKET, SOCK_RAW) (needs CAP_NET_RAW)");
  try {
    ifreq ifr{};
    if (ifname.size() >= sizeof(ifr.ifr_name)) {
      errno = ENAMETOOLONG;
      Throw("interface " + ifname);
    }
    std::memcpy(ifr.ifr_name, ifname.c_str(), ifname.size() + 1);
    if (ioctl(fd_, SIOCGIFINDEX, &ifr) < 0) Throw("interface " + ifname);
    ifindex_ = ifr.ifr_ifindex;
    if (ioctl(fd_, SIOCGIFHWADDR, &ifr) < 0) Throw("SIOCGIFHWADDR " + ifname);
    std::memcpy(mac_.data(), ifr.ifr_hwaddr.sa_data, mac_.size());
    if (ioctl(fd_, SIOCGIFMTU, &ifr) < 0) Throw("SIOCGIFMTU " + ifname);
    mtu_ = unsigned(ifr.ifr_mtu);

    sockaddr_ll sll{};
    sll.sll_family = AF_PACKET;
    sll.sll_protocol = htons(protocol);
    sll.sll_ifindex = ifindex_;
    if (bind(fd_, reinterpret_cast<sockaddr*>(&sll), sizeof(sll)) < 0) Throw("bind " + ifname);
    // Room for the replies of a thousand peers arriving at once; the
    // forced size needs CAP_NET_ADMIN, the plain one is capped by rmem_max.
    int rcvbuf = 4 << 20;
    if (setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) < 0)
      (void)setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
#ifdef PACKET_IGNORE_OUTGOING
    int one = 1;  // best effort: Receive() skips them anyway
    if (seen == Direction::kIncoming)
      (void)setsockopt(fd_, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
#endif
  } catch (...) {
    close(fd_);
    throw;
  }
}

PacketSocket::~PacketSocket() { close(fd_); }

int PacketSocket::SendNoWait(std::span<const uint8_t> frame) {
  for (;;) {
    ssize_t n = send(fd_, frame.data(), frame.size(), MSG_DONTWAIT);
    if (n == ssize_t(frame.size())) return 0;
    if (n >= 0) return EMSGSIZE;
    if (errno != EINTR) return errno;
  }
}

int PacketSocket::Send(std::span<const uint8_t> frame) {
  for (;;) {
    ssize_t n = send(fd_, frame.data(), frame.size(), 0);
    if (n == ssize_t(frame.size())) return 0;
    if (n >= 0) return EMSGSIZE;
    if (errno == EINTR) continue;
    if (errno == ENOBUFS || errno == EAGAIN) {  // a full queue: wait for room
      pollfd p{fd_, POLLOUT, 0};
      poll(&p, 1, 10);
      continue;
    }
    return errno;
  }
}

void PacketSocket::Promiscuous() {
  packet_mreq mr{};
  mr.mr_ifindex = ifindex_;
  mr.mr_type = PACKET_MR_PROMISC;
  if (setsockopt(fd_, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)) < 0)
    Throw("PACKET_MR_PROMISC");
}

std::optional<Bytes> PacketSocket::Next(std::chrono::steady_clock::time_point deadline,
                                        int* pkttype) {
  using Clock = std::chrono::steady_clock;
  uint8_t buf[65536 + kEthHeader];
  if (!pending_.empty()) {
    Pending p = std::move(pending_.front());
    pending_.pop_front();
    *pkttype = p.pkttype;
    return std::move(p.frame);
  }
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    pollfd p{fd_, POLLIN, 0};
    int r = poll(&p, 1, int(std::max<int64_t>(0, left.count())));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) Throw("poll");
    if (r == 0) return std::nullopt;
    sockaddr_ll from{};
    socklen_t fromlen = sizeof(from);
    ssize_t n =
        recvfrom(fd_, buf, sizeof(buf), MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&from), &fromlen);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n < 0) Throw("recvfrom");
    if (size_t(n) < kEthHeader) continue;
    *pkttype = from.sll_pkttype;
    std::deque<Pending> got;
    for (auto frame : SplitFrames(std::span<const uint8_t>(buf, size_t(n)))) {
      got.push_back({Bytes(frame.begin(), frame.end()), from.sll_pkttype});
      // What the wire would carry: the pcsum a veth never computed.
      if (got.back().frame.size() > kEthHeader &&
          (got.back().frame[12] << 8 | got.back().frame[13]) == ethertype_)
        rtscts::FillPcsum(std::span(got.back().frame).subspan(kEthHeader));
    }
    Pending first = std::move(got.front());
    got.pop_front();
    for (auto& rest : got) pending_.push_back(std::move(rest));
    return std::move(first.frame);
  }
}

std::optional<Received> PacketSocket::Receive(int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  int type = 0;
  while (auto frame = Next(deadline, &type)) {
    if (type == PACKET_OUTGOING) continue;
    Received rx;
    std::memcpy(rx.dst.data(), frame->data(), 6);
    std::memcpy(rx.src.data(), frame->data() + 6, 6);
    rx.payload.assign(frame->begin() + kEthHeader, frame->end());
    return rx;
  }
  return std::nullopt;
}

std::optional<Bytes> PacketSocket::ReceiveSent(int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  int type = 0;
  while (auto frame = Next(deadline, &type))
    if (type == PACKET_OUTGOING && ((*frame)[12] << 8 | (*frame)[13]) == ethertype_) return frame;
  return std::nullopt;
}

}  // namespace ptl_inject
