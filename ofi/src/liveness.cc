// SPDX-License-Identifier: BSD-3-Clause
// Peers that stop answering. Some of an endpoint's state waits on one peer
// and on nothing else: a long send until its receiver pulls it, a pull or
// a resend asked for until the sender's data comes, a bounce slot or a
// spill until the receiver's ACK. When the peer's node dies, its link
// stays down or its process exits, none of that ever comes, and no Portals
// event says so: the transport fails only what it carries itself, and a
// request for a process that is gone is dropped at its node without a word
// (Portals 3.3 has no NACK).
//
// So whatever has waited probe_interval on a peer makes the endpoint probe
// that peer: a zero-byte PtlPut, ACK requested, to the probe entry every
// endpoint keeps on its request portal. The peer's kernel ACKs it whether
// the peer's process is running or not (application bypass), so
//   - SEND_END with PTL_NI_FAIL: the transport gave up on the node (dead,
//     or its link down for the transport's peer timeout): FI_EHOSTUNREACH;
//   - SEND_END: the probe has reached the peer's node; its clock starts;
//   - ACK: the peer is there; what waits on it waits on, and the peer is
//     probed again after another interval;
//   - no ACK within probe_timeout of the SEND_END: the node answers frames
//     but the process or endpoint is gone: FI_ETIMEDOUT.
// The clock starts at SEND_END, not when the probe is issued: the probe
// is a request like any other and queues in the transport behind the
// requests issued to that peer before it (behind the request credit in
// ptl_rtscts). Sixteen ranks each sending every other 200 messages at
// once kept probes queued for over a minute, and a probe timed from its
// issue then gave up peers that were there (issue 22's notes).
// Either failure ends everything that waits on that peer with an error
// completion and lets go of its slots and spills: no send or receive hangs
// on a dead peer. A receive posted for a message from it still waits, as
// it would for a live peer that never sends.
//
// A long message whose data has begun to move (the START event of a pull's
// REPLY, of the peer's pull of our buffer, of a resend) no longer waits on
// the peer: the transport ends it, with PTL_NI_FAIL if the node dies. It
// is not probed for, and it must not be: a probe can wait in the
// transport behind bulk data, and megabytes under load take longer than
// the timeout.
#include <algorithm>
#include <chrono>
#include <unordered_set>

#include "endpoint.h"
#include "md.h"

namespace ptl::ofi {

namespace {

// Match bits of the probe entry: above every cookie a request names (31
// bits), so requests never match it.
constexpr ptl_match_bits_t kProbeBits = 1ULL << 63;

uint64_t NowMs() {
  const auto t = std::chrono::steady_clock::now().time_since_epoch();
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(t).count());
}

// Calls fn on every Waiting of the endpoint's state.
template <typename Fn>
void ForEachWaiting(std::unordered_map<uint64_t, std::unique_ptr<Op>>& ops,
                    std::vector<BounceSlot>& slots, std::unordered_map<uint32_t, Spill>& spills,
                    Fn fn) {
  for (auto& [id, op] : ops) fn(op->wait);
  for (BounceSlot& s : slots)
    if (s.busy) fn(s.wait);
  for (auto& [cookie, sp] : spills) fn(sp.wait);
}

}  // namespace

// The entry probes hit: zero bytes, ACKs, no events, in front of the
// request entry (which matches every cookie and takes puts only). It also
// answers gets: the probe of a provider before the ACKed put.
int Endpoint::AttachProbeEntry(ptl_pt_index_t request_pt) {
  int rc = PtlMEAttach(ni(), request_pt, {PTL_NID_ANY, PTL_PID_ANY}, kProbeBits, 0, PTL_RETAIN,
                       PTL_INS_AFTER, &probe_me_);
  if (rc != PTL_OK) return rc;
  ptl_handle_md_t md;
  rc = PtlMDAttach(
      probe_me_,
      MakeMd(nullptr, 0, PTL_MD_THRESH_INF,
             PTL_MD_OP_PUT | PTL_MD_OP_GET | PTL_MD_EVENT_START_DISABLE | PTL_MD_EVENT_END_DISABLE,
             0, PTL_EQ_NONE),
      PTL_RETAIN, &md);
  if (rc != PTL_OK) {
    PtlMEUnlink(probe_me_);
    probe_me_ = PTL_INVALID_HANDLE;
  }
  return rc;
}

bool Endpoint::Waits() {
  std::lock_guard lock(mutex_);
  bool any = false;
  ForEachWaiting(ops_, slots_, spills_, [&](const Waiting& w) { any = any || w.since_ms; });
  return any;
}

void Endpoint::StartWaiting(Waiting* w, ptl_process_id_t id, unsigned ep) {
  w->peer.nid = id.nid;
  w->peer.pid = static_cast<uint16_t>(id.pid);
  w->peer.ep = static_cast<uint8_t>(ep);
  w->since_ms = NowMs();
}

// Called with the lock held on every progress; does its work a few times
// per interval.
void Endpoint::Watch() {
  const uint64_t now = NowMs();
  if (now < next_watch_ms_) return;
  next_watch_ms_ = now + WatchPeriodMs(limits_);
  FreeReleasedSpills();  // an END event may have come before the kernel let go
  std::vector<Op*> ending;
  for (auto& [id, op] : ops_)
    if (op->gone_err) ending.push_back(op.get());
  for (Op* op : ending) FinishGone(op);

  std::vector<Address> gone;
  for (const auto& [key, probe] : probes_)
    if (probe.landed_ms && now - probe.landed_ms >= limits_.probe_timeout_ms)
      gone.push_back(Unpack(key));
  for (const Address& peer : gone) PeerGone(peer, FI_ETIMEDOUT);

  std::unordered_set<fi_addr_t> due;
  ForEachWaiting(ops_, slots_, spills_, [&](const Waiting& w) {
    if (w.since_ms && now - w.since_ms >= limits_.probe_interval_ms &&
        !probes_.contains(Pack(w.peer)))
      due.insert(Pack(w.peer));
  });
  for (fi_addr_t key : due) SendProbe(Unpack(key));
}

