// SPDX-License-Identifier: BSD-3-Clause
// The /dev/portals file descriptor and the one way to issue an ioctl on it.
#pragma once

#include <linux/portals.h>
#include <p3/errno.h>

#include <cerrno>
#include <cstdint>
#include <type_traits>

namespace ptl {

// Owns one open of /dev/portals.
class Device {
 public:
  Device() = default;
  explicit Device(int fd) : fd_(fd) {}
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  Device(Device&& other) noexcept : fd_(other.release()) {}
  Device& operator=(Device&& other) noexcept;
  ~Device();

  // Opens the device; returns a Portals code (PTL_FAIL if the module is absent).
  static int Open(const char* path, Device* out);

  bool valid() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

  // Issues command `cmd` with argument struct `args`, whose size field is
  // filled here. Returns the Portals code, with ABI-level errno values mapped
  // to the closest Portals code (EFAULT -> PTL_SEGV, ENOMEM -> PTL_NO_SPACE).
  template <typename Args>
  int Call(unsigned long cmd, Args* args) const {
    static_assert(std::is_standard_layout_v<Args>);
    args->size = sizeof(Args);
    return IoctlToPortals(cmd, args);
  }

  // Like Call, but once, without EINTR retry or errno mapping: returns the
  // Portals code (>= 0) or -errno. For callers that must tell errno values
  // apart (EINTR in waits, EPERM/EBUSY for PTL_IOC_SET_JID).
  template <typename Args>
  int CallRaw(unsigned long cmd, Args* args) const {
    static_assert(std::is_standard_layout_v<Args>);
    args->size = sizeof(Args);
    return RawIoctl(cmd, args);
  }

  // Maps a negative errno from CallRaw to the closest Portals code.
  static int ErrnoToPortals(int neg_errno);

 private:
  int IoctlToPortals(unsigned long cmd, void* args) const;
  int RawIoctl(unsigned long cmd, void* args) const;

  int fd_ = -1;
};

}  // namespace ptl
