// Test harness for the Portals core: an NI with real user-space buffers,
// EQ rings read with the library's reader, and a loopback "network" that
// moves encoded frames between NIs exactly as the kernel glue will.
#pragma once

extern "C" {
#include <p3api/eq_ring.h>

#include "ptl_core.h"
}

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

namespace ptltest {

using Bytes = std::vector<uint8_t>;

inline constexpr ptl_process_id_t kAnyId{PTL_NID_ANY, PTL_PID_ANY};
inline constexpr ptl_uid_t kUid = 1000;
inline constexpr ptl_jid_t kJid = 77;

// Hooks record what the core asked of the glue.
struct GlueLog {
  int released = 0;
  std::vector<void*> released_mem;
  int notified = 0;
  long charged = 0;                                // bytes the core holds now
  long budget = std::numeric_limits<long>::max();  // refuse charges past it
  int refused = 0;
  bool reusable = false;  // the answer to mem_reusable
  std::vector<void*> reuse_asked;
};

inline void RecordRelease(void* glue, void* mem) {
  auto* log = static_cast<GlueLog*>(glue);
  log->released++;
  log->released_mem.push_back(mem);
}

inline void RecordNotify(void* glue, void* /*eq_priv*/) { static_cast<GlueLog*>(glue)->notified++; }

inline bool RecordCharge(void* glue, long bytes) {
  auto* log = static_cast<GlueLog*>(glue);
  if (bytes > 0 && log->charged + bytes > log->budget) {
    log->refused++;
    return false;
  }
  log->charged += bytes;
  EXPECT_GE(log->charged, 0) << "the core returned more than it charged";
  return true;
}

inline bool RecordReusable(void* glue, void* mem, const ptl_md_t* /*desc*/) {
  auto* log = static_cast<GlueLog*>(glue);
  log->reuse_asked.push_back(mem);
  return log->reusable;
}

inline const ptlc_ops kOps{RecordRelease, RecordNotify, RecordCharge, RecordReusable};

// An event queue whose ring lives in test memory.
class Eq {
 public:
  Eq(ptlc_ni* ni, ptl_size_t count, ptl_eq_handler_t handler = nullptr) : ni_(ni) {
    uint32_t n = ptlc_eq_slots_for(count);
    ring_.resize(n);
    EXPECT_EQ(ptlc_eq_alloc(ni, ring_.data(), n, handler, this, &handle_), PTL_OK);
    expected_ = ptl_eq_ring_first_seq(n);
  }
  ptl_handle_eq_t handle() const { return handle_; }
  ptl_seq_t expected() const { return expected_; }
  uint32_t slots() const { return static_cast<uint32_t>(ring_.size()); }
  const std::vector<ptl_event_t>& ring() const { return ring_; }
  int Get(ptl_event_t* ev) { return ptl_eq_ring_get(ring_.data(), slots(), &expected_, ev); }
  // All events available now (asserts none were dropped).
  std::vector<ptl_event_t> Drain() {
    std::vector<ptl_event_t> out;
    ptl_event_t ev;
    int rc;
    while ((rc = Get(&ev)) == PTL_OK) out.push_back(ev);
    EXPECT_EQ(rc, PTL_EQ_EMPTY);
    return out;
  }
  std::vector<ptl_event_kind_t> Kinds() {
    std::vector<ptl_event_kind_t> kinds;
    for (const auto& ev : Drain()) kinds.push_back(ev.type);
    return kinds;
  }
  int Free() { return ptlc_eq_free(ni_, handle_, nullptr); }

 private:
  ptlc_ni* ni_;
  std::vector<ptl_event_t> ring_;
  ptl_handle_eq_t handle_ = PTL_EQ_NONE;
  ptl_seq_t expected_ = 0;
};

inline ptl_md_t MakeMd(void* start, ptl_size_t length, unsigned options,
                       int threshold = PTL_MD_THRESH_INF, ptl_handle_eq_t eq = PTL_EQ_NONE) {
  ptl_md_t md{};
  md.start = start;
  md.length = length;
  md.threshold = threshold;
  md.options = options;
  md.eq_handle = eq;
  md.user_ptr = reinterpret_cast<void*>(0x5eed);
  return md;
}

inline ptlc_md_spec Spec(const ptl_md_t& md) {
  ptlc_md_spec s{};
  s.desc = md;
  return s;
}

class Ni {
 public:
  explicit Ni(unsigned slot = 0, ptl_nid_t nid = 10, ptl_pid_t pid = 20,
              const ptl_ni_limits_t* desired = nullptr, ptl_uid_t uid = kUid) {
    ptlc_ni_config cfg{};
    cfg.slot = slot;
    cfg.nid = nid;
    cfg.pid = pid;
    cfg.uid = uid;
    cfg.jid = kJid;
    cfg.desired = desired;
    cfg.ops = &kOps;
    cfg.glue = &log_;
    EXPECT_EQ(ptlc_ni_create(&cfg, &ni_), PTL_OK);
  }
  ~Ni() { Destroy(); }
  Ni(const Ni&) = delete;
  Ni& operator=(const Ni&) = delete;

