// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mroce_verbs: small libibverbs checks for the verbs selftests.
 *
 *   mroce_verbs pd DEV [N]         allocate and free N PDs (default 64)
 *   mroce_verbs unsupported DEV    what the device does not implement (UD
 *                                  QPs, resizing CQs, memory windows) and
 *                                  malformed requests must fail
 *   mroce_verbs async DEV EVENT [SECONDS]
 *                                  allocate a PD, print "ready", then wait
 *                                  for the async event port_active or
 *                                  port_err (port 1) or device_fatal
 *
 * Exit status: 0 pass, 1 fail, 4 skip (kselftest convention).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#define KSFT_SKIP 4

static int fail(const char *what)
{
	fprintf(stderr, "FAIL: %s: %s\n", what, strerror(errno));
	return 1;
}

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list) {
		perror("ibv_get_device_list");
		return NULL;
	}
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			break;
	if (i == n) {
		fprintf(stderr, "device %s not found by libibverbs\n", name);
	} else {
		ctx = ibv_open_device(list[i]);
		if (!ctx)
			fprintf(stderr, "ibv_open_device(%s): %s\n", name,
				strerror(errno));
	}
	ibv_free_device_list(list);
	return ctx;
}

static int cmd_pd(struct ibv_context *ctx, int n)
{
	struct ibv_device_attr attr;
	struct ibv_pd **pds;
	int i, ret;

	ret = ibv_query_device(ctx, &attr);
	if (ret) {
		errno = ret;
		return fail("ibv_query_device");
	}
	printf("fw_ver %s max_pd %d vendor_id %u\n", attr.fw_ver, attr.max_pd,
	       attr.vendor_id);
	if (n > attr.max_pd) {
		fprintf(stderr, "FAIL: %d PDs exceed max_pd\n", n);
		return 1;
	}

	pds = calloc(n, sizeof(*pds));
	if (!pds)
		return fail("calloc");
	for (i = 0; i < n; i++) {
		pds[i] = ibv_alloc_pd(ctx);
		if (!pds[i])
			return fail("ibv_alloc_pd");
		if (i && pds[i]->handle == pds[i - 1]->handle) {
			fprintf(stderr, "FAIL: duplicate PD handle %u\n",
				pds[i]->handle);
			return 1;
		}
	}
	for (i = n - 1; i >= 0; i--) {
		ret = ibv_dealloc_pd(pds[i]);
		if (ret) {
			errno = ret;
			return fail("ibv_dealloc_pd");
		}
	}
	free(pds);
	printf("allocated and freed %d PDs\n", n);
	return 0;
}

/* A failing call must report a real errno, never success. */
static int expect_fail(const char *what, const void *obj, int err)
{
	if (obj) {
		fprintf(stderr, "FAIL: %s succeeded on a device without it\n",
			what);
		return 1;
	}
	printf("%s failed as expected: %s\n", what, strerror(err));
	return err ? 0 : 1;
}

/*
 * CREATE_CQ issued directly without room for the driver's response: the
 * kernel must refuse it (the provider always passes the room).
 */
static int raw_create_cq(struct ibv_context *ctx)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_create_cq core;
	} cmd = {};
	struct ib_uverbs_create_cq_resp resp = {};

	cmd.hdr.command = IB_USER_VERBS_CMD_CREATE_CQ;
	cmd.hdr.in_words = sizeof(cmd) / 4;
	cmd.hdr.out_words = sizeof(resp) / 4;
	cmd.core.response = (uintptr_t)&resp;
	cmd.core.cqe = 16;
	cmd.core.comp_channel = -1;
	if (write(ctx->cmd_fd, &cmd, sizeof(cmd)) >= 0) {
		fprintf(stderr, "FAIL: kernel accepted CREATE_CQ without a response buffer\n");
		return 1;
	}
	printf("kernel CREATE_CQ without response room failed as expected: %s\n",
	       strerror(errno));
	return 0;
}

