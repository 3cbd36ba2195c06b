// SPDX-License-Identifier: BSD-3-Clause
// ptl_bypass: application bypass across the wire (seed 000, figure 6).
//
// A receiver pre-posts ten 50 KB receives, tells the sender to go, and
// computes for an interval without calling the library; when it stops it
// counts what has already arrived (PtlEQGet reads the mapped event ring,
// no system call) and then waits for the rest. With the Portals library in
// the kernel, data lands and events are written while the receiver
// computes, so once the interval covers the transfer nothing is left to
// wait for. The sender runs on the other node: the network namespace
// PTL_PEER_NETNS (as make bench and make demo set it up); without it, on
// this node. With two or more CPUs the receiver runs on CPU 0 and the
// sender on CPU 1, as on two nodes: the frames' receive processing then
// happens on the sender's CPU (veth hands them over there), and the
// receiver's CPU only computes. On one CPU the sender cannot run while the
// receiver computes, and the curve shows the scheduler, not the library.
//
//   ptl_bypass [--intervals=US,US,...] [--tsv=FILE]
//
// Prints, per compute interval, the share of the data (and of the ten
// PUT_END events) present when the computation stopped and the wait that
// remained after it, in the clock of the machine (virtual time under
// QEMU's -icount).
#include <fcntl.h>
#include <p3nal_linux.h>
#include <portals3.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "ptl_tool/die.h"

namespace {

constexpr int kMessages = 10;
constexpr size_t kMsgBytes = 50 * 1000;
constexpr ptl_pt_index_t kPortal = 7;
constexpr ptl_match_bits_t kBits = 0xb1a5;
constexpr int kTimeoutMs = 20000;

// "ptl_bypass: WHAT: WHY" (main sets the prefix), exit status 1.
[[noreturn]] void Die(const char* what, const char* why) { ptl::tool::Die("%s: %s", what, why); }

void Ptl(const char* what, int rc) {
  if (rc != PTL_OK) Die(what, PtlErrorStr(rc));
}

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

void WriteAll(int fd, const void* p, size_t n) {
  if (write(fd, p, n) != static_cast<ssize_t>(n)) Die("pipe", std::strerror(errno));
}
void ReadAll(int fd, void* p, size_t n) {
  if (read(fd, p, n) != static_cast<ssize_t>(n)) Die("pipe", "closed");
}

ptl_md_t Md(void* start, size_t len, unsigned options, ptl_handle_eq_t eq) {
  ptl_md_t md{};
  md.start = start;
  md.length = len;
  md.threshold = PTL_MD_THRESH_INF;
  md.options = options;
  md.eq_handle = eq;
  return md;
}

struct Portals {
  ptl_handle_ni_t ni{};
  ptl_handle_eq_t eq{};
  ptl_process_id_t id{};
  Portals() {
    int max;
    Ptl("PtlInit", PtlInit(&max));
    Ptl("PtlNIInit", PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, nullptr, nullptr, &ni));
    Ptl("PtlGetId", PtlGetId(ni, &id));
    Ptl("PtlEQAlloc", PtlEQAlloc(ni, 256, PTL_EQ_HANDLER_NONE, &eq));
  }
  ~Portals() { PtlFini(); }
  ptl_event_t Next() {
    ptl_event_t ev;
    int which;
    Ptl("PtlEQPoll", PtlEQPoll(&eq, 1, kTimeoutMs, &ev, &which));
    if (ev.ni_fail_type != PTL_NI_OK) Die("event", "a transfer failed");
    return ev;
  }
};

// The sender: for each round, ten puts as soon as the receiver says go.
int Sender(int rounds, int rd, int wr) {
  Portals p;
  std::vector<char> src(kMessages * kMsgBytes, 's');
  ptl_handle_md_t md;
  Ptl("PtlMDBind", PtlMDBind(p.ni, Md(src.data(), src.size(), PTL_MD_EVENT_START_DISABLE, p.eq),
                             PTL_RETAIN, &md));
  WriteAll(wr, &p.id, sizeof(p.id));
  ptl_process_id_t target;
  ReadAll(rd, &target, sizeof(target));
  for (int r = 0; r < rounds; r++) {
    char go;
    ReadAll(rd, &go, 1);
    for (int m = 0; m < kMessages; m++)
      Ptl("PtlPutRegion", PtlPutRegion(md, m * kMsgBytes, kMsgBytes, PTL_NO_ACK_REQ, target,
                                       kPortal, 0, kBits, m * kMsgBytes, 0));
    for (int done = 0; done < kMessages;)
      if (p.Next().type == PTL_EVENT_SEND_END) done++;
  }
  return 0;
}

struct Point {
  int64_t interval_us;
  int events_at_stop;
  double delivered_pct;  // of the bytes, from the PUT_ENDs present at stop
  double remaining_us;
};

