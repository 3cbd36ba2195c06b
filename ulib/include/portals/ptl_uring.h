/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libptl-user's io_uring extension (not part of Portals 3.3): queue many
 * data-movement calls, submit them with one io_uring_enter, and reap one
 * completion per call carrying the Portals return code the plain call
 * would have returned. Also: wait for Portals events in an application's
 * own io_uring, next to its sockets and files.
 *
 * Each call runs in the kernel exactly as its plain counterpart
 * (PtlPut, PtlPutRegion, PtlGet, PtlGetRegion, PtlGetPut, PtlMDBind): same
 * checks, same events, same return codes; it runs when the batch is
 * submitted (with PTL_URING_SQPOLL: when the kernel's SQ thread picks it
 * up), in the order queued. A call that fails does not stop the others.
 *
 * A batch context belongs to one thread at a time. It keeps the process's
 * /dev/portals descriptor open until PtlUringDestroy.
 */
#ifndef PORTALS_PTL_URING_H
#define PORTALS_PTL_URING_H

#include <portals3.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct io_uring;
typedef struct ptl_uring ptl_uring_t;

/* PtlUringCreate flags */
#define PTL_URING_SQPOLL	(1U << 0)	/* a kernel thread submits */

/*
 * As an MD handle of PtlUringPut/PutRegion/Get/GetRegion: the MD of the
 * last PtlUringMDBind queued in this batch, linked so that the data call
 * runs after the bind with its handle. If the bind fails with a Portals
 * code, the data call finds no MD (PTL_MD_INVALID), as the plain calls
 * would; if it fails at the ABI level (an errno), io_uring cancels the
 * data call (rc PTL_FAIL, err -ECANCELED).
 */
#define PTL_URING_MD_BOUND	((ptl_handle_md_t)0x3fffffff)

/* One completion. */
typedef struct {
	uint64_t user_data;	/* as queued */
	int rc;			/* the Portals code of the call */
	int err;		/* 0, or the negative errno behind rc */
} ptl_uring_cqe_t;

/*
 * A batch context for the NI's process: up to @depth calls queued at once
 * (1..4096). PTL_NI_INVALID if @ni is not an NI of this process;
 * PTL_NO_SPACE or PTL_FAIL if the kernel refuses the ring (no io_uring,
 * RLIMIT_MEMLOCK, or SQPOLL not permitted).
 */
int PtlUringCreate(ptl_handle_ni_t ni, unsigned int depth, unsigned int flags,
		   ptl_uring_t **out);
/* Waits for submitted calls to complete, then frees the context. */
int PtlUringDestroy(ptl_uring_t *u);

/*
 * Queue one call; nothing runs until PtlUringSubmit. PTL_NO_SPACE when
 * @depth calls are queued or unreaped.
 */
int PtlUringPut(ptl_uring_t *u, uint64_t user_data, ptl_handle_md_t md_handle,
		ptl_ack_req_t ack_req, ptl_process_id_t target_id,
		ptl_pt_index_t pt_index, ptl_ac_index_t ac_index,
		ptl_match_bits_t match_bits, ptl_size_t remote_offset,
		ptl_hdr_data_t hdr_data);
int PtlUringPutRegion(ptl_uring_t *u, uint64_t user_data,
		      ptl_handle_md_t md_handle, ptl_size_t local_offset,
		      ptl_size_t length, ptl_ack_req_t ack_req,
		      ptl_process_id_t target_id, ptl_pt_index_t pt_index,
		      ptl_ac_index_t ac_index, ptl_match_bits_t match_bits,
		      ptl_size_t remote_offset, ptl_hdr_data_t hdr_data);
int PtlUringGet(ptl_uring_t *u, uint64_t user_data, ptl_handle_md_t md_handle,
		ptl_process_id_t target_id, ptl_pt_index_t pt_index,
		ptl_ac_index_t ac_index, ptl_match_bits_t match_bits,
		ptl_size_t remote_offset);
int PtlUringGetRegion(ptl_uring_t *u, uint64_t user_data,
		      ptl_handle_md_t md_handle, ptl_size_t local_offset,
		      ptl_size_t length, ptl_process_id_t target_id,
		      ptl_pt_index_t pt_index, ptl_ac_index_t ac_index,
		      ptl_match_bits_t match_bits, ptl_size_t remote_offset);
int PtlUringGetPut(ptl_uring_t *u, uint64_t user_data,
		   ptl_handle_md_t get_md_handle, ptl_handle_md_t put_md_handle,
		   ptl_process_id_t target_id, ptl_pt_index_t pt_index,
		   ptl_ac_index_t ac_index, ptl_match_bits_t match_bits,
		   ptl_size_t remote_offset, ptl_hdr_data_t hdr_data);
/*
 * PtlMDBind; *@md_handle is written when the call completes (by
 * PtlUringReap, which returns its completion). The MD memory and @md's
 * iovec array must stay valid until then.
 */
int PtlUringMDBind(ptl_uring_t *u, uint64_t user_data, ptl_handle_ni_t ni,
		   ptl_md_t md, ptl_unlink_t unlink_op,
		   ptl_handle_md_t *md_handle);

/* Submits every queued call with one io_uring_enter (none with SQPOLL
 * while its thread is awake); *@submitted (may be NULL) says how many. */
int PtlUringSubmit(ptl_uring_t *u, unsigned int *submitted);

/*
 * Copies up to @max completions into @out, waiting until at least
 * @min_wait (at most the number submitted and unreaped) are there;
 * *@count says how many were copied.
 */
int PtlUringReap(ptl_uring_t *u, ptl_uring_cqe_t *out, unsigned int max,
		 unsigned int min_wait, unsigned int *count);

/*
 * Queues, in the caller's @ring (not submitted), a one-shot wait that
 * completes (res POLLIN, user_data @user_data) when some EQ of this
 * process holds an event not yet taken with PtlEQGet/Wait/Poll; at once
 * if one does already. It is a poll of the process's /dev/portals
 * descriptor (IORING_OP_POLL_ADD), so io_uring cancels it like any poll
 * (io_uring_prep_poll_remove, ring exit). Re-arm after draining the EQs.
 * PTL_NO_INIT before PtlInit, PTL_NO_SPACE if the ring's SQ is full.
 */
int PtlUringArmEQWait(struct io_uring *ring, uint64_t user_data);

#ifdef __cplusplus
}
#endif

#endif /* PORTALS_PTL_URING_H */
