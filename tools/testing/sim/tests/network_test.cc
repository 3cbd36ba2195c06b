// SPDX-License-Identifier: BSD-3-Clause
// The cluster's links and switch: serialisation at the link rate, the
// output port's drop-tail buffer; the guest's backlog.
#include "network.h"

#include <gtest/gtest.h>

#include <vector>

namespace ptl_sim {
namespace {

Frame Data(int src, int dst, uint32_t payload) {
  Frame f;
  f.src = src;
  f.dst = dst;
  f.type = FrameType::kData;
  f.payload = payload;
  return f;
}

TEST(Frame, Lengths) {
  EXPECT_EQ(Data(0, 1, 1420).len(), 1500u);
  EXPECT_EQ(Data(0, 1, 1420).wire_bytes(), 1538u);  // + header, FCS, preamble, gap
  Frame ack;
  EXPECT_EQ(ack.len(), 64u);
  EXPECT_EQ(ack.wire_bytes(), 102u);  // 64 + 14 + FCS, preamble, gap
}

TEST(Switch, OneFrameTakesTwoSerialisationsAndTwoHops) {
  Sim sim;
  SwitchConfig c;
  c.gbps = 10;
  c.latency = 500;
  Switch sw(sim, 2, c);
  Time at = -1;
  sw.set_arrive([&](const Frame&) { at = sim.now(); });
  Frame f = Data(0, 1, 1420);
  Time ser = sw.serialise(f);
  EXPECT_EQ(ser, 1231);  // 1,538 bytes at 10 Gb/s, rounded up
  sw.Send(f);
  sim.Run();
  EXPECT_EQ(at, 2 * ser + 2 * c.latency);
}

TEST(Switch, BackToBackFramesAtLineRate) {
  Sim sim;
  Switch sw(sim, 2, SwitchConfig{});
  std::vector<Time> at;
  sw.set_arrive([&](const Frame&) { at.push_back(sim.now()); });
  for (int i = 0; i < 10; i++) sw.Send(Data(0, 1, 1420));
  sim.Run();
  ASSERT_EQ(at.size(), 10u);
  for (std::size_t i = 1; i < at.size(); i++) EXPECT_EQ(at[i] - at[i - 1], 1231);
}

TEST(Switch, IncastOverflowsTheOutputPort) {
  Sim sim;
  SwitchConfig c;
  c.buffer = 10 * 1538;  // ten full frames
  Switch sw(sim, 9, c);
  int arrived = 0;
  sw.set_arrive([&](const Frame&) { arrived++; });
  for (int s = 1; s <= 8; s++)
    for (int i = 0; i < 4; i++) sw.Send(Data(s, 0, 1420));
  sim.Run();
  EXPECT_GT(sw.drops(), 0u);
  EXPECT_EQ(arrived + static_cast<int>(sw.drops()), 32);
  EXPECT_LE(sw.queue_max_bytes(), c.buffer);
}

TEST(Fabric, LossAndFilter) {
  Sim sim(3);
  Switch sw(sim, 2, SwitchConfig{});
  int arrived = 0;
  sw.set_arrive([&](const Frame&) { arrived++; });
  sw.set_drop_filter([](const Frame& f) { return f.payload == 7; });
  sw.Send(Data(0, 1, 7));
  sw.Send(Data(0, 1, 8));
  sim.Run();
  EXPECT_EQ(arrived, 1);
  EXPECT_EQ(sw.lost(), 1u);
  sw.set_drop_filter({});
  sw.set_loss(0.5);
  for (int i = 0; i < 1000; i++) sw.Send(Data(0, 1, 8));
  sim.Run();
  EXPECT_GT(sw.lost(), 400u);
  EXPECT_LT(sw.lost(), 600u);
}

TEST(VethBridge, FramesCrossTheBacklogTwice) {
  Sim sim;
  Cpu cpu(sim, 3);
  VethBridge veth(sim, cpu, 100);
  int arrived = 0;
  veth.set_arrive([&](const Frame&) {
    cpu.SubmitFrame(200, [&] { arrived++; });  // the second pass
  });
  cpu.Submit(1000, [] {});  // busy: the frames wait in the backlog
  for (int i = 0; i < 5; i++) veth.Send(Data(0, 1, 100));
  EXPECT_EQ(veth.drops(), 2u);  // three fit the first pass
  EXPECT_EQ(cpu.backlog_drops(), 2u);
  sim.Run();
  EXPECT_EQ(arrived, 3);
  EXPECT_EQ(cpu.busy_ns(), 1000 + 3 * 300);
}

}  // namespace
}  // namespace ptl_sim
