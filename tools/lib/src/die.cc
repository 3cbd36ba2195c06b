// SPDX-License-Identifier: BSD-3-Clause
// Messages and fatal errors (see die.h).
#include "ptl_tool/die.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <utility>

namespace ptl::tool {

namespace {

std::string& Prefix() {
  static std::string prefix;
  return prefix;
}

std::string Format(const char* fmt, va_list ap) {
  va_list copy;
  va_copy(copy, ap);
  int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  if (n < 0) return fmt;  // a bad format: better the raw text than nothing
  std::string s(static_cast<size_t>(n) + 1, '\0');
  std::vsnprintf(s.data(), s.size(), fmt, ap);
  s.resize(static_cast<size_t>(n));
  return s;
}

}  // namespace

void SetMessagePrefix(std::string prefix) { Prefix() = std::move(prefix); }

const std::string& MessagePrefix() { return Prefix(); }

void VMessage(const char* level, const char* fmt, va_list ap) {
  std::string line = Prefix() + level + Format(fmt, ap) + "\n";
  std::fflush(stdout);
  // Nothing useful to do if stderr is gone; the exit status still tells.
  ssize_t unused = write(STDERR_FILENO, line.data(), line.size());
  (void)unused;
}

void Message(const char* level, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  VMessage(level, fmt, ap);
  va_end(ap);
}

void DieWith(int status, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  VMessage("", fmt, ap);
  va_end(ap);
  std::exit(status);
}

void Die(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  VMessage("", fmt, ap);
  va_end(ap);
  std::exit(1);
}

}  // namespace ptl::tool
