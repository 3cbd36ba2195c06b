// SPDX-License-Identifier: BSD-3-Clause
// ptl_netbench: what a user would pick instead of Portals between two nodes,
// measured the same way as Portals: ping-pong latency and streaming
// bandwidth between a server and a client on two hosts (in `make bench`: two
// network namespaces joined by a veth pair in one QEMU -icount guest,
// tools/testing/bench/run-netbench).
//
//   ptl_netbench server [--port=N]
//   ptl_netbench client SERVER_IPV4 [options]      (--help for the options)
//
// The client connects a TCP control connection to the server; over it the
// two agree on each test (transport, size, count) and exchange addresses
// (MAC, UDP port, Portals process id). The control connection is idle while
// a test runs. The network interface is the one that holds the control
// connection's local address, on both sides.
//
// Transports:
//   raw      AF_PACKET SOCK_RAW, ethertype 0x88B5, the frame built in user
//            space: the floor for any raw-Ethernet protocol. Payload 0..MTU.
//   udp      connected UDP sockets (send, recv). Payload 0..65507.
//   udp-sendto  unconnected UDP sockets (sendto, recvfrom), as a server with
//            many clients uses them; not in the default list.
//   tcp      one TCP connection, TCP_NODELAY. Latency 1 B..1 MiB (a 0-byte
//            write sends nothing), streaming bandwidth.
//   tipc     AF_TIPC SOCK_RDM: the client sends to a service address
//            {18888, 17}, the server answers the sender's socket address.
//            Payload 1..66000 (TIPC_MAX_USER_MSG_SIZE; a 0-byte message
//            is accepted by sendto but never delivered).
//   portals  PtlPutRegion into a matched ME, as ptl_perf does on one node,
//            over whatever transport binds the Portals interface (ptlctl
//            iface bind); latency and credit-flow-controlled streaming.
//
// Latency: one untimed round verified byte for byte at both ends, WARMUP
// untimed and ITERS timed round trips, one more verified round; one-way =
// round trip / 2, min and median, CLOCK_MONOTONIC at the client (virtual
// time in an -icount guest). Bandwidth (tcp, portals): one verified message,
// then COUNT messages back to back answered by one short message; the last
// one is verified after the clock stopped; repeated REPS times, min and
// median MB/s (10^6 B/s). Any error, wrong byte or length, or a 20 s silence
// ends the program with status 1.
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/tipc.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <p3nal_linux.h>
#include <portals3.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "insn_census/insn_mark.h"
#include "ptl_tool/die.h"
#include "ptl_tool/parse.h"

// Outside the anonymous namespace and never inlined, so that
// tools/testing/bench/budget-stages.awk can leave its samples out by name.
extern "C" __attribute__((noinline)) void ptl_netbench_jitter_spin(uint32_t turns) {
  for (uint32_t i = 0; i < turns; i++) asm volatile("" ::: "memory");
}

namespace {

// xorshift32: the same sequence in every run, no library state.
uint32_t NextJitter(uint32_t* state) {
  uint32_t x = *state;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return *state = x;
}

// ---------------------------------------------------------------- basics

// The role of this process ("ptl_netbench", then "server", "udp", ...): used in
// its messages, which start "ptl_netbench [ROLE]: ".
const char* g_who = "";

void SetWho(const char* who) {
  g_who = who;
  ptl::tool::SetMessagePrefix(std::string("ptl_netbench [") + who + "]: ");
}

using ptl::tool::Die;

void Sys(bool ok, const char* what) {
  if (!ok) Die("%s: %s", what, std::strerror(errno));
}

void Ptl(const char* what, int rc) {
  if (rc != PTL_OK) Die("%s failed: %s", what, PtlErrorStr(rc));
}

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

constexpr size_t KiB = 1024, MiB = 1024 * KiB;
constexpr uint16_t kEtherType = 0x88B5;  // IEEE local experimental, as ptl_rtscts
constexpr size_t kEthHdr = 14;
constexpr size_t kHeadroom = 64;       // in front of every buffer: the raw frame header
constexpr size_t kUdpMax = 65507;      // 65535 - 20 (IPv4) - 8 (UDP)
constexpr uint32_t kTipcType = 18888;  // TIPC service {type, instance} of the server
constexpr uint32_t kTipcInstance = 17;
constexpr unsigned kWatchdogSec = 120;  // per test, guest time
constexpr int kRecvTimeoutSec = 20;     // one message

uint8_t PatternByte(uint32_t seed, size_t i) {
  return static_cast<uint8_t>((seed * 131u) ^ (i * 7u) ^ (i >> 8) ^ (i >> 16));
}
void Fill(uint8_t* p, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; i++) p[i] = PatternByte(seed, i);
}
void Verify(const uint8_t* p, size_t n, uint32_t seed, const char* transport, const char* what) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != PatternByte(seed, i))
      Die("%s %s, %zu bytes: wrong byte at %zu: %#x, expected %#x", transport, what, n, i, p[i],
          PatternByte(seed, i));
}

// Page-aligned, pre-faulted buffer with kHeadroom bytes in front of p.
struct Buffer {
  uint8_t* base = nullptr;
  uint8_t* p = nullptr;
  size_t len = 0;
  explicit Buffer(size_t size) : len(size + kHeadroom + 4096) {
    void* v = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    Sys(v != MAP_FAILED, "mmap");
    base = static_cast<uint8_t*>(v);
    std::memset(base, 0, len);
    p = base + 4096;  // page-aligned payload; the headroom is the end of the first page
  }
  ~Buffer() { munmap(base, len); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
};

void WriteAll(int fd, const void* buf, size_t n) {
  auto p = static_cast<const uint8_t*>(buf);
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    Sys(w > 0, "write");
    p += w;
    n -= static_cast<size_t>(w);
  }
}

void ReadAll(int fd, void* buf, size_t n) {
  auto p = static_cast<uint8_t*>(buf);
  while (n) {
    ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) Die("peer closed the connection");
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      Die("no data from the peer for %d s", kRecvTimeoutSec);
    Sys(r > 0, "read");
    p += r;
    n -= static_cast<size_t>(r);
  }
}

void RecvTimeout(int fd) {
  timeval tv{kRecvTimeoutSec, 0};
  Sys(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0, "SO_RCVTIMEO");
}

sockaddr_in Inet(uint32_t addr_be, uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = addr_be;
  return a;
}

// ---------------------------------------------------------------- transports

enum Transport : uint32_t {
  kRaw,
  kUdp,
  kUdpSendto,
  kTcp,
  kTipc,
  kPortals,
  kPortalsGet,
  kNumTransports
};
const char* const kTransportNames[] = {"raw",  "udp",     "udp-sendto", "tcp",
                                       "tipc", "portals", "portals-get"};
bool IsPortals(uint32_t t) { return t == kPortals || t == kPortalsGet; }

