// SPDX-License-Identifier: BSD-3-Clause
// libptl-fi.so: the entry point libfabric looks for in every lib*-fi.so of
// its provider directory, the provider's parameters, and fi_getinfo.
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>

#include <cstring>

#include "info.h"
#include "objects.h"

namespace ptl::ofi {
namespace {

int GetInfo(uint32_t version, const char* node, const char* service, uint64_t flags,
            const fi_info* hints, fi_info** info);
void Cleanup() {}

fi_provider provider = {
    .version = kProviderVersion,
    .fi_version = kApiVersion,
    .context = {},
    .name = kProviderName,
    .getinfo = GetInfo,
    .fabric = OpenFabric,
    .cleanup = Cleanup,
};

// node/service name a peer to resolve: we have no name service (addresses
// come from fi_getname and an out-of-band exchange), so a call that names
// one gets nothing, as FI_SOURCE with a local name would.
int GetInfo(uint32_t version, const char* node, const char* service, uint64_t flags,
            const fi_info* hints, fi_info** info) {
  *info = nullptr;
  if (node || service || (flags & FI_SOURCE)) return -FI_ENODATA;
  const Limits& limits = ProviderLimits();
  if (const char* why = HintsRefused(hints, limits, limits.iface)) {
    FI_INFO(&provider, FI_LOG_CORE, "hints refused: %s\n", why);
    return -FI_ENODATA;
  }
  int err = 0;
  *info = MakeInfo(version, hints, limits, limits.iface, &err);
  return err;
}

void DefineParams() {
  fi_param_define(&provider, "eager_size", FI_PARAM_SIZE_T,
                  "largest message sent eagerly; larger ones are pulled by the receiver "
                  "(default %zu)",
                  Limits{}.eager_size);
  fi_param_define(&provider, "inject_size", FI_PARAM_SIZE_T,
                  "largest fi_inject (default %zu; at most eager_size)", Limits{}.inject_size);
  fi_param_define(&provider, "bounce_slots", FI_PARAM_SIZE_T,
                  "eager sends in flight per endpoint (default %zu)", Limits{}.bounce_slots);
  fi_param_define(&provider, "heap_block", FI_PARAM_SIZE_T,
                  "bytes of one overflow heap block (default %zu)", Limits{}.heap_block);
  fi_param_define(&provider, "heap_blocks", FI_PARAM_SIZE_T,
                  "overflow heap blocks per receive queue (default %zu)", Limits{}.heap_blocks);
  fi_param_define(&provider, "iface", FI_PARAM_INT,
                  "Portals interface (0-3) the provider's domain uses (default 0)");
}

// Values outside what the protocol can carry are ignored, with a warning.
void ReadParams() {
  Limits& l = ProviderLimits();
  size_t v = 0;
  if (fi_param_get_size_t(&provider, "eager_size", &v) == 0) {
    if (v >= 64 && v <= (1U << 20))
      l.eager_size = v;
    else
      FI_WARN(&provider, FI_LOG_CORE, "FI_PTL_EAGER_SIZE %zu ignored (64 .. 1 MiB)\n", v);
  }
  if (fi_param_get_size_t(&provider, "inject_size", &v) == 0) l.inject_size = v;
  if (l.inject_size > l.eager_size) l.inject_size = l.eager_size;
  if (fi_param_get_size_t(&provider, "bounce_slots", &v) == 0) {
    if (v >= 1 && v <= 65536)
      l.bounce_slots = v;
    else
      FI_WARN(&provider, FI_LOG_CORE, "FI_PTL_BOUNCE_SLOTS %zu ignored (1 .. 65536)\n", v);
  }
  if (fi_param_get_size_t(&provider, "heap_block", &v) == 0) {
    if (v >= 2 * l.eager_size && v <= (1U << 30))
      l.heap_block = v;
    else
      FI_WARN(&provider, FI_LOG_CORE, "FI_PTL_HEAP_BLOCK %zu ignored\n", v);
  }
  if (fi_param_get_size_t(&provider, "heap_blocks", &v) == 0) {
    if (v >= 2 && v <= 1024)
      l.heap_blocks = v;
    else
      FI_WARN(&provider, FI_LOG_CORE, "FI_PTL_HEAP_BLOCKS %zu ignored (2 .. 1024)\n", v);
  }
  int iface = 0;
  if (fi_param_get_int(&provider, "iface", &iface) == 0) {
    if (iface >= 0 && iface <= 3)
      l.iface = static_cast<unsigned>(iface);
    else
      FI_WARN(&provider, FI_LOG_CORE, "FI_PTL_IFACE %d ignored (0 .. 3)\n", iface);
  }
}

}  // namespace

const fi_provider* Provider() { return &provider; }

}  // namespace ptl::ofi

extern "C" FI_EXT_INI {
  ptl::ofi::DefineParams();
  ptl::ofi::ReadParams();
  return &ptl::ofi::provider;
}
