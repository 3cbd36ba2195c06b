// SPDX-License-Identifier: BSD-3-Clause
// Match entries: PtlMEAttach, PtlMEAttachAny, PtlMEInsert, PtlMEUnlink, and
// the Linux extension PtlMEMDPost.
#include <p3nal_linux.h>
#include <portals3.h>

#include "library.h"
#include "md.h"

using ptl::Library;

namespace {

int Attach(uint32_t flags, ptl_handle_any_t handle, ptl_pt_index_t* pt_index,
           ptl_process_id_t match_id, ptl_match_bits_t match_bits, ptl_match_bits_t ignore_bits,
           ptl_unlink_t unlink, ptl_ins_pos_t position, ptl_handle_me_t* me_handle) {
  auto dev = Library::Instance().device();
  if (!dev) return PTL_NO_INIT;
  ptl_ioc_me_attach args{};
  args.flags = flags;
  args.handle = handle;
  args.pt_index = (flags & PTL_ME_ATTACH_ANY) ? 0 : *pt_index;
  args.match_nid = match_id.nid;
  args.match_pid = match_id.pid;
  args.match_bits = match_bits;
  args.ignore_bits = ignore_bits;
  args.unlink = static_cast<uint32_t>(unlink);
  args.position = static_cast<uint32_t>(position);
  int rc = dev->Call(PTL_IOC_ME_ATTACH, &args);
  if (rc != PTL_OK) return rc;
  if (flags & PTL_ME_ATTACH_ANY) *pt_index = args.pt_index;
  *me_handle = args.me_handle;
  return PTL_OK;
}

}  // namespace

extern "C" {

int PtlMEAttach(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index, ptl_process_id_t match_id,
                ptl_match_bits_t match_bits, ptl_match_bits_t ignore_bits, ptl_unlink_t unlink,
                ptl_ins_pos_t position, ptl_handle_me_t* me_handle) {
  if (!me_handle) return PTL_SEGV;
  return Attach(0, ni_handle, &pt_index, match_id, match_bits, ignore_bits, unlink, position,
                me_handle);
}

int PtlMEAttachAny(ptl_handle_ni_t ni_handle, ptl_pt_index_t* pt_index, ptl_process_id_t match_id,
                   ptl_match_bits_t match_bits, ptl_match_bits_t ignore_bits, ptl_unlink_t unlink,
                   ptl_handle_me_t* me_handle) {
  if (!pt_index || !me_handle) return PTL_SEGV;
  return Attach(PTL_ME_ATTACH_ANY, ni_handle, pt_index, match_id, match_bits, ignore_bits, unlink,
                PTL_INS_AFTER, me_handle);
}

int PtlMEInsert(ptl_handle_me_t base, ptl_process_id_t match_id, ptl_match_bits_t match_bits,
                ptl_match_bits_t ignore_bits, ptl_unlink_t unlink, ptl_ins_pos_t position,
                ptl_handle_me_t* me_handle) {
  if (!me_handle) return PTL_SEGV;
  ptl_pt_index_t unused = 0;
  return Attach(PTL_ME_INSERT, base, &unused, match_id, match_bits, ignore_bits, unlink, position,
                me_handle);
}

// As PtlMDUpdate: the EQ's reader position goes with the call (EqReaderHold).
int PtlMEMDPost(ptl_handle_me_t base, ptl_process_id_t match_id, ptl_match_bits_t match_bits,
                ptl_match_bits_t ignore_bits, ptl_unlink_t me_unlink, ptl_ins_pos_t position,
                ptl_md_t md, ptl_unlink_t md_unlink, ptl_handle_eq_t eq_handle,
                ptl_handle_me_t* me_handle, ptl_handle_md_t* md_handle) {
  if (!me_handle || !md_handle) return PTL_SEGV;
  auto dev = Library::Instance().device();
  if (!dev) return PTL_NO_INIT;
  ptl_ioc_me_post args{};
  args.base = base;
  args.match_nid = match_id.nid;
  args.match_pid = match_id.pid;
  args.match_bits = match_bits;
  args.ignore_bits = ignore_bits;
  args.me_unlink = static_cast<uint32_t>(me_unlink);
  args.position = static_cast<uint32_t>(position);
  args.md_unlink = static_cast<uint32_t>(md_unlink);
  args.md = ptl::ToIoc(md);
  args.eq_handle = eq_handle;

  int rc;
  {
    ptl::EqReaderHold hold(eq_handle, &args.eq_consumer_seq);
    rc = dev->Call(PTL_IOC_ME_POST, &args);
  }
  if (rc != PTL_OK) return rc;
  *me_handle = args.me_handle;
  *md_handle = args.md_handle;
  return PTL_OK;
}

int PtlMEUnlink(ptl_handle_me_t me_handle) {
  auto dev = Library::Instance().device();
  if (!dev) return PTL_NO_INIT;
  ptl_ioc_handle args{};
  args.handle = me_handle;
  return dev->Call(PTL_IOC_ME_UNLINK, &args);
}

}  // extern "C"
