// SPDX-License-Identifier: BSD-3-Clause
// ptl_uring_bench: message rate of 1-byte puts between two processes, one
// ioctl per put (PtlPut) against the io_uring extension
// (<portals/ptl_uring.h>) in batches of 1, 8, 32 and 128, and against UDP
// with sendmmsg batches of the same sizes. On one node (UDP over
// 127.0.0.1), or on two: with PTL_PEER_NETNS set (a network namespace
// file, as make bench sets it up), the receiver runs in that namespace,
// another Portals node, and UDP goes to PTL_PEER_ADDR (default 10.0.0.2),
// both over the link between the nodes.
//
// The parent sends COUNT messages, then the forked child takes them: for
// Portals, one PUT_END per message from its EQ (PtlEQWait; start events
// disabled), for UDP the datagrams (recvmmsg, 128 at a time). A row's time
// runs from the first send until the child says it has taken all COUNT, so
// both ends' work is in it; rate = COUNT / time. The child's EQ and socket
// buffer hold a whole row (a loss ends the program with status 1, as does
// any error). The child drains after the sender is done rather than
// alongside: on the benchmark's one vCPU a receiver that sleeps per message
// would be woken, and preempt the sender, once per message, which measures
// the scheduler rather than either path (on a real node it has its own
// core).
//
// The goal (issue 10, kept by issue 23): at batch 32, above sendmmsg at
// batch 32; printed as met/MISSED, not asserted. (Issue 10's other goal, 3x
// the one-ioctl rate, is retired: the system call is ~190 ns of a put's
// ~4 us, so no batching can triple the rate; performance.md.) Run it in a
// guest under QEMU -icount (tools/testing/bench/run-bench, run-netbench)
// for repeatable path-length figures.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <p3nal_linux.h>
#include <portals/ptl_uring.h>
#include <portals3.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ptl_tool/die.h"
#include "ptl_tool/parse.h"

namespace {

constexpr int kPt = 5;
constexpr ptl_match_bits_t kBits = 0x42;
constexpr unsigned kBatches[] = {1, 8, 32, 128};
constexpr unsigned kMaxBatch = 128;

unsigned g_count = 20000;

// Messages start "ptl_uring_bench[PID]: ", so the parent's and the child's
// can be told apart: each calls this once it knows its pid.
void NameThisProcess() {
  ptl::tool::SetMessagePrefix("ptl_uring_bench[" + std::to_string(getpid()) + "]: ");
}

// A Portals code (rc >= 0) or a negative errno, by name and number.
[[noreturn]] void Die(const char* what, int rc) {
  ptl::tool::Die("%s: %s (%d)", what, rc >= 0 ? PtlErrorStr(rc) : std::strerror(-rc), rc);
}

void Ptl(const char* what, int rc) {
  if (rc != PTL_OK) Die(what, rc);
}

void Sys(bool ok, const char* what) {
  if (!ok) Die(what, -errno);
}

double NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// One byte each way over a pipe pair: commands to the child, replies back.
struct Chan {
  int rd = -1, wr = -1;
  void Send(char c) const { Sys(write(wr, &c, 1) == 1, "write chan"); }
  char Recv() const {
    char c = 0;
    Sys(read(rd, &c, 1) == 1, "read chan");
    return c;
  }
};

// ---------------------------------------------------------------- receiver

struct Receiver {
  ptl_handle_ni_t ni{};
  ptl_handle_eq_t eq{};
  ptl_process_id_t id{};
  char buf[8] = {};
  int udp = -1;
};

void ReceiverInit(Receiver& r) {
  int max;
  Ptl("PtlInit", PtlInit(&max));
  Ptl("PtlNIInit", PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, nullptr, nullptr, &r.ni));
  Ptl("PtlGetId", PtlGetId(r.ni, &r.id));
  // One event per message (starts disabled), a whole row without overflow.
  Ptl("PtlEQAlloc", PtlEQAlloc(r.ni, g_count + 1024, PTL_EQ_HANDLER_NONE, &r.eq));
  ptl_handle_me_t me;
  ptl_process_id_t any = {PTL_NID_ANY, PTL_PID_ANY};
  Ptl("PtlMEAttach", PtlMEAttach(r.ni, kPt, any, kBits, 0, PTL_RETAIN, PTL_INS_AFTER, &me));
  ptl_md_t md{};
  md.start = r.buf;
  md.length = sizeof(r.buf);
  md.threshold = PTL_MD_THRESH_INF;
  md.options = PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE | PTL_MD_EVENT_START_DISABLE;
  md.eq_handle = r.eq;
  ptl_handle_md_t mdh;
  Ptl("PtlMDAttach", PtlMDAttach(me, md, PTL_RETAIN, &mdh));
}

void ReceivePortals(const Receiver& r) {
  for (unsigned i = 0; i < g_count; i++) {
    ptl_event_t ev;
    int rc = PtlEQWait(r.eq, &ev);
    if (rc != PTL_OK) Die("PtlEQWait (events lost?)", rc);
    if (ev.type != PTL_EVENT_PUT_END || ev.mlength != 1) Die("unexpected event", ev.type);
  }
}

