// SPDX-License-Identifier: BSD-3-Clause
#include "cli.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ptlctl {
namespace {

CommandLine P(std::vector<std::string> args) { return ParseCommandLine(args); }

template <typename T>
T Get(std::vector<std::string> args) {
  CommandLine cl = P(std::move(args));
  EXPECT_TRUE(std::holds_alternative<T>(cl.command));
  return std::holds_alternative<T>(cl.command) ? std::get<T>(cl.command) : T{};
}

// The UsageError a command line gives ("" if it parses).
std::string Error(std::vector<std::string> args, Object* object = nullptr) {
  try {
    P(std::move(args));
  } catch (const UsageError& e) {
    if (object) *object = e.object();
    return e.what();
  }
  return "";
}

TEST(MatchWord, ExactThenUniquePrefix) {
  std::vector<std::string_view> verbs = {"show", "set", "setup", "bind"};
  EXPECT_EQ(MatchWord("set", verbs, "verb", Object::kIface), "set");  // exact beats prefix
  EXPECT_EQ(MatchWord("b", verbs, "verb", Object::kIface), "bind");
  EXPECT_EQ(MatchWord("setu", verbs, "verb", Object::kIface), "setup");
}

TEST(MatchWord, AmbiguousAndUnknownWordsNameTheCandidates) {
  std::vector<std::string_view> verbs = {"show", "set", "bind"};
  try {
    MatchWord("s", verbs, "iface verb", Object::kIface);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "ambiguous iface verb 's': show, set?");
    EXPECT_EQ(e.object(), Object::kIface);
  }
  try {
    MatchWord("x", verbs, "iface verb", Object::kIface);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "unknown iface verb 'x' (one of show, set, bind)");
  }
  EXPECT_THROW(MatchWord("", verbs, "verb", Object::kIface), UsageError);
}

TEST(CommandLine, ObjectsAndVerbsAbbreviateShowIsTheDefault) {
  EXPECT_FALSE(Get<IfaceShow>({"iface"}).iface);
  EXPECT_EQ(Get<IfaceShow>({"i", "sh", "3"}).iface, 3u);
  EXPECT_EQ(Get<IfaceShow>({"iface", "list", "0"}).iface, 0u);
  EXPECT_EQ(Get<PeerShow>({"peer"}).iface, 0u);
  EXPECT_EQ(Get<PeerShow>({"pe", "s", "i", "2"}).iface, 2u);
  Get<NiShow>({"ni"});
  Get<NiShow>({"n", "show"});
  Get<StatsShow>({"stats"});
  Get<StatsShow>({"st"});
  EXPECT_FALSE(Get<PidShow>({"pid"}).iface);
  EXPECT_EQ(Get<PidShow>({"pid", "show", "iface", "1"}).iface, 1u);
  EXPECT_EQ(Get<Monitor>({"monitor"}).count, 0u);
  EXPECT_EQ(Get<Monitor>({"m", "count", "3"}).count, 3u);
}

TEST(CommandLine, AmbiguousObjectOrVerbIsAUsageError) {
  Object o = Object::kNone;
  EXPECT_EQ(Error({"p"}, &o), "ambiguous object 'p': peer, pid?");
  EXPECT_EQ(o, Object::kNone);
  EXPECT_EQ(Error({"iface", "s"}, &o), "ambiguous iface verb 's': show, set?");
  EXPECT_EQ(o, Object::kIface);
  EXPECT_EQ(Error({"link"}),
            "unknown object 'link' (one of iface, peer, ni, stats, pid, "
            "monitor, blk, help)");
}

