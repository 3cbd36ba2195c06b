// SPDX-License-Identifier: BSD-3-Clause
// Die and Message: the prefix, the level, one line, the exit status.
#include "ptl_tool/die.h"

#include <gtest/gtest.h>

#include "ptl_tool/parse.h"

namespace ptl::tool {
namespace {

TEST(DieDeathTest, PrefixMessageNewlineAndStatusOne) {
  EXPECT_EXIT(
      {
        SetMessagePrefix("ptl_perf [ping]: ");
        Die("bad size '%s'", "12x");
      },
      testing::ExitedWithCode(1), "^ptl_perf \\[ping\\]: bad size '12x'\n$");
}

TEST(DieDeathTest, DieWithChoosesTheStatus) {
  EXPECT_EXIT(
      {
        SetMessagePrefix("ptl_stress [client 3]: ");
        DieWith(2, "%d of %s", 3, "many");
      },
      testing::ExitedWithCode(2), "^ptl_stress \\[client 3\\]: 3 of many\n$");
}

TEST(DieDeathTest, LongMessagesAreNotCut) {
  std::string long_text(5000, 'x');
  EXPECT_EXIT(Die("%s!", long_text.c_str()), testing::ExitedWithCode(1), long_text + "!\n$");
}

TEST(DieDeathTest, ParseOrDieNamesTheBadValue) {
  EXPECT_EQ(ParseSizeOrDie("64K"), 65536u);
  EXPECT_EQ(ParseU32OrDie("0x10", "iface"), 16u);
  SetMessagePrefix("ptl_perf [ptl_perf]: ");
  EXPECT_EXIT(ParseSizeOrDie("12x"), testing::ExitedWithCode(1),
              "^ptl_perf \\[ptl_perf\\]: bad size '12x'\n$");
  EXPECT_EXIT(ParseU32OrDie("-1", "iface"), testing::ExitedWithCode(1), "bad iface '-1'\n$");
  SetMessagePrefix("");
}

TEST(Message, PutsTheLevelAfterThePrefix) {
  SetMessagePrefix("tool [who]: ");
  testing::internal::CaptureStderr();
  Message("ERROR: ", "lost %u", 7u);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "tool [who]: ERROR: lost 7\n");
  EXPECT_EQ(MessagePrefix(), "tool [who]: ");
  SetMessagePrefix("");
}

}  // namespace
}  // namespace ptl::tool
