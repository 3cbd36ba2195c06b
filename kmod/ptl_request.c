// SPDX-License-Identifier: GPL-2.0
/*
 * The initiator's half of a data-movement call: the core checks the call
 * and builds the request into the message storage of the path it takes
 * (ptl_request.h). The same for a local and a remote target.
 */
#include "ptl_internal.h"
#include "ptl_request.h"
#include "ptl_trace.h"

static void ptl_trace_request(const struct ptlc_msg *msg, u32 op)
{
	if (op == PTL_DATA_PUT)
		trace_ptl_put(&msg->hdr);
	else if (op == PTL_DATA_GET)
		trace_ptl_get(&msg->hdr);
	else
		trace_ptl_getput(&msg->hdr);
}

/**
 * ptl_request_build - have the core check a call and build its request
 * @ni: the initiator (the caller's reference)
 * @req: the call
 * @msg: where the request is built
 *
 * Return: a Portals code; PTL_OK when @msg holds the request.
 */
int ptl_request_build(struct ptl_ni *ni, const struct ptl_data_req *req,
		      struct ptlc_msg *msg)
{
	struct ptlc_ni *core = ni->core;
	int rc;

	switch (req->op) {
	case PTL_DATA_PUT:
		rc = ptlc_put(core, &req->args, req->region, msg);
		break;
	case PTL_DATA_GET:
		rc = ptlc_get(core, &req->args, req->region, msg);
		break;
	default:
		rc = ptlc_getput(core, req->get_md, &req->args, msg);
		break;
	}
	if (rc == PTL_OK)
		ptl_trace_request(msg, req->op);
	return rc;
}
