// SplitFrames: a super-frame captured on a veth is cut into its frames.
#include <gtest/gtest.h>

#include "frame_builder.h"
#include "packet_socket.h"

namespace ptl_inject {
namespace {

constexpr uint16_t kEthertype = 0x88b5;
constexpr Mac kDst = {2, 0, 0, 0, 0, 2}, kSrc = {2, 0, 0, 0, 0, 1};

Bytes Frame(uint8_t type, size_t payload, uint16_t flags = 0) {
  rtscts_frame f = rtscts::Header(type, {1, 1, 1}, 2);
  f.flags = uint16_t(f.flags | flags);
  Bytes data(payload, 0x5a);
  return EthernetFrame(kDst, kSrc, kEthertype, rtscts::Build(f, {}, data));
}

Bytes Concat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

TEST(SplitFrames, a_frame_alone_stays_whole) {
  Bytes one = Frame(RTSCTS_DATA, 100);
  auto frames = SplitFrames(one);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].size(), one.size());
}

TEST(SplitFrames, a_super_frame_is_cut_into_its_frames) {
  Bytes a = Frame(RTSCTS_DATA, 1400), b = Frame(RTSCTS_ACK, 0), c = Frame(RTSCTS_DATA, 7);
  Bytes packet = Concat({a, b, c});  // the spans point into it
  auto frames = SplitFrames(packet);
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_TRUE(std::equal(frames[0].begin(), frames[0].end(), a.begin(), a.end()));
  EXPECT_TRUE(std::equal(frames[1].begin(), frames[1].end(), b.begin(), b.end()));
  EXPECT_TRUE(std::equal(frames[2].begin(), frames[2].end(), c.begin(), c.end()));
}

TEST(SplitFrames, an_authenticated_frame_keeps_its_tag) {
  Bytes a = Frame(RTSCTS_DATA, 64, RTSCTS_F_AUTH), b = Frame(RTSCTS_DATA, 64, RTSCTS_F_AUTH);
  Bytes packet = Concat({a, b});
  auto frames = SplitFrames(packet);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].size(), a.size());
  EXPECT_EQ(frames[1].size(), b.size());
}

TEST(SplitFrames, padding_and_unparsable_tails_stay_with_the_last_frame) {
  Bytes a = Frame(RTSCTS_ACK, 0);
  Bytes padded = Concat({a, Bytes(20, 0)});
  EXPECT_EQ(SplitFrames(padded).size(), 1u) << "too short to be a frame";
  Bytes other = Concat({a, EthernetFrame(kDst, kSrc, 0x0800, Bytes(100, 0))});
  EXPECT_EQ(SplitFrames(other).size(), 1u) << "another ethertype follows";
  Bytes lying = a;
  lying[kEthHeader + rtscts::off::kFrameLen] = 0xff;  // frame_len past the end
  lying[kEthHeader + rtscts::off::kFrameLen + 1] = 0xff;
  EXPECT_EQ(SplitFrames(Concat({lying, a})).size(), 1u);
  EXPECT_EQ(SplitFrames({}).size(), 1u);
}

}  // namespace
}  // namespace ptl_inject
