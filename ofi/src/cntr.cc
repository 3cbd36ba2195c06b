// SPDX-License-Identifier: BSD-3-Clause
// Completion counters: an endpoint bound to one with FI_SEND or FI_RECV
// counts each completed operation (whether or not it writes a CQ entry),
// failed ones apart. Reading lets the endpoints turn events into
// completions first, as a CQ read does.
#include <chrono>

#include "endpoint.h"
#include "objects.h"

namespace ptl::ofi {

void Cntr::Progress() {
  for (Endpoint* ep : EndpointSnapshot(mutex, endpoints)) ep->Progress();
}

namespace {

Cntr* CntrOf(fid_cntr* f) { return OwnerOf<Cntr>(f); }

uint64_t CntrRead(fid_cntr* f) {
  Cntr* c = CntrOf(f);
  c->Progress();
  return c->value;
}

uint64_t CntrReadErr(fid_cntr* f) {
  Cntr* c = CntrOf(f);
  c->Progress();
  return c->errors;
}

// Until the count reaches `threshold`, an error is counted, or `timeout`
// ms (-1: for ever) have passed.
int CntrWait(fid_cntr* f, uint64_t threshold, int timeout) {
  Cntr* c = CntrOf(f);
  const uint64_t errors = c->errors;
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    c->Progress();
    if (c->value >= threshold) return 0;
    if (c->errors != errors) return -FI_EAVAIL;
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now() - start)
                            .count();
    if (timeout >= 0 && waited >= timeout) return -FI_ETIMEDOUT;
    std::vector<Endpoint*> eps;
    {
      std::lock_guard lock(c->mutex);
      eps = c->endpoints;
    }
    const int slice = timeout < 0 ? 20 : static_cast<int>(std::min<long>(20, timeout - waited));
    WaitForEvent(std::move(eps), slice);
  }
}

int CntrClose(fid* f) {
  Cntr* c = CntrOf(reinterpret_cast<fid_cntr*>(f));
  if (c->refs.load()) return -FI_EBUSY;
  c->domain->refs--;
  delete c;
  return 0;
}

fi_ops cntr_fid_ops = FidOps(CntrClose);

fi_ops_cntr cntr_ops = {
    .size = sizeof(fi_ops_cntr),
    .read = CntrRead,
    .readerr = CntrReadErr,
    .add = [](fid_cntr* f, uint64_t v) -> int {
      CntrOf(f)->value += v;
      return 0;
    },
    .set = [](fid_cntr* f, uint64_t v) -> int {
      CntrOf(f)->value = v;
      return 0;
    },
    .wait = CntrWait,
    .adderr = [](fid_cntr* f, uint64_t v) -> int {
      CntrOf(f)->errors += v;
      return 0;
    },
    .seterr = [](fid_cntr* f, uint64_t v) -> int {
      CntrOf(f)->errors = v;
      return 0;
    },
};

}  // namespace

int OpenCntr(fid_domain* fd, fi_cntr_attr* attr, fid_cntr** out, void* context) {
  Domain* d = OwnerOf<Domain>(fd);
  if (attr) {
    if (attr->events != FI_CNTR_EVENTS_COMP) return -FI_ENOSYS;
    if (attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC) return -FI_ENOSYS;
    if (attr->flags) return -FI_EINVAL;
  }
  auto* c = new (std::nothrow) Cntr;
  if (!c) return -FI_ENOMEM;
  c->domain = d;
  d->refs++;
  c->h.owner = c;
  c->h.fid.fid.fclass = FI_CLASS_CNTR;
  c->h.fid.fid.context = context;
  c->h.fid.fid.ops = &cntr_fid_ops;
  c->h.fid.ops = &cntr_ops;
  *out = &c->h.fid;
  return 0;
}

}  // namespace ptl::ofi
