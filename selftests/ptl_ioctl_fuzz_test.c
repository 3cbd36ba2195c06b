// SPDX-License-Identifier: GPL-2.0
/*
 * A bounded ioctl fuzzer for /dev/portals, run in the guest.
 *
 * Several processes (one of them unprivileged), each with several threads
 * sharing one or two open files, issue for PTL_FUZZ_SECONDS (default 20):
 *   - structured calls: every command of <linux/portals.h> with plausible
 *     arguments (handles taken from objects that really exist, in this
 *     file or another, stale or of the wrong type; real pids as targets so
 *     intra-node delivery runs on fuzzed MDs), then randomly mutated
 *     sizes (0..8192), flags, fields and bytes;
 *   - random commands (mostly magic 0xB8, some others) with random
 *     pointers: NULL, unmapped, read-only, kernel addresses, buffers that
 *     end at a guard page, valid buffers with random content;
 *   - mmap()s of the device at real and random offsets and protections,
 *     reads of what got mapped, munmap()s, poll() and read() on the fd,
 *     close and reopen of the fd while other threads use it.
 * The test passes if everything finishes (the harness fails the run on any
 * WARN, BUG or Oops in the guest), nothing leaks (the module's counters
 * return to their values from before), and afterwards a normal put between
 * two processes still works. PTL_FUZZ_SEED makes a run repeatable.
 */
#include "ptl_selftest.h"

#include <pthread.h>
#include <setjmp.h>
#include <sys/ioctl.h>

#include "kselftest_harness.h"

#define FUZZ_PROCS	4	/* the last one drops root */
#define FUZZ_THREADS	3
#define POOL		128
#define BUFSZ		(64 * 1024)

/* Shared between all fuzz processes (MAP_SHARED). */
struct shared {
	uint32_t handles[POOL];		/* every handle any call returned */
	uint32_t pids[POOL];		/* Portals pids that exist(ed) */
	uint64_t eq_offsets[POOL];	/* mmap offsets EQ_ALLOC reported */
	uint32_t nid;
	unsigned long calls, ok, portals_errors, errnos, mmaps, faults;
	int stop;
};

static struct shared *sh;

/* Objects of one fuzz process (its threads share them). */
#define LOCAL 64
struct local {
	uint32_t handles[LOCAL];
	uint64_t eq_offsets[LOCAL];
};

static struct local loc;

struct fuzzer {
	uint64_t rng;
	int *fds;		/* shared by the threads of one process */
	int nfds;
	char *buf;		/* BUFSZ, followed by a guard page */
	char *ro;		/* a read-only page */
	char *hole;		/* an unmapped page */
};

static uint64_t rnd(struct fuzzer *f)
{
	f->rng ^= f->rng << 13;
	f->rng ^= f->rng >> 7;
	f->rng ^= f->rng << 17;
	return f->rng;
}

static uint64_t below(struct fuzzer *f, uint64_t n)
{
	return n ? rnd(f) % n : 0;
}

static int chance(struct fuzzer *f, int percent)
{
	return (int)below(f, 100) < percent;
}

static void remember(uint32_t *pool, uint32_t v)
{
	if (v && v != PTL_INVALID_HANDLE)
		__atomic_store_n(&pool[v % POOL], v, __ATOMIC_RELAXED);
}

static uint32_t a_handle(struct fuzzer *f)
{
	static const uint32_t special[] = {
		0, PTL_INVALID_HANDLE, PTL_HANDLE_NONE, PTL_EQ_NONE, 1,
		0xffff, 0x7ffff, 0x80000000,
	};
	uint32_t h;

	if (chance(f, 10))
		return special[below(f, sizeof(special) / sizeof(special[0]))];
	if (chance(f, 5))
		return (uint32_t)rnd(f);
	if (chance(f, 70))
		h = __atomic_load_n(&loc.handles[below(f, LOCAL)],
				    __ATOMIC_RELAXED);
	else
		h = __atomic_load_n(&sh->handles[below(f, POOL)],
				    __ATOMIC_RELAXED);
	if (chance(f, 10))
		h ^= 1U << below(f, 32);	/* near miss */
	return h;
}

