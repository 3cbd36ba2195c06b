// Event contents (table 8.5, contracts 6-9): every field of every kind.
#include "core_harness.h"

namespace ptltest {
namespace {

class EventTest : public CoreTest {
 protected:
  void SetUp() override {
    CoreTest::SetUp();
    aeq_ = std::make_unique<Eq>(A(), 32);
    beq_ = std::make_unique<Eq>(B(), 32);
  }
  void TearDown() override {
    aeq_.reset();
    beq_.reset();
    CoreTest::TearDown();
  }
  std::unique_ptr<Eq> aeq_, beq_;  // A initiates, B is the target
  char tgt_[32] = {};
  char src_[16] = "0123456789abcde";
};

void ExpectMdSnapshot(const ptl_event_t& ev, const void* start, ptl_size_t len, int threshold,
                      ptl_handle_eq_t eq) {
  EXPECT_EQ(ev.md.start, start);
  EXPECT_EQ(ev.md.length, len);
  EXPECT_EQ(ev.md.threshold, threshold);
  EXPECT_EQ(ev.md.eq_handle, eq);
  EXPECT_EQ(ev.md.user_ptr, reinterpret_cast<void*>(0x5eed));
}

TEST_F(EventTest, PutWithAckFillsSendPutAndAckEventsAsSpecified) {
  ptl_handle_md_t tmd = B().Attach(
      B().Me(6, 0xabc), MakeMd(tgt_, 32, PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE, 5, beq_->handle()));
  ptl_handle_md_t smd = A().Bind(MakeMd(src_, 16, 0, 3, aeq_->handle()));
  ptlc_put_args a = PutArgs(smd, B().id(), 6, 0xabc, PTL_ACK_REQ);
  a.local_offset = 2;
  a.length = 10;
  a.remote_offset = 4;
  a.hdr_data = 0xdada;
  Put(A(), B(), a, /*region=*/true);
  EXPECT_EQ(std::string(tgt_ + 4, 10), "23456789ab");

  auto init = aeq_->Drain();
  ASSERT_EQ(init.size(), 3u);
  EXPECT_EQ(init[0].type, PTL_EVENT_SEND_START);
  EXPECT_EQ(init[1].type, PTL_EVENT_SEND_END);
  EXPECT_EQ(init[2].type, PTL_EVENT_ACK);
  for (int i = 0; i < 2; i++) {
    const auto& ev = init[i];
    EXPECT_EQ(ev.initiator.nid, A().id().nid);
    EXPECT_EQ(ev.initiator.pid, A().id().pid);
    EXPECT_EQ(ev.uid, kUid);
    EXPECT_EQ(ev.jid, kJid);
    EXPECT_EQ(ev.pt_index, 6u);
    EXPECT_EQ(ev.match_bits, 0xabcu);
    EXPECT_EQ(ev.rlength, 10u);
    EXPECT_EQ(ev.mlength, 10u);
    EXPECT_EQ(ev.offset, 4u);
    EXPECT_EQ(ev.hdr_data, 0xdadau);
    EXPECT_EQ(ev.md_handle, smd);
    EXPECT_EQ(ev.ni_fail_type, PTL_NI_OK);
    ExpectMdSnapshot(ev, src_, 16, 2, aeq_->handle());
  }
  EXPECT_EQ(init[0].link, init[0].sequence);
  EXPECT_EQ(init[1].link, init[0].sequence);
  const auto& ack = init[2];
  EXPECT_EQ(ack.initiator.nid, B().id().nid);
  EXPECT_EQ(ack.initiator.pid, B().id().pid);
  EXPECT_EQ(ack.uid, kUid);
  EXPECT_EQ(ack.jid, kJid);
  EXPECT_EQ(ack.pt_index, 6u);
  EXPECT_EQ(ack.match_bits, 0xabcu);
  EXPECT_EQ(ack.rlength, 10u);
  EXPECT_EQ(ack.mlength, 10u);
  EXPECT_EQ(ack.offset, 4u);
  EXPECT_EQ(ack.hdr_data, 0u);
  EXPECT_EQ(ack.md.threshold, 1) << "the ACK consumed a threshold unit";

  auto tgt = beq_->Drain();
  ASSERT_EQ(tgt.size(), 2u);
  EXPECT_EQ(tgt[0].type, PTL_EVENT_PUT_START);
  EXPECT_EQ(tgt[1].type, PTL_EVENT_PUT_END);
  for (const auto& ev : tgt) {
    EXPECT_EQ(ev.initiator.nid, A().id().nid);
    EXPECT_EQ(ev.initiator.pid, A().id().pid);
    EXPECT_EQ(ev.uid, kUid);
    EXPECT_EQ(ev.jid, kJid);
    EXPECT_EQ(ev.pt_index, 6u);
    EXPECT_EQ(ev.match_bits, 0xabcu);
    EXPECT_EQ(ev.rlength, 10u);
    EXPECT_EQ(ev.mlength, 10u);
    EXPECT_EQ(ev.offset, 4u);
    EXPECT_EQ(ev.hdr_data, 0xdadau);
    EXPECT_EQ(ev.md_handle, tmd);
    ExpectMdSnapshot(ev, tgt_, 32, 4, beq_->handle());
  }
  EXPECT_EQ(tgt[1].link, tgt[0].sequence);
}

TEST_F(EventTest, GetFillsGetAndReplyEvents) {
  std::memcpy(tgt_, "abcdefghijklmnopqrstuvwxyz", 26);
  ptl_handle_md_t tmd = B().Attach(
      B().Me(2, 0x77), MakeMd(tgt_, 32, PTL_MD_OP_GET | PTL_MD_MANAGE_REMOTE, -1, beq_->handle()));
  char sink[16] = {};
  ptl_handle_md_t gmd = A().Bind(MakeMd(sink, 16, 0, 1, aeq_->handle()), PTL_UNLINK);
  ptlc_put_args a = PutArgs(gmd, B().id(), 2, 0x77);
  a.local_offset = 3;
  a.length = 5;
  a.remote_offset = 10;
  a.hdr_data = 0x1234;  // ignored by get
  Get(A(), B(), a, true);
  EXPECT_EQ(std::string(sink + 3, 5), "klmno");

  auto tgt = beq_->Drain();
  ASSERT_EQ(tgt.size(), 2u);
  EXPECT_EQ(tgt[0].type, PTL_EVENT_GET_START);
  EXPECT_EQ(tgt[1].type, PTL_EVENT_GET_END);
  for (const auto& ev : tgt) {
    EXPECT_EQ(ev.initiator.pid, A().id().pid);
    EXPECT_EQ(ev.pt_index, 2u);
    EXPECT_EQ(ev.match_bits, 0x77u);
    EXPECT_EQ(ev.rlength, 5u);
    EXPECT_EQ(ev.mlength, 5u);
    EXPECT_EQ(ev.offset, 10u);
    EXPECT_EQ(ev.hdr_data, 0u);
    EXPECT_EQ(ev.md_handle, tmd);
  }

  auto init = aeq_->Drain();
  ASSERT_EQ(init.size(), 3u) << "no events when the get is issued; reply pair; unlink";
  EXPECT_EQ(init[0].type, PTL_EVENT_REPLY_START);
  EXPECT_EQ(init[1].type, PTL_EVENT_REPLY_END);
  EXPECT_EQ(init[2].type, PTL_EVENT_UNLINK);
  for (const auto& ev : init) {
    EXPECT_EQ(ev.initiator.nid, B().id().nid);
    EXPECT_EQ(ev.initiator.pid, B().id().pid);
    EXPECT_EQ(ev.pt_index, 2u);
    EXPECT_EQ(ev.match_bits, 0x77u);
    EXPECT_EQ(ev.rlength, 5u);
    EXPECT_EQ(ev.mlength, 5u);
    EXPECT_EQ(ev.offset, 3u);
    EXPECT_EQ(ev.hdr_data, 0u);
    EXPECT_EQ(ev.md_handle, gmd);
    EXPECT_EQ(ev.md.threshold, 0);
  }
  EXPECT_EQ(init[1].link, init[0].sequence);
  EXPECT_EQ(init[2].link, init[1].sequence) << "UNLINK links to the END that caused it";
  EXPECT_FALSE(A().MdLive(gmd));
}

TEST_F(EventTest, GetPutSwapsAndCarriesHdrData) {
  std::memcpy(tgt_, "OLDVALUE", 8);
  B().Attach(B().Me(1, 9), MakeMd(tgt_, 8, PTL_MD_OP_GET | PTL_MD_OP_PUT, -1, beq_->handle()));
  char newval[8] = {'N', 'E', 'W', 'V', 'A', 'L', 'U', 'E'};
  char oldval[8] = {};
  ptl_handle_md_t put = A().Bind(MakeMd(newval, 8, 0, -1, aeq_->handle()));
  ptl_handle_md_t get = A().Bind(MakeMd(oldval, 8, 0, -1, aeq_->handle()));
  ptlc_put_args a = PutArgs(put, B().id(), 1, 9);
  a.hdr_data = 0xfeed;
  ptlc_msg msg;
  ASSERT_EQ(ptlc_getput(A(), get, &a, &msg), PTL_OK);
  Delivery d = Receive(B(), SendAndComplete(msg));
  ASSERT_EQ(d.first, PTLC_MSG_SWAP);
  ASSERT_TRUE(d.response);
  Receive(A(), *d.response);
  EXPECT_EQ(std::string(tgt_, 8), "NEWVALUE");
  EXPECT_EQ(std::string(oldval, 8), "OLDVALUE");

  auto tgt = beq_->Drain();
  ASSERT_EQ(tgt.size(), 2u);
  EXPECT_EQ(tgt[0].type, PTL_EVENT_GETPUT_START);
  EXPECT_EQ(tgt[1].type, PTL_EVENT_GETPUT_END);
  EXPECT_EQ(tgt[1].hdr_data, 0xfeedu) << "contract 8";
  EXPECT_EQ(tgt[1].rlength, 8u);
  EXPECT_EQ(tgt[1].mlength, 8u);

  auto init = aeq_->Drain();
  ASSERT_EQ(init.size(), 4u);
  EXPECT_EQ(init[0].type, PTL_EVENT_SEND_START);
  EXPECT_EQ(init[0].md_handle, put);
  EXPECT_EQ(init[1].type, PTL_EVENT_SEND_END);
  EXPECT_EQ(init[2].type, PTL_EVENT_REPLY_START);
  EXPECT_EQ(init[2].md_handle, get);
  EXPECT_EQ(init[3].type, PTL_EVENT_REPLY_END);
  EXPECT_EQ(init[3].offset, 0u);
}

TEST_F(EventTest, StartOrEndDisableSuppressesThatKindOnly) {
  B().Attach(B().Me(0),
             MakeMd(tgt_, 32, PTL_MD_OP_PUT | PTL_MD_EVENT_START_DISABLE, -1, beq_->handle()));
  ptl_handle_md_t smd = A().Bind(MakeMd(src_, 4, PTL_MD_EVENT_END_DISABLE, -1, aeq_->handle()));
  Put(A(), B(), PutArgs(smd, B().id(), 0));
  EXPECT_EQ(beq_->Kinds(), (std::vector<ptl_event_kind_t>{PTL_EVENT_PUT_END}));
  EXPECT_EQ(aeq_->Kinds(), (std::vector<ptl_event_kind_t>{PTL_EVENT_SEND_START, PTL_EVENT_ACK}));
}

TEST_F(EventTest, BothDisabledMeansNoEventsAtAllButUnlinkStillHappens) {
  ptl_handle_me_t me = B().Me(0);
  ptl_handle_md_t md = B().Attach(
      me, MakeMd(tgt_, 32, PTL_MD_OP_PUT | PTL_MD_EVENT_START_DISABLE | PTL_MD_EVENT_END_DISABLE, 1,
                 beq_->handle()));
  ptl_handle_md_t smd = A().Bind(MakeMd(src_, 4, 0));
  Put(A(), B(), PutArgs(smd, B().id(), 0, 0, PTL_NO_ACK_REQ));
  EXPECT_TRUE(beq_->Drain().empty());
  EXPECT_FALSE(B().MdLive(md));
  EXPECT_FALSE(B().MeLive(me));
}

TEST_F(EventTest, UnlinkLinksToTheStartWhenEndEventsAreDisabled) {
  B().Attach(B().Me(0),
             MakeMd(tgt_, 32, PTL_MD_OP_PUT | PTL_MD_EVENT_END_DISABLE, 1, beq_->handle()));
  ptl_handle_md_t smd = A().Bind(MakeMd(src_, 4, 0));
  Put(A(), B(), PutArgs(smd, B().id(), 0, 0, PTL_NO_ACK_REQ));
  auto evs = beq_->Drain();
  ASSERT_EQ(evs.size(), 2u);
  EXPECT_EQ(evs[0].type, PTL_EVENT_PUT_START);
  EXPECT_EQ(evs[1].type, PTL_EVENT_UNLINK);
  EXPECT_EQ(evs[1].link, evs[0].sequence);
  EXPECT_EQ(evs[1].mlength, 4u) << "UNLINK carries the fields of its operation";
}

TEST_F(EventTest, AckIsNotSentWhenTheTargetMdDisablesIt) {
  B().Attach(B().Me(0), MakeMd(tgt_, 32, PTL_MD_OP_PUT | PTL_MD_ACK_DISABLE));
  ptl_handle_md_t smd = A().Bind(MakeMd(src_, 4, 0, -1, aeq_->handle()));
  Delivery d = Put(A(), B(), PutArgs(smd, B().id(), 0, 0, PTL_ACK_REQ));
  EXPECT_FALSE(d.response);
  EXPECT_EQ(aeq_->Kinds(),
            (std::vector<ptl_event_kind_t>{PTL_EVENT_SEND_START, PTL_EVENT_SEND_END}));
}

TEST_F(EventTest, NoAckRequestedMeansNoAck) {
  B().Attach(B().Me(0), MakeMd(tgt_, 32, PTL_MD_OP_PUT));
  ptl_handle_md_t smd = A().Bind(MakeMd(src_, 4, 0));
  EXPECT_FALSE(Put(A(), B(), PutArgs(smd, B().id(), 0, 0, PTL_NO_ACK_REQ)).response);
}

TEST_F(EventTest, FailedTransferIsReportedInTheEndEventAndOwesNoAck) {
  B().Attach(B().Me(0), MakeMd(tgt_, 32, PTL_MD_OP_PUT, -1, beq_->handle()));
  ptl_handle_md_t smd = A().Bind(MakeMd(src_, 4, 0, -1, aeq_->handle()));
  ptlc_msg msg;
  ptlc_put_args a = PutArgs(smd, B().id(), 0);
  ASSERT_EQ(ptlc_put(A(), &a, false, &msg), PTL_OK);
  Bytes frame = SendAndComplete(msg, PTL_NI_FAIL);
  Delivery d = Receive(B(), frame, PTL_NI_FAIL);
  EXPECT_FALSE(d.response);
  auto init = aeq_->Drain();
  ASSERT_EQ(init.size(), 2u);
  EXPECT_EQ(init[0].ni_fail_type, PTL_NI_OK) << "START events are always OK";
  EXPECT_EQ(init[1].ni_fail_type, PTL_NI_FAIL);
  auto tgt = beq_->Drain();
  ASSERT_EQ(tgt.size(), 2u);
  EXPECT_EQ(tgt[1].ni_fail_type, PTL_NI_FAIL);
}

}  // namespace
}  // namespace ptltest
