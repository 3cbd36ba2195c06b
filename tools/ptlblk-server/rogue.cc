// SPDX-License-Identifier: BSD-3-Clause
// ptlblk-rogue: a ptlblk server that lies, for the tests
// (selftests/ptlblk_hostile_test.sh): it answers HELLO as ptlblk-server
// does, then answers every READ or WRITE in the export's second quarter
// in one wrong way, given on the command line. It is honest about the
// rest (READs bring 'R' bytes, WRITEs are fetched and dropped; the
// kernel's partition scan at attach reads the first and last sectors),
// and answers FLUSH and DISCARD with PTLBLK_S_OK. A client must never
// report success for data that did not move.
//
//   read-status-on-reply  READ: PTLBLK_S_OK on the reply portal, no data
//   read-none             READ: no answer at all
//   read-short            READ: half the bytes, PTLBLK_S_OK
//   write-no-get          WRITE: PTLBLK_S_OK without fetching the data
//   write-short-get       WRITE: fetches half the bytes, PTLBLK_S_OK
//
// Usage: ptlblk-rogue MODE [SIZE_MB]   (pid 42, interface 0; SIGTERM stops)
#include <p3nal_linux.h>
#include <portals3.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "protocol.h"

namespace {

enum class Mode { kHonest, kReadStatusOnReply, kReadNone, kReadShort, kWriteNoGet, kWriteShortGet };

volatile sig_atomic_t g_stop = 0;
void OnSignal(int) { g_stop = 1; }

bool ParseMode(std::string_view s, Mode* m) {
  static const std::pair<std::string_view, Mode> modes[] = {
      {"read-status-on-reply", Mode::kReadStatusOnReply},
      {"read-none", Mode::kReadNone},
      {"read-short", Mode::kReadShort},
      {"write-no-get", Mode::kWriteNoGet},
      {"write-short-get", Mode::kWriteShortGet},
  };
  for (const auto& [name, mode] : modes)
    if (s == name) return *m = mode, true;
  return false;
}

bool Ok(const char* what, int rc) {
  if (rc == PTL_OK) return true;
  std::fprintf(stderr, "ptlblk-rogue: %s: %s\n", what, PtlErrorStr(rc));
  return false;
}

class Rogue {
 public:
  Rogue(Mode mode, uint64_t size) : mode_(mode), buf_(1 << 20, 'R'), sink_(1 << 20) {
    e_.size = size;
    hello_ = ptlblk::EncodeHello(e_);
  }
  bool Setup();
  void Serve();

 private:
  void OnRequest(const ptl_event_t& ev);
  void Lie(const ptlblk::Request& r, ptl_process_id_t from);
  void Answer(ptl_process_id_t to, uint32_t cookie, uint64_t status) {
    Ok("answer", PtlPut(empty_md_, PTL_NO_ACK_REQ, to, PTLBLK_PT_REPLY, 0, cookie, 0, status));
  }

