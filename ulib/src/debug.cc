// SPDX-License-Identifier: BSD-3-Clause
// <p3api/debug.h>: per-NI debug masks and dumps of what the library knows.
// The Portals state itself lives in ptl.ko; the dumps show this process's
// view of it (NIs, EQ rings, match-list lengths from the status registers).
#include <p3api/debug.h>
#include <p3utils.h>
#include <portals3.h>

#include <cstdarg>
#include <cstdio>

#include "debug_trace.h"
#include "library.h"

using ptl::Library;

// Exported (<p3utils.h>); the reference programs assign it.
FILE* p3_out = stderr;

namespace ptl {

FILE* Out() { return p3_out ? p3_out : stderr; }

void Trace(ptl_handle_ni_t ni, unsigned bit, const char* fmt, ...) {
  unsigned mask = 0;
  Library::Instance().WithState([&](State& s) {
    auto it = s.nis.find(ni);
    mask = it != s.nis.end() ? it->second.debug_mask : s.default_debug_mask;
  });
  if (!(mask & bit)) return;
  va_list ap;
  va_start(ap, fmt);
  std::fputs("portals: ", Out());
  std::vfprintf(Out(), fmt, ap);
  std::fputc('\n', Out());
  va_end(ap);
}

void TraceEvent(ptl_handle_eq_t eq, int rc, const ptl_event_t& ev) {
  std::fprintf(Out(),
               "portals: EQ %#x %s%s seq %u from nid %u pid %u pt %u mb %#llx rlen %llu "
               "mlen %llu off %llu md %#x ni_fail %u\n",
               eq, PtlEventKindStr(ev.type), rc == PTL_EQ_DROPPED ? " (after a drop)" : "",
               ev.sequence, ev.initiator.nid, ev.initiator.pid, ev.pt_index,
               static_cast<unsigned long long>(ev.match_bits),
               static_cast<unsigned long long>(ev.rlength),
               static_cast<unsigned long long>(ev.mlength),
               static_cast<unsigned long long>(ev.offset), ev.md_handle, ev.ni_fail_type);
}

}  // namespace ptl

extern "C" {

unsigned int PtlNIDebug(ptl_handle_ni_t ni_handle, unsigned int mask) {
  unsigned old = PTL_DBG_NONE;
  Library::Instance().WithState([&](ptl::State& s) {
    if (ni_handle == PTL_INVALID_HANDLE) {
      old = s.default_debug_mask;
      s.default_debug_mask = mask;
      return;
    }
    auto it = s.nis.find(ni_handle);
    if (it == s.nis.end()) return;
    old = it->second.debug_mask;
    it->second.debug_mask = mask;
    for (auto& [handle, eq] : s.eqs)
      if (eq->ni == ni_handle) eq->debug_mask = mask;
  });
  return old;
}

int PtlTblDump(ptl_handle_ni_t ni_handle, int pt_index) {
  int max_pt = -1;
  if (!Library::Instance().WithState([&](ptl::State& s) {
        auto it = s.nis.find(ni_handle);
        if (it != s.nis.end()) max_pt = it->second.limits.max_pt_index;
      }))
    return PTL_NO_INIT;
  if (max_pt < 0) return PTL_NI_INVALID;
  if (pt_index > max_pt || pt_index < -1) return PTL_PT_INDEX_INVALID;

  int first = pt_index < 0 ? 0 : pt_index;
  int last = pt_index < 0 ? max_pt : pt_index;
  std::fprintf(ptl::Out(), "portals: NI %#x portal table (%d entries)\n", ni_handle, max_pt + 1);
  for (int pt = first; pt <= last; ++pt) {
    ptl_sr_value_t len = 0, max = 0;
    int rc = PtlNIStatus(ni_handle, PTL_SR_MLIST_LEN(static_cast<unsigned>(pt)), &len);
    if (rc != PTL_OK) return rc;
    rc = PtlNIStatus(ni_handle, PTL_SR_MLIST_MAX(static_cast<unsigned>(pt)), &max);
    if (rc != PTL_OK) return rc;
    if (len || pt_index >= 0)
      std::fprintf(ptl::Out(), "portals:   pt %d: %llu MEs (at most %llu so far)\n", pt,
                   static_cast<unsigned long long>(len), static_cast<unsigned long long>(max));
  }
  return PTL_OK;
}

int PtlMEDump(ptl_handle_me_t me_handle) {
  ptl_handle_ni_t ni = PTL_INVALID_HANDLE;
  int rc = PtlNIHandle(me_handle, &ni);
  if (rc == PTL_HANDLE_INVALID) return PTL_ME_INVALID;
  if (rc != PTL_OK) return rc;
  std::fprintf(ptl::Out(), "portals: ME %#x on NI %#x (match list state is in ptl.ko)\n", me_handle,
               ni);
  return PTL_OK;
}

int PtlNIEqDump(ptl_handle_ni_t ni_handle) {
  return ptl::Guard([&]() -> int {
    bool known = false;
    std::vector<std::shared_ptr<ptl::Eq>> eqs;
    if (!Library::Instance().WithState([&](ptl::State& s) {
          known = s.nis.count(ni_handle) != 0;
          for (auto& [handle, eq] : s.eqs)
            if (eq->ni == ni_handle) eqs.push_back(eq);
        }))
      return PTL_NO_INIT;
    if (!known) return PTL_NI_INVALID;
    std::fprintf(ptl::Out(), "portals: NI %#x: %zu event queue(s)\n", ni_handle, eqs.size());
    for (auto& eq : eqs) {
      std::lock_guard lock(eq->mutex);
      std::fprintf(ptl::Out(),
                   "portals:   EQ %#x: %u slots, next sequence %u, %u event(s) waiting%s\n",
                   eq->handle, eq->reader.nslots(), eq->reader.expected(), eq->reader.Pending(),
                   eq->handler ? ", handler set" : "");
    }
    return PTL_OK;
  });
}

}  // extern "C"
