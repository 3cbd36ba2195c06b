// SPDX-License-Identifier: BSD-3-Clause
// ptl_pingpong: two processes on one node exchange Portals messages.
//
// The program forks into "ping" and "pong". Each opens its own Portals
// interface (its own PtlInit), posts a receive buffer on portal 5 and binds
// a send buffer. A pipe carries only the two Portals process ids; every
// message after that is a Portals put through ptl.ko. Each side prints the
// puts it makes, the events it sees (SEND_END, ACK, PUT_END) and whether
// the bytes that arrived are the bytes that were sent. At the end ping
// reads pong's buffer back with a PtlGet.
//
//   ptl_pingpong [ROUNDS]     (default 5)
#include <p3nal_linux.h>
#include <portals3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "demo_common.h"

namespace {

constexpr ptl_pt_index_t kPortal = 5;
constexpr ptl_match_bits_t kBits = 0x9191;
constexpr std::size_t kMsg = 64;

using demo::Check;
using demo::g_who;
using demo::NextEvent;

// One side of the exchange: an interface, a receive buffer on the portal
// and a bound send buffer, both reporting to one event queue.
class Side {
 public:
  explicit Side(const char* name) {
    g_who = name;
    ni_ = demo::OpenInterface();
    Check("PtlGetId", PtlGetId(ni_, &id_));
    Check("PtlEQAlloc", PtlEQAlloc(ni_, 64, PTL_EQ_HANDLER_NONE, &eq_));
    ptl_handle_me_t me;
    Check("PtlMEAttach", PtlMEAttach(ni_, kPortal, {PTL_NID_ANY, PTL_PID_ANY}, kBits, 0, PTL_RETAIN,
                                     PTL_INS_AFTER, &me));
    ptl_md_t rx =
        demo::Md(rx_.data(), rx_.size(), PTL_MD_OP_PUT | PTL_MD_OP_GET | PTL_MD_MANAGE_REMOTE, eq_);
    Check("PtlMDAttach", PtlMDAttach(me, rx, PTL_RETAIN, &rx_md_));
    ptl_md_t tx = demo::Md(tx_.data(), tx_.size(), PTL_MD_EVENT_START_DISABLE, eq_);
    Check("PtlMDBind", PtlMDBind(ni_, tx, PTL_RETAIN, &tx_md_));
    std::printf("[%s] nid %u pid %u: receive buffer on portal %u, match bits %#llx\n", g_who,
                id_.nid, id_.pid, kPortal, static_cast<unsigned long long>(kBits));
  }

  ~Side() { PtlFini(); }

  ptl_process_id_t id() const { return id_; }

  // Puts "text" to the peer and waits for the local SEND_END and the ACK.
  void Send(ptl_process_id_t peer, const std::string& text) {
    tx_.fill(0);
    std::memcpy(tx_.data(), text.data(), std::min(text.size(), kMsg - 1));
    std::printf("[%s] PtlPut \"%s\" -> %u:%u (ACK requested)\n", g_who, text.c_str(), peer.nid,
                peer.pid);
    Check("PtlPut", PtlPut(tx_md_, PTL_ACK_REQ, peer, kPortal, 0, kBits, 0, text.size()));
    bool sent = false, acked = false;
    while (!sent || !acked) {
      ptl_event_t ev = NextEvent(eq_);
      if (ev.type == PTL_EVENT_SEND_END) {
        sent = true;
        std::printf("[%s]   event SEND_END: %llu bytes left the send buffer\n", g_who,
                    static_cast<unsigned long long>(ev.mlength));
      } else if (ev.type == PTL_EVENT_ACK) {
        acked = true;
        std::printf("[%s]   event ACK from %u:%u: %llu bytes accepted\n", g_who, ev.initiator.nid,
                    ev.initiator.pid, static_cast<unsigned long long>(ev.mlength));
      } else {
        Unexpected(ev);
      }
    }
  }

  // Waits for a put from the peer and checks it holds "expect".
  bool Receive(const std::string& expect) {
    ptl_event_t start = NextEvent(eq_);
    if (start.type != PTL_EVENT_PUT_START) Unexpected(start);
    ptl_event_t end = NextEvent(eq_);
    if (end.type != PTL_EVENT_PUT_END) Unexpected(end);
    const char* got = reinterpret_cast<const char*>(rx_.data());
    bool ok = std::strncmp(got, expect.c_str(), kMsg) == 0 && end.hdr_data == expect.size();
    std::printf("[%s]   event PUT_END from %u:%u: %llu bytes \"%s\" -> %s\n", g_who,
                end.initiator.nid, end.initiator.pid, static_cast<unsigned long long>(end.mlength),
                got, ok ? "bytes verified" : "WRONG BYTES");
    return ok;
  }

