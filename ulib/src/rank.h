// SPDX-License-Identifier: BSD-3-Clause
// The runtime ("rank") API's environment convention (API reference 6.9).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "library.h"

namespace ptl {

// Parses a colon-separated list of ids ("7:8::9"; empty entries are
// skipped, as the reference does; numbers may be decimal, 0x hex or 0
// octal). PTL_OK, or PTL_FAIL for an empty list, junk or an id > 2^32-1.
int ParseIdMap(const char* text, std::vector<uint32_t>* out);

// Builds the group PtlSetRank(PTL_INVALID_HANDLE, -1, -1) describes from
// PTL_MY_RID, PTL_NIDMAP, PTL_PIDMAP and (optional) PTL_MY_JID, read with
// `getenv`. PTL_NO_INIT when a variable is missing, PTL_FAIL when they
// disagree (map lengths, rank outside the group).
using GetEnv = const char* (*)(const char*);
int GroupFromEnv(GetEnv getenv_fn, Group* group, std::optional<uint32_t>* jid);

}  // namespace ptl
