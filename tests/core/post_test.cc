// Posting a receive in one step (ptlc_me_md_post, PtlMEMDPost): an ME and
// its MD created together only while the test EQ is empty, and nothing
// created otherwise.
#include "core_harness.h"

namespace ptltest {
namespace {

class PostTest : public CoreTest {
 protected:
  // A post in front of `base` of an 8-byte MD over buf that takes puts
  // once, testing `eq` at `seq`.
  int Post(ptl_handle_me_t base, ptl_match_bits_t bits, char* buf, ptl_handle_eq_t eq,
           ptl_seq_t seq, ptl_handle_me_t* me, ptl_handle_md_t* md,
           unsigned options = PTL_MD_OP_PUT) {
    ptlc_post_args p{};
    p.base = base;
    p.match_id = kAnyId;
    p.match_bits = bits;
    p.me_unlink = PTL_UNLINK;
    p.pos = PTL_INS_BEFORE;
    p.md_unlink = PTL_UNLINK;
    p.test_eq = eq;
    p.consumer_seq = seq;
    ptlc_md_spec s = Spec(MakeMd(buf, 8, options, 1, eq));
    return ptlc_me_md_post(A(), &p, &s, me, md);
  }

  // A put of 8 bytes from a bound MD to A's portal 0 with `bits`.
  void PutTo(ptl_match_bits_t bits) {
    ptl_handle_md_t smd = A().Bind(MakeMd(src_, 8, 0));
    Put(A(), A(), PutArgs(smd, A().id(), 0, bits, PTL_NO_ACK_REQ));
    ptlc_md_unlink(A(), smd);
  }

