// SPDX-License-Identifier: BSD-3-Clause
// Output: each object as text (one block per object, like `ip -s link`)
// and as JSON (snake_case names of the attributes and counters).
#pragma once

#include <string>

#include "objects.h"
#include "ptl_tool/json.h"

namespace ptlctl {

using ptl::tool::JsonWriter;  // tools/lib

// Text blocks, each ending in a newline. `stats` adds the counters.
std::string IfaceText(const Iface& o, bool stats);
std::string PeerText(const Peer& o, bool stats);
std::string NiText(const Ni& o, bool stats);
std::string PidResText(const PidRes& o);
std::string EventText(const PeerEvent& o);
// Counters as indented tables, grouped (TX, RX, errors, objects, ...).
std::string CountersText(const Counters& counters);

// One JSON object per object, written into `w`.
void IfaceJson(JsonWriter& w, const Iface& o, bool stats);
void PeerJson(JsonWriter& w, const Peer& o, bool stats);
void NiJson(JsonWriter& w, const Ni& o, bool stats);
void PidResJson(JsonWriter& w, const PidRes& o);
void EventJson(JsonWriter& w, const PeerEvent& o);
// {"tx_frames": 1, ...}; unknown counters as "stat_N".
void CountersJson(JsonWriter& w, const Counters& counters);

}  // namespace ptlctl
