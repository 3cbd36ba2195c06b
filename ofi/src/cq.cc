// SPDX-License-Identifier: BSD-3-Clause
// Completion queues. Reading one first lets every endpoint bound to it turn
// its pending Portals events into completions; a blocking read (fi_cq_sread)
// sleeps in the kernel on the endpoints' event queues (PtlEQPoll), woken by
// the next event, which it then handles itself.
#include <algorithm>
#include <cstring>

#include "endpoint.h"
#include "objects.h"

namespace ptl::ofi {

void Cq::Push(const Completion& c) {
  std::lock_guard lock(mutex);
  (c.err ? errors : done).push_back(c);
}

void Cq::Progress() {
  const EndpointSnapshot eps(mutex, endpoints);
  for (Endpoint* ep : eps) ep->Progress();
  if (wait_fd) {
    const bool waits =
        std::any_of(eps.begin(), eps.end(), [](Endpoint* ep) { return ep->Waits(); });
    wait_fd->Update(waits, WatchPeriodMs(ProviderLimits()));
  }
}

// fi_trywait(3) on CQs: safe to sleep on their wait descriptors once
// progress has made every completion there is.
int CqTryWait(Cq* cq) {
  if (!cq->wait_fd) return -FI_EINVAL;
  cq->Progress();
  std::lock_guard lock(cq->mutex);
  return cq->done.empty() && cq->errors.empty() ? 0 : -FI_EAGAIN;
}

namespace {

size_t EntrySize(fi_cq_format format) {
  switch (format) {
    case FI_CQ_FORMAT_CONTEXT:
      return sizeof(fi_cq_entry);
    case FI_CQ_FORMAT_MSG:
      return sizeof(fi_cq_msg_entry);
    case FI_CQ_FORMAT_DATA:
      return sizeof(fi_cq_data_entry);
    case FI_CQ_FORMAT_TAGGED:
      return sizeof(fi_cq_tagged_entry);
    default:
      return 0;
  }
}

void WriteEntry(fi_cq_format format, const Completion& c, void* out) {
  fi_cq_tagged_entry e{c.context, c.flags, c.len, c.buf, c.data, c.tag};
  std::memcpy(out, &e, EntrySize(format));
}

ssize_t CqReadFrom(fid_cq* f, void* buf, size_t count, fi_addr_t* src) {
  Cq* cq = OwnerOf<Cq>(f);
  cq->Progress();
  std::lock_guard lock(cq->mutex);
  if (!cq->errors.empty()) return -FI_EAVAIL;
  if (cq->done.empty()) return -FI_EAGAIN;
  const size_t size = EntrySize(cq->format);
  size_t n = 0;
  for (; n < count && !cq->done.empty(); ++n) {
    const Completion& c = cq->done.front();
    WriteEntry(cq->format, c, static_cast<char*>(buf) + n * size);
    if (src) src[n] = c.src;
    cq->done.pop_front();
  }
  return static_cast<ssize_t>(n);
}

ssize_t CqRead(fid_cq* f, void* buf, size_t count) { return CqReadFrom(f, buf, count, nullptr); }

ssize_t CqReadErr(fid_cq* f, fi_cq_err_entry* buf, uint64_t flags) {
  Cq* cq = OwnerOf<Cq>(f);
  if (flags) return -FI_EINVAL;
  std::lock_guard lock(cq->mutex);
  if (cq->errors.empty()) return -FI_EAGAIN;
  cq->last_error = cq->errors.front();
  cq->errors.pop_front();
  const Completion& c = cq->last_error;
  // Only the fields every API version has; err_data is not used (we keep
  // none), so a caller's err_data buffer is left alone.
  buf->op_context = c.context;
  buf->flags = c.flags;
  buf->len = c.len;
  buf->buf = c.buf;
  buf->data = c.data;
  buf->tag = c.tag;
  buf->olen = c.olen;
  buf->err = c.err;
  buf->prov_errno = c.err;
  if (FI_VERSION_GE(cq->domain->fabric->h.fid.api_version, FI_VERSION(1, 5)))
    buf->err_data_size = 0;
  else
    buf->err_data = nullptr;
  return 1;
}

ssize_t CqSReadFrom(fid_cq* f, void* buf, size_t count, fi_addr_t* src, const void* cond,
                    int timeout) {
  Cq* cq = OwnerOf<Cq>(f);
  if (cond) return -FI_EINVAL;  // FI_CQ_COND_NONE only
  constexpr int kSliceMs = 20;  // how soon fi_cq_signal is noticed
  int waited = 0;
  for (;;) {
    ssize_t n = CqReadFrom(f, buf, count, src);
    if (n != -FI_EAGAIN) return n;
    if (cq->signaled.exchange(false)) return -FI_EAGAIN;
    if (timeout >= 0 && waited >= timeout) return -FI_EAGAIN;
    const int slice = timeout < 0 ? kSliceMs : std::min(kSliceMs, timeout - waited);
    std::vector<Endpoint*> eps;
    {
      std::lock_guard lock(cq->mutex);
      eps = cq->endpoints;
    }
    WaitForEvent(std::move(eps), slice);
    waited += slice;
  }
}

ssize_t CqSRead(fid_cq* f, void* buf, size_t count, const void* cond, int timeout) {
  return CqSReadFrom(f, buf, count, nullptr, cond, timeout);
}

const char* CqStrerror(fid_cq*, int prov_errno, const void*, char* buf, size_t len) {
  const char* s = fi_strerror(prov_errno);
  if (buf && len) {
    std::strncpy(buf, s, len - 1);
    buf[len - 1] = '\0';
    return buf;
  }
  return s;
}

int CqClose(fid* f) {
  Cq* cq = OwnerOf<Cq>(reinterpret_cast<fid_cq*>(f));
  if (cq->refs.load()) return -FI_EBUSY;
  cq->domain->refs--;
  delete cq;
  return 0;
}

// FI_WAIT_FD hands out its descriptor; otherwise there is no wait object
// (fi_cq_sread blocks in the kernel itself).
int CqControl(fid* f, int command, void* arg) {
  Cq* cq = OwnerOf<Cq>(reinterpret_cast<fid_cq*>(f));
  switch (command) {
    case FI_GETWAIT:
      if (!cq->wait_fd) return -FI_ENODATA;
      if (!arg) return -FI_EINVAL;
      *static_cast<int*>(arg) = cq->wait_fd->fd();
      return 0;
    case FI_GETWAITOBJ:
      if (!arg) return -FI_EINVAL;
      *static_cast<fi_wait_obj*>(arg) = cq->wait_obj;
      return 0;
    default:
      return -FI_ENOSYS;
  }
}

fi_ops cq_fid_ops = FidOps(CqClose, NoSys<int>, CqControl);

fi_ops_cq cq_ops = {
    .size = sizeof(fi_ops_cq),
    .read = CqRead,
    .readfrom = CqReadFrom,
    .readerr = CqReadErr,
    .sread = CqSRead,
    .sreadfrom = CqSReadFrom,
    .signal = [](fid_cq* f) -> int {
      OwnerOf<Cq>(f)->signaled = true;
      return 0;
    },
    .strerror = CqStrerror,
};

}  // namespace

int OpenCq(fid_domain* fd, fi_cq_attr* attr, fid_cq** out, void* context) {
  Domain* d = OwnerOf<Domain>(fd);
  if (!attr) return -FI_EINVAL;
  if (attr->flags & ~FI_AFFINITY) return -FI_ENOSYS;
  if (attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC &&
      attr->wait_obj != FI_WAIT_FD)
    return -FI_ENOSYS;
  if (attr->wait_cond != FI_CQ_COND_NONE) return -FI_ENOSYS;
  fi_cq_format format = attr->format == FI_CQ_FORMAT_UNSPEC ? FI_CQ_FORMAT_CONTEXT : attr->format;
  if (!EntrySize(format)) return -FI_ENOSYS;
  auto* cq = new (std::nothrow) Cq;
  if (!cq) return -FI_ENOMEM;
  cq->domain = d;
  cq->format = format;
  cq->size = attr->size;
  cq->wait_obj = attr->wait_obj;
  if (attr->wait_obj == FI_WAIT_FD) {
    cq->wait_fd = std::make_unique<WaitFd>();
    if (const int rc = cq->wait_fd->Open(); rc != 0) {
      delete cq;
      return rc;
    }
  }
  d->refs++;
  cq->h.owner = cq;
  cq->h.fid.fid.fclass = FI_CLASS_CQ;
  cq->h.fid.fid.context = context;
  cq->h.fid.fid.ops = &cq_fid_ops;
  cq->h.fid.ops = &cq_ops;
  *out = &cq->h.fid;
  return 0;
}

}  // namespace ptl::ofi
