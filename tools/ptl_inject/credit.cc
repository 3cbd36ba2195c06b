// SPDX-License-Identifier: BSD-3-Clause
#include "credit.h"

namespace ptl_inject {

Bytes CreditGet(const PeersParams& p, const CreditParams& c, const FakePeer& peer, uint32_t index,
                bool syn, bool ack_req, uint32_t dst_inc) {
  rtscts_frame f = rtscts::Header(RTSCTS_MSG, {peer.nid, peer.inc, peer.stream}, p.target.nid);
  f.flags = uint16_t((syn ? RTSCTS_F_SYN : 0) | (ack_req ? RTSCTS_F_ACK_REQ : 0));
  f.dst_inc = dst_inc;
  f.seq = index;
  f.msg_id = index + 1;
  ptl_hdr h = rtscts::GetHeader({peer.nid, p.src_pid}, p.target, p.portal, p.match_bits, c.length,
                                index + 1);
  h.src_uid = c.src_uid;
  Bytes riders;
  for (uint32_t i = 0; i < c.put_riders; i++) {
    ptl_hdr put = rtscts::PutHeader({peer.nid, p.src_pid}, p.target, p.portal, p.match_bits, 0);
    put.src_uid = c.src_uid;
    Bytes b = rtscts::EncodePtl(put);
    riders.insert(riders.end(), b.begin(), b.end());
  }
  return rtscts::Build(f, rtscts::EncodePtl(h), {}, riders);
}

Bytes CreditChallengeAck(const FakePeer& peer, uint32_t dst_nid, uint32_t dst_inc, uint64_t nonce) {
  rtscts_frame f = rtscts::Header(RTSCTS_CHALLENGE_ACK, {peer.nid, peer.inc, 0}, dst_nid);
  f.dst_inc = dst_inc;
  f.nonce = nonce;
  return rtscts::Build(f);
}

void CreditTally::NewStream(uint32_t stream) {
  peer_.stream = stream;
  have_ack_ = have_grant_ = false;
  ack_ = grant_max_ = grant_min_ = 0;
}

std::optional<Challenge> CreditTally::Take(std::span<const uint8_t> frame) {
  rtscts_frame f;
  if (rtscts_frame_decode(frame.data(), frame.size(), frame.size(), &f) != RTSCTS_FRAME_OK) {
    bad++;
    return std::nullopt;
  }
  if (f.src_nid != p_.target.nid || f.dst_nid != peer_.nid) {
    not_ours++;
    return std::nullopt;
  }
  if (!rtscts::CrcOk(frame, f)) {
    bad++;
    return std::nullopt;
  }
  frames++;
  // A CHALLENGE may come from an incarnation we do not know yet; every
  // other frame is the target's word on who it is.
  if (f.type != RTSCTS_CHALLENGE) target_inc_ = f.src_inc;
  if (f.ack_stream == peer_.stream) {
    ack_frames++;
    if (!have_ack_ || rtscts_seq_after(f.ack, ack_)) ack_ = f.ack;
    have_ack_ = have_ack_ || f.ack != 0;
    if (!have_grant_ || rtscts_seq_after(f.grant, grant_max_)) grant_max_ = f.grant;
    if (!have_grant_ || rtscts_seq_before(f.grant, grant_min_)) grant_min_ = f.grant;
    have_grant_ = true;
  }
  switch (f.type) {
    case RTSCTS_CHALLENGE:
      challenges++;
      return Challenge{f.nonce, f.src_inc};
    case RTSCTS_RESET:
      if (f.reset_stream == peer_.stream)
        resets++;
      else
        other++;
      break;
    case RTSCTS_ACK:
      acks_only++;
      break;
    case RTSCTS_MSG: {
      ptl_hdr h;
      if (f.hdr_len < RTSCTS_MSG_HDR_LEN ||
          ptl_hdr_decode(frame.data() + RTSCTS_PTL_HDR_OFF, PTL_WIRE_HDR_LEN, &h) != PTL_WIRE_OK ||
          h.type != PTL_MSG_REPLY) {
        other++;
        break;
      }
      reply_frames++;
      // md_handle is the GET's index + 1 (CreditGet).
      uint64_t i = uint64_t(h.md_handle) - 1;
      if (i < reply_seen_.size() && !reply_seen_[i]) {
        reply_seen_[i] = 1;
        replies++;
        reply_bytes += f.payload_len;
      }
      break;
    }
    case RTSCTS_DATA:
      data_frames++;
      break;
    default:
      other++;
      break;
  }
  return std::nullopt;
}

}  // namespace ptl_inject
