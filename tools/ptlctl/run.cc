// SPDX-License-Identifier: BSD-3-Clause
// Running commands (see run.h).
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/portals_netlink.h>
#include <linux/ptlblk.h>
#include <linux/ptlblk_netlink.h>
#include <net/if.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <tuple>
#include <type_traits>

#include "blk.h"
#include "objects.h"
#include "render.h"
#include "request.h"

namespace ptlctl {

const char kFamilyMissing[] =
    "ptlctl: the portals generic netlink family is missing: is ptl.ko loaded?\n";

const char kBlkFamilyMissing[] =
    "ptlctl: the ptlblk generic netlink family is missing: is ptlblk.ko loaded?\n";

namespace {

std::string Index(uint32_t i) { return std::to_string(i); }

// "attribute ifname", or "attribute 40" for one this ptlctl does not know.
std::string AttrLabel(uint32_t type) {
  std::string name = AttrName(static_cast<uint16_t>(type));
  return name.starts_with("attribute ") ? name : "attribute " + name;
}

// What to do about an error, when something useful can be said. A guess at
// the cause is made only when the kernel gave none (its extack message).
std::string Hint(const Command& command, const NetlinkError::Details& d) {
  const int error = d.error;
  const bool explained = !d.message.empty();
  return std::visit(
      [error, explained](const auto& c) -> std::string {
        using T = std::decay_t<decltype(c)>;
        if (error == EOPNOTSUPP)
          return "ptl.ko or its transport does not support this: is it older than ptlctl?";
        if constexpr (std::is_same_v<T, IfaceSet>) {
          if (error == ENODEV && c.dev)
            return "is there a device " + *c.dev + " in this network namespace? (ip link)";
          if (error == ENOENT || error == EPROTONOSUPPORT)
            return "is the transport's module loaded? (ptl_rtscts.ko for rtscts)";
          if (error == EBUSY && c.bind)
            return "is interface " + Index(c.iface) + " bound already? (ptlctl iface unbind " +
                   Index(c.iface) + ")";
          if (error == EBUSY && c.nid)
            return "ptlctl ni show lists the NIs open on it; ptlctl iface unbind " +
                   Index(c.iface) + " unbinds it";
          if (error == EADDRNOTAVAIL)
            return "give the nid (nid 10.0.0.1) or an IPv4 address to the device (ip addr add)";
          if (error == EINVAL && !c.bind && !explained)
            return "is interface " + Index(c.iface) + " bound? (ptlctl iface show)";
        } else if constexpr (std::is_same_v<T, IfaceShow>) {
          if (error == ENODEV || error == ENOENT)
            return "ptlctl iface show lists the interfaces in use";
        } else if constexpr (std::is_same_v<T, IfaceUnbind>) {
          if (error == ENOENT || error == ENODEV)
            return "ptlctl iface show lists the bound interfaces";
        } else if constexpr (std::is_same_v<T, PeerShow> || std::is_same_v<T, PeerAdd>) {
          if (error == ENOENT || error == ENODEV)
            return "peers live on a bound interface: ptlctl iface bind " + Index(c.iface) +
                   " dev NAME";
          if (error == EEXIST) return "the nid has a peer already: ptlctl peer del it first";
        } else if constexpr (std::is_same_v<T, PeerDel>) {
          if (error == ENOENT || error == ENODEV)
            return "ptlctl peer show iface " + Index(c.iface) + " lists the peers";
        } else if constexpr (std::is_same_v<T, PidReserve>) {
          if (error == EEXIST)
            return "ranges may not overlap: ptlctl pid show lists the reserved ones";
        } else if constexpr (std::is_same_v<T, PidUnreserve>) {
          if (error == ENOENT) return "give the first pid of a range: ptlctl pid show lists them";
        } else if constexpr (std::is_same_v<T, BlkAttach>) {
          if (error == EHOSTUNREACH)
            return "is ptlblk-server running there (pid " +
                   std::to_string(c.pid.value_or(PTLBLK_SERVER_PID)) + "), and is interface " +
                   Index(c.iface.value_or(0)) + " bound on both nodes? (ptlctl iface show)";
          if (error == ENODEV) return "bind the interface first: ptlctl iface bind IFACE dev NAME";
        } else if constexpr (std::is_same_v<T, BlkDetach> || std::is_same_v<T, BlkShow>) {
          if (error == EBUSY) return "unmount it (and close it) first";
          if (error == ENODEV) return "ptlctl blk show lists the devices of this namespace";
        }
        return "";
      },
      command);
}

template <typename T, typename Key>
void SortBy(std::vector<T>& v, Key key) {
  std::stable_sort(v.begin(), v.end(), [&](const T& a, const T& b) { return key(a) < key(b); });
}

void Print(const std::string& s) { std::fwrite(s.data(), 1, s.size(), stdout); }

// Prints a list of objects: text blocks, or one JSON array.
template <typename T, typename Text, typename Json>
void PrintList(const Options& o, const std::vector<T>& objects, Text text, Json json) {
  if (o.json) {
    JsonWriter w(o.pretty);
    w.BeginArray();
    for (const T& obj : objects) json(w, obj);
    w.EndArray();
    Print(w.str() + "\n");
  } else {
    for (const T& obj : objects) Print(text(obj));
  }
}

template <typename T>
std::vector<T> DecodeAll(const std::vector<Reply>& replies, T (*decode)(std::span<const uint8_t>)) {
  std::vector<T> out;
  for (const Reply& r : replies) out.push_back(decode(r.attrs));
  return out;
}

volatile sig_atomic_t g_stop = 0;

void OnSignal(int) { g_stop = 1; }

int RunMonitor(Session& s, const Options& o, const Monitor& m) {
  s.Join(PTL_GENL_MCGRP_EVENTS);
  // Signals that end the monitor are blocked except while it waits.
  sigset_t block, wait_mask;
  sigemptyset(&block);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&block, sig);
  sigprocmask(SIG_BLOCK, &block, &wait_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigdelset(&wait_mask, sig);
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);

