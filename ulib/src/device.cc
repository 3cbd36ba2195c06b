// SPDX-License-Identifier: BSD-3-Clause
#include "device.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

namespace ptl {

Device& Device::operator=(Device&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = other.release();
  }
  return *this;
}

Device::~Device() {
  if (fd_ >= 0) close(fd_);
}

int Device::Open(const char* path, Device* out) {
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) return errno == ENOMEM ? PTL_NO_SPACE : PTL_FAIL;
  *out = Device(fd);
  return PTL_OK;
}

int Device::RawIoctl(unsigned long cmd, void* args) const {
  int rc = ioctl(fd_, cmd, args);
  if (rc < 0) return -errno;
  return rc < PTL_MAX_ERRNO ? rc : PTL_UNKNOWN_ERROR;
}

int Device::ErrnoToPortals(int neg_errno) {
  switch (-neg_errno) {
    case EFAULT:
      return PTL_SEGV;
    case ENOMEM:
      return PTL_NO_SPACE;
    default:
      return PTL_FAIL;
  }
}

int Device::IoctlToPortals(unsigned long cmd, void* args) const {
  int rc;
  do {
    rc = RawIoctl(cmd, args);
  } while (rc == -EINTR);
  return rc >= 0 ? rc : ErrnoToPortals(rc);
}

}  // namespace ptl
