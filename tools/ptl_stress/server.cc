// SPDX-License-Identifier: BSD-3-Clause
// ptl_stress server: receives and verifies the clients' puts, serves their
// gets and getputs, returns credits, and reports what it saw.
//
// Per client (after its HELLO) the server posts, matching only that
// client's process id:
//   portal kPtData    a receive ring (--ring bytes, MANAGE_REMOTE): the
//                     client chooses the offset of every put; it never
//                     puts into bytes the server has not released with a
//                     credit, so a put always finds its buffer
//   portal kPtGetPut  a getput area of max_getput_md bytes
// and for everyone:
//   portal kPtGet     the get buffer: pseudo-random content from the
//                     server's seed, read-only (OP_GET only)
//   portal kPtCtrl    the control mailbox (HELLO, FIN)
//
// Every put is verified (StreamVerifier): its PUT_START must come in the
// order the client sent it (Portals matches one initiator's puts in
// order); at its PUT_END the sender, the length announced in the match
// bits against rlength and mlength, the CRC-32C in hdr_data against the
// bytes, the bytes against the pattern of (seed, client, seq), and that it
// ends exactly once. Ends may come in any order (a large put's data can
// land after a later small one's). Then the bytes are released: once half
// the client's window is accounted for, or whenever the event queue runs
// empty, a credit (a zero-length put carrying "every put below N has
// ended") goes back; a put still landing holds it back.
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "ptl_stress.h"

namespace ptl_stress {
namespace {

enum Kind : uint32_t {
  kRing = 1,
  kGetBuf = 2,
  kArea = 3,
  kMailboxMd = 4,
  kCreditMd = 5,
  kCtrlOut = 6,
};

struct Peer {
  uint32_t slot = 0;
  uint32_t id = 0;
  ptl_process_id_t addr{};
  uint64_t nonce = 0;
  Hello hello{};
  Buffer ring, area;
  StreamVerifier puts{0, 0};  // set at HELLO
  SeqTracker getputs;
  Traffic traffic;
  Errors direct;          // counted here as they happen (the verifiers count the rest)
  Errors final_errors;    // what the REPORT said
  uint64_t credited = 0;  // last credit: every put below it accounted for
  uint64_t credit_batch = 1;
  bool fin_seen = false;
  Fin fin{};
  int64_t fin_ns = 0;
  bool done = false;
  int64_t first_ns = 0, last_ns = 0, done_ns = 0;
};

class Server {
 public:
  explicit Server(const Options& o) : o_(o) {}
  int Run();

 private:
  void Setup();
  void Handle(const ptl_event_t& ev, int rc);
  void OnMailbox(const ptl_event_t& ev);
  void OnHello(const CtrlMsg& m, ptl_process_id_t from);
  void SendWelcome(const Peer& p);
  void Refuse(const CtrlMsg& m, ptl_process_id_t from, uint32_t reason);
  void OnFin(Peer& p, const CtrlMsg& m);
  void OnPutStart(Peer& p, const ptl_event_t& ev);
  void OnPut(Peer& p, const ptl_event_t& ev);
  void OnGet(const ptl_event_t& ev);
  void OnGetPut(Peer& p, const ptl_event_t& ev);
  void Credit(Peer& p);
  void TryFinalize(Peer& p, bool force);
  void SendReport(Peer& p);
  void LetReportsLeave();
  Errors PeerErrors(const Peer& p) const;
  void CheckTimers();
  Peer* ById(uint32_t id);
  Peer* BySlot(uint32_t slot) { return slot < peers_.size() ? peers_[slot].get() : nullptr; }
  void Unexpected(Peer* p, const ptl_event_t& ev, const char* why);
  int Report();