Transport ParseTransport(const std::string& s) {
  for (uint32_t t = 0; t < kNumTransports; t++)
    if (s == kTransportNames[t]) return static_cast<Transport>(t);
  Die("unknown transport '%s' (raw, udp, udp-sendto, tcp, tipc, portals, portals-get)", s.c_str());
}

// The largest message and whether it streams, for transport T at MTU.
size_t MaxSize(Transport t, size_t mtu) {
  switch (t) {
    case kRaw:
      return mtu;
    case kUdp:
    case kUdpSendto:
      return kUdpMax;
    case kTipc:
      return TIPC_MAX_USER_MSG_SIZE;
    default:
      return 64 * MiB;
  }
}
// A 0-byte write on TCP sends nothing; a 0-byte TIPC RDM message is sent
// (sendto returns 0) but never delivered.
size_t MinSize(Transport t) { return t == kTcp || t == kTipc ? 1 : 0; }
const char* SkipReason(Transport t) {
  switch (t) {
    case kTcp:
      return "a 0-byte write sends nothing";
    case kTipc:
      return "a 0-byte message is not delivered; TIPC_MAX_USER_MSG_SIZE is 66000";
    case kRaw:
      return "above the MTU";
    case kUdp:
    case kUdpSendto:
      return "above 65507, the largest IPv4 UDP datagram";
    default:
      return "too large";
  }
}
bool Streams(Transport t) { return t == kTcp || t == kPortals; }

// The network interface this side uses: the one holding LOCAL.
struct Iface {
  std::string name;
  int index = 0;
  uint8_t mac[6]{};
  size_t mtu = 0;
};

Iface FindIface(in_addr local) {
  ifaddrs* list;
  Sys(getifaddrs(&list) == 0, "getifaddrs");
  Iface i;
  for (ifaddrs* a = list; a; a = a->ifa_next)
    if (a->ifa_addr && a->ifa_addr->sa_family == AF_INET &&
        reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr.s_addr == local.s_addr)
      i.name = a->ifa_name;
  freeifaddrs(list);
  if (i.name.empty()) Die("no interface holds %s", inet_ntoa(local));
  i.index = static_cast<int>(if_nametoindex(i.name.c_str()));
  int s = socket(AF_INET, SOCK_DGRAM, 0);
  Sys(s >= 0, "socket");
  ifreq r{};
  std::snprintf(r.ifr_name, sizeof(r.ifr_name), "%s", i.name.c_str());
  Sys(ioctl(s, SIOCGIFHWADDR, &r) == 0, "SIOCGIFHWADDR");
  std::memcpy(i.mac, r.ifr_hwaddr.sa_data, 6);
  Sys(ioctl(s, SIOCGIFMTU, &r) == 0, "SIOCGIFMTU");
  i.mtu = static_cast<size_t>(r.ifr_mtu);
  close(s);
  return i;
}

// One side of a transport: sends from tx_, receives into rx_ (each with
// kHeadroom bytes in front).
class Endpoint {
 public:
  virtual ~Endpoint() = default;
  virtual void Send(size_t n) = 0;
  virtual void Recv(size_t n) = 0;
  virtual void StreamSend(size_t n, int count) {
    for (int i = 0; i < count; i++) Send(n);
    Recv(1);
  }
  virtual void StreamRecv(size_t n, int count) {
    for (int i = 0; i < count; i++) Recv(n);
    Send(1);
  }
  void Attach(uint8_t* tx, uint8_t* rx, size_t cap) {
    tx_ = tx;
    rx_ = rx;
    cap_ = cap;
  }

 protected:
  uint8_t* tx_ = nullptr;
  uint8_t* rx_ = nullptr;
  size_t cap_ = 0;
};

class StreamEndpoint : public Endpoint {
 public:
  explicit StreamEndpoint(int fd) : fd_(fd) {}
  ~StreamEndpoint() override { close(fd_); }
  void Send(size_t n) override { WriteAll(fd_, tx_, n); }
  void Recv(size_t n) override { ReadAll(fd_, rx_, n); }

 private:
  int fd_;
};

// UDP datagrams, on a connected socket (send, recv) or, given the peer's
// address, on an unconnected one (sendto, recvfrom: a route lookup per
// message, as a server with many clients does).
class DatagramEndpoint : public Endpoint {
 public:
  DatagramEndpoint(int fd, const char* name, const sockaddr_in* to = nullptr)
      : fd_(fd), name_(name), connected_(to == nullptr) {
    if (to) to_ = *to;
  }
  ~DatagramEndpoint() override { close(fd_); }
  void Send(size_t n) override {
    ssize_t w;
    do
      w = connected_ ? send(fd_, tx_, n, 0)
                     : sendto(fd_, tx_, n, 0, reinterpret_cast<const sockaddr*>(&to_), sizeof(to_));
    while (w < 0 && errno == EINTR);
    if (w != static_cast<ssize_t>(n)) Die("%s: send of %zu bytes: %s", name_, n, Err(w));
  }
  void Recv(size_t n) override {
    ssize_t r;
    sockaddr_in from{};
    socklen_t len = sizeof(from);
    do
      r = connected_ ? recv(fd_, rx_, cap_, 0)
                     : recvfrom(fd_, rx_, cap_, 0, reinterpret_cast<sockaddr*>(&from), &len);
    while (r < 0 && errno == EINTR);
    if (r != static_cast<ssize_t>(n))
      Die("%s: received %zd bytes, expected %zu: %s", name_, r, n, Err(r));
  }

 private:
  static const char* Err(ssize_t r) { return r < 0 ? std::strerror(errno) : "short"; }
  int fd_;
  const char* name_;
  bool connected_;
  sockaddr_in to_{};
};

// Raw Ethernet frames: the 14-byte header is written in the headroom just
// in front of the payload, so a frame is one send() of header + payload.
class RawEndpoint : public Endpoint {
 public:
  RawEndpoint(int fd, const uint8_t* own_mac, const uint8_t* peer_mac) : fd_(fd) {
    std::memcpy(hdr_, peer_mac, 6);
    std::memcpy(hdr_ + 6, own_mac, 6);
    hdr_[12] = kEtherType >> 8;
    hdr_[13] = kEtherType & 0xff;
    std::memcpy(peer_, peer_mac, 6);
  }
  ~RawEndpoint() override { close(fd_); }
  void Send(size_t n) override {
    std::memcpy(tx_ - kEthHdr, hdr_, kEthHdr);
    ssize_t w;
    do w = send(fd_, tx_ - kEthHdr, n + kEthHdr, 0);
    while (w < 0 && errno == EINTR);
    if (w != static_cast<ssize_t>(n + kEthHdr))
      Die("raw: send of a %zu-byte frame: %s", n + kEthHdr, w < 0 ? std::strerror(errno) : "short");
  }
  void Recv(size_t n) override {
    ssize_t r;
    do r = recv(fd_, rx_ - kEthHdr, cap_ + kEthHdr, 0);
    while (r < 0 && errno == EINTR);
    if (r < 0) Die("raw: recv: %s", std::strerror(errno));
    if (static_cast<size_t>(r) != n + kEthHdr)
      Die("raw: frame of %zd bytes, expected %zu", r, n + kEthHdr);
    const uint8_t* h = rx_ - kEthHdr;
    if (std::memcmp(h + 6, peer_, 6) != 0 || h[12] != (kEtherType >> 8) ||
        h[13] != (kEtherType & 0xff))
      Die("raw: frame from an unexpected source or of another ethertype");
  }

