// SPDX-License-Identifier: BSD-3-Clause
// ptl_stress: the parts that need no Portals interface, unit-tested on their
// own (tools/ptl_stress/tests): the checksum, the payload generator, message
// sizes, the sequence tracker that classifies loss, duplication and
// reordering, the ring allocator behind the flow control, the encoding of
// match bits, header data and control messages, and the counters and JSON
// of the reports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ptl_tool/crc32c.h"
#include "ptl_tool/json.h"
#include "ptl_tool/parse.h"

namespace ptl_stress {

// ------------------------------------------------------------- checksum

// CRC-32C of tools/lib: Crc32c(data, len, crc), where `crc` is the result
// over the preceding bytes, so a buffer may be checked in pieces.
using ptl::tool::Crc32c;

// ------------------------------------------------------ random numbers

// The splitmix64 finalizer: a bijective 64-bit mixer.
uint64_t Mix64(uint64_t x);

// splitmix64: small, fast, the same on every platform and compiler (the
// standard library's distributions are not), so a seed reproduces a run.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next();
  uint64_t Below(uint64_t n);  // uniform in [0, n), n > 0
  double Unit();               // uniform in [0, 1)

 private:
  uint64_t state_;
};

// ---------------------------------------------------------- payloads

// What the bytes of a message depend on: one key per (seed, stream,
// client, sequence number). Streams keep puts, getputs and the server's
// buffers apart.
enum class Stream : uint64_t { kPut = 1, kGetBuffer = 2, kGetPut = 3, kGetPutArea = 4 };
uint64_t PayloadKey(uint64_t seed, Stream stream, uint64_t client, uint64_t seq);

// The pattern is addressable: byte p of the stream of `key` is byte p % 8
// (little-endian) of Mix64(key + (p / 8 + 1) * golden ratio), so any range
// of a large buffer can be produced or checked on its own. `pos` is the
// stream position of dst[0].
void FillPattern(uint8_t* dst, std::size_t len, uint64_t key, uint64_t pos = 0);
// Index of the first byte that differs from the pattern, or len if none.
std::size_t FirstMismatch(const uint8_t* data, std::size_t len, uint64_t key, uint64_t pos = 0);
uint8_t PatternByte(uint64_t key, uint64_t pos);

// ------------------------------------------------------------- sizes

// Message sizes in [min, max]: a fixed list (uniform choice) or, without
// one, log-uniform (as many messages of 1-2 KiB as of 512 KiB-1 MiB, so
// most are small) with 1/32 of the draws exactly min and 1/32 exactly max,
// so both ends are always exercised.
class SizeDist {
 public:
  SizeDist(uint64_t min, uint64_t max, std::vector<uint64_t> list = {});
  // A size no larger than cap (cap >= min for a range; list entries above
  // cap are clamped to it).
  uint64_t Next(Rng& rng, uint64_t cap = UINT64_MAX) const;
  uint64_t min() const { return min_; }
  uint64_t max() const { return max_; }

 private:
  uint64_t min_, max_;
  std::vector<uint64_t> list_;
};

// --------------------------------------------------- sequence tracking

// Classifies the sequence numbers of one stream as they arrive. The
// sender numbers messages 0, 1, 2, ...; the receiver expects them in that
// order, each exactly once.
//
//   in order    seq == next                     next = seq + 1
//   gap         next < seq <= next + max_gap    next..seq-1 become missing
//   late        seq < next and missing          a reorder (no longer missing)
//   duplicate   seq < next and not missing      seen before
//   bogus       seq > next + max_gap            a corrupted number; ignored
//
// Finish(total) closes the stream once the sender says how many it sent:
// what is still missing below total, and everything from next to total,
// is lost; numbers at or above total that arrived are bogus, and so is
// anything that arrives after Finish.
class SeqTracker {
 public:
  enum class Verdict { kInOrder, kGap, kLate, kDuplicate, kBogus };