  void Destroy() {
    if (ni_) {
      ptlc_ni_destroy(ni_);
      // Every byte charged over the NI's life is returned with it.
      EXPECT_EQ(log_.charged, 0);
    }
    ni_ = nullptr;
  }
  ptlc_ni* get() const { return ni_; }
  operator ptlc_ni*() const { return ni_; }
  GlueLog& log() { return log_; }
  ptl_process_id_t id() const {
    ptl_process_id_t id;
    ptlc_ni_id(ni_, &id);
    return id;
  }

  ptl_handle_me_t Me(ptl_pt_index_t pt, ptl_match_bits_t bits = 0, ptl_match_bits_t ignore = 0,
                     ptl_process_id_t match_id = kAnyId, ptl_unlink_t unlink = PTL_UNLINK,
                     ptl_ins_pos_t pos = PTL_INS_AFTER) {
    ptl_handle_me_t h = PTL_INVALID_HANDLE;
    EXPECT_EQ(ptlc_me_attach(ni_, pt, match_id, bits, ignore, unlink, pos, &h), PTL_OK);
    return h;
  }
  ptl_handle_md_t Attach(ptl_handle_me_t me, const ptl_md_t& md, ptl_unlink_t unlink = PTL_UNLINK) {
    ptl_handle_md_t h = PTL_INVALID_HANDLE;
    ptlc_md_spec s = Spec(md);
    EXPECT_EQ(ptlc_md_attach(ni_, me, &s, unlink, &h), PTL_OK);
    return h;
  }
  ptl_handle_md_t Bind(const ptl_md_t& md, ptl_unlink_t unlink = PTL_RETAIN) {
    ptl_handle_md_t h = PTL_INVALID_HANDLE;
    ptlc_md_spec s = Spec(md);
    EXPECT_EQ(ptlc_md_bind(ni_, &s, unlink, &h), PTL_OK);
    return h;
  }
  ptl_sr_value_t Sr(ptl_sr_index_t reg) {
    ptl_sr_value_t v = ~0ULL;
    EXPECT_EQ(ptlc_ni_status(ni_, reg, &v), PTL_OK);
    return v;
  }
  bool MdLive(ptl_handle_md_t md) {
    ptl_md_t out;
    return ptlc_md_update(ni_, md, &out, nullptr, 0, nullptr, nullptr, PTL_EQ_NONE, 0) == PTL_OK;
  }
  bool MeLive(ptl_handle_me_t me) {
    ptl_handle_ni_t nih;
    return ptlc_ni_handle_of(ni_, me, &nih) == PTL_OK;
  }

 private:
  GlueLog log_;
  ptlc_ni* ni_ = nullptr;
};

// ---- data movement through MD segments (addresses are real pointers) ----

inline Bytes ReadMd(const ptlc_md* md, uint64_t off, uint64_t len) {
  Bytes out;
  ptlc_md_iter it;
  ptlc_chunk c;
  ptlc_md_iter_init(&it, md, off, len);
  while (ptlc_md_iter_next(&it, &c)) {
    auto* p = reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(c.addr));
    out.insert(out.end(), p, p + c.len);
  }
  EXPECT_EQ(out.size(), len);
  return out;
}

inline void WriteMd(const ptlc_md* md, uint64_t off, const uint8_t* data, uint64_t len) {
  ptlc_md_iter it;
  ptlc_chunk c;
  uint64_t done = 0;
  ptlc_md_iter_init(&it, md, off, len);
  while (ptlc_md_iter_next(&it, &c)) {
    std::memcpy(reinterpret_cast<void*>(static_cast<uintptr_t>(c.addr)), data + done, c.len);
    done += c.len;
  }
  EXPECT_EQ(done, len);
}

// A frame is an encoded header followed by its payload.
inline Bytes Frame(const ptl_hdr& hdr, const Bytes& payload) {
  Bytes f(PTL_WIRE_HDR_LEN);
  ptl_hdr_encode(&hdr, f.data());
  f.insert(f.end(), payload.begin(), payload.end());
  return f;
}

