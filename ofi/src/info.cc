// SPDX-License-Identifier: BSD-3-Clause
// fi_getinfo's answer. Hints are refused strictly: a utility provider
// (ofi_rxm over FI_EP_MSG, ofi_rxd over FI_EP_DGRAM) asks for what we do
// not offer, and must not be told yes, or it stacks itself on top of us.
#include "info.h"

#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include <cstring>

#include "address.h"
#include "protocol.h"

namespace ptl::ofi {

Limits& ProviderLimits() {
  static Limits limits;
  return limits;
}

std::string DomainName(unsigned iface) { return "ptl" + std::to_string(iface); }

namespace {

constexpr uint64_t kMsgOrder = FI_ORDER_SAS;
constexpr uint64_t kOpFlags = FI_COMPLETION | FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE |
                              FI_INJECT | FI_REMOTE_CQ_DATA | FI_INJECT_COMPLETE;

bool NameDiffers(const char* hint, const std::string& ours) { return hint && ours != hint; }

const char* EpRefused(const fi_ep_attr* ep, const Limits& limits) {
  if (!ep) return nullptr;
  if (ep->type != FI_EP_UNSPEC && ep->type != FI_EP_RDM) return "endpoint type is not FI_EP_RDM";
  if (ep->protocol != FI_PROTO_UNSPEC) return "a named wire protocol";
  if (ep->max_msg_size > limits.max_msg_size) return "max_msg_size too large";
  if (ep->mem_tag_format & ~kTagFormat) return "tag bits beyond the 56 we carry";
  if (ep->tx_ctx_cnt > 1 && ep->tx_ctx_cnt != FI_SHARED_CONTEXT) return "several tx contexts";
  if (ep->rx_ctx_cnt > 1 && ep->rx_ctx_cnt != FI_SHARED_CONTEXT) return "several rx contexts";
  if (ep->tx_ctx_cnt == FI_SHARED_CONTEXT || ep->rx_ctx_cnt == FI_SHARED_CONTEXT)
    return "shared contexts";
  if (ep->auth_key_size) return "auth keys";
  return nullptr;
}

const char* DomainRefused(const fi_domain_attr* d, unsigned iface) {
  if (!d) return nullptr;
  if (NameDiffers(d->name, DomainName(iface))) return "another domain name";
  if (d->av_type != FI_AV_UNSPEC && d->av_type != FI_AV_MAP && d->av_type != FI_AV_TABLE)
    return "av_type";
  if (d->mr_mode & (FI_MR_LOCAL | FI_MR_RAW)) {
    // Accepted: the application registers, we ignore it. Only refuse modes
    // that need keys we would have to make up.
  }
  if (d->cq_data_size > kCqDataSize) return "cq_data_size above 4";
  if (d->caps & ~kCaps) return "domain capabilities";
  if (d->auth_key_size) return "auth keys";
  return nullptr;
}

const char* TxRxRefused(const fi_info* h, const Limits& limits) {
  if (const fi_tx_attr* tx = h->tx_attr) {
    if (tx->caps & ~kCaps) return "tx capabilities";
    if (tx->msg_order & ~kMsgOrder) return "tx ordering beyond FI_ORDER_SAS";
    if (tx->comp_order & ~FI_ORDER_NONE) return "tx completion order";
    if (tx->inject_size > limits.inject_size) return "inject_size too large";
    if (tx->op_flags & ~kOpFlags) return "tx op_flags";
  }
  if (const fi_rx_attr* rx = h->rx_attr) {
    if (rx->caps & ~kCaps) return "rx capabilities";
    if (rx->msg_order & ~kMsgOrder) return "rx ordering beyond FI_ORDER_SAS";
    if (rx->comp_order & ~FI_ORDER_NONE) return "rx completion order";
    if (rx->op_flags & ~(FI_COMPLETION | FI_MULTI_RECV)) return "rx op_flags";
    if (rx->op_flags & FI_MULTI_RECV) return "FI_MULTI_RECV";
  }
  return nullptr;
}

}  // namespace

const char* HintsRefused(const fi_info* h, const Limits& limits, unsigned iface) {
  if (!h) return nullptr;
  if (h->caps & ~kCaps) return "capabilities we do not have";
  if (h->addr_format != FI_FORMAT_UNSPEC) return "an address format (ours is FI_FORMAT_UNSPEC)";
  if (h->src_addr || h->dest_addr) return "a source or destination address";
  if (h->handle) return "a connection handle";
  if (h->fabric_attr) {
    if (NameDiffers(h->fabric_attr->prov_name, kProviderName)) return "another provider";
    if (NameDiffers(h->fabric_attr->name, kFabricName)) return "another fabric";
  }
  if (const char* why = EpRefused(h->ep_attr, limits)) return why;
  if (const char* why = DomainRefused(h->domain_attr, iface)) return why;
  if (h->nic) return "a NIC";
  return TxRxRefused(h, limits);
}

namespace {

void FillTx(fi_tx_attr* tx, const fi_info* hints, const Limits& limits) {
  tx->caps = kCaps & ~FI_RECV & ~FI_DIRECTED_RECV & ~FI_SOURCE;
  tx->mode = 0;
  tx->op_flags = hints && hints->tx_attr ? hints->tx_attr->op_flags : 0;
  tx->msg_order = kMsgOrder;
  tx->comp_order = FI_ORDER_NONE;
  tx->inject_size = limits.inject_size;
  tx->size = limits.bounce_slots;
  tx->iov_limit = 1;
  tx->rma_iov_limit = 0;
}

void FillRx(fi_rx_attr* rx, const fi_info* hints) {
  rx->caps = kCaps & ~FI_SEND;
  rx->mode = 0;
  rx->op_flags = hints && hints->rx_attr ? hints->rx_attr->op_flags : 0;
  rx->msg_order = kMsgOrder;
  rx->comp_order = FI_ORDER_NONE;
  rx->total_buffered_recv = 0;
  rx->size = 65535;  // receives posted: one ME each, max_me_list
  rx->iov_limit = 1;
}

template <class T>
T Pick(T hint, T unspec, T ours) {
  return hint == unspec ? ours : hint;
}

void FillDomain(fi_domain_attr* d, const fi_info* hints, unsigned iface) {
  const fi_domain_attr* h = hints ? hints->domain_attr : nullptr;
  d->name = strdup(DomainName(iface).c_str());
  // Every object takes its own lock, so any level the caller asks for holds.
  d->threading = h ? Pick(h->threading, FI_THREAD_UNSPEC, FI_THREAD_SAFE) : FI_THREAD_SAFE;
  d->control_progress =
      h ? Pick(h->control_progress, FI_PROGRESS_UNSPEC, FI_PROGRESS_MANUAL) : FI_PROGRESS_MANUAL;
  // The kernel moves the data of a matched message with no call from us;
  // Documentation/mpi.md says which protocol steps still need one.
  d->data_progress =
      h ? Pick(h->data_progress, FI_PROGRESS_UNSPEC, FI_PROGRESS_AUTO) : FI_PROGRESS_AUTO;
  d->resource_mgmt = h ? Pick(h->resource_mgmt, FI_RM_UNSPEC, FI_RM_ENABLED) : FI_RM_ENABLED;
  d->av_type = h ? Pick(h->av_type, FI_AV_UNSPEC, FI_AV_MAP) : FI_AV_MAP;
  d->mr_mode = 0;
  d->mr_key_size = 0;
  d->cq_data_size = kCqDataSize;
  d->cq_cnt = 256;
  d->ep_cnt = kMaxEndpoints;
  d->tx_ctx_cnt = kMaxEndpoints;
  d->rx_ctx_cnt = kMaxEndpoints;
  d->max_ep_tx_ctx = 1;
  d->max_ep_rx_ctx = 1;
  d->max_ep_stx_ctx = 0;
  d->max_ep_srx_ctx = 0;
  d->cntr_cnt = 256;
  d->mr_iov_limit = 1;
  d->caps = kSecondaryCaps;
  d->mode = 0;
  d->max_err_data = 0;
  d->mr_cnt = 0;
}

void FillEp(fi_ep_attr* ep, const Limits& limits) {
  ep->type = FI_EP_RDM;
  ep->protocol = FI_PROTO_UNSPEC;
  ep->protocol_version = 1;
  ep->max_msg_size = limits.max_msg_size;
  ep->msg_prefix_size = 0;
  ep->max_order_raw_size = 0;
  ep->max_order_war_size = 0;
  ep->max_order_waw_size = 0;
  ep->mem_tag_format = kTagFormat;
  ep->tx_ctx_cnt = 1;
  ep->rx_ctx_cnt = 1;
}

}  // namespace

fi_info* MakeInfo(uint32_t version, const fi_info* hints, const Limits& limits, unsigned iface,
                  int* err) {
  (void)version;
  if (HintsRefused(hints, limits, iface)) {
    *err = -FI_ENODATA;
    return nullptr;
  }
  fi_info* info = fi_allocinfo();
  if (!info) {
    *err = -FI_ENOMEM;
    return nullptr;
  }
  // Only the capabilities asked for (all when none are): an application
  // that did not ask for FI_SOURCE does not pay for it.
  const uint64_t asked = hints && hints->caps ? hints->caps : kCaps;
  info->caps = (asked & kCaps) | ((asked & (FI_TAGGED | FI_MSG)) ? FI_SEND | FI_RECV : 0);
  info->mode = 0;
  info->addr_format = FI_FORMAT_UNSPEC;
  FillTx(info->tx_attr, hints, limits);
  FillRx(info->rx_attr, hints);
  FillEp(info->ep_attr, limits);
  FillDomain(info->domain_attr, hints, iface);
  info->fabric_attr->name = strdup(kFabricName);
  info->fabric_attr->prov_version = kProviderVersion;
  info->fabric_attr->api_version = kApiVersion;
  if (!info->domain_attr->name || !info->fabric_attr->name) {
    fi_freeinfo(info);
    *err = -FI_ENOMEM;
    return nullptr;
  }
  *err = 0;
  return info;
}

}  // namespace ptl::ofi