  explicit SeqTracker(uint64_t max_gap = uint64_t{1} << 20) : max_gap_(max_gap) {}
  Verdict Observe(uint64_t seq);
  void Finish(uint64_t total);

  // The full number of a message whose low 32 bits travelled on the wire:
  // the one nearest to next (nullopt if that would be negative).
  std::optional<uint64_t> Extend(uint32_t low32) const;

  uint64_t next() const { return next_; }          // every seq below is accounted for
  uint64_t received() const { return received_; }  // distinct, in range
  uint64_t duplicates() const { return duplicates_; }
  uint64_t reorders() const { return reorders_; }
  uint64_t lost() const { return lost_; }
  uint64_t bogus() const { return bogus_; }
  bool finished() const { return finished_; }
  uint64_t missing() const { return missing_count_; }  // gaps not (yet) filled
  std::optional<uint64_t> FirstMissing() const;

 private:
  void FinishMissing(uint64_t total);

  uint64_t max_gap_;
  uint64_t next_ = 0;
  uint64_t received_ = 0, duplicates_ = 0, reorders_ = 0, lost_ = 0, bogus_ = 0;
  bool finished_ = false;
  std::map<uint64_t, uint64_t> missing_;  // [start, end) intervals
  uint64_t missing_count_ = 0;
};

// ---------------------------------------------------- ring allocator

// Space in a ring of `size` bytes handed out in order and released in the
// same order (FIFO), positions counted monotonically. A region never wraps:
// if it does not fit before the end of the ring, it starts at offset 0 and
// the tail end is skipped (an empty ring skips to offset 0 freely, so any
// region up to the ring's size fits once everything is released). The
// client mirrors the server's receive ring
// with one of these, so it never puts into bytes the server has not
// released (flow control).
class RingAllocator {
 public:
  explicit RingAllocator(uint64_t size) : size_(size) {}
  struct Region {
    uint64_t offset;  // in the ring
    uint64_t end;     // position to ReleaseTo once this region is free
  };
  std::optional<Region> Alloc(uint64_t len);
  bool Fits(uint64_t len) const;
  void ReleaseTo(uint64_t end);  // end <= head(), monotonic
  uint64_t size() const { return size_; }
  uint64_t used() const { return head_ - tail_; }
  uint64_t head() const { return head_; }

 private:
  std::optional<uint64_t> Start(uint64_t len) const;
  uint64_t size_;
  uint64_t head_ = 0, tail_ = 0;
};

// ------------------------------------------------- wire encodings

// Portal indexes (both sides use the same numbers on their own NI).
constexpr uint32_t kPtData = 4;    // server: per-client receive rings
constexpr uint32_t kPtGet = 5;     // server: the get buffer
constexpr uint32_t kPtGetPut = 6;  // server: per-client getput areas
constexpr uint32_t kPtCtrl = 7;    // both: control mailboxes
constexpr uint32_t kPtCredit = 8;  // client: credits from the server

// Match bits: tag (4 bits) | client id (12) | seq & 0xffff (16) | length (32).
enum class Tag : uint8_t { kData = 1, kGet = 2, kGetPut = 3, kCtrl = 4, kCredit = 5 };
constexpr uint32_t kMaxClientId = 0xfff;
constexpr uint64_t kMaxMessage = 0xffffffff;
// Ignored by the MEs: the per-message fields, or everything but the tag.
constexpr uint64_t kIgnoreOpFields = (uint64_t{1} << 48) - 1;
constexpr uint64_t kIgnoreAllButTag = (uint64_t{1} << 60) - 1;

struct Bits {
  Tag tag;
  uint32_t client;
  uint16_t seq16;
  uint32_t length;
};
constexpr uint64_t MatchBits(Tag tag, uint32_t client, uint64_t seq, uint64_t length) {
  return uint64_t{static_cast<uint8_t>(tag)} << 60 | uint64_t{client & kMaxClientId} << 48 |
         (seq & 0xffff) << 32 | (length & 0xffffffff);
}
constexpr Bits DecodeBits(uint64_t mb) {
  return Bits{static_cast<Tag>(mb >> 60), static_cast<uint32_t>(mb >> 48) & kMaxClientId,
              static_cast<uint16_t>(mb >> 32), static_cast<uint32_t>(mb)};
}

