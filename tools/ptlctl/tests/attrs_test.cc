// SPDX-License-Identifier: BSD-3-Clause
#include "attrs.h"

#include <gtest/gtest.h>
#include <linux/netlink.h>

namespace ptlctl {
namespace {

TEST(EncodeAttrs, HeaderPayloadAndPaddingLikeTheKernel) {
  std::vector<uint8_t> bytes = EncodeAttrs({U32Attr(2, 0x01020304), StringAttr(6, "ab")});
  std::vector<uint8_t> expect = {8, 0, 2, 0, 4,   3,   2, 1,   // u32, host order (little-endian)
                                 7, 0, 6, 0, 'a', 'b', 0, 0};  // "ab\0" padded to 4
  EXPECT_EQ(bytes, expect);
}

TEST(ParseAttrs, RoundTripsAndMasksTheNestedFlag) {
  std::vector<uint8_t> bytes = EncodeAttrs(
      {U8Attr(4, 1), U16Attr(10, 0x88b5), U64Attr(3, 1ULL << 40), NestAttr(13, {U64Attr(2, 5)})});
  auto attrs = ParseAttrs(bytes);
  ASSERT_EQ(attrs.size(), 4u);
  EXPECT_EQ(attrs[0].U8(), 1);
  EXPECT_EQ(attrs[1].U16(), 0x88b5);
  EXPECT_EQ(attrs[2].U64(), 1ULL << 40);
  EXPECT_EQ(attrs[3].type, 13);  // without NLA_F_NESTED
  auto inner = ParseAttrs(attrs[3].payload);
  ASSERT_EQ(inner.size(), 1u);
  EXPECT_EQ(inner[0].U64(), 5u);
}

TEST(AttrView, WrongSizeIsAbsentButU32WidensToU64) {
  std::vector<uint8_t> bytes = EncodeAttrs({U16Attr(2, 7), U32Attr(3, 9)});
  auto attrs = ParseAttrs(bytes);
  ASSERT_EQ(attrs.size(), 2u);
  EXPECT_FALSE(attrs[0].U32());
  EXPECT_FALSE(attrs[0].U8());
  EXPECT_FALSE(attrs[1].U16());
  EXPECT_EQ(attrs[1].U64(), 9u);
}

TEST(ParseAttrs, StopsAtATruncatedOrMalformedAttribute) {
  std::vector<uint8_t> bytes = EncodeAttrs({U32Attr(2, 1), U32Attr(3, 2)});
  auto whole = ParseAttrs(bytes);
  EXPECT_EQ(whole.size(), 2u);
  bytes.resize(bytes.size() - 2);  // the second one is cut
  EXPECT_EQ(ParseAttrs(bytes).size(), 1u);
  bytes[8] = 2;  // its length now says less than a header
  EXPECT_EQ(ParseAttrs(bytes).size(), 1u);
  EXPECT_TRUE(ParseAttrs({}).empty());
}

TEST(AttrView, StringsLoseTheirTrailingNul) {
  std::vector<uint8_t> bytes = EncodeAttrs({StringAttr(6, "veth0")});
  auto attrs = ParseAttrs(bytes);
  ASSERT_EQ(attrs.size(), 1u);
  EXPECT_EQ(attrs[0].String(), "veth0");
  EXPECT_EQ(attrs[0].payload.size(), 6u);
}

}  // namespace
}  // namespace ptlctl
