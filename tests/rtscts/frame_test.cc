// The RTS/CTS frame codec (rtscts/rtscts_frame.c): layout, round trips of
// every type, every reason to refuse a frame, the checksum and the serial
// arithmetic, each against the rules written in rtscts/rtscts_frame.h.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>

#include "frame_builder.h"
#include "ptl_tool/crc32c.h"

namespace {

using rtscts::Bytes;
using rtscts::Node;

constexpr Node kSrc{0x0a000001, 0x11111111, 0x22222222};
constexpr uint32_t kDst = 0x0a000002;
constexpr uint64_t kMaxOffset = RTSCTS_MAX_OFFSET;
// The grant of Full()'s frames: four different bytes, so that a grant
// stored in the wrong order or at the wrong offset shows.
constexpr uint32_t kGrant = 0xc1c2c3c4;
constexpr uint8_t kTypes[] = {RTSCTS_MSG, RTSCTS_RTS,   RTSCTS_CTS,       RTSCTS_DATA,
                              RTSCTS_ACK, RTSCTS_RESET, RTSCTS_CHALLENGE, RTSCTS_CHALLENGE_ACK};

uint16_t Le16(const Bytes& b, size_t at) { return uint16_t(b[at] | b[at + 1] << 8); }
uint32_t Le32(const Bytes& b, size_t at) { return Le16(b, at) | uint32_t(Le16(b, at + 2)) << 16; }
uint64_t Le64(const Bytes& b, size_t at) { return Le32(b, at) | uint64_t(Le32(b, at + 4)) << 32; }

bool HasPtlHdr(uint8_t type) { return type == RTSCTS_MSG || type == RTSCTS_RTS; }

Bytes PtlPut() {
  return rtscts::EncodePtl(rtscts::PutHeader({kSrc.nid, 100}, {kDst, 200}, 4, 0xabc, 10));
}

// A valid header of `type` with every field the type may carry set to a
// distinctive value (so a field swapped or dropped shows).
rtscts_frame Full(uint8_t type) {
  rtscts_frame f = rtscts::Header(type, kSrc, kDst);
  bool reliable = rtscts_type_reliable(type);
  f.flags = RTSCTS_F_ACK_REQ | (reliable ? RTSCTS_F_SYN : 0);
  f.dst_inc = 0x33333333;
  f.ack_stream = 0x44444444;
  f.ack = 0x55555555;
  f.window = 0x6666;
  f.sack = 0x0102030405060708ULL;
  if (f.ack_stream) f.grant = kGrant;  // 0 without ack_stream
  if (reliable) f.seq = 0x77777777;
  if (reliable) f.msg_id = 0x88888888;
  if (type == RTSCTS_CTS) f.length = 0x0000ffff12345678ULL;
  if (type == RTSCTS_DATA) f.offset = 0x0000abcdef012345ULL;
  if (type == RTSCTS_RESET) f.reset_stream = 0x99999999;
  if (type == RTSCTS_CHALLENGE || type == RTSCTS_CHALLENGE_ACK) f.nonce = 0xaaaabbbbccccddddULL;
  return f;
}

Bytes PayloadOf(uint8_t type) {
  if (type == RTSCTS_MSG) return rtscts::Pattern(10, 0x40);
  if (type == RTSCTS_DATA) return rtscts::Pattern(100, 0x80);
  return {};
}

// A valid, sealed frame of `type` whose header `change` may spoil first
// (lengths and checksum are then made consistent with the change).
Bytes Frame(uint8_t type, const std::function<void(rtscts_frame&)>& change = {}) {
  rtscts_frame f = Full(type);
  if (change) change(f);
  Bytes ptl = HasPtlHdr(type) ? PtlPut() : Bytes{};
  return rtscts::Build(f, ptl, PayloadOf(type));
}

// A frame whose encoded bytes `patch` changes after sealing, re-sealed.
Bytes Patched(uint8_t type, const std::function<void(Bytes&)>& patch) {
  Bytes b = Frame(type);
  patch(b);
  rtscts::Seal(b);
  return b;
}

int Rc(const Bytes& b) {
  rtscts_frame f;
  return rtscts::Decode(b, &f);
}

int Rc(const Bytes& b, size_t avail, size_t wire_len) {
  rtscts_frame f;
  return rtscts_frame_decode(b.data(), avail, wire_len, &f);
}

std::string Name(uint8_t type) { return std::string(rtscts::TypeName(type)); }

void ExpectSameFields(const rtscts_frame& a, const rtscts_frame& b) {
  EXPECT_EQ(a.type, b.type);
  EXPECT_EQ(a.flags, b.flags);
  EXPECT_EQ(a.frame_len, b.frame_len);
  EXPECT_EQ(a.csum_len, b.csum_len);
  EXPECT_EQ(a.crc, b.crc);
  EXPECT_EQ(a.src_nid, b.src_nid);
  EXPECT_EQ(a.dst_nid, b.dst_nid);
  EXPECT_EQ(a.src_inc, b.src_inc);
  EXPECT_EQ(a.dst_inc, b.dst_inc);
  EXPECT_EQ(a.stream, b.stream);
  EXPECT_EQ(a.seq, b.seq);
  EXPECT_EQ(a.ack_stream, b.ack_stream);
  EXPECT_EQ(a.ack, b.ack);
  EXPECT_EQ(a.window, b.window);
  EXPECT_EQ(a.sack, b.sack);
  EXPECT_EQ(a.grant, b.grant);
  EXPECT_EQ(a.msg_id, b.msg_id);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.length, b.length);
  EXPECT_EQ(a.offset, b.offset);
  EXPECT_EQ(a.reset_stream, b.reset_stream);
  EXPECT_EQ(a.nonce, b.nonce);
  EXPECT_EQ(a.hdr_len, b.hdr_len);
  EXPECT_EQ(a.payload_len, b.payload_len);
}

// ---------------------------------------------------------------- layout

TEST(FrameLayout, HeaderSizesOfEveryType) {
  EXPECT_EQ(RTSCTS_VERSION, 5);
  EXPECT_EQ(RTSCTS_HDR_LEN, 64);
  EXPECT_EQ(rtscts_hdr_len(RTSCTS_MSG), 168);
  EXPECT_EQ(rtscts_hdr_len(RTSCTS_RTS), 168);
  EXPECT_EQ(rtscts_hdr_len(RTSCTS_CTS), 80);
  EXPECT_EQ(rtscts_hdr_len(RTSCTS_DATA), 80);
  EXPECT_EQ(rtscts_hdr_len(RTSCTS_ACK), 64);
  EXPECT_EQ(rtscts_hdr_len(RTSCTS_RESET), 72);
  EXPECT_EQ(rtscts_hdr_len(RTSCTS_CHALLENGE), 72);
  EXPECT_EQ(rtscts_hdr_len(RTSCTS_CHALLENGE_ACK), 72);
  for (int t : {0, 9, 0x81, 0xff}) EXPECT_EQ(rtscts_hdr_len(uint8_t(t)), 0) << t;
  EXPECT_EQ(PTL_WIRE_HDR_LEN, 96);  // wire-protocol.md: the Portals header MSG and RTS carry
  EXPECT_EQ(RTSCTS_PTL_HDR_OFF, 72);
  EXPECT_EQ(RTSCTS_RIDER_LEN, 96);
  EXPECT_EQ(RTSCTS_MAX_RIDERS, 8);
  EXPECT_EQ(RTSCTS_MIN_MTU, 169);
  EXPECT_EQ(RTSCTS_MAX_OFFSET, uint64_t(1) << 48);
}

// Issue 20, R5: 68 - 160 (the MSG headers of version 1) once wrapped to a
// room of 4 GiB, and a put then overflowed its frame's skb. No room is
// larger than what the MTU leaves.
TEST(FrameLayout, FrameRoomIsWhatTheMtuLeavesAndNeverWraps) {
  EXPECT_EQ(rtscts_frame_room(1500, RTSCTS_MSG, false), 1332u);
  EXPECT_EQ(rtscts_frame_room(1500, RTSCTS_DATA, false), 1420u);
  EXPECT_EQ(rtscts_frame_room(RTSCTS_MIN_MTU, RTSCTS_MSG, false), 1u);
  EXPECT_EQ(rtscts_frame_room(168, RTSCTS_MSG, false), 0u);
  EXPECT_EQ(rtscts_frame_room(80, RTSCTS_DATA, false), 0u);
  EXPECT_EQ(rtscts_frame_room(81, RTSCTS_DATA, false), 1u);
  EXPECT_EQ(rtscts_frame_room(65535, RTSCTS_DATA, false), 65535u - 80);
  EXPECT_EQ(rtscts_frame_room(UINT32_MAX, RTSCTS_DATA, false), 65535u - 80);
  for (uint32_t mtu : {0u, 1u, 68u, 79u, 80u})
    for (int t = 0; t < 256; t++)
      EXPECT_EQ(rtscts_frame_room(mtu, uint8_t(t), false), 0u) << mtu << " " << t;
  EXPECT_EQ(rtscts_frame_room(167, RTSCTS_MSG, false), 0u);
  EXPECT_EQ(rtscts_frame_room(167, RTSCTS_DATA, false), 87u);
  for (uint8_t t : {RTSCTS_RTS, RTSCTS_CTS, RTSCTS_ACK, RTSCTS_RESET})
    EXPECT_EQ(rtscts_frame_room(9000, t, false), 0u) << int(t);
  for (uint32_t mtu = 0; mtu < 70000; mtu++) {
    EXPECT_LE(rtscts_frame_room(mtu, RTSCTS_MSG, false) +
                  (rtscts_frame_room(mtu, RTSCTS_MSG, false) ? 168u : 0u),
              std::min<uint32_t>(mtu, RTSCTS_MAX_FRAME));
    EXPECT_LE(rtscts_frame_room(mtu, RTSCTS_DATA, false), RTSCTS_MAX_FRAME - 80u);
  }
}

