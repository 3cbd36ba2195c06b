// SPDX-License-Identifier: BSD-3-Clause
// A ptl_md_t in one expression: every MD the provider makes differs only in
// these fields (max_size is set apart where PTL_MD_MAX_SIZE is used).
#ifndef PTL_OFI_MD_H
#define PTL_OFI_MD_H

#include <portals3.h>

#include <cstdint>

namespace ptl::ofi {

inline ptl_md_t MakeMd(const void* start, ptl_size_t length, int threshold, unsigned options,
                       uintptr_t user, ptl_handle_eq_t eq) {
  ptl_md_t md{};
  md.start = const_cast<void*>(start);
  md.length = length;
  md.threshold = threshold;
  md.options = options;
  md.user_ptr = reinterpret_cast<void*>(user);
  md.eq_handle = eq;
  return md;
}

}  // namespace ptl::ofi

#endif  // PTL_OFI_MD_H