static uint32_t a_pid(struct fuzzer *f)
{
	uint32_t p = __atomic_load_n(&sh->pids[below(f, POOL)],
				     __ATOMIC_RELAXED);

	if (chance(f, 10))
		return (uint32_t)below(f, 70000);
	if (chance(f, 5))
		return PTL_PID_ANY;
	return p;
}

/* A pointer for the kernel to use as an argument or MD start. */
static uint64_t a_pointer(struct fuzzer *f, size_t want)
{
	switch (below(f, 12)) {
	case 0:
		return 0;
	case 1:
		return (uint64_t)(uintptr_t)f->hole + below(f, 4096);
	case 2:
		return (uint64_t)(uintptr_t)f->ro;
	case 3:
		return 0xffff888000000000ULL + below(f, 1 << 20) * 8;
	case 4:
		return 0xffffffff81000000ULL;
	case 5:
		return (uint64_t)-4096 + below(f, 4096);
	case 6:
		return rnd(f);
	case 7:	/* ends right at the guard page */
		want = want > BUFSZ ? BUFSZ : want;
		return (uint64_t)(uintptr_t)(f->buf + BUFSZ - want +
					      below(f, 64));
	default:
		return (uint64_t)(uintptr_t)(f->buf + below(f, BUFSZ / 2));
	}
}

static uint64_t a_length(struct fuzzer *f)
{
	switch (below(f, 6)) {
	case 0:
		return 0;
	case 1:
		return rnd(f);
	case 2:
		return below(f, BUFSZ * 2);
	default:
		return below(f, 4096);
	}
}

static void fill_random(struct fuzzer *f, void *p, size_t n)
{
	unsigned char *c = p;

	while (n--)
		*c++ = (unsigned char)rnd(f);
}

static void a_md(struct fuzzer *f, struct ptl_ioc_md *md)
{
	md->options = (uint32_t)below(f, 0x200);
	if (chance(f, 5))
		md->options = (uint32_t)rnd(f);
	if (md->options & PTL_MD_IOVEC) {
		ptl_md_iovec_t *iov = (ptl_md_iovec_t *)(f->buf + BUFSZ / 2);
		unsigned int i, n = (unsigned int)below(f, 40);

		for (i = 0; i < n; i++) {
			iov[i].iov_base = (void *)(uintptr_t)a_pointer(f, 512);
			iov[i].iov_len = chance(f, 80) ? below(f, 2048) :
							 a_length(f);
		}
		md->start = chance(f, 85) ? (uint64_t)(uintptr_t)iov :
					    a_pointer(f, 64);
		md->length = chance(f, 85) ? n : a_length(f);
	} else {
		md->length = a_length(f);
		md->start = a_pointer(f, md->length);
	}
	md->threshold = chance(f, 50) ? -1 : (int32_t)below(f, 5) - 1;
	md->max_size = a_length(f);
	md->user_ptr = rnd(f);
	md->eq_handle = chance(f, 30) ? PTL_EQ_NONE : a_handle(f);
	md->reserved = chance(f, 95) ? 0 : (uint32_t)rnd(f);
}

union args {
	struct ptl_ioc_head head;
	struct ptl_ioc_version version;
	struct ptl_ioc_ni_init ni_init;
	struct ptl_ioc_ni_fini ni_fini;
	struct ptl_ioc_ni_identity identity;
	struct ptl_ioc_ni_status status;
	struct ptl_ioc_ni_dist dist;
	struct ptl_ioc_handle_ni handle_ni;
	struct ptl_ioc_me_attach me;
	struct ptl_ioc_handle handle;
	struct ptl_ioc_md_attach md;
	struct ptl_ioc_md_update update;
	struct ptl_ioc_eq_alloc eq;
	struct ptl_ioc_eq_wait wait;
	struct ptl_ioc_ac_entry ac;
	struct ptl_ioc_data data;
	struct ptl_ioc_set_jid jid;
	struct ptl_ioc_me_post post;
	char raw[8192];
};