inline ptl_hdr Decode(const Bytes& frame) {
  ptl_hdr h{};
  EXPECT_EQ(ptl_hdr_decode(frame.data(), frame.size(), &h), PTL_WIRE_OK);
  EXPECT_EQ(frame.size(), PTL_WIRE_HDR_LEN + h.payload_length);
  return h;
}

// Builds the frame of an initiator message, then completes its send.
inline Bytes SendAndComplete(ptlc_msg& msg, ptl_ni_fail_t fail = PTL_NI_OK) {
  EXPECT_EQ(msg.action, PTLC_MSG_SEND);
  Bytes f = Frame(msg.hdr, ReadMd(msg.md, msg.offset, msg.mlength));
  EXPECT_EQ(ptlc_msg_finalize(&msg, fail), PTLC_MSG_DONE);
  return f;
}

// What a node did with an incoming frame.
struct Delivery {
  ptlc_action first = PTLC_MSG_DONE;
  ptlc_drop drop = PTLC_DROP_NONE;
  std::optional<Bytes> response;  // ACK or REPLY frame sent back
};

// The glue's receive path: match, move data, finalize (all steps).
inline Delivery Receive(ptlc_ni* ni, const Bytes& frame, ptl_ni_fail_t fail = PTL_NI_OK) {
  ptl_hdr hdr = Decode(frame);
  const uint8_t* payload = frame.data() + PTL_WIRE_HDR_LEN;
  ptlc_msg msg;
  Delivery d;
  d.first = ptlc_receive(ni, &hdr, 0, &msg);
  d.drop = msg.drop;
  switch (d.first) {
    case PTLC_MSG_DEPOSIT:
      WriteMd(msg.md, msg.offset, payload, msg.mlength);
      break;
    case PTLC_MSG_SEND_REPLY:
      d.response = Frame(msg.hdr, ReadMd(msg.md, msg.offset, msg.mlength));
      break;
    case PTLC_MSG_SWAP: {
      Bytes old = ReadMd(msg.md, msg.offset, msg.mlength);
      WriteMd(msg.md, msg.offset, payload, msg.mlength);
      d.response = Frame(msg.hdr, old);
      break;
    }
    default:
      return d;
  }
  if (ptlc_msg_finalize(&msg, fail) == PTLC_MSG_SEND_ACK) {
    d.response = Frame(msg.hdr, {});
    EXPECT_EQ(ptlc_msg_finalize(&msg, PTL_NI_OK), PTLC_MSG_DONE);
  }
  return d;
}

inline ptlc_put_args PutArgs(ptl_handle_md_t md, ptl_process_id_t target, ptl_pt_index_t pt,
                             ptl_match_bits_t bits = 0, ptl_ack_req_t ack = PTL_ACK_REQ) {
  ptlc_put_args a{};
  a.md = md;
  a.ack_req = ack;
  a.target = target;
  a.pt_index = pt;
  a.ac_index = 0;
  a.match_bits = bits;
  return a;
}

// A whole put: initiate, transmit, deliver, return the ack (if any).
inline Delivery Put(Ni& from, Ni& to, const ptlc_put_args& a, bool region = false) {
  ptlc_msg msg;
  EXPECT_EQ(ptlc_put(from, &a, region, &msg), PTL_OK);
  Bytes frame = SendAndComplete(msg);
  Delivery d = Receive(to, frame);
  if (d.response) Receive(from, *d.response);
  return d;
}

inline Delivery Get(Ni& from, Ni& to, const ptlc_put_args& a, bool region = false) {
  ptlc_msg msg;
  EXPECT_EQ(ptlc_get(from, &a, region, &msg), PTL_OK);
  Bytes frame = SendAndComplete(msg);
  Delivery d = Receive(to, frame);
  if (d.response) Receive(from, *d.response);
  return d;
}

// Gives each test a clean leak baseline.
class CoreTest : public ::testing::Test {
 protected:
  void SetUp() override { baseline_ = ptlc_live_objects(); }
  void TearDown() override {
    a_.reset();
    b_.reset();
    EXPECT_EQ(ptlc_live_objects(), baseline_) << "core objects leaked";
  }
  Ni& A() {
    if (!a_) a_ = std::make_unique<Ni>(0, 10, 20);
    return *a_;
  }
  Ni& B() {
    if (!b_) b_ = std::make_unique<Ni>(1, 11, 21);
    return *b_;
  }
  std::unique_ptr<Ni> a_, b_;
  long baseline_ = 0;
};

}  // namespace ptltest
