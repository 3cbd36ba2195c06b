// SPDX-License-Identifier: BSD-3-Clause
// The match-bit and hdr_data layouts of protocol.h.
#include "protocol.h"

#include <gtest/gtest.h>

namespace ptl::ofi {
namespace {

TEST(MatchBits, CarryLongFlagEndpointAndTag) {
  const uint64_t bits = MatchBits(true, 50, 0x00abcdef12345678ULL);
  EXPECT_TRUE(BitsLong(bits));
  EXPECT_EQ(BitsEndpoint(bits), 50U);
  EXPECT_EQ(BitsTag(bits), 0x00abcdef12345678ULL);
  EXPECT_FALSE(BitsLong(MatchBits(false, 0, kTagMask)));
}

TEST(MatchBits, TagBitsBeyondTheFormatDoNotLeakIntoTheEndpoint) {
  EXPECT_EQ(BitsEndpoint(MatchBits(false, 3, ~0ULL)), 3U);
}

TEST(RecvMatch, TakesShortAndLongMessagesAlike) {
  const RecvMatch m = MakeRecvMatch(42, 0, false, 7);
  EXPECT_TRUE(Matches(m, MatchBits(false, 7, 42)));
  EXPECT_TRUE(Matches(m, MatchBits(true, 7, 42)));
  EXPECT_FALSE(Matches(m, MatchBits(false, 7, 43)));
}

TEST(RecvMatch, DirectedReceiveNamesOneEndpointOfAProcess) {
  const RecvMatch m = MakeRecvMatch(1, 0, false, 2);
  EXPECT_FALSE(Matches(m, MatchBits(false, 3, 1)));
  const RecvMatch any = MakeRecvMatch(1, 0, true, 0);
  EXPECT_TRUE(Matches(any, MatchBits(false, 3, 1)));
}

TEST(RecvMatch, IgnoreBitsAreWildcards) {
  const RecvMatch m = MakeRecvMatch(0xff00, 0x00ff, true, 0);
  EXPECT_TRUE(Matches(m, MatchBits(false, 1, 0xff37)));
  EXPECT_FALSE(Matches(m, MatchBits(false, 1, 0xfe37)));
}

TEST(HdrData, CarriesCookieAndFourBytesOfData) {
  const uint64_t h = HdrData(true, 0x7fffffff, 0x1234567890ULL);
  EXPECT_TRUE(HdrHasData(h));
  EXPECT_EQ(HdrCookie(h), 0x7fffffffU);
  EXPECT_EQ(HdrCqData(h), 0x34567890ULL);  // cq_data_size is 4
  const uint64_t none = HdrData(false, 5, 0xffffffff);
  EXPECT_FALSE(HdrHasData(none));
  EXPECT_EQ(HdrCqData(none), 0U);
  EXPECT_EQ(HdrCookie(none), 5U);
}

}  // namespace
}  // namespace ptl::ofi
