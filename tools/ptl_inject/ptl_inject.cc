// SPDX-License-Identifier: BSD-3-Clause
// ptl_inject: sends raw frames of the RTS/CTS transport (ptl_rtscts.ko) built
// with the transport's own codec, to test a receiver from the outside:
//
//   hostile  a catalogue of malformed and semantically wrong frames
//            (hostile.cc), counted by kind;
//   flood    many frames as fast as the socket takes them;
//   peers    one valid MSG from each of many fake nodes (peers.cc), to
//            measure what the receiver keeps per peer, counting the ACKs;
//   gap      frames of new streams from many fake nodes, sequence 0
//            missing: what the receiver holds ahead of a gap never filled;
//   partial  PUTs whose payload never finishes, then silence: messages
//            the receiver holds open;
//   credit   GETs past every grant of the request credit from one fake
//            node that never acknowledges the REPLYs (credit.cc);
//   forge    frames claiming another node's new incarnation;
//   record   the frames this host sends, into a pcap file (capture.cc),
//   replay   ... sent again: what an eavesdropper can replay;
//   list     the catalogue, without sending.
//
// Output: a few lines of text, or one JSON object with -j. See
// Documentation/ptl_inject.md.
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "capture.h"
#include "credit.h"
#include "hostile.h"
#include "options.h"
#include "packet_socket.h"
#include "peers.h"
#include "ptl_tool/json.h"

namespace ptl_inject {
namespace {

using Clock = std::chrono::steady_clock;

// Every mode's -j report: one object, members in the order added.
using Json = ptl::tool::JsonObject;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// The socket plus what went through it.
// --gap-us: the pause after each frame sent, in every mode that sends.
void PauseBetweenFrames(const Options& o) {
  if (!o.gap_us) return;
  timespec ts{time_t(o.gap_us / 1000000), long(o.gap_us % 1000000) * 1000};
  nanosleep(&ts, nullptr);
}

class Sender {
 public:
  explicit Sender(const Options& o)
      : o_(o), sock_(o.iface, o.ethertype), src_(o.src_mac.value_or(sock_.mac())) {}

  PacketSocket& socket() { return sock_; }

  // Sends `frame` after an Ethernet header (from `src`, default the
  // interface's or --src-mac); false if the kernel refused it.
  bool Send(std::span<const uint8_t> frame, const Mac* src = nullptr) {
    Bytes eth = EthernetFrame(o_.dst_mac, src ? *src : src_, o_.ethertype, frame);
    int err = sock_.Send(eth);
    if (err) {
      if (!errors_)
        std::fprintf(stderr, "ptl_inject: send on %s: %s (%zu bytes, MTU %u)\n", o_.iface.c_str(),
                     std::strerror(err), eth.size(), sock_.mtu());
      errors_++;
    } else {
      frames_++;
      bytes_ += eth.size();
    }
    PauseBetweenFrames(o_);
    return !err;
  }

  uint64_t frames() const { return frames_; }
  uint64_t bytes() const { return bytes_; }
  uint64_t errors() const { return errors_; }

  void Report(Json& j) const {
    j.Add("iface", o_.iface)
        .Add("frames", frames_)
        .Add("bytes", bytes_)
        .Add("send_errors", errors_);
  }

