// SPDX-License-Identifier: BSD-3-Clause
// Turning Portals events into protocol steps and completions. The kernel
// moves the data and writes the events while the application computes;
// the provider reads them when the application next calls it (a CQ read,
// a send, a receive).
#include <algorithm>

#include "endpoint.h"

namespace ptl::ofi {

Op* Endpoint::NewOp() {
  auto op = std::make_unique<Op>();
  op->id = next_op_id_++;
  Op* raw = op.get();
  ops_.emplace(raw->id, std::move(op));
  return raw;
}

Op* Endpoint::FindOp(uint64_t id) {
  auto it = ops_.find(id);
  return it == ops_.end() ? nullptr : it->second.get();
}

void Endpoint::Fail(const char* what, int rc) {
  FI_WARN(Provider(), FI_LOG_EP_DATA, "endpoint %d: %s: %s\n", index_, what, PtlErrorStr(rc));
}

void Endpoint::Progress() {
  std::lock_guard lock(mutex_);
  if (!enabled_) return;
  Drain(ueq_, true);
  Drain(eq_, false);
  Watch();
}

void Endpoint::Drain(ptl_handle_eq_t eq, bool unexpected_eq) {
  for (;;) {
    ptl_event_t ev;
    const int rc = PtlEQGet(eq, &ev);
    if (rc == PTL_EQ_EMPTY) return;
    if (rc == PTL_EQ_DROPPED) {
      // Events were overwritten: messages or completions are lost. The
      // EQs are sized for this not to happen (endpoint.cc); say it loudly.
      Fail(unexpected_eq ? "unexpected-message events lost" : "completion events lost", rc);
    } else if (rc != PTL_OK) {
      Fail("reading events", rc);
      return;
    }
    HandleEvent(ev, unexpected_eq);
  }
}

namespace {

bool IsStart(ptl_event_kind_t type) {
  return type == PTL_EVENT_GET_START || type == PTL_EVENT_PUT_START ||
         type == PTL_EVENT_REPLY_START;
}

}  // namespace

void Endpoint::HandleEvent(const ptl_event_t& ev, bool unexpected_eq) {
  const auto user = reinterpret_cast<uintptr_t>(ev.md.user_ptr);
  if (unexpected_eq) {
    if (user == kTagCatchAllTagged) {
      if (tagged_q_.OnCatchAllEvent(ev)) MatchArrival(tagged_q_);
    } else if (user == kTagCatchAllMsg) {
      if (msg_q_.OnCatchAllEvent(ev)) MatchArrival(msg_q_);
    } else if (auto* block = static_cast<HeapBlock*>(ev.md.user_ptr)) {
      if (block->queue->OnHeapEvent(ev, block)) MatchArrival(*block->queue);
    }
    return;
  }
  if (user & kProbeUserBit)
    OnProbeEvent(ev, user & ~kProbeUserBit);
  else if (user & kSpillUserBit)
    OnSpillEvent(ev, static_cast<uint32_t>(user & ~kSpillUserBit));
  else if (user == kTagBounce)
    OnBounceEvent(ev);
  else if (user == kTagRequest)
    OnRequest(ev);
  else if (Op* op = FindOp(user))
    OnOpEvent(ev, op);
}

void Endpoint::OnOpEvent(const ptl_event_t& ev, Op* op) {
  const bool failed = ev.ni_fail_type != PTL_NI_OK;
  if (IsStart(ev.type)) {
    // A long message's data moves (our pull's REPLY, the peer's pull of
    // our buffer, a resend): its END comes from the transport, with
    // PTL_NI_FAIL if the peer's node dies. The op no longer waits on the
    // peer alone, and no probe, which may queue behind this very data,
    // must time it out (liveness.cc).
    if (!failed) op->wait.since_ms = 0;
    return;
  }
  if (op->kind == Op::Kind::kSend) {
    switch (ev.type) {
      case PTL_EVENT_SEND_END:
        if (!failed) {
          if (op->gone_err) FinishGone(op);  // the put's data is out
          return;
        }
        break;
      case PTL_EVENT_ACK:  // a posted receive took it: withdraw the exposure
      case PTL_EVENT_GET_END:
        break;
      default:
        return;
    }
    if (op->rndv_me != PTL_INVALID_HANDLE && ev.type != PTL_EVENT_GET_END) PtlMEUnlink(op->rndv_me);
    if (ev.type != PTL_EVENT_ACK && op->md != PTL_INVALID_HANDLE) PtlMDUnlink(op->md);
    Complete(op, failed ? 0 : op->len, failed ? FI_EIO : 0, 0);
    return;
  }
  if (ev.type != PTL_EVENT_PUT_END && ev.type != PTL_EVENT_REPLY_END) return;
  if (ev.type == PTL_EVENT_PUT_END && !op->resend) {
    // A posted receive: the message is the event's.
    --posted_;
    op->msg_src = ev.initiator;
    op->msg_bits = ev.match_bits;
    op->msg_hdr = ev.hdr_data;
    op->rlength = ev.rlength;
  }
  if (failed) {
    Complete(op, 0, FI_EIO, 0);
    return;
  }
  if (op->resend && ev.hdr_data == kResendGone) {
    FI_WARN(Provider(), FI_LOG_EP_DATA,
            "endpoint %d: the sender of a message asked for again had given us up\n", index_);
    Complete(op, 0, FI_ECONNABORTED, 0);
    return;
  }
  const size_t got = ev.mlength;
  if (op->rlength > got)
    Complete(op, got, FI_ETRUNC, op->rlength - got);
  else
    Complete(op, got, 0, 0);
}

// Writes the op's completion (errors always; success if asked for) and
// forgets the op: later events for its MDs find nothing.
void Endpoint::Complete(Op* op, size_t len, int err, size_t olen) {
  Completion c;
  c.context = op->context;
  c.len = len;
  c.err = err;
  c.olen = olen;
  Cq* cq;
  if (op->kind == Op::Kind::kSend) {
    c.flags = FI_SEND | (op->tagged ? FI_TAGGED : FI_MSG);
    cq = tx_cq;
  } else {
    c.flags = FI_RECV | (op->tagged ? FI_TAGGED : FI_MSG);
    c.buf = op->buf;
    c.tag = op->tagged ? BitsTag(op->msg_bits) : 0;
    if (HdrHasData(op->msg_hdr)) {
      c.flags |= FI_REMOTE_CQ_DATA;
      c.data = HdrCqData(op->msg_hdr);
    }
    if (av) {
      Address from;
      from.nid = op->msg_src.nid;
      from.pid = static_cast<uint16_t>(op->msg_src.pid);
      from.ep = static_cast<uint8_t>(BitsEndpoint(op->msg_bits));
      c.src = av->Reverse(from);
    }
    cq = rx_cq;
  }
  if (cq && (err || op->report)) cq->Push(c);
  if (Cntr* cntr = op->kind == Op::Kind::kSend ? send_cntr : recv_cntr)
    ++(err ? cntr->errors : cntr->value);
  ops_.erase(op->id);
}

// Locks the endpoints in address order (no deadlock with another waiter),
// waits on all their EQs at once and handles the one event it gets.
void WaitForEvent(std::vector<Endpoint*> eps, int ms) {
  if (eps.empty()) return;
  std::sort(eps.begin(), eps.end());
  std::vector<ptl_handle_eq_t> eqs;
  for (Endpoint* ep : eps) {
    ep->mutex().lock();
    eqs.push_back(ep->eq());
    eqs.push_back(ep->ueq());
  }
  ptl_event_t ev;
  int which = -1;
  const int rc = PtlEQPoll(eqs.data(), static_cast<int>(eqs.size()), ms, &ev, &which);
  if ((rc == PTL_OK || rc == PTL_EQ_DROPPED) && which >= 0)
    eps[static_cast<size_t>(which) / 2]->HandleEvent(ev, which % 2 == 1);
  for (Endpoint* ep : eps) ep->mutex().unlock();
}

}  // namespace ptl::ofi
