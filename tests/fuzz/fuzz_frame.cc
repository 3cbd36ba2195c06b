// libFuzzer target for the RTS/CTS frame codec (rtscts/rtscts_frame.c):
// arbitrary bytes are decoded with an arbitrary readable length (avail) and
// wire length, and every frame the decoder accepts must keep the promises
// of rtscts/rtscts_frame.h. A broken promise, a crash or a sanitizer
// report fails the run.
//
// Input: byte 0 chooses the mode and the readable length, bytes 1-2 (LE)
// the wire length, the rest is the frame.
//   byte 0 < 128        decode: all frame bytes readable
//   128 <= byte 0 < 192 encode: the rest is parsed as a struct
//                       rtscts_frame, encoded and decoded again; the
//                       decoder must accept it exactly when it keeps the
//                       rules, and give back every field it carries
//   byte 0 >= 192       decode with the last (byte 0 - 192) bytes unreadable
//   wire length = avail + (bytes 1-2), or avail - 1 when they are 0xffff.
//
// What an accepted frame must satisfy (rtscts_frame.h):
//  * version RTSCTS_VERSION (5); riders_off == rtscts_hdr_len(type) != 0;
//    at most RTSCTS_MAX_RIDERS riders, on reliable types only;
//    hdr_len == riders_off + 96 x riders <= avail;
//    hdr_len + payload_len == frame_len <= wire_len;
//    hdr_len <= csum_len <= frame_len; no unknown flag;
//  * nids neither 0 nor the wildcard, src_inc != 0; reliable types on a
//    nonzero stream; ACK, RESET, CHALLENGE and CHALLENGE_ACK without seq,
//    SYN or stream; a RESET names a nonzero stream; a CHALLENGE or
//    CHALLENGE_ACK carries a nonzero nonce; no ack, sack or grant without
//    ack_stream;
//  * RTS, CTS, ACK, RESET, CHALLENGE and CHALLENGE_ACK carry no payload; DATA some, at an offset
//    below 2^48; a CTS's status is known, its length <= 2^48, 0 if DROP;
//  * a large frame (MSG or DATA, segs != 0) has 2 to RTSCTS_MAX_SEGS segs
//    of seg_size != 0, its payload more than (segs - 1) x seg_size and at
//    most segs x seg_size, no riders, tag or pcsum; a MSG or DATA without
//    segs has seg_size 0;
//  * reserved fields are 0 (bytes 61-63 in every type, the u32 after
//    msg_id of RTS or a RESET's stream, byte 71 of MSG and DATA) and every field decodes from its
//    documented offset (grant at 56, type headers from 64); fields of
//    other types stay 0;
//  * encoding the decoded struct gives back the same header bytes (crc 0,
//    the Portals header left alone), which decode to the same struct;
//  * rtscts_frame_crc() is CRC32C over [0, csum_len) with the crc and
//    pcsum fields as 0 (checked against a bit-at-a-time CRC), and so is
//    rtscts_frame_crc_unsealed() once both fields hold 0;
//  * the Portals header of MSG and RTS, if ptl_hdr_decode() accepts it,
//    encodes back to the same 96 bytes.
extern "C" {
#include "ptl_wire.h"
#include "rtscts_frame.h"
}

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "ptl_tool/crc32c.h"

