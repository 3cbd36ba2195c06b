// SPDX-License-Identifier: BSD-3-Clause
// ptlctl's command line, iproute2 style: options, then an object, a verb
// (a unique prefix is enough; "show" when there is none) and keyword
// arguments. Parsing is pure: it turns the words into a Command and
// reports mistakes as a UsageError that says what to type instead.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "blk.h"
#include "parse.h"

namespace ptlctl {

enum class Object { kNone, kIface, kPeer, kNi, kStats, kPid, kMonitor, kBlk };

std::string_view ObjectName(Object o);

// The help text of an object (kNone: the overview).
std::string Usage(Object o);

// A mistake on the command line (exit status 2). `object` names the help
// that the message points to.
class UsageError : public std::runtime_error {
 public:
  UsageError(Object object, const std::string& what) : std::runtime_error(what), object_(object) {}
  Object object() const { return object_; }

 private:
  Object object_;
};

// The commands, one struct each, with what the user gave.
struct Help {
  Object object = Object::kNone;
};
struct Version {};
struct IfaceShow {
  std::optional<uint32_t> iface;  // nothing: every interface
};
// iface bind (dev required) and iface set (dev refused).
struct IfaceSet {
  bool bind = false;
  uint32_t iface = 0;
  std::optional<std::string> dev, transport;
  std::optional<uint32_t> nid, eager;
  std::optional<uint16_t> ethertype;
  // bind: the file of the key that authenticates every frame; Run() reads
  // it into `key` just before the request and wipes it after.
  std::optional<std::string> key_file;
  std::vector<uint8_t> key;
};
struct IfaceUnbind {
  uint32_t iface = 0;
};
struct PeerShow {
  uint32_t iface = 0;
};
struct PeerAdd {
  uint32_t iface = 0;
  uint32_t nid = 0;
  std::vector<uint8_t> lladdr;
};
struct PeerDel {
  uint32_t iface = 0;
  uint32_t nid = 0;
};
struct NiShow {};
struct StatsShow {};
struct PidShow {
  std::optional<uint32_t> iface;  // nothing: every interface
};
struct PidReserve {
  uint32_t iface = 0;
  PidRange range;
  uint32_t uid = 0;
};
struct PidUnreserve {
  uint32_t iface = 0;
  uint32_t pid = 0;
};
struct Monitor {
  uint64_t count = 0;  // stop after this many events; 0: until interrupted
};

using Command = std::variant<Help, Version, IfaceShow, IfaceSet, IfaceUnbind, PeerShow, PeerAdd,
                             PeerDel, NiShow, StatsShow, PidShow, PidReserve, PidUnreserve, Monitor,
                             BlkShow, BlkAttach, BlkDetach>;

// The global options.
struct Options {
  bool json = false;    // -j, --json
  bool pretty = false;  // -p, --pretty (implies nothing without -j)
  bool stats = false;   // -s, --stats, --statistics
};

struct CommandLine {
  Options options;
  Command command;
};

// Parses argv[1..]. Throws UsageError.
CommandLine ParseCommandLine(const std::vector<std::string>& args);

// The candidate that `word` names: itself, or the only candidate it is a
// prefix of. Throws UsageError naming `what` ("verb", "keyword") when
// there is none or more than one.
std::string_view MatchWord(std::string_view word, const std::vector<std::string_view>& candidates,
                           std::string_view what, Object object);

// "iface bind 0", "peer add 10.0.0.2": the command as error messages name it.
std::string Describe(const Command& command);

}  // namespace ptlctl