  Mode mode_;
  ptlblk::Export e_;
  std::array<uint8_t, sizeof(ptlblk_hello)> hello_{};
  std::vector<char> buf_;   // READs' data
  std::vector<char> sink_;  // WRITEs' data, dropped
  char empty_byte_ = 0;
  ptl_handle_ni_t ni_ = PTL_INVALID_HANDLE;
  ptl_handle_eq_t eq_ = PTL_EQ_NONE;
  ptl_handle_md_t empty_md_ = PTL_INVALID_HANDLE, hello_md_ = PTL_INVALID_HANDLE;
  ptl_handle_md_t buf_md_ = PTL_INVALID_HANDLE, sink_md_ = PTL_INVALID_HANDLE;
};

bool Rogue::Setup() {
  int max_ifaces = 0;
  ptl_ni_limits_t limits{};
  if (!Ok("PtlInit", PtlInit(&max_ifaces)) ||
      !Ok("PtlNIInit", PtlNIInit(PTL_IFACE_LINUX0, PTLBLK_SERVER_PID, nullptr, &limits, &ni_)) ||
      !Ok("PtlEQAlloc", PtlEQAlloc(ni_, 1024, PTL_EQ_HANDLER_NONE, &eq_)))
    return false;
  ptl_process_id_t any{PTL_NID_ANY, PTL_PID_ANY};
  ptl_handle_me_t me;
  ptl_handle_md_t req_md;
  ptl_md_t md{};
  md.start = &empty_byte_;
  md.threshold = PTL_MD_THRESH_INF;
  md.options = PTL_MD_OP_PUT | PTL_MD_EVENT_START_DISABLE;
  md.eq_handle = eq_;
  if (!Ok("PtlMEAttach",
          PtlMEAttach(ni_, PTLBLK_PT_REQUEST, any, 0, ~0ULL, PTL_RETAIN, PTL_INS_AFTER, &me)) ||
      !Ok("PtlMDAttach", PtlMDAttach(me, md, PTL_RETAIN, &req_md)))
    return false;
  md.options = 0;
  md.eq_handle = PTL_EQ_NONE;
  if (!Ok("PtlMDBind", PtlMDBind(ni_, md, PTL_RETAIN, &empty_md_))) return false;
  md.start = hello_.data();
  md.length = hello_.size();
  if (!Ok("PtlMDBind", PtlMDBind(ni_, md, PTL_RETAIN, &hello_md_))) return false;
  md.start = buf_.data();
  md.length = buf_.size();
  if (!Ok("PtlMDBind", PtlMDBind(ni_, md, PTL_RETAIN, &buf_md_))) return false;
  md.start = sink_.data();
  md.length = sink_.size();
  return Ok("PtlMDBind", PtlMDBind(ni_, md, PTL_RETAIN, &sink_md_));
}

void Rogue::Lie(const ptlblk::Request& r, ptl_process_id_t from) {
  uint64_t half = std::min<uint64_t>(r.bytes() / 2, buf_.size());
  bool lie = r.offset >= e_.size / 4 && r.offset < e_.size / 2;
  switch (lie ? mode_ : Mode::kHonest) {
    case Mode::kHonest:
      break;
    case Mode::kReadStatusOnReply:
      if (r.op == PTLBLK_OP_READ) return Answer(from, r.cookie, PTLBLK_S_OK);
      break;
    case Mode::kReadNone:
      if (r.op == PTLBLK_OP_READ) return;
      break;
    case Mode::kReadShort:
      if (r.op == PTLBLK_OP_READ) {
        Ok("PtlPutRegion", PtlPutRegion(buf_md_, 0, half, PTL_NO_ACK_REQ, from, PTLBLK_PT_BULK, 0,
                                        r.cookie, 0, PTLBLK_S_OK));
        return;
      }
      break;
    case Mode::kWriteNoGet:
      if (r.op == PTLBLK_OP_WRITE) return Answer(from, r.cookie, PTLBLK_S_OK);
      break;
    case Mode::kWriteShortGet:
      if (r.op == PTLBLK_OP_WRITE) {
        Ok("PtlGetRegion", PtlGetRegion(sink_md_, 0, half, from, PTLBLK_PT_BULK, 0, r.cookie, 0));
        return Answer(from, r.cookie, PTLBLK_S_OK);
      }
      break;
  }
  // Honest about the rest: data of 'R' bytes, fetched writes.
  if (r.op == PTLBLK_OP_READ && r.bytes() <= buf_.size()) {
    Ok("PtlPutRegion", PtlPutRegion(buf_md_, 0, r.bytes(), PTL_NO_ACK_REQ, from, PTLBLK_PT_BULK, 0,
                                    r.cookie, 0, PTLBLK_S_OK));
  } else if (r.op == PTLBLK_OP_WRITE && r.bytes() <= buf_.size()) {
    Ok("PtlGetRegion", PtlGetRegion(sink_md_, 0, r.bytes(), from, PTLBLK_PT_BULK, 0, r.cookie, 0));
    Answer(from, r.cookie, PTLBLK_S_OK);
  } else {
    Answer(from, r.cookie, r.has_bulk() ? PTLBLK_S_INVAL : PTLBLK_S_OK);
  }
}

void Rogue::OnRequest(const ptl_event_t& ev) {
  ptlblk::Request r = ptlblk::Decode(ev.match_bits, ev.hdr_data);
  std::printf("ptlblk-rogue: %s offset %llu, %llu bytes\n", ptlblk::OpName(r.op).c_str(),
              static_cast<unsigned long long>(r.offset),
              static_cast<unsigned long long>(r.bytes()));
  if (r.op == PTLBLK_OP_HELLO) {
    Ok("HELLO", PtlPut(hello_md_, PTL_NO_ACK_REQ, ev.initiator, PTLBLK_PT_BULK, 0, r.cookie, 0,
                       PTLBLK_S_OK));
    return;
  }
  Lie(r, ev.initiator);
}

void Rogue::Serve() {
  while (!g_stop) {
    ptl_event_t ev;
    int which = 0;
    int rc = PtlEQPoll(&eq_, 1, 200, &ev, &which);
    if (rc == PTL_EQ_EMPTY) continue;
    if (rc != PTL_OK && rc != PTL_EQ_DROPPED) break;
    if (ev.type == PTL_EVENT_PUT_END && ev.ni_fail_type == PTL_NI_OK) OnRequest(ev);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Mode mode;
  if (argc < 2 || argc > 3 || !ParseMode(argv[1], &mode)) {
    std::fputs(
        "Usage: ptlblk-rogue MODE [SIZE_MB]\n"
        "MODE: read-status-on-reply read-none read-short write-no-get write-short-get\n",
        stderr);
    return 2;
  }
  uint64_t size_mb = argc == 3 ? std::strtoull(argv[2], nullptr, 0) : 16;
  signal(SIGTERM, OnSignal);
  signal(SIGINT, OnSignal);
  setvbuf(stdout, nullptr, _IOLBF, 0);
  Rogue rogue(mode, size_mb << 20);
  if (!rogue.Setup()) return 1;
  rogue.Serve();
  return 0;
}
