// SPDX-License-Identifier: BSD-3-Clause
// ptl_rdma_peer: a hostile (or merely strange) peer of ptl_rdma's rdma_cm
// listener, for tests (Documentation/rdma-transport.md, "Hostile peers").
// It opens raw RC connections through librdmacm with private data of its
// own making (any src_nid, dst_nid, version, credits, frame size), and then
// does nothing at all: it posts receive buffers, counts the frames the node
// sends it by type, never sends one and never answers a CLOSE. With
// --no-establish it does not even finish the handshake (no RTU), so the
// node's end stays "connecting". With --flood N it sends N data frames
// (FIRST frames of a message for no one) as fast as its send queue takes
// them, whatever credits it was given, and takes no frame after its first
// credits + 4: a peer that would take a shared receive queue's buffers
// from the node's other peers.
//
// It prints one line per outcome and a summary:
//   established N rejected N (reason R: N ...) failed N disconnected N
//   frames TYPE:N ...
//   flood sent N acked N credits_back N      (with --flood)
// and exits 0 unless its own setup failed (the outcomes are the test's to
// judge).
#include <arpa/inet.h>
#include <getopt.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <signal.h>
#include <time.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ptl_tool/parse.h"

namespace {

// The private data of ptl_rdma's connect request (rdma/prd.h).
struct ConnData {
  uint16_t magic;
  uint16_t version;
  uint16_t credits;
  uint16_t rsvd;
  uint32_t src_nid;
  uint32_t dst_nid;
  uint32_t frame_size;
} __attribute__((packed));

// And of its reject (struct prd_reject).
struct RejectData {
  uint16_t magic;
  uint16_t version;
  uint16_t reason;
  uint16_t rsvd;
} __attribute__((packed));

constexpr uint16_t kMagic = 0x5052;
constexpr uint32_t kFrameHeader = 24;  // struct prd_frame
constexpr uint32_t kWireHeader = 96;   // PTL_WIRE_HDR_LEN
constexpr uint8_t kFrameFirst = 1;
constexpr unsigned kSendDepth = 4;         // the QP's send queue
constexpr uint64_t kSendTag = 1ull << 63;  // wr_id of a send

struct Options {
  std::string dst;
  std::string src;
  uint16_t port = 7470;
  uint32_t count = 1;
  uint32_t src_nid = 0;  // 0: the source address
  bool src_nid_set = false;
  uint32_t dst_nid = 0;  // 0: the destination address
  bool dst_nid_set = false;
  uint16_t version = 3;
  uint16_t credits = 4;
  uint32_t frame_size = 8192;
  bool establish = true;
  uint32_t hold_ms = 0;         // after every connection has an outcome
  uint32_t until_closes = 0;    // hold until this many CLOSE frames came ...
  bool until_gone = false;      // ... or until every connection is gone
  uint32_t timeout_ms = 60000;  // for all of it
  uint32_t flood = 0;           // data frames to send on each connection
};

struct Conn {
  rdma_cm_id* id = nullptr;
  ibv_pd* pd = nullptr;
  ibv_cq* cq = nullptr;
  std::vector<char> bufs;
  ibv_mr* mr = nullptr;
  bool up = false;
  bool gone = false;
  bool outcome = false;
  uint32_t index = 0;
  uint32_t flood_sent = 0, flood_inflight = 0;
};

struct Counts {
  unsigned established = 0, half_open = 0, rejected = 0, failed = 0, disconnected = 0;
  std::map<int, unsigned> reasons;
  std::map<int, unsigned> frames;
  unsigned flood_sent = 0, flood_acked = 0, credits_back = 0;
};

uint64_t NowMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000 + uint64_t(ts.tv_nsec) / 1000000;
}

bool ParseAddr(const std::string& s, sockaddr_in* sin, uint16_t port) {
  std::memset(sin, 0, sizeof(*sin));
  sin->sin_family = AF_INET;
  sin->sin_port = htons(port);
  return inet_pton(AF_INET, s.c_str(), &sin->sin_addr) == 1;
}

uint32_t NidOf(const sockaddr_in& sin) { return ntohl(sin.sin_addr.s_addr); }

