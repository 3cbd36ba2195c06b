// SPDX-License-Identifier: BSD-3-Clause
// ptl_hello: the smallest complete Portals program. It opens the library and
// the default interface, prints who it is and what the kernel granted, and
// closes everything again. `make demo` runs it inside a guest.
#include <p3nal_linux.h>
#include <portals3.h>

#include <cstdio>

#include "ptl_tool/die.h"

namespace {

// Prints a failed call and exits; Portals codes are printed by name.
void Check(const char* what, int rc) {
  if (rc != PTL_OK) ptl::tool::Die("ptl_hello: %s failed: %s", what, PtlErrorStr(rc));
}

void PrintLimits(const ptl_ni_limits_t& l) {
  std::printf(
      "  limits: %d MEs, %d MDs, %d EQs, portals 0..%d, AC entries 0..%d,\n"
      "          %d iovecs per MD, %d MEs per list, %d-byte getput\n",
      l.max_mes, l.max_mds, l.max_eqs, l.max_pt_index, l.max_ac_index, l.max_md_iovecs,
      l.max_me_list, l.max_getput_md);
}

}  // namespace

int main() {
  int max_interfaces = 0;
  Check("PtlInit", PtlInit(&max_interfaces));
  std::printf("PtlInit: library ready, up to %d interfaces per process\n", max_interfaces);

  // -1 means "no wish"; ask only for a small portal table of 8 entries.
  ptl_ni_limits_t desired{-1, -1, -1, -1, -1, -1, -1, -1};
  desired.max_pt_index = 7;
  ptl_ni_limits_t actual{};
  ptl_handle_ni_t ni;
  Check("PtlNIInit", PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, &desired, &actual, &ni));
  std::printf("PtlNIInit: interface %#x open, handle %#x\n", PTL_IFACE_DEFAULT, ni);
  PrintLimits(actual);

  ptl_process_id_t id;
  ptl_uid_t uid;
  ptl_jid_t jid;
  Check("PtlGetId", PtlGetId(ni, &id));
  Check("PtlGetUid", PtlGetUid(ni, &uid));
  Check("PtlGetJid", PtlGetJid(ni, &jid));
  std::printf("PtlGetId: I am nid %u pid %u (uid %u, jid %u)\n", id.nid, id.pid, uid, jid);

  ptl_handle_ni_t again;
  Check("PtlNIInit (again)", PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, nullptr, nullptr, &again));
  std::printf("PtlNIInit again: same interface, same handle: %s\n", again == ni ? "yes" : "NO");

  Check("PtlNIFini", PtlNIFini(ni));
  int rc = PtlGetId(ni, &id);
  std::printf("PtlNIFini: closed; the old handle now gives %s\n", PtlErrorStr(rc));
  PtlFini();
  std::printf("PtlFini: done\n");
  return again == ni && rc == PTL_NI_INVALID ? 0 : 1;
}
