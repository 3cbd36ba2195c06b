// SPDX-License-Identifier: BSD-3-Clause
// <p3rt/p3rt.h>: ranks, NID/PID maps and job ids. The runtime data lives in
// the library; "set" calls with PTL_INVALID_HANDLE prepare the next NI.
#include <p3rt/p3rt.h>
#include <portals3.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "debug_trace.h"
#include "library.h"
#include "rank.h"

using ptl::Library;

namespace ptl {

int ParseIdMap(const char* text, std::vector<uint32_t>* out) {
  out->clear();
  const char* p = text;
  while (*p) {
    if (*p == ':') {
      ++p;
      continue;
    }
    if (*p == '-' || *p == '+' || *p == ' ') return PTL_FAIL;
    errno = 0;
    char* end = nullptr;
    unsigned long value = std::strtoul(p, &end, 0);
    if (end == p || errno || value > UINT32_MAX || (*end && *end != ':')) return PTL_FAIL;
    out->push_back(static_cast<uint32_t>(value));
    p = end;
  }
  return out->empty() ? PTL_FAIL : PTL_OK;
}

int GroupFromEnv(GetEnv getenv_fn, Group* group, std::optional<uint32_t>* jid) {
  const char* rid = getenv_fn("PTL_MY_RID");
  const char* nids = getenv_fn("PTL_NIDMAP");
  const char* pids = getenv_fn("PTL_PIDMAP");
  if (!rid || !nids || !pids) return PTL_NO_INIT;

  std::vector<uint32_t> rank;
  Group g;
  if (ParseIdMap(rid, &rank) != PTL_OK || rank.size() != 1) return PTL_FAIL;
  if (ParseIdMap(nids, &g.nidmap) != PTL_OK || ParseIdMap(pids, &g.pidmap) != PTL_OK)
    return PTL_FAIL;
  if (g.nidmap.size() != g.pidmap.size() || rank[0] >= g.nidmap.size()) return PTL_FAIL;
  g.rank = rank[0];
  g.size = static_cast<unsigned>(g.nidmap.size());

  jid->reset();
  if (const char* j = getenv_fn("PTL_MY_JID")) {
    std::vector<uint32_t> v;
    if (ParseIdMap(j, &v) != PTL_OK || v.size() != 1) return PTL_FAIL;
    *jid = v[0];
  }
  *group = std::move(g);
  return PTL_OK;
}

}  // namespace ptl

namespace {

// Runs f(Group*) on the group `ni` names: the next NI's for
// PTL_INVALID_HANDLE (created when `create`), else the NI's.
template <typename F>
int WithGroup(ptl_handle_ni_t ni, bool create, F&& f) {
  int rc = PTL_OK;
  if (!Library::Instance().WithState([&](ptl::State& s) {
        std::optional<ptl::Group>* slot;
        if (ni == PTL_INVALID_HANDLE) {
          slot = &s.next_group;
        } else {
          auto it = s.nis.find(ni);
          if (it == s.nis.end()) {
            rc = PTL_NI_INVALID;
            return;
          }
          slot = &it->second.group;
        }
        if (!*slot) {
          if (!create) {
            rc = PTL_NO_INIT;  // the runtime has not described the job
            return;
          }
          slot->emplace();
        }
        rc = f(&**slot);
      }))
    return PTL_NO_INIT;
  return rc;
}

// The nid of a live NI must be the one the nid map gives my rank.
int CheckNid(ptl_handle_ni_t ni, const ptl::Group& g) {
  if (ni == PTL_INVALID_HANDLE || g.nidmap.empty() || g.rank >= g.nidmap.size()) return PTL_OK;
  ptl_process_id_t id;
  int rc = PtlGetId(ni, &id);
  if (rc != PTL_OK) return rc;
  return id.nid == g.nidmap[g.rank] ? PTL_OK : PTL_FAIL;
}

template <typename T>
int SetMap(ptl_handle_ni_t ni, const T* map, unsigned group_size,
           std::vector<uint32_t> ptl::Group::*member) {
  if (!map) return PTL_SEGV;
  return ptl::Guard([&]() -> int {
    ptl::Group copy;
    int rc = WithGroup(ni, false, [&](ptl::Group* g) -> int {
      if (group_size != g->size) return PTL_FAIL;
      copy = *g;
      copy.*member = std::vector<uint32_t>(map, map + group_size);
      return PTL_OK;
    });
    if (rc != PTL_OK) return rc;
    rc = CheckNid(ni, copy);
    if (rc != PTL_OK) return rc;
    return WithGroup(ni, false, [&](ptl::Group* g) -> int {
      *g = std::move(copy);
      return PTL_OK;
    });
  });
}

template <typename T>
int GetMap(ptl_handle_ni_t ni, T* map, unsigned group_size,
           std::vector<uint32_t> ptl::Group::*member) {
  if (!map) return PTL_SEGV;
  return WithGroup(ni, false, [&](ptl::Group* g) -> int {
    const auto& m = g->*member;
    if (m.empty()) return PTL_NO_INIT;
    if (group_size != m.size()) return PTL_FAIL;
    std::copy(m.begin(), m.end(), map);
    return PTL_OK;
  });
}

}  // namespace

