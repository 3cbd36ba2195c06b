// SPDX-License-Identifier: BSD-3-Clause
#include "hostile.h"

#include <algorithm>
#include <functional>
#include <tuple>
#include <utility>

namespace ptl_inject {

namespace {

using rtscts::Put16;
using rtscts::Put32;
using rtscts::Put64;
namespace off = rtscts::off;

constexpr uint64_t kMaxOffset = RTSCTS_MAX_OFFSET;

class Catalogue {
 public:
  explicit Catalogue(const HostileParams& p) : p_(p), rng_(p.seed) {}

  std::vector<HostileFrame> Build();

 private:
  rtscts::Node Src() const { return {p_.src_nid, p_.src_inc, p_.stream}; }

  // A valid header of `type` on our stream at the next sequence number.
  rtscts_frame Header(uint8_t type) const {
    rtscts_frame f = rtscts::Header(type, Src(), p_.dst_nid);
    f.dst_inc = p_.dst_inc;
    if (rtscts_type_reliable(type)) {
      f.seq = seq_;
      if (seq_ == 0) f.flags |= RTSCTS_F_SYN;
    }
    return f;
  }

  // A valid Portals PUT of `length` bytes from the fake node.
  ptl_hdr Put(uint64_t length) const {
    return rtscts::PutHeader({p_.src_nid, 1}, {p_.dst_nid, p_.dst_pid}, p_.portal, 0, length);
  }

  // A valid frame of `type` (MSG: a PUT of 16 bytes; DATA: 16 bytes at 0).
  Bytes Valid(uint8_t type, const std::function<void(rtscts_frame&)>& change = {}) const {
    rtscts_frame f = Header(type);
    if (change) change(f);
    Bytes ptl, payload;
    if (type == RTSCTS_MSG || type == RTSCTS_RTS) ptl = rtscts::EncodePtl(Put(16));
    if (type == RTSCTS_MSG || type == RTSCTS_DATA) payload = rtscts::Pattern(16);
    if (type == RTSCTS_RTS) ptl = rtscts::EncodePtl(Put(1 << 20));
    return rtscts::Build(f, ptl, payload);
  }

  void Add(std::string kind, std::string name, std::string why, Bytes frame, int expect,
           Flaw flaw = Flaw::kNone, int ptl_expect = 0) {
    std::string full = kind + "/" + name;
    out_.push_back({std::move(kind), std::move(full), std::move(why), std::move(frame), expect,
                    flaw, ptl_expect});
    // Frames the receiver's reliability layer sees take a sequence number.
    if (expect == RTSCTS_FRAME_OK && flaw != Flaw::kBadCrc && flaw != Flaw::kWrongNode &&
        flaw != Flaw::kStaleIncarnation && flaw != Flaw::kOutOfWindow) {
      rtscts_frame f;
      if (rtscts::Decode(out_.back().frame, &f) == RTSCTS_FRAME_OK && rtscts_type_reliable(f.type))
        seq_++;
    }
  }

  // A spoiled copy of a valid frame, sealed again.
  Bytes Patched(uint8_t type, const std::function<void(Bytes&)>& patch) const {
    Bytes b = Valid(type);
    patch(b);
    rtscts::Seal(b);
    return b;
  }

  // A MSG carrying the Portals header `h`, `payload` bytes of eager data.
  Bytes MsgWith(const ptl_hdr& h, size_t payload) const {
    return rtscts::Build(Header(RTSCTS_MSG), rtscts::EncodePtl(h), rtscts::Pattern(payload));
  }
  // ... or raw Portals header bytes.
  Bytes MsgWithBytes(const Bytes& ptl, uint8_t type = RTSCTS_MSG) const {
    return rtscts::Build(Header(type), ptl, type == RTSCTS_MSG ? rtscts::Pattern(16) : Bytes{});
  }

