// SPDX-License-Identifier: BSD-3-Clause
// ptlctl: configuration and inspection of Portals for Linux over the
// generic netlink family "portals" (uapi/linux/portals_netlink.h).
//
//   ptlctl [OPTIONS] OBJECT { COMMAND | help }
//
// The command line is parsed into a Command (cli.cc), turned into a
// request (request.cc), sent through a Session (netlink.cc); the answers
// are decoded (objects.cc) and printed as text or JSON (render.cc).
// Documentation/ptlctl.md is the reference.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "cli.h"
#include "run.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  ptlctl::CommandLine cl;
  try {
    cl = ptlctl::ParseCommandLine(args);
  } catch (const ptlctl::UsageError& e) {
    std::string help = "ptlctl";
    if (e.object() != ptlctl::Object::kNone)
      help += " " + std::string(ptlctl::ObjectName(e.object()));
    std::fprintf(stderr, "ptlctl: %s\nTry \"%s help\".\n", e.what(), help.c_str());
    return ptlctl::kExitUsage;
  }
  try {
    int status = ptlctl::Run(cl);
    if (std::fflush(stdout) != 0) {
      std::perror("ptlctl: writing the output");
      return ptlctl::kExitFailed;
    }
    return status;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ptlctl: %s\n", e.what());
    return ptlctl::kExitFailed;
  }
}