 private:
  int fd_;
  uint8_t hdr_[kEthHdr];
  uint8_t peer_[6];
};

// TIPC reliable datagrams. The client sends to the service address; the
// server answers the socket address the last message came from.
class TipcEndpoint : public Endpoint {
 public:
  TipcEndpoint(int fd, bool client) : fd_(fd) {
    if (client) {
      peer_.family = AF_TIPC;
      peer_.addrtype = TIPC_SERVICE_ADDR;
      peer_.addr.name.name.type = kTipcType;
      peer_.addr.name.name.instance = kTipcInstance;
      peer_.addr.name.domain = 0;
    }
  }
  ~TipcEndpoint() override { close(fd_); }
  // The client's first message: retried until the server's service is known
  // here (the link and the name table take a while after the bearer is up).
  void Hello() {
    for (int tries = 0;; tries++) {
      ssize_t w = sendto(fd_, tx_, 1, 0, reinterpret_cast<sockaddr*>(&peer_), sizeof(peer_));
      if (w == 1) break;
      if (w < 0 && errno != EHOSTUNREACH && errno != ENOENT) Sys(false, "tipc: hello sendto");
      if (tries > 1500) Die("tipc: the server's service did not appear within 15 s");
      usleep(10000);
    }
    Recv(1);
  }
  void Send(size_t n) override {
    ssize_t w;
    do w = sendto(fd_, tx_, n, 0, reinterpret_cast<sockaddr*>(&peer_), sizeof(peer_));
    while (w < 0 && errno == EINTR);
    if (w != static_cast<ssize_t>(n))
      Die("tipc: send of %zu bytes: %s", n, w < 0 ? std::strerror(errno) : "short");
  }
  void Recv(size_t n) override {
    sockaddr_tipc from{};
    socklen_t len = sizeof(from);
    ssize_t r;
    do r = recvfrom(fd_, rx_, cap_, 0, reinterpret_cast<sockaddr*>(&from), &len);
    while (r < 0 && errno == EINTR);
    if (r < 0) Die("tipc: recv: %s", std::strerror(errno));
    if (static_cast<size_t>(r) != n) Die("tipc: message of %zd bytes, expected %zu", r, n);
    if (peer_.family == 0) peer_ = from;  // server: answer the client's socket
  }

 private:
  int fd_;
  sockaddr_tipc peer_{};
};

// Portals, as in ptl_perf: PtlPutRegion (no ACK) from a bound MD into an MD
// on a matched ME; the sender waits for SEND_END, the receiver for PUT_END.
// portals-get: the client's Send is a PtlGetRegion of the server's exposed
// buffer into its own, waiting for REPLY_END; its Recv and the server's
// part are nothing (the server's kernel serves gets), so a "round trip" is
// one get and the row shows half of it, like the ping-pong rows.
// Streaming keeps at most WINDOW puts beyond the receiver's credits, which
// come back as 0-byte puts (count in hdr_data) every WINDOW/2 PUT_ENDs.
class PortalsEndpoint : public Endpoint {
 public:
  static constexpr ptl_pt_index_t kPortal = 4;
  static constexpr ptl_match_bits_t kData = 0xda7a, kCredit = 0xc4ed;

  static constexpr ptl_match_bits_t kGet = 0x9e7;

  PortalsEndpoint(int window, ptl_interface_t iface, bool get_mode = false)
      : window_(window), iface_(iface), get_mode_(get_mode) {}
  ~PortalsEndpoint() override {
    if (up_) PtlFini();
  }

  ptl_process_id_t Open() {
    int max;
    Ptl("PtlInit", PtlInit(&max));
    up_ = true;
    Ptl("PtlNIInit", PtlNIInit(iface_, PTL_PID_ANY, nullptr, nullptr, &ni_));
    ptl_process_id_t id;
    Ptl("PtlGetId", PtlGetId(ni_, &id));
    Ptl("PtlEQAlloc",
        PtlEQAlloc(ni_, 4 * static_cast<ptl_size_t>(window_) + 256, PTL_EQ_HANDLER_NONE, &eq_));
    const ptl_process_id_t any{PTL_NID_ANY, PTL_PID_ANY};
    const unsigned rx_opts = PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE | PTL_MD_EVENT_START_DISABLE;
    ptl_handle_me_t me;
    ptl_handle_md_t md;
    Ptl("PtlMEAttach (data)",
        PtlMEAttach(ni_, kPortal, any, kData, 0, PTL_RETAIN, PTL_INS_AFTER, &me));
    Ptl("PtlMDAttach (data)", PtlMDAttach(me, Md(rx_, cap_, rx_opts), PTL_RETAIN, &md));
    Ptl("PtlMEAttach (credit)",
        PtlMEAttach(ni_, kPortal, any, kCredit, 0, PTL_RETAIN, PTL_INS_AFTER, &me));
    Ptl("PtlMDAttach (credit)",
        PtlMDAttach(me, Md(&credit_rx_, sizeof(credit_rx_), rx_opts), PTL_RETAIN, &md));
    Ptl("PtlMDBind (data)",
        PtlMDBind(ni_, Md(tx_, cap_, PTL_MD_EVENT_START_DISABLE), PTL_RETAIN, &tx_md_));
    Ptl("PtlMDBind (credit)",
        PtlMDBind(ni_, Md(&credit_tx_, sizeof(credit_tx_), PTL_MD_EVENT_START_DISABLE), PTL_RETAIN,
                  &credit_tx_md_));
    // Gets read the sender buffer and land in the receive buffer.
    Ptl("PtlMEAttach (get)",
        PtlMEAttach(ni_, kPortal, any, kGet, 0, PTL_RETAIN, PTL_INS_AFTER, &me));
    Ptl("PtlMDAttach (get)",
        PtlMDAttach(
            me, Md(tx_, cap_, PTL_MD_OP_GET | PTL_MD_MANAGE_REMOTE | PTL_MD_EVENT_START_DISABLE),
            PTL_RETAIN, &md));
    Ptl("PtlMDBind (reply)",
        PtlMDBind(ni_, Md(rx_, cap_, PTL_MD_EVENT_START_DISABLE), PTL_RETAIN, &reply_md_));
    return id;
  }
  void Connect(ptl_process_id_t peer) { peer_ = peer; }

