// SPDX-License-Identifier: BSD-3-Clause
#include "library.h"

#include <fcntl.h>
#include <p3/errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <new>

namespace ptl {

namespace {

// The device path, overridable for testing and for nodes with a different
// devtmpfs layout.
const char* DevicePath() {
  const char* path = std::getenv("PTL_DEVICE");
  return path && *path ? path : PTL_DEVICE_PATH;
}

// Parses a non-negative decimal/hex/octal number that must fill the string.
std::optional<unsigned long> ParseNumber(const char* text) {
  if (!text || !*text) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  unsigned long value = std::strtoul(text, &end, 0);
  if (errno || *end || *text == '-') return std::nullopt;
  return value;
}

// Asks the kernel what it speaks; PTL_OK if `device` is a usable /dev/portals.
// Checks the kernel's ABI; also reports the job id a launcher set on this
// open file (PTL_JID_ANY if none).
int CheckVersion(const Device& device, int* max_interfaces, ptl_jid_t* jid = nullptr) {
  ptl_ioc_version version{};
  int rc = device.Call(PTL_IOC_VERSION, &version);
  if (rc != PTL_OK) return rc;
  if (version.abi_version != PTL_ABI_VERSION) return PTL_FAIL;
  *max_interfaces = static_cast<int>(version.max_interfaces);
  if (jid) *jid = version.jid;
  return PTL_OK;
}

// The descriptor a trusted launcher (ptlrun) passed down in PTL_FD, if it
// is an open /dev/portals; it carries the job id the launcher set. Anything
// else in PTL_FD is ignored (and left alone).
bool AdoptLauncherFd(Device* out, int* max_interfaces, ptl_jid_t* jid) {
  auto fd = ParseNumber(std::getenv("PTL_FD"));
  if (!fd || *fd > INT_MAX) return false;
  int flags = fcntl(static_cast<int>(*fd), F_GETFD);
  if (flags < 0) return false;
  // Never send our ioctls to some other driver's descriptor.
  struct stat fd_stat, dev_stat;
  if (fstat(static_cast<int>(*fd), &fd_stat) != 0 || !S_ISCHR(fd_stat.st_mode)) return false;
  if (stat(DevicePath(), &dev_stat) == 0 && dev_stat.st_rdev != fd_stat.st_rdev) return false;
  Device candidate(static_cast<int>(*fd));
  if (CheckVersion(candidate, max_interfaces, jid) != PTL_OK) {
    candidate.release();  // not ours to close
    return false;
  }
  // Programs this one execs must not inherit the job's descriptor.
  fcntl(candidate.fd(), F_SETFD, flags | FD_CLOEXEC);
  *out = std::move(candidate);
  return true;
}

// PTL_EQ_SPIN_US: microseconds a waiter polls its mapped rings for an
// event before it sleeps in the kernel (adaptive polling, as busy-poll
// sockets do: an event that is already on its way is taken without the
// sleep and wake-up). Off unless set, and off where the process may run
// on one CPU only: there the spin would hold the CPU that the sender, or
// the softirq bringing the event, needs. Anything but a whole number up to
// kMaxSpinUs is ignored.
int64_t EqSpinNsFromEnv() {
  constexpr unsigned long kMaxSpinUs = 1000000;
  auto us = ParseNumber(std::getenv("PTL_EQ_SPIN_US"));
  if (!us || *us == 0 || *us > kMaxSpinUs) return 0;
  cpu_set_t cpus;
  if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0 || CPU_COUNT(&cpus) < 2) return 0;
  return static_cast<int64_t>(*us) * 1000;
}

// The last answers of device() and of a one-EQ lookup in this thread, and
// the library generation they were read at (Library::Invalidate). A small
// message's every call looks up the same device and the same EQ: the cache
// spares it the library lock and the map (issue 23's budget: 12 lock pairs
// per round trip). The references it holds keep a freed EQ's mapping and a
// finished library's descriptor open until this thread's next lookup or
// its exit; the answer itself is never stale, since a generation read
// after the change makes the thread ask again under the lock.
struct LookupCache {
  uint64_t generation = 0;
  std::shared_ptr<const Device> device;  // valid at `generation`, or empty
  ptl_handle_eq_t eq_handle = PTL_EQ_NONE;
  std::shared_ptr<Eq> eq;  // eq_handle's EQ at `generation`, or empty
};

// On the heap, freed by a thread-specific key's destructor when a thread
// exits, and never for the main thread: a thread_local object would be
// destroyed at exit() before the atexit handlers, which may still call the
// API (PtlFini from an atexit handler is common).
thread_local LookupCache* t_lookups = nullptr;
pthread_key_t g_lookups_key;
bool g_lookups_key_ok = false;

void FreeLookups(void* cache) {
  delete static_cast<LookupCache*>(cache);
  t_lookups = nullptr;
}

// The calling thread's cache, emptied if `generation` moved on since it
// was filled; nullptr if there is none (no memory, no key): look up under
// the lock.
LookupCache* Lookups(uint64_t generation) {
  LookupCache* c = t_lookups;
  if (!c) {
    if (!g_lookups_key_ok) return nullptr;
    c = new (std::nothrow) LookupCache;
    if (!c) return nullptr;
    if (pthread_setspecific(g_lookups_key, c) != 0) {
      delete c;
      return nullptr;
    }
    t_lookups = c;
  }
  if (c->generation != generation) *c = LookupCache{generation, nullptr, PTL_EQ_NONE, nullptr};
  return c;
}

}  // namespace

