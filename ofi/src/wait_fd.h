// SPDX-License-Identifier: BSD-3-Clause
// A CQ's FI_WAIT_FD wait object: one descriptor an application can poll
// beside its own, readable when a Portals event is unread (the library's
// /dev/portals descriptor, PtlEQWaitFd) or when the provider has work of
// its own to do without any event (the peer liveness watch, liveness.cc:
// a send waiting on a dead peer sees no event, and an application asleep
// in poll() would never call us to notice). An epoll descriptor holds
// both: the Portals one and a timerfd, armed while something waits.
#ifndef PTL_OFI_WAIT_FD_H
#define PTL_OFI_WAIT_FD_H

namespace ptl::ofi {

class WaitFd {
 public:
  WaitFd() = default;
  WaitFd(const WaitFd&) = delete;
  WaitFd& operator=(const WaitFd&) = delete;
  ~WaitFd();

  // 0 or a negative libfabric error.
  int Open();
  int fd() const { return epoll_fd_; }
  // Clears the timer's expirations and arms it (every period_ms) while
  // `waiting`, disarms it otherwise.
  void Update(bool waiting, unsigned period_ms);

 private:
  int epoll_fd_ = -1;
  int timer_fd_ = -1;
  bool armed_ = false;
};

}  // namespace ptl::ofi

#endif  // PTL_OFI_WAIT_FD_H
