/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The C that code built both into a module and into user space may use:
 * the kernel's fixed-width types (u8 .. u64, s32, s64), bool, size_t,
 * memcpy() and memset(), the checked arithmetic of <linux/overflow.h>
 * (check_add/sub/mul_overflow(a, b, d): *d = a op b, true if it wrapped)
 * and the fallthrough statement.
 *
 * In the kernel these are the kernel's own. In user space (the unit tests,
 * the fuzzers, ptl_inject) they come from the C library and the compiler
 * builtins the kernel's helpers are made of. The Portals core (through its
 * platform shim, kmod/core/ptl_platform.h) and the transports' frame
 * codecs (rtscts/rtscts_frame.c) use this and nothing else of their
 * environment, so the parser a fuzzer runs is the one a module runs.
 */
#ifndef PTL_PORTABLE_H
#define PTL_PORTABLE_H

#ifdef __KERNEL__
#include <linux/overflow.h>
#include <linux/string.h>
#include <linux/types.h>
#else
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef int64_t s64;

#ifndef check_add_overflow
#define check_add_overflow(a, b, d)	__builtin_add_overflow(a, b, d)
#define check_sub_overflow(a, b, d)	__builtin_sub_overflow(a, b, d)
#define check_mul_overflow(a, b, d)	__builtin_mul_overflow(a, b, d)
#endif

#ifndef fallthrough
#define fallthrough	__attribute__((__fallthrough__))
#endif
#endif /* __KERNEL__ */

#endif /* PTL_PORTABLE_H */
