/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every public header compiles as strict C99 (-std=c99 -Wall -Werror
 * -pedantic) and every API function links, the way an unmodified Portals
 * 3.3 program uses them; so do the io_uring extension's.
 */
#include <p3-config.h>
#include <portals3.h>
#include <p3nal_linux.h>
#include <p3api/debug.h>
#include <p3rt/p3rt.h>
#include <p3utils.h>
#include <p3/debug.h>
#include <portals/portals3.h>
#include <portals/ptl_uring.h>

#include <stdio.h>
#include <string.h>

typedef void (*any_fn)(void);

int main(void)
{
	/* Take the address of every function so that the link proves they exist. */
	const any_fn fns[] = {
		(any_fn)PtlInit, (any_fn)PtlFini, (any_fn)PtlNIInit, (any_fn)PtlNIFini,
		(any_fn)PtlNIStatus, (any_fn)PtlNIDist, (any_fn)PtlNIHandle,
		(any_fn)PtlGetUid, (any_fn)PtlGetId, (any_fn)PtlGetJid,
		(any_fn)PtlMEAttach, (any_fn)PtlMEAttachAny, (any_fn)PtlMEInsert,
		(any_fn)PtlMEUnlink, (any_fn)PtlMDAttach, (any_fn)PtlMDBind,
		(any_fn)PtlMDUnlink, (any_fn)PtlMDUpdate, (any_fn)PtlEQAlloc,
		(any_fn)PtlEQFree, (any_fn)PtlEQGet, (any_fn)PtlEQWait, (any_fn)PtlEQPoll,
		(any_fn)PtlEQWaitFd, (any_fn)PtlMEMDPost,
		(any_fn)PtlACEntry, (any_fn)PtlPut, (any_fn)PtlPutRegion, (any_fn)PtlGet,
		(any_fn)PtlGetRegion, (any_fn)PtlGetPut, (any_fn)PtlErrorStr,
		(any_fn)PtlNIFailStr, (any_fn)PtlEventKindStr, (any_fn)PtlNIDebug,
		(any_fn)PtlTblDump, (any_fn)PtlMEDump, (any_fn)PtlNIEqDump,
		(any_fn)PtlSetRank, (any_fn)PtlSetNIDMap, (any_fn)PtlSetPIDMap,
		(any_fn)PtlGetRank, (any_fn)PtlGetRankId, (any_fn)PtlGetNIDMap,
		(any_fn)PtlGetPIDMap, (any_fn)PtlSetJID,
		/* The io_uring extension. */
		(any_fn)PtlUringCreate, (any_fn)PtlUringDestroy,
		(any_fn)PtlUringPut, (any_fn)PtlUringPutRegion,
		(any_fn)PtlUringGet, (any_fn)PtlUringGetRegion,
		(any_fn)PtlUringGetPut, (any_fn)PtlUringMDBind,
		(any_fn)PtlUringSubmit, (any_fn)PtlUringReap,
		(any_fn)PtlUringArmEQWait,
	};
	ptl_process_id_t id = { PTL_NID_ANY, PTL_PID_ANY };
	ptl_md_t md;
	ptl_event_t ev;
	ptl_interface_t iface = PTL_IFACE_DEFAULT;
	ptl_ack_req_t noack = PTL_NOACK_REQ;
	timeout_val_t to;
	unsigned i, mask = PTL_DBG_ALL | PTL_DBG_NI_ALL;

	memset(&md, 0, sizeof(md));
	memset(&ev, 0, sizeof(ev));
	md.eq_handle = PTL_EQ_NONE;
	md.threshold = PTL_MD_THRESH_INF;
	md.options = PTL_MD_OP_PUT | PTL_MD_EVENT_START_DISABLE;
	clear_timeout(&to);
	for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		if (!fns[i])
			return 1;
	printf("%u functions;" FMT_NIDPID FMT_MBITS " %s %s %d %u %u\n",
	       i, id.nid, id.pid, (uint64_t)MAX(1, 2), ptl_err_str[PTL_OK],
	       PtlErrorStr(PTL_SEGV), test_timeout(&to), iface == PTL_IFACE_LINUX,
	       (unsigned)noack + mask + PTL_SR_MLIST_MAX(3));
	return strcmp(PtlEventKindStr(PTL_EVENT_ACK), "PTL_EVENT_ACK") != 0;
}
