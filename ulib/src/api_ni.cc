// SPDX-License-Identifier: BSD-3-Clause
// PtlInit, PtlFini, network interfaces and identification.
#include <portals3.h>

#include <climits>

#include "debug_trace.h"
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
  auto dev = Library::Instance().device();
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
  auto dev = Library::Instance().device();
  if (!dev) return PTL_NO_INIT;

  return ptl::Guard([&]() -> int {
    // The runtime's group for the next NI: PTL_PID_ANY means my pid-map entry.
    std::optional<ptl::Group> group;
    unsigned mask = PTL_DBG_NONE;
    if (!Library::Instance().WithState([&](ptl::State& s) {
          group = s.next_group;
          mask = s.default_debug_mask;
        }))
      return PTL_NO_INIT;
    if (pid == PTL_PID_ANY && group && group->rank < group->pidmap.size())
      pid = group->pidmap[group->rank];

    ptl_ioc_ni_init args{};
    args.iface = iface;
    args.pid = pid;
    if (desired) {
      args.flags |= PTL_NI_INIT_DESIRED;
      args.desired = ToIoc(*desired);
    }
    int rc = dev->Call(PTL_IOC_NI_INIT, &args);
    if (rc != PTL_OK) return rc;

    ptl_ni_limits_t limits = FromIoc(args.actual);
    Library::Instance().WithState([&](ptl::State& s) {
      auto [it, inserted] = s.nis.try_emplace(args.ni_handle);
      if (inserted) it->second.debug_mask = mask;
      it->second.limits = limits;
      if (group && !it->second.group) it->second.group = std::move(group);
      s.next_group.reset();
    });
    ptl::Trace(args.ni_handle, PTL_DBG_SETUP, "NI %#x up: iface %#x nid %u pid %u", args.ni_handle,
               iface, args.nid, args.out_pid);
    if (actual) *actual = limits;
    *ni_handle = args.ni_handle;
    return PTL_OK;
  });
}

int PtlNIFini(ptl_handle_ni_t ni_handle) {
  auto dev = Library::Instance().device();
  if (!dev) return PTL_NO_INIT;
  ptl::Trace(ni_handle, PTL_DBG_SHUTDOWN, "NI %#x going down", ni_handle);
  ptl_ioc_ni_fini args{};
  args.ni_handle = ni_handle;
  int rc = dev->Call(PTL_IOC_NI_FINI, &args);
  if (rc != PTL_OK) return rc;
  // The kernel released the NI's EQs; their mappings go with their last user.
  Library::Instance().WithState([&](ptl::State& s) {
    s.nis.erase(ni_handle);
    std::erase_if(s.eqs, [&](const auto& entry) { return entry.second->ni == ni_handle; });
  });
  return PTL_OK;
}

int PtlNIStatus(ptl_handle_ni_t ni_handle, ptl_sr_index_t register_index, ptl_sr_value_t* status) {
  if (!status) return PTL_SEGV;
  auto dev = Library::Instance().device();
  if (!dev) return PTL_NO_INIT;
  ptl_ioc_ni_status args{};
  args.ni_handle = ni_handle;
  args.reg = register_index;
  int rc = dev->Call(PTL_IOC_NI_STATUS, &args);
  if (rc == PTL_OK) *status = args.value;
  return rc;
}

int PtlNIDist(ptl_handle_ni_t ni_handle, ptl_process_id_t process, unsigned long* distance) {
  if (!distance) return PTL_SEGV;
  auto dev = Library::Instance().device();
  if (!dev) return PTL_NO_INIT;
  ptl_ioc_ni_dist args{};
  args.ni_handle = ni_handle;
  args.nid = process.nid;
  args.pid = process.pid;
  int rc = dev->Call(PTL_IOC_NI_DIST, &args);
  if (rc == PTL_OK)
    *distance = static_cast<unsigned long>(args.distance);
  else if (rc == PTL_PROCESS_INVALID)
    *distance = ULONG_MAX;  // as the reference does
  return rc;
}

int PtlNIHandle(ptl_handle_any_t handle, ptl_handle_ni_t* ni_handle) {
  if (!ni_handle) return PTL_SEGV;
  auto dev = Library::Instance().device();
  if (!dev) return PTL_NO_INIT;
  ptl_ioc_handle_ni args{};
  args.handle = handle;
  int rc = dev->Call(PTL_IOC_HANDLE_NI, &args);
  if (rc == PTL_OK) *ni_handle = args.ni_handle;
  return rc;
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
