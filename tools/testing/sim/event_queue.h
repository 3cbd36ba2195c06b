// SPDX-License-Identifier: BSD-3-Clause
// The discrete-event core of ptl-sim: simulated time in nanoseconds, an
// event queue ordered by time and then by the order events were scheduled
// (so a run is deterministic), a seeded random number generator, and a
// timer that can be moved as the kernel's mod_timer moves one without
// leaving an event behind for every move.
#ifndef PTL_SIM_EVENT_QUEUE_H
#define PTL_SIM_EVENT_QUEUE_H

#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

namespace ptl_sim {

using Time = int64_t;  // nanoseconds of simulated time
inline constexpr Time kUs = 1000;
inline constexpr Time kMs = 1000 * kUs;
inline constexpr Time kSec = 1000 * kMs;
inline constexpr Time kNever = std::numeric_limits<Time>::max();

class Sim {
 public:
  using Fn = std::function<void()>;

  explicit Sim(uint64_t seed = 1) : rng_(seed) {}
  Sim(const Sim&) = delete;
  Sim& operator=(const Sim&) = delete;

  Time now() const { return now_; }
  // Runs fn at time t (not before now); events at the same time run in
  // the order they were scheduled.
  void At(Time t, Fn fn);
  void After(Time d, Fn fn) { At(now_ + d, std::move(fn)); }

  // Runs the next event; false when there is none or Stop() was called.
  bool Step();
  // Runs events until none is left, Stop() is called or time passes limit.
  void Run(Time limit = kNever);
  void Stop() { stopped_ = true; }
  bool stopped() const { return stopped_; }

  uint64_t events_run() const { return events_run_; }
  std::size_t pending() const { return heap_.size(); }

  // splitmix64: the same sequence for a seed on every platform.
  uint64_t Random();
  double Uniform() { return static_cast<double>(Random() >> 11) * 0x1.0p-53; }

 private:
  struct Event {
    Time t;
    uint64_t seq;
    Fn fn;
  };
  static bool Later(const Event& a, const Event& b) {
    return a.t != b.t ? a.t > b.t : a.seq > b.seq;
  }

  std::vector<Event> heap_;
  Time now_ = 0;
  uint64_t seq_ = 0;
  uint64_t events_run_ = 0;
  uint64_t rng_;
  bool stopped_ = false;
};

// A timer of one owner, re-armed at will: at most one event is pending
// for it whatever the number of moves (a later deadline is reached by
// re-scheduling when the earlier event fires, as TCP's lazy timers do).
class Timer {
 public:
  Timer(Sim& sim, Sim::Fn fn) : sim_(sim), fn_(std::move(fn)) {}
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  void Arm(Time when);
  void Cancel() { when_ = kNever; }
  bool armed() const { return when_ != kNever; }
  Time when() const { return when_; }

 private:
  void Fire(uint64_t gen);

  Sim& sim_;
  Sim::Fn fn_;
  Time when_ = kNever;       // the deadline, kNever: not armed
  Time scheduled_ = kNever;  // when the pending event runs
  uint64_t gen_ = 0;         // of the pending event
};

}  // namespace ptl_sim

#endif  // PTL_SIM_EVENT_QUEUE_H
