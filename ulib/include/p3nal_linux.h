/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Portals for Linux network interfaces (the library lives in ptl.ko).
 * Like every p3nal_*.h, the first one included defines PTL_IFACE_DEFAULT.
 */
#ifndef P3NAL_LINUX_H
#define P3NAL_LINUX_H

#include <p3/nal_types.h>
#include <p3api/types.h>

#define PTL_IFACE_LINUX		PTL_NALTYPE_LINUX
#define PTL_IFACE_LINUX0	PTL_NALTYPE_LINUX0
#define PTL_IFACE_LINUX1	PTL_NALTYPE_LINUX1
#define PTL_IFACE_LINUX2	PTL_NALTYPE_LINUX2
#define PTL_IFACE_LINUX3	PTL_NALTYPE_LINUX3

#ifndef PTL_IFACE_DEFAULT
#define PTL_IFACE_DEFAULT	PTL_IFACE_LINUX
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Linux extension: a descriptor that poll(), select() and epoll report
 * readable (POLLIN) while some EQ of this process holds an event not yet
 * taken with PtlEQGet/Wait/Poll, so an event loop can wait for Portals
 * events beside its other descriptors. It is the library's own: do not
 * read, write or close it. PTL_NO_INIT before PtlInit, PTL_SEGV if @fd is
 * NULL.
 */
int PtlEQWaitFd(int *fd);

/*
 * Linux extension: a receive posted in one call. PtlMEInsert(base, ...)
 * followed by PtlMDAttach of @md to the new entry, done together and
 * only if @eq_handle is empty as PtlMDUpdate means it (no event this
 * process has not read, none promised); otherwise nothing is created and
 * the answer is PTL_MD_NO_UPDATE. With PTL_EQ_NONE it is unconditional.
 * It replaces the race-free post of Portals 3.3 (insert, attach an
 * inactive MD, arm it with PtlMDUpdate testing the overflow EQ): no
 * message can arrive between the test and the entry becoming visible.
 * Errors as PtlMEInsert and PtlMDAttach return them; on any error nothing
 * is left behind. PTL_SEGV if @me_handle or @md_handle is NULL.
 */
int PtlMEMDPost(ptl_handle_me_t base, ptl_process_id_t match_id,
		ptl_match_bits_t match_bits, ptl_match_bits_t ignore_bits,
		ptl_unlink_t me_unlink, ptl_ins_pos_t position, ptl_md_t md,
		ptl_unlink_t md_unlink, ptl_handle_eq_t eq_handle,
		ptl_handle_me_t *me_handle, ptl_handle_md_t *md_handle);

#ifdef __cplusplus
}
#endif

#endif /* P3NAL_LINUX_H */