// An authenticated interface's frames end with a 16-byte tag: room for it
// comes out of the payload, never out of the MTU.
TEST(FrameLayout, FrameRoomLeavesRoomForTheTag) {
  EXPECT_EQ(RTSCTS_MIN_MTU_AUTH, 185);
  EXPECT_EQ(rtscts_frame_room(1500, RTSCTS_MSG, true), 1332u - 16);
  EXPECT_EQ(rtscts_frame_room(1500, RTSCTS_DATA, true), 1420u - 16);
  EXPECT_EQ(rtscts_frame_room(RTSCTS_MIN_MTU_AUTH, RTSCTS_MSG, true), 1u);
  EXPECT_EQ(rtscts_frame_room(RTSCTS_MIN_MTU_AUTH - 1, RTSCTS_MSG, true), 0u);
  EXPECT_EQ(rtscts_frame_room(RTSCTS_MIN_MTU, RTSCTS_MSG, true), 0u);
  EXPECT_EQ(rtscts_frame_room(80 + 16, RTSCTS_DATA, true), 0u);
  EXPECT_EQ(rtscts_frame_room(80 + 16 + 1, RTSCTS_DATA, true), 1u);
  EXPECT_EQ(rtscts_frame_room(UINT32_MAX, RTSCTS_DATA, true), 65535u - 80 - 16);
  for (uint32_t mtu = 0; mtu < 70000; mtu++)
    for (uint8_t t : {RTSCTS_MSG, RTSCTS_DATA}) {
      uint32_t room = rtscts_frame_room(mtu, t, true);
      EXPECT_LE(room + (room ? rtscts_hdr_len(t) + 16u : 0u),
                std::min<uint32_t>(mtu, RTSCTS_MAX_FRAME))
          << mtu << " " << int(t);
    }
}

TEST(FrameLayout, MsgRtsCtsDataAreTheReliableTypes) {
  for (int t = 0; t < 256; t++)
    EXPECT_EQ(rtscts_type_reliable(uint8_t(t)), t >= RTSCTS_MSG && t <= RTSCTS_DATA) << t;
}

TEST(FrameLayout, CommonFieldsAreLittleEndianAtTheDocumentedOffsets) {
  Bytes b = Frame(RTSCTS_DATA);
  EXPECT_EQ(b[0], RTSCTS_VERSION);
  EXPECT_EQ(b[1], RTSCTS_DATA);
  EXPECT_EQ(Le16(b, 2), RTSCTS_F_ACK_REQ | RTSCTS_F_SYN);
  EXPECT_EQ(Le16(b, 4), 180);
  EXPECT_EQ(Le16(b, 6), 180);
  EXPECT_EQ(Le32(b, 8), ptl::tool::Crc32c([&] {
              Bytes z = b;
              std::fill_n(z.begin() + 8, 4, 0);
              return z;
            }()));
  EXPECT_EQ(Le32(b, 12), kSrc.nid);
  EXPECT_EQ(Le32(b, 16), kDst);
  EXPECT_EQ(Le32(b, 20), kSrc.inc);
  EXPECT_EQ(Le32(b, 24), 0x33333333u);
  EXPECT_EQ(Le32(b, 28), kSrc.stream);
  EXPECT_EQ(Le32(b, 32), 0x77777777u);
  EXPECT_EQ(Le32(b, 36), 0x44444444u);
  EXPECT_EQ(Le32(b, 40), 0x55555555u);
  EXPECT_EQ(Le16(b, 44), 0x6666);
  EXPECT_EQ(Le16(b, 46), 0);
  EXPECT_EQ(Le64(b, 48), 0x0102030405060708ULL);
  EXPECT_EQ(Le32(b, 56), kGrant) << "grant at 56";
  EXPECT_EQ(Le32(b, 60), 0u) << "the reserved word at 60";
  EXPECT_EQ(Le32(b, 64), 0x88888888u);
  EXPECT_EQ(Le32(b, 68), 0u);
  EXPECT_EQ(Le64(b, 72), 0x0000abcdef012345ULL);
  EXPECT_EQ(Bytes(b.begin() + 80, b.end()), PayloadOf(RTSCTS_DATA));
}

// grant and the reserved word end the common header of every type; the
// builder's offsets (which tools/ptl_inject pokes) are the same.
TEST(FrameLayout, GrantAndTheReservedWordEndTheCommonHeaderOfEveryType) {
  for (uint8_t t : kTypes) {
    Bytes b = Frame(t);
    EXPECT_EQ(Le32(b, 36), 0x44444444u) << Name(t) << ": ack_stream";
    EXPECT_EQ(Le32(b, 56), kGrant) << Name(t);
    EXPECT_EQ(Le32(b, 60), 0u) << Name(t);  // no riders, reserved 0
    rtscts_frame f;
    ASSERT_EQ(rtscts::Decode(b, &f), RTSCTS_FRAME_OK) << Name(t);
    EXPECT_EQ(f.grant, kGrant) << Name(t);
  }
  EXPECT_EQ(rtscts::off::kPcsum, 46u);
  EXPECT_EQ(rtscts::off::kSack, 48u);
  EXPECT_EQ(rtscts::off::kGrant, 56u);
  EXPECT_EQ(rtscts::off::kRiders, 60u);
  EXPECT_EQ(rtscts::off::kReserved, 61u);
  EXPECT_EQ(rtscts::off::kMsgId, 64u);
  EXPECT_EQ(rtscts::off::kWord, 68u);
  EXPECT_EQ(rtscts::off::kLong, 72u);
  EXPECT_EQ(rtscts::off::kResetStream, 64u);
  EXPECT_EQ(rtscts::off::kNonce, 64u);
}

TEST(FrameLayout, TypeHeadersAtTheDocumentedOffsets) {
  Bytes msg = Frame(RTSCTS_MSG);
  EXPECT_EQ(Le32(msg, 64), 0x88888888u);
  EXPECT_EQ(Le32(msg, 68), 0u);
  EXPECT_EQ(Bytes(msg.begin() + 72, msg.begin() + 168), PtlPut()) << "Portals header at 72";
  EXPECT_EQ(Bytes(msg.begin() + 168, msg.end()), PayloadOf(RTSCTS_MSG));
  Bytes rts = Frame(RTSCTS_RTS);
  EXPECT_EQ(rts.size(), 168u);
  EXPECT_EQ(Le32(rts, 64), 0x88888888u);
  EXPECT_EQ(Bytes(rts.begin() + 72, rts.end()), PtlPut()) << "Portals header at 72";

  Bytes cts = Frame(RTSCTS_CTS, [](rtscts_frame& f) {
    f.status = RTSCTS_CTS_DROP;
    f.length = 0;
  });
  EXPECT_EQ(cts.size(), 80u);
  EXPECT_EQ(Le32(cts, 64), 0x88888888u);
  EXPECT_EQ(Le32(cts, 68), uint32_t(RTSCTS_CTS_DROP));
  EXPECT_EQ(Le64(cts, 72), 0u);
  EXPECT_EQ(Le64(Frame(RTSCTS_CTS), 72), 0x0000ffff12345678ULL);

  Bytes reset = Frame(RTSCTS_RESET);
  EXPECT_EQ(reset.size(), 72u);
  EXPECT_EQ(Le32(reset, 64), 0x99999999u);
  EXPECT_EQ(Le32(reset, 68), 0u);
  EXPECT_EQ(Frame(RTSCTS_ACK).size(), 64u);

  for (uint8_t t : {RTSCTS_CHALLENGE, RTSCTS_CHALLENGE_ACK}) {
    Bytes chal = Frame(t);
    EXPECT_EQ(chal.size(), 72u) << Name(t);
    EXPECT_EQ(Le64(chal, 64), 0xaaaabbbbccccddddULL) << "nonce at 64";
    EXPECT_FALSE(rtscts_type_reliable(t));
  }
}

// ---------------------------------------------------------------- round trips

class FrameRoundTrip : public testing::TestWithParam<uint8_t> {};

TEST_P(FrameRoundTrip, EveryFieldSurvives) {
  uint8_t type = GetParam();
  Bytes b = Frame(type);
  rtscts_frame want = Full(type);
  want.frame_len = uint16_t(b.size());
  want.csum_len = uint16_t(b.size());
  want.crc = Le32(b, 8);
  want.hdr_len = rtscts_hdr_len(type);
  want.payload_len = uint16_t(PayloadOf(type).size());
  rtscts_frame got;
  ASSERT_EQ(rtscts::Decode(b, &got), RTSCTS_FRAME_OK);
  ExpectSameFields(got, want);
  EXPECT_TRUE(rtscts::CrcOk(b, got));
  if (HasPtlHdr(type)) {
    ptl_hdr h;
    ASSERT_EQ(ptl_hdr_decode(b.data() + got.hdr_len - PTL_WIRE_HDR_LEN, PTL_WIRE_HDR_LEN, &h),
              PTL_WIRE_OK);
    EXPECT_EQ(h.src.nid, kSrc.nid);
    EXPECT_EQ(h.dst.pid, 200u);
  }
}

