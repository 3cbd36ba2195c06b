// SPDX-License-Identifier: BSD-3-Clause
// The programs and the workloads of tools/testing/bench/run-scalebench:
//
//   incast  N-1 clients, one per node, put `count` x `size` to one server
//           on node 0 (the bench's node 1);
//   ring    node k puts to node k+1 (the last to node 0), all at once;
//   a2a     every node puts `count` x `size` to every other.
//
// Two kinds of program:
//
//   kStress  ptl_stress as the bench runs it (Documentation/ptl_stress.md):
//            a client process per (node, server), started on the clock
//            (proc_start), HELLO/WELCOME, puts whose payload it makes
//            (gen_per_byte) with at most `window` in flight and its
//            receive ring (max(2 size, 256 KiB)) as flow control, a
//            server that checks every byte (check_per_byte) and returns
//            ring space with credits (a zero-length put after `window`/2
//            puts verified or whenever its event queue runs empty), then
//            FIN and REPORT. a2a: N(N-1) clients, N servers.
//   kBulk    what a cluster's benchmark would run: one program per node,
//            started before the clock, putting without making or
//            checking bytes, at most `window` puts and the ring's bytes
//            in flight (the same bounds as ptl_stress, without credits).
//            a2a: each node's one program puts to node i+1, i+2, ...
//            (`shuffle`: the N-1 others in a random order of its own,
//            seeded), `dests` of them when set (a sample of the N-1).
#ifndef PTL_SIM_WORKLOAD_H
#define PTL_SIM_WORKLOAD_H

#include <cstdint>
#include <string>

#include "machine.h"

namespace ptl_sim {

enum class Workload { kIncast, kRing, kA2a };
enum class App { kStress, kBulk };

const char* WorkloadName(Workload w);
bool ParseWorkload(const std::string& s, Workload* w);

struct WorkloadConfig {
  Workload workload = Workload::kIncast;
  App app = App::kStress;
  int count = 32;            // puts per client (a2a: per destination)
  uint64_t size = 65536;     // bytes per put
  int window = 16;           // puts in flight per client
  uint64_t ring = 0;         // 0: max(2 size, 256 KiB)
  int dests = 0;             // kBulk a2a: destinations per node, 0: all N-1
  bool shuffle = false;      // kBulk a2a: destinations in a random order
  Time limit = 3600 * kSec;  // simulated time allowed
};

struct RunResult {
  int nodes = 0;
  Workload workload = Workload::kIncast;
  double seconds = 0;  // first client started .. last client done
  double mbps = 0;     // payload delivered / seconds (10^6 B/s)
  uint64_t bytes = 0;  // payload the workload moves
  uint64_t delivered = 0;
  TransportStats totals;
  uint64_t backlog_drops = 0, switch_drops = 0;
  std::size_t backlog_max = 0, port_max_bytes = 0;
  int dests = 0;           // a2a destinations per node simulated
  double seconds_all = 0;  // a2a sample: seconds x (N-1) / dests
  double cpu_busy = 0;     // busiest CPU's share of the time
  bool ok = false;         // all done, nothing failed or lost
  uint64_t events = 0;
  double wall_seconds = 0;
};

// Stand-alone: its own Sim and Machine.
RunResult RunWorkload(const MachineConfig& mc, const WorkloadConfig& wc, uint64_t seed = 1);

}  // namespace ptl_sim

#endif  // PTL_SIM_WORKLOAD_H