  void AddTruncated();
  void AddHeaderErrors();
  void AddLengths();
  void AddChecksums();
  void AddReserved();
  void AddNids();
  void AddFields();
  void AddPortalsHeaders();
  void AddProtocol();
  void AddRiders();
  void AddLargeFrames();
  void AddRandom();

  const HostileParams& p_;
  uint64_t rng_;
  uint32_t seq_ = 0;
  std::vector<HostileFrame> out_;
};

constexpr uint8_t kTypes[] = {RTSCTS_MSG,  RTSCTS_RTS, RTSCTS_CTS,
                              RTSCTS_DATA, RTSCTS_ACK, RTSCTS_RESET};

std::string Lower(std::string_view s) {
  std::string r(s);
  for (auto& c : r) c = char(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return r;
}

void Catalogue::AddTruncated() {
  // Shorter than the common header: nothing can be read.
  Bytes ack = Valid(RTSCTS_ACK);
  for (size_t n : {0, 1, 8, 12, 63})
    Add("truncated", "bytes-" + std::to_string(n),
        std::to_string(n) + " bytes: shorter than the " + std::to_string(RTSCTS_HDR_LEN) +
            "-byte common header",
        Bytes(ack.begin(), ack.begin() + n), RTSCTS_FRAME_ESHORT);
  // Each type one byte short of its headers, frame_len as sent.
  for (uint8_t t : kTypes) {
    Bytes b = Valid(t);
    size_t n = rtscts_hdr_len(t) - 1;
    b.resize(n);
    Add("truncated", Lower(rtscts::TypeName(t)) + "-" + std::to_string(n),
        std::string(rtscts::TypeName(t)) + " cut one byte short of its headers", b,
        n < RTSCTS_HDR_LEN ? RTSCTS_FRAME_ESHORT : RTSCTS_FRAME_ELENGTH);
  }
}

void Catalogue::AddHeaderErrors() {
  // RTSCTS_VERSION - 1: the format before this one (version 4: no large
  // frames, DATA's second word all reserved).
  for (int v : {0, RTSCTS_VERSION - 1, RTSCTS_VERSION + 1, 0xff})
    Add("bad_version", "version-" + std::to_string(v),
        "version byte not " + std::to_string(RTSCTS_VERSION),
        Patched(RTSCTS_MSG, [v](Bytes& b) { b[off::kVersion] = uint8_t(v); }),
        RTSCTS_FRAME_EVERSION);
  for (int t : {0, 9, 0xff})
    Add("unknown_type", "type-" + std::to_string(t), "type outside MSG..CHALLENGE_ACK",
        Patched(RTSCTS_MSG, [t](Bytes& b) { b[off::kType] = uint8_t(t); }), RTSCTS_FRAME_ETYPE);
  for (uint16_t fl : {0x0008, 0x8000, 0xffff})
    Add("unknown_flags", "flags-" + std::to_string(fl), "flag bits beyond ACK_REQ|SYN|AUTH",
        Valid(RTSCTS_MSG, [fl](rtscts_frame& f) { f.flags = fl; }), RTSCTS_FRAME_EFLAGS);
}

void Catalogue::AddLengths() {
  Add("frame_len_long", "plus-one", "frame_len one more than the bytes on the wire",
      Patched(RTSCTS_MSG, [](Bytes& b) { Put16(b, off::kFrameLen, uint16_t(b.size() + 1)); }),
      RTSCTS_FRAME_ELENGTH);
  Add("frame_len_long", "max", "frame_len 65535 in a short frame",
      Patched(RTSCTS_DATA, [](Bytes& b) { Put16(b, off::kFrameLen, 0xffff); }),
      RTSCTS_FRAME_ELENGTH);
  for (uint8_t t : {RTSCTS_MSG, RTSCTS_CTS, RTSCTS_ACK}) {
    uint16_t hdr = rtscts_hdr_len(t);
    Add("frame_len_short", Lower(rtscts::TypeName(t)),
        "frame_len smaller than the headers of the type",
        Patched(t,
                [hdr](Bytes& b) {
                  Put16(b, off::kFrameLen, hdr - 1);
                  Put16(b, off::kCsumLen, hdr - 1);
                }),
        RTSCTS_FRAME_ELENGTH);
  }
  Add("frame_len_short", "zero", "frame_len 0",
      Patched(RTSCTS_DATA, [](Bytes& b) { Put16(b, off::kFrameLen, 0); }), RTSCTS_FRAME_ELENGTH);
  Add("csum_len_range", "below-headers", "csum_len one short of the headers",
      Patched(RTSCTS_MSG, [](Bytes& b) { Put16(b, off::kCsumLen, RTSCTS_MSG_HDR_LEN - 1); }),
      RTSCTS_FRAME_ELENGTH);
  Add("csum_len_range", "zero", "csum_len 0",
      Patched(RTSCTS_ACK, [](Bytes& b) { Put16(b, off::kCsumLen, 0); }), RTSCTS_FRAME_ELENGTH);
  Add(
      "csum_len_range", "past-frame", "csum_len beyond frame_len (into the padding)",
      [&] {
        Bytes b = Valid(RTSCTS_DATA);
        size_t len = b.size();
        b.resize(len + 8, 0);  // padding on the wire
        Put16(b, off::kCsumLen, uint16_t(len + 8));
        rtscts::Seal(b);
        return b;
      }(),
      RTSCTS_FRAME_ELENGTH);
  Add("csum_len_range", "max", "csum_len 65535",
      Patched(RTSCTS_ACK, [](Bytes& b) { Put16(b, off::kCsumLen, 0xffff); }), RTSCTS_FRAME_ELENGTH);
}

void Catalogue::AddChecksums() {
  Bytes b = Valid(RTSCTS_MSG);
  b[off::kCrc] ^= 0x01;
  Add("bad_crc", "msg-crc-field", "a valid MSG with one bit of its crc flipped", b, RTSCTS_FRAME_OK,
      Flaw::kBadCrc);
  b = Valid(RTSCTS_DATA);
  b.back() ^= 0x80;  // covered: csum_len is the whole frame
  Add("bad_crc", "data-payload", "a DATA frame whose last payload byte changed after sealing", b,
      RTSCTS_FRAME_OK, Flaw::kBadCrc);
  b = Valid(RTSCTS_ACK);
  Put32(b, off::kCrc, 0);
  Add("bad_crc", "ack-zero", "an ACK with crc 0", b, RTSCTS_FRAME_OK, Flaw::kBadCrc);
  b = Valid(RTSCTS_RESET);
  b[off::kSrcNid] ^= 0x01;  // the sender's nid changed after sealing
  Add("bad_crc", "reset-src-nid", "a RESET whose src_nid changed after sealing", b, RTSCTS_FRAME_OK,
      Flaw::kBadCrc);
}

void Catalogue::AddReserved() {
  for (uint8_t t : kTypes)
    Add("reserved", "common-" + Lower(rtscts::TypeName(t)),
        "a reserved byte (61-63) of the common header set",
        Patched(t, [](Bytes& b) { b[off::kReserved] = 0x01; }), RTSCTS_FRAME_ERESERVED);
  Add("reserved", "pcsum", "pcsum (offset 46) set in an ACK the crc covers whole",
      Patched(RTSCTS_ACK, [](Bytes& b) { Put16(b, off::kPcsum, 1); }), RTSCTS_FRAME_ERESERVED);
  for (uint8_t t : {RTSCTS_MSG, RTSCTS_RTS, RTSCTS_DATA, RTSCTS_RESET})
    Add("reserved", Lower(rtscts::TypeName(t)) + "-word", "the reserved u32 of the type header set",
        Patched(t, [](Bytes& b) { Put32(b, off::kWord, 0x80000000u); }), RTSCTS_FRAME_ERESERVED);
}

void Catalogue::AddNids() {
  const std::pair<const char*, std::function<void(rtscts_frame&)>> cases[] = {
      {"src-zero", [](rtscts_frame& f) { f.src_nid = 0; }},
      {"src-any", [](rtscts_frame& f) { f.src_nid = 0xffffffff; }},
      {"dst-zero", [](rtscts_frame& f) { f.dst_nid = 0; }},
      {"dst-any", [](rtscts_frame& f) { f.dst_nid = 0xffffffff; }},
      {"src-inc-zero", [](rtscts_frame& f) { f.src_inc = 0; }},
  };
  for (const auto& [name, change] : cases)
    Add("bad_nid", name, "a zero or wildcard nid, or incarnation 0", Valid(RTSCTS_MSG, change),
        RTSCTS_FRAME_ENID);
}

void Catalogue::AddFields() {
  // Payload in types that carry none.
  for (uint8_t t : {RTSCTS_RTS, RTSCTS_CTS, RTSCTS_ACK, RTSCTS_RESET}) {
    Bytes ptl = t == RTSCTS_RTS ? rtscts::EncodePtl(Put(1 << 20)) : Bytes{};
    Add("payload_where_none", Lower(rtscts::TypeName(t)),
        std::string(rtscts::TypeName(t)) + " with 32 bytes of payload",
        rtscts::Build(Header(t), ptl, rtscts::Pattern(32)), RTSCTS_FRAME_ELENGTH);
  }
  Add("data_offset", "2^48", "DATA at offset 2^48",
      Valid(RTSCTS_DATA, [](rtscts_frame& f) { f.offset = kMaxOffset; }), RTSCTS_FRAME_EFIELD);
  Add("data_offset", "max", "DATA at offset 2^64-1",
      Valid(RTSCTS_DATA, [](rtscts_frame& f) { f.offset = ~0ULL; }), RTSCTS_FRAME_EFIELD);
  Add("data_offset", "span-2^48", "DATA at 2^48-1 carrying 16 bytes: reaches past 2^48",
      Valid(RTSCTS_DATA, [](rtscts_frame& f) { f.offset = kMaxOffset - 1; }), RTSCTS_FRAME_EFIELD);

  const std::tuple<const char*, uint8_t, std::function<void(rtscts_frame&)>> cases[] = {
      {"msg-stream-zero", RTSCTS_MSG, [](rtscts_frame& f) { f.stream = 0; }},
      {"ack-with-seq", RTSCTS_ACK, [](rtscts_frame& f) { f.seq = 5; }},
      {"ack-with-syn", RTSCTS_ACK, [](rtscts_frame& f) { f.flags |= RTSCTS_F_SYN; }},
      {"ack-with-stream", RTSCTS_ACK, [](rtscts_frame& f) { f.stream = 5; }},
      {"reset-stream-zero", RTSCTS_RESET, [](rtscts_frame& f) { f.reset_stream = 0; }},
      {"ack-without-ack-stream", RTSCTS_ACK, [](rtscts_frame& f) { f.ack_stream = 0; }},
      {"ack-grant-without-ack-stream", RTSCTS_ACK,
       [](rtscts_frame& f) {
         f.ack_stream = f.ack = 0;
         f.grant = 64;
       }},
      {"msg-grant-without-ack-stream", RTSCTS_MSG, [](rtscts_frame& f) { f.grant = ~0u; }},
      {"cts-status", RTSCTS_CTS, [](rtscts_frame& f) { f.status = 7; }},
      {"cts-length", RTSCTS_CTS, [](rtscts_frame& f) { f.length = kMaxOffset + 1; }},
      {"cts-drop-length", RTSCTS_CTS,
       [](rtscts_frame& f) {
         f.status = RTSCTS_CTS_DROP;
         f.length = 100;
       }},
  };
  for (const auto& [name, type, change] : cases)
    Add("bad_field", name, "a field the type does not allow", Valid(type, change),
        RTSCTS_FRAME_EFIELD);
  Add("bad_field", "data-empty", "DATA without payload", rtscts::Build(Header(RTSCTS_DATA)),
      RTSCTS_FRAME_EFIELD);
}

void Catalogue::AddPortalsHeaders() {
  // Refused by ptl_hdr_decode.
  Bytes good = rtscts::EncodePtl(Put(16));
  auto spoiled = [&](const std::function<void(Bytes&)>& patch) {
    Bytes h = good;
    patch(h);
    return h;
  };
  Add("ptl_garbage", "magic", "MSG whose Portals header has a bad magic",
      MsgWithBytes(spoiled([](Bytes& h) { Put32(h, 0, 0x12345678); })), RTSCTS_FRAME_OK,
      Flaw::kBadPtlHeader, PTL_WIRE_EMAGIC);
  Add("ptl_garbage", "version", "Portals header version 2",
      MsgWithBytes(spoiled([](Bytes& h) { h[4] = 2; })), RTSCTS_FRAME_OK, Flaw::kBadPtlHeader,
      PTL_WIRE_EVERSION);
  for (int t : {0, 6, 0xff})
    Add("ptl_garbage", "type-" + std::to_string(t), "Portals message type unknown",
        MsgWithBytes(spoiled([t](Bytes& h) { h[5] = uint8_t(t); })), RTSCTS_FRAME_OK,
        Flaw::kBadPtlHeader, PTL_WIRE_ETYPE);
  Add("ptl_garbage", "reserved", "Portals header reserved bits set",
      MsgWithBytes(spoiled([](Bytes& h) { Put16(h, 6, 0x0100); })), RTSCTS_FRAME_OK,
      Flaw::kBadPtlHeader, PTL_WIRE_ERESERVED);
  Add("ptl_garbage", "rlength-2^48+1", "PUT announcing 2^48+1 bytes",
      MsgWithBytes(spoiled([](Bytes& h) { Put64(h, 40, kMaxOffset + 1); })), RTSCTS_FRAME_OK,
      Flaw::kBadPtlHeader, PTL_WIRE_ELENGTH);
  Add("ptl_garbage", "rlength-max", "PUT announcing 2^64-1 bytes",
      MsgWithBytes(spoiled([](Bytes& h) { Put64(h, 40, ~0ULL); })), RTSCTS_FRAME_OK,
      Flaw::kBadPtlHeader, PTL_WIRE_ELENGTH);
  Add("ptl_garbage", "offset-max", "PUT at remote offset 2^64-1",
      MsgWithBytes(spoiled([](Bytes& h) { Put64(h, 56, ~0ULL); })), RTSCTS_FRAME_OK,
      Flaw::kBadPtlHeader, PTL_WIRE_ELENGTH);
  Add("ptl_garbage", "put-mlength", "PUT with mlength set (unused by PUT)",
      MsgWithBytes(spoiled([](Bytes& h) { Put64(h, 48, 8); })), RTSCTS_FRAME_OK,
      Flaw::kBadPtlHeader, PTL_WIRE_EFIELD);
  ptl_hdr ack = Put(0);
  ack.type = PTL_MSG_ACK;
  ack.rlength = 8;
  ack.mlength = 16;
  Bytes ack_bytes(PTL_WIRE_HDR_LEN);
  ptl_hdr_encode(&ack, ack_bytes.data());
  Add("ptl_garbage", "ack-mlength", "Portals ACK reporting more than was asked for",
      MsgWithBytes(ack_bytes), RTSCTS_FRAME_OK, Flaw::kBadPtlHeader, PTL_WIRE_ELENGTH);
  Add("ptl_garbage", "rts-magic", "RTS whose Portals header is all ones",
      MsgWithBytes(Bytes(PTL_WIRE_HDR_LEN, 0xff), RTSCTS_RTS), RTSCTS_FRAME_OK, Flaw::kBadPtlHeader,
      PTL_WIRE_EMAGIC);

  // Valid Portals headers that the frame contradicts.
  Add("ptl_garbage", "huge-eager", "MSG announcing a PUT of 2^48 bytes with 16 bytes eager",
      MsgWith(Put(kMaxOffset), 16), RTSCTS_FRAME_OK, Flaw::kHugeMessage);
  Add("ptl_garbage", "rts-huge", "RTS announcing a PUT of 2^48 bytes",
      rtscts::Build(Header(RTSCTS_RTS), rtscts::EncodePtl(Put(kMaxOffset))), RTSCTS_FRAME_OK,
      Flaw::kHugeMessage);
  Add("ptl_garbage", "eager-past-length", "MSG with 64 bytes of eager data for a PUT of 8",
      MsgWith(Put(8), 64), RTSCTS_FRAME_OK, Flaw::kPtlMismatch);
  ptl_hdr spoof = Put(16);
  spoof.src.nid = p_.src_nid + 1;
  Add("ptl_garbage", "src-nid-spoofed", "Portals src nid differs from the frame's src_nid",
      MsgWith(spoof, 16), RTSCTS_FRAME_OK, Flaw::kPtlMismatch);
  ptl_hdr elsewhere = Put(16);
  elsewhere.dst.nid = p_.dst_nid + 1;
  Add("ptl_garbage", "dst-nid-elsewhere", "Portals dst nid differs from the frame's dst_nid",
      MsgWith(elsewhere, 16), RTSCTS_FRAME_OK, Flaw::kPtlMismatch);
}

void Catalogue::AddProtocol() {
  // Accepted by the codec: only the receiver's state knows better.
  Add("unknown_msg", "cts", "CTS for a msg id this node never sent an RTS for",
      Valid(RTSCTS_CTS, [](rtscts_frame& f) { f.msg_id = kUnknownCtsMsgId; }), RTSCTS_FRAME_OK,
      Flaw::kUnknownMsg);
  Add("unknown_msg", "data", "DATA for a msg id that no RTS announced",
      Valid(RTSCTS_DATA, [](rtscts_frame& f) { f.msg_id = kUnknownDataMsgId; }), RTSCTS_FRAME_OK,
      Flaw::kUnknownMsg);
  Add("unknown_msg", "data-far", "DATA for an unknown msg id at offset 2^47",
      Valid(RTSCTS_DATA,
            [](rtscts_frame& f) {
              f.msg_id = kUnknownDataMsgId;
              f.offset = kMaxOffset / 2;
            }),
      RTSCTS_FRAME_OK, Flaw::kUnknownMsg);
  Add("wrong_node", "dst-plus-one", "a valid MSG for another node (dst_nid + 1)",
      Valid(RTSCTS_MSG, [this](rtscts_frame& f) { f.dst_nid = p_.dst_nid + 1; }), RTSCTS_FRAME_OK,
      Flaw::kWrongNode);
  Add("wrong_node", "ack", "a valid ACK for another node",
      Valid(RTSCTS_ACK, [this](rtscts_frame& f) { f.dst_nid = p_.dst_nid ^ 0x00ff0000; }),
      RTSCTS_FRAME_OK, Flaw::kWrongNode);
  Add("stale", "dst-inc", "a valid MSG naming an incarnation the receiver never had",
      Valid(RTSCTS_MSG, [this](rtscts_frame& f) { f.dst_inc = ~p_.dst_inc; }), RTSCTS_FRAME_OK,
      Flaw::kStaleIncarnation);
  Add("out_of_window", "seq-ahead", "a MSG 2^31-1 sequences ahead",
      Valid(RTSCTS_MSG,
            [](rtscts_frame& f) {
              f.seq += 0x7fffffff;
              f.flags &= uint16_t(~RTSCTS_F_SYN);
            }),
      RTSCTS_FRAME_OK, Flaw::kOutOfWindow);
  Add("unknown_stream", "ack", "an ACK about a stream the receiver never sent on",
      Valid(RTSCTS_ACK,
            [](rtscts_frame& f) {
              f.ack_stream = 0x0badf00d;
              f.ack = 0x40000000;
              f.sack = ~0ULL;
            }),
      RTSCTS_FRAME_OK, Flaw::kUnknownStream);
  Add("unknown_stream", "ack-grant", "an ACK granting 2^32-1 requests on a stream never sent on",
      Valid(RTSCTS_ACK,
            [](rtscts_frame& f) {
              f.ack_stream = 0x0badf00e;
              f.ack = 0;
              f.grant = ~0u;
            }),
      RTSCTS_FRAME_OK, Flaw::kUnknownStream);
  Add("unknown_stream", "reset", "a RESET of a stream the receiver never had",
      Valid(RTSCTS_RESET, [](rtscts_frame& f) { f.reset_stream = 0x0badf00d; }), RTSCTS_FRAME_OK,
      Flaw::kUnknownStream);
}

void Catalogue::AddRiders() {
  ptl_hdr ack = Put(0);
  ack.type = PTL_MSG_ACK;
  Bytes one_ack = rtscts::EncodePtl(ack);
  Add("riders", "on-ack", "an ACK (not reliable) carrying a rider",
      rtscts::Build(Header(RTSCTS_ACK), {}, {}, one_ack), RTSCTS_FRAME_EFIELD);
  Bytes too_many;
  for (int i = 0; i <= RTSCTS_MAX_RIDERS; i++)
    too_many.insert(too_many.end(), one_ack.begin(), one_ack.end());
  Add("riders", "over-max", "a CTS carrying one rider more than RTSCTS_MAX_RIDERS",
      rtscts::Build(Header(RTSCTS_CTS), {}, {}, too_many), RTSCTS_FRAME_EFIELD);
  Add("riders", "count-past-frame", "a CTS counting four riders and carrying none",
      Patched(RTSCTS_CTS, [](Bytes& b) { b[off::kRiders] = 4; }), RTSCTS_FRAME_ELENGTH);
  // Valid frames whose riders the receiver must refuse: a request would
  // pass the credit that bounds what it answers.
  const std::pair<const char*, ptl_hdr> wrong[] = {
      {"put", Put(0)},
      {"reply-with-payload",
       [&] {
         ptl_hdr r = Put(0);
         r.type = PTL_MSG_REPLY;
         r.payload_length = r.rlength = r.mlength = 8;
         return r;
       }()},
  };
  for (const auto& [name, h] : wrong)
    Add("riders", std::string("rider-") + name,
        std::string("a MSG carrying a rider that is a ") + name,
        rtscts::Build(Header(RTSCTS_MSG), rtscts::EncodePtl(Put(16)), rtscts::Pattern(16),
                      rtscts::EncodePtl(h)),
        RTSCTS_FRAME_OK, Flaw::kRiderNotResponse);
}

// Large frames (version 5): segs and seg_size must describe the payload,
// of a DATA frame and of a MSG (whose segment 0 holds the Portals header).
void Catalogue::AddLargeFrames() {
  const std::pair<const char*, std::function<void(rtscts_frame&)>> cases[] = {
      {"segs-one", [](rtscts_frame& f) { f.segs = 1, f.seg_size = 16; }},
      {"segs-over-max", [](rtscts_frame& f) { f.segs = RTSCTS_MAX_SEGS + 1, f.seg_size = 1; }},
      {"seg-size-zero", [](rtscts_frame& f) { f.segs = 2, f.seg_size = 0; }},
      {"seg-size-alone", [](rtscts_frame& f) { f.seg_size = 8; }},
      {"payload-short", [](rtscts_frame& f) { f.segs = 3, f.seg_size = 8; }},
      {"payload-long", [](rtscts_frame& f) { f.segs = 2, f.seg_size = 4; }},
  };
  ptl_hdr ack = Put(0);
  ack.type = PTL_MSG_ACK;
  for (uint8_t t : {RTSCTS_DATA, RTSCTS_MSG}) {
    std::string type(rtscts::TypeName(t));
    std::string prefix = t == RTSCTS_DATA ? "" : "msg-";
    for (const auto& [name, change] : cases)
      Add("large_frame", prefix + name,
          type + " whose segs and seg_size do not fit its 16 bytes of payload", Valid(t, change),
          RTSCTS_FRAME_EFIELD);
    rtscts_frame f = Header(t);
    f.segs = 2;
    f.seg_size = 8;
    Bytes ptl = t == RTSCTS_MSG ? rtscts::EncodePtl(Put(16)) : Bytes{};
    Add("large_frame", prefix + "with-rider", "a large " + type + " carrying a rider",
        rtscts::Build(f, ptl, rtscts::Pattern(16), rtscts::EncodePtl(ack)), RTSCTS_FRAME_EFIELD);
  }
}

void Catalogue::AddRandom() {
  for (uint32_t i = 0; i < p_.random; i++) {
    Bytes b = RandomFrame(rng_, 300);
    // A random frame that decodes would be a valid frame by chance; the
    // odds are far below 2^-64, and the unit test would show it.
    Add("random", std::to_string(i), "random bytes", b, kAnyRefusal);
  }
}

std::vector<HostileFrame> Catalogue::Build() {
  AddTruncated();
  AddHeaderErrors();
  AddLengths();
  AddChecksums();
  AddReserved();
  AddNids();
  AddFields();
  AddPortalsHeaders();
  AddProtocol();
  AddRiders();
  AddLargeFrames();
  AddRandom();
  return std::move(out_);
}

}  // namespace

std::string_view FlawName(Flaw f) {
  switch (f) {
    case Flaw::kNone:
      return "none";
    case Flaw::kBadCrc:
      return "bad_crc";
    case Flaw::kBadPtlHeader:
      return "bad_ptl_header";
    case Flaw::kPtlMismatch:
      return "ptl_mismatch";
    case Flaw::kHugeMessage:
      return "huge_message";
    case Flaw::kWrongNode:
      return "wrong_node";
    case Flaw::kStaleIncarnation:
      return "stale_incarnation";
    case Flaw::kUnknownMsg:
      return "unknown_msg";
    case Flaw::kOffsetSpan:
      return "offset_span";
    case Flaw::kOutOfWindow:
      return "out_of_window";
    case Flaw::kUnknownStream:
      return "unknown_stream";
    case Flaw::kRiderNotResponse:
      return "rider_not_response";
  }
  return "?";
}

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

Bytes RandomFrame(uint64_t& state, size_t max_len) {
  uint64_t r = SplitMix64(state);
  Bytes b(r % (max_len + 1));
  for (size_t i = 0; i < b.size(); i += 8) {
    uint64_t v = SplitMix64(state);
    for (size_t k = 0; k < 8 && i + k < b.size(); k++) b[i + k] = uint8_t(v >> (8 * k));
  }
  if ((r >> 32) & 1) {
    if (b.size() > 0) b[0] = RTSCTS_VERSION;
    if (b.size() > 1) b[1] = uint8_t(1 + (r >> 40) % 6);
  }
  return b;
}

std::vector<HostileFrame> HostileCatalogue(const HostileParams& params) {
  return Catalogue(params).Build();
}

std::vector<std::string> HostileKinds(const std::vector<HostileFrame>& catalogue) {
  std::vector<std::string> kinds;
  for (const auto& f : catalogue)
    if (std::find(kinds.begin(), kinds.end(), f.kind) == kinds.end()) kinds.push_back(f.kind);
  return kinds;
}

}  // namespace ptl_inject
