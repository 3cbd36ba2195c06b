// SPDX-License-Identifier: BSD-3-Clause
// Receiving. A receive first looks among the unexpected messages; if none
// matches it is posted as an ME in front of the heap with its MD, by
// PtlMEMDPost, which creates them only if the unexpected EQ is empty:
// otherwise a message may have reached the heap after the search, so the EQ
// is drained, the search repeated, and the post tried again. (The Portals
// 3.3 technique, seed 004 "atomic", in one call: insert, attach an inactive
// MD, arm it with PtlMDUpdate testing the EQ.)
//
// A small receive (at most recv_match_size bytes) is not posted: it is
// held here, and its message, which then lands in the heap, is matched
// and copied out when the provider reads the unexpected EQ. Copying a few
// KiB costs less than the system call and the ME and MD a post creates
// and destroys. Matching order is kept: a message goes to the receive
// posted first of those that would take it, so a receive that some held
// receive could take a message of is held too, whatever its size.
//
// An unexpected message is delivered by what it left behind: data in a
// heap block (copied out), a long message's header (its data pulled from
// the sender with PtlGet), or a short message's header when the heap was
// full (its data asked for again, into an ME on our resend portal).
#include <p3nal_linux.h>

#include <cstring>
#include <iterator>

#include "endpoint.h"
#include "md.h"

