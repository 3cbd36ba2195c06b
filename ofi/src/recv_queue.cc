// SPDX-License-Identifier: BSD-3-Clause
// A receive queue's portal (seed 004, figure 1):
//
//   [posted receive]...[marker]  [heap block]...[heap block]  [catch-all]
//    PtlMEInsert before            LONG clear, data kept         any bits,
//    the marker, in order          (MAX_SIZE: a block takes      header only,
//                                  a message only whole)         no ACK
//
// The marker has no MD, so matching skips it: it only fixes where posted
// receives go while heap blocks come and go behind it. A block that fills
// up unlinks itself; once every message in it has been received it is
// attached again, last among the blocks. All heap and catch-all events go
// to the endpoint's unexpected EQ, in arrival order, which is the order
// unexpected messages are matched in. Held receives (small ones, never
// posted: recv.cc) take their messages from there as they arrive.
#include <cstring>

#include "endpoint.h"
#include "md.h"

namespace ptl::ofi {

namespace {

// Messages one heap block takes before it is replaced: bounds the events a
// block can put in the unexpected EQ however small the messages are.
constexpr int kBlockMessages = 512;

constexpr ptl_process_id_t kAnyone{PTL_NID_ANY, PTL_PID_ANY};

Unexpected FromEvent(const ptl_event_t& ev) {
  Unexpected u;
  u.src = ev.initiator;
  u.bits = ev.match_bits;
  u.hdr = ev.hdr_data;
  u.rlength = ev.rlength;
  return u;
}

}  // namespace

int RecvQueue::Setup(ptl_pt_index_t pt, const Limits& limits) {
  pt_ = pt;
  eager_size_ = limits.eager_size;
  const ptl_handle_ni_t ni = ep_->ni();
  // Marker: never matches (no MD); posted receives go in front of it.
  int rc = PtlMEAttach(ni, pt, kAnyone, 0, 0, PTL_RETAIN, PTL_INS_AFTER, &marker_);
  if (rc != PTL_OK) return rc;
  rc = PtlMEAttach(ni, pt, kAnyone, 0, ~0ULL, PTL_RETAIN, PTL_INS_AFTER, &catch_all_me_);
  if (rc != PTL_OK) return rc;
  ptl_handle_md_t md;
  rc = PtlMDAttach(
      catch_all_me_,
      MakeMd(nullptr, 0, PTL_MD_THRESH_INF,
             PTL_MD_OP_PUT | PTL_MD_TRUNCATE | PTL_MD_ACK_DISABLE | PTL_MD_EVENT_START_DISABLE,
             tagged_ ? kTagCatchAllTagged : kTagCatchAllMsg, ep_->ueq()),
      PTL_RETAIN, &md);
  if (rc != PTL_OK) return rc;
  for (size_t i = 0; i < limits.heap_blocks; ++i) {
    auto block = std::make_unique<HeapBlock>();
    block->mem.reset(new (std::nothrow) char[limits.heap_block]);
    if (!block->mem) return PTL_NO_SPACE;
    block->size = limits.heap_block;
    block->queue = this;
    rc = AttachBlock(block.get());
    if (rc != PTL_OK) return rc;
    blocks_.push_back(std::move(block));
  }
  return PTL_OK;
}

void RecvQueue::Teardown() {
  // PtlNIFini (the domain's close) frees what is left; unlinking here lets
  // an endpoint close while its domain lives on.
  for (auto& b : blocks_)
    if (b->attached) ep_->domain()->Release(b->md, std::move(b->mem));
  if (catch_all_me_ != PTL_INVALID_HANDLE) PtlMEUnlink(catch_all_me_);
  if (marker_ != PTL_INVALID_HANDLE) PtlMEUnlink(marker_);
  catch_all_me_ = marker_ = PTL_INVALID_HANDLE;
  unexpected_.clear();
  held_.clear();
}

int RecvQueue::AttachBlock(HeapBlock* block) {
  ptl_handle_me_t me;
  int rc = PtlMEInsert(catch_all_me_, kAnyone, 0, ~kLongBit, PTL_UNLINK, PTL_INS_BEFORE, &me);
  if (rc != PTL_OK) return rc;
  ptl_md_t md = MakeMd(block->mem.get(), block->size, kBlockMessages,
                       PTL_MD_OP_PUT | PTL_MD_MAX_SIZE | PTL_MD_EVENT_START_DISABLE,
                       reinterpret_cast<uintptr_t>(block), ep_->ueq());
  md.max_size = eager_size_;
  rc = PtlMDAttach(me, md, PTL_UNLINK, &block->md);
  if (rc != PTL_OK) {
    PtlMEUnlink(me);
    return rc;
  }
  block->attached = true;
  return PTL_OK;
}

bool RecvQueue::OnHeapEvent(const ptl_event_t& ev, HeapBlock* block) {
  if (ev.type == PTL_EVENT_UNLINK) {
    block->attached = false;
    if (!block->live) AttachBlock(block);
    return false;
  }
  if (ev.type != PTL_EVENT_PUT_END || ev.ni_fail_type != PTL_NI_OK) return false;
  Unexpected u = FromEvent(ev);
  u.block = block;
  u.offset = ev.offset;
  ++block->live;
  unexpected_.push_back(u);
  return true;
}

bool RecvQueue::OnCatchAllEvent(const ptl_event_t& ev) {
  if (ev.type != PTL_EVENT_PUT_END || ev.ni_fail_type != PTL_NI_OK) return false;
  unexpected_.push_back(FromEvent(ev));
  return true;
}

void RecvQueue::Release(HeapBlock* block) {
  if (--block->live == 0 && !block->attached) AttachBlock(block);
}

namespace {

bool Takes(const Op& op, const Unexpected& u) {
  if (u.claimed_by) return false;
  if (op.from.nid != PTL_NID_ANY && op.from.nid != u.src.nid) return false;
  if (op.from.pid != PTL_PID_ANY && op.from.pid != u.src.pid) return false;
  return Matches(op.match, u.bits);
}

bool SameSourcePossible(ptl_process_id_t a, ptl_process_id_t b) {
  return (a.nid == PTL_NID_ANY || b.nid == PTL_NID_ANY || a.nid == b.nid) &&
         (a.pid == PTL_PID_ANY || b.pid == PTL_PID_ANY || a.pid == b.pid);
}

}  // namespace

std::list<Unexpected>::iterator RecvQueue::Find(const Op& op) {
  for (auto it = unexpected_.begin(); it != unexpected_.end(); ++it)
    if (Takes(op, *it)) return it;
  return unexpected_.end();
}

Op* RecvQueue::TakeHeldFor(const Unexpected& u) {
  for (auto it = held_.begin(); it != held_.end(); ++it) {
    if (!Takes(**it, u)) continue;
    Op* op = *it;
    held_.erase(it);
    return op;
  }
  return nullptr;
}

bool RecvQueue::HeldOverlaps(const Op& op) const {
  for (const Op* h : held_) {
    const uint64_t free_bits = h->match.ignore | op.match.ignore;
    if (SameSourcePossible(h->from, op.from) && ((h->match.bits ^ op.match.bits) & ~free_bits) == 0)
      return true;
  }
  return false;
}

std::list<Unexpected>::iterator RecvQueue::FindClaimed(void* context) {
  for (auto it = unexpected_.begin(); it != unexpected_.end(); ++it)
    if (it->claimed_by == context) return it;
  return unexpected_.end();
}

}  // namespace ptl::ofi