// Decoding then encoding gives back the bytes of the headers, apart from
// crc (encode writes 0) and the Portals header of MSG and RTS, which is
// the caller's: encode leaves its 96 bytes as they were.
TEST_P(FrameRoundTrip, EncodingTheDecodedHeaderGivesTheSameBytes) {
  uint8_t type = GetParam();
  Bytes b = Frame(type);
  rtscts_frame f;
  ASSERT_EQ(rtscts::Decode(b, &f), RTSCTS_FRAME_OK);
  Bytes again(f.hdr_len, 0xa5);
  rtscts_frame_encode(&f, again.data());
  Bytes want(b.begin(), b.begin() + f.hdr_len);
  std::fill_n(want.begin() + 8, 4, 0);
  if (HasPtlHdr(type)) std::fill(want.begin() + (f.hdr_len - PTL_WIRE_HDR_LEN), want.end(), 0xa5);
  EXPECT_EQ(again, want);
}

TEST_P(FrameRoundTrip, TheSmallestValidFrameDecodes) {
  uint8_t type = GetParam();
  rtscts_frame h = rtscts::Header(type, kSrc, kDst);
  Bytes payload = type == RTSCTS_DATA ? Bytes{1} : Bytes{};
  Bytes b = rtscts::Build(h, HasPtlHdr(type) ? PtlPut() : Bytes{}, payload);
  EXPECT_EQ(b.size(), rtscts_hdr_len(type) + payload.size());
  EXPECT_EQ(Rc(b), RTSCTS_FRAME_OK);
}

// Ethernet pads short frames: the bytes after frame_len are not payload.
TEST_P(FrameRoundTrip, EthernetPaddingIsNotPayload) {
  uint8_t type = GetParam();
  Bytes b = Frame(type);
  size_t len = b.size();
  b.resize(len + 30, 0);
  rtscts_frame f;
  ASSERT_EQ(rtscts_frame_decode(b.data(), b.size(), b.size(), &f), RTSCTS_FRAME_OK);
  EXPECT_EQ(f.frame_len, len);
  EXPECT_EQ(f.payload_len, PayloadOf(type).size());
  // Only the headers need to be readable (the caller pulls them).
  ASSERT_EQ(rtscts_frame_decode(b.data(), f.hdr_len, b.size(), &f), RTSCTS_FRAME_OK);
}

// The decoder reads no byte past `avail`: the headers alone, in a buffer
// of exactly their size (ASan, in the sanitizer build, sees any overread).
TEST_P(FrameRoundTrip, DecodeReadsOnlyTheHeaders) {
  uint8_t type = GetParam();
  Bytes b = Frame(type);
  size_t hdr = rtscts_hdr_len(type);
  auto exact = std::make_unique<uint8_t[]>(hdr);
  std::copy_n(b.begin(), hdr, exact.get());
  rtscts_frame f;
  EXPECT_EQ(rtscts_frame_decode(exact.get(), hdr, b.size(), &f), RTSCTS_FRAME_OK);
}

TEST_P(FrameRoundTrip, ChecksumOverTheHeadersOnlyIsAccepted) {
  uint8_t type = GetParam();
  Bytes b = Frame(type);
  rtscts::Put16(b, rtscts::off::kCsumLen, rtscts_hdr_len(type));
  rtscts::Seal(b);
  rtscts_frame f;
  ASSERT_EQ(rtscts::Decode(b, &f), RTSCTS_FRAME_OK);
  EXPECT_EQ(f.csum_len, rtscts_hdr_len(type));
  EXPECT_TRUE(rtscts::CrcOk(b, f));
}

INSTANTIATE_TEST_SUITE_P(EveryType, FrameRoundTrip, testing::ValuesIn(kTypes),
                         [](const testing::TestParamInfo<uint8_t>& i) { return Name(i.param); });

// ---------------------------------------------------------------- refusals
// One test per enum rtscts_frame_err value, each with the minimal frames
// that earn it: a valid frame with one thing wrong.

TEST(FrameDecode, EshortFewerBytesThanTheCommonHeader) {
  Bytes ack = Frame(RTSCTS_ACK);
  for (size_t n = 0; n < RTSCTS_HDR_LEN; n++) {
    EXPECT_EQ(Rc(ack, n, n), RTSCTS_FRAME_ESHORT) << n << " bytes";
    EXPECT_EQ(Rc(ack, n, ack.size()), RTSCTS_FRAME_ESHORT) << n << " bytes pulled";
  }
  EXPECT_EQ(Rc(ack, ack.size(), ack.size()), RTSCTS_FRAME_OK);
}

TEST(FrameDecode, EshortFewerBytesThanTheTypeHeaders) {
  for (uint8_t type : {RTSCTS_MSG, RTSCTS_RTS, RTSCTS_CTS, RTSCTS_DATA, RTSCTS_RESET}) {
    Bytes b = Frame(type);
    size_t hdr = rtscts_hdr_len(type);
    for (size_t n = RTSCTS_HDR_LEN; n < hdr; n++)
      EXPECT_EQ(Rc(b, n, b.size()), RTSCTS_FRAME_ESHORT) << Name(type) << ", " << n << " pulled";
    EXPECT_EQ(Rc(b, hdr, b.size()), RTSCTS_FRAME_OK) << Name(type);
  }
}

TEST(FrameDecode, EshortMoreBytesReadableThanOnTheWire) {
  Bytes b = Frame(RTSCTS_ACK);
  EXPECT_EQ(Rc(b, b.size(), b.size() - 1), RTSCTS_FRAME_ESHORT);
}

TEST(FrameDecode, EversionAnyOtherVersion) {
  for (int v : {0, 1, 2, 3, 4, 6, 0x81, 0xff})
    EXPECT_EQ(Rc(Patched(RTSCTS_MSG, [v](Bytes& b) { b[0] = uint8_t(v); })), RTSCTS_FRAME_EVERSION)
        << v;
  EXPECT_EQ(Rc(Patched(RTSCTS_MSG, [](Bytes& b) { b[0] = RTSCTS_VERSION; })), RTSCTS_FRAME_OK);
}

// Version 1 had no grant and no reserved word at 56..63: its type headers
// sat 8 bytes earlier. Byte 0 tells the formats apart, whatever follows.
TEST(FrameDecode, EversionVersionOneFrames) {
  for (uint8_t type : kTypes)
    EXPECT_EQ(Rc(Patched(type, [](Bytes& b) { b[0] = 1; })), RTSCTS_FRAME_EVERSION) << Name(type);

  // A MSG laid out as version 1 sent it: the same fields without 56..63.
  Bytes v1 = Frame(RTSCTS_MSG, [](rtscts_frame& f) { f.grant = 0; });
  v1.erase(v1.begin() + 56, v1.begin() + 64);
  v1[0] = 1;
  rtscts::Put16(v1, rtscts::off::kFrameLen, uint16_t(v1.size()));
  rtscts::Put16(v1, rtscts::off::kCsumLen, uint16_t(v1.size()));
  rtscts::Seal(v1);
  ASSERT_EQ(v1.size(), 160u + PayloadOf(RTSCTS_MSG).size());
  EXPECT_EQ(Rc(v1), RTSCTS_FRAME_EVERSION);
  // Read as this version it does not decode either: the version and type of
  // its Portals header fall on MSG's seg_size at 68, a seg_size without segs.
  v1[0] = RTSCTS_VERSION;
  rtscts::Seal(v1);
  EXPECT_EQ(Rc(v1), RTSCTS_FRAME_EFIELD);

  // A version-1 ACK is 56 bytes: fewer than a common header of version 2,
  // refused before its version is read; padded, it is refused for that.
  Bytes ack = Frame(RTSCTS_ACK, [](rtscts_frame& f) { f.grant = 0; });
  ack.resize(56);
  ack[0] = 1;
  rtscts::Put16(ack, rtscts::off::kFrameLen, 56);
  rtscts::Put16(ack, rtscts::off::kCsumLen, 56);
  rtscts::Seal(ack);
  EXPECT_EQ(Rc(ack), RTSCTS_FRAME_ESHORT);
  ack.resize(64, 0);  // padding on the wire
  EXPECT_EQ(Rc(ack), RTSCTS_FRAME_EVERSION);
}

TEST(FrameDecode, EtypeUnknownTypes) {
  for (int t : {0, 9, 0x41, 0xff})
    EXPECT_EQ(Rc(Patched(RTSCTS_MSG, [t](Bytes& b) { b[1] = uint8_t(t); })), RTSCTS_FRAME_ETYPE)
        << t;
}

TEST(FrameDecode, EflagsUnknownFlagBits) {
  for (int bit = 3; bit < 16; bit++)
    for (uint8_t type : kTypes)
      EXPECT_EQ(Rc(Frame(type, [bit](rtscts_frame& f) { f.flags |= uint16_t(1u << bit); })),
                RTSCTS_FRAME_EFLAGS)
          << Name(type) << " bit " << bit;
}

TEST(FrameDecode, ElengthFrameLenLongerThanTheWire) {
  for (uint8_t type : kTypes) {
    Bytes b = Patched(type, [](Bytes& x) { rtscts::Put16(x, 4, uint16_t(x.size() + 1)); });
    EXPECT_EQ(Rc(b), RTSCTS_FRAME_ELENGTH) << Name(type);
  }
}

TEST(FrameDecode, ElengthFrameLenShorterThanTheHeaders) {
  for (uint8_t type : kTypes) {
    uint16_t hdr = rtscts_hdr_len(type);
    Bytes b = Patched(type, [hdr](Bytes& x) {
      rtscts::Put16(x, 4, hdr - 1);
      rtscts::Put16(x, 6, hdr - 1);
    });
    EXPECT_EQ(Rc(b), RTSCTS_FRAME_ELENGTH) << Name(type);
  }
}

