// libFuzzer target: arbitrary bytes become a sequence of operations on a
// populated NI: raw frames decoded and received (any header, any payload),
// puts/gets/getputs initiated and looped back, unlinks, updates and EQ
// reads. Any crash, sanitizer report, PTL_WARN_ON (PTL_WARN_ABORT) or leak
// of core objects fails the run.
extern "C" {
#include <p3api/eq_ring.h>

#include "ptl_core.h"
}

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr ptl_nid_t kNid = 5;
constexpr ptl_pid_t kPid = 6;
constexpr ptl_uid_t kUid = 7;

class Input {
 public:
  Input(const uint8_t* d, size_t n) : d_(d), n_(n) {}
  bool empty() const { return n_ == 0; }
  uint8_t Byte() {
    if (!n_) return 0;
    n_--;
    return *d_++;
  }
  uint64_t Int(int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++) v |= uint64_t(Byte()) << (8 * i);
    return v;
  }
  const uint8_t* Take(size_t want, size_t* got) {
    *got = want < n_ ? want : n_;
    const uint8_t* p = d_;
    d_ += *got;
    n_ -= *got;
    return p;
  }

 private:
  const uint8_t* d_;
  size_t n_;
};

struct World {
  ptlc_ni* ni = nullptr;
  std::vector<ptl_event_t> rings[2];
  ptl_handle_eq_t eqs[2] = {PTL_EQ_NONE, PTL_EQ_NONE};
  ptl_seq_t expected[2] = {};
  std::vector<ptl_handle_me_t> mes;
  std::vector<ptl_handle_md_t> mds;
  uint8_t memory[4][64];
  uint8_t iov_mem[3][16];
};

void Release(void*, void*) {}
const ptlc_ops kOps{Release, nullptr, nullptr, nullptr};

ptl_md_t Desc(World& w, uint8_t sel, uint8_t opts) {
  ptl_md_t d{};
  d.start = w.memory[sel % 4];
  d.length = (sel >> 2) % 65;
  d.threshold = int(sel % 5) - 1;  // INF, 0..3
  d.options = opts & (PTL_MD_OPTIONS_ALL & ~PTL_MD_IOVEC);
  d.max_size = sel % 9;
  d.eq_handle = w.eqs[sel & 1];
  return d;
}

void AddMd(World& w, Input& in, bool bind) {
  ptlc_md_spec s{};
  s.desc = Desc(w, in.Byte(), in.Byte());
  ptlc_seg segs[3];
  if (in.Byte() & 1) {  // iovec over three small buffers, one may be empty
    for (int i = 0; i < 3; i++) segs[i] = {uintptr_t(w.iov_mem[i]), uint64_t(in.Byte() % 17)};
    s.desc.options |= PTL_MD_IOVEC;
    s.desc.start = segs;
    s.desc.length = 3;
    s.segs = segs;
    s.nsegs = 3;
  }
  ptl_handle_md_t h;
  ptl_unlink_t unlink = (in.Byte() & 1) ? PTL_UNLINK : PTL_RETAIN;
  int rc;
  if (bind) {
    rc = ptlc_md_bind(w.ni, &s, unlink, &h);
  } else {
    if (w.mes.empty()) return;
    rc = ptlc_md_attach(w.ni, w.mes[in.Byte() % w.mes.size()], &s, unlink, &h);
  }
  if (rc == PTL_OK) w.mds.push_back(h);
}

void AddMe(World& w, Input& in) {
  uint8_t b = in.Byte();
  ptl_process_id_t id =
      (b & 1) ? ptl_process_id_t{PTL_NID_ANY, PTL_PID_ANY} : ptl_process_id_t{kNid, kPid};
  ptl_handle_me_t h;
  int rc;
  if ((b & 6) == 6 && !w.mes.empty())
    rc = ptlc_me_insert(w.ni, w.mes[in.Byte() % w.mes.size()], id, in.Byte() % 4,
                        (b & 8) ? ~0ULL : 0, (b & 16) ? PTL_UNLINK : PTL_RETAIN,
                        (b & 32) ? PTL_INS_AFTER : PTL_INS_BEFORE, &h);
  else
    rc = ptlc_me_attach(w.ni, in.Byte() % 4, id, in.Byte() % 4, (b & 8) ? ~0ULL : 0,
                        (b & 16) ? PTL_UNLINK : PTL_RETAIN,
                        (b & 32) ? PTL_INS_AFTER : PTL_INS_BEFORE, &h);
  if (rc == PTL_OK) w.mes.push_back(h);
}