static const unsigned int arg_size[] = {
	sizeof(struct ptl_ioc_version), sizeof(struct ptl_ioc_ni_init),
	sizeof(struct ptl_ioc_ni_fini), sizeof(struct ptl_ioc_ni_identity),
	sizeof(struct ptl_ioc_ni_status), sizeof(struct ptl_ioc_ni_dist),
	sizeof(struct ptl_ioc_handle_ni), sizeof(struct ptl_ioc_me_attach),
	sizeof(struct ptl_ioc_handle), sizeof(struct ptl_ioc_md_attach),
	sizeof(struct ptl_ioc_handle), sizeof(struct ptl_ioc_md_update),
	sizeof(struct ptl_ioc_eq_alloc), sizeof(struct ptl_ioc_handle),
	sizeof(struct ptl_ioc_eq_wait), sizeof(struct ptl_ioc_ac_entry),
	sizeof(struct ptl_ioc_data), sizeof(struct ptl_ioc_set_jid),
	sizeof(struct ptl_ioc_me_post),
};
#define NCMDS (sizeof(arg_size) / sizeof(arg_size[0]))

/* Builds plausible arguments for command @nr. */
static void build(struct fuzzer *f, unsigned int nr, union args *a)
{
	memset(a, 0, sizeof(*a));
	switch (nr) {
	case 0x01:
		a->ni_init.iface = chance(f, 90) ? PTL_IFACE_DEFAULT :
						   (uint32_t)rnd(f);
		a->ni_init.pid = chance(f, 70) ? PTL_PID_ANY : a_pid(f);
		a->ni_init.flags = PTL_NI_INIT_DESIRED;
		memset(&a->ni_init.desired, 0xff, sizeof(a->ni_init.desired));
		a->ni_init.desired.max_eqs = 8;
		a->ni_init.desired.max_mds = 512;
		a->ni_init.desired.max_mes = 512;
		if (chance(f, 20))
			fill_random(f, &a->ni_init.desired,
				    sizeof(a->ni_init.desired));
		else if (chance(f, 5))
			a->ni_init.flags = 0;
		break;
	case 0x02:
	case 0x03:
	case 0x06:
	case 0x08:
	case 0x0a:
	case 0x0d:
		a->handle.handle = a_handle(f);
		break;
	case 0x04:
		a->status.ni_handle = a_handle(f);
		a->status.reg = chance(f, 80) ? (uint32_t)below(f, 40) :
						(uint32_t)rnd(f);
		break;
	case 0x05:
		a->dist.ni_handle = a_handle(f);
		a->dist.nid = chance(f, 80) ? sh->nid : (uint32_t)rnd(f);
		a->dist.pid = a_pid(f);
		break;
	case 0x07:
		a->me.flags = (uint32_t)below(f, 4);
		a->me.handle = a_handle(f);
		a->me.pt_index = chance(f, 90) ? (uint32_t)below(f, 10) :
						 (uint32_t)rnd(f);
		a->me.match_nid = chance(f, 50) ? PTL_NID_ANY : sh->nid;
		a->me.match_pid = chance(f, 50) ? PTL_PID_ANY : a_pid(f);
		a->me.match_bits = below(f, 4);
		a->me.ignore_bits = chance(f, 50) ? ~0ULL : rnd(f);
		a->me.unlink = (uint32_t)below(f, 3);
		a->me.position = (uint32_t)below(f, 3);
		break;
	case 0x09:
		a->md.flags = (uint32_t)below(f, 2);
		a->md.handle = a_handle(f);
		a->md.unlink = (uint32_t)below(f, 3);
		a_md(f, &a->md.md);
		break;
	case 0x0b:
		a->update.flags = (uint32_t)below(f, 4);
		a->update.md_handle = a_handle(f);
		a->update.eq_handle = chance(f, 50) ? PTL_EQ_NONE :
						      a_handle(f);
		a->update.eq_consumer_seq = (uint32_t)rnd(f);
		a->update.old_iov_cap = (uint32_t)below(f, 64);
		a->update.old_iov = a_pointer(f, 64 * 16);
		a_md(f, &a->update.new_md);
		break;
	case 0x0c:
		a->eq.ni_handle = a_handle(f);
		/* Small rings: thousands of EQs must fit in the guest. */
		a->eq.count = below(f, 1000) == 0 ? rnd(f) :
			      chance(f, 2) ? (1ULL << 20) + below(f, 10) :
					     below(f, 20);
		break;
	case 0x0e: {
		struct ptl_ioc_eq_watch *w =
			(struct ptl_ioc_eq_watch *)(f->buf + BUFSZ - 256);
		unsigned int i, n = (unsigned int)below(f, 8);

		for (i = 0; i < n && i < 32; i++) {
			w[i].eq_handle = a_handle(f);
			w[i].expected_seq = (uint32_t)rnd(f);
		}
		a->wait.watches = chance(f, 85) ? (uint64_t)(uintptr_t)w :
						  a_pointer(f, 64);
		a->wait.count = chance(f, 90) ? n : (uint32_t)rnd(f);
		a->wait.timeout_ms = (uint32_t)below(f, 20);
		break;
	}
	case 0x0f:
		a->ac.ni_handle = a_handle(f);
		a->ac.ac_index = (uint32_t)below(f, 10);
		a->ac.match_nid = PTL_NID_ANY;
		a->ac.match_pid = chance(f, 50) ? PTL_PID_ANY : a_pid(f);
		a->ac.uid = chance(f, 50) ? PTL_UID_ANY : (uint32_t)rnd(f);
		a->ac.jid = chance(f, 50) ? PTL_JID_ANY : (uint32_t)rnd(f);
		a->ac.pt_index = chance(f, 50) ? PTL_PT_INDEX_ANY :
						 (uint32_t)below(f, 10);
		break;
	case 0x10:
		a->data.flags = (uint32_t)below(f, 2);
		a->data.op = (uint32_t)below(f, 4);
		a->data.md_handle = a_handle(f);
		a->data.put_md_handle = a_handle(f);
		a->data.ack_req = (uint32_t)below(f, 3);
		a->data.local_offset = chance(f, 80) ? below(f, 4096) :
						       rnd(f);
		a->data.length = a_length(f);
		a->data.target_nid = chance(f, 90) ? sh->nid : (uint32_t)rnd(f);
		a->data.target_pid = a_pid(f);
		a->data.pt_index = chance(f, 90) ? (uint32_t)below(f, 10) :
						   (uint32_t)rnd(f);
		a->data.ac_index = (uint32_t)below(f, 10);
		a->data.match_bits = below(f, 4);
		a->data.remote_offset = chance(f, 80) ? below(f, 4096) :
							rnd(f);
		a->data.hdr_data = rnd(f);
		break;
	case 0x11:
		a->jid.jid = (uint32_t)rnd(f);
		break;
	case 0x12:
		a->post.flags = (uint32_t)below(f, 2);
		a->post.base = a_handle(f);
		a->post.match_nid = chance(f, 50) ? PTL_NID_ANY : sh->nid;
		a->post.match_pid = chance(f, 50) ? PTL_PID_ANY : a_pid(f);
		a->post.match_bits = below(f, 4);
		a->post.ignore_bits = chance(f, 50) ? ~0ULL : rnd(f);
		a->post.me_unlink = (uint32_t)below(f, 3);
		a->post.position = (uint32_t)below(f, 3);
		a->post.md_unlink = (uint32_t)below(f, 3);
		a_md(f, &a->post.md);
		a->post.eq_handle = chance(f, 50) ? PTL_EQ_NONE : a_handle(f);
		a->post.eq_consumer_seq = chance(f, 50) ? 0 : (uint32_t)rnd(f);
		break;
	}
}

