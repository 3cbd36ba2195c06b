// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
// Builders of RTS/CTS frames for user space (unit tests, the fuzzer's seed
// corpus, tools/ptl_inject), over the kernel's own codec: rtscts_frame.c for
// the frame headers and kmod/core/ptl_wire.c for the Portals header.
//
// A frame is built from a struct rtscts_frame taken literally: Encode()
// writes exactly the fields given, so a caller that wants a broken frame
// sets a broken field and gets it on the wire; Build() is the valid path
// that also fills frame_len and csum_len and stores the checksum.
#pragma once

extern "C" {
#include "ptl_wire.h"
#include "rtscts_frame.h"
}

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace rtscts {

using Bytes = std::vector<uint8_t>;

// Offsets of the fields of the common header (the table in rtscts_frame.h),
// for callers that spoil one field of an encoded frame.
namespace off {
inline constexpr size_t kVersion = 0, kType = 1, kFlags = 2, kFrameLen = 4, kCsumLen = 6, kCrc = 8,
                        kSrcNid = 12, kDstNid = 16, kSrcInc = 20, kDstInc = 24, kStream = 28,
                        kSeq = 32, kAckStream = 36, kAck = 40, kWindow = 44, kPcsum = 46,
                        kSack = 48, kGrant = 56, kRiders = 60, kReserved = 61;
// Type headers, at RTSCTS_HDR_LEN: msg_id, then the reserved word (the
// status of a CTS), then the CTS length or DATA offset; the stream of a
// RESET, then its reserved word; the nonce of CHALLENGE and CHALLENGE_ACK.
inline constexpr size_t kMsgId = 64, kWord = 68, kLong = 72, kResetStream = 64, kNonce = 64;
static_assert(kReserved + 3 == RTSCTS_HDR_LEN && kMsgId == RTSCTS_HDR_LEN &&
                  kLong + 8 == RTSCTS_DATA_HDR_LEN && kNonce + 8 == RTSCTS_CHALLENGE_HDR_LEN &&
                  kPcsum == RTSCTS_PCSUM_OFF,
              "the offsets follow the table in rtscts_frame.h");
}  // namespace off

// A sending node as the frames name it: nid, incarnation and its stream
// to the receiver (both nonzero in a valid frame).
struct Node {
  uint32_t nid = 0;
  uint32_t inc = 0;
  uint32_t stream = 0;
};

// A valid header of `type` (enum rtscts_type) from `src` to `dst_nid`: the
// fields the type needs set to plausible values (msg_id 1, a CTS accepting
// 4096 bytes, an ACK acknowledging sequence 0 of stream 7, a RESET of stream
// 9, a CHALLENGE or CHALLENGE_ACK with a fixed nonce), window 64,
// everything else 0 (grant included), frame_len and csum_len 0 (Build()
// fills them). An unknown type gets the common fields only.
rtscts_frame Header(uint8_t type, const Node& src, uint32_t dst_nid);

// A Portals PUT of `length` bytes that asks for no ACK (md_handle
// PTL_HANDLE_NONE), job id PTL_JID_NONE; ptl_hdr_decode() accepts it.
ptl_hdr PutHeader(ptl_process_id_t src, ptl_process_id_t dst, ptl_pt_index_t portal,
                  ptl_match_bits_t bits, uint64_t length);
// A Portals GET of `length` bytes from offset 0 of the target's MD, whose
// REPLY is to come back for the initiator's MD `md_handle` (any value: it
// is the initiator's own business); job id PTL_JID_NONE. ptl_hdr_decode()
// accepts it.
ptl_hdr GetHeader(ptl_process_id_t src, ptl_process_id_t dst, ptl_pt_index_t portal,
                  ptl_match_bits_t bits, uint64_t length, ptl_handle_md_t md_handle);
Bytes EncodePtl(const ptl_hdr& h);

// The bytes of a frame: the headers of `f` exactly as given (lengths
// included, crc 0; max(RTSCTS_HDR_LEN, rtscts_hdr_len(type)) bytes, all 0
// for an unknown type, which the codec does not encode), then for MSG and
// RTS the Portals header `ptl` in its 96 bytes (zero if `ptl` is empty;
// it must otherwise be 96 bytes), then `riders` (the riders' Portals
// headers, whatever f.riders says), then `payload`.
Bytes Encode(const rtscts_frame& f, std::span<const uint8_t> ptl = {},
             std::span<const uint8_t> payload = {}, std::span<const uint8_t> riders = {});

// Stores the checksum of the first csum_len bytes (as the frame says,
// capped at its size); frames shorter than the common header are left as
// they are.
void Seal(Bytes& frame);

// Fills in pcsum as the sending host's device would: for a frame (from its
// common header on) that has payload outside the crc (csum_len <
// frame_len, both within the span) and no tag, the Internet checksum of
// bytes [RTSCTS_PCSUM_OFF, frame_len) with the field counted as 0. Other
// frames are left as they are. ptl_rtscts leaves pcsum to the device and a
// veth never computes it, so a packet socket there reads it as 0.
void FillPcsum(std::span<uint8_t> frame);

// Every byte of the tag Build() appends to a frame with RTSCTS_F_AUTH.
inline constexpr uint8_t kForgedTagByte = 0xa5;

// A valid frame: frame_len = csum_len = headers + riders + payload,
// encoded, sealed; f.riders is set from `riders` (96 bytes per rider).
// With RTSCTS_F_AUTH in f.flags: crc 0 and, after frame_len, a tag of
// RTSCTS_AUTH_TAG_LEN bytes kForgedTagByte (user space has no key: the
// frame is valid to the codec, and a forgery to a receiver).
Bytes Build(rtscts_frame f, std::span<const uint8_t> ptl = {},
            std::span<const uint8_t> payload = {}, std::span<const uint8_t> riders = {});

// Decodes as a receiver does when the whole frame is readable
// (avail = wire_len = size).
int Decode(std::span<const uint8_t> frame, rtscts_frame* f);

// Whether the stored crc is the checksum over f's csum_len (false if the
// frame holds fewer than csum_len bytes).
bool CrcOk(std::span<const uint8_t> frame, const rtscts_frame& f);

// `n` bytes of a recognisable pattern (byte i is seed + i).
Bytes Pattern(size_t n, uint8_t seed = 0);

// "OK", "ESHORT", ... (enum rtscts_frame_err); "E?" for anything else.
std::string_view ErrName(int err);
// "OK", "EMAGIC", ... (enum ptl_wire_err).
std::string_view PtlErrName(int err);
// "MSG", ... ; "?" for an unknown type.
std::string_view TypeName(uint8_t type);

// Little-endian stores into an encoded frame (bounds checked: a store
// past the end is a programming error and throws std::out_of_range).
void Put16(Bytes& b, size_t at, uint16_t v);
void Put32(Bytes& b, size_t at, uint32_t v);
void Put64(Bytes& b, size_t at, uint64_t v);

}  // namespace rtscts
