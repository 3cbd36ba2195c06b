// SPDX-License-Identifier: GPL-2.0
/*
 * Every Portals 3.3 call and its return codes through libptl-user and the
 * real kernel: bad, stale and wrong-type handles, NULL and unmapped
 * pointers, limits exceeded (small desired limits), status registers,
 * PtlNIHandle, and the event-queue calls with their timeouts.
 *
 * The rules come from the API reference (spec sections 6 and 8 and the
 * contract decisions of section 0, which override). Data movement here is
 * to the process itself; ptl_data_test.c covers two and more processes.
 */
#include "ptl_selftest.h"

#include <pthread.h>

#include "kselftest_harness.h"

#define PT 4		/* the portal most tests use */

static void *unmapped_page(void)
{
	void *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		       0);

	return p == MAP_FAILED ? NULL : p;
}

FIXTURE(api) {
	ptl_handle_ni_t ni;
	ptl_ni_limits_t limits;
	ptl_process_id_t me;
	ptl_handle_eq_t eq;
	char buf[8192];
};

FIXTURE_SETUP(api)
{
	ASSERT_EQ(PTL_OK, ptl_st_open(PTL_PID_ANY, NULL, &self->limits,
				      &self->ni));
	ASSERT_EQ(PTL_OK, PtlGetId(self->ni, &self->me));
	ASSERT_EQ(PTL_OK, PtlEQAlloc(self->ni, 64, PTL_EQ_HANDLER_NONE,
				     &self->eq));
}

FIXTURE_TEARDOWN(api)
{
	PtlFini();
}

/* An ME on @pt with a fresh MD over @buf; returns the MD handle. */
static int attach_md(ptl_handle_ni_t ni, ptl_pt_index_t pt, void *buf,
		     ptl_size_t len, unsigned int opts, ptl_handle_eq_t eq,
		     ptl_handle_me_t *me, ptl_handle_md_t *md)
{
	int rc = PtlMEAttach(ni, pt, ptl_st_any(), 0, ~0ULL, PTL_UNLINK,
			     PTL_INS_AFTER, me);

	if (rc != PTL_OK)
		return rc;
	return PtlMDAttach(*me, ptl_st_md(buf, len, PTL_MD_THRESH_INF, opts,
					  eq), PTL_RETAIN, md);
}

/* ---- status registers, NIHandle, NIDist ---- */

TEST_F(api, ni_status_reads_registers_and_rejects_unknown_indexes)
{
	ptl_handle_me_t me[3];
	ptl_sr_value_t v = 77;
	int i;

	ASSERT_EQ(PTL_OK, PtlNIStatus(self->ni, PTL_SR_DROP_COUNT, &v));
	EXPECT_EQ(0, v);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(PTL_OK, PtlMEAttach(self->ni, PT, ptl_st_any(), i, 0,
					      PTL_RETAIN, PTL_INS_AFTER,
					      &me[i]));
	ASSERT_EQ(PTL_OK, PtlNIStatus(self->ni, PTL_SR_MLIST_LEN(PT), &v));
	EXPECT_EQ(3, v);
	ASSERT_EQ(PTL_OK, PtlNIStatus(self->ni, PTL_SR_MLIST_LEN(PT + 1), &v));
	EXPECT_EQ(0, v);
	ASSERT_EQ(PTL_OK, PtlNIStatus(self->ni, PTL_SR_MES_CUR, &v));
	EXPECT_EQ(3, v);
	ASSERT_EQ(PTL_OK, PtlMEUnlink(me[1]));
	ASSERT_EQ(PTL_OK, PtlNIStatus(self->ni, PTL_SR_MLIST_LEN(PT), &v));
	EXPECT_EQ(2, v);
	/* The first NAL register (ACL denials) exists and starts at 0. */
	ASSERT_EQ(PTL_OK, PtlNIStatus(self->ni, PTL_SR_NAL_REGS_START, &v));
	EXPECT_EQ(0, v);

	EXPECT_EQ(PTL_SR_INDEX_INVALID, PtlNIStatus(self->ni, 1000, &v));
	EXPECT_EQ(PTL_SR_INDEX_INVALID, PtlNIStatus(self->ni, 0x7fffffff, &v));
	EXPECT_EQ(PTL_SEGV, PtlNIStatus(self->ni, PTL_SR_DROP_COUNT, NULL));
	EXPECT_EQ(PTL_NI_INVALID, PtlNIStatus(PTL_INVALID_HANDLE,
					      PTL_SR_DROP_COUNT, &v));
	EXPECT_EQ(PTL_NI_INVALID, PtlNIStatus(self->eq, PTL_SR_DROP_COUNT,
					      &v));
}

TEST_F(api, ni_handle_names_the_owner_of_every_live_object)
{
	ptl_handle_me_t me;
	ptl_handle_md_t md, bound;
	ptl_handle_ni_t owner;

	ASSERT_EQ(PTL_OK, attach_md(self->ni, PT, self->buf, 64,
				    PTL_MD_OP_PUT, self->eq, &me, &md));
	ASSERT_EQ(PTL_OK, PtlMDBind(self->ni, ptl_st_md(self->buf, 64, 1, 0,
							PTL_EQ_NONE),
				    PTL_RETAIN, &bound));

	owner = 0;
	EXPECT_EQ(PTL_OK, PtlNIHandle(self->ni, &owner));
	EXPECT_EQ(self->ni, owner);
	owner = 0;
	EXPECT_EQ(PTL_OK, PtlNIHandle(me, &owner));
	EXPECT_EQ(self->ni, owner);
	owner = 0;
	EXPECT_EQ(PTL_OK, PtlNIHandle(md, &owner));
	EXPECT_EQ(self->ni, owner);
	owner = 0;
	EXPECT_EQ(PTL_OK, PtlNIHandle(bound, &owner));
	EXPECT_EQ(self->ni, owner);
	owner = 0;
	EXPECT_EQ(PTL_OK, PtlNIHandle(self->eq, &owner));
	EXPECT_EQ(self->ni, owner);

	EXPECT_EQ(PTL_SEGV, PtlNIHandle(me, NULL));
	EXPECT_EQ(PTL_HANDLE_INVALID, PtlNIHandle(PTL_INVALID_HANDLE, &owner));
	EXPECT_EQ(PTL_HANDLE_INVALID, PtlNIHandle(PTL_EQ_NONE, &owner));
	EXPECT_EQ(PTL_HANDLE_INVALID, PtlNIHandle(PTL_HANDLE_NONE, &owner));
	/* Freed objects are not resurrected by PtlNIHandle (contract 1). */
	ASSERT_EQ(PTL_OK, PtlMDUnlink(bound));
	EXPECT_EQ(PTL_HANDLE_INVALID, PtlNIHandle(bound, &owner));
	ASSERT_EQ(PTL_OK, PtlMEUnlink(me));
	EXPECT_EQ(PTL_HANDLE_INVALID, PtlNIHandle(me, &owner));
	EXPECT_EQ(PTL_HANDLE_INVALID, PtlNIHandle(md, &owner));
}

TEST_F(api, ni_dist_answers_for_this_node_and_checks_arguments)
{
	unsigned long d = 12345;

	EXPECT_EQ(PTL_OK, PtlNIDist(self->ni, self->me, &d));
	EXPECT_NE(12345, d);
	EXPECT_EQ(PTL_SEGV, PtlNIDist(self->ni, self->me, NULL));
	EXPECT_EQ(PTL_NI_INVALID, PtlNIDist(PTL_INVALID_HANDLE, self->me, &d));
}

/* ---- match entries ---- */

TEST_F(api, me_attach_checks_portal_index_handles_and_pointers)
{
	ptl_handle_me_t me;
	ptl_handle_md_t md;

	EXPECT_EQ(PTL_OK, PtlMEAttach(self->ni, self->limits.max_pt_index,
				      ptl_st_any(), 0, 0, PTL_RETAIN,
				      PTL_INS_BEFORE, &me));
	EXPECT_EQ(PTL_PT_INDEX_INVALID,
		  PtlMEAttach(self->ni, self->limits.max_pt_index + 1,
			      ptl_st_any(), 0, 0, PTL_RETAIN, PTL_INS_BEFORE,
			      &me));
	EXPECT_EQ(PTL_PT_INDEX_INVALID,
		  PtlMEAttach(self->ni, PTL_PT_INDEX_ANY, ptl_st_any(), 0, 0,
			      PTL_RETAIN, PTL_INS_BEFORE, &me));
	EXPECT_EQ(PTL_SEGV, PtlMEAttach(self->ni, PT, ptl_st_any(), 0, 0,
					PTL_RETAIN, PTL_INS_BEFORE, NULL));
	EXPECT_EQ(PTL_NI_INVALID, PtlMEAttach(PTL_INVALID_HANDLE, PT,
					      ptl_st_any(), 0, 0, PTL_RETAIN,
					      PTL_INS_BEFORE, &me));
	/* Wrong-type handles: an EQ or an MD is not an NI. */
	EXPECT_EQ(PTL_NI_INVALID, PtlMEAttach(self->eq, PT, ptl_st_any(), 0,
					      0, PTL_RETAIN, PTL_INS_BEFORE,
					      &me));
	ASSERT_EQ(PTL_OK, PtlMDBind(self->ni, ptl_st_md(NULL, 0, 1, 0,
							PTL_EQ_NONE),
				    PTL_RETAIN, &md));
	EXPECT_EQ(PTL_NI_INVALID, PtlMEAttach(md, PT, ptl_st_any(), 0, 0,
					      PTL_RETAIN, PTL_INS_BEFORE,
					      &me));
}

