// SPDX-License-Identifier: BSD-3-Clause
// An FI_EP_RDM endpoint on Portals 3.3: its portals, its two receive
// queues (tagged and untagged), its eager bounce buffer and the operations
// in flight. protocol.h has the layout; Documentation/mpi.md the protocols.
#ifndef PTL_OFI_ENDPOINT_H
#define PTL_OFI_ENDPOINT_H

#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_tagged.h>

#include <list>
#include <memory>
#include <unordered_map>

#include "objects.h"

namespace ptl::ofi {

class RecvQueue;

// Receives posted at once (each takes an ME and two events of the main
// EQ); past it fi_trecv says -FI_EAGAIN (FI_RM_ENABLED).
inline constexpr size_t kMaxPosted = 2048;

// user_ptr of the MDs whose events are not an operation's; ops' ids start
// above them. The unexpected EQ sees heap blocks (HeapBlock*) and the
// catch-alls.
enum : uintptr_t {
  kTagBounce = 1,
  kTagRequest = 2,
  kTagCatchAllTagged = 3,
  kTagCatchAllMsg = 4,
  kFirstOpId = 16,
};

// What waits on one peer and on nothing else (liveness.cc): since when,
// or 0 while it waits on nobody.
struct Waiting {
  Address peer;
  uint64_t since_ms = 0;
};

// One operation the application started and that has not completed.
struct Op {
  uint64_t id = 0;  // an MD's user_ptr: events of a finished op find nothing
  enum class Kind { kSend, kRecv } kind = Kind::kRecv;
  bool tagged = true;
  bool report = true;  // a successful completion is written to the CQ
  void* context = nullptr;
  void* buf = nullptr;
  size_t len = 0;
  uint64_t tag = 0;
  uint64_t data = 0;
  uint64_t user_flags = 0;
  // receive
  RecvMatch match{};
  ptl_process_id_t from{PTL_NID_ANY, PTL_PID_ANY};
  ptl_handle_me_t me = PTL_INVALID_HANDLE;
  ptl_handle_md_t md = PTL_INVALID_HANDLE;
  size_t rlength = 0;  // the message's length, for truncation
  uint64_t msg_bits = 0;
  uint64_t msg_hdr = 0;
  ptl_process_id_t msg_src{};
  bool resend = false;  // data comes from the sender's bounce buffer, asked for
  bool held = false;    // matched here as messages reach the heap, not posted
  // long send
  ptl_handle_me_t rndv_me = PTL_INVALID_HANDLE;
  Waiting wait;  // a long send, a pull, a resend asked for
  // Its peer was given up while the kernel still used its MD (the put's
  // data queued, a deposit under way, a pull's get not yet sent or its
  // REPLY's sink still registered in ptl_rdma): the error completion
  // waits until the kernel lets go, so the buffer is not handed back in
  // use. Once unlinked, a late REPLY is dropped by the MD's generation.
  int gone_err = 0;
};

// A block of the overflow heap: short unexpected messages are deposited in
// it by the kernel; it is recycled once full and emptied.
struct HeapBlock {
  std::unique_ptr<char[]> mem;
  size_t size = 0;
  ptl_handle_md_t md = PTL_INVALID_HANDLE;
  bool attached = false;
  unsigned live = 0;  // messages in it not yet received
  RecvQueue* queue = nullptr;
};

// A message that arrived before its receive was posted.
struct Unexpected {
  ptl_process_id_t src{};
  uint64_t bits = 0;
  uint64_t hdr = 0;
  size_t rlength = 0;
  HeapBlock* block = nullptr;  // data at block->mem + offset; null: header only
  size_t offset = 0;
  void* claimed_by = nullptr;  // FI_PEEK | FI_CLAIM context
};

// Tagged or untagged receives: posted receives are MEs in front of a marker
// ME (no MD, never matches); behind it the heap blocks and the catch-all.
// Small receives are held here instead (recv.cc) and take their messages
// from the heap as they arrive.
class RecvQueue {
 public:
  RecvQueue(Endpoint* ep, bool tagged) : ep_(ep), tagged_(tagged) {}
  int Setup(ptl_pt_index_t pt, const Limits& limits);
  void Teardown();

  bool tagged() const { return tagged_; }
  ptl_pt_index_t pt() const { return pt_; }
  ptl_handle_me_t marker() const { return marker_; }
  std::list<Unexpected>& unexpected() { return unexpected_; }

  // An event on the unexpected EQ for this queue's heap or catch-all;
  // true if it added a message to the unexpected list (last).
  bool OnHeapEvent(const ptl_event_t& ev, HeapBlock* block);
  bool OnCatchAllEvent(const ptl_event_t& ev);
  void Release(HeapBlock* block);

