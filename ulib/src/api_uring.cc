// SPDX-License-Identifier: BSD-3-Clause
// The io_uring extension (<portals/ptl_uring.h>): data-movement calls as
// IORING_OP_URING_CMD entries on /dev/portals (uapi/linux/portals.h).
//
// The ring is created with 128-byte SQEs, so a data call's whole
// struct ptl_ioc_data travels in its SQE (PTL_URING_DATA) and the kernel
// reads no user memory for it. An MD bind goes by pointer
// (PTL_URING_IOCTL) into its slot here, where the kernel writes the handle;
// a data call on PTL_URING_MD_BOUND is linked behind it and reads that
// handle when it runs (PTL_URING_DATA_MDREF).
#include <liburing.h>
#include <poll.h>
#include <portals/ptl_uring.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "data_args.h"
#include "library.h"
#include "md.h"

struct ptl_uring {
  // What one queued, unreaped call needs until its completion is reaped.
  struct Slot {
    uint64_t user_data = 0;
    ptl_handle_md_t* md_out = nullptr;  // a bind's result
    ptl_ioc_md_attach bind{};           // a bind's argument struct
    ptl_ioc_data data{};                // an MD_BOUND data call's
    ptl_uring_ioctl ioc{};
    ptl_uring_mdref mdref{};
  };

  ptl::Library::DeviceRef dev;
  io_uring ring{};
  bool ring_live = false;
  std::vector<Slot> slots;
  std::vector<uint32_t> free_slots;
  unsigned submitted = 0;  // submitted, completion not yet reaped
  unsigned queued = 0;     // queued, not yet submitted
  // The unsubmitted bind (or the last data call linked to it) that a data
  // call on PTL_URING_MD_BOUND links behind; and the bind's slot.
  io_uring_sqe* link_tail = nullptr;
  uint32_t bound_slot = UINT32_MAX;

  ~ptl_uring() {
    if (ring_live) io_uring_queue_exit(&ring);
  }
};

namespace {

constexpr unsigned kMaxDepth = 4096;

// A free slot and an SQE for it, or nullptr (PTL_NO_SPACE).
io_uring_sqe* Take(ptl_uring_t* u, uint64_t user_data, uint32_t* slot_out) {
  if (u->free_slots.empty()) return nullptr;
  io_uring_sqe* sqe = io_uring_get_sqe(&u->ring);
  if (!sqe) return nullptr;
  uint32_t slot = u->free_slots.back();
  u->free_slots.pop_back();
  u->slots[slot] = ptl_uring::Slot{};
  u->slots[slot].user_data = user_data;
  // The descriptor is registered: no file reference taken per entry.
  io_uring_prep_rw(IORING_OP_URING_CMD, sqe, 0, nullptr, 0, 0);
  sqe->flags |= IOSQE_FIXED_FILE;
  sqe->user_data = slot;
  u->queued++;
  *slot_out = slot;
  return sqe;
}

void SetCmd(io_uring_sqe* sqe, uint32_t op, const void* arg, size_t len) {
  sqe->cmd_op = op;
  std::memcpy(sqe->cmd, arg, len);
}

// Queues one data call.
int QueueData(ptl_uring_t* u, uint64_t user_data, const ptl::DataLocal& local,
              const ptl::DataTarget& target) {
  if (!u) return PTL_SEGV;
  ptl_ioc_data args = ptl::DataArgs(local, target);
  bool bound = args.md_handle == PTL_URING_MD_BOUND;
  if (bound && !u->link_tail) return PTL_MD_INVALID;
  uint32_t slot;
  io_uring_sqe* sqe = Take(u, user_data, &slot);
  if (!sqe) return PTL_NO_SPACE;
  if (!bound) {
    static_assert(sizeof(ptl_ioc_data) <= 80, "fits the SQE128 command area");
    SetCmd(sqe, PTL_URING_DATA, &args, sizeof(args));
    return PTL_OK;
  }
  auto& s = u->slots[slot];
  s.data = args;
  s.mdref.data = reinterpret_cast<uintptr_t>(&s.data);
  s.mdref.md_handle = reinterpret_cast<uintptr_t>(&u->slots[u->bound_slot].bind.md_handle);
  SetCmd(sqe, PTL_URING_DATA_MDREF, &s.mdref, sizeof(s.mdref));
  u->link_tail->flags |= IOSQE_IO_LINK;
  u->link_tail = sqe;
  return PTL_OK;
}

int ToPortals(int res) { return res >= 0 ? res : ptl::Device::ErrnoToPortals(res); }

}  // namespace