  char src_[8] = {1, 2, 3, 4, 5, 6, 7, 8};
};

TEST_F(PostTest, AnEmptyEqGetsAnMeAndAnArmedMdInFrontOfTheBase) {
  Eq eq(A(), 8);
  char heap[8] = {}, buf[8] = {};
  ptl_handle_me_t base = A().Me(0);
  A().Attach(base, MakeMd(heap, 8, PTL_MD_OP_PUT, PTL_MD_THRESH_INF));
  ptl_handle_me_t me;
  ptl_handle_md_t md;
  ASSERT_EQ(Post(base, 0, buf, eq.handle(), eq.expected(), &me, &md), PTL_OK);
  EXPECT_TRUE(A().MeLive(me));
  EXPECT_TRUE(A().MdLive(md));
  PutTo(0);
  // The posted MD, before the base, took it; threshold 1 unlinked both.
  EXPECT_EQ(std::memcmp(buf, src_, 8), 0);
  EXPECT_EQ(heap[0], 0);
  EXPECT_FALSE(A().MdLive(md));
  EXPECT_FALSE(A().MeLive(me));
  EXPECT_EQ(eq.Kinds(), (std::vector<ptl_event_kind_t>{PTL_EVENT_PUT_START, PTL_EVENT_PUT_END,
                                                       PTL_EVENT_UNLINK}));
}

TEST_F(PostTest, AnEventPastTheReadersPositionRefusesThePostAndCreatesNothing) {
  Eq eq(A(), 8);
  char heap[8] = {}, buf[8] = {};
  ptl_handle_me_t base = A().Me(0);
  A().Attach(base, MakeMd(heap, 8, PTL_MD_OP_PUT, PTL_MD_THRESH_INF, eq.handle()));
  PutTo(0);  // lands in the heap: two events the reader has not seen
  ptl_sr_value_t mes = A().Sr(PTL_SR_MES_CUR), mds = A().Sr(PTL_SR_MDS_CUR);
  long charged = A().log().charged;
  ptl_handle_me_t me = PTL_INVALID_HANDLE;
  ptl_handle_md_t md = PTL_INVALID_HANDLE;
  EXPECT_EQ(Post(base, 0, buf, eq.handle(), eq.expected(), &me, &md), PTL_MD_NO_UPDATE);
  EXPECT_EQ(A().Sr(PTL_SR_MES_CUR), mes);
  EXPECT_EQ(A().Sr(PTL_SR_MDS_CUR), mds);
  EXPECT_EQ(A().log().charged, charged);
  EXPECT_EQ(me, PTL_INVALID_HANDLE);
  EXPECT_EQ(md, PTL_INVALID_HANDLE);
  // Once the reader has caught up the same post goes through.
  eq.Drain();
  EXPECT_EQ(Post(base, 0, buf, eq.handle(), eq.expected(), &me, &md), PTL_OK);
}

TEST_F(PostTest, AMessageMatchedButNotEndedRefusesThePost) {
  Eq eq(A(), 8);
  char heap[8] = {}, buf[8] = {};
  ptl_handle_me_t base = A().Me(0);
  A().Attach(base, MakeMd(heap, 8, PTL_MD_OP_PUT | PTL_MD_EVENT_START_DISABLE, PTL_MD_THRESH_INF,
                          eq.handle()));
  ptl_handle_md_t smd = A().Bind(MakeMd(src_, 8, 0));
  ptlc_msg out, in;
  ptlc_put_args a = PutArgs(smd, A().id(), 0, 0, PTL_NO_ACK_REQ);
  ASSERT_EQ(ptlc_put(A(), &a, false, &out), PTL_OK);
  // Matched into the heap; its END is promised, not written.
  ASSERT_EQ(ptlc_receive(A(), &out.hdr, 0, &in), PTLC_MSG_DEPOSIT);
  ptl_handle_me_t me;
  ptl_handle_md_t md;
  EXPECT_EQ(Post(base, 0, buf, eq.handle(), eq.expected(), &me, &md), PTL_MD_NO_UPDATE);
  ptlc_msg_finalize(&in, PTL_NI_OK);
  ptlc_msg_finalize(&out, PTL_NI_OK);
  ptlc_md_unlink(A(), smd);
  // The END is written now; read, the EQ lets the post through.
  eq.Drain();
  EXPECT_EQ(Post(base, 0, buf, eq.handle(), eq.expected(), &me, &md), PTL_OK);
}

TEST_F(PostTest, WithoutATestEqThePostIsUnconditional) {
  Eq eq(A(), 8);
  char buf[8] = {};
  ptl_handle_me_t base = A().Me(0);
  PutTo(5);  // nothing matches: dropped, no event
  ptl_handle_me_t me;
  ptl_handle_md_t md;
  EXPECT_EQ(Post(base, 0, buf, PTL_EQ_NONE, 0, &me, &md), PTL_OK);
}

TEST_F(PostTest, ErrorsOfInsertAndAttachLeaveNothingBehind) {
  Eq eq(A(), 8);
  char buf[8] = {};
  ptl_handle_me_t base = A().Me(0);
  long charged = A().log().charged;
  ptl_handle_me_t me;
  ptl_handle_md_t md;
  EXPECT_EQ(Post(base + 1, 0, buf, eq.handle(), eq.expected(), &me, &md), PTL_ME_INVALID);
  EXPECT_EQ(Post(base, 0, buf, 0x12345, 0, &me, &md), PTL_EQ_INVALID);
  EXPECT_EQ(Post(base, 0, buf, eq.handle(), eq.expected(), &me, &md, 0x200), PTL_MD_ILLEGAL);
  EXPECT_EQ(A().Sr(PTL_SR_MES_CUR), 1u);
  EXPECT_EQ(A().Sr(PTL_SR_MDS_CUR), 0u);
  EXPECT_EQ(A().log().charged, charged);
}

TEST_F(PostTest, ManyPostsGrowBothHandleTables) {
  Eq eq(A(), 8);
  ptl_handle_me_t base = A().Me(0);
  std::vector<char> bufs(8 * 600);
  for (int i = 0; i < 600; i++) {
    ptl_handle_me_t me;
    ptl_handle_md_t md;
    ASSERT_EQ(Post(base, i + 1, &bufs[8 * i], eq.handle(), eq.expected(), &me, &md), PTL_OK) << i;
  }
  EXPECT_EQ(A().Sr(PTL_SR_MES_CUR), 601u);
  EXPECT_EQ(A().Sr(PTL_SR_MDS_CUR), 600u);
  PutTo(77);  // the post with bits 77 takes it
  EXPECT_EQ(std::memcmp(&bufs[8 * 76], src_, 8), 0);
}

}  // namespace
}  // namespace ptltest
