// SPDX-License-Identifier: BSD-3-Clause
// ptl-sim: a discrete-event model of the RTS/CTS transport between many
// nodes (Documentation/simulator.md).
//
//   ptl-sim [--model guest|cluster] [--workload incast|ring|a2a]
//           [--nodes N[,N...]] [--count C] [--size B] [options]
//   ptl-sim --validate build/bench/scalebench.tsv [--validate FILE] [--markdown]
//
// One TSV row per run (report.h). --validate runs the guest model for each
// measured row and prints the two side by side.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "machine.h"
#include "report.h"
#include "workload.h"

namespace {

using ptl_sim::App;
using ptl_sim::CpuPolicy;
using ptl_sim::kMs;
using ptl_sim::kSec;
using ptl_sim::MachineConfig;
using ptl_sim::Model;
using ptl_sim::Time;
using ptl_sim::Workload;
using ptl_sim::WorkloadConfig;

constexpr const char* kUsage = R"(usage: ptl-sim [options]
  --model guest|cluster     the machine (default guest)
  --workload incast|ring|a2a   (default incast)
  --nodes N[,N...]          nodes; one row per value (default 8)
  --count C                 puts per client, a2a per destination (default 32, a2a 8)
  --size B                  bytes per put (default 65536, a2a 4096)
  --app stress|bulk         the programs (default: guest stress, cluster bulk)
  --window W                puts in flight per client (default 16)
  --ring B                  bytes in flight per client (default max(2 size, 256 KiB))
  --dests D                 bulk a2a: destinations per node simulated (default all)
  --shuffle                 bulk a2a: each node's destinations in a random order
  --seed S                  random seed (default 1)
  --cpu fifo|softirq|linux  the CPU's order of work (default fifo)
  --backlog F               frames the backlog (guest) or a NIC ring (cluster) holds
  --link-gbps G             cluster link rate (default 10)
  --switch-buffer B         cluster: bytes per switch output port (default 1048576)
  --latency-ns T            cluster: per hop (default 500)
  --ipns X                  cluster CPU: instructions per ns (default 3)
  --copy-ns-per-byte X      cluster: the copy into the MD (default 0.1)
  --csum-ns-per-byte X      cluster: the payload checksum, each end (default 0.1)
  --start-ms X              a stress client's start-up (guest default 14.3)
  --loss P                  frames lost at random, probability
  --mtu B  --eager-max B  --max-window F  --init-cwnd F  --min-rto-ms T
  --rx-open-max M  --peer-timeout-s T   the transport's parameters
  --cts-budget B            bytes a receiving interface grants (CTS sent) and has
                            not yet received; other RTSes wait (default 0: no bound)
  --cts-idle-ms T           a grant with no data for T stops counting (default 200, 0: never)
  --tick-phase              cluster: each node's jiffies at its own phase
  --limit-s T               simulated seconds allowed (default 3600)
  --validate FILE           compare with a scalebench TSV (repeatable)
  --markdown                validation as a Markdown table
  --no-header               no TSV header line
)";

[[noreturn]] void Usage(const std::string& why) {
  if (!why.empty()) std::cerr << "ptl-sim: " << why << "\n";
  std::cerr << kUsage;
  std::exit(2);
}

std::vector<int> ParseList(const std::string& s) {
  std::vector<int> out;
  std::string t = s;
  for (char& c : t)
    if (c == ',') c = ' ';
  std::istringstream in(t);
  int v;
  while (in >> v) {
    if (v < 2) Usage("--nodes: at least 2");
    out.push_back(v);
  }
  if (out.empty()) Usage("--nodes: no value");
  return out;
}

double Num(const std::string& opt, const char* v) {
  char* end = nullptr;
  double d = std::strtod(v, &end);
  if (!end || *end || end == v) Usage(opt + ": not a number: " + v);
  return d;
}

}  // namespace

