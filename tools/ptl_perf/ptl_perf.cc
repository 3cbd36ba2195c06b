// SPDX-License-Identifier: BSD-3-Clause
// ptl_perf: PortalPerf/NetPIPE-style benchmark of Portals between two
// processes on one node, side by side with the kernel's own local IPC.
//
// The program forks once; the parent ("ping", which keeps the clock) and
// the child ("pong") then run the same list of tests over every transport:
//
//   latency    ping-pong of one message each way; one-way time = round trip
//              / 2, per iteration, reported as min and median (us)
//   bandwidth  COUNT messages streamed back to back, then one short message
//              back saying all arrived; MB/s = COUNT * size / elapsed (1e6 B)
//
// Transports: portals (PtlPutRegion into a matched ME, completion from the
// EQ: PUT_END at the receiver, SEND_END [and ACK with --ack] at the sender;
// streaming is flow controlled by credits the receiver returns every
// window/2 messages), unix (stream socketpair), pipe (a pipe each way),
// udp and tcp (TCP_NODELAY) over 127.0.0.1, shm (two ring buffers in a
// shared mapping, futex wake-ups: the two-copy scheme of MPI's shared-memory
// transports). UDP takes part in latency only (a datagram holds 64 KiB).
//
// Every test verifies data at the receiver on an untimed first round and on
// the last message; any Portals error, wrong byte, wrong length, timeout or
// child failure ends the program with status 1. Times come from
// CLOCK_MONOTONIC; run it in a guest under QEMU -icount (tools/ptl_perf/
// run-bench) for repeatable path-length figures.
#include <fcntl.h>
#include <linux/futex.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <p3nal_linux.h>
#include <portals3.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "insn_census/insn_mark.h"
#include "ptl_tool/die.h"
#include "ptl_tool/parse.h"

namespace {

// ---------------------------------------------------------------- basics

// Messages start "ptl_perf [ROLE]: " (ROLE "ptl_perf", then "ping" or "pong").
void SetWho(const char* who) {
  ptl::tool::SetMessagePrefix(std::string("ptl_perf [") + who + "]: ");
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
// Per-test watchdog (guest time; under -icount idle time is skipped over).
constexpr unsigned kWatchdogSec = 120;
// How long a receiver waits for one message before giving up.
constexpr int kRecvTimeoutMs = 20000;

// Deterministic test pattern: differs per seed and per byte position.
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

// Page-aligned, pre-faulted buffer.
struct Buffer {
  uint8_t* p = nullptr;
  size_t n = 0;
  explicit Buffer(size_t size) : n(std::max(size, size_t{4096})) {
    void* v = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    Sys(v != MAP_FAILED, "mmap");
    p = static_cast<uint8_t*>(v);
    std::memset(p, 0, n);
  }
  ~Buffer() { munmap(p, n); }
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
    Sys(r > 0, "read");
    p += r;
    n -= static_cast<size_t>(r);
  }
}

// ---------------------------------------------------------------- options

struct Options {
  std::vector<size_t> lat_sizes{1, 8, 64, 512, 1 * KiB, 4 * KiB, 8 * KiB};
  std::vector<size_t> bw_sizes{64 * KiB, 256 * KiB, 1 * MiB, 4 * MiB};
  std::vector<std::string> transports{
      "portals", "portals-update", "portals-bind", "unix", "pipe", "udp", "tcp", "shm"};
  int iters = 200;             // timed round trips per latency size
  int warmup = 10;             // untimed round trips before them
  bool insn_marks = false;     // insn_census marker around each timed loop
  size_t bw_bytes = 16 * MiB;  // streamed per bandwidth size (message count clamped to 4..1000)
  int window = 16;             // portals streaming: puts in flight before a credit is needed
  bool ack = false;            // portals: request ACKs and wait for them
  bool latency = true, bandwidth = true;
  int probe_iters = 2000;  // 0: no call-cost probe
  int posted = 0;          // portals: MEs that never match, ahead of the data ME
  bool posted_wildcard = false;
};

void Usage() {
  std::printf(
      "usage: ptl_perf [options]\n"
      "  --lat-sizes=LIST     latency sizes (default 1,8,64,512,1K,4K,8K; max 1M)\n"
      "  --bw-sizes=LIST      bandwidth sizes (default 64K,256K,1M,4M; max 64M)\n"
      "  --iters=N            timed round trips per latency size (default 200)\n"
      "  --warmup=N           untimed round trips first (default 10)\n"
      "  --insn-marks         execute insn_census's marker before and after each\n"
      "                       latency test's timed round trips (an instruction\n"
      "                       census, tools/testing/bench/insn-budget; a no-op elsewhere)\n"
      "  --bw-bytes=SIZE      bytes streamed per bandwidth size (default 16M;\n"
      "                       the message count is clamped to 4..1000)\n"
      "  --window=N           portals streaming window, credits every N/2 (default 16)\n"
      "  --ack                portals: request an ACK per put and wait for it\n"
      "  --transports=LIST    any of portals,portals-update,portals-bind,unix,pipe,udp,tcp,\n"
      "                       shm (default all); portals-update: PtlMDUpdate of the send MD\n"
      "                       before every put (put_pp), portals-bind: PtlMDBind + put +\n"
      "                       PtlMDUnlink per message (latency only)\n"
      "  --probe-iters=N      iterations of each Portals call-cost probe (default 2000, 0: off)\n"
      "  --posted=N           portals: N MEs that never match ahead of the data ME (the\n"
      "                       matching cost of a long list; at most 65,000)\n"
      "  --posted-kind=K      exact (no ignore bits, the default) or wildcard (ignore bits)\n"
      "  --no-latency, --no-bandwidth\n");
}

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; i++) {
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
    } else if ((v = val("--lat-sizes"))) {
      o.lat_sizes.clear();
      for (auto& s : ptl::tool::SplitList(v)) o.lat_sizes.push_back(ptl::tool::ParseSizeOrDie(s));
    } else if ((v = val("--bw-sizes"))) {
      o.bw_sizes.clear();
      for (auto& s : ptl::tool::SplitList(v)) o.bw_sizes.push_back(ptl::tool::ParseSizeOrDie(s));
    } else if ((v = val("--iters"))) {
      o.iters = std::atoi(v);
    } else if ((v = val("--warmup"))) {
      o.warmup = std::atoi(v);
    } else if ((v = val("--bw-bytes"))) {
      o.bw_bytes = ptl::tool::ParseSizeOrDie(v);
    } else if ((v = val("--window"))) {
      o.window = std::atoi(v);
    } else if ((v = val("--transports"))) {
      o.transports = ptl::tool::SplitList(v);
    } else if (a == "--insn-marks") {
      o.insn_marks = true;
    } else if (a == "--ack") {
      o.ack = true;
    } else if (a == "--no-latency") {
      o.latency = false;
    } else if (a == "--no-bandwidth") {
      o.bandwidth = false;
    } else if ((v = val("--posted"))) {
      o.posted = std::atoi(v);
    } else if ((v = val("--posted-kind"))) {
      if (std::strcmp(v, "exact") != 0 && std::strcmp(v, "wildcard") != 0)
        Die("--posted-kind must be exact or wildcard");
      o.posted_wildcard = std::strcmp(v, "wildcard") == 0;
    } else if ((v = val("--probe-iters"))) {
      o.probe_iters = std::atoi(v);
    } else {
      Usage();
      Die("unknown argument '%s'", a.c_str());
    }
  }
  if (o.iters < 1 || o.iters > 1000000) Die("--iters must be 1..1000000");
  if (o.warmup < 0 || o.warmup > 100000) Die("--warmup must be 0..100000");
  if (o.probe_iters < 0 || o.probe_iters > 1000000) Die("--probe-iters must be 0..1000000");
  if (o.window < 2 || o.window > 4096) Die("--window must be 2..4096");
  if (o.posted < 0 || o.posted > 65000) Die("--posted must be 0..65000");
  for (size_t s : o.lat_sizes)
    if (s < 1 || s > MiB) Die("latency sizes must be 1..1M");
  for (size_t s : o.bw_sizes)
    if (s < 1 || s > 64 * MiB) Die("bandwidth sizes must be 1..64M");
  if (o.transports.empty() || o.transports[0] != "portals")
    Die("--transports must start with portals (the ratios are Portals/peer)");
  return o;
}

