// SPDX-License-Identifier: BSD-3-Clause
// ptl_stress: helpers shared by the roles (see ptl_stress.h).
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "ptl_stress.h"

namespace ptl_stress {

namespace {

constexpr int kMaxComplaints = 40;
int g_complaints = 0;

}  // namespace

void SetWho(const std::string& who) { ptl::tool::SetMessagePrefix("ptl_stress [" + who + "]: "); }

uint64_t Options::RingBytes() const {
  uint64_t max = sizes.empty() ? max_size : *std::max_element(sizes.begin(), sizes.end());
  uint64_t r = ring ? ring : std::max<uint64_t>(2 * max, 256 << 10);
  return (r + 4095) / 4096 * 4096;
}

uint64_t Options::GetBytes() const {
  uint64_t max = sizes.empty() ? max_size : *std::max_element(sizes.begin(), sizes.end());
  uint64_t g = get_bytes ? get_bytes : std::max<uint64_t>(max, 64 << 10);
  return (g + 4095) / 4096 * 4096;
}

void Complain(const char* fmt, ...) {
  if (g_complaints > kMaxComplaints) return;
  va_list ap;
  va_start(ap, fmt);
  if (g_complaints++ == kMaxComplaints) {
    ptl::tool::VMessage("ERROR: ", "(further errors are counted but not shown)", ap);
  } else {
    ptl::tool::VMessage("ERROR: ", fmt, ap);
  }
  va_end(ap);
}

void Note(bool quiet, const char* fmt, ...) {
  if (quiet) return;
  va_list ap;
  va_start(ap, fmt);
  ptl::tool::VMessage("", fmt, ap);
  va_end(ap);
}

void Ptl(const char* what, int rc) {
  if (rc != PTL_OK) DieWith(kExitUsage, "%s failed: %s", what, PtlErrorStr(rc));
}

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

std::string Bytes(uint64_t n) {
  char buf[48];
  if (n < 1024)
    std::snprintf(buf, sizeof(buf), "%" PRIu64 " B", n);
  else if (n < (uint64_t{1} << 20))
    std::snprintf(buf, sizeof(buf), "%.1f KiB", n / 1024.0);
  else if (n < (uint64_t{1} << 30))
    std::snprintf(buf, sizeof(buf), "%.1f MiB", n / 1048576.0);
  else
    std::snprintf(buf, sizeof(buf), "%.2f GiB", n / 1073741824.0);
  return buf;
}

std::string IdStr(ptl_process_id_t id) {
  return std::to_string(id.nid) + ":" + std::to_string(id.pid);
}

const char* EventName(ptl_event_kind_t k) {
  const char* s = PtlEventKindStr(k);
  return std::strncmp(s, "PTL_EVENT_", 10) == 0 ? s + 10 : s;
}

std::string EventStr(const ptl_event_t& ev) {
  char buf[256];
  std::snprintf(buf, sizeof(buf),
                "%s from %s pt %u bits %#" PRIx64 " rlength %" PRIu64 " mlength %" PRIu64
                " offset %" PRIu64 " hdr_data %#" PRIx64 " %s",
                EventName(ev.type), IdStr(ev.initiator).c_str(), ev.pt_index, ev.match_bits,
                ev.rlength, ev.mlength, ev.offset, ev.hdr_data,
                ev.ni_fail_type == PTL_NI_OK ? "PTL_NI_OK" : "FAILED");
  return buf;
}

bool SameId(ptl_process_id_t a, ptl_process_id_t b) { return a.nid == b.nid && a.pid == b.pid; }

Buffer::Buffer(std::size_t size) : size_(size) {
  mapped_ = std::max<std::size_t>((size + 4095) / 4096 * 4096, 4096);
  void* p = mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {  // ok() tells
    mapped_ = 0;
    return;
  }
  data_ = static_cast<uint8_t*>(p);
}

Buffer::~Buffer() {
  if (data_) munmap(data_, mapped_);
}

Buffer::Buffer(Buffer&& o) noexcept : data_(o.data_), size_(o.size_), mapped_(o.mapped_) {
  o.data_ = nullptr;
  o.size_ = o.mapped_ = 0;
}

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    if (data_) munmap(data_, mapped_);
    data_ = o.data_;
    size_ = o.size_;
    mapped_ = o.mapped_;
    o.data_ = nullptr;
    o.size_ = o.mapped_ = 0;
  }
  return *this;
}

ptl_md_t MakeMd(void* start, uint64_t length, unsigned options, ptl_handle_eq_t eq, void* user,
                int threshold) {
  ptl_md_t md{};
  md.start = start;
  md.length = length;
  md.threshold = threshold;
  md.max_size = 0;
  md.options = options;
  md.user_ptr = user;
  md.eq_handle = eq;
  return md;
}

