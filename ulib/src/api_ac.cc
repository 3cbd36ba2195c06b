// SPDX-License-Identifier: BSD-3-Clause
// Access control: PtlACEntry.
#include <portals3.h>

#include "library.h"

extern "C" int PtlACEntry(ptl_handle_ni_t ni_handle, ptl_ac_index_t ac_index,
                          ptl_process_id_t match_id, ptl_uid_t user_id, ptl_jid_t job_id,
                          ptl_pt_index_t pt_index) {
  auto dev = ptl::Library::Instance().device();
  if (!dev) return PTL_NO_INIT;
  ptl_ioc_ac_entry args{};
  args.ni_handle = ni_handle;
  args.ac_index = ac_index;
  args.match_nid = match_id.nid;
  args.match_pid = match_id.pid;
  args.uid = user_id;
  args.jid = job_id;
  args.pt_index = pt_index;
  return dev->Call(PTL_IOC_AC_ENTRY, &args);
}
