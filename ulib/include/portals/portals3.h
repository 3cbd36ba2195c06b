/* SPDX-License-Identifier: BSD-3-Clause */
/* Cray XT spelling of the Portals header: same API. */
#include <portals3.h>
