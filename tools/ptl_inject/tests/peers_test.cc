// The peers mode: each fake node's MSG is a valid SYN|ACK_REQ frame with a
// valid Portals PUT to the target, the nodes are distinct, and the replies
// of the target are told apart.
#include "peers.h"

#include <gtest/gtest.h>

#include <set>

namespace ptl_inject {
namespace {

PeersParams Params() {
  PeersParams p;
  p.first_nid = 0x0a000100;
  p.count = 1000;
  p.target = {0x0a000002, 77};
  p.portal = 4;
  p.match_bits = 0x1234;
  p.src_pid = 9;
  p.payload = 48;
  return p;
}

TEST(Peers, EachMsgIsAValidSynAckReqFrameCarryingAPut) {
  const PeersParams p = Params();
  for (uint32_t i : {0u, 1u, 999u}) {
    FakePeer peer = PeerAt(p, i);
    Bytes b = PeerMsg(p, peer);
    rtscts_frame f;
    ASSERT_EQ(rtscts::Decode(b, &f), RTSCTS_FRAME_OK);
    EXPECT_TRUE(rtscts::CrcOk(b, f));
    EXPECT_EQ(f.type, RTSCTS_MSG);
    EXPECT_EQ(f.flags, RTSCTS_F_SYN | RTSCTS_F_ACK_REQ);
    EXPECT_EQ(f.seq, 0u);
    EXPECT_EQ(f.src_nid, 0x0a000100 + i);
    EXPECT_EQ(f.dst_nid, p.target.nid);
    EXPECT_EQ(f.src_inc, peer.inc);
    EXPECT_EQ(f.stream, peer.stream);
    EXPECT_EQ(f.dst_inc, 0u) << "it has never heard from the target";
    EXPECT_EQ(f.ack_stream, 0u);
    EXPECT_EQ(f.payload_len, p.payload);
    EXPECT_EQ(f.csum_len, f.frame_len) << "the checksum covers the payload";

    ptl_hdr h;
    ASSERT_EQ(ptl_hdr_decode(b.data() + f.hdr_len - PTL_WIRE_HDR_LEN, PTL_WIRE_HDR_LEN, &h),
              PTL_WIRE_OK);
    EXPECT_EQ(h.type, uint32_t(PTL_MSG_PUT));
    EXPECT_EQ(h.src.nid, f.src_nid);
    EXPECT_EQ(h.src.pid, 9u);
    EXPECT_EQ(h.dst.nid, p.target.nid);
    EXPECT_EQ(h.dst.pid, 77u);
    EXPECT_EQ(h.pt_index, 4u);
    EXPECT_EQ(h.match_bits, 0x1234u);
    EXPECT_EQ(h.rlength, p.payload);
    EXPECT_EQ(h.payload_length, p.payload);
    EXPECT_EQ(h.md_handle, PTL_HANDLE_NONE) << "no Portals ACK to a node that cannot take it";
    EXPECT_EQ(h.src_jid, PTL_JID_NONE);
  }
}

TEST(Peers, GapFramesAreValidSynDataFramesAheadOfSequenceZero) {
  const PeersParams p = Params();
  FakePeer peer = PeerAt(p, 5);
  for (uint32_t seq : {1u, 2u, 40u}) {
    Bytes b = GapData(peer, 0x0a000002, seq, 1000);
    rtscts_frame f;
    ASSERT_EQ(rtscts::Decode(b, &f), RTSCTS_FRAME_OK);
    EXPECT_TRUE(rtscts::CrcOk(b, f));
    EXPECT_EQ(f.type, RTSCTS_DATA);
    EXPECT_EQ(f.flags, RTSCTS_F_SYN);
    EXPECT_EQ(f.src_nid, peer.nid);
    EXPECT_EQ(f.src_inc, peer.inc);
    EXPECT_EQ(f.stream, peer.stream);
    EXPECT_EQ(f.dst_nid, 0x0a000002u);
    EXPECT_EQ(f.dst_inc, 0u);
    EXPECT_EQ(f.seq, seq);
    EXPECT_EQ(f.offset, uint64_t(seq - 1) * 1000);
    EXPECT_EQ(f.payload_len, 1000u);
    EXPECT_EQ(b.size(), size_t(RTSCTS_DATA_HDR_LEN) + 1000);
  }
}

TEST(Peers, PartialMessagesAreConsecutiveFramesAnnouncingMoreThanTheyCarry) {
  const PeersParams p = Params();
  FakePeer peer = PeerAt(p, 3);
  for (bool rts : {false, true})
    for (uint32_t i : {0u, 1u, 99u}) {
      Bytes b = PartialMsg(p, peer, i, 1 << 20, 1, rts);
      rtscts_frame f;
      ASSERT_EQ(rtscts::Decode(b, &f), RTSCTS_FRAME_OK);
      EXPECT_TRUE(rtscts::CrcOk(b, f));
      EXPECT_EQ(f.type, rts ? RTSCTS_RTS : RTSCTS_MSG);
      EXPECT_EQ(f.flags, RTSCTS_F_SYN) << "nothing of the stream is acknowledged";
      EXPECT_EQ(f.seq, i);
      EXPECT_EQ(f.msg_id, i + 1);
      EXPECT_EQ(f.stream, peer.stream);
      EXPECT_EQ(f.payload_len, rts ? 0u : 1u);
      ptl_hdr h;
      ASSERT_EQ(ptl_hdr_decode(b.data() + f.hdr_len - PTL_WIRE_HDR_LEN, PTL_WIRE_HDR_LEN, &h),
                PTL_WIRE_OK);
      EXPECT_EQ(h.type, uint32_t(PTL_MSG_PUT));
      EXPECT_EQ(h.src.nid, peer.nid);
      EXPECT_EQ(h.dst.pid, 77u);
      EXPECT_EQ(h.payload_length, uint64_t(1) << 20) << "the rest never comes";
      EXPECT_EQ(h.md_handle, PTL_HANDLE_NONE);
    }
}

TEST(Peers, NodesAreDistinctWithNonzeroIncarnationAndStream) {
  const PeersParams p = Params();
  std::set<uint32_t> nids;
  std::set<Mac> macs;
  std::set<uint32_t> incs;
  for (uint32_t i = 0; i < p.count; i++) {
    FakePeer peer = PeerAt(p, i);
    EXPECT_NE(peer.inc, 0u);
    EXPECT_NE(peer.stream, 0u);
    EXPECT_EQ(peer.mac[0] & 0x03, 0x02) << "locally administered, unicast";
    nids.insert(peer.nid);
    macs.insert(peer.mac);
    incs.insert(peer.inc);
  }
  EXPECT_EQ(nids.size(), p.count);
  EXPECT_EQ(macs.size(), p.count);
  EXPECT_GT(incs.size(), p.count - 5) << "incarnations look random";
}

TEST(Peers, TheSeedDecidesTheIncarnations) {
  PeersParams p = Params();
  FakePeer a = PeerAt(p, 3), b = PeerAt(p, 3);
  EXPECT_EQ(a.inc, b.inc);
  EXPECT_EQ(a.stream, b.stream);
  p.seed = 2;
  FakePeer c = PeerAt(p, 3);
  EXPECT_NE(a.inc, c.inc) << "a new seed is a restart of every node";
  EXPECT_EQ(a.nid, c.nid);
}

// A frame from the target to fake node `i` with `change` applied.
Bytes FromTarget(const PeersParams& p, uint8_t type, uint32_t i,
                 const std::function<void(rtscts_frame&)>& change) {
  FakePeer peer = PeerAt(p, i);
  rtscts_frame f = rtscts::Header(type, {p.target.nid, 0x7a7a7a7a, 0x3030}, peer.nid);
  f.dst_inc = peer.inc;
  f.ack_stream = peer.stream;
  f.ack = 1;
  if (change) change(f);
  Bytes ptl = (type == RTSCTS_MSG)
                  ? rtscts::EncodePtl(rtscts::PutHeader({p.target.nid, 77}, {peer.nid, 9}, 0, 0, 0))
                  : Bytes{};
  return rtscts::Build(f, ptl);
}

TEST(Peers, TheAckOfTheMsgIsRecognised) {
  const PeersParams p = Params();
  Reply r = ClassifyReply(p, FromTarget(p, RTSCTS_ACK, 5, {}));
  EXPECT_EQ(r.kind, ReplyKind::kAck);
  EXPECT_EQ(r.peer, 5u);
  r = ClassifyReply(p, FromTarget(p, RTSCTS_MSG, 999, {}));
  EXPECT_EQ(r.kind, ReplyKind::kAck) << "an ack piggybacked on a MSG counts";
  EXPECT_EQ(r.peer, 999u);
}

TEST(Peers, OtherRepliesAreToldApart) {
  const PeersParams p = Params();
  auto kind = [&](const Bytes& b) { return ClassifyReply(p, b).kind; };
  EXPECT_EQ(kind(FromTarget(p, RTSCTS_ACK, 5, [](rtscts_frame& f) { f.ack = 0; })),
            ReplyKind::kOther)
      << "ack 0: nothing arrived yet";
  EXPECT_EQ(kind(FromTarget(p, RTSCTS_ACK, 5, [](rtscts_frame& f) { f.ack_stream ^= 1; })),
            ReplyKind::kOther)
      << "another stream";
  EXPECT_EQ(kind(FromTarget(p, RTSCTS_RESET, 5,
                            [&](rtscts_frame& f) {
                              f.ack_stream = f.ack = 0;
                              f.reset_stream = PeerAt(p, 5).stream;
                            })),
            ReplyKind::kReset);
  EXPECT_EQ(kind(FromTarget(p, RTSCTS_ACK, 5, [](rtscts_frame& f) { f.src_nid ^= 0x100; })),
            ReplyKind::kNotForUs)
      << "not from the target";
  EXPECT_EQ(kind(FromTarget(p, RTSCTS_ACK, 5, [](rtscts_frame& f) { f.dst_nid = 0x0a000001; })),
            ReplyKind::kNotForUs)
      << "to a nid below the range";
  EXPECT_EQ(kind(FromTarget(p, RTSCTS_ACK, 0, [](rtscts_frame& f) { f.dst_nid += 1000; })),
            ReplyKind::kNotForUs)
      << "to the nid just past the range";
  Bytes bad = FromTarget(p, RTSCTS_ACK, 5, {});
  bad[8] ^= 1;
  EXPECT_EQ(kind(bad), ReplyKind::kBadFrame) << "bad checksum";
  EXPECT_EQ(kind(Bytes(20, 0xff)), ReplyKind::kBadFrame);
  EXPECT_EQ(kind(Bytes{}), ReplyKind::kBadFrame);
}

}  // namespace
}  // namespace ptl_inject