/* Harvests handles, pids and mmap offsets from a successful call. */
static void keep(uint32_t h)
{
	remember(sh->handles, h);
	if (h && h != PTL_INVALID_HANDLE && h != PTL_EQ_NONE)
		__atomic_store_n(&loc.handles[(h * 2654435761U) >> 26], h,
				 __ATOMIC_RELAXED);
}

static void harvest(unsigned int nr, const union args *a)
{
	unsigned int i;

	switch (nr) {
	case 0x01:
		keep(a->ni_init.ni_handle);
		remember(sh->pids, a->ni_init.out_pid);
		break;
	case 0x07:
		keep(a->me.me_handle);
		break;
	case 0x09:
		keep(a->md.md_handle);
		break;
	case 0x12:
		keep(a->post.me_handle);
		keep(a->post.md_handle);
		break;
	case 0x0c:
		if (a->eq.eq_handle == PTL_EQ_NONE)
			break;
		keep(a->eq.eq_handle);
		i = (a->eq.eq_handle * 2654435761U) >> 26;
		loc.eq_offsets[i & ~1U] = a->eq.ring_offset;
		loc.eq_offsets[i | 1U] = a->eq.ctl_offset;
		sh->eq_offsets[a->eq.eq_handle % POOL] = a->eq.ring_offset;
		break;
	}
}