TEST(FrameDecode, ElengthCsumLenShorterThanTheHeaders) {
  for (uint8_t type : kTypes) {
    uint16_t hdr = rtscts_hdr_len(type);
    EXPECT_EQ(Rc(Patched(type, [hdr](Bytes& b) { rtscts::Put16(b, 6, hdr - 1); })),
              RTSCTS_FRAME_ELENGTH)
        << Name(type);
    EXPECT_EQ(Rc(Patched(type, [](Bytes& b) { rtscts::Put16(b, 6, 0); })), RTSCTS_FRAME_ELENGTH)
        << Name(type);
  }
}

TEST(FrameDecode, ElengthCsumLenBeyondTheFrame) {
  for (uint8_t type : kTypes) {
    Bytes b = Frame(type);
    b.resize(b.size() + 8, 0);  // padding after frame_len: still not the frame's
    rtscts::Put16(b, 6, uint16_t(b.size() - 8 + 1));
    rtscts::Seal(b);
    EXPECT_EQ(Rc(b), RTSCTS_FRAME_ELENGTH) << Name(type);
  }
}

TEST(FrameDecode, ElengthPayloadInTypesThatCarryNone) {
  for (uint8_t type :
       {RTSCTS_RTS, RTSCTS_CTS, RTSCTS_ACK, RTSCTS_RESET, RTSCTS_CHALLENGE, RTSCTS_CHALLENGE_ACK}) {
    rtscts_frame f = Full(type);
    Bytes b = rtscts::Build(f, HasPtlHdr(type) ? PtlPut() : Bytes{}, Bytes{0x42});
    EXPECT_EQ(Rc(b), RTSCTS_FRAME_ELENGTH) << Name(type);
  }
}

// pcsum (46) covers bytes past csum_len: with csum_len == frame_len there
// are none, and it must be 0.
TEST(FrameDecode, EreservedPcsumWithNothingToCover) {
  for (uint8_t type : kTypes)
    for (uint16_t v : {0x0001, 0x0100, 0xffff})
      EXPECT_EQ(Rc(Patched(type, [v](Bytes& b) { rtscts::Put16(b, 46, v); })),
                RTSCTS_FRAME_ERESERVED)
          << Name(type) << " " << v;
}

// The u32 at 60, after grant, in every type; every one of its bytes.
TEST(FrameDecode, EreservedCommonReservedBytes) {
  for (uint8_t type : kTypes) {
    // Byte 60 is the riders' count; 61-63 are reserved.
    for (uint32_t v : {0x00000100u, 0x00010000u, 0x01000000u, 0x80000000u, 0xffffff00u})
      EXPECT_EQ(Rc(Patched(type, [v](Bytes& b) { rtscts::Put32(b, 60, v); })),
                RTSCTS_FRAME_ERESERVED)
          << Name(type) << " " << v;
    EXPECT_EQ(Rc(Patched(type, [](Bytes& b) { rtscts::Put32(b, 60, 0); })), RTSCTS_FRAME_OK)
        << Name(type);
    // Tagged frames too (their crc is 0: nothing to seal again).
    Bytes tagged = Frame(type, [](rtscts_frame& f) { f.flags |= RTSCTS_F_AUTH; });
    ASSERT_EQ(Rc(tagged), RTSCTS_FRAME_OK) << Name(type);
    rtscts::Put32(tagged, 60, 0x00000100u);
    EXPECT_EQ(Rc(tagged), RTSCTS_FRAME_ERESERVED) << Name(type) << ", tagged";
  }
}

// ---- riders: responses carried after a reliable frame's type headers ----

// `n` Portals ACK headers, each with its own match bits (i + 1).
Bytes Acks(size_t n) {
  Bytes out;
  for (size_t i = 0; i < n; i++) {
    ptl_hdr h = rtscts::PutHeader({kDst, 200}, {kSrc.nid, 100}, 4, i + 1, 0);
    h.type = PTL_MSG_ACK;
    Bytes b = rtscts::EncodePtl(h);
    out.insert(out.end(), b.begin(), b.end());
  }
  return out;
}

Bytes WithRiders(uint8_t type, size_t n) {
  Bytes ptl = HasPtlHdr(type) ? PtlPut() : Bytes{};
  return rtscts::Build(Full(type), ptl, PayloadOf(type), Acks(n));
}

TEST(FrameRiders, EveryReliableTypeCarriesThemBetweenItsHeadersAndPayload) {
  for (uint8_t type : {RTSCTS_MSG, RTSCTS_RTS, RTSCTS_CTS, RTSCTS_DATA}) {
    for (size_t n : {size_t(1), size_t(RTSCTS_MAX_RIDERS)}) {
      Bytes b = WithRiders(type, n);
      rtscts_frame f;
      ASSERT_EQ(rtscts::Decode(b, &f), RTSCTS_FRAME_OK) << Name(type) << " " << n;
      EXPECT_EQ(b[rtscts::off::kRiders], n);
      EXPECT_EQ(f.riders, n);
      EXPECT_EQ(f.riders_off, rtscts_hdr_len(type));
      EXPECT_EQ(f.hdr_len, rtscts_hdr_len(type) + n * RTSCTS_RIDER_LEN);
      EXPECT_EQ(f.payload_len, PayloadOf(type).size());
      EXPECT_EQ(rtscts_frame_hdr_len(b.data()), f.hdr_len);
      Bytes riders(b.begin() + f.riders_off, b.begin() + f.hdr_len);
      EXPECT_EQ(riders, Acks(n)) << Name(type);
      Bytes payload(b.begin() + f.hdr_len, b.begin() + f.frame_len);
      EXPECT_EQ(payload, PayloadOf(type)) << Name(type);
      // The frame's own Portals header stays where it was.
      if (HasPtlHdr(type)) {
        Bytes ptl = PtlPut();
        EXPECT_TRUE(std::equal(ptl.begin(), ptl.end(), b.begin() + RTSCTS_PTL_HDR_OFF));
      }
    }
  }
}

TEST(FrameRiders, RoomIsWhatTheMtuLeavesAfterHeadersTagAndPayload) {
  // MSG headers 168: 1500 - 168 = 1332, 13 riders fit, capped at 8.
  EXPECT_EQ(rtscts_rider_room(1500, RTSCTS_MSG, false, 0), uint32_t(RTSCTS_MAX_RIDERS));
  EXPECT_EQ(rtscts_rider_room(1500, RTSCTS_MSG, false, 1332 - 2 * 96), 2u);
  EXPECT_EQ(rtscts_rider_room(1500, RTSCTS_MSG, false, 1332 - 2 * 96 + 1), 1u);
  EXPECT_EQ(rtscts_rider_room(1500, RTSCTS_MSG, true, 1332 - 2 * 96), 1u) << "the tag takes 16";
  EXPECT_EQ(rtscts_rider_room(1500, RTSCTS_DATA, false, 1420), 0u) << "a full frame";
  EXPECT_EQ(rtscts_rider_room(1500, RTSCTS_DATA, false, 2000), 0u) << "never wraps";
  EXPECT_EQ(rtscts_rider_room(80 + 96, RTSCTS_CTS, false, 0), 1u);
  EXPECT_EQ(rtscts_rider_room(169, RTSCTS_MSG, false, 0), 0u) << "the smallest MTU";
  EXPECT_EQ(rtscts_rider_room(1u << 20, RTSCTS_MSG, false, 0), uint32_t(RTSCTS_MAX_RIDERS))
      << "capped at 65535 first";
  for (int t :
       {int(RTSCTS_ACK), int(RTSCTS_RESET), int(RTSCTS_CHALLENGE), int(RTSCTS_CHALLENGE_ACK), 0})
    EXPECT_EQ(rtscts_rider_room(9000, uint8_t(t), false, 0), 0u) << t;
}

// ---------------------------------------------------------------- large

// DATA with 100 bytes of payload standing for `segs` frames of `seg_size`.
Bytes Large(uint8_t segs, uint16_t seg_size,
            const std::function<void(rtscts_frame&)>& change = {}) {
  return Frame(RTSCTS_DATA, [&](rtscts_frame& f) {
    f.segs = segs;
    f.seg_size = seg_size;
    if (change) change(f);
  });
}

// MSG with 100 bytes of payload standing for `segs` frames of `seg_size`.
Bytes LargeMsg(uint8_t segs, uint16_t seg_size) {
  rtscts_frame f = Full(RTSCTS_MSG);
  f.segs = segs;
  f.seg_size = seg_size;
  return rtscts::Build(f, PtlPut(), rtscts::Pattern(100, 0x40));
}

TEST(FrameLarge, SegsAndSegSizeRoundTripInTheSecondWordOfDataAndMsg) {
  rtscts_frame f;
  for (const Bytes& b : {Large(4, 30), LargeMsg(4, 30)}) {
    EXPECT_EQ(Le16(b, 68), 30u);
    EXPECT_EQ(b[70], 4u);
    EXPECT_EQ(b[71], 0u);
    ASSERT_EQ(rtscts::Decode(b, &f), RTSCTS_FRAME_OK);
    EXPECT_EQ(f.segs, 4u);
    EXPECT_EQ(f.seg_size, 30u);
    EXPECT_EQ(rtscts_frame_seqs(&f), 4u);
  }
  ASSERT_EQ(rtscts::Decode(Frame(RTSCTS_DATA), &f), RTSCTS_FRAME_OK);
  EXPECT_EQ(f.segs, 0u);
  EXPECT_EQ(rtscts_frame_seqs(&f), 1u);
}

