// SPDX-License-Identifier: BSD-3-Clause
// The EQ reader over a synthetic ring that a test thread writes with the
// kernel's publication protocol (<p3api/eq_ring.h>): empty, in order, drops
// after a lap, sequence wrap-around, and the consumer page.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "eq.h"

namespace {

// The writer side, as kmod/core/ptl_eq_ring.c does it.
class RingWriter {
 public:
  explicit RingWriter(uint32_t nslots, ptl_seq_t first = 0)
      : ring_(nslots), nslots_(nslots), next_(first ? first : ptl_eq_ring_first_seq(nslots)) {
    ptl_seq_t start = next_ - nslots;  // slot i starts as -2N + i
    for (uint32_t i = 0; i < nslots; ++i) {
      ptl_seq_t s = start + i;
      ring_[s & (nslots - 1)].sequence = s;
    }
  }

  // Publishes one event whose mlength is `tag`.
  void Post(uint64_t tag) {
    ptl_seq_t s = next_++;
    ptl_event_t& slot = ring_[s & (nslots_ - 1)];
    __atomic_store_n(&slot.sequence, s - 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    slot.type = PTL_EVENT_PUT_END;
    slot.mlength = tag;
    slot.rlength = tag;
    __atomic_store_n(&slot.sequence, s, __ATOMIC_RELEASE);
  }

  const ptl_event_t* ring() const { return ring_.data(); }
  ptl_seq_t next() const { return next_; }

 private:
  std::vector<ptl_event_t> ring_;
  uint32_t nslots_;
  ptl_seq_t next_;
};

TEST(EqReader, EmptyRingIsEmpty) {
  RingWriter w(8);
  ptl_eq_ctl ctl{};
  ptl::EqReader r(w.ring(), 8, &ctl);
  ptl_event_t ev;
  EXPECT_EQ(r.Get(&ev), PTL_EQ_EMPTY);
  EXPECT_EQ(r.Pending(), 0u);
  EXPECT_EQ(ctl.consumer_seq, 0u) << "nothing consumed, nothing published";
}

TEST(EqReader, DeliversInOrderAndPublishesTheConsumerSequence) {
  RingWriter w(4);
  ptl_eq_ctl ctl{};
  ptl::EqReader r(w.ring(), 4, &ctl);
  for (uint64_t t = 1; t <= 3; ++t) w.Post(t);
  EXPECT_EQ(r.Pending(), 3u);
  ptl_event_t ev;
  ptl_seq_t first = ptl_eq_ring_first_seq(4);
  for (uint64_t t = 1; t <= 3; ++t) {
    ASSERT_EQ(r.Get(&ev), PTL_OK);
    EXPECT_EQ(ev.mlength, t);
    EXPECT_EQ(ev.sequence, first + t - 1);
    EXPECT_EQ(ctl.consumer_seq, first + t);
  }
  EXPECT_EQ(r.Get(&ev), PTL_EQ_EMPTY);
}

TEST(EqReader, LappedReaderGetsDroppedWithTheOldestThenTheRest) {
  RingWriter w(4);
  ptl::EqReader r(w.ring(), 4, nullptr);
  for (uint64_t t = 1; t <= 10; ++t) w.Post(t);  // 6 overwritten
  ptl_event_t ev;
  ASSERT_EQ(r.Get(&ev), PTL_EQ_DROPPED);
  EXPECT_EQ(ev.mlength, 7u);
  for (uint64_t t = 8; t <= 10; ++t) {
    ASSERT_EQ(r.Get(&ev), PTL_OK);
    EXPECT_EQ(ev.mlength, t);
  }
  EXPECT_EQ(r.Get(&ev), PTL_EQ_EMPTY);
}

TEST(EqReader, LappedByWholeLapsTheSlotAtExpectedIsTheOldest) {
  // 8 events into 4 slots: the slot the reader looks at holds event 5, the
  // oldest survivor, and the next three slots hold 6..8.
  RingWriter w(4);
  ptl::EqReader r(w.ring(), 4, nullptr);
  for (uint64_t t = 1; t <= 8; ++t) w.Post(t);
  ptl_event_t ev;
  ASSERT_EQ(r.Get(&ev), PTL_EQ_DROPPED);
  EXPECT_EQ(ev.mlength, 5u);
  for (uint64_t t = 6; t <= 8; ++t) {
    ASSERT_EQ(r.Get(&ev), PTL_OK);
    EXPECT_EQ(ev.mlength, t);
  }
  EXPECT_EQ(r.Get(&ev), PTL_EQ_EMPTY);
}

TEST(EqReader, SequencesWrapAroundZero) {
  // Sequences start at -N, so the first lap crosses zero.
  RingWriter w(2);
  ptl::EqReader r(w.ring(), 2, nullptr);
  ptl_event_t ev;
  for (uint64_t t = 1; t <= 7; ++t) {
    w.Post(t);
    ASSERT_EQ(r.Get(&ev), PTL_OK) << t;
    EXPECT_EQ(ev.mlength, t);
    EXPECT_EQ(r.Get(&ev), PTL_EQ_EMPTY);
  }
  EXPECT_EQ(r.expected(), ptl_eq_ring_first_seq(2) + 7);
}

TEST(EqReader, ConcurrentWriterIsReadWithoutLossWhenTheRingKeepsUp) {
  constexpr uint32_t kSlots = 1024;
  constexpr uint64_t kEvents = 200000;
  RingWriter w(kSlots);
  ptl::EqReader r(w.ring(), kSlots, nullptr);
  std::atomic<uint64_t> consumed{0};
  std::thread writer([&] {
    for (uint64_t t = 1; t <= kEvents; ++t) {
      // Stay less than a lap ahead so nothing may be dropped.
      while (t - consumed.load(std::memory_order_acquire) >= kSlots) std::this_thread::yield();
      w.Post(t);
    }
  });
  ptl_event_t ev;
  uint64_t want = 1;
  while (want <= kEvents) {
    int rc = r.Get(&ev);
    if (rc == PTL_EQ_EMPTY) continue;
    ASSERT_EQ(rc, PTL_OK);
    ASSERT_EQ(ev.mlength, want);
    ASSERT_EQ(ev.rlength, want) << "torn copy";
    consumed.store(want++, std::memory_order_release);
  }
  writer.join();
}

TEST(EqReader, ConcurrentFastWriterYieldsOrderedEventsAndDrops) {
  constexpr uint32_t kSlots = 8;
  constexpr uint64_t kEvents = 100000;
  RingWriter w(kSlots);
  ptl::EqReader r(w.ring(), kSlots, nullptr);
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (uint64_t t = 1; t <= kEvents; ++t) w.Post(t);
    done = true;
  });
  ptl_event_t ev;
  uint64_t last = 0;
  for (;;) {
    bool finished = done.load();
    int rc = r.Get(&ev);
    if (rc == PTL_EQ_EMPTY) {
      if (finished) break;
      continue;
    }
    ASSERT_TRUE(rc == PTL_OK || rc == PTL_EQ_DROPPED);
    ASSERT_EQ(ev.mlength, ev.rlength) << "torn copy";
    if (rc == PTL_OK) {
      ASSERT_EQ(ev.mlength, last + 1);
    } else {
      ASSERT_GT(ev.mlength, last + 1);
    }
    last = ev.mlength;
  }
  writer.join();
  EXPECT_EQ(last, kEvents);
}

}  // namespace
