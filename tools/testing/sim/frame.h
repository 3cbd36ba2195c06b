// SPDX-License-Identifier: BSD-3-Clause
// A frame of the RTS/CTS transport as the model sees it: the fields of
// Documentation/wire-protocol.md that change what a node does (no
// checksums, incarnations or addresses), and the lengths that decide its
// cost and its time on a wire.
#ifndef PTL_SIM_FRAME_H
#define PTL_SIM_FRAME_H

#include <cstdint>

namespace ptl_sim {

enum class FrameType : uint8_t { kMsg = 1, kRts = 2, kCts = 3, kData = 4, kAck = 5 };

// Header lengths (rtscts_frame.h): common header 64, MSG and RTS 168 (with
// the Portals header), CTS and DATA 80, ACK 64.
inline constexpr uint32_t kHdrLen = 64;
inline constexpr uint32_t kMsgHdrLen = 168;
inline constexpr uint32_t kDataHdrLen = 80;
inline constexpr uint32_t kEthOverhead = 14 + 4 + 8 + 12;  // header, FCS, preamble, gap
inline constexpr uint32_t kEthMinFrame = 60;

inline constexpr uint32_t HeaderLen(FrameType t) {
  switch (t) {
    case FrameType::kMsg:
    case FrameType::kRts:
      return kMsgHdrLen;
    case FrameType::kCts:
    case FrameType::kData:
      return kDataHdrLen;
    case FrameType::kAck:
      break;
  }
  return kHdrLen;
}

// What the Portals header tells the programs: which message of which
// program this is (the model's stand-in for match bits and hdr_data).
struct AppInfo {
  uint8_t kind = 0;
  int32_t from = -1;  // the sending program
  int32_t to = -1;    // the receiving program
  uint64_t seq = 0;
  uint64_t aux = 0;
};

struct Frame {
  int32_t src = 0, dst = 0;
  FrameType type = FrameType::kAck;
  bool ack_req = false;
  bool resent = false;
  uint32_t stream = 0;  // sequenced frames: the sender's stream
  uint32_t seq = 0;
  // The ack fields, about the receiver's stream to the sender.
  uint32_t ack_stream = 0;  // 0: none
  uint32_t ack = 0;
  uint32_t window = 0;
  uint32_t grant = 0;
  uint64_t sack = 0;
  // MSG, RTS, CTS, DATA
  uint32_t msg_id = 0;
  uint32_t payload = 0;  // bytes carried
  uint64_t offset = 0;   // DATA
  uint64_t length = 0;   // MSG, RTS: the message's; CTS: bytes accepted
  bool cts_drop = false;
  bool request = false;  // MSG, RTS: a request (holds a credit)
  AppInfo app;           // MSG, RTS

  uint32_t len() const { return HeaderLen(type) + payload; }
  // Bytes on an Ethernet wire, with header, FCS, preamble and gap.
  uint32_t wire_bytes() const {
    uint32_t l = len() + 14;
    return (l < kEthMinFrame ? kEthMinFrame : l) + kEthOverhead - 14;
  }
  bool sequenced() const { return type != FrameType::kAck; }
};

}  // namespace ptl_sim

#endif  // PTL_SIM_FRAME_H