  // The first unexpected message a receive takes: not claimed, from its
  // source, matching its bits.
  std::list<Unexpected>::iterator Find(const Op& op);

  // Held receives, in posting order: the first that takes message `u`
  // leaves the queue and is returned.
  void Hold(Op* op) { held_.push_back(op); }
  Op* TakeHeldFor(const Unexpected& u);
  void Forget(Op* op) { held_.remove(op); }
  // Whether a message exists that a held receive and `op` would both take:
  // then `op` must not be posted ahead of it.
  bool HeldOverlaps(const Op& op) const;
  // The message FI_PEEK | FI_CLAIM reserved for `context` (FI_CLAIM takes
  // it whatever its source, tag and ignore say: fi_tagged(3)).
  std::list<Unexpected>::iterator FindClaimed(void* context);

 private:
  int AttachBlock(HeapBlock* block);

  Endpoint* ep_;
  bool tagged_;
  ptl_pt_index_t pt_ = 0;
  size_t eager_size_ = 0;
  ptl_handle_me_t marker_ = PTL_INVALID_HANDLE;
  ptl_handle_me_t catch_all_me_ = PTL_INVALID_HANDLE;
  std::vector<std::unique_ptr<HeapBlock>> blocks_;
  std::list<Unexpected> unexpected_;
  std::list<Op*> held_;
};

// The eager bounce buffer: one bound MD over slots of eager_size bytes.
// A slot is held from the send until the target's ACK, or until its data
// was sent again on request (the heap had no room for it).
struct BounceSlot {
  uint32_t generation = 0;
  bool busy = false;
  bool acked = false;
  size_t len = 0;
  uint64_t op = 0;  // its send, until SEND_END (0: an inject)
  Waiting wait;     // for the ACK
};

// An eager send when every bounce slot is held: its own copy and bound MD,
// kept as a slot is. Sends never wait for a receiver to receive: a rank
// whose sends waited for slots that only its peer's receives free, while
// the peer waits in a receive for a message behind them, would deadlock.
struct Spill {
  std::unique_ptr<char[]> data;
  size_t len = 0;
  ptl_handle_md_t md = PTL_INVALID_HANDLE;
  uint64_t op = 0;        // its send, until SEND_END
  Waiting wait;           // for the ACK
  bool released = false;  // given up on; freed once its MD may be unlinked
};

// A zero-byte put in flight to a peer something waits on (liveness.cc).
struct Probe {
  uint64_t seq = 0;  // in its MD's user_ptr
  ptl_handle_md_t md = PTL_INVALID_HANDLE;
  uint64_t landed_ms = 0;  // its SEND_END: 0 while queued in the transport
};

// Cookies (protocol.h) of spills have this bit; slots' never do.
inline constexpr uint32_t kSpillCookieBit = 1U << 30;
// user_ptr of a spill's MD: this bit and the cookie.
inline constexpr uint64_t kSpillUserBit = 1ULL << 62;
// user_ptr of a probe's MD: this bit and the probe's sequence number.
inline constexpr uint64_t kProbeUserBit = 1ULL << 61;

class Endpoint {
 public:
  Endpoint(Domain* domain, const fi_info* info);
  ~Endpoint();
  void SetIndex(int index) { index_ = index; }
  int Enable();
  void Close();

  Handle<fid_ep, Endpoint> h;
  Domain* domain() const { return domain_; }
  Av* av = nullptr;
  Cq* tx_cq = nullptr;
  Cq* rx_cq = nullptr;
  Cntr* send_cntr = nullptr;
  Cntr* recv_cntr = nullptr;
  bool tx_selective = false;
  bool rx_selective = false;
  uint64_t tx_op_flags = 0;
  uint64_t rx_op_flags = 0;
  bool enabled() const { return enabled_; }
  Address address() const;
  ptl_handle_eq_t eq() const { return eq_; }
  ptl_handle_eq_t ueq() const { return ueq_; }

  // Data operations (the fi_ops_tagged / fi_ops_msg entry points).
  ssize_t Send(bool tagged, const void* buf, size_t len, fi_addr_t dest, uint64_t tag,
               uint64_t data, bool has_data, void* context, uint64_t flags);
  ssize_t Recv(bool tagged, void* buf, size_t len, fi_addr_t src, uint64_t tag, uint64_t ignore,
               void* context, uint64_t flags);
  ssize_t Cancel(void* context);