TEST(me_attach_any_picks_free_portals_until_pt_full)
{
	ptl_ni_limits_t want = ptl_st_no_wish(), got;
	ptl_handle_ni_t ni;
	ptl_handle_me_t me[4], extra;
	ptl_pt_index_t pt = 999, seen[4];
	int i, j;

	want.max_pt_index = 3;
	ASSERT_EQ(PTL_OK, ptl_st_open(PTL_PID_ANY, &want, &got, &ni));
	ASSERT_EQ(3, got.max_pt_index);
	ASSERT_EQ(PTL_OK, PtlMEAttach(ni, 1, ptl_st_any(), 0, 0, PTL_RETAIN,
				      PTL_INS_AFTER, &extra));
	for (i = 0; i < 3; i++) {
		seen[i] = 999;
		ASSERT_EQ(PTL_OK, PtlMEAttachAny(ni, &seen[i], ptl_st_any(), 0,
						 0, PTL_RETAIN, &me[i]));
		EXPECT_LE(seen[i], 3);
		EXPECT_NE(1, seen[i]) TH_LOG("portal 1 is in use");
		for (j = 0; j < i; j++)
			EXPECT_NE(seen[j], seen[i]);
	}
	EXPECT_EQ(0, seen[0]) TH_LOG("the lowest unused index comes first");
	EXPECT_EQ(PTL_PT_FULL, PtlMEAttachAny(ni, &pt, ptl_st_any(), 0, 0,
					      PTL_RETAIN, &me[3]));
	EXPECT_EQ(PTL_SEGV, PtlMEAttachAny(ni, NULL, ptl_st_any(), 0, 0,
					   PTL_RETAIN, &me[3]));
	EXPECT_EQ(PTL_SEGV, PtlMEAttachAny(ni, &pt, ptl_st_any(), 0, 0,
					   PTL_RETAIN, NULL));
	EXPECT_EQ(PTL_NI_INVALID, PtlMEAttachAny(PTL_INVALID_HANDLE, &pt,
						 ptl_st_any(), 0, 0,
						 PTL_RETAIN, &me[3]));
	PtlFini();
}

TEST_F(api, me_insert_needs_a_live_base_me)
{
	ptl_handle_me_t base, me;
	ptl_sr_value_t v;

	ASSERT_EQ(PTL_OK, PtlMEAttach(self->ni, PT, ptl_st_any(), 0, 0,
				      PTL_RETAIN, PTL_INS_AFTER, &base));
	EXPECT_EQ(PTL_OK, PtlMEInsert(base, ptl_st_any(), 1, 0, PTL_RETAIN,
				      PTL_INS_BEFORE, &me));
	EXPECT_EQ(PTL_OK, PtlMEInsert(base, ptl_st_any(), 2, 0, PTL_RETAIN,
				      PTL_INS_AFTER, &me));
	ASSERT_EQ(PTL_OK, PtlNIStatus(self->ni, PTL_SR_MLIST_LEN(PT), &v));
	EXPECT_EQ(3, v);
	EXPECT_EQ(PTL_SEGV, PtlMEInsert(base, ptl_st_any(), 1, 0, PTL_RETAIN,
					PTL_INS_BEFORE, NULL));
	EXPECT_EQ(PTL_ME_INVALID, PtlMEInsert(PTL_INVALID_HANDLE, ptl_st_any(),
					      1, 0, PTL_RETAIN,
					      PTL_INS_BEFORE, &me));
	/* The NI handle and an EQ handle are not MEs. */
	EXPECT_EQ(PTL_ME_INVALID, PtlMEInsert(self->ni, ptl_st_any(), 1, 0,
					      PTL_RETAIN, PTL_INS_BEFORE,
					      &me));
	EXPECT_EQ(PTL_ME_INVALID, PtlMEInsert(self->eq, ptl_st_any(), 1, 0,
					      PTL_RETAIN, PTL_INS_BEFORE,
					      &me));
	ASSERT_EQ(PTL_OK, PtlMEUnlink(base));
	EXPECT_EQ(PTL_ME_INVALID, PtlMEInsert(base, ptl_st_any(), 1, 0,
					      PTL_RETAIN, PTL_INS_BEFORE,
					      &me));
}

TEST(me_lists_longer_than_max_me_list_are_refused)
{
	ptl_ni_limits_t want = ptl_st_no_wish(), got;
	ptl_handle_ni_t ni;
	ptl_handle_me_t me[4], extra;
	int i;

	want.max_me_list = 4;
	ASSERT_EQ(PTL_OK, ptl_st_open(PTL_PID_ANY, &want, &got, &ni));
	ASSERT_EQ(4, got.max_me_list);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(PTL_OK, PtlMEAttach(ni, 2, ptl_st_any(), i, 0,
					      PTL_RETAIN, PTL_INS_AFTER,
					      &me[i]));
	EXPECT_EQ(PTL_ME_LIST_TOO_LONG, PtlMEAttach(ni, 2, ptl_st_any(), 9, 0,
						    PTL_RETAIN, PTL_INS_AFTER,
						    &extra));
	EXPECT_EQ(PTL_ME_LIST_TOO_LONG, PtlMEInsert(me[0], ptl_st_any(), 9, 0,
						    PTL_RETAIN,
						    PTL_INS_BEFORE, &extra));
	/* Other portals have their own lists. */
	EXPECT_EQ(PTL_OK, PtlMEAttach(ni, 3, ptl_st_any(), 9, 0, PTL_RETAIN,
				      PTL_INS_AFTER, &extra));
	/* Room again after an unlink. */
	ASSERT_EQ(PTL_OK, PtlMEUnlink(me[2]));
	EXPECT_EQ(PTL_OK, PtlMEInsert(me[0], ptl_st_any(), 9, 0, PTL_RETAIN,
				      PTL_INS_AFTER, &extra));
	PtlFini();
}

TEST(more_mes_mds_or_eqs_than_the_limits_is_no_space)
{
	ptl_ni_limits_t want = ptl_st_no_wish(), got;
	ptl_handle_ni_t ni;
	ptl_handle_me_t me[6];
	ptl_handle_md_t md[6];
	ptl_handle_eq_t eq[4];
	int i;

	want.max_mes = 5;
	want.max_mds = 3;
	want.max_eqs = 2;
	ASSERT_EQ(PTL_OK, ptl_st_open(PTL_PID_ANY, &want, &got, &ni));
	ASSERT_EQ(5, got.max_mes);
	ASSERT_EQ(3, got.max_mds);
	ASSERT_EQ(2, got.max_eqs);

	for (i = 0; i < 5; i++)
		ASSERT_EQ(PTL_OK, PtlMEAttach(ni, i % 3, ptl_st_any(), i, 0,
					      PTL_RETAIN, PTL_INS_AFTER,
					      &me[i]));
	EXPECT_EQ(PTL_NO_SPACE, PtlMEAttach(ni, 0, ptl_st_any(), 0, 0,
					    PTL_RETAIN, PTL_INS_AFTER,
					    &me[5]));
	EXPECT_EQ(PTL_NO_SPACE, PtlMEInsert(me[0], ptl_st_any(), 0, 0,
					    PTL_RETAIN, PTL_INS_AFTER,
					    &me[5]));
	{
		ptl_pt_index_t pt;

		EXPECT_EQ(PTL_NO_SPACE,
			  PtlMEAttachAny(ni, &pt, ptl_st_any(), 0, 0,
					 PTL_RETAIN, &me[5]));
	}
	ASSERT_EQ(PTL_OK, PtlMEUnlink(me[4]));
	EXPECT_EQ(PTL_OK, PtlMEAttach(ni, 0, ptl_st_any(), 0, 0, PTL_RETAIN,
				      PTL_INS_AFTER, &me[4]));

	/* MDs: attached and bound count together. */
	ASSERT_EQ(PTL_OK, PtlMDAttach(me[0], ptl_st_md(NULL, 0, 1,
						       PTL_MD_OP_PUT,
						       PTL_EQ_NONE),
				      PTL_RETAIN, &md[0]));
	for (i = 1; i < 3; i++)
		ASSERT_EQ(PTL_OK, PtlMDBind(ni, ptl_st_md(NULL, 0, 1, 0,
							  PTL_EQ_NONE),
					    PTL_RETAIN, &md[i]));
	EXPECT_EQ(PTL_NO_SPACE, PtlMDBind(ni, ptl_st_md(NULL, 0, 1, 0,
							PTL_EQ_NONE),
					  PTL_RETAIN, &md[3]));
	EXPECT_EQ(PTL_NO_SPACE, PtlMDAttach(me[1], ptl_st_md(NULL, 0, 1,
							     PTL_MD_OP_PUT,
							     PTL_EQ_NONE),
					    PTL_RETAIN, &md[3]));
	ASSERT_EQ(PTL_OK, PtlMDUnlink(md[2]));
	EXPECT_EQ(PTL_OK, PtlMDBind(ni, ptl_st_md(NULL, 0, 1, 0, PTL_EQ_NONE),
				    PTL_RETAIN, &md[2]));

	for (i = 0; i < 2; i++)
		ASSERT_EQ(PTL_OK, PtlEQAlloc(ni, 4, PTL_EQ_HANDLER_NONE,
					     &eq[i]));
	EXPECT_EQ(PTL_NO_SPACE, PtlEQAlloc(ni, 4, PTL_EQ_HANDLER_NONE,
					   &eq[2]));
	ASSERT_EQ(PTL_OK, PtlEQFree(eq[0]));
	EXPECT_EQ(PTL_OK, PtlEQAlloc(ni, 4, PTL_EQ_HANDLER_NONE, &eq[0]));
	PtlFini();
}

TEST_F(api, me_unlink_releases_the_md_whatever_its_unlink_option)
{
	ptl_handle_me_t me;
	ptl_handle_md_t md;
	ptl_md_t old;

	ASSERT_EQ(PTL_OK, attach_md(self->ni, PT, self->buf, 64,
				    PTL_MD_OP_PUT, self->eq, &me, &md));
	/* attach_md used PTL_RETAIN for the MD (contract 13). */
	ASSERT_EQ(PTL_OK, PtlMEUnlink(me));
	EXPECT_EQ(PTL_MD_INVALID, PtlMDUpdate(md, &old, NULL, PTL_EQ_NONE));
	EXPECT_EQ(PTL_MD_INVALID, PtlMDUnlink(md));
	EXPECT_EQ(PTL_ME_INVALID, PtlMEUnlink(me));
	EXPECT_EQ(PTL_ME_INVALID, PtlMEUnlink(PTL_INVALID_HANDLE));
	EXPECT_EQ(PTL_ME_INVALID, PtlMEUnlink(self->ni));
	EXPECT_EQ(PTL_ME_INVALID, PtlMEUnlink(self->eq));
}

