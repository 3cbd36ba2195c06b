// SPDX-License-Identifier: BSD-3-Clause
// The rules of rtscts/reliable.c, proto.c, open.c, credit.c and timers.c,
// function by function where the model keeps them (the names say which).
#include "protocol.h"

#include <algorithm>
#include <cstdlib>
#include <utility>

namespace ptl_sim {

enum class MState : uint8_t { kQueued, kAwaitCts, kWaitAcks };

struct TxMsg {
  uint64_t len = 0;    // the message's payload
  uint64_t total = 0;  // bytes to send (after a CTS: what it accepted)
  uint64_t next_off = 0;
  AppInfo app;
  uint32_t unacked = 0;
  MState state = MState::kQueued;
  bool rts = false, hdr_out = false, open = false, credit_wait = false;
};

struct Transport::TxFrame {
  uint32_t seq = 0;
  FrameType type = FrameType::kMsg;
  uint32_t msg_id = 0;
  bool orphan = false;  // its message ended (an RTS whose CTS came)
  uint64_t off = 0;
  uint32_t len = 0;
  uint64_t cts_len = 0;
  bool cts_drop = false;
  Time sent = 0;
  bool sacked = false, retransmitted = false, last = false;
};

struct CtsOut {
  uint32_t msg_id;
  uint64_t len;
  bool drop;
};

struct RxMsg {
  uint64_t got, total;
  AppInfo app;
  bool request;
  bool waiting = false;   // its CTS waits for the budget
  bool budgeted = false;  // granted: what is still to come counts in the budget
  Time last = 0;          // budgeted: granted, or its last DATA
};

struct Transport::Peer {
  Peer(Sim& sim, Transport* t, int n)
      : nid(n), timer(sim, [t, this] { t->TimerFired(*this); }), ack_timer(sim, [t, this] {
          t->cpu_.SubmitFront(t->costs_.timer, [t, this] {
            if (ack_delayed) t->SendAck(*this, false);
            t->Flush();
          });
        }) {}