/* Real objects on @fd to start from: an NI, EQs, MEs, MDs. */
static void seed_objects(struct fuzzer *f, int fd)
{
	struct ptl_ioc_ni_init ni = {
		.size = sizeof(ni), .iface = PTL_IFACE_DEFAULT,
		.pid = PTL_PID_ANY,
	};
	union args a;
	int i;

	if (ioctl(fd, PTL_IOC_NI_INIT, &ni) != 0)
		return;
	__atomic_store_n(&sh->nid, ni.nid, __ATOMIC_RELAXED);
	keep(ni.ni_handle);
	remember(sh->pids, ni.out_pid);
	for (i = 0; i < 3; i++) {
		memset(&a, 0, sizeof(a));
		a.eq.size = sizeof(a.eq);
		a.eq.ni_handle = ni.ni_handle;
		a.eq.count = 8 << i;
		if (ioctl(fd, PTL_IOC_EQ_ALLOC, &a.eq) == 0)
			harvest(0x0c, &a);
		memset(&a, 0, sizeof(a));
		a.me.size = sizeof(a.me);
		a.me.handle = ni.ni_handle;
		a.me.pt_index = (uint32_t)i;
		a.me.match_nid = PTL_NID_ANY;
		a.me.match_pid = PTL_PID_ANY;
		a.me.ignore_bits = ~0ULL;
		if (ioctl(fd, PTL_IOC_ME_ATTACH, &a.me) != 0)
			continue;
		keep(a.me.me_handle);
		{
			uint32_t me = a.me.me_handle;

			memset(&a, 0, sizeof(a));
			a.md.size = sizeof(a.md);
			a.md.handle = me;
			a.md.md.start = (uint64_t)(uintptr_t)f->buf;
			a.md.md.length = 4096;
			a.md.md.threshold = -1;
			a.md.md.options = PTL_MD_OP_PUT | PTL_MD_OP_GET;
			a.md.md.eq_handle = PTL_EQ_NONE;
			if (ioctl(fd, PTL_IOC_MD_ATTACH, &a.md) == 0)
				keep(a.md.md_handle);
		}
	}
}

static __thread sigjmp_buf fault_env;
static __thread int fault_armed;

static void on_fault(int sig)
{
	if (fault_armed)
		siglongjmp(fault_env, 1);
	signal(sig, SIG_DFL);
	raise(sig);
}

static int a_fd(struct fuzzer *f)
{
	return __atomic_load_n(&f->fds[below(f, f->nfds)], __ATOMIC_RELAXED);
}

