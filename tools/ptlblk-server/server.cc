// SPDX-License-Identifier: BSD-3-Clause
// ptlblk-server (see server.h and Documentation/ptlblk.md).
//
// Portals objects, all on one NI:
//   request ME   portal PTLBLK_PT_REQUEST, any initiator, every match bit
//                ignored, an empty MD of infinite threshold: a request is a
//                zero-length put whose match bits and hdr_data say it all,
//                so this MD never fills and never needs re-posting.
//   slots        `--slots` staging buffers of `--max-xfer` bytes, each bound
//                once as its own MD (pinned once, not per request). A READ
//                preads into one and puts it to the client's bulk entry; a
//                WRITE gets into one from the client's bulk entry, then
//                pwrites it. One event ends each use: SEND_END of the put,
//                REPLY_END of the get.
//   mapped MD    a READ of at least kMapMin bytes is put straight from a
//                read-only shared mapping of the export (bound for that
//                one put, unlinked at its SEND_END): the page cache is the
//                source, no pread copy. The slot is still taken (it bounds
//                the requests under way) but its buffer is not used. If the
//                bind fails (a file shrunk under the mapping), pread.
//   empty MD     zero-length status puts (PTLBLK_PT_REPLY) and refusals.
//   hello MD     the 64-byte HELLO answer, constant.
// Requests that need a slot while all are busy wait in FIFO order.
//
// Threads: the main thread reads the event queue and schedules (slots,
// gets); `--workers` threads do the blocking pread/pwrite/fdatasync/
// fallocate and send the answers. A small READ whose data is all in the
// page cache is answered by the main thread itself (a pread that may not
// block: RWF_NOWAIT, or any pread of a tmpfs or ramfs export): handing it
// to a worker and back would cost two context switches, which for a 4 KiB
// read are most of the server's time.
// libptl-user calls are thread-safe.
#include "server.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <p3nal_linux.h>
#include <portals3.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cinttypes>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace ptlblk {
namespace {

void Log(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void Log(const char* fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  std::fprintf(stderr, "ptlblk-server[%ld.%03ld]: %s\n", static_cast<long>(ts.tv_sec),
               ts.tv_nsec / 1000000, msg);
}

int64_t NowMs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000 + ts.tv_nsec / 1000000;
}

// MD user_ptr values: what an event is about.
constexpr uintptr_t kRequestMd = 1;
constexpr uintptr_t kSlotBase = 0x100;
// READs this large are put from the mapping of the export; for smaller
// ones the bind and unlink cost about what the copy saves (a judgment).
constexpr uint64_t kMapMin = 64 << 10;

std::string Id(ptl_process_id_t id) {
  return std::to_string(id.nid >> 24) + "." + std::to_string((id.nid >> 16) & 0xff) + "." +
         std::to_string((id.nid >> 8) & 0xff) + "." + std::to_string(id.nid & 0xff) + ":" +
         std::to_string(id.pid);
}

struct Job {
  Request r;
  ptl_process_id_t from{};
  int slot = -1;  // READ, WRITE
};

class Server {
 public:
  explicit Server(const Options& o) : o_(o) {}
  ~Server();
  int Run(const volatile sig_atomic_t* stop);

 private:
  bool OpenExport();
  bool SetupPortals();
  void OnEvent(const ptl_event_t& ev);
  void OnRequest(const ptl_event_t& ev);
  void Admit(const Request& r, ptl_process_id_t from);
  // With mu_ held: gives the request a slot (starting its get, or its
  // worker job; on the main thread, a small READ waits in cached_ for
  // ReadCachedJobs instead).
  void StartLocked(int slot, const Request& r, ptl_process_id_t from);
  enum class CachedReads { kNone, kNoWait, kMemory };
  CachedReads CachedReadsHow() const;
  void ReadCachedJobs();
  bool ReadCached(const Job& j);
  void PutRead(const Job& j, uint32_t status);
  void FreeSlot(int slot);
  void FreeSlotLocked(int slot);
  bool BindSlot(int slot);
  void ReapStuckFetches();
  void Push(Job j);
  void WorkerLoop();
  void Execute(Job& j);
  // Whether a READ is put from the mapping of the export (PutMapped).
  bool FromMapping(const Request& r) const { return map_ && r.bytes() >= kMapMin; }
  bool PutMapped(const Job& j);
  uint32_t Pread(uint8_t* buf, uint64_t len, uint64_t off);
  uint32_t Pwrite(const uint8_t* buf, uint64_t len, uint64_t off, bool fua);
  uint32_t Discard(uint64_t off, uint64_t len);
  void Answer(ptl_process_id_t to, uint32_t cookie, uint32_t status);
  void Refuse(const Request& r, ptl_process_id_t from, uint32_t status);
  void Ptl(const char* what, int rc);

