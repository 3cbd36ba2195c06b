// SPDX-License-Identifier: BSD-3-Clause
// The RTS/CTS transport of one node (rtscts/), as rules rather than code:
// per peer a reliable stream each way (sequence numbers, cumulative ack
// with SACK bits on every frame, an ACK after every ack_every frames or
// ack_delay after a message's last frame), Reno congestion control (cwnd
// from init_cwnd, slow start, one frame per window above ssthresh, halved
// on a fast retransmission, min_cwnd after a timeout) under the peer's
// window, loss found by SACK (dupack frames above a hole) or by a tail
// loss probe, then the retransmission timeout (srtt + 4 rttvar within
// [min_rto, max_rto], doubled per timeout, on jiffy ticks); messages eager
// (MSG then DATA) up to eager_max, RTS -> CTS -> DATA above; the bound on
// messages open at a receiver (max_open per peer, rx_open_max per
// interface), request credit (grant), the out-of-order buffer's caps.
//
// And one rule the real transport does not have (yet): receiver-driven
// admission, a CTS budget (cts_budget bytes per interface, 0: none). An
// RTS is matched and opened as ever, but its CTS is sent only while the
// bytes granted (CTSes sent) and not yet received stay within the budget;
// the others wait, in the order they came (FIFO over all peers), each
// acknowledged at once (the RTS asks for no ACK, and no CTS carries one),
// and get their CTS as granted data arrives. A message larger than the
// budget is granted alone. Waiting fails nothing: the sender, its RTS
// acknowledged and nothing in flight, probes, and the answers are the
// progress its peer timeout asks for (timers.c, rtscts_stalled_since). A
// grant from which nothing has arrived for cts_idle stops counting (its
// sender may be stuck, or gone without a word); one that waits is
// answered with a CTS that drops it if we find its sender unreachable.
//
// Left out: incarnations, RESET, CHALLENGE, authentication, checksums,
// Portals responses (ACK, REPLY: the workloads' puts ask for none), peer
// reclaim and eviction (the runs are shorter than peer_idle_s).
#ifndef PTL_SIM_PROTOCOL_H
#define PTL_SIM_PROTOCOL_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "cpu.h"
#include "event_queue.h"
#include "frame.h"
#include "network.h"