// ------------------------------------------------------------ mailbox

void Mailbox::Init(ptl_handle_ni_t ni, ptl_handle_eq_t eq, ptl_process_id_t from, uint32_t kind) {
  ni_ = ni;
  eq_ = eq;
  from_ = from;
  kind_ = kind;
  for (uint32_t b = 0; b < 2; b++) {
    boxes_[b] = Buffer(kSlots * sizeof(CtrlMsg));
    if (!boxes_[b].ok()) DieWith(kExitUsage, "out of memory for the control mailbox");
    Post(b);
  }
}

void Mailbox::Post(uint32_t box) {
  ptl_handle_me_t me;
  Ptl("PtlMEAttach (mailbox)", PtlMEAttach(ni_, kPtCtrl, from_, MatchBits(Tag::kCtrl, 0, 0, 0),
                                           kIgnoreAllButTag, PTL_UNLINK, PTL_INS_AFTER, &me));
  ptl_md_t md =
      MakeMd(boxes_[box].data(), boxes_[box].size(),
             PTL_MD_OP_PUT | PTL_MD_MAX_SIZE | PTL_MD_EVENT_START_DISABLE | PTL_MD_ACK_DISABLE, eq_,
             Tag2Ptr(kind_, box));
  md.max_size = sizeof(CtrlMsg);
  ptl_handle_md_t h;
  Ptl("PtlMDAttach (mailbox)", PtlMDAttach(me, md, PTL_UNLINK, &h));
}

const CtrlMsg* Mailbox::Message(const ptl_event_t& ev, std::string* why) const {
  uint32_t box = PtrIndex(ev);
  if (box > 1) {
    *why = "not a mailbox";
    return nullptr;
  }
  if (ev.mlength != sizeof(CtrlMsg) || ev.rlength != sizeof(CtrlMsg)) {
    *why = "a control message of " + std::to_string(ev.rlength) + " bytes, not " +
           std::to_string(sizeof(CtrlMsg));
    return nullptr;
  }
  if (ev.offset % sizeof(CtrlMsg) || ev.offset + sizeof(CtrlMsg) > boxes_[box].size()) {
    *why = "a control message at offset " + std::to_string(ev.offset);
    return nullptr;
  }
  auto* m = reinterpret_cast<const CtrlMsg*>(boxes_[box].data() + ev.offset);
  if (!CtrlValid(*m)) {
    *why = "a control message with a bad magic, version, type or CRC";
    return nullptr;
  }
  return m;
}

void Mailbox::OnUnlink(const ptl_event_t& ev) {
  uint32_t box = PtrIndex(ev);
  if (box <= 1) Post(box);
}

// ------------------------------------------------------- ctrl sender

int CtrlSender::Send(ptl_process_id_t to, const CtrlMsg& m) {
  uint32_t index = next_++;
  auto copy = std::make_unique<CtrlMsg>(m);
  SealCtrl(*copy);
  ptl_md_t md = MakeMd(copy.get(), sizeof(CtrlMsg), PTL_MD_EVENT_START_DISABLE, eq_,
                       Tag2Ptr(kind_, index), 1);
  ptl_handle_md_t h;
  int rc = PtlMDBind(ni_, md, PTL_UNLINK, &h);
  if (rc != PTL_OK) return rc;
  rc = PtlPutRegion(h, 0, sizeof(CtrlMsg), PTL_NO_ACK_REQ, to, kPtCtrl, 0,
                    MatchBits(Tag::kCtrl, m.client_id, index, sizeof(CtrlMsg)), 0, 0);
  if (rc != PTL_OK) {
    PtlMDUnlink(h);
    return rc;
  }
  out_.emplace(index, std::move(copy));
  return PTL_OK;
}

bool CtrlSender::OnEvent(const ptl_event_t& ev) {
  if (PtrKind(ev) != kind_) return false;
  // The buffer lives until the MD is gone: UNLINK comes after SEND_END.
  if (ev.type == PTL_EVENT_UNLINK) out_.erase(PtrIndex(ev));
  return true;
}

uint64_t DropCount(ptl_handle_ni_t ni) {
  ptl_sr_value_t v = 0;
  Ptl("PtlNIStatus(PTL_SR_DROP_COUNT)", PtlNIStatus(ni, PTL_SR_DROP_COUNT, &v));
  return v;
}

void SendSummary(int fd, const Summary& s, const std::string& json) {
  if (fd < 0) return;
  std::string out(reinterpret_cast<const char*>(&s), sizeof(s));
  out += json;
  const char* p = out.data();
  std::size_t left = out.size();
  while (left) {
    ssize_t n = write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    p += n;
    left -= n;
  }
  close(fd);
}

}  // namespace ptl_stress
