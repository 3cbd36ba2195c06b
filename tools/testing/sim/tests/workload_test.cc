// SPDX-License-Identifier: BSD-3-Clause
// The workloads and the report: what the guest's runs count, a sampled
// all-to-all, determinism, reading a scalebench TSV.
#include "workload.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "report.h"

namespace ptl_sim {
namespace {

TEST(Workload, GuestIncastDeliversEverything) {
  MachineConfig mc = MachineConfig::Guest(4);
  WorkloadConfig wc;
  RunResult r = RunWorkload(mc, wc);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.delivered, 3u * 32 * 65536);
  EXPECT_EQ(r.totals.peers_max, 3u);  // node 0 talks to the three clients
  EXPECT_EQ(r.totals.msgs_failed, 0u);
  // Three clients started one after another on the one CPU.
  EXPECT_GT(r.seconds, 3 * static_cast<double>(mc.costs.proc_start) / kSec);
  EXPECT_GT(r.mbps, 0);
}

TEST(Workload, GuestA2aStartsAClientPerPair) {
  MachineConfig mc = MachineConfig::Guest(3);
  WorkloadConfig wc;
  wc.workload = Workload::kA2a;
  wc.count = 8;
  wc.size = 4096;
  RunResult r = RunWorkload(mc, wc);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.bytes, 6u * 8 * 4096);
  EXPECT_GT(r.seconds, 6 * static_cast<double>(mc.costs.proc_start) / kSec);
  EXPECT_EQ(r.totals.peers_max, 2u);
}

TEST(Workload, RingAndDeterminism) {
  MachineConfig mc = MachineConfig::Guest(5);
  WorkloadConfig wc;
  wc.workload = Workload::kRing;
  wc.count = 4;
  RunResult a = RunWorkload(mc, wc, 9), b = RunWorkload(mc, wc, 9);
  EXPECT_TRUE(a.ok);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.seconds, b.seconds);
  EXPECT_EQ(a.totals.retransmits, b.totals.retransmits);
  EXPECT_EQ(a.totals.peers_max, 2u);  // a node's two neighbours
}

TEST(Workload, ClusterA2aSample) {
  MachineConfig mc = MachineConfig::Cluster(20);
  WorkloadConfig wc;
  wc.workload = Workload::kA2a;
  wc.app = App::kBulk;
  wc.count = 2;
  wc.size = 4096;
  wc.dests = 5;
  RunResult r = RunWorkload(mc, wc);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.dests, 5);
  EXPECT_EQ(r.bytes, 20u * 5 * 2 * 4096);
  EXPECT_DOUBLE_EQ(r.seconds_all, r.seconds * 19 / 5);
  EXPECT_EQ(r.totals.peers_max, 10u);  // five it sends to, five it hears from
}

TEST(Workload, ClusterA2aShuffledIsSeeded) {
  MachineConfig mc = MachineConfig::Cluster(12);
  WorkloadConfig wc;
  wc.workload = Workload::kA2a;
  wc.app = App::kBulk;
  wc.count = 2;
  wc.size = 4096;
  wc.shuffle = true;
  RunResult a = RunWorkload(mc, wc, 5), b = RunWorkload(mc, wc, 5);
  EXPECT_TRUE(a.ok);
  EXPECT_EQ(a.delivered, 12u * 11 * 2 * 4096);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.totals.peers_max, 11u);
}

TEST(Report, ReadsScalebenchColumnsByName) {
  std::string path = testing::TempDir() + "ptl_sim_measured.tsv";
  {
    std::ofstream out(path);
    out << "nodes\tworkload\tseconds\tMBps\tpeers_max\tretransmits\ttimeouts\tmsgs_failed"
           "\trefused\tbacklog_drops\tslab_kb_per_node\tstatus\n"
        << "8\tincast\t0.402\t36.5\t7\t253\t2\t0\t0\t233\t90\tok\n"
        << "64\tring\t3.534\t38.0\t-\t8,009\t501\t0\t0\t-\t66\tok\n";
  }
  std::vector<Measured> rows;
  std::string why;
  ASSERT_TRUE(ReadMeasured(path, &rows, &why)) << why;
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].nodes, 8);
  EXPECT_EQ(rows[0].workload, Workload::kIncast);
  EXPECT_DOUBLE_EQ(rows[0].seconds, 0.402);
  EXPECT_EQ(rows[0].backlog_drops.value_or(-1), 233);
  EXPECT_EQ(rows[1].workload, Workload::kRing);
  EXPECT_EQ(rows[1].retransmits.value_or(-1), 8009);
  EXPECT_FALSE(rows[1].peers.has_value());
  EXPECT_FALSE(rows[1].backlog_drops.has_value());
  std::remove(path.c_str());

  EXPECT_FALSE(ReadMeasured(path + ".none", &rows, &why));
}

TEST(Report, ValidationTableHasTheRatio) {
  Measured m;
  m.nodes = 8;
  m.seconds = 0.5;
  m.mbps = 40;
  RunResult p;
  p.nodes = 8;
  p.seconds = 0.25;
  p.ok = true;
  std::ostringstream os;
  PrintValidation(os, {{m, p}}, true);
  EXPECT_NE(os.str().find("| 8 | incast | 0.500 | 0.250 | 0.50 |"), std::string::npos) << os.str();
}

}  // namespace
}  // namespace ptl_sim
