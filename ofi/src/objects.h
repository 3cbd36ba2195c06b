// SPDX-License-Identifier: BSD-3-Clause
// The provider's objects: fabric, domain, address vector, completion queue
// and event queue. The endpoint, where the protocols live, is endpoint.h.
#ifndef PTL_OFI_OBJECTS_H
#define PTL_OFI_OBJECTS_H

#include <portals3.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/providers/fi_log.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bitset>
#include <deque>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "address.h"
#include "fid.h"
#include "info.h"
#include "protocol.h"
#include "wait_fd.h"

namespace ptl::ofi {

class Endpoint;

const fi_provider* Provider();  // for FI_WARN and friends

// Portals return codes as libfabric errors (negative).
int FromPtl(int rc);

struct Fabric {
  Handle<fid_fabric, Fabric> h;
  std::atomic<int> refs{0};
};
int OpenFabric(fi_fabric_attr* attr, fid_fabric** fabric, void* context);

// A domain is one Portals interface of this process: its NI (one pid) and
// the endpoints made on it, each owning kPtsPerEndpoint portals.
struct Domain {
  Handle<fid_domain, Domain> h;
  Fabric* fabric = nullptr;
  unsigned iface = 0;
  ptl_handle_ni_t ni = PTL_INVALID_HANDLE;
  ptl_process_id_t id{};
  fi_info* info = nullptr;  // what it was opened with
  std::mutex mutex;
  std::bitset<kMaxEndpoints> endpoints_used;
  std::atomic<int> refs{0};
  // Memory of closed endpoints that the kernel may still read or write
  // (an MD PtlMDUnlink found in use: a put queued in the transport, a
  // deposit under way). PtlNIFini ends all of it; freed after that.
  std::vector<std::unique_ptr<char[]>> orphans;

  int TakeEndpointIndex();
  void PutEndpointIndex(int index);
  // Frees `mem` now if its MD could be unlinked, else after PtlNIFini.
  void Release(ptl_handle_md_t md, std::unique_ptr<char[]> mem);
};
int OpenDomain(fid_fabric* fabric, fi_info* info, fid_domain** out, void* context);

// FI_AV_MAP: fi_addr_t is the packed address. FI_AV_TABLE: an index into
// `table`. Either way `reverse` finds the fi_addr_t of a source (FI_SOURCE).
struct Av {
  Handle<fid_av, Av> h;
  Domain* domain = nullptr;
  fi_av_type type = FI_AV_MAP;
  mutable std::mutex mutex;
  std::vector<Address> table;  // FI_AV_TABLE; removed entries keep a slot
  std::vector<bool> live;
  std::unordered_map<fi_addr_t, fi_addr_t> reverse;  // packed -> fi_addr
  std::atomic<int> refs{0};

  bool Lookup(fi_addr_t addr, Address* out) const;
  fi_addr_t Reverse(const Address& a) const;
};
int OpenAv(fid_domain* domain, fi_av_attr* attr, fid_av** out, void* context);

// What an operation's completion reports.
struct Completion {
  void* context = nullptr;
  uint64_t flags = 0;
  size_t len = 0;
  void* buf = nullptr;
  uint64_t data = 0;
  uint64_t tag = 0;
  fi_addr_t src = FI_ADDR_NOTAVAIL;
  int err = 0;  // positive FI_E*, 0 for success
  size_t olen = 0;
};

// The endpoints bound to a CQ or counter, copied out under its lock: an
// endpoint completes into its CQs and counters with its own lock held, so
// they are never walked under theirs. Every poll of a CQ takes one, and a
// CQ rarely has more than a few endpoints: those stay on the stack, so a
// poll allocates nothing.
class EndpointSnapshot {
 public:
  EndpointSnapshot(std::mutex& mutex, const std::vector<Endpoint*>& eps) {
    std::lock_guard lock(mutex);
    size_ = eps.size();
    if (size_ > few_.size())
      many_ = eps;
    else
      std::copy(eps.begin(), eps.end(), few_.begin());
  }
  Endpoint* const* begin() const { return many_.empty() ? few_.data() : many_.data(); }
  Endpoint* const* end() const { return begin() + size_; }

 private:
  std::array<Endpoint*, 4> few_{};
  std::vector<Endpoint*> many_;
  size_t size_ = 0;
};

// Completions are queued here by the endpoints bound to it; reading one
// first lets each of them turn Portals events into completions.
struct Cq {
  Handle<fid_cq, Cq> h;
  Domain* domain = nullptr;
  fi_cq_format format = FI_CQ_FORMAT_CONTEXT;
  size_t size = 0;
  std::mutex mutex;
  std::deque<Completion> done;
  std::deque<Completion> errors;
  Completion last_error;  // err_data lives until the next read
  std::vector<Endpoint*> endpoints;
  std::atomic<bool> signaled{false};
  std::atomic<int> refs{0};
  fi_wait_obj wait_obj = FI_WAIT_NONE;
  std::unique_ptr<WaitFd> wait_fd;  // FI_WAIT_FD

  void Push(const Completion& c);
  void Progress();
};
int OpenCq(fid_domain* domain, fi_cq_attr* attr, fid_cq** out, void* context);
int CqTryWait(Cq* cq);

// Counts an endpoint's completed sends or receives, and its failed ones.
struct Cntr {
  Handle<fid_cntr, Cntr> h;
  Domain* domain = nullptr;
  std::atomic<uint64_t> value{0};
  std::atomic<uint64_t> errors{0};
  std::mutex mutex;
  std::vector<Endpoint*> endpoints;
  std::atomic<int> refs{0};

  void Progress();
};
int OpenCntr(fid_domain* domain, fi_cntr_attr* attr, fid_cntr** out, void* context);

// Sleeps in the kernel up to `ms` for an event of any of the endpoints'
// EQs and handles it (fi_cq_sread, fi_cntr_wait).
void WaitForEvent(std::vector<Endpoint*> endpoints, int ms);

// A libfabric EQ: this provider reports nothing asynchronously (no
// connections, no AV events), but applications may open one and write to
// it.
struct Eq {
  Handle<fid_eq, Eq> h;
  struct Entry {
    uint32_t event;
    std::vector<uint8_t> data;
  };
  std::mutex mutex;
  std::deque<Entry> entries;
};
int OpenEq(fid_fabric* fabric, fi_eq_attr* attr, fid_eq** out, void* context);

}  // namespace ptl::ofi

#endif  // PTL_OFI_OBJECTS_H
