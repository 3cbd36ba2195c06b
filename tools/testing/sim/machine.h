// SPDX-License-Identifier: BSD-3-Clause
// Nodes, their CPUs and what joins them, for the two kinds of machine:
//
//   guest    the measured test bed: N network namespaces on one bridge in
//            one QEMU guest with one vCPU under instruction counting. One
//            CPU serves every node (their kernels and every program); the
//            link is veth and the bridge, whose only queue is the CPU's
//            backlog of netdev_max_backlog (1,000) frames.
//   cluster  N machines with a CPU each, a NIC each and one non-blocking
//            switch with a buffer per output port.
//
// The costs of each (Costs, cpu.h) and where every figure comes from are
// in machine.cc and Documentation/simulator.md.
#ifndef PTL_SIM_MACHINE_H
#define PTL_SIM_MACHINE_H

#include <cstddef>
#include <memory>
#include <vector>

#include "cpu.h"
#include "event_queue.h"
#include "network.h"
#include "protocol.h"

namespace ptl_sim {

enum class Model { kGuest, kCluster };

struct MachineConfig {
  Model model = Model::kGuest;
  int nodes = 2;
  Costs costs;
  ProtoParams proto;
  CpuPolicy policy = CpuPolicy::kFifo;
  std::size_t backlog = 1000;  // guest: netdev_max_backlog; cluster: a NIC's receive ring
  SwitchConfig sw;             // cluster
  double loss = 0;             // frames lost at random (tests, what-ifs)
  // cluster: each node's jiffies at its own phase (seeded), not all on the
  // model's ticks; off by default (the predictions were made without it)
  bool tick_phase = false;

  static MachineConfig Guest(int nodes);
  static MachineConfig Cluster(int nodes);
};

// The guest's costs (instructions, so nanoseconds under icount) and a
// cluster node's (the same instruction counts at `ipns` instructions per
// nanosecond, per-byte work at memory speed).
Costs GuestCosts();
Costs ClusterCosts(double ipns = 3.0, double copy_ns_per_byte = 0.1, double csum_ns_per_byte = 0.1);

class Machine {
 public:
  Machine(Sim& sim, const MachineConfig& c);
  Machine(const Machine&) = delete;
  Machine& operator=(const Machine&) = delete;

  void set_hooks(Transport::Hooks h) { hooks_ = std::move(h); }
  int nodes() const { return c_.nodes; }
  const MachineConfig& config() const { return c_; }
  Transport& tp(int n) { return *tps_[static_cast<std::size_t>(n)]; }
  Cpu& cpu(int n) { return *cpus_[cpus_.size() == 1 ? 0 : static_cast<std::size_t>(n)]; }
  Fabric& fabric() { return *fabric_; }
  std::size_t cpus() const { return cpus_.size(); }

  // Counters summed over the nodes, gauges at their largest.
  TransportStats Totals() const;
  uint64_t backlog_drops() const;
  std::size_t backlog_max() const;

 private:
  Sim& sim_;
  MachineConfig c_;
  Transport::Hooks hooks_;
  std::vector<std::unique_ptr<Cpu>> cpus_;
  std::unique_ptr<Fabric> fabric_;
  std::vector<std::unique_ptr<Transport>> tps_;
};

}  // namespace ptl_sim

#endif  // PTL_SIM_MACHINE_H
