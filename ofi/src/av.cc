// SPDX-License-Identifier: BSD-3-Clause
// Address vectors. With FI_AV_MAP the fi_addr_t is the address itself
// (address.h), with FI_AV_TABLE an index; both keep a reverse map so that
// a receive's source (FI_SOURCE) is reported as the caller's fi_addr_t.
#include <cstring>

#include "objects.h"

namespace ptl::ofi {

bool Av::Lookup(fi_addr_t addr, Address* out) const {
  if (type == FI_AV_MAP) {
    *out = Unpack(addr);
    return out->pid != 0xffff;
  }
  std::lock_guard lock(mutex);
  if (addr >= table.size() || !live[addr]) return false;
  *out = table[addr];
  return true;
}

fi_addr_t Av::Reverse(const Address& a) const {
  std::lock_guard lock(mutex);
  auto it = reverse.find(Pack(a));
  return it == reverse.end() ? FI_ADDR_NOTAVAIL : it->second;
}

namespace {

int AvClose(fid* f) {
  Av* av = OwnerOf<Av>(reinterpret_cast<fid_av*>(f));
  if (av->refs.load()) return -FI_EBUSY;
  av->domain->refs--;
  delete av;
  return 0;
}

int AvInsert(fid_av* f, const void* addr, size_t count, fi_addr_t* fi_addr, uint64_t flags, void*) {
  Av* av = OwnerOf<Av>(f);
  if (flags & ~FI_MORE) return -FI_EINVAL;
  if (count && !addr) return -FI_EINVAL;
  std::lock_guard lock(av->mutex);
  int inserted = 0;
  for (size_t i = 0; i < count; ++i) {
    Address a;
    fi_addr_t result = FI_ADDR_NOTAVAIL;
    if (ReadAddress(static_cast<const char*>(addr) + i * sizeof(Address), &a)) {
      if (av->type == FI_AV_MAP) {
        result = Pack(a);
      } else {
        result = av->table.size();
        av->table.push_back(a);
        av->live.push_back(true);
      }
      // The first fi_addr_t given for an address is what its receives report.
      av->reverse.try_emplace(Pack(a), result);
      ++inserted;
    }
    if (fi_addr) fi_addr[i] = result;
  }
  return inserted;
}

int AvRemove(fid_av* f, fi_addr_t* fi_addr, size_t count, uint64_t flags) {
  Av* av = OwnerOf<Av>(f);
  if (flags) return -FI_EINVAL;
  std::lock_guard lock(av->mutex);
  for (size_t i = 0; i < count; ++i) {
    Address a;
    if (av->type == FI_AV_MAP) {
      a = Unpack(fi_addr[i]);
    } else {
      if (fi_addr[i] >= av->table.size() || !av->live[fi_addr[i]]) return -FI_EINVAL;
      a = av->table[fi_addr[i]];
      av->live[fi_addr[i]] = false;
    }
    auto it = av->reverse.find(Pack(a));
    if (it != av->reverse.end() && it->second == fi_addr[i]) av->reverse.erase(it);
  }
  return 0;
}

int AvLookup(fid_av* f, fi_addr_t fi_addr, void* addr, size_t* addrlen) {
  Av* av = OwnerOf<Av>(f);
  Address a;
  if (!av->Lookup(fi_addr, &a)) return -FI_EINVAL;
  if (addr) std::memcpy(addr, &a, std::min(*addrlen, sizeof(a)));
  *addrlen = sizeof(a);
  return 0;
}

const char* AvStraddr(fid_av*, const void* addr, char* buf, size_t* len) {
  Address a;
  std::memcpy(&a, addr, sizeof(a));
  char tmp[64];
  const int n = FormatAddress(a, tmp, sizeof(tmp));
  if (buf && *len) {
    std::strncpy(buf, tmp, *len - 1);
    buf[*len - 1] = '\0';
  }
  *len = static_cast<size_t>(n) + 1;
  return buf;
}

fi_ops av_fid_ops = FidOps(AvClose);

fi_ops_av av_ops = {
    .size = sizeof(fi_ops_av),
    .insert = AvInsert,
    .insertsvc = NoSys<int>,
    .insertsym = NoSys<int>,
    .remove = AvRemove,
    .lookup = AvLookup,
    .straddr = AvStraddr,
    .av_set = NoSys<int>,
};

}  // namespace

int OpenAv(fid_domain* fd, fi_av_attr* attr, fid_av** out, void* context) {
  Domain* d = OwnerOf<Domain>(fd);
  if (!attr) return -FI_EINVAL;
  if (attr->flags & ~FI_SYMMETRIC) return -FI_ENOSYS;  // no FI_EVENT, no sharing by name
  if (attr->name || attr->rx_ctx_bits) return -FI_ENOSYS;
  auto* av = new (std::nothrow) Av;
  if (!av) return -FI_ENOMEM;
  av->type = attr->type == FI_AV_UNSPEC ? d->info->domain_attr->av_type : attr->type;
  if (av->type != FI_AV_MAP && av->type != FI_AV_TABLE) {
    delete av;
    return -FI_EINVAL;
  }
  av->domain = d;
  d->refs++;
  av->h.owner = av;
  av->h.fid.fid.fclass = FI_CLASS_AV;
  av->h.fid.fid.context = context;
  av->h.fid.fid.ops = &av_fid_ops;
  av->h.fid.ops = &av_ops;
  if (attr->count) {
    av->table.reserve(attr->count);
    av->reverse.reserve(attr->count);
  }
  *out = &av->h.fid;
  return 0;
}

}  // namespace ptl::ofi