// ---------------------------------------------------------------- transports

// One end of a transport. Send() transmits tx[0, n) and returns when the
// buffer may be reused; Recv() returns when rx[0, n) holds a whole message.
class Endpoint {
 public:
  virtual ~Endpoint() = default;
  virtual void Send(size_t n) = 0;
  virtual void Recv(size_t n) = 0;
  virtual bool streams() const { return true; }
  // Streaming: COUNT messages of N bytes, then a 1-byte reply from the
  // receiver (both return when the reply has arrived / been sent).
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

// Stream file descriptors (socketpair, pipes, TCP) or datagram sockets.
class FdEndpoint : public Endpoint {
 public:
  FdEndpoint(int rfd, int wfd, bool datagram) : rfd_(rfd), wfd_(wfd), datagram_(datagram) {}
  ~FdEndpoint() override {
    close(rfd_);
    if (wfd_ != rfd_) close(wfd_);
  }
  void Send(size_t n) override {
    if (!datagram_) return WriteAll(wfd_, tx_, n);
    ssize_t w;
    do w = send(wfd_, tx_, n, 0);
    while (w < 0 && errno == EINTR);
    Sys(w == static_cast<ssize_t>(n), "send (datagram)");
  }
  void Recv(size_t n) override {
    if (!datagram_) return ReadAll(rfd_, rx_, n);
    ssize_t r;
    do r = recv(rfd_, rx_, cap_, 0);
    while (r < 0 && errno == EINTR);
    Sys(r >= 0, "recv (datagram)");
    if (static_cast<size_t>(r) != n) Die("datagram of %zd bytes, expected %zu", r, n);
  }
  bool streams() const override { return !datagram_; }

 private:
  int rfd_, wfd_;
  bool datagram_;
};

// Shared memory: one ring of chunks per direction, futex wake-ups. Each
// message is copied into the ring by the sender and out by the receiver.
long Futex(std::atomic<uint32_t>* addr, int op, uint32_t val, const timespec* ts) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(addr), op, val, ts, nullptr, 0);
}

struct ShmRing {
  static constexpr size_t kChunk = 64 * KiB;
  static constexpr uint32_t kSlots = 16;
  alignas(64) std::atomic<uint32_t> head{0};  // chunks produced
  std::atomic<uint32_t> consumer_sleeps{0};
  alignas(64) std::atomic<uint32_t> tail{0};  // chunks consumed
  std::atomic<uint32_t> producer_sleeps{0};
  alignas(64) uint8_t data[kSlots][kChunk];
};

