// SPDX-License-Identifier: BSD-3-Clause
// Debug output enabled per NI by PtlNIDebug (<p3api/debug.h>).
#pragma once

#include <portals3.h>

#include <cstdio>

namespace ptl {

// Where the library prints: p3_out (<p3utils.h>), or stderr if a program
// set it to NULL.
FILE* Out();

// Prints "portals: <message>" to Out() if `bit` is set in the NI's mask.
void Trace(ptl_handle_ni_t ni, unsigned bit, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));

// Prints one event (PTL_DBG_EVENT).
void TraceEvent(ptl_handle_eq_t eq, int rc, const ptl_event_t& ev);

}  // namespace ptl
