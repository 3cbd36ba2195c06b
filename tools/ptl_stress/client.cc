// SPDX-License-Identifier: BSD-3-Clause
// ptl_stress client: a stream of puts (with and without ACK), gets and
// getputs to one server, each verified, under flow control.
//
// Flow control. The client mirrors the server's receive ring for it with a
// RingAllocator over its own send ring of the same size: a put of n bytes
// goes from local offset o to remote offset o, and the bytes are reused
// only when the put is complete: its SEND_END, its ACK if it asked for one,
// and a credit from the server saying the put was verified. At most
// --window operations are in flight. So a put can never find the ring
// full; if one is lost, no credit comes and the wait ends as a reported
// hang, never silently.
//
// Verification on this side: SEND_END and ACK lengths, gets (the reply
// must hold the server's pattern at the requested offset; the landing
// bytes are first set to the complement of what is expected), getputs (the
// old bytes must be what this client's previous getput left: a mirror of
// the area is kept), duplicate or missing events, and the server's own
// REPORT on what it received.
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>

#include "ptl_stress.h"

namespace ptl_stress {
namespace {

enum Kind : uint32_t {
  kSendMd = 1,
  kReplyMd = 2,
  kGpGetMd = 3,
  kGpPutMd = 4,
  kCreditMd = 5,
  kMailboxMd = 6,
  kCtrlOut = 7,
};

enum class Op { kPut, kAckPut, kGet, kGetPut };

struct PutOp {
  uint64_t seq, off, len, end;
  PutLabel label;  // match bits and header data
  bool ack;
  bool ack_seen = false;
  bool need_credit = true;
  bool held = false;  // --inject reorder: sent after the next one
  int send_ends = 1;  // SEND_ENDs still to come
  bool sent = false;  // a SEND_END came (spec 8.5: before the ACK)
  int64_t issued_ns;
};

struct GetOp {
  uint64_t seq, off, roff, len, end;
  bool done = false;
  int64_t issued_ns;
};

struct GpOp {
  uint64_t seq, len;
  bool sent = false, replied = false;
  std::vector<uint8_t> expect;  // the old bytes the reply must carry
  int64_t issued_ns;
};

// Finds the op of a 16-bit sequence number among those in flight.
template <typename Q>
auto Find(Q& q, uint64_t next, uint16_t seq16) -> typename Q::value_type* {
  if (q.empty()) return nullptr;
  uint64_t base = q.front().seq;
  uint64_t cand = base + ((seq16 - base) & 0xffff);
  if (cand >= next) return nullptr;
  return &q[cand - base];
}

class Client {
 public:
  explicit Client(const Options& o)
      : o_(o),
        rng_(Mix64(o.seed) ^ Mix64(uint64_t{o.id} + 0x636c69656e74)),
        sizes_(o.min_size, o.max_size, o.sizes),
        send_alloc_(o.RingBytes()),
        reply_alloc_(o.RingBytes()) {}
  int Run();

 private:
  void Setup();
  void Connect();
  void RunTraffic();
  void Finish();
  int Report();

  void Drain();
  void WaitOne(int64_t ms);
  void Handle(const ptl_event_t& ev, int rc);
  void OnPutSendEnd(const ptl_event_t& ev);
  void OnAck(const ptl_event_t& ev);
  void OnGetReply(const ptl_event_t& ev);
  void OnGpReply(const ptl_event_t& ev);
  void OnGpSendEnd(const ptl_event_t& ev);
  void OnCredit(const ptl_event_t& ev);
  void OnCtrl(const ptl_event_t& ev);
  void Unexpected(const ptl_event_t& ev, const char* why);
  void Fatal(const std::string& why);

  void PickNext();
  bool MoreToIssue() const;
  bool CanIssue() const;
  void Issue();
  void IssuePut(bool ack);
  void SendPut(const PutOp& op, bool ack);
  void IssueGet();
  void IssueGetPut();
  void FlushHeld();
  void Release();
  std::size_t InFlight() const { return puts_.size() + gets_.size() + (gp_ ? 1 : 0); }
  int64_t OldestIssue() const;
  std::string Waiting() const;
  void Progress();

  Options o_;
  ptl_handle_ni_t ni_ = PTL_INVALID_HANDLE;
  ptl_handle_eq_t eq_ = PTL_EQ_NONE;
  ptl_process_id_t self_{};
  ptl_ni_limits_t limits_{};
  uint64_t nonce_ = 0;
  Rng rng_;
  SizeDist sizes_;
  Mailbox mailbox_;
  CtrlSender ctrl_;
  uint64_t drops_base_ = 0;
  std::string fatal_;
  int64_t last_event_ns_ = 0, t_start_ = 0, t_end_ = 0, progress_ns_ = 0;

  // From the server.
  std::optional<CtrlMsg> welcome_, report_;
  uint64_t get_bytes_ = 0, get_key_ = 0, gp_bytes_ = 0;
  std::vector<uint8_t> mirror_;  // what the server's getput area holds

