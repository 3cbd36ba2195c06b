// SPDX-License-Identifier: BSD-3-Clause
// The peers mode of ptl_inject: many fake nodes, each opening a stream to
// one target with a single valid MSG (SYN|ACK_REQ, seq 0) that carries a
// Portals PUT, so that the target creates state for every one of them; and
// the recognition of what the target sends back (the ACK of that frame, a
// RESET, anything else).
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "frame_builder.h"

namespace ptl_inject {

using rtscts::Bytes;
using Mac = std::array<uint8_t, 6>;

struct PeersParams {
  uint32_t first_nid = 0x0a000100;  // nids first_nid .. first_nid + count - 1
  uint32_t count = 1000;
  ptl_process_id_t target{0, 0};  // the receiving node and the Portals pid put to
  uint32_t portal = 0;
  uint64_t match_bits = 0;
  uint32_t src_pid = 1;   // the Portals pid of every fake process
  uint32_t payload = 32;  // bytes of each PUT (all sent eagerly in the MSG)
  uint64_t seed = 1;      // of the incarnations and streams
};

// One fake node: its nid, a nonzero incarnation and stream (derived from
// the seed and the nid, so a later run with the same seed is the same
// incarnation), and a locally administered MAC 02:50:<nid>.
struct FakePeer {
  uint32_t nid = 0;
  uint32_t inc = 0;
  uint32_t stream = 0;
  Mac mac{};
};

FakePeer PeerAt(const PeersParams& p, uint32_t index);

// The MSG frame peer `peer` sends: flags SYN|ACK_REQ, seq 0, msg_id 1, dst_inc
// 0 (it has never heard from the target), no ack fields, window 64; a
// Portals PUT of p.payload bytes (pattern) from {nid, src_pid} to p.target
// on p.portal with p.match_bits, asking for no Portals ACK.
Bytes PeerMsg(const PeersParams& p, const FakePeer& peer);

// Frame `seq` (>= 1) of peer `peer`'s stream when sequence 0 never comes:
// a DATA frame of msg_id 1 at offset (seq - 1) * payload with `payload`
// bytes (pattern), flags SYN (nothing of the stream was acknowledged, so
// the receiver follows it from 0), dst_inc 0, no ack fields. A receiver
// can only buffer it ahead of the gap (the gap mode, ptl_inject.md).
Bytes GapData(const FakePeer& peer, uint32_t dst_nid, uint32_t seq, size_t payload);

// Message `index` (0-based) of peer `peer` when it opens many and finishes
// none: frame `index` of its stream (flags SYN, nothing of it acknowledged;
// msg_id index + 1), a Portals PUT of `length` bytes to p.target on
// p.portal with p.match_bits, asking for no Portals ACK. As a MSG it carries
// the first `eager` bytes (pattern; eager < length); as an RTS (`rts`) none.
// The rest never comes: the receiver can only hold the message open, until
// it gives up on the silent peer (the partial mode, ptl_inject.md).
Bytes PartialMsg(const PeersParams& p, const FakePeer& peer, uint32_t index, uint64_t length,
                 uint32_t eager, bool rts);

enum class ReplyKind {
  kNotForUs,  // not from the target, or to a nid that is not one of ours
  kBadFrame,  // refused by the codec or a checksum that does not match
  kAck,       // acknowledges seq 0 of the peer's stream (any frame type)
  kReset,     // RESET of the peer's stream: the target dropped its state
  kOther,     // anything else to one of ours (probes, Portals responses)
};

struct Reply {
  ReplyKind kind = ReplyKind::kNotForUs;
  uint32_t peer = 0;  // index, for kAck, kReset and kOther
};

// What a frame received (after the Ethernet header) means.
Reply ClassifyReply(const PeersParams& p, std::span<const uint8_t> frame);

}  // namespace ptl_inject