static void one_call(struct fuzzer *f)
{
	union args *a = (union args *)(f->buf + BUFSZ / 4);
	unsigned long cmd, arg;
	unsigned int nr, size;
	long rc;
	int fd = a_fd(f);

	if (chance(f, 70)) {
		nr = (unsigned int)below(f, NCMDS);
		build(f, nr, a);
		size = arg_size[nr];
		if (chance(f, 10))
			size = (unsigned int)below(f, 8193);
		else if (chance(f, 5))
			size += (unsigned int)below(f, 64);
		a->head.size = size;
		if (chance(f, 5))
			a->head.flags = (uint32_t)rnd(f);
		if (chance(f, 10)) {	/* flip a few bytes */
			int i, n = (int)below(f, 4) + 1;

			for (i = 0; i < n; i++)
				((unsigned char *)a)[8 + below(f, size > 8 ?
							  size - 8 : 1)] ^=
					(unsigned char)rnd(f);
		}
		cmd = _IOC(_IOC_READ | _IOC_WRITE, PTL_IOC_MAGIC, nr,
			   arg_size[nr]);
		if (chance(f, 10))
			cmd = _IOC(below(f, 4), PTL_IOC_MAGIC, nr,
				   below(f, 1 << 14));
		arg = (unsigned long)(uintptr_t)a;
		if (chance(f, 5))
			arg = (unsigned long)a_pointer(f, size);
	} else {
		nr = (unsigned int)below(f, 0x40);
		if (chance(f, 85))
			cmd = _IOC(below(f, 4), PTL_IOC_MAGIC, nr,
				   below(f, 1 << 14));
		else
			cmd = (unsigned long)(uint32_t)rnd(f);
		size = (unsigned int)below(f, 8193);
		fill_random(f, a, size < 256 ? size : 256);
		if (chance(f, 50))
			a->head.size = size;
		if (chance(f, 50))
			a->head.flags = 0;
		arg = chance(f, 50) ? (unsigned long)(uintptr_t)a :
				      (unsigned long)a_pointer(f, size);
	}
	if (below(f, 500) == 0) {	/* hand fresh objects around */
		seed_objects(f, fd);
		return;
	}
	rc = ioctl(fd, cmd, arg);
	__atomic_add_fetch(&sh->calls, 1, __ATOMIC_RELAXED);
	if (rc == 0) {
		__atomic_add_fetch(&sh->ok, 1, __ATOMIC_RELAXED);
		if (_IOC_TYPE(cmd) == PTL_IOC_MAGIC && arg ==
		    (unsigned long)(uintptr_t)a && nr < NCMDS)
			harvest(nr, a);
	} else if (rc > 0) {
		__atomic_add_fetch(&sh->portals_errors, 1, __ATOMIC_RELAXED);
	} else {
		__atomic_add_fetch(&sh->errnos, 1, __ATOMIC_RELAXED);
	}
}

static void one_mmap(struct fuzzer *f)
{
	static const int prots[] = {
		PROT_READ, PROT_READ | PROT_WRITE, PROT_WRITE, PROT_NONE,
		PROT_READ | PROT_EXEC,
	};
	uint64_t off = loc.eq_offsets[below(f, LOCAL)];
	size_t len = (below(f, 4) + 1) * 4096;
	int prot = chance(f, 50) ? PROT_READ : prots[below(f, 5)];
	void *p;

	if (chance(f, 10))
		off = sh->eq_offsets[below(f, POOL)];
	else if (chance(f, 10))
		off = below(f, 1 << 20) * 4096;
	else if (chance(f, 10))
		off += below(f, 8) * 4096;
	if (chance(f, 10))
		len = below(f, 1 << 24) + 1;
	p = mmap(NULL, len, prot, chance(f, 80) ? MAP_SHARED : MAP_PRIVATE,
		 a_fd(f), (off_t)(off & ~4095ULL));
	if (p == MAP_FAILED)
		return;
	__atomic_add_fetch(&sh->mmaps, 1, __ATOMIC_RELAXED);
	if (prot & PROT_READ) {
		fault_armed = 1;
		if (sigsetjmp(fault_env, 1) == 0) {
			volatile char c = ((volatile char *)p)[below(f, len)];

			(void)c;
			if (prot & PROT_WRITE)
				((volatile char *)p)[0] = 1;
		} else {
			__atomic_add_fetch(&sh->faults, 1, __ATOMIC_RELAXED);
		}
		fault_armed = 0;
	}
	if (chance(f, 95))
		munmap(p, len);
}

