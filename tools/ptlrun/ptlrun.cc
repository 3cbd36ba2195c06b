// SPDX-License-Identifier: BSD-3-Clause
// ptlrun: start a program as a member of a Portals job.
//
//   ptlrun --jid N [--rank R --nidmap a:b:.. --pidmap x:y:..] -- program [args]
//
// Opens /dev/portals, sets the job id on that open file (PTL_IOC_SET_JID,
// needs CAP_NET_ADMIN), and execs the program with the descriptor inherited
// and named in PTL_FD. libptl-user's PtlInit adopts it, so every NI the
// program creates carries the launcher's job id; the application itself can
// never choose one. Install with file capabilities
// (setcap cap_net_admin+ep ptlrun) or setuid root: the device is opened with
// the caller's own credentials (they become the Portals uid) and every
// privilege is dropped before exec.
#include <fcntl.h>
#include <linux/portals.h>
#include <p3api/types.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "ptl_tool/die.h"
#include "ptl_tool/parse.h"

namespace {

[[noreturn]] void Usage(const char* why) {
  if (why) std::fprintf(stderr, "ptlrun: %s\n", why);
  std::fprintf(stderr,
               "usage: ptlrun --jid N [--rank R] [--nidmap N0:N1:..] [--pidmap P0:P1:..]"
               " -- program [args...]\n");
  std::exit(2);
}

// "ptlrun: WHAT: errno's text", exit status 1 (main sets the prefix).
[[noreturn]] void Die(const char* what) { ptl::tool::Die("%s: %s", what, std::strerror(errno)); }

using ptl::tool::ParseU32;  // decimal or 0x hex, no sign, no octal

bool IsIdList(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == 'x' || c == 'X'))
      return false;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  ptl::tool::SetMessagePrefix("ptlrun: ");
  std::optional<uint32_t> jid, rank;
  const char* nidmap = nullptr;
  const char* pidmap = nullptr;
  int i = 1;
  for (; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg == "-h" || arg == "--help") Usage(nullptr);
    if (i + 1 >= argc) Usage("option needs a value");
    const char* value = argv[++i];
    if (arg == "--jid") {
      // PTL_JID_ANY and PTL_JID_NONE are not jobs (the kernel refuses them).
      if (!(jid = ParseU32(value)) || *jid == PTL_JID_ANY || *jid == PTL_JID_NONE)
        Usage("bad --jid (0 .. 4294967293)");
    } else if (arg == "--rank") {
      if (!(rank = ParseU32(value))) Usage("bad --rank");
    } else if (arg == "--nidmap") {
      if (!IsIdList(value)) Usage("bad --nidmap");
      nidmap = value;
    } else if (arg == "--pidmap") {
      if (!IsIdList(value)) Usage("bad --pidmap");
      pidmap = value;
    } else {
      Usage("unknown option");
    }
  }
  if (!jid) Usage("--jid is required");
  if (i >= argc) Usage("no program given");
  if ((rank || nidmap || pidmap) && !(rank && nidmap && pidmap))
    Usage("--rank, --nidmap and --pidmap go together");

  const uid_t ruid = getuid();
  const gid_t rgid = getgid();
  const bool setuid_install = geteuid() != ruid;

  // Open as the caller: the opener's credentials are the Portals uid. For a
  // setuid-root install this drops the effective uid (and with it the
  // effective capabilities) while the saved uid keeps them for SET_JID.
  if (setuid_install && seteuid(ruid) != 0) Die("seteuid");
  const char* path = setuid_install ? nullptr : std::getenv("PTL_DEVICE");
  int fd = open(path && *path ? path : PTL_DEVICE_PATH, O_RDWR);  // inherited: no O_CLOEXEC
  if (fd < 0) Die("open " PTL_DEVICE_PATH);
  if (setuid_install && seteuid(0) != 0) Die("seteuid");

  ptl_ioc_version version{};
  version.size = sizeof(version);
  if (ioctl(fd, PTL_IOC_VERSION, &version) != 0 || version.abi_version != PTL_ABI_VERSION) {
    std::fprintf(stderr, "ptlrun: %s does not speak Portals ABI %d\n", PTL_DEVICE_PATH,
                 PTL_ABI_VERSION);
    return 1;
  }
  ptl_ioc_set_jid set{};
  set.size = sizeof(set);
  set.jid = *jid;
  int rc = ioctl(fd, PTL_IOC_SET_JID, &set);
  if (rc < 0) {
    if (errno == EPERM) {
      std::fprintf(stderr, "ptlrun: setting a job id needs CAP_NET_ADMIN\n");
      return 1;
    }
    Die("PTL_IOC_SET_JID");
  }
  if (rc != 0) {
    std::fprintf(stderr, "ptlrun: the kernel refused job id %u (Portals code %d)\n", *jid, rc);
    return 1;
  }

  // Drop every privilege for good before running the application.
  if (setresgid(rgid, rgid, rgid) != 0 || setresuid(ruid, ruid, ruid) != 0) Die("drop privileges");

  int flags = fcntl(fd, F_GETFD);
  if (flags < 0 || fcntl(fd, F_SETFD, flags & ~FD_CLOEXEC) != 0) Die("fcntl");
  std::string fd_text = std::to_string(fd);
  std::string jid_text = std::to_string(*jid);
  if (setenv("PTL_FD", fd_text.c_str(), 1) != 0 || setenv("PTL_MY_JID", jid_text.c_str(), 1) != 0)
    Die("setenv");
  if (rank) {
    std::string rank_text = std::to_string(*rank);
    if (setenv("PTL_MY_RID", rank_text.c_str(), 1) != 0 || setenv("PTL_NIDMAP", nidmap, 1) != 0 ||
        setenv("PTL_PIDMAP", pidmap, 1) != 0)
      Die("setenv");
  }
  execvp(argv[i], argv + i);
  std::fprintf(stderr, "ptlrun: exec %s: %s\n", argv[i], std::strerror(errno));
  return 127;
}
