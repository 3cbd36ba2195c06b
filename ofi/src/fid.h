// SPDX-License-Identifier: BSD-3-Clause
// Glue between libfabric's C objects and ours. libfabric hands back the
// struct fid_xxx it got from us; each of our objects embeds one in a
// Handle<> whose first member it is, so the way back is a cast of a
// pointer-interconvertible first member, not offsetof arithmetic on a
// non-standard-layout class.
//
// Unsupported calls must still be callable (libfabric's inline wrappers
// call through the tables without checking), so every table entry we do
// not implement is NoSys: -FI_ENOSYS.
#ifndef PTL_OFI_FID_H
#define PTL_OFI_FID_H

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include <type_traits>

namespace ptl::ofi {

template <class Fid, class Owner>
struct Handle {
  Fid fid{};
  Owner* owner = nullptr;
};

template <class Owner, class Fid>
Owner* OwnerOf(Fid* fid) {
  using H = Handle<std::remove_const_t<Fid>, Owner>;
  static_assert(std::is_standard_layout_v<H>);
  return reinterpret_cast<H*>(const_cast<std::remove_const_t<Fid>*>(fid))->owner;
}

// Converts to any function pointer returning R: [](auto...) -> R.
template <class R>
inline constexpr auto NoSys = [](auto...) -> R { return -FI_ENOSYS; };

// The fi_ops of an object: close, and bind/control where it has them.
using CloseFn = int (*)(fid*);
using BindFn = int (*)(fid*, fid*, uint64_t);
using ControlFn = int (*)(fid*, int, void*);
constexpr fi_ops FidOps(CloseFn close, BindFn bind = NoSys<int>, ControlFn control = NoSys<int>) {
  return fi_ops{
      .size = sizeof(fi_ops),
      .close = close,
      .bind = bind,
      .control = control,
      .ops_open = NoSys<int>,
      .tostr = NoSys<int>,
      .ops_set = NoSys<int>,
  };
}

}  // namespace ptl::ofi

#endif  // PTL_OFI_FID_H
