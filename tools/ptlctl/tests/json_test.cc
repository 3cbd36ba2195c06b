// SPDX-License-Identifier: BSD-3-Clause
#include "json.h"

#include <gtest/gtest.h>

namespace ptlctl {
namespace {

TEST(JsonWriter, CompactObjectsAndArrays) {
  JsonWriter w;
  w.BeginArray();
  w.BeginObject().Field("iface", 0u).Field("ifname", "veth0").Key("flags").BeginArray();
  w.Value("static").EndArray().Key("up").Bool(true).EndObject();
  w.BeginObject().EndObject();
  w.EndArray();
  EXPECT_EQ(w.str(), R"([{"iface":0,"ifname":"veth0","flags":["static"],"up":true},{}])");
}

TEST(JsonWriter, PrettyIndentsByTwo) {
  JsonWriter w(true);
  w.BeginArray().BeginObject().Field("a", 1u).Key("s").BeginObject().Field("b", 2u);
  w.EndObject().EndObject().EndArray();
  EXPECT_EQ(w.str(), "[\n  {\n    \"a\": 1,\n    \"s\": {\n      \"b\": 2\n    }\n  }\n]");
}

TEST(JsonWriter, EmptyContainersStayOnOneLineWhenPretty) {
  JsonWriter w(true);
  w.BeginArray().EndArray();
  EXPECT_EQ(w.str(), "[]");
}

TEST(JsonQuote, EscapesQuotesBackslashesAndControls) {
  EXPECT_EQ(JsonWriter::Quote("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(JsonWriter::Quote("\n\t\r\x01\x7f"), R"("\n\t\r\u0001\u007f")");
}

TEST(JsonQuote, KeepsValidUtf8AndReplacesInvalidBytes) {
  EXPECT_EQ(JsonWriter::Quote("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
  EXPECT_EQ(JsonWriter::Quote("\xf0\x9f\x99\x82"), "\"\xf0\x9f\x99\x82\"");
  EXPECT_EQ(JsonWriter::Quote("a\xff"), R"("a\ufffd")");
  EXPECT_EQ(JsonWriter::Quote("\xc3"), R"("\ufffd")");                      // truncated
  EXPECT_EQ(JsonWriter::Quote("\xc0\xaf"), R"("\ufffd\ufffd")");            // overlong
  EXPECT_EQ(JsonWriter::Quote("\xed\xa0\x80"), R"("\ufffd\ufffd\ufffd")");  // surrogate
}

TEST(JsonWriter, LargeCountersAreExact) {
  JsonWriter w;
  w.BeginObject().Field("tx_bytes", uint64_t{18446744073709551615ULL}).EndObject();
  EXPECT_EQ(w.str(), R"({"tx_bytes":18446744073709551615})");
}

}  // namespace
}  // namespace ptlctl