/* ---- memory descriptors ---- */

TEST_F(api, md_attach_checks_me_eq_and_pointers)
{
	ptl_handle_me_t me, me2;
	ptl_handle_md_t md, md2;
	ptl_handle_eq_t freed;
	ptl_md_t d = ptl_st_md(self->buf, 128, 1, PTL_MD_OP_PUT, self->eq);

	ASSERT_EQ(PTL_OK, PtlMEAttach(self->ni, PT, ptl_st_any(), 0, 0,
				      PTL_RETAIN, PTL_INS_AFTER, &me));
	EXPECT_EQ(PTL_SEGV, PtlMDAttach(me, d, PTL_RETAIN, NULL));
	EXPECT_EQ(PTL_ME_INVALID, PtlMDAttach(PTL_INVALID_HANDLE, d,
					      PTL_RETAIN, &md));
	EXPECT_EQ(PTL_ME_INVALID, PtlMDAttach(self->ni, d, PTL_RETAIN, &md));
	EXPECT_EQ(PTL_ME_INVALID, PtlMDAttach(self->eq, d, PTL_RETAIN, &md));

	/* Bad, wrong-type and freed EQ handles. */
	d.eq_handle = PTL_INVALID_HANDLE;
	EXPECT_EQ(PTL_EQ_INVALID, PtlMDAttach(me, d, PTL_RETAIN, &md));
	d.eq_handle = me;
	EXPECT_EQ(PTL_EQ_INVALID, PtlMDAttach(me, d, PTL_RETAIN, &md));
	ASSERT_EQ(PTL_OK, PtlEQAlloc(self->ni, 4, PTL_EQ_HANDLER_NONE,
				     &freed));
	ASSERT_EQ(PTL_OK, PtlEQFree(freed));
	d.eq_handle = freed;
	EXPECT_EQ(PTL_EQ_INVALID, PtlMDAttach(me, d, PTL_RETAIN, &md));

	d.eq_handle = self->eq;
	ASSERT_EQ(PTL_OK, PtlMDAttach(me, d, PTL_RETAIN, &md));
	EXPECT_EQ(PTL_ME_IN_USE, PtlMDAttach(me, d, PTL_RETAIN, &md2));
	/* An MD handle is not an ME handle either. */
	EXPECT_EQ(PTL_ME_INVALID, PtlMDAttach(md, d, PTL_RETAIN, &md2));
	/* A removed ME is gone for good. */
	ASSERT_EQ(PTL_OK, PtlMEAttach(self->ni, PT, ptl_st_any(), 0, 0,
				      PTL_RETAIN, PTL_INS_AFTER, &me2));
	ASSERT_EQ(PTL_OK, PtlMEUnlink(me2));
	EXPECT_EQ(PTL_ME_INVALID, PtlMDAttach(me2, d, PTL_RETAIN, &md2));
}

TEST_F(api, md_regions_that_cannot_be_pinned_are_md_illegal)
{
	ptl_handle_me_t me;
	ptl_handle_md_t md;
	void *hole = unmapped_page();
	void *ro = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			0);
	ptl_md_t d;

	ASSERT_NE(NULL, hole);
	ASSERT_NE(MAP_FAILED, ro);
	ASSERT_EQ(PTL_OK, PtlMEAttach(self->ni, PT, ptl_st_any(), 0, 0,
				      PTL_RETAIN, PTL_INS_AFTER, &me));

	d = ptl_st_md(hole, 4096, 1, PTL_MD_OP_PUT, PTL_EQ_NONE);
	EXPECT_EQ(PTL_MD_ILLEGAL, PtlMDAttach(me, d, PTL_RETAIN, &md));
	EXPECT_EQ(PTL_MD_ILLEGAL, PtlMDBind(self->ni, d, PTL_RETAIN, &md));
	/* Half mapped: the buffer runs into the hole. */
	d = ptl_st_md((char *)hole - 64, 128, 1, PTL_MD_OP_PUT, PTL_EQ_NONE);
	EXPECT_EQ(PTL_MD_ILLEGAL, PtlMDAttach(me, d, PTL_RETAIN, &md));
	/* Kernel addresses and absurd lengths. */
	d = ptl_st_md((void *)0xffff888000000000UL, 4096, 1, PTL_MD_OP_PUT,
		      PTL_EQ_NONE);
	EXPECT_EQ(PTL_MD_ILLEGAL, PtlMDAttach(me, d, PTL_RETAIN, &md));
	d = ptl_st_md(self->buf, 1ULL << 40, 1, PTL_MD_OP_PUT, PTL_EQ_NONE);
	EXPECT_EQ(PTL_MD_ILLEGAL, PtlMDAttach(me, d, PTL_RETAIN, &md));
	d = ptl_st_md(self->buf, ~0ULL, 1, PTL_MD_OP_PUT, PTL_EQ_NONE);
	EXPECT_EQ(PTL_MD_ILLEGAL, PtlMDAttach(me, d, PTL_RETAIN, &md));
	/* Read-only memory cannot receive puts. */
	d = ptl_st_md(ro, 8192, 1, PTL_MD_OP_PUT, PTL_EQ_NONE);
	EXPECT_EQ(PTL_MD_ILLEGAL, PtlMDAttach(me, d, PTL_RETAIN, &md));

	/* The ME is still free: a good MD attaches now. */
	d = ptl_st_md(self->buf, 4096, 1, PTL_MD_OP_PUT, PTL_EQ_NONE);
	EXPECT_EQ(PTL_OK, PtlMDAttach(me, d, PTL_RETAIN, &md));
	munmap(hole, 4096);
	munmap(ro, 8192);
}

TEST_F(api, zero_length_mds_are_legal_with_null_or_real_start)
{
	ptl_handle_md_t md;

	EXPECT_EQ(PTL_OK, PtlMDBind(self->ni, ptl_st_md(NULL, 0, 1, 0,
							self->eq),
				    PTL_UNLINK, &md));
	EXPECT_EQ(PTL_OK, PtlMDBind(self->ni, ptl_st_md(self->buf, 0, 1, 0,
							self->eq),
				    PTL_UNLINK, &md));
}

TEST_F(api, iovec_mds_check_the_array_and_every_segment)
{
	ptl_ni_limits_t want = ptl_st_no_wish(), got;
	ptl_md_iovec_t iov[8];
	ptl_handle_ni_t ni;
	ptl_handle_md_t md;
	void *hole = unmapped_page();
	ptl_md_t d;
	int i;

	ASSERT_NE(NULL, hole);
	for (i = 0; i < 8; i++) {
		iov[i].iov_base = self->buf + i * 512;
		iov[i].iov_len = 512;
	}
	d = ptl_st_md(iov, 8, 1, PTL_MD_IOVEC | PTL_MD_OP_PUT, PTL_EQ_NONE);
	EXPECT_EQ(PTL_OK, PtlMDBind(self->ni, d, PTL_RETAIN, &md));

	/* The array itself is unreadable: the argument faults. */
	d.start = hole;
	EXPECT_EQ(PTL_SEGV, PtlMDBind(self->ni, d, PTL_RETAIN, &md));
	d.start = NULL;
	EXPECT_EQ(PTL_SEGV, PtlMDBind(self->ni, d, PTL_RETAIN, &md));
	/* One segment is unmapped: the region cannot be pinned. */
	d.start = iov;
	iov[5].iov_base = hole;
	EXPECT_EQ(PTL_MD_ILLEGAL, PtlMDBind(self->ni, d, PTL_RETAIN, &md));
	iov[5].iov_base = self->buf + 5 * 512;

	/* More entries than max_md_iovecs. */
	PtlFini();
	want.max_md_iovecs = 4;
	ASSERT_EQ(PTL_OK, ptl_st_open(PTL_PID_ANY, &want, &got, &ni));
	ASSERT_EQ(4, got.max_md_iovecs);
	d = ptl_st_md(iov, 4, 1, PTL_MD_IOVEC, PTL_EQ_NONE);
	EXPECT_EQ(PTL_OK, PtlMDBind(ni, d, PTL_RETAIN, &md));
	d.length = 5;
	EXPECT_EQ(PTL_MD_ILLEGAL, PtlMDBind(ni, d, PTL_RETAIN, &md));
	munmap(hole, 4096);
}

TEST_F(api, md_bind_checks_ni_eq_and_pointers)
{
	ptl_handle_md_t md;
	ptl_md_t d = ptl_st_md(self->buf, 64, 1, 0, self->eq);

	EXPECT_EQ(PTL_SEGV, PtlMDBind(self->ni, d, PTL_RETAIN, NULL));
	EXPECT_EQ(PTL_NI_INVALID, PtlMDBind(PTL_INVALID_HANDLE, d, PTL_RETAIN,
					    &md));
	EXPECT_EQ(PTL_NI_INVALID, PtlMDBind(self->eq, d, PTL_RETAIN, &md));
	d.eq_handle = PTL_HANDLE_NONE;
	EXPECT_EQ(PTL_EQ_INVALID, PtlMDBind(self->ni, d, PTL_RETAIN, &md));
	d.eq_handle = self->ni;
	EXPECT_EQ(PTL_EQ_INVALID, PtlMDBind(self->ni, d, PTL_RETAIN, &md));
	d.eq_handle = PTL_EQ_NONE;
	EXPECT_EQ(PTL_OK, PtlMDBind(self->ni, d, PTL_RETAIN, &md));
}

