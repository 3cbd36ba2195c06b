// SPDX-License-Identifier: BSD-3-Clause
// The runtime API's environment convention (PTL_MY_RID, PTL_NIDMAP,
// PTL_PIDMAP, PTL_MY_JID) without a kernel.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "rank.h"

namespace {

std::map<std::string, std::string> g_env;

const char* FakeEnv(const char* name) {
  auto it = g_env.find(name);
  return it == g_env.end() ? nullptr : it->second.c_str();
}

TEST(ParseIdMap, ColonSeparatedNumbers) {
  std::vector<uint32_t> v;
  ASSERT_EQ(ptl::ParseIdMap("7:8:0x10:010", &v), PTL_OK);
  EXPECT_EQ(v, (std::vector<uint32_t>{7, 8, 16, 8}));
  ASSERT_EQ(ptl::ParseIdMap("::5::6:", &v), PTL_OK) << "empty entries are skipped";
  EXPECT_EQ(v, (std::vector<uint32_t>{5, 6}));
  ASSERT_EQ(ptl::ParseIdMap("4294967295", &v), PTL_OK);
  EXPECT_EQ(v, (std::vector<uint32_t>{0xffffffffu}));
}

TEST(ParseIdMap, RejectsJunk) {
  std::vector<uint32_t> v;
  EXPECT_EQ(ptl::ParseIdMap("", &v), PTL_FAIL);
  EXPECT_EQ(ptl::ParseIdMap(":::", &v), PTL_FAIL);
  EXPECT_EQ(ptl::ParseIdMap("1:x:2", &v), PTL_FAIL);
  EXPECT_EQ(ptl::ParseIdMap("1,2", &v), PTL_FAIL);
  EXPECT_EQ(ptl::ParseIdMap("-1", &v), PTL_FAIL);
  EXPECT_EQ(ptl::ParseIdMap("4294967296", &v), PTL_FAIL);
}

class GroupFromEnv : public ::testing::Test {
 protected:
  void SetUp() override {
    g_env = {{"PTL_MY_RID", "1"}, {"PTL_NIDMAP", "7:7:9"}, {"PTL_PIDMAP", "100:101:100"}};
  }
  ptl::Group group;
  std::optional<uint32_t> jid;
};

TEST_F(GroupFromEnv, LoadsRankAndMaps) {
  ASSERT_EQ(ptl::GroupFromEnv(FakeEnv, &group, &jid), PTL_OK);
  EXPECT_EQ(group.rank, 1u);
  EXPECT_EQ(group.size, 3u);
  EXPECT_EQ(group.nidmap, (std::vector<uint32_t>{7, 7, 9}));
  EXPECT_EQ(group.pidmap, (std::vector<uint32_t>{100, 101, 100}));
  EXPECT_FALSE(jid.has_value());
}

TEST_F(GroupFromEnv, OptionalJobId) {
  g_env["PTL_MY_JID"] = "42";
  ASSERT_EQ(ptl::GroupFromEnv(FakeEnv, &group, &jid), PTL_OK);
  EXPECT_EQ(jid, 42u);
  g_env["PTL_MY_JID"] = "forty-two";
  EXPECT_EQ(ptl::GroupFromEnv(FakeEnv, &group, &jid), PTL_FAIL);
}

TEST_F(GroupFromEnv, MissingVariablesAreNoInit) {
  for (const char* name : {"PTL_MY_RID", "PTL_NIDMAP", "PTL_PIDMAP"}) {
    SetUp();
    g_env.erase(name);
    EXPECT_EQ(ptl::GroupFromEnv(FakeEnv, &group, &jid), PTL_NO_INIT) << name;
  }
}

TEST_F(GroupFromEnv, InconsistentMapsFail) {
  g_env["PTL_PIDMAP"] = "100:101";
  EXPECT_EQ(ptl::GroupFromEnv(FakeEnv, &group, &jid), PTL_FAIL) << "lengths differ";
  SetUp();
  g_env["PTL_MY_RID"] = "3";
  EXPECT_EQ(ptl::GroupFromEnv(FakeEnv, &group, &jid), PTL_FAIL) << "rank outside the group";
  SetUp();
  g_env["PTL_MY_RID"] = "1:2";
  EXPECT_EQ(ptl::GroupFromEnv(FakeEnv, &group, &jid), PTL_FAIL);
  SetUp();
  g_env["PTL_NIDMAP"] = "7:seven:9";
  EXPECT_EQ(ptl::GroupFromEnv(FakeEnv, &group, &jid), PTL_FAIL);
}

}  // namespace
