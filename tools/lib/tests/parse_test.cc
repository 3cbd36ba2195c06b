// SPDX-License-Identifier: BSD-3-Clause
// Numbers and sizes: decimal and hex, never octal, no signs or blanks,
// suffixes, and overflow refused rather than wrapped.
#include "ptl_tool/parse.h"

#include <gtest/gtest.h>

namespace ptl::tool {
namespace {

TEST(ParseU64, DecimalAndHexWithoutOctalOrSigns) {
  EXPECT_EQ(ParseU64("0"), 0u);
  EXPECT_EQ(ParseU64("010"), 10u);  // never octal
  EXPECT_EQ(ParseU64("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(ParseU64("0xffffffffffffffff"), UINT64_MAX);
  EXPECT_EQ(ParseU64("0XFF"), 255u);
  EXPECT_EQ(ParseU64("0x000000000000000000ff"), 255u);  // leading zeros are fine
  for (const char* bad : {"", "-1", "+1", " 1", "1 ", "0x", "0x-1", "0x+1", "0x1g", "1e3", "x1",
                          "18446744073709551616", "0x10000000000000000"})
    EXPECT_FALSE(ParseU64(bad)) << bad;
}

TEST(ParseU32, RefusesWhatDoesNotFit) {
  EXPECT_EQ(ParseU32("4294967295"), 4294967295u);
  EXPECT_EQ(ParseU32("0x0a000001"), 0x0a000001u);
  EXPECT_EQ(ParseU32("0x00000000ff"), 255u);
  for (const char* bad : {"4294967296", "0x100000000", "99999999999999999999", "-1"})
    EXPECT_FALSE(ParseU32(bad)) << bad;
}

TEST(ParseSize, BinarySuffixesInEitherCase) {
  EXPECT_EQ(ParseSize("0"), 0u);
  EXPECT_EQ(ParseSize("4096"), 4096u);
  EXPECT_EQ(ParseSize("64K"), 65536u);
  EXPECT_EQ(ParseSize("64k"), 65536u);
  EXPECT_EQ(ParseSize("1M"), 1u << 20);
  EXPECT_EQ(ParseSize("1m"), 1u << 20);
  EXPECT_EQ(ParseSize("1MiB"), 1u << 20);
  EXPECT_EQ(ParseSize("4kB"), 4096u);
  EXPECT_EQ(ParseSize("4096B"), 4096u);
  EXPECT_EQ(ParseSize("2G"), uint64_t{2} << 30);
  EXPECT_EQ(ParseSize("0x10"), 16u);
  EXPECT_EQ(ParseSize("0x10K"), 16u << 10);
  EXPECT_EQ(ParseSize("0x1B"), 27u) << "in hex B is a digit";
}

TEST(ParseSize, RefusesBadSuffixesAndOverflow) {
  for (const char* bad : {"", "K", "B", "iB", "KiB", "12x", "1T", "1KK", "1 K", "-1", "+1", "1.5K",
                          "99999999999999999999", "16777216T", "17179869184G", "18014398509481984K",
                          "0xffffffffffffffffK"})
    EXPECT_FALSE(ParseSize(bad)) << bad;
  EXPECT_EQ(ParseSize("17179869183G"), uint64_t{17179869183} << 30) << "the largest that fits";
}

TEST(ParseSize32, LimitsTo32Bits) {
  EXPECT_EQ(ParseSize32("8K"), 8192u);
  EXPECT_EQ(ParseSize32("4095M"), 4095u << 20);
  EXPECT_EQ(ParseSize32("1G"), 1u << 30);
  EXPECT_FALSE(ParseSize32("4096M"));  // 2^32
  EXPECT_FALSE(ParseSize32("4G"));
  EXPECT_FALSE(ParseSize32("K"));
}

TEST(ParseSizeList, CommaSeparatedNoneEmpty) {
  EXPECT_EQ(ParseSizeList("0,4K,1M"), (std::vector<uint64_t>{0, 4096, 1 << 20}));
  EXPECT_EQ(ParseSizeList("7"), (std::vector<uint64_t>{7}));
  EXPECT_FALSE(ParseSizeList("1,,2"));
  EXPECT_FALSE(ParseSizeList(""));
  EXPECT_FALSE(ParseSizeList("1,x"));
}

TEST(SplitList, DropsEmptyPieces) {
  EXPECT_EQ(SplitList("a,,b,"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(SplitList("1:2", ':'), (std::vector<std::string>{"1", "2"}));
  EXPECT_TRUE(SplitList("").empty());
  EXPECT_TRUE(SplitList(",,").empty());
}

}  // namespace
}  // namespace ptl::tool
