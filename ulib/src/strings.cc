// SPDX-License-Identifier: BSD-3-Clause
// Names of return codes, event kinds and NI failure codes.
#include <portals3.h>

#include <array>
#include <iterator>

namespace {

#define PTL_ERRNO_NAME(name) #name,
constexpr std::array<const char*, PTL_MAX_ERRNO + 1> kErrorNames = {PTL_ERRORS(PTL_ERRNO_NAME)};
#undef PTL_ERRNO_NAME

constexpr std::array<const char*, PTL_EVENT_KIND_COUNT> kEventKindNames = {
    "PTL_EVENT_GET_START",   "PTL_EVENT_GET_END",      "PTL_EVENT_PUT_START",
    "PTL_EVENT_PUT_END",     "PTL_EVENT_GETPUT_START", "PTL_EVENT_GETPUT_END",
    "PTL_EVENT_REPLY_START", "PTL_EVENT_REPLY_END",    "PTL_EVENT_SEND_START",
    "PTL_EVENT_SEND_END",    "PTL_EVENT_ACK",          "PTL_EVENT_UNLINK",
};

}  // namespace

extern "C" {

// Exported for clients (e.g. OrangeFS BMI) that index it directly.
const char* ptl_err_str[] = {
#define PTL_ERRNO_NAME(name) #name,
    PTL_ERRORS(PTL_ERRNO_NAME)
#undef PTL_ERRNO_NAME
};

const char* PtlErrorStr(unsigned int ptl_errno) {
  if (ptl_errno >= PTL_MAX_ERRNO) return kErrorNames[PTL_UNKNOWN_ERROR];
  return kErrorNames[ptl_errno];
}

const char* PtlEventKindStr(ptl_event_kind_t ev_kind) {
  auto index = static_cast<unsigned>(ev_kind);
  if (index >= kEventKindNames.size()) return "PTL_UNKNOWN_EVENT_KIND";
  return kEventKindNames[index];
}

const char* PtlNIFailStr(ptl_handle_ni_t /*ni_handle*/, ptl_ni_fail_t nal_errno) {
  switch (nal_errno) {
    case PTL_NI_OK:
      return "PTL_NI_OK";
    case PTL_NI_FAIL:
      return "PTL_NI_FAIL";
    default:
      return "PTL_NI_UNKNOWN_ERROR";
  }
}

}  // extern "C"