 private:
  const Options& o_;
  PacketSocket sock_;
  Mac src_;
  uint64_t frames_ = 0, bytes_ = 0, errors_ = 0;
};

std::string ExpectName(int expect) {
  return expect == kAnyRefusal ? "refused" : std::string(rtscts::ErrName(expect));
}

std::vector<HostileFrame> Catalogue(const Options& o) {
  std::vector<HostileFrame> cat = HostileCatalogue(o.hostile);
  auto kinds = HostileKinds(cat);
  for (const auto& k : o.kinds)
    if (std::find(kinds.begin(), kinds.end(), k) == kinds.end())
      throw UsageError("--kind: no kind '" + k + "' (see ptl_inject list --dst-nid N)");
  if (o.kinds.empty()) return cat;
  std::vector<HostileFrame> only;
  for (auto& f : cat)
    if (std::find(o.kinds.begin(), o.kinds.end(), f.kind) != o.kinds.end())
      only.push_back(std::move(f));
  return only;
}

int List(const Options& o) {
  auto cat = Catalogue(o);
  if (o.json) {
    std::string arr;
    for (const auto& f : cat) {
      Json j;
      j.Add("name", f.name).Add("kind", f.kind).Add("bytes", f.frame.size());
      j.Add("codec", ExpectName(f.expect)).Add("flaw", FlawName(f.flaw));
      if (f.flaw == Flaw::kBadPtlHeader) j.Add("ptl_codec", rtscts::PtlErrName(f.ptl_expect));
      j.Add("why", f.why);
      arr += (arr.empty() ? "" : ",") + j.str();
    }
    std::printf("{\"frames\":[%s]}\n", arr.c_str());
    return 0;
  }
  std::printf("%-34s %5s  %-9s %-17s %s\n", "name", "bytes", "codec", "flaw", "why");
  for (const auto& f : cat)
    std::printf("%-34s %5zu  %-9s %-17s %s\n", f.name.c_str(), f.frame.size(),
                ExpectName(f.expect).c_str(), std::string(FlawName(f.flaw)).c_str(), f.why.c_str());
  return 0;
}

// The counter of `key` in an ordered tally, added at the end if new.
uint64_t& Tally(std::vector<std::pair<std::string, uint64_t>>& tally, const std::string& key) {
  for (auto& [k, n] : tally)
    if (k == key) return n;
  return tally.emplace_back(key, 0).second;
}

int Hostile(const Options& o) {
  auto cat = Catalogue(o);
  Sender tx(o);
  auto t0 = Clock::now();
  std::vector<std::pair<std::string, uint64_t>> by_kind;
  uint64_t refused = 0, accepted = 0;
  for (uint32_t r = 0; r < o.repeat; r++)
    for (const auto& f : cat) {
      if (o.verbose && !o.json)
        std::printf("%-34s %5zu bytes  codec %-9s %s\n", f.name.c_str(), f.frame.size(),
                    ExpectName(f.expect).c_str(), f.why.c_str());
      if (!tx.Send(f.frame)) continue;
      Tally(by_kind, f.kind)++;
      (f.expect == RTSCTS_FRAME_OK ? accepted : refused)++;
    }
  double secs = Seconds(t0);
  if (o.json) {
    Json kinds;
    for (const auto& [k, n] : by_kind) kinds.Add(k, n);
    Json j;
    j.Add("mode", "hostile");
    tx.Report(j);
    j.Add("refused_by_codec", refused).Add("accepted_but_wrong", accepted);
    j.AddRaw("kinds", kinds.str()).AddFixed("seconds", secs, 3);
    std::printf("%s\n", j.str().c_str());
  } else {
    std::printf("hostile: sent %llu frames (%llu bytes) to %s on %s in %.3f s, %llu send errors\n",
                (unsigned long long)tx.frames(), (unsigned long long)tx.bytes(),
                FormatMac(o.dst_mac).c_str(), o.iface.c_str(), secs,
                (unsigned long long)tx.errors());
    std::printf("  refused by the frame codec: %llu; accepted but wrong: %llu\n",
                (unsigned long long)refused, (unsigned long long)accepted);
    for (const auto& [k, n] : by_kind)
      std::printf("  %-20s %llu\n", k.c_str(), (unsigned long long)n);
  }
  return tx.errors() ? 1 : 0;
}

int Flood(const Options& o) {
  std::vector<HostileFrame> cat;
  if (o.flood == FloodWhat::kCatalogue) cat = Catalogue(o);
  if (o.flood == FloodWhat::kCatalogue && cat.empty()) throw UsageError("an empty catalogue");
  Sender tx(o);
  uint64_t rng = o.hostile.seed;
  rtscts::Node src{o.hostile.src_nid, o.hostile.src_inc, o.hostile.stream};
  uint64_t span = 0xfffffffeULL - o.peers.first_nid + 1;
  Bytes ptl = rtscts::EncodePtl(rtscts::PutHeader(
      {src.nid, 1}, {o.hostile.dst_nid, o.hostile.dst_pid}, o.hostile.portal, 0, 16));
  auto t0 = Clock::now();
  for (uint64_t i = 0; i < o.count; i++) {
    switch (o.flood) {
      case FloodWhat::kRandom:
        tx.Send(RandomFrame(rng, 300));
        break;
      case FloodWhat::kCatalogue:
        tx.Send(cat[i % cat.size()].frame);
        break;
      case FloodWhat::kMsg:
      case FloodWhat::kMsgTagged: {
        rtscts_frame f = rtscts::Header(RTSCTS_MSG, src, o.hostile.dst_nid);
        f.dst_inc = o.hostile.dst_inc;
        f.seq = uint32_t(i);
        f.msg_id = uint32_t(i + 1);
        if (i == 0) f.flags = RTSCTS_F_SYN;
        // A forgery of an authenticated frame: Build() adds a made-up tag.
        if (o.flood == FloodWhat::kMsgTagged) f.flags |= RTSCTS_F_AUTH;
        tx.Send(rtscts::Build(f, ptl, rtscts::Pattern(16, uint8_t(i))));
        break;
      }
      case FloodWhat::kSyn: {
        FakePeer peer = PeerAt(o.peers, uint32_t(i % span));
        tx.Send(PeerMsg(o.peers, peer), o.own_mac ? nullptr : &peer.mac);
        break;
      }
    }
  }
  double secs = Seconds(t0);
  const char* what[] = {"random", "catalogue", "msg", "syn", "msg-tagged"};
  if (o.json) {
    Json j;
    j.Add("mode", "flood").Add("what", what[int(o.flood)]);
    tx.Report(j);
    j.AddFixed("seconds", secs, 3)
        .AddFixed("frames_per_second", secs > 0 ? double(tx.frames()) / secs : 0, 3);
    std::printf("%s\n", j.str().c_str());
  } else {
    std::printf(
        "flood (%s): sent %llu frames (%llu bytes) on %s in %.3f s (%.0f frames/s), %llu "
        "send errors\n",
        what[int(o.flood)], (unsigned long long)tx.frames(), (unsigned long long)tx.bytes(),
        o.iface.c_str(), secs, secs > 0 ? double(tx.frames()) / secs : 0.0,
        (unsigned long long)tx.errors());
  }
  return tx.errors() ? 1 : 0;
}

struct PeerTally {
  std::vector<uint8_t> acked, reset;
  uint64_t n_acked = 0, n_reset = 0, other = 0, bad = 0, not_ours = 0;