namespace ptl_sim {

// rtscts.h constants and main.c's module parameter defaults.
struct ProtoParams {
  uint32_t mtu = 1500;
  uint64_t eager_max = 16384;
  uint32_t max_window = 256;  // frames in flight, and buffered ahead of a gap
  uint32_t init_cwnd = 16;
  uint32_t min_cwnd = 2;
  uint32_t dupack = 3;
  uint32_t ack_every = 4;
  Time min_rto = 10 * kMs;
  Time max_rto = 1000 * kMs;
  Time init_rto = 200 * kMs;
  Time ack_delay = 50 * kUs;
  Time tick = 4 * kMs;  // a jiffy at HZ 250 (Debian's kernel)
  Time peer_timeout = 10 * kSec;
  Time probe_min = 100 * kMs;
  Time resolve = 20 * kMs;  // an unknown peer's address: ARP, then the timer's retry
  uint32_t max_open = 64;   // messages open at a receiver, per peer
  uint32_t rx_open_max = 16384;
  uint32_t req_credit = 256;
  uint32_t rx_reqs_max = 65536;
  uint64_t ooo_peer_cap = 4 << 20;
  uint64_t ooo_if_cap = 64 << 20;
  uint64_t cts_budget = 0;    // bytes granted and not yet received, per interface; 0: no bound
  Time cts_idle = 200 * kMs;  // a grant idle this long stops counting (0: never)
};

struct TransportStats {
  uint64_t frames_tx = 0, frames_rx = 0, acks_tx = 0, retransmits = 0, timeouts = 0;
  uint64_t probes = 0, duplicates = 0, out_of_order = 0, no_buffer = 0, ooo_dropped = 0;
  uint64_t rx_open_dropped = 0, credit_refused = 0, credit_waits = 0, stale = 0;
  uint64_t msgs_tx = 0, msgs_rx = 0, msgs_failed = 0, rts = 0, unreachable = 0;
  uint64_t keepalives = 0;     // probes of a peer with nothing in flight (ACK asking for an ACK)
  uint64_t cts_waited = 0;     // RTSes whose CTS waited for the budget
  uint64_t cts_reclaimed = 0;  // grants that stopped counting, idle for cts_idle
  uint64_t late_timers = 0;    // loss timers run late that waited a tick (timers.c)
  std::size_t peers_max = 0, timers_max = 0, rx_open_max = 0, cts_queue_max = 0;
  uint64_t ooo_bytes_max = 0, granted_max = 0;
  Time cts_wait_max = 0;  // the longest an RTS waited for its CTS
};

// A vector used as a queue: empty costs no allocation (unlike std::deque),
// which matters with a million peers.
template <class T>
class Fifo {
 public:
  bool empty() const { return head_ == v_.size(); }
  std::size_t size() const { return v_.size() - head_; }
  T& front() { return v_[head_]; }
  T& back() { return v_.back(); }
  T& operator[](std::size_t i) { return v_[head_ + i]; }
  void push_back(T x) { v_.push_back(std::move(x)); }
  void pop_front() {
    if (++head_ == v_.size()) {
      v_.clear();
      head_ = 0;
    } else if (head_ >= 64 && head_ * 2 >= v_.size()) {
      v_.erase(v_.begin(), v_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }
  void clear() {
    v_.clear();
    head_ = 0;
  }
  auto begin() { return v_.begin() + static_cast<std::ptrdiff_t>(head_); }
  auto end() { return v_.end(); }

 private:
  std::vector<T> v_;
  std::size_t head_ = 0;
};

class Transport {
 public:
  struct Hooks {
    std::function<void(int src, const AppInfo&)> rx_start;  // header matched
    std::function<void(int src, const AppInfo&, uint64_t len, bool ok)> rx_end;
    // Sent: every frame acknowledged (or the target dropped it at its CTS:
    // delivered false, as Portals reports it: SEND_END, PTL_NI_OK).
    std::function<void(int dst, const AppInfo&, uint64_t len, bool delivered)> sent;
  };
  // What a test may read of one peer's sending side.
  struct PeerView {
    uint32_t cwnd, ssthresh, rto_us, srtt_us, inflight;
    uint8_t backoff;
    bool in_recovery, rto_recovery;
  };

  Transport(Sim& sim, int id, const ProtoParams& p, const Costs& c, Cpu& cpu, Fabric& fabric,
            const Hooks* hooks);
  ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  // A put of len bytes to node dst, from a program's step.
  void Send(int dst, uint64_t len, const AppInfo& app);
  // A frame, once the CPU's receive work for it is done.
  void Receive(const Frame& f);

  const TransportStats& stats() const { return st_; }
  std::size_t peers() const { return peers_.size(); }
  std::size_t timers() const { return timers_; }
  bool has_peer(int nid) const { return peers_.count(nid) != 0; }
  // Bytes granted (CTS sent) and not yet received; RTSes waiting for a CTS.
  uint64_t granted() const { return granted_; }
  std::size_t cts_waiting() const { return waiting_; }
  PeerView view(int nid) const;
  // This node's jiffies tick at phase (0 .. tick) after the model's clock
  // (a cluster's nodes do not share one; the guest's do).
  void set_tick_phase(Time phase) { tick_phase_ = phase; }
  // Called at each retransmission timeout of a peer (tests).
  std::function<void(int nid, Time now)> on_timeout;

 private:
  struct Peer;
  struct TxFrame;

  Peer& GetPeer(int nid, bool from_frame);
  bool Busy(const Peer& p) const;
  void Push(Peer& p);
  void Flush();
  bool NextFrame(Peer& p, TxFrame& t);
  Frame Build(Peer& p, const TxFrame& t);
  void FillAck(Peer& p, Frame& f);
  void SendAck(Peer& p, bool ack_req);
  void AckSoon(Peer& p);
  void OnAck(Peer& p, const Frame& f);
  void FrameAcked(Peer& p, const TxFrame& t);
  void TxDone(Peer& p, uint32_t id, bool ok, bool delivered);
  void RttSample(Peer& p, Time sent);
  void CwndGrow(Peer& p, uint32_t acked);
  void EnterRecovery(Peer& p);
  void Retransmit(Peer& p, TxFrame& t);
  void SackRecover(Peer& p);
  void ResendLost(Peer& p);
  bool TailProbe(Peer& p);
  void RetransmitOldest(Peer& p);
  Time RtoNs(const Peer& p) const;
  Time BackedOffRto(const Peer& p) const;
  void ArmTimer(Peer& p);
  void SetTimer(Peer& p, Time delay);
  bool TimerLate(Peer& p);
  void TimerFired(Peer& p);
  void OnTimer(Peer& p);
  void PeerFail(Peer& p);
  void RxSeq(Peer& p, const Frame& f);
  bool InOrder(Peer& p, const Frame& f);
  void OooInsert(Peer& p, const Frame& f);
  bool Deliver(Peer& p, const Frame& f);
  bool RxRoom(const Peer& p) const;
  void RxOpen(Peer& p, uint32_t id, uint64_t got, uint64_t total, const AppInfo& app, bool request);
  void RxComplete(Peer& p, const AppInfo& app, uint64_t len, bool request, bool ok);
  void RxCts(Peer& p, const Frame& f);
  void RxData(Peer& p, const Frame& f);
  void FailRx(Peer& p, bool answer_waiting = false);
  void ResetRx(Peer& p);
  void CreditDone(Peer& p);
  bool MayGrant(uint64_t len) const;
  void GrantWaiting();
  void ReclaimGrants(Peer& p);
  void PushGranted();

  Sim& sim_;
  int id_;
  const ProtoParams& pp_;
  const Costs& costs_;
  Cpu& cpu_;
  Fabric& fabric_;
  const Hooks* hooks_;
  std::unordered_map<int, std::unique_ptr<Peer>> peers_;
  std::vector<Frame> xq_;  // built by the handler running now
  uint32_t next_stream_ = 1;
  std::size_t timers_ = 0, rx_open_ = 0, rx_reqs_ = 0;
  uint64_t ooo_bytes_ = 0;
  // The CTS budget: bytes granted and not received, the RTSes waiting (in
  // order; an entry whose message failed meanwhile is skipped), and the
  // peers a grant gave a CTS to send.
  struct CtsWait {
    int nid;
    uint32_t stream, msg_id;
    Time since;
  };
  Time tick_phase_ = 0;
  uint64_t granted_ = 0;
  std::size_t waiting_ = 0;
  Fifo<CtsWait> cts_wait_;
  std::vector<int> grant_push_;
  TransportStats st_;
};

}  // namespace ptl_sim

#endif  // PTL_SIM_PROTOCOL_H