  uint64_t seen = 0;
  s.Listen(
      [&](const Reply& r) {
        if (r.cmd != PTL_CMD_PEER_EVENT) return true;  // a newer kernel's
        PeerEvent e = DecodePeerEvent(r.attrs);
        if (o.json) {
          JsonWriter w(false);  // one object per line, even with -p
          EventJson(w, e);
          Print(w.str() + "\n");
        } else {
          Print(EventText(e));
        }
        std::fflush(stdout);
        return m.count == 0 || ++seen < m.count;
      },
      [] { std::fputs("ptlctl: monitor: events were lost (socket buffer overrun)\n", stderr); },
      &wait_mask, &g_stop);
  return kExitOk;
}

int RunBlk(const CommandLine& cl) {
  const Options& o = cl.options;
  BlkRequest br = std::visit(
      [](const auto& c) -> BlkRequest {
        using T = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<T, BlkShow> || std::is_same_v<T, BlkAttach> ||
                      std::is_same_v<T, BlkDetach>)
          return BuildBlkRequest(c);
        else
          return {};
      },
      cl.command);
  Session s(PTLBLK_GENL_NAME, PTLBLK_GENL_VERSION);
  std::vector<Reply> replies = s.Run(Request{br.cmd, br.dump, br.attrs});
  for (const std::string& w : s.warnings())
    std::fprintf(stderr, "ptlctl: warning: %s\n", w.c_str());
  if (std::holds_alternative<BlkDetach>(cl.command)) return kExitOk;
  std::vector<BlkDev> list;
  for (const Reply& r : replies) list.push_back(DecodeBlkDev(r.attrs));
  SortBy(list, [](const BlkDev& d) { return d.index.value_or(UINT32_MAX); });
  // attach prints the new device (its name is what the admin needs next)
  bool stats = o.stats && !std::holds_alternative<BlkAttach>(cl.command);
  PrintList(
      o, list, [&](const BlkDev& d) { return BlkText(d, stats); },
      [&](JsonWriter& w, const BlkDev& d) { BlkJson(w, d, stats); });
  return kExitOk;
}

