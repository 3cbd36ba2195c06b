// SPDX-License-Identifier: BSD-3-Clause
// ptl_stopped: messages arrive while their receiver is stopped.
//
// The receiver posts a buffer for N messages and an event queue, tells the
// sender its Portals id and stops itself with SIGSTOP. The sender puts N
// messages with ACKs and waits for every ACK: each one means the data is
// already in the stopped receiver's memory, placed there by ptl.ko with no
// help from the receiver (application bypass). Then the sender wakes the
// receiver with SIGCONT, and the receiver finds every message in its
// buffer and every event in its event queue without waiting for anything.
//
//   ptl_stopped [MESSAGES]     (default 1000)
#include <p3nal_linux.h>
#include <portals3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "demo_common.h"

namespace {

constexpr ptl_pt_index_t kPortal = 6;
constexpr ptl_match_bits_t kBits = 0x5709;
constexpr std::size_t kMsg = 64;

using demo::Check;
using demo::g_who;

unsigned char Pattern(int msg, std::size_t i) { return static_cast<unsigned char>(msg * 31 + i); }

// The scheduler state of a process ('T' = stopped) from /proc.
char State(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  std::size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() ? line[paren + 2] : '?';
}

int Receiver(int n, int wr) {
  g_who = "receiver";
  ptl_process_id_t id;
  ptl_handle_eq_t eq;
  ptl_handle_me_t me;
  ptl_handle_md_t md;
  std::vector<unsigned char> buf(n * kMsg);
  ptl_handle_ni_t ni = demo::OpenInterface();
  Check("PtlGetId", PtlGetId(ni, &id));
  Check("PtlEQAlloc", PtlEQAlloc(ni, 2 * n, PTL_EQ_HANDLER_NONE, &eq));
  Check("PtlMEAttach", PtlMEAttach(ni, kPortal, {PTL_NID_ANY, PTL_PID_ANY}, kBits, 0, PTL_RETAIN,
                                   PTL_INS_AFTER, &me));
  Check("PtlMDAttach",
        PtlMDAttach(me, demo::Md(buf.data(), buf.size(), PTL_MD_OP_PUT, eq), PTL_RETAIN, &md));
  std::printf("[receiver] pid %u: buffer for %d messages of %zu bytes posted; stopping myself\n",
              id.pid, n, kMsg);
  if (write(wr, &id, sizeof(id)) != sizeof(id)) return 1;
  raise(SIGSTOP);

  // Woken up: everything must already be here, so only PtlEQGet (no wait).
  std::printf("[receiver] SIGCONT: running again, reading my event queue without waiting\n");
  int starts = 0, ends = 0, in_order = 0, bad_bytes = 0;
  ptl_event_t ev;
  int rc;
  while ((rc = PtlEQGet(eq, &ev)) == PTL_OK) {
    if (ev.type == PTL_EVENT_PUT_START) {
      starts++;
    } else if (ev.type == PTL_EVENT_PUT_END) {
      int msg = static_cast<int>(ev.hdr_data);
      if (msg == ends) in_order++;
      for (std::size_t i = 0; i < kMsg; i++)
        if (buf[ev.offset + i] != Pattern(msg, i)) bad_bytes++;
      ends++;
    }
  }
  bool ok = rc == PTL_EQ_EMPTY && starts == n && ends == n && in_order == n && bad_bytes == 0;
  std::printf("[receiver] %d PUT_START and %d PUT_END events (%d in send order), %d wrong bytes\n",
              starts, ends, in_order, bad_bytes);
  std::printf("[receiver] %s\n", ok ? "all messages and events were there while I was stopped"
                                    : "SOMETHING IS MISSING");
  PtlFini();
  return ok ? 0 : 1;
}

int Sender(int n, pid_t receiver, int rd) {
  g_who = "sender";
  ptl_process_id_t target;
  if (read(rd, &target, sizeof(target)) != sizeof(target)) return 1;
  int status;
  if (waitpid(receiver, &status, WUNTRACED) != receiver || !WIFSTOPPED(status)) return 1;
  std::printf("[sender] receiver (Unix pid %d, Portals pid %u) is stopped: state %c\n", receiver,
              target.pid, State(receiver));

  ptl_handle_eq_t eq;
  ptl_handle_md_t md;
  std::vector<unsigned char> src(n * kMsg);
  for (int m = 0; m < n; m++)
    for (std::size_t i = 0; i < kMsg; i++) src[m * kMsg + i] = Pattern(m, i);
  ptl_handle_ni_t ni = demo::OpenInterface();
  Check("PtlEQAlloc", PtlEQAlloc(ni, 4 * n, PTL_EQ_HANDLER_NONE, &eq));
  Check("PtlMDBind", PtlMDBind(ni, demo::Md(src.data(), src.size(), PTL_MD_EVENT_START_DISABLE, eq),
                               PTL_RETAIN, &md));
  std::printf("[sender] putting %d messages with PtlPutRegion, ACK requested\n", n);
  for (int m = 0; m < n; m++)
    Check("PtlPutRegion",
          PtlPutRegion(md, m * kMsg, kMsg, PTL_ACK_REQ, target, kPortal, 0, kBits, 0, m));
  int acks = 0;
  while (acks < n)
    if (demo::NextEvent(eq).type == PTL_EVENT_ACK) acks++;
  std::printf("[sender] %d ACKs back: every message is in the receiver's memory; state %c\n", acks,
              State(receiver));
  std::printf("[sender] waking the receiver with SIGCONT\n");
  std::fflush(stdout);
  kill(receiver, SIGCONT);
  PtlFini();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 1000;
  if (n < 1) n = 1000;
  int fds[2];
  if (pipe(fds)) return 1;
  setvbuf(stdout, nullptr, _IOLBF, 0);
  std::fflush(stdout);
  pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    demo::EnterPeerNode();
    return Receiver(n, fds[1]);
  }
  int rc = Sender(n, child, fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  bool ok = rc == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  std::printf("ptl_stopped: %s\n", ok ? "application bypass shown" : "FAILED");
  return ok ? 0 : 1;
}
