// The hostile catalogue: every frame gets from the frame codec the verdict
// it claims, every frame the codec accepts has exactly the flaw it claims,
// and the catalogue is deterministic and covers what it is for.
#include "hostile.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace ptl_inject {
namespace {

HostileParams Params() {
  HostileParams p;
  p.dst_nid = 0x0a000002;
  p.dst_inc = 0x12345678;
  p.dst_pid = 77;
  p.portal = 4;
  return p;
}

bool HasPtlHdr(uint8_t t) { return t == RTSCTS_MSG || t == RTSCTS_RTS; }

TEST(Hostile, EveryFrameGetsTheCodecVerdictItClaims) {
  for (const auto& h : HostileCatalogue(Params())) {
    rtscts_frame f;
    int rc = rtscts::Decode(h.frame, &f);
    if (h.expect == kAnyRefusal)
      EXPECT_NE(rc, RTSCTS_FRAME_OK) << h.name;
    else
      EXPECT_EQ(rtscts::ErrName(rc), rtscts::ErrName(h.expect)) << h.name;
    if (h.expect != RTSCTS_FRAME_OK) {
      EXPECT_EQ(h.flaw, Flaw::kNone) << h.name;
    }
  }
}

TEST(Hostile, EveryRefusalReasonOfTheCodecIsSent) {
  std::set<int> seen;
  for (const auto& h : HostileCatalogue(Params())) seen.insert(h.expect);
  for (int err = RTSCTS_FRAME_ENID; err < RTSCTS_FRAME_OK; err++)
    EXPECT_TRUE(seen.count(err)) << rtscts::ErrName(err);
}

// An accepted frame is wrong in exactly the way it says, and otherwise
// right: a good checksum (unless that is the flaw), from the fake node to
// the receiver (unless that is the flaw).
TEST(Hostile, AcceptedFramesHaveTheFlawTheyClaim) {
  const HostileParams p = Params();
  auto cat = HostileCatalogue(p);
  std::set<uint32_t> announced;  // msg ids of MSG and RTS frames
  for (const auto& h : cat) {
    rtscts_frame f;
    if (rtscts::Decode(h.frame, &f) == RTSCTS_FRAME_OK && HasPtlHdr(f.type))
      announced.insert(f.msg_id);
  }
  int accepted = 0;
  for (const auto& h : cat) {
    if (h.expect != RTSCTS_FRAME_OK) continue;
    accepted++;
    SCOPED_TRACE(h.name);
    rtscts_frame f;
    ASSERT_EQ(rtscts::Decode(h.frame, &f), RTSCTS_FRAME_OK);
    ASSERT_NE(h.flaw, Flaw::kNone);
    EXPECT_EQ(rtscts::CrcOk(h.frame, f), h.flaw != Flaw::kBadCrc);
    EXPECT_EQ(f.dst_nid == p.dst_nid, h.flaw != Flaw::kWrongNode);
    EXPECT_EQ(f.dst_inc == p.dst_inc, h.flaw != Flaw::kStaleIncarnation);
    if (h.flaw != Flaw::kBadCrc) {
      EXPECT_EQ(f.src_nid, p.src_nid);
    }
    ptl_hdr ph{};
    int prc = HasPtlHdr(f.type)
                  ? ptl_hdr_decode(h.frame.data() + RTSCTS_PTL_HDR_OFF, PTL_WIRE_HDR_LEN, &ph)
                  : PTL_WIRE_OK;
    if (h.flaw == Flaw::kBadPtlHeader)
      EXPECT_EQ(rtscts::PtlErrName(prc), rtscts::PtlErrName(h.ptl_expect));
    else
      EXPECT_EQ(prc, PTL_WIRE_OK);
    switch (h.flaw) {
      case Flaw::kPtlMismatch:
        EXPECT_TRUE(ph.src.nid != f.src_nid || ph.dst.nid != f.dst_nid ||
                    f.payload_len > ph.payload_length);
        break;
      case Flaw::kHugeMessage:
        EXPECT_GE(ph.payload_length, uint64_t{1} << 40);
        EXPECT_LT(f.payload_len, ph.payload_length);
        break;
      case Flaw::kUnknownMsg:
        EXPECT_TRUE(f.type == RTSCTS_CTS || f.type == RTSCTS_DATA);
        EXPECT_FALSE(announced.count(f.msg_id));
        break;
      case Flaw::kOffsetSpan:
        EXPECT_EQ(f.type, RTSCTS_DATA);
        EXPECT_GT(f.offset + f.payload_len, RTSCTS_MAX_OFFSET);
        break;
      case Flaw::kOutOfWindow:
        EXPECT_GE(f.seq, 1u << 30);
        break;
      case Flaw::kRiderNotResponse: {
        ASSERT_GT(f.riders, 0);
        ptl_hdr rh{};
        ASSERT_EQ(ptl_hdr_decode(h.frame.data() + f.riders_off, PTL_WIRE_HDR_LEN, &rh),
                  PTL_WIRE_OK);
        EXPECT_TRUE((rh.type != PTL_MSG_ACK && rh.type != PTL_MSG_REPLY) || rh.payload_length);
        break;
      }
      case Flaw::kUnknownStream:
        EXPECT_TRUE(f.type == RTSCTS_ACK || f.type == RTSCTS_RESET);
        EXPECT_TRUE(f.type == RTSCTS_ACK ? f.ack_stream != 0 : f.reset_stream != 0);
        break;
      default:
        break;
    }
  }
  EXPECT_GE(accepted, 20);
}

// Frames that a receiver keeping the stream in order would deliver carry
// consecutive sequence numbers from 0, the first with SYN.
TEST(Hostile, DeliverableReliableFramesAreNumberedInOrder) {
  const HostileParams p = Params();
  uint32_t next = 0;
  for (const auto& h : HostileCatalogue(p)) {
    rtscts_frame f;
    if (rtscts::Decode(h.frame, &f) != RTSCTS_FRAME_OK || !rtscts_type_reliable(f.type)) continue;
    if (h.flaw == Flaw::kBadCrc || h.flaw == Flaw::kWrongNode ||
        h.flaw == Flaw::kStaleIncarnation || h.flaw == Flaw::kOutOfWindow)
      continue;
    EXPECT_EQ(f.stream, p.stream) << h.name;
    EXPECT_EQ(f.seq, next) << h.name;
    EXPECT_EQ(bool(f.flags & RTSCTS_F_SYN), next == 0) << h.name;
    next++;
  }
  EXPECT_GE(next, 10u);
}

TEST(Hostile, CoversEveryKindOfFrameItIsFor) {
  auto kinds = HostileKinds(HostileCatalogue(Params()));
  std::set<std::string> have(kinds.begin(), kinds.end());
  for (const char* k : {"truncated",      "bad_version",     "unknown_type",       "unknown_flags",
                        "frame_len_long", "frame_len_short", "csum_len_range",     "bad_crc",
                        "reserved",       "bad_nid",         "payload_where_none", "data_offset",
                        "bad_field",      "ptl_garbage",     "unknown_msg",        "wrong_node",
                        "stale",          "out_of_window",   "unknown_stream",     "riders",
                        "random"})
    EXPECT_TRUE(have.count(k)) << k;
}

// A frame spoiled in one field is a valid frame once that field is put
// right: it hits the field its name says (an offset that moved with the
// format would hit another field, and the codec could still refuse it for
// the same reason).
TEST(Hostile, SpoiledFieldsAreTheOnesTheFramesName) {
  static_assert(RTSCTS_VERSION == 5, "bad_version/version-4 below names the one before");
  struct Field {
    const char* name;  // a frame's full name, or a prefix ending in '*'
    size_t at, width;  // the field spoiled
    uint64_t good;     // what makes the frame valid
    int count;         // frames expected to match
  };
  const Field fields[] = {
      {"bad_version/version-4", 0, 1, RTSCTS_VERSION, 1},  // the format before this one
      {"reserved/common-*", 61, 3, 0, 6},
      {"reserved/pcsum", 46, 2, 0, 1},
      {"reserved/msg-word", 68, 4, 0, 1},
      {"reserved/rts-word", 68, 4, 0, 1},
      {"reserved/data-word", 68, 4, 0, 1},
      {"reserved/reset-word", 68, 4, 0, 1},
      {"bad_field/ack-grant-without-ack-stream", 56, 4, 0, 1},
      {"bad_field/msg-grant-without-ack-stream", 56, 4, 0, 1},
      // seg_size (68) and segs (70) of DATA and of MSG
      {"large_frame/seg*", 68, 3, 0, 4},
      {"large_frame/payload-*", 68, 3, 0, 2},
      {"large_frame/msg-seg*", 68, 3, 0, 4},
      {"large_frame/msg-payload-*", 68, 3, 0, 2},
  };
  auto cat = HostileCatalogue(Params());
  for (const Field& fd : fields) {
    std::string want = fd.name;
    bool prefix = want.back() == '*';
    if (prefix) want.pop_back();
    int seen = 0;
    for (const auto& h : cat) {
      if (prefix ? h.name.rfind(want, 0) != 0 : h.name != want) continue;
      seen++;
      SCOPED_TRACE(h.name);
      Bytes b = h.frame;
      ASSERT_GE(b.size(), fd.at + fd.width);
      uint64_t v = 0;
      for (size_t i = 0; i < fd.width; i++) v |= uint64_t(b[fd.at + i]) << (8 * i);
      EXPECT_NE(v, fd.good) << "the field at " << fd.at << " is not the spoiled one";
      rtscts_frame f;
      EXPECT_NE(rtscts::Decode(b, &f), RTSCTS_FRAME_OK);
      for (size_t i = 0; i < fd.width; i++) b[fd.at + i] = uint8_t(fd.good >> (8 * i));
      rtscts::Seal(b);
      EXPECT_EQ(rtscts::ErrName(rtscts::Decode(b, &f)), rtscts::ErrName(RTSCTS_FRAME_OK))
          << "put right at " << fd.at;
    }
    EXPECT_EQ(seen, fd.count) << fd.name;
  }
  // The ACK about an unknown stream that grants: grant at 56, about the
  // ack_stream at 36.
  int grants = 0;
  for (const auto& h : cat) {
    if (h.name != "unknown_stream/ack-grant") continue;
    grants++;
    rtscts_frame f;
    ASSERT_EQ(rtscts::Decode(h.frame, &f), RTSCTS_FRAME_OK);
    EXPECT_EQ(f.grant, ~0u);
    EXPECT_NE(f.ack_stream, 0u);
    EXPECT_EQ(h.frame[56] & h.frame[57] & h.frame[58] & h.frame[59], 0xff);
  }
  EXPECT_EQ(grants, 1);
}

TEST(Hostile, TruncatedFramesAreShorterThanTheHeadersTheyClaim) {
  for (const auto& h : HostileCatalogue(Params())) {
    if (h.kind != "truncated") continue;
    if (h.frame.size() >= 2 && rtscts_hdr_len(h.frame[1]))
      EXPECT_LT(h.frame.size(), rtscts_hdr_len(h.frame[1])) << h.name;
    else
      EXPECT_LT(h.frame.size(), size_t{RTSCTS_HDR_LEN}) << h.name;
  }
}

TEST(Hostile, NamesAreUniqueAndFramesFitAnEthernetMtu) {
  std::set<std::string> names;
  for (const auto& h : HostileCatalogue(Params())) {
    EXPECT_TRUE(names.insert(h.name).second) << h.name;
    EXPECT_LE(h.frame.size(), 1500u) << h.name;
    EXPECT_EQ(h.name.rfind(h.kind + "/", 0), 0u) << h.name;
    EXPECT_FALSE(h.why.empty()) << h.name;
  }
}

TEST(Hostile, SameParametersSameBytes) {
  auto a = HostileCatalogue(Params()), b = HostileCatalogue(Params());
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); i++) {
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_EQ(a[i].frame, b[i].frame) << a[i].name;
  }
  HostileParams other = Params();
  other.seed = 2;
  auto c = HostileCatalogue(other);
  ASSERT_EQ(a.size(), c.size());
  size_t differ = 0;
  for (size_t i = 0; i < a.size(); i++) {
    if (a[i].frame != c[i].frame) {
      differ++;
      EXPECT_EQ(a[i].kind, "random") << a[i].name << ": only random frames follow the seed";
    }
  }
  EXPECT_GT(differ, 0u);
}

TEST(Hostile, RandomCountIsHonoured) {
  HostileParams p = Params();
  p.random = 0;
  auto none = HostileCatalogue(p);
  p.random = 100;
  auto many = HostileCatalogue(p);
  EXPECT_EQ(many.size(), none.size() + 100);
}

TEST(Hostile, RandomFramesHalfStartLikeAFrame) {
  uint64_t state = 7;
  int framelike = 0;
  for (int i = 0; i < 1000; i++) {
    Bytes b = RandomFrame(state, 300);
    EXPECT_LE(b.size(), 300u);
    if (b.size() > 1 && b[0] == RTSCTS_VERSION && rtscts_hdr_len(b[1])) framelike++;
    rtscts_frame f;
    EXPECT_NE(rtscts::Decode(b, &f), RTSCTS_FRAME_OK);
  }
  EXPECT_GT(framelike, 400);
}

}  // namespace
}  // namespace ptl_inject