extern "C" {

int PtlSetRank(ptl_handle_ni_t ni, unsigned rank, unsigned group_size) {
  if (!Library::Instance().device()) return PTL_NO_INIT;
  return ptl::Guard([&]() -> int {
    ptl::Group g;
    if (rank == ~0U && group_size == ~0U) {
      std::optional<uint32_t> jid;
      int rc = ptl::GroupFromEnv([](const char* name) -> const char* { return std::getenv(name); },
                                 &g, &jid);
      if (rc != PTL_OK) return rc;
      // The job id is the launcher's to set; a PTL_MY_JID the kernel does
      // not confirm is reported and otherwise ignored.
      if (jid && PtlSetJID(*jid) != PTL_OK)
        std::fprintf(ptl::Out(), "portals: PTL_MY_JID=%u ignored: job ids come from ptlrun\n",
                     *jid);
    } else {
      if (rank >= group_size) return PTL_FAIL;
      g.rank = rank;
      g.size = group_size;
    }
    int rc = CheckNid(ni, g);
    if (rc != PTL_OK) return rc;
    return WithGroup(ni, true, [&](ptl::Group* slot) -> int {
      *slot = std::move(g);
      return PTL_OK;
    });
  });
}

int PtlSetNIDMap(ptl_handle_ni_t ni, ptl_nid_t* map, unsigned group_size) {
  return SetMap(ni, map, group_size, &ptl::Group::nidmap);
}

int PtlSetPIDMap(ptl_handle_ni_t ni, ptl_pid_t* map, unsigned group_size) {
  return SetMap(ni, map, group_size, &ptl::Group::pidmap);
}

int PtlGetRank(ptl_handle_ni_t ni, unsigned* rank, unsigned* group_size) {
  if (!rank || !group_size) return PTL_SEGV;
  return WithGroup(ni, false, [&](ptl::Group* g) -> int {
    *rank = g->rank;
    *group_size = g->size;
    return PTL_OK;
  });
}

int PtlGetRankId(ptl_handle_ni_t ni, unsigned rank, ptl_process_id_t* id) {
  if (!id) return PTL_SEGV;
  return WithGroup(ni, false, [&](ptl::Group* g) -> int {
    if (rank >= g->size || g->nidmap.size() != g->size || g->pidmap.size() != g->size)
      return PTL_NO_INIT;
    *id = {g->nidmap[rank], g->pidmap[rank]};
    return PTL_OK;
  });
}

int PtlGetNIDMap(ptl_handle_ni_t ni, ptl_nid_t* map, unsigned group_size) {
  return GetMap(ni, map, group_size, &ptl::Group::nidmap);
}

int PtlGetPIDMap(ptl_handle_ni_t ni, ptl_pid_t* map, unsigned group_size) {
  return GetMap(ni, map, group_size, &ptl::Group::pidmap);
}

// Job ids come from a trusted launcher (ptlrun) through the descriptor it
// passes down; see Documentation/user-library.md.
int PtlSetJID(ptl_jid_t jid) {
  auto& lib = Library::Instance();
  auto dev = lib.device();
  if (!dev) return PTL_NO_INIT;

  std::optional<ptl_handle_ni_t> some_ni;
  std::optional<ptl_jid_t> launcher_jid;
  lib.WithState([&](ptl::State& s) {
    if (!s.nis.empty()) some_ni = s.nis.begin()->first;
    launcher_jid = s.launcher_jid;
  });
  if (some_ni) {
    // The job id is fixed once an NI exists: succeed only if it is this one.
    ptl_jid_t current;
    if (PtlGetJid(*some_ni, &current) == PTL_OK && current == jid) return PTL_OK;
    return PTL_FAIL;
  }
  ptl_ioc_set_jid args{};
  args.jid = jid;
  int rc = dev->CallRaw(PTL_IOC_SET_JID, &args);
  if (rc == PTL_OK) {  // a privileged process sets its own job
    lib.WithState([&](ptl::State& s) { s.launcher_jid = jid; });
    return PTL_OK;
  }
  if (rc == -EPERM || rc == -EBUSY) return launcher_jid == jid ? PTL_OK : PTL_FAIL;
  return rc < 0 ? PTL_FAIL : rc;
}

}  // extern "C"