  int nid;
  // our stream to it
  uint32_t tx_stream = 0, snd_una = 0, snd_nxt = 0;
  uint32_t cwnd = 0, ssthresh = 0, cwnd_acc = 0, rwnd = 0;
  uint32_t srtt_us = 0, rttvar_us = 0, rto_us = 0;
  uint8_t backoff = 0;
  bool in_recovery = false, rto_recovery = false, probed = false, resolved = false;
  uint32_t recovery_end = 0, next_msg_id = 0;
  Fifo<TxFrame> inflight;  // inflight[i].seq == snd_una + i
  Fifo<CtsOut> ctlq;
  Fifo<uint32_t> txq, txq_begun;
  std::unordered_map<uint32_t, TxMsg> msgs;
  uint32_t tx_open = 0, tx_reqs = 0, tx_grant = 0;
  Time resolve_at = kNever, last_progress = 0, last_rx = 0;
  Time timer_due = kNever;   // the deadline the timer was last set for
  bool late_waited = false;  // it fired late and waited a tick (timers.c)
  // its stream to us
  uint32_t rx_stream = 0, rcv_nxt = 0;
  std::map<uint32_t, Frame> ooo;
  uint64_t ooo_bytes = 0;
  std::unordered_map<uint32_t, RxMsg> rx_msgs;
  uint32_t rx_open = 0, rx_reqs = 0, rx_reqs_done = 0, grant_sent = 0, rx_unacked = 0;
  bool ack_now = false, ack_delayed = false;
  Timer timer, ack_timer;
};

Transport::Transport(Sim& sim, int id, const ProtoParams& p, const Costs& c, Cpu& cpu,
                     Fabric& fabric, const Hooks* hooks)
    : sim_(sim), id_(id), pp_(p), costs_(c), cpu_(cpu), fabric_(fabric), hooks_(hooks) {}

Transport::~Transport() = default;

Transport::PeerView Transport::view(int nid) const {
  const Peer& p = *peers_.at(nid);
  return PeerView{
      p.cwnd,    p.ssthresh,    p.rto_us,      p.srtt_us, static_cast<uint32_t>(p.inflight.size()),
      p.backoff, p.in_recovery, p.rto_recovery};
}

// ---- peers (peer.c) ----

Transport::Peer& Transport::GetPeer(int nid, bool from_frame) {
  auto& slot = peers_[nid];
  if (!slot) {
    slot = std::make_unique<Peer>(sim_, this, nid);
    Peer& p = *slot;
    p.tx_stream = next_stream_++;
    p.cwnd = pp_.init_cwnd;
    p.ssthresh = pp_.max_window;
    p.rwnd = pp_.init_cwnd;
    p.rto_us = static_cast<uint32_t>(std::max(pp_.min_rto, pp_.init_rto) / kUs);
    p.tx_grant = pp_.req_credit;
    p.resolved = pp_.resolve == 0;
    p.last_progress = p.last_rx = sim_.now();
    st_.peers_max = std::max(st_.peers_max, peers_.size());
  }
  // A frame that passed every check teaches the peer's address.
  if (from_frame) slot->resolved = true;
  return *slot;
}

bool Transport::Busy(const Peer& p) const {
  return !p.inflight.empty() || !p.ctlq.empty() || !p.msgs.empty() || !p.rx_msgs.empty();
}

// ---- sending (proto.c, reliable.c) ----

void Transport::Send(int dst, uint64_t len, const AppInfo& app) {
  Peer& p = GetPeer(dst, false);
  uint32_t id = p.next_msg_id++;
  TxMsg& m = p.msgs[id];
  m.len = m.total = len;
  m.app = app;
  m.rts = len > pp_.eager_max;
  if (p.msgs.size() == 1 && p.inflight.empty()) p.last_progress = sim_.now();
  p.txq.push_back(id);
  st_.msgs_tx++;
  if (m.rts) st_.rts++;
  Push(p);
  Flush();
}

// The frames a handler built go out together, their transmit work first.
void Transport::Flush() {
  if (xq_.empty()) return;
  double cost = 0;
  for (const Frame& f : xq_) cost += costs_.frame_tx + costs_.tx_per_byte * f.payload;
  cpu_.SubmitFront(static_cast<Time>(cost), [this, frames = std::move(xq_)] {
    for (const Frame& f : frames) fabric_.Send(f);
  });
  xq_.clear();
}

// rtscts_tx_next, rtscts_next_msg_frame, rtscts_next_frame.
bool Transport::NextFrame(Peer& p, TxFrame& t) {
  if (!p.ctlq.empty()) {
    CtsOut c = p.ctlq.front();
    p.ctlq.pop_front();
    t = TxFrame{};
    t.type = FrameType::kCts;
    t.msg_id = c.msg_id;
    t.cts_len = c.len;
    t.cts_drop = c.drop;
    return true;
  }
  uint32_t msg_room = pp_.mtu - kMsgHdrLen;
  TxMsg* m = nullptr;
  uint32_t id = 0;
  bool from_txq = false;
  if (!p.txq.empty()) {
    id = p.txq.front();
    TxMsg& q = p.msgs.at(id);
    bool opens = (q.rts || q.total > msg_room) && !q.open;
    bool may_open = p.tx_open < pp_.max_open || !opens;
    bool credit = p.tx_reqs < p.tx_grant;
    if (!credit && !q.credit_wait) {
      q.credit_wait = true;  // counted once per request that waits
      st_.credit_waits++;
    }
    if (may_open && credit) {
      m = &q;
      from_txq = true;
    }
  }
  if (!m && !p.txq_begun.empty()) {
    id = p.txq_begun.front();
    m = &p.msgs.at(id);
  }
  if (!m) return false;
  t = TxFrame{};
  t.msg_id = id;
  if (!m->hdr_out && m->rts) {
    t.type = FrameType::kRts;
    p.tx_reqs++;  // credit spent
    m->hdr_out = true;
    if (!m->open) {
      m->open = true;
      p.tx_open++;
    }
    m->unacked++;
    m->state = MState::kAwaitCts;
    p.txq.pop_front();
    return true;
  }
  t.type = m->hdr_out ? FrameType::kData : FrameType::kMsg;
  uint32_t room = pp_.mtu - HeaderLen(t.type);
  t.off = m->next_off;
  t.len = static_cast<uint32_t>(std::min<uint64_t>(m->total - m->next_off, room));
  bool header = !m->hdr_out;
  if (header) p.tx_reqs++;
  m->hdr_out = true;
  m->next_off += t.len;
  m->unacked++;
  if (m->next_off < m->total) {
    if (!m->open) {
      m->open = true;
      p.tx_open++;
    }
    if (header) {
      p.txq.pop_front();
      p.txq_begun.push_back(id);
    }
  } else {
    if (m->open) {
      m->open = false;
      p.tx_open--;
    }
    t.last = true;
    m->state = MState::kWaitAcks;
    if (from_txq)
      p.txq.pop_front();
    else
      p.txq_begun.pop_front();
  }
  return true;
}

Frame Transport::Build(Peer& p, const TxFrame& t) {
  Frame f;
  f.src = id_;
  f.dst = p.nid;
  f.type = t.type;
  f.stream = p.tx_stream;
  f.seq = t.seq;
  f.msg_id = t.msg_id;
  f.ack_req = t.last || t.type == FrameType::kCts;
  f.resent = t.retransmitted;
  switch (t.type) {
    case FrameType::kMsg:
    case FrameType::kRts: {
      const TxMsg& m = p.msgs.at(t.msg_id);
      f.length = m.len;
      f.app = m.app;
      f.request = true;
      f.payload = t.len;
      break;
    }
    case FrameType::kData:
      f.offset = t.off;
      f.payload = t.len;
      break;
    case FrameType::kCts:
      f.length = t.cts_len;
      f.cts_drop = t.cts_drop;
      break;
    case FrameType::kAck:
      break;
  }
  FillAck(p, f);
  st_.frames_tx++;
  return f;
}

// rtscts_fill_ack, with rtscts_credit_fill.
void Transport::FillAck(Peer& p, Frame& f) {
  f.window = pp_.max_window;
  if (!p.rx_stream) return;
  p.ack_delayed = false;
  f.ack_stream = p.rx_stream;
  f.ack = p.rcv_nxt;
  for (const auto& [seq, held] : p.ooo) {
    uint32_t d = seq - p.rcv_nxt - 1;
    if (d >= 64) break;
    f.sack |= uint64_t{1} << d;
  }
  f.grant = p.rx_reqs_done + pp_.req_credit;
  p.grant_sent = f.grant;
  p.ack_now = false;
  p.rx_unacked = 0;
}

void Transport::SendAck(Peer& p, bool ack_req) {
  if (!p.resolved) return;
  Frame f;
  f.src = id_;
  f.dst = p.nid;
  f.type = FrameType::kAck;
  f.ack_req = ack_req;
  FillAck(p, f);
  st_.frames_tx++;
  st_.acks_tx++;
  xq_.push_back(f);
}

// rtscts_ack_soon: the ack of a message's last frame, within ack_delay.
void Transport::AckSoon(Peer& p) {
  if (pp_.ack_delay == 0) {
    p.ack_now = true;
    return;
  }
  if (p.ack_delayed) return;
  p.ack_delayed = true;
  p.ack_timer.Arm(sim_.now() + pp_.ack_delay);
}

// rtscts_push
void Transport::Push(Peer& p) {
  if (!p.resolved) {
    if (p.resolve_at == kNever) p.resolve_at = sim_.now() + pp_.resolve;
    ArmTimer(p);
    return;
  }
  uint32_t limit = std::min({p.cwnd, p.rwnd, pp_.max_window});
  bool was_idle = p.inflight.empty();
  TxFrame t;
  while (p.inflight.size() < limit && NextFrame(p, t)) {
    t.seq = p.snd_nxt++;
    t.sent = sim_.now();
    p.inflight.push_back(t);
    xq_.push_back(Build(p, p.inflight.back()));
  }
  if (was_idle && !p.inflight.empty()) {
    p.last_progress = sim_.now();
    ArmTimer(p);
  }
  if (p.ack_now) SendAck(p, false);
}

// ---- acknowledgements received (rtscts_on_ack) ----

void Transport::OnAck(Peer& p, const Frame& f) {
  if (!f.ack_stream || f.ack_stream != p.tx_stream) return;
  p.rwnd = f.window;
  if (f.grant > p.tx_grant && f.grant <= p.tx_reqs + pp_.req_credit) p.tx_grant = f.grant;
  if (f.ack > p.snd_nxt) return;  // a lie
  uint32_t acked = 0;
  bool resent = false;
  Time newest = -1;
  while (!p.inflight.empty() && p.inflight.front().seq < f.ack) {
    TxFrame t = p.inflight.front();
    p.inflight.pop_front();
    acked++;
    if (t.retransmitted)
      resent = true;
    else
      newest = t.sent;
    FrameAcked(p, t);
  }
  if (acked) {
    p.snd_una = f.ack;
    p.last_progress = sim_.now();
    p.backoff = 0;
    p.probed = false;
    if (newest >= 0 && !resent) RttSample(p, newest);  // Karn
    if ((p.in_recovery || p.rto_recovery) && p.snd_una >= p.recovery_end)
      p.in_recovery = p.rto_recovery = false;
    if (!p.in_recovery) CwndGrow(p, acked);
    ArmTimer(p);
  }
  if (f.sack) {
    std::size_t n = std::min<std::size_t>(p.inflight.size(), 65);
    for (std::size_t i = 0; i < n; i++) {
      uint32_t d = p.inflight[i].seq - f.ack - 1;
      if (d < 64 && (f.sack >> d & 1)) p.inflight[i].sacked = true;
    }
    SackRecover(p);
  }
  if (p.rto_recovery && (acked || f.sack)) ResendLost(p);
}

// rtscts_frame_acked: the message may be done.
void Transport::FrameAcked(Peer& p, const TxFrame& t) {
  if (t.orphan || t.type == FrameType::kCts) return;
  auto it = p.msgs.find(t.msg_id);
  if (it == p.msgs.end()) return;
  if (--it->second.unacked == 0 && it->second.state == MState::kWaitAcks)
    TxDone(p, t.msg_id, true, true);
}

void Transport::TxDone(Peer& p, uint32_t id, bool ok, bool delivered) {
  auto it = p.msgs.find(id);
  TxMsg m = it->second;
  p.msgs.erase(it);
  if (m.open) p.tx_open--;
  if (!ok) st_.msgs_failed++;
  if (hooks_ && hooks_->sent) hooks_->sent(p.nid, m.app, m.len, ok && delivered);
}

void Transport::RttSample(Peer& p, Time sent) {
  auto r = static_cast<uint32_t>(std::max<Time>((sim_.now() - sent) / kUs, 1));
  if (!p.srtt_us) {
    p.srtt_us = r;
    p.rttvar_us = r / 2;
  } else {
    uint32_t err = p.srtt_us > r ? p.srtt_us - r : r - p.srtt_us;
    p.rttvar_us = (3 * p.rttvar_us + err) / 4;
    p.srtt_us = (7 * p.srtt_us + r) / 8;
  }
  uint64_t rto = p.srtt_us + std::max<uint64_t>(4 * uint64_t{p.rttvar_us}, pp_.tick / kUs);
  rto = std::clamp<uint64_t>(rto, pp_.min_rto / kUs, pp_.max_rto / kUs);
  p.rto_us = static_cast<uint32_t>(rto);
}

void Transport::CwndGrow(Peer& p, uint32_t acked) {
  if (p.cwnd < p.ssthresh) {
    p.cwnd = std::min(p.cwnd + acked, pp_.max_window);
    return;
  }
  p.cwnd_acc += acked;
  if (p.cwnd_acc >= p.cwnd) {
    p.cwnd_acc -= p.cwnd;
    p.cwnd = std::min(p.cwnd + 1, pp_.max_window);
  }
}

void Transport::EnterRecovery(Peer& p) {
  if (p.in_recovery || p.rto_recovery) return;
  p.in_recovery = true;
  p.recovery_end = p.snd_nxt;
  p.ssthresh = std::max(p.cwnd / 2, pp_.min_cwnd);
  p.cwnd = p.ssthresh;
}

Time Transport::RtoNs(const Peer& p) const { return Time{p.rto_us} * kUs; }

void Transport::Retransmit(Peer& p, TxFrame& t) {
  t.retransmitted = true;
  t.sent = sim_.now();
  st_.retransmits++;
  if (!t.orphan) xq_.push_back(Build(p, t));
}

// rtscts_sack_recover: dupack frames sacked above a hole.
void Transport::SackRecover(Peer& p) {
  Time rto = RtoNs(p);
  uint32_t n = static_cast<uint32_t>(p.inflight.size());
  uint32_t thresh = std::clamp<uint32_t>(n ? n - 1 : 0, 1, pp_.dupack);
  uint32_t above = 0;
  for (uint32_t i = n; i-- > 0;) {
    TxFrame& t = p.inflight[i];
    if (t.sacked) {
      above++;
      continue;
    }
    if (above < thresh) continue;
    if (t.retransmitted && sim_.now() - t.sent < rto) continue;
    EnterRecovery(p);
    Retransmit(p, t);
  }
}

// rtscts_resend_lost: after a timeout, what is not sacked, as cwnd allows.
void Transport::ResendLost(Peer& p) {
  Time rto = RtoNs(p);
  uint32_t pipe = 0;
  for (TxFrame& t : p.inflight)
    if (!t.sacked && t.retransmitted && sim_.now() - t.sent < rto) pipe++;
  for (TxFrame& t : p.inflight) {
    if (pipe >= p.cwnd) break;
    if (t.sacked || (t.retransmitted && sim_.now() - t.sent < rto)) continue;
    t.last = true;
    Retransmit(p, t);
    pipe++;
  }
}

bool Transport::TailProbe(Peer& p) {
  for (std::size_t i = p.inflight.size(); i-- > 0;) {
    TxFrame& t = p.inflight[i];
    if (t.sacked) continue;
    p.probed = true;
    t.last = true;
    st_.probes++;
    Retransmit(p, t);
    return true;
  }
  return false;
}

// rtscts_retransmit_oldest: the timeout.
void Transport::RetransmitOldest(Peer& p) {
  if (p.inflight.empty()) return;
  st_.timeouts++;
  if (on_timeout) on_timeout(p.nid, sim_.now());
  p.ssthresh = std::max(p.cwnd / 2, pp_.min_cwnd);
  p.cwnd = pp_.min_cwnd;
  p.in_recovery = false;
  p.rto_recovery = true;
  p.recovery_end = p.snd_nxt;
  if (p.backoff < 16) p.backoff++;
  uint32_t sent = 0;
  for (TxFrame& t : p.inflight) {
    if (t.sacked) {
      t.sacked = false;
      continue;
    }
    if (sent++ >= p.cwnd) continue;
    t.last = true;
    Retransmit(p, t);
  }
}

// ---- the peer's timer (timers.c) ----

Time Transport::BackedOffRto(const Peer& p) const {
  Time t = std::min(RtoNs(p) << p.backoff, pp_.max_rto);
  return std::max(t, pp_.tick);
}

void Transport::ArmTimer(Peer& p) {
  p.late_waited = false;
  if (!Busy(p)) {
    if (p.timer.armed()) {
      p.timer.Cancel();
      timers_--;
    }
    return;
  }
  Time delay;
  if (!p.resolved)
    delay = std::max<Time>(p.resolve_at - sim_.now(), 0);
  else if (!p.inflight.empty() && !p.probed && p.srtt_us)
    delay = std::min(std::max<Time>(2 * Time{p.srtt_us} * kUs, 2 * pp_.tick), BackedOffRto(p));
  else if (!p.inflight.empty())
    delay = BackedOffRto(p);
  else
    delay = std::max(BackedOffRto(p), pp_.probe_min);
  SetTimer(p, delay);
}

// mod_timer(jiffies + usecs_to_jiffies(delay)): expiries fall on ticks
// (this node's: tick_phase_ after the model's).
void Transport::SetTimer(Peer& p, Time delay) {
  Time ticks = std::max<Time>((delay + pp_.tick - 1) / pp_.tick, 1);
  Time jiffy = (sim_.now() - tick_phase_ + pp_.tick) / pp_.tick - 1;  // now - phase > -tick
  Time when = (jiffy + ticks) * pp_.tick + tick_phase_;
  if (!p.timer.armed()) {
    timers_++;
    st_.timers_max = std::max(st_.timers_max, timers_);
  }
  p.timer.Arm(when);
  p.timer_due = when;
}

// rtscts_timer_late: a loss timer run well after its deadline (the CPU was
// busy) waits a tick, once, for the acknowledgements queued behind it.
bool Transport::TimerLate(Peer& p) {
  Time margin = 2 * pp_.tick + BackedOffRto(p) / 8;
  if (p.late_waited || sim_.now() <= p.timer_due + margin) return false;
  p.late_waited = true;
  st_.late_timers++;
  SetTimer(p, 1);
  return true;
}

void Transport::TimerFired(Peer& p) {
  timers_--;
  cpu_.SubmitFront(costs_.timer, [this, &p] {
    OnTimer(p);
    PushGranted();
    Flush();
  });
}

void Transport::OnTimer(Peer& p) {
  if (p.timer.armed()) return;  // re-armed while the expiry waited for the CPU
  if (!Busy(p)) return;
  if (pp_.cts_budget && pp_.cts_idle) ReclaimGrants(p);
  Time stalled = (!p.inflight.empty() || !p.resolved) ? p.last_progress : p.last_rx;
  if (sim_.now() > stalled + pp_.peer_timeout) {
    PeerFail(p);
    return;
  }
  if (!p.resolved) {
    if (sim_.now() >= p.resolve_at) p.resolved = true;
    Push(p);
    ArmTimer(p);
    return;
  }
  if (!p.inflight.empty() && TimerLate(p)) return;
  if (!p.inflight.empty() && !p.probed && p.srtt_us) {
    if (!TailProbe(p)) RetransmitOldest(p);
  } else if (!p.inflight.empty()) {
    RetransmitOldest(p);
  } else if (sim_.now() > p.last_rx + BackedOffRto(p)) {
    st_.keepalives++;
    SendAck(p, true);  // a probe: is it alive?
  }
  Push(p);
  ArmTimer(p);
}

// The peer is unreachable: everything with it fails, a new stream starts.
void Transport::PeerFail(Peer& p) {
  st_.unreachable++;
  std::vector<uint32_t> ids;
  for (const auto& [id, m] : p.msgs) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  for (uint32_t id : ids) TxDone(p, id, false, false);
  p.inflight.clear();
  p.ctlq.clear();
  p.txq.clear();
  p.txq_begun.clear();
  p.tx_open = 0;
  FailRx(p, true);  // its stream to us goes on where it was
  p.tx_stream = next_stream_++;
  p.snd_una = p.snd_nxt = 0;
  p.cwnd = pp_.init_cwnd;
  p.ssthresh = pp_.max_window;
  p.cwnd_acc = 0;
  p.backoff = 0;
  p.in_recovery = p.rto_recovery = p.probed = false;
  p.tx_reqs = 0;
  p.tx_grant = pp_.req_credit;
  ArmTimer(p);
}

// ---- receiving (reliable.c, proto.c, open.c, credit.c, ooo.c) ----

void Transport::Receive(const Frame& f) {
  Peer& p = GetPeer(f.src, true);
  st_.frames_rx++;
  p.last_rx = sim_.now();
  OnAck(p, f);
  if (f.type == FrameType::kAck) {
    if (f.ack_req) p.ack_now = true;
  } else {
    RxSeq(p, f);
  }
  Push(p);
  PushGranted();
  Flush();
}

// Messages partly received from the peer fail (rtscts_fail_rx), and what
// it holds ahead of a gap goes (rtscts_ooo_purge). answer_waiting (we
// found the peer unreachable; its stream goes on): an RTS still waiting
// for its CTS is answered with a CTS that drops it, or its sender, whose
// probes we answer, would wait for ever.
void Transport::FailRx(Peer& p, bool answer_waiting) {
  std::vector<uint32_t> ids;
  for (const auto& [id, m] : p.rx_msgs) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  bool freed = false;
  for (uint32_t id : ids) {
    RxMsg m = p.rx_msgs.at(id);
    p.rx_msgs.erase(id);
    p.rx_open--;
    rx_open_--;
    if (m.waiting) {
      waiting_--;  // its entry in cts_wait_ is skipped
      if (answer_waiting) {
        p.ctlq.push_back(CtsOut{id, 0, true});
        grant_push_.push_back(p.nid);
      }
    }
    if (m.budgeted) {
      granted_ -= m.total - std::min(m.got, m.total);
      freed = true;
    }
    st_.msgs_failed++;
    RxComplete(p, m.app, m.got, m.request, false);
  }
  ooo_bytes_ -= p.ooo_bytes;
  p.ooo.clear();
  p.ooo_bytes = 0;
  if (freed) GrantWaiting();
}

// The peer's new stream: what the old one left fails, counts start again.
void Transport::ResetRx(Peer& p) {
  FailRx(p);
  rx_reqs_ -= p.rx_reqs - p.rx_reqs_done;
  p.rx_reqs = p.rx_reqs_done = p.rcv_nxt = p.rx_unacked = 0;
  p.grant_sent = pp_.req_credit;
}

void Transport::RxSeq(Peer& p, const Frame& f) {
  if (f.stream != p.rx_stream) {
    if (p.rx_stream && f.stream < p.rx_stream) {
      st_.stale++;
      return;
    }
    ResetRx(p);
    p.rx_stream = f.stream;
  }
  if (f.seq < p.rcv_nxt) {
    st_.duplicates++;
    p.ack_now = true;  // our ack may have been lost
    return;
  }
  if (f.seq != p.rcv_nxt) {
    OooInsert(p, f);
    p.ack_now = true;
    return;
  }
  if (!InOrder(p, f)) return;
  while (!p.ooo.empty() && p.ooo.begin()->first == p.rcv_nxt) {
    auto node = p.ooo.extract(p.ooo.begin());
    uint64_t size =
        node.mapped().len() <= 3500 ? 2304 : 768 + (node.mapped().len() + 4095) / 4096 * 4096;
    p.ooo_bytes -= size;
    ooo_bytes_ -= size;
    if (!InOrder(p, node.mapped())) {
      p.ooo_bytes += size;
      ooo_bytes_ += size;
      p.ooo.insert(std::move(node));
      break;
    }
  }
}

bool Transport::InOrder(Peer& p, const Frame& f) {
  if (!Deliver(p, f)) {
    st_.no_buffer++;
    return false;
  }
  p.rcv_nxt++;
  if (++p.rx_unacked >= pp_.ack_every)
    p.ack_now = true;
  else if (f.ack_req)
    AckSoon(p);
  return true;
}

// rtscts_ooo_insert: a copy's truesize (2,304 bytes for a frame that fits
// a page, else its pages and a head) under the per-peer and interface caps.
void Transport::OooInsert(Peer& p, const Frame& f) {
  if (f.seq - p.rcv_nxt >= pp_.max_window) {
    st_.no_buffer++;
    return;
  }
  if (p.ooo.count(f.seq)) {
    st_.duplicates++;
    return;
  }
  uint64_t size = f.len() <= 3500 ? 2304 : 768 + (f.len() + 4095) / 4096 * 4096;
  if (p.ooo_bytes + size > pp_.ooo_peer_cap || ooo_bytes_ + size > pp_.ooo_if_cap) {
    st_.ooo_dropped++;
    return;
  }
  p.ooo.emplace(f.seq, f);
  p.ooo_bytes += size;
  ooo_bytes_ += size;
  st_.ooo_bytes_max = std::max(st_.ooo_bytes_max, ooo_bytes_);
  st_.out_of_order++;
}

bool Transport::RxRoom(const Peer& p) const {
  return p.rx_open < pp_.max_open && rx_open_ < pp_.rx_open_max;
}

void Transport::RxOpen(Peer& p, uint32_t id, uint64_t got, uint64_t total, const AppInfo& app,
                       bool request) {
  p.rx_open++;
  rx_open_++;
  st_.rx_open_max = std::max(st_.rx_open_max, rx_open_);
  p.rx_msgs.emplace(id, RxMsg{got, total, app, request});
  if (p.rx_open == 1 && !p.timer.armed()) ArmTimer(p);
}

void Transport::RxComplete(Peer& p, const AppInfo& app, uint64_t len, bool request, bool ok) {
  if (hooks_ && hooks_->rx_end) hooks_->rx_end(p.nid, app, len, ok);
  if (request) CreditDone(p);  // no response: done with it at once
}

void Transport::CreditDone(Peer& p) {
  p.rx_reqs_done++;
  rx_reqs_--;
  if (p.rx_reqs_done + pp_.req_credit - p.grant_sent >= pp_.req_credit / 4) p.ack_now = true;
}

// rtscts_deliver: false if the frame cannot be taken now (credit).
bool Transport::Deliver(Peer& p, const Frame& f) {
  switch (f.type) {
    case FrameType::kMsg:
    case FrameType::kRts: {
      if (f.request &&
          (p.rx_reqs - p.rx_reqs_done >= pp_.req_credit || rx_reqs_ >= pp_.rx_reqs_max)) {
        st_.credit_refused++;
        return false;
      }
      st_.msgs_rx++;
      if (f.request) {
        p.rx_reqs++;
        rx_reqs_++;
      }
      bool rts = f.type == FrameType::kRts;
      bool stays_open = rts ? f.length > 0 : f.length > f.payload;
      bool room = !stays_open || RxRoom(p);
      if (!room) st_.rx_open_dropped++;
      // Under a CTS budget, a matched RTS may have to wait for its CTS.
      bool budget = rts && room && stays_open && pp_.cts_budget;
      bool wait = budget && !MayGrant(f.length);
      if (rts && !wait) p.ctlq.push_back(CtsOut{f.msg_id, room ? f.length : 0, !room});
      if (!room) {
        if (f.request) CreditDone(p);
        return true;
      }
      if (hooks_ && hooks_->rx_start) hooks_->rx_start(p.nid, f.app);
      if (stays_open)
        RxOpen(p, f.msg_id, rts ? 0 : f.payload, f.length, f.app, f.request);
      else
        RxComplete(p, f.app, f.length, f.request, true);
      if (budget) {
        RxMsg& m = p.rx_msgs.at(f.msg_id);
        if (wait) {
          m.waiting = true;
          waiting_++;
          st_.cts_waited++;
          st_.cts_queue_max = std::max(st_.cts_queue_max, waiting_);
          cts_wait_.push_back(CtsWait{p.nid, p.rx_stream, f.msg_id, sim_.now()});
          AckSoon(p);  // no CTS goes back to carry the RTS's ack
        } else {
          m.budgeted = true;
          m.last = sim_.now();
          granted_ += f.length;
          st_.granted_max = std::max(st_.granted_max, granted_);
        }
      }
      return true;
    }
    case FrameType::kCts:
      RxCts(p, f);
      return true;
    case FrameType::kData:
      RxData(p, f);
      return true;
    case FrameType::kAck:
      break;
  }
  return true;
}

// rtscts_rx_cts: the target answered our RTS.
void Transport::RxCts(Peer& p, const Frame& f) {
  auto it = p.msgs.find(f.msg_id);
  if (it == p.msgs.end() || it->second.state != MState::kAwaitCts) return;
  TxMsg& m = it->second;
  for (TxFrame& t : p.inflight)
    if (t.msg_id == f.msg_id && t.type != FrameType::kCts) t.orphan = true;
  m.unacked = 0;
  m.total = std::min(f.length, m.len);
  if (f.cts_drop || !m.total) {
    TxDone(p, f.msg_id, true, !f.cts_drop);
    return;
  }
  m.next_off = 0;
  m.state = MState::kQueued;
  p.txq_begun.push_back(f.msg_id);
}

void Transport::RxData(Peer& p, const Frame& f) {
  auto it = p.rx_msgs.find(f.msg_id);
  if (it == p.rx_msgs.end()) return;  // the rest of one dropped: discarded
  RxMsg& m = it->second;
  bool budgeted = m.budgeted;
  if (budgeted) {
    granted_ -= std::min<uint64_t>(f.payload, m.total - std::min(m.got, m.total));
    m.last = sim_.now();
  }
  m.got += f.payload;
  if (m.got >= m.total) {
    RxMsg done = m;
    p.rx_msgs.erase(it);
    p.rx_open--;
    rx_open_--;
    RxComplete(p, done.app, done.total, done.request, true);
  }
  if (budgeted) GrantWaiting();
}

// ---- the CTS budget (not in rtscts/: the model's candidate) ----

// A CTS for `len` bytes may go now: nobody waits before it, and it keeps
// the bytes granted within the budget (or is the only one granted).
bool Transport::MayGrant(uint64_t len) const {
  return waiting_ == 0 && (granted_ == 0 || granted_ + len <= pp_.cts_budget);
}

// Granted data arrived (or its message failed): CTSes for those waiting,
// in order, as far as the budget goes.
void Transport::GrantWaiting() {
  while (!cts_wait_.empty()) {
    CtsWait w = cts_wait_.front();
    auto pit = peers_.find(w.nid);
    RxMsg* m = nullptr;
    if (pit != peers_.end() && pit->second->rx_stream == w.stream) {
      auto mit = pit->second->rx_msgs.find(w.msg_id);
      if (mit != pit->second->rx_msgs.end() && mit->second.waiting) m = &mit->second;
    }
    if (!m) {  // it failed while it waited
      cts_wait_.pop_front();
      continue;
    }
    if (granted_ && granted_ + m->total > pp_.cts_budget) break;
    cts_wait_.pop_front();
    m->waiting = false;
    m->budgeted = true;
    m->last = sim_.now();
    waiting_--;
    granted_ += m->total;
    st_.granted_max = std::max(st_.granted_max, granted_);
    st_.cts_wait_max = std::max(st_.cts_wait_max, sim_.now() - w.since);
    pit->second->ctlq.push_back(CtsOut{w.msg_id, m->total, false});
    grant_push_.push_back(w.nid);
  }
}

// At the peer's timer: a grant from which nothing has come for cts_idle
// stops counting (its sender is stuck in recovery, or gave the message up
// and, answering our probes, will never tell us). The message stays open;
// what still comes of it is taken, outside the budget.
void Transport::ReclaimGrants(Peer& p) {
  bool freed = false;
  for (auto& [id, m] : p.rx_msgs) {
    if (!m.budgeted || sim_.now() - m.last < pp_.cts_idle) continue;
    m.budgeted = false;
    granted_ -= m.total - std::min(m.got, m.total);
    st_.cts_reclaimed++;
    freed = true;
  }
  if (freed) GrantWaiting();
}

// The peers given a CTS by what the handler running now received.
void Transport::PushGranted() {
  if (grant_push_.empty()) return;
  std::vector<int> nids;
  nids.swap(grant_push_);
  for (int nid : nids) Push(*peers_.at(nid));
}

}  // namespace ptl_sim