  explicit PeerTally(uint32_t n) : acked(n), reset(n) {}

  void Take(const PeersParams& p, const Received& rx) {
    Reply r = ClassifyReply(p, rx.payload);
    switch (r.kind) {
      case ReplyKind::kAck:
        if (!acked[r.peer]) n_acked++;
        acked[r.peer] = 1;
        break;
      case ReplyKind::kReset:
        if (!reset[r.peer]) n_reset++;
        reset[r.peer] = 1;
        break;
      case ReplyKind::kOther:
        other++;
        break;
      case ReplyKind::kBadFrame:
        bad++;
        break;
      case ReplyKind::kNotForUs:
        not_ours++;
        break;
    }
  }
};

int Peers(const Options& o) {
  const PeersParams& p = o.peers;
  Sender tx(o);
  if (o.listen && !o.own_mac) {
    try {
      tx.socket().Promiscuous();
    } catch (const std::system_error& e) {
      std::fprintf(stderr, "ptl_inject: %s: ACKs to the fake MACs may be missed\n", e.what());
    }
  }
  PeerTally tally(p.count);
  auto drain = [&](int timeout_ms) {
    while (auto rx = tx.socket().Receive(timeout_ms)) {
      tally.Take(p, *rx);
      if (timeout_ms && tally.n_acked == p.count) break;
    }
  };
  auto t0 = Clock::now();
  uint32_t rounds = 0;
  uint64_t sent = 0;
  for (uint32_t round = 0; round < (o.listen ? 1 + o.retries : 1); round++) {
    if (tally.n_acked == p.count) break;
    rounds++;
    for (uint32_t copy = 0; copy < (round ? 1 : o.repeat); copy++) {
      for (uint32_t i = 0; i < p.count; i++) {
        if (round && tally.acked[i]) continue;
        FakePeer peer = PeerAt(p, i);
        if (tx.Send(PeerMsg(p, peer), o.own_mac ? nullptr : &peer.mac)) sent++;
        if (o.listen) drain(0);  // keep the socket's queue short
      }
    }
    if (o.listen) {
      auto deadline = Clock::now() + std::chrono::milliseconds(o.wait_ms);
      while (tally.n_acked < p.count && Clock::now() < deadline) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        auto rx = tx.socket().Receive(int(left.count()));
        if (!rx) break;
        tally.Take(p, *rx);
      }
    }
    if (o.verbose && !o.json)
      std::printf("round %u: %llu of %u nodes acknowledged\n", round + 1,
                  (unsigned long long)tally.n_acked, p.count);
  }
  double secs = Seconds(t0);
  if (o.json) {
    Json j;
    j.Add("mode", "peers");
    tx.Report(j);
    j.Add("peers", p.count).Add("first_nid", FormatNid(p.first_nid));
    j.Add("target", FormatNid(p.target.nid) + ":" + std::to_string(p.target.pid));
    j.Add("msgs_sent", sent).Add("rounds", rounds).Add("listened", o.listen ? "yes" : "no");
    j.Add("acked", tally.n_acked).Add("reset", tally.n_reset).Add("other_frames", tally.other);
    j.Add("bad_frames", tally.bad).Add("not_for_us", tally.not_ours).AddFixed("seconds", secs, 6);
    std::printf("%s\n", j.str().c_str());
  } else {
    std::printf("peers: %u fake nodes %s..%s sent %llu MSGs to %s:%u in %u round(s), %.3f s\n",
                p.count, FormatNid(p.first_nid).c_str(),
                FormatNid(p.first_nid + p.count - 1).c_str(), (unsigned long long)sent,
                FormatNid(p.target.nid).c_str(), p.target.pid, rounds, secs);
    if (o.listen)
      std::printf(
          "  acknowledged: %llu of %u; reset: %llu; other frames to them: %llu; bad "
          "frames: %llu\n",
          (unsigned long long)tally.n_acked, p.count, (unsigned long long)tally.n_reset,
          (unsigned long long)tally.other, (unsigned long long)tally.bad);
  }
  return tx.errors() ? 1 : 0;
}

// Each node's frames 1..K, round-robin over the nodes (so that every node
// gets its share before a receiver's caps are reached), as large as the
// link allows unless --size says. A frame a receiver on this host holds
// stays charged to the socket that sent it; when that socket's send
// buffer is full, a new socket takes over and the old one is closed (its
// frames live on in the receiver): what a hostile process on the host
// does.
int Gap(const Options& o) {
  const PeersParams& p = o.peers;
  auto sock = std::make_unique<PacketSocket>(o.iface, o.ethertype);
  uint32_t size = o.frame_size ? o.frame_size : std::min<uint32_t>(sock->mtu(), RTSCTS_MAX_FRAME);
  if (size <= RTSCTS_DATA_HDR_LEN) throw UsageError("gap: the frames leave no room for payload");
  size_t payload = size - RTSCTS_DATA_HDR_LEN;
  std::vector<FakePeer> nodes;
  for (uint32_t i = 0; i < p.count; i++) nodes.push_back(PeerAt(p, i));
  uint64_t frames = 0, bytes = 0, errors = 0, sockets = 1;
  auto t0 = Clock::now();
  for (uint32_t seq = 1; seq <= o.gap_frames; seq++)
    for (const FakePeer& peer : nodes) {
      Bytes eth = EthernetFrame(o.dst_mac, o.own_mac ? sock->mac() : peer.mac, o.ethertype,
                                GapData(peer, o.hostile.dst_nid, seq, payload));
      int err = sock->SendNoWait(eth);
      if (err == EAGAIN || err == ENOBUFS) {
        sock = std::make_unique<PacketSocket>(o.iface, o.ethertype);
        sockets++;
        err = sock->Send(eth);
      }
      if (err) {
        if (!errors)
          std::fprintf(stderr, "ptl_inject: send on %s: %s (%zu bytes)\n", o.iface.c_str(),
                       std::strerror(err), eth.size());
        errors++;
        continue;
      }
      frames++;
      bytes += eth.size();
      PauseBetweenFrames(o);
    }
  double secs = Seconds(t0);
  if (o.json) {
    Json j;
    j.Add("mode", "gap").Add("iface", o.iface).Add("frames", frames).Add("bytes", bytes);
    j.Add("send_errors", errors).Add("sockets", sockets);
    j.Add("peers", p.count).Add("first_nid", FormatNid(p.first_nid));
    j.Add("frames_per_peer", o.gap_frames).Add("frame_size", size).AddFixed("seconds", secs, 3);
    std::printf("%s\n", j.str().c_str());
  } else {
    std::printf(
        "gap: %u fake nodes %s..%s sent %llu frames of %u bytes (seq 1..%u, 0 missing) to %s in "
        "%.3f s through %llu socket(s), %llu send errors\n",
        p.count, FormatNid(p.first_nid).c_str(), FormatNid(p.first_nid + p.count - 1).c_str(),
        (unsigned long long)frames, size, o.gap_frames, FormatNid(o.hostile.dst_nid).c_str(), secs,
        (unsigned long long)sockets, (unsigned long long)errors);
  }
  return errors ? 1 : 0;
}

// Each node's messages 0..K-1, round-robin over the nodes (each gets its
// share before a receiver's caps are reached), every one a PUT announcing
// --length bytes of which the MSG carries --eager (an RTS: none). Nothing
// more is sent and nothing is listened for: the nodes fall silent.
int Partial(const Options& o) {
  const PeersParams& p = o.peers;
  Sender tx(o);
  std::vector<FakePeer> nodes;
  for (uint32_t i = 0; i < p.count; i++) nodes.push_back(PeerAt(p, i));
  auto t0 = Clock::now();
  uint64_t sent = 0;
  for (uint32_t m = 0; m < o.partial_msgs; m++)
    for (const FakePeer& peer : nodes)
      if (tx.Send(PartialMsg(p, peer, m, o.partial_length, o.partial_eager, o.partial_rts),
                  o.own_mac ? nullptr : &peer.mac))
        sent++;
  double secs = Seconds(t0);
  const char* kind = o.partial_rts ? "RTS" : "MSG";
  if (o.json) {
    Json j;
    j.Add("mode", "partial").Add("frame", kind);
    tx.Report(j);
    j.Add("peers", p.count).Add("first_nid", FormatNid(p.first_nid));
    j.Add("target", FormatNid(p.target.nid) + ":" + std::to_string(p.target.pid));
    j.Add("msgs_per_peer", o.partial_msgs).Add("msgs_sent", sent);
    j.Add("length", o.partial_length).Add("eager", o.partial_rts ? 0 : o.partial_eager);
    j.AddFixed("seconds", secs, 3);
    std::printf("%s\n", j.str().c_str());
  } else {
    std::printf(
        "partial: %u fake nodes %s..%s sent %llu %s frames (PUTs of %llu bytes, %u sent) to "
        "%s:%u in %.3f s, %llu send errors\n",
        p.count, FormatNid(p.first_nid).c_str(), FormatNid(p.first_nid + p.count - 1).c_str(),
        (unsigned long long)sent, kind, (unsigned long long)o.partial_length,
        o.partial_rts ? 0 : o.partial_eager, FormatNid(p.target.nid).c_str(), p.target.pid, secs,
        (unsigned long long)tx.errors());
  }
  return tx.errors() ? 1 : 0;
}

// One fake node (--src-nid) that ignores the request credit: GET 0 opens
// its stream (SYN|ACK_REQ) and, once the target answers, tells it the
// target's incarnation; then GETs 1..N-1 go at once, past every grant, and
// --rounds times everything the target has not acknowledged goes again,
// --wait-ms apart. The fake node answers CHALLENGEs, starts a new stream
// after a RESET of its own, and never acknowledges the target's stream:
// every REPLY the target makes waits for it until the peer timeout.
int Credit(const Options& o) {
  const CreditParams& c = o.credit;
  PeersParams p = o.peers;
  p.first_nid = o.hostile.src_nid;
  FakePeer peer = PeerAt(p, 0);
  Sender tx(o);
  if (o.src_mac) {
    try {
      tx.socket().Promiscuous();
    } catch (const std::system_error& e) {
      std::fprintf(stderr, "ptl_inject: %s: frames to --src-mac may be missed\n", e.what());
    }
  }
  CreditTally tally(p, peer, c.gets);
  uint32_t dst_inc = o.hostile.dst_inc;
  std::vector<uint32_t> sends(c.gets);
  uint64_t answered = 0, streams = 1;
  // Frames from the target: CHALLENGEs answered at once.
  auto take = [&](const Received& rx) {
    if (auto ch = tally.Take(rx.payload)) {
      if (tx.Send(CreditChallengeAck(peer, p.target.nid, ch->inc, ch->nonce))) answered++;
    }
    if (tally.have_inc()) dst_inc = tally.target_inc();
  };
  auto listen = [&](uint32_t ms, bool until_acked) {
    auto deadline = Clock::now() + std::chrono::milliseconds(ms);
    while (!(until_acked && tally.acked())) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) break;
      auto rx = tx.socket().Receive(int(left.count()));
      if (!rx) break;
      take(*rx);
    }
  };
  auto send_get = [&](uint32_t i, bool ack_req) {
    if (tx.Send(CreditGet(p, c, peer, i, !tally.acked(), ack_req, dst_inc))) sends[i]++;
    while (auto rx = tx.socket().Receive(0)) take(*rx);  // keep the queue short
  };
  auto t0 = Clock::now();

  // The handshake: GET 0 until the target acknowledges it.
  uint64_t resets = 0;
  for (uint32_t attempt = 0; attempt <= o.retries && !tally.acked(); attempt++) {
    send_get(0, true);
    listen(o.wait_ms, true);
    if (tally.resets > resets && !tally.acked()) {
      // The target keeps no state for our stream (or we named another
      // incarnation of it): start again on a new one, as a node does.
      resets = tally.resets;
      peer.stream++;
      streams++;
      tally.NewStream(peer.stream);
      std::fill(sends.begin(), sends.end(), 0);
    }
  }
  bool handshake = tally.acked();
  if (handshake) {
    for (uint32_t i = 1; i < c.gets; i++) send_get(i, i + 1 == c.gets);
    listen(o.wait_ms, false);
    for (uint32_t r = 0; r < c.rounds; r++) {
      for (uint32_t i = tally.ack(); i < c.gets; i++) send_get(i, i + 1 == c.gets);
      listen(o.wait_ms, false);
    }
  }
  double secs = Seconds(t0);
  // The first GET the target did not take, and how often it was sent:
  // each arrival of it past the credit is one refusal at the target.
  uint32_t head = tally.ack();
  uint64_t head_sends = head < c.gets ? sends[head] : 0;
  uint64_t gets_sent = 0;
  for (uint32_t n : sends) gets_sent += n;
  if (o.json) {
    Json j;
    j.Add("mode", "credit");
    tx.Report(j);
    j.Add("src_nid", FormatNid(peer.nid));
    j.Add("target", FormatNid(p.target.nid) + ":" + std::to_string(p.target.pid));
    j.Add("handshake", handshake ? "yes" : "no").Add("target_inc", tally.target_inc());
    j.Add("streams", streams).Add("gets", c.gets).Add("length", c.length);
    j.Add("rounds", c.rounds).Add("gets_sent", gets_sent);
    j.Add("taken", tally.ack()).Add("head_sends", head_sends);
    j.Add("grant_max", tally.grant_max()).Add("grant_min", tally.grant_min());
    j.Add("ack_frames", tally.ack_frames).Add("acks", tally.acks_only);
    j.Add("replies", tally.replies).Add("reply_frames", tally.reply_frames);
    j.Add("reply_bytes", tally.reply_bytes).Add("data_frames", tally.data_frames);
    j.Add("challenges", tally.challenges).Add("challenges_answered", answered);
    j.Add("resets", tally.resets).Add("other_frames", tally.other);
    j.Add("bad_frames", tally.bad).AddFixed("seconds", secs, 3);
    std::printf("%s\n", j.str().c_str());
  } else {
    std::printf(
        "credit: %s sent %llu GETs (%u distinct, %u round(s) again) to %s:%u in %.3f s, %llu "
        "send errors; handshake %s (target incarnation 0x%08x)\n",
        FormatNid(peer.nid).c_str(), (unsigned long long)gets_sent, c.gets, c.rounds,
        FormatNid(p.target.nid).c_str(), p.target.pid, secs, (unsigned long long)tx.errors(),
        handshake ? "done" : "failed", tally.target_inc());
    std::printf(
        "  the target took %u GETs (the first refused one sent %llu times); grants %u..%u in "
        "%llu frames\n",
        tally.ack(), (unsigned long long)head_sends, tally.grant_min(), tally.grant_max(),
        (unsigned long long)tally.ack_frames);
    std::printf(
        "  REPLYs seen: %llu distinct in %llu frames; challenges %llu (answered %llu), resets "
        "%llu, other %llu, bad %llu\n",
        (unsigned long long)tally.replies, (unsigned long long)tally.reply_frames,
        (unsigned long long)tally.challenges, (unsigned long long)answered,
        (unsigned long long)tally.resets, (unsigned long long)tally.other,
        (unsigned long long)tally.bad);
  }
  if (!handshake) std::fprintf(stderr, "ptl_inject: credit: the target never answered GET 0\n");
  return tx.errors() || !handshake ? 1 : 0;
}

