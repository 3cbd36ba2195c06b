// SPDX-License-Identifier: BSD-3-Clause
#include "library.h"

#include <p3/errno.h>
#include <unistd.h>

#include <cstdlib>

namespace ptl {

namespace {

// The device path, overridable for testing and for nodes with a different
// devtmpfs layout.
const char* DevicePath() {
  const char* path = std::getenv("PTL_DEVICE");
  return path && *path ? path : PTL_DEVICE_PATH;
}

}  // namespace

Library& Library::Instance() {
  // Never destroyed: API calls from atexit handlers must stay safe.
  static Library* library = new Library();
  return *library;
}

int Library::Init(int* max_interfaces) {
  std::lock_guard lock(mutex_);
  if (device_.valid() && owner_ == getpid()) return PTL_OK;
  if (!max_interfaces) return PTL_SEGV;

  // A child after fork() must not use (or tear down) its parent's NIs.
  if (device_.valid()) device_ = Device();

  Device device;
  int rc = Device::Open(DevicePath(), &device);
  if (rc != PTL_OK) return rc;
  ptl_ioc_version version{};
  rc = device.Call(PTL_IOC_VERSION, &version);
  if (rc != PTL_OK) return rc;
  if (version.abi_version != PTL_ABI_VERSION) return PTL_FAIL;

  device_ = std::move(device);
  owner_ = getpid();
  max_interfaces_ = static_cast<int>(version.max_interfaces);
  *max_interfaces = max_interfaces_;
  return PTL_OK;
}

void Library::Fini() {
  std::lock_guard lock(mutex_);
  // Closing the file releases every NI, ME, MD, EQ and pinned page in the
  // kernel; the child of a fork only drops its copy of the descriptor.
  device_ = Device();
  owner_ = 0;
}

const Device* Library::device() const {
  std::lock_guard lock(mutex_);
  if (!device_.valid() || owner_ != getpid()) return nullptr;
  return &device_;
}

}  // namespace ptl
