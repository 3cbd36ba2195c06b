# shellcheck shell=bash
#
# Helpers shared by tools/vm/mkinitramfs, tools/vm/run and tools/vm/selftest.
# Sourced, never executed.  Everything here is derived from the location of
# this file and from the installed Debian kernel package; nothing is
# hard-coded to one checkout or one kernel version.
#
# Environment overrides:
#   KVER        guest kernel version (e.g. 6.1.0-56-amd64)
#   VM_KERNEL   guest kernel image (default /boot/vmlinuz-$KVER)
#   VM_BUILD    cache/build directory (default <repo>/build/vm)

VM_TOOLS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
VM_REPO_DIR=$(cd "$VM_TOOLS_DIR/../.." && pwd -P)
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

# A kernel version is usable if its image and its modules.dep exist.
_vm_kver_ok() {
	[[ -n $1 && -e /boot/vmlinuz-$1 && -e /lib/modules/$1/modules.dep ]]
}

# Print the guest kernel version.  Order: $KVER; the image that the
# linux-image-amd64 meta-package depends on; the version that
# tools/kernel-version builds the modules for (linux-headers-amd64); the
# only installed kernel, if there is one.  Never "the newest": installing
# linux-image-6.12-amd64 or -6.12-rt-amd64 (tools/install-deps does, for
# make check's kernels phase) must not change the default guest, which is
# the kernel the modules of `make` are built for (Debian 12's 6.1).  The
# host's running kernel (uname -r) is deliberately ignored: it is not the
# guest kernel.
vm_kver() {
	local v dep images=()
	if [[ -n ${KVER:-} ]]; then
		[[ -e /lib/modules/$KVER/modules.dep ]] ||
			die "KVER=$KVER: /lib/modules/$KVER/modules.dep not found"
		echo "$KVER"
		return
	fi
	if command -v dpkg-query >/dev/null; then
		# Depends: linux-image-6.1.0-56-amd64 (= 6.1.192-2)
		dep=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null || true)
		v=$(sed -n 's/^.*linux-image-\([0-9][^ ,]*-amd64\)\(-unsigned\)\?\b.*$/\1/p' <<<"$dep")
		if _vm_kver_ok "$v"; then
			echo "$v"
			return
		fi
	fi
	v=$("$VM_REPO_DIR/tools/kernel-version" 2>/dev/null || true)
	if _vm_kver_ok "$v"; then
		echo "$v"
		return
	fi
	for v in /boot/vmlinuz-*; do
		v=${v#/boot/vmlinuz-}
		! _vm_kver_ok "$v" || images+=("$v")
	done
	((${#images[@]} != 1)) || {
		echo "${images[0]}"
		return
	}
	((${#images[@]})) || die "no guest kernel found: install linux-image-amd64 or set KVER"
	die "no default guest kernel (linux-image-amd64 is not installed) among ${images[*]}: set KVER"
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