// Frames that claim to come from --src-nid in each of --incs, from
// --src-mac (default: the interface's): a third host forging a peer's
// restart (Documentation/security.md, R4). An ACK without ack fields, or
// a CHALLENGE_ACK with a guessed nonce.
int Forge(const Options& o) {
  PacketSocket sock(o.iface, o.ethertype);
  Mac src = o.src_mac ? *o.src_mac : sock.mac();
  uint64_t frames = 0, errors = 0;
  for (uint32_t inc : o.forge_incs) {
    rtscts::Node node{o.hostile.src_nid, inc, 0};
    rtscts_frame f = rtscts::Header(o.forge_type, node, o.hostile.dst_nid);
    f.ack_stream = f.ack = 0;
    f.dst_inc = o.hostile.dst_inc;
    Bytes eth = EthernetFrame(o.dst_mac, src, o.ethertype, rtscts::Build(f));
    if (int err = sock.Send(eth)) {
      if (!errors)
        std::fprintf(stderr, "ptl_inject: send on %s: %s\n", o.iface.c_str(), std::strerror(err));
      errors++;
      continue;
    }
    frames++;
  }
  if (o.json) {
    Json j;
    j.Add("mode", "forge").Add("iface", o.iface).Add("type", rtscts::TypeName(o.forge_type));
    j.Add("src_nid", FormatNid(o.hostile.src_nid)).Add("frames", frames);
    j.Add("send_errors", errors);
    std::printf("%s\n", j.str().c_str());
  } else {
    std::printf("forge: %llu %s frames from %s (%zu incarnations) to %s, %llu send errors\n",
                (unsigned long long)frames, std::string(rtscts::TypeName(o.forge_type)).c_str(),
                FormatNid(o.hostile.src_nid).c_str(), o.forge_incs.size(),
                FormatNid(o.hostile.dst_nid).c_str(), (unsigned long long)errors);
  }
  return errors ? 1 : 0;
}

