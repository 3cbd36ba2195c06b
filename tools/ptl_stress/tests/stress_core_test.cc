// SPDX-License-Identifier: BSD-3-Clause
// Unit tests of ptl_stress's pure parts (stress_core.h): the payload
// generator, message sizes, the sequence tracker, the put verifier
// (fed duplicated, reordered, missing and corrupted messages), the ring
// allocator behind the flow control, and the encodings.
#include "stress_core.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <vector>

namespace ptl_stress {
namespace {

// The checksum (CRC-32C) is tools/lib's, tested in tools/lib/tests.

// ------------------------------------------------------- payloads, rng

TEST(Payload, DeterministicAndDistinctPerStreamClientSeqSeed) {
  std::vector<uint8_t> a(64), b(64);
  FillPattern(a.data(), 64, PayloadKey(1, Stream::kPut, 3, 10));
  FillPattern(b.data(), 64, PayloadKey(1, Stream::kPut, 3, 10));
  EXPECT_EQ(a, b);
  std::set<uint64_t> keys;
  for (uint64_t seed : {0, 1, 2})
    for (Stream st : {Stream::kPut, Stream::kGetBuffer, Stream::kGetPut, Stream::kGetPutArea})
      for (uint64_t client : {0, 1, 4095})
        for (uint64_t seq : {0ull, 1ull, 2ull, 65536ull, 1ull << 32})
          keys.insert(PayloadKey(seed, st, client, seq));
  EXPECT_EQ(keys.size(), 3u * 4 * 3 * 5);
}

TEST(Payload, PatternIsAddressable) {
  const uint64_t key = PayloadKey(5, Stream::kGetBuffer, 0, 0);
  std::vector<uint8_t> whole(1000);
  FillPattern(whole.data(), whole.size(), key);
  for (uint64_t pos : {0, 1, 3, 7, 8, 9, 100, 511, 992}) {
    for (std::size_t len :
         {uint64_t{0}, uint64_t{1}, uint64_t{5}, uint64_t{8}, uint64_t{9}, 8 - pos % 8}) {
      if (pos + len > whole.size()) continue;
      std::vector<uint8_t> part(len + 1, 0xee);
      FillPattern(part.data(), len, key, pos);
      EXPECT_EQ(0, std::memcmp(part.data(), whole.data() + pos, len)) << pos << "+" << len;
      EXPECT_EQ(part[len], 0xee) << "wrote past the end";
      EXPECT_EQ(FirstMismatch(whole.data() + pos, len, key, pos), len);
      if (len) {
        EXPECT_EQ(PatternByte(key, pos), whole[pos]);
      }
    }
  }
}

TEST(Payload, FirstMismatchFindsTheExactByte) {
  const uint64_t key = 1234;
  for (uint64_t pos : {0, 3, 8}) {
    std::vector<uint8_t> buf(77);
    FillPattern(buf.data(), buf.size(), key, pos);
    for (std::size_t i = 0; i < buf.size(); i++) {
      buf[i] ^= 0x10;
      ASSERT_EQ(FirstMismatch(buf.data(), buf.size(), key, pos), i) << "pos " << pos;
      buf[i] ^= 0x10;
    }
    EXPECT_EQ(FirstMismatch(buf.data(), buf.size(), key + 1, pos), 0u);
  }
}

TEST(Rng, ReproducibleAndInRange) {
  Rng a(9), b(9), c(10);
  bool differs = false;
  for (int i = 0; i < 100; i++) {
    uint64_t x = a.Next();
    EXPECT_EQ(x, b.Next());
    differs |= x != c.Next();
  }
  EXPECT_TRUE(differs);
  std::vector<int> hist(10);
  for (int i = 0; i < 100000; i++) {
    uint64_t v = a.Below(10);
    ASSERT_LT(v, 10u);
    hist[v]++;
    double u = a.Unit();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
  for (int h : hist) EXPECT_NEAR(h, 10000, 600);
  EXPECT_EQ(a.Below(1), 0u);
}

// ------------------------------------------------------------- sizes

TEST(SizeDist, LogUniformReachesBothEndsAndFavoursSmall) {
  SizeDist d(0, 1 << 20);
  Rng rng(1);
  std::vector<uint64_t> v;
  for (int i = 0; i < 20000; i++) v.push_back(d.Next(rng));
  EXPECT_EQ(*std::min_element(v.begin(), v.end()), 0u);
  EXPECT_EQ(*std::max_element(v.begin(), v.end()), 1u << 20);
  std::sort(v.begin(), v.end());
  EXPECT_LT(v[v.size() / 2], 8192u) << "the median should be small";
  EXPECT_GT(v[v.size() * 9 / 10], 65536u) << "large messages must be common too";
  // Every power-of-two decade is visited.
  for (int bit = 0; bit < 20; bit++) {
    auto lo = std::lower_bound(v.begin(), v.end(), uint64_t{1} << bit);
    auto hi = std::lower_bound(v.begin(), v.end(), uint64_t{2} << bit);
    EXPECT_GT(hi - lo, 100) << "sizes in [2^" << bit << ", 2^" << bit + 1 << ")";
  }
}

TEST(SizeDist, BoundsCapsAndLists) {
  Rng rng(2);
  SizeDist r(100, 200);
  for (int i = 0; i < 1000; i++) {
    uint64_t s = r.Next(rng);
    ASSERT_GE(s, 100u);
    ASSERT_LE(s, 200u);
    ASSERT_LE(r.Next(rng, 150), 150u);
  }
  SizeDist fixed(7, 7);
  EXPECT_EQ(fixed.Next(rng), 7u);
  SizeDist list(0, 0, {0, 4096, 1 << 20});
  EXPECT_EQ(list.min(), 0u);
  EXPECT_EQ(list.max(), 1u << 20);
  std::set<uint64_t> seen;
  for (int i = 0; i < 300; i++) seen.insert(list.Next(rng));
  EXPECT_EQ(seen, (std::set<uint64_t>{0, 4096, 1 << 20}));
  EXPECT_LE(list.Next(rng, 100), 100u);
}

// --------------------------------------------------- sequence tracker

SeqTracker Feed(std::initializer_list<uint64_t> seqs, uint64_t total) {
  SeqTracker t;
  for (uint64_t s : seqs) t.Observe(s);
  t.Finish(total);
  return t;
}

TEST(SeqTracker, InOrderIsClean) {
  SeqTracker t;
  for (uint64_t i = 0; i < 1000; i++) EXPECT_EQ(t.Observe(i), SeqTracker::Verdict::kInOrder);
  t.Finish(1000);
  EXPECT_EQ(t.received(), 1000u);
  EXPECT_EQ(t.lost() + t.duplicates() + t.reorders() + t.bogus(), 0u);
}

TEST(SeqTracker, ClassifiesEachFault) {
  auto dup = Feed({0, 1, 1, 2}, 3);
  EXPECT_EQ(dup.duplicates(), 1u);
  EXPECT_EQ(dup.lost() + dup.reorders() + dup.bogus(), 0u);

  auto reorder = Feed({0, 2, 1, 3}, 4);
  EXPECT_EQ(reorder.reorders(), 1u);
  EXPECT_EQ(reorder.lost() + reorder.duplicates() + reorder.bogus(), 0u);

  auto missing = Feed({0, 1, 3}, 4);
  EXPECT_EQ(missing.lost(), 1u);
  EXPECT_EQ(missing.duplicates() + missing.reorders() + missing.bogus(), 0u);

  auto tail = Feed({0, 1}, 4);
  EXPECT_EQ(tail.lost(), 2u);

  auto none = Feed({}, 3);
  EXPECT_EQ(none.lost(), 3u);

  auto late_then_dup = Feed({0, 2, 1, 1}, 3);
  EXPECT_EQ(late_then_dup.reorders(), 1u);
  EXPECT_EQ(late_then_dup.duplicates(), 1u);
  EXPECT_EQ(late_then_dup.lost(), 0u);

  auto beyond = Feed({0, 1, 2, 3}, 3);  // the sender said it sent 3
  EXPECT_EQ(beyond.bogus(), 1u);
  EXPECT_EQ(beyond.lost(), 0u);
  EXPECT_EQ(beyond.received(), 3u);
}

TEST(SeqTracker, VerdictsAsTheyHappen) {
  SeqTracker t;
  EXPECT_EQ(t.Observe(0), SeqTracker::Verdict::kInOrder);
  EXPECT_EQ(t.Observe(5), SeqTracker::Verdict::kGap);
  EXPECT_EQ(t.missing(), 4u);
  EXPECT_EQ(t.FirstMissing(), 1u);
  EXPECT_EQ(t.Observe(3), SeqTracker::Verdict::kLate);
  EXPECT_EQ(t.Observe(3), SeqTracker::Verdict::kDuplicate);
  EXPECT_EQ(t.Observe(1), SeqTracker::Verdict::kLate);
  EXPECT_EQ(t.FirstMissing(), 2u);
  EXPECT_EQ(t.Observe(5), SeqTracker::Verdict::kDuplicate);
  EXPECT_EQ(t.Observe(uint64_t{1} << 40), SeqTracker::Verdict::kBogus);
  EXPECT_EQ(t.next(), 6u) << "a bogus number must not move the stream";
  EXPECT_EQ(t.Observe(6), SeqTracker::Verdict::kInOrder);
  t.Finish(7);
  EXPECT_EQ(t.lost(), 2u);  // 2 and 4
  EXPECT_EQ(t.reorders(), 2u);
  EXPECT_EQ(t.duplicates(), 2u);
  EXPECT_EQ(t.bogus(), 1u);
  EXPECT_EQ(t.Observe(2), SeqTracker::Verdict::kBogus) << "nothing is expected after Finish";
}

TEST(SeqTracker, MissingBeyondTheAnnouncedTotalIsNotLost) {
  SeqTracker t;
  t.Observe(0);
  t.Observe(10);  // 1..9 missing
  t.Finish(5);    // but only 0..4 were sent: 10 is bogus, 1..4 lost
  EXPECT_EQ(t.lost(), 4u);
  EXPECT_EQ(t.bogus(), 1u);
  EXPECT_EQ(t.received(), 1u);
}

TEST(SeqTracker, ExtendsWireNumbersAcrossTheWrap) {
  SeqTracker t;
  EXPECT_EQ(t.Extend(0), 0u);
  EXPECT_EQ(t.Extend(5), 5u);
  EXPECT_FALSE(t.Extend(0xffffffffu)) << "would be -1";
  // A tracker that allows a gap that large gets near 2^32 at once.
  uint64_t start = (uint64_t{1} << 32) - 3;
  SeqTracker w(uint64_t{1} << 33);
  w.Observe(start);
  EXPECT_EQ(w.next(), start + 1);
  EXPECT_EQ(w.Extend(0xfffffffeu), start + 1);
  EXPECT_EQ(w.Extend(0xffffffffu), start + 2);
  EXPECT_EQ(w.Extend(0), uint64_t{1} << 32);
  EXPECT_EQ(w.Extend(1), (uint64_t{1} << 32) + 1);
  EXPECT_EQ(w.Extend(0xfffffff0u), start - 13);
}

// The interval bookkeeping against a plain set model, on random streams
// with duplicates, drops and local swaps.
TEST(SeqTracker, MatchesASetModelOnRandomStreams) {
  for (uint64_t seed = 1; seed <= 200; seed++) {
    Rng rng(seed);
    uint64_t total = 1 + rng.Below(300);
    std::vector<uint64_t> stream;
    for (uint64_t i = 0; i < total; i++) {
      uint64_t r = rng.Below(20);
      if (r == 0) continue;  // dropped
      stream.push_back(i);
      if (r == 1) stream.push_back(i);  // duplicated
    }
    for (std::size_t i = 0; i + 1 < stream.size(); i++)
      if (rng.Below(15) == 0)
        std::swap(stream[i],
                  stream[i + 1 + rng.Below(std::min<std::size_t>(5, stream.size() - i - 1))]);

    SeqTracker t;
    uint64_t next = 0, dups = 0, reorders = 0;
    std::set<uint64_t> missing, seen;
    for (uint64_t s : stream) {
      t.Observe(s);
      if (s >= next) {
        for (uint64_t m = next; m < s; m++) missing.insert(m);
        next = s + 1;
        seen.insert(s);
      } else if (missing.erase(s)) {
        reorders++;
        seen.insert(s);
      } else {
        dups++;
      }
      ASSERT_EQ(t.missing(), missing.size());
    }
    t.Finish(total);
    uint64_t lost = missing.size() + (next < total ? total - next : 0);
    EXPECT_EQ(t.lost(), lost) << "seed " << seed;
    EXPECT_EQ(t.duplicates(), dups) << "seed " << seed;
    EXPECT_EQ(t.reorders(), reorders) << "seed " << seed;
    EXPECT_EQ(t.received(), seen.size()) << "seed " << seed;
    EXPECT_EQ(t.received() + t.lost(), total) << "seed " << seed;
  }
}

// ------------------------------------------------------ put verifier

// What the server sees of a put the client encoded, delivered as is.
struct Wire {
  PutLabel label;
  std::vector<uint8_t> data;
};

Wire Make(uint64_t seed, uint32_t client, uint64_t seq, uint64_t len) {
  Wire w;
  w.data.resize(len);
  w.label = EncodePut(seed, client, seq, w.data.data(), len);
  return w;
}

// PUT_START then PUT_END, as a put arrives; the END's result.
StreamVerifier::Result End(StreamVerifier& v, const Wire& w) {
  return v.OnPut(
      {w.label.match_bits, w.label.hdr_data, w.data.size(), w.data.size(), w.data.data()});
}
StreamVerifier::Result Start(StreamVerifier& v, const Wire& w) {
  return v.OnStart(w.label.match_bits, w.label.hdr_data);
}
// Both events of one put; the first problem found.
StreamVerifier::Result Deliver(StreamVerifier& v, const Wire& w) {
  auto s = Start(v, w);
  auto e = End(v, w);
  return s.outcome == StreamVerifier::Outcome::kReordered ? s : e;
}

TEST(StreamVerifier, CleanStreamOfAllSizes) {
  StreamVerifier v(11, 3);
  Rng rng(5);
  SizeDist sizes(0, 70000);
  for (uint64_t seq = 0; seq < 300; seq++) {
    auto r = Deliver(v, Make(11, 3, seq, sizes.Next(rng)));
    ASSERT_EQ(r.outcome, StreamVerifier::Outcome::kOk) << r.detail;
    ASSERT_EQ(r.seq, seq);
  }
  EXPECT_EQ(v.Accounted(), 300u);
  EXPECT_TRUE(v.Settled(300));
  v.Finish(300);
  EXPECT_EQ(v.errors().Total(), 0u);
  EXPECT_EQ(v.completed().received(), 300u);
}

// The brief's proof: a duplicated, a reordered, a missing and a corrupted
// message (and a wrong length) are each counted exactly once, in their
// own class, and nothing else is.
TEST(StreamVerifier, CountsADuplicateAReorderALossAndACorruption) {
  const uint64_t seed = 77;
  const uint32_t client = 9;
  StreamVerifier v(seed, client);
  using O = StreamVerifier::Outcome;
  std::vector<O> outcomes;
  auto put = [&](uint64_t seq, uint64_t len) {
    outcomes.push_back(Deliver(v, Make(seed, client, seq, len)).outcome);
  };
  for (uint64_t s = 0; s < 10; s++) put(s, 100 + s);
  put(9, 109);  // duplicate of 9
  put(11, 50);  // 10 and 11 swapped
  put(10, 50);
  // 12 is never sent
  put(13, 70);
  Wire bad = Make(seed, client, 14, 4096);
  bad.data[1234] ^= 0x01;  // one bit, after the checksum was taken
  outcomes.push_back(Deliver(v, bad).outcome);
  Wire shortened = Make(seed, client, 15, 300);
  Start(v, shortened);
  outcomes.push_back(v.OnPut({shortened.label.match_bits, shortened.label.hdr_data, 300, 200,
                              shortened.data.data()})
                         .outcome);
  put(16, 0);
  v.Finish(17);

  Errors e = v.errors();
  EXPECT_EQ(e.duplicates, 1u);
  EXPECT_EQ(e.reorders, 1u);
  EXPECT_EQ(e.lost, 1u);
  EXPECT_EQ(e.corruptions, 1u);
  EXPECT_EQ(e.bad_lengths, 1u);
  EXPECT_EQ(e.Total(), 5u);
  EXPECT_EQ(outcomes[10], O::kDuplicate);
  EXPECT_EQ(outcomes[11], O::kOk) << "11 arrives early: a gap, not yet an error";
  EXPECT_EQ(outcomes[12], O::kReordered);
  EXPECT_EQ(outcomes[14], O::kCorrupt);
  EXPECT_EQ(outcomes[15], O::kBadLength);
  EXPECT_EQ(outcomes[16], O::kOk);
}

// Over RTS/CTS a large put's data lands after a later small put's: the
// ends come out of order, the starts (the match order) do not. Not an
// error, but no credit may release a region whose data is still landing.
TEST(StreamVerifier, CompletionOrderIsFreeAndCreditsWaitForIt) {
  StreamVerifier v(1, 0);
  std::vector<Wire> w;
  for (uint64_t s = 0; s < 6; s++) w.push_back(Make(1, 0, s, s == 1 ? 100000 : 10));
  for (int s : {0, 1, 2, 3}) ASSERT_EQ(Start(v, w[s]).outcome, StreamVerifier::Outcome::kOk);
  EXPECT_EQ(v.Accounted(), 0u);
  End(v, w[0]);
  End(v, w[2]);
  End(v, w[3]);
  EXPECT_EQ(v.Accounted(), 1u) << "seq 1 is matched and still landing";
  EXPECT_FALSE(v.Settled(4));
  ASSERT_EQ(End(v, w[1]).outcome, StreamVerifier::Outcome::kOk);
  EXPECT_EQ(v.Accounted(), 4u);
  EXPECT_TRUE(v.Settled(4));
  // 4 is never matched, 5 is: 4 no longer holds the credit back.
  Start(v, w[5]);
  End(v, w[5]);
  EXPECT_EQ(v.Accounted(), 6u);
  v.Finish(6);
  Errors e = v.errors();
  EXPECT_EQ(e.lost, 1u);
  EXPECT_EQ(e.reorders, 0u);
  EXPECT_EQ(e.Total(), 1u);
}

TEST(StreamVerifier, AReorderIsTheMatchOrder) {
  StreamVerifier v(1, 0);
  Wire a = Make(1, 0, 0, 8), b = Make(1, 0, 1, 8);
  EXPECT_EQ(Start(v, b).outcome, StreamVerifier::Outcome::kOk);
  EXPECT_EQ(Start(v, a).outcome, StreamVerifier::Outcome::kReordered);
  EXPECT_EQ(End(v, a).outcome, StreamVerifier::Outcome::kOk);
  EXPECT_EQ(End(v, b).outcome, StreamVerifier::Outcome::kOk);
  v.Finish(2);
  EXPECT_EQ(v.errors().reorders, 1u);
  EXPECT_EQ(v.errors().Total(), 1u);
}

TEST(StreamVerifier, AnEndWithoutItsStartIsUnexpected) {
  StreamVerifier v(1, 0);
  Wire a = Make(1, 0, 0, 8);
  End(v, a);
  v.Finish(1);
  EXPECT_EQ(v.errors().unexpected, 1u);
  EXPECT_EQ(v.errors().Total(), 1u);
}

TEST(StreamVerifier, CatchesEveryKindOfDamagedLabelOrPayload) {
  const uint64_t seed = 3;
  using O = StreamVerifier::Outcome;
  {
    StreamVerifier v(seed, 1);
    Wire w = Make(seed, 2, 0, 64);  // another client's message
    EXPECT_EQ(Deliver(v, w).outcome, O::kBadLabel);
  }
  {
    StreamVerifier v(seed, 1);
    Wire w = Make(seed, 1, 0, 64);
    w.label.match_bits ^= uint64_t{1} << 32;  // seq in match bits disagrees
    EXPECT_EQ(Deliver(v, w).outcome, O::kBadLabel);
  }
  {
    StreamVerifier v(seed, 1);
    Wire w = Make(seed, 1, 0, 64);
    w.label.match_bits = (w.label.match_bits & ~(uint64_t{0xf} << 60)) | uint64_t{2} << 60;
    EXPECT_EQ(Deliver(v, w).outcome, O::kBadLabel) << "a get's tag";
  }
  {
    StreamVerifier v(seed, 1);
    Wire w = Make(seed, 1, 0, 64);
    w.label.hdr_data ^= 0x80;  // checksum damaged, bytes fine
    EXPECT_EQ(Deliver(v, w).outcome, O::kCorrupt);
  }
  {
    StreamVerifier v(seed, 1);
    Wire w = Make(seed + 1, 1, 0, 64);  // consistent, but not this seed's bytes
    EXPECT_EQ(Deliver(v, w).outcome, O::kCorrupt);
  }
  {
    // The bytes of message 1 labelled as message 0 (checksum recomputed):
    // only the pattern check can see it.
    StreamVerifier v(seed, 1);
    Wire w1 = Make(seed, 1, 1, 64);
    Wire w = Make(seed, 1, 0, 64);
    w.data = w1.data;
    w.label.hdr_data = PackHdr(0, Crc32c(w.data.data(), 64));
    EXPECT_EQ(Deliver(v, w).outcome, O::kCorrupt);
  }
  {
    StreamVerifier v(seed, 1);
    Wire w = Make(seed, 1, 0, 0);
    w.label.hdr_data ^= 1;  // a zero-length put's checksum
    EXPECT_EQ(Deliver(v, w).outcome, O::kCorrupt);
  }
  {
    StreamVerifier v(seed, 1);
    Wire w = Make(seed, 1, 5000000, 8);  // far beyond the window
    EXPECT_EQ(Deliver(v, w).outcome, O::kBogusSeq);
    v.Finish(0);
    EXPECT_EQ(v.errors().corruptions, 1u);
    EXPECT_EQ(v.errors().Total(), 1u);
  }
}

// ---------------------------------------------------- ring allocator

TEST(RingAllocator, WrapsWithoutSplittingAndReleasesInOrder) {
  RingAllocator r(100);
  auto a = r.Alloc(60);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->offset, 0u);
  EXPECT_FALSE(r.Fits(41));
  auto b = r.Alloc(30);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->offset, 60u);
  EXPECT_FALSE(r.Fits(20)) << "would wrap onto a";
  r.ReleaseTo(a->end);
  auto c = r.Alloc(20);  // does not fit in the 10 bytes at the end: starts at 0
  ASSERT_TRUE(c);
  EXPECT_EQ(c->offset, 0u);
  EXPECT_FALSE(r.Fits(61));
  r.ReleaseTo(b->end);
  r.ReleaseTo(c->end);
  EXPECT_EQ(r.used(), 0u);
  EXPECT_TRUE(r.Fits(100)) << "an empty ring holds its whole size";
  auto d = r.Alloc(100);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->offset, 0u);
  EXPECT_FALSE(r.Fits(1));
  EXPECT_TRUE(r.Fits(0)) << "zero bytes always fit";
  EXPECT_FALSE(r.Fits(101));
}