TEST_F(api, md_unlink_checks_handles_and_follows_the_me_unlink_option)
{
	ptl_handle_me_t keep, drop, me2;
	ptl_handle_md_t md1, md2, fresh;
	ptl_md_t d = ptl_st_md(self->buf, 64, 1, PTL_MD_OP_PUT, PTL_EQ_NONE);

	EXPECT_EQ(PTL_MD_INVALID, PtlMDUnlink(PTL_INVALID_HANDLE));
	EXPECT_EQ(PTL_MD_INVALID, PtlMDUnlink(self->ni));
	EXPECT_EQ(PTL_MD_INVALID, PtlMDUnlink(self->eq));

	ASSERT_EQ(PTL_OK, PtlMEAttach(self->ni, PT, ptl_st_any(), 0, 0,
				      PTL_RETAIN, PTL_INS_AFTER, &keep));
	ASSERT_EQ(PTL_OK, PtlMEAttach(self->ni, PT, ptl_st_any(), 1, 0,
				      PTL_UNLINK, PTL_INS_AFTER, &drop));
	ASSERT_EQ(PTL_OK, PtlMDAttach(keep, d, PTL_RETAIN, &md1));
	ASSERT_EQ(PTL_OK, PtlMDAttach(drop, d, PTL_RETAIN, &md2));
	/* An ME handle where an MD is expected (contract 1). */
	EXPECT_EQ(PTL_MD_INVALID, PtlMDUnlink(keep));

	ASSERT_EQ(PTL_OK, PtlMDUnlink(md1));
	EXPECT_EQ(PTL_MD_INVALID, PtlMDUnlink(md1));
	/* A PTL_RETAIN ME stays and takes a new MD. */
	EXPECT_EQ(PTL_OK, PtlMDAttach(keep, d, PTL_RETAIN, &fresh));
	EXPECT_NE(md1, fresh) TH_LOG("a recycled slot needs a new handle");
	EXPECT_EQ(PTL_MD_INVALID, PtlMDUnlink(md1));

	/* A PTL_UNLINK ME goes with its MD. */
	ASSERT_EQ(PTL_OK, PtlMDUnlink(md2));
	EXPECT_EQ(PTL_ME_INVALID, PtlMEUnlink(drop));
	EXPECT_EQ(PTL_ME_INVALID, PtlMEInsert(drop, ptl_st_any(), 0, 0,
					      PTL_RETAIN, PTL_INS_AFTER,
					      &me2));
}

TEST_F(api, stale_handles_stay_invalid_after_their_slot_is_reused)
{
	ptl_handle_md_t old, md;
	ptl_handle_eq_t old_eq, eq;
	ptl_event_t ev;
	int i;

	ASSERT_EQ(PTL_OK, PtlMDBind(self->ni, ptl_st_md(self->buf, 8, 1, 0,
							PTL_EQ_NONE),
				    PTL_RETAIN, &old));
	ASSERT_EQ(PTL_OK, PtlMDUnlink(old));
	for (i = 0; i < 20; i++) {
		ASSERT_EQ(PTL_OK, PtlMDBind(self->ni, ptl_st_md(self->buf, 8,
								1, 0,
								PTL_EQ_NONE),
					    PTL_RETAIN, &md));
		ASSERT_NE(old, md);
		EXPECT_EQ(PTL_MD_INVALID, PtlPut(old, PTL_NO_ACK_REQ, self->me,
						 PT, 0, 0, 0, 0));
		ASSERT_EQ(PTL_OK, PtlMDUnlink(md));
	}
	ASSERT_EQ(PTL_OK, PtlEQAlloc(self->ni, 4, PTL_EQ_HANDLER_NONE,
				     &old_eq));
	ASSERT_EQ(PTL_OK, PtlEQFree(old_eq));
	ASSERT_EQ(PTL_OK, PtlEQAlloc(self->ni, 4, PTL_EQ_HANDLER_NONE, &eq));
	EXPECT_NE(old_eq, eq);
	EXPECT_EQ(PTL_EQ_INVALID, PtlEQGet(old_eq, &ev));
}

/* ---- PtlMDUpdate ---- */

TEST_F(api, md_update_reads_replaces_and_checks_its_arguments)
{
	ptl_handle_md_t md;
	ptl_md_t d = ptl_st_md(self->buf, 100, 5, PTL_MD_OP_PUT, self->eq);
	ptl_md_t old, repl;
	void *hole = unmapped_page();

	ASSERT_NE(NULL, hole);
	d.user_ptr = (void *)0x1234;
	ASSERT_EQ(PTL_OK, PtlMDBind(self->ni, d, PTL_RETAIN, &md));

	memset(&old, 0xaa, sizeof(old));
	ASSERT_EQ(PTL_OK, PtlMDUpdate(md, &old, NULL, PTL_EQ_NONE));
	EXPECT_EQ((void *)self->buf, old.start);
	EXPECT_EQ(100, old.length);
	EXPECT_EQ(5, old.threshold);
	EXPECT_EQ(PTL_MD_OP_PUT, old.options);
	EXPECT_EQ((void *)0x1234, old.user_ptr);
	EXPECT_EQ(self->eq, old.eq_handle);

	repl = ptl_st_md(self->buf + 200, 300, PTL_MD_THRESH_INF,
			 PTL_MD_OP_GET, PTL_EQ_NONE);
	EXPECT_EQ(PTL_OK, PtlMDUpdate(md, NULL, &repl, PTL_EQ_NONE));
	ASSERT_EQ(PTL_OK, PtlMDUpdate(md, &old, NULL, PTL_EQ_NONE));
	EXPECT_EQ((void *)(self->buf + 200), old.start);
	EXPECT_EQ(300, old.length);
	EXPECT_EQ(PTL_MD_THRESH_INF, old.threshold);
	EXPECT_EQ(PTL_MD_OP_GET, old.options);
	EXPECT_EQ(PTL_EQ_NONE, old.eq_handle);

	/* Both pointers NULL: nothing to do. */
	EXPECT_EQ(PTL_OK, PtlMDUpdate(md, NULL, NULL, self->eq));
	/* The (empty) EQ allows the update. */
	EXPECT_EQ(PTL_OK, PtlMDUpdate(md, NULL, &repl, self->eq));

	EXPECT_EQ(PTL_MD_INVALID, PtlMDUpdate(PTL_INVALID_HANDLE, &old, NULL,
					      PTL_EQ_NONE));
	EXPECT_EQ(PTL_MD_INVALID, PtlMDUpdate(self->eq, &old, NULL,
					      PTL_EQ_NONE));
	/* An invalid EQ argument, or an invalid EQ in the new MD. */
	EXPECT_EQ(PTL_EQ_INVALID, PtlMDUpdate(md, NULL, &repl,
					      PTL_INVALID_HANDLE));
	repl.eq_handle = md;
	EXPECT_EQ(PTL_EQ_INVALID, PtlMDUpdate(md, NULL, &repl, PTL_EQ_NONE));
	/* A new region that cannot be pinned; the MD is unchanged. */
	repl = ptl_st_md(hole, 4096, 1, PTL_MD_OP_PUT, PTL_EQ_NONE);
	EXPECT_EQ(PTL_MD_ILLEGAL, PtlMDUpdate(md, NULL, &repl, PTL_EQ_NONE));
	ASSERT_EQ(PTL_OK, PtlMDUpdate(md, &old, NULL, PTL_EQ_NONE));
	EXPECT_EQ((void *)(self->buf + 200), old.start);
	munmap(hole, 4096);
}

TEST_F(api, md_update_is_refused_while_an_event_is_unread)
{
	ptl_handle_me_t me;
	ptl_handle_md_t tgt, src;
	ptl_md_t old, repl;
	ptl_event_t ev;
	ptl_handle_eq_t seq;

	ASSERT_EQ(PTL_OK, PtlEQAlloc(self->ni, 16, PTL_EQ_HANDLER_NONE, &seq));
	ASSERT_EQ(PTL_OK, attach_md(self->ni, PT, self->buf, 256,
				    PTL_MD_OP_PUT, self->eq, &me, &tgt));
	ASSERT_EQ(PTL_OK, PtlMDBind(self->ni, ptl_st_md(self->buf + 4096, 16,
							PTL_MD_THRESH_INF, 0,
							seq),
				    PTL_RETAIN, &src));
	ASSERT_EQ(PTL_OK, PtlPut(src, PTL_NO_ACK_REQ, self->me, PT, 0, 0, 0,
				 0));
	repl = ptl_st_md(self->buf, 256, 3, PTL_MD_OP_PUT, self->eq);
	memset(&old, 0, sizeof(old));
	EXPECT_EQ(PTL_MD_NO_UPDATE, PtlMDUpdate(tgt, &old, &repl, self->eq));
	/* old_md is filled even when the update is refused (contract 12). */
	EXPECT_EQ((void *)self->buf, old.start);
	EXPECT_EQ(256, old.length);
	EXPECT_EQ(PTL_MD_THRESH_INF, old.threshold);
	ASSERT_EQ(PTL_OK, ptl_st_next(self->eq, &ev, 1000));
	EXPECT_EQ(PTL_EVENT_PUT_START, ev.type);
	EXPECT_EQ(PTL_MD_NO_UPDATE, PtlMDUpdate(tgt, &old, &repl, self->eq));
	ASSERT_EQ(PTL_OK, ptl_st_next(self->eq, &ev, 1000));
	EXPECT_EQ(PTL_EVENT_PUT_END, ev.type);
	EXPECT_EQ(PTL_OK, PtlMDUpdate(tgt, &old, &repl, self->eq));
	ASSERT_EQ(PTL_OK, PtlMDUpdate(tgt, &old, NULL, PTL_EQ_NONE));
	EXPECT_EQ(3, old.threshold);
	/* PTL_EQ_NONE: unconditional, also with unread events elsewhere. */
	EXPECT_EQ(PTL_OK, PtlMDUpdate(tgt, NULL, &repl, PTL_EQ_NONE));
}

