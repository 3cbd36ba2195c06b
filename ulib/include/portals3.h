/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Portals 3.3 for Linux: the one header applications include.
 *
 * Also include one NAL header, for this library <p3nal_linux.h>, which
 * defines PTL_IFACE_DEFAULT.
 */
#ifndef PORTALS3_H
#define PORTALS3_H

#include <p3api/types.h>
#include <p3api/api.h>
#include <p3api/misc.h>
#include <p3/nal_types.h>
#include <p3/errno.h>

#endif /* PORTALS3_H */