TEST(RingAllocator, LiveRegionsNeverOverlapOnRandomTraffic) {
  for (uint64_t seed = 1; seed <= 50; seed++) {
    Rng rng(seed);
    const uint64_t size = 1000 + rng.Below(5000);
    RingAllocator r(size);
    struct Live {
      uint64_t off, len, end;
    };
    std::vector<Live> live;
    for (int step = 0; step < 3000; step++) {
      if (!live.empty() && rng.Below(3) == 0) {
        r.ReleaseTo(live.front().end);
        live.erase(live.begin());
        continue;
      }
      uint64_t len = rng.Below(2) ? rng.Below(size / 4) : rng.Below(size + 1);
      bool fits = r.Fits(len);
      auto a = r.Alloc(len);
      ASSERT_EQ(fits, a.has_value());
      if (!a) {
        if (live.empty()) FAIL() << "an empty ring refused " << len << " of " << size;
        continue;
      }
      ASSERT_LE(a->offset + len, size);
      for (const Live& l : live)
        ASSERT_TRUE(len == 0 || l.len == 0 || a->offset + len <= l.off ||
                    l.off + l.len <= a->offset)
            << "seed " << seed << ": [" << a->offset << "," << a->offset + len << ") overlaps ["
            << l.off << "," << l.off + l.len << ")";
      live.push_back({a->offset, len, a->end});
      ASSERT_LE(r.used(), size);
    }
  }
}

