// The credit mode: its GETs are valid requests of one stream that carry no
// acknowledgement, its CHALLENGE_ACK echoes the nonce, and what the target
// sends back (acknowledgements with grants, REPLYs, CHALLENGEs, RESETs) is
// told apart and counted.
#include "credit.h"

#include <gtest/gtest.h>

namespace ptl_inject {
namespace {

constexpr uint32_t kTarget = 0x0a000002, kTargetInc = 0x7000abcd, kTargetStream = 0x4444;

PeersParams Params() {
  PeersParams p;
  p.first_nid = 0x0a0000c8;
  p.target = {kTarget, 98};
  p.portal = 3;
  p.match_bits = 0xbeef;
  p.src_pid = 5;
  return p;
}

// A frame of the target to the fake node: `type`, with ack fields about
// the node's stream (ack, grant) unless ack_stream is 0.
rtscts_frame FromTarget(uint8_t type, const FakePeer& peer, uint32_t ack, uint32_t grant,
                        uint32_t ack_stream) {
  rtscts_frame f = rtscts::Header(type, {kTarget, kTargetInc, kTargetStream}, peer.nid);
  f.ack_stream = ack_stream;
  f.ack = ack_stream ? ack : 0;
  f.grant = ack_stream ? grant : 0;
  return f;
}

// The REPLY to GET `index`: a MSG on the target's stream carrying `len` bytes.
Bytes Reply(const PeersParams& p, const FakePeer& peer, uint32_t index, uint32_t seq,
            uint64_t len) {
  rtscts_frame f = FromTarget(RTSCTS_MSG, peer, 0, 0, 0);
  f.seq = seq;
  f.msg_id = seq + 1;
  ptl_hdr h{};
  h.type = PTL_MSG_REPLY;
  h.src = p.target;
  h.dst = {peer.nid, p.src_pid};
  h.src_jid = PTL_JID_NONE;
  h.rlength = h.mlength = len;
  h.md_handle = index + 1;
  h.payload_length = len;
  return rtscts::Build(f, rtscts::EncodePtl(h), rtscts::Pattern(len));
}

TEST(Credit, GetsAreValidRequestsOfOneStreamThatAcknowledgeNothing) {
  const PeersParams p = Params();
  FakePeer peer = PeerAt(p, 0);
  CreditParams c;
  c.length = 64;
  c.src_uid = 1000;
  for (uint32_t i : {0u, 1u, 255u, 256u, 1999u}) {
    bool first = i == 0;
    Bytes b = CreditGet(p, c, peer, i, first, first, first ? 0 : kTargetInc);
    rtscts_frame f;
    ASSERT_EQ(rtscts::Decode(b, &f), RTSCTS_FRAME_OK) << i;
    EXPECT_TRUE(rtscts::CrcOk(b, f));
    EXPECT_EQ(f.type, RTSCTS_MSG);
    EXPECT_EQ(f.flags, first ? RTSCTS_F_SYN | RTSCTS_F_ACK_REQ : 0);
    EXPECT_EQ(f.src_nid, 0x0a0000c8u);
    EXPECT_EQ(f.dst_nid, kTarget);
    EXPECT_EQ(f.src_inc, peer.inc);
    EXPECT_EQ(f.dst_inc, first ? 0u : kTargetInc);
    EXPECT_EQ(f.stream, peer.stream);
    EXPECT_EQ(f.seq, i) << "one request per frame, in order";
    EXPECT_EQ(f.msg_id, i + 1);
    EXPECT_EQ(f.ack_stream, 0u) << "the target's stream is never acknowledged";
    EXPECT_EQ(f.ack, 0u);
    EXPECT_EQ(f.grant, 0u);
    EXPECT_EQ(f.payload_len, 0u) << "a GET carries no payload";
    EXPECT_EQ(b.size(), size_t(RTSCTS_MSG_HDR_LEN));

    ptl_hdr h;
    ASSERT_EQ(ptl_hdr_decode(b.data() + f.hdr_len - PTL_WIRE_HDR_LEN, PTL_WIRE_HDR_LEN, &h),
              PTL_WIRE_OK);
    EXPECT_EQ(h.type, uint32_t(PTL_MSG_GET)) << "a request that makes the target queue a REPLY";
    EXPECT_EQ(h.src.nid, f.src_nid) << "the transport checks that the two agree";
    EXPECT_EQ(h.src.pid, 5u);
    EXPECT_EQ(h.src_uid, 1000u) << "what the target's access control checks";
    EXPECT_EQ(h.dst.nid, kTarget);
    EXPECT_EQ(h.dst.pid, 98u);
    EXPECT_EQ(h.pt_index, 3u);
    EXPECT_EQ(h.match_bits, 0xbeefu);
    EXPECT_EQ(h.rlength, 64u);
    EXPECT_EQ(h.mlength, 0u);
    EXPECT_EQ(h.payload_length, 0u);
    EXPECT_EQ(h.md_handle, i + 1) << "each REPLY names its GET";
    EXPECT_EQ(h.src_jid, PTL_JID_NONE);
  }
}

TEST(Credit, PutRidersAreRequestsBetweenTheGetAndItsPayload) {
  const PeersParams p = Params();
  FakePeer peer = PeerAt(p, 0);
  CreditParams c;
  c.src_uid = 1000;
  c.put_riders = 2;
  Bytes b = CreditGet(p, c, peer, 7, false, false, kTargetInc);
  rtscts_frame f;
  ASSERT_EQ(rtscts::Decode(b, &f), RTSCTS_FRAME_OK);
  EXPECT_TRUE(rtscts::CrcOk(b, f));
  EXPECT_EQ(f.riders, 2u);
  EXPECT_EQ(f.payload_len, 0u);
  ptl_hdr get;
  ASSERT_EQ(ptl_hdr_decode(b.data() + RTSCTS_PTL_HDR_OFF, PTL_WIRE_HDR_LEN, &get), PTL_WIRE_OK);
  EXPECT_EQ(get.type, uint32_t(PTL_MSG_GET)) << "the frame's own message is still the GET";
  for (unsigned i = 0; i < 2; i++) {
    ptl_hdr h;
    ASSERT_EQ(ptl_hdr_decode(b.data() + f.riders_off + i * RTSCTS_RIDER_LEN, PTL_WIRE_HDR_LEN, &h),
              PTL_WIRE_OK);
    EXPECT_EQ(h.type, uint32_t(PTL_MSG_PUT)) << "a request, where only responses may ride";
    EXPECT_EQ(h.src.nid, f.src_nid);
    EXPECT_EQ(h.src_uid, 1000u);
    EXPECT_EQ(h.dst.nid, kTarget);
    EXPECT_EQ(h.pt_index, 3u);
    EXPECT_EQ(h.payload_length, 0u);
  }
}

TEST(Credit, ChallengeAckEchoesTheNonceToTheIncarnationThatAsked) {
  FakePeer peer = PeerAt(Params(), 0);
  Bytes b = CreditChallengeAck(peer, kTarget, kTargetInc, 0x0123456789abcdefULL);
  rtscts_frame f;
  ASSERT_EQ(rtscts::Decode(b, &f), RTSCTS_FRAME_OK);
  EXPECT_TRUE(rtscts::CrcOk(b, f));
  EXPECT_EQ(f.type, RTSCTS_CHALLENGE_ACK);
  EXPECT_EQ(f.src_nid, peer.nid);
  EXPECT_EQ(f.src_inc, peer.inc) << "the incarnation the target already believes";
  EXPECT_EQ(f.dst_nid, kTarget);
  EXPECT_EQ(f.dst_inc, kTargetInc);
  EXPECT_EQ(f.nonce, 0x0123456789abcdefULL);
}

TEST(Credit, TallyFollowsAcknowledgementsAndGrantsOfOurStreamOnly) {
  const PeersParams p = Params();
  FakePeer peer = PeerAt(p, 0);
  CreditTally t(p, peer, 2000);
  EXPECT_FALSE(t.acked());
  EXPECT_FALSE(t.have_inc());

  // An ACK about another stream tells the incarnation, not the ack.
  EXPECT_FALSE(t.Take(rtscts::Build(FromTarget(RTSCTS_ACK, peer, 9, 300, peer.stream + 1))));
  EXPECT_FALSE(t.acked());
  EXPECT_EQ(t.target_inc(), kTargetInc);
  EXPECT_EQ(t.ack_frames, 0u);

  t.Take(rtscts::Build(FromTarget(RTSCTS_ACK, peer, 1, 256, peer.stream)));
  EXPECT_TRUE(t.acked()) << "GET 0 was taken: the handshake is done";
  t.Take(rtscts::Build(FromTarget(RTSCTS_ACK, peer, 256, 256, peer.stream)));
  // Out of order: an older acknowledgement takes nothing back.
  t.Take(rtscts::Build(FromTarget(RTSCTS_ACK, peer, 100, 250, peer.stream)));
  EXPECT_EQ(t.ack(), 256u);
  EXPECT_EQ(t.grant_max(), 256u);
  EXPECT_EQ(t.grant_min(), 250u);
  EXPECT_EQ(t.ack_frames, 3u);
  EXPECT_EQ(t.acks_only, 4u);

  // Serial arithmetic: 2^32 - 1 is before 0.
  CreditTally w(p, peer, 1);
  w.Take(rtscts::Build(FromTarget(RTSCTS_ACK, peer, 0xffffffff, 0xffffffff, peer.stream)));
  w.Take(rtscts::Build(FromTarget(RTSCTS_ACK, peer, 2, 255, peer.stream)));
  EXPECT_EQ(w.ack(), 2u);
  EXPECT_EQ(w.grant_max(), 255u);
  EXPECT_EQ(w.grant_min(), 0xffffffffu);

  // A new stream forgets the old one's acknowledgements.
  t.NewStream(peer.stream + 1);
  EXPECT_FALSE(t.acked());
  EXPECT_EQ(t.ack(), 0u);
  EXPECT_EQ(t.grant_max(), 0u);
}

TEST(Credit, TallyCountsEachReplyOnceAndTellsFramesApart) {
  const PeersParams p = Params();
  FakePeer peer = PeerAt(p, 0);
  CreditTally t(p, peer, 2000);
  t.Take(Reply(p, peer, 0, 0, 64));
  t.Take(Reply(p, peer, 1, 1, 64));
  t.Take(Reply(p, peer, 0, 0, 64));     // sent again: never acknowledged
  t.Take(Reply(p, peer, 5000, 2, 64));  // names no GET of ours
  EXPECT_EQ(t.reply_frames, 4u);
  EXPECT_EQ(t.replies, 2u);
  EXPECT_EQ(t.reply_bytes, 128u);

  // A PUT from the target is no REPLY.
  rtscts_frame put = FromTarget(RTSCTS_MSG, peer, 0, 0, 0);
  t.Take(rtscts::Build(put, rtscts::EncodePtl(rtscts::PutHeader(p.target, {peer.nid, 5}, 0, 0, 8)),
                       rtscts::Pattern(8)));
  EXPECT_EQ(t.other, 1u);

  // A CHALLENGE asks for its nonce back; a RESET of our stream is counted.
  rtscts_frame ch = FromTarget(RTSCTS_CHALLENGE, peer, 0, 0, 0);
  ch.nonce = 0xfeed;
  ch.src_inc = kTargetInc + 1;  // a new incarnation asks
  auto asked = t.Take(rtscts::Build(ch));
  ASSERT_TRUE(asked);
  EXPECT_EQ(asked->nonce, 0xfeedu);
  EXPECT_EQ(asked->inc, kTargetInc + 1) << "answered to the incarnation that asked";
  EXPECT_EQ(t.target_inc(), kTargetInc) << "a CHALLENGE proves no incarnation";
  EXPECT_EQ(t.challenges, 1u);
  rtscts_frame rs = FromTarget(RTSCTS_RESET, peer, 0, 0, 0);
  rs.reset_stream = peer.stream;
  t.Take(rtscts::Build(rs));
  rs.reset_stream = peer.stream + 7;
  t.Take(rtscts::Build(rs));
  EXPECT_EQ(t.resets, 1u);
  EXPECT_EQ(t.other, 2u);

  // Not for the fake node, not from the target, or spoilt: not counted as
  // anything the target said.
  uint64_t frames = t.frames;
  rtscts_frame other_node = FromTarget(RTSCTS_ACK, peer, 5, 256, peer.stream);
  other_node.dst_nid = peer.nid + 1;
  t.Take(rtscts::Build(other_node));
  rtscts_frame other_src = FromTarget(RTSCTS_ACK, peer, 5, 256, peer.stream);
  other_src.src_nid = kTarget + 1;
  t.Take(rtscts::Build(other_src));
  EXPECT_EQ(t.not_ours, 2u);
  Bytes spoilt = rtscts::Build(FromTarget(RTSCTS_ACK, peer, 5, 256, peer.stream));
  spoilt[rtscts::off::kAck] ^= 1;  // under the CRC
  t.Take(spoilt);
  t.Take(Bytes(10, 0));
  EXPECT_EQ(t.bad, 2u);
  EXPECT_EQ(t.frames, frames);
  EXPECT_FALSE(t.acked()) << "nothing of those counted as an acknowledgement";
}

}  // namespace
}  // namespace ptl_inject