static void one_misc(struct fuzzer *f)
{
	int fd = a_fd(f);
	char b[64];

	switch (below(f, 5)) {
	case 0: {
		struct pollfd pfd = { .fd = fd, .events = POLLIN | POLLOUT };

		poll(&pfd, 1, (int)below(f, 3));
		break;
	}
	case 1:
		if (read(fd, b, sizeof(b)) < 0)
			break;
		break;
	case 2:
		if (write(fd, b, below(f, sizeof(b))) < 0)
			break;
		break;
	case 3: {	/* reopen an fd while other threads may use it */
		int i = (int)below(f, f->nfds);
		int nfd;

		if (!chance(f, 5))
			break;
		nfd = open(PTL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
		if (nfd >= 0) {
			seed_objects(f, nfd);
			int old = __atomic_exchange_n(&f->fds[i], nfd,
						      __ATOMIC_ACQ_REL);

			/* Other threads may be inside an ioctl on it. */
			close(old);
		}
		break;
	}
	default:
		lseek(fd, (off_t)rnd(f), SEEK_SET);
		break;
	}
}

static void *fuzz_thread(void *arg)
{
	struct fuzzer f = *(struct fuzzer *)arg;

	f.rng ^= (uint64_t)pthread_self() * 0x9e3779b97f4a7c15ULL;
	f.buf = mmap(NULL, BUFSZ + 4096, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (f.buf == MAP_FAILED)
		return NULL;
	mprotect(f.buf + BUFSZ, 4096, PROT_NONE);
	while (!__atomic_load_n(&sh->stop, __ATOMIC_RELAXED)) {
		int r = (int)below(&f, 100);

		if (r < 88)
			one_call(&f);
		else if (r < 95)
			one_mmap(&f);
		else
			one_misc(&f);
	}
	return NULL;
}

static void fuzz_process(int idx, uint64_t seed)
{
	struct fuzzer f = { 0 };
	pthread_t t[FUZZ_THREADS];
	int fds[2], i;

	signal(SIGSEGV, on_fault);
	signal(SIGBUS, on_fault);
	signal(SIGPIPE, SIG_IGN);
	if (idx == FUZZ_PROCS - 1 &&
	    (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534)))
		_exit(2);
	f.rng = seed * 0x2545f4914f6cdd1dULL + (uint64_t)idx + 1;
	f.nfds = 2;
	f.fds = fds;
	for (i = 0; i < 2; i++) {
		fds[i] = open(PTL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
		if (fds[i] < 0)
			_exit(3);
	}
	f.ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	f.hole = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		      0);
	/* Some real objects to start from. */
	f.buf = mmap(NULL, BUFSZ, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (i = 0; i < 2; i++)
		seed_objects(&f, fds[i]);
	for (i = 0; i < FUZZ_THREADS; i++)
		pthread_create(&t[i], NULL, fuzz_thread, &f);
	for (i = 0; i < FUZZ_THREADS; i++)
		pthread_join(t[i], NULL);
	_exit(0);
}

static const char *const counters[] = {
	"pinned_pages", "open_files", "nis", "mds", "eqs", "core_objects",
};
#define NCOUNTERS (sizeof(counters) / sizeof(counters[0]))

/* After the storm: a plain put from one process to another. */
static int put_receiver(struct ptl_chan *c, void *arg)
{
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_handle_me_t me;
	ptl_handle_md_t md;
	ptl_process_id_t id;
	ptl_event_t ev;
	char buf[256] = { 0 };

	CK_RC(PTL_OK, ptl_st_open(PTL_PID_ANY, NULL, NULL, &ni));
	CK_RC(PTL_OK, PtlGetId(ni, &id));
	CK_RC(PTL_OK, PtlEQAlloc(ni, 8, PTL_EQ_HANDLER_NONE, &eq));
	CK_RC(PTL_OK, PtlMEAttach(ni, 1, ptl_st_any(), 42, 0, PTL_UNLINK,
				  PTL_INS_AFTER, &me));
	CK_RC(PTL_OK, PtlMDAttach(me, ptl_st_md(buf, sizeof(buf), 1,
						PTL_MD_OP_PUT, eq),
				  PTL_UNLINK, &md));
	CHAN_SEND(c, id);
	CK_NEXT(eq, ev, PTL_EVENT_PUT_START);
	CK_NEXT(eq, ev, PTL_EVENT_PUT_END);
	CK(sizeof(buf), ev.mlength);
	CK(-1, ptl_st_check(buf, sizeof(buf), 42, 0));
	return 0;
}

FIXTURE(fuzz) {
	int unused;
};

FIXTURE_SETUP(fuzz)
{
}

FIXTURE_TEARDOWN(fuzz)
{
}

TEST_F_TIMEOUT(fuzz, random_ioctls_leave_the_kernel_working, 600)
{
	const char *s = getenv("PTL_FUZZ_SECONDS");
	const char *seed_env = getenv("PTL_FUZZ_SEED");
	int seconds = s ? atoi(s) : 20;
	uint64_t seed = seed_env ? strtoull(seed_env, NULL, 0) :
				   (uint64_t)time(NULL);
	long before[NCOUNTERS], after[NCOUNTERS];
	pid_t pids[FUZZ_PROCS];
	struct ptl_peer p;
	ptl_process_id_t target;
	ptl_handle_ni_t ni;
	ptl_handle_md_t md;
	ptl_event_t ev;
	ptl_handle_eq_t eq;
	char src[256];
	size_t i;
	int k, status = 0;

	if (seconds < 1 || seconds > 500)
		seconds = 20;
	TH_LOG("fuzzing for %d s with PTL_FUZZ_SEED=%llu", seconds,
	       (unsigned long long)seed);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	for (i = 0; i < NCOUNTERS; i++)
		before[i] = ptl_st_counter(counters[i]);

	for (k = 0; k < FUZZ_PROCS; k++) {
		pids[k] = fork();
		ASSERT_LE(0, pids[k]);
		if (pids[k] == 0)
			fuzz_process(k, seed);
	}
	sleep((unsigned int)seconds);
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
	/* Threads blocked in the kernel get 10 s, then SIGKILL. */
	for (k = 0; k < FUZZ_PROCS; k++) {
		long long deadline = ptl_st_now_ms() + 10000;

		while (waitpid(pids[k], &status, WNOHANG) == 0) {
			if (ptl_st_now_ms() > deadline) {
				kill(pids[k], SIGKILL);
				waitpid(pids[k], &status, 0);
				TH_LOG("fuzz process %d killed", k);
				break;
			}
			usleep(10000);
		}
		if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL)
			TH_LOG("fuzz process %d died of signal %d", k,
			       WTERMSIG(status));
		EXPECT_FALSE(WIFSIGNALED(status) &&
			     WTERMSIG(status) != SIGKILL);
	}
	TH_LOG("%lu calls: %lu PTL_OK, %lu Portals errors, %lu errnos; "
	       "%lu mmaps, %lu faults on mapped pages", sh->calls, sh->ok,
	       sh->portals_errors, sh->errnos, sh->mmaps, sh->faults);
	EXPECT_LT(1000, sh->calls);
	EXPECT_LT(10, sh->ok) TH_LOG("the fuzzer never got past the checks");

	/* Nothing the fuzzers created outlives them. */
	for (k = 0; k < 500; k++) {
		for (i = 0; i < NCOUNTERS; i++)
			after[i] = ptl_st_counter(counters[i]);
		if (!memcmp(before, after, sizeof(before)))
			break;
		usleep(20000);
	}
	for (i = 0; i < NCOUNTERS; i++) {
		const char *name = counters[i];

		if (before[i] != after[i])
			TH_LOG("%s: %ld before, %ld after", name, before[i],
			       after[i]);
		EXPECT_EQ(before[i], after[i]);
	}

	/* The module still does its job. */
	ASSERT_EQ(PTL_OK, ptl_st_open(PTL_PID_ANY, NULL, NULL, &ni));
	ASSERT_EQ(0, ptl_peer_start(&p, put_receiver, NULL));
	ASSERT_EQ(0, ptl_peer_recv(&p, &target, sizeof(target)));
	ASSERT_EQ(PTL_OK, PtlEQAlloc(ni, 8, PTL_EQ_HANDLER_NONE, &eq));
	ptl_st_fill(src, sizeof(src), 42);
	ASSERT_EQ(PTL_OK, PtlMDBind(ni, ptl_st_md(src, sizeof(src), 2, 0, eq),
				    PTL_UNLINK, &md));
	ASSERT_EQ(PTL_OK, PtlPut(md, PTL_ACK_REQ, target, 1, 0, 42, 0, 0));
	ASSERT_EQ(PTL_OK, ptl_st_next(eq, &ev, PTL_ST_TIMEOUT_MS));
	ASSERT_EQ(PTL_OK, ptl_st_next(eq, &ev, PTL_ST_TIMEOUT_MS));
	ASSERT_EQ(PTL_OK, ptl_st_next(eq, &ev, PTL_ST_TIMEOUT_MS));
	EXPECT_EQ(PTL_EVENT_ACK, ev.type);
	EXPECT_EQ(0, ptl_peer_wait(&p));
	PtlFini();
}

TEST_HARNESS_MAIN
