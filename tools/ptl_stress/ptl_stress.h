// SPDX-License-Identifier: BSD-3-Clause
// ptl_stress: options, the helpers the roles share (errors, time, pinned
// buffers, control-message mailboxes and senders), and the roles' entry
// points. See Documentation/ptl_stress.md.
#pragma once

#include <p3nal_linux.h>
#include <portals3.h>

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ptl_tool/die.h"
#include "stress_core.h"

namespace ptl_stress {

// Exit statuses.
constexpr int kExitPass = 0;    // every check passed
constexpr int kExitErrors = 1;  // errors found, a hang, a vanished peer
constexpr int kExitUsage = 2;   // bad options, or the run could not start

struct Mix {  // relative weights of the operations a client issues
  uint32_t put = 50, ack = 25, get = 20, getput = 5;
  uint32_t Total() const { return put + ack + get + getput; }
};

// Faults a client injects into its own put stream, to prove the server
// catches them (each names a put sequence number): dup sends it twice,
// reorder after the next one, drop not at all, corrupt alters a byte after
// the checksum was taken, stray sends it with another client's label so
// that nothing matches it and Portals drops it (PTL_SR_DROP_COUNT).
struct Inject {
  std::optional<uint64_t> dup, reorder, drop, corrupt, stray;
  bool Any() const { return dup || reorder || drop || corrupt || stray; }
};

struct Options {
  std::string role;
  // common
  uint64_t seed = 1;
  int timeout_ms = 20000;
  bool quiet = false;
  bool json = false;
  uint64_t min_size = 0, max_size = uint64_t{1} << 20;
  std::vector<uint64_t> sizes;
  uint32_t window = 16;
  uint64_t count = 0;   // ops per client (0: --seconds decides; neither: 1000)
  double seconds = 0;   // time bound per client
  double progress = 0;  // seconds between progress lines (0: none)
  uint32_t iface = 0;   // PtlNIInit on PTL_IFACE_LINUX0 + iface
  Mix mix;
  uint64_t ring = 0;  // receive ring bytes per client (0: automatic)
  // server
  uint32_t pid = 77;
  uint32_t clients = 1;
  uint64_t get_bytes = 0;  // 0: max(--max-size, 64 KiB)
  uint32_t max_window = 64;
  uint64_t max_ring = uint64_t{256} << 20;
  // client
  ptl_process_id_t server{0, 0};
  bool server_given = false;
  uint32_t id = 0;
  Inject inject;
  // selftest
  uint32_t servers = 1;
  // internal (selftest children)
  int ready_fd = -1;   // server: "nid pid\n" once set up
  int report_fd = -1;  // Summary + JSON at the end
  std::string who;

  uint64_t RingBytes() const;  // ring, or the automatic size
  uint64_t GetBytes() const;
};

// What a role hands its selftest parent besides the JSON report.
struct Summary {
  uint32_t role;  // 0 server, 1 client
  uint32_t pass;
  double elapsed;
  Traffic traffic;
  Errors errors;
};

int RunServer(const Options& o);
int RunClient(const Options& o);
int RunSelftest(const Options& o);

// ------------------------------------------------------------ helpers

// Names this process in its messages ("server 7:77", "client 3"): each
// line on stderr starts "ptl_stress [WHO]: ".
void SetWho(const std::string& who);

// Fatal errors are tools/lib's; ptl_stress exits kExitUsage with them (the
// run could not start or go on).
using ptl::tool::DieWith;
// An error found while running: always printed (stderr), at most a few
// dozen per process so a broken transport cannot flood the log.
void Complain(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void Note(bool quiet, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void Ptl(const char* what, int rc);  // Die unless PTL_OK

int64_t NowNs();
std::string Bytes(uint64_t n);  // "1.5 MiB"
std::string IdStr(ptl_process_id_t id);
const char* EventName(ptl_event_kind_t k);
std::string EventStr(const ptl_event_t& ev);
bool SameId(ptl_process_id_t a, ptl_process_id_t b);

// Page-aligned anonymous memory, zeroed; an MD may pin it.
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(std::size_t size);
  ~Buffer();
  Buffer(Buffer&& o) noexcept;
  Buffer& operator=(Buffer&& o) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  uint8_t* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool ok() const { return data_ != nullptr || size_ == 0; }

 private:
  uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t mapped_ = 0;
};

// user_ptr of an MD: which object of the role it belongs to, and an index.
inline void* Tag2Ptr(uint32_t kind, uint32_t index) {
  return reinterpret_cast<void*>(static_cast<uintptr_t>(kind) << 32 | index);
}
inline uint32_t PtrKind(const ptl_event_t& ev) {
  return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(ev.md.user_ptr) >> 32);
}
inline uint32_t PtrIndex(const ptl_event_t& ev) {
  return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(ev.md.user_ptr));
}

ptl_md_t MakeMd(void* start, uint64_t length, unsigned options, ptl_handle_eq_t eq, void* user,
                int threshold = PTL_MD_THRESH_INF);

// Receives control messages: two MDs of kSlots messages each on portal
// kPtCtrl, locally managed offsets, max_size one message, so an MD that
// fills up unlinks and is posted again at the tail while the other takes
// the traffic. A control message can never find no buffer.
class Mailbox {
 public:
  static constexpr uint32_t kSlots = 64;
  // kind: the user_ptr kind of this mailbox's MDs
  void Init(ptl_handle_ni_t ni, ptl_handle_eq_t eq, ptl_process_id_t from, uint32_t kind);
  // PUT_END: the message, or nullptr (and why) if it is not one.
  const CtrlMsg* Message(const ptl_event_t& ev, std::string* why) const;
  void OnUnlink(const ptl_event_t& ev);  // post that box again

 private:
  void Post(uint32_t box);
  ptl_handle_ni_t ni_ = PTL_INVALID_HANDLE;
  ptl_handle_eq_t eq_ = PTL_EQ_NONE;
  ptl_process_id_t from_{};
  uint32_t kind_ = 0;
  Buffer boxes_[2];
};

// Sends control messages, each from its own MD (threshold 1, unlinked
// after the send), kept until its UNLINK event.
class CtrlSender {
 public:
  void Init(ptl_handle_ni_t ni, ptl_handle_eq_t eq, uint32_t kind) {
    ni_ = ni;
    eq_ = eq;
    kind_ = kind;
  }
  int Send(ptl_process_id_t to, const CtrlMsg& m);  // a Portals return code
  // SEND_END or UNLINK of one of ours; false if the event is not.
  bool OnEvent(const ptl_event_t& ev);
  std::size_t pending() const { return out_.size(); }

 private:
  ptl_handle_ni_t ni_ = PTL_INVALID_HANDLE;
  ptl_handle_eq_t eq_ = PTL_EQ_NONE;
  uint32_t kind_ = 0;
  uint32_t next_ = 0;
  std::map<uint32_t, std::unique_ptr<CtrlMsg>> out_;
};

// PTL_SR_DROP_COUNT of an NI.
uint64_t DropCount(ptl_handle_ni_t ni);

// Writes the summary and the JSON report to fd (selftest children).
void SendSummary(int fd, const Summary& s, const std::string& json);

}  // namespace ptl_stress
