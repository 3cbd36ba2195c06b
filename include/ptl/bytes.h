/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Little-endian fields in byte arrays, for the wire codecs (the Portals
 * header, the transports' frames), in the kernel and in user space alike.
 * Written byte by byte, so the code is the same on any host byte order and
 * never makes an unaligned access.
 */
#ifndef PTL_BYTES_H
#define PTL_BYTES_H

#include <ptl/portable.h>

static inline void put_le16(u8 *p, u16 v)
{
	p[0] = (u8)v;
	p[1] = (u8)(v >> 8);
}

static inline void put_le32(u8 *p, u32 v)
{
	put_le16(p, (u16)v);
	put_le16(p + 2, (u16)(v >> 16));
}

static inline void put_le64(u8 *p, u64 v)
{
	put_le32(p, (u32)v);
	put_le32(p + 4, (u32)(v >> 32));
}

static inline u16 get_le16(const u8 *p)
{
	return (u16)(p[0] | (p[1] << 8));
}

static inline u32 get_le32(const u8 *p)
{
	return get_le16(p) | ((u32)get_le16(p + 2) << 16);
}

static inline u64 get_le64(const u8 *p)
{
	return get_le32(p) | ((u64)get_le32(p + 4) << 32);
}

#endif /* PTL_BYTES_H */
