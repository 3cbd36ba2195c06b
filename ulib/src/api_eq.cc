// SPDX-License-Identifier: BSD-3-Clause
// Event queues: PtlEQAlloc, PtlEQFree, PtlEQGet, PtlEQWait, PtlEQPoll,
// PtlEQWaitFd.
//
// The ring is mapped read-only and read without a syscall (<p3api/eq_ring.h>);
// only an empty PtlEQPoll/PtlEQWait sleeps in the kernel (PTL_IOC_EQ_WAIT),
// after polling the rings for PTL_EQ_SPIN_US if the process asked for it.
// Handlers run here, in the dequeuing thread, after the event was copied to
// the caller (API reference 8.6).
#include <portals3.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <vector>

#include "debug_trace.h"
#include "library.h"

using ptl::Library;

namespace {

// One non-blocking dequeue; runs the handler outside the EQ lock so that it
// may call the API (even on this EQ). On PTL_EQ_EMPTY, `watch` (if given)
// gets the sequence the reader waits for, read under the same lock, ready
// for PTL_IOC_EQ_WAIT.
int Dequeue(ptl::Eq& eq, ptl_event_t* event, ptl_ioc_eq_watch* watch = nullptr) {
  int rc;
  {
    std::lock_guard lock(eq.mutex);
    rc = eq.reader.Get(event);
    if (rc == PTL_EQ_EMPTY && watch) *watch = {eq.handle, eq.reader.expected()};
  }
  if (rc == PTL_EQ_EMPTY) return rc;
  unsigned mask = eq.debug_mask.load(std::memory_order_relaxed);
  if (mask & PTL_DBG_EVENT) ptl::TraceEvent(eq.handle, rc, *event);
  if (rc == PTL_EQ_DROPPED && (mask & PTL_DBG_EQ))
    ptl::Trace(eq.ni, PTL_DBG_EQ, "EQ %#x overflowed: events were dropped", eq.handle);
  if (eq.handler) eq.handler(event);
  return rc;
}

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

int64_t NowMs() { return NowNs() / 1000000; }

// One look at every EQ in array order, without a syscall; on PTL_EQ_EMPTY
// `watches` holds what each reader expects next.
int Scan(const std::shared_ptr<ptl::Eq>* eqs, ptl_ioc_eq_watch* watches, int size,
         ptl_event_t* event, int* which_eq) {
  for (int i = 0; i < size; ++i) {
    int rc = Dequeue(*eqs[i], event, &watches[i]);
    if (rc != PTL_EQ_EMPTY) {
      *which_eq = i;
      return rc;
    }
  }
  return PTL_EQ_EMPTY;
}

// Tells the CPU this is a spin (a sibling hyperthread gets the core).
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// Adaptive polling (PTL_EQ_SPIN_US): scans the rings until an event comes
// or CLOCK_MONOTONIC reaches `until_ns`, reading the clock every few
// scans (a scan is a lock and a load per EQ, the clock a vDSO call).
int Spin(const std::shared_ptr<ptl::Eq>* eqs, ptl_ioc_eq_watch* watches, int size, int64_t until_ns,
         ptl_event_t* event, int* which_eq) {
  constexpr unsigned kScansPerClockRead = 16;
  for (unsigned n = 1;; ++n) {
    CpuRelax();
    int rc = Scan(eqs, watches, size, event, which_eq);
    if (rc != PTL_EQ_EMPTY) return rc;
    if (n % kScansPerClockRead == 0 && NowNs() >= until_ns) return PTL_EQ_EMPTY;
  }
}

// The slow part of PtlEQPoll, once a scan found every EQ empty and the
// caller will wait: polls them for the process's spin time (if any, and
// within the timeout), then sleeps in the kernel (PTL_IOC_EQ_WAIT on
// `watches`) until an event, the timeout or an error. Kept out of line so
// that a poll that finds an event carries none of it.
[[gnu::noinline]] int Wait(const std::shared_ptr<ptl::Eq>* eqs, ptl_ioc_eq_watch* watches, int size,
                           ptl_time_t timeout, ptl_event_t* event, int* which_eq) {
  const bool forever = timeout == PTL_TIME_FOREVER;
  const int64_t deadline = forever ? 0 : NowMs() + timeout;
  int64_t left = timeout;  // until the clock says otherwise: one read per sleep
  // Once per call, before the first sleep: the spin never outlasts the
  // caller's timeout, and what is left of it after the spin still holds.
  if (const int64_t spin = Library::Instance().eq_spin_ns(); spin > 0) {
    const int64_t budget = forever ? spin : std::min(spin, int64_t{timeout} * 1000000);
    int rc = Spin(eqs, watches, size, NowNs() + budget, event, which_eq);
    if (rc != PTL_EQ_EMPTY) return rc;
    if (!forever) left = deadline - NowMs();
  }
  for (;;) {
    if (!forever && left <= 0) return PTL_EQ_EMPTY;
    ptl_ioc_eq_wait args{};
    args.watches = reinterpret_cast<uintptr_t>(watches);
    args.count = static_cast<uint32_t>(size);
    // A finite wait never asks for "forever" by accident.
    args.timeout_ms =
        forever ? PTL_TIME_FOREVER
                : static_cast<uint32_t>(left < PTL_TIME_FOREVER - 1 ? left : PTL_TIME_FOREVER - 1);
    int rc = eqs[0]->device->CallRaw(PTL_IOC_EQ_WAIT, &args);
    if (rc == PTL_EQ_EMPTY) return PTL_EQ_EMPTY;
    if (rc == PTL_EQ_INVALID) {
      *which_eq = args.which;
      return PTL_EQ_INVALID;
    }
    if (rc != -EINTR && rc != PTL_OK) return rc < 0 ? ptl::Device::ErrnoToPortals(rc) : rc;
    // A signal, or an event: look again.
    rc = Scan(eqs, watches, size, event, which_eq);
    if (rc != PTL_EQ_EMPTY) return rc;
    if (!forever) left = deadline - NowMs();
  }
}

// PtlEQPoll on EQs already looked up (all of one NI, so of one device):
// scans them in array order without a syscall, and waits (Wait) only
// when every one is empty and the timeout is not 0 (contract 11: then
// no clock is read either).
int Poll(const std::shared_ptr<ptl::Eq>* eqs, ptl_ioc_eq_watch* watches, int size,
         ptl_time_t timeout, ptl_event_t* event, int* which_eq) {
  int rc = Scan(eqs, watches, size, event, which_eq);
  if (rc != PTL_EQ_EMPTY || timeout == 0) return rc;
  return Wait(eqs, watches, size, timeout, event, which_eq);
}

}  // namespace

