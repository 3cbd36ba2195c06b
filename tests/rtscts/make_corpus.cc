// Writes the seed corpus of the frame fuzzer (tests/fuzz/fuzz_frame.cc)
// into a directory: valid frames of every type, some with Ethernet padding
// or with only their headers readable, in the fuzzer's input format
// (3 control bytes, then the frame; see fuzz_frame.cc), and a few structs
// for its encode mode. The seeds are
// committed in tests/fuzz/corpus_frame/; run this again when the format
// changes:  build/tests/rtscts/rtscts_make_corpus tests/fuzz/corpus_frame
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "frame_builder.h"

namespace {

using rtscts::Bytes;

constexpr rtscts::Node kSrc{0x0a000001, 0x5eed0001, 0x00000101};
constexpr uint32_t kDst = 0x0a000002;

// cut: 0 keeps every byte readable, 192 + k hides the last k bytes;
// pad: bytes on the wire after the frame (Ethernet padding).
void Write(const std::string& dir, const std::string& name, const Bytes& frame, uint8_t cut = 0,
           uint16_t pad = 0) {
  Bytes in = {cut, uint8_t(pad), uint8_t(pad >> 8)};
  in.insert(in.end(), frame.begin(), frame.end());
  std::ofstream out(dir + "/" + name, std::ios::binary);
  out.write(reinterpret_cast<const char*>(in.data()), std::streamsize(in.size()));
  if (!out) {
    std::perror(name.c_str());
    std::exit(1);
  }
}

Bytes Ptl(uint32_t type, uint64_t rlength, uint64_t mlength = 0) {
  ptl_hdr h = rtscts::PutHeader({kSrc.nid, 100}, {kDst, 200}, 4, 0x1234, rlength);
  h.type = type;
  if (type == PTL_MSG_GET) h.md_handle = 0x10001;
  if (type == PTL_MSG_GET) h.rtn_offset = 8;
  if (type == PTL_MSG_ACK || type == PTL_MSG_REPLY) h.mlength = mlength;
  return rtscts::EncodePtl(h);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  std::string dir = argv[1];
  using rtscts::Build;
  using rtscts::Header;

  rtscts_frame msg = Header(RTSCTS_MSG, kSrc, kDst);
  msg.flags = RTSCTS_F_SYN | RTSCTS_F_ACK_REQ;
  Bytes msg_frame = Build(msg, Ptl(PTL_MSG_PUT, 16), rtscts::Pattern(16));
  Write(dir, "msg", msg_frame);
  Write(dir, "msg_padded", msg_frame, 0, 30);
  Write(dir, "msg_headers_pulled", msg_frame, 192 + 16, 16);  // on the wire, not readable
  Write(dir, "msg_get", Build(msg, Ptl(PTL_MSG_GET, 4096)));
  Write(dir, "msg_reply", Build(msg, Ptl(PTL_MSG_REPLY, 64, 8), rtscts::Pattern(8)));
  Write(dir, "msg_ack", Build(msg, Ptl(PTL_MSG_ACK, 64, 64)));

  rtscts_frame rts = Header(RTSCTS_RTS, kSrc, kDst);
  rts.seq = 1;
  Write(dir, "rts", Build(rts, Ptl(PTL_MSG_PUT, 1 << 20)));

  rtscts_frame cts = Header(RTSCTS_CTS, kSrc, kDst);
  cts.ack_stream = 0x202;
  cts.ack = 2;
  cts.grant = 3;
  Write(dir, "cts", Build(cts));
  cts.status = RTSCTS_CTS_DROP;
  cts.length = 0;
  Write(dir, "cts_drop", Build(cts));

  rtscts_frame data = Header(RTSCTS_DATA, kSrc, kDst);
  data.seq = 2;
  data.offset = 1400;
  data.flags = RTSCTS_F_ACK_REQ;
  Write(dir, "data", Build(data, {}, rtscts::Pattern(64)));

  rtscts_frame ack = Header(RTSCTS_ACK, kSrc, kDst);
  ack.dst_inc = 0x5eed0002;
  ack.sack = 0x5;
  ack.grant = 64;
  Write(dir, "ack", Build(ack), 0, 8);
  ack.ack_stream = ack.ack = ack.grant = 0;
  ack.sack = 0;
  ack.flags = RTSCTS_F_ACK_REQ;
  Write(dir, "ack_probe", Build(ack), 0, 8);

  Write(dir, "reset", Build(Header(RTSCTS_RESET, kSrc, kDst)));

  // The fuzzer's encode mode (first byte 128..191): a struct rtscts_frame
  // field by field, as fuzz_frame.cc's EncodeMode() reads it.
  auto encode_seed = [](uint8_t type_sel, uint64_t offset, uint32_t reset_stream,
                        uint16_t payload) {
    Bytes b;
    auto put = [&b](uint64_t v, int n) {
      for (int i = 0; i < n; i++) b.push_back(uint8_t(v >> (8 * i)));
    };
    put(type_sel, 1);                        // type = 1 + type_sel % 8
    put(RTSCTS_F_ACK_REQ, 2);                // flags
    put(kSrc.nid, 4), put(kDst, 4);          // src_nid, dst_nid
    put(kSrc.inc, 4), put(0, 4);             // src_inc, dst_inc
    put(type_sel < 4 ? kSrc.stream : 0, 4);  // stream
    put(0, 4), put(0, 4), put(0, 4);         // seq, ack_stream, ack
    put(64, 2), put(0, 8);                   // window, sack
    put(0, 4);                               // grant (no ack_stream)
    put(1, 4), put(0, 4), put(0, 8);         // msg_id, status, length
    put(offset, 8), put(reset_stream, 4);    // offset, reset_stream
    put(0, 8);                               // nonce
    put(payload, 2), put(0, 2), put(0, 1);   // payload, csum extra, padding
    Bytes ptl = rtscts::EncodePtl(rtscts::PutHeader({kSrc.nid, 1}, {kDst, 2}, 0, 0, payload));
    b.insert(b.end(), ptl.begin(), ptl.end());  // MSG and RTS: the Portals header
    return b;
  };
  Write(dir, "encode_msg", encode_seed(0, 0, 0, 16), 0x80);
  Write(dir, "encode_data", encode_seed(3, 4096, 0, 100), 0x80);
  Write(dir, "encode_reset", encode_seed(5, 0, 7, 0), 0x80);
  return 0;
}