  Options o_;
  ptl_handle_ni_t ni_ = PTL_INVALID_HANDLE;
  ptl_handle_eq_t eq_ = PTL_EQ_NONE;
  ptl_process_id_t self_{};
  ptl_ni_limits_t limits_{};
  Buffer get_buf_;
  uint64_t get_seed_ = 0;
  uint32_t get_crc_ = 0;
  uint64_t gp_bytes_ = 0;
  ptl_handle_md_t credit_md_ = PTL_INVALID_HANDLE;
  Mailbox mailbox_;
  CtrlSender ctrl_;
  std::vector<std::unique_ptr<Peer>> peers_;
  uint32_t done_ = 0;
  Errors global_;
  uint64_t drops_base_ = 0, drops_seen_ = 0;
  int64_t drops_checked_ns_ = 0;
  int64_t start_ns_ = 0, first_hello_ns_ = 0, last_hello_ns_ = 0, last_done_ns_ = 0;
  bool stop_ = false;
};

Peer* Server::ById(uint32_t id) {
  for (auto& p : peers_)
    if (p->id == id) return p.get();
  return nullptr;
}

void Server::Setup() {
  int max_ifaces;
  Ptl("PtlInit", PtlInit(&max_ifaces));
  int rc = PtlNIInit(PTL_IFACE_LINUX0 + o_.iface, o_.pid, nullptr, &limits_, &ni_);
  if (rc == PTL_PID_INVALID)
    DieWith(kExitUsage,
            "PtlNIInit(pid %u): PTL_PID_INVALID: the pid is taken (another server?) or reserved "
            "(below 64 needs CAP_NET_ADMIN); choose another with --pid",
            o_.pid);
  Ptl("PtlNIInit", rc);
  Ptl("PtlGetId", PtlGetId(ni_, &self_));
  SetWho("server " + IdStr(self_));

  // Per client at most a window of PUT_START + PUT_END or GET_END, and a
  // window of credits' SEND_ENDs (flow control bounds them).
  uint64_t events = uint64_t{o_.clients} * (4 * o_.max_window + 32) + 256;
  rc = PtlEQAlloc(ni_, events, PTL_EQ_HANDLER_NONE, &eq_);
  if (rc == PTL_NO_SPACE)
    DieWith(kExitUsage,
            "PtlEQAlloc(%" PRIu64
            " events): PTL_NO_SPACE: the ring counts against RLIMIT_MEMLOCK; "
            "raise it (ulimit -l) or lower --clients or --max-window",
            events);
  Ptl("PtlEQAlloc", rc);
  gp_bytes_ = std::min<uint64_t>(std::max(limits_.max_getput_md, 0), 64);

  // The get buffer: known content, read by every client, never written.
  get_buf_ = Buffer(o_.GetBytes());
  if (!get_buf_.ok())
    DieWith(kExitUsage, "cannot allocate the %s get buffer", Bytes(o_.GetBytes()).c_str());
  get_seed_ = Mix64(o_.seed ^ 0x6765742d62756600ull ^ self_.pid);
  FillPattern(get_buf_.data(), get_buf_.size(), PayloadKey(get_seed_, Stream::kGetBuffer, 0, 0));
  get_crc_ = Crc32c(get_buf_.data(), get_buf_.size());
  ptl_handle_me_t me;
  Ptl("PtlMEAttach (get buffer)",
      PtlMEAttach(ni_, kPtGet, {PTL_NID_ANY, PTL_PID_ANY}, MatchBits(Tag::kGet, 0, 0, 0),
                  kIgnoreAllButTag, PTL_RETAIN, PTL_INS_AFTER, &me));
  ptl_handle_md_t md;
  rc = PtlMDAttach(me,
                   MakeMd(get_buf_.data(), get_buf_.size(),
                          PTL_MD_OP_GET | PTL_MD_MANAGE_REMOTE | PTL_MD_EVENT_START_DISABLE, eq_,
                          Tag2Ptr(kGetBuf, 0)),
                   PTL_RETAIN, &md);
  if (rc == PTL_MD_ILLEGAL)
    DieWith(kExitUsage,
            "PtlMDAttach (get buffer, %s): PTL_MD_ILLEGAL: cannot pin it; raise RLIMIT_MEMLOCK "
            "(ulimit -l) or use a smaller --get-bytes",
            Bytes(get_buf_.size()).c_str());
  Ptl("PtlMDAttach (get buffer)", rc);

  Ptl("PtlMDBind (credits)",
      PtlMDBind(ni_, MakeMd(nullptr, 0, PTL_MD_EVENT_START_DISABLE, eq_, Tag2Ptr(kCreditMd, 0)),
                PTL_RETAIN, &credit_md_));
  mailbox_.Init(ni_, eq_, {PTL_NID_ANY, PTL_PID_ANY}, kMailboxMd);
  ctrl_.Init(ni_, eq_, kCtrlOut);
  drops_base_ = DropCount(ni_);
  start_ns_ = NowNs();

  if (o_.ready_fd >= 0) {
    std::string line = std::to_string(self_.nid) + " " + std::to_string(self_.pid) + "\n";
    ssize_t unused = write(o_.ready_fd, line.data(), line.size());
    (void)unused;
    close(o_.ready_fd);
  }
  Note(o_.quiet,
       "ready for %u client(s): portals %u-%u, get buffer %s, getput area %" PRIu64
       " bytes, timeout %d ms",
       o_.clients, kPtData, kPtCtrl, Bytes(get_buf_.size()).c_str(), gp_bytes_, o_.timeout_ms);
}

int Server::Run() {
  Setup();
  ptl_event_t ev;
  int which;
  while (!stop_ && done_ < o_.clients) {
    int rc;
    while ((rc = PtlEQGet(eq_, &ev)) == PTL_OK || rc == PTL_EQ_DROPPED) Handle(ev, rc);
    if (rc != PTL_EQ_EMPTY) DieWith(kExitUsage, "PtlEQGet: %s", PtlErrorStr(rc));
    // The queue ran empty: release everything verified so far, and finish
    // a client whose FIN came before the last events of its traffic (a
    // get's GET_END completes at the reply's send, which may be handled
    // after the initiator's next message: nothing orders the two).
    for (auto& p : peers_) {
      if (!p->done && p->puts.Accounted() > p->credited) Credit(*p);
      TryFinalize(*p, false);
    }
    CheckTimers();
    if (stop_ || done_ >= o_.clients) break;
    rc = PtlEQPoll(&eq_, 1, 100, &ev, &which);
    if (rc == PTL_OK || rc == PTL_EQ_DROPPED)
      Handle(ev, rc);
    else if (rc != PTL_EQ_EMPTY)
      DieWith(kExitUsage, "PtlEQPoll: %s", PtlErrorStr(rc));
  }
  LetReportsLeave();
  return Report();
}

// Waits for the last REPORTs' SEND_END and UNLINK events. A REPORT may
// need a new connection first (the last one may have closed while idle),
// so it gets as long as any other wait; one that has not left by then is
// a failure said here: the process's exit would cancel it, and its client
// would only see no REPORT.
void Server::LetReportsLeave() {
  ptl_event_t ev;
  int which;
  int wait_ms = stop_ ? 2000 : o_.timeout_ms;
  int64_t until = NowNs() + int64_t{wait_ms} * 1000000;
  while (ctrl_.pending() && NowNs() < until) {
    int rc = PtlEQPoll(&eq_, 1, 50, &ev, &which);
    if (rc == PTL_OK || rc == PTL_EQ_DROPPED) Handle(ev, rc);
  }
  if (ctrl_.pending() && !stop_) {
    global_.timeouts++;
    Complain(
        "%zu control message(s) to clients still had not left %d ms after the last client "
        "finished",
        ctrl_.pending(), wait_ms);
  }
}

void Server::Unexpected(Peer* p, const ptl_event_t& ev, const char* why) {
  (p ? p->direct : global_).unexpected++;
  Complain("unexpected event (%s): %s", why, EventStr(ev).c_str());
}

void Server::Handle(const ptl_event_t& ev, int rc) {
  if (rc == PTL_EQ_DROPPED) {
    global_.eq_overflows++;
    Complain("the event queue overflowed: events before %s were lost", EventStr(ev).c_str());
  }
  Bits b = DecodeBits(ev.match_bits);
  switch (PtrKind(ev)) {
    case kRing: {
      Peer* p = BySlot(PtrIndex(ev));
      if (p && ev.type == PTL_EVENT_PUT_START)
        OnPutStart(*p, ev);
      else if (p && ev.type == PTL_EVENT_PUT_END)
        OnPut(*p, ev);
      else
        Unexpected(p, ev, "on a receive ring");
      return;
    }
    case kGetBuf:
      if (ev.type == PTL_EVENT_GET_END)
        OnGet(ev);
      else
        Unexpected(nullptr, ev, "on the get buffer");
      return;
    case kArea: {
      Peer* p = BySlot(PtrIndex(ev));
      if (p && ev.type == PTL_EVENT_GETPUT_END)
        OnGetPut(*p, ev);
      else
        Unexpected(p, ev, "on a getput area");
      return;
    }
    case kMailboxMd:
      if (ev.type == PTL_EVENT_PUT_END)
        OnMailbox(ev);
      else if (ev.type == PTL_EVENT_UNLINK)
        mailbox_.OnUnlink(ev);
      else
        Unexpected(nullptr, ev, "on the mailbox");
      return;
    case kCreditMd:
      if (ev.type != PTL_EVENT_SEND_END) return Unexpected(nullptr, ev, "on the credit MD");
      if (ev.ni_fail_type != PTL_NI_OK) {
        Peer* p = ById(b.client);
        (p ? p->direct : global_).failures++;
        Complain("a credit to client %u failed: %s", b.client, EventStr(ev).c_str());
      }
      return;
    case kCtrlOut:
      if (ev.type == PTL_EVENT_SEND_END && ev.ni_fail_type != PTL_NI_OK) {
        Peer* p = ById(b.client);
        (p ? p->direct : global_).failures++;
        Complain("a control message to client %u failed: %s", b.client, EventStr(ev).c_str());
      }
      ctrl_.OnEvent(ev);
      return;
    default:
      Unexpected(nullptr, ev, "on no MD of ours");
  }
}

void Server::OnMailbox(const ptl_event_t& ev) {
  if (ev.ni_fail_type != PTL_NI_OK) {
    global_.failures++;
    Complain("a control message failed: %s", EventStr(ev).c_str());
    return;
  }
  std::string why;
  const CtrlMsg* mp = mailbox_.Message(ev, &why);
  if (!mp) {
    global_.unexpected++;
    Complain("mailbox: %s from %s", why.c_str(), IdStr(ev.initiator).c_str());
    return;
  }
  CtrlMsg m = *mp;
  switch (static_cast<CtrlType>(m.type)) {
    case CtrlType::kHello:
      OnHello(m, ev.initiator);
      return;
    case CtrlType::kFin: {
      Peer* p = ById(m.client_id);
      if (!p || !SameId(p->addr, ev.initiator) || p->nonce != m.nonce) {
        global_.unexpected++;
        Complain("FIN from %s as client %u, which is not its session", IdStr(ev.initiator).c_str(),
                 m.client_id);
        return;
      }
      OnFin(*p, m);
      return;
    }
    default:
      global_.unexpected++;
      Complain("control message of type %u from %s", m.type, IdStr(ev.initiator).c_str());
  }
}

void Server::Refuse(const CtrlMsg& m, ptl_process_id_t from, uint32_t reason) {
  Complain("refused client %u at %s: %s", m.client_id, IdStr(from).c_str(),
           RefuseReasonStr(reason));
  CtrlMsg w = MakeCtrl(CtrlType::kWelcome, m.client_id, m.nonce);
  w.status = reason;
  int rc = ctrl_.Send(from, w);
  if (rc != PTL_OK) Complain("sending the refusal: %s", PtlErrorStr(rc));
}

void Server::SendWelcome(const Peer& p) {
  CtrlMsg w = MakeCtrl(CtrlType::kWelcome, p.id, p.nonce);
  w.status = kAccepted;
  w.body.welcome.ring_bytes = p.ring.size();
  w.body.welcome.get_bytes = get_buf_.size();
  w.body.welcome.get_seed = get_seed_;
  w.body.welcome.getput_bytes = gp_bytes_;
  int rc = ctrl_.Send(p.addr, w);
  if (rc != PTL_OK) DieWith(kExitUsage, "sending WELCOME to client %u: %s", p.id, PtlErrorStr(rc));
}

void Server::OnHello(const CtrlMsg& m, ptl_process_id_t from) {
  const Hello& h = m.body.hello;
  if (Peer* old = ById(m.client_id)) {
    if (old->nonce == m.nonce && SameId(old->addr, from)) {
      if (!old->done) SendWelcome(*old);  // a retried HELLO: answer again
      return;
    }
    return Refuse(m, from, kRefusedIdInUse);
  }
  if (peers_.size() >= o_.clients) return Refuse(m, from, kRefusedFull);
  if (m.client_id > kMaxClientId || h.window == 0 || h.window > o_.max_window ||
      h.ring_bytes == 0 || h.ring_bytes > o_.max_ring || h.max_size > h.ring_bytes ||
      h.max_size > kMaxMessage) {
    Complain("client %u: window %" PRIu64 " (max %u), ring %" PRIu64 " (max %" PRIu64
             "), max size %" PRIu64,
             m.client_id, h.window, o_.max_window, h.ring_bytes, o_.max_ring, h.max_size);
    return Refuse(m, from, kRefusedParams);
  }
  auto p = std::make_unique<Peer>();
  p->slot = static_cast<uint32_t>(peers_.size());
  p->id = m.client_id;
  p->addr = from;
  p->nonce = m.nonce;
  p->hello = h;
  p->puts = StreamVerifier(h.seed, m.client_id);
  p->credit_batch = std::max<uint64_t>(1, h.window / 2);
  p->ring = Buffer(h.ring_bytes);
  p->area = Buffer(std::max<uint64_t>(gp_bytes_, 1));
  if (!p->ring.ok() || !p->area.ok()) return Refuse(m, from, kRefusedResources);

  ptl_handle_me_t me;
  ptl_handle_md_t md;
  Ptl("PtlMEAttach (ring)", PtlMEAttach(ni_, kPtData, from, MatchBits(Tag::kData, p->id, 0, 0),
                                        kIgnoreOpFields, PTL_UNLINK, PTL_INS_AFTER, &me));
  int rc = PtlMDAttach(me,
                       MakeMd(p->ring.data(), p->ring.size(), PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE,
                              eq_, Tag2Ptr(kRing, p->slot)),
                       PTL_RETAIN, &md);
  if (rc != PTL_OK) {
    PtlMEUnlink(me);
    Complain("PtlMDAttach (ring of %s for client %u): %s%s", Bytes(p->ring.size()).c_str(), p->id,
             PtlErrorStr(rc),
             rc == PTL_MD_ILLEGAL ? " (cannot pin it: raise RLIMIT_MEMLOCK or use a smaller --ring)"
                                  : "");
    return Refuse(m, from, kRefusedResources);
  }
  if (gp_bytes_) {
    FillPattern(p->area.data(), gp_bytes_, PayloadKey(get_seed_, Stream::kGetPutArea, p->id, 0));
    Ptl("PtlMEAttach (getput area)",
        PtlMEAttach(ni_, kPtGetPut, from, MatchBits(Tag::kGetPut, p->id, 0, 0), kIgnoreOpFields,
                    PTL_UNLINK, PTL_INS_AFTER, &me));
    Ptl("PtlMDAttach (getput area)",
        PtlMDAttach(me,
                    MakeMd(p->area.data(), gp_bytes_,
                           PTL_MD_OP_GET | PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE |
                               PTL_MD_EVENT_START_DISABLE,
                           eq_, Tag2Ptr(kArea, p->slot)),
                    PTL_RETAIN, &md));
  }
  p->first_ns = p->last_ns = NowNs();
  if (!first_hello_ns_) first_hello_ns_ = p->first_ns;
  last_hello_ns_ = p->first_ns;
  Note(o_.quiet, "client %u at %s connected: window %" PRIu64 ", ring %s, sizes up to %s", p->id,
       IdStr(from).c_str(), h.window, Bytes(h.ring_bytes).c_str(), Bytes(h.max_size).c_str());
  SendWelcome(*p);
  peers_.push_back(std::move(p));
}

// The header matched: the order in which the client's puts are matched
// must be the order it sent them in.
void Server::OnPutStart(Peer& p, const ptl_event_t& ev) {
  p.last_ns = NowNs();
  if (ev.ni_fail_type != PTL_NI_OK || !SameId(ev.initiator, p.addr)) return;  // the END says
  auto r = p.puts.OnStart(ev.match_bits, ev.hdr_data);
  if (r.outcome == StreamVerifier::Outcome::kReordered)
    Complain("client %u: %s (ring offset %" PRIu64 ")", p.id, r.detail.c_str(), ev.offset);
}

// The data is in place: verify it, count it, and release what is done.
void Server::OnPut(Peer& p, const ptl_event_t& ev) {
  p.last_ns = NowNs();
  p.traffic.puts++;
  p.traffic.put_bytes += ev.mlength;
  if (ev.ni_fail_type != PTL_NI_OK) {
    p.direct.failures++;
    Complain("client %u: failed put: %s", p.id, EventStr(ev).c_str());
    return;
  }
  if (!SameId(ev.initiator, p.addr) || ev.offset > p.ring.size() ||
      ev.mlength > p.ring.size() - ev.offset) {
    p.direct.corruptions++;
    Complain("client %u: put from another process or outside the ring: %s", p.id,
             EventStr(ev).c_str());
    return;
  }
  auto r =
      p.puts.OnPut({ev.match_bits, ev.hdr_data, ev.rlength, ev.mlength, p.ring.data() + ev.offset});
  if (r.outcome != StreamVerifier::Outcome::kOk)
    Complain("client %u: %s (ring offset %" PRIu64 ")", p.id, r.detail.c_str(), ev.offset);
  if (!p.done && p.puts.Accounted() >= p.credited + p.credit_batch) Credit(p);
}

void Server::OnGet(const ptl_event_t& ev) {
  Bits b = DecodeBits(ev.match_bits);
  Peer* p = ById(b.client);
  if (!p || !SameId(ev.initiator, p->addr)) {
    global_.unexpected++;
    Complain("a get from %s as client %u, which has no session", IdStr(ev.initiator).c_str(),
             b.client);
    return;
  }
  p->last_ns = NowNs();
  p->traffic.gets++;
  p->traffic.get_bytes += ev.mlength;
  if (ev.ni_fail_type != PTL_NI_OK) {
    p->direct.failures++;
    Complain("client %u: failed get: %s", p->id, EventStr(ev).c_str());
  } else if (ev.rlength != b.length || ev.mlength != b.length) {
    p->direct.bad_lengths++;
    Complain("client %u: get announced %u bytes: %s", p->id, b.length, EventStr(ev).c_str());
  }
}

void Server::OnGetPut(Peer& p, const ptl_event_t& ev) {
  p.last_ns = NowNs();
  p.traffic.getputs++;
  p.traffic.getput_bytes += ev.mlength;
  if (ev.ni_fail_type != PTL_NI_OK) {
    p.direct.failures++;
    Complain("client %u: failed getput: %s", p.id, EventStr(ev).c_str());
    return;
  }
  Bits b = DecodeBits(ev.match_bits);
  auto seq = p.getputs.Extend(HdrSeq32(ev.hdr_data));
  if (b.client != p.id || !SameId(ev.initiator, p.addr) || !seq || (*seq & 0xffff) != b.seq16) {
    p.direct.corruptions++;
    Complain("client %u: getput header corrupted: %s", p.id, EventStr(ev).c_str());
    return;
  }
  if (ev.rlength != b.length || ev.mlength != b.length || b.length > gp_bytes_) {
    p.direct.bad_lengths++;
    Complain("client %u: getput seq %" PRIu64 " announced %u bytes: %s", p.id, *seq, b.length,
             EventStr(ev).c_str());
  }
  switch (p.getputs.Observe(*seq)) {
    case SeqTracker::Verdict::kDuplicate:
      Complain("client %u: getput seq %" PRIu64 " arrived again (duplicate)", p.id, *seq);
      break;
    case SeqTracker::Verdict::kLate:
      Complain("client %u: getput seq %" PRIu64 " arrived late (reordered)", p.id, *seq);
      break;
    case SeqTracker::Verdict::kBogus:
      Complain("client %u: getput seq %" PRIu64 " is far out of sequence", p.id, *seq);
      break;
    default:
      break;
  }
}

void Server::Credit(Peer& p) {
  uint64_t upto = p.puts.Accounted();
  int rc = PtlPut(credit_md_, PTL_NO_ACK_REQ, p.addr, kPtCredit, 0,
                  MatchBits(Tag::kCredit, p.id, 0, 0), 0, upto);
  if (rc != PTL_OK) {
    p.direct.failures++;
    Complain("client %u: PtlPut (credit): %s", p.id, PtlErrorStr(rc));
    return;
  }
  p.credited = upto;
}

void Server::OnFin(Peer& p, const CtrlMsg& m) {
  p.last_ns = NowNs();
  if (p.fin_seen) {
    if (p.done) SendReport(p);  // the client asked again
    return;
  }
  p.fin_seen = true;
  p.fin = m.body.fin;
  p.fin_ns = p.last_ns;
  TryFinalize(p, false);
}

Errors Server::PeerErrors(const Peer& p) const {
  Errors e = p.direct;
  e.Add(p.puts.errors());
  e.lost += p.getputs.lost();
  e.duplicates += p.getputs.duplicates();
  e.reorders += p.getputs.reorders();
  e.corruptions += p.getputs.bogus();
  return e;
}

void Server::TryFinalize(Peer& p, bool force) {
  if (p.done || !p.fin_seen) return;
  const Fin& f = p.fin;
  const SeqTracker& puts = p.puts.completed();
  bool ready = p.puts.Settled(f.puts) && p.traffic.gets >= f.gets && p.getputs.next() >= f.getputs;
  if (!ready && !force) return;
  if (!ready) {
    p.direct.timeouts++;
    Complain("client %u: %d ms after its FIN (%" PRIu64 " puts, %" PRIu64 " gets, %" PRIu64
             " getputs) still waiting for puts from seq %" PRIu64 ", %" PRIu64
             " gets, getputs from seq %" PRIu64,
             p.id, o_.timeout_ms, f.puts, f.gets, f.getputs, p.puts.Accounted(),
             f.gets > p.traffic.gets ? f.gets - p.traffic.gets : 0, p.getputs.next());
  }
  p.puts.Finish(f.puts);
  p.getputs.Finish(f.getputs);
  if (p.traffic.gets < f.gets) {
    p.direct.lost += f.gets - p.traffic.gets;
    Complain("client %u: %" PRIu64 " of its %" PRIu64 " gets never reached the get buffer", p.id,
             f.gets - p.traffic.gets, f.gets);
  } else if (p.traffic.gets > f.gets) {
    p.direct.unexpected += p.traffic.gets - f.gets;
    Complain("client %u: served %" PRIu64 " gets, the client made %" PRIu64, p.id, p.traffic.gets,
             f.gets);
  }
  if (puts.lost())
    Complain("client %u: %" PRIu64 " of its %" PRIu64 " puts never arrived", p.id, puts.lost(),
             f.puts);
  if (p.getputs.lost())
    Complain("client %u: %" PRIu64 " of its %" PRIu64 " getputs never arrived", p.id,
             p.getputs.lost(), f.getputs);
  if (puts.bogus() || p.getputs.bogus())
    Complain("client %u: %" PRIu64 " messages with sequence numbers it never sent", p.id,
             puts.bogus() + p.getputs.bogus());
  if (gp_bytes_ && Crc32c(p.area.data(), gp_bytes_) != f.getput_area_crc) {
    p.direct.corruptions++;
    Complain("client %u: the getput area does not hold what its getputs left there", p.id);
  }
  p.final_errors = PeerErrors(p);
  p.done = true;
  p.done_ns = NowNs();
  last_done_ns_ = p.done_ns;
  done_++;
  SendReport(p);
  Note(o_.quiet,
       "client %u finished: %" PRIu64 " puts (%s), %" PRIu64 " gets, %" PRIu64 " getputs, %" PRIu64
       " errors",
       p.id, p.traffic.puts, Bytes(p.traffic.put_bytes).c_str(), p.traffic.gets, p.traffic.getputs,
       p.final_errors.Total());
}

void Server::SendReport(Peer& p) {
  CtrlMsg r = MakeCtrl(CtrlType::kReport, p.id, p.nonce);
  r.body.report.traffic = p.traffic;
  r.body.report.errors = p.final_errors;
  int rc = ctrl_.Send(p.addr, r);
  if (rc != PTL_OK) {
    p.direct.failures++;
    Complain("client %u: sending the REPORT: %s", p.id, PtlErrorStr(rc));
  }
}

void Server::CheckTimers() {
  int64_t now = NowNs();
  int64_t limit = int64_t{o_.timeout_ms} * 1000000;
  if (now - drops_checked_ns_ > 1000000000) {  // say so when it happens
    drops_checked_ns_ = now;
    uint64_t drops = DropCount(ni_) - drops_base_;
    if (drops > drops_seen_) {
      Complain("Portals has dropped %" PRIu64
               " message(s) at this interface so far "
               "(PTL_SR_DROP_COUNT): a put or get that matched no buffer",
               drops);
      drops_seen_ = drops;
    }
  }
  for (auto& pp : peers_) {
    Peer& p = *pp;
    if (p.done) continue;
    if (p.fin_seen) {
      if (now - p.fin_ns > limit) TryFinalize(p, true);
      continue;
    }
    if (now - p.last_ns <= limit) continue;
    // Silent without a FIN: the client hangs, or has gone.
    p.direct.timeouts++;
    auto first_missing = p.puts.completed().FirstMissing();
    Complain(
        "client %u at %s: nothing for %d ms and no FIN (it hangs or has exited); so far %" PRIu64
        " puts, %" PRIu64 " gets, %" PRIu64 " getputs; every put below seq %" PRIu64
        " complete, %zu matched but not complete%s",
        p.id, IdStr(p.addr).c_str(), o_.timeout_ms, p.traffic.puts, p.traffic.gets,
        p.traffic.getputs, p.puts.Accounted(), p.puts.in_flight(),
        first_missing ? (", first missing seq " + std::to_string(*first_missing)).c_str() : "");
    p.puts.Finish(p.puts.matched().next());
    p.getputs.Finish(p.getputs.next());
    p.final_errors = PeerErrors(p);
    p.done = true;
    p.done_ns = now;
    last_done_ns_ = now;
    done_++;
  }
  if (peers_.size() < o_.clients && now - std::max(start_ns_, last_hello_ns_) > limit) {
    global_.timeouts++;
    Complain("waited %d ms for clients: %zu of %u connected", o_.timeout_ms, peers_.size(),
             o_.clients);
    stop_ = true;
  }
}

int Server::Report() {
  uint64_t drops = DropCount(ni_) - drops_base_;
  if (drops) {
    global_.portals_drops = drops;
    if (drops > drops_seen_)
      Complain("Portals dropped %" PRIu64
               " message(s) at this interface (PTL_SR_DROP_COUNT): no matching buffer, access"
               " control or bounds",
               drops);
  }
  if (Crc32c(get_buf_.data(), get_buf_.size()) != get_crc_) {
    global_.corruptions++;
    Complain("the get buffer changed: something wrote into memory only gets may read");
  }
  Traffic total;
  Errors errors = global_;
  std::string per_client = "[";
  for (auto& p : peers_) {
    // Counted now, so anything arriving after a client's REPORT counts too.
    Errors pe = PeerErrors(*p);
    total.Add(p->traffic);
    errors.Add(pe);
    if (per_client.size() > 1) per_client += ",";
    per_client += JsonObject()
                      .Add("id", uint64_t{p->id})
                      .Add("peer", IdStr(p->addr))
                      .Add("finished", p->done && p->fin_seen)
                      .Add("pass", p->done && p->fin_seen && pe.Total() == 0)
                      .AddRaw("received", TrafficJson(p->traffic))
                      .AddRaw("errors", ErrorsJson(pe))
                      .str();
  }
  per_client += "]";
  bool all_finished = done_ == o_.clients;
  for (auto& p : peers_) all_finished &= p->fin_seen;
  bool pass = errors.Total() == 0 && all_finished && peers_.size() == o_.clients;
  int64_t t0 = first_hello_ns_ ? first_hello_ns_ : start_ns_;
  int64_t t1 = last_done_ns_ ? last_done_ns_ : NowNs();
  double elapsed = std::max(1e-9, (t1 - t0) / 1e9);
  double mbps = total.Bytes() / elapsed / 1e6;
  double ops = total.Ops() / elapsed;

  std::string json = JsonObject()
                         .Add("role", "server")
                         .Add("id", IdStr(self_))
                         .Add("pass", pass)
                         .Add("clients_expected", uint64_t{o_.clients})
                         .Add("clients_connected", uint64_t{peers_.size()})
                         .Add("clients_finished", uint64_t{done_})
                         .Add("seed", o_.seed)
                         .Add("elapsed_s", elapsed)
                         .Add("mb_per_s", mbps)
                         .Add("ops_per_s", ops)
                         .AddRaw("received", TrafficJson(total))
                         .AddRaw("errors", ErrorsJson(errors))
                         .AddRaw("per_client", per_client)
                         .str();
  Summary s{0, pass ? 1u : 0u, elapsed, total, errors};
  SendSummary(o_.report_fd, s, json);
  if (o_.json) {
    std::printf("%s\n", json.c_str());
  } else if (!o_.quiet || !pass) {
    char buf[2048];
    std::snprintf(buf, sizeof(buf),
                  "ptl_stress server %s (seed %" PRIu64
                  "): %s\n"
                  "  clients   %zu of %u connected, %u finished\n"
                  "  received  %" PRIu64 " puts (%s), served %" PRIu64 " gets (%s), %" PRIu64
                  " getputs in %.3f s\n"
                  "  rate      %.1f MB/s, %.0f ops/s\n"
                  "  errors    %s\n",
                  IdStr(self_).c_str(), o_.seed, pass ? "PASS" : "FAIL", peers_.size(), o_.clients,
                  done_, total.puts, Bytes(total.put_bytes).c_str(), total.gets,
                  Bytes(total.get_bytes).c_str(), total.getputs, elapsed, mbps, ops,
                  ErrorsText(errors).c_str());
    std::fputs(buf, stdout);
  }
  std::fflush(stdout);
  PtlFini();
  return pass ? kExitPass : kExitErrors;
}

}  // namespace

int RunServer(const Options& o) {
  Server s(o);
  return s.Run();
}

}  // namespace ptl_stress
