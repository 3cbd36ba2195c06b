// NI creation, limits negotiation, status registers and teardown.
#include "core_harness.h"

namespace ptltest {
namespace {

class NiTest : public CoreTest {};

TEST_F(NiTest, NoWishesGiveTheCoreCaps) {
  ptl_ni_limits_t l;
  ptlc_ni_limits(A(), &l);
  EXPECT_EQ(l.max_mes, PTLC_CAP_OBJECTS);
  EXPECT_EQ(l.max_mds, PTLC_CAP_OBJECTS);
  EXPECT_EQ(l.max_eqs, PTLC_CAP_OBJECTS);
  EXPECT_EQ(l.max_pt_index, PTLC_CAP_PT_INDEX);
  EXPECT_EQ(l.max_ac_index, PTLC_CAP_AC_INDEX);
  EXPECT_EQ(l.max_md_iovecs, PTLC_CAP_MD_IOVECS);
  EXPECT_EQ(l.max_me_list, PTLC_CAP_ME_LIST);
  EXPECT_EQ(l.max_getput_md, PTLC_CAP_GETPUT_MD);
}

TEST_F(NiTest, ActualLimitsAreTheSmallerOfWishAndCap) {
  ptl_ni_limits_t want{3, 4, 5, 1, 2, 6, 7, 8};
  want.max_pt_index = 100000;  // above the cap: the cap wins
  want.max_ac_index = -1;      // no wish
  Ni ni(2, 1, 1, &want);
  ptl_ni_limits_t l;
  ptlc_ni_limits(ni, &l);
  EXPECT_EQ(l.max_mes, 3);
  EXPECT_EQ(l.max_mds, 4);
  EXPECT_EQ(l.max_eqs, 5);
  EXPECT_EQ(l.max_ac_index, PTLC_CAP_AC_INDEX);
  EXPECT_EQ(l.max_pt_index, PTLC_CAP_PT_INDEX);
  EXPECT_EQ(l.max_md_iovecs, 6);
  EXPECT_EQ(l.max_me_list, 7);
  EXPECT_EQ(l.max_getput_md, 8);
}

TEST_F(NiTest, SlotOutOfRangeIsRefused) {
  ptlc_ni_config cfg{};
  cfg.slot = PTLC_MAX_NI_SLOTS;
  ptlc_ni* ni = nullptr;
  EXPECT_EQ(ptlc_ni_create(&cfg, &ni), PTL_FAIL);
}

TEST_F(NiTest, IdentityIsWhatTheGlueConfigured) {
  ptl_process_id_t id = A().id();
  EXPECT_EQ(id.nid, 10u);
  EXPECT_EQ(id.pid, 20u);
  EXPECT_EQ(ptlc_ni_uid(A()), kUid);
  EXPECT_EQ(ptlc_ni_jid(A()), kJid);
}

TEST_F(NiTest, UnknownStatusRegistersAreInvalid) {
  ptl_sr_value_t v;
  EXPECT_EQ(ptlc_ni_status(A(), PTLC_SR_COUNT, &v), PTL_SR_INDEX_INVALID);
  EXPECT_EQ(ptlc_ni_status(A(), 1000, &v), PTL_SR_INDEX_INVALID);
  EXPECT_EQ(ptlc_ni_status(A(), PTL_SR_MLIST_LEN(PTLC_CAP_PT_INDEX + 1), &v), PTL_SR_INDEX_INVALID);
  EXPECT_EQ(ptlc_ni_status(A(), PTL_SR_MLIST_FLAG | PTL_SR_DROP_COUNT, &v), PTL_SR_INDEX_INVALID);
  for (ptl_sr_index_t r = 0; r < PTLC_SR_COUNT; r++)
    EXPECT_EQ(ptlc_ni_status(A(), r, &v), PTL_OK) << r;
}

TEST_F(NiTest, ObjectRegistersCountAllocationsFreesAndPeaks) {
  ptl_handle_me_t a = A().Me(0), b = A().Me(0);
  ASSERT_EQ(ptlc_me_unlink(A(), a), PTL_OK);
  EXPECT_EQ(A().Sr(PTL_SR_MES_ALLOC), 2u);
  EXPECT_EQ(A().Sr(PTL_SR_MES_FREED), 1u);
  EXPECT_EQ(A().Sr(PTL_SR_MES_MAX), 2u);
  EXPECT_EQ(A().Sr(PTL_SR_MES_CUR), 1u);
  Eq eq(A(), 2);
  A().Bind(MakeMd(nullptr, 0, 0));
  EXPECT_EQ(A().Sr(PTL_SR_MDS_CUR), 1u);
  EXPECT_EQ(A().Sr(PTL_SR_EQS_CUR), 1u);
  (void)b;
}

TEST_F(NiTest, PortalAndMatchListRegistersTrackListLengths) {
  ptl_handle_me_t a = A().Me(3), b = A().Me(3);
  A().Me(4);
  EXPECT_EQ(A().Sr(PTL_SR_MLIST_LEN(3)), 2u);
  EXPECT_EQ(A().Sr(PTL_SR_MLIST_LEN(4)), 1u);
  EXPECT_EQ(A().Sr(PTL_SR_PTLS_CUR), 2u);
  ASSERT_EQ(ptlc_me_unlink(A(), a), PTL_OK);
  ASSERT_EQ(ptlc_me_unlink(A(), b), PTL_OK);
  EXPECT_EQ(A().Sr(PTL_SR_MLIST_LEN(3)), 0u);
  EXPECT_EQ(A().Sr(PTL_SR_MLIST_MAX(3)), 2u);
  EXPECT_EQ(A().Sr(PTL_SR_PTLS_CUR), 1u);
  EXPECT_EQ(A().Sr(PTL_SR_PTLS_MAX), 2u);
}

TEST_F(NiTest, DestroyReleasesEverythingAndEveryMdMemory) {
  auto ni = std::make_unique<Ni>(4, 1, 1);
  GlueLog* log = &ni->log();
  Eq eq(*ni, 8);
  static char buf[64];
  int tokens[3];
  ptl_handle_me_t me = ni->Me(0);
  ptlc_md_spec s = Spec(MakeMd(buf, sizeof(buf), PTL_MD_OP_PUT, PTL_MD_THRESH_INF, eq.handle()));
  s.mem = &tokens[0];
  ptl_handle_md_t md;
  ASSERT_EQ(ptlc_md_attach(*ni, me, &s, PTL_RETAIN, &md), PTL_OK);
  s.mem = &tokens[1];
  ASSERT_EQ(ptlc_md_bind(*ni, &s, PTL_RETAIN, &md), PTL_OK);
  s.desc.eq_handle = PTL_EQ_NONE;
  s.mem = &tokens[2];
  ASSERT_EQ(ptlc_md_bind(*ni, &s, PTL_UNLINK, &md), PTL_OK);
  ni->Me(7, 1, 0, kAnyId, PTL_RETAIN);
  // A message in flight is finalized by the glue before teardown.
  ptlc_msg msg;
  ptlc_put_args a = PutArgs(md, {1, 1}, 0);
  ASSERT_EQ(ptlc_put(*ni, &a, false, &msg), PTL_OK);
  ASSERT_EQ(ptlc_msg_finalize(&msg, PTL_NI_FAIL), PTLC_MSG_DONE);
  EXPECT_EQ(log->released, 0);
  GlueLog saved;
  ni->Destroy();
  EXPECT_EQ(log->released, 3);
  ni.reset();
  EXPECT_EQ(ptlc_live_objects(), baseline_);
}

TEST_F(NiTest, CountersOfSendsAndReceives) {
  char src[8] = "abcdefg", dst[8] = {};
  A().Attach(A().Me(0), MakeMd(dst, 8, PTL_MD_OP_PUT));
  ptl_handle_md_t md = A().Bind(MakeMd(src, 8, 0));
  Put(A(), A(), PutArgs(md, A().id(), 0, 0, PTL_NO_ACK_REQ));
  EXPECT_EQ(A().Sr(PTL_SR_SEND_COUNT), 1u);
  EXPECT_EQ(A().Sr(PTL_SR_SEND_LENGTH), 8u);
  EXPECT_EQ(A().Sr(PTL_SR_RECV_COUNT), 1u);
  EXPECT_EQ(A().Sr(PTL_SR_RECV_LENGTH), 8u);
  EXPECT_EQ(A().Sr(PTL_SR_MSGS_ALLOC), 2u);
  EXPECT_EQ(A().Sr(PTL_SR_MSGS_FREED), 2u);
  EXPECT_EQ(A().Sr(PTL_SR_MSGS_CUR), 0u);
  EXPECT_EQ(A().Sr(PTL_SR_DROP_COUNT), 0u);
}

}  // namespace
}  // namespace ptltest