// Busy work that calls nothing (the point of the experiment).
void Compute(int64_t ns) {
  int64_t end = NowNs() + ns;
  volatile uint64_t x = 1;
  while (NowNs() < end)
    for (int i = 0; i < 100; i++) x = x * 6364136223846793005ULL + 1;
}

std::vector<Point> Receiver(const std::vector<int64_t>& intervals, int rd, int wr) {
  Portals p;
  std::vector<char> dst(kMessages * kMsgBytes);
  ptl_handle_me_t me;
  ptl_handle_md_t md;
  Ptl("PtlMEAttach", PtlMEAttach(p.ni, kPortal, {PTL_NID_ANY, PTL_PID_ANY}, kBits, 0, PTL_RETAIN,
                                 PTL_INS_AFTER, &me));
  Ptl("PtlMDAttach",
      PtlMDAttach(me,
                  Md(dst.data(), dst.size(),
                     PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE | PTL_MD_EVENT_START_DISABLE, p.eq),
                  PTL_RETAIN, &md));
  ptl_process_id_t sender;
  ReadAll(rd, &sender, sizeof(sender));
  WriteAll(wr, &p.id, sizeof(p.id));
  std::vector<Point> out;
  for (int64_t us : intervals) {
    WriteAll(wr, "g", 1);  // the sender starts its ten puts
    Compute(us * 1000);
    int64_t stop = NowNs();
    int events = 0;
    ptl_event_t ev;
    while (PtlEQGet(p.eq, &ev) == PTL_OK)
      if (ev.type == PTL_EVENT_PUT_END) events++;
    int at_stop = events;
    while (events < kMessages)
      if (p.Next().type == PTL_EVENT_PUT_END) events++;
    out.push_back(
        {us, at_stop, 100.0 * at_stop / kMessages, static_cast<double>(NowNs() - stop) / 1e3});
  }
  return out;
}

// Pins the calling process to CPU @cpu when the machine has more than one.
void PinTo(int cpu) {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof(set), &set) != 0) Die("sched_setaffinity", std::strerror(errno));
}

void EnterPeerNode() {
  const char* path = std::getenv("PTL_PEER_NETNS");
  if (!path || !*path) return;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) Die(path, std::strerror(errno));
  close(fd);
}

std::vector<int64_t> ParseIntervals(const char* s) {
  std::vector<int64_t> v;
  while (*s) {
    char* end;
    v.push_back(std::strtoll(s, &end, 10));
    s = *end == ',' ? end + 1 : end;
    if (end == s && *s) Die("--intervals", "a list of microseconds: 0,100,500");
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> intervals{0, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000};
  const char* tsv = nullptr;
  ptl::tool::SetMessagePrefix("ptl_bypass: ");
  for (int i = 1; i < argc; i++) {
    if (!std::strncmp(argv[i], "--intervals=", 12))
      intervals = ParseIntervals(argv[i] + 12);
    else if (!std::strncmp(argv[i], "--tsv=", 6))
      tsv = argv[i] + 6;
    else
      Die(argv[i], "usage: ptl_bypass [--intervals=US,US,...] [--tsv=FILE]");
  }
  int to_sender[2], to_receiver[2];
  if (pipe(to_sender) || pipe(to_receiver)) Die("pipe", std::strerror(errno));
  std::fflush(stdout);
  pid_t child = fork();
  if (child < 0) Die("fork", std::strerror(errno));
  if (child == 0) {
    EnterPeerNode();
    PinTo(1);
    return Sender(static_cast<int>(intervals.size()), to_sender[0], to_receiver[1]);
  }
  PinTo(0);
  std::vector<Point> pts = Receiver(intervals, to_receiver[0], to_sender[1]);
  int status = 0;
  waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status)) Die("sender", "failed");

  std::printf(
      "Application bypass: ten %zu-byte puts to a receiver that computes without calling "
      "the library%s, %ld CPUs\n",
      kMsgBytes, std::getenv("PTL_PEER_NETNS") ? " (sender on the other node)" : "",
      sysconf(_SC_NPROCESSORS_ONLN));
  std::printf("%12s %16s %12s %16s\n", "compute us", "events at stop", "delivered", "remaining us");
  for (const Point& p : pts)
    std::printf("%12" PRId64 " %13d/%d %11.0f%% %16.1f\n", p.interval_us, p.events_at_stop,
                kMessages, p.delivered_pct, p.remaining_us);
  if (tsv) {
    FILE* f = std::fopen(tsv, "a");
    if (!f) Die(tsv, std::strerror(errno));
    for (const Point& p : pts)
      std::fprintf(f, "portals\tbypass\t%" PRId64 "\t0\t%.1f\t%.1f\tus|%%\n", p.interval_us,
                   p.remaining_us, p.delivered_pct);
    std::fclose(f);
  }
  return 0;
}
