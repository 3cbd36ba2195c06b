// SPDX-License-Identifier: GPL-2.0
/*
 * PTL_IOC_DATA and the data calls of kernel clients: where a call becomes
 * a struct ptl_data_req (the ioctl's struct stays here, at the boundary)
 * and goes to local delivery or to the interface's transport.
 */
#include "ptl_internal.h"
#include "ptl_request.h"

/**
 * ptl_data_call - one data-movement call on an initiator NI
 * @ni: the initiator (the caller's reference)
 * @req: the call, op and ack_req checked by the caller
 *
 * Shared by PTL_IOC_DATA and kernel clients (ptl_kapi.c). Process context.
 * Return: a Portals code; PTL_OK means initiated.
 */
long ptl_data_call(struct ptl_ni *ni, const struct ptl_data_req *req)
{
	if (req->args.target.nid == ni->nid)
		return ptl_local_request(ni, req);
	return ptl_remote_request(ni, req);
}

static void ptl_data_req_from_ioc(struct ptl_data_req *req,
				  const struct ptl_ioc_data *d)
{
	*req = (struct ptl_data_req) {
		.op = d->op,
		.region = d->flags & PTL_DATA_REGION,
		.get_md = d->md_handle,
		.args = {
			.md = d->op == PTL_DATA_GETPUT ? d->put_md_handle :
							 d->md_handle,
			.local_offset = d->local_offset,
			.length = d->length,
			.ack_req = d->ack_req,
			.target = { .nid = d->target_nid,
				    .pid = d->target_pid },
			.pt_index = d->pt_index,
			.ac_index = d->ac_index,
			.match_bits = d->match_bits,
			.remote_offset = d->remote_offset,
			.hdr_data = d->hdr_data,
		},
	};
}

long ptl_ioctl_data(struct ptl_file *pf, void *arg)
{
	const struct ptl_ioc_data *d = arg;
	struct ptl_data_req req;
	struct ptl_ni *ni;
	long rc;

	if (d->op > PTL_DATA_GETPUT ||
	    (d->ack_req != PTL_ACK_REQ && d->ack_req != PTL_NO_ACK_REQ))
		return -EINVAL;
	ptl_data_req_from_ioc(&req, d);
	ni = ptl_ni_lookup_any(pf, req.args.md);
	if (!ni)
		return PTL_MD_INVALID;
	rc = ptl_data_call(ni, &req);
	ptl_ni_put(ni);
	return rc;
}
