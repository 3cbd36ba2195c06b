// SPDX-License-Identifier: BSD-3-Clause
// The transport's rules between cluster nodes: a lossless transfer runs at
// the bottleneck's rate, one loss halves cwnd (Reno) without a timeout,
// the retransmission timeout doubles, eager vs RTS/CTS, the bound on open
// messages, and an incast through a tiny switch buffer recovers.
#include "protocol.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace ptl_sim