  Buffer send_ring_, reply_ring_, gp_send_, gp_reply_;
  ptl_handle_md_t send_md_ = PTL_INVALID_HANDLE, reply_md_ = PTL_INVALID_HANDLE;
  ptl_handle_md_t gp_get_md_ = PTL_INVALID_HANDLE;
  RingAllocator send_alloc_, reply_alloc_;

  std::deque<PutOp> puts_;
  std::deque<GetOp> gets_;
  std::optional<GpOp> gp_;
  uint64_t next_put_ = 0, next_get_ = 0, next_gp_ = 0;
  uint64_t credited_ = 0;  // every put below it is accounted for at the server
  std::optional<uint64_t> held_;
  uint64_t issued_ = 0, acks_requested_ = 0, credits_ = 0;
  Traffic sent_;
  Errors errors_;

  Op next_op_ = Op::kPut;
  uint64_t next_len_ = 0;
};

int Client::Run() {
  Setup();
  Connect();
  if (fatal_.empty()) RunTraffic();
  if (fatal_.empty()) Finish();
  return Report();
}

void Client::Fatal(const std::string& why) {
  if (!fatal_.empty()) return;
  fatal_ = why;
  Complain("%s", why.c_str());
}

void Client::Setup() {
  SetWho("client " + std::to_string(o_.id));
  int max_ifaces;
  Ptl("PtlInit", PtlInit(&max_ifaces));
  Ptl("PtlNIInit", PtlNIInit(PTL_IFACE_LINUX0 + o_.iface, PTL_PID_ANY, nullptr, &limits_, &ni_));
  Ptl("PtlGetId", PtlGetId(ni_, &self_));
  nonce_ = Mix64(static_cast<uint64_t>(NowNs()) ^ (uint64_t{self_.pid} << 32) ^ getpid());
  Ptl("PtlEQAlloc", PtlEQAlloc(ni_, 4 * uint64_t{o_.window} + 64, PTL_EQ_HANDLER_NONE, &eq_));

  uint64_t ring = o_.RingBytes();
  send_ring_ = Buffer(ring);
  reply_ring_ = Buffer(ring);
  gp_send_ = Buffer(64);
  gp_reply_ = Buffer(64);
  if (!send_ring_.ok() || !reply_ring_.ok() || !gp_send_.ok() || !gp_reply_.ok())
    DieWith(kExitUsage, "cannot allocate two rings of %s", Bytes(ring).c_str());
  auto bind = [&](Buffer& b, uint64_t len, uint32_t kind, const char* what) {
    ptl_handle_md_t h;
    int rc =
        PtlMDBind(ni_, MakeMd(b.data(), len, PTL_MD_EVENT_START_DISABLE, eq_, Tag2Ptr(kind, 0)),
                  PTL_RETAIN, &h);
    if (rc == PTL_MD_ILLEGAL)
      DieWith(kExitUsage,
              "PtlMDBind (%s, %s): PTL_MD_ILLEGAL: cannot pin it; raise RLIMIT_MEMLOCK (ulimit -l) "
              "or use a smaller --ring",
              what, Bytes(len).c_str());
    Ptl("PtlMDBind", rc);
    return h;
  };
  send_md_ = bind(send_ring_, ring, kSendMd, "send ring");
  reply_md_ = bind(reply_ring_, ring, kReplyMd, "reply ring");
  gp_get_md_ = bind(gp_reply_, 64, kGpGetMd, "getput reply");

  // Credits: zero-length puts from the server, the count in hdr_data.
  ptl_handle_me_t me;
  ptl_handle_md_t md;
  Ptl("PtlMEAttach (credits)",
      PtlMEAttach(ni_, kPtCredit, o_.server, MatchBits(Tag::kCredit, o_.id, 0, 0), kIgnoreOpFields,
                  PTL_RETAIN, PTL_INS_AFTER, &me));
  Ptl("PtlMDAttach (credits)",
      PtlMDAttach(
          me,
          MakeMd(nullptr, 0, PTL_MD_OP_PUT | PTL_MD_EVENT_START_DISABLE | PTL_MD_ACK_DISABLE, eq_,
                 Tag2Ptr(kCreditMd, 0)),
          PTL_RETAIN, &md));
  mailbox_.Init(ni_, eq_, o_.server, kMailboxMd);
  ctrl_.Init(ni_, eq_, kCtrlOut);
  drops_base_ = DropCount(ni_);
  last_event_ns_ = NowNs();
}

void Client::Connect() {
  CtrlMsg h = MakeCtrl(CtrlType::kHello, o_.id, nonce_);
  h.body.hello = Hello{o_.seed, o_.window, send_ring_.size(), sizes_.max(), o_.count};
  int64_t deadline = NowNs() + int64_t{o_.timeout_ms} * 1000000;
  int64_t retry_ms = 100;
  while (!welcome_ && fatal_.empty()) {
    int rc = ctrl_.Send(o_.server, h);
    if (rc != PTL_OK) {
      errors_.failures++;
      return Fatal(std::string("sending HELLO: ") + PtlErrorStr(rc));
    }
    int64_t next = std::min(NowNs() + retry_ms * 1000000, deadline);
    retry_ms = std::min<int64_t>(retry_ms * 2, 1000);
    int64_t now;
    while (!welcome_ && fatal_.empty() && (now = NowNs()) < next)
      WaitOne(std::max<int64_t>(1, (next - now) / 1000000));
    if (!welcome_ && NowNs() >= deadline) {
      errors_.timeouts++;
      char buf[256];
      std::snprintf(buf, sizeof(buf),
                    "no answer from server %s within %d ms (is `ptl_stress server --pid %u` "
                    "running on nid %u?)",
                    IdStr(o_.server).c_str(), o_.timeout_ms, o_.server.pid, o_.server.nid);
      return Fatal(buf);
    }
  }
  if (!fatal_.empty()) return;
  const CtrlMsg& w = *welcome_;
  if (w.status != kAccepted) {
    errors_.failures++;
    return Fatal("server " + IdStr(o_.server) + " refused client " + std::to_string(o_.id) + ": " +
                 RefuseReasonStr(w.status));
  }
  if (w.body.welcome.ring_bytes != send_ring_.size())
    return Fatal("the server's ring is " + std::to_string(w.body.welcome.ring_bytes) +
                 " bytes, not the " + std::to_string(send_ring_.size()) + " asked for");
  get_bytes_ = w.body.welcome.get_bytes;
  get_key_ = PayloadKey(w.body.welcome.get_seed, Stream::kGetBuffer, 0, 0);
  mirror_.resize(w.body.welcome.getput_bytes);
  FillPattern(mirror_.data(), mirror_.size(),
              PayloadKey(w.body.welcome.get_seed, Stream::kGetPutArea, o_.id, 0));
  gp_bytes_ = std::min<uint64_t>(
      {mirror_.size(), uint64_t{64}, static_cast<uint64_t>(std::max(limits_.max_getput_md, 0))});
  Note(o_.quiet, "connected to server %s as %s: ring %s, window %u, get buffer %s",
       IdStr(o_.server).c_str(), IdStr(self_).c_str(), Bytes(send_ring_.size()).c_str(), o_.window,
       Bytes(get_bytes_).c_str());
}

void Client::Drain() {
  ptl_event_t ev;
  int rc;
  while ((rc = PtlEQGet(eq_, &ev)) == PTL_OK || rc == PTL_EQ_DROPPED) Handle(ev, rc);
  if (rc != PTL_EQ_EMPTY) DieWith(kExitUsage, "PtlEQGet: %s", PtlErrorStr(rc));
  Release();
}

void Client::WaitOne(int64_t ms) {
  ptl_event_t ev;
  int which;
  int rc =
      PtlEQPoll(&eq_, 1, static_cast<ptl_time_t>(std::clamp<int64_t>(ms, 0, 1000000)), &ev, &which);
  if (rc == PTL_OK || rc == PTL_EQ_DROPPED)
    Handle(ev, rc);
  else if (rc != PTL_EQ_EMPTY)
    DieWith(kExitUsage, "PtlEQPoll: %s", PtlErrorStr(rc));
  Release();
}

void Client::Unexpected(const ptl_event_t& ev, const char* why) {
  errors_.unexpected++;
  Complain("unexpected event (%s): %s", why, EventStr(ev).c_str());
}

void Client::Handle(const ptl_event_t& ev, int rc) {
  last_event_ns_ = NowNs();
  if (rc == PTL_EQ_DROPPED) {
    errors_.eq_overflows++;
    Fatal("the event queue overflowed: events before " + EventStr(ev) + " were lost");
  }
  if (ev.ni_fail_type != PTL_NI_OK) {
    errors_.failures++;
    Fatal("operation failed (" + std::string(PtlNIFailStr(ni_, ev.ni_fail_type)) +
          "): " + EventStr(ev));
    return;
  }
  uint32_t kind = PtrKind(ev);
  switch (kind) {
    case kSendMd:
      if (ev.type == PTL_EVENT_SEND_END) return OnPutSendEnd(ev);
      if (ev.type == PTL_EVENT_ACK) return OnAck(ev);
      return Unexpected(ev, "on the send ring");
    case kReplyMd:
      if (ev.type == PTL_EVENT_REPLY_END) return OnGetReply(ev);
      return Unexpected(ev, "on the reply ring");
    case kGpGetMd:
      if (ev.type == PTL_EVENT_REPLY_END) return OnGpReply(ev);
      return Unexpected(ev, "on the getput reply buffer");
    case kGpPutMd:
      if (ev.type == PTL_EVENT_SEND_END) return OnGpSendEnd(ev);
      if (ev.type == PTL_EVENT_UNLINK) return;
      return Unexpected(ev, "on a getput source");
    case kCreditMd:
      if (ev.type == PTL_EVENT_PUT_END) return OnCredit(ev);
      return Unexpected(ev, "on the credit MD");
    case kMailboxMd:
      if (ev.type == PTL_EVENT_PUT_END) return OnCtrl(ev);
      if (ev.type == PTL_EVENT_UNLINK) return mailbox_.OnUnlink(ev);
      return Unexpected(ev, "on the mailbox");
    case kCtrlOut:
      if (ev.type == PTL_EVENT_SEND_END && ev.ni_fail_type != PTL_NI_OK) {
        errors_.failures++;
        Complain("a control message to the server failed: %s", EventStr(ev).c_str());
      }
      ctrl_.OnEvent(ev);
      return;
    default:
      return Unexpected(ev, "on no MD of ours");
  }
}

void Client::OnPutSendEnd(const ptl_event_t& ev) {
  Bits b = DecodeBits(ev.match_bits);
  PutOp* op = b.tag == Tag::kData ? Find(puts_, next_put_, b.seq16) : nullptr;
  if (!op || op->send_ends == 0) {
    errors_.duplicates++;
    Complain("SEND_END of a put that has none outstanding: %s", EventStr(ev).c_str());
    return;
  }
  op->send_ends--;
  op->sent = true;
  if (ev.mlength != op->len) {
    errors_.bad_lengths++;
    Complain("SEND_END of put seq %" PRIu64 " (%" PRIu64 " bytes): %s", op->seq, op->len,
             EventStr(ev).c_str());
  }
}

void Client::OnAck(const ptl_event_t& ev) {
  Bits b = DecodeBits(ev.match_bits);
  PutOp* op = b.tag == Tag::kData ? Find(puts_, next_put_, b.seq16) : nullptr;
  if (!SameId(ev.initiator, o_.server)) return Unexpected(ev, "an ACK from another process");
  if (!op || op->ack_seen) {
    errors_.duplicates++;
    Complain("a second ACK, or an ACK of a completed put: %s", EventStr(ev).c_str());
    return;
  }
  if (!op->ack) return Unexpected(ev, "an ACK no put asked for");
  op->ack_seen = true;
  if (!op->sent) {
    errors_.reorders++;
    Complain("the ACK of put seq %" PRIu64 " (%" PRIu64 " bytes) came before its SEND_END", op->seq,
             op->len);
  }
  sent_.acks++;
  if (ev.mlength != op->len) {
    errors_.bad_lengths++;
    Complain("ACK of put seq %" PRIu64 " (%" PRIu64 " bytes) accepted %" PRIu64 " bytes", op->seq,
             op->len, ev.mlength);
  }
}

void Client::OnGetReply(const ptl_event_t& ev) {
  Bits b = DecodeBits(ev.match_bits);
  GetOp* op = b.tag == Tag::kGet ? Find(gets_, next_get_, b.seq16) : nullptr;
  if (!op || op->done) {
    errors_.duplicates++;
    Complain("a second REPLY, or a REPLY of no get: %s", EventStr(ev).c_str());
    return;
  }
  op->done = true;
  if (ev.mlength != op->len || ev.rlength != op->len || ev.offset != op->off) {
    errors_.bad_lengths++;
    Complain("REPLY of get seq %" PRIu64 " (%" PRIu64 " bytes to offset %" PRIu64 "): %s", op->seq,
             op->len, op->off, EventStr(ev).c_str());
    return;
  }
  const uint8_t* data = reply_ring_.data() + op->off;
  std::size_t bad = FirstMismatch(data, op->len, get_key_, op->roff);
  if (bad != op->len) {
    errors_.corruptions++;
    Complain("get seq %" PRIu64 " of %" PRIu64 " bytes at server offset %" PRIu64
             ": byte %zu is %#04x, the server's buffer holds %#04x",
             op->seq, op->len, op->roff, bad, data[bad], PatternByte(get_key_, op->roff + bad));
  }
}

void Client::OnGpReply(const ptl_event_t& ev) {
  Bits b = DecodeBits(ev.match_bits);
  if (!gp_ || gp_->replied || b.tag != Tag::kGetPut || b.seq16 != (gp_->seq & 0xffff)) {
    errors_.duplicates++;
    Complain("a second REPLY, or a REPLY of no getput: %s", EventStr(ev).c_str());
    return;
  }
  gp_->replied = true;
  if (ev.mlength != gp_->len || ev.rlength != gp_->len) {
    errors_.bad_lengths++;
    Complain("REPLY of getput seq %" PRIu64 " (%" PRIu64 " bytes): %s", gp_->seq, gp_->len,
             EventStr(ev).c_str());
  } else {
    for (uint64_t i = 0; i < gp_->len; i++) {
      if (gp_reply_.data()[i] != gp_->expect[i]) {
        errors_.corruptions++;
        Complain("getput seq %" PRIu64 ": old byte %" PRIu64
                 " is %#04x, the area held %#04x (the swap is not atomic or not in order)",
                 gp_->seq, i, gp_reply_.data()[i], gp_->expect[i]);
        break;
      }
    }
  }
  if (gp_->sent) gp_.reset();
}

void Client::OnGpSendEnd(const ptl_event_t& ev) {
  Bits b = DecodeBits(ev.match_bits);
  if (!gp_ || gp_->sent || b.seq16 != (gp_->seq & 0xffff)) {
    errors_.duplicates++;
    Complain("a second SEND_END, or one of no getput: %s", EventStr(ev).c_str());
    return;
  }
  gp_->sent = true;
  if (ev.mlength != gp_->len) {
    errors_.bad_lengths++;
    Complain("SEND_END of getput seq %" PRIu64 ": %s", gp_->seq, EventStr(ev).c_str());
  }
  if (gp_->replied) gp_.reset();
}

void Client::OnCredit(const ptl_event_t& ev) {
  if (!SameId(ev.initiator, o_.server)) return Unexpected(ev, "a credit from another process");
  credits_++;
  uint64_t upto = ev.hdr_data;
  if (upto < credited_) {
    errors_.reorders++;
    Complain("credits out of order: %" PRIu64 " after %" PRIu64, upto, credited_);
  } else if (upto > next_put_) {
    errors_.corruptions++;
    Complain("a credit for %" PRIu64 " puts, only %" PRIu64 " were sent", upto, next_put_);
  } else {
    credited_ = upto;
  }
}

void Client::OnCtrl(const ptl_event_t& ev) {
  std::string why;
  const CtrlMsg* m = mailbox_.Message(ev, &why);
  if (!m) {
    errors_.unexpected++;
    Complain("mailbox: %s", why.c_str());
    return;
  }
  if (!SameId(ev.initiator, o_.server) || m->nonce != nonce_ || m->client_id != o_.id)
    return Unexpected(ev, "a control message of another session");
  switch (static_cast<CtrlType>(m->type)) {
    case CtrlType::kWelcome:
      if (!welcome_) welcome_ = *m;  // later ones answer retried HELLOs
      return;
    case CtrlType::kReport:
      if (!report_) report_ = *m;
      return;
    default:
      return Unexpected(ev, "a control message a client never gets");
  }
}

// ------------------------------------------------------------ issuing

void Client::PickNext() {
  const Mix& m = o_.mix;
  uint64_t r = rng_.Below(m.Total());
  if (r < m.put)
    next_op_ = Op::kPut;
  else if (r < m.put + m.ack)
    next_op_ = Op::kAckPut;
  else if (r < m.put + m.ack + m.get)
    next_op_ = Op::kGet;
  else
    next_op_ = Op::kGetPut;
  if (next_op_ == Op::kGet && get_bytes_ == 0) next_op_ = Op::kPut;
  if (next_op_ == Op::kGetPut && gp_bytes_ == 0) next_op_ = Op::kPut;
  switch (next_op_) {
    case Op::kPut:
    case Op::kAckPut:
      next_len_ = sizes_.Next(rng_);
      break;
    case Op::kGet:
      next_len_ = sizes_.Next(rng_, get_bytes_);
      break;
    case Op::kGetPut:
      next_len_ = 1 + rng_.Below(gp_bytes_);
      break;
  }
}

bool Client::MoreToIssue() const {
  if (!fatal_.empty()) return false;
  if (o_.count && issued_ >= o_.count) return false;
  if (o_.seconds > 0 && NowNs() - t_start_ >= static_cast<int64_t>(o_.seconds * 1e9)) return false;
  return true;
}

bool Client::CanIssue() const {
  if (InFlight() >= o_.window) return false;
  switch (next_op_) {
    case Op::kPut:
    case Op::kAckPut:
      return send_alloc_.Fits(next_len_);
    case Op::kGet:
      return reply_alloc_.Fits(next_len_);
    case Op::kGetPut:
      return !gp_;
  }
  return false;
}

void Client::Issue() {
  issued_++;
  switch (next_op_) {
    case Op::kPut:
      return IssuePut(false);
    case Op::kAckPut:
      return IssuePut(true);
    case Op::kGet:
      return IssueGet();
    case Op::kGetPut:
      return IssueGetPut();
  }
}

void Client::SendPut(const PutOp& op, bool ack) {
  int rc = PtlPutRegion(send_md_, op.off, op.len, ack ? PTL_ACK_REQ : PTL_NO_ACK_REQ, o_.server,
                        kPtData, 0, op.label.match_bits, op.off, op.label.hdr_data);
  if (rc != PTL_OK) {
    errors_.failures++;
    Fatal("PtlPutRegion (put seq " + std::to_string(op.seq) + "): " + PtlErrorStr(rc));
  }
}

void Client::IssuePut(bool ack) {
  auto r = send_alloc_.Alloc(next_len_);
  PutOp op{};
  op.seq = next_put_++;
  op.off = r->offset;
  op.len = next_len_;
  op.end = r->end;
  op.ack = ack;
  op.issued_ns = NowNs();
  uint8_t* data = send_ring_.data() + op.off;
  op.label = EncodePut(o_.seed, o_.id, op.seq, data, op.len);
  sent_.puts++;
  sent_.put_bytes += op.len;
  if (ack) acks_requested_++;

  const Inject& inj = o_.inject;
  if (inj.corrupt == op.seq) {
    if (op.len)
      data[op.len / 2] ^= 0x5a;  // after the checksum was taken
    else
      op.label.hdr_data ^= 1;  // the checksum of no bytes
    Note(o_.quiet, "inject: put seq %" PRIu64 " corrupted after its checksum", op.seq);
  }
  if (inj.drop == op.seq) {  // counted as sent, never sent
    op.send_ends = 0;
    op.ack = false;
    op.need_credit = false;
    puts_.push_back(op);
    Note(o_.quiet, "inject: put seq %" PRIu64 " not sent", op.seq);
    return;
  }
  if (inj.stray == op.seq) {  // sent where nothing matches: Portals drops it
    op.need_credit = false;
    op.ack = false;
    op.label.match_bits = MatchBits(Tag::kData, o_.id ^ 1, op.seq, op.len);
    puts_.push_back(op);
    SendPut(op, false);
    Note(o_.quiet, "inject: put seq %" PRIu64 " sent as client %u's", op.seq, o_.id ^ 1);
    return;
  }
  if (inj.reorder == op.seq) {
    op.held = true;
    puts_.push_back(op);
    held_ = op.seq;
    Note(o_.quiet, "inject: put seq %" PRIu64 " sent after seq %" PRIu64, op.seq, op.seq + 1);
    return;
  }
  if (inj.dup == op.seq) op.send_ends = 2;
  puts_.push_back(op);
  SendPut(op, ack);
  if (inj.dup == op.seq) {
    SendPut(op, false);
    Note(o_.quiet, "inject: put seq %" PRIu64 " sent twice", op.seq);
  }
  if (held_ && *held_ + 1 == op.seq) FlushHeld();
}

void Client::FlushHeld() {
  if (!held_) return;
  PutOp* op = Find(puts_, next_put_, static_cast<uint16_t>(*held_));
  held_.reset();
  if (!op) return;
  op->held = false;
  SendPut(*op, op->ack);
}

void Client::IssueGet() {
  auto r = reply_alloc_.Alloc(next_len_);
  GetOp op{};
  op.seq = next_get_++;
  op.off = r->offset;
  op.len = next_len_;
  op.end = r->end;
  op.roff = rng_.Below(get_bytes_ - op.len + 1);
  op.issued_ns = NowNs();
  // The landing bytes start as the complement of what must arrive.
  uint8_t* land = reply_ring_.data() + op.off;
  FillPattern(land, op.len, get_key_, op.roff);
  for (uint64_t i = 0; i < op.len; i++) land[i] = static_cast<uint8_t>(~land[i]);
  gets_.push_back(op);
  sent_.gets++;
  sent_.get_bytes += op.len;
  int rc = PtlGetRegion(reply_md_, op.off, op.len, o_.server, kPtGet, 0,
                        MatchBits(Tag::kGet, o_.id, op.seq, op.len), op.roff);
  if (rc != PTL_OK) {
    errors_.failures++;
    Fatal("PtlGetRegion (get seq " + std::to_string(op.seq) + "): " + PtlErrorStr(rc));
  }
}

void Client::IssueGetPut() {
  GpOp op;
  op.seq = next_gp_++;
  op.len = next_len_;
  op.issued_ns = NowNs();
  FillPattern(gp_send_.data(), op.len, PayloadKey(o_.seed, Stream::kGetPut, o_.id, op.seq));
  uint32_t crc = Crc32c(gp_send_.data(), op.len);
  op.expect.assign(mirror_.begin(), mirror_.begin() + op.len);
  for (uint64_t i = 0; i < op.len; i++) gp_reply_.data()[i] = static_cast<uint8_t>(~op.expect[i]);
  std::memcpy(mirror_.data(), gp_send_.data(), op.len);
  sent_.getputs++;
  sent_.getput_bytes += op.len;
  gp_ = std::move(op);
  ptl_handle_md_t put_md;
  int rc = PtlMDBind(
      ni_,
      MakeMd(gp_send_.data(), gp_->len, PTL_MD_EVENT_START_DISABLE, eq_, Tag2Ptr(kGpPutMd, 0), 1),
      PTL_UNLINK, &put_md);
  if (rc == PTL_OK)
    rc = PtlGetPut(gp_get_md_, put_md, o_.server, kPtGetPut, 0,
                   MatchBits(Tag::kGetPut, o_.id, gp_->seq, gp_->len), 0, PackHdr(gp_->seq, crc));
  if (rc != PTL_OK) {
    errors_.failures++;
    Fatal("PtlGetPut (getput seq " + std::to_string(gp_->seq) + "): " + PtlErrorStr(rc));
  }
}

void Client::Release() {
  while (!puts_.empty()) {
    const PutOp& f = puts_.front();
    if (f.held || f.send_ends > 0 || (f.ack && !f.ack_seen) ||
        (f.need_credit && f.seq >= credited_))
      break;
    send_alloc_.ReleaseTo(f.end);
    puts_.pop_front();
  }
  while (!gets_.empty() && gets_.front().done) {
    reply_alloc_.ReleaseTo(gets_.front().end);
    gets_.pop_front();
  }
}

int64_t Client::OldestIssue() const {
  int64_t t = INT64_MAX;
  if (!puts_.empty()) t = std::min(t, puts_.front().issued_ns);
  if (!gets_.empty()) t = std::min(t, gets_.front().issued_ns);
  if (gp_) t = std::min(t, gp_->issued_ns);
  return t;
}

std::string Client::Waiting() const {
  std::string s;
  char buf[256];
  if (!puts_.empty()) {
    const PutOp& f = puts_.front();
    std::snprintf(buf, sizeof(buf),
                  "put seq %" PRIu64 " (%" PRIu64 " bytes at offset %" PRIu64 "):", f.seq, f.len,
                  f.off);
    s += buf;
    if (f.held) s += " held back (--inject reorder)";
    if (f.send_ends) s += " its SEND_END";
    if (f.ack && !f.ack_seen) s += " its ACK";
    if (f.need_credit && f.seq >= credited_) {
      std::snprintf(buf, sizeof(buf),
                    " a credit (the server has accounted for puts below seq %" PRIu64 ")",
                    credited_);
      s += buf;
    }
  }
  if (!gets_.empty() && !gets_.front().done) {
    const GetOp& g = gets_.front();
    std::snprintf(buf, sizeof(buf), "%sthe REPLY of get seq %" PRIu64 " (%" PRIu64 " bytes)",
                  s.empty() ? "" : "; ", g.seq, g.len);
    s += buf;
  }
  if (gp_) {
    std::snprintf(buf, sizeof(buf), "%sgetput seq %" PRIu64 ":%s%s", s.empty() ? "" : "; ",
                  gp_->seq, gp_->sent ? "" : " its SEND_END", gp_->replied ? "" : " its REPLY");
    s += buf;
  }
  std::snprintf(buf, sizeof(buf), "; %zu operations in flight, server %s", InFlight(),
                IdStr(o_.server).c_str());
  s += buf;
  return s;
}

void Client::Progress() {
  if (o_.progress <= 0 || o_.quiet) return;
  int64_t now = NowNs();
  if (now - progress_ns_ < static_cast<int64_t>(o_.progress * 1e9)) return;
  progress_ns_ = now;
  double secs = std::max(1e-9, (now - t_start_) / 1e9);
  Note(false, "%" PRIu64 " ops, %s, %.1f MB/s, %zu in flight", issued_,
       Bytes(sent_.Bytes()).c_str(), sent_.Bytes() / secs / 1e6, InFlight());
}

void Client::RunTraffic() {
  t_start_ = progress_ns_ = last_event_ns_ = NowNs();
  const int64_t limit = int64_t{o_.timeout_ms} * 1000000;
  PickNext();
  while (fatal_.empty()) {
    Drain();
    if (!fatal_.empty()) break;
    bool more = MoreToIssue();
    if (more && CanIssue()) {
      Issue();
      PickNext();
      continue;
    }
    if (!more) {
      FlushHeld();
      Release();
      if (InFlight() == 0) break;
    }
    int64_t now = NowNs();
    int64_t stuck = now - last_event_ns_;
    if (InFlight()) stuck = std::max(stuck, now - OldestIssue());
    if (stuck > limit) {
      errors_.timeouts++;
      Fatal("hang: nothing completed for " + std::to_string(o_.timeout_ms) + " ms; waiting for " +
            Waiting());
      break;
    }
    int64_t wait_ms = (limit - stuck) / 1000000 + 1;
    if (o_.seconds > 0 || o_.progress > 0) wait_ms = std::min<int64_t>(wait_ms, 100);
    WaitOne(wait_ms);
    Progress();
  }
  t_end_ = NowNs();
}

void Client::Finish() {
  CtrlMsg f = MakeCtrl(CtrlType::kFin, o_.id, nonce_);
  f.body.fin =
      Fin{next_put_, sent_.put_bytes, next_get_, next_gp_, Crc32c(mirror_.data(), mirror_.size())};
  const int64_t limit = int64_t{o_.timeout_ms} * 1000000;
  int64_t deadline = NowNs() + limit;
  int64_t resend = 0;
  while (!report_ && fatal_.empty()) {
    int64_t now = NowNs();
    if (now >= deadline) {
      errors_.timeouts++;
      return Fatal("no REPORT from server " + IdStr(o_.server) + " within " +
                   std::to_string(o_.timeout_ms) + " ms of the FIN");
    }
    if (now >= resend) {  // a FIN again is harmless: the server answers it again
      int rc = ctrl_.Send(o_.server, f);
      if (rc != PTL_OK) {
        errors_.failures++;
        return Fatal(std::string("sending FIN: ") + PtlErrorStr(rc));
      }
      resend = now + limit / 4;
    }
    WaitOne(std::max<int64_t>(1, std::min(deadline, resend) - now) / 1000000 + 1);
  }
  int64_t until = NowNs() + int64_t{1000} * 1000000;
  while (ctrl_.pending() && NowNs() < until) WaitOne(50);
}

int Client::Report() {
  uint64_t drops = DropCount(ni_) - drops_base_;
  if (drops) {
    errors_.portals_drops = drops;
    Complain("Portals dropped %" PRIu64 " message(s) at this interface (PTL_SR_DROP_COUNT)", drops);
  }
  const ptl_stress::Report* r = report_ ? &report_->body.report : nullptr;
  bool counts_ok = r && r->traffic.puts == sent_.puts && r->traffic.put_bytes == sent_.put_bytes &&
                   r->traffic.gets == sent_.gets && r->traffic.get_bytes == sent_.get_bytes &&
                   r->traffic.getputs == sent_.getputs;
  if (r && !counts_ok && r->errors.Total() == 0 && !o_.inject.Any()) {
    errors_.unexpected++;
    Complain("the server saw %" PRIu64 " puts (%" PRIu64 " bytes), %" PRIu64 " gets, %" PRIu64
             " getputs; this client sent %" PRIu64 " (%" PRIu64 "), %" PRIu64 ", %" PRIu64,
             r->traffic.puts, r->traffic.put_bytes, r->traffic.gets, r->traffic.getputs, sent_.puts,
             sent_.put_bytes, sent_.gets, sent_.getputs);
  }
  bool pass = fatal_.empty() && errors_.Total() == 0 && r && r->errors.Total() == 0 && counts_ok;
  if (r && r->errors.Total())
    Complain("the server found errors in this client's traffic: %s", ErrorsText(r->errors).c_str());
  if (!t_end_) t_end_ = NowNs();
  double elapsed = t_start_ ? std::max(1e-9, (t_end_ - t_start_) / 1e9) : 0;
  double mbps = elapsed > 0 ? sent_.Bytes() / elapsed / 1e6 : 0;
  double ops = elapsed > 0 ? sent_.Ops() / elapsed : 0;

  JsonObject j;
  j.Add("role", "client")
      .Add("id", uint64_t{o_.id})
      .Add("self", IdStr(self_))
      .Add("server", IdStr(o_.server))
      .Add("pass", pass)
      .Add("seed", o_.seed)
      .Add("elapsed_s", elapsed)
      .Add("mb_per_s", mbps)
      .Add("ops_per_s", ops)
      .AddRaw("sent", TrafficJson(sent_))
      .Add("acks_requested", acks_requested_)
      .Add("credits", credits_)
      .AddRaw("errors", ErrorsJson(errors_));
  if (r)
    j.AddRaw("server_view", JsonObject()
                                .AddRaw("received", TrafficJson(r->traffic))
                                .AddRaw("errors", ErrorsJson(r->errors))
                                .str());
  else
    j.AddRaw("server_view", "null");
  if (o_.inject.Any()) {
    JsonObject in;
    if (o_.inject.dup) in.Add("dup", *o_.inject.dup);
    if (o_.inject.reorder) in.Add("reorder", *o_.inject.reorder);
    if (o_.inject.drop) in.Add("drop", *o_.inject.drop);
    if (o_.inject.corrupt) in.Add("corrupt", *o_.inject.corrupt);
    if (o_.inject.stray) in.Add("stray", *o_.inject.stray);
    j.AddRaw("injected", in.str());
  }
  if (!fatal_.empty()) j.Add("error", fatal_);
  std::string json = j.str();

  Summary s{1, pass ? 1u : 0u, elapsed, sent_, errors_};
  SendSummary(o_.report_fd, s, json);
  if (o_.json) {
    std::printf("%s\n", json.c_str());
  } else if (!o_.quiet || !pass) {
    char buf[3072];
    int n = std::snprintf(buf, sizeof(buf),
                          "ptl_stress client %u (%s) -> server %s (seed %" PRIu64
                          "): %s\n"
                          "  sent      %" PRIu64 " ops in %.3f s: %" PRIu64 " puts (%s, %" PRIu64
                          " with ACK), %" PRIu64 " gets (%s), %" PRIu64
                          " getputs\n"
                          "  rate      %.1f MB/s, %.0f ops/s\n"
                          "  errors    %s\n",
                          o_.id, IdStr(self_).c_str(), IdStr(o_.server).c_str(), o_.seed,
                          pass ? "PASS" : "FAIL", sent_.Ops(), elapsed, sent_.puts,
                          Bytes(sent_.put_bytes).c_str(), acks_requested_, sent_.gets,
                          Bytes(sent_.get_bytes).c_str(), sent_.getputs, mbps, ops,
                          ErrorsText(errors_).c_str());
    if (r && n > 0 && static_cast<std::size_t>(n) < sizeof(buf))
      std::snprintf(buf + n, sizeof(buf) - n,
                    "  server    received %" PRIu64 " puts (%s), served %" PRIu64 " gets, %" PRIu64
                    " getputs; %s\n",
                    r->traffic.puts, Bytes(r->traffic.put_bytes).c_str(), r->traffic.gets,
                    r->traffic.getputs, ErrorsText(r->errors).c_str());
    else if (n > 0 && static_cast<std::size_t>(n) < sizeof(buf))
      std::snprintf(buf + n, sizeof(buf) - n, "  server    no report%s%s\n",
                    fatal_.empty() ? "" : ": ", fatal_.c_str());
    std::fputs(buf, stdout);
  }
  std::fflush(stdout);
  PtlFini();
  return pass ? kExitPass : kExitErrors;
}

}  // namespace

int RunClient(const Options& o) {
  Client c(o);
  return c.Run();
}

}  // namespace ptl_stress
