/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Portals for Linux network interfaces (the library lives in ptl.ko).
 * Like every p3nal_*.h, the first one included defines PTL_IFACE_DEFAULT.
 */
#ifndef P3NAL_LINUX_H
#define P3NAL_LINUX_H

#include <p3/nal_types.h>

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

#ifdef __cplusplus
}
#endif

#endif /* P3NAL_LINUX_H */
