// SPDX-License-Identifier: BSD-3-Clause
#include "parse.h"

#include <gtest/gtest.h>

#include <vector>

namespace ptlctl {
namespace {

TEST(ParseKey, RawBytesOrHexDigitsAndANewline) {
  std::string raw(32, '\0');
  raw[5] = '\n';
  EXPECT_EQ(ParseKey(raw, 32), std::vector<uint8_t>(raw.begin(), raw.end()));
  std::string hex(64, 'a');
  hex[0] = '0';
  hex[1] = 'F';
  auto key = ParseKey(hex + "\n", 32);
  ASSERT_TRUE(key);
  EXPECT_EQ((*key)[0], 0x0f);
  EXPECT_EQ((*key)[31], 0xaa);
  EXPECT_EQ(ParseKey(hex, 32), key);
  EXPECT_FALSE(ParseKey(hex.substr(2) + "\n", 32)) << "31 bytes";
  EXPECT_FALSE(ParseKey(std::string(31, 'x'), 32));
  EXPECT_FALSE(ParseKey(std::string(33, 'x'), 32));
  EXPECT_FALSE(ParseKey("g" + hex.substr(1), 32));
  EXPECT_FALSE(ParseKey(hex + "00\n", 32));
  EXPECT_FALSE(ParseKey("", 32));
}

// ParseU32 and ParseSize32 are tools/lib's (tools/lib/tests/parse_test.cc).

TEST(ParseNid, DottedQuadDecimalAndHexAreTheSameNid) {
  EXPECT_EQ(ParseNid("10.0.0.1"), 167772161u);
  EXPECT_EQ(ParseNid("167772161"), 167772161u);
  EXPECT_EQ(ParseNid("0x0a000001"), 167772161u);
  EXPECT_EQ(ParseNid("7"), 7u);
  EXPECT_EQ(ParseNid("255.255.255.255"), 0xffffffffu);
  for (const char* bad : {"10.0.0", "10.0.0.256", "10.0.0.1.2", "a.b.c.d", "10..0.1", "-7", ""})
    EXPECT_FALSE(ParseNid(bad)) << bad;
}

TEST(FormatNid, DottedFormOnlyWhereItLooksLikeAnAddress) {
  EXPECT_EQ(FormatNid(0x0a000001), "10.0.0.1 (167772161)");
  EXPECT_EQ(FormatNid(7), "7");
  EXPECT_EQ(FormatNid(0x00ffffff), "16777215");
  EXPECT_EQ(FormatNid(0xffffffff), "any");
  EXPECT_EQ(NidToDotted(7), "0.0.0.7");
}

TEST(ParseLladdr, HexBytesWithColonsOrDashes) {
  std::vector<uint8_t> mac = {0x02, 0x00, 0x0a, 0x00, 0x00, 0x01};
  EXPECT_EQ(ParseLladdr("02:00:0a:00:00:01"), mac);
  EXPECT_EQ(ParseLladdr("2:0:A:0:0:1"), mac);
  EXPECT_EQ(ParseLladdr("02-00-0a-00-00-01"), mac);
  EXPECT_EQ(FormatLladdr(mac), "02:00:0a:00:00:01");
  EXPECT_EQ(ParseLladdr("ff"), std::vector<uint8_t>{0xff});
  std::string longest = "00";
  for (int i = 1; i < 32; ++i) longest += ":00";
  EXPECT_TRUE(ParseLladdr(longest));
  EXPECT_FALSE(ParseLladdr(longest + ":00"));  // MAX_ADDR_LEN is 32
  for (const char* bad : {"", ":", "02:", ":02", "020", "0g", "02::00", "02:00 "})
    EXPECT_FALSE(ParseLladdr(bad)) << bad;
}

TEST(ParseEthertype, TypesStartAt0x0600) {
  EXPECT_EQ(ParseEthertype("0x88b5"), 0x88b5);
  EXPECT_EQ(ParseEthertype("34997"), 0x88b5);
  EXPECT_EQ(ParseEthertype("0x0600"), 0x0600);
  EXPECT_FALSE(ParseEthertype("0x05ff"));
  EXPECT_FALSE(ParseEthertype("0x10000"));
}

TEST(ParsePidRange, OnePidOrFirstDashLast) {
  EXPECT_EQ(ParsePidRange("100"), (PidRange{100, 100}));
  EXPECT_EQ(ParsePidRange("100-109"), (PidRange{100, 109}));
  EXPECT_EQ(ParsePidRange("0-65534"), (PidRange{0, 65534}));
  for (const char* bad : {"", "109-100", "100-", "-5", "65535", "1-65535", "a-b", "1-2-3"})
    EXPECT_FALSE(ParsePidRange(bad)) << bad;
}

TEST(ParseUid, NumbersAndUserNames) {
  EXPECT_EQ(ParseUid("0"), 0u);
  EXPECT_EQ(ParseUid("65534"), 65534u);
  EXPECT_EQ(ParseUid("root"), 0u);
  EXPECT_FALSE(ParseUid("4294967295"));  // (uid_t)-1 is no uid
  EXPECT_FALSE(ParseUid("no-such-user-ptlctl"));
  EXPECT_FALSE(ParseUid(""));
  EXPECT_EQ(UserName(0), "root");
}

TEST(Printable, ControlAndNonAsciiBytesBecomeQuestionMarks) {
  EXPECT_EQ(Printable("ptl_hello"), "ptl_hello");
  EXPECT_EQ(Printable("a\x1b[2Jb\xff"), "a?[2Jb?");
}

}  // namespace
}  // namespace ptlctl
