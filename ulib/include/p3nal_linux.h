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

#endif /* P3NAL_LINUX_H */