  // Turns every pending Portals event into protocol steps and completions.
  void Progress();
  // Whether anything waits on a peer (liveness.cc): the watch then needs
  // the application to call in, even with no event coming.
  bool Waits();
  void HandleEvent(const ptl_event_t& ev, bool unexpected_eq);
  // Keep the lock while waiting for events of either EQ from outside.
  std::mutex& mutex() { return mutex_; }

  // Used by RecvQueue.
  ptl_handle_ni_t ni() const;
  int Deliver(RecvQueue& q, std::list<Unexpected>::iterator it, Op* op);
  void Complete(Op* op, size_t len, int err, size_t olen);
  const Limits& limits() const { return limits_; }

 private:
  ssize_t SendEager(const Address& dest, ptl_process_id_t to, ptl_pt_index_t pt, uint64_t bits,
                    uint64_t hdr_data_fields, const void* buf, size_t len, Op* op, bool has_data,
                    uint64_t data);
  ssize_t SendLong(const Address& dest, ptl_process_id_t to, ptl_pt_index_t pt, uint64_t bits,
                   Op* op, bool has_data, uint64_t data);
  ssize_t PostRecv(RecvQueue& q, Op* op);
  ssize_t Peek(RecvQueue& q, Op* op, uint64_t flags);
  void OnMainEvent(const ptl_event_t& ev);
  void OnBounceEvent(const ptl_event_t& ev);
  void OnRequest(const ptl_event_t& ev);
  void OnSpillEvent(const ptl_event_t& ev, uint32_t cookie);
  int AnswerGone(ptl_process_id_t requester, ptl_pt_index_t pt, uint32_t cookie);
  ssize_t SendSpill(const Address& dest, ptl_pt_index_t pt, uint64_t bits, const void* buf,
                    size_t len, Op* op, bool has_data, uint64_t data);
  void FreeSpill(uint32_t cookie);
  void FreeReleasedSpills();
  void OnOpEvent(const ptl_event_t& ev, Op* op);
  void FreeSlot(size_t slot);
  void MatchArrival(RecvQueue& q);
  int Pull(const Unexpected& u, Op* op);
  int RequestResend(const Unexpected& u, Op* op);
  void Drain(ptl_handle_eq_t eq, bool unexpected_eq);
  // Peer liveness (liveness.cc).
  int AttachProbeEntry(ptl_pt_index_t request_pt);
  void Watch();
  void StartWaiting(Waiting* w, ptl_process_id_t id, unsigned ep);
  void SendProbe(const Address& peer);
  void OnProbeEvent(const ptl_event_t& ev, uint64_t seq);
  void PeerAnswered(const Address& peer);
  void PeerGone(const Address& peer, int err);
  bool ReleaseOp(Op* op);
  void FinishGone(Op* op);
  void FillFromMessage(Op* op, ptl_process_id_t src, uint64_t bits, uint64_t hdr);
  bool Lookup(fi_addr_t addr, Address* out) const;
  void Fail(const char* what, int rc);
  Op* NewOp();
  Op* FindOp(uint64_t id);

  Domain* domain_;
  Limits limits_;
  int index_ = -1;
  bool enabled_ = false;
  std::mutex mutex_;
  ptl_handle_eq_t eq_ = PTL_EQ_NONE;   // sends, posted receives, pulls, requests
  ptl_handle_eq_t ueq_ = PTL_EQ_NONE;  // heap and catch-all: what PtlMDUpdate tests
  RecvQueue tagged_q_;
  RecvQueue msg_q_;
  std::unique_ptr<char[]> bounce_;
  ptl_handle_md_t bounce_md_ = PTL_INVALID_HANDLE;
  std::vector<BounceSlot> slots_;
  std::vector<size_t> free_slots_;
  ptl_handle_md_t empty_md_ = PTL_INVALID_HANDLE;  // zero bytes, for requests
  ptl_handle_me_t request_me_ = PTL_INVALID_HANDLE;
  ptl_handle_me_t probe_me_ = PTL_INVALID_HANDLE;  // answers peers' probes
  uint32_t next_cookie_ = 1;
  std::unordered_map<uint32_t, Spill> spills_;  // by cookie
  uint32_t next_spill_ = 0;
  std::unordered_map<uint64_t, std::unique_ptr<Op>> ops_;  // in flight, by id
  uint64_t next_op_id_ = kFirstOpId;
  size_t posted_ = 0;                            // receives with an ME, each 2 events of eq_
  std::unordered_map<fi_addr_t, Probe> probes_;  // by Pack(peer)
  uint64_t next_probe_seq_ = 0;
  uint64_t next_watch_ms_ = 0;
};

int OpenEndpoint(fid_domain* domain, fi_info* info, fid_ep** out, void* context);

}  // namespace ptl::ofi

#endif  // PTL_OFI_ENDPOINT_H
