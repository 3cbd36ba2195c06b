/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause */
/*
 * Network abstraction layer (interface) type values. Only the macro names
 * matter to clients; the values of the historical NALs are kept so that
 * programs printing them see familiar numbers.
 */
#ifndef P3_NAL_TYPES_H
#define P3_NAL_TYPES_H

#define PTL_NALTYPE_NONE	0x00000000

/* Historical Sandia NALs (not implemented here, names kept for sources). */
#define PTL_NALTYPE_UTCP0	0xf0f0f000
#define PTL_NALTYPE_UTCP1	0xf0f0f001
#define PTL_NALTYPE_UTCP2	0xf0f0f002
#define PTL_NALTYPE_UTCP3	0xf0f0f003
#define PTL_NALTYPE_UTCP	PTL_NALTYPE_UTCP0

/*
 * Portals for Linux: the library lives in ptl.ko and every process reaches
 * it through /dev/portals. Interface n is the n-th Portals interface that
 * ptlctl configured on this node (interface 0 always exists).
 */
#define PTL_NALTYPE_LINUX0	0xf0f0f060
#define PTL_NALTYPE_LINUX1	0xf0f0f061
#define PTL_NALTYPE_LINUX2	0xf0f0f062
#define PTL_NALTYPE_LINUX3	0xf0f0f063
#define PTL_NALTYPE_LINUX	PTL_NALTYPE_LINUX0

#endif /* P3_NAL_TYPES_H */