void ReceiveUdp(const Receiver& r) {
  std::vector<char> bytes(kMaxBatch);
  std::vector<iovec> iov(kMaxBatch);
  std::vector<mmsghdr> msgs(kMaxBatch);
  for (unsigned i = 0; i < kMaxBatch; i++) {
    iov[i] = {&bytes[i], 1};
    msgs[i] = {};
    msgs[i].msg_hdr.msg_iov = &iov[i];
    msgs[i].msg_hdr.msg_iovlen = 1;
  }
  for (unsigned got = 0; got < g_count;) {
    int n = recvmmsg(r.udp, msgs.data(), kMaxBatch, MSG_WAITFORONE, nullptr);
    if (n < 0 && errno == EINTR) continue;
    Sys(n > 0, "recvmmsg (datagrams lost?)");
    for (int i = 0; i < n; i++)
      if (msgs[i].msg_len != 1) Die("datagram length", static_cast<int>(msgs[i].msg_len));
    got += static_cast<unsigned>(n);
  }
}

// The other node, if there is one: the network namespace PTL_PEER_NETNS.
const char* PeerNetns() {
  const char* path = std::getenv("PTL_PEER_NETNS");
  return path && *path ? path : nullptr;
}

void EnterPeerNode(const char* path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  Sys(fd >= 0, path);
  Sys(setns(fd, CLONE_NEWNET) == 0, "setns");
  close(fd);
}

// A UDP socket bound to @addr (any port), taking a whole row; its address
// in @bound.
int UdpReceiver(in_addr_t addr, sockaddr_in& bound) {
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  Sys(fd >= 0, "socket");
  int bufsize = 64 << 20;
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bufsize, sizeof(bufsize)))
    Sys(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bufsize, sizeof(bufsize)) == 0, "SO_RCVBUF");
  bound = {};
  bound.sin_family = AF_INET;
  bound.sin_addr.s_addr = addr;
  Sys(bind(fd, reinterpret_cast<sockaddr*>(&bound), sizeof(bound)) == 0, "bind");
  socklen_t alen = sizeof(bound);
  Sys(getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &alen) == 0, "getsockname");
  return fd;
}

// Commands: 'p' receive a Portals row, 'u' a UDP row, 'q' quit. First the
// receiver's Portals id and UDP address go to the sender.
int ReceiverMain(const Chan& c, Receiver& r, const sockaddr_in& udp_addr) {
  ReceiverInit(r);
  Sys(write(c.wr, &r.id, sizeof(r.id)) == sizeof(r.id), "write id");
  Sys(write(c.wr, &udp_addr, sizeof(udp_addr)) == sizeof(udp_addr), "write address");
  for (;;) {
    char cmd = c.Recv();
    if (cmd == 'q') break;
    if (cmd == 'p') ReceivePortals(r);
    if (cmd == 'u') ReceiveUdp(r);
    // 'n': the messages went to a pid nobody holds; nothing to take.
    c.Send('d');
  }
  PtlNIFini(r.ni);
  PtlFini();
  return 0;
}

// ---------------------------------------------------------------- sender

struct Sender {
  ptl_handle_ni_t ni{};
  ptl_handle_md_t md{};
  ptl_process_id_t target{};
  char byte = 'x';
  int udp = -1;
  ptl_uring_t* uring = nullptr;
};

void SenderInit(Sender& s) {
  int max;
  Ptl("PtlInit", PtlInit(&max));
  Ptl("PtlNIInit", PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, nullptr, nullptr, &s.ni));
  ptl_md_t md{};
  md.start = &s.byte;
  md.length = 1;
  md.threshold = PTL_MD_THRESH_INF;
  md.eq_handle = PTL_EQ_NONE;
  Ptl("PtlMDBind", PtlMDBind(s.ni, md, PTL_RETAIN, &s.md));
  Ptl("PtlUringCreate", PtlUringCreate(s.ni, kMaxBatch, 0, &s.uring));
}

void SendIoctl(const Sender& s, unsigned /*batch*/) {
  for (unsigned i = 0; i < g_count; i++)
    Ptl("PtlPut", PtlPut(s.md, PTL_NO_ACK_REQ, s.target, kPt, 0, kBits, 0, 0));
}

void SendUring(const Sender& s, unsigned batch) {
  ptl_uring_cqe_t cqe[kMaxBatch];
  for (unsigned sent = 0; sent < g_count;) {
    unsigned n = std::min(batch, g_count - sent);
    for (unsigned i = 0; i < n; i++)
      Ptl("PtlUringPut",
          PtlUringPut(s.uring, i, s.md, PTL_NO_ACK_REQ, s.target, kPt, 0, kBits, 0, 0));
    unsigned done;
    Ptl("PtlUringSubmit", PtlUringSubmit(s.uring, &done));
    for (unsigned got = 0; got < n; got += done) {
      Ptl("PtlUringReap", PtlUringReap(s.uring, cqe, kMaxBatch, n - got, &done));
      for (unsigned i = 0; i < done; i++) Ptl("queued put", cqe[i].rc);
    }
    sent += n;
  }
}

