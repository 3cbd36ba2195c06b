# Portals for Linux: top-level driver.
#
#   make           build the kernel modules (kbuild) and user space (CMake)
#   make demo      install what is missing, build, run the demo in guests
#
# Tests, in three tiers (Documentation/testing.md has their times):
#   make check-quick   no guest, no root, a few minutes: the modules with
#                  W=1, the user build, lint on what changed, unit tests
#   make check     install what is missing, build, and run every suite that
#                  guards correctness on the default kernel (what CI runs)
#   make check-all     make check, then the other kernels, the packages,
#                  the rest of the debug kernel's suites and the soak
#   make check-PHASE   one phase of those (after the build it needs):
#                  $(CHECK_PHASE_TARGETS)
#
#   make soak      100,000 messages between two nodes under netem faults
#   make lint      checkpatch on kernel code, clang-format on C++, the man
#                  pages, dkms.conf against Kbuild, shellcheck on the shell
#                  scripts (make lint-changed: only what changed)
#   make deb       the Debian packages in build/deb (make check-packages tests them)
#
# On a cluster node build against the running kernel:
#   make KVER=$(uname -r)      (or KDIR=/path/to/kernel/build)

ifneq ($(KERNELRELEASE),)
# Invoked by kbuild: the Kbuild file describes the modules.
include $(src)/Kbuild
else

SHELL := /bin/bash
TOP := $(CURDIR)
BUILD ?= $(TOP)/build
KVER ?= $(shell $(TOP)/tools/testing/kernel-version 2>/dev/null)
KDIR ?= /lib/modules/$(KVER)/build
JOBS ?= $(shell nproc)
LINUX_SOURCE_TAR ?= /usr/src/linux-source-6.1.tar.xz
KSRC_DIR := $(BUILD)/linux-tools

