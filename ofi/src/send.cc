// SPDX-License-Identifier: BSD-3-Clause
// Sending (seed 004's short and long protocols on Portals 3.3):
//
// Eager (len <= eager_size): the data is copied into a slot of the bounce
// MD and put with an ACK requested. The send completes at SEND_END (the
// target's transport has it all); the slot is kept until the target's ACK,
// which comes from a posted receive or a heap block, i.e. once the data is
// in the receiver's memory. If the heap had no room, the message met the
// catch-all (no ACK) and the receiver asks for the data again once a
// receive takes it: a put to our request portal naming the slot's cookie,
// answered with the slot's data put to the receiver's resend portal.
//
// Long: the buffer is exposed for a get by the receiver on our rndv portal
// (match bits: the cookie, only for that receiver), then put whole. A posted
// receive takes it and ACKs: done, the exposure is withdrawn. Otherwise the
// catch-all kept its header and the receiver pulls the data when a receive
// takes it: done at GET_END.
#include <cstring>

#include "endpoint.h"
#include "md.h"

namespace ptl::ofi {

namespace {

// A slot's cookie: its index and a generation, so that a request for a
// slot already reused names nothing.
constexpr uint32_t SlotCookie(size_t slot, uint32_t generation) {
  return ((generation & 0x3fff) << 16) | static_cast<uint32_t>(slot);
}
static_assert((SlotCookie(65535, ~0U) & kSpillCookieBit) == 0);

}  // namespace

bool Endpoint::Lookup(fi_addr_t addr, Address* out) const {
  return av && addr != FI_ADDR_UNSPEC && av->Lookup(addr, out) && out->ep < kMaxEndpoints;
}

ssize_t Endpoint::Send(bool tagged, const void* buf, size_t len, fi_addr_t dest, uint64_t tag,
                       uint64_t data, bool has_data, void* context, uint64_t flags) {
  std::lock_guard lock(mutex_);
  if (!enabled_) return -FI_EOPBADSTATE;
  if (len > limits_.max_msg_size) return -FI_EMSGSIZE;
  if (len && !buf) return -FI_EINVAL;
  if (tag & ~kTagMask) return -FI_EINVAL;
  Address to;
  if (!Lookup(dest, &to)) return -FI_EINVAL;
  const ptl_process_id_t id{to.nid, to.pid};
  const auto pt =
      static_cast<ptl_pt_index_t>(to.ep * kPtsPerEndpoint + (tagged ? kPtTagged : kPtMsg));
  if (flags & FI_INJECT) {
    if (len > limits_.inject_size) return -FI_EMSGSIZE;
    return SendEager(to, id, pt, MatchBits(false, static_cast<unsigned>(index_), tag), 0, buf, len,
                     nullptr, has_data, data);
  }
  Op* op = NewOp();
  op->kind = Op::Kind::kSend;
  op->tagged = tagged;
  op->context = context;
  op->buf = const_cast<void*>(buf);
  op->len = len;
  op->tag = tag;
  op->user_flags = flags;
  op->report = !tx_selective || (flags & FI_COMPLETION);
  const bool is_long = len > limits_.eager_size;
  const uint64_t bits = MatchBits(is_long, static_cast<unsigned>(index_), tag);
  ssize_t rc = is_long ? SendLong(to, id, pt, bits, op, has_data, data)
                       : SendEager(to, id, pt, bits, 0, buf, len, op, has_data, data);
  if (rc) ops_.erase(op->id);
  return rc;
}

ssize_t Endpoint::SendEager(const Address& dest, ptl_process_id_t to, ptl_pt_index_t pt,
                            uint64_t bits, uint64_t, const void* buf, size_t len, Op* op,
                            bool has_data, uint64_t data) {
  if (free_slots_.empty()) {
    Drain(eq_, false);  // ACKs free slots
    if (free_slots_.empty()) return SendSpill(dest, pt, bits, buf, len, op, has_data, data);
  }
  const size_t slot = free_slots_.back();
  free_slots_.pop_back();
  BounceSlot& s = slots_[slot];
  s.generation++;
  s.busy = true;
  s.len = len;
  s.op = op ? op->id : 0;
  StartWaiting(&s.wait, to, dest.ep);
  const ptl_size_t offset = slot * limits_.eager_size;
  if (len) std::memcpy(bounce_.get() + offset, buf, len);
  const int rc = PtlPutRegion(bounce_md_, offset, len, PTL_ACK_REQ, to, pt, 0, bits, offset,
                              HdrData(has_data, SlotCookie(slot, s.generation), data));
  if (rc != PTL_OK) {
    FreeSlot(slot);
    return FromPtl(rc);
  }
  return 0;
}

ssize_t Endpoint::SendLong(const Address& dest, ptl_process_id_t to, ptl_pt_index_t pt,
                           uint64_t bits, Op* op, bool has_data, uint64_t data) {
  uint32_t cookie = next_cookie_++ & kCookieMask;
  if (!cookie) cookie = next_cookie_++ & kCookieMask;
  const auto rndv_pt = static_cast<ptl_pt_index_t>(index_ * kPtsPerEndpoint + kPtRndv);
  int rc = PtlMEAttach(ni(), rndv_pt, to, cookie, 0, PTL_UNLINK, PTL_INS_AFTER, &op->rndv_me);
  if (rc != PTL_OK) return FromPtl(rc);
  ptl_handle_md_t rndv_md;
  rc = PtlMDAttach(op->rndv_me,
                   MakeMd(op->buf, op->len, 1, PTL_MD_OP_GET, op->id, eq_),  // GET_START too
                   PTL_UNLINK, &rndv_md);
  // The put MD: its SEND_END and the ACK, if a posted receive sends one.
  if (rc == PTL_OK)
    rc = PtlMDBind(ni(), MakeMd(op->buf, op->len, 2, PTL_MD_EVENT_START_DISABLE, op->id, eq_),
                   PTL_UNLINK, &op->md);
  if (rc == PTL_OK)
    rc = PtlPut(op->md, PTL_ACK_REQ, to, pt, 0, bits, 0, HdrData(has_data, cookie, data));
  if (rc != PTL_OK) {
    ReleaseOp(op);
    return FromPtl(rc);
  }
  StartWaiting(&op->wait, to, dest.ep);
  return 0;
}

void Endpoint::FreeSlot(size_t slot) {
  BounceSlot& s = slots_[slot];
  if (!s.busy) return;
  s.busy = false;
  s.op = 0;
  s.wait.since_ms = 0;
  free_slots_.push_back(slot);
}

void Endpoint::OnBounceEvent(const ptl_event_t& ev) {
  const size_t slot = ev.offset / limits_.eager_size;
  if (slot >= slots_.size() || !slots_[slot].busy) return;
  BounceSlot& s = slots_[slot];
  const bool failed = ev.ni_fail_type != PTL_NI_OK;
  if (ev.type == PTL_EVENT_SEND_END) {
    if (Op* op = FindOp(s.op)) Complete(op, failed ? 0 : s.len, failed ? FI_EIO : 0, 0);
    s.op = 0;
    if (failed) FreeSlot(slot);  // no ACK will come
  } else if (ev.type == PTL_EVENT_ACK) {
    FreeSlot(slot);
  }
}

ssize_t Endpoint::SendSpill(const Address& dest, ptl_pt_index_t pt, uint64_t bits, const void* buf,
                            size_t len, Op* op, bool has_data, uint64_t data) {
  const ptl_process_id_t to{dest.nid, dest.pid};
  const uint32_t cookie = kSpillCookieBit | (next_spill_++ & (kSpillCookieBit - 1));
  Spill sp;
  sp.data.reset(new (std::nothrow) char[len ? len : 1]);
  if (!sp.data) return -FI_EAGAIN;
  if (len) std::memcpy(sp.data.get(), buf, len);
  sp.len = len;
  sp.op = op ? op->id : 0;
  StartWaiting(&sp.wait, to, dest.ep);
  int rc = PtlMDBind(ni(),
                     MakeMd(sp.data.get(), len, PTL_MD_THRESH_INF, PTL_MD_EVENT_START_DISABLE,
                            kSpillUserBit | cookie, eq_),
                     PTL_RETAIN, &sp.md);
  if (rc != PTL_OK) return rc == PTL_NO_SPACE ? -FI_EAGAIN : FromPtl(rc);
  const ptl_handle_md_t md = sp.md;
  spills_.emplace(cookie, std::move(sp));
  rc = PtlPut(md, PTL_ACK_REQ, to, pt, 0, bits, 0, HdrData(has_data, cookie, data));
  if (rc != PTL_OK) {
    FreeSpill(cookie);
    return FromPtl(rc);
  }
  return 0;
}

// Frees a spill's copy once the kernel no longer reads it. While a put of
// it is queued or in flight in the transport its MD is in use (PtlMDUnlink
// says PTL_MD_IN_USE), and the transport sends from these very pages: a
// put still queued when its peer was given up (PeerGone) goes out later.
// Freed then, the memory was reused by the allocator and the peer got its
// contents as the message (seen with 16 ranks). So the copy stays until an
// event of its MD, or the next watch, finds the unlink allowed.
void Endpoint::FreeSpill(uint32_t cookie) {
  auto it = spills_.find(cookie);
  if (it == spills_.end()) return;
  Spill& sp = it->second;
  sp.op = 0;
  sp.wait.since_ms = 0;
  if (PtlMDUnlink(sp.md) == PTL_MD_IN_USE) {
    sp.released = true;
    return;
  }
  spills_.erase(it);
}

// Each watch walks the spills anyway (liveness.cc): no count is kept.
void Endpoint::FreeReleasedSpills() {
  std::vector<uint32_t> cookies;
  for (const auto& [cookie, sp] : spills_)
    if (sp.released) cookies.push_back(cookie);
  for (uint32_t cookie : cookies) FreeSpill(cookie);
}

void Endpoint::OnSpillEvent(const ptl_event_t& ev, uint32_t cookie) {
  auto it = spills_.find(cookie);
  if (it == spills_.end()) return;
  Spill& sp = it->second;
  if (sp.released) {  // given up on: only waits for the kernel to let go
    FreeSpill(cookie);
    return;
  }
  const bool failed = ev.ni_fail_type != PTL_NI_OK;
  if (ev.type == PTL_EVENT_SEND_END) {
    if (Op* op = FindOp(sp.op)) Complete(op, failed ? 0 : sp.len, failed ? FI_EIO : 0, 0);
    sp.op = 0;
    if (failed) FreeSpill(cookie);
  } else if (ev.type == PTL_EVENT_ACK) {
    FreeSpill(cookie);
  }
}

// A receiver asks for the data of a message the heap had no room for.
void Endpoint::OnRequest(const ptl_event_t& ev) {
  if (ev.type != PTL_EVENT_PUT_END || ev.ni_fail_type != PTL_NI_OK) return;
  const auto cookie = static_cast<uint32_t>(ev.match_bits);
  const uint64_t requester_ep = ev.hdr_data;
  if (requester_ep >= kMaxEndpoints) return;
  const auto pt = static_cast<ptl_pt_index_t>(requester_ep * kPtsPerEndpoint + kPtResend);
  int rc;
  if (cookie & kSpillCookieBit) {
    auto it = spills_.find(cookie);
    rc = it == spills_.end()
             ? AnswerGone(ev.initiator, pt, cookie)
             : PtlPut(it->second.md, PTL_ACK_REQ, ev.initiator, pt, 0, cookie, 0, 0);
  } else {
    const size_t slot = cookie & 0xffff;
    if (slot >= slots_.size() || !slots_[slot].busy ||
        SlotCookie(slot, slots_[slot].generation) != cookie) {
      rc = AnswerGone(ev.initiator, pt, cookie);
    } else {
      const ptl_size_t offset = slot * limits_.eager_size;
      rc = PtlPutRegion(bounce_md_, offset, slots_[slot].len, PTL_ACK_REQ, ev.initiator, pt, 0,
                        cookie, offset, 0);
    }
  }
  if (rc != PTL_OK) Fail("resending a message", rc);
}

// The message a request names is not held any more: its receiver was
// given up (liveness.cc) and the copy freed. Saying so ends the receive
// with an error; silence would leave it waiting on a peer that answers
// every probe, for ever. A zero-byte put whose hdr_data no resend carries.
int Endpoint::AnswerGone(ptl_process_id_t requester, ptl_pt_index_t pt, uint32_t cookie) {
  return PtlPut(empty_md_, PTL_NO_ACK_REQ, requester, pt, 0, cookie, 0, kResendGone);
}

}  // namespace ptl::ofi
