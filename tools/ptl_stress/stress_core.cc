// SPDX-License-Identifier: BSD-3-Clause
// ptl_stress: payload generator, sizes, sequence tracker, ring allocator,
// encodings and report formatting (see stress_core.h).
#include "stress_core.h"

#include <algorithm>
#include <bit>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace ptl_stress {

// ------------------------------------------------------ random numbers

namespace {

uint64_t LoadLe64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  return v;
}

void StoreLe64(uint8_t* p, uint64_t v) {
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  std::memcpy(p, &v, 8);
}

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;

}  // namespace

uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t Rng::Next() { return Mix64(state_ += kGolden); }

uint64_t Rng::Below(uint64_t n) {
  // Lemire's multiply-shift with rejection: unbiased.
  unsigned __int128 m = static_cast<unsigned __int128>(Next()) * n;
  uint64_t low = static_cast<uint64_t>(m);
  if (low < n) {
    uint64_t threshold = -n % n;
    while (low < threshold) {
      m = static_cast<unsigned __int128>(Next()) * n;
      low = static_cast<uint64_t>(m);
    }
  }
  return static_cast<uint64_t>(m >> 64);
}

double Rng::Unit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

// ---------------------------------------------------------- payloads

uint64_t PayloadKey(uint64_t seed, Stream stream, uint64_t client, uint64_t seq) {
  uint64_t k = Mix64(seed ^ Mix64(static_cast<uint64_t>(stream) * kGolden));
  k = Mix64(k ^ Mix64(client + 0x1234567));
  return Mix64(k ^ Mix64(seq * kGolden + 0x51));
}

namespace {
inline uint64_t PatternWord(uint64_t key, uint64_t index) {
  return Mix64(key + (index + 1) * kGolden);
}
}  // namespace

uint8_t PatternByte(uint64_t key, uint64_t pos) {
  return static_cast<uint8_t>(PatternWord(key, pos / 8) >> (8 * (pos % 8)));
}

void FillPattern(uint8_t* dst, std::size_t len, uint64_t key, uint64_t pos) {
  std::size_t i = 0;
  while (i < len && (pos + i) % 8) {
    dst[i] = PatternByte(key, pos + i);
    i++;
  }
  uint64_t word = (pos + i) / 8;
  for (; i + 8 <= len; i += 8) StoreLe64(dst + i, PatternWord(key, word++));
  for (; i < len; i++) dst[i] = PatternByte(key, pos + i);
}

std::size_t FirstMismatch(const uint8_t* data, std::size_t len, uint64_t key, uint64_t pos) {
  std::size_t i = 0;
  while (i < len && (pos + i) % 8) {
    if (data[i] != PatternByte(key, pos + i)) return i;
    i++;
  }
  uint64_t word = (pos + i) / 8;
  for (; i + 8 <= len; i += 8) {
    if (LoadLe64(data + i) != PatternWord(key, word++)) break;
  }
  for (; i < len; i++)
    if (data[i] != PatternByte(key, pos + i)) return i;
  return len;
}

// ------------------------------------------------------------- sizes

SizeDist::SizeDist(uint64_t min, uint64_t max, std::vector<uint64_t> list)
    : min_(min), max_(std::max(min, max)), list_(std::move(list)) {
  if (!list_.empty()) {
    min_ = *std::min_element(list_.begin(), list_.end());
    max_ = *std::max_element(list_.begin(), list_.end());
  }
}

uint64_t SizeDist::Next(Rng& rng, uint64_t cap) const {
  uint64_t v;
  if (!list_.empty()) {
    v = list_[rng.Below(list_.size())];
  } else if (min_ == max_) {
    v = min_;
  } else {
    uint64_t pick = rng.Below(32);
    if (pick == 0) {
      v = min_;
    } else if (pick == 1) {
      v = max_;
    } else {
      double lo = std::log(static_cast<double>(std::max<uint64_t>(min_, 1)));
      double hi = std::log(static_cast<double>(max_) + 1.0);
      double x = std::exp(lo + rng.Unit() * (hi - lo));
      v = static_cast<uint64_t>(x);
      v = std::clamp(v, min_, max_);
    }
  }
  return std::min(v, cap);
}

// --------------------------------------------------- sequence tracking