/* ---- PtlMEMDPost (a Linux extension) ---- */

static int post(ptl_handle_me_t base, ptl_match_bits_t bits, void *buf,
		ptl_handle_eq_t test, ptl_handle_eq_t eq, ptl_handle_me_t *me,
		ptl_handle_md_t *md)
{
	return PtlMEMDPost(base, ptl_st_any(), bits, 0, PTL_UNLINK,
			   PTL_INS_BEFORE, ptl_st_md(buf, 16, 1, PTL_MD_OP_PUT,
						     eq),
			   PTL_UNLINK, test, me, md);
}

static ptl_sr_value_t sr(ptl_handle_ni_t ni, ptl_sr_index_t reg)
{
	ptl_sr_value_t v = ~0ULL;

	PtlNIStatus(ni, reg, &v);
	return v;
}

TEST_F(api, me_md_post_goes_in_front_of_its_base_armed)
{
	ptl_handle_me_t base, me;
	ptl_handle_md_t heap, md, src;
	ptl_event_t ev;

	ASSERT_EQ(PTL_OK, attach_md(self->ni, PT, self->buf, 256,
				    PTL_MD_OP_PUT, PTL_EQ_NONE, &base, &heap));
	ASSERT_EQ(PTL_OK, post(base, 0, self->buf + 1024, self->eq, self->eq,
			       &me, &md));
	ASSERT_EQ(PTL_OK, PtlMDBind(self->ni, ptl_st_md(self->buf + 4096, 16,
							PTL_MD_THRESH_INF, 0,
							PTL_EQ_NONE),
				    PTL_RETAIN, &src));
	memset(self->buf + 4096, 0x5a, 16);
	ASSERT_EQ(PTL_OK, PtlPut(src, PTL_NO_ACK_REQ, self->me, PT, 0, 0, 0,
				 0));
	ASSERT_EQ(PTL_OK, ptl_st_next(self->eq, &ev, 1000));
	EXPECT_EQ(PTL_EVENT_PUT_START, ev.type);
	ASSERT_EQ(PTL_OK, ptl_st_next(self->eq, &ev, 1000));
	EXPECT_EQ(PTL_EVENT_PUT_END, ev.type);
	EXPECT_EQ(md, ev.md_handle);
	EXPECT_EQ(-1, ptl_st_memchk(self->buf + 1024, 0x5a, 16));
	EXPECT_EQ(-1, ptl_st_memchk(self->buf, 0, 16));
	/* Threshold 1, PTL_UNLINK: both went with the put. */
	EXPECT_EQ(PTL_MD_INVALID, PtlMDUnlink(md));
	EXPECT_EQ(PTL_ME_INVALID, PtlMEUnlink(me));
}

TEST_F(api, me_md_post_is_refused_while_an_event_is_unread)
{
	ptl_handle_me_t base, me = PTL_INVALID_HANDLE;
	ptl_handle_md_t heap, md = PTL_INVALID_HANDLE, src;
	ptl_sr_value_t mes, mds;
	ptl_event_t ev;

	ASSERT_EQ(PTL_OK, attach_md(self->ni, PT, self->buf, 256,
				    PTL_MD_OP_PUT, self->eq, &base, &heap));
	ASSERT_EQ(PTL_OK, PtlMDBind(self->ni, ptl_st_md(self->buf + 4096, 16,
							PTL_MD_THRESH_INF, 0,
							PTL_EQ_NONE),
				    PTL_RETAIN, &src));
	ASSERT_EQ(PTL_OK, PtlPut(src, PTL_NO_ACK_REQ, self->me, PT, 0, 0, 0,
				 0));
	mes = sr(self->ni, PTL_SR_MES_CUR);
	mds = sr(self->ni, PTL_SR_MDS_CUR);
	EXPECT_EQ(PTL_MD_NO_UPDATE, post(base, 0, self->buf + 1024, self->eq,
					 self->eq, &me, &md));
	EXPECT_EQ(PTL_INVALID_HANDLE, me);
	EXPECT_EQ(PTL_INVALID_HANDLE, md);
	EXPECT_EQ(mes, sr(self->ni, PTL_SR_MES_CUR));
	EXPECT_EQ(mds, sr(self->ni, PTL_SR_MDS_CUR));
	ASSERT_EQ(PTL_OK, ptl_st_next(self->eq, &ev, 1000));
	EXPECT_EQ(PTL_MD_NO_UPDATE, post(base, 0, self->buf + 1024, self->eq,
					 self->eq, &me, &md));
	ASSERT_EQ(PTL_OK, ptl_st_next(self->eq, &ev, 1000));
	EXPECT_EQ(PTL_EVENT_PUT_END, ev.type);
	EXPECT_EQ(PTL_OK, post(base, 0, self->buf + 1024, self->eq, self->eq,
			       &me, &md));
	EXPECT_EQ(mes + 1, sr(self->ni, PTL_SR_MES_CUR));
	EXPECT_EQ(mds + 1, sr(self->ni, PTL_SR_MDS_CUR));
	/* PTL_EQ_NONE: unconditional. */
	ASSERT_EQ(PTL_OK, PtlPut(src, PTL_NO_ACK_REQ, self->me, PT, 0, 1, 0,
				 0));
	EXPECT_EQ(PTL_OK, post(base, 0, self->buf + 1024, PTL_EQ_NONE,
			       self->eq, &me, &md));
}

TEST_F(api, me_md_post_checks_handles_regions_and_pointers)
{
	ptl_handle_me_t base, me;
	ptl_handle_md_t heap, md;
	void *bad = unmapped_page();
	ptl_sr_value_t mes, mds;

	ASSERT_NE(NULL, bad);
	ASSERT_EQ(PTL_OK, attach_md(self->ni, PT, self->buf, 256,
				    PTL_MD_OP_PUT, PTL_EQ_NONE, &base, &heap));
	mes = sr(self->ni, PTL_SR_MES_CUR);
	mds = sr(self->ni, PTL_SR_MDS_CUR);
	EXPECT_EQ(PTL_ME_INVALID, post(self->eq, 0, self->buf, self->eq,
				       self->eq, &me, &md));
	EXPECT_EQ(PTL_ME_INVALID, post(PTL_INVALID_HANDLE, 0, self->buf,
				       self->eq, self->eq, &me, &md));
	EXPECT_EQ(PTL_EQ_INVALID, post(base, 0, self->buf, base, self->eq,
				       &me, &md));
	EXPECT_EQ(PTL_EQ_INVALID, post(base, 0, self->buf, self->eq, base,
				       &me, &md));
	EXPECT_EQ(PTL_MD_ILLEGAL, post(base, 0, bad, self->eq, self->eq,
				       &me, &md));
	EXPECT_EQ(PTL_SEGV, post(base, 0, self->buf, self->eq, self->eq,
				 NULL, &md));
	EXPECT_EQ(PTL_SEGV, post(base, 0, self->buf, self->eq, self->eq, &me,
				 NULL));
	EXPECT_EQ(mes, sr(self->ni, PTL_SR_MES_CUR));
	EXPECT_EQ(mds, sr(self->ni, PTL_SR_MDS_CUR));
	/* A stale base: its ME was unlinked. */
	ASSERT_EQ(PTL_OK, PtlMEUnlink(base));
	EXPECT_EQ(PTL_ME_INVALID, post(base, 0, self->buf, self->eq,
				       self->eq, &me, &md));
	munmap(bad, 4096);
}

/* ---- event queues ---- */

static int handler_calls;
static ptl_event_kind_t handler_kind;

static void count_handler(ptl_event_t *ev)
{
	handler_calls++;
	handler_kind = ev->type;
}

TEST_F(api, eq_alloc_checks_count_ni_and_pointers)
{
	ptl_handle_eq_t eq = 0;

	EXPECT_EQ(PTL_OK, PtlEQAlloc(self->ni, 0, PTL_EQ_HANDLER_NONE, &eq));
	EXPECT_EQ(PTL_EQ_NONE, eq);
	EXPECT_EQ(PTL_OK, PtlEQAlloc(self->ni, 1, PTL_EQ_HANDLER_NONE, &eq));
	EXPECT_EQ(PTL_SEGV, PtlEQAlloc(self->ni, 8, PTL_EQ_HANDLER_NONE,
				       NULL));
	EXPECT_EQ(PTL_NI_INVALID, PtlEQAlloc(PTL_INVALID_HANDLE, 8,
					     PTL_EQ_HANDLER_NONE, &eq));
	EXPECT_EQ(PTL_NI_INVALID, PtlEQAlloc(self->eq, 8,
					     PTL_EQ_HANDLER_NONE, &eq));
	EXPECT_EQ(PTL_NO_SPACE, PtlEQAlloc(self->ni, 1ULL << 32,
					   PTL_EQ_HANDLER_NONE, &eq));
	EXPECT_EQ(PTL_NO_SPACE, PtlEQAlloc(self->ni, ~0ULL,
					   PTL_EQ_HANDLER_NONE, &eq));
	EXPECT_EQ(PTL_NO_SPACE, PtlEQAlloc(self->ni,
					   (ptl_size_t)PTL_EQ_MAX_SLOTS + 1,
					   PTL_EQ_HANDLER_NONE, &eq));
}