// ------------------------------------------------------ encodings

TEST(Encoding, MatchBitsRoundTripAndMatchTheMEs) {
  uint64_t mb = MatchBits(Tag::kData, 4095, 0x12345, 0xfedcba98);
  Bits b = DecodeBits(mb);
  EXPECT_EQ(b.tag, Tag::kData);
  EXPECT_EQ(b.client, 4095u);
  EXPECT_EQ(b.seq16, 0x2345u);
  EXPECT_EQ(b.length, 0xfedcba98u);
  // What the server's ring ME matches: this client's data, any seq/length.
  uint64_t me = MatchBits(Tag::kData, 7, 0, 0);
  auto matches = [](uint64_t me_bits, uint64_t ignore, uint64_t in) {
    return ((me_bits ^ in) & ~ignore) == 0;
  };
  EXPECT_TRUE(matches(me, kIgnoreOpFields, MatchBits(Tag::kData, 7, 99, 1 << 20)));
  EXPECT_FALSE(matches(me, kIgnoreOpFields, MatchBits(Tag::kData, 8, 99, 1 << 20)));
  EXPECT_FALSE(matches(me, kIgnoreOpFields, MatchBits(Tag::kGetPut, 7, 99, 10)));
  uint64_t any = MatchBits(Tag::kCtrl, 0, 0, 0);
  EXPECT_TRUE(matches(any, kIgnoreAllButTag, MatchBits(Tag::kCtrl, 123, 4, 224)));
  EXPECT_FALSE(matches(any, kIgnoreAllButTag, MatchBits(Tag::kData, 123, 4, 224)));
  EXPECT_EQ(HdrSeq32(PackHdr(0x1'2345'6789ull, 0xabcdef01)), 0x23456789u);
  EXPECT_EQ(HdrCrc(PackHdr(0x1'2345'6789ull, 0xabcdef01)), 0xabcdef01u);
}