// Waits until *word != seen, announcing the sleep in *flag (Dekker with the
// waker's store-then-check, both sequentially consistent).
void WaitChange(std::atomic<uint32_t>* word, std::atomic<uint32_t>* flag, uint32_t seen) {
  int64_t deadline = NowNs() + int64_t{kRecvTimeoutMs} * 1000000;
  while (word->load() == seen) {
    flag->store(1);
    if (word->load() == seen) {
      timespec ts{1, 0};
      long r = Futex(word, FUTEX_WAIT, seen, &ts);
      if (r < 0 && errno != EAGAIN && errno != EINTR && errno != ETIMEDOUT) Sys(false, "futex");
    }
    flag->store(0);
    if (NowNs() > deadline) Die("shm: peer did not answer");
  }
}

void Wake(std::atomic<uint32_t>* word, std::atomic<uint32_t>* flag) {
  if (flag->load()) Futex(word, FUTEX_WAKE, 1, nullptr);
}

class ShmEndpoint : public Endpoint {
 public:
  ShmEndpoint(ShmRing* out, ShmRing* in) : out_(out), in_(in) {}
  void Send(size_t n) override {
    const uint8_t* p = tx_;
    do {
      size_t c = std::min(n, ShmRing::kChunk);
      uint32_t h = out_->head.load(std::memory_order_relaxed);
      uint32_t t;
      while (h - (t = out_->tail.load()) == ShmRing::kSlots)
        WaitChange(&out_->tail, &out_->producer_sleeps, t);
      std::memcpy(out_->data[h % ShmRing::kSlots], p, c);
      out_->head.store(h + 1);
      Wake(&out_->head, &out_->consumer_sleeps);
      p += c;
      n -= c;
    } while (n);
  }
  void Recv(size_t n) override {
    uint8_t* p = rx_;
    do {
      size_t c = std::min(n, ShmRing::kChunk);
      uint32_t t = in_->tail.load(std::memory_order_relaxed);
      while (in_->head.load() == t) WaitChange(&in_->head, &in_->consumer_sleeps, t);
      std::memcpy(p, in_->data[t % ShmRing::kSlots], c);
      in_->tail.store(t + 1);
      Wake(&in_->tail, &in_->producer_sleeps);
      p += c;
      n -= c;
    } while (n);
  }

 private:
  ShmRing* out_;
  ShmRing* in_;
};

// How a Portals sender gets the MD it puts from.
enum class SendMd {
  kBound,   // one MD bound at start (portals)
  kUpdate,  // PtlMDUpdate of that MD to the message before every put (put_pp)
  kBind,    // PtlMDBind + put + PtlMDUnlink per message (MPI over Portals 3)
};

// Portals: each process has its own NI, one EQ, a data ME and a credit ME
// on one portal, and bound MDs over its send buffer and a credit word.
class PortalsEndpoint : public Endpoint {
 public:
  static constexpr ptl_pt_index_t kPortal = 4;
  static constexpr ptl_match_bits_t kData = 0xda7a, kCredit = 0xc4ed;

  PortalsEndpoint(int window, bool ack, int posted, bool posted_wildcard,
                  SendMd send_md = SendMd::kBound)
      : window_(window),
        ack_(ack),
        posted_(posted),
        posted_wildcard_(posted_wildcard),
        send_md_(send_md) {}
  ~PortalsEndpoint() override {
    if (up_) PtlFini();
  }