TEST_F(api, eq_free_checks_handles_and_is_allowed_while_mds_name_it)
{
	ptl_handle_eq_t eq;
	ptl_handle_me_t me;
	ptl_handle_md_t md, src;
	ptl_event_t ev;

	EXPECT_EQ(PTL_EQ_INVALID, PtlEQFree(PTL_INVALID_HANDLE));
	EXPECT_EQ(PTL_EQ_INVALID, PtlEQFree(PTL_EQ_NONE));
	EXPECT_EQ(PTL_EQ_INVALID, PtlEQFree(self->ni));

	ASSERT_EQ(PTL_OK, PtlEQAlloc(self->ni, 8, PTL_EQ_HANDLER_NONE, &eq));
	ASSERT_EQ(PTL_OK, attach_md(self->ni, PT, self->buf, 64,
				    PTL_MD_OP_PUT, eq, &me, &md));
	EXPECT_EQ(PTL_MD_INVALID, PtlMDUnlink(eq)) TH_LOG("EQ is not an MD");
	EXPECT_EQ(PTL_EQ_INVALID, PtlEQFree(md));
	/* Contract 14: allowed; the MD then posts nothing. */
	ASSERT_EQ(PTL_OK, PtlEQFree(eq));
	EXPECT_EQ(PTL_EQ_INVALID, PtlEQFree(eq));
	EXPECT_EQ(PTL_EQ_INVALID, PtlEQGet(eq, &ev));

	ASSERT_EQ(PTL_OK, PtlMDBind(self->ni, ptl_st_md(self->buf + 4096, 16,
							1, 0, self->eq),
				    PTL_UNLINK, &src));
	memset(self->buf, 0, 64);
	ptl_st_fill(self->buf + 4096, 16, 3);
	ASSERT_EQ(PTL_OK, PtlPut(src, PTL_NO_ACK_REQ, self->me, PT, 0, 0, 0,
				 0));
	/* The put is still delivered. */
	ASSERT_EQ(PTL_OK, ptl_st_next(self->eq, &ev, 2000));
	EXPECT_EQ(PTL_EVENT_SEND_START, ev.type);
	ASSERT_EQ(PTL_OK, ptl_st_next(self->eq, &ev, 2000));
	EXPECT_EQ(PTL_EVENT_SEND_END, ev.type);
	EXPECT_EQ(-1, ptl_st_check(self->buf, 16, 3, 0));
}

/*
 * libptl-user remembers each thread's last EQ and device lookups; what it
 * remembers must never outlive the object. Looked up while alive, then
 * freed (alone, or with its NI): invalid, not empty.
 */
TEST_F(api, eq_lookups_remembered_by_a_thread_end_with_the_eq)
{
	ptl_handle_eq_t eq;
	ptl_event_t ev;
	int which;

	ASSERT_EQ(PTL_OK, PtlEQAlloc(self->ni, 8, PTL_EQ_HANDLER_NONE, &eq));
	EXPECT_EQ(PTL_EQ_EMPTY, PtlEQGet(eq, &ev));
	EXPECT_EQ(PTL_EQ_EMPTY, PtlEQPoll(&eq, 1, 0, &ev, &which));
	ASSERT_EQ(PTL_OK, PtlEQFree(eq));
	EXPECT_EQ(PTL_EQ_INVALID, PtlEQGet(eq, &ev));
	EXPECT_EQ(PTL_EQ_INVALID, PtlEQPoll(&eq, 1, 0, &ev, &which));
	EXPECT_EQ(PTL_EQ_INVALID, PtlEQWait(eq, &ev));

	EXPECT_EQ(PTL_EQ_EMPTY, PtlEQPoll(&self->eq, 1, 0, &ev, &which));
	ASSERT_EQ(PTL_OK, PtlNIFini(self->ni));
	EXPECT_EQ(PTL_EQ_INVALID, PtlEQPoll(&self->eq, 1, 0, &ev, &which));
	EXPECT_EQ(PTL_EQ_INVALID, PtlEQGet(self->eq, &ev));
}

struct remembering_thread {
	ptl_handle_eq_t eq;
	pthread_barrier_t looked, freed;
	int before, after;
};

static void *poll_before_and_after_free(void *arg)
{
	struct remembering_thread *t = arg;
	ptl_event_t ev;
	int which;

	t->before = PtlEQPoll(&t->eq, 1, 0, &ev, &which);
	pthread_barrier_wait(&t->looked);
	pthread_barrier_wait(&t->freed);
	t->after = PtlEQPoll(&t->eq, 1, 0, &ev, &which);
	return NULL;
}

/* Freed by another thread than the one that remembers it. */
TEST_F(api, an_eq_freed_by_one_thread_is_invalid_in_another)
{
	struct remembering_thread t = { .before = -1, .after = -1 };
	pthread_t thread;

	ASSERT_EQ(PTL_OK, PtlEQAlloc(self->ni, 8, PTL_EQ_HANDLER_NONE, &t.eq));
	ASSERT_EQ(0, pthread_barrier_init(&t.looked, NULL, 2));
	ASSERT_EQ(0, pthread_barrier_init(&t.freed, NULL, 2));
	ASSERT_EQ(0, pthread_create(&thread, NULL, poll_before_and_after_free,
				    &t));
	pthread_barrier_wait(&t.looked);
	EXPECT_EQ(PTL_OK, PtlEQFree(t.eq));
	pthread_barrier_wait(&t.freed);
	ASSERT_EQ(0, pthread_join(thread, NULL));
	EXPECT_EQ(PTL_EQ_EMPTY, t.before);
	EXPECT_EQ(PTL_EQ_INVALID, t.after);
	pthread_barrier_destroy(&t.looked);
	pthread_barrier_destroy(&t.freed);
}

TEST_F(api, eq_get_reports_empty_and_checks_arguments)
{
	ptl_event_t ev;
	void *hole = unmapped_page();

	ASSERT_NE(NULL, hole);
	EXPECT_EQ(PTL_EQ_EMPTY, PtlEQGet(self->eq, &ev));
	EXPECT_EQ(PTL_SEGV, PtlEQGet(self->eq, NULL));
	EXPECT_EQ(PTL_EQ_INVALID, PtlEQGet(PTL_INVALID_HANDLE, &ev));
	EXPECT_EQ(PTL_EQ_INVALID, PtlEQGet(PTL_EQ_NONE, &ev));
	EXPECT_EQ(PTL_EQ_INVALID, PtlEQGet(self->ni, &ev));
	EXPECT_EQ(PTL_SEGV, PtlEQWait(self->eq, NULL));
	EXPECT_EQ(PTL_EQ_INVALID, PtlEQWait(PTL_INVALID_HANDLE, &ev));
	munmap(hole, 4096);
}

TEST_F(api, eq_handler_runs_with_each_dequeued_event)
{
	ptl_handle_eq_t eq;
	ptl_handle_md_t md;
	ptl_event_t ev;

	ASSERT_EQ(PTL_OK, PtlEQAlloc(self->ni, 8, count_handler, &eq));
	ASSERT_EQ(PTL_OK, PtlMDBind(self->ni, ptl_st_md(self->buf, 16, 1, 0,
							eq),
				    PTL_RETAIN, &md));
	handler_calls = 0;
	ASSERT_EQ(PTL_OK, PtlPut(md, PTL_NO_ACK_REQ, self->me, PT, 0, 0, 0,
				 0));
	ASSERT_EQ(PTL_OK, ptl_st_next(eq, &ev, 2000));
	ASSERT_EQ(PTL_OK, ptl_st_next(eq, &ev, 2000));
	EXPECT_EQ(PTL_EVENT_SEND_END, ev.type);
	EXPECT_EQ(2, handler_calls);
	EXPECT_EQ(PTL_EVENT_SEND_END, handler_kind);
}

TEST_F(api, eq_poll_times_out_with_eq_empty)
{
	ptl_handle_eq_t eqs[2];
	ptl_event_t ev;
	int which = -7;
	long long t0, dt;

	eqs[0] = self->eq;
	ASSERT_EQ(PTL_OK, PtlEQAlloc(self->ni, 8, PTL_EQ_HANDLER_NONE,
				     &eqs[1]));
	t0 = ptl_st_now_ms();
	EXPECT_EQ(PTL_EQ_EMPTY, PtlEQPoll(eqs, 2, 300, &ev, &which));
	dt = ptl_st_now_ms() - t0;
	EXPECT_GE(dt, 290);
	EXPECT_LT(dt, 5000);
	t0 = ptl_st_now_ms();
	EXPECT_EQ(PTL_EQ_EMPTY, PtlEQPoll(eqs, 2, 0, &ev, &which));
	EXPECT_LT(ptl_st_now_ms() - t0, 1000);
}

TEST_F(api, eq_poll_checks_its_arguments)
{
	ptl_handle_eq_t eqs[3];
	ptl_event_t ev;
	int which = -7;

	eqs[0] = self->eq;
	eqs[1] = PTL_INVALID_HANDLE;
	eqs[2] = self->eq;
	EXPECT_EQ(PTL_EQ_INVALID, PtlEQPoll(eqs, 3, 0, &ev, &which));
	EXPECT_EQ(1, which);
	eqs[1] = self->ni;
	which = -7;
	EXPECT_EQ(PTL_EQ_INVALID, PtlEQPoll(eqs, 3, 0, &ev, &which));
	EXPECT_EQ(1, which);
	EXPECT_EQ(PTL_EQ_INVALID, PtlEQPoll(eqs, 0, 0, &ev, &which));
	EXPECT_EQ(PTL_EQ_INVALID, PtlEQPoll(eqs, -1, 0, &ev, &which));
	EXPECT_EQ(PTL_SEGV, PtlEQPoll(NULL, 1, 0, &ev, &which));
	EXPECT_EQ(PTL_SEGV, PtlEQPoll(eqs, 1, 0, NULL, &which));
	EXPECT_EQ(PTL_SEGV, PtlEQPoll(eqs, 1, 0, &ev, NULL));
}

