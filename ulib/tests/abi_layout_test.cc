// SPDX-License-Identifier: BSD-3-Clause
// The ioctl ABI mirrors the API's structures; a drift here would silently
// corrupt arguments crossing into the kernel.
#include <gtest/gtest.h>
#include <linux/portals.h>
#include <portals3.h>

#include <cstddef>

static_assert(sizeof(ptl_ioc_limits) == sizeof(ptl_ni_limits_t));
static_assert(offsetof(ptl_ioc_limits, max_getput_md) == offsetof(ptl_ni_limits_t, max_getput_md));
static_assert(offsetof(ptl_ioc_ni_init, size) == 0);
static_assert(offsetof(ptl_ioc_ni_init, flags) == 4);
static_assert(sizeof(ptl_ioc_ni_init) % 8 == 0, "no tail padding surprises");
static_assert(sizeof(ptl_ioc_ni_identity) % 8 == 0);

TEST(AbiLayout, EventAndMdHaveTheReferenceLayout) {
  EXPECT_EQ(sizeof(ptl_md_t), 56u);
  EXPECT_EQ(sizeof(ptl_event_t), 144u);
  EXPECT_EQ(offsetof(ptl_event_t, md), 64u);
  EXPECT_EQ(offsetof(ptl_event_t, link), 128u);
  EXPECT_EQ(offsetof(ptl_event_t, ni_fail_type), 132u);
  EXPECT_EQ(offsetof(ptl_event_t, sequence), 136u);
}

TEST(AbiLayout, IoctlNumbersAreDistinctAndOursAlone) {
  const unsigned long cmds[] = {PTL_IOC_VERSION,     PTL_IOC_NI_INIT,   PTL_IOC_NI_FINI,
                                PTL_IOC_NI_IDENTITY, PTL_IOC_NI_STATUS, PTL_IOC_NI_DIST,
                                PTL_IOC_HANDLE_NI,   PTL_IOC_ME_ATTACH, PTL_IOC_ME_UNLINK,
                                PTL_IOC_MD_ATTACH,   PTL_IOC_MD_UNLINK, PTL_IOC_MD_UPDATE,
                                PTL_IOC_EQ_ALLOC,    PTL_IOC_EQ_FREE,   PTL_IOC_EQ_WAIT,
                                PTL_IOC_AC_ENTRY,    PTL_IOC_DATA,      PTL_IOC_SET_JID};
  for (size_t i = 0; i < std::size(cmds); ++i) {
    EXPECT_EQ(_IOC_TYPE(cmds[i]), PTL_IOC_MAGIC);
    for (size_t j = i + 1; j < std::size(cmds); ++j) EXPECT_NE(_IOC_NR(cmds[i]), _IOC_NR(cmds[j]));
  }
}

TEST(AbiLayout, SpecialHandleValues) {
  EXPECT_EQ(PTL_INVALID_HANDLE, 0xffffffffu);
  EXPECT_EQ(PTL_HANDLE_NONE, 0x7fffffffu);
  EXPECT_EQ(PTL_EQ_NONE, 0xbfffffffu);
  EXPECT_EQ(PTL_NO_ACK_REQ, PTL_NOACK_REQ);
}
