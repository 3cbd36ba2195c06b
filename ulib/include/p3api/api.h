/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Portals 3.3 API functions (SAND2006-0420 sections 3.4-3.13).
 * Every function returns a ptl_err_t code as int.
 */
#ifndef P3API_API_H
#define P3API_API_H

#include <p3api/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 3.4 Initialization and cleanup */
int PtlInit(int *max_interfaces);
void PtlFini(void);

/* 3.5 Network interfaces */
int PtlNIInit(ptl_interface_t iface, ptl_pid_t pid, ptl_ni_limits_t *desired,
	      ptl_ni_limits_t *actual, ptl_handle_ni_t *ni_handle);
int PtlNIFini(ptl_handle_ni_t ni_handle);
int PtlNIStatus(ptl_handle_ni_t ni_handle, ptl_sr_index_t register_index,
		ptl_sr_value_t *status);
int PtlNIDist(ptl_handle_ni_t ni_handle, ptl_process_id_t process,
	      unsigned long *distance);
int PtlNIHandle(ptl_handle_any_t handle, ptl_handle_ni_t *ni_handle);

/* 3.6-3.8 Identification */
int PtlGetUid(ptl_handle_ni_t ni_handle, ptl_uid_t *uid);
int PtlGetId(ptl_handle_ni_t ni_handle, ptl_process_id_t *id);
int PtlGetJid(ptl_handle_ni_t ni_handle, ptl_jid_t *jid);

/* 3.9 Match entries */
int PtlMEAttach(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
		ptl_process_id_t match_id, ptl_match_bits_t match_bits,
		ptl_match_bits_t ignore_bits, ptl_unlink_t unlink,
		ptl_ins_pos_t position, ptl_handle_me_t *me_handle);
int PtlMEAttachAny(ptl_handle_ni_t ni_handle, ptl_pt_index_t *pt_index,
		   ptl_process_id_t match_id, ptl_match_bits_t match_bits,
		   ptl_match_bits_t ignore_bits, ptl_unlink_t unlink,
		   ptl_handle_me_t *me_handle);
int PtlMEInsert(ptl_handle_me_t base, ptl_process_id_t match_id,
		ptl_match_bits_t match_bits, ptl_match_bits_t ignore_bits,
		ptl_unlink_t unlink, ptl_ins_pos_t position,
		ptl_handle_me_t *me_handle);
int PtlMEUnlink(ptl_handle_me_t me_handle);

/* 3.10 Memory descriptors */
int PtlMDAttach(ptl_handle_me_t me_handle, ptl_md_t md,
		ptl_unlink_t unlink_op, ptl_handle_md_t *md_handle);
int PtlMDBind(ptl_handle_ni_t ni_handle, ptl_md_t md,
	      ptl_unlink_t unlink_op, ptl_handle_md_t *md_handle);
int PtlMDUnlink(ptl_handle_md_t md_handle);
int PtlMDUpdate(ptl_handle_md_t md_handle, ptl_md_t *old_md,
		ptl_md_t *new_md, ptl_handle_eq_t eq_handle);

/* 3.11 Event queues */
int PtlEQAlloc(ptl_handle_ni_t ni_handle, ptl_size_t count,
	       ptl_eq_handler_t eq_handler, ptl_handle_eq_t *eq_handle);
int PtlEQFree(ptl_handle_eq_t eq_handle);
int PtlEQGet(ptl_handle_eq_t eq_handle, ptl_event_t *event);
int PtlEQWait(ptl_handle_eq_t eq_handle, ptl_event_t *event);
int PtlEQPoll(ptl_handle_eq_t *eq_handles, int size, ptl_time_t timeout,
	      ptl_event_t *event, int *which_eq);

/* 3.12 Access control */
int PtlACEntry(ptl_handle_ni_t ni_handle, ptl_ac_index_t ac_index,
	       ptl_process_id_t match_id, ptl_uid_t user_id, ptl_jid_t job_id,
	       ptl_pt_index_t pt_index);

/* 3.13 Data movement */
int PtlPut(ptl_handle_md_t md_handle, ptl_ack_req_t ack_req,
	   ptl_process_id_t target_id, ptl_pt_index_t pt_index,
	   ptl_ac_index_t ac_index, ptl_match_bits_t match_bits,
	   ptl_size_t remote_offset, ptl_hdr_data_t hdr_data);
int PtlPutRegion(ptl_handle_md_t md_handle, ptl_size_t local_offset,
		 ptl_size_t length, ptl_ack_req_t ack_req,
		 ptl_process_id_t target_id, ptl_pt_index_t pt_index,
		 ptl_ac_index_t ac_index, ptl_match_bits_t match_bits,
		 ptl_size_t remote_offset, ptl_hdr_data_t hdr_data);
int PtlGet(ptl_handle_md_t md_handle, ptl_process_id_t target_id,
	   ptl_pt_index_t pt_index, ptl_ac_index_t ac_index,
	   ptl_match_bits_t match_bits, ptl_size_t remote_offset);
int PtlGetRegion(ptl_handle_md_t md_handle, ptl_size_t local_offset,
		 ptl_size_t length, ptl_process_id_t target_id,
		 ptl_pt_index_t pt_index, ptl_ac_index_t ac_index,
		 ptl_match_bits_t match_bits, ptl_size_t remote_offset);
int PtlGetPut(ptl_handle_md_t get_md_handle, ptl_handle_md_t put_md_handle,
	      ptl_process_id_t target_id, ptl_pt_index_t pt_index,
	      ptl_ac_index_t ac_index, ptl_match_bits_t match_bits,
	      ptl_size_t remote_offset, ptl_hdr_data_t hdr_data);

/* Helpers every 3.3 library exports (non-spec). */
const char *PtlErrorStr(unsigned int ptl_errno);
const char *PtlNIFailStr(ptl_handle_ni_t ni_handle, ptl_ni_fail_t nal_errno);
const char *PtlEventKindStr(ptl_event_kind_t ev_kind);

#ifdef __cplusplus
}
#endif

#endif /* P3API_API_H */