  // PtlInit and the objects; returns this process's id for the peer.
  ptl_process_id_t Open() {
    int max;
    Ptl("PtlInit", PtlInit(&max));
    up_ = true;
    Ptl("PtlNIInit", PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, nullptr, nullptr, &ni_));
    ptl_process_id_t id;
    Ptl("PtlGetId", PtlGetId(ni_, &id));
    // Room for a whole window of data events plus credits and ACKs.
    Ptl("PtlEQAlloc",
        PtlEQAlloc(ni_, 4 * static_cast<ptl_size_t>(window_) + 256, PTL_EQ_HANDLER_NONE, &eq_));
    const ptl_process_id_t any{PTL_NID_ANY, PTL_PID_ANY};
    const unsigned rx_opts = PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE | PTL_MD_EVENT_START_DISABLE;
    ptl_handle_me_t me;
    // Entries every incoming put is matched against first (no MD: the
    // list walk skips them as fast as it can). Their bits never match.
    for (int i = 0; i < posted_; i++) {
      const ptl_match_bits_t bits =
          posted_wildcard_ ? (0x6ULL << 60) | (uint64_t(i) << 8) : (0x5ULL << 60) | uint64_t(i);
      Ptl("PtlMEAttach (posted)", PtlMEAttach(ni_, kPortal, any, bits, posted_wildcard_ ? 0xff : 0,
                                              PTL_RETAIN, PTL_INS_AFTER, &me));
    }
    Ptl("PtlMEAttach (data)",
        PtlMEAttach(ni_, kPortal, any, kData, 0, PTL_RETAIN, PTL_INS_AFTER, &me));
    Ptl("PtlMDAttach (data)", PtlMDAttach(me, Md(rx_, cap_, rx_opts), PTL_RETAIN, &rx_md_));
    Ptl("PtlMEAttach (credit)",
        PtlMEAttach(ni_, kPortal, any, kCredit, 0, PTL_RETAIN, PTL_INS_AFTER, &me));
    Ptl("PtlMDAttach (credit)",
        PtlMDAttach(me, Md(&credit_rx_, sizeof(credit_rx_), rx_opts), PTL_RETAIN, &credit_rx_md_));
    Ptl("PtlMDBind (data)",
        PtlMDBind(ni_, Md(tx_, cap_, PTL_MD_EVENT_START_DISABLE), PTL_RETAIN, &tx_md_));
    Ptl("PtlMDBind (credit)",
        PtlMDBind(ni_, Md(&credit_tx_, sizeof(credit_tx_), PTL_MD_EVENT_START_DISABLE), PTL_RETAIN,
                  &credit_tx_md_));
    return id;
  }
  void Connect(ptl_process_id_t peer) { peer_ = peer; }

  void Send(size_t n) override {
    if (send_md_ == SendMd::kBound) {
      Put(n);
      WaitSends();
      return;
    }
    // The MD of this message: over the same (already pinned) buffer.
    ptl_md_t md = Md(tx_, n, PTL_MD_EVENT_START_DISABLE);
    if (send_md_ == SendMd::kUpdate) {
      Ptl("PtlMDUpdate", PtlMDUpdate(tx_md_, nullptr, &md, PTL_EQ_NONE));
      Put(n);
      WaitSends();
      return;
    }
    ptl_handle_md_t h;
    Ptl("PtlMDBind (per send)", PtlMDBind(ni_, md, PTL_RETAIN, &h));
    Put(n, h);
    WaitSends();
    Ptl("PtlMDUnlink (per send)", PtlMDUnlink(h));
  }
  bool streams() const override { return send_md_ == SendMd::kBound; }
  void Recv(size_t n) override {
    expect_len_ = n;
    while (recvs_ == consumed_) Pump();
    consumed_++;
  }

  // Costs of single calls in this process (no peer involved), in guest ns
  // per call: where the ping-pong's time goes. Returns {name, ns} pairs.
  std::vector<std::pair<std::string, double>> Probe(ptl_process_id_t self, int iters) {
    std::vector<std::pair<std::string, double>> out;
    auto time = [&](const char* name, auto&& body) {
      for (int i = 0; i < 16; i++) body();  // warm-up
      int64_t t0 = NowNs();
      for (int i = 0; i < iters; i++) body();
      out.emplace_back(name, static_cast<double>(NowNs() - t0) / iters);
    };
    ptl_event_t ev;
    ptl_sr_value_t sr;
    int which;
    time("clock_gettime (vDSO)", [] { NowNs(); });
    time("getppid() syscall", [] { syscall(SYS_getppid); });
    time("PtlEQGet, empty EQ", [&] {
      if (PtlEQGet(eq_, &ev) != PTL_EQ_EMPTY) Die("probe: EQ not empty");
    });
    time("PtlEQPoll(timeout 0), empty EQ", [&] {
      if (PtlEQPoll(&eq_, 1, 0, &ev, &which) != PTL_EQ_EMPTY) Die("probe: EQ not empty");
    });
    time("PtlNIStatus (ioctl)",
         [&] { Ptl("PtlNIStatus", PtlNIStatus(ni_, PTL_SR_DROP_COUNT, &sr)); });
    // MDs over 8 B of the send buffer, which the bound tx MD already pins.
    ptl_md_t md8 = Md(tx_, 8, PTL_MD_EVENT_START_DISABLE);
    ptl_handle_md_t h8;
    Ptl("PtlMDBind (probe)", PtlMDBind(ni_, md8, PTL_RETAIN, &h8));
    time("PtlMDUpdate, unchanged 8 B region",
         [&] { Ptl("PtlMDUpdate", PtlMDUpdate(h8, nullptr, &md8, PTL_EQ_NONE)); });
    Ptl("PtlMDUnlink (probe)", PtlMDUnlink(h8));
    time("PtlMDBind + PtlMDUnlink, 8 B of a pinned buffer", [&] {
      Ptl("PtlMDBind", PtlMDBind(ni_, md8, PTL_RETAIN, &h8));
      Ptl("PtlMDUnlink", PtlMDUnlink(h8));
    });
    // The two halves on their own: ITERS binds, then their unlinks.
    std::vector<ptl_handle_md_t> hs(iters);
    int64_t t0 = NowNs();
    for (auto& h : hs) Ptl("PtlMDBind", PtlMDBind(ni_, md8, PTL_RETAIN, &h));
    int64_t t1 = NowNs();
    for (auto& h : hs) Ptl("PtlMDUnlink", PtlMDUnlink(h));
    int64_t t2 = NowNs();
    out.emplace_back("PtlMDBind, 8 B of a pinned buffer", static_cast<double>(t1 - t0) / iters);
    out.emplace_back("PtlMDUnlink of it", static_cast<double>(t2 - t1) / iters);
    ptl_process_id_t nobody = self;
    nobody.pid = self.pid + 1000;
    time("PtlPutRegion 1 B to a pid nobody holds, + SEND_END", [&] {
      Ptl("PtlPutRegion",
          PtlPutRegion(tx_md_, 0, 1, PTL_NO_ACK_REQ, nobody, kPortal, 0, kData, 0, 1));
      Expect(PTL_EVENT_SEND_END);
    });
    for (size_t n : {size_t{0}, size_t{1}, size_t{4096}}) {
      if (n > cap_) continue;
      std::string name = "PtlPutRegion " + std::to_string(n) + " B to self, + SEND_END, PUT_END";
      time(name.c_str(), [&] {
        Ptl("PtlPutRegion",
            PtlPutRegion(tx_md_, 0, n, PTL_NO_ACK_REQ, self, kPortal, 0, kData, 0, n));
        Expect(PTL_EVENT_SEND_END);
        Expect(PTL_EVENT_PUT_END);
      });
    }
    return out;
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
    WaitSends();
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

  // The next event, already in the EQ, must be of kind K.
  void Expect(ptl_event_kind_t k) {
    ptl_event_t ev;
    int rc = PtlEQGet(eq_, &ev);
    if (rc != PTL_OK || ev.type != k || ev.ni_fail_type != PTL_NI_OK)
      Die("probe: expected %s, got %s (%s)", PtlEventKindStr(k),
          rc == PTL_OK ? PtlEventKindStr(ev.type) : "no event", PtlErrorStr(rc));
  }

  void Put(size_t n) { Put(n, tx_md_); }
  void Put(size_t n, ptl_handle_md_t md) {
    Ptl("PtlPutRegion", PtlPutRegion(md, 0, n, ack_ ? PTL_ACK_REQ : PTL_NO_ACK_REQ, peer_, kPortal,
                                     0, kData, 0, n));
    sends_issued_++;
    if (ack_) acks_expected_++;
  }
  void WaitSends() {
    while (sends_done_ < sends_issued_ || acks_ < acks_expected_) Pump();
  }

  // Handles one event, waiting for it (bounded).
  void Pump() {
    ptl_event_t ev;
    int which;
    int rc = PtlEQPoll(&eq_, 1, kRecvTimeoutMs, &ev, &which);
    if (rc == PTL_EQ_EMPTY) Die("portals: no event for %d ms", kRecvTimeoutMs);
    Handle(rc, ev);
  }
  // Handles the events already there, without a syscall.
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
      case PTL_EVENT_ACK:
        acks_++;
        break;
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
  bool ack_;
  int posted_;
  bool posted_wildcard_;
  SendMd send_md_;
  bool up_ = false;
  ptl_handle_ni_t ni_{};
  ptl_handle_eq_t eq_{};
  ptl_handle_md_t rx_md_{}, tx_md_{}, credit_rx_md_{}, credit_tx_md_{};
  ptl_process_id_t peer_{};
  uint64_t credit_rx_ = 0, credit_tx_ = 0;
  size_t expect_len_ = 0;
  uint64_t sends_issued_ = 0, sends_done_ = 0, acks_expected_ = 0, acks_ = 0;
  uint64_t recvs_ = 0, consumed_ = 0, credits_ = 0;
};

