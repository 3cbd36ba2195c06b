// Memory descriptors: creation errors, unlink cascades, update, segments.
#include "core_harness.h"

namespace ptltest {
namespace {

class MdTest : public CoreTest {};

TEST_F(MdTest, AttachToAnMeThatHasAnMdIsMeInUse) {
  ptl_handle_me_t me = A().Me(0);
  A().Attach(me, MakeMd(nullptr, 0, PTL_MD_OP_PUT));
  ptlc_md_spec s = Spec(MakeMd(nullptr, 0, PTL_MD_OP_PUT));
  ptl_handle_md_t out;
  EXPECT_EQ(ptlc_md_attach(A(), me, &s, PTL_UNLINK, &out), PTL_ME_IN_USE);
}

TEST_F(MdTest, UnknownEqIsEqInvalidAndAnotherNisEqIsMdIllegal) {
  Eq other(B(), 2);
  ptlc_md_spec s = Spec(MakeMd(nullptr, 0, 0, 1, 0x12345));
  ptl_handle_md_t out;
  EXPECT_EQ(ptlc_md_bind(A(), &s, PTL_UNLINK, &out), PTL_EQ_INVALID);
  s.desc.eq_handle = other.handle();
  EXPECT_EQ(ptlc_md_bind(A(), &s, PTL_UNLINK, &out), PTL_MD_ILLEGAL);
  EXPECT_EQ(A().Sr(PTL_SR_MDS_CUR), 0u);
}

TEST_F(MdTest, UnknownOptionBitsAreMdIllegal) {
  ptlc_md_spec s = Spec(MakeMd(nullptr, 0, 0x200));
  ptl_handle_md_t out;
  EXPECT_EQ(ptlc_md_bind(A(), &s, PTL_UNLINK, &out), PTL_MD_ILLEGAL);
}

TEST_F(MdTest, IovecCountMustMatchAndStayWithinMaxMdIovecs) {
  ptl_ni_limits_t want{-1, -1, -1, -1, -1, 2, -1, -1};
  Ni ni(2, 1, 1, &want);
  char a[4], b[4], c[4];
  ptlc_seg segs[3] = {{uintptr_t(a), 4}, {uintptr_t(b), 4}, {uintptr_t(c), 4}};
  ptlc_md_spec s = Spec(MakeMd(segs, 3, PTL_MD_IOVEC));
  s.segs = segs;
  s.nsegs = 3;
  ptl_handle_md_t out;
  EXPECT_EQ(ptlc_md_bind(ni, &s, PTL_UNLINK, &out), PTL_MD_ILLEGAL);
  s.desc.length = 2;
  EXPECT_EQ(ptlc_md_bind(ni, &s, PTL_UNLINK, &out), PTL_MD_ILLEGAL) << "count mismatch";
  s.nsegs = 2;
  EXPECT_EQ(ptlc_md_bind(ni, &s, PTL_UNLINK, &out), PTL_OK);
}

TEST_F(MdTest, IovecTotalOverflowIsMdIllegal) {
  ptlc_seg segs[2] = {{0x1000, ~0ULL / 2}, {0x1000, ~0ULL / 2 + 2}};
  ptlc_md_spec s = Spec(MakeMd(segs, 2, PTL_MD_IOVEC));
  s.segs = segs;
  s.nsegs = 2;
  ptl_handle_md_t out;
  EXPECT_EQ(ptlc_md_bind(A(), &s, PTL_UNLINK, &out), PTL_MD_ILLEGAL);
}

TEST_F(MdTest, MoreMdsThanMaxMdsIsNoSpace) {
  ptl_ni_limits_t want{-1, 2, -1, -1, -1, -1, -1, -1};
  Ni ni(2, 1, 1, &want);
  ni.Bind(MakeMd(nullptr, 0, 0));
  ni.Bind(MakeMd(nullptr, 0, 0));
  ptlc_md_spec s = Spec(MakeMd(nullptr, 0, 0));
  ptl_handle_md_t out;
  EXPECT_EQ(ptlc_md_bind(ni, &s, PTL_UNLINK, &out), PTL_NO_SPACE);
}

TEST_F(MdTest, ZeroLengthMdsWithNullOrRealStartAreLegal) {
  char c;
  EXPECT_TRUE(A().MdLive(A().Bind(MakeMd(nullptr, 0, PTL_MD_OP_PUT))));
  EXPECT_TRUE(A().MdLive(A().Bind(MakeMd(&c, 0, PTL_MD_OP_PUT))));
}

TEST_F(MdTest, ExplicitUnlinkTakesAPtlUnlinkMeAlongButKeepsARetainMe) {
  ptl_handle_me_t goes = A().Me(0, 0, 0, kAnyId, PTL_UNLINK);
  ptl_handle_me_t stays = A().Me(0, 0, 0, kAnyId, PTL_RETAIN);
  ptl_handle_md_t md1 = A().Attach(goes, MakeMd(nullptr, 0, PTL_MD_OP_PUT));
  ptl_handle_md_t md2 = A().Attach(stays, MakeMd(nullptr, 0, PTL_MD_OP_PUT));
  ASSERT_EQ(ptlc_md_unlink(A(), md1), PTL_OK);
  ASSERT_EQ(ptlc_md_unlink(A(), md2), PTL_OK);
  EXPECT_FALSE(A().MeLive(goes));
  EXPECT_TRUE(A().MeLive(stays));
  EXPECT_EQ(ptlc_md_unlink(A(), md1), PTL_MD_INVALID);
  // The kept ME takes a new MD.
  A().Attach(stays, MakeMd(nullptr, 0, PTL_MD_OP_PUT));
}

TEST_F(MdTest, ExplicitUnlinkPostsNoEvent) {
  Eq eq(A(), 4);
  ptl_handle_md_t md = A().Bind(MakeMd(nullptr, 0, 0, 1, eq.handle()));
  ASSERT_EQ(ptlc_md_unlink(A(), md), PTL_OK);
  EXPECT_TRUE(eq.Drain().empty());
}

TEST_F(MdTest, UnlinkWithAnOperationInFlightIsMdInUse) {
  char buf[8];
  ptl_handle_md_t md = A().Bind(MakeMd(buf, 8, 0));
  ptlc_msg msg;
  ptlc_put_args a = PutArgs(md, {1, 1}, 0);
  ASSERT_EQ(ptlc_put(A(), &a, false, &msg), PTL_OK);
  EXPECT_EQ(ptlc_md_unlink(A(), md), PTL_MD_IN_USE);
  ASSERT_EQ(ptlc_msg_finalize(&msg, PTL_NI_OK), PTLC_MSG_DONE);
  EXPECT_EQ(ptlc_md_unlink(A(), md), PTL_OK);
}

TEST_F(MdTest, ThresholdBelowZeroOtherThanInfStartsInactive) {
  ptl_handle_md_t md = A().Bind(MakeMd(nullptr, 0, 0, -5));
  ptl_md_t cur;
  ASSERT_EQ(ptlc_md_update(A(), md, &cur, nullptr, 0, nullptr, nullptr, PTL_EQ_NONE, 0), PTL_OK);
  EXPECT_EQ(cur.threshold, 0);
  ptlc_msg msg;
  ptlc_put_args a = PutArgs(md, {1, 1}, 0);
  EXPECT_EQ(ptlc_put(A(), &a, false, &msg), PTL_MD_INVALID);
}

// ---- PtlMDUpdate (8.7) ----

TEST_F(MdTest, UpdateReadsTheMdWithoutChangingIt) {
  Eq eq(A(), 4);
  char buf[16];
  ptl_md_t d = MakeMd(buf, 16, PTL_MD_OP_PUT | PTL_MD_TRUNCATE, 3, eq.handle());
  ptl_handle_md_t md = A().Bind(d);
  ptl_md_t cur{};
  ASSERT_EQ(ptlc_md_update(A(), md, &cur, nullptr, 0, nullptr, nullptr, eq.handle(), 0), PTL_OK);
  EXPECT_EQ(cur.start, buf);
  EXPECT_EQ(cur.length, 16u);
  EXPECT_EQ(cur.threshold, 3);
  EXPECT_EQ(cur.options, d.options);
  EXPECT_EQ(cur.user_ptr, d.user_ptr);
  EXPECT_EQ(cur.eq_handle, eq.handle());
}

TEST_F(MdTest, UpdateArmsAnInactiveMdWhenTheEqIsEmpty) {
  Eq eq(A(), 4);
  char buf[8] = {};
  ptl_handle_me_t me = A().Me(0);
  ptl_handle_md_t md = A().Attach(me, MakeMd(buf, 8, PTL_MD_OP_PUT, 0, eq.handle()));
  ptl_md_t armed = MakeMd(buf, 8, PTL_MD_OP_PUT, 1, eq.handle());
  ptlc_md_spec s = Spec(armed);
  ASSERT_EQ(ptlc_md_update(A(), md, nullptr, nullptr, 0, nullptr, &s, eq.handle(), eq.expected()),
            PTL_OK);
  char src[8] = "payload";
  ptl_handle_md_t smd = A().Bind(MakeMd(src, 8, 0));
  Delivery d = Put(A(), A(), PutArgs(smd, A().id(), 0, 0, PTL_NO_ACK_REQ));
  EXPECT_EQ(d.first, PTLC_MSG_DEPOSIT);
  EXPECT_STREQ(buf, "payload");
}

TEST_F(MdTest, UpdateIsRefusedWhileTheNamedEqHoldsUnreadEventsButStillFillsOldMd) {
  Eq eq(A(), 4), other(A(), 4);
  char buf[8];
  ptl_handle_md_t md = A().Attach(A().Me(0), MakeMd(buf, 8, PTL_MD_OP_PUT, 1, eq.handle()));
  ptl_handle_md_t smd = A().Bind(MakeMd(buf, 8, 0));
  Put(A(), A(), PutArgs(smd, A().id(), 0, 0, PTL_NO_ACK_REQ));  // PUT_START/END on eq
  ptl_md_t old{};
  ptlc_md_spec s = Spec(MakeMd(buf, 8, PTL_MD_OP_PUT, 5, eq.handle()));
  EXPECT_EQ(ptlc_md_update(A(), md, &old, nullptr, 0, nullptr, &s, eq.handle(), eq.expected()),
            PTL_MD_INVALID)
      << "threshold-1 PTL_UNLINK MD is gone after the put";
  ptl_handle_md_t md2 = A().Bind(MakeMd(buf, 8, 0, 2, eq.handle()));
  EXPECT_EQ(ptlc_md_update(A(), md2, &old, nullptr, 0, nullptr, &s, eq.handle(), eq.expected()),
            PTL_MD_NO_UPDATE);
  EXPECT_EQ(old.threshold, 2) << "old_md filled although refused";
  EXPECT_EQ(
      ptlc_md_update(A(), md2, nullptr, nullptr, 0, nullptr, &s, other.handle(), other.expected()),
      PTL_OK)
      << "the condition is on the named EQ, not the MD's own";
  eq.Drain();
  EXPECT_EQ(ptlc_md_update(A(), md2, nullptr, nullptr, 0, nullptr, &s, eq.handle(), eq.expected()),
            PTL_OK);
}

TEST_F(MdTest, UpdateIsRefusedWhileAnEndIsPromisedOnTheEq) {
  Eq eq(A(), 8);
  char buf[8];
  A().Attach(A().Me(0), MakeMd(buf, 8, PTL_MD_OP_PUT, PTL_MD_THRESH_INF, eq.handle()));
  ptl_handle_md_t idle = A().Bind(MakeMd(buf, 8, 0, 1, PTL_EQ_NONE));
  ptl_handle_md_t smd = A().Bind(MakeMd(buf, 8, 0));
  ptlc_msg out, in;
  ptlc_put_args a = PutArgs(smd, A().id(), 0, 0, PTL_NO_ACK_REQ);
  ASSERT_EQ(ptlc_put(A(), &a, false, &out), PTL_OK);
  ASSERT_EQ(ptlc_receive(A(), &out.hdr, 0, &in), PTLC_MSG_DEPOSIT);
  eq.Drain();  // consumer has read the PUT_START
  ptlc_md_spec s = Spec(MakeMd(buf, 8, 0, 1));
  EXPECT_EQ(ptlc_md_update(A(), idle, nullptr, nullptr, 0, nullptr, &s, eq.handle(), eq.expected()),
            PTL_MD_NO_UPDATE);
  ptlc_msg_finalize(&in, PTL_NI_OK);
  ptlc_msg_finalize(&out, PTL_NI_OK);
  eq.Drain();
  EXPECT_EQ(ptlc_md_update(A(), idle, nullptr, nullptr, 0, nullptr, &s, eq.handle(), eq.expected()),
            PTL_OK);
}

TEST_F(MdTest, UpdateOfAnMdWithAnOperationInFlightIsRefusedEvenWithoutEq) {
  char buf[8];
  ptl_handle_md_t md = A().Bind(MakeMd(buf, 8, 0));
  ptlc_msg msg;
  ptlc_put_args a = PutArgs(md, {1, 1}, 0);
  ASSERT_EQ(ptlc_put(A(), &a, false, &msg), PTL_OK);
  ptlc_md_spec s = Spec(MakeMd(buf, 4, 0));
  EXPECT_EQ(ptlc_md_update(A(), md, nullptr, nullptr, 0, nullptr, &s, PTL_EQ_NONE, 0),
            PTL_MD_NO_UPDATE);
  ptlc_msg_finalize(&msg, PTL_NI_OK);
  EXPECT_EQ(ptlc_md_update(A(), md, nullptr, nullptr, 0, nullptr, &s, PTL_EQ_NONE, 0), PTL_OK);
}

TEST_F(MdTest, UpdateWithAnInvalidEqIsEqInvalid) {
  ptl_handle_md_t md = A().Bind(MakeMd(nullptr, 0, 0));
  ptlc_md_spec s = Spec(MakeMd(nullptr, 0, 0, 1, 0x4242));
  EXPECT_EQ(ptlc_md_update(A(), md, nullptr, nullptr, 0, nullptr, &s, PTL_EQ_NONE, 0),
            PTL_EQ_INVALID);
  s.desc.eq_handle = PTL_EQ_NONE;
  EXPECT_EQ(ptlc_md_update(A(), md, nullptr, nullptr, 0, nullptr, &s, 0x4242, 0), PTL_EQ_INVALID);
  EXPECT_EQ(ptlc_md_update(A(), 0x4242, nullptr, nullptr, 0, nullptr, &s, PTL_EQ_NONE, 0),
            PTL_MD_INVALID);
}

TEST_F(MdTest, UpdateReplacesTheRegionReleasesOldMemoryAndResetsTheOffset) {
  char one[4] = {}, two[4] = {};
  int mem1, mem2;
  ptlc_md_spec s = Spec(MakeMd(one, 4, PTL_MD_OP_PUT));
  s.mem = &mem1;
  ptl_handle_md_t md;
  ASSERT_EQ(ptlc_md_attach(A(), A().Me(0), &s, PTL_RETAIN, &md), PTL_OK);
  char src[2] = {'x', 'y'};
  ptl_handle_md_t smd = A().Bind(MakeMd(src, 2, 0));
  Put(A(), A(), PutArgs(smd, A().id(), 0, 0, PTL_NO_ACK_REQ));
  EXPECT_EQ(one[0], 'x');
  ptlc_md_spec n = Spec(MakeMd(two, 4, PTL_MD_OP_PUT));
  n.mem = &mem2;
  ASSERT_EQ(ptlc_md_update(A(), md, nullptr, nullptr, 0, nullptr, &n, PTL_EQ_NONE, 0), PTL_OK);
  ASSERT_EQ(A().log().released_mem.size(), 1u);
  EXPECT_EQ(A().log().released_mem[0], &mem1);
  Put(A(), A(), PutArgs(smd, A().id(), 0, 0, PTL_NO_ACK_REQ));
  EXPECT_EQ(two[0], 'x') << "local offset restarted at 0 in the new region";
  EXPECT_EQ(one[2], 0);
}

// ---- updates that keep the MD's memory (the glue's pin reuse) ----

// An attached MD over `buf` whose mem is `mem`, and a reuse_mem spec.
class MdReuseTest : public MdTest {
 protected:
  ptl_handle_md_t AttachOver(char* buf, ptl_size_t len, void* mem) {
    ptlc_md_spec s = Spec(MakeMd(buf, len, PTL_MD_OP_PUT, 1));
    s.mem = mem;
    ptl_handle_md_t md;
    EXPECT_EQ(ptlc_md_attach(A(), A().Me(0), &s, PTL_RETAIN, &md), PTL_OK);
    return md;
  }
  static ptlc_md_spec Reuse(const ptl_md_t& d) {
    ptlc_md_spec s = Spec(d);
    s.reuse_mem = true;
    return s;
  }
  static ptl_md_t Read(Ni& ni, ptl_handle_md_t md) {
    ptl_md_t cur{};
    EXPECT_EQ(ptlc_md_update(ni, md, &cur, nullptr, 0, nullptr, nullptr, PTL_EQ_NONE, 0), PTL_OK);
    return cur;
  }
};

TEST_F(MdReuseTest, SameBytesKeepTheMemoryWhenTheGlueAgrees) {
  char buf[8] = {};
  int mem;
  ptl_handle_md_t md = AttachOver(buf, 8, &mem);
  A().log().reusable = true;
  ptlc_md_spec n = Reuse(MakeMd(buf, 8, PTL_MD_OP_PUT, 5));
  ASSERT_EQ(ptlc_md_update(A(), md, nullptr, nullptr, 0, nullptr, &n, PTL_EQ_NONE, 0), PTL_OK);
  ASSERT_EQ(A().log().reuse_asked.size(), 1u);
  EXPECT_EQ(A().log().reuse_asked[0], &mem);
  EXPECT_EQ(A().log().released, 0) << "the kept memory must not be released";
  EXPECT_EQ(Read(A(), md).threshold, 5);
  // It receives as before, from offset 0 again.
  char src[2] = {'p', 'q'};
  ptl_handle_md_t smd = A().Bind(MakeMd(src, 2, 0));
  Put(A(), A(), PutArgs(smd, A().id(), 0, 0, PTL_NO_ACK_REQ));
  EXPECT_EQ(buf[0], 'p');
  // Unlinking releases it exactly once.
  ASSERT_EQ(ptlc_md_unlink(A(), md), PTL_OK);
  ASSERT_EQ(A().log().released_mem.size(), 1u);
  EXPECT_EQ(A().log().released_mem[0], &mem);
}

TEST_F(MdReuseTest, AGlueThatSaysNoGetsNeedsMemAndTheMdIsUnchanged) {
  char buf[8] = {};
  int mem;
  ptl_handle_md_t md = AttachOver(buf, 8, &mem);
  ptlc_md_spec n = Reuse(MakeMd(buf, 8, PTL_MD_OP_PUT, 5));
  ASSERT_EQ(ptlc_md_update(A(), md, nullptr, nullptr, 0, nullptr, &n, PTL_EQ_NONE, 0),
            PTLC_MD_NEEDS_MEM);
  EXPECT_EQ(A().log().reuse_asked.size(), 1u);
  EXPECT_EQ(A().log().released, 0);
  EXPECT_EQ(Read(A(), md).threshold, 1);
}

TEST_F(MdReuseTest, OtherBytesNeedMemWithoutAskingTheGlue) {
  char buf[16] = {};
  int mem;
  ptl_handle_md_t md = AttachOver(buf, 8, &mem);
  A().log().reusable = true;
  ptlc_md_spec longer = Reuse(MakeMd(buf, 16, PTL_MD_OP_PUT, 5));
  EXPECT_EQ(ptlc_md_update(A(), md, nullptr, nullptr, 0, nullptr, &longer, PTL_EQ_NONE, 0),
            PTLC_MD_NEEDS_MEM);
  ptlc_md_spec moved = Reuse(MakeMd(buf + 1, 8, PTL_MD_OP_PUT, 5));
  EXPECT_EQ(ptlc_md_update(A(), md, nullptr, nullptr, 0, nullptr, &moved, PTL_EQ_NONE, 0),
            PTLC_MD_NEEDS_MEM);
  EXPECT_TRUE(A().log().reuse_asked.empty());
  EXPECT_EQ(Read(A(), md).threshold, 1);
  EXPECT_EQ(Read(A(), md).length, 8u);
}

TEST_F(MdReuseTest, AnIovecMdIsNeverKept) {
  char a[4], b[4];
  ptl_md_iovec_t iov[2] = {{a, 4}, {b, 4}};
  ptlc_seg segs[2] = {{reinterpret_cast<uintptr_t>(a), 4}, {reinterpret_cast<uintptr_t>(b), 4}};
  int mem;
  ptlc_md_spec s = Spec(MakeMd(iov, 2, PTL_MD_OP_PUT | PTL_MD_IOVEC, 1));
  s.segs = segs;
  s.nsegs = 2;
  s.mem = &mem;
  ptl_handle_md_t md;
  ASSERT_EQ(ptlc_md_attach(A(), A().Me(0), &s, PTL_RETAIN, &md), PTL_OK);
  A().log().reusable = true;
  ptlc_md_spec n = Reuse(MakeMd(iov, 2, PTL_MD_OP_PUT | PTL_MD_IOVEC, 5));
  n.segs = segs;
  n.nsegs = 2;
  EXPECT_EQ(ptlc_md_update(A(), md, nullptr, nullptr, 0, nullptr, &n, PTL_EQ_NONE, 0),
            PTLC_MD_NEEDS_MEM);
  EXPECT_TRUE(A().log().reuse_asked.empty());
}

TEST_F(MdReuseTest, AnUpdateRefusedForItsEqSaysSoBeforeAnyReuse) {
  Eq eq(A(), 4);
  char buf[8] = {};
  int mem;
  ptl_handle_md_t md = AttachOver(buf, 8, &mem);
  A().log().reusable = true;
  ptlc_md_spec n = Reuse(MakeMd(buf, 8, PTL_MD_OP_PUT, 5));
  // The consumer claims a sequence the EQ is not at: not empty.
  EXPECT_EQ(ptlc_md_update(A(), md, nullptr, nullptr, 0, nullptr, &n, eq.handle(), 12345),
            PTL_MD_NO_UPDATE);
  EXPECT_TRUE(A().log().reuse_asked.empty());
  EXPECT_EQ(Read(A(), md).threshold, 1);
}

TEST_F(MdTest, UpdateReturnsIovecSegmentsUpToTheCallersCapacity) {
  char a[2], b[3], c[4];
  ptlc_seg segs[3] = {{uintptr_t(a), 2}, {uintptr_t(b), 3}, {uintptr_t(c), 4}};
  ptlc_md_spec s = Spec(MakeMd(segs, 3, PTL_MD_IOVEC));
  s.segs = segs;
  s.nsegs = 3;
  ptl_handle_md_t md;
  ASSERT_EQ(ptlc_md_bind(A(), &s, PTL_RETAIN, &md), PTL_OK);
  ptlc_seg out[2] = {};
  unsigned n = 0;
  ASSERT_EQ(ptlc_md_update(A(), md, nullptr, out, 2, &n, nullptr, PTL_EQ_NONE, 0), PTL_OK);
  EXPECT_EQ(n, 3u);
  EXPECT_EQ(out[0].addr, uintptr_t(a));
  EXPECT_EQ(out[1].len, 3u);
}

// ---- the segment walk ----

TEST_F(MdTest, IteratorSpansIovecBoundariesAndSkipsEmptySegments) {
  char a[3], b[1], c[5];
  ptlc_seg segs[4] = {{uintptr_t(a), 3}, {0, 0}, {uintptr_t(b), 1}, {uintptr_t(c), 5}};
  ptlc_md_spec s = Spec(MakeMd(segs, 4, PTL_MD_IOVEC | PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE));
  s.segs = segs;
  s.nsegs = 4;
  ptl_handle_md_t mdh;
  ASSERT_EQ(ptlc_md_attach(A(), A().Me(0), &s, PTL_RETAIN, &mdh), PTL_OK);
  // Put 5 bytes at offset 2: last of a... first bytes of c.
  char src[5] = {'1', '2', '3', '4', '5'};
  ptl_handle_md_t smd = A().Bind(MakeMd(src, 5, 0));
  ptlc_put_args args = PutArgs(smd, A().id(), 0, 0, PTL_NO_ACK_REQ);
  args.remote_offset = 2;
  ptlc_msg out, in;
  ASSERT_EQ(ptlc_put(A(), &args, false, &out), PTL_OK);
  ASSERT_EQ(ptlc_receive(A(), &out.hdr, 0, &in), PTLC_MSG_DEPOSIT);
  ptlc_md_iter it;
  ptlc_chunk ch;
  ptlc_md_iter_init(&it, in.md, in.offset, in.mlength);
  std::vector<std::pair<unsigned, uint64_t>> chunks;
  while (ptlc_md_iter_next(&it, &ch)) {
    chunks.push_back({ch.seg, ch.len});
    EXPECT_EQ(ch.addr, segs[ch.seg].addr + ch.seg_off);
  }
  EXPECT_EQ(chunks, (std::vector<std::pair<unsigned, uint64_t>>{{0, 1}, {2, 1}, {3, 3}}));
  WriteMd(in.md, in.offset, reinterpret_cast<uint8_t*>(src), 5);
  EXPECT_EQ(a[2], '1');
  EXPECT_EQ(b[0], '2');
  EXPECT_EQ(c[0], '3');
  EXPECT_EQ(c[2], '5');
  ptlc_msg_finalize(&in, PTL_NI_OK);
  ptlc_msg_finalize(&out, PTL_NI_OK);
}

TEST_F(MdTest, IteratorAtTheEndOfTheRegionYieldsNothing) {
  char a[4];
  ptl_handle_me_t me = A().Me(0);
  A().Attach(me, MakeMd(a, 4, PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE | PTL_MD_TRUNCATE));
  ptl_handle_md_t smd = A().Bind(MakeMd(a, 4, 0));
  ptlc_put_args args = PutArgs(smd, A().id(), 0, 0, PTL_NO_ACK_REQ);
  args.remote_offset = 4;
  ptlc_msg out, in;
  ASSERT_EQ(ptlc_put(A(), &args, false, &out), PTL_OK);
  ASSERT_EQ(ptlc_receive(A(), &out.hdr, 0, &in), PTLC_MSG_DEPOSIT);
  EXPECT_EQ(in.offset, 4u);
  EXPECT_EQ(in.mlength, 0u);
  ptlc_md_iter it;
  ptlc_chunk ch;
  ptlc_md_iter_init(&it, in.md, in.offset, in.mlength);
  EXPECT_FALSE(ptlc_md_iter_next(&it, &ch));
  ptlc_msg_finalize(&in, PTL_NI_OK);
  ptlc_msg_finalize(&out, PTL_NI_OK);
}

}  // namespace
}  // namespace ptltest
