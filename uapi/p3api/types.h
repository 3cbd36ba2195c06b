/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause */
/*
 * Portals 3.3 types and constants (SAND2006-0420 section 3).
 *
 * This header is shared verbatim by libptl-user, by ptl.ko and by the
 * OS-independent semantics core, because its structures are ABI: the kernel
 * writes ptl_event_t records (with their embedded ptl_md_t) straight into the
 * event-queue rings that processes map. Only LP64 processes are supported;
 * the layout assertions below and in ulib keep that honest.
 */
#ifndef P3API_TYPES_H
#define P3API_TYPES_H

#ifdef __KERNEL__
#include <linux/types.h>	/* uint32_t, uint64_t */
#else
#include <stdint.h>
#endif

typedef uint64_t ptl_size_t;

typedef uint32_t ptl_handle_any_t;
typedef ptl_handle_any_t ptl_handle_ni_t;
typedef ptl_handle_any_t ptl_handle_md_t;
typedef ptl_handle_any_t ptl_handle_me_t;
typedef ptl_handle_any_t ptl_handle_eq_t;

typedef uint32_t ptl_pt_index_t;
typedef uint32_t ptl_ac_index_t;
typedef uint64_t ptl_match_bits_t;
typedef uint32_t ptl_interface_t;
typedef uint32_t ptl_nid_t;
typedef uint32_t ptl_pid_t;
typedef uint32_t ptl_uid_t;
typedef uint32_t ptl_jid_t;
typedef uint32_t ptl_sr_index_t;
typedef uint64_t ptl_sr_value_t;
typedef uint32_t ptl_ni_fail_t;
typedef uint32_t ptl_seq_t;
typedef uint64_t ptl_hdr_data_t;
typedef uint32_t ptl_time_t;

#define PTL_INVALID_HANDLE	((ptl_handle_any_t)0xffffffff)
#define PTL_HANDLE_NONE		((ptl_handle_any_t)0x7fffffff)
#define PTL_EQ_NONE		((ptl_handle_eq_t)0xbfffffff)

#define PTL_NID_ANY		((ptl_nid_t)0xffffffffU)
#define PTL_PID_ANY		((ptl_pid_t)0xffffffffU)
#define PTL_UID_ANY		((ptl_uid_t)0xffffffffU)
#define PTL_JID_ANY		((ptl_jid_t)0xffffffffU)
/*
 * Extension: the job id of a process that no trusted launcher placed in a
 * job. No pid or launcher job id can take this value, so an access-control
 * entry naming a job never admits an unlaunched process.
 */
#define PTL_JID_NONE		((ptl_jid_t)0xfffffffeU)
#define PTL_PT_INDEX_ANY	((ptl_pt_index_t)0xffffffffU)

#define PTL_MD_THRESH_INF	(-1)
#define PTL_TIME_FOREVER	((ptl_time_t)-1)

#define PTL_NI_OK		0

typedef struct {
	ptl_nid_t nid;
	ptl_pid_t pid;
} ptl_process_id_t;

typedef struct {
	int max_mes;
	int max_mds;
	int max_eqs;
	int max_ac_index;
	int max_pt_index;
	int max_md_iovecs;
	int max_me_list;
	int max_getput_md;
} ptl_ni_limits_t;

typedef enum {
	PTL_RETAIN = 0,
	PTL_UNLINK = 1
} ptl_unlink_t;

typedef enum {
	PTL_INS_BEFORE = 0,
	PTL_INS_AFTER = 1
} ptl_ins_pos_t;

typedef enum {
	PTL_ACK_REQ = 0,
	PTL_NO_ACK_REQ = 1
} ptl_ack_req_t;

/* Cray XT spelling, accepted by many 3.3 clients. */
#define PTL_NOACK_REQ		PTL_NO_ACK_REQ

/* Memory descriptor options (section 3.10.1). */
#define PTL_MD_OP_PUT			0x0001
#define PTL_MD_OP_GET			0x0002
#define PTL_MD_MANAGE_REMOTE		0x0004
#define PTL_MD_TRUNCATE			0x0008
#define PTL_MD_ACK_DISABLE		0x0010
#define PTL_MD_IOVEC			0x0020
#define PTL_MD_MAX_SIZE			0x0040
#define PTL_MD_EVENT_START_DISABLE	0x0080
#define PTL_MD_EVENT_END_DISABLE	0x0100
#define PTL_MD_OPTIONS_ALL		0x01ff

typedef struct {
	void *start;
	ptl_size_t length;
	int threshold;
	ptl_size_t max_size;
	unsigned int options;
	void *user_ptr;
	ptl_handle_eq_t eq_handle;
} ptl_md_t;

typedef struct {
	void *iov_base;
	ptl_size_t iov_len;
} ptl_md_iovec_t;

typedef enum {
	PTL_EVENT_GET_START,
	PTL_EVENT_GET_END,
	PTL_EVENT_PUT_START,
	PTL_EVENT_PUT_END,
	PTL_EVENT_GETPUT_START,
	PTL_EVENT_GETPUT_END,
	PTL_EVENT_REPLY_START,
	PTL_EVENT_REPLY_END,
	PTL_EVENT_SEND_START,
	PTL_EVENT_SEND_END,
	PTL_EVENT_ACK,
	PTL_EVENT_UNLINK
} ptl_event_kind_t;

#define PTL_EVENT_KIND_COUNT	(PTL_EVENT_UNLINK + 1)

typedef struct {
	ptl_event_kind_t type;
	ptl_process_id_t initiator;
	ptl_uid_t uid;
	ptl_jid_t jid;
	ptl_pt_index_t pt_index;
	ptl_match_bits_t match_bits;
	ptl_size_t rlength;
	ptl_size_t mlength;
	ptl_size_t offset;
	ptl_handle_md_t md_handle;
	ptl_md_t md;
	ptl_hdr_data_t hdr_data;
	ptl_seq_t link;
	ptl_ni_fail_t ni_fail_type;
	/* Last on purpose: the writer publishes it after everything else. */
	volatile ptl_seq_t sequence;
} ptl_event_t;

typedef void (*ptl_eq_handler_t)(ptl_event_t *event);
#define PTL_EQ_HANDLER_NONE	((ptl_eq_handler_t)0)

#if defined(__x86_64__) || defined(__aarch64__)
#ifdef __cplusplus
#define P3_STATIC_ASSERT(e, m) static_assert(e, m)
#else
#define P3_STATIC_ASSERT(e, m) _Static_assert(e, m)
#endif
P3_STATIC_ASSERT(sizeof(ptl_md_t) == 56, "ptl_md_t is ABI");
P3_STATIC_ASSERT(sizeof(ptl_event_t) == 144, "ptl_event_t is ABI");
P3_STATIC_ASSERT(__builtin_offsetof(ptl_event_t, md) == 64, "event.md");
P3_STATIC_ASSERT(__builtin_offsetof(ptl_event_t, hdr_data) == 120, "hdr");
P3_STATIC_ASSERT(__builtin_offsetof(ptl_event_t, sequence) == 136, "seq");
#undef P3_STATIC_ASSERT
#endif

#endif /* P3API_TYPES_H */
