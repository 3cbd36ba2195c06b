// SPDX-License-Identifier: BSD-3-Clause
#include "cpu.h"

#include <algorithm>
#include <utility>

namespace ptl_sim {

bool Cpu::SubmitFrame(Time cost, Sim::Fn done) {
  if (backlog_ >= backlog_limit_) {
    drops_++;
    return false;
  }
  backlog_++;
  backlog_max_ = std::max(backlog_max_, backlog_);
  Push(Item{cost, std::move(done), true, true, 0}, false);
  return true;
}

namespace {
constexpr Time kMaxSoftirqTime = 2 * kMs;  // then ksoftirqd (kernel/softirq.c)
constexpr Time kSleeperCredit = 3 * kMs;   // sched_latency / 2 on one CPU
}  // namespace

void Cpu::Push(Item it, bool front) {
  std::deque<Item>* q = &q_;
  if (policy_ != CpuPolicy::kFifo && it.softirq) {
    q = &soft_;
  } else if (policy_ == CpuPolicy::kLinux) {
    auto t = static_cast<std::size_t>(it.thread);
    if (proc_q_.size() <= t) {
      proc_q_.resize(t + 1);
      vruntime_.resize(t + 1, min_vruntime_);
    }
    q = &proc_q_[t];
    if (q->empty()) vruntime_[t] = std::max(vruntime_[t], min_vruntime_ - kSleeperCredit);
  }
  if (front)
    q->push_front(std::move(it));
  else
    q->push_back(std::move(it));
  if (!running_) StartNext();
}

// Softirq work inline, or ksoftirqd's turn; else the thread furthest behind.
bool Cpu::PickLinux(Item* out) {
  if (vruntime_.empty()) {
    vruntime_.resize(1, min_vruntime_);
    proc_q_.resize(1);
  }
  if (soft_.empty()) {
    ksoftirqd_ = false;
    soft_since_ = -1;
  }
  if (!soft_.empty() && !ksoftirqd_) {
    if (soft_since_ < 0) soft_since_ = sim_.now();
    if (sim_.now() - soft_since_ >= kMaxSoftirqTime) {
      ksoftirqd_ = true;
      vruntime_[0] = std::max(vruntime_[0], min_vruntime_ - kSleeperCredit);
    } else {
      *out = std::move(soft_.front());
      soft_.pop_front();
      return true;
    }
  }
  std::size_t best = 0;
  bool found = false;
  if (!soft_.empty()) found = true;  // ksoftirqd, thread 0
  for (std::size_t t = 1; t < proc_q_.size(); t++)
    if (!proc_q_[t].empty() && (!found || vruntime_[t] < vruntime_[best])) {
      best = t;
      found = true;
    }
  if (!found) return false;
  std::deque<Item>& q = best == 0 ? soft_ : proc_q_[best];
  *out = std::move(q.front());
  q.pop_front();
  if (best != 0) soft_since_ = -1;
  vruntime_[best] += out->cost;
  Time lowest = vruntime_[best];
  for (std::size_t t = 1; t < proc_q_.size(); t++)
    if (!proc_q_[t].empty()) lowest = std::min(lowest, vruntime_[t]);
  min_vruntime_ = std::max(min_vruntime_, lowest);
  return true;
}

void Cpu::StartNext() {
  Item it;
  if (policy_ == CpuPolicy::kLinux) {
    if (!PickLinux(&it)) {
      running_ = false;
      return;
    }
  } else {
    auto& q = !soft_.empty() ? soft_ : q_;
    if (q.empty()) {
      running_ = false;
      return;
    }
    it = std::move(q.front());
    q.pop_front();
  }
  if (it.frame) backlog_--;
  running_ = true;
  running_softirq_ = it.softirq;
  busy_ += it.cost;
  sim_.After(it.cost, [this, fn = std::move(it.fn)] {
    fn();
    StartNext();
  });
}

void Process::Step(Time cost, Sim::Fn fn, bool front) {
  if (front)
    steps_.emplace_front(cost, std::move(fn));
  else
    steps_.emplace_back(cost, std::move(fn));
  if (!running_) Next();
}

void Process::Event(Sim::Fn fn, Time extra) {
  Time cost = costs_.event + extra;
  if (asleep()) {
    cost += costs_.wakeup;
    cpu_.Woke();
  }
  Step(cost, std::move(fn));
}

void Process::Next() {
  if (steps_.empty()) {
    running_ = false;
    return;
  }
  auto [cost, fn] = std::move(steps_.front());
  steps_.pop_front();
  running_ = true;
  cpu_.Submit(
      cost,
      [this, fn = std::move(fn)] {
        fn();
        Next();
      },
      thread_);
}

}  // namespace ptl_sim
