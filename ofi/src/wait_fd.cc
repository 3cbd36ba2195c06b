// SPDX-License-Identifier: BSD-3-Clause
#include "wait_fd.h"

#include <p3nal_linux.h>
#include <portals3.h>
#include <rdma/fi_errno.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <initializer_list>

namespace ptl::ofi {

WaitFd::~WaitFd() {
  if (timer_fd_ >= 0) close(timer_fd_);
  if (epoll_fd_ >= 0) close(epoll_fd_);
}

int WaitFd::Open() {
  int portals_fd = -1;
  if (PtlEQWaitFd(&portals_fd) != PTL_OK) return -FI_EOTHER;
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  timer_fd_ = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (epoll_fd_ < 0 || timer_fd_ < 0) return -errno;
  epoll_event ev{};
  ev.events = EPOLLIN;
  for (int fd : {portals_fd, timer_fd_}) {
    ev.data.fd = fd;
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) return -errno;
  }
  return 0;
}

void WaitFd::Update(bool waiting, unsigned period_ms) {
  if (timer_fd_ < 0) return;
  uint64_t expirations;
  while (read(timer_fd_, &expirations, sizeof(expirations)) > 0) {
  }
  if (waiting == armed_) return;
  itimerspec spec{};
  if (waiting) {
    spec.it_value.tv_sec = period_ms / 1000;
    spec.it_value.tv_nsec = static_cast<long>(period_ms % 1000) * 1000000;
    spec.it_interval = spec.it_value;
  }
  if (timerfd_settime(timer_fd_, 0, &spec, nullptr) == 0) armed_ = waiting;
}

}  // namespace ptl::ofi