TEST(CommandLine, BlkAttachShowDetach) {
  CommandLine cl = ParseCommandLine({"blk", "attach", "10.0.0.2", "pid", "43", "queue-depth", "8",
                                     "max-request", "128K", "timeout", "5"});
  auto* a = std::get_if<BlkAttach>(&cl.command);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->nid, 0x0a000002u);
  EXPECT_EQ(a->pid, 43u);
  EXPECT_EQ(a->queue_depth, 8u);
  EXPECT_EQ(a->max_sectors, 256u);
  EXPECT_EQ(a->timeout_ms, 5000u);
  EXPECT_EQ(Describe(cl.command), "blk attach 10.0.0.2");
  CommandLine det = ParseCommandLine({"blk", "det", "ptlblk3"});
  auto* d = std::get_if<BlkDetach>(&det.command);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->index, 3u);
  CommandLine show = ParseCommandLine({"blk"});
  auto* s = std::get_if<BlkShow>(&show.command);
  ASSERT_NE(s, nullptr);
  EXPECT_FALSE(s->index);
  EXPECT_EQ(Error({"blk", "attach", "10.0.0.2", "queue-depth", "0"}),
            "blk attach: bad queue-depth '0' (1 .. 1024)");
}

TEST(CommandLine, IfaceBindTakesEveryKeyword) {
  auto c = Get<IfaceSet>({"iface", "bind", "1", "dev", "veth0", "nid", "10.0.0.1", "transport",
                          "rtscts", "eager", "8K", "ethertype", "0x88b6"});
  EXPECT_TRUE(c.bind);
  EXPECT_EQ(c.iface, 1u);
  EXPECT_EQ(c.dev, "veth0");
  EXPECT_EQ(c.nid, 0x0a000001u);
  EXPECT_EQ(c.transport, "rtscts");
  EXPECT_EQ(c.eager, 8192u);
  EXPECT_EQ(c.ethertype, 0x88b6);
  auto minimal = Get<IfaceSet>({"iface", "b", "0", "d", "eth0"});
  EXPECT_EQ(minimal.dev, "eth0");
  EXPECT_FALSE(minimal.nid);
  EXPECT_FALSE(minimal.transport);
}

// The key is a file, read by Run() (not by the parser), and only when binding.
TEST(CommandLine, IfaceBindTakesAKeyFile) {
  auto c = Get<IfaceSet>({"iface", "bind", "0", "dev", "eth0", "key", "/etc/portals/key"});
  EXPECT_EQ(c.key_file, "/etc/portals/key");
  EXPECT_TRUE(c.key.empty());
  EXPECT_EQ(Error({"iface", "bind", "0", "dev", "a", "key", ""}),
            "iface bind: empty key file name");
  EXPECT_EQ(Error({"iface", "set", "0", "key", "k"}),
            "unknown iface set keyword 'key' (one of nid, eager, ethertype, help)");
}

TEST(CommandLine, IfaceMistakesSayWhatToType) {
  EXPECT_EQ(Error({"iface", "bind", "0"}), "iface bind needs a device: iface bind 0 dev NAME");
  EXPECT_EQ(Error({"iface", "bind"}), "iface bind needs an interface index");
  EXPECT_EQ(Error({"iface", "bind", "x", "dev", "eth0"}),
            "iface bind: bad interface 'x' (an index: 0, 1, ...)");
  EXPECT_EQ(Error({"iface", "bind", "0", "dev"}), "iface bind: 'dev' needs a value");
  EXPECT_EQ(Error({"iface", "bind", "0", "dev", "a", "dev", "b"}), "iface bind: 'dev' given twice");
  EXPECT_EQ(Error({"iface", "bind", "0", "dev", "a", "e", "1"}),
            "ambiguous iface bind keyword 'e': eager, ethertype?");
  EXPECT_EQ(Error({"iface", "bind", "0", "dev", "a", "ethertype", "0x800x"}),
            "iface bind: bad ethertype '0x800x' (0x0600 .. 0xffff, e.g. 0x88b5)");
  EXPECT_EQ(Error({"iface", "bind", "0", "dev", "a/b"}), "iface bind: bad device name 'a/b'");
  EXPECT_EQ(Error({"iface", "set", "0"}),
            "iface set: nothing to set (give nid, eager or ethertype)");
  EXPECT_EQ(Error({"iface", "set", "0", "dev", "eth0"}),
            "unknown iface set keyword 'dev' (one of nid, eager, ethertype, help)");
  EXPECT_EQ(Get<IfaceSet>({"iface", "set", "0", "eager", "4096"}).eager, 4096u);
  EXPECT_EQ(Error({"iface", "show", "0", "1"}),
            "iface show: unexpected '1' (it takes one interface index at most)");
  EXPECT_EQ(Get<IfaceUnbind>({"iface", "unb", "2"}).iface, 2u);
  EXPECT_EQ(Error({"iface", "unbind"}), "iface unbind needs an interface index");
}