  Options o_;
  Export e_;
  int fd_ = -1;
  bool blockdev_ = false;

  ptl_handle_ni_t ni_ = PTL_INVALID_HANDLE;
  ptl_handle_eq_t eq_ = PTL_EQ_NONE;
  ptl_handle_me_t req_me_ = PTL_INVALID_HANDLE;
  ptl_handle_md_t empty_md_ = PTL_INVALID_HANDLE, hello_md_ = PTL_INVALID_HANDLE;
  std::array<uint8_t, sizeof(ptlblk_hello)> hello_{};
  uint8_t empty_byte_ = 0;
  uint8_t* staging_ = nullptr;
  std::size_t staging_len_ = 0;
  uint8_t* map_ = nullptr;  // the export, read-only, shared (nullptr: none)
  CachedReads cached_reads_how_ = CachedReads::kNone;

  // A slot is kFetching from its WRITE's get until the REPLY_END. A get
  // whose bulk entry the client unlinked meanwhile (it gave up on the
  // request) is dropped there and never answered (Portals sends no
  // negative reply), so fetches older than --get-timeout are cancelled by
  // unlinking the slot's MD and binding a new one over the same buffer: a
  // late reply then finds a stale MD generation and is dropped.
  enum class State { kFree, kReading, kFetching, kWriting };
  struct Slot {
    ptl_handle_md_t md = PTL_INVALID_HANDLE;
    ptl_handle_md_t map_md = PTL_INVALID_HANDLE;  // a READ put from the mapping
    State state = State::kFree;
    Request r;
    ptl_process_id_t from{};
    int64_t since_ms = 0;
  };
  std::vector<Slot> slots_;

  std::mutex mu_;  // free_, pending_, Slot::state, Slot::map_md
  std::vector<int> free_;
  std::deque<std::pair<Request, ptl_process_id_t>> pending_;
  // READs to try from the page cache first: the main thread's alone (only
  // its StartLocked adds to it), so read without mu_ between events.
  std::vector<Job> cached_;
  std::thread::id main_thread_;

  std::mutex jobs_mu_;
  std::condition_variable jobs_cv_;
  std::deque<Job> jobs_;
  bool quit_ = false;
  std::vector<std::thread> workers_;

