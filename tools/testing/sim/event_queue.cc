// SPDX-License-Identifier: BSD-3-Clause
#include "event_queue.h"

#include <algorithm>
#include <cassert>

namespace ptl_sim {

void Sim::At(Time t, Fn fn) {
  assert(t >= now_);
  heap_.push_back(Event{std::max(t, now_), seq_++, std::move(fn)});
  std::push_heap(heap_.begin(), heap_.end(), Later);
}

bool Sim::Step() {
  if (heap_.empty() || stopped_) return false;
  std::pop_heap(heap_.begin(), heap_.end(), Later);
  Event e = std::move(heap_.back());
  heap_.pop_back();
  now_ = e.t;
  events_run_++;
  e.fn();
  return true;
}

void Sim::Run(Time limit) {
  while (!heap_.empty() && !stopped_ && heap_.front().t <= limit) Step();
}

uint64_t Sim::Random() {
  uint64_t z = (rng_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void Timer::Arm(Time when) {
  when_ = std::max(when, sim_.now());
  if (scheduled_ <= when_) return;  // the pending event comes first
  scheduled_ = when_;
  uint64_t gen = ++gen_;
  sim_.At(when_, [this, gen] { Fire(gen); });
}

void Timer::Fire(uint64_t gen) {
  if (gen != gen_) return;  // superseded by an earlier deadline
  scheduled_ = kNever;
  if (when_ == kNever) return;
  if (sim_.now() < when_) {  // moved later meanwhile
    scheduled_ = when_;
    uint64_t next = ++gen_;
    sim_.At(when_, [this, next] { Fire(next); });
    return;
  }
  when_ = kNever;
  fn_();
}

}  // namespace ptl_sim
