// SPDX-License-Identifier: BSD-3-Clause
#include "network.h"

#include <algorithm>
#include <cmath>

namespace ptl_sim {

void Fabric::Send(const Frame& f) {
  frames_++;
  if ((filter_ && filter_(f)) || (loss_ > 0 && sim_.Uniform() < loss_)) {
    lost_++;
    return;
  }
  Carry(f);
}

// Two passes through the one backlog: into the bridge, out to the node.
void VethBridge::Carry(const Frame& f) {
  if (!cpu_.SubmitFrame(hop_, [this, f] { Deliver(f); })) drops_++;
}

Switch::Switch(Sim& sim, int nodes, const SwitchConfig& c)
    : Fabric(sim), c_(c), nic_free_(nodes), port_free_(nodes), nic_q_(nodes), port_bytes_(nodes) {}

Time Switch::serialise(const Frame& f) const {
  return static_cast<Time>(std::ceil(f.wire_bytes() * 8.0 / c_.gbps));
}

void Switch::Carry(const Frame& f) {
  auto s = static_cast<std::size_t>(f.src);
  if (nic_q_[s] >= c_.nic_txq) {
    drops_++;
    return;
  }
  nic_q_[s]++;
  Time done = std::max(sim_.now(), nic_free_[s]) + serialise(f);
  nic_free_[s] = done;
  sim_.At(done + c_.latency, [this, f, s] {
    nic_q_[s]--;
    Port(f);
  });
}

void Switch::Port(const Frame& f) {
  auto d = static_cast<std::size_t>(f.dst);
  uint32_t bytes = f.wire_bytes();
  if (port_bytes_[d] + bytes > c_.buffer) {
    drops_++;
    return;
  }
  port_bytes_[d] += bytes;
  port_max_ = std::max(port_max_, port_bytes_[d]);
  Time done = std::max(sim_.now(), port_free_[d]) + serialise(f);
  port_free_[d] = done;
  sim_.At(done + c_.latency, [this, f, d, bytes] {
    port_bytes_[d] -= bytes;
    Deliver(f);
  });
}

}  // namespace ptl_sim