TEST(FrameLarge, EveryPayloadFromOneByteInTheLastSegmentToAFullOne) {
  // 100 bytes: 4 x 25 (full), 4 x 30 (10 in the last), 2 x 99 (1 in the last).
  for (auto [segs, size] : {std::pair{4, 25}, {4, 30}, {2, 99}, {2, 50}, {50, 2}})
    EXPECT_EQ(Rc(Large(uint8_t(segs), uint16_t(size))), RTSCTS_FRAME_OK) << segs << " x " << size;
}

TEST(FrameLarge, EfieldWhenSegsAndSegSizeDoNotDescribeThePayload) {
  const std::tuple<const char*, uint8_t, uint16_t> cases[] = {
      {"one segment", 1, 100},
      {"more than RTSCTS_MAX_SEGS", RTSCTS_MAX_SEGS + 1, 2},
      {"seg_size 0", 2, 0},
      {"seg_size without segs", 0, 50},
      {"the last segment empty", 5, 25},
      {"more than the segments hold", 3, 30},
  };
  for (const auto& [what, segs, size] : cases)
    EXPECT_EQ(Rc(Large(segs, size)), RTSCTS_FRAME_EFIELD) << what;
}

TEST(FrameLarge, EfieldWithRidersTagOrPcsum) {
  Bytes riders = WithRiders(RTSCTS_DATA, 1);
  riders[68] = 50;  // seg_size 50, segs 2 for the 100 bytes of payload
  riders[70] = 2;
  rtscts::Seal(riders);
  EXPECT_EQ(Rc(riders), RTSCTS_FRAME_EFIELD);
  // A tag: checked before the crc (auth.c), so only the decoder's view.
  EXPECT_EQ(Rc(Large(2, 50, [](rtscts_frame& f) { f.flags |= RTSCTS_F_AUTH; })),
            RTSCTS_FRAME_EFIELD);
  // The payload in pages (csum_len the headers') with a pcsum.
  Bytes pcsum = Large(2, 50);
  rtscts::Put16(pcsum, rtscts::off::kCsumLen, RTSCTS_DATA_HDR_LEN);
  rtscts::Put16(pcsum, rtscts::off::kPcsum, 0x1234);
  EXPECT_EQ(Rc(pcsum), RTSCTS_FRAME_EFIELD);
  rtscts::Put16(pcsum, rtscts::off::kPcsum, 0);
  EXPECT_EQ(Rc(pcsum), RTSCTS_FRAME_OK);
}

TEST(FrameLarge, DataAndMsgHaveThemRtsDoesNot) {
  // In RTS the same bytes are the reserved word.
  EXPECT_EQ(Rc(Patched(RTSCTS_RTS, [](Bytes& b) { b[70] = 2; })), RTSCTS_FRAME_ERESERVED);
  // In MSG they are segs and seg_size: segs 2 with seg_size 0 is wrong.
  EXPECT_EQ(Rc(Patched(RTSCTS_MSG, [](Bytes& b) { b[70] = 2; })), RTSCTS_FRAME_EFIELD);
}

TEST(FrameLarge, AMsgsPayloadFollowsItsPortalsHeader) {
  rtscts_frame f;
  ASSERT_EQ(rtscts::Decode(LargeMsg(4, 30), &f), RTSCTS_FRAME_OK);
  EXPECT_EQ(f.hdr_len, RTSCTS_MSG_HDR_LEN);
  EXPECT_EQ(f.payload_len, 100u);
  EXPECT_EQ(f.offset, 0u);
  // The same rules as DATA's: the payload fills every segment but the last.
  EXPECT_EQ(Rc(LargeMsg(5, 25)), RTSCTS_FRAME_EFIELD) << "the last segment empty";
  EXPECT_EQ(Rc(LargeMsg(3, 30)), RTSCTS_FRAME_EFIELD) << "more than the segments hold";
  EXPECT_EQ(Rc(LargeMsg(1, 100)), RTSCTS_FRAME_EFIELD) << "one segment";
}

TEST(FrameLarge, MsgSegmentsAreAMsgThenData) {
  rtscts_frame lf;
  ASSERT_EQ(rtscts::Decode(LargeMsg(4, 30), &lf), RTSCTS_FRAME_OK);
  uint64_t next = 0;
  for (uint32_t i = 0; i < lf.segs; i++) {
    rtscts_frame seg;
    rtscts_frame_segment(&lf, i, &seg);
    SCOPED_TRACE(i);
    const uint16_t hdr = i ? RTSCTS_DATA_HDR_LEN : RTSCTS_MSG_HDR_LEN;
    EXPECT_EQ(seg.type, i ? RTSCTS_DATA : RTSCTS_MSG);
    EXPECT_EQ(seg.hdr_len, hdr);
    EXPECT_EQ(seg.riders_off, hdr);
    EXPECT_EQ(seg.seq, lf.seq + i);
    EXPECT_EQ(seg.offset, next);
    EXPECT_EQ(seg.payload_len, i < 3 ? 30u : 10u);
    EXPECT_EQ(seg.frame_len, hdr + seg.payload_len);
    EXPECT_EQ(seg.csum_len, hdr);
    EXPECT_EQ(seg.msg_id, lf.msg_id);
    EXPECT_EQ(seg.segs, 0u);
    next += seg.payload_len;
    // Encoded with its payload (and, for the MSG, its Portals header), it
    // is a valid frame that says the same.
    Bytes b = rtscts::Build(seg, i ? Bytes{} : PtlPut(), rtscts::Pattern(seg.payload_len));
    rtscts_frame back;
    ASSERT_EQ(rtscts::Decode(b, &back), RTSCTS_FRAME_OK);
    EXPECT_EQ(back.type, seg.type);
    EXPECT_EQ(back.offset, seg.offset);
    EXPECT_EQ(back.msg_id, seg.msg_id);
  }
  EXPECT_EQ(next, lf.payload_len);
}

TEST(FrameLarge, MsgSkippedIsTheRestAsData) {
  rtscts_frame f;
  ASSERT_EQ(rtscts::Decode(LargeMsg(4, 30), &f), RTSCTS_FRAME_OK);
  rtscts_frame_skip_segs(&f, 0);
  EXPECT_EQ(f.type, RTSCTS_MSG) << "nothing skipped";
  rtscts_frame_skip_segs(&f, 1);
  EXPECT_EQ(f.type, RTSCTS_DATA);
  EXPECT_EQ(f.offset, 30u);
  EXPECT_EQ(f.hdr_len, RTSCTS_MSG_HDR_LEN + 30) << "where the rest of the payload starts";
  EXPECT_EQ(f.payload_len, 70u);
  EXPECT_EQ(f.segs, 3u);
  rtscts_frame_skip_segs(&f, 2);
  EXPECT_EQ(f.type, RTSCTS_DATA);
  EXPECT_EQ(f.offset, 90u);
  EXPECT_EQ(f.hdr_len, RTSCTS_MSG_HDR_LEN + 90);
  EXPECT_EQ(f.payload_len, 10u);
  EXPECT_EQ(f.segs, 0u);
}

TEST(FrameLarge, SegmentsAreTheFramesItStandsFor) {
  rtscts_frame lf;
  ASSERT_EQ(rtscts::Decode(Large(4, 30,
                                 [](rtscts_frame& f) {
                                   f.seq = 0xfffffffeu;  // the segments wrap around 0
                                   f.offset = 1000;
                                   f.flags = RTSCTS_F_ACK_REQ | RTSCTS_F_SYN;
                                 }),
                           &lf),
            RTSCTS_FRAME_OK);
  uint64_t next = lf.offset;
  for (uint32_t i = 0; i < lf.segs; i++) {
    rtscts_frame seg;
    rtscts_frame_segment(&lf, i, &seg);
    SCOPED_TRACE(i);
    EXPECT_EQ(seg.seq, 0xfffffffeu + i);
    EXPECT_EQ(seg.offset, next);
    EXPECT_EQ(seg.payload_len, i < 3 ? 30u : 10u);
    EXPECT_EQ(seg.frame_len, RTSCTS_DATA_HDR_LEN + seg.payload_len);
    EXPECT_EQ(seg.csum_len, RTSCTS_DATA_HDR_LEN);
    EXPECT_EQ(seg.segs, 0u);
    EXPECT_EQ(seg.seg_size, 0u);
    EXPECT_EQ(seg.flags, i < 3 ? RTSCTS_F_SYN : RTSCTS_F_ACK_REQ | RTSCTS_F_SYN);
    EXPECT_EQ(seg.msg_id, lf.msg_id);
    EXPECT_EQ(seg.ack, lf.ack);
    next += seg.payload_len;
    // Encoded with its payload, it is a valid frame.
    Bytes b = rtscts::Build(seg, {}, rtscts::Pattern(seg.payload_len));
    rtscts_frame back;
    ASSERT_EQ(rtscts::Decode(b, &back), RTSCTS_FRAME_OK);
    EXPECT_EQ(back.seq, seg.seq);
    EXPECT_EQ(back.offset, seg.offset);
  }
  EXPECT_EQ(next, lf.offset + lf.payload_len);
}