  void Send(size_t n) override {
    if (get_mode_) return Get(n);
    Put(n);
    while (sends_done_ < sends_issued_) Pump();
  }
  void Recv(size_t n) override {
    if (get_mode_) return;
    expect_len_ = n;
    while (recvs_ == consumed_) Pump();
    consumed_++;
  }
  void StreamSend(size_t n, int count) override {
    credits_ = 0;
    uint64_t base = sends_issued_;
    for (int i = 0; i < count; i++) {
      while (static_cast<uint64_t>(i) - credits_ >= static_cast<uint64_t>(window_)) Pump();
      Put(n);
      Drain();
    }
    while (credits_ < static_cast<uint64_t>(count) || sends_done_ < base + count) Pump();
  }
  void StreamRecv(size_t n, int count) override {
    expect_len_ = n;
    uint64_t start = recvs_, credited = 0;
    const uint64_t total = static_cast<uint64_t>(count), every = window_ / 2;
    while (credited < total) {
      Pump();
      Drain();
      uint64_t got = recvs_ - start;
      if (got - credited >= every || got == total) {
        credited = got;
        Ptl("PtlPutRegion (credit)", PtlPutRegion(credit_tx_md_, 0, 0, PTL_NO_ACK_REQ, peer_,
                                                  kPortal, 0, kCredit, 0, credited));
        sends_issued_++;
      }
    }
    consumed_ = recvs_;
    while (sends_done_ < sends_issued_) Pump();
  }

 private:
  ptl_md_t Md(void* start, size_t len, unsigned options) const {
    ptl_md_t md{};
    md.start = start;
    md.length = len;
    md.threshold = PTL_MD_THRESH_INF;
    md.options = options;
    md.eq_handle = eq_;
    return md;
  }
  void Get(size_t n) {
    expect_len_ = n;
    Ptl("PtlGetRegion", PtlGetRegion(reply_md_, 0, n, peer_, kPortal, 0, kGet, 0));
    uint64_t want = replies_ + 1;
    while (replies_ < want) Pump();
  }
  void Put(size_t n) {
    Ptl("PtlPutRegion", PtlPutRegion(tx_md_, 0, n, PTL_NO_ACK_REQ, peer_, kPortal, 0, kData, 0, n));
    sends_issued_++;
  }
  void Pump() {
    ptl_event_t ev;
    int which;
    int rc = PtlEQPoll(&eq_, 1, kRecvTimeoutSec * 1000, &ev, &which);
    if (rc == PTL_EQ_EMPTY) Die("portals: no event for %d s", kRecvTimeoutSec);
    Handle(rc, ev);
  }
  void Drain() {
    ptl_event_t ev;
    int rc;
    while ((rc = PtlEQGet(eq_, &ev)) != PTL_EQ_EMPTY) Handle(rc, ev);
  }
  void Handle(int rc, const ptl_event_t& ev) {
    if (rc != PTL_OK) Die("portals: EQ: %s", PtlErrorStr(rc));
    if (ev.ni_fail_type != PTL_NI_OK)
      Die("portals: %s with ni_fail_type %s", PtlEventKindStr(ev.type),
          PtlNIFailStr(ni_, ev.ni_fail_type));
    switch (ev.type) {
      case PTL_EVENT_SEND_END:
        sends_done_++;
        break;
      case PTL_EVENT_REPLY_END:
        if (ev.mlength != expect_len_)
          Die("portals: REPLY_END of %" PRIu64 " bytes, expected %zu",
              static_cast<uint64_t>(ev.mlength), expect_len_);
        replies_++;
        break;
      case PTL_EVENT_GET_END:
        break;  // the server's side of a get
      case PTL_EVENT_PUT_END:
        if (ev.match_bits == kData) {
          if (ev.mlength != expect_len_ || ev.rlength != expect_len_ || ev.hdr_data != expect_len_)
            Die("portals: PUT_END of %" PRIu64 "/%" PRIu64 " bytes, expected %zu",
                static_cast<uint64_t>(ev.mlength), static_cast<uint64_t>(ev.rlength), expect_len_);
          recvs_++;
        } else if (ev.match_bits == kCredit) {
          credits_ = std::max<uint64_t>(credits_, ev.hdr_data);
        } else {
          Die("portals: PUT_END with match bits %#" PRIx64, static_cast<uint64_t>(ev.match_bits));
        }
        break;
      default:
        Die("portals: unexpected event %s", PtlEventKindStr(ev.type));
    }
  }

  int window_;
  ptl_interface_t iface_;
  bool get_mode_;
  bool up_ = false;
  ptl_handle_md_t reply_md_{};
  uint64_t replies_ = 0;
  ptl_handle_ni_t ni_{};
  ptl_handle_eq_t eq_{};
  ptl_handle_md_t tx_md_{}, credit_tx_md_{};
  ptl_process_id_t peer_{};
  uint64_t credit_rx_ = 0, credit_tx_ = 0;
  size_t expect_len_ = 0;
  uint64_t sends_issued_ = 0, sends_done_ = 0;
  uint64_t recvs_ = 0, consumed_ = 0, credits_ = 0;
};

// ---------------------------------------------------------------- control

enum Op : uint32_t { kOpen = 1, kLat, kBw, kBwDone, kClose, kQuit };

// One fixed-size message each way per step (both ends run this binary).
struct Msg {
  uint32_t op = 0;
  uint32_t transport = 0;
  uint64_t size = 0;
  uint32_t count = 0;  // kLat: all rounds (verified + warm-up + timed); kBw: timed messages
  uint32_t seed = 0;
  uint32_t mtu = 0;
  uint32_t window = 0;
  uint32_t ptl_iface = 0;
  uint16_t udp_port = 0;
  uint8_t mac[6]{};
  ptl_process_id_t ptl_id{};
};

struct Control {
  int fd;
  void Tell(const Msg& m) const { WriteAll(fd, &m, sizeof(m)); }
  Msg Hear() const {
    Msg m;
    ReadAll(fd, &m, sizeof(m));
    return m;
  }
};

constexpr uint16_t kDefaultPort = 18515;  // control; TCP data on +1, UDP data on +2

// ---------------------------------------------------------------- the two roles

struct Side {
  Iface iface;
  size_t cap = 0;
  std::unique_ptr<Buffer> tx, rx;
  std::unique_ptr<Endpoint> ep;
  void Buffers(size_t n) {
    if (cap >= n) return;
    ep.reset();
    cap = n;
    tx = std::make_unique<Buffer>(n);
    rx = std::make_unique<Buffer>(n);
  }
};