void MoveData(const ptlc_msg& m, const uint8_t* payload, size_t len, std::vector<uint8_t>* out) {
  ptlc_md_iter it;
  ptlc_chunk c;
  size_t done = 0;
  ptlc_md_iter_init(&it, m.md, m.offset, m.mlength);
  while (ptlc_md_iter_next(&it, &c)) {
    auto* p = reinterpret_cast<uint8_t*>(uintptr_t(c.addr));
    if (out) out->insert(out->end(), p, p + c.len);
    if (payload) {
      size_t n = done < len ? (len - done < c.len ? len - done : c.len) : 0;
      if (n) std::memcpy(p, payload + done, n);
    }
    done += c.len;
  }
  if (done != m.mlength) abort();
}

void Deliver(World& w, const uint8_t* frame, size_t len, uint8_t fail, int depth);

// The glue's receive path for one decoded header.
void Receive(World& w, const ptl_hdr& h, const uint8_t* payload, size_t plen, uint8_t fail,
             int depth) {
  ptlc_msg m;
  ptlc_action a = ptlc_receive(w.ni, &h, (fail & 2) ? PTLC_RECV_DEFER_START : 0, &m);
  std::vector<uint8_t> back;
  switch (a) {
    case PTLC_MSG_DROP:
    case PTLC_MSG_DONE:
      return;
    case PTLC_MSG_DEPOSIT:
      if (m.mlength > h.payload_length) abort();
      MoveData(m, payload, plen, nullptr);
      break;
    case PTLC_MSG_SEND_REPLY:
    case PTLC_MSG_SWAP:
      if (a == PTLC_MSG_SWAP && h.payload_length > PTLC_CAP_GETPUT_MD) abort();
      back.resize(PTL_WIRE_HDR_LEN);
      ptl_hdr_encode(&m.hdr, back.data());
      MoveData(m, a == PTLC_MSG_SWAP ? payload : nullptr, plen, &back);
      break;
    default:
      abort();
  }
  ptl_ni_fail_t f = (fail & 1) ? PTL_NI_FAIL : PTL_NI_OK;
  if (ptlc_msg_finalize(&m, f) == PTLC_MSG_SEND_ACK) {
    back.resize(PTL_WIRE_HDR_LEN);
    ptl_hdr_encode(&m.hdr, back.data());
    if (ptlc_msg_finalize(&m, PTL_NI_OK) != PTLC_MSG_DONE) abort();
  }
  if (!back.empty()) Deliver(w, back.data(), back.size(), fail >> 2, depth + 1);
}

void Deliver(World& w, const uint8_t* frame, size_t len, uint8_t fail, int depth) {
  ptl_hdr h;
  if (depth > 2 || ptl_hdr_decode(frame, len, &h) != PTL_WIRE_OK) return;
  size_t plen = len - PTL_WIRE_HDR_LEN;
  Receive(w, h, frame + PTL_WIRE_HDR_LEN, plen, fail, depth);
}

// A raw header from the input, optionally steered to this NI.
void RawFrame(World& w, Input& in) {
  uint8_t fix = in.Byte();
  size_t got;
  const uint8_t* p = in.Take(PTL_WIRE_HDR_LEN, &got);
  uint8_t frame[PTL_WIRE_HDR_LEN + 80] = {};
  std::memcpy(frame, p, got);
  if (fix & 1) {  // valid magic, version, addressing: get past the first checks
    ptl_hdr h{};
    if (ptl_hdr_decode(frame, sizeof(frame), &h) != PTL_WIRE_OK) {
      std::memset(&h, 0, sizeof(h));
      h.type = 1 + fix % 5;
      h.rlength = frame[40] % 80;
      h.mlength =
          h.type == PTL_MSG_REPLY || h.type == PTL_MSG_ACK ? frame[48] % (h.rlength + 1) : 0;
      h.offset = frame[56] % 80;
      h.pt_index = frame[80] % 6;
      h.match_bits = frame[32] % 4;
      h.md_handle = w.mds.empty() ? PTL_HANDLE_NONE : w.mds[frame[88] % w.mds.size()];
      h.md_gen = 0;
    }
    h.dst = {kNid, kPid};
    h.src_uid = kUid;
    ptl_hdr_encode(&h, frame);
  }
  size_t plen;
  const uint8_t* pay = in.Take(80, &plen);
  std::memcpy(frame + PTL_WIRE_HDR_LEN, pay, plen);
  ptl_hdr h;
  if (ptl_hdr_decode(frame, sizeof(frame), &h) != PTL_WIRE_OK) return;
  if (h.payload_length > 80) return;  // the transport delivers what the header says
  Receive(w, h, frame + PTL_WIRE_HDR_LEN, size_t(h.payload_length), in.Byte(), 0);
}

