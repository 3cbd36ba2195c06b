// SPDX-License-Identifier: BSD-3-Clause
#include <gtest/gtest.h>
#include <portals3.h>

#include <string>

TEST(PtlErrorStr, NamesEveryCodeLikeTheExportedTable) {
  for (unsigned code = PTL_OK; code < PTL_MAX_ERRNO; ++code) {
    ASSERT_NE(PtlErrorStr(code), nullptr);
    EXPECT_STREQ(PtlErrorStr(code), ptl_err_str[code]) << code;
  }
  EXPECT_STREQ(PtlErrorStr(PTL_OK), "PTL_OK");
  EXPECT_STREQ(PtlErrorStr(PTL_MD_IN_USE), "PTL_MD_IN_USE");
  EXPECT_STREQ(PtlErrorStr(PTL_SR_INDEX_INVALID), "PTL_SR_INDEX_INVALID");
}

TEST(PtlErrorStr, OutOfRangeIsUnknownError) {
  EXPECT_STREQ(PtlErrorStr(PTL_MAX_ERRNO), "PTL_UNKNOWN_ERROR");
  EXPECT_STREQ(PtlErrorStr(~0U), "PTL_UNKNOWN_ERROR");
}

TEST(PtlErrorStr, CodesHaveTheReferenceValues) {
  EXPECT_EQ(PTL_EQ_DROPPED, 2);
  EXPECT_EQ(PTL_MD_ILLEGAL, 8);
  EXPECT_EQ(PTL_NI_INVALID, 15);
  EXPECT_EQ(PTL_SEGV, 22);
  EXPECT_EQ(PTL_MAX_ERRNO, 25);
}

TEST(PtlEventKindStr, NamesEveryKindInSpecOrder) {
  EXPECT_STREQ(PtlEventKindStr(PTL_EVENT_GET_START), "PTL_EVENT_GET_START");
  EXPECT_STREQ(PtlEventKindStr(PTL_EVENT_PUT_END), "PTL_EVENT_PUT_END");
  EXPECT_STREQ(PtlEventKindStr(PTL_EVENT_SEND_END), "PTL_EVENT_SEND_END");
  EXPECT_STREQ(PtlEventKindStr(PTL_EVENT_UNLINK), "PTL_EVENT_UNLINK");
  EXPECT_EQ(PTL_EVENT_ACK, 10);
  EXPECT_STREQ(PtlEventKindStr(static_cast<ptl_event_kind_t>(12)), "PTL_UNKNOWN_EVENT_KIND");
}

TEST(PtlNIFailStr, KnownAndUnknownCodes) {
  EXPECT_STREQ(PtlNIFailStr(0, PTL_NI_OK), "PTL_NI_OK");
  EXPECT_STREQ(PtlNIFailStr(0, PTL_NI_FAIL), "PTL_NI_FAIL");
  EXPECT_STREQ(PtlNIFailStr(0, 77), "PTL_NI_UNKNOWN_ERROR");
}
