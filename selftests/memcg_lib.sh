# shellcheck shell=bash
# A memory cgroup for a test to charge what it makes the kernel hold;
# sourced, not run.
#
#   memcg_make DIR MAX   makes the cgroup v2 DIR (the memory controller
#                        enabled under the root) with memory.max MAX;
#                        fails where there is none, the reason in memcg_why

# shellcheck disable=SC2034 # memcg_why is the caller's to read
memcg_why=

# shellcheck disable=SC2034
memcg_make() {
	if [ ! -e /sys/fs/cgroup/cgroup.controllers ]; then
		memcg_why="no cgroup v2"
		return 1
	fi
	echo +memory >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
	if ! mkdir -p "$1" || ! echo "$2" >"$1/memory.max"; then
		memcg_why="no memory cgroup"
		return 1
	fi
}
