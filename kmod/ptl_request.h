/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One data-movement call (PtlPut, PtlGet, PtlGetPut and the Region forms)
 * as ptl.ko carries it inside: built from PTL_IOC_DATA at the ioctl
 * boundary (ptl_data.c) or by a kernel client (ptl_kapi.c), then handed to
 * local delivery (ptl_move.c) or to the interface's transport
 * (ptl_remote.c), each of which has the core build the request into its
 * own message storage (ptl_request_build()).
 *
 *   ptl_data.c, ptl_kapi.c  ->  ptl_move.c, ptl_remote.c  ->  ptl_request.c
 */
#ifndef PTL_REQUEST_H
#define PTL_REQUEST_H

#include "core/ptl_core.h"

struct ptl_ni;

struct ptl_data_req {
	u32 op;				/* PTL_DATA_PUT, _GET or _GETPUT */
	bool region;			/* local_offset and length as given */
	ptl_handle_md_t get_md;		/* GETPUT: where the old data lands */
	struct ptlc_put_args args;	/* args.md: the MD sent (GETPUT: the put MD) */
};

int ptl_request_build(struct ptl_ni *ni, const struct ptl_data_req *req,
		      struct ptlc_msg *msg);

/* The two ways a request goes: Portals codes, PTL_OK once initiated. */
long ptl_local_request(struct ptl_ni *ni, const struct ptl_data_req *req);
long ptl_remote_request(struct ptl_ni *ni, const struct ptl_data_req *req);

/* ptl_data.c: the one entry for processes and kernel clients alike. */
long ptl_data_call(struct ptl_ni *ni, const struct ptl_data_req *req);

#endif /* PTL_REQUEST_H */
