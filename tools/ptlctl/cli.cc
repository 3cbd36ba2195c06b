// SPDX-License-Identifier: BSD-3-Clause
// The command line (see cli.h).
#include "cli.h"

#include <functional>
#include <type_traits>

namespace ptlctl {

namespace {

// Thrown through the parsers when "help" stands where a verb or keyword
// could: the answer is that object's help, not an error.
struct HelpWanted {
  Object object;
};

// The words after the options, read left to right.
class Words {
 public:
  Words(const std::vector<std::string>& words, std::size_t at, Object object)
      : words_(words), at_(at), object_(object) {}

  bool empty() const { return at_ >= words_.size(); }
  Object object() const { return object_; }
  void set_object(Object o) { object_ = o; }

  std::string_view Peek() const { return words_[at_]; }

  // The next word; `missing` says what should have been there.
  std::string_view Next(const std::string& missing) {
    if (empty()) throw UsageError(object_, missing);
    std::string_view w = words_[at_++];
    if (w == "help") throw HelpWanted{object_};
    return w;
  }

  // A verb from `verbs` (which include "help"), "show" if none is left.
  std::string_view Verb(const std::vector<std::string_view>& verbs) {
    if (empty()) return "show";
    std::string_view verb =
        MatchWord(words_[at_++], verbs, std::string(ObjectName(object_)) + " verb", object_);
    if (verb == "help") throw HelpWanted{object_};
    if (verb == "list") return "show";
    return verb;
  }