int RunWithSession(Session& s, const CommandLine& cl) {
  const Options& o = cl.options;
  const Command& command = cl.command;
  if (auto* m = std::get_if<Monitor>(&command)) return RunMonitor(s, o, *m);

  std::vector<Reply> replies = s.Run(BuildRequest(command));
  for (const std::string& w : s.warnings())
    std::fprintf(stderr, "ptlctl: warning: %s\n", w.c_str());
  if (s.dump_interrupted())
    std::fputs(
        "ptlctl: warning: the objects kept changing during the listing; it may be "
        "inconsistent\n",
        stderr);

  if (std::holds_alternative<IfaceShow>(command)) {
    auto list = DecodeAll(replies, DecodeIface);
    SortBy(list, [](const Iface& i) { return i.iface.value_or(UINT32_MAX); });
    PrintList(
        o, list, [&](const Iface& i) { return IfaceText(i, o.stats); },
        [&](JsonWriter& w, const Iface& i) { IfaceJson(w, i, o.stats); });
  } else if (std::holds_alternative<PeerShow>(command)) {
    auto list = DecodeAll(replies, DecodePeer);
    SortBy(list, [](const Peer& p) { return p.nid.value_or(UINT32_MAX); });
    PrintList(
        o, list, [&](const Peer& p) { return PeerText(p, o.stats); },
        [&](JsonWriter& w, const Peer& p) { PeerJson(w, p, o.stats); });
  } else if (std::holds_alternative<NiShow>(command)) {
    auto list = DecodeAll(replies, DecodeNi);
    SortBy(list, [](const Ni& n) {
      return std::make_tuple(n.iface.value_or(UINT32_MAX), n.pid.value_or(UINT32_MAX));
    });
    PrintList(
        o, list, [&](const Ni& n) { return NiText(n, o.stats); },
        [&](JsonWriter& w, const Ni& n) { NiJson(w, n, o.stats); });
  } else if (auto* ps = std::get_if<PidShow>(&command)) {
    auto list = DecodeAll(replies, DecodePidRes);
    // The kernel may list every interface's ranges: keep the one asked for.
    if (ps->iface)
      std::erase_if(list, [&](const PidRes& p) { return p.iface && *p.iface != *ps->iface; });
    SortBy(list, [](const PidRes& p) {
      return std::make_tuple(p.iface.value_or(UINT32_MAX), p.pid.value_or(UINT32_MAX));
    });
    PrintList(o, list, PidResText, PidResJson);
  } else if (std::holds_alternative<StatsShow>(command)) {
    Counters counters;
    for (const Reply& r : replies) {
      Counters more = DecodeStats(r.attrs);
      counters.insert(counters.end(), more.begin(), more.end());
    }
    if (o.json) {
      JsonWriter w(o.pretty);
      CountersJson(w, counters);
      Print(w.str() + "\n");
    } else {
      Print("stats:\n" + CountersText(counters));
    }
  }
  // Commands that change something print nothing, like ip(8).
  return kExitOk;
}

}  // namespace

std::string ErrorMessage(const Command& command, const NetlinkError::Details& d) {
  std::string what = Describe(command);
  if (d.error == EPERM)
    return "ptlctl: " + what + " needs " +
           (what.starts_with("blk ") ? "CAP_SYS_ADMIN" : "CAP_NET_ADMIN") + " (run it as root)\n";
  std::string out = "ptlctl: " + what + ": ";
  if (d.message.empty())
    out += std::strerror(d.error);
  else
    out += d.message + " (" + std::strerror(d.error) + ")";
  if (d.bad_attr) out += " [in " + AttrLabel(*d.bad_attr) + "]";
  out += "\n";
  if (d.missing_attr)
    out += "ptlctl: the kernel wants " + AttrLabel(*d.missing_attr) +
           ", which ptlctl did not send: is ptl.ko newer than ptlctl?\n";
  std::string hint = Hint(command, d);
  if (!hint.empty()) out += "ptlctl: " + hint + "\n";
  return out;
}

