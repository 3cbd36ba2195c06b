// SPDX-License-Identifier: BSD-3-Clause
// Library behaviour that does not depend on the kernel: argument checks and
// the not-initialised state. PTL_DEVICE points at a path that cannot exist.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <p3api/debug.h>
#include <p3nal_linux.h>
#include <p3rt/p3rt.h>
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
  ptl_md_t md{};
  ptl_handle_me_t me;
  ptl_handle_md_t mdh;
  ptl_process_id_t any{PTL_NID_ANY, PTL_PID_ANY};
  EXPECT_EQ(PtlMEMDPost(0, any, 0, 0, PTL_UNLINK, PTL_INS_BEFORE, md, PTL_UNLINK, PTL_EQ_NONE,
                        nullptr, &mdh),
            PTL_SEGV);
  EXPECT_EQ(PtlMEMDPost(0, any, 0, 0, PTL_UNLINK, PTL_INS_BEFORE, md, PTL_UNLINK, PTL_EQ_NONE, &me,
                        nullptr),
            PTL_SEGV);
}

TEST_F(LibraryWithoutDevice, EveryCallBeforeInitIsNoInit) {
  const ptl_process_id_t any = {PTL_NID_ANY, PTL_PID_ANY};
  ptl_handle_any_t h = 0;
  ptl_pt_index_t pt = 0;
  ptl_sr_value_t sr;
  unsigned long dist;
  ptl_md_t md{};
  ptl_event_t ev;
  int which = -1;
  unsigned rank, size;
  ptl_nid_t nids[1];
  ptl_pid_t pids[1];
  ptl_process_id_t id;
  EXPECT_EQ(PtlNIStatus(h, PTL_SR_DROP_COUNT, &sr), PTL_NO_INIT);
  EXPECT_EQ(PtlNIDist(h, any, &dist), PTL_NO_INIT);
  EXPECT_EQ(PtlNIHandle(h, &h), PTL_NO_INIT);
  EXPECT_EQ(PtlMEAttach(h, 0, any, 0, 0, PTL_RETAIN, PTL_INS_AFTER, &h), PTL_NO_INIT);
  EXPECT_EQ(PtlMEAttachAny(h, &pt, any, 0, 0, PTL_RETAIN, &h), PTL_NO_INIT);
  EXPECT_EQ(PtlMEInsert(h, any, 0, 0, PTL_RETAIN, PTL_INS_AFTER, &h), PTL_NO_INIT);
  EXPECT_EQ(PtlMEUnlink(h), PTL_NO_INIT);
  EXPECT_EQ(PtlMDAttach(h, md, PTL_RETAIN, &h), PTL_NO_INIT);
  EXPECT_EQ(PtlMDBind(h, md, PTL_RETAIN, &h), PTL_NO_INIT);
  EXPECT_EQ(PtlMDUnlink(h), PTL_NO_INIT);
  EXPECT_EQ(PtlMDUpdate(h, &md, &md, PTL_EQ_NONE), PTL_NO_INIT);
  EXPECT_EQ(PtlMDUpdate(h, nullptr, nullptr, PTL_EQ_NONE), PTL_NO_INIT);
  EXPECT_EQ(
      PtlMEMDPost(h, any, 0, 0, PTL_UNLINK, PTL_INS_BEFORE, md, PTL_UNLINK, PTL_EQ_NONE, &h, &h),
      PTL_NO_INIT);
  EXPECT_EQ(PtlEQAlloc(h, 8, PTL_EQ_HANDLER_NONE, &h), PTL_NO_INIT);
  EXPECT_EQ(PtlEQAlloc(h, 0, PTL_EQ_HANDLER_NONE, &h), PTL_NO_INIT);
  EXPECT_EQ(PtlEQFree(h), PTL_NO_INIT);
  EXPECT_EQ(PtlEQGet(h, &ev), PTL_NO_INIT);
  EXPECT_EQ(PtlEQWait(h, &ev), PTL_NO_INIT);
  EXPECT_EQ(PtlEQPoll(&h, 1, 0, &ev, &which), PTL_NO_INIT);
  EXPECT_EQ(PtlEQPoll(&h, 0, 0, &ev, &which), PTL_NO_INIT) << "NO_INIT before size checks";
  EXPECT_EQ(which, -1);
  EXPECT_EQ(PtlACEntry(h, 0, any, PTL_UID_ANY, PTL_JID_ANY, PTL_PT_INDEX_ANY), PTL_NO_INIT);
  EXPECT_EQ(PtlPut(h, PTL_ACK_REQ, any, 0, 0, 0, 0, 0), PTL_NO_INIT);
  EXPECT_EQ(PtlPutRegion(h, 0, 0, PTL_NO_ACK_REQ, any, 0, 0, 0, 0, 0), PTL_NO_INIT);
  EXPECT_EQ(PtlGet(h, any, 0, 0, 0, 0), PTL_NO_INIT);
  EXPECT_EQ(PtlGetRegion(h, 0, 0, any, 0, 0, 0, 0), PTL_NO_INIT);
  EXPECT_EQ(PtlGetPut(h, h, any, 0, 0, 0, 0, 0), PTL_NO_INIT);
  EXPECT_EQ(PtlSetRank(PTL_INVALID_HANDLE, ~0U, ~0U), PTL_NO_INIT);
  EXPECT_EQ(PtlSetRank(PTL_INVALID_HANDLE, 0, 1), PTL_NO_INIT);
  EXPECT_EQ(PtlSetNIDMap(PTL_INVALID_HANDLE, nids, 1), PTL_NO_INIT);
  EXPECT_EQ(PtlSetPIDMap(PTL_INVALID_HANDLE, pids, 1), PTL_NO_INIT);
  EXPECT_EQ(PtlGetRank(PTL_INVALID_HANDLE, &rank, &size), PTL_NO_INIT);
  EXPECT_EQ(PtlGetRankId(PTL_INVALID_HANDLE, 0, &id), PTL_NO_INIT);
  EXPECT_EQ(PtlGetNIDMap(PTL_INVALID_HANDLE, nids, 1), PTL_NO_INIT);
  EXPECT_EQ(PtlGetPIDMap(PTL_INVALID_HANDLE, pids, 1), PTL_NO_INIT);
  EXPECT_EQ(PtlSetJID(5), PTL_NO_INIT);
  EXPECT_EQ(PtlTblDump(h, 0), PTL_NO_INIT);
  EXPECT_EQ(PtlMEDump(h), PTL_NO_INIT);
  EXPECT_EQ(PtlNIEqDump(h), PTL_NO_INIT);
  EXPECT_EQ(PtlNIDebug(h, PTL_DBG_ALL), PTL_DBG_NONE);
}

