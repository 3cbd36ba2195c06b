// SPDX-License-Identifier: BSD-3-Clause
#include "machine.h"

#include <algorithm>

namespace ptl_sim {

// Under QEMU's -icount shift=0 one guest instruction is one nanosecond, so
// the instruction counts of Documentation/performance.md are costs here.
// "1 MiB budget": build/bench/budget-mtu1500-1048576.tsv, a 1 MiB put
// ping-pong at MTU 1500 (14,309,644 instructions per round trip: 1,478
// DATA frames of 1,420 bytes, ~370 ACKs, 2 RTS, 2 CTS, i.e. 1,852 frames).
// "8 B budget": performance.md's table of an 8-byte put ping-pong
// (36,608 per round trip, one frame each way), halved per message.
Costs GuestCosts() {
  Costs c;
  // Per frame, 5,287 in all: the 1 MiB round trip (14,309,644) less its
  // per-byte rows (deposit 2,347,711, checksum 2,145,322) and the two
  // messages' program-side costs (2 x (put_call + 2 events + 2 wake-ups)
  // = 24,658 below), over 1,852 frames; split 48.5/51.5 as that budget's
  // send rows (send logic, frame build, device transmit, lookups, core,
  // half the buffers: 4,704,042) and receive rows (veth, stack receive,
  // protocol receive, timers, half the buffers: 5,003,878).
  c.frame_tx = 2562;
  c.frame_rx = 2725;
  // Per payload byte (2,097,152 bytes in that round trip): the checksum
  // row halved (pcsum made, pcsum checked: 0.51/B each) and the deposit
  // row (the copy into the MD, 1.12/B) at the receiver.
  c.tx_per_byte = 0.51;
  c.rx_per_byte = 1.63;
  // The bridge: one more device transmit, veth and stack receive per
  // frame (8 B budget, halved: 518 + 133 + 1,896).
  c.bridge_hop = 2546;
  // A timer's expiry (the delayed ACK's hrtimer, the peer timer): the
  // 8 B budget's "timers and acknowledgements" row is 1,166 per round
  // trip for two delayed-ACK expiries and four re-arms.
  c.timer = 600;
  // A put from the program: user program, libptl-user, libc, syscall,
  // ioctl dispatch, argument copy, lookups, core (8 B budget: 10,861
  // per round trip, halved).
  c.put_call = 5431;
  // An event: written (441) and read (EQ wait and poll, 895); a wake-up
  // and context switch (2,113) when the program slept.
  c.event = 1336;
  c.wakeup = 2113;
  // ptl_stress's payload, instructions per byte counted by callgrind on
  // the same RelWithDebInfo build of stress_core.cc: EncodePut (pattern
  // and CRC-32C) 3.38, StreamVerifier::OnPut (CRC and compare) 3.64.
  c.gen_per_byte = 3.38;
  c.check_per_byte = 3.64;
  // A client process started (ip netns exec, exec, PtlInit, NI, MDs):
  // measured by nothing else; calibrated once against the a2a row at
  // N = 16 (Documentation/simulator.md, "Calibration").
  c.proc_start = 14300 * kUs;
  return c;
}

Costs ClusterCosts(double ipns, double copy_ns_per_byte, double csum_ns_per_byte) {
  Costs g = GuestCosts();
  auto scale = [ipns](Time t) { return static_cast<Time>(static_cast<double>(t) / ipns); };
  Costs c;
  c.frame_tx = scale(g.frame_tx);
  c.frame_rx = scale(g.frame_rx);
  c.tx_per_byte = csum_ns_per_byte;
  c.rx_per_byte = csum_ns_per_byte + copy_ns_per_byte;
  c.bridge_hop = 0;
  c.timer = scale(g.timer);
  c.put_call = scale(g.put_call);
  c.event = scale(g.event);
  c.wakeup = scale(g.wakeup);
  // The cluster's programs put and take bytes without making or checking
  // them, and are started before the clock (workload.h, App::kBulk).
  c.gen_per_byte = 0;
  c.check_per_byte = 0;
  c.proc_start = 0;
  return c;
}

MachineConfig MachineConfig::Guest(int nodes) {
  MachineConfig c;
  c.model = Model::kGuest;
  c.nodes = nodes;
  c.costs = GuestCosts();
  c.backlog = 1000;
  return c;
}

MachineConfig MachineConfig::Cluster(int nodes) {
  MachineConfig c;
  c.model = Model::kCluster;
  c.nodes = nodes;
  c.costs = ClusterCosts();
  c.backlog = 1024;     // a NIC's receive ring
  c.proto.resolve = 0;  // addresses known (ARP warm or static peers)
  c.sw.gbps = 10;
  c.sw.buffer = 1 << 20;  // 1 MiB per output port
  c.sw.nic_txq = 1000;    // txqueuelen
  c.sw.latency = 500;     // per hop
  return c;
}

Machine::Machine(Sim& sim, const MachineConfig& c) : sim_(sim), c_(c) {
  auto n = static_cast<std::size_t>(c_.nodes);
  std::size_t ncpu = c_.model == Model::kGuest ? 1 : n;
  for (std::size_t i = 0; i < ncpu; i++)
    cpus_.push_back(std::make_unique<Cpu>(sim_, c_.backlog, c_.policy));
  if (c_.model == Model::kGuest)
    fabric_ = std::make_unique<VethBridge>(sim_, *cpus_[0], c_.costs.bridge_hop);
  else
    fabric_ = std::make_unique<Switch>(sim_, c_.nodes, c_.sw);
  fabric_->set_loss(c_.loss);
  fabric_->set_arrive([this](const Frame& f) {
    double cost = static_cast<double>(c_.costs.frame_rx) + c_.costs.rx_per_byte * f.payload;
    cpu(f.dst).SubmitFrame(static_cast<Time>(cost), [this, f] { tp(f.dst).Receive(f); });
  });
  for (std::size_t i = 0; i < n; i++)
    tps_.push_back(std::make_unique<Transport>(sim_, static_cast<int>(i), c_.proto, c_.costs,
                                               cpu(static_cast<int>(i)), *fabric_, &hooks_));
  // Each node's phase from its own splitmix64 step (the run's random
  // sequence is left as it was).
  if (c_.tick_phase && c_.model == Model::kCluster && c_.proto.tick > 0)
    for (std::size_t i = 0; i < n; i++) {
      uint64_t z = (i + 1) * 0x9e3779b97f4a7c15ULL;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      z ^= z >> 31;
      tps_[i]->set_tick_phase(static_cast<Time>(z % static_cast<uint64_t>(c_.proto.tick)));
    }
}

TransportStats Machine::Totals() const {
  TransportStats t;
  for (const auto& tp : tps_) {
    const TransportStats& s = tp->stats();
    t.frames_tx += s.frames_tx;
    t.frames_rx += s.frames_rx;
    t.acks_tx += s.acks_tx;
    t.retransmits += s.retransmits;
    t.timeouts += s.timeouts;
    t.probes += s.probes;
    t.duplicates += s.duplicates;
    t.out_of_order += s.out_of_order;
    t.no_buffer += s.no_buffer;
    t.ooo_dropped += s.ooo_dropped;
    t.rx_open_dropped += s.rx_open_dropped;
    t.credit_refused += s.credit_refused;
    t.credit_waits += s.credit_waits;
    t.stale += s.stale;
    t.msgs_tx += s.msgs_tx;
    t.msgs_rx += s.msgs_rx;
    t.msgs_failed += s.msgs_failed;
    t.rts += s.rts;
    t.unreachable += s.unreachable;
    t.keepalives += s.keepalives;
    t.cts_waited += s.cts_waited;
    t.cts_reclaimed += s.cts_reclaimed;
    t.late_timers += s.late_timers;
    t.peers_max = std::max(t.peers_max, s.peers_max);
    t.timers_max = std::max(t.timers_max, s.timers_max);
    t.rx_open_max = std::max(t.rx_open_max, s.rx_open_max);
    t.ooo_bytes_max = std::max(t.ooo_bytes_max, s.ooo_bytes_max);
    t.cts_queue_max = std::max(t.cts_queue_max, s.cts_queue_max);
    t.granted_max = std::max(t.granted_max, s.granted_max);
    t.cts_wait_max = std::max(t.cts_wait_max, s.cts_wait_max);
  }
  return t;
}

uint64_t Machine::backlog_drops() const {
  uint64_t d = 0;
  for (const auto& c : cpus_) d += c->backlog_drops();
  return d;
}

std::size_t Machine::backlog_max() const {
  std::size_t m = 0;
  for (const auto& c : cpus_) m = std::max(m, c->backlog_max());
  return m;
}

}  // namespace ptl_sim