# Tests, and helper programs of test scripts (not run on their own).
SELFTEST_SRCS := $(wildcard selftests/*_test.c) selftests/rtscts_putmany.c \
	selftests/rtscts_putsink.c selftests/rtscts_flood.c selftests/rtscts_getsrc.c \
	selftests/rtscts_pingack.c
SELFTEST_BINS := $(patsubst selftests/%.c,$(BUILD)/selftests/%,$(SELFTEST_SRCS))
SELFTEST_CFLAGS := -O2 -g -Wall -Werror -pthread -isystem $(KSRC_DIR) \
	-I$(TOP)/uapi -I$(TOP)/ulib/include

.PHONY: all modules user selftests deps check demo lint clean
.PHONY: debug-kernel debug-modules

all: modules user selftests

deps:
	@$(TOP)/tools/testing/install-deps

modules:
	@test -d "$(KDIR)" || { echo "no kernel build dir $(KDIR): make deps" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(TOP) modules

$(BUILD)/CMakeCache.txt:
	cmake -S $(TOP) -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo

user: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j$(JOBS)

# kselftest_harness.h, kselftest.h and checkpatch come from Debian's
# linux-source package; tar reads the whole archive, so extract once.
$(KSRC_DIR)/.stamp: $(LINUX_SOURCE_TAR)
	rm -rf $(KSRC_DIR).tmp && mkdir -p $(KSRC_DIR).tmp
	tar -xJf $< -C $(KSRC_DIR).tmp --strip-components=1 \
		linux-source-6.1/tools/testing/selftests/kselftest_harness.h \
		linux-source-6.1/tools/testing/selftests/kselftest.h \
		linux-source-6.1/scripts/checkpatch.pl \
		linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch
	mv $(KSRC_DIR).tmp/tools/testing/selftests/*.h $(KSRC_DIR).tmp/
	rm -rf $(KSRC_DIR) && mv $(KSRC_DIR).tmp $(KSRC_DIR) && touch $@

# The library is built by `user` (order-only, so a phony target does not
# force relinking); its archive's timestamp then decides.
$(BUILD)/ulib/libptl-user.a: ;

$(BUILD)/selftests/%: selftests/%.c $(wildcard selftests/*.h) \
		$(KSRC_DIR)/.stamp $(BUILD)/ulib/libptl-user.a | user
	@mkdir -p $(dir $@)
	$(CC) $(SELFTEST_CFLAGS) $< -o $@ $(BUILD)/ulib/libptl-user.a -luring -lstdc++

# The MPI test programs (selftests/mpi/, run by selftests/mpi_test.sh and
# mpi_two_guests.sh), built with Open MPI's mpicc when it is installed
# (tools/testing/install-deps installs it).
MPICC ?= mpicc
MPI_SELFTEST_BINS := $(patsubst selftests/mpi/%.c,$(BUILD)/selftests/mpi/%,$(wildcard selftests/mpi/*.c))
HAVE_MPICC := $(shell command -v $(MPICC) 2>/dev/null)

$(BUILD)/selftests/mpi/%: selftests/mpi/%.c selftests/mpi/mpi_tap.h
	@mkdir -p $(dir $@)
	$(MPICC) -O2 -g -Wall -Wextra -Werror $< -o $@

selftests: $(SELFTEST_BINS) $(if $(HAVE_MPICC),$(MPI_SELFTEST_BINS))
	$(if $(HAVE_MPICC),,@echo "selftests/mpi: not built, no $(MPICC) (make deps installs Open MPI)")

# The test phases of tools/testing/run-checks; make check-PHASE runs one.
CHECK_PHASES := lint unit asan fuzz vm-selftest kselftests network debug
ALL_ONLY_PHASES := debug-extra mpi-extra packages kernels soak
CHECK_PHASE_TARGETS := $(addprefix check-,modules-w1 lint-changed $(CHECK_PHASES) $(ALL_ONLY_PHASES))
.PHONY: check-quick check-all deps-all $(CHECK_PHASE_TARGETS)

# What check-all's phases need beyond check's: the other kernels, the
# packaging tools.
deps-all:
	@$(TOP)/tools/testing/install-deps --all

# No guest and no root: what a developer runs before every commit.
check-quick: user
	$(TOP)/tools/testing/run-checks quick

# The module under test fills uninitialised stack variables with a pattern
# (see Kbuild); a later plain `make` rebuilds it as users get it.
check: deps
	$(MAKE) all PTL_PATTERN_INIT=1
	$(TOP)/tools/testing/run-checks check

check-all: deps-all
	$(MAKE) all PTL_PATTERN_INIT=1
	$(TOP)/tools/testing/run-checks all

# One phase; lint and the unit phases need only the user build (and the
# kselftest headers), the guest phases the whole build.
check-lint check-lint-changed: $(KSRC_DIR)/.stamp
	$(TOP)/tools/testing/run-checks $(@:check-%=%)
check-modules-w1:
	$(TOP)/tools/testing/run-checks modules-w1
check-unit check-asan check-fuzz: user
	$(TOP)/tools/testing/run-checks $(@:check-%=%)
check-vm-selftest check-kselftests check-network check-debug check-debug-extra check-mpi-extra check-soak: deps
	$(MAKE) all PTL_PATTERN_INIT=1
	$(TOP)/tools/testing/run-checks $(@:check-%=%)
check-packages check-kernels: deps-all
	$(MAKE) all PTL_PATTERN_INIT=1
	$(TOP)/tools/testing/run-checks $(@:check-%=%)

# The debug kernel (KASAN, KFENCE, lockdep, kmemleak, UBSAN, ...; built
# once per machine and cached outside the repository, see
# Documentation/vm-harness.md) and our modules built against it in
# $(BUILD)/debug-modules, with the flags `make check` uses.
debug-kernel:
	$(TOP)/tools/testing/vm/mkdebugkernel

debug-modules:
	BUILD=$(BUILD) $(TOP)/tools/testing/vm/mkdebugmodules PTL_PATTERN_INIT=1

demo: deps
	$(MAKE) all
	$(TOP)/tools/demo/run-demo

# make soak: ptl_stress between two nodes under netem faults, at least
# 100,000 messages (SOAK_MESSAGES), with a summary of losses, duplicates,
# reorders (all must be 0) and retransmissions (tools/testing/net-soak).
.PHONY: soak
soak: deps
	$(MAKE) all
	$(TOP)/tools/testing/net-soak

# make bench: Portals against local IPC peers in one guest under QEMU
# -icount, then the core's matching micro-benchmark on the host, then the
# two-node, block-device, Soft-RoCE, authenticated-frames and MPI parts
# (Open MPI over ptl against its TCP path: run-mpibench; BENCH_MPI=0
# skips it) (tools/testing/bench/run-bench;
# Documentation/performance.md).
.PHONY: bench
bench: all
	$(TOP)/tools/testing/bench/run-bench

# make deb: the Debian packages of debian/ (portals-dkms, libptl-user0,
# libptl-user-dev, portals-utils) built by dpkg-buildpackage from a copy of
# the tree, into $(BUILD)/deb/, then lintian (tools/testing/build-deb).
# make check-packages (root): builds them, installs them into a clean mmdebstrap root,
# DKMS builds the modules, a guest loads them and runs a program built with
# pkg-config ptl-user, apt-get purge leaves nothing (tools/testing/check-packages).
.PHONY: deb
deb:
	BUILD=$(BUILD) $(TOP)/tools/testing/build-deb

CHECKPATCH = $(KSRC_DIR)/scripts/checkpatch.pl --no-tree --quiet \
	--ignore SPDX_LICENSE_TAG,FILE_PATH_CHANGES
# The platform shims exist to give the core (and the frame codecs, in user
# space) the kernel's type names.
PLATFORM_SHIMS := kmod/ptl_platform_kernel.h kmod/core/ptl_platform_user.h \
	include/ptl/portable.h

# Kernel code: everything C under kmod/, rtscts/ and include/ (rtscts/user
# is the codec's user-space C++). User space: every C++ file and header.
KERNEL_C := $(wildcard kmod/*.[ch] kmod/core/*.[ch] rtscts/*.[ch] include/ptl/*.[ch] ptlblk/*.[ch] rdma/*.[ch])

# Shell: every *.sh and every file that starts with a sh or bash #! line;
# shellcheck's warnings and errors fail, its style notes do not.
SHELL_SCRIPTS = { git ls-files '*.sh'; git ls-files -z | xargs -0 awk \
	'FNR == 1 { if (/^\#!.*[/ ](ba)?sh( |$$)/) print FILENAME; nextfile }'; } | sort -u

# The C++ clang-format checks: every .cc and every header that is not
# kernel code or a C header of the API.
CPP_FORMATTED = $(shell git ls-files '*.cc' '*.h' | \
	grep -v -E '^(kmod|uapi|selftests|ulib/include|include|ptlblk|rdma)/|^rtscts/[^/]*\.h$$')

lint: $(KSRC_DIR)/.stamp
	$(CHECKPATCH) -f $(filter-out $(PLATFORM_SHIMS),$(KERNEL_C))
	$(CHECKPATCH) --ignore NEW_TYPEDEFS -f $(PLATFORM_SHIMS)
	clang-format --dry-run --Werror $(CPP_FORMATTED)
	$(TOP)/tools/testing/check-man
	$(TOP)/tools/testing/check-dkms
	$(TOP)/tools/testing/check-includes
	shellcheck -x -S warning $$($(SHELL_SCRIPTS))

# make lint-changed: the same checks on what differs from the upstream
# branch (committed or not, and new files), else from HEAD.
LINT_BASE ?= $(shell git merge-base HEAD @{upstream} 2>/dev/null || echo HEAD)
CHANGED = $(shell { git diff --name-only --diff-filter=d $(LINT_BASE) --; \
	git ls-files --others --exclude-standard; } | sort -u)
.PHONY: lint-changed
lint-changed: $(KSRC_DIR)/.stamp
	@echo "lint-changed: $(words $(CHANGED)) files changed since $(LINT_BASE)"
	$(if $(filter-out $(PLATFORM_SHIMS),$(filter $(KERNEL_C),$(CHANGED))), \
		$(CHECKPATCH) -f $(filter-out $(PLATFORM_SHIMS),$(filter $(KERNEL_C),$(CHANGED))))
	$(if $(filter $(PLATFORM_SHIMS),$(CHANGED)), \
		$(CHECKPATCH) --ignore NEW_TYPEDEFS -f $(filter $(PLATFORM_SHIMS),$(CHANGED)))
	$(if $(filter $(CPP_FORMATTED),$(CHANGED)), \
		clang-format --dry-run --Werror $(filter $(CPP_FORMATTED),$(CHANGED)))
	$(if $(filter man/%,$(CHANGED)),$(TOP)/tools/testing/check-man)
	$(if $(filter dkms.conf Kbuild,$(CHANGED)),$(TOP)/tools/testing/check-dkms)
	$(if $(filter $(KERNEL_C),$(CHANGED)),$(TOP)/tools/testing/check-includes)
	$(if $(filter $(shell $(SHELL_SCRIPTS)),$(CHANGED)), \
		shellcheck -x -S warning $(filter $(shell $(SHELL_SCRIPTS)),$(CHANGED)))

clean:
	-$(MAKE) -C $(KDIR) M=$(TOP) clean 2>/dev/null
	rm -rf $(BUILD)

endif
