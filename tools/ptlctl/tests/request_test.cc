// SPDX-License-Identifier: BSD-3-Clause
#include "request.h"

#include <gtest/gtest.h>
#include <linux/portals_netlink.h>

namespace ptlctl {
namespace {

Request R(std::vector<std::string> args) { return BuildRequest(ParseCommandLine(args).command); }

TEST(Request, IfaceShowIsADumpOrADoWithTheIndex) {
  Request all = R({"iface"});
  EXPECT_EQ(all.cmd, PTL_CMD_GET_IFACE);
  EXPECT_TRUE(all.dump);
  EXPECT_TRUE(all.attrs.empty());
  Request one = R({"iface", "show", "2"});
  EXPECT_FALSE(one.dump);
  EXPECT_EQ(one.attrs, (std::vector<Attr>{U32Attr(PTL_A_IFACE, 2)}));
}

TEST(Request, IfaceBindSendsTheDeviceByNameAndOnlyWhatWasGiven) {
  Request r = R({"iface", "bind", "1", "dev", "veth0", "nid", "10.0.0.1", "transport", "rtscts",
                 "eager", "4096", "ethertype", "0x88b6"});
  EXPECT_EQ(r.cmd, PTL_CMD_SET_IFACE);
  EXPECT_FALSE(r.dump);
  EXPECT_EQ(r.attrs, (std::vector<Attr>{
                         U32Attr(PTL_A_IFACE, 1), StringAttr(PTL_A_IFNAME, "veth0"),
                         StringAttr(PTL_A_TRANSPORT, "rtscts"), U32Attr(PTL_A_NID, 0x0a000001),
                         U32Attr(PTL_A_EAGER_MAX, 4096), U16Attr(PTL_A_ETHERTYPE, 0x88b6)}));
  // Strings go NUL-terminated (NLA_NUL_STRING policies need it).
  EXPECT_EQ(StringAttr(PTL_A_IFNAME, "veth0").payload.back(), 0);
  EXPECT_EQ(R({"iface", "bind", "0", "dev", "eth0"}).attrs,
            (std::vector<Attr>{U32Attr(PTL_A_IFACE, 0), StringAttr(PTL_A_IFNAME, "eth0")}));
  EXPECT_EQ(R({"iface", "set", "0", "eager", "1K"}).attrs,
            (std::vector<Attr>{U32Attr(PTL_A_IFACE, 0), U32Attr(PTL_A_EAGER_MAX, 1024)}));
}

TEST(Request, IfaceBindSendsTheKeyItWasGiven) {
  IfaceSet c;
  c.bind = true;
  c.dev = "eth0";
  c.key_file = "k";
  c.key.assign(PTL_AUTH_KEY_LEN, 0x42);
  Request r = BuildRequest(Command(c));
  EXPECT_EQ(r.attrs, (std::vector<Attr>{U32Attr(PTL_A_IFACE, 0), StringAttr(PTL_A_IFNAME, "eth0"),
                                        BinaryAttr(PTL_A_AUTH_KEY, c.key)}));
}

TEST(Request, IfaceUnbind) {
  Request r = R({"iface", "unbind", "3"});
  EXPECT_EQ(r.cmd, PTL_CMD_DEL_IFACE);
  EXPECT_EQ(r.attrs, (std::vector<Attr>{U32Attr(PTL_A_IFACE, 3)}));
}

TEST(Request, PeersAlwaysNameTheirInterface) {
  Request show = R({"peer"});
  EXPECT_EQ(show.cmd, PTL_CMD_GET_PEER);
  EXPECT_TRUE(show.dump);
  EXPECT_EQ(show.attrs, (std::vector<Attr>{U32Attr(PTL_A_IFACE, 0)}));
  Request add = R({"peer", "add", "10.0.0.2", "lladdr", "02:00:0a:00:00:02", "iface", "1"});
  EXPECT_EQ(add.cmd, PTL_CMD_NEW_PEER);
  uint8_t mac[] = {2, 0, 10, 0, 0, 2};
  EXPECT_EQ(add.attrs, (std::vector<Attr>{U32Attr(PTL_A_IFACE, 1), U32Attr(PTL_A_NID, 0x0a000002),
                                          BinaryAttr(PTL_A_PEER_LLADDR, mac)}));
  Request del = R({"peer", "del", "10.0.0.2"});
  EXPECT_EQ(del.cmd, PTL_CMD_DEL_PEER);
  EXPECT_EQ(del.attrs,
            (std::vector<Attr>{U32Attr(PTL_A_IFACE, 0), U32Attr(PTL_A_NID, 0x0a000002)}));
}

TEST(Request, NiAndStats) {
  Request ni = R({"ni"});
  EXPECT_EQ(ni.cmd, PTL_CMD_GET_NI);
  EXPECT_TRUE(ni.dump);
  Request stats = R({"stats"});
  EXPECT_EQ(stats.cmd, PTL_CMD_GET_STATS);
  EXPECT_FALSE(stats.dump);
  EXPECT_TRUE(stats.attrs.empty());
}

TEST(Request, PidReservationsSendPidLastOnlyForRanges) {
  Request one = R({"pid", "reserve", "77", "uid", "65534"});
  EXPECT_EQ(one.cmd, PTL_CMD_NEW_PIDRES);
  EXPECT_EQ(one.attrs, (std::vector<Attr>{U32Attr(PTL_A_IFACE, 0), U32Attr(PTL_A_PID, 77),
                                          U32Attr(PTL_A_UID, 65534)}));
  Request range = R({"pid", "reserve", "100-109", "uid", "0", "iface", "1"});
  EXPECT_EQ(range.attrs, (std::vector<Attr>{U32Attr(PTL_A_IFACE, 1), U32Attr(PTL_A_PID, 100),
                                            U32Attr(PTL_A_UID, 0), U32Attr(PTL_A_PID_LAST, 109)}));
  Request del = R({"pid", "unreserve", "100", "iface", "1"});
  EXPECT_EQ(del.cmd, PTL_CMD_DEL_PIDRES);
  EXPECT_EQ(del.attrs, (std::vector<Attr>{U32Attr(PTL_A_IFACE, 1), U32Attr(PTL_A_PID, 100)}));
  Request show = R({"pid"});
  EXPECT_EQ(show.cmd, PTL_CMD_GET_PIDRES);
  EXPECT_TRUE(show.dump);
  EXPECT_TRUE(show.attrs.empty());
  EXPECT_EQ(R({"pid", "show", "iface", "2"}).attrs, (std::vector<Attr>{U32Attr(PTL_A_IFACE, 2)}));
}

TEST(Request, HelpVersionAndMonitorHaveNone) {
  EXPECT_THROW(R({"help"}), std::logic_error);
  EXPECT_THROW(R({"monitor"}), std::logic_error);
}

}  // namespace
}  // namespace ptlctl