TEST(Encoding, ControlMessagesAreSealed) {
  CtrlMsg m = MakeCtrl(CtrlType::kFin, 12, 0xfeed);
  m.body.fin = Fin{1, 2, 3, 4, 5};
  EXPECT_FALSE(CtrlValid(m)) << "not sealed yet";
  SealCtrl(m);
  EXPECT_TRUE(CtrlValid(m));
  for (std::size_t i = 0; i < offsetof(CtrlMsg, crc); i += 7) {
    CtrlMsg bad = m;
    reinterpret_cast<uint8_t*>(&bad)[i] ^= 0x04;
    EXPECT_FALSE(CtrlValid(bad)) << "byte " << i;
  }
  CtrlMsg other = MakeCtrl(static_cast<CtrlType>(9), 1, 1);
  SealCtrl(other);
  EXPECT_FALSE(CtrlValid(other)) << "unknown type";
}

// ParseSize and ParseSizeList are tools/lib's (tools/lib/tests/parse_test.cc).
TEST(Parse, NidPid) {
  EXPECT_EQ(ParseNidPid("7:77"), std::make_pair(7u, 77u));
  EXPECT_EQ(ParseNidPid("0x0a000001:1024"), std::make_pair(0x0a000001u, 1024u));
  EXPECT_FALSE(ParseNidPid("7"));
  EXPECT_FALSE(ParseNidPid("7:"));
  EXPECT_FALSE(ParseNidPid("4294967296:1"));
}

TEST(Json, ErrorCounters) {
  Errors e;
  e.lost = 2;
  e.corruptions = 3;
  std::string j = ErrorsJson(e);
  EXPECT_NE(j.find("\"lost\":2"), std::string::npos);
  EXPECT_NE(j.find("\"corruptions\":3"), std::string::npos);
  EXPECT_NE(j.find("\"total\":5"), std::string::npos);
}

}  // namespace
}  // namespace ptl_stress
