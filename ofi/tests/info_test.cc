// SPDX-License-Identifier: BSD-3-Clause
// fi_getinfo's answer and its refusals (fi_getinfo(3): hints are minimums
// the provider must meet; info.h).
#include "info.h"

#include <gtest/gtest.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include <memory>

namespace ptl::ofi {
namespace {

struct InfoDeleter {
  void operator()(fi_info* i) const { fi_freeinfo(i); }
};
using InfoPtr = std::unique_ptr<fi_info, InfoDeleter>;

InfoPtr Hints() { return InfoPtr(fi_allocinfo()); }

// What Debian's Open MPI 4.1.4 (mtl ofi) asks for.
InfoPtr OpenMpiHints() {
  InfoPtr h = Hints();
  h->mode = FI_CONTEXT | FI_CONTEXT2;
  h->ep_attr->type = FI_EP_RDM;
  h->caps = FI_TAGGED | FI_DIRECTED_RECV;
  h->tx_attr->msg_order = FI_ORDER_SAS;
  h->rx_attr->msg_order = FI_ORDER_SAS;
  h->tx_attr->op_flags = FI_COMPLETION;
  h->rx_attr->op_flags = FI_COMPLETION;
  h->domain_attr->threading = FI_THREAD_DOMAIN;
  h->domain_attr->av_type = FI_AV_MAP;
  h->domain_attr->resource_mgmt = FI_RM_ENABLED;
  h->domain_attr->cq_data_size = 4;
  return h;
}

InfoPtr Make(const fi_info* hints, int* err) {
  return InfoPtr(MakeInfo(FI_VERSION(1, 5), hints, Limits{}, 0, err));
}

TEST(Info, WithoutHintsOffersEverything) {
  int err = 1;
  InfoPtr info = Make(nullptr, &err);
  ASSERT_TRUE(info);
  EXPECT_EQ(err, 0);
  EXPECT_EQ(info->caps & kCaps, kCaps);
  EXPECT_EQ(info->ep_attr->type, FI_EP_RDM);
  EXPECT_STREQ(info->domain_attr->name, "ptl0");
  EXPECT_STREQ(info->fabric_attr->name, "portals");
  EXPECT_EQ(info->fabric_attr->prov_name, nullptr);  // the core fills it in
  EXPECT_EQ(info->domain_attr->data_progress, FI_PROGRESS_AUTO);
  EXPECT_EQ(info->domain_attr->mr_mode, 0);
}

TEST(Info, MeetsOpenMpisHints) {
  InfoPtr h = OpenMpiHints();
  int err = 1;
  InfoPtr info = Make(h.get(), &err);
  ASSERT_TRUE(info) << HintsRefused(h.get(), Limits{}, 0);
  EXPECT_EQ(info->domain_attr->threading, FI_THREAD_DOMAIN);
  EXPECT_GE(info->domain_attr->cq_data_size, 4U);
  EXPECT_EQ(info->mode, 0U);  // needs neither FI_CONTEXT nor FI_CONTEXT2
  EXPECT_TRUE(info->caps & FI_DIRECTED_RECV);
  EXPECT_TRUE(info->tx_attr->op_flags & FI_COMPLETION);
  EXPECT_NE(info->ep_attr->mem_tag_format, 0U);
}

TEST(Info, RefusesWhatUtilityProvidersLayerOn) {
  for (fi_ep_type type : {FI_EP_MSG, FI_EP_DGRAM}) {
    InfoPtr h = Hints();
    h->ep_attr->type = type;
    int err = 0;
    EXPECT_FALSE(Make(h.get(), &err));
    EXPECT_EQ(err, -FI_ENODATA);
  }
}

TEST(Info, RefusesCapabilitiesItLacks) {
  for (uint64_t cap : {FI_RMA, FI_ATOMIC, FI_MULTICAST, FI_NAMED_RX_CTX, FI_HMEM}) {
    InfoPtr h = Hints();
    h->caps = FI_TAGGED | cap;
    int err = 0;
    EXPECT_FALSE(Make(h.get(), &err)) << cap;
  }
}

TEST(Info, RefusesOtherNamesAndLargerLimits) {
  InfoPtr h = Hints();
  h->fabric_attr->prov_name = strdup("tcp");
  EXPECT_NE(HintsRefused(h.get(), Limits{}, 0), nullptr);

  h = Hints();
  h->domain_attr->name = strdup("ptl1");
  EXPECT_NE(HintsRefused(h.get(), Limits{}, 0), nullptr);

  h = Hints();
  h->domain_attr->cq_data_size = 8;
  EXPECT_NE(HintsRefused(h.get(), Limits{}, 0), nullptr);

  h = Hints();
  h->tx_attr->inject_size = Limits{}.inject_size + 1;
  EXPECT_NE(HintsRefused(h.get(), Limits{}, 0), nullptr);

  h = Hints();
  h->ep_attr->mem_tag_format = ~0ULL;  // all 64 bits: we carry 56
  EXPECT_NE(HintsRefused(h.get(), Limits{}, 0), nullptr);

  h = Hints();
  h->rx_attr->msg_order = FI_ORDER_SAS | FI_ORDER_RAW;
  EXPECT_NE(HintsRefused(h.get(), Limits{}, 0), nullptr);
}

TEST(Info, OnlyTheCapabilitiesAskedFor) {
  InfoPtr h = Hints();
  h->caps = FI_MSG;
  int err = 0;
  InfoPtr info = Make(h.get(), &err);
  ASSERT_TRUE(info);
  EXPECT_FALSE(info->caps & FI_TAGGED);
  EXPECT_TRUE(info->caps & FI_MSG);
  EXPECT_TRUE(info->caps & FI_SEND);
}

}  // namespace
}  // namespace ptl::ofi
