// Event queues (6.6, 8.6, contracts 10, 14, 16): ring sizing, sequence
// numbers across wrap, overflow detection, EQ free, handler and notify.
#include "core_harness.h"

namespace ptltest {
namespace {

class EqTest : public CoreTest {
 protected:
  // n events via zero-length self puts into an MD posting only PUT_END.
  void Post(Eq& eq, int n) {
    if (!md_) {
      A().Attach(A().Me(0),
                 MakeMd(nullptr, 0, PTL_MD_OP_PUT | PTL_MD_EVENT_START_DISABLE, -1, eq.handle()));
      md_ = A().Bind(MakeMd(nullptr, 0, 0));
    }
    for (int i = 0; i < n; i++) {
      ptlc_put_args a = PutArgs(md_, A().id(), 0, 0, PTL_NO_ACK_REQ);
      a.remote_offset = 0;
      a.match_bits = 0;
      a.hdr_data = uint64_t(next_++);
      Put(A(), A(), a);
    }
  }
  ptl_handle_md_t md_ = 0;
  int next_ = 0;
};

TEST(EqSlots, CountsRoundUpToAPowerOfTwoOfAtLeastTwo) {
  EXPECT_EQ(ptlc_eq_slots_for(1), 2u);
  EXPECT_EQ(ptlc_eq_slots_for(2), 2u);
  EXPECT_EQ(ptlc_eq_slots_for(5), 8u);
  EXPECT_EQ(ptlc_eq_slots_for(8), 8u);
  EXPECT_EQ(ptlc_eq_slots_for(0), 0u) << "count 0 is PTL_EQ_NONE, decided by the glue";
  EXPECT_EQ(ptlc_eq_slots_for(1ULL << 32), 0u);
}

TEST_F(EqTest, AllocRejectsRingsThatAreNotPowersOfTwo) {
  std::vector<ptl_event_t> ring(3);
  ptl_handle_eq_t h;
  EXPECT_EQ(ptlc_eq_alloc(A(), ring.data(), 3, nullptr, nullptr, &h), PTL_NO_SPACE);
  EXPECT_EQ(ptlc_eq_alloc(A(), ring.data(), 1, nullptr, nullptr, &h), PTL_NO_SPACE);
}

TEST_F(EqTest, MoreEqsThanMaxEqsIsNoSpace) {
  ptl_ni_limits_t want{-1, -1, 1, -1, -1, -1, -1, -1};
  Ni ni(2, 1, 1, &want);
  Eq one(ni, 2);
  std::vector<ptl_event_t> ring(2);
  ptl_handle_eq_t h;
  EXPECT_EQ(ptlc_eq_alloc(ni, ring.data(), 2, nullptr, nullptr, &h), PTL_NO_SPACE);
}

TEST_F(EqTest, NewRingIsEmptyAndSequencesStartAtMinusN) {
  Eq eq(A(), 4);
  ptl_event_t ev;
  EXPECT_EQ(eq.Get(&ev), PTL_EQ_EMPTY);
  Post(eq, 1);
  ASSERT_EQ(eq.Get(&ev), PTL_OK);
  EXPECT_EQ(ev.sequence, ptl_seq_t(-4));
  EXPECT_EQ(eq.Get(&ev), PTL_EQ_EMPTY);
}

TEST_F(EqTest, SequencesStayConsecutiveAcrossTheWrapOfTheCounter) {
  Eq eq(A(), 4);
  std::vector<ptl_seq_t> seqs;
  for (int round = 0; round < 5; round++) {
    Post(eq, 3);
    for (const auto& ev : eq.Drain()) seqs.push_back(ptl_seq_t(ev.sequence));
  }
  ASSERT_EQ(seqs.size(), 15u);
  for (size_t i = 1; i < seqs.size(); i++) EXPECT_EQ(seqs[i], seqs[i - 1] + 1);
  EXPECT_EQ(seqs.front(), ptl_seq_t(-4));
  EXPECT_EQ(seqs.back(), 10u);
}

TEST_F(EqTest, FullRingIsDeliveredWithoutDrop) {
  Eq eq(A(), 4);
  Post(eq, 4);
  auto evs = eq.Drain();
  ASSERT_EQ(evs.size(), 4u);
  EXPECT_EQ(evs[0].hdr_data, 0u);
  EXPECT_EQ(evs[3].hdr_data, 3u);
}

TEST_F(EqTest, OverflowReportsDroppedWithTheOldestSurvivorThenTheRestInOrder) {
  Eq eq(A(), 4);
  Post(eq, 7);  // events 0..6; ring keeps 3..6
  ptl_event_t ev;
  ASSERT_EQ(eq.Get(&ev), PTL_EQ_DROPPED);
  EXPECT_EQ(ev.hdr_data, 3u);
  ptl_seq_t prev = ev.sequence;
  for (uint64_t want = 4; want <= 6; want++) {
    ASSERT_EQ(eq.Get(&ev), PTL_OK);
    EXPECT_EQ(ev.hdr_data, want);
    EXPECT_EQ(ev.sequence, prev + 1);
    prev = ev.sequence;
  }
  EXPECT_EQ(eq.Get(&ev), PTL_EQ_EMPTY);
}

TEST_F(EqTest, OverflowByManyLapsStillFindsTheOldestSurvivor) {
  Eq eq(A(), 2);
  Post(eq, 11);
  ptl_event_t ev;
  ASSERT_EQ(eq.Get(&ev), PTL_EQ_DROPPED);
  EXPECT_EQ(ev.hdr_data, 9u);
  ASSERT_EQ(eq.Get(&ev), PTL_OK);
  EXPECT_EQ(ev.hdr_data, 10u);
}

TEST_F(EqTest, FreedEqIsNeverWrittenAgainAndItsMdsKeepWorking) {
  auto eq = std::make_unique<Eq>(A(), 4);
  Post(*eq, 1);
  ASSERT_EQ(eq->Free(), PTL_OK);
  std::vector<ptl_event_t> before = eq->ring();
  int notified = A().log().notified;
  Post(*eq, 3);
  EXPECT_EQ(A().log().notified, notified) << "no event written after PtlEQFree";
  EXPECT_EQ(std::memcmp(before.data(), eq->ring().data(), before.size() * sizeof(ptl_event_t)), 0);
  EXPECT_EQ(ptlc_eq_free(A(), eq->handle(), nullptr), PTL_EQ_INVALID);
  ptl_md_t cur;
  ASSERT_EQ(ptlc_md_update(A(), md_, &cur, nullptr, 0, nullptr, nullptr, PTL_EQ_NONE, 0), PTL_OK);
}

TEST_F(EqTest, MdSnapshotShowsNoEqAfterTheEqIsFreed) {
  Eq eq(A(), 4);
  ptl_handle_md_t md = A().Bind(MakeMd(nullptr, 0, 0, 1, eq.handle()));
  ASSERT_EQ(eq.Free(), PTL_OK);
  ptl_md_t cur;
  ASSERT_EQ(ptlc_md_update(A(), md, &cur, nullptr, 0, nullptr, nullptr, PTL_EQ_NONE, 0), PTL_OK);
  EXPECT_EQ(cur.eq_handle, PTL_EQ_NONE);
}

std::vector<ptl_event_t> g_handled;
void Handler(ptl_event_t* ev) { g_handled.push_back(*ev); }

TEST_F(EqTest, HandlerSeesEveryEventWithItsSequenceAndNotifyFires) {
  g_handled.clear();
  Eq eq(A(), 4, Handler);
  Post(eq, 2);
  ASSERT_EQ(g_handled.size(), 2u);
  EXPECT_EQ(g_handled[0].type, PTL_EVENT_PUT_END);
  EXPECT_EQ(g_handled[1].sequence, g_handled[0].sequence + 1);
  EXPECT_EQ(A().log().notified, 2);
}

TEST_F(EqTest, InfoReportsGeometryAndNextSequence) {
  Eq eq(A(), 8);
  uint32_t n = 0;
  ptl_seq_t next = 0;
  void* priv = nullptr;
  ASSERT_EQ(ptlc_eq_info(A(), eq.handle(), &n, &next, &priv), PTL_OK);
  EXPECT_EQ(n, 8u);
  EXPECT_EQ(next, ptl_seq_t(-8));
  EXPECT_EQ(priv, &eq);
}

TEST(EqRing, ReaderThatIsNotFromThisRingGetsEmptyNotAHang) {
  std::vector<ptl_event_t> ring(4);
  for (uint32_t i = 0; i < 4; i++) ring[i].sequence = i - 8;
  ptl_seq_t bogus = 12345;
  ptl_event_t ev;
  EXPECT_EQ(ptl_eq_ring_get(ring.data(), 4, &bogus, &ev), PTL_EQ_EMPTY);
}

}  // namespace
}  // namespace ptltest
