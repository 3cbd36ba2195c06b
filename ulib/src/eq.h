// SPDX-License-Identifier: BSD-3-Clause
// Event queues as the library sees them: a read-only mapping of the ring the
// kernel writes, a read-write mapping of the consumer page, and the sequence
// this process expects next. Dequeuing is pure user space (<p3api/eq_ring.h>).
#pragma once

#include <linux/portals.h>
#include <p3api/eq_ring.h>
#include <portals3.h>
#include <sys/mman.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>

#include "device.h"

namespace ptl {

// Owns one mmap()ed range; unmaps it on destruction.
class Mapping {
 public:
  Mapping() = default;
  Mapping(void* addr, size_t len) : addr_(addr), len_(len) {}
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  Mapping(Mapping&& other) noexcept
      : addr_(std::exchange(other.addr_, nullptr)), len_(std::exchange(other.len_, 0)) {}
  Mapping& operator=(Mapping&& other) noexcept {
    if (this != &other) {
      Reset();
      addr_ = std::exchange(other.addr_, nullptr);
      len_ = std::exchange(other.len_, 0);
    }
    return *this;
  }
  ~Mapping() { Reset(); }

  // Maps `len` bytes of `fd` at `offset`; an invalid Mapping on failure.
  static Mapping Map(int fd, uint64_t offset, uint64_t len, int prot) {
    void* addr = mmap(nullptr, len, prot, MAP_SHARED, fd, static_cast<off_t>(offset));
    if (addr == MAP_FAILED) return {};
    return {addr, static_cast<size_t>(len)};
  }

  bool valid() const { return addr_ != nullptr; }
  void* get() const { return addr_; }
  size_t size() const { return len_; }

 private:
  void Reset() {
    if (addr_) munmap(addr_, len_);
    addr_ = nullptr;
    len_ = 0;
  }

  void* addr_ = nullptr;
  size_t len_ = 0;
};

// The reader of one ring. Not thread-safe by itself: Eq serialises it.
class EqReader {
 public:
  EqReader() = default;
  EqReader(const ptl_event_t* ring, uint32_t nslots, ptl_eq_ctl* ctl)
      : ring_(ring), ctl_(ctl), nslots_(nslots), expected_(ptl_eq_ring_first_seq(nslots)) {}

  // PTL_OK or PTL_EQ_DROPPED with *out filled, or PTL_EQ_EMPTY. After each
  // dequeue the next expected sequence is published in the control page so
  // that the kernel's poll() knows what this process has consumed.
  int Get(ptl_event_t* out) {
    int rc = ptl_eq_ring_get(ring_, nslots_, &expected_, out);
    if (rc != PTL_EQ_EMPTY && ctl_)
      __atomic_store_n(&ctl_->consumer_seq, expected_, __ATOMIC_RELEASE);
    return rc;
  }

  // Events the writer has published past `expected` (an estimate while the
  // writer is active; nslots if it lapped the reader). For debug dumps.
  uint32_t Pending() const {
    uint32_t n = 0;
    while (n < nslots_ &&
           ptl_eq_ring_load_seq(&ring_[(expected_ + n) & (nslots_ - 1)]) == expected_ + n)
      ++n;
    return n;
  }

  ptl_seq_t expected() const { return expected_; }
  uint32_t nslots() const { return nslots_; }

 private:
  const ptl_event_t* ring_ = nullptr;
  ptl_eq_ctl* ctl_ = nullptr;
  uint32_t nslots_ = 0;
  ptl_seq_t expected_ = 0;
};

// One EQ of this process. Shared (std::shared_ptr) between the handle table
// and the calls using it, so PtlEQFree never unmaps a ring under a reader.
struct Eq {
  std::shared_ptr<const Device> device;  // the descriptor PTL_IOC_EQ_WAIT goes to
  ptl_handle_eq_t handle = PTL_EQ_NONE;
  ptl_handle_ni_t ni = PTL_INVALID_HANDLE;
  ptl_eq_handler_t handler = PTL_EQ_HANDLER_NONE;
  Mapping ring;
  Mapping ctl;
  std::atomic<unsigned> debug_mask{0};  // the NI's, for PTL_DBG_EVENT / _EQ
  std::mutex mutex;                     // serialises dequeues (several threads may read one EQ)
  EqReader reader;                      // guarded by mutex
};

}  // namespace ptl