namespace {

[[noreturn]] void Fail(const char* what, const rtscts_frame& f) {
  std::fprintf(stderr,
               "fuzz_frame: broken promise: %s\n"
               "  type %u flags %#x frame_len %u csum_len %u hdr_len %u payload_len %u\n"
               "  src %#x/%#x dst %#x/%#x stream %#x seq %#x ack_stream %#x ack %#x sack %#llx\n"
               "  grant %#x\n"
               "  msg_id %#x status %u length %#llx offset %#llx reset_stream %#x nonce %#llx\n",
               what, f.type, f.flags, f.frame_len, f.csum_len, f.hdr_len, f.payload_len, f.src_nid,
               f.src_inc, f.dst_nid, f.dst_inc, f.stream, f.seq, f.ack_stream, f.ack,
               (unsigned long long)f.sack, f.grant, f.msg_id, f.status,
               (unsigned long long)f.length, (unsigned long long)f.offset, f.reset_stream,
               (unsigned long long)f.nonce);
  std::abort();
}

#define PROMISE(cond, f)           \
  do {                             \
    if (!(cond)) Fail(#cond, (f)); \
  } while (0)

uint64_t Le(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; i++) v |= uint64_t(p[i]) << (8 * i);
  return v;
}

bool HasPtlHdr(uint8_t t) { return t == RTSCTS_MSG || t == RTSCTS_RTS; }

// The rules of segs and seg_size (MSG and DATA): a large frame's, or
// none for a single frame. nullptr if kept.
const char* LargeFrameBreaks(const rtscts_frame& f, size_t payload, bool tagged) {
  if (!f.segs) return f.seg_size ? "seg_size without segs" : nullptr;
  if (f.segs < 2 || f.segs > RTSCTS_MAX_SEGS || !f.seg_size) return "segs or seg_size out of range";
  if (f.riders || tagged || f.pcsum) return "a large frame with riders, tag or pcsum";
  if (payload <= size_t(f.segs - 1) * f.seg_size || payload > size_t(f.segs) * f.seg_size)
    return "a large frame's payload not in its last segment";
  return nullptr;
}

// The first rule of rtscts_frame.h that a struct breaks, or nullptr. The
// struct-level rules only: lengths against wire_len, fields per type.
const char* BrokenRule(const rtscts_frame& f, size_t wire_len) {
  size_t hdr = rtscts_hdr_len(f.type) + size_t(f.riders) * RTSCTS_RIDER_LEN;
  bool reliable = rtscts_type_reliable(f.type);
  if (!rtscts_hdr_len(f.type)) return "unknown type";
  if (f.flags & ~RTSCTS_F_ALL) return "unknown flags";
  if (f.riders > RTSCTS_MAX_RIDERS) return "too many riders";
  if (f.frame_len < hdr || f.frame_len > wire_len) return "frame_len out of range";
  bool tagged = f.flags & RTSCTS_F_AUTH;
  if (tagged && size_t(f.frame_len) + RTSCTS_AUTH_TAG_LEN > wire_len) return "no room for the tag";
  if (f.csum_len < hdr || f.csum_len > f.frame_len) return "csum_len out of range";
  if (!f.src_nid || f.src_nid == 0xffffffffu || !f.dst_nid || f.dst_nid == 0xffffffffu)
    return "zero or wildcard nid";
  if (!f.src_inc) return "zero src_inc";
  if (reliable && !f.stream) return "reliable frame on stream 0";
  if (!reliable && (f.seq || (f.flags & RTSCTS_F_SYN))) return "seq or SYN on ACK/RESET";
  if (!reliable && f.stream) return "stream on an unsequenced type";
  if (f.type == RTSCTS_RESET && !f.reset_stream) return "RESET of stream 0";
  if ((f.type == RTSCTS_CHALLENGE || f.type == RTSCTS_CHALLENGE_ACK) && !f.nonce)
    return "CHALLENGE without a nonce";
  if (!f.ack_stream && (f.ack || f.sack || f.grant)) return "ack, sack or grant without ack_stream";
  if (f.riders && !reliable) return "riders on an unsequenced type";
  size_t payload = f.frame_len - hdr;
  if (f.csum_len == f.frame_len && f.pcsum) return "pcsum with nothing to cover";
  if (tagged && (f.crc || f.pcsum)) return "a checksum in a tagged frame";
  switch (f.type) {
    case RTSCTS_RTS:
    case RTSCTS_CTS:
    case RTSCTS_ACK:
    case RTSCTS_RESET:
    case RTSCTS_CHALLENGE:
    case RTSCTS_CHALLENGE_ACK:
      if (payload) return "payload in a type without one";
      break;
    case RTSCTS_DATA:
      if (!payload) return "DATA without payload";
      if (f.offset > RTSCTS_MAX_OFFSET - payload) return "DATA reaches past 2^48";
      return LargeFrameBreaks(f, payload, tagged);
    case RTSCTS_MSG:
      return LargeFrameBreaks(f, payload, tagged);
  }
  if (f.type == RTSCTS_CTS) {
    if (f.status > RTSCTS_CTS_DROP) return "unknown CTS status";
    if (f.length > RTSCTS_MAX_OFFSET) return "CTS length > 2^48";
    if (f.status == RTSCTS_CTS_DROP && f.length) return "CTS DROP with a length";
  }
  return nullptr;
}

// The fields a frame of f.type carries, everything else zeroed (and crc,
// which encode does not write).
rtscts_frame Carried(rtscts_frame f) {
  f.crc = 0;
  f.riders_off = rtscts_hdr_len(f.type);
  f.hdr_len = uint16_t(f.riders_off + f.riders * RTSCTS_RIDER_LEN);
  f.payload_len = uint16_t(f.frame_len - f.hdr_len);
  f.tag_len = (f.flags & RTSCTS_F_AUTH) ? RTSCTS_AUTH_TAG_LEN : 0;
  uint8_t t = f.type;
  if (t != RTSCTS_MSG && t != RTSCTS_RTS && t != RTSCTS_CTS && t != RTSCTS_DATA) f.msg_id = 0;
  if (t != RTSCTS_CTS) f.status = 0, f.length = 0;
  if (t != RTSCTS_DATA) f.offset = 0;
  if (t != RTSCTS_MSG && t != RTSCTS_DATA) f.segs = 0, f.seg_size = 0;
  if (t != RTSCTS_RESET) f.reset_stream = 0;
  if (t != RTSCTS_CHALLENGE && t != RTSCTS_CHALLENGE_ACK) f.nonce = 0;
  return f;
}

bool SameFields(const rtscts_frame& a, const rtscts_frame& b) {
  return a.type == b.type && a.flags == b.flags && a.frame_len == b.frame_len &&
         a.csum_len == b.csum_len && a.crc == b.crc && a.src_nid == b.src_nid &&
         a.dst_nid == b.dst_nid && a.src_inc == b.src_inc && a.dst_inc == b.dst_inc &&
         a.stream == b.stream && a.seq == b.seq && a.ack_stream == b.ack_stream && a.ack == b.ack &&
         a.window == b.window && a.pcsum == b.pcsum && a.sack == b.sack && a.grant == b.grant &&
         a.msg_id == b.msg_id && a.status == b.status && a.length == b.length &&
         a.offset == b.offset && a.segs == b.segs && a.seg_size == b.seg_size &&
         a.reset_stream == b.reset_stream && a.nonce == b.nonce && a.hdr_len == b.hdr_len &&
         a.payload_len == b.payload_len && a.tag_len == b.tag_len && a.riders == b.riders &&
         a.riders_off == b.riders_off;
}

uint32_t BitwiseCrc(const uint8_t* p, size_t n) {
  uint32_t c = ~0u;
  for (size_t i = 0; i < n; i++) {
    bool zero = (i >= 8 && i < 12) || i == RTSCTS_PCSUM_OFF || i == RTSCTS_PCSUM_OFF + 1;
    c ^= zero ? 0 : p[i];
    for (int k = 0; k < 8; k++) c = (c >> 1) ^ ((c & 1) ? 0x82F63B78u : 0);
  }
  return ~c;
}

void CheckPtlHeader(const uint8_t* p, const rtscts_frame& f) {
  ptl_hdr h;
  PROMISE(ptl_hdr_decode(p, PTL_WIRE_HDR_LEN - 1, &h) == PTL_WIRE_ESHORT, f);
  if (ptl_hdr_decode(p, PTL_WIRE_HDR_LEN, &h) != PTL_WIRE_OK) return;
  PROMISE(h.type >= PTL_MSG_PUT && h.type <= PTL_MSG_GETPUT, f);
  PROMISE(h.rlength <= PTL_WIRE_MAX_LENGTH && h.mlength <= PTL_WIRE_MAX_LENGTH, f);
  PROMISE(h.offset <= PTL_WIRE_MAX_LENGTH && h.rtn_offset <= PTL_WIRE_MAX_LENGTH, f);
  PROMISE(h.payload_length == ptl_hdr_payload_length(&h), f);
  uint8_t again[PTL_WIRE_HDR_LEN];
  ptl_hdr_encode(&h, again);
  PROMISE(std::memcmp(again, p, PTL_WIRE_HDR_LEN) == 0, f);
}

// Everything promised about a frame that rtscts_frame_decode() accepted.
void CheckAccepted(const uint8_t* buf, size_t avail, size_t wire_len, const rtscts_frame& f) {
  PROMISE(buf[0] == RTSCTS_VERSION, f);
  PROMISE(f.riders_off && f.riders_off == rtscts_hdr_len(f.type), f);
  PROMISE(f.riders <= RTSCTS_MAX_RIDERS && (!f.riders || rtscts_type_reliable(f.type)), f);
  PROMISE(f.hdr_len == f.riders_off + f.riders * RTSCTS_RIDER_LEN, f);
  PROMISE(rtscts_frame_hdr_len(buf) == f.hdr_len, f);
  PROMISE(f.hdr_len <= avail, f);
  PROMISE(size_t(f.hdr_len) + f.payload_len == f.frame_len, f);
  PROMISE(f.tag_len == ((f.flags & RTSCTS_F_AUTH) ? RTSCTS_AUTH_TAG_LEN : 0), f);
  PROMISE(size_t(f.frame_len) + f.tag_len <= wire_len, f);
  PROMISE(f.hdr_len <= f.csum_len && f.csum_len <= f.frame_len, f);
  PROMISE(!(f.flags & ~RTSCTS_F_ALL), f);
  PROMISE(!BrokenRule(f, wire_len), f);

  // Every field from its documented offset; reserved fields 0.
  PROMISE(f.type == buf[1] && f.flags == Le(buf + 2, 2) && f.frame_len == Le(buf + 4, 2), f);
  PROMISE(f.csum_len == Le(buf + 6, 2) && f.crc == Le(buf + 8, 4), f);
  PROMISE(f.src_nid == Le(buf + 12, 4) && f.dst_nid == Le(buf + 16, 4), f);
  PROMISE(f.src_inc == Le(buf + 20, 4) && f.dst_inc == Le(buf + 24, 4), f);
  PROMISE(f.stream == Le(buf + 28, 4) && f.seq == Le(buf + 32, 4), f);
  PROMISE(f.ack_stream == Le(buf + 36, 4) && f.ack == Le(buf + 40, 4), f);
  PROMISE(f.window == Le(buf + 44, 2) && f.pcsum == Le(buf + 46, 2) && f.sack == Le(buf + 48, 8),
          f);
  PROMISE(f.grant == Le(buf + 56, 4) && f.riders == buf[60] && Le(buf + 61, 3) == 0, f);
  PROMISE(f.ack_stream || (!f.ack && !f.sack && !f.grant), f);
  switch (f.type) {
    case RTSCTS_RTS:
      PROMISE(f.msg_id == Le(buf + 64, 4) && Le(buf + 68, 4) == 0, f);
      break;
    case RTSCTS_CTS:
      PROMISE(f.msg_id == Le(buf + 64, 4) && f.status == Le(buf + 68, 4), f);
      PROMISE(f.length == Le(buf + 72, 8), f);
      break;
    case RTSCTS_MSG:
    case RTSCTS_DATA:
      PROMISE(f.msg_id == Le(buf + 64, 4) && f.seg_size == Le(buf + 68, 2), f);
      PROMISE(f.segs == buf[70] && buf[71] == 0, f);
      if (f.type == RTSCTS_DATA) PROMISE(f.offset == Le(buf + 72, 8), f);
      break;
    case RTSCTS_RESET:
      PROMISE(f.reset_stream == Le(buf + 64, 4) && Le(buf + 68, 4) == 0, f);
      break;
    case RTSCTS_CHALLENGE:
    case RTSCTS_CHALLENGE_ACK:
      PROMISE(f.nonce == Le(buf + 64, 8), f);
      break;
  }
  rtscts_frame carried = Carried(f);
  carried.crc = f.crc;
  PROMISE(SameFields(carried, f), f);  // fields of other types stay 0

  // Encoding the decoded struct gives back the header bytes, into a buffer
  // of exactly hdr_len bytes (ASan sees a write past it).
  std::unique_ptr<uint8_t[]> re(new uint8_t[f.hdr_len]);
  std::memset(re.get(), 0x5a, f.hdr_len);
  rtscts_frame_encode(&f, re.get());
  for (size_t i = 0; i < f.hdr_len; i++) {
    bool ptl = HasPtlHdr(f.type) && i >= RTSCTS_PTL_HDR_OFF && i < f.riders_off;
    if (ptl || i >= f.riders_off)
      PROMISE(re[i] == 0x5a, f);  // the Portals headers are the caller's
    else if (i >= 8 && i < 12)
      PROMISE(re[i] == 0, f);
    else
      PROMISE(re[i] == buf[i], f);
  }
  if (HasPtlHdr(f.type))
    std::memcpy(re.get() + RTSCTS_PTL_HDR_OFF, buf + RTSCTS_PTL_HDR_OFF, PTL_WIRE_HDR_LEN);
  std::memcpy(re.get() + f.riders_off, buf + f.riders_off, f.hdr_len - f.riders_off);
  rtscts_frame g;
  PROMISE(rtscts_frame_decode(re.get(), f.hdr_len, size_t(f.frame_len) + f.tag_len, &g) ==
              RTSCTS_FRAME_OK,
          f);
  rtscts_frame want = f;
  want.crc = 0;
  PROMISE(SameFields(g, want), f);

  // The checksum, where the covered bytes are readable.
  if (f.csum_len <= avail) {
    uint32_t crc = rtscts_frame_crc(buf, f.csum_len, ptl::tool::Crc32cUpdate);
    PROMISE(crc == BitwiseCrc(buf, f.csum_len), f);
    std::vector<uint8_t> copy(buf, buf + f.csum_len);
    rtscts_frame_set_crc(copy.data(), crc ^ 0x01020304u);
    PROMISE(Le(copy.data() + 8, 4) == (crc ^ 0x01020304u), f);
    PROMISE(rtscts_frame_crc(copy.data(), f.csum_len, ptl::tool::Crc32cUpdate) == crc, f);
    // The sender's one pass, over the same bytes with crc and pcsum 0.
    rtscts_frame_set_crc(copy.data(), 0);
    copy[RTSCTS_PCSUM_OFF] = copy[RTSCTS_PCSUM_OFF + 1] = 0;
    PROMISE(rtscts_frame_crc_unsealed(copy.data(), f.csum_len, ptl::tool::Crc32cUpdate) == crc, f);
  }

  if (HasPtlHdr(f.type)) CheckPtlHeader(buf + RTSCTS_PTL_HDR_OFF, f);
}

void DecodeMode(const uint8_t* frame, size_t n, uint8_t cut, uint16_t pad) {
  size_t avail = n;
  if (cut >= 192) avail = n - std::min<size_t>(n, cut - 192);
  size_t wire_len = pad == 0xffff ? (avail ? avail - 1 : 0) : avail + pad;
  // Exactly `avail` readable bytes: ASan catches any read past them.
  std::unique_ptr<uint8_t[]> buf(new uint8_t[avail ? avail : 1]);
  if (avail) std::memcpy(buf.get(), frame, avail);
  rtscts_frame f;
  int rc = rtscts_frame_decode(buf.get(), avail, wire_len, &f);
  PROMISE(rc <= RTSCTS_FRAME_OK && rc >= RTSCTS_FRAME_ENID, f);
  if (rc == RTSCTS_FRAME_OK) CheckAccepted(buf.get(), avail, wire_len, f);
}

class Reader {
 public:
  Reader(const uint8_t* p, size_t n) : p_(p), n_(n) {}
  // The next `bytes` bytes as a little-endian integer (0 past the end).
  uint64_t Int(int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes && n_; i++, p_++, n_--) v |= uint64_t(*p_) << (8 * i);
    return v;
  }
  const uint8_t* Rest(size_t* n) {
    *n = n_;
    return p_;
  }

