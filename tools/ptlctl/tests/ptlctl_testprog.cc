// SPDX-License-Identifier: BSD-3-Clause
// ptlctl_testprog: the Portals program selftests/ptlctl_test.sh runs
// beside ptlctl, so that there is something to show.
//
//   ptlctl_testprog hold [--iface N] [--pid P] [--seconds S] [--exit]
//       PtlNIInit on interface N (default 0) with pid P (default any),
//       attach a buffer on portal 4 that accepts any put, print
//       "ready nid NID pid PID" and hold the NI for S seconds (default:
//       until SIGTERM or SIGINT); --exit closes at once. Exit 3 if
//       PtlNIInit fails (the Portals code is printed on stderr).
//   ptlctl_testprog put NID PID [--iface N] [--timeout S]
//       put 64 bytes to NID/PID portal 4 with an ACK and wait up to S
//       seconds (default 10) for SEND_END and the ACK. Exit 0 if both
//       came without failure.
#include <p3nal_linux.h>
#include <portals3.h>
#include <unistd.h>

#include <array>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "parse.h"

namespace {

constexpr ptl_pt_index_t kPortal = 4;

[[noreturn]] void Usage() {
  std::fprintf(stderr,
               "usage: ptlctl_testprog hold [--iface N] [--pid P] [--seconds S] [--exit]\n"
               "       ptlctl_testprog put NID PID [--iface N] [--timeout S]\n");
  std::exit(2);
}

void Check(const char* what, int rc, int status = 1) {
  if (rc == PTL_OK) return;
  std::fprintf(stderr, "ptlctl_testprog: %s: %s\n", what, PtlErrorStr(rc));
  std::exit(status);
}

uint32_t Number(const char* text) {
  auto v = ptlctl::ParseU32(text ? text : "");
  if (!v) Usage();
  return *v;
}

struct Args {
  uint32_t iface = 0;
  std::optional<uint32_t> pid;
  uint32_t seconds = 0;
  uint32_t timeout = 10;
  bool exit_now = false;
};

Args Parse(int argc, char** argv, int first) {
  Args a;
  for (int i = first; i < argc; ++i) {
    std::string opt = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    if (opt == "--exit") {
      a.exit_now = true;
      continue;
    }
    if (opt == "--iface")
      a.iface = Number(value);
    else if (opt == "--pid")
      a.pid = Number(value);
    else if (opt == "--seconds")
      a.seconds = Number(value);
    else if (opt == "--timeout")
      a.timeout = Number(value);
    else
      Usage();
    ++i;
  }
  return a;
}

ptl_handle_ni_t Open(const Args& a, ptl_pid_t pid) {
  int max;
  ptl_handle_ni_t ni;
  Check("PtlInit", PtlInit(&max));
  Check("PtlNIInit", PtlNIInit(PTL_IFACE_LINUX0 + a.iface, pid, nullptr, nullptr, &ni), 3);
  return ni;
}

ptl_md_t Md(void* start, std::size_t length, unsigned options, ptl_handle_eq_t eq) {
  ptl_md_t md{};
  md.start = start;
  md.length = length;
  md.threshold = PTL_MD_THRESH_INF;
  md.options = options;
  md.eq_handle = eq;
  return md;
}

int Hold(const Args& a) {
  static std::array<unsigned char, 4096> buf;
  ptl_handle_ni_t ni = Open(a, a.pid ? *a.pid : PTL_PID_ANY);
  ptl_process_id_t id;
  ptl_handle_me_t me;
  ptl_handle_md_t md;
  Check("PtlGetId", PtlGetId(ni, &id));
  Check("PtlMEAttach", PtlMEAttach(ni, kPortal, {PTL_NID_ANY, PTL_PID_ANY}, 0, ~0ULL, PTL_RETAIN,
                                   PTL_INS_AFTER, &me));
  Check("PtlMDAttach",
        PtlMDAttach(me, Md(buf.data(), buf.size(), PTL_MD_OP_PUT, PTL_EQ_NONE), PTL_RETAIN, &md));
  std::printf("ready nid %u pid %u\n", id.nid, id.pid);
  std::fflush(stdout);
  if (!a.exit_now) {
    if (a.seconds) {
      for (uint32_t s = a.seconds; s > 0;) s = sleep(s);
    } else {
      // The default actions of SIGTERM and SIGINT end the process; the
      // kernel then closes the NI like any exiting process's.
      for (;;) pause();
    }
  }
  Check("PtlNIFini", PtlNIFini(ni));
  PtlFini();
  return 0;
}

int Put(const Args& a, ptl_process_id_t target) {
  static std::array<unsigned char, 64> buf;
  std::memset(buf.data(), 0x5a, buf.size());
  ptl_handle_ni_t ni = Open(a, PTL_PID_ANY);
  ptl_handle_eq_t eq;
  ptl_handle_md_t md;
  Check("PtlEQAlloc", PtlEQAlloc(ni, 16, PTL_EQ_HANDLER_NONE, &eq));
  Check("PtlMDBind", PtlMDBind(ni, Md(buf.data(), buf.size(), 0, eq), PTL_RETAIN, &md));
  Check("PtlPut", PtlPut(md, PTL_ACK_REQ, target, kPortal, 0, 0, 0, 0));
  bool sent = false, acked = false;
  while (!sent || !acked) {
    ptl_event_t ev;
    int which;
    int rc = PtlEQPoll(&eq, 1, a.timeout * 1000, &ev, &which);
    if (rc == PTL_EQ_EMPTY) {
      std::fprintf(stderr, "ptlctl_testprog: no %s within %u s\n", sent ? "ACK" : "SEND_END",
                   a.timeout);
      return 1;
    }
    Check("PtlEQPoll", rc);
    std::printf("event %s (%s)\n", PtlEventKindStr(ev.type), PtlNIFailStr(ni, ev.ni_fail_type));
    if (ev.ni_fail_type != PTL_NI_OK) return 1;
    if (ev.type == PTL_EVENT_SEND_END) sent = true;
    if (ev.type == PTL_EVENT_ACK) acked = true;
  }
  PtlNIFini(ni);
  PtlFini();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) Usage();
  std::string cmd = argv[1];
  if (cmd == "hold") return Hold(Parse(argc, argv, 2));
  if (cmd == "put" && argc >= 4) {
    auto nid = ptlctl::ParseNid(argv[2]);
    if (!nid) Usage();
    ptl_process_id_t target{*nid, Number(argv[3])};
    return Put(Parse(argc, argv, 4), target);
  }
  Usage();
}