TEST_F(api, eq_poll_returns_the_eq_that_has_the_event)
{
	ptl_handle_eq_t eqs[3];
	ptl_handle_md_t md;
	ptl_event_t ev;
	int i, which = -1;

	for (i = 0; i < 3; i++)
		ASSERT_EQ(PTL_OK, PtlEQAlloc(self->ni, 8, PTL_EQ_HANDLER_NONE,
					     &eqs[i]));
	ASSERT_EQ(PTL_OK, PtlMDBind(self->ni, ptl_st_md(self->buf, 8, 1,
							PTL_MD_EVENT_END_DISABLE,
							eqs[2]),
				    PTL_RETAIN, &md));
	ASSERT_EQ(PTL_OK, PtlPut(md, PTL_NO_ACK_REQ, self->me, PT, 0, 0, 0,
				 0));
	ASSERT_EQ(PTL_OK, PtlEQPoll(eqs, 3, 2000, &ev, &which));
	EXPECT_EQ(2, which);
	EXPECT_EQ(PTL_EVENT_SEND_START, ev.type);
	EXPECT_EQ(md, ev.md_handle);
	EXPECT_EQ(PTL_EQ_EMPTY, PtlEQPoll(eqs, 3, 50, &ev, &which));
}

/* PtlEQWaitFd: readable exactly while an event is unread (any EQ). */
TEST_F(api, eq_wait_fd_is_readable_while_an_event_is_unread)
{
	struct pollfd pfd = { .events = POLLIN };
	ptl_handle_md_t md;
	ptl_event_t ev;

	EXPECT_EQ(PTL_SEGV, PtlEQWaitFd(NULL));
	ASSERT_EQ(PTL_OK, PtlEQWaitFd(&pfd.fd));
	EXPECT_EQ(0, poll(&pfd, 1, 0));
	ASSERT_EQ(PTL_OK, PtlMDBind(self->ni, ptl_st_md(self->buf, 8, 1,
							PTL_MD_EVENT_END_DISABLE,
							self->eq),
				    PTL_RETAIN, &md));
	ASSERT_EQ(PTL_OK, PtlPut(md, PTL_NO_ACK_REQ, self->me, PT, 0, 0, 0,
				 0));
	ASSERT_EQ(1, poll(&pfd, 1, 2000));
	EXPECT_TRUE(pfd.revents & POLLIN);
	EXPECT_EQ(PTL_OK, PtlEQGet(self->eq, &ev));
	EXPECT_EQ(PTL_EVENT_SEND_START, ev.type);
	EXPECT_EQ(PTL_EQ_EMPTY, PtlEQGet(self->eq, &ev));
	EXPECT_EQ(0, poll(&pfd, 1, 0));
}

struct late_put {
	ptl_handle_md_t md;
	ptl_process_id_t me;
	int delay_ms;
};

static void *put_later(void *arg)
{
	struct late_put *lp = arg;

	usleep(lp->delay_ms * 1000);
	PtlPut(lp->md, PTL_NO_ACK_REQ, lp->me, PT, 0, 0, 0, 0);
	return NULL;
}

TEST_F(api, eq_wait_and_poll_forever_sleep_until_an_event_arrives)
{
	struct late_put lp = { .me = self->me, .delay_ms = 300 };
	ptl_handle_eq_t eqs[2];
	ptl_event_t ev;
	pthread_t t;
	long long t0;
	int which = -1;

	ASSERT_EQ(PTL_OK, PtlEQAlloc(self->ni, 8, PTL_EQ_HANDLER_NONE,
				     &eqs[1]));
	eqs[0] = self->eq;
	ASSERT_EQ(PTL_OK, PtlMDBind(self->ni, ptl_st_md(self->buf, 8,
							PTL_MD_THRESH_INF,
							PTL_MD_EVENT_END_DISABLE,
							eqs[1]),
				    PTL_RETAIN, &lp.md));
	t0 = ptl_st_now_ms();
	ASSERT_EQ(0, pthread_create(&t, NULL, put_later, &lp));
	ASSERT_EQ(PTL_OK, PtlEQWait(eqs[1], &ev));
	EXPECT_GE(ptl_st_now_ms() - t0, 250);
	EXPECT_EQ(PTL_EVENT_SEND_START, ev.type);
	pthread_join(t, NULL);

	t0 = ptl_st_now_ms();
	ASSERT_EQ(0, pthread_create(&t, NULL, put_later, &lp));
	ASSERT_EQ(PTL_OK, PtlEQPoll(eqs, 2, PTL_TIME_FOREVER, &ev, &which));
	EXPECT_GE(ptl_st_now_ms() - t0, 250);
	EXPECT_EQ(1, which);
	pthread_join(t, NULL);
}

/* ---- access control ---- */

TEST_F(api, ac_entry_checks_indexes_and_handles)
{
	EXPECT_EQ(PTL_OK, PtlACEntry(self->ni, self->limits.max_ac_index,
				     ptl_st_any(), PTL_UID_ANY, PTL_JID_ANY,
				     PTL_PT_INDEX_ANY));
	EXPECT_EQ(PTL_OK, PtlACEntry(self->ni, 0, self->me, 0, 5,
				     self->limits.max_pt_index));
	EXPECT_EQ(PTL_AC_INDEX_INVALID,
		  PtlACEntry(self->ni, self->limits.max_ac_index + 1,
			     ptl_st_any(), PTL_UID_ANY, PTL_JID_ANY,
			     PTL_PT_INDEX_ANY));
	EXPECT_EQ(PTL_PT_INDEX_INVALID,
		  PtlACEntry(self->ni, 0, ptl_st_any(), PTL_UID_ANY,
			     PTL_JID_ANY, self->limits.max_pt_index + 1));
	EXPECT_EQ(PTL_NI_INVALID, PtlACEntry(PTL_INVALID_HANDLE, 0,
					     ptl_st_any(), PTL_UID_ANY,
					     PTL_JID_ANY, PTL_PT_INDEX_ANY));
	EXPECT_EQ(PTL_NI_INVALID, PtlACEntry(self->eq, 0, ptl_st_any(),
					     PTL_UID_ANY, PTL_JID_ANY,
					     PTL_PT_INDEX_ANY));
}

TEST(reduced_ac_table_is_enforced)
{
	ptl_ni_limits_t want = ptl_st_no_wish(), got;
	ptl_handle_ni_t ni;

	want.max_ac_index = 2;
	ASSERT_EQ(PTL_OK, ptl_st_open(PTL_PID_ANY, &want, &got, &ni));
	ASSERT_EQ(2, got.max_ac_index);
	EXPECT_EQ(PTL_OK, PtlACEntry(ni, 2, ptl_st_any(), PTL_UID_ANY,
				     PTL_JID_ANY, PTL_PT_INDEX_ANY));
	EXPECT_EQ(PTL_AC_INDEX_INVALID, PtlACEntry(ni, 3, ptl_st_any(),
						   PTL_UID_ANY, PTL_JID_ANY,
						   PTL_PT_INDEX_ANY));
	PtlFini();
}

/* ---- data movement ---- */

TEST_F(api, data_calls_check_md_handles_and_regions)
{
	ptl_handle_me_t me;
	ptl_handle_md_t md, tmd, inactive, big;

	ASSERT_EQ(PTL_OK, attach_md(self->ni, PT, self->buf, 64,
				    PTL_MD_OP_PUT | PTL_MD_OP_GET, self->eq,
				    &me, &tmd));
	ASSERT_EQ(PTL_OK, PtlMDBind(self->ni, ptl_st_md(self->buf + 4096, 100,
							PTL_MD_THRESH_INF, 0,
							PTL_EQ_NONE),
				    PTL_RETAIN, &md));
	/* Wrong-type, special and freed handles. */
	EXPECT_EQ(PTL_MD_INVALID, PtlPut(me, PTL_NO_ACK_REQ, self->me, PT, 0,
					 0, 0, 0));
	EXPECT_EQ(PTL_MD_INVALID, PtlPut(self->eq, PTL_NO_ACK_REQ, self->me,
					 PT, 0, 0, 0, 0));
	EXPECT_EQ(PTL_MD_INVALID, PtlPut(PTL_INVALID_HANDLE, PTL_NO_ACK_REQ,
					 self->me, PT, 0, 0, 0, 0));
	EXPECT_EQ(PTL_MD_INVALID, PtlGet(self->ni, self->me, PT, 0, 0, 0));
	EXPECT_EQ(PTL_MD_INVALID, PtlGetRegion(me, 0, 1, self->me, PT, 0, 0,
					       0));
	EXPECT_EQ(PTL_MD_INVALID, PtlPutRegion(me, 0, 1, PTL_NO_ACK_REQ,
					       self->me, PT, 0, 0, 0, 0));
	EXPECT_EQ(PTL_MD_INVALID, PtlGetPut(me, md, self->me, PT, 0, 0, 0,
					    0));
	EXPECT_EQ(PTL_MD_INVALID, PtlGetPut(md, me, self->me, PT, 0, 0, 0,
					    0));

	/* Regions must lie inside the MD. */
	EXPECT_EQ(PTL_OK, PtlPutRegion(md, 90, 10, PTL_NO_ACK_REQ, self->me,
				       PT, 0, 0, 0, 0));
	EXPECT_EQ(PTL_MD_ILLEGAL, PtlPutRegion(md, 90, 11, PTL_NO_ACK_REQ,
					       self->me, PT, 0, 0, 0, 0));
	EXPECT_EQ(PTL_MD_ILLEGAL, PtlPutRegion(md, 101, 0, PTL_NO_ACK_REQ,
					       self->me, PT, 0, 0, 0, 0));
	EXPECT_EQ(PTL_MD_ILLEGAL, PtlPutRegion(md, ~0ULL, 2, PTL_NO_ACK_REQ,
					       self->me, PT, 0, 0, 0, 0));
	EXPECT_EQ(PTL_MD_ILLEGAL, PtlGetRegion(md, 50, 51, self->me, PT, 0, 0,
					       0));
	EXPECT_EQ(PTL_MD_ILLEGAL, PtlGetRegion(md, 1, ~0ULL, self->me, PT, 0,
					       0, 0));
	EXPECT_EQ(PTL_OK, PtlGetRegion(md, 50, 0, self->me, PT, 0, 0, 0));
	/* Zero-length operations are legal (contract 15). */
	EXPECT_EQ(PTL_OK, PtlPutRegion(md, 100, 0, PTL_NO_ACK_REQ, self->me,
				       PT, 0, 0, 0, 0));

	/* GetPut: the put MD may not exceed max_getput_md. */
	ASSERT_LT(self->limits.max_getput_md, 4000);
	ASSERT_EQ(PTL_OK, PtlMDBind(self->ni,
				    ptl_st_md(self->buf + 4096,
					      self->limits.max_getput_md + 1,
					      PTL_MD_THRESH_INF, 0,
					      PTL_EQ_NONE),
				    PTL_RETAIN, &big));
	EXPECT_EQ(PTL_MD_ILLEGAL, PtlGetPut(md, big, self->me, PT, 0, 0, 0,
					    0));

	/* An inactive MD (threshold 0) cannot initiate. */
	ASSERT_EQ(PTL_OK, PtlMDBind(self->ni, ptl_st_md(self->buf, 8, 0, 0,
							PTL_EQ_NONE),
				    PTL_RETAIN, &inactive));
	EXPECT_EQ(PTL_MD_INVALID, PtlPut(inactive, PTL_NO_ACK_REQ, self->me,
					 PT, 0, 0, 0, 0));
	EXPECT_EQ(PTL_MD_INVALID, PtlGet(inactive, self->me, PT, 0, 0, 0));

	ASSERT_EQ(PTL_OK, PtlMDUnlink(md));
	EXPECT_EQ(PTL_MD_INVALID, PtlPut(md, PTL_NO_ACK_REQ, self->me, PT, 0,
					 0, 0, 0));
}

