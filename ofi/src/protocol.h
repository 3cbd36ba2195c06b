// SPDX-License-Identifier: BSD-3-Clause
// The ptl provider's wire conventions on Portals 3.3 objects: which portal
// carries what, the match-bit layout, and what a message's hdr_data says.
// Documentation/mpi.md draws each protocol.
//
// Every endpoint owns kPtsPerEndpoint consecutive portal indices of its
// process's NI, starting at kPtsPerEndpoint * endpoint index:
//
//   +0 tagged   fi_tsend* land here: posted receives, then the overflow heap
//               (short unexpected messages, data kept), then one catch-all
//               entry that keeps only the header (long ones, and short ones
//               when the heap is full)
//   +1 msg      the same for untagged fi_send*
//   +2 rndv     a long send's buffer, exposed to its receiver's PtlGet
//   +3 request  "send me that one again": the receiver of a short message
//               the heap had no room for asks for its data here; in front,
//               the probe entry, whose ACK of a zero-byte put tells a
//               peer we are there (liveness.cc)
//   +4 resend   where that data lands: an entry on the posted buffer
//
// Match bits of a tagged or untagged message:
//
//   63   62 .. 56              55 .. 0
//   LONG sender's endpoint     the libfabric tag (0 for untagged)
//
// LONG keeps long messages out of the overflow heap (its entries require the
// bit clear), so they reach the catch-all, which saves the header only; the
// receiver then pulls the data (seed 004's long protocol, get-based). The
// sender's endpoint index tells the receiver which portals the sender owns
// and lets a directed receive name one endpoint of a process.
//
// hdr_data of a message:
//
//   63         62 .. 32                 31 .. 0
//   HAS_DATA   cookie: the sender's     remote CQ data (FI_REMOTE_CQ_DATA)
//              name for this send
//
// The cookie is the match bits of the rndv entry of a long send, and what a
// receiver names in a request. A put's remote offset carries the whole
// 64-bit cookie too: ACK events echo it (the targets manage offsets
// locally, so the offset is free).
#ifndef PTL_OFI_PROTOCOL_H
#define PTL_OFI_PROTOCOL_H

#include <cstddef>
#include <cstdint>

namespace ptl::ofi {

inline constexpr unsigned kPtsPerEndpoint = 5;
enum PortalOffset : unsigned {
  kPtTagged = 0,
  kPtMsg = 1,
  kPtRndv = 2,
  kPtRequest = 3,
  kPtResend = 4,
};
// Portal indices 0 .. 255 (the module's max_pt_index): 51 endpoints per
// process and interface.
inline constexpr unsigned kMaxEndpoints = 256 / kPtsPerEndpoint;

inline constexpr uint64_t kLongBit = 1ULL << 63;
inline constexpr unsigned kEpShift = 56;
inline constexpr uint64_t kEpMask = 0x7fULL << kEpShift;
inline constexpr uint64_t kTagMask = (1ULL << kEpShift) - 1;
static_assert(kMaxEndpoints <= (kEpMask >> kEpShift) + 1);

inline constexpr uint64_t kHasDataBit = 1ULL << 63;
inline constexpr unsigned kCookieShift = 32;
inline constexpr uint64_t kCookieMask = (1ULL << 31) - 1;  // 31 bits
inline constexpr size_t kCqDataSize = 4;

// hdr_data of the answer to a request for a message its sender no longer
// holds (it gave the requester up); a resend's hdr_data is 0.
inline constexpr uint64_t kResendGone = 1;

constexpr uint64_t MatchBits(bool is_long, unsigned sender_ep, uint64_t tag) {
  return (is_long ? kLongBit : 0) | (uint64_t{sender_ep} << kEpShift) | (tag & kTagMask);
}
constexpr bool BitsLong(uint64_t bits) { return bits & kLongBit; }
constexpr unsigned BitsEndpoint(uint64_t bits) {
  return static_cast<unsigned>((bits & kEpMask) >> kEpShift);
}
constexpr uint64_t BitsTag(uint64_t bits) { return bits & kTagMask; }

constexpr uint64_t HdrData(bool has_data, uint32_t cookie, uint64_t data) {
  return (has_data ? kHasDataBit : 0) | ((uint64_t{cookie} & kCookieMask) << kCookieShift) |
         (has_data ? (data & 0xffffffffULL) : 0);
}
constexpr bool HdrHasData(uint64_t hdr) { return hdr & kHasDataBit; }
constexpr uint32_t HdrCookie(uint64_t hdr) {
  return static_cast<uint32_t>((hdr >> kCookieShift) & kCookieMask);
}
constexpr uint64_t HdrCqData(uint64_t hdr) { return hdr & 0xffffffffULL; }

// Receive-side match: a posted receive for (tag, ignore) from one endpoint
// (or any): the bits it matches and the bits it ignores. LONG is always
// ignored: a posted receive takes short and long messages alike.
struct RecvMatch {
  uint64_t bits;
  uint64_t ignore;
};
constexpr RecvMatch MakeRecvMatch(uint64_t tag, uint64_t ignore, bool any_ep, unsigned ep) {
  RecvMatch m{};
  m.bits = MatchBits(false, any_ep ? 0 : ep, tag & ~ignore);
  m.ignore = kLongBit | (any_ep ? kEpMask : 0) | (ignore & kTagMask);
  return m;
}
constexpr bool Matches(const RecvMatch& m, uint64_t incoming) {
  return ((m.bits ^ incoming) & ~m.ignore) == 0;
}

}  // namespace ptl::ofi

#endif  // PTL_OFI_PROTOCOL_H
