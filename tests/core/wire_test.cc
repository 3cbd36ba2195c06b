// The wire header codec: layout, round trips and every refusal.
#include "core_harness.h"

namespace ptltest {
namespace {

ptl_hdr SamplePut() {
  ptl_hdr h{};
  h.type = PTL_MSG_PUT;
  h.dst = {1, 2};
  h.src = {3, 4};
  h.src_uid = 5;
  h.src_jid = 6;
  h.match_bits = 0x0102030405060708ULL;
  h.rlength = 4096;
  h.offset = 17;
  h.hdr_data = 0xfeedfacecafebeefULL;
  h.pt_index = 9;
  h.ac_index = 3;
  h.md_handle = 0x12345678;
  h.md_gen = 0x9abcdef0;
  return h;
}

Bytes Encode(const ptl_hdr& h) {
  Bytes b(PTL_WIRE_HDR_LEN);
  ptl_hdr_encode(&h, b.data());
  return b;
}

int DecodeRc(const Bytes& b) {
  ptl_hdr h;
  return ptl_hdr_decode(b.data(), b.size(), &h);
}

TEST(Wire, PutRoundTripsEveryField) {
  ptl_hdr in = SamplePut();
  Bytes b = Encode(in);
  ptl_hdr out{};
  ASSERT_EQ(ptl_hdr_decode(b.data(), b.size(), &out), PTL_WIRE_OK);
  EXPECT_EQ(out.type, in.type);
  EXPECT_EQ(out.dst.nid, 1u);
  EXPECT_EQ(out.dst.pid, 2u);
  EXPECT_EQ(out.src.nid, 3u);
  EXPECT_EQ(out.src.pid, 4u);
  EXPECT_EQ(out.src_uid, 5u);
  EXPECT_EQ(out.src_jid, 6u);
  EXPECT_EQ(out.match_bits, in.match_bits);
  EXPECT_EQ(out.rlength, 4096u);
  EXPECT_EQ(out.offset, 17u);
  EXPECT_EQ(out.hdr_data, in.hdr_data);
  EXPECT_EQ(out.pt_index, 9u);
  EXPECT_EQ(out.ac_index, 3u);
  EXPECT_EQ(out.md_handle, in.md_handle);
  EXPECT_EQ(out.md_gen, in.md_gen);
  EXPECT_EQ(out.payload_length, 4096u);
}

TEST(Wire, LayoutIsLittleEndianAtDocumentedOffsets) {
  Bytes b = Encode(SamplePut());
  ASSERT_EQ(b.size(), 96u);
  EXPECT_EQ(b[0], 'P');
  EXPECT_EQ(b[1], 'T');
  EXPECT_EQ(b[2], 'L');
  EXPECT_EQ(b[3], '3');
  EXPECT_EQ(b[4], PTL_WIRE_VERSION);
  EXPECT_EQ(b[5], PTL_MSG_PUT);
  EXPECT_EQ(b[32], 0x08);  // match bits, least significant byte first
  EXPECT_EQ(b[39], 0x01);
  EXPECT_EQ(b[80], 9);     // pt_index
  EXPECT_EQ(b[88], 0x78);  // md handle
  EXPECT_EQ(b[95], 0x9a);  // md generation, top byte
}

TEST(Wire, PayloadLengthFollowsTheType) {
  ptl_hdr h{};
  h.rlength = 100;
  h.mlength = 40;
  h.type = PTL_MSG_PUT;
  EXPECT_EQ(ptl_hdr_payload_length(&h), 100u);
  h.type = PTL_MSG_GETPUT;
  EXPECT_EQ(ptl_hdr_payload_length(&h), 100u);
  h.type = PTL_MSG_REPLY;
  EXPECT_EQ(ptl_hdr_payload_length(&h), 40u);
  h.type = PTL_MSG_GET;
  EXPECT_EQ(ptl_hdr_payload_length(&h), 0u);
  h.type = PTL_MSG_ACK;
  EXPECT_EQ(ptl_hdr_payload_length(&h), 0u);
}

TEST(Wire, ShortBufferIsRefused) {
  Bytes b = Encode(SamplePut());
  b.pop_back();
  EXPECT_EQ(DecodeRc(b), PTL_WIRE_ESHORT);
  EXPECT_EQ(DecodeRc(Bytes{}), PTL_WIRE_ESHORT);
}

TEST(Wire, BadMagicIsRefused) {
  Bytes b = Encode(SamplePut());
  b[0] ^= 1;
  EXPECT_EQ(DecodeRc(b), PTL_WIRE_EMAGIC);
}

TEST(Wire, UnknownVersionIsRefused) {
  Bytes b = Encode(SamplePut());
  b[4] = 2;
  EXPECT_EQ(DecodeRc(b), PTL_WIRE_EVERSION);
}

TEST(Wire, UnknownTypesAreRefused) {
  Bytes b = Encode(SamplePut());
  for (uint8_t t : {0, 6, 255}) {
    b[5] = t;
    EXPECT_EQ(DecodeRc(b), PTL_WIRE_ETYPE) << int(t);
  }
}

TEST(Wire, ReservedBitsAreRefused) {
  Bytes b = Encode(SamplePut());
  b[7] = 0x80;
  EXPECT_EQ(DecodeRc(b), PTL_WIRE_ERESERVED);
}

TEST(Wire, LengthsBeyondTheCapAreRefused) {
  ptl_hdr h = SamplePut();
  h.rlength = PTL_WIRE_MAX_LENGTH + 1;
  EXPECT_EQ(DecodeRc(Encode(h)), PTL_WIRE_ELENGTH);
  h = SamplePut();
  h.offset = ~0ULL;
  EXPECT_EQ(DecodeRc(Encode(h)), PTL_WIRE_ELENGTH);
  h.offset = PTL_WIRE_MAX_LENGTH;  // the cap itself is fine
  EXPECT_EQ(DecodeRc(Encode(h)), PTL_WIRE_OK);
}

TEST(Wire, AckOrReplyLongerThanAskedIsRefused) {
  ptl_hdr h{};
  h.type = PTL_MSG_REPLY;
  h.rlength = 10;
  h.mlength = 11;
  EXPECT_EQ(DecodeRc(Encode(h)), PTL_WIRE_ELENGTH);
  h.type = PTL_MSG_ACK;
  EXPECT_EQ(DecodeRc(Encode(h)), PTL_WIRE_ELENGTH);
  h.mlength = 10;
  EXPECT_EQ(DecodeRc(Encode(h)), PTL_WIRE_OK);
}

TEST(Wire, FieldsATypeDoesNotUseMustBeZero) {
  ptl_hdr h = SamplePut();
  h.mlength = 1;
  EXPECT_EQ(DecodeRc(Encode(h)), PTL_WIRE_EFIELD);
  h = SamplePut();
  h.type = PTL_MSG_GET;
  EXPECT_EQ(DecodeRc(Encode(h)), PTL_WIRE_EFIELD);  // hdr_data on a get
  h.hdr_data = 0;
  EXPECT_EQ(DecodeRc(Encode(h)), PTL_WIRE_OK);
  ptl_hdr ack{};
  ack.type = PTL_MSG_ACK;
  ack.ac_index = 1;
  EXPECT_EQ(DecodeRc(Encode(ack)), PTL_WIRE_EFIELD);
}

}  // namespace
}  // namespace ptltest