int main(int argc, char** argv) {
  std::string model = "guest", workload = "incast", app, cpu;
  std::vector<int> nodes = {8};
  std::vector<std::string> validate;
  double count = -1, size = -1, window = 16, ring = 0, dests = 0, seed = 1, backlog = -1;
  double gbps = 10, buffer = 1 << 20, latency = 500, ipns = 3, copy = 0.1, csum = 0.1;
  double start_ms = -1, loss = 0, mtu = 1500, eager = 16384, max_window = 256, min_rto = 10;
  double rx_open_max = 16384, limit = 3600, init_cwnd = 16, peer_timeout = 10, cts_budget = 0;
  double cts_idle_ms = 200;
  bool markdown = false, header = true, shuffle = false, tick_phase = false;
  const std::map<std::string, double*> numeric = {
      {"--count", &count},
      {"--size", &size},
      {"--window", &window},
      {"--ring", &ring},
      {"--dests", &dests},
      {"--seed", &seed},
      {"--backlog", &backlog},
      {"--link-gbps", &gbps},
      {"--switch-buffer", &buffer},
      {"--latency-ns", &latency},
      {"--ipns", &ipns},
      {"--copy-ns-per-byte", &copy},
      {"--csum-ns-per-byte", &csum},
      {"--start-ms", &start_ms},
      {"--loss", &loss},
      {"--mtu", &mtu},
      {"--eager-max", &eager},
      {"--max-window", &max_window},
      {"--init-cwnd", &init_cwnd},
      {"--min-rto-ms", &min_rto},
      {"--rx-open-max", &rx_open_max},
      {"--peer-timeout-s", &peer_timeout},
      {"--cts-budget", &cts_budget},
      {"--cts-idle-ms", &cts_idle_ms},
      {"--limit-s", &limit},
  };

  for (int i = 1; i < argc; i++) {
    std::string o = argv[i];
    if (o == "--help" || o == "-h") {
      std::cout << kUsage;
      return 0;
    }
    if (o == "--markdown") {
      markdown = true;
      continue;
    }
    if (o == "--no-header") {
      header = false;
      continue;
    }
    if (o == "--shuffle") {
      shuffle = true;
      continue;
    }
    if (o == "--tick-phase") {
      tick_phase = true;
      continue;
    }
    if (i + 1 >= argc) Usage(o + ": needs a value");
    const char* v = argv[++i];
    if (o == "--model")
      model = v;
    else if (o == "--workload")
      workload = v;
    else if (o == "--nodes")
      nodes = ParseList(v);
    else if (o == "--app")
      app = v;
    else if (o == "--cpu")
      cpu = v;
    else if (o == "--validate")
      validate.push_back(v);
    else if (auto it = numeric.find(o); it != numeric.end())
      *it->second = Num(o, v);
    else
      Usage("unknown option " + o);
  }
  if (model != "guest" && model != "cluster") Usage("--model: guest or cluster");
  if (!app.empty() && app != "stress" && app != "bulk") Usage("--app: stress or bulk");
  if (!cpu.empty() && cpu != "fifo" && cpu != "softirq" && cpu != "linux")
    Usage("--cpu: fifo, softirq or linux");
  if (mtu < 169 || mtu > 65535) Usage("--mtu: 169 to 65535");
  if (window < 1 || max_window < 2 || max_window > 1024) Usage("--window or --max-window");
  if (init_cwnd < 2 || init_cwnd > max_window) Usage("--init-cwnd: 2 to --max-window");
  if (cts_budget < 0) Usage("--cts-budget: bytes, 0 for no bound");
  if (cts_idle_ms < 0) Usage("--cts-idle-ms: 0 (never) or more");

  auto machine = [&](Model m, int n) {
    MachineConfig mc = m == Model::kGuest ? MachineConfig::Guest(n) : MachineConfig::Cluster(n);
    if (m == Model::kCluster) {
      mc.costs = ptl_sim::ClusterCosts(ipns, copy, csum);
      mc.sw.gbps = gbps;
      mc.sw.buffer = static_cast<std::size_t>(buffer);
      mc.sw.latency = static_cast<Time>(latency);
    }
    if (start_ms >= 0) mc.costs.proc_start = static_cast<Time>(start_ms * kMs);
    if (backlog > 0) mc.backlog = static_cast<std::size_t>(backlog);
    if (cpu == "softirq") mc.policy = CpuPolicy::kSoftirqFirst;
    if (cpu == "linux") mc.policy = CpuPolicy::kLinux;
    mc.loss = loss;
    mc.tick_phase = tick_phase;
    mc.proto.mtu = static_cast<uint32_t>(mtu);
    mc.proto.eager_max = static_cast<uint64_t>(eager);
    mc.proto.max_window = static_cast<uint32_t>(max_window);
    mc.proto.min_rto = static_cast<Time>(min_rto * kMs);
    mc.proto.rx_open_max = static_cast<uint32_t>(rx_open_max);
    mc.proto.init_cwnd = static_cast<uint32_t>(init_cwnd);
    mc.proto.peer_timeout = static_cast<Time>(peer_timeout * kSec);
    mc.proto.cts_budget = static_cast<uint64_t>(cts_budget);
    mc.proto.cts_idle = static_cast<Time>(cts_idle_ms * kMs);
    return mc;
  };
  auto work = [&](Model m, Workload w) {
    WorkloadConfig wc;
    wc.workload = w;
    wc.app = app.empty() ? (m == Model::kGuest ? App::kStress : App::kBulk)
                         : (app == "stress" ? App::kStress : App::kBulk);
    wc.count = count > 0 ? static_cast<int>(count) : (w == Workload::kA2a ? 8 : 32);
    wc.size = size >= 0 ? static_cast<uint64_t>(size) : (w == Workload::kA2a ? 4096 : 65536);
    wc.window = static_cast<int>(window);
    wc.ring = static_cast<uint64_t>(ring);
    wc.dests = static_cast<int>(dests);
    wc.shuffle = shuffle;
    wc.limit = static_cast<Time>(limit * kSec);
    return wc;
  };

  if (!validate.empty()) {
    std::vector<ptl_sim::Comparison> rows;
    for (const auto& path : validate) {
      std::vector<ptl_sim::Measured> measured;
      std::string why;
      if (!ptl_sim::ReadMeasured(path, &measured, &why)) {
        std::cerr << "ptl-sim: " << why << "\n";
        return 1;
      }
      for (const auto& m : measured) {
        auto r = ptl_sim::RunWorkload(machine(Model::kGuest, m.nodes),
                                      work(Model::kGuest, m.workload), static_cast<uint64_t>(seed));
        rows.push_back({m, r});
      }
    }
    ptl_sim::PrintValidation(std::cout, rows, markdown);
    return 0;
  }

  Workload w;
  if (!ptl_sim::ParseWorkload(workload, &w)) Usage("--workload: incast, ring or a2a");
  Model m = model == "guest" ? Model::kGuest : Model::kCluster;
  if (header) ptl_sim::PrintHeader(std::cout);
  bool ok = true;
  for (int n : nodes) {
    auto r = ptl_sim::RunWorkload(machine(m, n), work(m, w), static_cast<uint64_t>(seed));
    ptl_sim::PrintRow(std::cout, r);
    std::cout.flush();
    ok = ok && r.ok;
  }
  return ok ? 0 : 1;
}
