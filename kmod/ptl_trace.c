// SPDX-License-Identifier: GPL-2.0
/* Instantiates the tracepoints declared in ptl_trace.h. */
#define CREATE_TRACE_POINTS
#include "ptl_trace.h"