extern "C" {

int PtlEQAlloc(ptl_handle_ni_t ni_handle, ptl_size_t count, ptl_eq_handler_t eq_handler,
               ptl_handle_eq_t* eq_handle) {
  if (!eq_handle) return PTL_SEGV;
  auto dev = Library::Instance().device();
  if (!dev) return PTL_NO_INIT;

  return ptl::Guard([&]() -> int {
    ptl_ioc_eq_alloc args{};
    args.ni_handle = ni_handle;
    args.count = count;
    int rc = dev->Call(PTL_IOC_EQ_ALLOC, &args);
    if (rc != PTL_OK) return rc;
    if (args.eq_handle == PTL_EQ_NONE) {  // count 0 (contract 16): no ring
      *eq_handle = PTL_EQ_NONE;
      return PTL_OK;
    }

    // From here on a failure must give the EQ back.
    auto undo = [&](int code) -> int {
      ptl_ioc_handle free_args{};
      free_args.handle = args.eq_handle;
      dev->Call(PTL_IOC_EQ_FREE, &free_args);
      return code;
    };
    try {
      auto eq = std::make_shared<ptl::Eq>();
      const uint32_t nslots = args.nslots;
      if (nslots == 0 || (nslots & (nslots - 1)) != 0 ||
          args.ring_bytes < uint64_t{nslots} * sizeof(ptl_event_t) ||
          args.ctl_bytes < sizeof(ptl_eq_ctl))
        return undo(PTL_FAIL);
      eq->ring = ptl::Mapping::Map(dev->fd(), args.ring_offset, args.ring_bytes, PROT_READ);
      eq->ctl =
          ptl::Mapping::Map(dev->fd(), args.ctl_offset, args.ctl_bytes, PROT_READ | PROT_WRITE);
      if (!eq->ring.valid() || !eq->ctl.valid()) return undo(PTL_NO_SPACE);
      eq->device = dev;
      eq->handle = args.eq_handle;
      eq->ni = ni_handle;
      eq->handler = eq_handler;
      eq->reader = ptl::EqReader(static_cast<const ptl_event_t*>(eq->ring.get()), nslots,
                                 static_cast<ptl_eq_ctl*>(eq->ctl.get()));
      unsigned mask = 0;
      if (!Library::Instance().WithState([&](ptl::State& s) {
            auto ni = s.nis.find(ni_handle);
            if (ni != s.nis.end()) mask = ni->second.debug_mask;
            eq->debug_mask = mask;
            s.eqs[args.eq_handle] = eq;
          }))
        return PTL_NO_INIT;  // PtlFini raced us; the kernel dropped the EQ
      if (mask & PTL_DBG_EQ)
        ptl::Trace(ni_handle, PTL_DBG_EQ, "EQ %#x allocated: %u slots", args.eq_handle, nslots);
      *eq_handle = args.eq_handle;
      return PTL_OK;
    } catch (const std::bad_alloc&) {
      return undo(PTL_NO_SPACE);
    }
  });
}

int PtlEQFree(ptl_handle_eq_t eq_handle) {
  auto dev = Library::Instance().device();
  if (!dev) return PTL_NO_INIT;
  ptl_ioc_handle args{};
  args.handle = eq_handle;
  int rc = dev->Call(PTL_IOC_EQ_FREE, &args);
  if (rc != PTL_OK) return rc;
  // The kernel never writes the ring again (contract 14); the mappings are
  // unmapped when the last thread still reading them lets go.
  std::shared_ptr<ptl::Eq> eq;
  Library::Instance().WithState([&](ptl::State& s) {
    auto it = s.eqs.find(eq_handle);
    if (it == s.eqs.end()) return;
    eq = std::move(it->second);
    s.eqs.erase(it);
  });
  if (eq && (eq->debug_mask & PTL_DBG_EQ))
    ptl::Trace(eq->ni, PTL_DBG_EQ, "EQ %#x freed", eq_handle);
  return PTL_OK;
}

int PtlEQGet(ptl_handle_eq_t eq_handle, ptl_event_t* event) {
  if (!event) return PTL_SEGV;
  auto& lib = Library::Instance();
  auto eq = lib.FindEq(eq_handle);
  if (!eq) return lib.device() ? PTL_EQ_INVALID : PTL_NO_INIT;
  return Dequeue(*eq, event);
}

int PtlEQWait(ptl_handle_eq_t eq_handle, ptl_event_t* event) {
  if (!event) return PTL_SEGV;
  int which;
  return PtlEQPoll(&eq_handle, 1, PTL_TIME_FOREVER, event, &which);
}

int PtlEQPoll(ptl_handle_eq_t* eq_handles, int size, ptl_time_t timeout, ptl_event_t* event,
              int* which_eq) {
  if (!eq_handles || !event || !which_eq) return PTL_SEGV;

  return ptl::Guard([&]() -> int {
    auto& lib = Library::Instance();
    // One EQ (PtlEQWait, and most callers) costs one lookup and one
    // reference: this is every small message's wait (issue 23's budget).
    if (size == 1) {
      std::shared_ptr<ptl::Eq> eq;
      ptl_ioc_eq_watch watch;
      int rc = lib.FindEqs(eq_handles, 1, &eq, which_eq);
      if (rc != PTL_OK) return rc;
      return Poll(&eq, &watch, 1, timeout, event, which_eq);
    }
    // Up to kInlineEqs handles and their watch entries live on the stack:
    // a poll that finds an event allocates nothing, reads no clock and
    // makes no syscall; one that sleeps allocates nothing either.
    constexpr int kInlineEqs = 8;
    std::array<std::shared_ptr<ptl::Eq>, kInlineEqs> inline_eqs;
    std::vector<std::shared_ptr<ptl::Eq>> heap_eqs;
    std::shared_ptr<ptl::Eq>* eqs = inline_eqs.data();
    std::array<ptl_ioc_eq_watch, kInlineEqs> inline_watches;
    std::vector<ptl_ioc_eq_watch> heap_watches;
    ptl_ioc_eq_watch* watches = inline_watches.data();
    if (size > kInlineEqs) {
      heap_eqs.resize(static_cast<size_t>(size));
      eqs = heap_eqs.data();
      heap_watches.resize(static_cast<size_t>(size));
      watches = heap_watches.data();
    }
    int rc = lib.FindEqs(eq_handles, size, eqs, which_eq);
    if (rc != PTL_OK) return rc;
    return Poll(eqs, watches, size, timeout, event, which_eq);
  });
}

// Linux extension (<p3nal_linux.h>): the descriptor whose poll() the
// kernel answers from the EQ rings (PtlUringArmEQWait polls the same).
int PtlEQWaitFd(int* fd) {
  if (!fd) return PTL_SEGV;
  auto dev = Library::Instance().device();
  if (!dev) return PTL_NO_INIT;
  *fd = dev->fd();
  return PTL_OK;
}

}  // extern "C"