// The transport's frames this host sends on --iface (its own, or those of
// a namespace on the other end of a veth: anything an eavesdropper on the
// segment sees), for --wait-ms or until --count, into a pcap file.
int Record(const Options& o) {
  PacketSocket sock(o.iface, o.ethertype, Direction::kOutgoing);
  PcapWriter out(o.file);
  auto t0 = Clock::now();
  auto deadline = t0 + std::chrono::milliseconds(o.wait_ms);
  uint64_t frames = 0, bytes = 0;
  while (!o.count || frames < o.count) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) break;
    auto frame = sock.ReceiveSent(int(left.count()));
    if (!frame) break;
    out.Write(*frame);
    frames++;
    bytes += frame->size();
  }
  out.Close();
  if (o.json) {
    Json j;
    j.Add("mode", "record").Add("iface", o.iface).Add("file", o.file);
    j.Add("frames", frames).Add("bytes", bytes).AddFixed("seconds", Seconds(t0), 3);
    std::printf("%s\n", j.str().c_str());
  } else {
    std::printf("record: %llu frames (%llu bytes) sent on %s in %.3f s, into %s\n",
                (unsigned long long)frames, (unsigned long long)bytes, o.iface.c_str(), Seconds(t0),
                o.file.c_str());
  }
  return 0;
}