  // Reads the peer's receive buffer with a get into the send buffer.
  bool GetBack(ptl_process_id_t peer, const std::string& expect) {
    tx_.fill(0);
    std::printf("[%s] PtlGet %zu bytes from %u:%u\n", g_who, kMsg, peer.nid, peer.pid);
    Check("PtlGet", PtlGet(tx_md_, peer, kPortal, 0, kBits, 0));
    ptl_event_t ev = NextEvent(eq_);
    if (ev.type != PTL_EVENT_REPLY_END) Unexpected(ev);
    const char* got = reinterpret_cast<const char*>(tx_.data());
    bool ok = std::strncmp(got, expect.c_str(), kMsg) == 0;
    std::printf("[%s]   event REPLY_END from %u:%u: %llu bytes \"%s\" -> %s\n", g_who,
                ev.initiator.nid, ev.initiator.pid, static_cast<unsigned long long>(ev.mlength),
                got, ok ? "bytes verified" : "WRONG BYTES");
    return ok;
  }

  // Events the peer's get caused here (GET_START, GET_END).
  void Served() {
    ptl_event_t ev = NextEvent(eq_);
    if (ev.type == PTL_EVENT_GET_START) ev = NextEvent(eq_);
    if (ev.type != PTL_EVENT_GET_END) Unexpected(ev);
    std::printf("[%s]   event GET_END: %u:%u read %llu bytes of my buffer\n", g_who,
                ev.initiator.nid, ev.initiator.pid, static_cast<unsigned long long>(ev.mlength));
  }

 private:
  [[noreturn]] void Unexpected(const ptl_event_t& ev) {
    ptl::tool::Die("[%s] unexpected event %s", g_who, PtlEventKindStr(ev.type));
  }

  ptl_handle_ni_t ni_;
  ptl_process_id_t id_;
  ptl_handle_eq_t eq_;
  ptl_handle_md_t rx_md_, tx_md_;
  std::array<unsigned char, kMsg> rx_{};
  std::array<unsigned char, kMsg> tx_{};
};

// Writes or reads one ptl_process_id_t over a pipe (the bootstrap).
void SendId(int fd, ptl_process_id_t id) {
  if (write(fd, &id, sizeof(id)) != sizeof(id)) std::exit(1);
}
ptl_process_id_t RecvId(int fd) {
  ptl_process_id_t id;
  if (read(fd, &id, sizeof(id)) != sizeof(id)) std::exit(1);
  return id;
}

std::string Text(const char* word, int round) {
  return std::string(word) + " #" + std::to_string(round);
}

int Pong(int rounds, int rd, int wr) {
  Side pong("pong");
  SendId(wr, pong.id());
  ptl_process_id_t ping = RecvId(rd);
  bool ok = true;
  for (int i = 1; i <= rounds; i++) {
    ok &= pong.Receive(Text("ping", i));
    pong.Send(ping, Text("pong", i));
  }
  pong.Served();
  return ok ? 0 : 1;
}

int Ping(int rounds, int rd, int wr) {
  Side ping("ping");
  ptl_process_id_t pong = RecvId(rd);
  SendId(wr, ping.id());
  bool ok = true;
  for (int i = 1; i <= rounds; i++) {
    ping.Send(pong, Text("ping", i));
    ok &= ping.Receive(Text("pong", i));
  }
  ok &= ping.GetBack(pong, Text("ping", rounds));
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
  if (rounds < 1) rounds = 5;
  int to_ping[2], to_pong[2];
  if (pipe(to_ping) || pipe(to_pong)) return 1;
  std::fflush(stdout);
  pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    setvbuf(stdout, nullptr, _IOLBF, 0);
    demo::EnterPeerNode();
    return Pong(rounds, to_pong[0], to_ping[1]);
  }
  setvbuf(stdout, nullptr, _IOLBF, 0);
  int rc = Ping(rounds, to_ping[0], to_pong[1]);
  int status = 0;
  waitpid(child, &status, 0);
  bool ok = rc == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  std::printf("ptl_pingpong: %d round trips between two processes%s: %s\n", rounds,
              std::getenv("PTL_PEER_NETNS") ? " on two nodes" : "",
              ok ? "every message and event verified" : "FAILED");
  return ok ? 0 : 1;
}
