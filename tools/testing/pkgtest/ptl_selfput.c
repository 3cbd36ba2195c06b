// SPDX-License-Identifier: BSD-3-Clause
/*
 * The program tools/testing/check-packages compiles inside a root with the
 * packages installed (cc ... $(pkg-config --cflags --libs ptl-user)) and
 * runs in a guest on the DKMS-built ptl.ko: PtlInit, PtlNIInit, an ME and
 * MD on portal 4, a put to itself, PUT_END and SEND_END, the bytes arrived.
 */
#include <p3nal_linux.h>
#include <portals3.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(const char *what, int rc)
{
	if (rc == PTL_OK)
		return;
	fprintf(stderr, "ptl_selfput: %s failed: %s\n", what, PtlErrorStr(rc));
	exit(1);
}

int main(void)
{
	static const char msg[] = "hello from the packaged libptl-user";
	char dst[64] = { 0 };
	ptl_process_id_t me, any = { PTL_NID_ANY, PTL_PID_ANY };
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_handle_me_t meh;
	ptl_handle_md_t tmd, smd;
	ptl_event_t ev;
	int max_ifaces, got_put = 0, got_send = 0;

	check("PtlInit", PtlInit(&max_ifaces));
	check("PtlNIInit", PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, NULL, NULL, &ni));
	check("PtlGetId", PtlGetId(ni, &me));
	check("PtlEQAlloc", PtlEQAlloc(ni, 16, PTL_EQ_HANDLER_NONE, &eq));
	check("PtlMEAttach", PtlMEAttach(ni, 4, any, 0x1, 0, PTL_UNLINK,
					 PTL_INS_AFTER, &meh));
	ptl_md_t target = {
		.start = dst, .length = sizeof(dst), .threshold = 1,
		.options = PTL_MD_OP_PUT, .eq_handle = eq,
	};
	check("PtlMDAttach", PtlMDAttach(meh, target, PTL_UNLINK, &tmd));
	ptl_md_t source = {
		.start = (void *)msg, .length = sizeof(msg), .threshold = 1,
		.eq_handle = eq,
	};
	check("PtlMDBind", PtlMDBind(ni, source, PTL_UNLINK, &smd));
	check("PtlPut", PtlPut(smd, PTL_NOACK_REQ, me, 4, 0, 0x1, 0, 0));
	while (!got_put || !got_send) {
		check("PtlEQWait", PtlEQWait(eq, &ev));
		if (ev.ni_fail_type != PTL_NI_OK) {
			fprintf(stderr, "ptl_selfput: event %s failed\n",
				PtlEventKindStr(ev.type));
			return 1;
		}
		got_put |= ev.type == PTL_EVENT_PUT_END;
		got_send |= ev.type == PTL_EVENT_SEND_END;
	}
	if (strcmp(dst, msg) != 0) {
		fprintf(stderr, "ptl_selfput: received \"%s\"\n", dst);
		return 1;
	}
	printf("ptl_selfput: nid %u pid %u put %zu bytes to itself: \"%s\"\n",
	       me.nid, me.pid, sizeof(msg), dst);
	check("PtlEQFree", PtlEQFree(eq));
	check("PtlNIFini", PtlNIFini(ni));
	PtlFini();
	return 0;
}