 private:
  const std::vector<std::string>& words_;
  std::size_t at_;
  Object object_;
};

// Reads KEYWORD VALUE pairs until the words run out. `keywords` lists the
// keywords this command takes; each may appear once.
void Keywords(Words& w, std::string_view command, std::vector<std::string_view> keywords,
              const std::function<void(std::string_view, std::string_view)>& set) {
  keywords.push_back("help");
  std::vector<std::string_view> seen;
  while (!w.empty()) {
    std::string_view kw =
        MatchWord(w.Next(""), keywords, std::string(command) + " keyword", w.object());
    if (kw == "help") throw HelpWanted{w.object()};
    for (std::string_view s : seen)
      if (s == kw)
        throw UsageError(w.object(),
                         std::string(command) + ": '" + std::string(kw) + "' given twice");
    seen.push_back(kw);
    set(kw, w.Next(std::string(command) + ": '" + std::string(kw) + "' needs a value"));
  }
}

std::string Quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

// Value readers: each names the command and shows the accepted forms.
uint32_t IfaceValue(Words& w, std::string_view command, std::string_view text) {
  auto v = ParseU32(text);
  if (!v)
    throw UsageError(w.object(), std::string(command) + ": bad interface " + Quoted(text) +
                                     " (an index: 0, 1, ...)");
  return *v;
}

uint32_t NidValue(Words& w, std::string_view command, std::string_view text) {
  auto v = ParseNid(text);
  if (!v)
    throw UsageError(w.object(), std::string(command) + ": bad nid " + Quoted(text) +
                                     " (10.0.0.1, 167772161 or 0x0a000001)");
  return *v;
}

Command IfaceCommand(Words& w) {
  std::string_view verb = w.Verb({"show", "list", "bind", "set", "unbind", "help"});
  if (verb == "show") {
    IfaceShow c;
    if (!w.empty()) c.iface = IfaceValue(w, "iface show", w.Next(""));
    if (!w.empty())
      throw UsageError(w.object(), "iface show: unexpected " + Quoted(w.Peek()) +
                                       " (it takes one interface index at most)");
    return c;
  }
  if (verb == "unbind") {
    IfaceUnbind c;
    c.iface = IfaceValue(w, "iface unbind", w.Next("iface unbind needs an interface index"));
    if (!w.empty()) throw UsageError(w.object(), "iface unbind: unexpected " + Quoted(w.Peek()));
    return c;
  }
  IfaceSet c;
  c.bind = verb == "bind";
  std::string command = c.bind ? "iface bind" : "iface set";
  c.iface = IfaceValue(w, command, w.Next(command + " needs an interface index"));
  // The transport is chosen when binding; a bound interface keeps it.
  std::vector<std::string_view> keywords = {"nid", "eager", "ethertype"};
  if (c.bind) keywords.insert(keywords.begin(), {"dev", "transport", "key"});
  Keywords(w, command, keywords, [&](std::string_view kw, std::string_view value) {
    if (kw == "dev") {
      if (value.empty() || value.size() >= 16 || value.find('/') != std::string_view::npos)
        throw UsageError(w.object(), command + ": bad device name " + Quoted(value));
      c.dev = std::string(value);
    } else if (kw == "nid") {
      c.nid = NidValue(w, command, value);
    } else if (kw == "key") {
      if (value.empty()) throw UsageError(w.object(), command + ": empty key file name");
      c.key_file = std::string(value);
    } else if (kw == "transport") {
      if (value.empty()) throw UsageError(w.object(), command + ": empty transport name");
      c.transport = std::string(value);
    } else if (kw == "eager") {
      if (!(c.eager = ParseSize32(value)))
        throw UsageError(w.object(),
                         command + ": bad eager size " + Quoted(value) + " (bytes: 4096, 8K, 1M)");
    } else if (kw == "ethertype") {
      if (!(c.ethertype = ParseEthertype(value)))
        throw UsageError(w.object(), command + ": bad ethertype " + Quoted(value) +
                                         " (0x0600 .. 0xffff, e.g. 0x88b5)");
    }
  });
  if (c.bind && !c.dev)
    throw UsageError(w.object(), "iface bind needs a device: iface bind " +
                                     std::to_string(c.iface) + " dev NAME");
  if (!c.bind && !c.nid && !c.eager && !c.ethertype)
    throw UsageError(w.object(), "iface set: nothing to set (give nid, eager or ethertype)");
  return c;
}

Command PeerCommand(Words& w) {
  std::string_view verb = w.Verb({"show", "list", "add", "delete", "help"});
  if (verb == "show") {
    PeerShow c;
    Keywords(w, "peer show", {"iface"}, [&](std::string_view, std::string_view value) {
      c.iface = IfaceValue(w, "peer show", value);
    });
    return c;
  }
  std::string command = verb == "add" ? "peer add" : "peer del";
  uint32_t nid = NidValue(w, command, w.Next(command + " needs the peer's nid"));
  uint32_t iface = 0;
  std::optional<std::vector<uint8_t>> lladdr;
  std::vector<std::string_view> keywords = {"iface"};
  if (verb == "add") keywords.push_back("lladdr");
  Keywords(w, command, keywords, [&](std::string_view kw, std::string_view value) {
    if (kw == "iface") {
      iface = IfaceValue(w, command, value);
    } else if (!(lladdr = ParseLladdr(value))) {
      throw UsageError(w.object(), command + ": bad lladdr " + Quoted(value) +
                                       " (hex bytes with colons: 02:00:0a:00:00:02)");
    }
  });
  if (verb == "delete") return PeerDel{iface, nid};
  if (nid == UINT32_MAX)
    throw UsageError(w.object(), "peer add: 255.255.255.255 is PTL_NID_ANY, not a node");
  if (!lladdr)
    throw UsageError(w.object(), "peer add needs the peer's link-layer address: peer add " +
                                     std::string(NidToDotted(nid)) + " lladdr AA:BB:CC:DD:EE:FF");
  return PeerAdd{iface, nid, *lladdr};
}

Command NiCommand(Words& w) {
  w.Verb({"show", "list", "help"});
  if (!w.empty()) throw UsageError(w.object(), "ni show: unexpected " + Quoted(w.Peek()));
  return NiShow{};
}

Command StatsCommand(Words& w) {
  w.Verb({"show", "help"});
  if (!w.empty()) throw UsageError(w.object(), "stats: unexpected " + Quoted(w.Peek()));
  return StatsShow{};
}

Command PidCommand(Words& w) {
  std::string_view verb = w.Verb({"show", "list", "reserve", "unreserve", "help"});
  if (verb == "show") {
    PidShow c;
    Keywords(w, "pid show", {"iface"}, [&](std::string_view, std::string_view value) {
      c.iface = IfaceValue(w, "pid show", value);
    });
    return c;
  }
  if (verb == "unreserve") {
    PidUnreserve c;
    std::string_view text = w.Next("pid unreserve needs the first pid of the reservation");
    auto pid = ParsePid(text);
    if (!pid)
      throw UsageError(w.object(), "pid unreserve: bad pid " + Quoted(text) +
                                       " (the first pid of a reserved range, 0 .. 65534)");
    c.pid = *pid;
    Keywords(w, "pid unreserve", {"iface"}, [&](std::string_view, std::string_view value) {
      c.iface = IfaceValue(w, "pid unreserve", value);
    });
    return c;
  }
  PidReserve c;
  std::string_view text = w.Next("pid reserve needs a pid or a range FIRST-LAST");
  auto range = ParsePidRange(text);
  if (!range)
    throw UsageError(w.object(), "pid reserve: bad pid range " + Quoted(text) +
                                     " (PID or FIRST-LAST, 0 .. 65534)");
  c.range = *range;
  bool have_uid = false;
  Keywords(w, "pid reserve", {"uid", "iface"}, [&](std::string_view kw, std::string_view value) {
    if (kw == "iface") {
      c.iface = IfaceValue(w, "pid reserve", value);
      return;
    }
    auto uid = ParseUid(value);
    if (!uid)
      throw UsageError(w.object(), "pid reserve: bad uid " + Quoted(value) +
                                       " (a number or a user name known to this system)");
    c.uid = *uid;
    have_uid = true;
  });
  if (!have_uid)
    throw UsageError(w.object(), "pid reserve needs the uid that may claim the pids: pid reserve " +
                                     std::string(text) + " uid UID");
  return c;
}

Command MonitorCommand(Words& w) {
  Monitor c;
  Keywords(w, "monitor", {"count"}, [&](std::string_view, std::string_view value) {
    auto n = ParseU32(value);
    if (!n || *n == 0)
      throw UsageError(w.object(), "monitor: bad count " + Quoted(value) + " (1 or more)");
    c.count = *n;
  });
  return c;
}

Command BlkCommand(Words& w) {
  std::string_view verb = w.Verb({"show", "list", "attach", "detach", "help"});
  auto index = [&](std::string_view command, std::string_view text) {
    std::string_view t = text.starts_with("ptlblk") ? text.substr(6) : text;
    auto v = ParseU32(t);
    if (!v)
      throw UsageError(w.object(), std::string(command) + ": bad device " + Quoted(text) +
                                       " (an index or a name: 0, ptlblk0)");
    return *v;
  };
  if (verb == "show") {
    BlkShow c;
    if (!w.empty()) c.index = index("blk show", w.Next(""));
    if (!w.empty()) throw UsageError(w.object(), "blk show: unexpected " + Quoted(w.Peek()));
    return c;
  }
  if (verb == "detach") {
    BlkDetach c;
    c.index = index("blk detach", w.Next("blk detach needs a device: blk detach ptlblk0"));
    if (!w.empty()) throw UsageError(w.object(), "blk detach: unexpected " + Quoted(w.Peek()));
    return c;
  }
  BlkAttach c;
  c.nid = NidValue(w, "blk attach", w.Next("blk attach needs the server's nid"));
  Keywords(
      w, "blk attach", {"pid", "iface", "queue-depth", "max-request", "timeout"},
      [&](std::string_view kw, std::string_view value) {
        auto bad = [&](const char* forms) {
          return UsageError(w.object(), "blk attach: bad " + std::string(kw) + " " + Quoted(value) +
                                            " (" + forms + ")");
        };
        if (kw == "pid") {
          if (!(c.pid = ParsePid(value))) throw bad("0 .. 65534");
        } else if (kw == "iface") {
          c.iface = IfaceValue(w, "blk attach", value);
        } else if (kw == "queue-depth") {
          if (!(c.queue_depth = ParseU32(value)) || *c.queue_depth == 0 || *c.queue_depth > 1024)
            throw bad("1 .. 1024");
        } else if (kw == "max-request") {
          auto bytes = ParseSize32(value);
          if (!bytes || *bytes < 4096 || *bytes % 512) throw bad("bytes: 4K .. 8G, 128K, 1M");
          c.max_sectors = *bytes / 512;
        } else {
          auto ms = ParseU32(value);
          if (!ms || *ms == 0 || *ms > 3600) throw bad("seconds: 1 .. 3600");
          c.timeout_ms = *ms * 1000;
        }
      });
  if (c.nid == UINT32_MAX)
    throw UsageError(w.object(), "blk attach: 255.255.255.255 is PTL_NID_ANY, not a node");
  return c;
}

}  // namespace

std::string_view ObjectName(Object o) {
  switch (o) {
    case Object::kNone:
      return "";
    case Object::kIface:
      return "iface";
    case Object::kPeer:
      return "peer";
    case Object::kNi:
      return "ni";
    case Object::kStats:
      return "stats";
    case Object::kPid:
      return "pid";
    case Object::kMonitor:
      return "monitor";
    case Object::kBlk:
      return "blk";
  }
  return "";
}

std::string_view MatchWord(std::string_view word, const std::vector<std::string_view>& candidates,
                           std::string_view what, Object object) {
  std::vector<std::string_view> prefixed;
  for (std::string_view c : candidates) {
    if (c == word) return c;
    if (!word.empty() && c.substr(0, word.size()) == word) prefixed.push_back(c);
  }
  if (prefixed.size() == 1) return prefixed[0];
  auto list = [](const std::vector<std::string_view>& v) {
    std::string s;
    for (std::string_view c : v) s += (s.empty() ? "" : ", ") + std::string(c);
    return s;
  };
  if (prefixed.empty())
    throw UsageError(object, "unknown " + std::string(what) + " " + Quoted(word) + " (one of " +
                                 list(candidates) + ")");
  throw UsageError(
      object, "ambiguous " + std::string(what) + " " + Quoted(word) + ": " + list(prefixed) + "?");
}

CommandLine ParseCommandLine(const std::vector<std::string>& args) {
  CommandLine cl;
  std::size_t i = 0;
  for (; i < args.size() && args[i].size() > 1 && args[i][0] == '-'; ++i) {
    std::string_view a = args[i];
    if (a == "--") {
      ++i;
      break;
    }
    // --json, -json, --stat (any unique prefix), or single letters that
    // may be grouped: -j, -js, -jps.
    bool dashdash = a.starts_with("--");
    std::string_view body = a.substr(dashdash ? 2 : 1);
    std::string_view opt;
    const std::vector<std::string_view> longs = {"json", "pretty", "statistics", "help", "version"};
    if (dashdash || body.size() > 1) {
      for (std::string_view l : longs)
        if (!body.empty() && l.starts_with(body)) opt = l;
    }
    std::string letters = opt.empty() ? std::string(body) : std::string(1, opt[0]);
    if (dashdash && opt.empty()) letters = "?";
    for (char c : letters) {
      if (c == 'j') {
        cl.options.json = true;
      } else if (c == 'p') {
        cl.options.pretty = true;
      } else if (c == 's') {
        cl.options.stats = true;
      } else if (c == 'h') {
        cl.command = Help{};
        return cl;
      } else if (c == 'V' || c == 'v') {
        cl.command = Version{};
        return cl;
      } else {
        throw UsageError(Object::kNone,
                         "unknown option " + Quoted(a) + " (-j, -p, -s, -h, -V or --json, ...)");
      }
    }
  }
  if (i >= args.size()) throw UsageError(Object::kNone, "no object given");

  Words w(args, i + 1, Object::kNone);
  std::string_view object =
      MatchWord(args[i], {"iface", "peer", "ni", "stats", "pid", "monitor", "blk", "help"},
                "object", Object::kNone);
  try {
    if (object == "help") {
      if (!w.empty()) throw UsageError(Object::kNone, "help: unexpected " + Quoted(w.Peek()));
      cl.command = Help{};
    } else if (object == "iface") {
      w.set_object(Object::kIface);
      cl.command = IfaceCommand(w);
    } else if (object == "peer") {
      w.set_object(Object::kPeer);
      cl.command = PeerCommand(w);
    } else if (object == "ni") {
      w.set_object(Object::kNi);
      cl.command = NiCommand(w);
    } else if (object == "stats") {
      w.set_object(Object::kStats);
      cl.command = StatsCommand(w);
    } else if (object == "pid") {
      w.set_object(Object::kPid);
      cl.command = PidCommand(w);
    } else if (object == "blk") {
      w.set_object(Object::kBlk);
      cl.command = BlkCommand(w);
    } else {
      w.set_object(Object::kMonitor);
      cl.command = MonitorCommand(w);
    }
  } catch (const HelpWanted& h) {
    cl.command = Help{h.object};
  }
  return cl;
}

std::string Describe(const Command& command) {
  return std::visit(
      [](const auto& c) -> std::string {
        using T = std::decay_t<decltype(c)>;
        auto iface = [](uint32_t i) { return " iface " + std::to_string(i); };
        if constexpr (std::is_same_v<T, IfaceShow>)
          return c.iface ? "iface show " + std::to_string(*c.iface) : "iface show";
        else if constexpr (std::is_same_v<T, IfaceSet>)
          return (c.bind ? "iface bind " : "iface set ") + std::to_string(c.iface);
        else if constexpr (std::is_same_v<T, IfaceUnbind>)
          return "iface unbind " + std::to_string(c.iface);
        else if constexpr (std::is_same_v<T, PeerShow>)
          return "peer show" + iface(c.iface);
        else if constexpr (std::is_same_v<T, PeerAdd>)
          return "peer add " + NidToDotted(c.nid) + iface(c.iface);
        else if constexpr (std::is_same_v<T, PeerDel>)
          return "peer del " + NidToDotted(c.nid) + iface(c.iface);
        else if constexpr (std::is_same_v<T, NiShow>)
          return "ni show";
        else if constexpr (std::is_same_v<T, StatsShow>)
          return "stats";
        else if constexpr (std::is_same_v<T, PidShow>)
          return c.iface ? "pid show" + iface(*c.iface) : "pid show";
        else if constexpr (std::is_same_v<T, PidReserve>)
          return "pid reserve " + std::to_string(c.range.first) +
                 (c.range.last != c.range.first ? "-" + std::to_string(c.range.last) : "") +
                 iface(c.iface);
        else if constexpr (std::is_same_v<T, PidUnreserve>)
          return "pid unreserve " + std::to_string(c.pid) + iface(c.iface);
        else if constexpr (std::is_same_v<T, Monitor>)
          return "monitor";
        else if constexpr (std::is_same_v<T, BlkShow>)
          return c.index ? "blk show ptlblk" + std::to_string(*c.index) : "blk show";
        else if constexpr (std::is_same_v<T, BlkAttach>)
          return "blk attach " + NidToDotted(c.nid);
        else if constexpr (std::is_same_v<T, BlkDetach>)
          return "blk detach ptlblk" + std::to_string(c.index);
        else
          return "help";
      },
      command);
}

std::string Usage(Object o) {
  switch (o) {
    case Object::kNone:
      return "Usage: ptlctl [OPTIONS] OBJECT { COMMAND | help }\n"
             "       ptlctl help\n"
             "where  OBJECT := { iface | peer | ni | stats | pid | monitor | blk }\n"
             "       OPTIONS := { -j[son] | -p[retty] | -s[tats] | -h[elp] | -V[ersion] }\n"
             "\n"
             "Configures and inspects Portals for Linux (ptl.ko) over generic netlink.\n"
             "Objects and verbs may be abbreviated to unique prefixes; the default verb\n"
             "is show. Reading needs no privilege; changing anything needs CAP_NET_ADMIN.\n"
             "  -j, --json     one JSON document on stdout (monitor: one object per line)\n"
             "  -p, --pretty   indent the JSON\n"
             "  -s, --stats    add the counters to show\n"
             "Exit status: 0 success, 1 the operation failed, 2 bad command line.\n"
             "See \"ptlctl OBJECT help\" for each object.\n";
    case Object::kIface:
      return "Usage: ptlctl iface show [IFACE]\n"
             "       ptlctl iface bind IFACE dev NAME [nid NID] [transport NAME]\n"
             "                         [eager BYTES] [ethertype 0xNNNN] [key FILE]\n"
             "       ptlctl iface set IFACE [nid NID] [eager BYTES] [ethertype 0xNNNN]\n"
             "       ptlctl iface unbind IFACE\n"
             "where  IFACE := interface index (0 is PtlNIInit's PTL_IFACE_DEFAULT)\n"
             "       NID := { 10.0.0.1 | 167772161 | 0x0a000001 }  (default: the\n"
             "              device's first IPv4 address in host order)\n"
             "       BYTES := payload sent eagerly, larger messages use RTS/CTS (4096, 8K)\n"
             "       FILE := 32 bytes, raw or as 64 hex digits, that every node on the\n"
             "              segment shares: every frame is then authenticated (rtscts)\n"
             "       transport defaults to rtscts, ethertype to 0x88b5\n";
    case Object::kPeer:
      return "Usage: ptlctl peer show [iface IFACE]\n"
             "       ptlctl peer add NID lladdr LLADDR [iface IFACE]\n"
             "       ptlctl peer del NID [iface IFACE]\n"
             "where  NID := { 10.0.0.1 | 167772161 | 0x0a000001 }\n"
             "       LLADDR := link-layer address, e.g. 02:00:0a:00:00:02\n"
             "       IFACE defaults to 0. Static peers (peer add) are never resolved\n"
             "       nor reclaimed; peer del fails the operations in flight to it.\n";
    case Object::kNi:
      return "Usage: ptlctl [-s] ni show\n"
             "Lists the network interfaces (NIs) processes hold: interface, nid, pid,\n"
             "uid, jid and owning process; -s adds their object counts.\n";
    case Object::kStats:
      return "Usage: ptlctl stats\n"
             "Prints the counters of this network namespace and of the module.\n";
    case Object::kPid:
      return "Usage: ptlctl pid show [iface IFACE]\n"
             "       ptlctl pid reserve PID[-LAST] uid UID [iface IFACE]\n"
             "       ptlctl pid unreserve PID [iface IFACE]\n"
             "where  UID := a number or a user name\n"
             "       Reserved pids may only be claimed (PtlNIInit) by processes of UID or\n"
             "       with CAP_NET_ADMIN. unreserve takes the first pid of the range.\n"
             "       IFACE defaults to 0; pid show without iface lists every interface.\n";
    case Object::kMonitor:
      return "Usage: ptlctl [-j] monitor [count N]\n"
             "Prints peer events (up, unreachable, restarted, reset) as they happen,\n"
             "until interrupted or after N events. With -j, one JSON object per line.\n";
    case Object::kBlk:
      return "Usage: ptlctl [-s] blk show [DEV]\n"
             "       ptlctl blk attach NID [pid PID] [iface IFACE] [queue-depth N]\n"
             "                             [max-request BYTES] [timeout SECONDS]\n"
             "       ptlctl blk detach DEV\n"
             "where  DEV := { 0 | ptlblk0 | ... }\n"
             "       NID := the node ptlblk-server runs on; PID its Portals pid (42)\n"
             "Block devices over Portals (ptlblk.ko): attach connects to the server and\n"
             "adds /dev/ptlblkN in this network namespace; a server that stops answering\n"
             "for the timeout (30 s) makes the device dead: its I/O fails, unmount it,\n"
             "detach it and attach again. Attach and detach need CAP_SYS_ADMIN.\n";
  }
  return "";
}

}  // namespace ptlctl
