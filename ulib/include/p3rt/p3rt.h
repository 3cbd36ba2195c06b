/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Portals 3.3 runtime ("rank") API (non-spec; API reference 6.9).
 *
 * "Set" calls made before PtlNIInit take PTL_INVALID_HANDLE and apply to
 * the next NI created; PtlNIInit with PTL_PID_ANY then claims the pid the
 * pid map names for my rank. PtlSetRank(PTL_INVALID_HANDLE, -1, -1) loads
 * everything from the environment:
 *
 *   PTL_MY_RID   my rank
 *   PTL_NIDMAP   colon-separated nids, indexed by rank
 *   PTL_PIDMAP   colon-separated pids, indexed by rank (same length)
 *   PTL_MY_JID   optional: the job id (see PtlSetJID)
 *
 * All return PTL_OK, PTL_NO_INIT (library not initialised, or the
 * environment / maps not set), PTL_NI_INVALID, PTL_SEGV or PTL_FAIL (maps
 * inconsistent with the rank, group size or the NI's nid).
 */
#ifndef P3RT_P3RT_H
#define P3RT_P3RT_H

#include <p3api/types.h>

#ifdef __cplusplus
extern "C" {
#endif

int PtlSetRank(ptl_handle_ni_t ni, unsigned rank, unsigned group_size);
int PtlSetNIDMap(ptl_handle_ni_t ni, ptl_nid_t *map, unsigned group_size);
int PtlSetPIDMap(ptl_handle_ni_t ni, ptl_pid_t *map, unsigned group_size);
int PtlGetRank(ptl_handle_ni_t ni, unsigned *rank, unsigned *group_size);
int PtlGetRankId(ptl_handle_ni_t ni, unsigned rank, ptl_process_id_t *id);
int PtlGetNIDMap(ptl_handle_ni_t ni, ptl_nid_t *map, unsigned group_size);
int PtlGetPIDMap(ptl_handle_ni_t ni, ptl_pid_t *map, unsigned group_size);

/*
 * Job ids come from a trusted launcher (ptlrun), never from the
 * application: PtlSetJID succeeds only if @jid is the job id this process
 * already has, or if the process may set it (CAP_NET_ADMIN, before its
 * first NI). Otherwise PTL_FAIL.
 */
int PtlSetJID(ptl_jid_t jid);

#ifdef __cplusplus
}
#endif

#endif /* P3RT_P3RT_H */
