/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Build configuration that the reference test programs include first. The
 * reference generated it with autoconf; on Linux (LP64) these are fixed.
 */
#ifndef P3_CONFIG_H
#define P3_CONFIG_H

#define PTL_LINUX 1
#define SIZE_T_IS_ULONG 1

#endif /* P3_CONFIG_H */
