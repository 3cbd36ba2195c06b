# shellcheck shell=bash
#
# Helpers shared by tools/testing/vm/mkinitramfs, tools/testing/vm/run and tools/testing/vm/selftest.
# Sourced, never executed.  Everything here is derived from the location of
# this file and from the installed Debian kernel package; nothing is
# hard-coded to one checkout or one kernel version.
#
# Environment overrides:
#   KVER        guest kernel version (e.g. 6.1.0-56-amd64)
#   VM_KERNEL   guest kernel image (default: vmlinuz-$KVER from the kernel
#               cache, tools/testing/vm/getkernel)
#   PTL_KERNEL_CACHE  where getkernel unpacks guest kernels
#   VM_BUILD    cache/build directory (default <repo>/build/vm)

VM_TOOLS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
VM_REPO_DIR=$(cd "$VM_TOOLS_DIR/../../.." && pwd -P)
VM_BUILD=${VM_BUILD:-$VM_REPO_DIR/build/vm}

# Exit status for every harness-level failure (usage, boot, timeout, splat).
VM_EXIT_HARNESS=125

vm_prog=${0##*/}

die() {
	echo "$vm_prog: error: $*" >&2
	exit "$VM_EXIT_HARNESS"
}

warn() {
	echo "$vm_prog: $*" >&2
}

# Where guest kernels are unpacked (tools/testing/vm/getkernel), outside the
# repository so that every checkout and `make clean` share them.
# shellcheck disable=SC2034  # used by tools/testing/vm/getkernel
VM_KERNEL_CACHE=${PTL_KERNEL_CACHE:-/var/cache/portals/kernels}

# Print the guest kernel version: $KVER, else the release that
# tools/testing/kernel-version builds the modules for (linux-headers-amd64:
# Debian 12's 6.1).  Never "the newest" kernel around, and never the
# host's running kernel (uname -r): it is not the guest kernel.
vm_kver() {
	local v
	if [[ -n ${KVER:-} ]]; then
		echo "$KVER"
		return
	fi
	v=$("$VM_REPO_DIR/tools/testing/kernel-version" 2>/dev/null) ||
		die "no guest kernel: install linux-headers-amd64 (tools/testing/install-deps) or set KVER"
	echo "$v"
}

# Print the root under which kernel $1 has boot/vmlinuz-$1 and
# lib/modules/$1 with depmod's indexes: its entry in the kernel cache
# (fetched there by tools/testing/vm/getkernel if need be, never installed on the
# host), or / where linux-image-$1 is installed on the host anyway.
vm_kernel_root() {
	local k=$1 entry
	if entry=$("$VM_TOOLS_DIR/getkernel" --cached "$k"); then
		echo "$entry"
	elif [[ -r /boot/vmlinuz-$k && -r /lib/modules/$k/modules.dep ]]; then
		echo /
	else
		entry=$("$VM_TOOLS_DIR/getkernel" "$k") || die "cannot fetch the guest kernel $k"
		echo "$entry"
	fi
}

# Print "kvm" if KVM really runs a guest on this host, else "tcg".
#
# /dev/kvm existing is not enough: on some hosts (nested virtualisation,
# this project's build machines) KVM guests hang in early boot or QEMU
# aborts on an MSR the host refuses. The probe uses the same -cpu as the
# runs and boots the guest kernel with no init and no disk, so it panics
# at once, and gives it a few seconds to say so on the serial port. The verdict is
# cached per host kernel, QEMU and guest kernel, so only the first run on
# a machine pays for it (about 5 s when KVM hangs, under 1 s when it works).
# $2, if given, names the kernel in the cache key instead of its file name
# (the debug kernel's file is plain "vmlinux").
vm_probe_accel() {
	local kernel=$1 key cache verdict out
	if [[ ! -r /dev/kvm || ! -w /dev/kvm ]]; then
		echo tcg
		return
	fi
	key="$(uname -r)-$(qemu-system-x86_64 --version | head -1 | tr -c 'A-Za-z0-9.\n' _)"
	key+="-${2:-$(basename "$kernel")}"
	cache=$VM_BUILD/kvm-probe/$key
	if [[ -r $cache ]]; then
		cat "$cache"
		return
	fi
	mkdir -p "${cache%/*}"
	out=$(timeout -s KILL 5 qemu-system-x86_64 -accel kvm -cpu max -m 256 \
		-nodefaults -display none -no-reboot -serial stdio \
		-kernel "$kernel" \
		-append "console=ttyS0 panic=-1 init=/nonexistent root=/dev/null" \
		2>/dev/null || true)
	if grep -q "Kernel panic" <<<"$out"; then
		verdict=kvm
	else
		verdict=tcg
	fi
	echo "$verdict" >"$cache"
	echo "$verdict"
}
