// SPDX-License-Identifier: BSD-3-Clause
// Library behaviour that does not depend on the kernel: argument checks and
// the not-initialised state. PTL_DEVICE points at a path that cannot exist.
#include <gtest/gtest.h>
#include <p3nal_linux.h>
#include <portals3.h>

#include <cstdlib>

namespace {

class LibraryWithoutDevice : public ::testing::Test {
 protected:
  void SetUp() override { setenv("PTL_DEVICE", "/nonexistent/portals", 1); }
  void TearDown() override {
    PtlFini();
    unsetenv("PTL_DEVICE");
  }
};

TEST_F(LibraryWithoutDevice, InitFailsCleanlyWhenTheModuleIsAbsent) {
  int max_ifaces = -1;
  EXPECT_EQ(PtlInit(&max_ifaces), PTL_FAIL);
  EXPECT_EQ(max_ifaces, -1);
}

TEST_F(LibraryWithoutDevice, InitWithNullArgumentIsSegv) { EXPECT_EQ(PtlInit(nullptr), PTL_SEGV); }

TEST_F(LibraryWithoutDevice, CallsBeforeInitAreNoInit) {
  ptl_handle_ni_t ni = 0;
  ptl_process_id_t id;
  ptl_uid_t uid;
  ptl_jid_t jid;
  EXPECT_EQ(PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, nullptr, nullptr, &ni), PTL_NO_INIT);
  EXPECT_EQ(PtlNIFini(ni), PTL_NO_INIT);
  EXPECT_EQ(PtlGetId(ni, &id), PTL_NO_INIT);
  EXPECT_EQ(PtlGetUid(ni, &uid), PTL_NO_INIT);
  EXPECT_EQ(PtlGetJid(ni, &jid), PTL_NO_INIT);
}

TEST_F(LibraryWithoutDevice, NullOutputPointersAreSegvBeforeAnythingElse) {
  EXPECT_EQ(PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, nullptr, nullptr, nullptr), PTL_SEGV);
  EXPECT_EQ(PtlGetId(0, nullptr), PTL_SEGV);
  EXPECT_EQ(PtlGetUid(0, nullptr), PTL_SEGV);
  EXPECT_EQ(PtlGetJid(0, nullptr), PTL_SEGV);
}

TEST_F(LibraryWithoutDevice, FiniWithoutInitIsHarmless) {
  PtlFini();
  PtlFini();
  ptl_process_id_t id;
  EXPECT_EQ(PtlGetId(0, &id), PTL_NO_INIT);
}

}  // namespace