const char* FrameName(int type) {
  static const char* const names[] = {"?",    "FIRST", "MORE", "NOOP",  "RTS",      "CTS",
                                      "DONE", "GETS",  "SINK", "CLOSE", "CLOSE_ACK"};
  return type >= 1 && type <= 10 ? names[type] : "?";
}

class Peer {
 public:
  explicit Peer(const Options& o) : o_(o) {}
  ~Peer();
  bool Start();
  void Run();
  void Report() const;

 private:
  bool Connect(Conn* c);
  bool SetupQp(Conn* c);
  bool PostRecv(Conn* c, unsigned i);
  bool PostFlood(Conn* c);
  void Flood();
  void OnCompletion(Conn* c, const ibv_wc& wc);
  void OnEvent(rdma_cm_event* ev);
  void Poll();
  bool Done() const;

  const Options& o_;
  rdma_event_channel* ch_ = nullptr;
  std::vector<std::unique_ptr<Conn>> conns_;
  Counts n_;
  unsigned outcomes_ = 0;
  uint64_t all_out_ms_ = 0;
};

Peer::~Peer() {
  for (auto& c : conns_) {
    if (c->id && c->id->qp) rdma_destroy_qp(c->id);
    if (c->mr) ibv_dereg_mr(c->mr);
    if (c->cq) ibv_destroy_cq(c->cq);
    if (c->pd) ibv_dealloc_pd(c->pd);
    if (c->id) rdma_destroy_id(c->id);
  }
  if (ch_) rdma_destroy_event_channel(ch_);
}

bool Peer::Start() {
  ch_ = rdma_create_event_channel();
  if (!ch_) {
    std::perror("rdma_create_event_channel");
    return false;
  }
  for (uint32_t i = 0; i < o_.count; i++) {
    conns_.push_back(std::make_unique<Conn>());
    conns_.back()->index = i;
    if (!Connect(conns_.back().get())) return false;
  }
  return true;
}

bool Peer::Connect(Conn* c) {
  sockaddr_in dst, src;
  if (rdma_create_id(ch_, &c->id, c, RDMA_PS_TCP)) {
    std::perror("rdma_create_id");
    return false;
  }
  ParseAddr(o_.dst, &dst, o_.port);
  bool have_src = !o_.src.empty() && ParseAddr(o_.src, &src, 0);
  if (rdma_resolve_addr(c->id, have_src ? reinterpret_cast<sockaddr*>(&src) : nullptr,
                        reinterpret_cast<sockaddr*>(&dst), 5000)) {
    std::perror("rdma_resolve_addr");
    return false;
  }
  return true;
}

bool Peer::PostRecv(Conn* c, unsigned i) {
  ibv_sge sge = {};
  sge.addr = reinterpret_cast<uintptr_t>(c->bufs.data()) + uint64_t(i) * o_.frame_size;
  sge.length = o_.frame_size;
  sge.lkey = c->mr->lkey;
  ibv_recv_wr wr = {}, *bad = nullptr;
  wr.wr_id = i;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  return ibv_post_recv(c->id->qp, &wr, &bad) == 0;
}

// One FIRST frame with an all-zero wire header and no payload, from the
// buffer after the receive buffers; the credits field returns none.
bool Peer::PostFlood(Conn* c) {
  unsigned nrx = o_.credits + 4u;
  uint8_t* f = reinterpret_cast<uint8_t*>(c->bufs.data()) + uint64_t(nrx) * o_.frame_size;
  std::memset(f, 0, kFrameHeader + kWireHeader);
  f[0] = kMagic >> 8;
  f[1] = kMagic & 0xff;
  f[2] = kFrameFirst;
  uint32_t len = htonl(kWireHeader);
  std::memcpy(f + 8, &len, sizeof(len));
  ibv_sge sge = {};
  sge.addr = reinterpret_cast<uintptr_t>(f);
  sge.length = kFrameHeader + kWireHeader;
  sge.lkey = c->mr->lkey;
  ibv_send_wr wr = {}, *bad = nullptr;
  wr.wr_id = kSendTag;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  return ibv_post_send(c->id->qp, &wr, &bad) == 0;
}

// --flood: keeps each live connection's send queue full until N went.
void Peer::Flood() {
  for (auto& c : conns_) {
    while (c->up && !c->gone && c->flood_sent < o_.flood && c->flood_inflight < kSendDepth) {
      if (!PostFlood(c.get())) {
        c->gone = true;
        break;
      }
      c->flood_sent++;
      c->flood_inflight++;
      n_.flood_sent++;
    }
  }
}