void Initiate(World& w, Input& in) {
  if (w.mds.empty()) return;
  uint8_t op = in.Byte();
  ptlc_put_args a{};
  a.md = w.mds[in.Byte() % w.mds.size()];
  a.local_offset = in.Byte() % 70;
  a.length = in.Byte() % 70;
  a.ack_req = (op & 4) ? PTL_ACK_REQ : PTL_NO_ACK_REQ;
  a.target = {kNid, kPid};
  a.pt_index = in.Byte() % 5;
  a.ac_index = in.Byte() % 3;
  a.match_bits = in.Byte() % 4;
  a.remote_offset = in.Byte() % 70;
  a.hdr_data = in.Int(2);
  ptlc_msg m;
  bool region = op & 8;
  int rc;
  switch (op % 3) {
    case 0:
      rc = ptlc_put(w.ni, &a, region, &m);
      break;
    case 1:
      rc = ptlc_get(w.ni, &a, region, &m);
      break;
    default:
      rc = ptlc_getput(w.ni, w.mds[in.Byte() % w.mds.size()], &a, &m);
      break;
  }
  if (rc != PTL_OK) return;
  std::vector<uint8_t> frame(PTL_WIRE_HDR_LEN);
  ptl_hdr_encode(&m.hdr, frame.data());
  MoveData(m, nullptr, 0, &frame);
  if (ptlc_msg_finalize(&m, (op & 16) ? PTL_NI_FAIL : PTL_NI_OK) != PTLC_MSG_DONE) abort();
  Deliver(w, frame.data(), frame.size(), in.Byte(), 0);
}

void ReadEqs(World& w) {
  for (int i = 0; i < 2; i++) {
    if (w.eqs[i] == PTL_EQ_NONE) continue;
    ptl_event_t ev;
    int rc;
    int n = 0;
    while ((rc = ptl_eq_ring_get(w.rings[i].data(), uint32_t(w.rings[i].size()), &w.expected[i],
                                 &ev)) != PTL_EQ_EMPTY) {
      if (rc != PTL_OK && rc != PTL_EQ_DROPPED) abort();
      if (ev.type > PTL_EVENT_UNLINK) abort();
      if (++n > 1000) abort();
    }
  }
}

void Mutate(World& w, Input& in) {
  if (w.mds.empty()) return;
  ptl_handle_md_t md = w.mds[in.Byte() % w.mds.size()];
  uint8_t op = in.Byte();
  if (op & 1) {
    ptlc_md_unlink(w.ni, md);
  } else if (op & 2) {
    if (!w.mes.empty()) ptlc_me_unlink(w.ni, w.mes[in.Byte() % w.mes.size()]);
  } else {
    ptlc_md_spec s{};
    s.desc = Desc(w, in.Byte(), in.Byte());
    ptl_md_t old;
    int which = op >> 7;
    ptlc_md_update(w.ni, md, &old, nullptr, 0, nullptr, &s, (op & 4) ? w.eqs[which] : PTL_EQ_NONE,
                   w.expected[which]);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  long baseline = ptlc_live_objects();
  World w;
  std::memset(w.memory, 0, sizeof(w.memory));
  ptl_ni_limits_t want{64, 64, 4, 2, 4, 3, 8, 16};
  ptlc_ni_config cfg{};
  cfg.nid = kNid;
  cfg.pid = kPid;
  cfg.uid = kUid;
  cfg.desired = &want;
  cfg.ops = &kOps;
  if (ptlc_ni_create(&cfg, &w.ni) != PTL_OK) abort();
  for (int i = 0; i < 2; i++) {
    w.rings[i].resize(i ? 2 : 8);
    if (ptlc_eq_alloc(w.ni, w.rings[i].data(), uint32_t(w.rings[i].size()), nullptr, nullptr,
                      &w.eqs[i]) != PTL_OK)
      abort();
    w.expected[i] = ptl_eq_ring_first_seq(uint32_t(w.rings[i].size()));
  }
  Input in(data, size);
  for (int steps = 0; !in.empty() && steps < 200; steps++) {
    switch (in.Byte() % 8) {
      case 0:
        AddMe(w, in);
        break;
      case 1:
        AddMd(w, in, false);
        break;
      case 2:
        AddMd(w, in, true);
        break;
      case 3:
      case 4:
        RawFrame(w, in);
        break;
      case 5:
        Initiate(w, in);
        break;
      case 6:
        Mutate(w, in);
        break;
      default:
        ReadEqs(w);
        if (in.Byte() & 1 && w.eqs[1] != PTL_EQ_NONE) {
          ptlc_eq_free(w.ni, w.eqs[1], nullptr);
          w.eqs[1] = PTL_EQ_NONE;
        }
        break;
    }
  }
  ReadEqs(w);
  ptlc_ni_destroy(w.ni);
  if (ptlc_live_objects() != baseline) abort();
  return 0;
}
