// SPDX-License-Identifier: BSD-3-Clause
// Memory descriptors: PtlMDAttach, PtlMDBind, PtlMDUnlink, PtlMDUpdate.
#include <portals3.h>

#include <algorithm>
#include <mutex>

#include "library.h"
#include "md.h"

using ptl::Library;

namespace {

int Attach(uint32_t flags, ptl_handle_any_t handle, const ptl_md_t& md, ptl_unlink_t unlink_op,
           ptl_handle_md_t* md_handle) {
  if (!md_handle) return PTL_SEGV;
  auto dev = Library::Instance().device();
  if (!dev) return PTL_NO_INIT;
  ptl_ioc_md_attach args{};
  args.flags = flags;
  args.handle = handle;
  args.unlink = static_cast<uint32_t>(unlink_op);
  args.md = ptl::ToIoc(md);
  int rc = dev->Call(PTL_IOC_MD_ATTACH, &args);
  if (rc == PTL_OK) *md_handle = args.md_handle;
  return rc;
}

}  // namespace

extern "C" {

int PtlMDAttach(ptl_handle_me_t me_handle, ptl_md_t md, ptl_unlink_t unlink_op,
                ptl_handle_md_t* md_handle) {
  return Attach(0, me_handle, md, unlink_op, md_handle);
}

int PtlMDBind(ptl_handle_ni_t ni_handle, ptl_md_t md, ptl_unlink_t unlink_op,
              ptl_handle_md_t* md_handle) {
  return Attach(PTL_MD_ATTACH_BIND, ni_handle, md, unlink_op, md_handle);
}

int PtlMDUnlink(ptl_handle_md_t md_handle) {
  auto dev = Library::Instance().device();
  if (!dev) return PTL_NO_INIT;
  ptl_ioc_handle args{};
  args.handle = md_handle;
  return dev->Call(PTL_IOC_MD_UNLINK, &args);
}

// API reference 8.7 and contract 12. The kernel cannot see how far this
// process has read the EQ, so the library passes its expected sequence, and
// holds the EQ's reader lock across the call so that no thread of this
// process dequeues between the check and the update.
int PtlMDUpdate(ptl_handle_md_t md_handle, ptl_md_t* old_md, ptl_md_t* new_md,
                ptl_handle_eq_t eq_handle) {
  auto dev = Library::Instance().device();
  if (!dev) return PTL_NO_INIT;

  ptl_ioc_md_update args{};
  args.md_handle = md_handle;
  args.eq_handle = eq_handle;
  if (old_md) {
    args.flags |= PTL_MD_UPDATE_OLD;
    // Iovec MDs: the caller names an array (start) and its capacity (length).
    if (old_md->options & PTL_MD_IOVEC) {
      args.old_iov = reinterpret_cast<uintptr_t>(old_md->start);
      args.old_iov_cap = static_cast<uint32_t>(std::min<ptl_size_t>(old_md->length, UINT32_MAX));
    }
  }
  if (new_md) {
    args.flags |= PTL_MD_UPDATE_NEW;
    args.new_md = ptl::ToIoc(*new_md);
  }

  int rc;
  {
    ptl::EqReaderHold hold(eq_handle, &args.eq_consumer_seq);
    rc = dev->Call(PTL_IOC_MD_UPDATE, &args);
  }

  // Contract 12: *old_md is filled whenever the kernel read the MD, also
  // when it then refused the update (NO_UPDATE, or an invalid EQ). A new
  // region that cannot be pinned is refused before the MD is looked up.
  bool md_was_read = rc == PTL_OK || rc == PTL_MD_NO_UPDATE || rc == PTL_EQ_INVALID;
  if (old_md && md_was_read) {
    ptl_md_t old = ptl::FromIoc(args.old_md);
    if ((old_md->options & PTL_MD_IOVEC) && (old.options & PTL_MD_IOVEC)) {
      // The entries went to the caller's array; report how many it holds.
      old.start = old_md->start;
      old.length = std::min<ptl_size_t>(args.old_nsegs, args.old_iov_cap);
    }
    *old_md = old;
  }
  return rc;
}

}  // extern "C"
