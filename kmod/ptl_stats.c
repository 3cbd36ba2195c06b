// SPDX-License-Identifier: GPL-2.0
/*
 * Module-wide counters, readable by anyone under the misc device:
 * /sys/class/misc/portals/{pinned_pages,open_files,nis,mds,eqs,
 * core_objects,intra_msgs,drops,pincache_*}. Tests use them to prove that
 * closing, exiting or being killed leaves nothing behind, and that the
 * pin cache reuses pins.
 */
#include <linux/device.h>
#include <linux/sysfs.h>

#include "core/ptl_core.h"
#include "ptl_internal.h"

struct ptl_stats ptl_stats;

#define PTL_STAT_ATTR(name)						\
static ssize_t name##_show(struct device *dev,				\
			   struct device_attribute *attr, char *buf)	\
{									\
	return sysfs_emit(buf, "%ld\n", atomic_long_read(&ptl_stats.name)); \
}									\
static DEVICE_ATTR_RO(name)

PTL_STAT_ATTR(pinned_pages);
PTL_STAT_ATTR(open_files);
PTL_STAT_ATTR(nis);
PTL_STAT_ATTR(mds);
PTL_STAT_ATTR(eqs);
PTL_STAT_ATTR(intra_msgs);
PTL_STAT_ATTR(drops);
PTL_STAT_ATTR(pincache_hits);
PTL_STAT_ATTR(pincache_misses);
PTL_STAT_ATTR(pincache_invalidations);
PTL_STAT_ATTR(pincache_evictions);
PTL_STAT_ATTR(pincache_cached_pages);

/* Allocations of the core (NIs, tables, MEs, MDs, EQs) still alive. */
static ssize_t core_objects_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%ld\n", ptlc_live_objects());
}
static DEVICE_ATTR_RO(core_objects);

static struct attribute *ptl_attrs[] = {
	&dev_attr_pinned_pages.attr,
	&dev_attr_open_files.attr,
	&dev_attr_nis.attr,
	&dev_attr_mds.attr,
	&dev_attr_eqs.attr,
	&dev_attr_intra_msgs.attr,
	&dev_attr_drops.attr,
	&dev_attr_core_objects.attr,
	&dev_attr_pincache_hits.attr,
	&dev_attr_pincache_misses.attr,
	&dev_attr_pincache_invalidations.attr,
	&dev_attr_pincache_evictions.attr,
	&dev_attr_pincache_cached_pages.attr,
	NULL,
};

static const struct attribute_group ptl_attr_group = {
	.attrs = ptl_attrs,
};

const struct attribute_group *ptl_attr_groups[] = {
	&ptl_attr_group,
	NULL,
};
