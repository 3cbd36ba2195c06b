// Match entries: placement, list order, limits and unlink (spec 6.4).
#include <algorithm>

#include "core_harness.h"

namespace ptltest {
namespace {

class MeTest : public CoreTest {
 protected:
  // Which of the given MEs' MDs takes a zero-length put on portal 0:
  // every MD is one-shot (threshold 1, PTL_RETAIN) so order is visible.
  std::vector<int> DeliveryOrder(const std::vector<ptl_handle_me_t>& mes) {
    std::vector<ptl_handle_md_t> mds;
    for (auto me : mes)
      mds.push_back(A().Attach(me, MakeMd(nullptr, 0, PTL_MD_OP_PUT, 1), PTL_RETAIN));
    ptl_handle_md_t src = A().Bind(MakeMd(nullptr, 0, 0));
    std::vector<int> order;
    for (size_t i = 0; i < mes.size(); i++) {
      Put(A(), A(), PutArgs(src, A().id(), 0, 0, PTL_NO_ACK_REQ));
      for (size_t j = 0; j < mds.size(); j++) {
        ptl_md_t cur;
        EXPECT_EQ(ptlc_md_update(A(), mds[j], &cur, nullptr, 0, nullptr, nullptr, PTL_EQ_NONE, 0),
                  PTL_OK);
        if (cur.threshold == 0 && std::find(order.begin(), order.end(), int(j)) == order.end())
          order.push_back(int(j));
      }
    }
    return order;
  }
};

TEST_F(MeTest, AttachAfterAppendsAndBeforePrepends) {
  ptl_handle_me_t m0 = A().Me(0);
  ptl_handle_me_t m1 = A().Me(0, 0, 0, kAnyId, PTL_UNLINK, PTL_INS_AFTER);
  ptl_handle_me_t m2 = A().Me(0, 0, 0, kAnyId, PTL_UNLINK, PTL_INS_BEFORE);
  EXPECT_EQ(DeliveryOrder({m0, m1, m2}), (std::vector<int>{2, 0, 1}));
}

TEST_F(MeTest, InsertPlacesBesideTheBase) {
  ptl_handle_me_t m0 = A().Me(0), m1 = A().Me(0);
  ptl_handle_me_t before, after;
  ASSERT_EQ(ptlc_me_insert(A(), m1, kAnyId, 0, 0, PTL_UNLINK, PTL_INS_BEFORE, &before), PTL_OK);
  ASSERT_EQ(ptlc_me_insert(A(), m0, kAnyId, 0, 0, PTL_UNLINK, PTL_INS_AFTER, &after), PTL_OK);
  // List: m0, after, before, m1.
  EXPECT_EQ(DeliveryOrder({m0, m1, before, after}), (std::vector<int>{0, 3, 2, 1}));
}

TEST_F(MeTest, InsertOnAStaleBaseIsMeInvalid) {
  ptl_handle_me_t m0 = A().Me(0);
  ASSERT_EQ(ptlc_me_unlink(A(), m0), PTL_OK);
  ptl_handle_me_t out;
  EXPECT_EQ(ptlc_me_insert(A(), m0, kAnyId, 0, 0, PTL_UNLINK, PTL_INS_AFTER, &out), PTL_ME_INVALID);
  EXPECT_EQ(A().Sr(PTL_SR_MES_CUR), 0u);
}

TEST_F(MeTest, PortalIndexBeyondTheTableIsInvalid) {
  ptl_handle_me_t out;
  EXPECT_EQ(
      ptlc_me_attach(A(), PTLC_CAP_PT_INDEX + 1, kAnyId, 0, 0, PTL_UNLINK, PTL_INS_AFTER, &out),
      PTL_PT_INDEX_INVALID);
  EXPECT_EQ(ptlc_me_attach(A(), PTLC_CAP_PT_INDEX, kAnyId, 0, 0, PTL_UNLINK, PTL_INS_AFTER, &out),
            PTL_OK);
}

TEST_F(MeTest, ListLongerThanMaxMeListIsRefusedForAttachAndInsert) {
  ptl_ni_limits_t want{-1, -1, -1, -1, -1, -1, 2, -1};
  Ni ni(2, 1, 1, &want);
  ptl_handle_me_t m0 = ni.Me(5), out;
  ni.Me(5);
  EXPECT_EQ(ptlc_me_attach(ni, 5, kAnyId, 0, 0, PTL_UNLINK, PTL_INS_AFTER, &out),
            PTL_ME_LIST_TOO_LONG);
  EXPECT_EQ(ptlc_me_insert(ni, m0, kAnyId, 0, 0, PTL_UNLINK, PTL_INS_AFTER, &out),
            PTL_ME_LIST_TOO_LONG);
  EXPECT_EQ(ptlc_me_attach(ni, 6, kAnyId, 0, 0, PTL_UNLINK, PTL_INS_AFTER, &out), PTL_OK);
}

TEST_F(MeTest, MoreMesThanMaxMesIsNoSpace) {
  ptl_ni_limits_t want{300, -1, -1, -1, -1, -1, -1, -1};
  Ni ni(2, 1, 1, &want);
  ptl_handle_me_t out;
  for (int i = 0; i < 300; i++)  // crosses a table chunk boundary
    ASSERT_EQ(ptlc_me_attach(ni, i % 4, kAnyId, 0, 0, PTL_UNLINK, PTL_INS_AFTER, &out), PTL_OK)
        << i;
  EXPECT_EQ(ptlc_me_attach(ni, 0, kAnyId, 0, 0, PTL_UNLINK, PTL_INS_AFTER, &out), PTL_NO_SPACE);
  EXPECT_EQ(ni.Sr(PTL_SR_MLIST_LEN(0)), 75u) << "a refused ME is not left on the list";
  EXPECT_EQ(ptlc_me_unlink(ni, out), PTL_OK);
  EXPECT_EQ(ptlc_me_attach(ni, 0, kAnyId, 0, 0, PTL_UNLINK, PTL_INS_AFTER, &out), PTL_OK);
}

TEST_F(MeTest, AttachAnyTakesTheLowestEmptyPortal) {
  ptl_ni_limits_t want{-1, -1, -1, -1, 2, -1, -1, -1};
  Ni ni(2, 1, 1, &want);
  ni.Me(0);
  ptl_pt_index_t pt = 99;
  ptl_handle_me_t a, b, c;
  ASSERT_EQ(ptlc_me_attach_any(ni, &pt, kAnyId, 0, 0, PTL_UNLINK, &a), PTL_OK);
  EXPECT_EQ(pt, 1u);
  ASSERT_EQ(ptlc_me_attach_any(ni, &pt, kAnyId, 0, 0, PTL_UNLINK, &b), PTL_OK);
  EXPECT_EQ(pt, 2u);
  EXPECT_EQ(ptlc_me_attach_any(ni, &pt, kAnyId, 0, 0, PTL_UNLINK, &c), PTL_PT_FULL);
  ASSERT_EQ(ptlc_me_unlink(ni, a), PTL_OK);
  ASSERT_EQ(ptlc_me_attach_any(ni, &pt, kAnyId, 0, 0, PTL_UNLINK, &c), PTL_OK);
  EXPECT_EQ(pt, 1u) << "an emptied portal is free again";
}

TEST_F(MeTest, UnlinkReleasesTheAttachedMdWhateverItsUnlinkOption) {
  ptl_handle_me_t me = A().Me(0);
  int token;
  ptlc_md_spec s = Spec(MakeMd(nullptr, 0, PTL_MD_OP_PUT));
  s.mem = &token;
  ptl_handle_md_t md;
  ASSERT_EQ(ptlc_md_attach(A(), me, &s, PTL_RETAIN, &md), PTL_OK);
  ASSERT_EQ(ptlc_me_unlink(A(), me), PTL_OK);
  EXPECT_FALSE(A().MdLive(md));
  EXPECT_EQ(A().log().released, 1);
  EXPECT_EQ(A().log().released_mem.at(0), &token);
  EXPECT_EQ(ptlc_me_unlink(A(), me), PTL_ME_INVALID);
}

TEST_F(MeTest, UnlinkWhileTheMdHasAnOperationInFlightIsMeInUse) {
  char buf[4];
  ptl_handle_me_t me = A().Me(0);
  A().Attach(me, MakeMd(buf, 4, PTL_MD_OP_PUT));
  ptl_handle_md_t src = A().Bind(MakeMd(buf, 4, 0));
  ptlc_msg out, in;
  ptlc_put_args a = PutArgs(src, A().id(), 0, 0, PTL_NO_ACK_REQ);
  ASSERT_EQ(ptlc_put(A(), &a, false, &out), PTL_OK);
  ptl_hdr hdr = out.hdr;
  ASSERT_EQ(ptlc_receive(A(), &hdr, 0, &in), PTLC_MSG_DEPOSIT);
  EXPECT_EQ(ptlc_me_unlink(A(), me), PTL_ME_IN_USE);
  EXPECT_EQ(ptlc_msg_finalize(&in, PTL_NI_OK), PTLC_MSG_DONE);
  EXPECT_EQ(ptlc_msg_finalize(&out, PTL_NI_OK), PTLC_MSG_DONE);
  EXPECT_EQ(ptlc_me_unlink(A(), me), PTL_OK);
}

}  // namespace
}  // namespace ptltest
