// SPDX-License-Identifier: BSD-3-Clause
// Messages and fatal errors of the command-line tools: every line goes to
// stderr as PREFIX LEVEL MESSAGE, where the tool sets PREFIX once (and again
// when the process takes a new role, e.g. "ptl_perf [pong]: " after fork).
#pragma once

#include <cstdarg>
#include <string>

namespace ptl::tool {

// What every message starts with, separator included: "ptlrun: ".
void SetMessagePrefix(std::string prefix);
const std::string& MessagePrefix();

// One line: prefix, level ("", "ERROR: ", ...), the formatted message and a
// newline, written with a single write(2) after flushing stdout, so that
// lines of concurrent processes never interleave and stdout comes first.
void VMessage(const char* level, const char* fmt, va_list ap) __attribute__((format(printf, 2, 0)));
void Message(const char* level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

// The message, then exit(status); Die exits 1.
[[noreturn]] void DieWith(int status, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
[[noreturn]] void Die(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace ptl::tool
