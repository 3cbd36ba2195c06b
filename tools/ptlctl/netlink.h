// SPDX-License-Identifier: BSD-3-Clause
// A generic netlink session over libnl: one socket, the family resolved
// through nlctrl, requests that wait for their answer (a reply and an ACK,
// or a whole dump), errors decoded with the kernel's extended ACK, and
// multicast notifications.
#pragma once

#include <signal.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "request.h"

struct nl_sock;

namespace ptlctl {

// The kernel refused a request. `error` is the positive errno; the rest
// is what its extended ACK said, if anything.
class NetlinkError : public std::runtime_error {
 public:
  struct Details {
    int error = 0;
    std::string message;                   // NLMSGERR_ATTR_MSG
    std::optional<uint16_t> bad_attr;      // attribute at NLMSGERR_ATTR_OFFS
    std::optional<uint32_t> missing_attr;  // NLMSGERR_ATTR_MISS_TYPE
  };
  explicit NetlinkError(Details d);
  const Details& details() const { return d_; }
  int error() const { return d_.error; }

 private:
  Details d_;
};

// The kernel has no generic netlink family of that name.
class FamilyMissing : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Anything else that stops the conversation (socket errors, a malformed
// answer).
class SessionError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Decodes an NLMSG_ERROR or NLMSG_DONE message `msg` (header included):
// the error (positive errno, 0 for an ACK) and the extended ACK's message,
// bad attribute (looked up in `sent`, the request as sent) and missing
// attribute.
NetlinkError::Details DecodeAck(std::span<const uint8_t> msg, std::span<const uint8_t> sent);

// One message of an answer: its genl command and its attributes.
struct Reply {
  uint8_t cmd = 0;
  std::vector<uint8_t> attrs;
};

class Session {
 public:
  // Opens a socket and resolves `family` (throws FamilyMissing).
  explicit Session(std::string_view family, uint8_t version);
  ~Session() = default;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  uint16_t family_id() const { return family_id_; }
  uint32_t family_version() const { return family_version_; }
  // The family's multicast groups by name.
  const std::map<std::string, uint32_t>& groups() const { return groups_; }

  // Sends `request` and returns its replies: for a do, the reply messages
  // before the ACK (often none); for a dump, every message. A dump that
  // the kernel flags NLM_F_DUMP_INTR (objects changed meanwhile) is run
  // again, up to three times; dump_interrupted() says if the last one
  // still was. Throws NetlinkError when the kernel refuses.
  std::vector<Reply> Run(const Request& request);
  bool dump_interrupted() const { return dump_interrupted_; }

  // Warnings the kernel attached to a successful ACK (extended ACK message
  // with error 0), from the last Run.
  const std::vector<std::string>& warnings() const { return warnings_; }

  // Joins a multicast group of the family (throws SessionError if the
  // family has no such group).
  void Join(std::string_view group);

  // Delivers the family's notifications to `on_event` until it returns
  // false or `*stop` is set. Signals are let in only while waiting, with
  // `wait_mask` as the signal mask (ppoll), so a handler that sets `*stop`
  // ends the loop without a race. Lost notifications (receive buffer
  // overrun) are reported to `on_lost` and do not end the loop.
  void Listen(const std::function<bool(const Reply&)>& on_event,
              const std::function<void()>& on_lost, const sigset_t* wait_mask,
              const volatile sig_atomic_t* stop);

 private:
  std::vector<Reply> Transact(uint16_t family, uint8_t version, const Request& request);
  void Resolve(std::string_view family);

  struct SockFree {
    void operator()(nl_sock* s) const;
  };
  std::unique_ptr<nl_sock, SockFree> sock_;
  uint16_t family_id_ = 0;
  uint8_t version_ = 0;
  uint32_t family_version_ = 0;
  std::map<std::string, uint32_t> groups_;
  bool dump_interrupted_ = false;
  std::vector<std::string> warnings_;
};

}  // namespace ptlctl
