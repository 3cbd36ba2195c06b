// SPDX-License-Identifier: BSD-3-Clause
// A node's CPU: one server of work items, each with a cost in simulated
// nanoseconds. Work items are of two classes:
//
//   softirq   frames received (which also stand in the backlog: a queue
//             of at most `backlog` frames, past which a frame is dropped,
//             as netif_rx drops past netdev_max_backlog or a NIC past its
//             receive ring), timers, and the transmit work that continues
//             a handler ("front": it runs next, as the kernel's transmit
//             runs inside the handler that queued the frame);
//   process   the steps of the programs (Process below).
//
// The policy decides the order:
//
//   kFifo          both classes in arrival order (the model's default);
//   kSoftirqFirst  softirq work before any process step;
//   kLinux         as Linux 6.1 does on one CPU: softirq work first, until
//                  it has run for 2 ms on end (MAX_SOFTIRQ_TIME) or woke a
//                  program (need_resched); then it is ksoftirqd's, one
//                  thread among the programs' under a fair scheduler (least
//                  virtual runtime first, a woken thread placed at most
//                  3 ms behind), until it drains.
#ifndef PTL_SIM_CPU_H
#define PTL_SIM_CPU_H

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "event_queue.h"

namespace ptl_sim {

enum class CpuPolicy { kFifo, kSoftirqFirst, kLinux };

class Cpu {
 public:
  Cpu(Sim& sim, std::size_t backlog, CpuPolicy policy = CpuPolicy::kFifo)
      : sim_(sim), backlog_limit_(backlog), policy_(policy) {}
  Cpu(const Cpu&) = delete;
  Cpu& operator=(const Cpu&) = delete;

  // A thread for a program's work (kLinux schedules threads).
  int NewThread() { return ++threads_; }
  // Process work of `thread`, at the back.
  void Submit(Time cost, Sim::Fn done, int thread = 0) {
    Push(Item{cost, std::move(done), false, false, thread}, false);
  }
  // Softirq work that continues what runs now (transmit, a timer): next.
  void SubmitFront(Time cost, Sim::Fn done) {
    Push(Item{cost, std::move(done), true, false, 0}, true);
  }
  // A frame for the receive path: false (and counted) if the backlog is full.
  bool SubmitFrame(Time cost, Sim::Fn done);

  Time busy_ns() const { return busy_; }
  std::size_t backlog() const { return backlog_; }
  std::size_t backlog_max() const { return backlog_max_; }
  uint64_t backlog_drops() const { return drops_; }
  bool idle() const { return !running_; }
  // A program woke (kLinux: softirq work that wakes one yields to it).
  void Woke() {
    if (policy_ == CpuPolicy::kLinux && running_softirq_) ksoftirqd_ = true;
  }

 private:
  struct Item {
    Time cost;
    Sim::Fn fn;
    bool softirq;
    bool frame;
    int thread;
  };
  void Push(Item it, bool front);
  void StartNext();
  bool PickLinux(Item* out);

  Sim& sim_;
  std::size_t backlog_limit_;
  CpuPolicy policy_;
  std::deque<Item> soft_;  // kSoftirqFirst: softirq work waits here
  std::deque<Item> q_;     // everything else (kFifo: everything)
  bool running_ = false;
  Time busy_ = 0;
  int threads_ = 0;
  // kLinux: each program thread's queue and virtual runtime (0: ksoftirqd).
  std::vector<std::deque<Item>> proc_q_;
  std::vector<Time> vruntime_;
  Time min_vruntime_ = 0, soft_since_ = -1;
  bool ksoftirqd_ = false, running_softirq_ = false;
  std::size_t backlog_ = 0, backlog_max_ = 0;
  uint64_t drops_ = 0;
};

// The work a kind of machine charges, in nanoseconds (and per byte).
struct Costs {
  Time frame_tx = 0;          // a frame built, checksummed and handed to the device
  double tx_per_byte = 0;     // ... per payload byte (the payload checksum)
  Time frame_rx = 0;          // a frame through the stack, decoded, acknowledged
  double rx_per_byte = 0;     // ... per payload byte (checksum, copy into the MD)
  Time bridge_hop = 0;        // guest: the bridge's extra pass through the stack
  Time timer = 0;             // a timer's expiry and handler
  Time put_call = 0;          // PtlPutRegion: library, system call, core
  Time event = 0;             // one event written and read
  Time wakeup = 0;            // a sleeping process woken and switched to
  double gen_per_byte = 0;    // the program making a put's payload
  double check_per_byte = 0;  // the program verifying a put's payload
  Time proc_start = 0;        // a program started (fork, exec, PtlInit, NI)
};

// A program on a node: its steps run one at a time, in order, each as a
// process work item on the node's CPU.
class Process {
 public:
  Process(Cpu& cpu, const Costs& costs) : cpu_(cpu), costs_(costs), thread_(cpu.NewThread()) {}
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  // A step: `cost` of CPU, then fn. front: before the steps queued.
  void Step(Time cost, Sim::Fn fn, bool front = false);
  // Something for the program to read (an event): its cost, plus a
  // wake-up if it was asleep (nothing to do).
  void Event(Sim::Fn fn, Time extra = 0);
  bool asleep() const { return !running_ && steps_.empty(); }
  std::size_t queued() const { return steps_.size(); }

 private:
  void Next();

  Cpu& cpu_;
  const Costs& costs_;
  int thread_;
  std::deque<std::pair<Time, Sim::Fn>> steps_;
  bool running_ = false;
};

}  // namespace ptl_sim

#endif  // PTL_SIM_CPU_H
