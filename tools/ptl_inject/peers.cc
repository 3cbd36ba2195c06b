// SPDX-License-Identifier: BSD-3-Clause
#include "peers.h"

#include "hostile.h"

namespace ptl_inject {

FakePeer PeerAt(const PeersParams& p, uint32_t index) {
  FakePeer peer;
  peer.nid = p.first_nid + index;
  uint64_t state = p.seed ^ (uint64_t(peer.nid) << 20);
  uint64_t r = SplitMix64(state);
  peer.inc = uint32_t(r) ? uint32_t(r) : 1;
  peer.stream = uint32_t(r >> 32) ? uint32_t(r >> 32) : 1;
  peer.mac = {0x02,
              0x50,
              uint8_t(peer.nid >> 24),
              uint8_t(peer.nid >> 16),
              uint8_t(peer.nid >> 8),
              uint8_t(peer.nid)};
  return peer;
}

Bytes PeerMsg(const PeersParams& p, const FakePeer& peer) {
  rtscts_frame f = rtscts::Header(RTSCTS_MSG, {peer.nid, peer.inc, peer.stream}, p.target.nid);
  f.flags = RTSCTS_F_SYN | RTSCTS_F_ACK_REQ;
  f.seq = 0;
  ptl_hdr h = rtscts::PutHeader({peer.nid, p.src_pid}, p.target, p.portal, p.match_bits, p.payload);
  return rtscts::Build(f, rtscts::EncodePtl(h), rtscts::Pattern(p.payload, uint8_t(peer.nid)));
}

Bytes GapData(const FakePeer& peer, uint32_t dst_nid, uint32_t seq, size_t payload) {
  rtscts_frame f = rtscts::Header(RTSCTS_DATA, {peer.nid, peer.inc, peer.stream}, dst_nid);
  f.flags = RTSCTS_F_SYN;
  f.seq = seq;
  f.msg_id = 1;
  f.offset = uint64_t(seq - 1) * payload;
  return rtscts::Build(f, {}, rtscts::Pattern(payload, uint8_t(seq)));
}

Bytes PartialMsg(const PeersParams& p, const FakePeer& peer, uint32_t index, uint64_t length,
                 uint32_t eager, bool rts) {
  rtscts_frame f = rtscts::Header(rts ? RTSCTS_RTS : RTSCTS_MSG, {peer.nid, peer.inc, peer.stream},
                                  p.target.nid);
  f.flags = RTSCTS_F_SYN;
  f.seq = index;
  f.msg_id = index + 1;
  ptl_hdr h = rtscts::PutHeader({peer.nid, p.src_pid}, p.target, p.portal, p.match_bits, length);
  Bytes payload = rts ? Bytes() : rtscts::Pattern(eager, uint8_t(index));
  return rtscts::Build(f, rtscts::EncodePtl(h), payload);
}

Reply ClassifyReply(const PeersParams& p, std::span<const uint8_t> frame) {
  rtscts_frame f;
  int rc = rtscts_frame_decode(frame.data(), frame.size(), frame.size(), &f);
  if (rc != RTSCTS_FRAME_OK) return {ReplyKind::kBadFrame, 0};
  if (f.src_nid != p.target.nid || f.dst_nid - p.first_nid >= p.count)
    return {ReplyKind::kNotForUs, 0};
  if (!rtscts::CrcOk(frame, f)) return {ReplyKind::kBadFrame, 0};
  uint32_t index = f.dst_nid - p.first_nid;
  FakePeer peer = PeerAt(p, index);
  if (f.type == RTSCTS_RESET && f.reset_stream == peer.stream) return {ReplyKind::kReset, index};
  // ack is the next sequence expected: past 0 means our MSG arrived.
  if (f.ack_stream == peer.stream && rtscts_seq_after(f.ack, 0)) return {ReplyKind::kAck, index};
  return {ReplyKind::kOther, index};
}

}  // namespace ptl_inject