// A QP with credits + 4 posted receive buffers, as ptl_rdma's own, and a
// send buffer that only --flood uses.
bool Peer::SetupQp(Conn* c) {
  unsigned nrx = o_.credits + 4u;
  c->pd = ibv_alloc_pd(c->id->verbs);
  c->cq = c->pd ? ibv_create_cq(c->id->verbs, int(nrx + kSendDepth), nullptr, nullptr, 0) : nullptr;
  if (!c->cq) return false;
  c->bufs.resize(size_t(nrx + 1) * o_.frame_size);
  c->mr = ibv_reg_mr(c->pd, c->bufs.data(), c->bufs.size(), IBV_ACCESS_LOCAL_WRITE);
  if (!c->mr) return false;
  ibv_qp_init_attr attr = {};
  attr.send_cq = c->cq;
  attr.recv_cq = c->cq;
  attr.qp_type = IBV_QPT_RC;
  attr.cap.max_send_wr = kSendDepth;
  attr.cap.max_recv_wr = nrx;
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = 1;
  if (rdma_create_qp(c->id, c->pd, &attr)) return false;
  for (unsigned i = 0; i < nrx; i++)
    if (!PostRecv(c, i)) return false;
  return true;
}

void Peer::OnEvent(rdma_cm_event* ev) {
  Conn* c = static_cast<Conn*>(ev->id->context);
  switch (ev->event) {
    case RDMA_CM_EVENT_ADDR_RESOLVED:
      if (rdma_resolve_route(ev->id, 5000)) std::perror("rdma_resolve_route");
      return;
    case RDMA_CM_EVENT_ROUTE_RESOLVED: {
      sockaddr_in* s = reinterpret_cast<sockaddr_in*>(rdma_get_local_addr(ev->id));
      sockaddr_in* d = reinterpret_cast<sockaddr_in*>(rdma_get_peer_addr(ev->id));
      ConnData cd = {};
      cd.magic = htons(kMagic);
      cd.version = htons(o_.version);
      cd.credits = htons(o_.credits);
      cd.src_nid = htonl(o_.src_nid_set ? o_.src_nid : NidOf(*s));
      cd.dst_nid = htonl(o_.dst_nid_set ? o_.dst_nid : NidOf(*d));
      cd.frame_size = htonl(o_.frame_size);
      rdma_conn_param p = {};
      p.private_data = &cd;
      p.private_data_len = sizeof(cd);
      p.retry_count = 6;
      p.rnr_retry_count = 7;
      p.flow_control = 1;
      if (o_.establish) {
        if (!SetupQp(c)) {
          std::fprintf(stderr, "ptl_rdma_peer: QP setup failed\n");
          break;
        }
      } else {
        // No QP: the handshake stops at the REP. A QP number of its own
        // each, or ib_cm takes the requests for stale repeats of one.
        p.qp_num = 0x1000 + c->index;
      }
      if (rdma_connect(ev->id, &p)) std::perror("rdma_connect");
      return;
    }
    case RDMA_CM_EVENT_CONNECT_RESPONSE:  // --no-establish: accepted, no RTU
      n_.half_open++;
      c->up = true;
      std::printf("accepted (no RTU sent)\n");
      c->outcome = true;
      outcomes_++;
      return;
    case RDMA_CM_EVENT_ESTABLISHED:
      n_.established++;
      c->up = true;
      std::printf("established\n");
      c->outcome = true;
      outcomes_++;
      return;
    case RDMA_CM_EVENT_REJECTED: {
      int reason = -1;
      if (ev->param.conn.private_data_len >= sizeof(RejectData)) {
        RejectData r;
        std::memcpy(&r, ev->param.conn.private_data, sizeof(r));
        if (ntohs(r.magic) == kMagic) reason = ntohs(r.reason);
      }
      n_.rejected++;
      n_.reasons[reason]++;
      std::printf("rejected (status %d, reason %d)\n", ev->status, reason);
      c->gone = true;
      break;
    }
    case RDMA_CM_EVENT_DISCONNECTED:
      n_.disconnected++;
      std::printf("disconnected\n");
      c->gone = true;
      return;
    case RDMA_CM_EVENT_TIMEWAIT_EXIT:
      return;
    default:
      std::printf("%s (status %d)\n", rdma_event_str(ev->event), ev->status);
      n_.failed++;
      c->gone = true;
      break;
  }
  if (!c->outcome) {
    c->outcome = true;
    outcomes_++;
  }
}