  std::atomic<uint64_t> reads_{0}, writes_{0}, flushes_{0}, discards_{0}, errors_{0};
  std::atomic<uint64_t> read_bytes_{0}, write_bytes_{0};
  uint64_t cached_reads_ = 0;  // main thread only
};

void Server::Ptl(const char* what, int rc) {
  if (rc != PTL_OK) {
    Log("%s: %s", what, PtlErrorStr(rc));
    std::exit(1);
  }
}

Server::~Server() {
  {
    std::lock_guard<std::mutex> l(jobs_mu_);
    quit_ = true;
  }
  jobs_cv_.notify_all();
  for (auto& t : workers_) t.join();
  // PtlNIFini frees every ME, MD and EQ and unpins the staging buffers.
  if (ni_ != PTL_INVALID_HANDLE) PtlNIFini(ni_);
  PtlFini();
  if (staging_) munmap(staging_, staging_len_);
  if (map_) munmap(map_, e_.size);
  if (fd_ >= 0) close(fd_);
}

bool Server::OpenExport() {
  fd_ = open(o_.path.c_str(), (o_.read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
  if (fd_ < 0) {
    Log("cannot open %s: %s", o_.path.c_str(), std::strerror(errno));
    return false;
  }
  struct stat st {};
  if (fstat(fd_, &st) != 0) {
    Log("fstat %s: %s", o_.path.c_str(), std::strerror(errno));
    return false;
  }
  e_.block_size = o_.block_size ? o_.block_size : 512;
  if (S_ISBLK(st.st_mode)) {
    blockdev_ = true;
    uint64_t size = 0;
    int lbs = 0;
    if (ioctl(fd_, BLKGETSIZE64, &size) != 0) {
      Log("BLKGETSIZE64 %s: %s", o_.path.c_str(), std::strerror(errno));
      return false;
    }
    if (!o_.block_size && ioctl(fd_, BLKSSZGET, &lbs) == 0 && lbs >= 512 && lbs <= 4096)
      e_.block_size = static_cast<uint32_t>(lbs);
    unsigned short rot = 0;
    e_.rotational = ioctl(fd_, BLKROTATIONAL, &rot) == 0 && rot;
    e_.size = size;
    e_.discard = true;  // BLKDISCARD answers EOPNOTSUPP where it cannot
  } else if (S_ISREG(st.st_mode)) {
    e_.size = static_cast<uint64_t>(st.st_size);
    e_.discard = true;  // fallocate(PUNCH_HOLE) answers EOPNOTSUPP where it cannot
  } else {
    Log("%s is neither a regular file nor a block device", o_.path.c_str());
    return false;
  }
  e_.size -= e_.size % e_.block_size;
  if (e_.size == 0) {
    Log("%s is smaller than one block", o_.path.c_str());
    return false;
  }
  e_.read_only = o_.read_only;
  e_.max_xfer = o_.max_xfer - o_.max_xfer % e_.block_size;
  e_.max_inflight = o_.slots * 4;  // the rest waits here, not on the wire
  void* m = mmap(nullptr, e_.size, PROT_READ, MAP_SHARED, fd_, 0);
  if (m != MAP_FAILED) map_ = static_cast<uint8_t*>(m);  // else every READ preads
  cached_reads_how_ = CachedReadsHow();
  return true;
}

// How the main thread may read without waiting for a device: a pread that
// returns EAGAIN rather than start I/O, where the file system offers one;
// on tmpfs and ramfs, which offer none (6.1 and later say EOPNOTSUPP), a
// plain pread, since their pages are memory (a tmpfs page swapped out is
// the exception: the main thread then waits for it once).
Server::CachedReads Server::CachedReadsHow() const {
  uint8_t byte;
  iovec iov{&byte, 1};
  if (preadv2(fd_, &iov, 1, 0, RWF_NOWAIT) >= 0 || errno == EAGAIN) return CachedReads::kNoWait;
  struct statfs fs {};
  if (fstatfs(fd_, &fs) == 0 && (fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC))
    return CachedReads::kMemory;
  return CachedReads::kNone;
}

bool Server::SetupPortals() {
  int max_ifaces = 0;
  Ptl("PtlInit", PtlInit(&max_ifaces));
  ptl_ni_limits_t limits{};
  int rc = PtlNIInit(PTL_IFACE_LINUX0 + o_.iface, o_.pid, nullptr, &limits, &ni_);
  if (rc == PTL_PID_INVALID) {
    Log("PtlNIInit(pid %u): the pid is taken (another server?), or below 64 without "
        "CAP_NET_ADMIN",
        o_.pid);
    return false;
  }
  Ptl("PtlNIInit", rc);
  // Every request yields about two events; the EQ holds many clients' worth.
  Ptl("PtlEQAlloc", PtlEQAlloc(ni_, 16384, PTL_EQ_HANDLER_NONE, &eq_));

  ptl_process_id_t any{PTL_NID_ANY, PTL_PID_ANY};
  ptl_md_t md{};
  md.start = &empty_byte_;
  md.length = 0;
  md.threshold = PTL_MD_THRESH_INF;
  md.options = PTL_MD_OP_PUT | PTL_MD_EVENT_START_DISABLE;
  md.user_ptr = reinterpret_cast<void*>(kRequestMd);
  md.eq_handle = eq_;
  Ptl("PtlMEAttach (requests)",
      PtlMEAttach(ni_, PTLBLK_PT_REQUEST, any, 0, ~0ULL, PTL_RETAIN, PTL_INS_AFTER, &req_me_));
  ptl_handle_md_t req_md;
  Ptl("PtlMDAttach (requests)", PtlMDAttach(req_me_, md, PTL_RETAIN, &req_md));

  md.options = 0;
  md.user_ptr = nullptr;
  md.eq_handle = PTL_EQ_NONE;
  Ptl("PtlMDBind (empty)", PtlMDBind(ni_, md, PTL_RETAIN, &empty_md_));
  hello_ = EncodeHello(e_);
  md.start = hello_.data();
  md.length = hello_.size();
  Ptl("PtlMDBind (hello)", PtlMDBind(ni_, md, PTL_RETAIN, &hello_md_));

  staging_len_ = std::size_t{o_.slots} * e_.max_xfer;
  void* p = mmap(nullptr, staging_len_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    Log("cannot map %zu bytes of staging buffers: %s", staging_len_, std::strerror(errno));
    return false;
  }
  staging_ = static_cast<uint8_t*>(p);
  slots_.resize(o_.slots);
  for (uint32_t i = 0; i < o_.slots; ++i) {
    if (!BindSlot(static_cast<int>(i))) return false;
    free_.push_back(static_cast<int>(o_.slots - 1 - i));
  }
  return true;
}

bool Server::BindSlot(int slot) {
  ptl_md_t md{};
  md.start = staging_ + std::size_t(slot) * e_.max_xfer;
  md.length = e_.max_xfer;
  md.threshold = PTL_MD_THRESH_INF;
  md.options = PTL_MD_EVENT_START_DISABLE;
  md.user_ptr = reinterpret_cast<void*>(kSlotBase + slot);
  md.eq_handle = eq_;
  int rc = PtlMDBind(ni_, md, PTL_RETAIN, &slots_[slot].md);
  if (rc != PTL_OK) {
    Log("PtlMDBind (staging buffer %d): %s (RLIMIT_MEMLOCK? %zu bytes are pinned)", slot,
        PtlErrorStr(rc), staging_len_);
    return false;
  }
  return true;
}

void Server::ReapStuckFetches() {
  int64_t now = NowMs();
  std::lock_guard<std::mutex> l(mu_);
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    Slot& s = slots_[i];
    if (s.state != State::kFetching || now - s.since_ms < int64_t{o_.get_timeout_s} * 1000)
      continue;
    // PTL_MD_IN_USE: the reply is arriving right now; look again later.
    if (PtlMDUnlink(s.md) != PTL_OK) continue;
    Log("WRITE from %s: no data after %u s (the client gave up on it?): cancelled",
        Id(s.from).c_str(), o_.get_timeout_s);
    errors_++;
    Answer(s.from, s.r.cookie, PTLBLK_S_IO);
    if (!BindSlot(static_cast<int>(i))) {
      s.state = State::kReading;  // lost for good, never handed out again
      continue;
    }
    FreeSlotLocked(static_cast<int>(i));
  }
}

void Server::Answer(ptl_process_id_t to, uint32_t cookie, uint32_t status) {
  int rc = PtlPut(empty_md_, PTL_NO_ACK_REQ, to, PTLBLK_PT_REPLY, 0, cookie, 0, status);
  if (rc != PTL_OK) Log("answer to %s: PtlPut: %s", Id(to).c_str(), PtlErrorStr(rc));
}

// A request refused before any data moved. Its bulk entry (if any) is
// consumed with a zero-length operation of its kind, so that the client's
// pages are released; READ and HELLO carry the status in that put.
void Server::Refuse(const Request& r, ptl_process_id_t from, uint32_t status) {
  errors_++;
  Log("%s from %s (offset %" PRIu64 ", %" PRIu64 " bytes) refused: %s", OpName(r.op).c_str(),
      Id(from).c_str(), r.offset, r.bytes(), StatusName(status).c_str());
  int rc = PTL_OK;
  if (r.op == PTLBLK_OP_READ || r.op == PTLBLK_OP_HELLO) {
    rc = PtlPut(empty_md_, PTL_NO_ACK_REQ, from, PTLBLK_PT_BULK, 0, r.cookie, 0, status);
  } else if (r.op == PTLBLK_OP_WRITE) {
    rc = PtlGet(empty_md_, from, PTLBLK_PT_BULK, 0, r.cookie, 0);
    Answer(from, r.cookie, status);
  } else {
    Answer(from, r.cookie, status);
  }
  if (rc != PTL_OK) Log("refusal to %s: %s", Id(from).c_str(), PtlErrorStr(rc));
}

void Server::OnRequest(const ptl_event_t& ev) {
  if (ev.ni_fail_type != PTL_NI_OK) return;
  Request r = Decode(ev.match_bits, ev.hdr_data);
  if (o_.verbose)
    Log("%s from %s cookie %#x offset %" PRIu64 " bytes %" PRIu64 "%s", OpName(r.op).c_str(),
        Id(ev.initiator).c_str(), r.cookie, r.offset, r.bytes(), r.fua() ? " fua" : "");
  uint32_t status = Check(r, e_);
  if (status != PTLBLK_S_OK) {
    Refuse(r, ev.initiator, status);
    return;
  }
  if (r.op == PTLBLK_OP_HELLO) {
    Log("client %s attached (%" PRIu64 " bytes, block %u)", Id(ev.initiator).c_str(), e_.size,
        e_.block_size);
    int rc = PtlPut(hello_md_, PTL_NO_ACK_REQ, ev.initiator, PTLBLK_PT_BULK, 0, r.cookie, 0,
                    PTLBLK_S_OK);
    if (rc != PTL_OK) Log("HELLO answer: %s", PtlErrorStr(rc));
    return;
  }
  Admit(r, ev.initiator);
}

void Server::Admit(const Request& r, ptl_process_id_t from) {
  if (!r.has_bulk()) {
    Push(Job{r, from, -1});
    return;
  }
  std::lock_guard<std::mutex> l(mu_);
  if (free_.empty()) {
    pending_.emplace_back(r, from);
    return;
  }
  int slot = free_.back();
  free_.pop_back();
  StartLocked(slot, r, from);
}

void Server::StartLocked(int slot, const Request& r, ptl_process_id_t from) {
  Slot& s = slots_[slot];
  s.r = r;
  s.from = from;
  if (r.op == PTLBLK_OP_READ) {
    s.state = State::kReading;
    // A READ put from the mapping binds it, which may fault pages in.
    if (cached_reads_how_ != CachedReads::kNone && std::this_thread::get_id() == main_thread_ &&
        !FromMapping(r))
      cached_.push_back(Job{r, from, slot});
    else
      Push(Job{r, from, slot});
    return;
  }
  s.state = State::kFetching;
  s.since_ms = NowMs();  // for ReapStuckFetches
  // WRITE: fetch the data; its REPLY_END hands it to a worker.
  int rc = PtlGetRegion(s.md, 0, r.bytes(), from, PTLBLK_PT_BULK, 0, r.cookie, 0);
  if (rc != PTL_OK) {
    Log("WRITE from %s: PtlGetRegion: %s", Id(from).c_str(), PtlErrorStr(rc));
    errors_++;
    Answer(from, r.cookie, PTLBLK_S_IO);
    s.state = State::kFree;
    free_.push_back(slot);
  }
}

void Server::FreeSlot(int slot) {
  std::lock_guard<std::mutex> l(mu_);
  FreeSlotLocked(slot);
}

void Server::FreeSlotLocked(int slot) {
  slots_[slot].state = State::kFree;
  if (pending_.empty()) {
    free_.push_back(slot);
    return;
  }
  auto [r, from] = pending_.front();
  pending_.pop_front();
  StartLocked(slot, r, from);
}

void Server::OnEvent(const ptl_event_t& ev) {
  uintptr_t what = reinterpret_cast<uintptr_t>(ev.md.user_ptr);
  if (what == kRequestMd) {
    if (ev.type == PTL_EVENT_PUT_END) OnRequest(ev);
    return;
  }
  if (what < kSlotBase || what >= kSlotBase + slots_.size()) return;
  int slot = static_cast<int>(what - kSlotBase);
  Slot& s = slots_[slot];
  ptl_handle_md_t map_md;
  {
    std::lock_guard<std::mutex> l(mu_);
    map_md = s.map_md;
  }
  if (map_md != PTL_INVALID_HANDLE && ev.md_handle == map_md) {
    // A READ put from the mapping: its data has left (or the network gave
    // up on its client); the pages are unpinned with the MD.
    if (ev.type != PTL_EVENT_SEND_END) return;
    if (ev.ni_fail_type != PTL_NI_OK) {
      errors_++;
      Log("READ to %s: the network gave up", Id(s.from).c_str());
    }
    int rc = PtlMDUnlink(map_md);
    if (rc != PTL_OK) Log("READ to %s: PtlMDUnlink: %s", Id(s.from).c_str(), PtlErrorStr(rc));
    {
      std::lock_guard<std::mutex> l(mu_);
      s.map_md = PTL_INVALID_HANDLE;
    }
    FreeSlot(slot);
    return;
  }
  // An event of the slot's previous MD (a cancelled fetch) is stale.
  if (ev.md_handle != s.md) return;
  if (ev.type == PTL_EVENT_SEND_END && s.r.op == PTLBLK_OP_READ) {
    // The READ's data has left (or the network gave up on its client).
    if (ev.ni_fail_type != PTL_NI_OK) {
      errors_++;
      Log("READ to %s: the network gave up", Id(s.from).c_str());
    }
    FreeSlot(slot);
  } else if (ev.type == PTL_EVENT_REPLY_END && s.r.op == PTLBLK_OP_WRITE) {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (s.state != State::kFetching) return;  // cancelled meanwhile
      s.state = State::kWriting;
    }
    if (ev.ni_fail_type != PTL_NI_OK || ev.mlength != s.r.bytes()) {
      errors_++;
      Log("WRITE from %s: fetching its data failed (%" PRIu64 " of %" PRIu64 " bytes)",
          Id(s.from).c_str(), ev.mlength, s.r.bytes());
      Answer(s.from, s.r.cookie, PTLBLK_S_IO);
      FreeSlot(slot);
      return;
    }
    Push(Job{s.r, s.from, slot});
  }
}

void Server::Push(Job j) {
  {
    std::lock_guard<std::mutex> l(jobs_mu_);
    jobs_.push_back(j);
  }
  jobs_cv_.notify_one();
}

void Server::WorkerLoop() {
  for (;;) {
    Job j;
    {
      std::unique_lock<std::mutex> l(jobs_mu_);
      jobs_cv_.wait(l, [&] { return quit_ || !jobs_.empty(); });
      if (jobs_.empty()) return;
      j = jobs_.front();
      jobs_.pop_front();
    }
    Execute(j);
  }
}

// A large READ put from the mapping of the export (see the top); false:
// not done, pread instead.
bool Server::PutMapped(const Job& j) {
  const Request& r = j.r;
  Slot& s = slots_[j.slot];
  if (!FromMapping(r)) return false;
  ptl_md_t md{};
  md.start = map_ + r.offset;
  md.length = r.bytes();
  md.threshold = PTL_MD_THRESH_INF;
  md.options = PTL_MD_EVENT_START_DISABLE;
  md.user_ptr = reinterpret_cast<void*>(kSlotBase + j.slot);
  md.eq_handle = eq_;
  ptl_handle_md_t h;
  if (PtlMDBind(ni_, md, PTL_RETAIN, &h) != PTL_OK) return false;
  {
    // Set before the put: its SEND_END may come before PtlPut returns.
    std::lock_guard<std::mutex> l(mu_);
    s.map_md = h;
  }
  int rc = PtlPut(h, PTL_NO_ACK_REQ, j.from, PTLBLK_PT_BULK, 0, r.cookie, 0, PTLBLK_S_OK);
  if (rc != PTL_OK) {
    {
      std::lock_guard<std::mutex> l(mu_);
      s.map_md = PTL_INVALID_HANDLE;
    }
    PtlMDUnlink(h);
    return false;
  }
  reads_++;
  read_bytes_ += r.bytes();
  return true;
}

uint32_t Server::Pread(uint8_t* buf, uint64_t len, uint64_t off) {
  uint64_t done = 0;
  while (done < len) {
    ssize_t n = pread(fd_, buf + done, len - done, static_cast<off_t>(off + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return StatusFromErrno(errno);
    if (n == 0) {  // a file shrunk under us reads as zeroes
      std::memset(buf + done, 0, len - done);
      break;
    }
    done += static_cast<uint64_t>(n);
  }
  return PTLBLK_S_OK;
}

uint32_t Server::Pwrite(const uint8_t* buf, uint64_t len, uint64_t off, bool fua) {
  uint64_t done = 0;
  while (done < len) {
    iovec iov{const_cast<uint8_t*>(buf + done), len - done};
    // FUA: this write is durable before the answer (RWF_DSYNC).
    ssize_t n = pwritev2(fd_, &iov, 1, static_cast<off_t>(off + done), fua ? RWF_DSYNC : 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return StatusFromErrno(n < 0 ? errno : EIO);
    done += static_cast<uint64_t>(n);
  }
  return PTLBLK_S_OK;
}

uint32_t Server::Discard(uint64_t off, uint64_t len) {
  if (blockdev_) {
    uint64_t range[2] = {off, len};
    return ioctl(fd_, BLKDISCARD, range) == 0 ? uint32_t{PTLBLK_S_OK} : StatusFromErrno(errno);
  }
  if (fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(off),
                static_cast<off_t>(len)) == 0)
    return PTLBLK_S_OK;
  return StatusFromErrno(errno);
}

// A READ's data, read into its slot's buffer with @status: put to the
// client, whose SEND_END frees the slot; or refused.
void Server::PutRead(const Job& j, uint32_t status) {
  const Request& r = j.r;
  if (status == PTLBLK_S_OK) {
    reads_++;
    read_bytes_ += r.bytes();
    int rc = PtlPutRegion(slots_[j.slot].md, 0, r.bytes(), PTL_NO_ACK_REQ, j.from, PTLBLK_PT_BULK,
                          0, r.cookie, 0, PTLBLK_S_OK);
    if (rc == PTL_OK) return;
    Log("READ to %s: PtlPutRegion: %s", Id(j.from).c_str(), PtlErrorStr(rc));
    status = PTLBLK_S_IO;
  }
  FreeSlot(j.slot);
  Refuse(r, j.from, status);
}

// The whole of a READ from memory (CachedReadsHow), answered here; false if
// any of it would need I/O (EAGAIN, or a short read: the worker reads it
// all, and zeroes past the end of a file that shrank).
bool Server::ReadCached(const Job& j) {
  const Request& r = j.r;
  iovec iov{staging_ + std::size_t(j.slot) * e_.max_xfer, r.bytes()};
  int flags = cached_reads_how_ == CachedReads::kNoWait ? RWF_NOWAIT : 0;
  ssize_t n = preadv2(fd_, &iov, 1, static_cast<off_t>(r.offset), flags);
  if (n < 0 || static_cast<uint64_t>(n) != r.bytes()) return false;
  cached_reads_++;
  PutRead(j, PTLBLK_S_OK);
  return true;
}

// Main thread: the READs StartLocked set aside, each answered from the page
// cache or handed to a worker. Answering one may free a slot and start
// another, hence the loop.
void Server::ReadCachedJobs() {
  std::vector<Job> jobs;
  while (!cached_.empty()) {
    jobs.swap(cached_);
    for (const Job& j : jobs)
      if (!ReadCached(j)) Push(j);
    jobs.clear();
  }
}

void Server::Execute(Job& j) {
  const Request& r = j.r;
  uint32_t status = PTLBLK_S_OK;
  switch (r.op) {
    case PTLBLK_OP_READ:
      if (PutMapped(j)) return;  // its SEND_END frees the slot
      PutRead(j, Pread(staging_ + std::size_t(j.slot) * e_.max_xfer, r.bytes(), r.offset));
      return;
    case PTLBLK_OP_WRITE:
      status = Pwrite(staging_ + std::size_t(j.slot) * e_.max_xfer, r.bytes(), r.offset, r.fua());
      FreeSlot(j.slot);
      writes_++;
      write_bytes_ += r.bytes();
      break;
    case PTLBLK_OP_FLUSH:
      // Every write answered so far is in the page cache: make it durable.
      status = fdatasync(fd_) == 0 ? uint32_t{PTLBLK_S_OK} : StatusFromErrno(errno);
      flushes_++;
      break;
    case PTLBLK_OP_DISCARD:
      status = Discard(r.offset, r.bytes());
      discards_++;
      break;
  }
  if (status != PTLBLK_S_OK) {
    errors_++;
    Log("%s from %s (offset %" PRIu64 ", %" PRIu64 " bytes) failed: %s", OpName(r.op).c_str(),
        Id(j.from).c_str(), r.offset, r.bytes(), StatusName(status).c_str());
  }
  Answer(j.from, r.cookie, status);
}

int Server::Run(const volatile sig_atomic_t* stop) {
  if (!OpenExport() || !SetupPortals()) return 1;
  main_thread_ = std::this_thread::get_id();
  for (uint32_t i = 0; i < o_.workers; ++i) workers_.emplace_back([this] { WorkerLoop(); });
  ptl_process_id_t me{};
  PtlGetId(ni_, &me);
  Log("serving %s (%s, %" PRIu64 " bytes, block %u, %s%s) as %s, %u slots of %u KiB, %u workers",
      o_.path.c_str(), blockdev_ ? "block device" : "file", e_.size, e_.block_size,
      e_.read_only ? "read-only" : "read-write", e_.discard ? ", discard" : "", Id(me).c_str(),
      o_.slots, e_.max_xfer >> 10, o_.workers);

  // Stuck fetches are looked for about once a second: the clock is read
  // when the queue is idle or every kReapEvents events, not per event.
  constexpr unsigned kReapEvents = 64;
  int64_t last_reap = NowMs();
  unsigned events = 0;
  while (!*stop) {
    ptl_event_t ev{};
    int which = 0;
    int rc = PtlEQPoll(&eq_, 1, 200, &ev, &which);
    if (rc == PTL_EQ_EMPTY || ++events == kReapEvents) {
      events = 0;
      if (NowMs() - last_reap >= 1000) {
        ReapStuckFetches();
        last_reap = NowMs();
      }
    }
    if (rc != PTL_EQ_EMPTY) {
      if (rc == PTL_EQ_DROPPED)
        Log("the event queue overflowed: some requests were lost (their clients time out)");
      else if (rc != PTL_OK)
        Ptl("PtlEQPoll", rc);
      OnEvent(ev);
    }
    ReadCachedJobs();
  }

  // Stop taking requests, finish what is under way (bounded), then go.
  Log("stopping: no new requests");
  PtlMEUnlink(req_me_);
  timespec start{}, now{};
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    {
      std::lock_guard<std::mutex> l(mu_);
      std::lock_guard<std::mutex> lj(jobs_mu_);
      if (free_.size() == slots_.size() && jobs_.empty()) break;
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec - start.tv_sec > 10) {
      Log("giving up on requests still under way after 10 s");
      break;
    }
    ptl_event_t ev{};
    int which = 0;
    int rc = PtlEQPoll(&eq_, 1, 100, &ev, &which);
    if (rc == PTL_OK || rc == PTL_EQ_DROPPED) OnEvent(ev);
    ReadCachedJobs();
  }
  {
    std::lock_guard<std::mutex> l(jobs_mu_);
    quit_ = true;
  }
  jobs_cv_.notify_all();
  for (auto& t : workers_) t.join();
  workers_.clear();
  if (!o_.read_only && fdatasync(fd_) != 0) Log("fdatasync: %s", std::strerror(errno));
  Log("stopped: %" PRIu64 " reads (%" PRIu64 " bytes; %" PRIu64
      " from the page cache without "
      "a worker), %" PRIu64 " writes (%" PRIu64 " bytes), %" PRIu64 " flushes, %" PRIu64
      " discards, %" PRIu64 " errors",
      reads_.load(), read_bytes_.load(), cached_reads_, writes_.load(), write_bytes_.load(),
      flushes_.load(), discards_.load(), errors_.load());
  return 0;
}

}  // namespace

int Serve(const Options& o, const volatile sig_atomic_t* stop) {
  Server s(o);
  return s.Run(stop);
}

}  // namespace ptlblk
