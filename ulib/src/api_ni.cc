// SPDX-License-Identifier: BSD-3-Clause
// PtlInit, PtlFini, network interfaces and identification.
#include <portals3.h>

#include "library.h"

using ptl::Library;

namespace {

ptl_ioc_limits ToIoc(const ptl_ni_limits_t& l) {
  return {l.max_mes,      l.max_mds,       l.max_eqs,     l.max_ac_index,
          l.max_pt_index, l.max_md_iovecs, l.max_me_list, l.max_getput_md};
}

ptl_ni_limits_t FromIoc(const ptl_ioc_limits& l) {
  return {l.max_mes,      l.max_mds,       l.max_eqs,     l.max_ac_index,
          l.max_pt_index, l.max_md_iovecs, l.max_me_list, l.max_getput_md};
}

// Identity of an NI; returns a Portals code.
int Identity(ptl_handle_ni_t ni_handle, ptl_ioc_ni_identity* id) {
  const ptl::Device* dev = Library::Instance().device();
  if (!dev) return PTL_NO_INIT;
  *id = {};
  id->ni_handle = ni_handle;
  return dev->Call(PTL_IOC_NI_IDENTITY, id);
}

}  // namespace

extern "C" {

int PtlInit(int* max_interfaces) { return Library::Instance().Init(max_interfaces); }

void PtlFini(void) { Library::Instance().Fini(); }

int PtlNIInit(ptl_interface_t iface, ptl_pid_t pid, ptl_ni_limits_t* desired,
              ptl_ni_limits_t* actual, ptl_handle_ni_t* ni_handle) {
  if (!ni_handle) return PTL_SEGV;
  const ptl::Device* dev = Library::Instance().device();
  if (!dev) return PTL_NO_INIT;

  ptl_ioc_ni_init args{};
  args.iface = iface;
  args.pid = pid;
  if (desired) {
    args.flags |= PTL_NI_INIT_DESIRED;
    args.desired = ToIoc(*desired);
  }
  int rc = dev->Call(PTL_IOC_NI_INIT, &args);
  if (rc != PTL_OK) return rc;
  if (actual) *actual = FromIoc(args.actual);
  *ni_handle = args.ni_handle;
  return PTL_OK;
}

int PtlNIFini(ptl_handle_ni_t ni_handle) {
  const ptl::Device* dev = Library::Instance().device();
  if (!dev) return PTL_NO_INIT;
  ptl_ioc_ni_fini args{};
  args.ni_handle = ni_handle;
  return dev->Call(PTL_IOC_NI_FINI, &args);
}

int PtlGetId(ptl_handle_ni_t ni_handle, ptl_process_id_t* id) {
  if (!id) return PTL_SEGV;
  ptl_ioc_ni_identity args;
  int rc = Identity(ni_handle, &args);
  if (rc == PTL_OK) *id = {args.nid, args.pid};
  return rc;
}

int PtlGetUid(ptl_handle_ni_t ni_handle, ptl_uid_t* uid) {
  if (!uid) return PTL_SEGV;
  ptl_ioc_ni_identity args;
  int rc = Identity(ni_handle, &args);
  if (rc == PTL_OK) *uid = args.uid;
  return rc;
}

int PtlGetJid(ptl_handle_ni_t ni_handle, ptl_jid_t* jid) {
  if (!jid) return PTL_SEGV;
  ptl_ioc_ni_identity args;
  int rc = Identity(ni_handle, &args);
  if (rc == PTL_OK) *jid = args.jid;
  return rc;
}

}  // extern "C"