Library& Library::Instance() {
  // Never destroyed: API calls from atexit handlers must stay safe.
  static Library* library = new Library();
  return *library;
}

Library::Library() {
  g_lookups_key_ok = pthread_key_create(&g_lookups_key, FreeLookups) == 0;
  pthread_atfork(&Library::BeforeFork, &Library::AfterForkInParent, &Library::AfterForkInChild);
}

void Library::BeforeFork() { Instance().mutex_.lock(); }

void Library::AfterForkInParent() { Instance().mutex_.unlock(); }

void Library::AfterForkInChild() {
  Library& lib = Instance();
  // The descriptor and the EQ mappings are the parent's: the child keeps
  // them open (closing is the parent's business) but no longer uses them.
  lib.owned_ = false;
  lib.Invalidate();
  lib.mutex_.unlock();
}

bool Library::Live() const { return device_ && owned_; }

int Library::Init(int* max_interfaces) {
  return Guard([&]() -> int {
    std::lock_guard lock(mutex_);
    if (Live()) return PTL_OK;
    if (!max_interfaces) return PTL_SEGV;

    // A child after fork() must not use (or tear down) its parent's NIs; its
    // copies of the parent's EQ mappings are simply dropped.
    device_.reset();
    state_ = State();

    Device device;
    int max_ifaces = 0;
    bool adopted = false;
    ptl_jid_t launcher_jid = PTL_JID_ANY;
    if (!fd_env_consumed_) {
      // Only once per process image: a later PtlInit (after PtlFini closed
      // it, or in a forked child sharing the parent's open file) opens anew.
      fd_env_consumed_ = true;
      adopted = AdoptLauncherFd(&device, &max_ifaces, &launcher_jid);
    }
    if (!adopted) {
      int rc = Device::Open(DevicePath(), &device);
      if (rc != PTL_OK) return rc;
      rc = CheckVersion(device, &max_ifaces);
      if (rc != PTL_OK) return rc;
    } else if (launcher_jid != PTL_JID_ANY) {
      // The kernel's word, not the environment's: PTL_MY_JID is only a hint.
      state_.launcher_jid = launcher_jid;
    }

    device_ = std::make_shared<const Device>(std::move(device));
    owned_ = true;
    Invalidate();
    eq_spin_ns_.store(EqSpinNsFromEnv(), std::memory_order_relaxed);
    max_interfaces_ = max_ifaces;
    *max_interfaces = max_interfaces_;
    return PTL_OK;
  });
}

void Library::Fini() {
  std::lock_guard lock(mutex_);
  // Finish every NI explicitly first: a thread blocked in PtlEQWait holds
  // the descriptor open, so closing alone would leave its NI alive until
  // the wait ended; PtlNIFini wakes it (PTL_EQ_INVALID). The child of a
  // fork does not own the parent's NIs and only drops its descriptor.
  if (Live()) {
    for (const auto& [handle, ni] : state_.nis) {
      ptl_ioc_ni_fini args{};
      args.ni_handle = handle;
      device_->Call(PTL_IOC_NI_FINI, &args);
    }
  }
  // Closing the file releases whatever is left. The EQ mappings go when
  // their last user lets go of them.
  device_.reset();
  state_ = State();
  owned_ = false;
  Invalidate();
  if (t_lookups) *t_lookups = {};  // this thread lets go of the descriptor now
}

Library::DeviceRef Library::device() const {
  if (LookupCache* c = Lookups(generation()); c && c->device) return c->device;
  std::lock_guard lock(mutex_);
  if (!Live()) return nullptr;
  // Filled at the generation read under the lock: a change after the one
  // read above leaves the cache stale and the next call asks again.
  if (LookupCache* c = Lookups(generation())) c->device = device_;
  return device_;
}

std::shared_ptr<Eq> Library::FindEq(ptl_handle_eq_t handle) {
  std::shared_ptr<Eq> eq;
  int bad;
  return FindEqs(&handle, 1, &eq, &bad) == PTL_OK ? eq : nullptr;
}

int Library::FindEqs(const ptl_handle_eq_t* handles, int n, std::shared_ptr<Eq>* eqs, int* bad) {
  if (n == 1) {
    LookupCache* c = Lookups(generation());
    if (c && c->eq && c->eq_handle == handles[0]) {
      eqs[0] = c->eq;
      return PTL_OK;
    }
  }
  std::lock_guard lock(mutex_);
  if (!Live()) return PTL_NO_INIT;
  if (n <= 0) return PTL_EQ_INVALID;
  for (int i = 0; i < n; ++i) {
    auto it = state_.eqs.find(handles[i]);
    if (it == state_.eqs.end() || (i > 0 && it->second->ni != eqs[0]->ni)) {
      *bad = i;
      return PTL_EQ_INVALID;
    }
    eqs[i] = it->second;
  }
  if (n == 1) {
    if (LookupCache* c = Lookups(generation())) {
      c->eq_handle = handles[0];
      c->eq = eqs[0];
    }
  }
  return PTL_OK;
}

}  // namespace ptl
