// SPDX-License-Identifier: BSD-3-Clause
// The generic netlink session (see netlink.h).
//
// libnl sends and receives; the answers are interpreted here, because
// libnl 3.7 maps errno values to its own codes (losing EBUSY from EEXIST
// from EPERM), does not read extended ACKs, and ignores the error a dump
// reports in NLMSG_DONE. So every callback records what it saw in a
// State, and Transact turns that into replies or an exception.
#include "netlink.h"

#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <poll.h>
#include <sys/socket.h>

#include <cstring>

#include "attrs.h"

namespace ptlctl {

namespace {

struct MsgFree {
  void operator()(nl_msg* m) const { nlmsg_free(m); }
};
struct CbFree {
  void operator()(nl_cb* cb) const { nl_cb_put(cb); }
};

std::span<const uint8_t> Bytes(const nlmsghdr* h) {
  return {reinterpret_cast<const uint8_t*>(h), h->nlmsg_len};
}

// What the callbacks of one exchange saw.
struct State {
  uint16_t family = 0;
  std::span<const uint8_t> sent;
  std::vector<Reply> replies;
  bool done = false;
  bool interrupted = false;
  std::optional<NetlinkError::Details> error;
  std::vector<std::string> warnings;
  // Notifications only: the consumer and whether it wants more.
  const std::function<bool(const Reply&)>* on_event = nullptr;
  bool stop = false;
};

// A family message: the genl header, then attributes.
void Collect(State& st, const nlmsghdr* h) {
  if (h->nlmsg_type != st.family || h->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN) return;
  auto bytes = Bytes(h);
  genlmsghdr g;
  std::memcpy(&g, bytes.data() + NLMSG_HDRLEN, sizeof(g));
  auto attrs = bytes.subspan(NLMSG_HDRLEN + GENL_HDRLEN);
  Reply r{g.cmd, {attrs.begin(), attrs.end()}};
  if (st.on_event) {
    if (!(*st.on_event)(r)) st.stop = true;
  } else {
    st.replies.push_back(std::move(r));
  }
}

int OnValid(nl_msg* msg, void* arg) {
  auto& st = *static_cast<State*>(arg);
  Collect(st, nlmsg_hdr(msg));
  return st.stop ? NL_STOP : NL_OK;
}

// NLMSG_DONE, which carries the error of a dump that failed on the way.
int OnFinish(nl_msg* msg, void* arg) {
  auto& st = *static_cast<State*>(arg);
  NetlinkError::Details d = DecodeAck(Bytes(nlmsg_hdr(msg)), st.sent);
  if (d.error)
    st.error = d;
  else if (!d.message.empty())
    st.warnings.push_back(d.message);
  st.done = true;
  return NL_STOP;
}

// An ACK (NLMSG_ERROR with error 0), possibly with a warning.
int OnAck(nl_msg* msg, void* arg) {
  auto& st = *static_cast<State*>(arg);
  NetlinkError::Details d = DecodeAck(Bytes(nlmsg_hdr(msg)), st.sent);
  if (!d.message.empty()) st.warnings.push_back(d.message);
  st.done = true;
  return NL_STOP;
}

int OnError(sockaddr_nl*, nlmsgerr* err, void* arg) {
  auto& st = *static_cast<State*>(arg);
  // libnl hands over the payload; the header is just before it.
  auto* h = reinterpret_cast<const nlmsghdr*>(reinterpret_cast<const uint8_t*>(err) - NLMSG_HDRLEN);
  st.error = DecodeAck(Bytes(h), st.sent);
  if (!st.error->error) st.error->error = EPROTO;
  st.done = true;
  return NL_STOP;
}

int OnDumpInterrupted(nl_msg*, void* arg) {
  static_cast<State*>(arg)->interrupted = true;
  return NL_OK;  // keep the message; the dump is run again
}

int AcceptAnySequence(nl_msg*, void*) { return NL_OK; }

std::unique_ptr<nl_cb, CbFree> Callbacks(State& st) {
  std::unique_ptr<nl_cb, CbFree> cb(nl_cb_alloc(NL_CB_DEFAULT));
  if (!cb) throw SessionError("out of memory");
  nl_cb_set(cb.get(), NL_CB_VALID, NL_CB_CUSTOM, OnValid, &st);
  nl_cb_set(cb.get(), NL_CB_FINISH, NL_CB_CUSTOM, OnFinish, &st);
  nl_cb_set(cb.get(), NL_CB_ACK, NL_CB_CUSTOM, OnAck, &st);
  nl_cb_set(cb.get(), NL_CB_DUMP_INTR, NL_CB_CUSTOM, OnDumpInterrupted, &st);
  nl_cb_err(cb.get(), NL_CB_CUSTOM, OnError, &st);
  return cb;
}

std::string NlError(int nl_error) { return nl_geterror(nl_error); }

}  // namespace

NetlinkError::NetlinkError(Details d)
    : std::runtime_error(d.message.empty() ? std::strerror(d.error) : d.message),
      d_(std::move(d)) {}

NetlinkError::Details DecodeAck(std::span<const uint8_t> msg, std::span<const uint8_t> sent) {
  NetlinkError::Details d;
  nlmsghdr h;
  if (msg.size() < NLMSG_HDRLEN) return d;
  std::memcpy(&h, msg.data(), sizeof(h));
  auto payload = msg.subspan(NLMSG_HDRLEN);
  std::size_t tlvs;
  int error = 0;
  if (h.nlmsg_type == NLMSG_DONE) {
    // A dump's end: an int, 0 or the negative errno it failed with.
    if (payload.size() < sizeof(int)) return d;
    std::memcpy(&error, payload.data(), sizeof(int));
    tlvs = NLMSG_ALIGN(sizeof(int));
  } else {
    nlmsgerr e;
    if (payload.size() < sizeof(e)) return d;
    std::memcpy(&e, payload.data(), sizeof(e));
    error = e.error;
    // The request comes back whole unless capped (NETLINK_CAP_ACK).
    tlvs = h.nlmsg_flags & NLM_F_CAPPED
               ? NLMSG_ALIGN(sizeof(e))
               : NLMSG_ALIGN(sizeof(e) - sizeof(nlmsghdr) + e.msg.nlmsg_len);
  }
  d.error = error < 0 ? -error : error;
  if (!(h.nlmsg_flags & NLM_F_ACK_TLVS) || tlvs >= payload.size()) return d;
  for (const AttrView& a : ParseAttrs(payload.subspan(tlvs))) {
    if (a.type == NLMSGERR_ATTR_MSG) {
      d.message = a.String();
    } else if (a.type == NLMSGERR_ATTR_OFFS) {
      // An offset into the request as sent: name the attribute there.
      auto offs = a.U32();
      if (offs && *offs >= NLMSG_HDRLEN + GENL_HDRLEN && *offs + NLA_HDRLEN <= sent.size()) {
        nlattr na;
        std::memcpy(&na, sent.data() + *offs, sizeof(na));
        d.bad_attr = na.nla_type & NLA_TYPE_MASK;
      }
    } else if (a.type == NLMSGERR_ATTR_MISS_TYPE) {
      d.missing_attr = a.U32();
    }
  }
  return d;
}

void Session::SockFree::operator()(nl_sock* s) const { nl_socket_free(s); }

Session::Session(std::string_view family, uint8_t version) : version_(version) {
  sock_.reset(nl_socket_alloc());
  if (!sock_) throw SessionError("out of memory");
  if (int err = genl_connect(sock_.get()); err < 0)
    throw SessionError("cannot open a generic netlink socket: " + NlError(err));
  // Extended ACKs (error messages, the offending attribute) without the
  // request echoed back. Old kernels refuse the options: then no messages.
  int one = 1;
  int fd = nl_socket_get_fd(sock_.get());
  setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
  setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
  // Dumps may come in messages larger than a page.
  nl_socket_enable_msg_peek(sock_.get());
  Resolve(family);
}

void Session::Resolve(std::string_view family) {
  Request r{CTRL_CMD_GETFAMILY, false, {StringAttr(CTRL_ATTR_FAMILY_NAME, family)}};
  std::vector<Reply> replies;
  try {
    replies = Transact(GENL_ID_CTRL, 1, r);
  } catch (const NetlinkError& e) {
    if (e.error() == ENOENT) throw FamilyMissing(std::string(family));
    throw;
  }
  for (const Reply& reply : replies) {
    for (const AttrView& a : ParseAttrs(reply.attrs)) {
      if (a.type == CTRL_ATTR_FAMILY_ID) {
        if (auto id = a.U16()) family_id_ = *id;
      } else if (a.type == CTRL_ATTR_VERSION) {
        if (auto v = a.U32()) family_version_ = *v;
      } else if (a.type == CTRL_ATTR_MCAST_GROUPS) {
        for (const AttrView& group : ParseAttrs(a.payload)) {
          std::string name;
          std::optional<uint32_t> id;
          for (const AttrView& g : ParseAttrs(group.payload)) {
            if (g.type == CTRL_ATTR_MCAST_GRP_NAME) name = g.String();
            if (g.type == CTRL_ATTR_MCAST_GRP_ID) id = g.U32();
          }
          if (!name.empty() && id) groups_[name] = *id;
        }
      }
    }
  }
  if (!family_id_) throw SessionError("nlctrl gave no id for family " + std::string(family));
}

std::vector<Reply> Session::Transact(uint16_t family, uint8_t version, const Request& request) {
  std::unique_ptr<nl_msg, MsgFree> msg(nlmsg_alloc());
  if (!msg) throw SessionError("out of memory");
  if (!genlmsg_put(msg.get(), NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, request.dump ? NLM_F_DUMP : 0,
                   request.cmd, version))
    throw SessionError("cannot build the request");
  for (const Attr& a : request.attrs)
    if (nla_put(msg.get(), a.type, static_cast<int>(a.payload.size()), a.payload.data()) < 0)
      throw SessionError("the request does not fit in a message");
  // Port, sequence number, NLM_F_REQUEST and NLM_F_ACK.
  nl_complete_msg(sock_.get(), msg.get());
  std::span<const uint8_t> sent = Bytes(nlmsg_hdr(msg.get()));

  State st;
  st.family = family;
  st.sent = sent;
  auto cb = Callbacks(st);
  if (int err = nl_send(sock_.get(), msg.get()); err < 0)
    throw SessionError("cannot send to the kernel: " + NlError(err));
  while (!st.done) {
    int err = nl_recvmsgs(sock_.get(), cb.get());
    if (st.error) throw NetlinkError(*st.error);
    if (err < 0) throw SessionError("cannot read the kernel's answer: " + NlError(err));
  }
  warnings_.insert(warnings_.end(), st.warnings.begin(), st.warnings.end());
  dump_interrupted_ = st.interrupted;
  return std::move(st.replies);
}

std::vector<Reply> Session::Run(const Request& request) {
  warnings_.clear();
  std::vector<Reply> replies;
  for (int attempt = 0; attempt < 3; ++attempt) {
    replies = Transact(family_id_, version_, request);
    if (!request.dump || !dump_interrupted_) break;
  }
  return replies;
}

void Session::Join(std::string_view group) {
  auto it = groups_.find(std::string(group));
  if (it == groups_.end())
    throw SessionError("the family has no multicast group \"" + std::string(group) + "\"");
  if (int err = nl_socket_add_membership(sock_.get(), static_cast<int>(it->second)); err < 0)
    throw SessionError("cannot join multicast group \"" + std::string(group) +
                       "\": " + NlError(err));
}

void Session::Listen(const std::function<bool(const Reply&)>& on_event,
                     const std::function<void()>& on_lost, const sigset_t* wait_mask,
                     const volatile sig_atomic_t* stop) {
  State st;
  st.family = family_id_;
  st.on_event = &on_event;
  auto cb = Callbacks(st);
  // Notifications carry sequence number 0: no request to match.
  nl_cb_set(cb.get(), NL_CB_SEQ_CHECK, NL_CB_CUSTOM, AcceptAnySequence, nullptr);
  // A burst of events should not overrun the socket.
  nl_socket_set_buffer_size(sock_.get(), 1 << 20, 0);
  nl_socket_set_nonblocking(sock_.get());
  pollfd pfd{nl_socket_get_fd(sock_.get()), POLLIN, 0};
  while (!*stop && !st.stop) {
    int n = ppoll(&pfd, 1, nullptr, wait_mask);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw SessionError(std::string("poll: ") + std::strerror(errno));
    }
    int err = nl_recvmsgs(sock_.get(), cb.get());
    if (err == -NLE_NOMEM) {
      // ENOBUFS: the kernel dropped notifications for this socket.
      on_lost();
      continue;
    }
    if (err < 0 && err != -NLE_AGAIN)
      throw SessionError("cannot read notifications: " + NlError(err));
  }
}

}  // namespace ptlctl
