// SPDX-License-Identifier: BSD-3-Clause
// The netlink session against the kernel's own controller family (nlctrl,
// in every kernel): resolution, do, dump, errors with extended ACKs. The
// portals family is tested in a guest (selftests/ptlctl_test.sh).
#include "netlink.h"

#include <errno.h>
#include <gtest/gtest.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <cstring>
#include <memory>

#include "attrs.h"

namespace ptlctl {
namespace {

// A session on nlctrl, or a skip where generic netlink is unavailable.
std::unique_ptr<Session> Nlctrl() {
  try {
    return std::make_unique<Session>("nlctrl", 1);
  } catch (const SessionError& e) {
    return nullptr;
  }
}

#define SESSION_OR_SKIP(s) \
  auto s = Nlctrl();       \
  if (!s) GTEST_SKIP() << "no generic netlink socket here"

TEST(Session, ResolvesAFamilyItsVersionAndGroups) {
  SESSION_OR_SKIP(s);
  EXPECT_EQ(s->family_id(), GENL_ID_CTRL);
  EXPECT_GE(s->family_version(), 1u);
  EXPECT_EQ(s->groups().count("notify"), 1u);
}

TEST(Session, AMissingFamilyIsFamilyMissing) {
  if (!Nlctrl()) GTEST_SKIP() << "no generic netlink socket here";
  EXPECT_THROW(Session("ptlctl_nofam", 1), FamilyMissing);
}

TEST(Session, ADumpReturnsEveryMessage) {
  SESSION_OR_SKIP(s);
  auto replies = s->Run(Request{CTRL_CMD_GETFAMILY, true, {}});
  bool found = false;
  for (const Reply& r : replies)
    for (const AttrView& a : ParseAttrs(r.attrs))
      if (a.type == CTRL_ATTR_FAMILY_NAME && a.String() == "nlctrl") found = true;
  EXPECT_GE(replies.size(), 1u);
  EXPECT_TRUE(found);
  EXPECT_FALSE(s->dump_interrupted());
  // The socket stays usable: a do after the dump.
  auto one =
      s->Run(Request{CTRL_CMD_GETFAMILY, false, {StringAttr(CTRL_ATTR_FAMILY_NAME, "nlctrl")}});
  EXPECT_EQ(one.size(), 1u);
}

TEST(Session, TheKernelsErrnoAndExtendedAckComeThrough) {
  SESSION_OR_SKIP(s);
  // Longer than the policy's GENL_NAMSIZ - 1: refused by validation, which
  // names the attribute and explains.
  std::string long_name(40, 'x');
  try {
    s->Run(Request{CTRL_CMD_GETFAMILY, false, {StringAttr(CTRL_ATTR_FAMILY_NAME, long_name)}});
    FAIL() << "accepted";
  } catch (const NetlinkError& e) {
    EXPECT_TRUE(e.error() == ERANGE || e.error() == EINVAL) << e.error();
    EXPECT_FALSE(e.details().message.empty());
    EXPECT_EQ(e.details().bad_attr, CTRL_ATTR_FAMILY_NAME);
  }
  try {
    s->Run(Request{CTRL_CMD_GETFAMILY, false, {StringAttr(CTRL_ATTR_FAMILY_NAME, "ptlctl_nofam")}});
    FAIL() << "found";
  } catch (const NetlinkError& e) {
    EXPECT_EQ(e.error(), ENOENT);
  }
}

// Messages built by hand, as the kernel lays them out.
std::vector<uint8_t> Message(uint16_t type, uint16_t flags, const std::vector<uint8_t>& payload) {
  nlmsghdr h{static_cast<uint32_t>(NLMSG_HDRLEN + payload.size()), type, flags, 1, 0};
  std::vector<uint8_t> out(h.nlmsg_len);
  std::memcpy(out.data(), &h, sizeof(h));
  if (!payload.empty()) std::memcpy(out.data() + NLMSG_HDRLEN, payload.data(), payload.size());
  return out;
}

std::vector<uint8_t> Sent() {
  // nlmsghdr, genlmsghdr, then PTL-like attributes: type 2 at offset 20,
  // type 6 at offset 28.
  std::vector<uint8_t> attrs = EncodeAttrs({U32Attr(2, 0), StringAttr(6, "veth0")});
  std::vector<uint8_t> payload(GENL_HDRLEN, 0);
  payload.insert(payload.end(), attrs.begin(), attrs.end());
  return Message(0x20, NLM_F_REQUEST | NLM_F_ACK, payload);
}

TEST(DecodeAck, CappedErrorWithMessageOffsetAndMissingAttribute) {
  std::vector<uint8_t> sent = Sent();
  nlmsgerr e{};
  e.error = -EBUSY;
  std::memcpy(&e.msg, sent.data(), sizeof(nlmsghdr));
  std::vector<uint8_t> payload(sizeof(e));
  std::memcpy(payload.data(), &e, sizeof(e));
  std::vector<uint8_t> tlvs =
      EncodeAttrs({StringAttr(NLMSGERR_ATTR_MSG, "bound to another device: unbind it first"),
                   U32Attr(NLMSGERR_ATTR_OFFS, NLMSG_HDRLEN + GENL_HDRLEN + 8),
                   U32Attr(NLMSGERR_ATTR_MISS_TYPE, 13)});
  payload.insert(payload.end(), tlvs.begin(), tlvs.end());
  auto d = DecodeAck(Message(NLMSG_ERROR, NLM_F_CAPPED | NLM_F_ACK_TLVS, payload), sent);
  EXPECT_EQ(d.error, EBUSY);
  EXPECT_EQ(d.message, "bound to another device: unbind it first");
  EXPECT_EQ(d.bad_attr, 6);
  EXPECT_EQ(d.missing_attr, 13u);
}

TEST(DecodeAck, UncappedErrorSkipsTheEchoedRequest) {
  std::vector<uint8_t> sent = Sent();
  std::vector<uint8_t> payload(sizeof(int));
  int err = -EINVAL;
  std::memcpy(payload.data(), &err, sizeof(err));
  payload.insert(payload.end(), sent.begin(), sent.end());
  std::vector<uint8_t> tlvs = EncodeAttrs({StringAttr(NLMSGERR_ATTR_MSG, "why")});
  payload.insert(payload.end(), tlvs.begin(), tlvs.end());
  auto d = DecodeAck(Message(NLMSG_ERROR, NLM_F_ACK_TLVS, payload), sent);
  EXPECT_EQ(d.error, EINVAL);
  EXPECT_EQ(d.message, "why");
  EXPECT_FALSE(d.bad_attr);
}

TEST(DecodeAck, ADumpsErrorIsInItsDoneMessage) {
  std::vector<uint8_t> payload(sizeof(int));
  int err = -ENOENT;
  std::memcpy(payload.data(), &err, sizeof(err));
  std::vector<uint8_t> tlvs = EncodeAttrs({StringAttr(NLMSGERR_ATTR_MSG, "interface not bound")});
  payload.insert(payload.end(), tlvs.begin(), tlvs.end());
  auto d = DecodeAck(Message(NLMSG_DONE, NLM_F_MULTI | NLM_F_ACK_TLVS, payload), {});
  EXPECT_EQ(d.error, ENOENT);
  EXPECT_EQ(d.message, "interface not bound");
  int zero = 0;
  std::vector<uint8_t> ok(sizeof(int));
  std::memcpy(ok.data(), &zero, sizeof(zero));
  EXPECT_EQ(DecodeAck(Message(NLMSG_DONE, NLM_F_MULTI, ok), {}).error, 0);
}

TEST(DecodeAck, TruncatedMessagesDecodeAsNothing) {
  EXPECT_EQ(DecodeAck({}, {}).error, 0);
  EXPECT_EQ(DecodeAck(Message(NLMSG_ERROR, 0, {1, 2}), {}).error, 0);
  // An offset outside the request names no attribute.
  nlmsgerr e{};
  e.error = -EINVAL;
  std::vector<uint8_t> payload(sizeof(e));
  std::memcpy(payload.data(), &e, sizeof(e));
  std::vector<uint8_t> tlvs = EncodeAttrs({U32Attr(NLMSGERR_ATTR_OFFS, 4000)});
  payload.insert(payload.end(), tlvs.begin(), tlvs.end());
  auto d = DecodeAck(Message(NLMSG_ERROR, NLM_F_CAPPED | NLM_F_ACK_TLVS, payload), Sent());
  EXPECT_EQ(d.error, EINVAL);
  EXPECT_FALSE(d.bad_attr);
}

}  // namespace
}  // namespace ptlctl
