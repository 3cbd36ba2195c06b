// SPDX-License-Identifier: BSD-3-Clause
// The domain: one Portals interface of this process, its NI and pid.
// Memory needs no registration (MDs are pinned by the kernel when a send
// or receive attaches them), so fi_mr_reg gives a descriptor that names
// nothing.
#include <p3nal_linux.h>

#include "endpoint.h"
#include "objects.h"

namespace ptl::ofi {

int Domain::TakeEndpointIndex() {
  std::lock_guard lock(mutex);
  for (unsigned i = 0; i < kMaxEndpoints; ++i) {
    if (!endpoints_used.test(i)) {
      endpoints_used.set(i);
      return static_cast<int>(i);
    }
  }
  return -1;
}

void Domain::PutEndpointIndex(int index) {
  std::lock_guard lock(mutex);
  endpoints_used.reset(static_cast<size_t>(index));
}

void Domain::Release(ptl_handle_md_t md, std::unique_ptr<char[]> mem) {
  if (md == PTL_INVALID_HANDLE || PtlMDUnlink(md) != PTL_MD_IN_USE) return;
  std::lock_guard lock(mutex);
  orphans.push_back(std::move(mem));
}

namespace {

int DomainClose(fid* f) {
  Domain* d = OwnerOf<Domain>(reinterpret_cast<fid_domain*>(f));
  if (d->refs.load()) return -FI_EBUSY;
  PtlNIFini(d->ni);  // ends every message: the orphans are free to go
  fi_freeinfo(d->info);
  d->fabric->refs--;
  delete d;
  return 0;
}

struct Mr {
  Handle<fid_mr, Mr> h;
};

int MrClose(fid* f) {
  delete OwnerOf<Mr>(reinterpret_cast<fid_mr*>(f));
  return 0;
}

fi_ops mr_fid_ops = FidOps(MrClose);

int MrRegAttr(fid* f, const fi_mr_attr* attr, uint64_t, fid_mr** out) {
  if (f->fclass != FI_CLASS_DOMAIN || !attr) return -FI_EINVAL;
  if (attr->access & (FI_REMOTE_READ | FI_REMOTE_WRITE)) return -FI_ENOSYS;  // no FI_RMA
  auto* mr = new (std::nothrow) Mr;
  if (!mr) return -FI_ENOMEM;
  mr->h.owner = mr;
  mr->h.fid.fid.fclass = FI_CLASS_MR;
  mr->h.fid.fid.context = attr->context;
  mr->h.fid.fid.ops = &mr_fid_ops;
  mr->h.fid.mem_desc = nullptr;
  mr->h.fid.key = 0;
  *out = &mr->h.fid;
  return 0;
}

int MrReg(fid* f, const void* buf, size_t len, uint64_t access, uint64_t offset,
          uint64_t requested_key, uint64_t flags, fid_mr** out, void* context) {
  iovec iov{const_cast<void*>(buf), len};
  fi_mr_attr attr{};
  attr.mr_iov = &iov;
  attr.iov_count = 1;
  attr.access = access;
  attr.offset = offset;
  attr.requested_key = requested_key;
  attr.context = context;
  return MrRegAttr(f, &attr, flags, out);
}

int MrRegv(fid* f, const iovec* iov, size_t count, uint64_t access, uint64_t offset,
           uint64_t requested_key, uint64_t flags, fid_mr** out, void* context) {
  fi_mr_attr attr{};
  attr.mr_iov = iov;
  attr.iov_count = count;
  attr.access = access;
  attr.offset = offset;
  attr.requested_key = requested_key;
  attr.context = context;
  return MrRegAttr(f, &attr, flags, out);
}

fi_ops_mr mr_ops = {
    .size = sizeof(fi_ops_mr),
    .reg = MrReg,
    .regv = MrRegv,
    .regattr = MrRegAttr,
};

fi_ops domain_fid_ops = FidOps(DomainClose);

fi_ops_domain domain_ops = {
    .size = sizeof(fi_ops_domain),
    .av_open = OpenAv,
    .cq_open = OpenCq,
    .endpoint = OpenEndpoint,
    .scalable_ep = NoSys<int>,
    .cntr_open = OpenCntr,
    .poll_open = NoSys<int>,
    .stx_ctx = NoSys<int>,
    .srx_ctx = NoSys<int>,
    .query_atomic = NoSys<int>,
    .query_collective = NoSys<int>,
    .endpoint2 = [](fid_domain* d, fi_info* info, fid_ep** ep, uint64_t flags, void* context)
        -> int { return flags ? -FI_EINVAL : OpenEndpoint(d, info, ep, context); },
};

}  // namespace

int OpenDomain(fid_fabric* f, fi_info* info, fid_domain** out, void* context) {
  Fabric* fabric = OwnerOf<Fabric>(f);
  const unsigned iface = ProviderLimits().iface;
  if (!info || !info->domain_attr || !info->domain_attr->name ||
      DomainName(iface) != info->domain_attr->name)
    return -FI_EINVAL;
  auto d = std::make_unique<Domain>();
  d->info = fi_dupinfo(info);
  if (!d->info) return -FI_ENOMEM;
  d->iface = iface;
  int rc = PtlNIInit(PTL_IFACE_LINUX0 + iface, PTL_PID_ANY, nullptr, nullptr, &d->ni);
  if (rc != PTL_OK) {
    FI_WARN(Provider(), FI_LOG_DOMAIN, "PtlNIInit(interface %u): %s\n", iface, PtlErrorStr(rc));
    fi_freeinfo(d->info);
    return FromPtl(rc);
  }
  rc = PtlGetId(d->ni, &d->id);
  if (rc != PTL_OK) {
    PtlNIFini(d->ni);
    fi_freeinfo(d->info);
    return FromPtl(rc);
  }
  d->fabric = fabric;
  fabric->refs++;
  d->h.owner = d.get();
  d->h.fid.fid.fclass = FI_CLASS_DOMAIN;
  d->h.fid.fid.context = context;
  d->h.fid.fid.ops = &domain_fid_ops;
  d->h.fid.ops = &domain_ops;
  d->h.fid.mr = &mr_ops;
  *out = &d.release()->h.fid;
  return 0;
}

}  // namespace ptl::ofi