TEST(FrameLarge, SkippedSegmentsLeaveTheRest) {
  rtscts_frame f;
  ASSERT_EQ(rtscts::Decode(Large(4, 30), &f), RTSCTS_FRAME_OK);
  const rtscts_frame lf = f;
  rtscts_frame_skip_segs(&f, 0);
  EXPECT_EQ(f.seq, lf.seq);
  EXPECT_EQ(f.hdr_len, lf.hdr_len);
  rtscts_frame_skip_segs(&f, 2);
  EXPECT_EQ(f.seq, lf.seq + 2);
  EXPECT_EQ(f.offset, lf.offset + 60);
  EXPECT_EQ(f.hdr_len, lf.hdr_len + 60);  // where the rest of the payload starts
  EXPECT_EQ(f.payload_len, 40u);
  EXPECT_EQ(f.segs, 2u);
  rtscts_frame_skip_segs(&f, 1);  // one segment left: a single frame
  EXPECT_EQ(f.seq, lf.seq + 3);
  EXPECT_EQ(f.payload_len, 10u);
  EXPECT_EQ(f.segs, 0u);
  EXPECT_EQ(f.seg_size, 0u);
  rtscts_frame_skip_segs(&f, 1);  // nothing to skip in a single frame
  EXPECT_EQ(f.seq, lf.seq + 3);
}

TEST(FrameRiders, EfieldOnTypesThatAreNotReliable) {
  for (uint8_t type : {RTSCTS_ACK, RTSCTS_RESET, RTSCTS_CHALLENGE, RTSCTS_CHALLENGE_ACK}) {
    // The count alone, and the count with its bytes: both refused.
    EXPECT_EQ(Rc(Patched(type, [](Bytes& b) { b[rtscts::off::kRiders] = 1; })),
              RTSCTS_FRAME_ELENGTH)
        << Name(type);
    EXPECT_EQ(Rc(WithRiders(type, 1)), RTSCTS_FRAME_EFIELD) << Name(type);
  }
}

TEST(FrameRiders, EfieldMoreThanTheMaximum) {
  for (uint8_t type : {RTSCTS_MSG, RTSCTS_CTS, RTSCTS_DATA}) {
    Bytes b = WithRiders(type, RTSCTS_MAX_RIDERS + 1);
    EXPECT_EQ(Rc(b), RTSCTS_FRAME_EFIELD) << Name(type);
    // Nothing is made contiguous for a count the decoder refuses.
    EXPECT_EQ(rtscts_frame_hdr_len(b.data()), rtscts_hdr_len(type));
    b[rtscts::off::kRiders] = 0xff;
    rtscts::Seal(b);
    EXPECT_EQ(Rc(b), RTSCTS_FRAME_EFIELD) << Name(type);
  }
}

TEST(FrameRiders, ElengthWhenTheFrameOrTheCrcDoesNotHoldThem) {
  // A count larger than the bytes after the headers: a CTS has no payload.
  Bytes cts = WithRiders(RTSCTS_CTS, 2);
  cts[rtscts::off::kRiders] = 3;
  rtscts::Seal(cts);
  EXPECT_EQ(Rc(cts), RTSCTS_FRAME_ELENGTH);
  // csum_len must cover the riders: they are headers.
  Bytes msg = WithRiders(RTSCTS_MSG, 2);
  rtscts::Put16(msg, rtscts::off::kCsumLen, RTSCTS_MSG_HDR_LEN + RTSCTS_RIDER_LEN);
  rtscts::Seal(msg);
  EXPECT_EQ(Rc(msg), RTSCTS_FRAME_ELENGTH);
  // A MSG whose payload is read as riders is a shorter payload: valid to
  // the codec (the receiver refuses riders that are not responses).
  Bytes data = WithRiders(RTSCTS_DATA, 0);
  data[rtscts::off::kRiders] = 1;
  rtscts::Seal(data);
  EXPECT_EQ(Rc(data), RTSCTS_FRAME_OK);
}

TEST(FrameRiders, EshortUntilTheRidersAreReadable) {
  Bytes b = WithRiders(RTSCTS_MSG, 2);
  rtscts_frame f;
  size_t need = RTSCTS_MSG_HDR_LEN + 2 * RTSCTS_RIDER_LEN;
  EXPECT_EQ(rtscts_frame_decode(b.data(), need - 1, b.size(), &f), RTSCTS_FRAME_ESHORT);
  EXPECT_EQ(rtscts_frame_decode(b.data(), need, b.size(), &f), RTSCTS_FRAME_OK);
}

TEST(FrameDecode, EreservedTypeHeaderReservedWord) {
  for (uint8_t type : {RTSCTS_RTS, RTSCTS_RESET})
    for (uint32_t v : {0x00000001u, 0x80000000u})
      EXPECT_EQ(Rc(Patched(type, [v](Bytes& b) { rtscts::Put32(b, 68, v); })),
                RTSCTS_FRAME_ERESERVED)
          << Name(type) << " " << v;
  // MSG's and DATA's word holds seg_size and segs (large frames); its
  // last byte is reserved.
  for (uint8_t type : {RTSCTS_MSG, RTSCTS_DATA})
    EXPECT_EQ(Rc(Patched(type, [](Bytes& b) { b[71] = 1; })), RTSCTS_FRAME_ERESERVED) << Name(type);
}

struct FieldCase {
  const char* what;
  uint8_t type;
  std::function<void(rtscts_frame&)> change;
};

TEST(FrameDecode, EfieldFieldsWrongForTheType) {
  const FieldCase cases[] = {
      {"MSG on stream 0", RTSCTS_MSG, [](rtscts_frame& f) { f.stream = 0; }},
      {"RTS on stream 0", RTSCTS_RTS, [](rtscts_frame& f) { f.stream = 0; }},
      {"CTS on stream 0", RTSCTS_CTS, [](rtscts_frame& f) { f.stream = 0; }},
      {"DATA on stream 0", RTSCTS_DATA, [](rtscts_frame& f) { f.stream = 0; }},
      {"ACK with a seq", RTSCTS_ACK, [](rtscts_frame& f) { f.seq = 1; }},
      {"RESET with a seq", RTSCTS_RESET, [](rtscts_frame& f) { f.seq = 1; }},
      {"ACK with SYN", RTSCTS_ACK, [](rtscts_frame& f) { f.flags |= RTSCTS_F_SYN; }},
      {"RESET with SYN", RTSCTS_RESET, [](rtscts_frame& f) { f.flags |= RTSCTS_F_SYN; }},
      {"ACK on a stream", RTSCTS_ACK, [](rtscts_frame& f) { f.stream = 5; }},
      {"RESET on a stream", RTSCTS_RESET, [](rtscts_frame& f) { f.stream = 5; }},
      {"RESET of stream 0", RTSCTS_RESET, [](rtscts_frame& f) { f.reset_stream = 0; }},
      {"CHALLENGE without a nonce", RTSCTS_CHALLENGE, [](rtscts_frame& f) { f.nonce = 0; }},
      {"CHALLENGE_ACK without a nonce", RTSCTS_CHALLENGE_ACK, [](rtscts_frame& f) { f.nonce = 0; }},
      {"CHALLENGE on a stream", RTSCTS_CHALLENGE, [](rtscts_frame& f) { f.stream = 5; }},
      {"CHALLENGE_ACK with a seq", RTSCTS_CHALLENGE_ACK, [](rtscts_frame& f) { f.seq = 1; }},
      {"MSG acking without ack_stream", RTSCTS_MSG,
       [](rtscts_frame& f) {
         f.ack_stream = 0;
         f.sack = 0;
         f.grant = 0;
       }},
      {"ACK sacking without ack_stream", RTSCTS_ACK,
       [](rtscts_frame& f) {
         f.ack_stream = 0;
         f.ack = 0;
         f.grant = 0;
       }},
      {"MSG granting without ack_stream", RTSCTS_MSG,
       [](rtscts_frame& f) {
         f.ack_stream = 0;
         f.ack = 0;
         f.sack = 0;
       }},
      {"ACK granting without ack_stream", RTSCTS_ACK,
       [](rtscts_frame& f) {
         f.ack_stream = 0;
         f.ack = 0;
         f.sack = 0;
       }},
      {"CTS status 2", RTSCTS_CTS, [](rtscts_frame& f) { f.status = 2; }},
      {"CTS status ~0", RTSCTS_CTS, [](rtscts_frame& f) { f.status = ~0u; }},
      {"CTS length past 2^48", RTSCTS_CTS, [](rtscts_frame& f) { f.length = kMaxOffset + 1; }},
      {"CTS length ~0", RTSCTS_CTS, [](rtscts_frame& f) { f.length = ~0ULL; }},
      {"CTS DROP with a length", RTSCTS_CTS,
       [](rtscts_frame& f) {
         f.status = RTSCTS_CTS_DROP;
         f.length = 1;
       }},
      {"DATA at offset 2^48", RTSCTS_DATA, [](rtscts_frame& f) { f.offset = kMaxOffset; }},
      {"DATA at offset ~0", RTSCTS_DATA, [](rtscts_frame& f) { f.offset = ~0ULL; }},
  };
  for (const auto& c : cases) EXPECT_EQ(Rc(Frame(c.type, c.change)), RTSCTS_FRAME_EFIELD) << c.what;

  rtscts_frame empty_data = Full(RTSCTS_DATA);
  EXPECT_EQ(Rc(rtscts::Build(empty_data)), RTSCTS_FRAME_EFIELD) << "DATA without payload";
}