namespace ptl::ofi {

namespace {

ptl_md_t RecvMd(void* start, size_t length, int threshold, uint64_t id, ptl_handle_eq_t eq) {
  return MakeMd(start, length, threshold,
                PTL_MD_OP_PUT | PTL_MD_TRUNCATE | PTL_MD_EVENT_START_DISABLE, id, eq);
}

}  // namespace

ssize_t Endpoint::Recv(bool tagged, void* buf, size_t len, fi_addr_t src, uint64_t tag,
                       uint64_t ignore, void* context, uint64_t flags) {
  std::lock_guard lock(mutex_);
  if (!enabled_ || !rx_cq) return -FI_EOPBADSTATE;
  if (len && !buf && !(flags & (FI_PEEK | FI_DISCARD))) return -FI_EINVAL;
  if (flags & FI_MULTI_RECV) return -FI_EINVAL;
  Address from;
  // FI_CLAIM names its message by context alone.
  const bool any = src == FI_ADDR_UNSPEC || ((flags & FI_CLAIM) && !(flags & FI_PEEK));
  if (!any && !Lookup(src, &from)) return -FI_EINVAL;
  if (!tagged) tag = ignore = 0;
  Op* op = NewOp();
  op->kind = Op::Kind::kRecv;
  op->tagged = tagged;
  op->context = context;
  op->buf = buf;
  op->len = len;
  op->user_flags = flags;
  op->report = !rx_selective || (flags & FI_COMPLETION);
  op->match = MakeRecvMatch(tag, ignore, any, from.ep);
  if (!any) op->from = {from.nid, from.pid};
  RecvQueue& q = tagged ? tagged_q_ : msg_q_;
  const ssize_t rc = (flags & (FI_PEEK | FI_CLAIM)) ? Peek(q, op, flags) : PostRecv(q, op);
  if (rc) ops_.erase(op->id);
  return rc;
}

ssize_t Endpoint::PostRecv(RecvQueue& q, Op* op) {
  Drain(ueq_, true);
  auto it = q.Find(*op);
  if (it != q.unexpected().end()) return FromPtl(Deliver(q, it, op));
  if (op->len <= limits_.recv_match_size || q.HeldOverlaps(*op)) {
    op->held = true;
    q.Hold(op);
    return 0;
  }
  if (posted_ >= kMaxPosted) return -FI_EAGAIN;

  const ptl_md_t md = RecvMd(op->buf, op->len, 1, op->id, eq_);
  for (;;) {
    const int rc = PtlMEMDPost(q.marker(), op->from, op->match.bits, op->match.ignore, PTL_UNLINK,
                               PTL_INS_BEFORE, md, PTL_UNLINK, ueq_, &op->me, &op->md);
    if (rc == PTL_OK) break;
    if (rc != PTL_MD_NO_UPDATE) return FromPtl(rc);
    Drain(ueq_, true);
    it = q.Find(*op);
    if (it != q.unexpected().end()) return FromPtl(Deliver(q, it, op));
  }
  ++posted_;
  return 0;
}

// The message just added to q's unexpected list goes to the first held
// receive that takes it, if any.
void Endpoint::MatchArrival(RecvQueue& q) {
  const auto it = std::prev(q.unexpected().end());
  Op* op = q.TakeHeldFor(*it);
  if (!op) return;
  op->held = false;
  const int rc = Deliver(q, it, op);
  if (rc != PTL_OK) {
    Fail("delivering a message to a held receive", rc);
    Complete(op, 0, FI_EIO, 0);
  }
}

int Endpoint::Deliver(RecvQueue& q, std::list<Unexpected>::iterator it, Op* op) {
  const Unexpected u = *it;
  q.unexpected().erase(it);
  op->msg_src = u.src;
  op->msg_bits = u.bits;
  op->msg_hdr = u.hdr;
  op->rlength = u.rlength;
  op->me = op->md = PTL_INVALID_HANDLE;
  if (u.block) {
    const size_t n = std::min(op->len, u.rlength);
    if (n) std::memcpy(op->buf, u.block->mem.get() + u.offset, n);
    q.Release(u.block);
    if (n < u.rlength)
      Complete(op, n, FI_ETRUNC, u.rlength - n);
    else
      Complete(op, n, 0, 0);
    return PTL_OK;
  }
  return BitsLong(u.bits) ? Pull(u, op) : RequestResend(u, op);
}

// Long protocol: get the data from the sender's rndv portal.
int Endpoint::Pull(const Unexpected& u, Op* op) {
  const size_t n = std::min(op->len, u.rlength);
  ptl_md_t md = RecvMd(op->buf, n, 1, op->id, eq_);
  md.options = 0;  // REPLY_START: the transport carries it from there
  int rc = PtlMDBind(ni(), md, PTL_UNLINK, &op->md);
  if (rc != PTL_OK) return rc;
  const auto pt = static_cast<ptl_pt_index_t>(BitsEndpoint(u.bits) * kPtsPerEndpoint + kPtRndv);
  rc = PtlGetRegion(op->md, 0, n, u.src, pt, 0, HdrCookie(u.hdr), 0);
  if (rc != PTL_OK) {
    PtlMDUnlink(op->md);
    op->md = PTL_INVALID_HANDLE;
    return rc;
  }
  StartWaiting(&op->wait, u.src, BitsEndpoint(u.bits));
  return PTL_OK;
}

// The heap had no room: ask the sender for the data, into our resend portal.
int Endpoint::RequestResend(const Unexpected& u, Op* op) {
  op->resend = true;
  const uint32_t cookie = HdrCookie(u.hdr);
  const auto mine = static_cast<ptl_pt_index_t>(index_ * kPtsPerEndpoint + kPtResend);
  int rc = PtlMEAttach(ni(), mine, u.src, cookie, 0, PTL_UNLINK, PTL_INS_AFTER, &op->me);
  if (rc != PTL_OK) return rc;
  ptl_md_t md = RecvMd(op->buf, op->len, 1, op->id, eq_);
  md.options &= ~PTL_MD_EVENT_START_DISABLE;  // PUT_START, as for a pull
  rc = PtlMDAttach(op->me, md, PTL_UNLINK, &op->md);
  if (rc == PTL_OK) {
    const auto theirs =
        static_cast<ptl_pt_index_t>(BitsEndpoint(u.bits) * kPtsPerEndpoint + kPtRequest);
    rc = PtlPut(empty_md_, PTL_NO_ACK_REQ, u.src, theirs, 0, cookie, 0,
                static_cast<uint64_t>(index_));
  }
  if (rc != PTL_OK) {
    PtlMEUnlink(op->me);
    op->me = op->md = PTL_INVALID_HANDLE;
    return rc;
  }
  StartWaiting(&op->wait, u.src, BitsEndpoint(u.bits));
  return PTL_OK;
}

// FI_PEEK (with FI_CLAIM: reserve the message for a later FI_CLAIM receive;
// with FI_DISCARD: drop it), or FI_CLAIM alone: receive the message this
// context claimed (FI_DISCARD: drop it).
ssize_t Endpoint::Peek(RecvQueue& q, Op* op, uint64_t flags) {
  Drain(ueq_, true);
  if (!(flags & FI_PEEK)) {
    auto it = q.FindClaimed(op->context);
    if (it == q.unexpected().end()) return -FI_EINVAL;  // nothing claimed by it
    if (!(flags & FI_DISCARD)) return FromPtl(Deliver(q, it, op));
    if (it->block) q.Release(it->block);
    op->msg_src = it->src;
    op->msg_bits = it->bits;
    op->msg_hdr = it->hdr;
    q.unexpected().erase(it);
    op->report = true;
    Complete(op, 0, 0, 0);
    return 0;
  }
  auto it = q.Find(*op);
  op->report = true;
  if (it == q.unexpected().end()) {
    Complete(op, 0, FI_ENOMSG, 0);
    return 0;
  }
  op->msg_src = it->src;
  op->msg_bits = it->bits;
  op->msg_hdr = it->hdr;
  const size_t rlength = it->rlength;
  if (flags & FI_DISCARD) {
    if (it->block) q.Release(it->block);
    q.unexpected().erase(it);
  } else if (flags & FI_CLAIM) {
    it->claimed_by = op->context;
  }
  op->buf = nullptr;
  Complete(op, rlength, 0, 0);
  return 0;
}

ssize_t Endpoint::Cancel(void* context) {
  std::lock_guard lock(mutex_);
  for (auto& [id, op] : ops_) {
    if (op->kind != Op::Kind::kRecv || op->context != context) continue;
    if (op->held) {
      (op->tagged ? tagged_q_ : msg_q_).Forget(op.get());
      Complete(op.get(), 0, FI_ECANCELED, 0);
      return 0;
    }
    if (op->me == PTL_INVALID_HANDLE || op->resend) return 0;  // data is on its way
    // Unlinking fails if a message is being deposited: then it completes.
    if (PtlMEUnlink(op->me) != PTL_OK) return 0;
    op->me = op->md = PTL_INVALID_HANDLE;
    --posted_;
    Complete(op.get(), 0, FI_ECANCELED, 0);
    return 0;
  }
  return -FI_ENOENT;
}

}  // namespace ptl::ofi
