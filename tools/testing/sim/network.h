// SPDX-License-Identifier: BSD-3-Clause
// What carries a frame from one node's transmit to another node's receive
// path (the receive path itself, the CPU work, is the Machine's).
//
//   VethBridge  the measured guest: a node's veth hands the frame to the
//               CPU's backlog, the bridge takes it off (CPU work) and hands
//               it to the backlog again, for the receiving namespace. No
//               wire time; a full backlog drops (netdev_max_backlog).
//   Switch      a cluster: each node's NIC serialises its frames at the
//               link rate (a transmit queue of txqueuelen frames), a
//               non-blocking output-queued switch holds at most `buffer`
//               bytes per output port (drop-tail) and serialises them onto
//               the receiver's link.
#ifndef PTL_SIM_NETWORK_H
#define PTL_SIM_NETWORK_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "cpu.h"
#include "event_queue.h"
#include "frame.h"

namespace ptl_sim {

class Fabric {
 public:
  using Arrive = std::function<void(const Frame&)>;
  explicit Fabric(Sim& sim) : sim_(sim) {}
  virtual ~Fabric() = default;
  Fabric(const Fabric&) = delete;
  Fabric& operator=(const Fabric&) = delete;

  // Where frames go at the far end (the receiver's CPU).
  void set_arrive(Arrive a) { arrive_ = std::move(a); }
  // Frames dropped at random (probability), and a test's own choice.
  void set_loss(double p) { loss_ = p; }
  void set_drop_filter(std::function<bool(const Frame&)> f) { filter_ = std::move(f); }

  // A frame leaves its node (its transmit work is done).
  void Send(const Frame& f);

  uint64_t drops() const { return drops_; }    // in the fabric's queues
  uint64_t lost() const { return lost_; }      // random or filtered
  uint64_t frames() const { return frames_; }  // sent into it
  virtual std::size_t queue_max_bytes() const { return 0; }

 protected:
  virtual void Carry(const Frame& f) = 0;
  void Deliver(const Frame& f) { arrive_(f); }

  Sim& sim_;
  uint64_t drops_ = 0;

 private:
  Arrive arrive_;
  std::function<bool(const Frame&)> filter_;
  double loss_ = 0;
  uint64_t lost_ = 0, frames_ = 0;
};

class VethBridge : public Fabric {
 public:
  VethBridge(Sim& sim, Cpu& cpu, Time hop) : Fabric(sim), cpu_(cpu), hop_(hop) {}

 protected:
  void Carry(const Frame& f) override;

 private:
  Cpu& cpu_;
  Time hop_;
};

struct SwitchConfig {
  double gbps = 10;              // every link
  std::size_t buffer = 1 << 20;  // bytes per output port
  std::size_t nic_txq = 1000;    // frames queued at a NIC (txqueuelen)
  Time latency = 500;            // per hop: cable, PHY, switching
};

class Switch : public Fabric {
 public:
  Switch(Sim& sim, int nodes, const SwitchConfig& c);
  std::size_t queue_max_bytes() const override { return port_max_; }
  Time serialise(const Frame& f) const;

 protected:
  void Carry(const Frame& f) override;

 private:
  void Port(const Frame& f);

  SwitchConfig c_;
  std::vector<Time> nic_free_, port_free_;
  std::vector<std::size_t> nic_q_, port_bytes_;
  std::size_t port_max_ = 0;
};

}  // namespace ptl_sim

#endif  // PTL_SIM_NETWORK_H
