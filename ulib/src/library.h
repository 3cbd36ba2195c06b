// SPDX-License-Identifier: BSD-3-Clause
// Process-wide library state: the device opened (or adopted) by PtlInit, the
// NIs and EQs this process created, and the runtime (rank) data.
#pragma once

#include <p3api/debug.h>
#include <portals3.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "device.h"
#include "eq.h"

namespace ptl {

// A job as the runtime (p3rt) describes it: my rank and everybody's id.
struct Group {
  unsigned rank = ~0U;
  unsigned size = 0;
  std::vector<ptl_nid_t> nidmap;  // empty until set
  std::vector<ptl_pid_t> pidmap;  // empty until set
};

// What the library remembers about an NI it created.
struct Ni {
  ptl_ni_limits_t limits{};
  unsigned debug_mask = PTL_DBG_NONE;
  std::optional<Group> group;
};

struct State {
  std::map<ptl_handle_ni_t, Ni> nis;
  std::map<ptl_handle_eq_t, std::shared_ptr<Eq>> eqs;
  // Set through PTL_INVALID_HANDLE before PtlNIInit: applies to the next NI.
  std::optional<Group> next_group;
  unsigned default_debug_mask = PTL_DBG_NONE;
  // The job id the launcher (ptlrun) set on the descriptor we adopted.
  std::optional<ptl_jid_t> launcher_jid;
};

class Library {
 public:
  using DeviceRef = std::shared_ptr<const Device>;

  static Library& Instance();

  int Init(int* max_interfaces);
  void Fini();

  // The device of an initialised library, or nullptr (PTL_NO_INIT). State
  // belongs to the process that called PtlInit: after fork() the child sees
  // an uninitialised library until it calls PtlInit itself.
  DeviceRef device() const;

  // Runs f(State&) under the library lock if the library is initialised in
  // this process and returns true; returns false (PTL_NO_INIT) otherwise.
  // f may change what a lookup answers, so the threads' lookup caches are
  // invalidated.
  template <typename F>
  bool WithState(F&& f) {
    std::lock_guard lock(mutex_);
    if (!Live()) return false;
    f(state_);
    Invalidate();
    return true;
  }

  // The EQ behind a handle, or nullptr.
  std::shared_ptr<Eq> FindEq(ptl_handle_eq_t handle);

  // How long (ns) a waiter polls its mapped rings before it sleeps in the
  // kernel: PTL_EQ_SPIN_US at PtlInit, 0 (sleep at once) unless set and
  // the process may run on more than one CPU. Read without the lock.
  int64_t eq_spin_ns() const { return eq_spin_ns_.load(std::memory_order_relaxed); }

  // PtlEQPoll's lookup, under one lock: the EQs behind handles[0..n).
  // PTL_NO_INIT, PTL_EQ_INVALID (n <= 0, or *bad names an unknown handle or
  // an EQ of another NI than the first's), or PTL_OK. One handle is
  // answered from the calling thread's cache while nothing has changed.
  int FindEqs(const ptl_handle_eq_t* handles, int n, std::shared_ptr<Eq>* eqs, int* bad);

 private:
  Library();
  bool Live() const;  // caller holds mutex_
  // Every change to what device() or an EQ lookup answers (PtlInit,
  // PtlFini, an EQ or NI gone, fork) bumps generation_ under mutex_; a
  // thread's cached answer is good while the generation it was read at is
  // current. Caller holds mutex_.
  void Invalidate() { generation_.fetch_add(1, std::memory_order_release); }
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

  // fork() handlers: the library lock is held across fork so the child gets
  // it in a consistent state, and the child forgets its parent's library.
  static void BeforeFork();
  static void AfterForkInParent();
  static void AfterForkInChild();

  mutable std::mutex mutex_;
  std::shared_ptr<const Device> device_;
  // Set by PtlInit, cleared by PtlFini and in a forked child. Tracking fork
  // with pthread_atfork instead of comparing getpid() keeps every call free
  // of that syscall (PtlEQGet must not enter the kernel at all).
  bool owned_ = false;
  int max_interfaces_ = 0;
  bool fd_env_consumed_ = false;
  std::atomic<int64_t> eq_spin_ns_{0};
  std::atomic<uint64_t> generation_{1};  // 0 is never current: an empty cache
  State state_;
};

// For a call the kernel checks against this process's reading of an EQ
// (PtlMDUpdate, PtlMEMDPost: contract 12). The kernel cannot see how far the
// process has read, so the caller passes the sequence the reader expects
// next; holding the EQ's reader lock across the call keeps other threads of
// the process from dequeuing between that read and the kernel's check.
// PTL_EQ_NONE or an EQ the library does not know: no lock, *seq untouched
// (the kernel answers an unknown EQ).
class EqReaderHold {
 public:
  EqReaderHold(ptl_handle_eq_t eq_handle, uint32_t* seq) {
    if (eq_handle != PTL_EQ_NONE) eq_ = Library::Instance().FindEq(eq_handle);
    if (!eq_) return;
    lock_ = std::unique_lock(eq_->mutex);
    *seq = eq_->reader.expected();
  }

 private:
  std::shared_ptr<Eq> eq_;  // outlives lock_, which is destroyed first
  std::unique_lock<std::mutex> lock_;
};

// Runs f() and turns an exception into a Portals code: nothing may cross the
// C API (std::bad_alloc -> PTL_NO_SPACE).
template <typename F>
int Guard(F&& f) noexcept {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return PTL_NO_SPACE;
  } catch (...) {
    return PTL_FAIL;
  }
}

}  // namespace ptl