extern "C" {

int PtlUringCreate(ptl_handle_ni_t ni, unsigned int depth, unsigned int flags, ptl_uring_t** out) {
  if (!out) return PTL_SEGV;
  return ptl::Guard([&] {
    auto& lib = ptl::Library::Instance();
    auto dev = lib.device();
    if (!dev) return PTL_NO_INIT;
    bool known = false;
    lib.WithState([&](ptl::State& s) { known = s.nis.count(ni) != 0; });
    if (!known) return PTL_NI_INVALID;
    if (depth == 0 || depth > kMaxDepth || (flags & ~PTL_URING_SQPOLL)) return PTL_FAIL;
    auto u = std::make_unique<ptl_uring>();
    io_uring_params p{};
    p.flags = IORING_SETUP_SQE128 | IORING_SETUP_SUBMIT_ALL;
    if (flags & PTL_URING_SQPOLL) {
      p.flags |= IORING_SETUP_SQPOLL;
      p.sq_thread_idle = 100;  // ms before the SQ thread sleeps
    }
    // The CQ holds every unreaped completion: `depth` slots are the bound.
    int rc = io_uring_queue_init_params(depth, &u->ring, &p);
    if (rc < 0) return rc == -ENOMEM ? PTL_NO_SPACE : PTL_FAIL;
    u->ring_live = true;
    int fd = dev->fd();
    rc = io_uring_register_files(&u->ring, &fd, 1);
    if (rc < 0) return rc == -ENOMEM ? PTL_NO_SPACE : PTL_FAIL;
    u->dev = std::move(dev);
    u->slots.resize(depth);
    u->free_slots.reserve(depth);
    for (uint32_t i = depth; i-- > 0;) u->free_slots.push_back(i);
    *out = u.release();
    return PTL_OK;
  });
}

int PtlUringDestroy(ptl_uring_t* u) {
  if (!u) return PTL_SEGV;
  // Slots may still be read by the kernel: wait for what was submitted.
  ptl_uring_cqe_t cqe;
  unsigned n = 0;
  while (u->submitted) {
    if (PtlUringReap(u, &cqe, 1, 1, &n) != PTL_OK) break;
  }
  // The registered descriptor would otherwise stay open (and with it the
  // NIs and their pids) until the ring's asynchronous teardown ends.
  io_uring_unregister_files(&u->ring);
  delete u;
  return PTL_OK;
}

int PtlUringPut(ptl_uring_t* u, uint64_t user_data, ptl_handle_md_t md_handle,
                ptl_ack_req_t ack_req, ptl_process_id_t target_id, ptl_pt_index_t pt_index,
                ptl_ac_index_t ac_index, ptl_match_bits_t match_bits, ptl_size_t remote_offset,
                ptl_hdr_data_t hdr_data) {
  return QueueData(
      u, user_data,
      {.op = PTL_DATA_PUT, .md_handle = md_handle, .ack_req = ack_req, .hdr_data = hdr_data},
      {target_id, pt_index, ac_index, match_bits, remote_offset});
}

int PtlUringPutRegion(ptl_uring_t* u, uint64_t user_data, ptl_handle_md_t md_handle,
                      ptl_size_t local_offset, ptl_size_t length, ptl_ack_req_t ack_req,
                      ptl_process_id_t target_id, ptl_pt_index_t pt_index, ptl_ac_index_t ac_index,
                      ptl_match_bits_t match_bits, ptl_size_t remote_offset,
                      ptl_hdr_data_t hdr_data) {
  return QueueData(u, user_data,
                   {.op = PTL_DATA_PUT,
                    .md_handle = md_handle,
                    .ack_req = ack_req,
                    .region = true,
                    .local_offset = local_offset,
                    .length = length,
                    .hdr_data = hdr_data},
                   {target_id, pt_index, ac_index, match_bits, remote_offset});
}

int PtlUringGet(ptl_uring_t* u, uint64_t user_data, ptl_handle_md_t md_handle,
                ptl_process_id_t target_id, ptl_pt_index_t pt_index, ptl_ac_index_t ac_index,
                ptl_match_bits_t match_bits, ptl_size_t remote_offset) {
  return QueueData(u, user_data, {.op = PTL_DATA_GET, .md_handle = md_handle},
                   {target_id, pt_index, ac_index, match_bits, remote_offset});
}

int PtlUringGetRegion(ptl_uring_t* u, uint64_t user_data, ptl_handle_md_t md_handle,
                      ptl_size_t local_offset, ptl_size_t length, ptl_process_id_t target_id,
                      ptl_pt_index_t pt_index, ptl_ac_index_t ac_index, ptl_match_bits_t match_bits,
                      ptl_size_t remote_offset) {
  return QueueData(u, user_data,
                   {.op = PTL_DATA_GET,
                    .md_handle = md_handle,
                    .region = true,
                    .local_offset = local_offset,
                    .length = length},
                   {target_id, pt_index, ac_index, match_bits, remote_offset});
}

int PtlUringGetPut(ptl_uring_t* u, uint64_t user_data, ptl_handle_md_t get_md_handle,
                   ptl_handle_md_t put_md_handle, ptl_process_id_t target_id,
                   ptl_pt_index_t pt_index, ptl_ac_index_t ac_index, ptl_match_bits_t match_bits,
                   ptl_size_t remote_offset, ptl_hdr_data_t hdr_data) {
  if (get_md_handle == PTL_URING_MD_BOUND || put_md_handle == PTL_URING_MD_BOUND)
    return PTL_MD_INVALID;
  return QueueData(u, user_data,
                   {.op = PTL_DATA_GETPUT,
                    .md_handle = get_md_handle,
                    .put_md_handle = put_md_handle,
                    .hdr_data = hdr_data},
                   {target_id, pt_index, ac_index, match_bits, remote_offset});
}

int PtlUringMDBind(ptl_uring_t* u, uint64_t user_data, ptl_handle_ni_t ni, ptl_md_t md,
                   ptl_unlink_t unlink_op, ptl_handle_md_t* md_handle) {
  if (!u || !md_handle) return PTL_SEGV;
  uint32_t slot;
  io_uring_sqe* sqe = Take(u, user_data, &slot);
  if (!sqe) return PTL_NO_SPACE;
  auto& s = u->slots[slot];
  s.md_out = md_handle;
  s.bind.size = sizeof(s.bind);
  s.bind.flags = PTL_MD_ATTACH_BIND;
  s.bind.handle = ni;
  s.bind.unlink = static_cast<uint32_t>(unlink_op);
  s.bind.md = ptl::ToIoc(md);
  // A failed bind leaves this: the calls linked to it find no MD.
  s.bind.md_handle = PTL_INVALID_HANDLE;
  s.ioc.cmd = PTL_IOC_MD_ATTACH;
  s.ioc.arg = reinterpret_cast<uintptr_t>(&s.bind);
  SetCmd(sqe, PTL_URING_IOCTL, &s.ioc, sizeof(s.ioc));
  u->link_tail = sqe;
  u->bound_slot = slot;
  return PTL_OK;
}

int PtlUringSubmit(ptl_uring_t* u, unsigned int* submitted) {
  if (!u) return PTL_SEGV;
  int rc;
  do {
    rc = io_uring_submit(&u->ring);
  } while (rc == -EINTR);
  if (rc < 0) return ToPortals(rc);
  // Every queued SQE is in the kernel's hands now (SQPOLL: in its ring).
  u->submitted += u->queued;
  if (submitted) *submitted = u->queued;
  u->queued = 0;
  u->link_tail = nullptr;
  u->bound_slot = UINT32_MAX;
  return PTL_OK;
}

int PtlUringReap(ptl_uring_t* u, ptl_uring_cqe_t* out, unsigned int max, unsigned int min_wait,
                 unsigned int* count) {
  if (!u || (max && !out) || !count) return PTL_SEGV;
  *count = 0;
  if (min_wait > u->submitted) min_wait = u->submitted;
  if (min_wait > max) min_wait = max;
  if (min_wait) {
    io_uring_cqe* cqe;
    int rc;
    do {
      rc = io_uring_wait_cqe_nr(&u->ring, &cqe, min_wait);
    } while (rc == -EINTR);
    if (rc < 0) return ToPortals(rc);
  }
  unsigned n = 0;
  io_uring_cqe* cqe;
  while (n < max && io_uring_peek_cqe(&u->ring, &cqe) == 0) {
    auto slot = static_cast<uint32_t>(cqe->user_data);
    auto& s = u->slots[slot];
    out[n].user_data = s.user_data;
    out[n].rc = ToPortals(cqe->res);
    out[n].err = cqe->res < 0 ? cqe->res : 0;
    if (s.md_out && cqe->res == PTL_OK) *s.md_out = s.bind.md_handle;
    io_uring_cqe_seen(&u->ring, cqe);
    u->free_slots.push_back(slot);
    u->submitted--;
    n++;
  }
  *count = n;
  return PTL_OK;
}

int PtlUringArmEQWait(struct io_uring* ring, uint64_t user_data) {
  if (!ring) return PTL_SEGV;
  auto dev = ptl::Library::Instance().device();
  if (!dev) return PTL_NO_INIT;
  io_uring_sqe* sqe = io_uring_get_sqe(ring);
  if (!sqe) return PTL_NO_SPACE;
  io_uring_prep_poll_add(sqe, dev->fd(), POLLIN);
  io_uring_sqe_set_data64(sqe, user_data);
  return PTL_OK;
}

}  // extern "C"
