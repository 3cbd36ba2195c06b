// SPDX-License-Identifier: BSD-3-Clause
// The CPU as a server of work items: order, busy time, the backlog's
// limit, the policies, and programs' steps one at a time.
#include "cpu.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ptl_sim {
namespace {

TEST(Cpu, FifoInOrderAndBusyTime) {
  Sim sim;
  Cpu cpu(sim, 10);
  std::vector<std::pair<int, Time>> done;
  for (int i = 0; i < 3; i++) cpu.Submit(100 * (i + 1), [&, i] { done.push_back({i, sim.now()}); });
  sim.Run();
  ASSERT_EQ(done.size(), 3u);
  EXPECT_EQ(done[0], std::make_pair(0, Time{100}));
  EXPECT_EQ(done[1], std::make_pair(1, Time{300}));
  EXPECT_EQ(done[2], std::make_pair(2, Time{600}));
  EXPECT_EQ(cpu.busy_ns(), 600);
  EXPECT_TRUE(cpu.idle());
}

TEST(Cpu, FrontContinuesTheWorkInHand) {
  Sim sim;
  Cpu cpu(sim, 10);
  std::string order;
  cpu.Submit(10, [&] {
    order += "a";
    cpu.SubmitFront(5, [&] { order += "t"; });  // transmit after a
  });
  cpu.Submit(10, [&] { order += "b"; });
  sim.Run();
  EXPECT_EQ(order, "atb");
}

TEST(Cpu, BacklogDropsPastItsLimit) {
  Sim sim;
  Cpu cpu(sim, 3);
  int ran = 0;
  cpu.Submit(1000, [] {});  // busy: frames wait
  for (int i = 0; i < 5; i++) cpu.SubmitFrame(10, [&] { ran++; });
  EXPECT_EQ(cpu.backlog(), 3u);
  EXPECT_EQ(cpu.backlog_drops(), 2u);
  sim.Run();
  EXPECT_EQ(ran, 3);
  EXPECT_EQ(cpu.backlog(), 0u);
  EXPECT_EQ(cpu.backlog_max(), 3u);
  EXPECT_TRUE(cpu.SubmitFrame(10, [] {}));  // room again
}

TEST(Cpu, SoftirqFirstPassesQueuedProcessWork) {
  Sim sim;
  Cpu cpu(sim, 10, CpuPolicy::kSoftirqFirst);
  std::string order;
  cpu.Submit(10, [&] { order += "p1"; });
  cpu.Submit(10, [&] { order += "p2"; });
  cpu.SubmitFrame(10, [&] { order += "f"; });
  sim.Run();
  EXPECT_EQ(order, "p1fp2");  // p1 was running already
}

TEST(Process, StepsRunOneAtATimeInOrder) {
  Sim sim;
  Cpu cpu(sim, 10);
  Costs costs;
  costs.event = 7;
  costs.wakeup = 100;
  Process a(cpu, costs), b(cpu, costs);
  std::string order;
  a.Step(10, [&] {
    order += "a1";
    a.Step(10, [&] { order += "a3"; });
    a.Step(
        10, [&] { order += "a2"; }, true);  // ahead of a3
  });
  b.Step(10, [&] { order += "b1"; });
  sim.Run();
  // b1 queued on the CPU while a1 ran; a's next steps go after it.
  EXPECT_EQ(order, "a1b1a2a3");
  Time t0 = sim.now();
  a.Event([&] {});  // asleep: read plus wake-up
  sim.Run();
  EXPECT_EQ(sim.now() - t0, 107);
}

TEST(Cpu, LinuxDefersToKsoftirqdWhenSoftirqWakesAProgram) {
  Sim sim;
  Cpu cpu(sim, 100, CpuPolicy::kLinux);
  Costs costs;
  Process p(cpu, costs);
  std::string order;
  // A frame that wakes the program, then more frames: the program runs
  // before the rest of the backlog (ksoftirqd is one thread among two).
  cpu.SubmitFrame(10, [&] {
    order += "f1";
    p.Event([&] { order += "p"; }, 50);
  });
  for (int i = 2; i <= 3; i++) cpu.SubmitFrame(10, [&, i] { order += "f" + std::to_string(i); });
  sim.Run();
  EXPECT_EQ(order.substr(0, 2), "f1");
  EXPECT_NE(order.find('p'), std::string::npos);
  EXPECT_LT(order.find('p'), order.find("f3"));
}

}  // namespace
}  // namespace ptl_sim