// Header data of a put or getput: seq & 0xffffffff (high half) | CRC-32C
// of the payload (low half).
constexpr uint64_t PackHdr(uint64_t seq, uint32_t crc) { return seq << 32 | crc; }
constexpr uint32_t HdrSeq32(uint64_t hdr) { return static_cast<uint32_t>(hdr >> 32); }
constexpr uint32_t HdrCrc(uint64_t hdr) { return static_cast<uint32_t>(hdr); }

// A put as the client builds it: buf[0, len) gets the pattern of (seed,
// client, seq); the match bits carry client, seq and length, the header
// data seq and the CRC-32C of the bytes.
struct PutLabel {
  uint64_t match_bits;
  uint64_t hdr_data;
};
PutLabel EncodePut(uint64_t seed, uint32_t client, uint64_t seq, uint8_t* buf, uint64_t len);

// Error counts, as both sides report them.
struct Errors {
  uint64_t lost = 0;           // never arrived (or never completed)
  uint64_t duplicates = 0;     // arrived, or completed, twice
  uint64_t reorders = 0;       // arrived after a later message of its stream,
                               // or an ACK before its put's SEND_END
  uint64_t corruptions = 0;    // bytes, checksum or header wrong
  uint64_t bad_lengths = 0;    // rlength/mlength not the announced length
  uint64_t failures = 0;       // events with ni_fail_type != PTL_NI_OK, failed calls
  uint64_t timeouts = 0;       // waits that exceeded --timeout-ms
  uint64_t unexpected = 0;     // events or messages that fit no operation
  uint64_t eq_overflows = 0;   // PTL_EQ_DROPPED: events were lost
  uint64_t portals_drops = 0;  // PTL_SR_DROP_COUNT of the NI
  uint64_t Total() const;
  void Add(const Errors& o);
};

// Traffic of one client as one side saw it.
struct Traffic {
  uint64_t puts = 0, put_bytes = 0, acks = 0;
  uint64_t gets = 0, get_bytes = 0;
  uint64_t getputs = 0, getput_bytes = 0;
  uint64_t Ops() const { return puts + gets + getputs; }
  uint64_t Bytes() const { return put_bytes + get_bytes + getput_bytes; }
  void Add(const Traffic& o);
};

// Verifies the puts of one client as the server sees them, in two steps:
//
//   PUT_START (the header matched): the order. Portals matches the puts of
//     one initiator in the order they were sent; a put matched after a
//     later one is a reorder (SeqTracker on the starts).
//   PUT_END (the data is in place): the label (tag, client id, the seq in
//     the match bits against the one in hdr_data), the lengths (announced,
//     rlength, mlength), the bytes (CRC-32C against hdr_data, and against
//     the pattern of the seq), and exactly once (SeqTracker on the ends).
//     Ends may come in any order: a large put's data can land after a
//     later small one's.
//
// Each message counts once per class: label or seq far out of the window
// -> corruptions; lengths -> bad_lengths; bytes -> corruptions; a second
// end -> duplicates; a late start -> reorders; no end by Finish -> lost.
// Accounted() is what a credit may release: every put below it has
// ended, or was never matched while a later one was (lost or reordered,
// errors either way).
class StreamVerifier {
 public:
  StreamVerifier(uint64_t seed, uint32_t client) : seed_(seed), client_(client) {}

  struct Arrival {
    uint64_t match_bits, hdr_data, rlength, mlength;
    const uint8_t* data;  // the mlength bytes received (PUT_END)
  };
  enum class Outcome { kOk, kBadLabel, kBadLength, kCorrupt, kDuplicate, kReordered, kBogusSeq };
  struct Result {
    Outcome outcome;
    std::optional<uint64_t> seq;
    std::string detail;  // for the log, when outcome != kOk
  };
  Result OnStart(uint64_t match_bits, uint64_t hdr_data);  // PUT_START
  Result OnPut(const Arrival& a);                          // PUT_END
  void Finish(uint64_t total);

