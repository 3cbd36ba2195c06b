// SPDX-License-Identifier: BSD-3-Clause
// The fabric object (all Portals interfaces of this node) and the libfabric
// EQ, which this provider never writes to itself.
#include <rdma/fi_endpoint.h>

#include <cstring>

#include "objects.h"

namespace ptl::ofi {

int FromPtl(int rc) {
  switch (rc) {
    case PTL_OK:
      return 0;
    case PTL_NO_SPACE:
      return -FI_ENOMEM;
    case PTL_SEGV:
    case PTL_MD_ILLEGAL:
      return -FI_EINVAL;
    case PTL_NO_INIT:
    case PTL_IFACE_INVALID:
      return -FI_ENODEV;
    case PTL_PID_INVALID:
      return -FI_EADDRINUSE;
    case PTL_MD_IN_USE:
      return -FI_EBUSY;
    default:
      return -FI_EIO;
  }
}

namespace {

int FabricClose(fid* f) {
  Fabric* fabric = OwnerOf<Fabric>(reinterpret_cast<fid_fabric*>(f));
  if (fabric->refs.load()) return -FI_EBUSY;
  delete fabric;
  return 0;
}

// fi_trywait(3): only CQs opened with FI_WAIT_FD have a wait object.
int TryWait(fid_fabric*, fid** fids, int count) {
  if (count < 0 || (count && !fids)) return -FI_EINVAL;
  for (int i = 0; i < count; ++i) {
    if (!fids[i] || fids[i]->fclass != FI_CLASS_CQ) return -FI_EINVAL;
    if (const int rc = CqTryWait(OwnerOf<Cq>(reinterpret_cast<fid_cq*>(fids[i]))); rc != 0)
      return rc;
  }
  return 0;
}

fi_ops fabric_fid_ops = FidOps(FabricClose);

fi_ops_fabric fabric_ops = {
    .size = sizeof(fi_ops_fabric),
    .domain = OpenDomain,
    .passive_ep = NoSys<int>,
    .eq_open = OpenEq,
    .wait_open = NoSys<int>,
    .trywait = TryWait,
    .domain2 = [](fid_fabric* f, fi_info* info, fid_domain** d, uint64_t flags, void* context)
        -> int { return flags ? -FI_EINVAL : OpenDomain(f, info, d, context); },
};

}  // namespace

int OpenFabric(fi_fabric_attr* attr, fid_fabric** out, void* context) {
  if (attr && attr->name && std::strcmp(attr->name, kFabricName) != 0) return -FI_ENODATA;
  int max_ifaces = 0;
  int rc = PtlInit(&max_ifaces);
  if (rc != PTL_OK) {
    FI_WARN(Provider(), FI_LOG_FABRIC, "PtlInit: %s (is ptl.ko loaded?)\n", PtlErrorStr(rc));
    return FromPtl(rc);
  }
  auto* fabric = new (std::nothrow) Fabric;
  if (!fabric) return -FI_ENOMEM;
  fabric->h.owner = fabric;
  fabric->h.fid.fid.fclass = FI_CLASS_FABRIC;
  fabric->h.fid.fid.context = context;
  fabric->h.fid.fid.ops = &fabric_fid_ops;
  fabric->h.fid.ops = &fabric_ops;
  fabric->h.fid.api_version = kApiVersion;
  *out = &fabric->h.fid;
  return 0;
}

namespace {

int EqClose(fid* f) {
  delete OwnerOf<Eq>(reinterpret_cast<fid_eq*>(f));
  return 0;
}

ssize_t EqRead(fid_eq* f, uint32_t* event, void* buf, size_t len, uint64_t flags) {
  Eq* eq = OwnerOf<Eq>(f);
  std::lock_guard lock(eq->mutex);
  if (eq->entries.empty()) return -FI_EAGAIN;
  Eq::Entry& e = eq->entries.front();
  if (len < e.data.size()) return -FI_ETOOSMALL;
  *event = e.event;
  std::memcpy(buf, e.data.data(), e.data.size());
  const auto n = static_cast<ssize_t>(e.data.size());
  if (!(flags & FI_PEEK)) eq->entries.pop_front();
  return n;
}

ssize_t EqWrite(fid_eq* f, uint32_t event, const void* buf, size_t len, uint64_t) {
  Eq* eq = OwnerOf<Eq>(f);
  std::lock_guard lock(eq->mutex);
  const auto* p = static_cast<const uint8_t*>(buf);
  eq->entries.push_back({event, std::vector<uint8_t>(p, p + len)});
  return static_cast<ssize_t>(len);
}

fi_ops eq_fid_ops = FidOps(EqClose);

fi_ops_eq eq_ops = {
    .size = sizeof(fi_ops_eq),
    .read = EqRead,
    .readerr = [](fid_eq*, fi_eq_err_entry*, uint64_t) -> ssize_t { return -FI_EAGAIN; },
    .write = EqWrite,
    .sread = [](fid_eq* f, uint32_t* event, void* buf, size_t len, int, uint64_t flags) -> ssize_t {
      return EqRead(f, event, buf, len, flags);
    },
    .strerror = [](fid_eq*, int, const void*, char* buf, size_t len) -> const char* {
      if (buf && len) std::snprintf(buf, len, "no provider error");
      return "no provider error";
    },
};

}  // namespace

int OpenEq(fid_fabric*, fi_eq_attr* attr, fid_eq** out, void* context) {
  if (attr && attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC) return -FI_ENOSYS;
  auto* eq = new (std::nothrow) Eq;
  if (!eq) return -FI_ENOMEM;
  eq->h.owner = eq;
  eq->h.fid.fid.fclass = FI_CLASS_EQ;
  eq->h.fid.fid.context = context;
  eq->h.fid.fid.ops = &eq_fid_ops;
  eq->h.fid.ops = &eq_ops;
  *out = &eq->h.fid;
  return 0;
}

}  // namespace ptl::ofi