TEST(CommandLine, PeerAddAndDel) {
  auto add = Get<PeerAdd>({"peer", "add", "10.0.0.2", "lladdr", "02:00:0a:00:00:02", "iface", "1"});
  EXPECT_EQ(add.nid, 0x0a000002u);
  EXPECT_EQ(add.iface, 1u);
  EXPECT_EQ(add.lladdr, (std::vector<uint8_t>{2, 0, 10, 0, 0, 2}));
  auto del = Get<PeerDel>({"peer", "del", "0x0a000002"});
  EXPECT_EQ(del.nid, 0x0a000002u);
  EXPECT_EQ(del.iface, 0u);
  EXPECT_EQ(Get<PeerDel>({"peer", "delete", "167772162", "iface", "3"}).iface, 3u);
  EXPECT_EQ(Error({"peer", "add", "10.0.0.2"}),
            "peer add needs the peer's link-layer address: peer add 10.0.0.2 lladdr "
            "AA:BB:CC:DD:EE:FF");
  EXPECT_EQ(Error({"peer", "add"}), "peer add needs the peer's nid");
  EXPECT_EQ(Error({"peer", "add", "lladdr"}),
            "peer add: bad nid 'lladdr' (10.0.0.1, 167772161 or 0x0a000001)");
  EXPECT_EQ(Error({"peer", "add", "10.0.0.2", "lladdr", "zz"}),
            "peer add: bad lladdr 'zz' (hex bytes with colons: 02:00:0a:00:00:02)");
  EXPECT_EQ(Error({"peer", "add", "255.255.255.255", "lladdr", "02:00:00:00:00:01"}),
            "peer add: 255.255.255.255 is PTL_NID_ANY, not a node");
  EXPECT_EQ(Error({"peer", "del", "10.0.0.2", "lladdr", "02"}),
            "unknown peer del keyword 'lladdr' (one of iface, help)");
}

TEST(CommandLine, PidReserveUnreserveShow) {
  auto r = Get<PidReserve>({"pid", "reserve", "100-109", "uid", "root", "iface", "1"});
  EXPECT_EQ(r.range, (PidRange{100, 109}));
  EXPECT_EQ(r.uid, 0u);
  EXPECT_EQ(r.iface, 1u);
  auto one = Get<PidReserve>({"pid", "res", "77", "uid", "65534"});
  EXPECT_EQ(one.range, (PidRange{77, 77}));
  EXPECT_EQ(one.uid, 65534u);
  EXPECT_EQ(Get<PidUnreserve>({"pid", "unreserve", "100", "iface", "2"}).pid, 100u);
  EXPECT_EQ(Error({"pid", "reserve", "100"}),
            "pid reserve needs the uid that may claim the pids: pid reserve 100 uid UID");
  EXPECT_EQ(Error({"pid", "reserve", "100", "uid", "no-such-user-ptlctl"}),
            "pid reserve: bad uid 'no-such-user-ptlctl' (a number or a user name known to this "
            "system)");
  EXPECT_EQ(Error({"pid", "reserve", "9-1", "uid", "0"}),
            "pid reserve: bad pid range '9-1' (PID or FIRST-LAST, 0 .. 65534)");
  EXPECT_EQ(Error({"pid", "unreserve", "1-2"}),
            "pid unreserve: bad pid '1-2' (the first pid of a reserved range, 0 .. 65534)");
}