int RawSocket(const Iface& i) {
  int s = socket(AF_PACKET, SOCK_RAW, htons(kEtherType));
  Sys(s >= 0, "socket (AF_PACKET)");
  sockaddr_ll a{};
  a.sll_family = AF_PACKET;
  a.sll_protocol = htons(kEtherType);
  a.sll_ifindex = i.index;
  Sys(bind(s, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0, "bind (AF_PACKET)");
  RecvTimeout(s);
  return s;
}

int TipcSocket() {
  int s = socket(AF_TIPC, SOCK_RDM, 0);
  Sys(s >= 0, "socket (AF_TIPC; modprobe tipc)");
  RecvTimeout(s);
  return s;
}

// ---- server

int Serve(uint16_t port) {
  SetWho("server");
  int l = socket(AF_INET, SOCK_STREAM, 0);
  Sys(l >= 0, "socket");
  int one = 1;
  Sys(setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == 0, "SO_REUSEADDR");
  sockaddr_in a = Inet(htonl(INADDR_ANY), port);
  Sys(bind(l, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0, "bind (control)");
  Sys(listen(l, 1) == 0, "listen");
  int tl = socket(AF_INET, SOCK_STREAM, 0);  // TCP data
  Sys(tl >= 0, "socket");
  Sys(setsockopt(tl, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == 0, "SO_REUSEADDR");
  a = Inet(htonl(INADDR_ANY), port + 1);
  Sys(bind(tl, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0, "bind (tcp data)");
  Sys(listen(tl, 1) == 0, "listen");
  std::printf("ptl_netbench server: listening on port %u\n", port);
  std::fflush(stdout);

  sockaddr_in peer{};
  socklen_t len = sizeof(peer);
  Control ctl{accept(l, reinterpret_cast<sockaddr*>(&peer), &len)};
  Sys(ctl.fd >= 0, "accept (control)");
  close(l);
  sockaddr_in local{};
  len = sizeof(local);
  Sys(getsockname(ctl.fd, reinterpret_cast<sockaddr*>(&local), &len) == 0, "getsockname");
  Side s;
  s.iface = FindIface(local.sin_addr);

  for (;;) {
    Msg m = ctl.Hear();
    auto t = static_cast<Transport>(m.transport);
    if (m.op == kQuit) break;
    alarm(kWatchdogSec);
    if (m.op == kOpen) {
      if (t >= kNumTransports) Die("bad transport %u", m.transport);
      SetWho(kTransportNames[t]);
      s.ep.reset();
      s.Buffers(m.size);
      Msg r;
      r.op = kOpen;
      r.mtu = static_cast<uint32_t>(s.iface.mtu);
      std::memcpy(r.mac, s.iface.mac, 6);
      bool tipc_hello = false;
      if (t == kRaw) {
        s.ep = std::make_unique<RawEndpoint>(RawSocket(s.iface), s.iface.mac, m.mac);
      } else if (t == kUdp || t == kUdpSendto) {
        int u = socket(AF_INET, SOCK_DGRAM, 0);
        Sys(u >= 0, "socket (udp)");
        sockaddr_in b = Inet(local.sin_addr.s_addr, port + 2);
        Sys(bind(u, reinterpret_cast<sockaddr*>(&b), sizeof(b)) == 0, "bind (udp)");
        sockaddr_in c = Inet(peer.sin_addr.s_addr, m.udp_port);
        if (t == kUdp)
          Sys(connect(u, reinterpret_cast<sockaddr*>(&c), sizeof(c)) == 0, "connect (udp)");
        RecvTimeout(u);
        s.ep = std::make_unique<DatagramEndpoint>(u, g_who, t == kUdp ? nullptr : &c);
      } else if (t == kTcp) {
        ctl.Tell(r);  // the client connects now
        int c = accept(tl, nullptr, nullptr);
        Sys(c >= 0, "accept (tcp data)");
        Sys(setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == 0, "TCP_NODELAY");
        RecvTimeout(c);
        s.ep = std::make_unique<StreamEndpoint>(c);
        s.ep->Attach(s.tx->p, s.rx->p, s.cap);
        ctl.Tell(r);
        continue;
      } else if (t == kTipc) {
        int u = TipcSocket();
        sockaddr_tipc b{};
        b.family = AF_TIPC;
        b.addrtype = TIPC_SERVICE_RANGE;
        b.scope = TIPC_CLUSTER_SCOPE;
        b.addr.nameseq.type = kTipcType;
        b.addr.nameseq.lower = b.addr.nameseq.upper = kTipcInstance;
        Sys(bind(u, reinterpret_cast<sockaddr*>(&b), sizeof(b)) == 0, "bind (tipc service)");
        s.ep = std::make_unique<TipcEndpoint>(u, false);
        tipc_hello = true;
      } else if (IsPortals(t)) {
        auto p = std::make_unique<PortalsEndpoint>(static_cast<int>(m.window),
                                                   static_cast<ptl_interface_t>(m.ptl_iface),
                                                   t == kPortalsGet);
        p->Attach(s.tx->p, s.rx->p, s.cap);
        r.ptl_id = p->Open();
        p->Connect(m.ptl_id);
        s.ep = std::move(p);
      }
      s.ep->Attach(s.tx->p, s.rx->p, s.cap);
      ctl.Tell(r);
      if (tipc_hello) {
        s.ep->Recv(1);
        s.ep->Send(1);
      }
    } else if (m.op == kLat) {
      if (!s.ep) Die("latency test before open");
      size_t n = m.size;
      if (m.transport == kPortalsGet) {
        // The client reads this buffer with gets; nothing to do per round.
        Fill(s.tx->p, n, m.seed + 1);
        ctl.Tell(m);
        continue;
      }
      ctl.Tell(m);
      for (uint32_t i = 0; i < m.count; i++) {
        s.ep->Recv(n);
        if (i == 0) {
          Verify(s.rx->p, n, m.seed, g_who, "latency message");
          Fill(s.tx->p, n, m.seed + 1);
        } else if (i == m.count - 1) {
          Verify(s.rx->p, n, m.seed + 2, g_who, "latency message");
          Fill(s.tx->p, n, m.seed + 3);
        }
        s.ep->Send(n);
      }
    } else if (m.op == kBw) {
      if (!s.ep) Die("bandwidth test before open");
      size_t n = m.size;
      ctl.Tell(m);
      s.ep->StreamRecv(n, 1);
      Verify(s.rx->p, n, m.seed, g_who, "first streamed message");
      ctl.Tell(m);  // verified: the stream may overwrite it now
      s.ep->StreamRecv(n, static_cast<int>(m.count));
      Verify(s.rx->p, n, m.seed + 1, g_who, "last streamed message");
      m.op = kBwDone;
      ctl.Tell(m);
    } else if (m.op == kClose) {
      s.ep.reset();
      ctl.Tell(m);
      SetWho("server");
    } else {
      Die("bad control op %u", m.op);
    }
    alarm(0);
  }
  std::printf("ptl_netbench server: done\n");
  return 0;
}

// ---- client

struct Options {
  std::string server;
  uint16_t port = kDefaultPort;
  std::vector<Transport> transports{kRaw, kUdp, kTcp, kTipc};
  std::vector<size_t> lat_sizes{0,       1,       8,        64,       512,       1 * KiB,
                                4 * KiB, 8 * KiB, 16 * KiB, 64 * KiB, 256 * KiB, 1 * MiB};
  std::vector<size_t> bw_sizes{64 * KiB, 256 * KiB, 1 * MiB, 4 * MiB};
  bool max_sizes = true;  // also each transport's largest message where it is off the grid
  int iters = 200, warmup = 10;
  size_t bw_bytes = 32 * MiB;
  int bw_reps = 3;
  int window = 16;
  uint32_t ptl_iface = PTL_IFACE_DEFAULT;
  bool latency = true, bandwidth = true;
  std::string tsv;
  std::string timed_window;  // where to note each latency test's timed loop
  int jitter = 0;            // spin up to this many loop turns before each round trip
  bool insn_marks = false;   // insn_census marker around each timed loop
};

void Usage() {
  std::printf(
      "usage: ptl_netbench server [--port=N]\n"
      "       ptl_netbench client SERVER_IPV4 [options]\n"
      "  --port=N             control port (default %u; TCP data +1, UDP data +2)\n"
      "  --transports=LIST    any of raw,udp,udp-sendto,tcp,tipc,portals\n"
      "                       (default raw,udp,tcp,tipc)\n"
      "  --lat-sizes=LIST     latency sizes (default 0,1,8,64,512,1K,4K,8K,16K,64K,256K,1M;\n"
      "                       each transport skips what it cannot carry)\n"
      "  --no-max-sizes       do not add each transport's largest message (raw: the MTU,\n"
      "                       udp: 65507, tipc: 66000) where it is off the grid\n"
      "  --bw-sizes=LIST      streaming sizes, tcp and portals (default 64K,256K,1M,4M)\n"
      "  --iters=N            timed round trips per latency size (default 200)\n"
      "  --warmup=N           untimed round trips first (default 10)\n"
      "  --bw-bytes=SIZE      bytes streamed per bandwidth run (default 32M; 4..1000 msgs)\n"
      "  --bw-reps=N          bandwidth runs per size: min and median (default 3)\n"
      "  --window=N           portals streaming window, credits every N/2 (default 16)\n"
      "  --ptl-iface=N        Portals interface for PtlNIInit (default PTL_IFACE_DEFAULT)\n"
      "  --tsv=FILE           append machine-readable rows to FILE (header if new)\n"
      "  --timed-window=FILE  append \"transport size start_ns end_ns\" (CLOCK_MONOTONIC)\n"
      "                       of each latency test's timed round trips to FILE\n"
      "  --jitter=N           spin 0..N-1 loop turns (pseudo-random) before each timed\n"
      "                       round trip, untimed: a sampling profiler then sees every\n"
      "                       phase of the round trip (default 0)\n"
      "  --insn-marks         execute insn_census's marker before and after each\n"
      "                       latency test's timed round trips (an instruction\n"
      "                       census, tools/testing/bench/insn-budget; a no-op elsewhere)\n"
      "  --no-latency, --no-bandwidth\n",
      kDefaultPort);
}

Options Parse(int argc, char** argv, int first) {
  Options o;
  for (int i = first; i < argc; i++) {
    std::string a = argv[i];
    auto val = [&](const char* name) -> const char* {
      size_t n = std::strlen(name);
      if (a.compare(0, n, name) == 0 && a.size() > n && a[n] == '=') return argv[i] + n + 1;
      return nullptr;
    };
    const char* v;
    if (a == "-h" || a == "--help") {
      Usage();
      std::exit(0);
    } else if ((v = val("--port"))) {
      o.port = static_cast<uint16_t>(std::atoi(v));
    } else if ((v = val("--transports"))) {
      o.transports.clear();
      for (auto& s : ptl::tool::SplitList(v)) o.transports.push_back(ParseTransport(s));
    } else if ((v = val("--lat-sizes"))) {
      o.lat_sizes.clear();
      for (auto& s : ptl::tool::SplitList(v)) o.lat_sizes.push_back(ptl::tool::ParseSizeOrDie(s));
    } else if ((v = val("--bw-sizes"))) {
      o.bw_sizes.clear();
      for (auto& s : ptl::tool::SplitList(v)) o.bw_sizes.push_back(ptl::tool::ParseSizeOrDie(s));
    } else if (a == "--no-max-sizes") {
      o.max_sizes = false;
    } else if ((v = val("--iters"))) {
      o.iters = std::atoi(v);
    } else if ((v = val("--warmup"))) {
      o.warmup = std::atoi(v);
    } else if ((v = val("--bw-bytes"))) {
      o.bw_bytes = ptl::tool::ParseSizeOrDie(v);
    } else if ((v = val("--bw-reps"))) {
      o.bw_reps = std::atoi(v);
    } else if ((v = val("--window"))) {
      o.window = std::atoi(v);
    } else if ((v = val("--ptl-iface"))) {
      o.ptl_iface = ptl::tool::ParseU32OrDie(v, "--ptl-iface");
    } else if ((v = val("--tsv"))) {
      o.tsv = v;
    } else if ((v = val("--timed-window"))) {
      o.timed_window = v;
    } else if (a == "--insn-marks") {
      o.insn_marks = true;
    } else if ((v = val("--jitter"))) {
      o.jitter = std::atoi(v);
    } else if (a == "--no-latency") {
      o.latency = false;
    } else if (a == "--no-bandwidth") {
      o.bandwidth = false;
    } else if (a[0] != '-' && o.server.empty()) {
      o.server = a;
    } else {
      Usage();
      Die("unknown argument '%s'", a.c_str());
    }
  }
  if (o.iters < 1 || o.iters > 1000000) Die("--iters must be 1..1000000");
  if (o.jitter < 0 || o.jitter > 1000000) Die("--jitter must be 0..1000000");
  if (o.warmup < 0 || o.warmup > 100000) Die("--warmup must be 0..100000");
  if (o.bw_reps < 1 || o.bw_reps > 100) Die("--bw-reps must be 1..100");
  if (o.window < 2 || o.window > 4096) Die("--window must be 2..4096");
  for (size_t s : o.lat_sizes)
    if (s > 4 * MiB) Die("latency sizes must be 0..4M");
  for (size_t s : o.bw_sizes)
    if (s < 1 || s > 64 * MiB) Die("bandwidth sizes must be 1..64M");
  return o;
}

int StreamCount(size_t n, const Options& o) {
  return static_cast<int>(std::clamp<size_t>(o.bw_bytes / n, 4, 1000));
}

struct Row {
  Transport t;
  bool bw;
  size_t size;
  double min, median;
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t m = v.size();
  return m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2;
}

std::string SizeName(size_t n) {
  if (n >= MiB && n % MiB == 0) return std::to_string(n / MiB) + "M";
  if (n >= KiB && n % KiB == 0) return std::to_string(n / KiB) + "K";
  return std::to_string(n);
}

class Client {
 public:
  Client(const Options& o) : o_(o) {}

  int Run() {
    SetWho("client");
    if (inet_pton(AF_INET, o_.server.c_str(), &server_) != 1)
      Die("client: '%s' is not an IPv4 address", o_.server.c_str());
    ctl_.fd = ConnectTcp(o_.port, "control");
    sockaddr_in local{};
    socklen_t len = sizeof(local);
    Sys(getsockname(ctl_.fd, reinterpret_cast<sockaddr*>(&local), &len) == 0, "getsockname");
    local_ = local.sin_addr;
    s_.iface = FindIface(local_);
    std::printf("ptl_netbench client: %s (%s, MTU %zu) -> %s, %d timed round trips (%d warm-up)\n",
                s_.iface.name.c_str(), inet_ntoa(local_), s_.iface.mtu, o_.server.c_str(), o_.iters,
                o_.warmup);
    std::fflush(stdout);
    for (Transport t : o_.transports) RunTransport(t);
    Msg q;
    q.op = kQuit;
    ctl_.Tell(q);
    Report();
    if (!o_.tsv.empty()) WriteTsv();
    std::printf("\nptl_netbench: all data verified, no errors\n");
    return 0;
  }

 private:
  int ConnectTcp(uint16_t port, const char* what) {
    sockaddr_in a = Inet(server_.s_addr, port);
    for (int tries = 0;; tries++) {
      int s = socket(AF_INET, SOCK_STREAM, 0);
      Sys(s >= 0, "socket");
      if (connect(s, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0) {
        int one = 1;
        Sys(setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == 0, "TCP_NODELAY");
        return s;
      }
      if (tries >= 300)
        Die("connect (%s) to %s:%u: %s", what, o_.server.c_str(), port, std::strerror(errno));
      close(s);
      usleep(100000);
    }
  }

  // The sizes transport T is measured at, and the ones it skips.
  std::vector<size_t> LatSizes(Transport t, std::vector<size_t>* skipped) const {
    std::vector<size_t> out;
    size_t lo = MinSize(t), hi = MaxSize(t, s_.iface.mtu), top = 0;
    for (size_t n : o_.lat_sizes) {
      top = std::max(top, n);
      if (n >= lo && n <= hi)
        out.push_back(n);
      else
        skipped->push_back(n);
    }
    if (o_.max_sizes && hi < top && std::find(out.begin(), out.end(), hi) == out.end())
      out.push_back(hi);
    std::sort(out.begin(), out.end());
    return out;
  }

  void RunTransport(Transport t) {
    const char* name = kTransportNames[t];
    SetWho(name);
    std::vector<size_t> skipped;
    std::vector<size_t> lat = o_.latency ? LatSizes(t, &skipped) : std::vector<size_t>{};
    std::vector<size_t> bw = o_.bandwidth && Streams(t) ? o_.bw_sizes : std::vector<size_t>{};
    size_t cap = 4096;
    for (size_t n : lat) cap = std::max(cap, n);
    for (size_t n : bw) cap = std::max(cap, n);
    if (!skipped.empty()) {
      std::string list;
      for (size_t n : skipped) list.append(" ").append(SizeName(n));
      notes_.push_back(std::string(name) + ": latency not measured at" + list + " (" +
                       SkipReason(t) + ")");
    }
    alarm(kWatchdogSec);
    s_.Buffers(cap);
    Open(t, cap);
    uint32_t seed = 1 + 1000 * t;
    for (size_t n : lat) {
      alarm(kWatchdogSec);
      rows_.push_back(Latency(t, n, seed += 4));
      std::printf("  %-8s latency %8s  min %10.3f  median %10.3f us\n", name, SizeName(n).c_str(),
                  rows_.back().min, rows_.back().median);
      std::fflush(stdout);
    }
    for (size_t n : bw) {
      alarm(kWatchdogSec);
      rows_.push_back(Bandwidth(t, n, seed += 4));
      std::printf("  %-8s stream  %8s  min %10.1f  median %10.1f MB/s\n", name, SizeName(n).c_str(),
                  rows_.back().min, rows_.back().median);
      std::fflush(stdout);
    }
    Msg m;
    m.op = kClose;
    m.transport = t;
    ctl_.Tell(m);
    ctl_.Hear();
    s_.ep.reset();
    alarm(0);
  }

  void Open(Transport t, size_t cap) {
    Msg m;
    m.op = kOpen;
    m.transport = t;
    m.size = cap;
    m.window = static_cast<uint32_t>(o_.window);
    m.ptl_iface = o_.ptl_iface;
    std::memcpy(m.mac, s_.iface.mac, 6);
    std::unique_ptr<PortalsEndpoint> portals;
    int udp = -1;
    if (t == kUdp || t == kUdpSendto) {
      udp = socket(AF_INET, SOCK_DGRAM, 0);
      Sys(udp >= 0, "socket (udp)");
      sockaddr_in b = Inet(local_.s_addr, 0);
      Sys(bind(udp, reinterpret_cast<sockaddr*>(&b), sizeof(b)) == 0, "bind (udp)");
      socklen_t len = sizeof(b);
      Sys(getsockname(udp, reinterpret_cast<sockaddr*>(&b), &len) == 0, "getsockname");
      m.udp_port = ntohs(b.sin_port);
    } else if (IsPortals(t)) {
      portals = std::make_unique<PortalsEndpoint>(o_.window, o_.ptl_iface, t == kPortalsGet);
      portals->Attach(s_.tx->p, s_.rx->p, s_.cap);
      m.ptl_id = portals->Open();
    }
    ctl_.Tell(m);
    Msg r = ctl_.Hear();
    if (r.mtu != s_.iface.mtu)
      Die("MTU %zu here, %u at the server: set both ends alike", s_.iface.mtu, r.mtu);
    if (t == kRaw) {
      s_.ep = std::make_unique<RawEndpoint>(RawSocket(s_.iface), s_.iface.mac, r.mac);
    } else if (t == kUdp || t == kUdpSendto) {
      sockaddr_in a = Inet(server_.s_addr, o_.port + 2);
      if (t == kUdp)
        Sys(connect(udp, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0, "connect (udp)");
      RecvTimeout(udp);
      s_.ep = std::make_unique<DatagramEndpoint>(udp, g_who, t == kUdp ? nullptr : &a);
    } else if (t == kTcp) {
      int c = ConnectTcp(o_.port + 1, "tcp data");
      RecvTimeout(c);
      s_.ep = std::make_unique<StreamEndpoint>(c);
      ctl_.Hear();  // the server has accepted
    } else if (t == kTipc) {
      auto e = std::make_unique<TipcEndpoint>(TipcSocket(), true);
      e->Attach(s_.tx->p, s_.rx->p, s_.cap);
      e->Hello();
      s_.ep = std::move(e);
    } else if (IsPortals(t)) {
      portals->Connect(r.ptl_id);
      s_.ep = std::move(portals);
    }
    s_.ep->Attach(s_.tx->p, s_.rx->p, s_.cap);
  }

  // For tools/testing/bench/budget-netbench and profile-netbench: which
  // samples of a profile fall in the timed round trips or stream
  // (perf record --clockid=CLOCK_MONOTONIC).
  void NoteTimedWindow(Transport t, size_t n, int64_t start, int64_t end) const {
    if (o_.timed_window.empty()) return;
    FILE* f = std::fopen(o_.timed_window.c_str(), "a");
    if (!f) Die("cannot open %s: %s", o_.timed_window.c_str(), std::strerror(errno));
    std::fprintf(f, "%s %zu %lld %lld\n", kTransportNames[t], n, static_cast<long long>(start),
                 static_cast<long long>(end));
    std::fclose(f);
  }

  Row Latency(Transport t, size_t n, uint32_t seed) {
    Msg m;
    m.op = kLat;
    m.transport = t;
    m.size = n;
    m.count = static_cast<uint32_t>(o_.warmup + o_.iters + 2);
    m.seed = seed;
    ctl_.Tell(m);
    ctl_.Hear();
    Endpoint& ep = *s_.ep;
    uint8_t *tx = s_.tx->p, *rx = s_.rx->p;
    Fill(tx, n, seed);
    ep.Send(n);
    ep.Recv(n);
    Verify(rx, n, seed + 1, g_who, "latency reply");
    std::vector<int64_t> rt;
    rt.reserve(o_.iters);
    int64_t timed_start = 0, timed_end = 0;
    uint32_t jitter_state = seed | 1;
    for (int i = 0; i < o_.warmup + o_.iters; i++) {
      if (o_.jitter)
        ptl_netbench_jitter_spin(NextJitter(&jitter_state) % static_cast<uint32_t>(o_.jitter));
      if (i == o_.warmup && o_.insn_marks) insn_census::Mark();
      int64_t t0 = NowNs();
      ep.Send(n);
      ep.Recv(n);
      int64_t t1 = NowNs();
      if (i == o_.warmup) timed_start = t0;
      if (i >= o_.warmup) rt.push_back(t1 - t0);
      timed_end = t1;
    }
    if (o_.insn_marks) insn_census::Mark();
    NoteTimedWindow(t, n, timed_start, timed_end);
    Fill(tx, n, seed + 2);
    ep.Send(n);
    ep.Recv(n);
    // A get reads what the server filled once; a ping-pong's last answer.
    Verify(rx, n, t == kPortalsGet ? seed + 1 : seed + 3, g_who, "latency reply");
    std::vector<double> us;
    for (int64_t v : rt) us.push_back(static_cast<double>(v) / 2e3);
    return Row{t, false, n, *std::min_element(us.begin(), us.end()), Median(us)};
  }

  Row Bandwidth(Transport t, size_t n, uint32_t seed) {
    int count = StreamCount(n, o_);
    std::vector<double> mbps;
    for (int rep = 0; rep < o_.bw_reps; rep++) {
      Msg m;
      m.op = kBw;
      m.transport = t;
      m.size = n;
      m.count = static_cast<uint32_t>(count);
      m.seed = seed + 100 * rep;
      ctl_.Tell(m);
      ctl_.Hear();
      Fill(s_.tx->p, n, m.seed);
      s_.ep->StreamSend(n, 1);
      ctl_.Hear();  // the server has verified it
      Fill(s_.tx->p, n, m.seed + 1);
      int64_t t0 = NowNs();
      s_.ep->StreamSend(n, count);
      int64_t t1 = NowNs();
      if (ctl_.Hear().op != kBwDone) Die("bandwidth: bad answer from the server");
      NoteTimedWindow(t, n, t0, t1);
      mbps.push_back(static_cast<double>(n) * count / static_cast<double>(t1 - t0) * 1e3);
    }
    return Row{t, true, n, *std::min_element(mbps.begin(), mbps.end()), Median(mbps)};
  }

  void Table(bool bw, bool median) const {
    std::vector<size_t> sizes;
    std::vector<Transport> ts;
    for (auto& r : rows_)
      if (r.bw == bw) {
        if (std::find(sizes.begin(), sizes.end(), r.size) == sizes.end()) sizes.push_back(r.size);
        if (std::find(ts.begin(), ts.end(), r.t) == ts.end()) ts.push_back(r.t);
      }
    if (sizes.empty()) return;
    std::sort(sizes.begin(), sizes.end());
    if (bw)
      std::printf("\nStreaming bandwidth, %s of %d runs (MB/s, 10^6 B/s), MTU %zu\n",
                  median ? "median" : "min", o_.bw_reps, s_.iface.mtu);
    else
      std::printf("\nOne-way latency, %s of %d round trips / 2 (virtual us), MTU %zu\n",
                  median ? "median" : "min", o_.iters, s_.iface.mtu);
    std::printf("%8s", "size");
    for (Transport t : ts) std::printf(" %10s", kTransportNames[t]);
    std::printf("\n");
    for (size_t n : sizes) {
      std::printf("%8s", SizeName(n).c_str());
      for (Transport t : ts) {
        auto it = std::find_if(rows_.begin(), rows_.end(),
                               [&](const Row& r) { return r.bw == bw && r.t == t && r.size == n; });
        if (it == rows_.end())
          std::printf(" %10s", "-");
        else
          std::printf(bw ? " %10.1f" : " %10.2f", median ? it->median : it->min);
      }
      std::printf("\n");
    }
  }

  void Report() const {
    Table(false, false);
    Table(false, true);
    Table(true, false);
    Table(true, true);
    if (!notes_.empty()) std::printf("\n");
    for (auto& n : notes_) std::printf("note: %s\n", n.c_str());
  }

  void WriteTsv() const {
    FILE* f = std::fopen(o_.tsv.c_str(), "a");
    if (!f) Die("%s: %s", o_.tsv.c_str(), std::strerror(errno));
    if (std::ftell(f) == 0) std::fprintf(f, "# transport\tkind\tsize\tmtu\tmin\tmedian\tunit\n");
    for (auto& r : rows_)
      std::fprintf(f, "%s\t%s\t%zu\t%zu\t%.3f\t%.3f\t%s\n", kTransportNames[r.t],
                   r.bw ? "bw" : "lat", r.size, s_.iface.mtu, r.min, r.median,
                   r.bw ? "MBps" : "us");
    if (std::fclose(f) != 0) Die("%s: %s", o_.tsv.c_str(), std::strerror(errno));
  }

  const Options& o_;
  in_addr server_{}, local_{};
  Control ctl_{-1};
  Side s_;
  std::vector<Row> rows_;
  std::vector<std::string> notes_;
};

}  // namespace

int main(int argc, char** argv) {
  SetWho("ptl_netbench");
  signal(SIGPIPE, SIG_IGN);
  std::string role = argc > 1 ? argv[1] : "";
  if (role == "-h" || role == "--help") {
    Usage();
    return 0;
  }
  if (role == "server") {
    Options o = Parse(argc, argv, 2);
    if (!o.server.empty()) Die("server: unexpected argument '%s'", o.server.c_str());
    return Serve(o.port);
  }
  if (role == "client") {
    Options o = Parse(argc, argv, 2);
    if (o.server.empty()) Die("client: give the server's IPv4 address");
    return Client(o).Run();
  }
  Usage();
  return 2;
}