SeqTracker::Verdict SeqTracker::Observe(uint64_t seq) {
  if (finished_) {  // the sender said it sent no more
    bogus_++;
    return Verdict::kBogus;
  }
  if (seq == next_) {
    received_++;
    next_++;
    return Verdict::kInOrder;
  }
  if (seq > next_) {
    if (seq - next_ > max_gap_) {
      bogus_++;
      return Verdict::kBogus;
    }
    received_++;
    missing_.emplace(next_, seq);
    missing_count_ += seq - next_;
    next_ = seq + 1;
    return Verdict::kGap;
  }
  // seq < next_: late if it is in a missing interval [start, end).
  auto it = missing_.upper_bound(seq);
  if (it != missing_.begin()) {
    --it;
    uint64_t start = it->first, end = it->second;
    if (seq >= start && seq < end) {
      missing_.erase(it);
      if (start < seq) missing_.emplace(start, seq);
      if (seq + 1 < end) missing_.emplace(seq + 1, end);
      missing_count_--;
      reorders_++;
      received_++;
      return Verdict::kLate;
    }
  }
  duplicates_++;
  return Verdict::kDuplicate;
}

void SeqTracker::Finish(uint64_t total) {
  if (finished_) return;
  finished_ = true;
  if (next_ < total) {
    lost_ += total - next_;
    next_ = total;
    return FinishMissing(total);
  }
  // Numbers at or above total that arrived were never sent: bogus.
  uint64_t beyond = next_ - total;
  uint64_t missing_beyond = 0;
  for (auto it = missing_.begin(); it != missing_.end();) {
    uint64_t start = std::max(it->first, total), end = it->second;
    if (end > total) {
      missing_beyond += end - start;
      if (it->first < total) {
        uint64_t s = it->first;
        it = missing_.erase(it);
        missing_.emplace(s, total);
        continue;
      }
      it = missing_.erase(it);
      continue;
    }
    ++it;
  }
  missing_count_ -= missing_beyond;
  uint64_t arrived_beyond = beyond - missing_beyond;
  bogus_ += arrived_beyond;
  received_ -= arrived_beyond;
  next_ = total;
  FinishMissing(total);
}

void SeqTracker::FinishMissing(uint64_t /*total*/) {
  lost_ += missing_count_;
  missing_count_ = 0;
  missing_.clear();
}

std::optional<uint64_t> SeqTracker::FirstMissing() const {
  if (missing_.empty()) return std::nullopt;
  return missing_.begin()->first;
}

std::optional<uint64_t> SeqTracker::Extend(uint32_t low32) const {
  int64_t diff = static_cast<int32_t>(low32 - static_cast<uint32_t>(next_));
  int64_t cand = static_cast<int64_t>(next_) + diff;
  if (cand < 0) return std::nullopt;
  return static_cast<uint64_t>(cand);
}

// ---------------------------------------------------- ring allocator

std::optional<uint64_t> RingAllocator::Start(uint64_t len) const {
  if (len > size_) return std::nullopt;
  uint64_t off = head_ % size_;
  uint64_t start = off + len > size_ ? head_ + (size_ - off) : head_;
  // An empty ring may skip to its start whatever the region's length.
  uint64_t base = head_ == tail_ ? start : tail_;
  if (start + len - base > size_) return std::nullopt;
  return start;
}

bool RingAllocator::Fits(uint64_t len) const { return Start(len).has_value(); }

std::optional<RingAllocator::Region> RingAllocator::Alloc(uint64_t len) {
  auto start = Start(len);
  if (!start) return std::nullopt;
  if (head_ == tail_) tail_ = *start;
  head_ = *start + len;
  return Region{*start % size_, head_};
}

void RingAllocator::ReleaseTo(uint64_t end) {
  if (end > tail_) tail_ = std::min(end, head_);
}

// ------------------------------------------------- wire encodings

uint64_t Errors::Total() const {
  return lost + duplicates + reorders + corruptions + bad_lengths + failures + timeouts +
         unexpected + eq_overflows + portals_drops;
}

void Errors::Add(const Errors& o) {
  lost += o.lost;
  duplicates += o.duplicates;
  reorders += o.reorders;
  corruptions += o.corruptions;
  bad_lengths += o.bad_lengths;
  failures += o.failures;
  timeouts += o.timeouts;
  unexpected += o.unexpected;
  eq_overflows += o.eq_overflows;
  portals_drops += o.portals_drops;
}

void Traffic::Add(const Traffic& o) {
  puts += o.puts;
  put_bytes += o.put_bytes;
  acks += o.acks;
  gets += o.gets;
  get_bytes += o.get_bytes;
  getputs += o.getputs;
  getput_bytes += o.getput_bytes;
}

PutLabel EncodePut(uint64_t seed, uint32_t client, uint64_t seq, uint8_t* buf, uint64_t len) {
  FillPattern(buf, len, PayloadKey(seed, Stream::kPut, client, seq));
  return PutLabel{MatchBits(Tag::kData, client, seq, len), PackHdr(seq, Crc32c(buf, len))};
}