// A frame that arrived is counted, with the credits it returns, and its
// buffer posted again; a flood frame's send is counted. Never answers.
void Peer::OnCompletion(Conn* c, const ibv_wc& wc) {
  if (wc.wr_id & kSendTag) {
    c->flood_inflight--;
    n_.flood_acked++;
    return;
  }
  const uint8_t* f = reinterpret_cast<const uint8_t*>(c->bufs.data()) + wc.wr_id * o_.frame_size;
  if (wc.byte_len >= kFrameHeader && f[0] == (kMagic >> 8) && f[1] == (kMagic & 0xff)) {
    n_.frames[f[2]]++;
    n_.credits_back += unsigned(f[4]) << 8 | f[5];
  }
  // A flooding peer takes nothing more: the node's NOOPs, which return
  // its credits, then wait on the node's send queue.
  if (!o_.flood) PostRecv(c, unsigned(wc.wr_id));
}

void Peer::Poll() {
  for (auto& c : conns_) {
    ibv_wc wc[8];
    int n = c->cq && !c->gone ? ibv_poll_cq(c->cq, 8, wc) : 0;
    for (int i = 0; i < n; i++) {
      if (wc[i].status != IBV_WC_SUCCESS) {
        c->gone = true;
        break;
      }
      OnCompletion(c.get(), wc[i]);
    }
  }
  if (o_.flood) Flood();
}

bool Peer::Done() const {
  if (outcomes_ < conns_.size()) return false;
  uint64_t now = NowMs();
  if (o_.until_closes || o_.until_gone) {
    auto it = n_.frames.find(9);
    if (o_.until_closes && it != n_.frames.end() && it->second >= o_.until_closes) return true;
    if (o_.until_gone) {
      bool all = true;
      for (auto& c : conns_) all = all && c->gone;
      if (all) return true;
    }
    return false;
  }
  return now - all_out_ms_ >= o_.hold_ms;
}

// SIGTERM ends the hold early: a test holds connections for as long as
// its checks take, then asks for the report.
volatile sig_atomic_t g_stop = 0;

void OnStop(int) { g_stop = 1; }

void Peer::Run() {
  uint64_t start = NowMs();
  while (NowMs() - start < o_.timeout_ms) {
    if (g_stop) return;
    if (outcomes_ == conns_.size() && !all_out_ms_) all_out_ms_ = NowMs();
    if (all_out_ms_ && Done()) return;
    pollfd pfd = {ch_->fd, POLLIN, 0};
    if (poll(&pfd, 1, 20) > 0) {
      rdma_cm_event* ev = nullptr;
      if (rdma_get_cm_event(ch_, &ev) == 0) {
        OnEvent(ev);
        rdma_ack_cm_event(ev);
      }
    }
    Poll();
  }
  std::printf("timeout after %u ms\n", o_.timeout_ms);
}

void Peer::Report() const {
  std::printf("established %u accepted_no_rtu %u rejected %u failed %u disconnected %u",
              n_.established, n_.half_open, n_.rejected, n_.failed, n_.disconnected);
  for (auto& [reason, count] : n_.reasons) std::printf(" reason_%d %u", reason, count);
  std::printf("\nframes");
  for (auto& [type, count] : n_.frames) std::printf(" %s %u", FrameName(type), count);
  std::printf("\n");
  if (o_.flood)
    std::printf("flood sent %u acked %u credits_back %u\n", n_.flood_sent, n_.flood_acked,
                n_.credits_back);
}

