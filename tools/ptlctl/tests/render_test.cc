// SPDX-License-Identifier: BSD-3-Clause
// Decoding replies as the kernel sends them, and printing them.
#include "render.h"

#include <errno.h>
#include <gtest/gtest.h>
#include <linux/portals_netlink.h>

#include "attrs.h"
#include "objects.h"
#include "run.h"

namespace ptlctl {
namespace {

// What a newer kernel might add: an attribute and a counter this ptlctl
// does not know.
constexpr uint16_t kNewAttr = 60;
constexpr uint16_t kNewStat = 100;
static_assert(kNewAttr > PTL_A_MAX && kNewStat > PTL_STAT_MAX);

std::vector<uint8_t> IfaceReply() {
  return EncodeAttrs({
      U32Attr(PTL_A_IFACE, 0),
      U32Attr(PTL_A_NID, 0x0a000001),
      U8Attr(PTL_A_STATE, PTL_IFACE_UP),
      U32Attr(PTL_A_IFINDEX, 5),
      StringAttr(PTL_A_IFNAME, "veth0"),
      StringAttr(PTL_A_TRANSPORT, "rtscts"),
      U32Attr(PTL_A_MTU, 1500),
      U32Attr(PTL_A_EAGER_MAX, 4096),
      U16Attr(PTL_A_ETHERTYPE, 0x88b5),
      U32Attr(PTL_A_NIS, 2),
      U32Attr(PTL_A_PEERS, 1),
      U32Attr(kNewAttr, 42),
      NestAttr(PTL_A_STATS, {U64Attr(PTL_STAT_PAD, 0), U64Attr(PTL_STAT_TX_FRAMES, 12),
                             U64Attr(PTL_STAT_TX_BYTES, 3456), U64Attr(PTL_STAT_RX_FRAMES, 11),
                             U64Attr(PTL_STAT_RX_BYTES, 3000), U64Attr(PTL_STAT_DROPS, 1),
                             U64Attr(kNewStat, 9)}),
  });
}

TEST(DecodeIface, EveryAttributeAndUnknownOnesSkipped) {
  Iface i = DecodeIface(IfaceReply());
  EXPECT_EQ(i.iface, 0u);
  EXPECT_EQ(i.nid, 0x0a000001u);
  EXPECT_EQ(i.state, PTL_IFACE_UP);
  EXPECT_EQ(i.ifindex, 5u);
  EXPECT_EQ(i.ifname, "veth0");
  EXPECT_EQ(i.transport, "rtscts");
  EXPECT_EQ(i.mtu, 1500u);
  EXPECT_EQ(i.eager_max, 4096u);
  EXPECT_EQ(i.ethertype, 0x88b5);
  EXPECT_EQ(i.nis, 2u);
  EXPECT_EQ(i.peers, 1u);
  ASSERT_TRUE(i.stats);
  // PTL_STAT_PAD is alignment, not a counter; the unknown counter is kept.
  EXPECT_EQ(*i.stats, (Counters{{PTL_STAT_TX_FRAMES, 12},
                                {PTL_STAT_TX_BYTES, 3456},
                                {PTL_STAT_RX_FRAMES, 11},
                                {PTL_STAT_RX_BYTES, 3000},
                                {PTL_STAT_DROPS, 1},
                                {kNewStat, 9}}));
}

TEST(DecodeIface, AttributesOfTheWrongSizeAreIgnored) {
  Iface i = DecodeIface(
      EncodeAttrs({U16Attr(PTL_A_IFACE, 1), U32Attr(PTL_A_STATE, 1), U32Attr(PTL_A_NID, 7)}));
  EXPECT_FALSE(i.iface);
  EXPECT_FALSE(i.state);
  EXPECT_EQ(i.nid, 7u);
}

TEST(IfaceJson, SnakeCaseKeysStatsOnlyWithDashS) {
  Iface i = DecodeIface(IfaceReply());
  JsonWriter w;
  IfaceJson(w, i, false);
  EXPECT_EQ(w.str(),
            R"({"iface":0,"nid":167772161,"state":"up","ifindex":5,"ifname":"veth0",)"
            R"("transport":"rtscts","mtu":1500,"eager_max":4096,"ethertype":34997,"nis":2,)"
            R"("peers":1,"auth":"none"})");
  JsonWriter s;
  IfaceJson(s, i, true);
  EXPECT_NE(s.str().find(R"("stats":{"tx_frames":12,"tx_bytes":3456,"rx_frames":11,)"
                         R"("rx_bytes":3000,"drops":1,"stat_100":9}})"),
            std::string::npos)
      << s.str();
}

TEST(IfaceText, OneBlockLikeIpLink) {
  Iface i = DecodeIface(IfaceReply());
  EXPECT_EQ(IfaceText(i, false),
            "iface 0: state up dev veth0 ifindex 5 transport rtscts\n"
            "    nid 10.0.0.1 (167772161) mtu 1500 eager 4096 ethertype 0x88b5\n"
            "    nis 2 peers 1 unauthenticated\n");
  EXPECT_EQ(IfaceText(i, true),
            "iface 0: state up dev veth0 ifindex 5 transport rtscts\n"
            "    nid 10.0.0.1 (167772161) mtu 1500 eager 4096 ethertype 0x88b5\n"
            "    nis 2 peers 1 unauthenticated\n"
            "    TX:      frames  bytes\n"
            "             12      3456\n"
            "    RX:      frames  bytes\n"
            "             11      3000\n"
            "    errors:  drops\n"
            "             1\n"
            "    other:   stat_100\n"
            "             9\n");
}

// Issue 20: a bound interface says whether its frames are authenticated,
// and the frames a key refused are counted where bad frames are.
TEST(IfaceText, AnAuthenticatedInterface) {
  std::vector<uint8_t> reply = IfaceReply();
  std::vector<uint8_t> more = EncodeAttrs(
      {StringAttr(PTL_A_AUTH, "hmac(sha256)"),
       NestAttr(PTL_A_STATS, {U64Attr(PTL_STAT_BAD_FRAMES, 2), U64Attr(PTL_STAT_AUTH_FAILED, 5)})});
  reply.insert(reply.end(), more.begin(), more.end());
  Iface i = DecodeIface(reply);
  EXPECT_EQ(i.auth, "hmac(sha256)");
  std::string text = IfaceText(i, true);
  EXPECT_NE(text.find("    nis 2 peers 1 auth hmac(sha256)\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("unauthenticated"), std::string::npos) << text;
  EXPECT_NE(text.find("    RX:      bad  auth_failed\n"
                      "             2    5\n"),
            std::string::npos)
      << text;
  JsonWriter w;
  IfaceJson(w, i, true);
  EXPECT_NE(w.str().find(R"x("auth":"hmac(sha256)")x"), std::string::npos) << w.str();
  EXPECT_NE(w.str().find(R"("auth_failed":5)"), std::string::npos) << w.str();
}

TEST(IfaceText, AnUnboundInterface) {
  Iface i = DecodeIface(EncodeAttrs({U32Attr(PTL_A_IFACE, 1), U32Attr(PTL_A_NID, 7),
                                     U8Attr(PTL_A_STATE, PTL_IFACE_LOCAL), U32Attr(PTL_A_NIS, 0)}));
  EXPECT_EQ(IfaceText(i, true), "iface 1: state local\n    nid 7\n    nis 0\n");
  Iface odd = DecodeIface(EncodeAttrs({U32Attr(PTL_A_IFACE, 1), U8Attr(PTL_A_STATE, 9)}));
  EXPECT_EQ(IfaceText(odd, false), "iface 1: state 9\n");
  JsonWriter w;
  IfaceJson(w, odd, false);
  EXPECT_EQ(w.str(), R"({"iface":1,"state":9})");
}

std::vector<uint8_t> PeerReply() {
  uint8_t mac[] = {2, 0, 10, 0, 0, 2};
  return EncodeAttrs({
      U32Attr(PTL_A_IFACE, 0),
      U32Attr(PTL_A_NID, 0x0a000002),
      BinaryAttr(PTL_A_PEER_LLADDR, mac),
      U8Attr(PTL_A_PEER_STATE, PTL_PEER_UP),
      U32Attr(PTL_A_PEER_FLAGS, PTL_PEER_F_STATIC | 0x10),
      U32Attr(PTL_A_PEER_INCARNATION, 0x1234abcd),
      U32Attr(PTL_A_PEER_RTT_US, 150),
      U32Attr(PTL_A_PEER_RTTVAR_US, 40),
      U32Attr(PTL_A_PEER_RTO_US, 200000),
      U32Attr(PTL_A_PEER_CWND, 16),
      U32Attr(PTL_A_PEER_INFLIGHT, 0),
      U32Attr(PTL_A_PEER_QUEUED, 0),
      U32Attr(PTL_A_PEER_IDLE_MS, 1200),
      NestAttr(PTL_A_PEER_STATS,
               {U64Attr(PTL_STAT_RETRANSMITS, 3), U64Attr(PTL_STAT_PEER_RESTARTS, 1)}),
  });
}

TEST(Peer, TextAndJson) {
  Peer p = DecodePeer(PeerReply());
  EXPECT_EQ(PeerText(p, true),
            "peer 10.0.0.2 (167772162) iface 0 lladdr 02:00:0a:00:00:02 state up static flags "
            "0x10\n"
            "    incarnation 0x1234abcd idle 1200ms\n"
            "    rtt 150us rttvar 40us rto 200000us cwnd 16 inflight 0 queued 0\n"
            "    TX:      retransmits\n"
            "             3\n"
            "    peers:   restarts\n"
            "             1\n");
  JsonWriter w;
  PeerJson(w, p, true);
  EXPECT_EQ(w.str(),
            R"({"iface":0,"nid":167772162,"lladdr":"02:00:0a:00:00:02","state":"up",)"
            R"("flags":["static","0x10"],"incarnation":305441741,"rtt_us":150,"rttvar_us":40,)"
            R"("rto_us":200000,"cwnd":16,"inflight":0,"queued":0,"idle_ms":1200,)"
            R"("stats":{"retransmits":3,"peer_restarts":1}})");
}

// A connection of the rdma transport: no lladdr nor timers, credits.
TEST(Peer, RdmaConnection) {
  Peer p = DecodePeer(EncodeAttrs({
      U32Attr(PTL_A_IFACE, 1),
      U32Attr(PTL_A_NID, 0x0a000002),
      U8Attr(PTL_A_PEER_STATE, PTL_PEER_CONNECTING),
      U32Attr(PTL_A_PEER_FLAGS, PTL_PEER_F_ACTIVE | PTL_PEER_F_SENDS),
      U32Attr(PTL_A_PEER_CREDITS, 31),
      U32Attr(PTL_A_PEER_CREDITS_OWED, 2),
      U32Attr(PTL_A_PEER_TX_BUFS, 3),
      U32Attr(PTL_A_PEER_MRS, 1),
      NestAttr(PTL_A_PEER_STATS, {U64Attr(PTL_STAT_TX_FRAMES, 5), U64Attr(PTL_STAT_RTS, 1)}),
  }));
  EXPECT_EQ(PeerText(p, true),
            "peer 10.0.0.2 (167772162) iface 1 state connecting active sends\n"
            "    credits 31 owed 2 bufs 3 mrs 1\n"
            "    TX:      frames  rts\n"
            "             5       1\n");
  JsonWriter w;
  PeerJson(w, p, false);
  EXPECT_EQ(w.str(), R"({"iface":1,"nid":167772162,"state":"connecting",)"
                     R"("flags":["active","sends"],"credits":31,"credits_owed":2,)"
                     R"("tx_bufs":3,"mrs":1})");
  p.state = PTL_PEER_UP;
  p.flags = PTL_PEER_F_CLOSING;
  EXPECT_EQ(PeerText(p, false),
            "peer 10.0.0.2 (167772162) iface 1 state up closing\n"
            "    credits 31 owed 2 bufs 3 mrs 1\n");
  p.state = PTL_PEER_DEAD;
  p.flags = 0;
  EXPECT_EQ(PeerText(p, false),
            "peer 10.0.0.2 (167772162) iface 1 state dead\n"
            "    credits 31 owed 2 bufs 3 mrs 1\n");
}

TEST(Ni, TextAndJsonWithAHostileComm) {
  Ni n = DecodeNi(EncodeAttrs({
      U32Attr(PTL_A_IFACE, 0),
      U32Attr(PTL_A_NID, 0x0a000001),
      U32Attr(PTL_A_PID, 1025),
      U32Attr(PTL_A_UID, 0),
      U32Attr(PTL_A_JID, 0xfffffffe),  // PTL_JID_NONE
      U32Attr(PTL_A_OWNER_PID, 321),
      StringAttr(PTL_A_COMM, "evil\x1b[2J\xff"),
      NestAttr(PTL_A_STATS, {U64Attr(PTL_STAT_NI_MES, 1), U64Attr(PTL_STAT_NI_MDS, 2),
                             U64Attr(PTL_STAT_NI_EQS, 1), U64Attr(PTL_STAT_NI_MSGS_IN_FLIGHT, 0)}),
  }));
  EXPECT_EQ(NiText(n, false),
            "ni iface 0 nid 10.0.0.1 (167772161) pid 1025 uid 0 (root) jid none owner 321 "
            "(evil?[2J?)\n");
  EXPECT_EQ(NiText(n, true).substr(NiText(n, false).size()),
            "    objects: mes  mds  eqs  msgs_in_flight\n"
            "             1    2    1    0\n");
  JsonWriter w;
  NiJson(w, n, true);
  EXPECT_EQ(w.str(),
            R"({"iface":0,"nid":167772161,"pid":1025,"uid":0,"jid":4294967294,"owner_pid":321,)"
            R"("comm":"evil\u001b[2J\ufffd","stats":{"ni_mes":1,"ni_mds":2,"ni_eqs":1,)"
            R"("ni_msgs_in_flight":0}})");
  Ni gone = DecodeNi(EncodeAttrs(
      {U32Attr(PTL_A_PID, 5), U32Attr(PTL_A_OWNER_PID, 0), StringAttr(PTL_A_COMM, "x")}));
  EXPECT_EQ(NiText(gone, false), "ni pid 5 owner none (x)\n");
}

TEST(PidRes, RangesAndSinglePids) {
  PidRes r = DecodePidRes(EncodeAttrs({U32Attr(PTL_A_IFACE, 0), U32Attr(PTL_A_PID, 100),
                                       U32Attr(PTL_A_PID_LAST, 109), U32Attr(PTL_A_UID, 0)}));
  EXPECT_EQ(PidResText(r), "pid 100-109 iface 0 uid 0 (root)\n");
  JsonWriter w;
  PidResJson(w, r);
  EXPECT_EQ(w.str(), R"({"iface":0,"pid":100,"pid_last":109,"uid":0})");
  PidRes one = DecodePidRes(EncodeAttrs({U32Attr(PTL_A_IFACE, 1), U32Attr(PTL_A_PID, 77),
                                         U32Attr(PTL_A_PID_LAST, 77), U32Attr(PTL_A_UID, 4242)}));
  EXPECT_EQ(PidResText(one), "pid 77 iface 1 uid 4242\n");
  PidRes no_last = DecodePidRes(EncodeAttrs({U32Attr(PTL_A_PID, 77)}));
  JsonWriter w2;
  PidResJson(w2, no_last);
  EXPECT_EQ(w2.str(), R"({"pid":77,"pid_last":77})");
}

TEST(PeerEvent, OneLinePerEvent) {
  PeerEvent e =
      DecodePeerEvent(EncodeAttrs({U32Attr(PTL_A_IFACE, 0), U32Attr(PTL_A_NID, 0x0a000002),
                                   U8Attr(PTL_A_EVENT, PTL_EVENT_PEER_RESTARTED),
                                   U32Attr(PTL_A_PEER_INCARNATION, 7), U32Attr(PTL_A_FAILED, 3)}));
  EXPECT_EQ(EventText(e),
            "iface 0 peer 10.0.0.2 (167772162) restarted incarnation 0x00000007 failed 3\n");
  JsonWriter w(true);  // monitor writes compact lines; the writer can do both
  EventJson(w, e);
  JsonWriter c;
  EventJson(c, e);
  EXPECT_EQ(c.str(),
            R"({"iface":0,"nid":167772162,"event":"restarted","incarnation":7,"failed":3})");
  for (uint8_t ev : {PTL_EVENT_PEER_UP, PTL_EVENT_PEER_UNREACHABLE, PTL_EVENT_PEER_RESET})
    EXPECT_FALSE(EventName(ev).empty());
  PeerEvent future = DecodePeerEvent(EncodeAttrs({U32Attr(PTL_A_NID, 9), U8Attr(PTL_A_EVENT, 77)}));
  EXPECT_EQ(EventText(future), "peer 9 77\n");
}

TEST(Stats, TheGetStatsReplyGroupedAsText) {
  Counters c = DecodeStats(EncodeAttrs({NestAttr(
      PTL_A_STATS, {U64Attr(PTL_STAT_OPEN_FILES, 2), U64Attr(PTL_STAT_NIS, 1),
                    U64Attr(PTL_STAT_MDS, 3), U64Attr(PTL_STAT_EQS, 1),
                    U64Attr(PTL_STAT_PINNED_PAGES, 12), U64Attr(PTL_STAT_INTRA_MSGS, 1000),
                    U64Attr(PTL_STAT_DROPS, 0), U64Attr(PTL_STAT_CORE_OBJECTS, 17)})}));
  EXPECT_EQ(CountersText(c),
            "    errors:  drops\n"
            "             0\n"
            "    local:   msgs\n"
            "             1000\n"
            "    objects: open_files  nis  mds  eqs  core_objects  pinned_pages\n"
            "             2           1    3    1    17            12\n");
  JsonWriter w;
  CountersJson(w, c);
  EXPECT_EQ(w.str(),
            R"({"open_files":2,"nis":1,"mds":3,"eqs":1,"pinned_pages":12,"intra_msgs":1000,)"
            R"("drops":0,"core_objects":17})");
}

TEST(Names, EveryKnownCounterAndAttributeHasOne) {
  for (uint16_t id = PTL_STAT_TX_FRAMES; id <= PTL_STAT_MAX; ++id)
    EXPECT_FALSE(StatName(id).empty()) << id;
  EXPECT_TRUE(StatName(PTL_STAT_PAD).empty());
  EXPECT_TRUE(StatName(kNewStat).empty());
  for (uint16_t type = PTL_A_IFACE; type <= PTL_A_MAX; ++type)
    EXPECT_EQ(AttrName(type).find("attribute"), std::string::npos) << type;
  EXPECT_EQ(AttrName(PTL_A_PEER_LLADDR), "peer_lladdr");
  EXPECT_EQ(AttrName(kNewAttr), "attribute 60");
}

Command C(std::vector<std::string> args) { return ParseCommandLine(args).command; }

TEST(ErrorMessage, CapNetAdminExtendedAckAndHints) {
  EXPECT_EQ(ErrorMessage(C({"iface", "bind", "0", "dev", "veth0"}), {EPERM, "", {}, {}}),
            "ptlctl: iface bind 0 needs CAP_NET_ADMIN (run it as root)\n");
  EXPECT_EQ(ErrorMessage(C({"pid", "reserve", "100-109", "uid", "0"}),
                         {EEXIST, "overlaps a reserved range", {}, {}}),
            "ptlctl: pid reserve 100-109 iface 0: overlaps a reserved range (File exists)\n"
            "ptlctl: ranges may not overlap: ptlctl pid show lists the reserved ones\n");
  EXPECT_EQ(ErrorMessage(C({"iface", "show", "9"}),
                         {EINVAL, "Attribute failed policy validation", PTL_A_IFACE, {}}),
            "ptlctl: iface show 9: Attribute failed policy validation (Invalid argument) [in "
            "attribute iface]\n");
  EXPECT_EQ(ErrorMessage(C({"stats"}), {EINVAL, "", {}, 40}),
            "ptlctl: stats: Invalid argument\n"
            "ptlctl: the kernel wants attribute 40, which ptlctl did not send: is "
            "ptl.ko newer than ptlctl?\n");
  EXPECT_EQ(ErrorMessage(C({"peer", "del", "10.0.0.9"}), {ENOENT, "", {}, {}}),
            "ptlctl: peer del 10.0.0.9 iface 0: No such file or directory\n"
            "ptlctl: ptlctl peer show iface 0 lists the peers\n");
}

// The kernel's own reason is not followed by a guess at another one.
TEST(ErrorMessage, NoGuessWhenTheKernelExplained) {
  const Command set = C({"iface", "set", "0", "eager", "2000000"});
  EXPECT_EQ(ErrorMessage(set, {EINVAL, "eager is at most 1048576 bytes (1M)", {}, {}}),
            "ptlctl: iface set 0: eager is at most 1048576 bytes (1M) (Invalid argument)\n");
  EXPECT_EQ(ErrorMessage(set, {EINVAL, "", {}, {}}),
            "ptlctl: iface set 0: Invalid argument\n"
            "ptlctl: is interface 0 bound? (ptlctl iface show)\n");
}

}  // namespace
}  // namespace ptlctl
