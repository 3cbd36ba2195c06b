// SPDX-License-Identifier: BSD-3-Clause
// The hostile catalogue of ptl_inject: frames of the RTS/CTS transport that
// a receiver must refuse or survive, each with the verdict the frame codec
// gives it and, for frames the codec accepts, what is wrong with it that
// only the receiver's state can tell. Deterministic: the same parameters
// give the same bytes (random frames come from the seed).
// Documentation/ptl_inject.md lists the kinds and why each exists.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "frame_builder.h"

namespace ptl_inject {

using rtscts::Bytes;

// Why a frame that the codec accepts is still wrong.
enum class Flaw {
  kNone,              // refused by rtscts_frame_decode (expect says why)
  kBadCrc,            // checksum does not match
  kBadPtlHeader,      // ptl_hdr_decode refuses its Portals header (ptl_expect)
  kPtlMismatch,       // Portals header valid but disagrees with the frame
  kHugeMessage,       // valid Portals header announcing far more than comes
  kWrongNode,         // dst_nid is not the receiver's
  kStaleIncarnation,  // dst_inc is not the receiver's incarnation
  kUnknownMsg,        // CTS or DATA for a msg id never announced
  kOffsetSpan,        // DATA bytes reach past 2^48
  kOutOfWindow,       // seq far ahead of anything acknowledged
  kUnknownStream,     // ack or RESET about a stream the receiver never had
  kRiderNotResponse,  // a rider that is not a response without payload
};

std::string_view FlawName(Flaw f);

// Sentinel for `expect`: the codec must refuse, with any reason (random
// bytes).
inline constexpr int kAnyRefusal = 1;

struct HostileFrame {
  std::string kind;  // the group it is counted in: "truncated", "bad_crc", ...
  std::string name;  // unique: "truncated/ack-63"
  std::string why;   // one line for -v
  Bytes frame;       // what follows the Ethernet header
  int expect = 0;    // rtscts_frame_decode(frame, size, size): OK, an error, kAnyRefusal
  Flaw flaw = Flaw::kNone;
  int ptl_expect = 0;  // kBadPtlHeader: what ptl_hdr_decode says
};

struct HostileParams {
  uint32_t src_nid = 0x0a00fffe;  // the fake node the frames come from
  uint32_t src_inc = 0x1d0c0de1;
  uint32_t stream = 0x5eed5eed;
  uint32_t dst_nid = 0;  // the receiver's nid (required)
  uint32_t dst_inc = 0;  // the receiver's incarnation if known, else 0
  uint32_t dst_pid = 0;  // Portals pid and portal the MSG frames address
  uint32_t portal = 0;
  uint64_t seed = 1;     // of the random frames
  uint32_t random = 16;  // how many random frames (half with RTSCTS_VERSION)
};

// Msg ids no frame of the catalogue announces (kUnknownMsg).
inline constexpr uint32_t kUnknownCtsMsgId = 0xdead0001;
inline constexpr uint32_t kUnknownDataMsgId = 0xdead0002;

// The catalogue, in sending order. The frames that the codec accepts and
// that carry a sequence are numbered 0, 1, 2, ... on params.stream (the
// first with SYN), so that a receiver keeping the stream in order reaches
// each flaw; frames meant to be refused reuse the next number.
std::vector<HostileFrame> HostileCatalogue(const HostileParams& params);

// The kinds, in catalogue order (the keys of the JSON report).
std::vector<std::string> HostileKinds(const std::vector<HostileFrame>& catalogue);

// Random frame bytes, length 0..max_len; half of them start with
// RTSCTS_VERSION and a known type so that they get past the first checks.
Bytes RandomFrame(uint64_t& state, size_t max_len);

// splitmix64: the generator of every pseudo-random choice here.
uint64_t SplitMix64(uint64_t& state);

}  // namespace ptl_inject
