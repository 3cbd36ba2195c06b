// SPDX-License-Identifier: BSD-3-Clause
// libptl-fi.so: the entry point libfabric looks for in every lib*-fi.so of
// its provider directory, the provider's parameters, and fi_getinfo.
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>

#include <cctype>
#include <cstring>
#include <string>
#include <type_traits>

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
  fi_param_define(&provider, "recv_match_size", FI_PARAM_SIZE_T,
                  "receives of at most this many bytes are matched by the provider when "
                  "their message reaches the overflow heap, instead of being posted to the "
                  "kernel (default %zu; 0 posts every receive)",
                  Limits{}.recv_match_size);
  fi_param_define(&provider, "probe_interval", FI_PARAM_INT,
                  "ms a send or receive waits on a peer before the peer is probed "
                  "(default %u)",
                  Limits{}.probe_interval_ms);
  fi_param_define(&provider, "probe_timeout", FI_PARAM_INT,
                  "ms without an answer to a probe after which the peer is taken for gone and "
                  "what waits on it fails (default %u; keep it above the transport's peer "
                  "timeout)",
                  Limits{}.probe_timeout_ms);
  fi_param_define(&provider, "iface", FI_PARAM_INT,
                  "Portals interface (0-3) the provider's domain uses (default 0)");
}

// Reads FI_PTL_<NAME> into *out if set and within [lo, hi]; a value
// outside what the protocol can carry is ignored, with a warning.
template <typename T>
void ReadBounded(const char* name, T lo, T hi, T* out) {
  long long got;
  int rc;
  if constexpr (std::is_same_v<T, size_t>) {
    size_t v = 0;
    rc = fi_param_get_size_t(&provider, name, &v);
    got = static_cast<long long>(v);
  } else {
    int v = 0;
    rc = fi_param_get_int(&provider, name, &v);
    got = v;
  }
  if (rc != 0) return;
  if (got >= static_cast<long long>(lo) && got <= static_cast<long long>(hi)) {
    *out = static_cast<T>(got);
    return;
  }
  std::string env = name;
  for (char& c : env) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  FI_WARN(&provider, FI_LOG_CORE, "FI_PTL_%s=%lld ignored (%lld .. %lld)\n", env.c_str(), got,
          static_cast<long long>(lo), static_cast<long long>(hi));
}

void ReadParams() {
  Limits& l = ProviderLimits();
  ReadBounded<size_t>("eager_size", 64, 1U << 20, &l.eager_size);
  ReadBounded<size_t>("inject_size", 0, 1U << 30, &l.inject_size);  // clamped below
  ReadBounded<size_t>("bounce_slots", 1, 65536, &l.bounce_slots);
  ReadBounded<size_t>("heap_block", 2 * l.eager_size, 1U << 30, &l.heap_block);
  ReadBounded<size_t>("heap_blocks", 2, 1024, &l.heap_blocks);
  ReadBounded<size_t>("recv_match_size", 0, 1U << 30, &l.recv_match_size);
  ReadBounded<unsigned>("probe_interval", 10, 3600000, &l.probe_interval_ms);
  ReadBounded<unsigned>("probe_timeout", 10, 3600000, &l.probe_timeout_ms);
  ReadBounded<unsigned>("iface", 0, 3, &l.iface);
  if (l.inject_size > l.eager_size) l.inject_size = l.eager_size;
}

}  // namespace

const fi_provider* Provider() { return &provider; }

}  // namespace ptl::ofi

extern "C" FI_EXT_INI {
  ptl::ofi::DefineParams();
  ptl::ofi::ReadParams();
  return &ptl::ofi::provider;
}