// A grant is about ack_stream: without one it must be 0, in every type,
// whichever of its bits is set; grant alone is reason enough.
TEST(FrameDecode, EfieldGrantWithoutAckStream) {
  for (uint8_t type : kTypes) {
    for (uint32_t grant : {kGrant, 1u, 0x80000000u, ~0u}) {
      Bytes b = Frame(type, [grant](rtscts_frame& f) {
        f.ack_stream = f.ack = 0;
        f.sack = 0;
        f.grant = grant;
      });
      EXPECT_EQ(Le32(b, 56), grant);
      EXPECT_EQ(Rc(b), RTSCTS_FRAME_EFIELD) << Name(type) << " grant " << grant;
    }
    EXPECT_EQ(Rc(Frame(type,
                       [](rtscts_frame& f) {
                         f.ack_stream = f.ack = 0;
                         f.sack = 0;
                         f.grant = 0;
                       })),
              RTSCTS_FRAME_OK)
        << Name(type) << ": nothing acknowledged, nothing granted";
    // The same in the bytes: ack_stream, ack and sack cleared, the grant
    // Full() stored at 56 left there.
    Bytes b = Patched(type, [](Bytes& x) {
      rtscts::Put32(x, 36, 0);
      rtscts::Put32(x, 40, 0);
      rtscts::Put64(x, 48, 0);
    });
    EXPECT_EQ(Rc(b), RTSCTS_FRAME_EFIELD) << Name(type) << ", bytes";
    rtscts::Put32(b, 56, 0);
    rtscts::Seal(b);
    EXPECT_EQ(Rc(b), RTSCTS_FRAME_OK) << Name(type) << ", bytes";
  }
}

TEST(FrameDecode, EnidWildcardOrZeroNidsAndIncarnation) {
  const FieldCase cases[] = {
      {"src_nid 0", 0, [](rtscts_frame& f) { f.src_nid = 0; }},
      {"src_nid ANY", 0, [](rtscts_frame& f) { f.src_nid = 0xffffffff; }},
      {"dst_nid 0", 0, [](rtscts_frame& f) { f.dst_nid = 0; }},
      {"dst_nid ANY", 0, [](rtscts_frame& f) { f.dst_nid = 0xffffffff; }},
      {"src_inc 0", 0, [](rtscts_frame& f) { f.src_inc = 0; }},
  };
  for (uint8_t type : kTypes)
    for (const auto& c : cases)
      EXPECT_EQ(Rc(Frame(type, c.change)), RTSCTS_FRAME_ENID) << Name(type) << ": " << c.what;
}

// Values at the edge of what the header allows.
TEST(FrameDecode, EdgesThatAreAllowed) {
  EXPECT_EQ(Rc(Frame(RTSCTS_CTS, [](rtscts_frame& f) { f.length = kMaxOffset; })), RTSCTS_FRAME_OK);
  EXPECT_EQ(Rc(Frame(RTSCTS_CTS,
                     [](rtscts_frame& f) {
                       f.status = RTSCTS_CTS_DROP;
                       f.length = 0;
                     })),
            RTSCTS_FRAME_OK);
  EXPECT_EQ(
      Rc(Frame(RTSCTS_DATA,
               [](rtscts_frame& f) { f.offset = kMaxOffset - PayloadOf(RTSCTS_DATA).size(); })),
      RTSCTS_FRAME_OK)
      << "the payload ends exactly at 2^48";
  EXPECT_EQ(Rc(Frame(RTSCTS_DATA, [](rtscts_frame& f) { f.offset = kMaxOffset - 1; })),
            RTSCTS_FRAME_EFIELD)
      << "the payload reaches past 2^48";
  EXPECT_EQ(Rc(Frame(RTSCTS_ACK,
                     [](rtscts_frame& f) {
                       f.ack_stream = 0;
                       f.ack = 0;
                       f.sack = 0;
                       f.grant = 0;
                     })),
            RTSCTS_FRAME_OK)
      << "a bare probe (ACK_REQ, nothing acknowledged)";
  // With ack_stream, a grant is any u32 (it counts modulo 2^32).
  for (uint32_t grant : {0u, 1u, 0x7fffffffu, 0x80000000u, ~0u})
    for (uint8_t type : {RTSCTS_MSG, RTSCTS_ACK})
      EXPECT_EQ(Rc(Frame(type, [grant](rtscts_frame& f) { f.grant = grant; })), RTSCTS_FRAME_OK)
          << Name(type) << " grant " << grant;
  EXPECT_EQ(Rc(rtscts::Build(Full(RTSCTS_MSG), PtlPut())), RTSCTS_FRAME_OK) << "MSG, no payload";
  EXPECT_EQ(Rc(Frame(RTSCTS_MSG, [](rtscts_frame& f) { f.window = 0; })), RTSCTS_FRAME_OK);
  EXPECT_EQ(Rc(Frame(RTSCTS_MSG, [](rtscts_frame& f) { f.dst_inc = 0; })), RTSCTS_FRAME_OK);
  // The frame codec does not look inside the Portals header.
  EXPECT_EQ(Rc(rtscts::Build(Full(RTSCTS_MSG), Bytes(96, 0xee))), RTSCTS_FRAME_OK);
  rtscts_frame big = Full(RTSCTS_MSG);
  EXPECT_EQ(Rc(rtscts::Build(big, PtlPut(), Bytes(RTSCTS_MAX_FRAME - 168, 1))), RTSCTS_FRAME_OK)
      << "a 65535-byte frame";
}

// ---------------------------------------------------------------- tags

Bytes Tagged(uint8_t type) {
  return Frame(type, [](rtscts_frame& f) { f.flags |= RTSCTS_F_AUTH; });
}

TEST(FrameAuth, ATaggedFrameDecodesWithItsTagAfterFrameLen) {
  for (uint8_t type : kTypes) {
    Bytes b = Tagged(type);
    rtscts_frame f;
    ASSERT_EQ(rtscts::Decode(b, &f), RTSCTS_FRAME_OK) << Name(type);
    EXPECT_EQ(f.tag_len, RTSCTS_AUTH_TAG_LEN);
    EXPECT_EQ(size_t(f.frame_len) + RTSCTS_AUTH_TAG_LEN, b.size()) << Name(type);
    EXPECT_EQ(f.payload_len, PayloadOf(type).size()) << "the tag is not payload";
    EXPECT_EQ(f.crc, 0u);
    rtscts_frame plain;
    ASSERT_EQ(rtscts::Decode(Frame(type), &plain), RTSCTS_FRAME_OK);
    EXPECT_EQ(plain.tag_len, 0);
  }
}

TEST(FrameAuth, ElengthTheTagMustBeOnTheWire) {
  for (uint8_t type : kTypes) {
    Bytes b = Tagged(type);
    for (size_t cut = 1; cut <= RTSCTS_AUTH_TAG_LEN; cut++)
      EXPECT_EQ(Rc(b, b.size() - cut < RTSCTS_HDR_LEN ? b.size() - cut : rtscts_hdr_len(type),
                   b.size() - cut),
                RTSCTS_FRAME_ELENGTH)
          << Name(type) << " " << cut << " bytes of the tag missing";
    // Ethernet padding after the tag is not the frame's.
    Bytes padded = b;
    padded.resize(b.size() + 40);
    EXPECT_EQ(Rc(padded), RTSCTS_FRAME_OK) << Name(type);
  }
  // frame_len at its largest: the tag's end is computed without wrapping.
  rtscts_frame big = Full(RTSCTS_MSG);
  big.flags |= RTSCTS_F_AUTH;
  Bytes b = rtscts::Build(big, PtlPut(), Bytes(RTSCTS_MAX_FRAME - 168, 1));
  EXPECT_EQ(Rc(b), RTSCTS_FRAME_OK) << "65535 bytes and a tag";
  EXPECT_EQ(Rc(b, RTSCTS_MSG_HDR_LEN, RTSCTS_MAX_FRAME), RTSCTS_FRAME_ELENGTH);
}

TEST(FrameAuth, EreservedChecksumsInATaggedFrame) {
  for (uint8_t type : kTypes) {
    Bytes b = Tagged(type);
    Bytes crc = b;
    rtscts::Put32(crc, rtscts::off::kCrc, 1);
    EXPECT_EQ(Rc(crc), RTSCTS_FRAME_ERESERVED) << Name(type);
  }
  // A DATA frame with a pcsum and a csum_len short of frame_len.
  Bytes d = Tagged(RTSCTS_DATA);
  rtscts::Put16(d, rtscts::off::kCsumLen, RTSCTS_DATA_HDR_LEN);
  EXPECT_EQ(Rc(d), RTSCTS_FRAME_OK);
  rtscts::Put16(d, rtscts::off::kPcsum, 0x1234);
  EXPECT_EQ(Rc(d), RTSCTS_FRAME_ERESERVED);
}

// ---------------------------------------------------------------- checksum

TEST(FrameCrc, CoversCsumLenBytesWithTheCrcFieldAsZero) {
  for (uint8_t type : kTypes) {
    Bytes b = Frame(type);
    Bytes zeroed = b;
    std::fill_n(zeroed.begin() + 8, 4, 0);
    EXPECT_EQ(rtscts_frame_crc(b.data(), uint16_t(b.size()), ptl::tool::Crc32cUpdate),
              ptl::tool::Crc32c(zeroed))
        << Name(type);
    EXPECT_EQ(Le32(b, 8), ptl::tool::Crc32c(zeroed)) << Name(type) << ": Seal stores it";
    rtscts_frame f;
    ASSERT_EQ(rtscts::Decode(b, &f), RTSCTS_FRAME_OK);
    EXPECT_EQ(f.crc, ptl::tool::Crc32c(zeroed));
  }
}

TEST(FrameCrc, AFrameWithItsCrcFieldStillZeroSealsInOnePass) {
  for (uint8_t type : kTypes) {
    Bytes b = Frame(type);
    uint32_t want = rtscts_frame_crc(b.data(), uint16_t(b.size()), ptl::tool::Crc32cUpdate);
    rtscts_frame_set_crc(b.data(), 0);
    EXPECT_EQ(rtscts_frame_crc_unsealed(b.data(), uint16_t(b.size()), ptl::tool::Crc32cUpdate),
              want)
        << Name(type);
    // Its precondition: a stored crc is covered, unlike rtscts_frame_crc's.
    rtscts_frame_set_crc(b.data(), want);
    EXPECT_NE(rtscts_frame_crc_unsealed(b.data(), uint16_t(b.size()), ptl::tool::Crc32cUpdate),
              want)
        << Name(type);
  }
  Bytes shorter(RTSCTS_HDR_LEN - 1, 0);
  EXPECT_EQ(
      rtscts_frame_crc_unsealed(shorter.data(), uint16_t(shorter.size()), ptl::tool::Crc32cUpdate),
      0u);
}