void SendUdp(const Sender& s, unsigned batch) {
  iovec iov = {const_cast<char*>(&s.byte), 1};
  std::vector<mmsghdr> msgs(kMaxBatch);
  for (auto& m : msgs) {
    m = {};
    m.msg_hdr.msg_iov = &iov;
    m.msg_hdr.msg_iovlen = 1;
  }
  for (unsigned sent = 0; sent < g_count;) {
    unsigned n = std::min(batch, g_count - sent);
    int rc = sendmmsg(s.udp, msgs.data(), n, 0);
    if (rc < 0 && errno == EINTR) continue;
    Sys(rc > 0, "sendmmsg");
    sent += static_cast<unsigned>(rc);
  }
}

struct Row {
  std::string name;
  unsigned batch;
  double rate;  // messages per second
};

double Measure(const Chan& c, char cmd, void (*send)(const Sender&, unsigned), const Sender& s,
               unsigned batch) {
  double t0 = NowNs();
  send(s, batch);
  c.Send(cmd);
  if (c.Recv() != 'd') Die("receiver", PTL_FAIL);
  return g_count / ((NowNs() - t0) / 1e9);
}

}  // namespace

int main(int argc, char** argv) {
  NameThisProcess();
  if (argc > 1) g_count = ptl::tool::ParseU32(argv[1]).value_or(0);
  if (g_count == 0 || g_count > 200000) {
    std::fprintf(stderr, "usage: ptl_uring_bench [COUNT (1..200000, default 20000)]\n");
    return 2;
  }
  // The receiver's node: this one (UDP over loopback) or PTL_PEER_NETNS's.
  const char* peer = PeerNetns();
  in_addr_t peer_addr = htonl(INADDR_LOOPBACK);
  if (peer) {
    const char* a = std::getenv("PTL_PEER_ADDR");
    if (inet_pton(AF_INET, a && *a ? a : "10.0.0.2", &peer_addr) != 1)
      ptl::tool::Die("PTL_PEER_ADDR: not an IPv4 address");
  }
  int to[2], from[2];
  Sys(pipe(to) == 0 && pipe(from) == 0, "pipe");
  std::fflush(nullptr);
  pid_t child = fork();
  Sys(child >= 0, "fork");
  if (child == 0) {
    NameThisProcess();
    if (peer) EnterPeerNode(peer);
    Receiver r;
    sockaddr_in addr;
    r.udp = UdpReceiver(peer_addr, addr);  // the whole row fits its buffer
    return ReceiverMain(Chan{to[0], from[1]}, r, addr);
  }
  Chan c{from[0], to[1]};
  Sender s;
  SenderInit(s);
  Sys(read(c.rd, &s.target, sizeof(s.target)) == sizeof(s.target), "read id");
  sockaddr_in addr;
  Sys(read(c.rd, &addr, sizeof(addr)) == sizeof(addr), "read address");
  s.udp = socket(AF_INET, SOCK_DGRAM, 0);
  Sys(s.udp >= 0, "socket");
  Sys(connect(s.udp, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0, "connect");

  std::vector<Row> rows;
  rows.push_back({"PtlPut (one ioctl per put)", 1, Measure(c, 'p', SendIoctl, s, 1)});
  for (unsigned b : kBatches)
    rows.push_back({"PtlUringPut batches", b, Measure(c, 'p', SendUring, s, b)});
  for (unsigned b : kBatches)
    rows.push_back({"UDP sendmmsg batches", b, Measure(c, 'u', SendUdp, s, b)});
  // The entry cost alone: a pid nobody holds loses the message at once.
  Sender lost = s;
  lost.target.pid = s.target.pid + 1000;
  rows.push_back({"PtlPut, pid nobody holds", 1, Measure(c, 'n', SendIoctl, lost, 1)});
  rows.push_back({"PtlUringPut, pid nobody holds", 32, Measure(c, 'n', SendUring, lost, 32)});
  c.Send('q');
  int status;
  Sys(waitpid(child, &status, 0) == child, "waitpid");
  if (!WIFEXITED(status) || WEXITSTATUS(status)) Die("receiver failed", PTL_FAIL);
  PtlUringDestroy(s.uring);

  std::printf("message rate, 1-byte puts, two processes %s, %u messages per row\n",
              peer ? "on two nodes (the receiver in PTL_PEER_NETNS)" : "on one node", g_count);
  std::printf("  %-28s %6s %14s %10s\n", "transport", "batch", "msgs/s", "ns/msg");
  double uring32 = 0, udp32 = 0;
  for (const auto& r : rows) {
    std::printf("  %-28s %6u %14.0f %10.0f\n", r.name.c_str(), r.batch, r.rate, 1e9 / r.rate);
    if (r.batch == 32 && r.name == "PtlUringPut batches") uring32 = r.rate;
    if (r.batch == 32 && r.name[0] == 'U') udp32 = r.rate;
  }
  std::printf("goal: batch 32 above sendmmsg batch 32%s: %.2fx %s\n", peer ? " (two nodes)" : "",
              uring32 / udp32, uring32 > udp32 ? "met" : "MISSED");
  return 0;
}
