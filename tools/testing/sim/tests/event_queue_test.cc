// SPDX-License-Identifier: BSD-3-Clause
// The event queue's order, the movable timer, the seeded generator.
#include "event_queue.h"

#include <gtest/gtest.h>

#include <vector>

namespace ptl_sim {
namespace {

TEST(EventQueue, TimeOrderThenSchedulingOrder) {
  Sim sim;
  std::vector<int> order;
  sim.At(30, [&] { order.push_back(3); });
  sim.At(10, [&] { order.push_back(1); });
  sim.At(20, [&] { order.push_back(20); });
  sim.At(20, [&] { order.push_back(21); });
  sim.At(10, [&] {
    order.push_back(2);
    sim.After(0, [&] { order.push_back(22); });  // same time, scheduled later
  });
  sim.Run();
  EXPECT_EQ(order, (std::vector<int>{1, 2, 22, 20, 21, 3}));
  EXPECT_EQ(sim.now(), 30);
  EXPECT_EQ(sim.events_run(), 6u);
}

TEST(EventQueue, StopAndLimit) {
  Sim sim;
  int ran = 0;
  for (Time t = 1; t <= 10; t++) sim.At(t, [&] { ran++; });
  sim.Run(5);
  EXPECT_EQ(ran, 5);
  sim.At(6, [&] { sim.Stop(); });
  sim.Run();
  EXPECT_EQ(ran, 6);  // the event at 6 scheduled first ran, then Stop
  EXPECT_TRUE(sim.stopped());
}

TEST(Timer, MovesFireOnceAtTheLastDeadline) {
  Sim sim;
  std::vector<Time> fired;
  Timer t(sim, [&] { fired.push_back(sim.now()); });
  t.Arm(100);
  t.Arm(300);  // later: the event at 100 re-schedules itself
  t.Arm(200);
  sim.Run();
  EXPECT_EQ(fired, (std::vector<Time>{200}));
  EXPECT_FALSE(t.armed());
  EXPECT_LE(sim.events_run(), 3u);
}

TEST(Timer, EarlierDeadlineAndCancel) {
  Sim sim;
  std::vector<Time> fired;
  Timer t(sim, [&] { fired.push_back(sim.now()); });
  t.Arm(500);
  t.Arm(50);
  sim.Run();
  EXPECT_EQ(fired, (std::vector<Time>{50}));
  t.Arm(1000);
  t.Cancel();
  sim.Run();
  EXPECT_EQ(fired.size(), 1u);
  t.Arm(2000);  // usable again after a cancel
  sim.Run();
  EXPECT_EQ(fired.back(), 2000);
}

TEST(Random, SeededAndRepeatable) {
  Sim a(7), b(7), c(8);
  for (int i = 0; i < 100; i++) {
    uint64_t x = a.Random();
    EXPECT_EQ(x, b.Random());
    EXPECT_NE(x, c.Random());
  }
  for (int i = 0; i < 1000; i++) {
    double u = a.Uniform();
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
  }
}

}  // namespace
}  // namespace ptl_sim