TEST_F(api, put_to_self_posts_send_then_put_events)
{
	ptl_handle_me_t me;
	ptl_handle_md_t tmd, smd;
	ptl_event_t ev;
	char *src = self->buf + 4096;

	ASSERT_EQ(PTL_OK, attach_md(self->ni, PT, self->buf, 200,
				    PTL_MD_OP_PUT, self->eq, &me, &tmd));
	ASSERT_EQ(PTL_OK, PtlMDBind(self->ni, ptl_st_md(src, 100, 1, 0,
							self->eq),
				    PTL_UNLINK, &smd));
	ptl_st_fill(src, 100, 9);
	ASSERT_EQ(PTL_OK, PtlPut(smd, PTL_NO_ACK_REQ, self->me, PT, 0, 0x55,
				 0, 0xbeef));
	ASSERT_EQ(PTL_OK, ptl_st_next(self->eq, &ev, 2000));
	EXPECT_EQ(PTL_EVENT_SEND_START, ev.type);
	ASSERT_EQ(PTL_OK, ptl_st_next(self->eq, &ev, 2000));
	EXPECT_EQ(PTL_EVENT_SEND_END, ev.type);
	ASSERT_EQ(PTL_OK, ptl_st_next(self->eq, &ev, 2000));
	EXPECT_EQ(PTL_EVENT_UNLINK, ev.type) TH_LOG("threshold 1, PTL_UNLINK");
	ASSERT_EQ(PTL_OK, ptl_st_next(self->eq, &ev, 2000));
	EXPECT_EQ(PTL_EVENT_PUT_START, ev.type);
	ASSERT_EQ(PTL_OK, ptl_st_next(self->eq, &ev, 2000));
	EXPECT_EQ(PTL_EVENT_PUT_END, ev.type);
	EXPECT_EQ(100, ev.mlength);
	EXPECT_EQ(0xbeef, ev.hdr_data);
	EXPECT_EQ(PTL_EQ_EMPTY, PtlEQGet(self->eq, &ev));
	EXPECT_EQ(-1, ptl_st_check(self->buf, 100, 9, 0));
	EXPECT_EQ(PTL_MD_INVALID, PtlMDUnlink(smd));
}

/* ---- library state ---- */

TEST_F(api, every_call_is_no_init_after_fini)
{
	ptl_handle_ni_t ni;
	ptl_handle_me_t me;
	ptl_handle_md_t md;
	ptl_handle_eq_t eq = self->eq;
	ptl_process_id_t id;
	ptl_pt_index_t pt;
	ptl_sr_value_t v;
	ptl_event_t ev;
	unsigned long d;
	ptl_uid_t uid;
	ptl_jid_t jid;
	ptl_md_t m = ptl_st_md(self->buf, 8, 1, 0, PTL_EQ_NONE);
	int which;

	ASSERT_EQ(PTL_OK, PtlMEAttach(self->ni, PT, ptl_st_any(), 0, 0,
				      PTL_RETAIN, PTL_INS_AFTER, &me));
	ASSERT_EQ(PTL_OK, PtlMDBind(self->ni, m, PTL_RETAIN, &md));
	PtlFini();
	PtlFini();	/* no-op when not initialised */
	EXPECT_EQ(PTL_NO_INIT, PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, NULL,
					 NULL, &ni));
	EXPECT_EQ(PTL_NO_INIT, PtlNIFini(self->ni));
	EXPECT_EQ(PTL_NO_INIT, PtlNIStatus(self->ni, 0, &v));
	EXPECT_EQ(PTL_NO_INIT, PtlNIDist(self->ni, self->me, &d));
	EXPECT_EQ(PTL_NO_INIT, PtlNIHandle(me, &ni));
	EXPECT_EQ(PTL_NO_INIT, PtlGetUid(self->ni, &uid));
	EXPECT_EQ(PTL_NO_INIT, PtlGetId(self->ni, &id));
	EXPECT_EQ(PTL_NO_INIT, PtlGetJid(self->ni, &jid));
	EXPECT_EQ(PTL_NO_INIT, PtlMEAttach(self->ni, PT, ptl_st_any(), 0, 0,
					   PTL_RETAIN, PTL_INS_AFTER, &me));
	EXPECT_EQ(PTL_NO_INIT, PtlMEAttachAny(self->ni, &pt, ptl_st_any(), 0,
					      0, PTL_RETAIN, &me));
	EXPECT_EQ(PTL_NO_INIT, PtlMEInsert(me, ptl_st_any(), 0, 0, PTL_RETAIN,
					   PTL_INS_AFTER, &me));
	EXPECT_EQ(PTL_NO_INIT, PtlMEUnlink(me));
	EXPECT_EQ(PTL_NO_INIT, PtlMDAttach(me, m, PTL_RETAIN, &md));
	EXPECT_EQ(PTL_NO_INIT, PtlMDBind(self->ni, m, PTL_RETAIN, &md));
	EXPECT_EQ(PTL_NO_INIT, PtlMDUnlink(md));
	EXPECT_EQ(PTL_NO_INIT, PtlMDUpdate(md, &m, NULL, PTL_EQ_NONE));
	EXPECT_EQ(PTL_NO_INIT, PtlEQAlloc(self->ni, 4, PTL_EQ_HANDLER_NONE,
					  &eq));
	EXPECT_EQ(PTL_NO_INIT, PtlEQFree(self->eq));
	EXPECT_EQ(PTL_NO_INIT, PtlEQGet(self->eq, &ev));
	EXPECT_EQ(PTL_NO_INIT, PtlEQWait(self->eq, &ev));
	EXPECT_EQ(PTL_NO_INIT, PtlEQPoll(&eq, 1, 0, &ev, &which));
	EXPECT_EQ(PTL_NO_INIT, PtlACEntry(self->ni, 0, ptl_st_any(),
					  PTL_UID_ANY, PTL_JID_ANY,
					  PTL_PT_INDEX_ANY));
	EXPECT_EQ(PTL_NO_INIT, PtlPut(md, PTL_NO_ACK_REQ, self->me, PT, 0, 0,
				      0, 0));
	EXPECT_EQ(PTL_NO_INIT, PtlPutRegion(md, 0, 1, PTL_NO_ACK_REQ,
					    self->me, PT, 0, 0, 0, 0));
	EXPECT_EQ(PTL_NO_INIT, PtlGet(md, self->me, PT, 0, 0, 0));
	EXPECT_EQ(PTL_NO_INIT, PtlGetRegion(md, 0, 1, self->me, PT, 0, 0, 0));
	EXPECT_EQ(PTL_NO_INIT, PtlGetPut(md, md, self->me, PT, 0, 0, 0, 0));
}

TEST_F(api, ni_fini_releases_every_object_and_the_ni_reopens)
{
	ptl_handle_me_t me;
	ptl_handle_md_t md, bound;
	ptl_handle_ni_t ni;
	ptl_event_t ev;
	ptl_sr_value_t v;
	ptl_md_t old;

	ASSERT_EQ(PTL_OK, attach_md(self->ni, PT, self->buf, 64,
				    PTL_MD_OP_PUT, self->eq, &me, &md));
	ASSERT_EQ(PTL_OK, PtlMDBind(self->ni, ptl_st_md(self->buf, 64, 1, 0,
							self->eq),
				    PTL_RETAIN, &bound));
	ASSERT_EQ(PTL_OK, PtlNIFini(self->ni));
	EXPECT_EQ(PTL_ME_INVALID, PtlMEUnlink(me));
	EXPECT_EQ(PTL_MD_INVALID, PtlMDUnlink(md));
	EXPECT_EQ(PTL_MD_INVALID, PtlMDUpdate(bound, &old, NULL, PTL_EQ_NONE));
	EXPECT_EQ(PTL_EQ_INVALID, PtlEQGet(self->eq, &ev));
	ASSERT_EQ(PTL_OK, PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, NULL, NULL,
				    &ni));
	/* The new incarnation starts empty and old handles stay dead. */
	ASSERT_EQ(PTL_OK, PtlNIStatus(ni, PTL_SR_MES_CUR, &v));
	EXPECT_EQ(0, v);
	ASSERT_EQ(PTL_OK, PtlNIStatus(ni, PTL_SR_MDS_CUR, &v));
	EXPECT_EQ(0, v);
	EXPECT_EQ(PTL_MD_INVALID, PtlMDUnlink(bound));
	EXPECT_EQ(PTL_EQ_INVALID, PtlEQFree(self->eq));
}

TEST_HARNESS_MAIN