// Every frame of --file sent again on --iface, byte for byte but for the
// source address with --src-mac (the Ethernet header is not under the tag).
int Replay(const Options& o) {
  std::vector<Bytes> frames = ReadPcap(o.file);
  PacketSocket sock(o.iface, o.ethertype);
  uint64_t sent = 0, errors = 0;
  for (Bytes& f : frames) {
    if (o.src_mac) std::copy(o.src_mac->begin(), o.src_mac->end(), f.begin() + 6);
    if (int err = sock.Send(f)) {
      if (!errors)
        std::fprintf(stderr, "ptl_inject: send on %s: %s\n", o.iface.c_str(), std::strerror(err));
      errors++;
      continue;
    }
    sent++;
  }
  if (o.json) {
    Json j;
    j.Add("mode", "replay").Add("iface", o.iface).Add("file", o.file);
    j.Add("frames", sent).Add("send_errors", errors);
    std::printf("%s\n", j.str().c_str());
  } else {
    std::printf("replay: %llu of %zu frames of %s sent again on %s, %llu send errors\n",
                (unsigned long long)sent, frames.size(), o.file.c_str(), o.iface.c_str(),
                (unsigned long long)errors);
  }
  return errors ? 1 : 0;
}

}  // namespace
}  // namespace ptl_inject

int main(int argc, char** argv) {
  using namespace ptl_inject;
  Options o;
  try {
    o = ParseCommandLine(std::vector<std::string>(argv + 1, argv + argc));
    switch (o.mode) {
      case Mode::kHelp:
        std::fputs(Usage().c_str(), stdout);
        return 0;
      case Mode::kList:
        return List(o);
      case Mode::kHostile:
        return Hostile(o);
      case Mode::kFlood:
        return Flood(o);
      case Mode::kPeers:
        return Peers(o);
      case Mode::kGap:
        return Gap(o);
      case Mode::kPartial:
        return Partial(o);
      case Mode::kCredit:
        return Credit(o);
      case Mode::kForge:
        return Forge(o);
      case Mode::kRecord:
        return Record(o);
      case Mode::kReplay:
        return Replay(o);
    }
  } catch (const UsageError& e) {
    std::fprintf(stderr, "ptl_inject: %s\n(ptl_inject --help for usage)\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ptl_inject: %s\n", e.what());
    return 1;
  }
  return 0;
}
