// Translation and acceptance (8.1, 8.2): matching order, wildcards,
// ignore bits, operation bits, offsets, truncation, threshold, max_size.
#include "core_harness.h"

namespace ptltest {
namespace {

class MatchTest : public CoreTest {
 protected:
  // A put of `len` bytes from B to A's portal 0 with match bits `bits`.
  Delivery PutFromB(ptl_match_bits_t bits, uint64_t len, uint64_t remote_offset = 0) {
    src_.assign(len, 0xab);
    ptl_handle_md_t md = B().Bind(MakeMd(src_.data(), len, 0));
    ptlc_put_args a = PutArgs(md, A().id(), 0, bits, PTL_NO_ACK_REQ);
    a.remote_offset = remote_offset;
    Delivery d = Put(B(), A(), a);
    ptlc_md_unlink(B(), md);
    return d;
  }
  ptl_event_t LastPutEnd(Eq& eq) {
    ptl_event_t last{};
    for (const auto& ev : eq.Drain())
      if (ev.type == PTL_EVENT_PUT_END) last = ev;
    return last;
  }
  Bytes src_;
};

TEST_F(MatchTest, FirstMatchingEntryInListOrderWins) {
  Eq eq(A(), 16);
  char x[4], y[4];
  ptl_handle_md_t first = A().Attach(A().Me(0, 5), MakeMd(x, 4, PTL_MD_OP_PUT, -1, eq.handle()));
  A().Attach(A().Me(0, 5), MakeMd(y, 4, PTL_MD_OP_PUT, -1, eq.handle()));
  PutFromB(5, 4);
  EXPECT_EQ(LastPutEnd(eq).md_handle, first);
}

TEST_F(MatchTest, ExactBitsSkipOtherEntriesAndWildcardsCatchTheRest) {
  Eq eq(A(), 16);
  char x[4], y[4];
  ptl_handle_md_t exact = A().Attach(A().Me(0, 0x10), MakeMd(x, 4, PTL_MD_OP_PUT, -1, eq.handle()));
  ptl_handle_md_t any =
      A().Attach(A().Me(0, 0, ~0ULL), MakeMd(y, 4, PTL_MD_OP_PUT, -1, eq.handle()));
  PutFromB(0x11, 4);
  EXPECT_EQ(LastPutEnd(eq).md_handle, any);
  PutFromB(0x10, 4);
  EXPECT_EQ(LastPutEnd(eq).md_handle, exact);
}

TEST_F(MatchTest, IgnoreBitsMaskTheComparison) {
  Eq eq(A(), 16);
  char x[4];
  ptl_handle_md_t md =
      A().Attach(A().Me(0, 0xff00, 0x00ff), MakeMd(x, 4, PTL_MD_OP_PUT, -1, eq.handle()));
  PutFromB(0xff42, 4);
  EXPECT_EQ(LastPutEnd(eq).md_handle, md);
  EXPECT_EQ(PutFromB(0xfe42, 4).first, PTLC_MSG_DROP);
}

TEST_F(MatchTest, SourceIdMustMatchUnlessWildcarded) {
  char x[4], y[4];
  Eq eq(A(), 16);
  ptl_process_id_t b = B().id();
  ptl_handle_md_t wrong =
      A().Attach(A().Me(0, 0, 0, {b.nid, b.pid + 1}), MakeMd(x, 4, PTL_MD_OP_PUT, -1, eq.handle()));
  ptl_handle_md_t nid_only = A().Attach(A().Me(0, 0, 0, {b.nid, PTL_PID_ANY}),
                                        MakeMd(y, 4, PTL_MD_OP_PUT, -1, eq.handle()));
  PutFromB(0, 4);
  ptl_event_t ev = LastPutEnd(eq);
  EXPECT_EQ(ev.md_handle, nid_only);
  EXPECT_NE(ev.md_handle, wrong);
}

TEST_F(MatchTest, AnMdWithoutTheOperationBitIsSkippedAndSearchContinues) {
  Eq eq(A(), 16);
  char x[4], y[4];
  A().Attach(A().Me(0), MakeMd(x, 4, PTL_MD_OP_GET, -1, eq.handle()));
  ptl_handle_md_t put = A().Attach(A().Me(0), MakeMd(y, 4, PTL_MD_OP_PUT, -1, eq.handle()));
  PutFromB(0, 4);
  EXPECT_EQ(LastPutEnd(eq).md_handle, put);
}

TEST_F(MatchTest, MeWithoutMdIsSkipped) {
  Eq eq(A(), 16);
  char y[4];
  A().Me(0);
  ptl_handle_md_t md = A().Attach(A().Me(0), MakeMd(y, 4, PTL_MD_OP_PUT, -1, eq.handle()));
  PutFromB(0, 4);
  EXPECT_EQ(LastPutEnd(eq).md_handle, md);
}

TEST_F(MatchTest, TooLongWithoutTruncateIsRejectedAndCountedAsDrop) {
  char x[4];
  A().Attach(A().Me(0), MakeMd(x, 4, PTL_MD_OP_PUT));
  Delivery d = PutFromB(0, 5);
  EXPECT_EQ(d.first, PTLC_MSG_DROP);
  EXPECT_EQ(d.drop, PTLC_DROP_NO_MATCH);
  EXPECT_EQ(A().Sr(PTL_SR_DROP_COUNT), 1u);
  EXPECT_EQ(A().Sr(PTL_SR_DROP_LENGTH), 5u);
}

TEST_F(MatchTest, TruncateAcceptsWhatFits) {
  Eq eq(A(), 16);
  char x[4];
  A().Attach(A().Me(0), MakeMd(x, 4, PTL_MD_OP_PUT | PTL_MD_TRUNCATE, -1, eq.handle()));
  PutFromB(0, 3);
  PutFromB(0, 3);  // only 1 byte left
  ptl_event_t ev = LastPutEnd(eq);
  EXPECT_EQ(ev.rlength, 3u);
  EXPECT_EQ(ev.mlength, 1u);
  EXPECT_EQ(ev.offset, 3u);
  PutFromB(0, 3);  // full MD: truncated to zero, still accepted
  ev = LastPutEnd(eq);
  EXPECT_EQ(ev.mlength, 0u);
  EXPECT_EQ(ev.offset, 4u);
}

TEST_F(MatchTest, LocalOffsetAdvancesByMlength) {
  Eq eq(A(), 16);
  char x[10] = {};
  A().Attach(A().Me(0), MakeMd(x, 10, PTL_MD_OP_PUT, -1, eq.handle()));
  PutFromB(0, 4);
  PutFromB(0, 4);
  EXPECT_EQ(LastPutEnd(eq).offset, 4u);
  EXPECT_EQ(PutFromB(0, 4).first, PTLC_MSG_DROP) << "8 + 4 > 10 without truncate";
  PutFromB(0, 2);
  EXPECT_EQ(LastPutEnd(eq).offset, 8u);
}

TEST_F(MatchTest, ManageRemoteUsesTheRequestOffsetUpToTheEnd) {
  Eq eq(A(), 16);
  char x[8];
  A().Attach(A().Me(0), MakeMd(x, 8, PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE, -1, eq.handle()));
  PutFromB(0, 2, 6);
  EXPECT_EQ(LastPutEnd(eq).offset, 6u);
  EXPECT_EQ(PutFromB(0, 3, 6).first, PTLC_MSG_DROP);
  EXPECT_EQ(PutFromB(0, 0, 9).first, PTLC_MSG_DROP) << "offset past the end";
  PutFromB(0, 0, 8);
  EXPECT_EQ(LastPutEnd(eq).offset, 8u) << "zero bytes at the very end fit";
}

TEST_F(MatchTest, ZeroLengthPutMatchesAndPostsEvents) {
  Eq eq(A(), 16);
  A().Attach(A().Me(0), MakeMd(nullptr, 0, PTL_MD_OP_PUT, -1, eq.handle()));
  EXPECT_EQ(PutFromB(0, 0).first, PTLC_MSG_DEPOSIT);
  EXPECT_EQ(eq.Kinds(), (std::vector<ptl_event_kind_t>{PTL_EVENT_PUT_START, PTL_EVENT_PUT_END}));
}

TEST_F(MatchTest, ThresholdExactlyReachedDeactivatesAndAutoUnlinks) {
  Eq eq(A(), 16);
  char x[8];
  ptl_handle_me_t me = A().Me(0);
  ptl_handle_md_t md = A().Attach(me, MakeMd(x, 8, PTL_MD_OP_PUT, 2, eq.handle()));
  PutFromB(0, 1);
  EXPECT_TRUE(A().MdLive(md));
  PutFromB(0, 1);
  EXPECT_FALSE(A().MdLive(md));
  EXPECT_FALSE(A().MeLive(me));
  EXPECT_EQ(PutFromB(0, 1).first, PTLC_MSG_DROP);
}

TEST_F(MatchTest, ThresholdReachedOnARetainMdLeavesItInactiveNotUnlinked) {
  char x[8];
  ptl_handle_md_t md = A().Attach(A().Me(0), MakeMd(x, 8, PTL_MD_OP_PUT, 1), PTL_RETAIN);
  PutFromB(0, 1);
  EXPECT_TRUE(A().MdLive(md));
  EXPECT_EQ(PutFromB(0, 1).first, PTLC_MSG_DROP);
}

TEST_F(MatchTest, MaxSizeDeactivatesWhenTheNextMessageMightNotFit) {
  char x[10];
  ptl_md_t d = MakeMd(x, 10, PTL_MD_OP_PUT | PTL_MD_MAX_SIZE);
  d.max_size = 4;
  ptl_handle_md_t md = A().Attach(A().Me(0), d, PTL_RETAIN);
  PutFromB(0, 4);                                     // 6 left >= 4
  EXPECT_EQ(PutFromB(0, 2).first, PTLC_MSG_DEPOSIT);  // 4 left == max_size: still active
  EXPECT_EQ(PutFromB(0, 1).first, PTLC_MSG_DEPOSIT);  // 3 left < 4: now inactive
  EXPECT_EQ(PutFromB(0, 1).first, PTLC_MSG_DROP);
  EXPECT_TRUE(A().MdLive(md));
}

TEST_F(MatchTest, MaxSizeWithUnlinkRemovesTheMd) {
  Eq eq(A(), 16);
  char x[4];
  ptl_md_t d = MakeMd(x, 4, PTL_MD_OP_PUT | PTL_MD_MAX_SIZE, -1, eq.handle());
  d.max_size = 4;
  ptl_handle_md_t md = A().Attach(A().Me(0), d, PTL_UNLINK);
  PutFromB(0, 1);
  EXPECT_FALSE(A().MdLive(md));
  EXPECT_EQ(eq.Kinds(), (std::vector<ptl_event_kind_t>{PTL_EVENT_PUT_START, PTL_EVENT_PUT_END,
                                                       PTL_EVENT_UNLINK}));
}

TEST_F(MatchTest, MaxSizeIsIgnoredForRemotelyManagedOffsets) {
  char x[4];
  ptl_md_t d = MakeMd(x, 4, PTL_MD_OP_PUT | PTL_MD_MAX_SIZE | PTL_MD_MANAGE_REMOTE);
  d.max_size = 4;
  A().Attach(A().Me(0), d, PTL_RETAIN);
  PutFromB(0, 4);
  EXPECT_EQ(PutFromB(0, 4).first, PTLC_MSG_DEPOSIT);
}

TEST_F(MatchTest, InvalidPortalOrAcIndexIsDroppedAndCounted) {
  ptl_handle_md_t md = B().Bind(MakeMd(nullptr, 0, 0));
  ptlc_put_args a = PutArgs(md, A().id(), PTLC_CAP_PT_INDEX + 1, 0, PTL_NO_ACK_REQ);
  EXPECT_EQ(Put(B(), A(), a).drop, PTLC_DROP_PT_INDEX);
  a.pt_index = 0;
  a.ac_index = PTLC_CAP_AC_INDEX + 1;
  EXPECT_EQ(Put(B(), A(), a).drop, PTLC_DROP_AC_INDEX);
  EXPECT_EQ(A().Sr(PTL_SR_DROP_COUNT), 2u);
}

TEST_F(MatchTest, RequestForAnotherProcessIsDropped) {
  ptl_handle_md_t md = B().Bind(MakeMd(nullptr, 0, 0));
  ptlc_put_args a = PutArgs(md, {A().id().nid, 999}, 0, 0, PTL_NO_ACK_REQ);
  EXPECT_EQ(Put(B(), A(), a).drop, PTLC_DROP_WRONG_TARGET);
}

}  // namespace
}  // namespace ptltest
