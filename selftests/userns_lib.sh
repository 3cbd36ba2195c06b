# shellcheck shell=bash
# Unprivileged tests: a command as an ordinary user who owns a user and a
# network namespace of its own, as `unshare -Urn` gives any user of Debian
# 12 (unprivileged user namespaces are on by default); sourced, not run.
#
#   userns_run UID CMD ARGS...   runs CMD as UID (gid UID, no groups),
#                                mapped to root in new user and network
#                                namespaces; returns its status
#
# The kernel refuses CLONE_NEWUSER to a chrooted process (create_user_ns:
# current_chrooted()), root or not, and the harness runs its command
# chrooted into the host's root, which it mounted at /newroot of the
# initramfs (tools/testing/vm/guest-init). So there the command first leaves the
# chroot the way switch_root does: as root, in a private mount namespace
# (busybox's unshare, from the initramfs at /proc/1/root), the host's root
# is moved over the initramfs's and becomes the namespace's root, not a
# chroot (from inside it: a lookup that starts at "/" does not cross a
# mount stacked on the root, so the move is made from, and the chroot is
# to, the working directory, as switch_root does); the host's setpriv then drops to UID and the host's unshare makes
# the namespaces. Outside the harness (a real machine), setpriv and
# unshare are used as they are.

userns_newroot=/newroot

userns_run() {
	local uid=$1

	shift
	if unshare -U true 2>/dev/null; then
		setpriv --reuid="$uid" --regid="$uid" --clear-groups \
			unshare -Urn -- "$@"
		return
	fi
	if [ ! -x /proc/1/root/bin/busybox ]; then
		echo "# userns_run: chrooted, and no initramfs busybox to leave it" >&2
		return 1
	fi
	# shellcheck disable=SC2016 # expanded by busybox's sh
	chroot /proc/1/root /bin/busybox unshare -m --propagation private \
		/bin/busybox sh -c \
		'cd "$0" && mount -o move . / && exec /bin/busybox chroot . "$@"' \
		"$userns_newroot" \
		/usr/bin/setpriv --reuid="$uid" --regid="$uid" --clear-groups \
		/usr/bin/unshare -Urn -- "$@"
}