// ---------------------------------------------------------------- the pair

// Both processes' view: the control pipes and which side this is.
struct Pair {
  bool parent;
  int ctl_rd, ctl_wr;
  // A rendezvous: both sides have reached this point.
  void Barrier() const {
    char c = 'b';
    if (parent) {
      WriteAll(ctl_wr, &c, 1);
      ReadAll(ctl_rd, &c, 1);
    } else {
      ReadAll(ctl_rd, &c, 1);
      WriteAll(ctl_wr, &c, 1);
    }
  }
  template <typename T>
  void Tell(const T& v) const {
    WriteAll(ctl_wr, &v, sizeof(v));
  }
  template <typename T>
  T Hear() const {
    T v;
    ReadAll(ctl_rd, &v, sizeof(v));
    return v;
  }
};

// File descriptors of the socket transports, made before fork: [0] is the
// parent's, [1] the child's.
struct Fds {
  int unix_sp[2];
  int pipe_p2c[2], pipe_c2p[2];
  int udp[2];
  int tcp[2];
  ShmRing* shm = nullptr;  // [0]: parent -> child, [1]: child -> parent
};

sockaddr_in Loopback(uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

uint16_t BoundPort(int fd) {
  sockaddr_in a{};
  socklen_t len = sizeof(a);
  Sys(getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0, "getsockname");
  return ntohs(a.sin_port);
}

bool Wants(const Options& o, const char* t) {
  return std::find(o.transports.begin(), o.transports.end(), t) != o.transports.end();
}

Fds MakeFds(const Options& o) {
  Fds f{};
  if (Wants(o, "unix")) Sys(socketpair(AF_UNIX, SOCK_STREAM, 0, f.unix_sp) == 0, "socketpair");
  if (Wants(o, "pipe")) Sys(pipe(f.pipe_p2c) == 0 && pipe(f.pipe_c2p) == 0, "pipe");
  if (Wants(o, "udp")) {
    for (int& s : f.udp) {
      s = socket(AF_INET, SOCK_DGRAM, 0);
      Sys(s >= 0, "socket (udp)");
      sockaddr_in a = Loopback(0);
      Sys(bind(s, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0,
          "bind (udp; is lo up? ip link set lo up)");
    }
    for (int i = 0; i < 2; i++) {
      sockaddr_in a = Loopback(BoundPort(f.udp[1 - i]));
      Sys(connect(f.udp[i], reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0, "connect (udp)");
    }
  }
  if (Wants(o, "tcp")) {
    int l = socket(AF_INET, SOCK_STREAM, 0);
    Sys(l >= 0, "socket (tcp)");
    sockaddr_in a = Loopback(0);
    Sys(bind(l, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0, "bind (tcp)");
    Sys(listen(l, 1) == 0, "listen");
    f.tcp[0] = socket(AF_INET, SOCK_STREAM, 0);
    Sys(f.tcp[0] >= 0, "socket (tcp)");
    a = Loopback(BoundPort(l));
    Sys(connect(f.tcp[0], reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0, "connect (tcp)");
    f.tcp[1] = accept(l, nullptr, nullptr);
    Sys(f.tcp[1] >= 0, "accept");
    close(l);
    int one = 1;
    for (int s : f.tcp)
      Sys(setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == 0, "TCP_NODELAY");
  }
  if (Wants(o, "shm")) {
    void* v = mmap(nullptr, 2 * sizeof(ShmRing), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                   -1, 0);
    Sys(v != MAP_FAILED, "mmap (shm)");
    f.shm = static_cast<ShmRing*>(v);
    new (&f.shm[0]) ShmRing;
    new (&f.shm[1]) ShmRing;
  }
  return f;
}

// This side's endpoint of transport T (closing the other side's fds), or
// nullptr for portals, which is set up separately.
std::unique_ptr<Endpoint> MakeEndpoint(const std::string& t, const Fds& f, bool parent) {
  int me = parent ? 0 : 1, other = 1 - me;
  if (t == "unix") {
    close(f.unix_sp[other]);
    return std::make_unique<FdEndpoint>(f.unix_sp[me], f.unix_sp[me], false);
  }
  if (t == "pipe") {
    close(parent ? f.pipe_p2c[0] : f.pipe_p2c[1]);
    close(parent ? f.pipe_c2p[1] : f.pipe_c2p[0]);
    return parent ? std::make_unique<FdEndpoint>(f.pipe_c2p[0], f.pipe_p2c[1], false)
                  : std::make_unique<FdEndpoint>(f.pipe_p2c[0], f.pipe_c2p[1], false);
  }
  if (t == "udp") {
    close(f.udp[other]);
    return std::make_unique<FdEndpoint>(f.udp[me], f.udp[me], true);
  }
  if (t == "tcp") {
    close(f.tcp[other]);
    return std::make_unique<FdEndpoint>(f.tcp[me], f.tcp[me], false);
  }
  if (t == "shm")
    return std::make_unique<ShmEndpoint>(&f.shm[parent ? 0 : 1], &f.shm[parent ? 1 : 0]);
  Die("unknown transport '%s'", t.c_str());
}

// ---------------------------------------------------------------- tests

struct LatResult {
  double min_us = 0, median_us = 0;
};

// Ping-pong of N bytes. The first round (before warm-up) and the last
// (after the timed ones) are untimed and verified at both receivers.
LatResult Latency(const Pair& pr, Endpoint& ep, const std::string& t, size_t n, const Options& o,
                  uint8_t* tx, uint8_t* rx, uint32_t seed) {
  auto verified_round = [&](uint32_t s) {
    if (pr.parent) {
      Fill(tx, n, s);
      ep.Send(n);
      ep.Recv(n);
      Verify(rx, n, s + 1, t.c_str(), "latency reply");
    } else {
      ep.Recv(n);
      Verify(rx, n, s, t.c_str(), "latency message");
      Fill(tx, n, s + 1);
      ep.Send(n);
    }
  };
  pr.Barrier();
  verified_round(seed);
  std::vector<int64_t> half;
  half.reserve(o.iters);
  for (int i = 0; i < o.warmup + o.iters; i++) {
    if (pr.parent) {
      if (i == o.warmup && o.insn_marks) insn_census::Mark();
      int64_t t0 = NowNs();
      ep.Send(n);
      ep.Recv(n);
      int64_t t1 = NowNs();
      if (i >= o.warmup) half.push_back(t1 - t0);
    } else {
      ep.Recv(n);
      ep.Send(n);
    }
  }
  if (pr.parent && o.insn_marks) insn_census::Mark();
  verified_round(seed + 2);
  pr.Barrier();
  LatResult r;
  if (pr.parent) {
    std::sort(half.begin(), half.end());
    r.min_us = half.front() / 2e3;
    size_t m = half.size();
    r.median_us = (m % 2 ? half[m / 2] : (half[m / 2 - 1] + half[m / 2]) / 2) / 2e3;
  }
  return r;
}

int StreamCount(size_t n, const Options& o) {
  return static_cast<int>(std::clamp<size_t>(o.bw_bytes / n, 4, 1000));
}

// COUNT messages of N bytes back to back. One untimed, verified message
// first; the last message of the timed stream is verified after the clock
// stopped (it is what the receive buffer holds).
double Bandwidth(const Pair& pr, Endpoint& ep, const std::string& t, size_t n, const Options& o,
                 uint8_t* tx, uint8_t* rx, uint32_t seed) {
  int count = StreamCount(n, o);
  pr.Barrier();
  if (pr.parent) {
    Fill(tx, n, seed);
    ep.StreamSend(n, 1);
    Fill(tx, n, seed + 1);
  } else {
    ep.StreamRecv(n, 1);
    Verify(rx, n, seed, t.c_str(), "first streamed message");
  }
  pr.Barrier();
  double mbps = 0;
  if (pr.parent) {
    int64_t t0 = NowNs();
    ep.StreamSend(n, count);
    int64_t t1 = NowNs();
    mbps = static_cast<double>(n) * count / static_cast<double>(t1 - t0) * 1e3;
  } else {
    ep.StreamRecv(n, count);
  }
  pr.Barrier();  // the clock has stopped: now verify
  if (!pr.parent) Verify(rx, n, seed + 1, t.c_str(), "last streamed message");
  pr.Barrier();
  return mbps;
}

struct Results {
  // [transport][size]
  std::vector<std::vector<LatResult>> lat;
  std::vector<std::vector<double>> bw;  // < 0: not measured
  std::vector<std::pair<std::string, double>> probe;
};

Results RunAll(const Pair& pr, const Options& o, const Fds& fds) {
  size_t cap = 4096;
  for (size_t s : o.lat_sizes) cap = std::max(cap, s);
  for (size_t s : o.bw_sizes) cap = std::max(cap, s);
  Buffer tx(cap), rx(cap);
  Results res;
  res.lat.assign(o.transports.size(), std::vector<LatResult>(o.lat_sizes.size()));
  res.bw.assign(o.transports.size(), std::vector<double>(o.bw_sizes.size(), -1));
  uint32_t seed = 1;
  for (size_t ti = 0; ti < o.transports.size(); ti++) {
    const std::string& t = o.transports[ti];
    std::unique_ptr<Endpoint> ep;
    if (t.starts_with("portals")) {
      SendMd how = t == "portals-update" ? SendMd::kUpdate
                   : t == "portals-bind" ? SendMd::kBind
                                         : SendMd::kBound;
      auto p = std::make_unique<PortalsEndpoint>(o.window, o.ack, o.posted, o.posted_wildcard, how);
      p->Attach(tx.p, rx.p, cap);
      ptl_process_id_t self = p->Open();
      pr.Tell(self);
      p->Connect(pr.Hear<ptl_process_id_t>());
      if (pr.parent && o.probe_iters && how == SendMd::kBound)
        res.probe = p->Probe(self, o.probe_iters);
      pr.Barrier();
      ep = std::move(p);
    } else {
      ep = MakeEndpoint(t, fds, pr.parent);
      ep->Attach(tx.p, rx.p, cap);
    }
    if (o.latency)
      for (size_t si = 0; si < o.lat_sizes.size(); si++, seed += 4) {
        alarm(kWatchdogSec);
        res.lat[ti][si] = Latency(pr, *ep, t, o.lat_sizes[si], o, tx.p, rx.p, seed);
      }
    if (o.bandwidth && ep->streams())
      for (size_t si = 0; si < o.bw_sizes.size(); si++, seed += 4) {
        alarm(kWatchdogSec);
        res.bw[ti][si] = Bandwidth(pr, *ep, t, o.bw_sizes[si], o, tx.p, rx.p, seed);
      }
    alarm(0);
    ep.reset();  // portals: PtlFini
    pr.Barrier();
  }
  return res;
}

// ---------------------------------------------------------------- output

std::string SizeName(size_t n) {
  if (n >= MiB && n % MiB == 0) return std::to_string(n / MiB) + "M";
  if (n >= KiB && n % KiB == 0) return std::to_string(n / KiB) + "K";
  return std::to_string(n);
}

// One table: a row per size, Portals then "peer (Portals/peer)" per peer.
void Table(const char* title, const Options& o, const std::vector<size_t>& sizes, const char* stat,
           const char* unit, const std::function<double(size_t, size_t)>& value,
           const char* result_kind) {
  std::printf("\n%s\n", title);
  std::printf("%8s %10s", "size", "portals");
  for (size_t ti = 1; ti < o.transports.size(); ti++)
    std::printf(" %10s %7s", o.transports[ti].c_str(), "P/peer");
  std::printf("\n");
  for (size_t si = 0; si < sizes.size(); si++) {
    double p = value(0, si);
    std::printf("%8s %10.2f", SizeName(sizes[si]).c_str(), p);
    for (size_t ti = 1; ti < o.transports.size(); ti++) {
      double v = value(ti, si);
      if (v < 0)
        std::printf(" %10s %7s", "-", "-");
      else
        std::printf(" %10.2f %7.2f", v, v > 0 ? p / v : 0.0);
    }
    std::printf("\n");
  }
  for (size_t si = 0; si < sizes.size(); si++) {
    std::printf("RESULT %s size=%zu", result_kind, sizes[si]);
    if (stat) std::printf(" stat=%s", stat);
    for (size_t ti = 0; ti < o.transports.size(); ti++) {
      double v = value(ti, si);
      if (v >= 0) std::printf(" %s_%s=%.3f", o.transports[ti].c_str(), unit, v);
    }
    std::printf("\n");
  }
}

void Goals(const Options& o, const Results& r);

void Report(const Options& o, const Results& r) {
  if (!r.probe.empty()) {
    std::printf("\nCall costs in one process, no peer (guest ns per call, %d calls each)\n",
                o.probe_iters);
    for (auto& [name, ns] : r.probe) std::printf("  %-56s %9.0f\n", name.c_str(), ns);
    for (auto& [name, ns] : r.probe) {
      std::string key = name;
      for (char& c : key)
        if (c == ' ' || c == ',' || c == '(' || c == ')') c = '_';
      std::printf("RESULT probe name=%s ns=%.1f\n", key.c_str(), ns);
    }
  }
  if (o.latency) {
    char title[256];
    for (const char* stat : {"min", "median"}) {
      bool med = std::strcmp(stat, "median") == 0;
      std::snprintf(title, sizeof(title),
                    "One-way latency, %s of %d round trips / 2 (us; P/peer < 1: Portals faster)",
                    stat, o.iters);
      Table(
          title, o, o.lat_sizes, stat, "us",
          [&](size_t ti, size_t si) {
            return med ? r.lat[ti][si].median_us : r.lat[ti][si].min_us;
          },
          "latency");
    }
  }
  if (o.bandwidth) {
    std::string title =
        "Streaming bandwidth, MB/s (1e6 B/s; P/peer > 1: Portals faster); messages:";
    for (size_t s : o.bw_sizes)
      title.append(" ").append(SizeName(s)).append("x").append(std::to_string(StreamCount(s, o)));
    title.append(", portals window ").append(std::to_string(o.window));
    Table(
        title.c_str(), o, o.bw_sizes, nullptr, "MBps",
        [&](size_t ti, size_t si) { return r.bw[ti][si]; }, "bandwidth");
  }
  Goals(o, r);
}

// Issue 10 part 1, the cost of an MD: printed, never asserted.
void Goals(const Options& o, const Results& r) {
  auto verdict = [](const char* what, double have, double base, double factor, const char* unit) {
    double x = base > 0 ? have / base : 0;
    std::printf("  %-6s %s: %.2f vs %.2f %s (%.2fx, goal %.1fx)\n",
                base > 0 && x <= factor ? "met" : "MISSED", what, have, base, unit, x, factor);
  };
  auto probe = [&](const char* name) {
    for (auto& [n, ns] : r.probe)
      if (n == name) return ns;
    return -1.0;
  };
  std::printf("\nGoals (issue 10, the cost of an MD)\n");
  double ioctl = probe("PtlNIStatus (ioctl)");
  if (ioctl > 0) {
    verdict("PtlMDUpdate of an unchanged 8 B region at most 2x the cheapest ioctl",
            probe("PtlMDUpdate, unchanged 8 B region"), ioctl, 2.0, "ns");
    verdict("PtlMDBind of 8 B of a pinned buffer at most 2x the cheapest ioctl",
            probe("PtlMDBind, 8 B of a pinned buffer"), ioctl, 2.0, "ns");
    verdict("PtlMDBind + PtlMDUnlink (two calls) at most 2x two of the cheapest ioctl",
            probe("PtlMDBind + PtlMDUnlink, 8 B of a pinned buffer"), 2 * ioctl, 2.0, "ns");
  }
  auto index = [&](const char* t) -> long {
    auto it = std::find(o.transports.begin(), o.transports.end(), t);
    return it == o.transports.end() ? -1 : it - o.transports.begin();
  };
  auto size8 = std::find(o.lat_sizes.begin(), o.lat_sizes.end(), size_t{8});
  if (!o.latency || size8 == o.lat_sizes.end()) return;
  size_t si = size8 - o.lat_sizes.begin();
  for (const char* t : {"portals-update", "portals-bind"}) {
    long ti = index(t);
    if (ti < 0) continue;
    for (const char* stat : {"min", "median"}) {
      bool med = std::strcmp(stat, "median") == 0;
      auto v = [&](size_t i) { return med ? r.lat[i][si].median_us : r.lat[i][si].min_us; };
      std::string what = std::string("8 B one-way (") + stat + ") of " + t +
                         " within 1.3x of portals (one bound MD)";
      verdict(what.c_str(), v(ti), v(0), 1.3, "us");
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  SetWho("ptl_perf");
  Options o = Parse(argc, argv);
  for (auto& t : o.transports)
    if (t != "portals" && t != "portals-update" && t != "portals-bind" && t != "unix" &&
        t != "pipe" && t != "udp" && t != "tcp" && t != "shm")
      Die("unknown transport '%s'", t.c_str());
  signal(SIGPIPE, SIG_IGN);
  Fds fds = MakeFds(o);
  int p2c[2], c2p[2];
  Sys(pipe(p2c) == 0 && pipe(c2p) == 0, "pipe");
  std::fflush(stdout);
  pid_t child = fork();
  Sys(child >= 0, "fork");
  if (child == 0) {
    SetWho("pong");
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    close(p2c[1]);
    close(c2p[0]);
    RunAll(Pair{false, p2c[0], c2p[1]}, o, fds);
    return 0;
  }
  SetWho("ping");
  close(p2c[0]);
  close(c2p[1]);
  std::printf(
      "ptl_perf: %zu transports, latency %s (%d timed round trips, %d warm-up), "
      "bandwidth %s, %d %s MEs posted ahead\n",
      o.transports.size(), o.latency ? "on" : "off", o.iters, o.warmup, o.bandwidth ? "on" : "off",
      o.posted, o.posted_wildcard ? "wildcard" : "exact");
  std::fflush(stdout);
  Results r = RunAll(Pair{true, c2p[0], p2c[1]}, o, fds);
  int status = 0;
  Sys(waitpid(child, &status, 0) == child, "waitpid");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) Die("the child process failed");
  Report(o, r);
  std::printf("\nptl_perf: all data verified, no errors\n");
  return 0;
}