void Usage(FILE* f) {
  std::fputs(
      "Usage: ptl_rdma_peer [OPTIONS] ADDR\n"
      "Opens RC connections to ptl_rdma's listener at ADDR (IPv4) with private data\n"
      "of its own making, then holds them without ever sending a frame.\n"
      "  --src ADDR          source address (default: the route's)\n"
      "  --port N            rdma_cm port (7470)\n"
      "  --count N           connections (1)\n"
      "  --src-nid N         src_nid in the private data (default: the source address)\n"
      "  --dst-nid N         dst_nid (default: ADDR)\n"
      "  --version N         protocol version (3)\n"
      "  --credits N         credits announced (4)\n"
      "  --frame-size N      frame size announced and received (8192)\n"
      "  --no-establish      stop the handshake after the node's accept (no RTU)\n"
      "  --hold-ms N         once every connection has an outcome, hold them N ms (0)\n"
      "  --until-closes N    hold until N CLOSE frames came ...\n"
      "  --until-gone        ... or until the node dropped every connection\n"
      "  --flood N           send N data frames on each connection, credits or not\n"
      "  --timeout-ms N      give up after N ms in all (60000)\n"
      "SIGTERM ends the hold at once; the report is printed as usual.\n",
      f);
}

// tools/lib's parser (no sign, no octal, overflow refused), shaped for the
// option loop.
bool ParseU32(const char* s, uint32_t* out) {
  auto v = ptl::tool::ParseU32(s);
  if (v) *out = *v;
  return v.has_value();
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  static const option longs[] = {
      {"src", required_argument, nullptr, 's'},
      {"port", required_argument, nullptr, 'p'},
      {"count", required_argument, nullptr, 'n'},
      {"src-nid", required_argument, nullptr, 'S'},
      {"dst-nid", required_argument, nullptr, 'D'},
      {"version", required_argument, nullptr, 'V'},
      {"credits", required_argument, nullptr, 'c'},
      {"frame-size", required_argument, nullptr, 'f'},
      {"no-establish", no_argument, nullptr, 'N'},
      {"hold-ms", required_argument, nullptr, 'H'},
      {"until-closes", required_argument, nullptr, 'C'},
      {"until-gone", no_argument, nullptr, 'G'},
      {"timeout-ms", required_argument, nullptr, 'T'},
      {"flood", required_argument, nullptr, 'F'},
      {"help", no_argument, nullptr, 'h'},
      {nullptr, 0, nullptr, 0},
  };
  int opt;
  uint32_t v = 0;
  while ((opt = getopt_long(argc, argv, "h", longs, nullptr)) != -1) {
    bool ok = true;
    switch (opt) {
      case 's':
        o.src = optarg;
        break;
      case 'N':
        o.establish = false;
        break;
      case 'G':
        o.until_gone = true;
        break;
      case 'h':
        Usage(stdout);
        return 0;
      case 'p':
      case 'n':
      case 'S':
      case 'D':
      case 'V':
      case 'c':
      case 'f':
      case 'H':
      case 'C':
      case 'T':
      case 'F':
        ok = ParseU32(optarg, &v);
        if (opt == 'p') o.port = uint16_t(v), ok = ok && v && v < 65536;
        if (opt == 'n') o.count = v, ok = ok && v && v <= 4096;
        if (opt == 'S') o.src_nid = v, o.src_nid_set = true;
        if (opt == 'D') o.dst_nid = v, o.dst_nid_set = true;
        if (opt == 'V') o.version = uint16_t(v), ok = ok && v < 65536;
        if (opt == 'c') o.credits = uint16_t(v), ok = ok && v && v <= 1024;
        if (opt == 'f') o.frame_size = v, ok = ok && v >= kFrameHeader && v <= 65536;
        if (opt == 'H') o.hold_ms = v;
        if (opt == 'C') o.until_closes = v;
        if (opt == 'T') o.timeout_ms = v;
        if (opt == 'F') o.flood = v;
        break;
      default:
        ok = false;
    }
    if (!ok) {
      Usage(stderr);
      return 2;
    }
  }
  if (optind + 1 != argc) {
    Usage(stderr);
    return 2;
  }
  o.dst = argv[optind];
  sockaddr_in probe;
  if (!ParseAddr(o.dst, &probe, o.port) || (!o.src.empty() && !ParseAddr(o.src, &probe, 0))) {
    std::fprintf(stderr, "ptl_rdma_peer: not an IPv4 address\n");
    return 2;
  }
  setvbuf(stdout, nullptr, _IOLBF, 0);
  struct sigaction sa = {};
  sa.sa_handler = OnStop;
  sigaction(SIGTERM, &sa, nullptr);
  Peer peer(o);
  if (!peer.Start()) return 1;
  peer.Run();
  peer.Report();
  return 0;
}