TEST_F(LibraryWithoutDevice, EveryNullOutputIsSegvBeforeNoInit) {
  const ptl_process_id_t any = {PTL_NID_ANY, PTL_PID_ANY};
  ptl_handle_any_t h = 0;
  ptl_pt_index_t pt = 0;
  ptl_event_t ev;
  int which = -1;
  unsigned rank;
  ptl_md_t md{};
  EXPECT_EQ(PtlNIStatus(h, PTL_SR_DROP_COUNT, nullptr), PTL_SEGV);
  EXPECT_EQ(PtlNIDist(h, any, nullptr), PTL_SEGV);
  EXPECT_EQ(PtlNIHandle(h, nullptr), PTL_SEGV);
  EXPECT_EQ(PtlMEAttach(h, 0, any, 0, 0, PTL_RETAIN, PTL_INS_AFTER, nullptr), PTL_SEGV);
  EXPECT_EQ(PtlMEAttachAny(h, nullptr, any, 0, 0, PTL_RETAIN, &h), PTL_SEGV);
  EXPECT_EQ(PtlMEAttachAny(h, &pt, any, 0, 0, PTL_RETAIN, nullptr), PTL_SEGV);
  EXPECT_EQ(PtlMEInsert(h, any, 0, 0, PTL_RETAIN, PTL_INS_AFTER, nullptr), PTL_SEGV);
  EXPECT_EQ(PtlMDAttach(h, md, PTL_RETAIN, nullptr), PTL_SEGV);
  EXPECT_EQ(PtlMDBind(h, md, PTL_RETAIN, nullptr), PTL_SEGV);
  EXPECT_EQ(PtlEQAlloc(h, 8, PTL_EQ_HANDLER_NONE, nullptr), PTL_SEGV);
  EXPECT_EQ(PtlEQGet(h, nullptr), PTL_SEGV);
  EXPECT_EQ(PtlEQWait(h, nullptr), PTL_SEGV);
  EXPECT_EQ(PtlEQPoll(nullptr, 1, 0, &ev, &which), PTL_SEGV);
  EXPECT_EQ(PtlEQPoll(&h, 1, 0, nullptr, &which), PTL_SEGV);
  EXPECT_EQ(PtlEQPoll(&h, 1, 0, &ev, nullptr), PTL_SEGV);
  EXPECT_EQ(PtlGetRank(PTL_INVALID_HANDLE, &rank, nullptr), PTL_SEGV);
  EXPECT_EQ(PtlGetRank(PTL_INVALID_HANDLE, nullptr, &rank), PTL_SEGV);
  EXPECT_EQ(PtlGetRankId(PTL_INVALID_HANDLE, 0, nullptr), PTL_SEGV);
  EXPECT_EQ(PtlSetNIDMap(PTL_INVALID_HANDLE, nullptr, 1), PTL_SEGV);
  EXPECT_EQ(PtlSetPIDMap(PTL_INVALID_HANDLE, nullptr, 1), PTL_SEGV);
  EXPECT_EQ(PtlGetNIDMap(PTL_INVALID_HANDLE, nullptr, 1), PTL_SEGV);
  EXPECT_EQ(PtlGetPIDMap(PTL_INVALID_HANDLE, nullptr, 1), PTL_SEGV);
}

TEST_F(LibraryWithoutDevice, LauncherDescriptorThatIsNotPortalsIsIgnored) {
  // PTL_FD naming stdin (not /dev/portals) must neither be used nor closed.
  setenv("PTL_FD", "0", 1);
  int max_ifaces = -1;
  EXPECT_EQ(PtlInit(&max_ifaces), PTL_FAIL);
  EXPECT_NE(fcntl(0, F_GETFD), -1) << "stdin was closed";
  unsetenv("PTL_FD");
}

TEST_F(LibraryWithoutDevice, FiniWithoutInitIsHarmless) {
  PtlFini();
  PtlFini();
  ptl_process_id_t id;
  EXPECT_EQ(PtlGetId(0, &id), PTL_NO_INIT);
}

}  // namespace
