// SPDX-License-Identifier: BSD-3-Clause
// The credit mode of ptl_inject: one fake node that ignores the request
// credit of ptl_rtscts (wire-protocol.md, "Request credit"). It opens a
// stream to the target with one GET, learns the target's incarnation from
// the answer (and answers its CHALLENGEs), then frames GET after GET past
// every grant the target sends, and never acknowledges anything of the
// target's stream: each GET the target takes makes a REPLY that waits for
// an acknowledgement that never comes. What the target sends back is
// tallied here (grants, acknowledgements, REPLYs).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "frame_builder.h"
#include "peers.h"

namespace ptl_inject {

struct CreditParams {
  uint32_t gets = 2000;     // GETs, frames 0 .. gets - 1 of the stream
  uint64_t length = 64;     // bytes each GET asks for
  uint32_t rounds = 2;      // times what is not acknowledged is sent again
  uint32_t src_uid = 0;     // the uid the GETs claim (access control admits
                            // the target's own uid by default)
  uint32_t put_riders = 0;  // PUT requests riding on each GET (wire version
                            // 4), which the target must refuse: a request
                            // there would pass the credit
};

// GET `index` (0-based) of `peer` to p.target: a MSG frame, seq index,
// msg_id index + 1, carrying a Portals GET of c.length bytes on p.portal
// with p.match_bits from {peer.nid, p.src_pid} and uid c.src_uid,
// md_handle index + 1 (so that each REPLY names its GET), and c.put_riders
// riders, each a PUT of 0 bytes without ACK to the same portal and bits.
// Flags SYN while nothing of the stream
// has been acknowledged (`syn`), ACK_REQ with `ack_req`; dst_inc as given
// (0: the target is not known yet). No ack fields: the fake node never
// acknowledges the target's stream, so no REPLY is ever done with.
Bytes CreditGet(const PeersParams& p, const CreditParams& c, const FakePeer& peer, uint32_t index,
                bool syn, bool ack_req, uint32_t dst_inc);

// The CHALLENGE_ACK that answers a CHALLENGE of the target (`dst_inc` its
// incarnation, `nonce` echoed): what any live node sends at once.
Bytes CreditChallengeAck(const FakePeer& peer, uint32_t dst_nid, uint32_t dst_inc, uint64_t nonce);

// A CHALLENGE of the target: what the CHALLENGE_ACK must echo, and to whom.
struct Challenge {
  uint64_t nonce = 0;
  uint32_t inc = 0;  // the challenger's incarnation: the answer's dst_inc
};

// What the target sent the fake node, frame by frame.
class CreditTally {
 public:
  CreditTally(const PeersParams& p, const FakePeer& peer, uint32_t gets)
      : p_(p), peer_(peer), reply_seen_(gets) {}

  // What a frame received (after the Ethernet header) asks of the fake
  // node: nothing, or to answer a CHALLENGE.
  std::optional<Challenge> Take(std::span<const uint8_t> frame);

  // The fake node moved to a new stream (after a RESET of the old one):
  // acknowledgements and grants start again.
  void NewStream(uint32_t stream);

  bool acked() const { return have_ack_; }  // anything of our stream acknowledged
  bool have_inc() const { return target_inc_ != 0; }
  uint32_t target_inc() const { return target_inc_; }
  // The largest `ack` about our stream: the GETs the target took, as the
  // next sequence it expects (every frame carries one GET).
  uint32_t ack() const { return ack_; }
  // The largest and smallest grant of frames with ack fields about our
  // stream (0 before any).
  uint32_t grant_max() const { return grant_max_; }
  uint32_t grant_min() const { return grant_min_; }

  uint64_t frames = 0;        // from the target to the fake node, valid
  uint64_t ack_frames = 0;    // ... carrying ack fields about our stream
  uint64_t acks_only = 0;     // ... of type ACK
  uint64_t reply_frames = 0;  // MSG frames carrying a REPLY (again: counted again)
  uint64_t replies = 0;       // distinct REPLYs (by md_handle: the GET answered)
  uint64_t reply_bytes = 0;   // payload of the distinct REPLYs' MSG frames
  uint64_t data_frames = 0;   // DATA frames (the rest of a long REPLY)
  uint64_t challenges = 0;
  uint64_t resets = 0;    // RESETs of our stream
  uint64_t other = 0;     // anything else to the fake node
  uint64_t bad = 0;       // refused by the codec, or a bad checksum
  uint64_t not_ours = 0;  // not from the target to the fake node

 private:
  const PeersParams& p_;
  FakePeer peer_;
  std::vector<uint8_t> reply_seen_;
  uint32_t target_inc_ = 0;
  bool have_ack_ = false;
  uint32_t ack_ = 0;
  bool have_grant_ = false;
  uint32_t grant_max_ = 0, grant_min_ = 0;
};

}  // namespace ptl_inject
