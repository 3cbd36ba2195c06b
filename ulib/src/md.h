// SPDX-License-Identifier: BSD-3-Clause
// ptl_md_t <-> struct ptl_ioc_md: same members, pointers carried as u64.
#pragma once

#include <linux/portals.h>
#include <portals3.h>

#include <cstdint>

namespace ptl {

inline ptl_ioc_md ToIoc(const ptl_md_t& md) {
  ptl_ioc_md out{};
  out.start = reinterpret_cast<uintptr_t>(md.start);
  out.length = md.length;
  out.threshold = md.threshold;
  out.options = md.options;
  out.max_size = md.max_size;
  out.user_ptr = reinterpret_cast<uintptr_t>(md.user_ptr);
  out.eq_handle = md.eq_handle;
  return out;
}

inline ptl_md_t FromIoc(const ptl_ioc_md& md) {
  ptl_md_t out{};
  out.start = reinterpret_cast<void*>(static_cast<uintptr_t>(md.start));
  out.length = md.length;
  out.threshold = md.threshold;
  out.max_size = md.max_size;
  out.options = md.options;
  out.user_ptr = reinterpret_cast<void*>(static_cast<uintptr_t>(md.user_ptr));
  out.eq_handle = md.eq_handle;
  return out;
}

}  // namespace ptl
