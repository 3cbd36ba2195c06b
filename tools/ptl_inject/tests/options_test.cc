// ptl_inject's command line, nids, MACs and Ethernet framing.
#include "options.h"

#include <gtest/gtest.h>

namespace ptl_inject {
namespace {

Options Parse(std::vector<std::string> args) { return ParseCommandLine(args); }

TEST(Options, NidsAreDottedDecimalOrHex) {
  EXPECT_EQ(ParseNid("10.0.0.2"), 0x0a000002u);
  EXPECT_EQ(ParseNid("0x0a000100"), 0x0a000100u);
  EXPECT_EQ(ParseNid("167772162"), 0x0a000002u);
  EXPECT_EQ(ParseNid("4294967295"), 0xffffffffu);
  for (const char* bad : {"", "10.0.0", "10.0.0.256", "-1", "4294967296", "abc", "0x", "1 "})
    EXPECT_FALSE(ParseNid(bad)) << bad;
  EXPECT_EQ(FormatNid(0x0a000102), "10.0.1.2");
}

TEST(Options, MacsRoundTrip) {
  auto m = ParseMac("02:50:0A:00:01:ff");
  ASSERT_TRUE(m);
  EXPECT_EQ(FormatMac(*m), "02:50:0a:00:01:ff");
  EXPECT_EQ(ParseMac("02-50-0a-00-01-ff"), m);
  for (const char* bad :
       {"", "02:50:0a:00:01", "02:50:0a:00:01:fg", "02:50:0a:00:01:ff:", "0250.0a00.01ff"})
    EXPECT_FALSE(ParseMac(bad)) << bad;
}

TEST(Options, EthernetHeaderIsDstSrcTypeBigEndian) {
  Mac dst = {1, 2, 3, 4, 5, 6}, src = {7, 8, 9, 10, 11, 12};
  Bytes payload = {0xaa, 0xbb};
  Bytes b = EthernetFrame(dst, src, 0x88B5, payload);
  EXPECT_EQ(b, (Bytes{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0x88, 0xB5, 0xaa, 0xbb}));
}

TEST(Options, PeersAsTheMemoryTestRunsIt) {
  Options o = Parse({"-j", "peers", "-i", "veth-a", "--peers", "1000", "--first-nid", "0x0a000100",
                     "--target", "10.0.0.2:77", "--portal=4", "--payload", "64"});
  EXPECT_EQ(o.mode, Mode::kPeers);
  EXPECT_TRUE(o.json);
  EXPECT_EQ(o.iface, "veth-a");
  EXPECT_EQ(o.peers.count, 1000u);
  EXPECT_EQ(o.peers.first_nid, 0x0a000100u);
  EXPECT_EQ(o.peers.target.nid, 0x0a000002u);
  EXPECT_EQ(o.peers.target.pid, 77u);
  EXPECT_EQ(o.peers.portal, 4u);
  EXPECT_EQ(o.peers.payload, 64u);
  EXPECT_TRUE(o.listen);
  EXPECT_EQ(o.dst_mac, kBroadcast);
}

TEST(Options, HostileAndFlood) {
  Options o = Parse({"hostile", "-i", "eth0", "--dst-nid", "10.0.0.2", "--dst-mac",
                     "02:00:00:00:00:01", "--kind", "bad_crc,random", "--repeat", "3", "-v"});
  EXPECT_EQ(o.mode, Mode::kHostile);
  EXPECT_EQ(o.hostile.dst_nid, 0x0a000002u);
  EXPECT_EQ(FormatMac(o.dst_mac), "02:00:00:00:00:01");
  EXPECT_EQ(o.kinds, (std::vector<std::string>{"bad_crc", "random"}));
  EXPECT_EQ(o.repeat, 3u);
  EXPECT_TRUE(o.verbose);
  o = Parse({"flood", "-i", "eth0", "--dst-nid", "7", "--count", "100000", "--what", "syn",
             "--ethertype", "0x88b6"});
  EXPECT_EQ(o.mode, Mode::kFlood);
  EXPECT_EQ(o.flood, FloodWhat::kSyn);
  EXPECT_EQ(o.count, 100000u);
  EXPECT_EQ(o.ethertype, 0x88b6);
  EXPECT_EQ(o.peers.target.nid, 7u) << "a SYN flood targets the receiver";
}

TEST(Options, GapDefaultsTo64NodesOfMtuSizedFrames) {
  Options o = Parse({"gap", "-i", "va", "--dst-nid", "10.0.0.2", "--frames", "40"});
  EXPECT_EQ(o.mode, Mode::kGap);
  EXPECT_EQ(o.hostile.dst_nid, 0x0a000002u);
  EXPECT_EQ(o.peers.count, 64u);
  EXPECT_EQ(o.gap_frames, 40u);
  EXPECT_EQ(o.frame_size, 0u);
  o = Parse({"gap", "-i", "va", "--dst-nid", "10.0.0.2", "--peers", "3", "--size", "1500"});
  EXPECT_EQ(o.peers.count, 3u);
  EXPECT_EQ(o.frame_size, 1500u);
  EXPECT_THROW(Parse({"gap", "-i", "va"}), UsageError);
  EXPECT_THROW(Parse({"gap", "-i", "va", "--dst-nid", "1", "--size", "72"}), UsageError);
  EXPECT_THROW(Parse({"gap", "-i", "va", "--dst-nid", "1", "--size", "65536"}), UsageError);
}

TEST(Options, ListNeedsNoInterface) {
  Options o = Parse({"list", "--dst-nid", "10.0.0.2"});
  EXPECT_EQ(o.mode, Mode::kList);
}

TEST(Options, MistakesAreUsageErrors) {
  const std::vector<std::vector<std::string>> bad = {
      {},
      {"bogus"},
      {"hostile", "--dst-nid", "1"},  // no interface
      {"hostile", "-i", "eth0"},      // no dst nid
      {"hostile", "-i", "eth0", "--dst-nid", "1", "--frob", "1"},
      {"hostile", "-i", "eth0", "--dst-nid"},  // no value
      {"hostile", "-i", "eth0", "--dst-nid", "1", "extra"},
      {"hostile", "-i", "eth0", "--dst-nid", "1", "--src-inc", "0"},
      {"flood", "-i", "eth0", "--dst-nid", "1"},  // no count
      {"flood", "-i", "eth0", "--dst-nid", "1", "--count", "1", "--what", "x"},
      {"peers", "-i", "eth0"},                          // no target
      {"peers", "-i", "eth0", "--target", "10.0.0.2"},  // no pid
      {"peers", "-i", "eth0", "--target", "10.0.0.2:x"},
      {"peers", "-i", "eth0", "--target", "1:1", "--first-nid", "0xffffffff"},
      {"peers", "-i", "eth0", "--target", "1:1", "--payload", "5000"},
      {"hostile", "-i", "eth0", "--dst-nid", "1", "--ethertype", "5"},
  };
  for (const auto& args : bad) {
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_THROW(Parse(args), UsageError) << joined;
  }
  EXPECT_EQ(Parse({"--help"}).mode, Mode::kHelp);
  EXPECT_FALSE(Usage().empty());
}

}  // namespace
}  // namespace ptl_inject