// The key of `iface bind ... key FILE` into set.key; false with a message.
// A file others may read is refused, as ssh refuses such a private key:
// whoever reads it can forge any node's frames.
static bool ReadKey(const CommandLine& cl, IfaceSet& set) {
  const std::string& path = *set.key_file;
  auto fail = [&](const std::string& why) {
    std::fprintf(stderr, "ptlctl: %s: key %s: %s\n", Describe(cl.command).c_str(), path.c_str(),
                 why.c_str());
    return false;
  };
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(std::strerror(errno));
  struct stat st {};
  char buf[256];
  ssize_t n = fstat(fd, &st) == 0 ? read(fd, buf, sizeof(buf)) : -1;
  int err = errno;
  close(fd);
  if (n < 0) return fail(std::strerror(err));
  std::optional<std::vector<uint8_t>> key;
  if (!S_ISREG(st.st_mode))
    key.reset();
  else
    key = ParseKey(std::string_view(buf, size_t(n)), PTL_AUTH_KEY_LEN);
  explicit_bzero(buf, sizeof(buf));
  if (!S_ISREG(st.st_mode)) return fail("not a regular file");
  if (st.st_mode & (S_IRWXG | S_IRWXO))
    return fail("group or others may read it: chmod 600 it (and make a new key)");
  if (!key)
    return fail("expected " + std::to_string(PTL_AUTH_KEY_LEN) + " bytes, or " +
                std::to_string(2 * PTL_AUTH_KEY_LEN) + " hex digits and a newline");
  set.key = std::move(*key);
  return true;
}

static int RunCommand(const CommandLine& cl);

int Run(const CommandLine& cl) {
  auto* set = std::get_if<IfaceSet>(&cl.command);
  if (!set || !set->key_file) return RunCommand(cl);
  CommandLine keyed = cl;
  IfaceSet& k = std::get<IfaceSet>(keyed.command);
  int rc = ReadKey(cl, k) ? RunCommand(keyed) : kExitFailed;
  explicit_bzero(k.key.data(), k.key.size());
  return rc;
}

static int RunCommand(const CommandLine& cl) {
  const Command& command = cl.command;
  if (auto* h = std::get_if<Help>(&command)) {
    Print(Usage(h->object));
    return kExitOk;
  }
  if (std::holds_alternative<Version>(command)) {
    Print("ptlctl " PTLCTL_VERSION " (generic netlink family \"" PTL_GENL_NAME "\", version " +
          std::to_string(PTL_GENL_VERSION) + ")\n");
    return kExitOk;
  }
  // Check the device here: "no such device" is clearer before any
  // conversation with the kernel (which checks again).
  if (auto* set = std::get_if<IfaceSet>(&command); set && set->dev) {
    if (if_nametoindex(set->dev->c_str()) == 0) {
      std::fprintf(stderr,
                   "ptlctl: %s: no network device \"%s\" in this network namespace (see ip "
                   "link)\n",
                   Describe(command).c_str(), set->dev->c_str());
      return kExitFailed;
    }
  }
  bool blk = std::holds_alternative<BlkShow>(command) ||
             std::holds_alternative<BlkAttach>(command) ||
             std::holds_alternative<BlkDetach>(command);
  try {
    if (blk) return RunBlk(cl);
    Session s(PTL_GENL_NAME, PTL_GENL_VERSION);
    return RunWithSession(s, cl);
  } catch (const FamilyMissing&) {
    std::fputs(blk ? kBlkFamilyMissing : kFamilyMissing, stderr);
  } catch (const NetlinkError& e) {
    std::fputs(ErrorMessage(command, e.details()).c_str(), stderr);
  } catch (const SessionError& e) {
    std::fprintf(stderr, "ptlctl: %s: %s\n", Describe(command).c_str(), e.what());
  }
  return kExitFailed;
}

}  // namespace ptlctl
