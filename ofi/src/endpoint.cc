// SPDX-License-Identifier: BSD-3-Clause
// An endpoint's life: opening, binding to an AV and CQs, enabling (which
// builds its Portals objects), closing; and its libfabric call tables. The
// protocols are in send.cc and recv.cc.
#include "endpoint.h"

#include <algorithm>
#include <cstring>

#include "md.h"

namespace ptl::ofi {

namespace {

// Events per EQ. The unexpected EQ must hold the events of every message
// that arrives between two calls into the provider (heap blocks take at
// most 512 messages each, recv_queue.cc); the main EQ two per posted
// receive and per send in flight, three per long one (its START too).
constexpr ptl_size_t kEqEvents = 8192;

}  // namespace

Endpoint::Endpoint(Domain* domain, const fi_info* info)
    : domain_(domain), limits_(ProviderLimits()), tagged_q_(this, true), msg_q_(this, false) {
  if (info && info->tx_attr) tx_op_flags = info->tx_attr->op_flags;
  if (info && info->rx_attr) rx_op_flags = info->rx_attr->op_flags;
}

Endpoint::~Endpoint() = default;

ptl_handle_ni_t Endpoint::ni() const { return domain_->ni; }

Address Endpoint::address() const {
  Address a;
  a.nid = domain_->id.nid;
  a.pid = static_cast<uint16_t>(domain_->id.pid);
  a.ep = static_cast<uint8_t>(index_);
  return a;
}

int Endpoint::Enable() {
  std::lock_guard lock(mutex_);
  if (enabled_) return 0;
  if (!av) return -FI_ENOAV;
  if (!tx_cq && !rx_cq && !send_cntr && !recv_cntr) return -FI_ENOCQ;
  const ptl_pt_index_t base = static_cast<ptl_pt_index_t>(index_ * kPtsPerEndpoint);
  int rc = PtlEQAlloc(ni(), kEqEvents, PTL_EQ_HANDLER_NONE, &eq_);
  if (rc == PTL_OK) rc = PtlEQAlloc(ni(), kEqEvents, PTL_EQ_HANDLER_NONE, &ueq_);
  if (rc == PTL_OK) rc = tagged_q_.Setup(base + kPtTagged, limits_);
  if (rc == PTL_OK) rc = msg_q_.Setup(base + kPtMsg, limits_);
  if (rc == PTL_OK) {
    const size_t bytes = limits_.bounce_slots * limits_.eager_size;
    bounce_.reset(new (std::nothrow) char[bytes]);
    rc = bounce_ ? PtlMDBind(ni(),
                             MakeMd(bounce_.get(), bytes, PTL_MD_THRESH_INF,
                                    PTL_MD_EVENT_START_DISABLE, kTagBounce, eq_),
                             PTL_RETAIN, &bounce_md_)
                 : PTL_NO_SPACE;
  }
  if (rc == PTL_OK)
    rc = PtlMDBind(ni(),
                   MakeMd(nullptr, 0, PTL_MD_THRESH_INF,
                          PTL_MD_EVENT_START_DISABLE | PTL_MD_EVENT_END_DISABLE, 0, PTL_EQ_NONE),
                   PTL_RETAIN, &empty_md_);
  if (rc == PTL_OK) rc = AttachProbeEntry(base + kPtRequest);
  if (rc == PTL_OK)
    rc = PtlMEAttach(ni(), base + kPtRequest, {PTL_NID_ANY, PTL_PID_ANY}, 0, ~0ULL, PTL_RETAIN,
                     PTL_INS_AFTER, &request_me_);
  if (rc == PTL_OK) {
    ptl_handle_md_t md;
    rc = PtlMDAttach(
        request_me_,
        MakeMd(nullptr, 0, PTL_MD_THRESH_INF,
               PTL_MD_OP_PUT | PTL_MD_TRUNCATE | PTL_MD_ACK_DISABLE | PTL_MD_EVENT_START_DISABLE,
               kTagRequest, eq_),
        PTL_RETAIN, &md);
  }
  if (rc != PTL_OK) {
    FI_WARN(Provider(), FI_LOG_EP_CTRL, "enabling endpoint %d: %s\n", index_, PtlErrorStr(rc));
    return FromPtl(rc);
  }
  slots_.assign(limits_.bounce_slots, BounceSlot{});
  free_slots_.clear();
  for (size_t i = limits_.bounce_slots; i-- > 0;) free_slots_.push_back(i);
  enabled_ = true;
  return 0;
}

void Endpoint::Close() {
  std::lock_guard lock(mutex_);
  for (auto& [id, op] : ops_) ReleaseOp(op.get());
  ops_.clear();
  for (auto& [peer, probe] : probes_) PtlMDUnlink(probe.md);
  probes_.clear();
  // A put of a spill or of the bounce buffer may still sit in the
  // transport, a heap block take a deposit: their memory goes to the
  // domain if so (send.cc, FreeSpill).
  for (auto& [cookie, spill] : spills_) domain_->Release(spill.md, std::move(spill.data));
  spills_.clear();
  tagged_q_.Teardown();
  msg_q_.Teardown();
  if (request_me_ != PTL_INVALID_HANDLE) PtlMEUnlink(request_me_);
  if (probe_me_ != PTL_INVALID_HANDLE) PtlMEUnlink(probe_me_);
  domain_->Release(bounce_md_, std::move(bounce_));
  bounce_md_ = PTL_INVALID_HANDLE;
  if (empty_md_ != PTL_INVALID_HANDLE) PtlMDUnlink(empty_md_);
  if (eq_ != PTL_EQ_NONE) PtlEQFree(eq_);
  if (ueq_ != PTL_EQ_NONE) PtlEQFree(ueq_);
  enabled_ = false;
}

namespace {

Endpoint* EpOf(fid* f) { return OwnerOf<Endpoint>(reinterpret_cast<fid_ep*>(f)); }
Endpoint* EpOf(fid_ep* f) { return OwnerOf<Endpoint>(f); }

void Unbind(Cq* cq, Endpoint* ep) {
  if (!cq) return;
  std::lock_guard lock(cq->mutex);
  std::erase(cq->endpoints, ep);
}

void UnbindCntr(Cntr* cntr, Endpoint* ep) {
  if (!cntr) return;
  std::lock_guard lock(cntr->mutex);
  std::erase(cntr->endpoints, ep);
  cntr->refs--;
}

int EpClose(fid* f) {
  Endpoint* ep = EpOf(f);
  Unbind(ep->tx_cq, ep);
  if (ep->rx_cq != ep->tx_cq) Unbind(ep->rx_cq, ep);
  if (ep->tx_cq) ep->tx_cq->refs--;
  if (ep->rx_cq) ep->rx_cq->refs--;
  if (ep->av) ep->av->refs--;
  UnbindCntr(ep->send_cntr, ep);
  if (ep->recv_cntr != ep->send_cntr)
    UnbindCntr(ep->recv_cntr, ep);
  else if (ep->recv_cntr)
    ep->recv_cntr->refs--;
  ep->Close();
  Domain* d = ep->domain();
  d->PutEndpointIndex(ep->address().ep);
  d->refs--;
  delete ep;
  return 0;
}

int BindCq(Endpoint* ep, Cq* cq, uint64_t flags) {
  if (flags & ~(FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION)) return -FI_EBADFLAGS;
  if ((flags & FI_TRANSMIT) && ep->tx_cq) return -FI_EINVAL;
  if ((flags & FI_RECV) && ep->rx_cq) return -FI_EINVAL;
  const bool selective = flags & FI_SELECTIVE_COMPLETION;
  if (flags & FI_TRANSMIT) {
    ep->tx_cq = cq;
    ep->tx_selective = selective;
    cq->refs++;
  }
  if (flags & FI_RECV) {
    ep->rx_cq = cq;
    ep->rx_selective = selective;
    cq->refs++;
  }
  std::lock_guard lock(cq->mutex);
  if (std::find(cq->endpoints.begin(), cq->endpoints.end(), ep) == cq->endpoints.end())
    cq->endpoints.push_back(ep);
  return 0;
}

int BindCntr(Endpoint* ep, Cntr* cntr, uint64_t flags) {
  if (!flags || (flags & ~(FI_SEND | FI_RECV))) return -FI_EBADFLAGS;
  if (((flags & FI_SEND) && ep->send_cntr) || ((flags & FI_RECV) && ep->recv_cntr))
    return -FI_EINVAL;
  if (flags & FI_SEND) {
    ep->send_cntr = cntr;
    cntr->refs++;
  }
  if (flags & FI_RECV) {
    ep->recv_cntr = cntr;
    cntr->refs++;
  }
  std::lock_guard lock(cntr->mutex);
  if (std::find(cntr->endpoints.begin(), cntr->endpoints.end(), ep) == cntr->endpoints.end())
    cntr->endpoints.push_back(ep);
  return 0;
}

int EpBind(fid* f, fid* bfid, uint64_t flags) {
  Endpoint* ep = EpOf(f);
  if (ep->enabled()) return -FI_EOPBADSTATE;
  switch (bfid->fclass) {
    case FI_CLASS_AV: {
      if (ep->av) return -FI_EINVAL;
      ep->av = OwnerOf<Av>(reinterpret_cast<fid_av*>(bfid));
      ep->av->refs++;
      return 0;
    }
    case FI_CLASS_CQ:
      return BindCq(ep, OwnerOf<Cq>(reinterpret_cast<fid_cq*>(bfid)), flags);
    case FI_CLASS_CNTR:
      return BindCntr(ep, OwnerOf<Cntr>(reinterpret_cast<fid_cntr*>(bfid)), flags);
    case FI_CLASS_EQ:
      return 0;  // nothing is ever reported to it
    default:
      return -FI_ENOSYS;
  }
}

int EpControl(fid* f, int command, void* arg) {
  Endpoint* ep = EpOf(f);
  switch (command) {
    case FI_ENABLE:
      return ep->Enable();
    case FI_GETOPSFLAG: {
      auto* flags = static_cast<uint64_t*>(arg);
      *flags = (*flags & FI_TRANSMIT) ? ep->tx_op_flags : ep->rx_op_flags;
      return 0;
    }
    case FI_SETOPSFLAG: {
      auto* flags = static_cast<uint64_t*>(arg);
      if (*flags & FI_TRANSMIT)
        ep->tx_op_flags = *flags & ~FI_TRANSMIT;
      else
        ep->rx_op_flags = *flags & ~FI_RECV;
      return 0;
    }
    default:
      return -FI_ENOSYS;
  }
}

fi_ops ep_fid_ops = FidOps(EpClose, EpBind, EpControl);

int EpGetname(fid* f, void* addr, size_t* addrlen) {
  Endpoint* ep = EpOf(f);
  const Address a = ep->address();
  const size_t want = sizeof(a);
  if (*addrlen < want) {
    *addrlen = want;
    return -FI_ETOOSMALL;
  }
  std::memcpy(addr, &a, want);
  *addrlen = want;
  return 0;
}

fi_ops_cm ep_cm_ops = {
    .size = sizeof(fi_ops_cm),
    .setname = NoSys<int>,
    .getname = EpGetname,
    .getpeer = NoSys<int>,
    .connect = NoSys<int>,
    .listen = NoSys<int>,
    .accept = NoSys<int>,
    .reject = NoSys<int>,
    .shutdown = NoSys<int>,
    .join = NoSys<int>,
};

fi_ops_ep ep_ops = {
    .size = sizeof(fi_ops_ep),
    .cancel = [](fid_t f, void* context) -> ssize_t { return EpOf(f)->Cancel(context); },
    .getopt = [](fid_t, int, int, void*, size_t*) -> int { return -FI_ENOPROTOOPT; },
    .setopt = [](fid_t, int, int, const void*, size_t) -> int { return -FI_ENOPROTOOPT; },
    .tx_ctx = NoSys<int>,
    .rx_ctx = NoSys<int>,
    .rx_size_left = NoSys<ssize_t>,
    .tx_size_left = NoSys<ssize_t>,
};

// iov_limit is 1: a vector of one, or none (a zero-byte message).
bool OneIov(const iovec* iov, size_t count, void** buf, size_t* len) {
  if (count > 1) return false;
  *buf = count ? iov[0].iov_base : nullptr;
  *len = count ? iov[0].iov_len : 0;
  return true;
}

fi_ops_tagged tagged_ops = {
    .size = sizeof(fi_ops_tagged),
    .recv = [](fid_ep* f, void* buf, size_t len, void*, fi_addr_t src, uint64_t tag,
               uint64_t ignore, void* context) -> ssize_t {
      Endpoint* ep = EpOf(f);
      return ep->Recv(true, buf, len, src, tag, ignore, context, ep->rx_op_flags);
    },
    .recvv = [](fid_ep* f, const iovec* iov, void**, size_t count, fi_addr_t src, uint64_t tag,
                uint64_t ignore, void* context) -> ssize_t {
      Endpoint* ep = EpOf(f);
      void* buf;
      size_t len;
      if (!OneIov(iov, count, &buf, &len)) return -FI_EINVAL;
      return ep->Recv(true, buf, len, src, tag, ignore, context, ep->rx_op_flags);
    },
    .recvmsg = [](fid_ep* f, const fi_msg_tagged* msg, uint64_t flags) -> ssize_t {
      void* buf;
      size_t len;
      if (!OneIov(msg->msg_iov, msg->iov_count, &buf, &len)) return -FI_EINVAL;
      return EpOf(f)->Recv(true, buf, len, msg->addr, msg->tag, msg->ignore, msg->context, flags);
    },
    .send = [](fid_ep* f, const void* buf, size_t len, void*, fi_addr_t dest, uint64_t tag,
               void* context) -> ssize_t {
      Endpoint* ep = EpOf(f);
      return ep->Send(true, buf, len, dest, tag, 0, false, context, ep->tx_op_flags);
    },
    .sendv = [](fid_ep* f, const iovec* iov, void**, size_t count, fi_addr_t dest, uint64_t tag,
                void* context) -> ssize_t {
      Endpoint* ep = EpOf(f);
      void* buf;
      size_t len;
      if (!OneIov(iov, count, &buf, &len)) return -FI_EINVAL;
      return ep->Send(true, buf, len, dest, tag, 0, false, context, ep->tx_op_flags);
    },
    .sendmsg = [](fid_ep* f, const fi_msg_tagged* msg, uint64_t flags) -> ssize_t {
      void* buf;
      size_t len;
      if (!OneIov(msg->msg_iov, msg->iov_count, &buf, &len)) return -FI_EINVAL;
      return EpOf(f)->Send(true, buf, len, msg->addr, msg->tag, msg->data,
                           flags & FI_REMOTE_CQ_DATA, msg->context, flags);
    },
    .inject = [](fid_ep* f, const void* buf, size_t len, fi_addr_t dest, uint64_t tag) -> ssize_t {
      return EpOf(f)->Send(true, buf, len, dest, tag, 0, false, nullptr, FI_INJECT);
    },
    .senddata = [](fid_ep* f, const void* buf, size_t len, void*, uint64_t data, fi_addr_t dest,
                   uint64_t tag, void* context) -> ssize_t {
      Endpoint* ep = EpOf(f);
      return ep->Send(true, buf, len, dest, tag, data, true, context, ep->tx_op_flags);
    },
    .injectdata = [](fid_ep* f, const void* buf, size_t len, uint64_t data, fi_addr_t dest,
                     uint64_t tag) -> ssize_t {
      return EpOf(f)->Send(true, buf, len, dest, tag, data, true, nullptr, FI_INJECT);
    },
};

fi_ops_msg msg_ops = {
    .size = sizeof(fi_ops_msg),
    .recv = [](fid_ep* f, void* buf, size_t len, void*, fi_addr_t src, void* context) -> ssize_t {
      Endpoint* ep = EpOf(f);
      return ep->Recv(false, buf, len, src, 0, 0, context, ep->rx_op_flags);
    },
    .recvv = [](fid_ep* f, const iovec* iov, void**, size_t count, fi_addr_t src,
                void* context) -> ssize_t {
      Endpoint* ep = EpOf(f);
      void* buf;
      size_t len;
      if (!OneIov(iov, count, &buf, &len)) return -FI_EINVAL;
      return ep->Recv(false, buf, len, src, 0, 0, context, ep->rx_op_flags);
    },
    .recvmsg = [](fid_ep* f, const fi_msg* msg, uint64_t flags) -> ssize_t {
      void* buf;
      size_t len;
      if (!OneIov(msg->msg_iov, msg->iov_count, &buf, &len)) return -FI_EINVAL;
      return EpOf(f)->Recv(false, buf, len, msg->addr, 0, 0, msg->context, flags);
    },
    .send = [](fid_ep* f, const void* buf, size_t len, void*, fi_addr_t dest,
               void* context) -> ssize_t {
      Endpoint* ep = EpOf(f);
      return ep->Send(false, buf, len, dest, 0, 0, false, context, ep->tx_op_flags);
    },
    .sendv = [](fid_ep* f, const iovec* iov, void**, size_t count, fi_addr_t dest,
                void* context) -> ssize_t {
      Endpoint* ep = EpOf(f);
      void* buf;
      size_t len;
      if (!OneIov(iov, count, &buf, &len)) return -FI_EINVAL;
      return ep->Send(false, buf, len, dest, 0, 0, false, context, ep->tx_op_flags);
    },
    .sendmsg = [](fid_ep* f, const fi_msg* msg, uint64_t flags) -> ssize_t {
      void* buf;
      size_t len;
      if (!OneIov(msg->msg_iov, msg->iov_count, &buf, &len)) return -FI_EINVAL;
      return EpOf(f)->Send(false, buf, len, msg->addr, 0, msg->data, flags & FI_REMOTE_CQ_DATA,
                           msg->context, flags);
    },
    .inject = [](fid_ep* f, const void* buf, size_t len, fi_addr_t dest) -> ssize_t {
      return EpOf(f)->Send(false, buf, len, dest, 0, 0, false, nullptr, FI_INJECT);
    },
    .senddata = [](fid_ep* f, const void* buf, size_t len, void*, uint64_t data, fi_addr_t dest,
                   void* context) -> ssize_t {
      Endpoint* ep = EpOf(f);
      return ep->Send(false, buf, len, dest, 0, data, true, context, ep->tx_op_flags);
    },
    .injectdata = [](fid_ep* f, const void* buf, size_t len, uint64_t data,
                     fi_addr_t dest) -> ssize_t {
      return EpOf(f)->Send(false, buf, len, dest, 0, data, true, nullptr, FI_INJECT);
    },
};

}  // namespace

int OpenEndpoint(fid_domain* fd, fi_info* info, fid_ep** out, void* context) {
  Domain* d = OwnerOf<Domain>(fd);
  if (info && info->ep_attr && info->ep_attr->type != FI_EP_RDM &&
      info->ep_attr->type != FI_EP_UNSPEC)
    return -FI_EINVAL;
  const int index = d->TakeEndpointIndex();
  if (index < 0) return -FI_ENOSPC;
  auto* ep = new (std::nothrow) Endpoint(d, info);
  if (!ep) {
    d->PutEndpointIndex(index);
    return -FI_ENOMEM;
  }
  ep->SetIndex(index);
  d->refs++;
  ep->h.owner = ep;
  ep->h.fid.fid.fclass = FI_CLASS_EP;
  ep->h.fid.fid.context = context;
  ep->h.fid.fid.ops = &ep_fid_ops;
  ep->h.fid.ops = &ep_ops;
  ep->h.fid.cm = &ep_cm_ops;
  ep->h.fid.msg = &msg_ops;
  ep->h.fid.tagged = &tagged_ops;
  *out = &ep->h.fid;
  return 0;
}

}  // namespace ptl::ofi