/* What the device does not implement must fail with an errno. */
static int cmd_unsupported(struct ibv_context *ctx)
{
	struct ibv_qp_init_attr qpa = {};
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mw *mw;
	struct ibv_pd *pd;
	void *map;
	int bad = 0;

	pd = ibv_alloc_pd(ctx);
	if (!pd)
		return fail("ibv_alloc_pd");
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!cq)
		return fail("ibv_create_cq");

	qpa.send_cq = cq;
	qpa.recv_cq = cq;
	qpa.qp_type = IBV_QPT_UD;
	qpa.cap.max_send_wr = 1;
	qpa.cap.max_recv_wr = 1;
	qpa.cap.max_send_sge = 1;
	qpa.cap.max_recv_sge = 1;
	errno = 0;
	qp = ibv_create_qp(pd, &qpa);
	bad |= expect_fail("ibv_create_qp(UD)", qp, errno);
	if (qp)
		ibv_destroy_qp(qp);

	errno = ibv_resize_cq(cq, 64);
	bad |= expect_fail("ibv_resize_cq", errno ? NULL : cq, errno);

	errno = 0;
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	bad |= expect_fail("ibv_alloc_mw", mw, errno);
	if (mw)
		ibv_dealloc_mw(mw);

	bad |= raw_create_cq(ctx);

	/* An offset the kernel never handed out maps nothing. */
	map = mmap(NULL, 4096, PROT_READ, MAP_SHARED, ctx->cmd_fd,
		   (off_t)4096 * 12345);
	if (map != MAP_FAILED) {
		fprintf(stderr, "FAIL: mmap of an unknown offset succeeded\n");
		munmap(map, 4096);
		bad = 1;
	} else {
		printf("mmap of an unknown offset failed as expected: %s\n",
		       strerror(errno));
	}

	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	return bad;
}

static int cmd_async(struct ibv_context *ctx, const char *event, int seconds)
{
	enum ibv_event_type want;
	struct ibv_async_event ev;
	struct pollfd pfd;
	struct ibv_pd *pd;
	int ret;

	if (!strcmp(event, "port_active")) {
		want = IBV_EVENT_PORT_ACTIVE;
	} else if (!strcmp(event, "port_err")) {
		want = IBV_EVENT_PORT_ERR;
	} else if (!strcmp(event, "device_fatal")) {
		want = IBV_EVENT_DEVICE_FATAL;
	} else {
		fprintf(stderr, "unknown event %s\n", event);
		return 1;
	}

	/* Hold a resource, so that device removal has something to undo. */
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		return fail("ibv_alloc_pd");

	pfd.fd = ctx->async_fd;
	pfd.events = POLLIN;
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		ret = poll(&pfd, 1, seconds * 1000);
		if (ret < 0)
			return fail("poll");
		if (!ret) {
			fprintf(stderr, "FAIL: no %s within %d s\n", event,
				seconds);
			return 1;
		}
		if (ibv_get_async_event(ctx, &ev))
			return fail("ibv_get_async_event");
		printf("event %s port %d\n", ibv_event_type_str(ev.event_type),
		       ev.element.port_num);
		fflush(stdout);
		ibv_ack_async_event(&ev);
		if (ev.event_type == want &&
		    (want == IBV_EVENT_DEVICE_FATAL ||
		     ev.element.port_num == 1))
			break;
	}

	/* After DEVICE_FATAL the kernel object is already gone (EIO). */
	ret = ibv_dealloc_pd(pd);
	if (ret && want != IBV_EVENT_DEVICE_FATAL) {
		errno = ret;
		return fail("ibv_dealloc_pd");
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	int ret;

	if (argc < 3) {
		fprintf(stderr,
			"usage: %s pd|unsupported|async DEV [args]\n", argv[0]);
		return 1;
	}
	ctx = open_dev(argv[2]);
	if (!ctx)
		return 1;

	if (!strcmp(argv[1], "pd"))
		ret = cmd_pd(ctx, argc > 3 ? atoi(argv[3]) : 64);
	else if (!strcmp(argv[1], "unsupported"))
		ret = cmd_unsupported(ctx);
	else if (!strcmp(argv[1], "async") && argc > 3)
		ret = cmd_async(ctx, argv[3], argc > 4 ? atoi(argv[4]) : 10);
	else
		ret = 1;

	if (ibv_close_device(ctx))
		ret = fail("ibv_close_device");
	return ret;
}