void Endpoint::SendProbe(const Address& peer) {
  Probe p;
  p.seq = next_probe_seq_++ & (kProbeUserBit - 1);
  // Threshold 2: the put and its ACK (an ACK finding the MD inactive is
  // dropped); unlinked by the ACK, or by PeerGone.
  int rc =
      PtlMDBind(ni(), MakeMd(nullptr, 0, 2, PTL_MD_EVENT_START_DISABLE, kProbeUserBit | p.seq, eq_),
                PTL_UNLINK, &p.md);
  if (rc == PTL_OK) {
    const auto pt = static_cast<ptl_pt_index_t>(peer.ep * kPtsPerEndpoint + kPtRequest);
    rc = PtlPut(p.md, PTL_ACK_REQ, {peer.nid, peer.pid}, pt, 0, kProbeBits, 0, 0);
    if (rc != PTL_OK) PtlMDUnlink(p.md);
  }
  if (rc != PTL_OK) {
    Fail("probing a peer", rc);  // tried again at the next watch
    return;
  }
  probes_[Pack(peer)] = p;
}

void Endpoint::OnProbeEvent(const ptl_event_t& ev, uint64_t seq) {
  if (ev.type != PTL_EVENT_SEND_END && ev.type != PTL_EVENT_ACK) return;
  auto it = std::find_if(probes_.begin(), probes_.end(),
                         [seq](const auto& entry) { return entry.second.seq == seq; });
  if (it == probes_.end()) return;
  const Address peer = Unpack(it->first);
  if (ev.type == PTL_EVENT_SEND_END && ev.ni_fail_type == PTL_NI_OK) {
    it->second.landed_ms = NowMs();
    return;
  }
  if (ev.ni_fail_type != PTL_NI_OK) {
    PeerGone(peer, FI_EHOSTUNREACH);
    return;
  }
  probes_.erase(it);
  PeerAnswered(peer);
}

// The peer is there: what waits on it has a new interval before the next
// probe.
void Endpoint::PeerAnswered(const Address& peer) {
  const uint64_t now = NowMs();
  ForEachWaiting(ops_, slots_, spills_, [&](Waiting& w) {
    if (w.since_ms && w.peer == peer) w.since_ms = now;
  });
}

void Endpoint::PeerGone(const Address& peer, int err) {
  char name[64];
  FormatAddress(peer, name, sizeof(name));
  FI_WARN(Provider(), FI_LOG_EP_DATA, "endpoint %d: peer %s %s: failing what waits on it\n", index_,
          name, err == FI_EHOSTUNREACH ? "is unreachable" : "does not answer");
  if (auto it = probes_.find(Pack(peer)); it != probes_.end()) {
    PtlMDUnlink(it->second.md);
    probes_.erase(it);
  }
  std::vector<Op*> failed;
  for (auto& [id, op] : ops_)
    if (op->wait.since_ms && op->wait.peer == peer) failed.push_back(op.get());
  for (Op* op : failed) {
    op->wait.since_ms = 0;
    op->gone_err = err;
    FinishGone(op);
  }
  // A slot stays held: its ACK may yet come (a peer that only seemed gone)
  // and must not find the slot reused. Spills own their memory and MD.
  for (BounceSlot& s : slots_) {
    if (!s.busy || !s.wait.since_ms || !(s.wait.peer == peer)) continue;
    if (Op* op = FindOp(s.op)) Complete(op, 0, err, 0);
    s.op = 0;
    s.wait.since_ms = 0;
  }
  std::vector<uint32_t> spills;
  for (auto& [cookie, sp] : spills_)
    if (sp.wait.since_ms && sp.wait.peer == peer) spills.push_back(cookie);
  for (uint32_t cookie : spills) {
    if (Op* op = FindOp(spills_[cookie].op)) Complete(op, 0, err, 0);
    FreeSpill(cookie);
  }
}

namespace {

// Unlinks an ME or MD unless the kernel is using it; true if it is gone.
bool Unlink(ptl_handle_any_t* h, bool me) {
  if (*h == PTL_INVALID_HANDLE) return true;
  const int rc = me ? PtlMEUnlink(*h) : PtlMDUnlink(*h);
  if (rc == PTL_ME_IN_USE || rc == PTL_MD_IN_USE) return false;
  *h = PTL_INVALID_HANDLE;
  return true;
}

}  // namespace

// Lets go of an op's Portals objects: later events for them find nothing.
// False if the kernel still uses one (data moving): that one stays.
bool Endpoint::ReleaseOp(Op* op) {
  bool all = Unlink(&op->rndv_me, true);
  all = Unlink(&op->me, true) && all;
  return Unlink(&op->md, false) && all;
}

// An op whose peer was given up ends with its error once the kernel lets
// go of its buffer; until then an END event may still end it as usual.
void Endpoint::FinishGone(Op* op) {
  if (ReleaseOp(op)) Complete(op, 0, op->gone_err, 0);
}

}  // namespace ptl::ofi