std::optional<uint64_t> StreamVerifier::Label(uint64_t match_bits, uint64_t hdr_data,
                                              const SeqTracker& t, std::string* why) const {
  Bits b = DecodeBits(match_bits);
  auto seq = t.Extend(HdrSeq32(hdr_data));
  if (b.tag == Tag::kData && b.client == client_ && seq && (*seq & 0xffff) == b.seq16) return seq;
  char buf[200];
  std::snprintf(buf, sizeof(buf),
                "label corrupted: match bits %#" PRIx64
                " (tag %u, client %u, seq %u), hdr_data"
                " seq %u, expected client %u",
                match_bits, static_cast<unsigned>(b.tag), b.client, b.seq16, HdrSeq32(hdr_data),
                client_);
  *why = buf;
  return std::nullopt;
}

StreamVerifier::Result StreamVerifier::OnStart(uint64_t match_bits, uint64_t hdr_data) {
  std::string why;
  auto seq = Label(match_bits, hdr_data, starts_, &why);
  if (!seq) return {Outcome::kBadLabel, std::nullopt, why};  // its end counts it
  SeqTracker::Verdict v = starts_.Observe(*seq);
  if (v == SeqTracker::Verdict::kBogus) return {Outcome::kBogusSeq, seq, ""};  // idem
  in_flight_.insert(*seq);
  if (v == SeqTracker::Verdict::kLate) {
    char buf[160];
    std::snprintf(buf, sizeof(buf), "put seq %" PRIu64 " was matched after a later one (reordered)",
                  *seq);
    return {Outcome::kReordered, seq, buf};
  }
  return {Outcome::kOk, seq, ""};
}

StreamVerifier::Result StreamVerifier::OnPut(const Arrival& a) {
  char buf[320];
  std::string why;
  auto seq = Label(a.match_bits, a.hdr_data, ends_, &why);
  if (!seq) {
    bad_labels_++;
    return {Outcome::kBadLabel, std::nullopt, why};
  }
  Bits b = DecodeBits(a.match_bits);
  Result r{Outcome::kOk, seq, ""};
  if (a.rlength != b.length || a.mlength != b.length) {
    bad_lengths_++;
    std::snprintf(buf, sizeof(buf),
                  "put seq %" PRIu64 " announced %u bytes, rlength %" PRIu64 ", mlength %" PRIu64,
                  *seq, b.length, a.rlength, a.mlength);
    r = {Outcome::kBadLength, seq, buf};
  } else {
    uint32_t crc = Crc32c(a.data, a.mlength);
    uint64_t key = PayloadKey(seed_, Stream::kPut, client_, *seq);
    std::size_t bad = FirstMismatch(a.data, a.mlength, key);
    if (crc != HdrCrc(a.hdr_data) || bad != a.mlength) {
      corrupt_++;
      if (bad != a.mlength)
        std::snprintf(buf, sizeof(buf),
                      "put seq %" PRIu64 " (%" PRIu64
                      " bytes) corrupted: CRC %08x, sent %08x; "
                      "first wrong byte at %zu: %#04x, expected %#04x",
                      *seq, a.mlength, crc, HdrCrc(a.hdr_data), bad, a.data[bad],
                      PatternByte(key, bad));
      else
        std::snprintf(buf, sizeof(buf),
                      "put seq %" PRIu64 " (%" PRIu64
                      " bytes): CRC %08x, sent %08x (bytes match"
                      " the pattern: the header data is wrong)",
                      *seq, a.mlength, crc, HdrCrc(a.hdr_data));
      r = {Outcome::kCorrupt, seq, buf};
    }
  }
  uint64_t expected = ends_.next();
  switch (ends_.Observe(*seq)) {
    case SeqTracker::Verdict::kDuplicate:
      std::snprintf(buf, sizeof(buf), "put seq %" PRIu64 " arrived again (duplicate)", *seq);
      if (r.outcome == Outcome::kOk) r = {Outcome::kDuplicate, seq, buf};
      break;
    case SeqTracker::Verdict::kBogus:
      bogus_seen_++;
      std::snprintf(buf, sizeof(buf),
                    "put seq %" PRIu64 " is far beyond the expected %" PRIu64
                    " (a corrupted number?)",
                    *seq, expected);
      if (r.outcome == Outcome::kOk) {
        corrupt_++;
        r = {Outcome::kBogusSeq, seq, buf};
      }
      return r;
    default:  // in order, or a completion order that differs: both fine
      break;
  }
  in_flight_.erase(*seq);
  return r;
}

void StreamVerifier::Finish(uint64_t total) {
  starts_.Finish(total);
  ends_.Finish(total);
  in_flight_.clear();
}

