// Data movement protocol: initiator checks, ACK/REPLY validation, ordering
// of events for self sends and acks, intra-node delivery.
#include "core_harness.h"

namespace ptltest {
namespace {

class DataTest : public CoreTest {
 protected:
  char buf_[16] = "fifteen bytes..";
  char dst_[16] = {};
};

TEST_F(DataTest, InitiatingFromAnInactiveOrStaleMdIsMdInvalid) {
  ptl_handle_md_t md = A().Bind(MakeMd(buf_, 8, 0, 1));
  ptlc_msg msg;
  ptlc_put_args a = PutArgs(md, B().id(), 0, 0, PTL_NO_ACK_REQ);
  ASSERT_EQ(ptlc_put(A(), &a, false, &msg), PTL_OK);
  ptlc_msg_finalize(&msg, PTL_NI_OK);
  EXPECT_EQ(ptlc_put(A(), &a, false, &msg), PTL_MD_INVALID) << "threshold used up";
  EXPECT_EQ(ptlc_get(A(), &a, false, &msg), PTL_MD_INVALID);
  a.md = 0x1234;
  EXPECT_EQ(ptlc_put(A(), &a, false, &msg), PTL_MD_INVALID);
  a.md = A().Me(0);
  EXPECT_EQ(ptlc_put(A(), &a, false, &msg), PTL_MD_INVALID) << "an ME handle is not an MD";
}

TEST_F(DataTest, RegionsOutsideTheMdAreMdIllegalAndTheEndIsInside) {
  ptl_handle_md_t md = A().Bind(MakeMd(buf_, 8, 0));
  ptlc_msg msg;
  ptlc_put_args a = PutArgs(md, B().id(), 0, 0, PTL_NO_ACK_REQ);
  a.local_offset = 4;
  a.length = 5;
  EXPECT_EQ(ptlc_put(A(), &a, true, &msg), PTL_MD_ILLEGAL);
  EXPECT_EQ(ptlc_get(A(), &a, true, &msg), PTL_MD_ILLEGAL);
  a.local_offset = ~0ULL;
  a.length = 2;
  EXPECT_EQ(ptlc_put(A(), &a, true, &msg), PTL_MD_ILLEGAL) << "no wrap-around";
  a.local_offset = 8;
  a.length = 0;
  ASSERT_EQ(ptlc_put(A(), &a, true, &msg), PTL_OK) << "zero bytes at the end";
  EXPECT_EQ(msg.mlength, 0u);
  ptlc_msg_finalize(&msg, PTL_NI_OK);
}

TEST_F(DataTest, GetPutChecksLimitsAndNis) {
  char big[PTLC_CAP_GETPUT_MD + 1];
  ptl_handle_md_t get = A().Bind(MakeMd(buf_, 8, 0));
  ptl_handle_md_t put = A().Bind(MakeMd(big, sizeof(big), 0));
  ptlc_msg msg;
  ptlc_put_args a = PutArgs(put, B().id(), 0);
  EXPECT_EQ(ptlc_getput(A(), get, &a, &msg), PTL_MD_ILLEGAL);
  a.md = B().Bind(MakeMd(buf_, 8, 0));
  EXPECT_EQ(ptlc_getput(A(), get, &a, &msg), PTL_MD_ILLEGAL) << "MDs of different NIs";
  a.md = get;
  EXPECT_EQ(ptlc_getput(A(), 0x777, &a, &msg), PTL_MD_INVALID);
  ASSERT_EQ(ptlc_getput(A(), get, &a, &msg), PTL_OK) << "one MD may serve both roles";
  ptlc_msg_finalize(&msg, PTL_NI_OK);
}

TEST_F(DataTest, IssuingAGetDoesNotConsumeThresholdTheReplyDoes) {
  B().Attach(B().Me(0), MakeMd(buf_, 8, PTL_MD_OP_GET));
  ptl_handle_md_t md = A().Bind(MakeMd(dst_, 8, 0, 1), PTL_RETAIN);
  ptlc_msg msg;
  ptlc_put_args a = PutArgs(md, B().id(), 0);
  ASSERT_EQ(ptlc_get(A(), &a, false, &msg), PTL_OK);
  EXPECT_EQ(msg.mlength, 0u) << "a get request carries no data";
  ptl_md_t cur;
  ptlc_md_update(A(), md, &cur, nullptr, 0, nullptr, nullptr, PTL_EQ_NONE, 0);
  EXPECT_EQ(cur.threshold, 1);
  Delivery d = Receive(B(), SendAndComplete(msg));
  ASSERT_TRUE(d.response);
  EXPECT_EQ(Receive(A(), *d.response).first, PTLC_MSG_DEPOSIT);
  ptlc_md_update(A(), md, &cur, nullptr, 0, nullptr, nullptr, PTL_EQ_NONE, 0);
  EXPECT_EQ(cur.threshold, 0);
  EXPECT_EQ(std::string(dst_, 8), std::string(buf_, 8));
}

// A get whose request the network could not deliver must end, or its
// caller would wait for a reply forever: REPLY_END with the failure, no
// threshold consumed, no START.
TEST_F(DataTest, UndeliveredGetRequestEndsWithAFailedReplyEnd) {
  Eq eq(A(), 8);
  ptl_handle_md_t md = A().Bind(MakeMd(dst_, 8, 0, 1, eq.handle()), PTL_RETAIN);
  ptlc_msg msg;
  ptlc_put_args a = PutArgs(md, B().id(), 3);
  a.match_bits = 0x55;
  ASSERT_EQ(ptlc_get(A(), &a, false, &msg), PTL_OK);
  EXPECT_TRUE(eq.Drain().empty()) << "a get request posts nothing";
  ASSERT_EQ(ptlc_msg_finalize(&msg, PTL_NI_FAIL), PTLC_MSG_DONE);
  std::vector<ptl_event_t> evs = eq.Drain();
  ASSERT_EQ(evs.size(), 1u);
  EXPECT_EQ(evs[0].type, PTL_EVENT_REPLY_END);
  EXPECT_EQ(evs[0].ni_fail_type, static_cast<ptl_ni_fail_t>(PTL_NI_FAIL));
  EXPECT_EQ(evs[0].initiator.nid, B().id().nid);
  EXPECT_EQ(evs[0].initiator.pid, B().id().pid);
  EXPECT_EQ(evs[0].pt_index, 3u);
  EXPECT_EQ(evs[0].match_bits, 0x55u);
  EXPECT_EQ(evs[0].rlength, 8u);
  EXPECT_EQ(evs[0].mlength, 0u);
  EXPECT_EQ(evs[0].md.threshold, 1) << "no reply consumed the threshold";

  // A delivered request posts nothing: the reply will.
  ASSERT_EQ(ptlc_get(A(), &a, false, &msg), PTL_OK);
  ASSERT_EQ(ptlc_msg_finalize(&msg, PTL_NI_OK), PTLC_MSG_DONE);
  EXPECT_TRUE(eq.Drain().empty());
}

TEST_F(DataTest, PutMdWithThresholdOneDiscardsItsAckUncounted) {
  Eq eq(A(), 8);
  B().Attach(B().Me(0), MakeMd(dst_, 16, PTL_MD_OP_PUT));
  ptl_handle_md_t md = A().Bind(MakeMd(buf_, 4, 0, 1, eq.handle()), PTL_UNLINK);
  ptlc_msg msg;
  ptlc_put_args a = PutArgs(md, B().id(), 0);
  ASSERT_EQ(ptlc_put(A(), &a, false, &msg), PTL_OK);
  Delivery d = Receive(B(), SendAndComplete(msg));
  ASSERT_TRUE(d.response);
  EXPECT_EQ(Receive(A(), *d.response).first, PTLC_MSG_DROP);
  EXPECT_EQ(eq.Kinds(), (std::vector<ptl_event_kind_t>{PTL_EVENT_SEND_START, PTL_EVENT_SEND_END,
                                                       PTL_EVENT_UNLINK}));
  EXPECT_EQ(A().Sr(PTL_SR_DROP_COUNT), 0u) << "ACK drops are not counted (8.8)";
  EXPECT_EQ(A().Sr(PTLC_SR_ACK_DROPS), 1u);
}

TEST_F(DataTest, LateAckToARecycledMdSlotIsDropped) {
  B().Attach(B().Me(0), MakeMd(dst_, 16, PTL_MD_OP_PUT));
  Eq eq(A(), 8);
  ptl_handle_md_t md = A().Bind(MakeMd(buf_, 4, 0, -1));
  ptlc_msg msg;
  ptlc_put_args a = PutArgs(md, B().id(), 0);
  ASSERT_EQ(ptlc_put(A(), &a, false, &msg), PTL_OK);
  Bytes frame = SendAndComplete(msg);
  ASSERT_EQ(ptlc_md_unlink(A(), md), PTL_OK);
  // Recycle slots until the old index is reused with a new generation.
  for (int i = 0; i < 300; i++) {
    ptl_handle_md_t h = A().Bind(MakeMd(buf_, 4, 0, -1, eq.handle()));
    ASSERT_EQ(ptlc_md_unlink(A(), h), PTL_OK);
  }
  ptl_handle_md_t fresh = A().Bind(MakeMd(buf_, 4, 0, -1, eq.handle()));
  Delivery d = Receive(B(), frame);
  ASSERT_TRUE(d.response);
  Delivery ack = Receive(A(), *d.response);
  EXPECT_EQ(ack.first, PTLC_MSG_DROP);
  EXPECT_EQ(ack.drop, PTLC_DROP_STALE_MD);
  EXPECT_TRUE(eq.Drain().empty()) << "the new MD saw nothing";
  (void)fresh;
}

TEST_F(DataTest, ReplyToAnUnlinkedGetMdIsDroppedAndCounted) {
  B().Attach(B().Me(0), MakeMd(buf_, 8, PTL_MD_OP_GET));
  ptl_handle_md_t md = A().Bind(MakeMd(dst_, 8, 0));
  ptlc_msg msg;
  ptlc_put_args a = PutArgs(md, B().id(), 0);
  ASSERT_EQ(ptlc_get(A(), &a, false, &msg), PTL_OK);
  Bytes frame = SendAndComplete(msg);
  ASSERT_EQ(ptlc_md_unlink(A(), md), PTL_OK) << "the get's reference ended with the request";
  Delivery d = Receive(B(), frame);
  Delivery r = Receive(A(), *d.response);
  EXPECT_EQ(r.drop, PTLC_DROP_STALE_MD);
  EXPECT_EQ(A().Sr(PTL_SR_DROP_COUNT), 1u);
  EXPECT_EQ(A().Sr(PTL_SR_DROP_LENGTH), 8u);
}

TEST_F(DataTest, ReplyLongerThanTheInitiatorMdIsDroppedUnlessTruncating) {
  B().Attach(B().Me(0), MakeMd(buf_, 16, PTL_MD_OP_GET | PTL_MD_MANAGE_REMOTE));
  // Forge a reply that claims more than the get asked for.
  ptl_handle_md_t md = A().Bind(MakeMd(dst_, 4, 0));
  ptl_handle_md_t tr = A().Bind(MakeMd(dst_, 4, PTL_MD_TRUNCATE));
  for (auto [h, want] : {std::pair{md, PTLC_MSG_DROP}, std::pair{tr, PTLC_MSG_DEPOSIT}}) {
    ptlc_msg msg;
    ptlc_put_args a = PutArgs(h, B().id(), 0);
    ASSERT_EQ(ptlc_get(A(), &a, false, &msg), PTL_OK);
    msg.hdr.rlength = 8;  // as if the MD had been 8 bytes when asked
    Delivery d = Receive(B(), SendAndComplete(msg));
    ptl_hdr rep = Decode(*d.response);
    ptlc_msg in;
    EXPECT_EQ(ptlc_receive(A(), &rep, 0, &in), want);
    if (want == PTLC_MSG_DEPOSIT) {
      EXPECT_EQ(in.mlength, 4u);
      ptlc_msg_finalize(&in, PTL_NI_OK);
    } else {
      EXPECT_EQ(in.drop, PTLC_DROP_REPLY_TOO_LONG);
    }
  }
}

TEST_F(DataTest, SelfPutWithDeferredStartGivesTheReferenceOrder) {
  Eq eq(A(), 16);
  A().Attach(A().Me(0), MakeMd(dst_, 16, PTL_MD_OP_PUT, -1, eq.handle()));
  ptl_handle_md_t md = A().Bind(MakeMd(buf_, 4, 0, -1, eq.handle()));
  ptlc_msg out, in;
  ptlc_put_args a = PutArgs(md, A().id(), 0, 0, PTL_NO_ACK_REQ);
  ASSERT_EQ(ptlc_put(A(), &a, false, &out), PTL_OK);
  ASSERT_EQ(ptlc_receive(A(), &out.hdr, PTLC_RECV_DEFER_START, &in), PTLC_MSG_DEPOSIT);
  WriteMd(in.md, in.offset, reinterpret_cast<const uint8_t*>(buf_), in.mlength);
  ASSERT_EQ(ptlc_msg_finalize(&out, PTL_NI_OK), PTLC_MSG_DONE);
  ASSERT_EQ(ptlc_msg_finalize(&in, PTL_NI_OK), PTLC_MSG_DONE);
  auto evs = eq.Drain();
  ASSERT_EQ(evs.size(), 4u);
  EXPECT_EQ(evs[0].type, PTL_EVENT_SEND_START);
  EXPECT_EQ(evs[1].type, PTL_EVENT_SEND_END);
  EXPECT_EQ(evs[2].type, PTL_EVENT_PUT_START);
  EXPECT_EQ(evs[3].type, PTL_EVENT_PUT_END);
  EXPECT_EQ(evs[3].link, evs[2].sequence);
}

TEST_F(DataTest, PutEndIsPostedOnlyAfterTheAckWasSent) {
  Eq eq(B(), 16);
  B().Attach(B().Me(0), MakeMd(dst_, 16, PTL_MD_OP_PUT, -1, eq.handle()));
  ptl_handle_md_t md = A().Bind(MakeMd(buf_, 4, 0));
  ptlc_msg out, in;
  ptlc_put_args a = PutArgs(md, B().id(), 0, 0, PTL_ACK_REQ);
  ASSERT_EQ(ptlc_put(A(), &a, false, &out), PTL_OK);
  ptl_hdr h = Decode(SendAndComplete(out));
  ASSERT_EQ(ptlc_receive(B(), &h, 0, &in), PTLC_MSG_DEPOSIT);
  ASSERT_EQ(ptlc_msg_finalize(&in, PTL_NI_OK), PTLC_MSG_SEND_ACK);
  EXPECT_EQ(in.hdr.type, uint32_t(PTL_MSG_ACK));
  EXPECT_EQ(eq.Kinds(), (std::vector<ptl_event_kind_t>{PTL_EVENT_PUT_START}));
  ASSERT_EQ(ptlc_msg_finalize(&in, PTL_NI_OK), PTLC_MSG_DONE);
  EXPECT_EQ(eq.Kinds(), (std::vector<ptl_event_kind_t>{PTL_EVENT_PUT_END}));
}

TEST_F(DataTest, GetPutPayloadBeyondMaxGetputMdIsDroppedAtTheTarget) {
  B().Attach(B().Me(0), MakeMd(dst_, 16, PTL_MD_OP_GET | PTL_MD_OP_PUT));
  ptl_hdr h{};
  h.type = PTL_MSG_GETPUT;
  h.dst = B().id();
  h.src = A().id();
  h.src_uid = kUid;
  h.rlength = PTLC_CAP_GETPUT_MD + 1;
  ptlc_msg in;
  EXPECT_EQ(ptlc_receive(B(), &h, 0, &in), PTLC_MSG_DROP);
  EXPECT_EQ(B().Sr(PTL_SR_DROP_COUNT), 1u);
}

}  // namespace
}  // namespace ptltest
