// SPDX-License-Identifier: BSD-3-Clause
// JSON: nesting, pretty printing, escaping and numbers.
#include "ptl_tool/json.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace ptl::tool {
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
  EXPECT_EQ(JsonQuote("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(JsonQuote("\n\t\r\x01\x7f"), R"("\n\t\r\u0001\u007f")");
}

TEST(JsonQuote, KeepsValidUtf8AndReplacesInvalidBytes) {
  EXPECT_EQ(JsonQuote("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
  EXPECT_EQ(JsonQuote("\xf0\x9f\x99\x82"), "\"\xf0\x9f\x99\x82\"");
  EXPECT_EQ(JsonQuote("a\xff"), R"("a\ufffd")");
  EXPECT_EQ(JsonQuote("\xc3"), R"("\ufffd")");                      // truncated
  EXPECT_EQ(JsonQuote("\xc0\xaf"), R"("\ufffd\ufffd")");            // overlong
  EXPECT_EQ(JsonQuote("\xed\xa0\x80"), R"("\ufffd\ufffd\ufffd")");  // surrogate
}

TEST(JsonWriter, LargeCountersAreExact) {
  JsonWriter w;
  w.BeginObject().Field("tx_bytes", uint64_t{18446744073709551615ULL}).EndObject();
  EXPECT_EQ(w.str(), R"({"tx_bytes":18446744073709551615})");
}

TEST(JsonWriter, SignedRealFixedNullAndRaw) {
  JsonWriter w;
  w.BeginArray().Int(-5).Real(1.5).Real(1e21).Fixed(2.0 / 3, 3).Null().Raw(R"({"x":[]})");
  w.Real(std::numeric_limits<double>::quiet_NaN())
      .Fixed(-std::numeric_limits<double>::infinity(), 3);
  w.EndArray();
  EXPECT_EQ(w.str(), R"([-5,1.5,1e+21,0.667,null,{"x":[]},null,null])");
}

TEST(JsonObject, FlatMembersInOrderWithEscapes) {
  std::string s = JsonObject()
                      .Add("a", uint64_t{1})
                      .Add("b", "x\"y\\z\n")
                      .Add("c", true)
                      .Add("d", 1.5)
                      .Add("n", -2)
                      .AddFixed("t", 0.1234, 3)
                      .AddRaw("e", "[1,2]")
                      .Add("k\"", std::string_view("v"))
                      .str();
  EXPECT_EQ(s, R"({"a":1,"b":"x\"y\\z\n","c":true,"d":1.5,"n":-2,"t":0.123,"e":[1,2],"k\"":"v"})");
  EXPECT_EQ(JsonObject().str(), "{}");
}

TEST(JsonObject, NestsThroughRaw) {
  std::string inner = JsonObject().Add("lost", uint64_t{0}).str();
  EXPECT_EQ(JsonObject().AddRaw("errors", inner).Add("ok", false).str(),
            R"({"errors":{"lost":0},"ok":false})");
}

}  // namespace
}  // namespace ptl::tool