  uint64_t Accounted() const;
  bool Settled(uint64_t total) const;  // every put below total matched and ended
  // lost, duplicates, reorders, corruptions, bad_lengths, unexpected (an
  // end without a start, known at Finish); the rest 0.
  Errors errors() const;
  const SeqTracker& matched() const { return starts_; }
  const SeqTracker& completed() const { return ends_; }
  std::size_t in_flight() const { return in_flight_.size(); }

 private:
  std::optional<uint64_t> Label(uint64_t match_bits, uint64_t hdr_data, const SeqTracker& t,
                                std::string* why) const;

  uint64_t seed_;
  uint32_t client_;
  SeqTracker starts_, ends_;
  std::set<uint64_t> in_flight_;  // matched, not ended
  uint64_t bad_labels_ = 0, bad_lengths_ = 0, corrupt_ = 0;
  uint64_t bogus_seen_ = 0;  // bogus verdicts of ends_ seen in OnPut (counted there)
};

// Control messages: fixed size, sealed with a CRC, sent to the peer's
// mailbox (portal kPtCtrl).
enum class CtrlType : uint16_t { kHello = 1, kWelcome = 2, kFin = 3, kReport = 4 };
constexpr uint32_t kCtrlMagic = 0x534c5450;  // "PTLS"
constexpr uint16_t kCtrlVersion = 1;

struct Hello {  // client -> server
  uint64_t seed, window, ring_bytes, max_size, planned_ops;
};
struct Welcome {  // server -> client; status != 0: refused
  uint64_t ring_bytes, get_bytes, get_seed, getput_bytes;
};
struct Fin {  // client -> server: what was sent
  uint64_t puts, put_bytes, gets, getputs, getput_area_crc;
};
struct Report {  // server -> client: what the server saw of it
  Traffic traffic;
  Errors errors;
};

struct CtrlMsg {
  uint32_t magic;
  uint16_t version;
  uint16_t type;
  uint32_t client_id;
  uint32_t status;  // Welcome: 0 accepted, else a RefuseReason
  uint64_t nonce;   // the client's session
  union Body {
    Body() : raw{} {}
    Hello hello;
    Welcome welcome;
    Fin fin;
    Report report;
    uint8_t raw[192];
  } body;
  uint32_t crc;  // CRC-32C of everything before it
  uint32_t pad;
};
static_assert(sizeof(CtrlMsg) == 224);
static_assert(std::is_trivially_copyable_v<CtrlMsg>);

enum RefuseReason : uint32_t {
  kAccepted = 0,
  kRefusedFull = 1,       // the server has its --clients already
  kRefusedIdInUse = 2,    // another session holds this client id
  kRefusedParams = 3,     // window, ring or sizes beyond the server's limits
  kRefusedResources = 4,  // the server could not allocate or pin the ring
};
const char* RefuseReasonStr(uint32_t reason);

CtrlMsg MakeCtrl(CtrlType type, uint32_t client_id, uint64_t nonce);
void SealCtrl(CtrlMsg& m);
bool CtrlValid(const CtrlMsg& m);  // magic, version, CRC, known type

// ------------------------------------------------------------ misc

// "NID:PID", decimal or 0x hex.
std::optional<std::pair<uint32_t, uint32_t>> ParseNidPid(std::string_view s);
// Sizes (4096, 64K, 1M, 1G: binary multiples) and the JSON of the reports
// are tools/lib's.
using ptl::tool::JsonObject;
using ptl::tool::ParseSize;
using ptl::tool::ParseSizeList;

std::string ErrorsJson(const Errors& e);
std::string TrafficJson(const Traffic& t);
// "lost 0, duplicates 0, ..."
std::string ErrorsText(const Errors& e);

}  // namespace ptl_stress
