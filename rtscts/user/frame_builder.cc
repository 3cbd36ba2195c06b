// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "frame_builder.h"

#include <algorithm>
#include <stdexcept>

#include "ptl_tool/crc32c.h"

namespace rtscts {

rtscts_frame Header(uint8_t type, const Node& src, uint32_t dst_nid) {
  rtscts_frame f{};
  f.type = type;
  f.src_nid = src.nid;
  f.dst_nid = dst_nid;
  f.src_inc = src.inc;
  f.window = 64;
  if (rtscts_type_reliable(type)) f.stream = src.stream;
  switch (type) {
    case RTSCTS_MSG:
    case RTSCTS_RTS:
    case RTSCTS_DATA:
      f.msg_id = 1;
      break;
    case RTSCTS_CTS:
      f.msg_id = 1;
      f.status = RTSCTS_CTS_ACCEPT;
      f.length = 4096;
      break;
    case RTSCTS_ACK:
      f.ack_stream = 7;
      f.ack = 1;
      break;
    case RTSCTS_RESET:
      f.reset_stream = 9;
      break;
    case RTSCTS_CHALLENGE:
    case RTSCTS_CHALLENGE_ACK:
      f.nonce = 0x5eed0000cafe0001ULL;
      break;
    default:
      break;
  }
  return f;
}

ptl_hdr PutHeader(ptl_process_id_t src, ptl_process_id_t dst, ptl_pt_index_t portal,
                  ptl_match_bits_t bits, uint64_t length) {
  ptl_hdr h{};
  h.type = PTL_MSG_PUT;
  h.src = src;
  h.dst = dst;
  h.src_jid = PTL_JID_NONE;
  h.match_bits = bits;
  h.rlength = length;
  h.pt_index = portal;
  h.md_handle = PTL_HANDLE_NONE;
  h.payload_length = length;
  return h;
}

ptl_hdr GetHeader(ptl_process_id_t src, ptl_process_id_t dst, ptl_pt_index_t portal,
                  ptl_match_bits_t bits, uint64_t length, ptl_handle_md_t md_handle) {
  // A PUT's fields but for what a GET sends: no payload, and the MD the
  // REPLY is for.
  ptl_hdr h = PutHeader(src, dst, portal, bits, length);
  h.type = PTL_MSG_GET;
  h.md_handle = md_handle;
  h.payload_length = 0;
  return h;
}

Bytes EncodePtl(const ptl_hdr& h) {
  Bytes b(PTL_WIRE_HDR_LEN);
  ptl_hdr_encode(&h, b.data());
  return b;
}

Bytes Encode(const rtscts_frame& f, std::span<const uint8_t> ptl, std::span<const uint8_t> payload,
             std::span<const uint8_t> riders) {
  size_t hdr = std::max<size_t>(RTSCTS_HDR_LEN, rtscts_hdr_len(f.type));
  Bytes b(hdr, 0);
  // For an unknown type the codec writes nothing: the common header stays 0.
  rtscts_frame_encode(&f, b.data());
  if (f.type == RTSCTS_MSG || f.type == RTSCTS_RTS) {
    if (!ptl.empty() && ptl.size() != PTL_WIRE_HDR_LEN)
      throw std::invalid_argument("a Portals header is 96 bytes");
    std::copy(ptl.begin(), ptl.end(), b.begin() + RTSCTS_PTL_HDR_OFF);
  }
  b.insert(b.end(), riders.begin(), riders.end());
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}

void Seal(Bytes& frame) {
  if (frame.size() < RTSCTS_HDR_LEN) return;
  size_t n = std::min<size_t>(frame[off::kCsumLen] | frame[off::kCsumLen + 1] << 8, frame.size());
  if (n < RTSCTS_HDR_LEN) {  // rtscts_frame_crc() refuses; compute it anyway
    Bytes copy(frame.begin(), frame.begin() + n);
    if (n > off::kCrc) std::fill_n(copy.begin() + off::kCrc, std::min<size_t>(4, n - off::kCrc), 0);
    Put32(frame, off::kCrc, ptl::tool::Crc32c(copy));
    return;
  }
  rtscts_frame_set_crc(frame.data(),
                       rtscts_frame_crc(frame.data(), uint16_t(n), ptl::tool::Crc32cUpdate));
}

void FillPcsum(std::span<uint8_t> frame) {
  if (frame.size() < RTSCTS_HDR_LEN || frame[off::kFlags] & RTSCTS_F_AUTH) return;
  size_t frame_len = frame[off::kFrameLen] | frame[off::kFrameLen + 1] << 8;
  size_t csum_len = frame[off::kCsumLen] | frame[off::kCsumLen + 1] << 8;
  if (csum_len >= frame_len || frame_len > frame.size()) return;
  frame[off::kPcsum] = frame[off::kPcsum + 1] = 0;
  // RFC 1071: 16-bit words in either byte order give the same bytes.
  uint32_t sum = 0;
  for (size_t i = off::kPcsum; i < frame_len; i += 2)
    sum += uint32_t(frame[i] << 8 | (i + 1 < frame_len ? frame[i + 1] : 0));
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  uint16_t pcsum = uint16_t(~sum);
  frame[off::kPcsum] = uint8_t(pcsum >> 8);
  frame[off::kPcsum + 1] = uint8_t(pcsum);
}

Bytes Build(rtscts_frame f, std::span<const uint8_t> ptl, std::span<const uint8_t> payload,
            std::span<const uint8_t> riders) {
  if (riders.size() % RTSCTS_RIDER_LEN || riders.size() / RTSCTS_RIDER_LEN > UINT8_MAX)
    throw std::invalid_argument("riders are whole 96-byte Portals headers");
  size_t len = rtscts_hdr_len(f.type) + riders.size() + payload.size();
  if (len > RTSCTS_MAX_FRAME) throw std::length_error("frame longer than 65535 bytes");
  f.frame_len = uint16_t(len);
  f.csum_len = uint16_t(len);
  f.riders = uint8_t(riders.size() / RTSCTS_RIDER_LEN);
  Bytes b = Encode(f, ptl, payload, riders);
  if (!(f.flags & RTSCTS_F_AUTH)) {
    Seal(b);
    return b;
  }
  // crc and pcsum stay 0; the tag is one nobody with the key made.
  b.insert(b.end(), RTSCTS_AUTH_TAG_LEN, kForgedTagByte);
  return b;
}

int Decode(std::span<const uint8_t> frame, rtscts_frame* f) {
  return rtscts_frame_decode(frame.data(), frame.size(), frame.size(), f);
}

bool CrcOk(std::span<const uint8_t> frame, const rtscts_frame& f) {
  if (f.csum_len < RTSCTS_HDR_LEN || f.csum_len > frame.size()) return false;
  return rtscts_frame_crc(frame.data(), f.csum_len, ptl::tool::Crc32cUpdate) == f.crc;
}

Bytes Pattern(size_t n, uint8_t seed) {
  Bytes b(n);
  for (size_t i = 0; i < n; i++) b[i] = uint8_t(seed + i);
  return b;
}

std::string_view ErrName(int err) {
  switch (err) {
    case RTSCTS_FRAME_OK:
      return "OK";
    case RTSCTS_FRAME_ESHORT:
      return "ESHORT";
    case RTSCTS_FRAME_EVERSION:
      return "EVERSION";
    case RTSCTS_FRAME_ETYPE:
      return "ETYPE";
    case RTSCTS_FRAME_EFLAGS:
      return "EFLAGS";
    case RTSCTS_FRAME_ELENGTH:
      return "ELENGTH";
    case RTSCTS_FRAME_ERESERVED:
      return "ERESERVED";
    case RTSCTS_FRAME_EAUTH:
      return "EAUTH";
    case RTSCTS_FRAME_EFIELD:
      return "EFIELD";
    case RTSCTS_FRAME_ENID:
      return "ENID";
    default:
      return "E?";
  }
}

std::string_view PtlErrName(int err) {
  switch (err) {
    case PTL_WIRE_OK:
      return "OK";
    case PTL_WIRE_ESHORT:
      return "ESHORT";
    case PTL_WIRE_EMAGIC:
      return "EMAGIC";
    case PTL_WIRE_EVERSION:
      return "EVERSION";
    case PTL_WIRE_ETYPE:
      return "ETYPE";
    case PTL_WIRE_ERESERVED:
      return "ERESERVED";
    case PTL_WIRE_ELENGTH:
      return "ELENGTH";
    case PTL_WIRE_EFIELD:
      return "EFIELD";
    default:
      return "E?";
  }
}

std::string_view TypeName(uint8_t type) {
  switch (type) {
    case RTSCTS_MSG:
      return "MSG";
    case RTSCTS_RTS:
      return "RTS";
    case RTSCTS_CTS:
      return "CTS";
    case RTSCTS_DATA:
      return "DATA";
    case RTSCTS_ACK:
      return "ACK";
    case RTSCTS_RESET:
      return "RESET";
    case RTSCTS_CHALLENGE:
      return "CHALLENGE";
    case RTSCTS_CHALLENGE_ACK:
      return "CHALLENGE_ACK";
    default:
      return "?";
  }
}

void Put16(Bytes& b, size_t at, uint16_t v) {
  if (at + 2 > b.size()) throw std::out_of_range("Put16 past the end of a frame");
  b[at] = uint8_t(v);
  b[at + 1] = uint8_t(v >> 8);
}

void Put32(Bytes& b, size_t at, uint32_t v) {
  Put16(b, at, uint16_t(v));
  Put16(b, at + 2, uint16_t(v >> 16));
}

void Put64(Bytes& b, size_t at, uint64_t v) {
  Put32(b, at, uint32_t(v));
  Put32(b, at + 4, uint32_t(v >> 32));
}

}  // namespace rtscts