 private:
  const uint8_t* p_;
  size_t n_;
};

// A struct from the input, encoded, decoded: accepted exactly when it
// keeps the rules, and then with every field it carries.
void EncodeMode(const uint8_t* data, size_t n) {
  Reader in(data, n);
  rtscts_frame s{};
  s.type = uint8_t(1 + in.Int(1) % RTSCTS_CHALLENGE_ACK);
  s.flags = uint16_t(in.Int(2));
  s.src_nid = uint32_t(in.Int(4));
  s.dst_nid = uint32_t(in.Int(4));
  s.src_inc = uint32_t(in.Int(4));
  s.dst_inc = uint32_t(in.Int(4));
  s.stream = uint32_t(in.Int(4));
  s.seq = uint32_t(in.Int(4));
  s.ack_stream = uint32_t(in.Int(4));
  s.ack = uint32_t(in.Int(4));
  s.window = uint16_t(in.Int(2));
  s.sack = in.Int(8);
  s.grant = uint32_t(in.Int(4));
  s.msg_id = uint32_t(in.Int(4));
  s.status = uint32_t(in.Int(4));
  s.length = in.Int(8);
  s.offset = in.Int(8);
  // Large frames: mostly none, now and then sizes that may describe it.
  s.segs = uint8_t(in.Int(1) % (RTSCTS_MAX_SEGS + 8));
  s.seg_size = s.segs || in.Int(1) < 8 ? uint16_t(in.Int(2)) : 0;
  s.reset_stream = uint32_t(in.Int(4));
  s.nonce = in.Int(8);
  // Now and then one too many.
  s.riders = uint8_t(in.Int(1) % (RTSCTS_MAX_RIDERS + 2));
  uint16_t hdr = uint16_t(rtscts_hdr_len(s.type) +
                          (s.riders <= RTSCTS_MAX_RIDERS ? s.riders * RTSCTS_RIDER_LEN : 0));
  size_t payload = in.Int(2) % (RTSCTS_MAX_FRAME - hdr + 1);
  s.frame_len = uint16_t(hdr + payload);
  s.csum_len = uint16_t(hdr + in.Int(2) % (payload + 1));
  size_t wire_len = s.frame_len + in.Int(1);
  // Values outside the ranges above are the decode mode's business.

  // Exactly hdr bytes (ASan sees a write past them); for MSG and RTS the
  // Portals header comes from the input and must be left alone, and so
  // must the riders.
  std::unique_ptr<uint8_t[]> buf(new uint8_t[hdr]);
  std::memset(buf.get(), 0xa5, hdr);
  uint8_t* ptl = buf.get() + RTSCTS_PTL_HDR_OFF;
  uint8_t ptl_in[PTL_WIRE_HDR_LEN] = {};
  if (HasPtlHdr(s.type)) {
    size_t rest_n;
    const uint8_t* rest = in.Rest(&rest_n);
    std::memcpy(ptl_in, rest, std::min<size_t>(rest_n, PTL_WIRE_HDR_LEN));
    std::memcpy(ptl, ptl_in, PTL_WIRE_HDR_LEN);
  }
  rtscts_frame_encode(&s, buf.get());
  if (HasPtlHdr(s.type)) PROMISE(std::memcmp(ptl, ptl_in, PTL_WIRE_HDR_LEN) == 0, s);
  for (size_t i = rtscts_hdr_len(s.type); i < hdr; i++) PROMISE(buf[i] == 0xa5, s);
  PROMISE(Le(buf.get() + 8, 4) == 0, s);

  rtscts_frame d;
  int rc = rtscts_frame_decode(buf.get(), hdr, wire_len, &d);
  const char* broken = BrokenRule(s, wire_len);
  if (broken) {
    if (rc == RTSCTS_FRAME_OK) Fail(broken, s);  // accepted a broken struct
    return;
  }
  if (rc != RTSCTS_FRAME_OK) Fail("a struct that keeps every rule was refused", s);
  PROMISE(SameFields(d, Carried(s)), s);
  CheckAccepted(buf.get(), hdr, wire_len, d);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  uint8_t mode = size > 0 ? data[0] : 0;
  uint16_t pad = uint16_t(size > 2 ? data[1] | data[2] << 8 : 0);
  const uint8_t* frame = data + std::min<size_t>(size, 3);
  size_t n = size - std::min<size_t>(size, 3);
  if (mode >= 128 && mode < 192)
    EncodeMode(frame, n);
  else
    DecodeMode(frame, n, mode, pad);
  return 0;
}