TEST(CommandLine, HelpEverywhere) {
  EXPECT_EQ(Get<Help>({"help"}).object, Object::kNone);
  EXPECT_EQ(Get<Help>({"-h"}).object, Object::kNone);
  EXPECT_EQ(Get<Help>({"--help"}).object, Object::kNone);
  EXPECT_EQ(Get<Help>({"iface", "help"}).object, Object::kIface);
  EXPECT_EQ(Get<Help>({"iface", "he"}).object, Object::kIface);
  EXPECT_EQ(Get<Help>({"iface", "bind", "help"}).object, Object::kIface);
  EXPECT_EQ(Get<Help>({"iface", "bind", "0", "dev", "eth0", "help"}).object, Object::kIface);
  EXPECT_EQ(Get<Help>({"peer", "add", "10.0.0.2", "help"}).object, Object::kPeer);
  EXPECT_EQ(Get<Help>({"pid", "help"}).object, Object::kPid);
  EXPECT_EQ(Get<Help>({"monitor", "help"}).object, Object::kMonitor);
  EXPECT_EQ(Get<Help>({"stats", "help"}).object, Object::kStats);
  EXPECT_EQ(Get<Help>({"ni", "help"}).object, Object::kNi);
  for (Object o : {Object::kNone, Object::kIface, Object::kPeer, Object::kNi, Object::kStats,
                   Object::kPid, Object::kMonitor})
    EXPECT_NE(Usage(o).find("Usage: ptlctl"), std::string::npos);
}

TEST(CommandLine, OptionsShortGroupedAndLong) {
  auto cl = P({"-j", "-p", "-s", "iface"});
  EXPECT_TRUE(cl.options.json && cl.options.pretty && cl.options.stats);
  cl = P({"-jps", "iface"});
  EXPECT_TRUE(cl.options.json && cl.options.pretty && cl.options.stats);
  cl = P({"--json", "--stat", "iface"});
  EXPECT_TRUE(cl.options.json && cl.options.stats && !cl.options.pretty);
  cl = P({"-json", "-pretty", "-statistics", "ni"});
  EXPECT_TRUE(cl.options.json && cl.options.pretty && cl.options.stats);
  cl = P({"iface"});
  EXPECT_FALSE(cl.options.json || cl.options.pretty || cl.options.stats);
  EXPECT_TRUE(std::holds_alternative<Version>(P({"-V"}).command));
  EXPECT_EQ(Error({"-x", "iface"}), "unknown option '-x' (-j, -p, -s, -h, -V or --json, ...)");
  EXPECT_EQ(Error({"--bogus", "iface"}),
            "unknown option '--bogus' (-j, -p, -s, -h, -V or --json, ...)");
  EXPECT_EQ(Error({}), "no object given");
  EXPECT_EQ(Error({"-j"}), "no object given");
}

TEST(CommandLine, NiAndStatsTakeNoArguments) {
  EXPECT_EQ(Error({"ni", "show", "x"}), "ni show: unexpected 'x'");
  EXPECT_EQ(Error({"stats", "x"}), "unknown stats verb 'x' (one of show, help)");
  EXPECT_EQ(Error({"monitor", "count", "0"}), "monitor: bad count '0' (1 or more)");
}

TEST(Describe, NamesTheCommandForErrorMessages) {
  EXPECT_EQ(Describe(P({"iface", "bind", "0", "dev", "veth0"}).command), "iface bind 0");
  EXPECT_EQ(Describe(P({"peer", "add", "10.0.0.2", "lladdr", "02"}).command),
            "peer add 10.0.0.2 iface 0");
  EXPECT_EQ(Describe(P({"pid", "reserve", "100-109", "uid", "0"}).command),
            "pid reserve 100-109 iface 0");
  EXPECT_EQ(Describe(P({"pid", "reserve", "100", "uid", "0"}).command), "pid reserve 100 iface 0");
  EXPECT_EQ(Describe(P({"stats"}).command), "stats");
}

}  // namespace
}  // namespace ptlctl