TEST(FrameCrc, TheStoredCrcDoesNotChangeTheChecksum) {
  Bytes b = Frame(RTSCTS_MSG);
  uint32_t want = rtscts_frame_crc(b.data(), uint16_t(b.size()), ptl::tool::Crc32cUpdate);
  for (uint32_t v : {0u, 1u, 0xdeadbeefu, ~0u}) {
    rtscts_frame_set_crc(b.data(), v);
    EXPECT_EQ(Le32(b, 8), v) << "rtscts_frame_set_crc stores LE at offset 8";
    EXPECT_EQ(rtscts_frame_crc(b.data(), uint16_t(b.size()), ptl::tool::Crc32cUpdate), want);
  }
}

// Version 3: the crc counts pcsum as 0, so that a device may fill pcsum in
// after the frame was sealed (CHECKSUM_PARTIAL).
TEST(FrameCrc, TheStoredPcsumDoesNotChangeTheChecksum) {
  for (uint8_t type : kTypes) {
    Bytes b = Frame(type);
    uint32_t want = rtscts_frame_crc(b.data(), uint16_t(b.size()), ptl::tool::Crc32cUpdate);
    for (uint16_t v : {0x0001, 0x8000, 0xffff}) {
      rtscts::Put16(b, RTSCTS_PCSUM_OFF, v);
      EXPECT_EQ(rtscts_frame_crc(b.data(), uint16_t(b.size()), ptl::tool::Crc32cUpdate), want)
          << Name(type) << " " << v;
    }
  }
  // Every other byte of the first 64 is covered.
  Bytes b = Frame(RTSCTS_ACK);
  uint32_t want = rtscts_frame_crc(b.data(), uint16_t(b.size()), ptl::tool::Crc32cUpdate);
  for (size_t i = 0; i < RTSCTS_HDR_LEN; i++) {
    if ((i >= 8 && i < 12) || i == RTSCTS_PCSUM_OFF || i == RTSCTS_PCSUM_OFF + 1) continue;
    Bytes c = b;
    c[i] ^= 0x10;
    EXPECT_NE(rtscts_frame_crc(c.data(), uint16_t(c.size()), ptl::tool::Crc32cUpdate), want)
        << "byte " << i;
  }
}

// FillPcsum: what a device puts in pcsum (ptl_inject completes captures
// taken on a veth with it).
TEST(FramePcsum, FilledSoThatTheRangeSumsToAllOnesInEitherByteOrder) {
  Bytes payload(1001);
  for (size_t i = 0; i < payload.size(); i++) payload[i] = uint8_t(i * 7 + 3);
  Bytes b = rtscts::Build(Full(RTSCTS_DATA), {}, payload);
  rtscts::Put16(b, rtscts::off::kCsumLen, RTSCTS_DATA_HDR_LEN);
  rtscts::Seal(b);
  uint32_t crc = Le32(b, 8);
  rtscts::FillPcsum(b);
  EXPECT_NE(Le16(b, RTSCTS_PCSUM_OFF), 0u);
  for (bool big : {true, false}) {
    uint32_t sum = 0;
    for (size_t i = RTSCTS_PCSUM_OFF; i < b.size(); i += 2) {
      uint32_t hi = b[i], lo = i + 1 < b.size() ? b[i + 1] : 0;
      sum += big ? (hi << 8 | lo) : (lo << 8 | hi);
    }
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    EXPECT_EQ(sum, 0xffffu) << (big ? "big" : "little") << "-endian words";
  }
  rtscts_frame f;
  EXPECT_EQ(rtscts::Decode(b, &f), RTSCTS_FRAME_OK);
  EXPECT_EQ(Le32(b, 8), crc) << "the crc does not cover pcsum";
  EXPECT_TRUE(rtscts::CrcOk(b, f));
  // Nothing to do where the crc covers everything, or a tag everything.
  Bytes whole = rtscts::Build(Full(RTSCTS_DATA), {}, payload);
  rtscts::FillPcsum(whole);
  EXPECT_EQ(Le16(whole, RTSCTS_PCSUM_OFF), 0u);
  Bytes tagged = Tagged(RTSCTS_DATA);
  rtscts::Put16(tagged, rtscts::off::kCsumLen, RTSCTS_DATA_HDR_LEN);
  rtscts::FillPcsum(tagged);
  EXPECT_EQ(Le16(tagged, RTSCTS_PCSUM_OFF), 0u);
}

TEST(FrameCrc, BytesPastCsumLenAreNotCovered) {
  Bytes b = Frame(RTSCTS_DATA);
  uint16_t hdr = rtscts_hdr_len(RTSCTS_DATA);
  rtscts::Put16(b, 6, hdr);
  rtscts::Seal(b);
  rtscts_frame f;
  ASSERT_EQ(rtscts::Decode(b, &f), RTSCTS_FRAME_OK);
  b.back() ^= 0xff;
  b[hdr] ^= 0xff;
  EXPECT_TRUE(rtscts::CrcOk(b, f));
  b[hdr - 1] ^= 0x01;
  EXPECT_FALSE(rtscts::CrcOk(b, f));
}

TEST(FrameCrc, EverySingleBitErrorIsDetected) {
  for (uint8_t type : {RTSCTS_ACK, RTSCTS_MSG}) {
    Bytes b = Frame(type);
    rtscts_frame f;
    ASSERT_EQ(rtscts::Decode(b, &f), RTSCTS_FRAME_OK);
    for (size_t i = 0; i < b.size(); i++) {
      if (i >= 8 && i < 12) continue;                                    // the crc field itself
      if (i == RTSCTS_PCSUM_OFF || i == RTSCTS_PCSUM_OFF + 1) continue;  // pcsum's
      for (int bit = 0; bit < 8; bit++) {
        Bytes c = b;
        c[i] ^= uint8_t(1 << bit);
        ASSERT_NE(rtscts_frame_crc(c.data(), uint16_t(c.size()), ptl::tool::Crc32cUpdate), f.crc)
            << Name(type) << " byte " << i << " bit " << bit;
      }
    }
  }
}

// Checking the checksum is the caller's: a bad one decodes.
TEST(FrameCrc, DecodeLeavesTheChecksumToTheCaller) {
  Bytes b = Frame(RTSCTS_MSG);
  b[8] ^= 1;
  rtscts_frame f;
  ASSERT_EQ(rtscts::Decode(b, &f), RTSCTS_FRAME_OK);
  EXPECT_FALSE(rtscts::CrcOk(b, f));
}

// ---------------------------------------------------------------- serial numbers

TEST(Serial, OrdersNearbySequences) {
  EXPECT_TRUE(rtscts_seq_before(1, 2));
  EXPECT_FALSE(rtscts_seq_before(2, 1));
  EXPECT_FALSE(rtscts_seq_before(5, 5));
  EXPECT_FALSE(rtscts_seq_after(5, 5));
  EXPECT_TRUE(rtscts_seq_after(2, 1));
  EXPECT_FALSE(rtscts_seq_after(1, 2));
}

TEST(Serial, WrapsAroundZero) {
  EXPECT_TRUE(rtscts_seq_before(0xffffffffu, 0));
  EXPECT_TRUE(rtscts_seq_after(0, 0xffffffffu));
  EXPECT_TRUE(rtscts_seq_before(0xfffffff0u, 0x10));
  EXPECT_TRUE(rtscts_seq_after(0x10, 0xfffffff0u));
  EXPECT_FALSE(rtscts_seq_before(0x10, 0xfffffff0u));
}

TEST(Serial, HalfTheSpaceIsTheHorizon) {
  // 2^31 - 1 ahead is still after; anything further looks behind.
  EXPECT_TRUE(rtscts_seq_after(0x7fffffffu, 0));
  EXPECT_TRUE(rtscts_seq_before(0, 0x7fffffffu));
  EXPECT_TRUE(rtscts_seq_before(0x80000001u, 0));
  EXPECT_TRUE(rtscts_seq_after(0, 0x80000001u));
  for (uint32_t base : {0u, 1u, 0x7fffffffu, 0x80000000u, 0xfffffffeu})
    for (uint32_t d : {1u, 2u, 1000u, 0x7ffffffeu, 0x7fffffffu}) {
      EXPECT_TRUE(rtscts_seq_before(base, base + d)) << base << " + " << d;
      EXPECT_TRUE(rtscts_seq_after(base + d, base)) << base << " + " << d;
      EXPECT_FALSE(rtscts_seq_after(base, base + d)) << base << " + " << d;
    }
}

// RFC 1982 leaves two numbers exactly 2^31 apart unordered. The codec
// answers "before" both ways (and so "after" both ways); the transport
// must keep its windows far below 2^31 so it never asks.
TEST(Serial, ExactlyHalfTheSpaceApartIsUnordered) {
  EXPECT_TRUE(rtscts_seq_before(0, 0x80000000u));
  EXPECT_TRUE(rtscts_seq_before(0x80000000u, 0));
  EXPECT_TRUE(rtscts_seq_after(0, 0x80000000u));
  EXPECT_TRUE(rtscts_seq_after(0x80000000u, 0));
}

}  // namespace
