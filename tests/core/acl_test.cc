// Access control (6.7, 8.11): wildcards, denials, counters.
#include "core_harness.h"

namespace ptltest {
namespace {

class AclTest : public CoreTest {
 protected:
  void SetUp() override {
    CoreTest::SetUp();
    A().Attach(A().Me(3), MakeMd(nullptr, 0, PTL_MD_OP_PUT));
    A().Attach(A().Me(4), MakeMd(nullptr, 0, PTL_MD_OP_PUT));
    src_ = B().Bind(MakeMd(nullptr, 0, 0));
  }
  ptlc_drop PutVia(ptl_ac_index_t ac, ptl_pt_index_t pt = 3) {
    ptlc_put_args a = PutArgs(src_, A().id(), pt, 0, PTL_NO_ACK_REQ);
    a.ac_index = ac;
    return Put(B(), A(), a).drop;
  }
  ptl_handle_md_t src_;
};

TEST_F(AclTest, DefaultEntriesAdmitTheSameUserFromAnywhere) {
  EXPECT_EQ(PutVia(0), PTLC_DROP_NONE);
  EXPECT_EQ(PutVia(PTLC_CAP_AC_INDEX), PTLC_DROP_NONE);
}

TEST_F(AclTest, DefaultEntriesRejectAnotherUser) {
  Ni other(2, 12, 22, nullptr, kUid + 1);
  ptl_handle_md_t md = other.Bind(MakeMd(nullptr, 0, 0));
  ptlc_put_args a = PutArgs(md, A().id(), 3, 0, PTL_NO_ACK_REQ);
  EXPECT_EQ(Put(other, A(), a).drop, PTLC_DROP_ACL);
  EXPECT_EQ(A().Sr(PTLC_SR_PERM_VIOLATIONS), 1u);
  EXPECT_EQ(A().Sr(PTL_SR_DROP_COUNT), 1u);
}

TEST_F(AclTest, EveryFieldIsCheckedUnlessWildcarded) {
  ptl_process_id_t b = B().id();
  struct Case {
    ptl_process_id_t id;
    ptl_uid_t uid;
    ptl_jid_t jid;
    ptl_pt_index_t pt;
    bool pass;
  } cases[] = {
      {{PTL_NID_ANY, PTL_PID_ANY}, PTL_UID_ANY, PTL_JID_ANY, PTL_PT_INDEX_ANY, true},
      {{b.nid, b.pid}, kUid, kJid, 3, true},
      {{b.nid + 1, PTL_PID_ANY}, PTL_UID_ANY, PTL_JID_ANY, PTL_PT_INDEX_ANY, false},
      {{PTL_NID_ANY, b.pid + 1}, PTL_UID_ANY, PTL_JID_ANY, PTL_PT_INDEX_ANY, false},
      {{PTL_NID_ANY, PTL_PID_ANY}, kUid + 1, PTL_JID_ANY, PTL_PT_INDEX_ANY, false},
      {{PTL_NID_ANY, PTL_PID_ANY}, PTL_UID_ANY, kJid + 1, PTL_PT_INDEX_ANY, false},
      {{PTL_NID_ANY, PTL_PID_ANY}, PTL_UID_ANY, PTL_JID_ANY, 4, false},
  };
  int denied = 0;
  for (const auto& c : cases) {
    ASSERT_EQ(ptlc_ac_entry(A(), 1, c.id, c.uid, c.jid, c.pt), PTL_OK);
    EXPECT_EQ(PutVia(1) == PTLC_DROP_NONE, c.pass) << "case " << (&c - cases);
    denied += !c.pass;
  }
  EXPECT_EQ(A().Sr(PTLC_SR_PERM_VIOLATIONS), ptl_sr_value_t(denied));
}

TEST_F(AclTest, PortalRestrictionAppliesPerEntry) {
  ASSERT_EQ(ptlc_ac_entry(A(), 2, kAnyId, PTL_UID_ANY, PTL_JID_ANY, 4), PTL_OK);
  EXPECT_EQ(PutVia(2, 4), PTLC_DROP_NONE);
  EXPECT_EQ(PutVia(2, 3), PTLC_DROP_ACL);
}

TEST_F(AclTest, EntryArgumentsAreRangeChecked) {
  EXPECT_EQ(ptlc_ac_entry(A(), PTLC_CAP_AC_INDEX + 1, kAnyId, 0, 0, 0), PTL_AC_INDEX_INVALID);
  EXPECT_EQ(ptlc_ac_entry(A(), 0, kAnyId, 0, 0, PTLC_CAP_PT_INDEX + 1), PTL_PT_INDEX_INVALID);
  EXPECT_EQ(ptlc_ac_entry(A(), 0, kAnyId, 0, 0, PTL_PT_INDEX_ANY), PTL_OK);
}

}  // namespace
}  // namespace ptltest
