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

TEST(Options, ForgeAsTheRestartTestRunsIt) {
  Options o =
      Parse({"forge", "-i", "vc", "--dst-nid", "10.0.0.1", "--dst-mac", "02:00:00:00:00:01",
             "--src-nid", "10.0.0.2", "--src-mac", "02:00:00:00:00:02", "--incs", "5,2147483653"});
  EXPECT_EQ(o.mode, Mode::kForge);
  EXPECT_EQ(o.forge_incs, (std::vector<uint32_t>{5, 2147483653u}));
  EXPECT_EQ(o.forge_type, RTSCTS_ACK);
  EXPECT_EQ(o.hostile.src_nid, 0x0a000002u);
  ASSERT_TRUE(o.src_mac);
  EXPECT_EQ(FormatMac(*o.src_mac), "02:00:00:00:00:02");
  EXPECT_EQ(Parse({"forge", "-i", "vc", "--dst-nid", "1", "--incs", "7", "--type", "challenge-ack"})
                .forge_type,
            RTSCTS_CHALLENGE_ACK);
  EXPECT_THROW(Parse({"forge", "-i", "vc", "--dst-nid", "1"}), UsageError);
  EXPECT_THROW(Parse({"forge", "-i", "vc", "--dst-nid", "1", "--incs", "0"}), UsageError);
  EXPECT_THROW(Parse({"forge", "-i", "vc", "--dst-nid", "1", "--incs", "1", "--type", "msg"}),
               UsageError);
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
  // The DATA headers alone (80 bytes) leave no room for payload.
  EXPECT_THROW(Parse({"gap", "-i", "va", "--dst-nid", "1", "--size", "80"}), UsageError);
  EXPECT_EQ(Parse({"gap", "-i", "va", "--dst-nid", "1", "--size", "81"}).frame_size, 81u);
  EXPECT_THROW(Parse({"gap", "-i", "va", "--dst-nid", "1", "--size", "65536"}), UsageError);
}

TEST(Options, PartialDefaultsToOneNodeOfOneByteOfAMebibyte) {
  Options o = Parse({"partial", "-i", "va", "--target", "10.0.0.2:99", "--msgs", "200"});
  EXPECT_EQ(o.mode, Mode::kPartial);
  EXPECT_EQ(o.peers.target.nid, 0x0a000002u);
  EXPECT_EQ(o.peers.target.pid, 99u);
  EXPECT_EQ(o.peers.count, 1u);
  EXPECT_EQ(o.partial_msgs, 200u);
  EXPECT_EQ(o.partial_length, uint64_t(1) << 20);
  EXPECT_EQ(o.partial_eager, 1u);
  EXPECT_FALSE(o.partial_rts);
  o = Parse({"partial", "-i", "va", "--target", "1:2", "--peers", "4", "--rts", "--length", "8"});
  EXPECT_EQ(o.peers.count, 4u);
  EXPECT_TRUE(o.partial_rts);
  EXPECT_EQ(o.partial_length, 8u);
  EXPECT_THROW(Parse({"partial", "-i", "va", "--dst-nid", "1"}), UsageError);
  EXPECT_THROW(Parse({"partial", "-i", "va", "--target", "1:2", "--length", "1"}), UsageError)
      << "a message whose MSG carries all of it is not left open";
}

TEST(Options, CreditDefaultsTo2000GetsOf64BytesAndTwoRounds) {
  Options o = Parse({"credit", "-i", "va", "--target", "10.0.0.2:98"});
  EXPECT_EQ(o.mode, Mode::kCredit);
  EXPECT_EQ(o.peers.target.nid, 0x0a000002u);
  EXPECT_EQ(o.peers.target.pid, 98u);
  EXPECT_EQ(o.credit.gets, 2000u);
  EXPECT_EQ(o.credit.length, 64u) << "not partial's 1 MiB";
  EXPECT_EQ(o.credit.rounds, 2u);
  EXPECT_EQ(o.credit.src_uid, 0u);
  EXPECT_EQ(o.credit.put_riders, 0u);
  EXPECT_EQ(o.hostile.src_nid, 0x0a00fffeu);
  o = Parse({"credit", "-i", "va", "--target", "10.0.0.2:98", "--gets", "300", "--length", "8",
             "--rounds", "0", "--src-nid", "10.0.0.200", "--wait-ms", "500", "--src-uid", "1000",
             "--put-riders", "2"});
  EXPECT_EQ(o.credit.gets, 300u);
  EXPECT_EQ(o.credit.length, 8u);
  EXPECT_EQ(o.credit.rounds, 0u);
  EXPECT_EQ(o.credit.src_uid, 1000u);
  EXPECT_EQ(o.credit.put_riders, 2u);
  EXPECT_EQ(o.hostile.src_nid, 0x0a0000c8u);
  EXPECT_EQ(o.wait_ms, 500u);
  EXPECT_THROW(Parse({"credit", "-i", "va", "--dst-nid", "10.0.0.2"}), UsageError)
      << "the GETs need a Portals pid";
  EXPECT_THROW(Parse({"credit", "-i", "va", "--target", "1:2", "--gets", "0"}), UsageError);
  EXPECT_THROW(Parse({"credit", "-i", "va", "--target", "1:2", "--put-riders", "9"}), UsageError)
      << "a frame carries at most 8 riders";
  EXPECT_THROW(Parse({"credit", "-i", "va", "--target", "1:2", "--src-nid", "1"}), UsageError)
      << "the fake node cannot be the target";
}

TEST(Options, RecordAndReplayAsTheReplayTestRunsThem) {
  Options r = Parse({"record", "-i", "va", "--file", "/tmp/f.pcap", "--wait-ms", "4000"});
  EXPECT_EQ(r.mode, Mode::kRecord);
  EXPECT_EQ(r.iface, "va");
  EXPECT_EQ(r.file, "/tmp/f.pcap");
  EXPECT_EQ(r.wait_ms, 4000u);
  EXPECT_EQ(r.count, 0u) << "no frame count: until --wait-ms";
  EXPECT_EQ(Parse({"record", "-i", "va", "--file=f", "--count", "3"}).count, 3u);
  Options p = Parse({"replay", "-i", "va", "--file", "f.pcap"});
  EXPECT_EQ(p.mode, Mode::kReplay);
  EXPECT_EQ(p.file, "f.pcap");
  EXPECT_FALSE(p.src_mac);
  EXPECT_EQ(Parse({"replay", "-i", "va", "--file", "f", "--src-mac", "02:00:00:00:0e:0e"}).src_mac,
            ParseMac("02:00:00:00:0e:0e"));
  EXPECT_THROW(Parse({"record", "-i", "va"}), UsageError) << "no file";
  EXPECT_THROW(Parse({"replay", "--file", "f"}), UsageError) << "no interface";
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
