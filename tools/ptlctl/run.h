// SPDX-License-Identifier: BSD-3-Clause
// Running a parsed command: the session with the kernel, the output, and
// error messages that say what to do.
#pragma once

#include <string>

#include "cli.h"
#include "netlink.h"

namespace ptlctl {

// Exit statuses, as documented in `ptlctl help`.
constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

// Runs the command; prints results on stdout and errors on stderr.
int Run(const CommandLine& cl);

// What to print when the kernel refused `command` (one or two lines, each
// starting with "ptlctl: ", ending in a newline).
std::string ErrorMessage(const Command& command, const NetlinkError::Details& d);

// The message for a missing family.
extern const char kFamilyMissing[];
extern const char kBlkFamilyMissing[];

}  // namespace ptlctl
