// SPDX-License-Identifier: BSD-3-Clause
// Process-wide library state: the device opened by PtlInit.
#pragma once

#include <sys/types.h>

#include <mutex>

#include "device.h"

namespace ptl {

class Library {
 public:
  static Library& Instance();

  int Init(int* max_interfaces);
  void Fini();

  // The device of an initialised library, or nullptr (PTL_NO_INIT). State
  // belongs to the process that called PtlInit: after fork() the child sees
  // an uninitialised library until it calls PtlInit itself.
  const Device* device() const;

 private:
  Library() = default;

  mutable std::mutex mutex_;
  Device device_;
  pid_t owner_ = 0;
  int max_interfaces_ = 0;
};

}  // namespace ptl