uint64_t StreamVerifier::Accounted() const {
  return in_flight_.empty() ? starts_.next() : std::min(*in_flight_.begin(), starts_.next());
}

bool StreamVerifier::Settled(uint64_t total) const {
  return starts_.next() >= total && in_flight_.empty();
}

Errors StreamVerifier::errors() const {
  Errors e;
  e.lost = ends_.lost();
  e.duplicates = ends_.duplicates();
  e.reorders = starts_.reorders();
  e.corruptions = bad_labels_ + corrupt_ + (ends_.bogus() - bogus_seen_);
  e.bad_lengths = bad_lengths_;
  // An end whose start never came (known once finished).
  if (starts_.lost() > ends_.lost()) e.unexpected = starts_.lost() - ends_.lost();
  return e;
}

const char* RefuseReasonStr(uint32_t reason) {
  switch (reason) {
    case kAccepted:
      return "accepted";
    case kRefusedFull:
      return "the server already serves all the clients it was started for (--clients)";
    case kRefusedIdInUse:
      return "another client holds this client id (--id)";
    case kRefusedParams:
      return "window, ring or message size beyond the server's limits";
    case kRefusedResources:
      return "the server could not allocate or pin the receive ring (RLIMIT_MEMLOCK?)";
  }
  return "unknown reason";
}

CtrlMsg MakeCtrl(CtrlType type, uint32_t client_id, uint64_t nonce) {
  CtrlMsg m{};
  m.magic = kCtrlMagic;
  m.version = kCtrlVersion;
  m.type = static_cast<uint16_t>(type);
  m.client_id = client_id;
  m.nonce = nonce;
  return m;
}

void SealCtrl(CtrlMsg& m) { m.crc = Crc32c(&m, offsetof(CtrlMsg, crc)); }

bool CtrlValid(const CtrlMsg& m) {
  if (m.magic != kCtrlMagic || m.version != kCtrlVersion) return false;
  if (m.crc != Crc32c(&m, offsetof(CtrlMsg, crc))) return false;
  return m.type >= static_cast<uint16_t>(CtrlType::kHello) &&
         m.type <= static_cast<uint16_t>(CtrlType::kReport);
}

// ------------------------------------------------------------ misc

std::optional<std::pair<uint32_t, uint32_t>> ParseNidPid(std::string_view s) {
  auto colon = s.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  auto nid = ptl::tool::ParseU32(s.substr(0, colon));
  auto pid = ptl::tool::ParseU32(s.substr(colon + 1));
  if (!nid || !pid) return std::nullopt;
  return std::make_pair(*nid, *pid);
}

std::string ErrorsJson(const Errors& e) {
  return JsonObject()
      .Add("lost", e.lost)
      .Add("duplicates", e.duplicates)
      .Add("reorders", e.reorders)
      .Add("corruptions", e.corruptions)
      .Add("bad_lengths", e.bad_lengths)
      .Add("failures", e.failures)
      .Add("timeouts", e.timeouts)
      .Add("unexpected", e.unexpected)
      .Add("eq_overflows", e.eq_overflows)
      .Add("portals_drops", e.portals_drops)
      .Add("total", e.Total())
      .str();
}

std::string TrafficJson(const Traffic& t) {
  return JsonObject()
      .Add("ops", t.Ops())
      .Add("bytes", t.Bytes())
      .Add("puts", t.puts)
      .Add("put_bytes", t.put_bytes)
      .Add("acks", t.acks)
      .Add("gets", t.gets)
      .Add("get_bytes", t.get_bytes)
      .Add("getputs", t.getputs)
      .Add("getput_bytes", t.getput_bytes)
      .str();
}

std::string ErrorsText(const Errors& e) {
  char buf[320];
  std::snprintf(
      buf, sizeof(buf),
      "lost %llu, duplicates %llu, reorders %llu, corruptions %llu, bad lengths %llu, "
      "failures %llu, timeouts %llu, unexpected %llu, eq overflows %llu, "
      "portals drops %llu",
      static_cast<unsigned long long>(e.lost), static_cast<unsigned long long>(e.duplicates),
      static_cast<unsigned long long>(e.reorders), static_cast<unsigned long long>(e.corruptions),
      static_cast<unsigned long long>(e.bad_lengths), static_cast<unsigned long long>(e.failures),
      static_cast<unsigned long long>(e.timeouts), static_cast<unsigned long long>(e.unexpected),
      static_cast<unsigned long long>(e.eq_overflows),
      static_cast<unsigned long long>(e.portals_drops));
  return buf;
}

}  // namespace ptl_stress
