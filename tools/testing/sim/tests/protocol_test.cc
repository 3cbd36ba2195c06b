// SPDX-License-Identifier: BSD-3-Clause
// The transport's rules between cluster nodes: a lossless transfer runs at
// the bottleneck's rate, one loss halves cwnd (Reno) without a timeout,
// the retransmission timeout doubles, eager vs RTS/CTS, the bound on open
// messages, and an incast through a tiny switch buffer recovers; the CTS
// budget (receiver-driven admission) bounds what is granted, fails nothing
// for waiting, and when it never binds changes nothing; a loss timer run
// late waits for the ACK queued behind it.
#include "protocol.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <vector>

#include "machine.h"
#include "workload.h"

namespace ptl_sim {
namespace {

// N cluster nodes, counting what the transports report.
struct Rig {
  explicit Rig(int n, const std::function<void(MachineConfig&)>& tweak = {})
      : mc(MachineConfig::Cluster(n)) {
    if (tweak) tweak(mc);
    m = std::make_unique<Machine>(sim, mc);
    Transport::Hooks h;
    h.rx_end = [this](int, const AppInfo&, uint64_t len, bool ok) {
      if (ok) {
        ends++;
        bytes += len;
      }
    };
    h.sent = [this](int, const AppInfo&, uint64_t, bool delivered) {
      sent++;
      last_sent = sim.now();
      if (!delivered) undelivered++;
    };
    m->set_hooks(h);
  }
  Sim sim;
  MachineConfig mc;
  std::unique_ptr<Machine> m;
  int ends = 0, sent = 0, undelivered = 0;
  uint64_t bytes = 0;
  Time last_sent = 0;
};

TEST(Protocol, LosslessTransferRunsAtTheBottleneck) {
  Rig r(2);
  const uint64_t size = 1 << 20;
  r.m->tp(1).Send(0, size, AppInfo{});
  r.sim.Run();
  EXPECT_EQ(r.ends, 1);
  EXPECT_EQ(r.sent, 1);
  EXPECT_EQ(r.bytes, size);
  const TransportStats s = r.m->Totals();
  EXPECT_EQ(s.retransmits, 0u);
  EXPECT_EQ(s.timeouts, 0u);
  EXPECT_EQ(s.rts, 1u);
  // 739 DATA frames of 1,420 bytes: the wire needs 1,231 ns each; the
  // receiver's CPU its receive work plus an ACK's transmit per 4 frames.
  const Costs& c = r.mc.costs;
  const double frames = 739;
  const double wire = 1231;
  const double cpu =
      static_cast<double>(c.frame_rx) + c.rx_per_byte * 1420 + static_cast<double>(c.frame_tx) / 4;
  const double bottleneck = frames * std::max(wire, cpu);
  EXPECT_GE(static_cast<double>(r.last_sent), frames * wire);
  EXPECT_LE(static_cast<double>(r.last_sent), 1.1 * bottleneck + 50e3);
}

TEST(Protocol, OneLossHalvesCwndWithoutATimeout) {
  Rig r(2);
  int data = 0;
  uint32_t cwnd_at_drop = 0;
  r.m->fabric().set_drop_filter([&](const Frame& f) {
    if (f.src != 1 || f.type != FrameType::kData || f.resent) return false;
    if (++data != 200) return false;
    cwnd_at_drop = r.m->tp(1).view(0).cwnd;
    return true;
  });
  r.m->tp(1).Send(0, 4 << 20, AppInfo{});
  r.sim.Run();
  EXPECT_EQ(r.ends, 1);
  const TransportStats s = r.m->tp(1).stats();
  EXPECT_EQ(s.timeouts, 0u);
  EXPECT_GE(s.retransmits, 1u);
  Transport::PeerView v = r.m->tp(1).view(0);
  ASSERT_GT(cwnd_at_drop, 100u);  // slow start got it there
  EXPECT_LT(v.ssthresh, 256u);    // was max_window
  EXPECT_GE(v.ssthresh, cwnd_at_drop / 2);
  EXPECT_LE(v.ssthresh, r.mc.proto.max_window / 2);
}

TEST(Protocol, RetransmissionTimeoutDoublesUpToMaxRto) {
  Rig r(2);
  std::vector<Time> timeouts;
  r.m->tp(1).on_timeout = [&](int, Time now) { timeouts.push_back(now); };
  r.m->fabric().set_drop_filter(
      [&](const Frame& f) { return f.src == 1 && r.sim.now() < 3 * kSec; });
  r.m->tp(1).Send(0, 65536, AppInfo{});
  r.sim.Run();
  EXPECT_EQ(r.ends, 1);  // once the link came back
  ASSERT_GE(timeouts.size(), 5u);
  // No RTT sample yet: the initial 200 ms, then 400, 800, max_rto 1 s.
  const Time tick = r.mc.proto.tick;
  EXPECT_NEAR(static_cast<double>(timeouts[0]), 200e6, static_cast<double>(tick));
  const Time want[] = {400 * kMs, 800 * kMs, 1000 * kMs, 1000 * kMs};
  for (std::size_t i = 0; i < 4; i++)
    EXPECT_NEAR(static_cast<double>(timeouts[i + 1] - timeouts[i]), static_cast<double>(want[i]),
                static_cast<double>(tick))
        << "interval " << i;
  EXPECT_GT(r.last_sent, 3 * kSec);
}

// The sender's CPU stalls past its loss timer's deadline while the ACK
// waits in its receive backlog: the timer, run first, waits a tick for it
// (timers.c, rtscts_timer_late) instead of probing what arrived.
TEST(Protocol, ALateTimerWaitsForTheAckQueuedBehindIt) {
  Rig r(2);
  r.m->tp(1).Send(0, 64, AppInfo{});  // an RTT sample: the tail probe's timer
  r.sim.Run();
  ASSERT_EQ(r.ends, 1);
  const TransportStats before = r.m->Totals();
  r.m->tp(1).Send(0, 64, AppInfo{});
  r.m->cpu(1).Submit(40 * kMs, [] {});  // after the send: the stall
  r.sim.Run();
  EXPECT_EQ(r.ends, 2);
  const TransportStats after = r.m->Totals();
  EXPECT_EQ(after.late_timers - before.late_timers, 1u);
  EXPECT_EQ(after.retransmits, before.retransmits);
  EXPECT_EQ(after.timeouts, before.timeouts);
}

TEST(Protocol, EagerUpToEagerMaxRtsAbove) {
  Rig r(2);
  r.m->tp(1).Send(0, 4096, AppInfo{});
  r.m->tp(1).Send(0, 16384, AppInfo{});
  r.m->tp(1).Send(0, 16385, AppInfo{});
  r.sim.Run();
  EXPECT_EQ(r.ends, 3);
  EXPECT_EQ(r.m->tp(1).stats().rts, 1u);
  EXPECT_EQ(r.m->tp(1).stats().msgs_tx, 3u);
  // 4 KiB: MSG 1,332 bytes, DATA 1,420, DATA 1,344; 16 KiB: 12 frames;
  // 16 KiB + 1: RTS, 12 DATA; and a CTS back.
  EXPECT_EQ(r.m->tp(0).stats().msgs_rx, 3u);
}

TEST(Protocol, AtMost64OpenAtAReceiverPerPeer) {
  Rig r(2);
  for (int i = 0; i < 100; i++) r.m->tp(1).Send(0, 65536, AppInfo{});
  r.sim.Run();
  EXPECT_EQ(r.ends, 100);
  EXPECT_EQ(r.undelivered, 0);
  EXPECT_LE(r.m->tp(0).stats().rx_open_max, 64u);
  EXPECT_EQ(r.m->tp(0).stats().rx_open_dropped, 0u);
}

TEST(Protocol, RxOpenMaxRefusesRtsWithACtsThatDrops) {
  Rig r(4, [](MachineConfig& mc) { mc.proto.rx_open_max = 10; });
  for (int s = 1; s <= 3; s++)
    for (int i = 0; i < 8; i++) r.m->tp(s).Send(0, 65536, AppInfo{});
  r.sim.Run();
  const uint64_t dropped = r.m->tp(0).stats().rx_open_dropped;
  EXPECT_GT(dropped, 0u);
  EXPECT_LE(r.m->tp(0).stats().rx_open_max, 10u);
  EXPECT_EQ(r.sent, 24);
  EXPECT_EQ(static_cast<uint64_t>(r.undelivered), dropped);
  EXPECT_EQ(static_cast<uint64_t>(r.ends) + dropped, 24u);
}

TEST(Protocol, IncastThroughATinyBufferDropsAndCompletes) {
  MachineConfig mc = MachineConfig::Cluster(16);
  mc.sw.buffer = 16 << 10;
  WorkloadConfig wc;
  wc.workload = Workload::kIncast;
  wc.app = App::kBulk;
  wc.count = 8;
  RunResult r = RunWorkload(mc, wc);
  EXPECT_TRUE(r.ok);
  EXPECT_GT(r.switch_drops, 0u);
  EXPECT_GT(r.totals.retransmits, 0u);
  EXPECT_EQ(r.delivered, 15u * 8 * 65536);
  EXPECT_EQ(r.totals.msgs_failed, 0u);
  // Against a roomy buffer: slower, and more frames sent.
  MachineConfig roomy = MachineConfig::Cluster(16);
  RunResult base = RunWorkload(roomy, wc);
  EXPECT_TRUE(base.ok);
  EXPECT_GT(r.seconds, base.seconds);
}

TEST(Protocol, UnreachablePeerFailsThenANewStreamWorks) {
  Rig r(2);
  r.m->fabric().set_drop_filter(
      [&](const Frame& f) { return f.src == 1 && r.sim.now() < 12 * kSec; });
  r.m->tp(1).Send(0, 65536, AppInfo{});
  r.sim.At(13 * kSec, [&] { r.m->tp(1).Send(0, 65536, AppInfo{}); });
  r.sim.Run();
  EXPECT_EQ(r.sent, 2);
  EXPECT_EQ(r.undelivered, 1);  // the first: peer_timeout without progress
  EXPECT_EQ(r.ends, 1);         // the second, on a new stream
  EXPECT_EQ(r.m->tp(1).stats().msgs_failed, 1u);
}

TEST(Protocol, RandomLossIsRecovered) {
  Rig r(3, [](MachineConfig& mc) { mc.loss = 0.02; });
  for (int i = 0; i < 20; i++) {
    r.m->tp(1).Send(0, 65536, AppInfo{});
    r.m->tp(2).Send(0, 4096, AppInfo{});
  }
  r.sim.Run();
  EXPECT_EQ(r.ends, 40);
  EXPECT_GT(r.m->Totals().retransmits, 0u);
  EXPECT_EQ(r.m->Totals().msgs_failed, 0u);
}

// ---- the CTS budget ----

TEST(CtsBudget, BoundsGrantedBytesAndFailsNothing) {
  const uint64_t budget = 256 << 10;
  Rig r(17, [&](MachineConfig& mc) { mc.proto.cts_budget = budget; });
  uint64_t seen_max = 0;
  std::function<void()> sample = [&] {
    seen_max = std::max(seen_max, r.m->tp(0).granted());
    if (r.ends < 64 && r.sim.now() < kSec) r.sim.After(5 * kUs, sample);
  };
  r.sim.After(0, sample);
  for (int s = 1; s <= 16; s++)
    for (int i = 0; i < 4; i++) r.m->tp(s).Send(0, 65536, AppInfo{});
  r.sim.Run();
  EXPECT_EQ(r.ends, 64);
  EXPECT_EQ(r.sent, 64);
  EXPECT_EQ(r.undelivered, 0);
  const TransportStats& s = r.m->tp(0).stats();
  EXPECT_EQ(r.m->Totals().msgs_failed, 0u);
  EXPECT_GT(s.cts_waited, 0u);  // 64 RTSes, room for four CTSes at a time
  EXPECT_EQ(s.granted_max, budget);
  EXPECT_LE(seen_max, budget);
  EXPECT_GT(seen_max, 0u);
  EXPECT_EQ(r.m->tp(0).granted(), 0u);  // all received
  EXPECT_EQ(r.m->tp(0).cts_waiting(), 0u);
  EXPECT_EQ(s.rx_open_dropped, 0u);
}

TEST(CtsBudget, AMessageLargerThanTheBudgetIsGrantedAlone) {
  Rig r(4, [](MachineConfig& mc) { mc.proto.cts_budget = 1024; });
  for (int s = 1; s <= 3; s++)
    for (int i = 0; i < 3; i++) r.m->tp(s).Send(0, 65536, AppInfo{});
  r.sim.Run();
  EXPECT_EQ(r.ends, 9);
  EXPECT_EQ(r.undelivered, 0);
  EXPECT_EQ(r.m->tp(0).stats().granted_max, 65536u);  // one at a time
  EXPECT_EQ(r.m->tp(0).stats().cts_waited, 8u);
}

// A sender whose RTS waits longer than peer_timeout for its CTS: the RTS
// is acknowledged (nothing left in flight), the sender probes, the
// receiver answers, and that is progress: nothing fails.
TEST(CtsBudget, AWaitLongerThanThePeerTimeoutFailsNothing) {
  Rig r(3, [](MachineConfig& mc) {
    mc.sw.gbps = 1;  // 16 MiB take ~140 ms
    mc.proto.cts_budget = 65536;
    mc.proto.probe_min = 10 * kMs;
    mc.proto.peer_timeout = 50 * kMs;
  });
  r.m->tp(1).Send(0, 16 << 20, AppInfo{});
  r.sim.At(1 * kMs, [&] { r.m->tp(2).Send(0, 65536, AppInfo{}); });
  bool checked = false;
  r.sim.At(20 * kMs, [&] {
    checked = true;
    EXPECT_EQ(r.m->tp(0).cts_waiting(), 1u);
    EXPECT_EQ(r.m->tp(2).view(0).inflight, 0u);  // its RTS acknowledged
    EXPECT_EQ(r.ends, 0);
  });
  r.sim.Run();
  EXPECT_TRUE(checked);
  EXPECT_EQ(r.ends, 2);
  EXPECT_EQ(r.undelivered, 0);
  EXPECT_EQ(r.m->Totals().msgs_failed, 0u);
  EXPECT_EQ(r.m->Totals().unreachable, 0u);
  EXPECT_EQ(r.m->tp(2).stats().retransmits, 0u);  // not even a probe of the RTS
  EXPECT_GT(r.m->tp(2).stats().keepalives, 0u);
  EXPECT_GT(r.m->tp(0).stats().cts_wait_max, 3 * r.mc.proto.peer_timeout / 2);
}

// A grant whose data does not come (its sender stuck) stops counting after
// cts_idle: the next message is granted; the stuck one is still taken.
TEST(CtsBudget, AnIdleGrantStopsCounting) {
  Rig r(3, [](MachineConfig& mc) {
    mc.proto.cts_budget = 65536;
    mc.proto.cts_idle = 50 * kMs;
  });
  r.m->fabric().set_drop_filter([&](const Frame& f) {
    return f.src == 1 && f.type == FrameType::kData && r.sim.now() < 500 * kMs;
  });
  Time done2 = 0;
  Transport::Hooks h;
  h.rx_end = [&](int src, const AppInfo&, uint64_t, bool ok) {
    if (ok) r.ends++;
    if (src == 2) done2 = r.sim.now();
  };
  h.sent = [&](int, const AppInfo&, uint64_t, bool delivered) {
    r.sent++;
    if (!delivered) r.undelivered++;
  };
  r.m->set_hooks(h);
  r.m->tp(1).Send(0, 65536, AppInfo{});
  r.sim.At(1 * kMs, [&] { r.m->tp(2).Send(0, 65536, AppInfo{}); });
  r.sim.Run();
  EXPECT_EQ(r.ends, 2);
  EXPECT_EQ(r.undelivered, 0);
  EXPECT_GE(r.m->tp(0).stats().cts_reclaimed, 1u);
  EXPECT_GT(done2, 50 * kMs);
  EXPECT_LT(done2, 500 * kMs);  // before node 1's data could come
  EXPECT_EQ(r.m->tp(0).granted(), 0u);
  EXPECT_EQ(r.m->Totals().msgs_failed, 0u);
}

// A receiver that finds a sender unreachable while its RTS waits answers
// it with a CTS that drops it: the sender, whose probes were answered,
// would otherwise wait for ever.
TEST(CtsBudget, AWaitingRtsOfAnUnreachableSenderIsDropped) {
  Rig r(3, [](MachineConfig& mc) {
    mc.sw.gbps = 1;  // node 1's 16 MiB hold the budget ~140 ms
    mc.proto.cts_budget = 65536;
    mc.proto.probe_min = 10 * kMs;
    mc.proto.peer_timeout = 50 * kMs;
    mc.proto.init_rto = 10 * kMs;  // node 0 probes node 2 (no RTT sample) within the timeout
  });
  // Node 2 hears node 0 (and so keeps it), node 0 stops hearing node 2.
  r.m->fabric().set_drop_filter([&](const Frame& f) {
    return f.src == 2 && r.sim.now() > 3 * kMs && r.sim.now() < 500 * kMs;
  });
  r.m->tp(1).Send(0, 16 << 20, AppInfo{});
  r.sim.At(1 * kMs, [&] { r.m->tp(2).Send(0, 65536, AppInfo{}); });
  r.sim.Run();
  EXPECT_EQ(r.ends, 1);  // node 1's
  EXPECT_EQ(r.sent, 2);
  EXPECT_EQ(r.undelivered, 1);  // node 2's, dropped by its CTS
  EXPECT_LT(r.last_sent, 500 * kMs);
  EXPECT_GE(r.m->tp(0).stats().unreachable, 1u);
  EXPECT_EQ(r.m->tp(2).stats().msgs_failed, 0u);
  EXPECT_EQ(r.m->tp(0).cts_waiting(), 0u);
}

TEST(CtsBudget, IncastCompletesWithFewerDrops) {
  WorkloadConfig wc;
  wc.workload = Workload::kIncast;
  wc.app = App::kBulk;
  wc.count = 16;
  MachineConfig mc = MachineConfig::Cluster(64);
  RunResult base = RunWorkload(mc, wc);
  mc.proto.cts_budget = 256 << 10;
  RunResult r = RunWorkload(mc, wc);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.delivered, 63u * 16 * 65536);
  EXPECT_EQ(r.totals.msgs_failed, 0u);
  EXPECT_LE(r.totals.granted_max, uint64_t{256} << 10);
  EXPECT_GT(r.totals.cts_waited, 0u);
  EXPECT_GT(base.backlog_drops + base.switch_drops, 0u);
  EXPECT_LT(r.backlog_drops + r.switch_drops, base.backlog_drops + base.switch_drops);
}

// 0 is today's transport; a budget that never binds is too, event for event.
TEST(CtsBudget, ZeroOrABudgetThatNeverBindsChangesNothing) {
  WorkloadConfig wc;
  wc.workload = Workload::kIncast;
  wc.app = App::kBulk;
  wc.count = 8;
  MachineConfig mc = MachineConfig::Cluster(32);
  RunResult a = RunWorkload(mc, wc);
  mc.proto.cts_budget = uint64_t{1} << 40;
  RunResult b = RunWorkload(mc, wc);
  EXPECT_TRUE(a.ok);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.seconds, b.seconds);
  EXPECT_EQ(a.totals.retransmits, b.totals.retransmits);
  EXPECT_EQ(a.backlog_drops, b.backlog_drops);
  EXPECT_EQ(a.totals.cts_waited, 0u);
  EXPECT_EQ(b.totals.cts_waited, 0u);
  EXPECT_EQ(a.totals.granted_max, 0u);  // nothing counted without a budget
}

}  // namespace
}  // namespace ptl_sim
