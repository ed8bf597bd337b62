// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic_hostile: a hostile user of librnic, for the lab (issue 21, "hostile
 * userspace"; Documentation/rnic-provider.rst, "rnic_hostile").
 *
 * A libibverbs program on Debian's own libibverbs and the installed
 * provider that reaches, through providers/rnic/rnic.h (built from the same
 * sources, so the layout matches), the provider's structs behind its
 * ibv_qp and ibv_cq, and writes into its own rings and doorbell pages what
 * the provider never would. The hardware contract (hardware-rdma.rst,
 * "User contexts", "Error handling (2.0)") says what must follow: only the
 * queue that got the bad value fails, with a CQE or an event; nothing else
 * of this process, of another process or of the kernel notices.
 *
 * Two QPs of one process talk RC through the NIC itself: each is moved to
 * RTR with the port's own GID as destination, ib_core resolves the port's
 * own MAC, and the device loops the frames back (hardware-transport.rst,
 * "Loopback"). One mode per run; each prints "hostile MODE: ok ..." or
 * "hostile MODE: FAIL ..." last and exits 0 or 1 (2: usage). Every wait
 * has a timeout (-T).
 *
 *   bad-wqe   malformed WQEs into its own SQ, one RC pair each
 *   bad-db    kick entries naming slots that are no queue's, bad slot values
 *   bad-mr    ibv_reg_mr over unmapped, wild, read-only and partial ranges
 *   killed    a child SIGKILLed with WRITEs and SENDs in flight
 *   bad-kick  any value to the kick register (when it is mapped)
 *   traffic   verified transfers for -t seconds: the bystander to run in
 *             another process while the others run
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <util/mmio.h>
#include <util/udma_barrier.h>

#include "rnic.h"

#define XFER		8192		/* bytes of one WRITE and one SEND */
#define BUF_LEN		(4 * XFER)	/* per side: write src, write dst, recv dst, send src */
#define OFF_WSRC	0
#define OFF_WDST	XFER
#define OFF_RDST	(2 * XFER)
#define OFF_SSRC	(3 * XFER)
#define QP_WR		32
#define CQ_DEPTH	(2 * QP_WR + 8)
#define MAX_PAIRS	64
#define MAX_EVENTS	256

#define WRID_BAD	0xbadbadULL
#define WRID_GOOD	0x600dULL

static struct {
	const char *dev;
	int port;
	int gid_index;
	int timeout_ms;
	int seconds;
	int kill_ms;
} opt = { "rnic0", 1, -1, 10000, 10, 1000 };

static const char *mode_name;
static const char *skipped;
static char fail_why[512];
static int failures;

/* The first failure is the one the result line gives; all are printed */
static void __attribute__((format(printf, 1, 2))) fail(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	printf("  FAIL: %s\n", msg);
	fflush(stdout);
	if (!failures++)
		snprintf(fail_why, sizeof(fail_why), "%s", msg);
}

static void __attribute__((format(printf, 1, 2))) note(const char *fmt, ...)
{
	va_list ap;

	printf("  ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void nap_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------------------
 * The device, its async events, its counters
 */

/* An object by its number, which the device does not reuse soon (cyclic) */
#define ID_QP		(1ULL << 32)
#define ID_CQ		(2ULL << 32)

struct ev {
	enum ibv_event_type type;
	uint64_t id;		/* ID_QP | QPN, ID_CQ | CQN, or 0 */
};

struct dev {
	struct ibv_context *ctx;
	struct rnic_context *rctx;
	struct ibv_pd *pd;
	union ibv_gid gid;
	int gid_index;
	enum ibv_mtu mtu;
	/*
	 * Async events, read and acked by a thread of their own: destroying
	 * a QP or CQ waits until its events were acked.
	 */
	pthread_t ev_thread;
	bool ev_running;
	volatile bool ev_stop;
	pthread_mutex_t ev_lock;
	struct ev ev[MAX_EVENTS];
	int nev;
	struct pair *pairs[MAX_PAIRS];	/* alive, for the slots in use */
	/* attacked on purpose: their error events are expected */
	uint64_t victims[2 * MAX_PAIRS];
	int nvictims;
};

static void *events_thread(void *arg);

/*
 * How well a GID serves loopback: the port's own IPv4 address as RoCE v2
 * is best (ib_core resolves a local address to the port's own MAC), then
 * any other routable one; a link-local GID last, since its MAC is derived
 * from the interface id, which is the port's MAC only for an EUI-64
 * address.
 */
static int gid_rank(struct dev *d, int i, const union ibv_gid *g)
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };
	char path[256], type[32] = "";
	bool v2 = false;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%d/gid_attrs/types/%d",
		 ibv_get_device_name(d->ctx->device), opt.port, i);
	f = fopen(path, "r");
	if (f) {
		v2 = fgets(type, sizeof(type), f) && !strncmp(type, "RoCE v2", 7);
		fclose(f);
	}
	if (g->raw[0] == 0xfe && (g->raw[1] & 0xc0) == 0x80)
		return 1;
	if (!memcmp(g->raw, v4mapped, sizeof(v4mapped)))
		return v2 ? 4 : 3;
	return v2 ? 3 : 2;
}

/* A GID of the port: -g, else the best for loopback (gid_rank()) */
static int pick_gid(struct dev *d)
{
	struct ibv_port_attr pa;
	union ibv_gid g;
	int i, r, best = -1, best_rank = 0;

	if (ibv_query_port(d->ctx, opt.port, &pa)) {
		fail("ibv_query_port %s/%d: %s", opt.dev, opt.port, strerror(errno));
		return -1;
	}
	d->mtu = pa.active_mtu;
	if (pa.state != IBV_PORT_ACTIVE)
		note("port %d is %s, not ACTIVE", opt.port, ibv_port_state_str(pa.state));
	for (i = opt.gid_index >= 0 ? opt.gid_index : 0; i < pa.gid_tbl_len; i++) {
		if (ibv_query_gid(d->ctx, opt.port, i, &g))
			continue;
		if (!g.global.subnet_prefix && !g.global.interface_id)
			continue;
		r = opt.gid_index >= 0 ? 4 : gid_rank(d, i, &g);
		if (r > best_rank) {
			best = i;
			best_rank = r;
			d->gid = g;
		}
		if (opt.gid_index >= 0 || r == 4)
			break;
	}
	if (best < 0 || (opt.gid_index >= 0 && best != opt.gid_index)) {
		fail("%s port %d: no GID%s", opt.dev, opt.port,
		     opt.gid_index >= 0 ? " at -g" : " set");
		return -1;
	}
	d->gid_index = best;
	return 0;
}

static int dev_open(struct dev *d)
{
	const struct verbs_device_ops *ops;
	struct ibv_device **list;
	int i, n, fl;

	memset(d, 0, sizeof(*d));
	list = ibv_get_device_list(&n);
	if (!list) {
		fail("ibv_get_device_list: %s", strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), opt.dev))
			break;
	if (i == n) {
		fail("no verbs device %s (is librnic installed?)", opt.dev);
		ibv_free_device_list(list);
		return -1;
	}
	d->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!d->ctx) {
		fail("ibv_open_device %s: %s", opt.dev, strerror(errno));
		return -1;
	}
	/* the provider's own context: only if librnic drives the device */
	ops = verbs_get_device(d->ctx->device)->ops;
	if (!ops || !ops->name || strcmp(ops->name, "rnic")) {
		fail("%s is not driven by librnic (provider %s)", opt.dev,
		     ops && ops->name ? ops->name : "?");
		ibv_close_device(d->ctx);
		d->ctx = NULL;
		return -1;
	}
	d->rctx = to_rctx(d->ctx);
	if (d->rctx->db_page_size != RNIC_DBP_SIZE) {
		fail("%s: doorbell pages of %u bytes: not the librnic of this build",
		     opt.dev, d->rctx->db_page_size);
		ibv_close_device(d->ctx);
		d->ctx = NULL;
		return -1;
	}
	fl = fcntl(d->ctx->async_fd, F_GETFL);
	if (fl < 0 || fcntl(d->ctx->async_fd, F_SETFL, fl | O_NONBLOCK)) {
		fail("async fd: %s", strerror(errno));
		return -1;
	}
	pthread_mutex_init(&d->ev_lock, NULL);
	if (pthread_create(&d->ev_thread, NULL, events_thread, d)) {
		fail("pthread_create");
		return -1;
	}
	d->ev_running = true;
	if (pick_gid(d))
		return -1;
	d->pd = ibv_alloc_pd(d->ctx);
	if (!d->pd) {
		fail("ibv_alloc_pd: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* The async event reader: every event is kept in d->ev and acked */
static void *events_thread(void *arg)
{
	struct dev *d = arg;
	struct ibv_async_event e;
	struct pollfd p = { .fd = d->ctx->async_fd, .events = POLLIN };
	uint64_t id;

	while (!d->ev_stop) {
		if (poll(&p, 1, 50) <= 0 || ibv_get_async_event(d->ctx, &e))
			continue;
		switch (e.event_type) {
		case IBV_EVENT_CQ_ERR:
			id = ID_CQ | to_rcq(e.element.cq)->cqn;
			break;
		case IBV_EVENT_QP_FATAL:
		case IBV_EVENT_QP_REQ_ERR:
		case IBV_EVENT_QP_ACCESS_ERR:
		case IBV_EVENT_COMM_EST:
		case IBV_EVENT_SQ_DRAINED:
		case IBV_EVENT_PATH_MIG:
		case IBV_EVENT_PATH_MIG_ERR:
		case IBV_EVENT_QP_LAST_WQE_REACHED:
			id = ID_QP | e.element.qp->qp_num;
			break;
		default:
			id = 0;
			break;
		}
		pthread_mutex_lock(&d->ev_lock);
		if (d->nev < MAX_EVENTS) {
			d->ev[d->nev].type = e.event_type;
			d->ev[d->nev].id = id;
			d->nev++;
		}
		pthread_mutex_unlock(&d->ev_lock);
		note("async event: %s %s %u", ibv_event_type_str(e.event_type),
		     (id >> 32) == 1 ? "QP" : (id >> 32) == 2 ? "CQ" : "",
		     (uint32_t)id);
		ibv_ack_async_event(&e);
	}
	return NULL;
}

static uint64_t qp_id(struct ibv_qp *qp)
{
	return ID_QP | qp->qp_num;
}

static uint64_t cq_id(struct ibv_cq *cq)
{
	return ID_CQ | to_rcq(cq)->cqn;
}

static void victim(struct dev *d, uint64_t id)
{
	if (d->nvictims < (int)ARRAY_SIZE(d->victims))
		d->victims[d->nvictims++] = id;
}

static bool event_seen(struct dev *d, enum ibv_event_type type, uint64_t id)
{
	bool seen = false;
	int i;

	pthread_mutex_lock(&d->ev_lock);
	for (i = 0; i < d->nev && !seen; i++)
		seen = d->ev[i].type == type && d->ev[i].id == id;
	pthread_mutex_unlock(&d->ev_lock);
	return seen;
}

/* Wait up to -T for @type on @obj */
static bool event_wait(struct dev *d, enum ibv_event_type type, uint64_t id)
{
	int64_t end = now_ms() + opt.timeout_ms;

	while (!event_seen(d, type, id)) {
		if (now_ms() >= end)
			return false;
		nap_us(1000);
	}
	return true;
}

static bool is_victim(struct dev *d, uint64_t id)
{
	int i;

	for (i = 0; i < d->nvictims; i++)
		if (d->victims[i] == id)
			return true;
	return false;
}

/* An error event on an object not attacked: something leaked across */
static void events_check(struct dev *d)
{
	int i;

	/* what is under way arrives within a short while */
	nap_us(100000);
	pthread_mutex_lock(&d->ev_lock);
	for (i = 0; i < d->nev; i++) {
		switch (d->ev[i].type) {
		case IBV_EVENT_CQ_ERR:
		case IBV_EVENT_QP_FATAL:
		case IBV_EVENT_QP_REQ_ERR:
		case IBV_EVENT_QP_ACCESS_ERR:
			if (!is_victim(d, d->ev[i].id))
				fail("%s on %s %u, which was not attacked",
				     ibv_event_type_str(d->ev[i].type),
				     (d->ev[i].id >> 32) == 1 ? "QP" : "CQ",
				     (uint32_t)d->ev[i].id);
			break;
		case IBV_EVENT_DEVICE_FATAL:
			fail("IBV_EVENT_DEVICE_FATAL");
			break;
		default:
			break;
		}
	}
	pthread_mutex_unlock(&d->ev_lock);
}

/* A port counter (rdma statistic show link DEV/PORT), or -1 */
static long long counter(const char *name)
{
	char path[256];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%d/hw_counters/%s",
		 opt.dev, opt.port, name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* ------------------------------------------------------------------------
 * RC pairs in loopback and verified transfers
 */

struct pair {
	struct dev *d;
	struct ibv_cq *cq[2];
	struct ibv_qp *qp[2];
	struct ibv_mr *mr[2];
	uint8_t *buf[2];
};

static uint8_t pat_byte(uint32_t seed, uint32_t i)
{
	uint32_t x = seed * 0x9e3779b1U ^ (i + 1) * 0x85ebca77U;

	x ^= x >> 15;
	x *= 0x2c1b3c6dU;
	x ^= x >> 12;
	return (uint8_t)x;
}

static void pat_fill(uint8_t *p, size_t len, uint32_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pat_byte(seed, (uint32_t)i);
}

static size_t pat_bad(const uint8_t *p, size_t len, uint32_t seed)
{
	size_t i, bad = 0;

	for (i = 0; i < len; i++)
		bad += p[i] != pat_byte(seed, (uint32_t)i);
	return bad;
}

static int qp_connect(struct dev *d, struct ibv_qp *qp, uint32_t dest)
{
	struct ibv_qp_attr a;
	int err;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = opt.port;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ;
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = d->mtu < IBV_MTU_1024 ? d->mtu : IBV_MTU_1024;
	a.dest_qp_num = dest;
	a.rq_psn = 0x100;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = d->gid;
	a.ah_attr.grh.sgid_index = d->gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = opt.port;
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 16;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 0x100;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static void pair_destroy(struct pair *p)
{
	struct dev *d;
	int i;

	if (!p)
		return;
	d = p->d;
	for (i = 0; i < MAX_PAIRS; i++)
		if (d->pairs[i] == p)
			d->pairs[i] = NULL;
	for (i = 0; i < 2; i++) {
		if (p->qp[i] && ibv_destroy_qp(p->qp[i]))
			fail("ibv_destroy_qp: %s", strerror(errno));
		p->qp[i] = NULL;
	}
	for (i = 0; i < 2; i++) {
		if (p->cq[i] && ibv_destroy_cq(p->cq[i]))
			fail("ibv_destroy_cq: %s", strerror(errno));
		if (p->mr[i] && ibv_dereg_mr(p->mr[i]))
			fail("ibv_dereg_mr: %s", strerror(errno));
		free(p->buf[i]);
	}
	free(p);
}

/* Two RC QPs of @d connected to each other, each with its own CQ */
static struct pair *pair_create(struct dev *d)
{
	struct ibv_qp_init_attr init;
	struct pair *p = calloc(1, sizeof(*p));
	int i, err;

	if (!p) {
		fail("out of memory");
		return NULL;
	}
	p->d = d;
	for (i = 0; i < MAX_PAIRS; i++) {
		if (!d->pairs[i]) {
			d->pairs[i] = p;
			break;
		}
	}
	for (i = 0; i < 2; i++) {
		if (posix_memalign((void **)&p->buf[i], 4096, BUF_LEN)) {
			fail("out of memory");
			goto err;
		}
		memset(p->buf[i], 0, BUF_LEN);
		p->mr[i] = ibv_reg_mr(d->pd, p->buf[i], BUF_LEN,
				      IBV_ACCESS_LOCAL_WRITE |
				      IBV_ACCESS_REMOTE_WRITE |
				      IBV_ACCESS_REMOTE_READ);
		if (!p->mr[i]) {
			fail("ibv_reg_mr: %s", strerror(errno));
			goto err;
		}
		p->cq[i] = ibv_create_cq(d->ctx, CQ_DEPTH, NULL, NULL, 0);
		if (!p->cq[i]) {
			fail("ibv_create_cq: %s", strerror(errno));
			goto err;
		}
		memset(&init, 0, sizeof(init));
		init.send_cq = p->cq[i];
		init.recv_cq = p->cq[i];
		init.qp_type = IBV_QPT_RC;
		init.cap.max_send_wr = QP_WR;
		init.cap.max_recv_wr = QP_WR;
		init.cap.max_send_sge = 2;
		init.cap.max_recv_sge = 2;
		p->qp[i] = ibv_create_qp(d->pd, &init);
		if (!p->qp[i]) {
			fail("ibv_create_qp: %s", strerror(errno));
			goto err;
		}
	}
	for (i = 0; i < 2; i++) {
		err = qp_connect(d, p->qp[i], p->qp[!i]->qp_num);
		if (err) {
			fail("QP %u to RTS (loopback, GID index %d): %s",
			     p->qp[i]->qp_num, d->gid_index, strerror(err));
			goto err;
		}
	}
	return p;
err:
	pair_destroy(p);
	return NULL;
}

/*
 * Up to @n completions of @cq into @wc within -T. Return: how many.
 */
static int cq_wait(struct ibv_cq *cq, struct ibv_wc *wc, int n)
{
	int64_t end = now_ms() + opt.timeout_ms;
	int got = 0, r;

	while (got < n) {
		r = ibv_poll_cq(cq, n - got, wc + got);
		if (r < 0) {
			fail("ibv_poll_cq: %d", r);
			return got;
		}
		got += r;
		if (got < n) {
			if (now_ms() >= end)
				break;
			if (!r)
				nap_us(100);
		}
	}
	return got;
}

static int post_recv(struct pair *p, int side, uint64_t wrid)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)p->buf[side] + OFF_RDST,
		.length = XFER,
		.lkey = p->mr[side]->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = wrid, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(p->qp[side], &wr, &bad);
}

/* A WRITE then a SEND from side @s to the other, both checked, byte by byte */
static bool xfer(struct pair *p, int s, uint32_t seed, const char *what)
{
	int t = !s, n, err;
	struct ibv_sge ws = {
		.addr = (uintptr_t)p->buf[s] + OFF_WSRC, .length = XFER,
		.lkey = p->mr[s]->lkey,
	};
	struct ibv_sge ss = {
		.addr = (uintptr_t)p->buf[s] + OFF_SSRC, .length = XFER,
		.lkey = p->mr[s]->lkey,
	};
	struct ibv_send_wr send = {
		.wr_id = 2, .sg_list = &ss, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr write = {
		.wr_id = 1, .next = &send, .sg_list = &ws, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;
	struct ibv_wc wc[2];
	size_t b1, b2;

	write.wr.rdma.remote_addr = (uintptr_t)p->buf[t] + OFF_WDST;
	write.wr.rdma.rkey = p->mr[t]->rkey;
	pat_fill(p->buf[s] + OFF_WSRC, XFER, seed * 2);
	pat_fill(p->buf[s] + OFF_SSRC, XFER, seed * 2 + 1);
	memset(p->buf[t] + OFF_WDST, 0, 2 * XFER);
	err = post_recv(p, t, 3);
	if (!err)
		err = ibv_post_send(p->qp[s], &write, &bad);
	if (err) {
		fail("%s: post: %s", what, strerror(err));
		return false;
	}
	n = cq_wait(p->cq[s], wc, 2);
	if (n < 2) {
		fail("%s: %d of 2 send completions within %d ms", what, n, opt.timeout_ms);
		return false;
	}
	if (wc[0].status || wc[1].status) {
		fail("%s: send completions %s, %s", what,
		     ibv_wc_status_str(wc[0].status), ibv_wc_status_str(wc[1].status));
		return false;
	}
	n = cq_wait(p->cq[t], wc, 1);
	if (n < 1) {
		fail("%s: no receive completion within %d ms", what, opt.timeout_ms);
		return false;
	}
	if (wc[0].status || wc[0].byte_len != XFER) {
		fail("%s: receive completion %s, %u bytes", what,
		     ibv_wc_status_str(wc[0].status), wc[0].byte_len);
		return false;
	}
	b1 = pat_bad(p->buf[t] + OFF_WDST, XFER, seed * 2);
	b2 = pat_bad(p->buf[t] + OFF_RDST, XFER, seed * 2 + 1);
	if (b1 || b2) {
		fail("%s: %zu bytes of the WRITE and %zu of the SEND differ", what, b1, b2);
		return false;
	}
	return true;
}

static void dev_close(struct dev *d)
{
	int i;

	for (i = 0; i < MAX_PAIRS; i++)
		pair_destroy(d->pairs[i]);
	if (d->pd && ibv_dealloc_pd(d->pd))
		fail("ibv_dealloc_pd: %s", strerror(errno));
	d->pd = NULL;
	if (d->ev_running) {
		d->ev_stop = true;
		pthread_join(d->ev_thread, NULL);
		d->ev_running = false;
	}
	if (d->ctx && ibv_close_device(d->ctx))
		fail("ibv_close_device: %s", strerror(errno));
	d->ctx = NULL;
}

/* Transfers both ways on a new pair of a new context, then all closed */
static bool fresh_check(const char *what)
{
	int f0 = failures;
	struct pair *p;
	struct dev d;

	if (!dev_open(&d)) {
		p = pair_create(&d);
		if (p && xfer(p, 0, 0x5eed0001, what))
			xfer(p, 1, 0x5eed0002, what);
		pair_destroy(p);
		events_check(&d);
	}
	dev_close(&d);
	if (failures != f0)
		return false;
	note("%s: verified both ways", what);
	return true;
}

/* ------------------------------------------------------------------------
 * Writing into our own rings and doorbell pages, as the provider would not
 */

/* The kick through the kernel (no kick mapping): as rnic_db.c asks */
static int kernel_kick_qp(struct ibv_qp *qp, bool recv)
{
	struct ib_uverbs_post_send_resp sresp;
	struct ib_uverbs_post_recv_resp rresp;
	struct ibv_post_send scmd;
	struct ibv_post_recv rcmd;
	ssize_t r;

	if (!recv) {
		memset(&scmd, 0, sizeof(scmd));
		scmd.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
		scmd.hdr.in_words = sizeof(scmd) / 4;
		scmd.hdr.out_words = sizeof(sresp) / 4;
		scmd.response = (uintptr_t)&sresp;
		scmd.qp_handle = qp->handle;
		scmd.wqe_size = sizeof(struct ibv_send_wr);
		r = write(qp->context->cmd_fd, &scmd, sizeof(scmd));
		return r == sizeof(scmd) ? 0 : errno;
	}
	memset(&rcmd, 0, sizeof(rcmd));
	rcmd.hdr.command = IB_USER_VERBS_CMD_POST_RECV;
	rcmd.hdr.in_words = sizeof(rcmd) / 4;
	rcmd.hdr.out_words = sizeof(rresp) / 4;
	rcmd.response = (uintptr_t)&rresp;
	rcmd.qp_handle = qp->handle;
	rcmd.wqe_size = sizeof(struct ibv_recv_wr);
	r = write(qp->context->cmd_fd, &rcmd, sizeof(rcmd));
	return r == sizeof(rcmd) ? 0 : errno;
}

static int kernel_kick_cq(struct ibv_cq *cq)
{
	struct ibv_req_notify_cq cmd;
	ssize_t r;

	memset(&cmd, 0, sizeof(cmd));
	cmd.hdr.command = IB_USER_VERBS_CMD_REQ_NOTIFY_CQ;
	cmd.hdr.in_words = sizeof(cmd) / 4;
	cmd.cq_handle = cq->handle;
	r = write(cq->context->cmd_fd, &cmd, sizeof(cmd));
	return r == sizeof(cmd) ? 0 : errno;
}

static volatile uint8_t *dbp_va(struct rnic_dbp *dbp)
{
	return (volatile uint8_t *)dbp->va;
}

/*
 * Kick entries @e[0..n) into @dbp's kick ring after the provider's own,
 * kick_pi, the kick: with the kick register mapped only. The page's lock
 * keeps the provider's kick_pi ours too.
 */
static void kick_entries(struct rnic_context *rc, struct rnic_dbp *dbp,
			 const uint16_t *e, unsigned int n)
{
	uint8_t *page = (uint8_t *)dbp->va;
	unsigned int i;

	pthread_spin_lock(&dbp->lock);
	for (i = 0; i < n; i++) {
		mmio_write16_le(page + offsetof(struct rnic_db_page, kick) +
				(dbp->kick_pi % RNIC_DBP_KICK_DEPTH) * 2,
				htole16(e[i]));
		dbp->kick_pi++;
	}
	mmio_flush_writes();
	mmio_write32_le(page + offsetof(struct rnic_db_page, kick_pi),
			htole32(dbp->kick_pi));
	mmio_flush_writes();
	mmio_write32_le(rc->kick_reg, htole32(rc->kick));
	pthread_spin_unlock(&dbp->lock);
}

/* kick_ci, which the device writes for the writer's information */
static uint16_t kick_ci(struct rnic_dbp *dbp)
{
	return le32toh(*(volatile __le32 *)(dbp_va(dbp) +
		offsetof(struct rnic_db_page, kick_ci))) & 0xffff;
}

/* Until the device consumed the kick ring up to @pi */
static bool kick_drained(struct rnic_dbp *dbp, uint16_t pi)
{
	int64_t end = now_ms() + opt.timeout_ms;

	while (kick_ci(dbp) != pi) {
		if (now_ms() >= end)
			return false;
		nap_us(200);
	}
	return true;
}

/* A slot value, named and kicked however this context kicks */
static int slot_ring(struct dev *d, struct rnic_dbp *dbp, uint16_t off,
		     uint32_t val, struct ibv_qp *qp, bool recv, struct ibv_cq *cq)
{
	uint16_t e = off / 4;

	udma_to_device_barrier();
	mmio_write32_le((uint8_t *)dbp->va + off, htole32(val));
	if (d->rctx->kick_reg) {
		kick_entries(d->rctx, dbp, &e, 1);
		return 0;
	}
	return qp ? kernel_kick_qp(qp, recv) : kernel_kick_cq(cq);
}

/*
 * @wqe (a whole WQE of the SQ's size) into the next SQ entry as if posted,
 * wr_id @wrid, and the doorbell rung.
 */
static int raw_post(struct dev *d, struct ibv_qp *ibqp, const void *wqe,
		    uint64_t wrid)
{
	struct rnic_qp *qp = to_rqp(ibqp);
	struct rnic_wq *sq = &qp->sq;
	uint32_t depth = 1U << sq->log2_depth;
	uint16_t e;
	int err = 0;

	pthread_spin_lock(&sq->lock);
	memcpy((uint8_t *)sq->ring + ((size_t)(sq->pi & (depth - 1)) << sq->wqe_log2),
	       wqe, (size_t)1 << sq->wqe_log2);
	sq->wrid[sq->pi & (depth - 1)] = wrid;
	sq->pi++;
	udma_to_device_barrier();
	mmio_write32_le((uint8_t *)sq->dbp->va + sq->db_off, htole32(sq->pi));
	if (d->rctx->kick_reg) {
		e = sq->db_off / 4;
		kick_entries(d->rctx, sq->dbp, &e, 1);
	}
	pthread_spin_unlock(&sq->lock);
	if (!d->rctx->kick_reg)
		err = kernel_kick_qp(ibqp, false);
	return err;
}

/* ------------------------------------------------------------------------
 * bad-wqe
 */

enum bw_case {
	BW_CONTROL,		/* a well-formed SEND, written raw: the writer works */
	BW_OPCODE,
	BW_NUM_SGE,
	BW_FLAGS,
	BW_RESERVED,
	BW_LENGTH,
	BW_INLINE_LEN,
	BW_LKEY_WILD,
	BW_LKEY_ZERO,
	BW_LKEY_OTHER_PD,
	BW_SGE_OOB,
	BW_RKEY_OTHER_PD,
	BW_REG_MR,
	BW_LOCAL_INV,
	BW_GARBAGE,
	BW_NUM
};

static const char *const bw_names[BW_NUM] = {
	[BW_CONTROL] = "control (well-formed SEND, written raw)",
	[BW_OPCODE] = "unknown opcode 0x3f",
	[BW_NUM_SGE] = "num_sge 255",
	[BW_FLAGS] = "undefined flags",
	[BW_RESERVED] = "reserved bytes set",
	[BW_LENGTH] = "length not the SGE sum",
	[BW_INLINE_LEN] = "inline length beyond the WQE",
	[BW_LKEY_WILD] = "lkey 0xffffff00 (not ours)",
	[BW_LKEY_ZERO] = "lkey 0",
	[BW_LKEY_OTHER_PD] = "lkey of an MR of another PD",
	[BW_SGE_OOB] = "SGE past the end of its MR",
	[BW_RKEY_OTHER_PD] = "WRITE with an rkey of another PD",
	[BW_REG_MR] = "REG_MR (privileged) over guest-physical page 0x1000",
	[BW_LOCAL_INV] = "LOCAL_INV of our own MR",
	[BW_GARBAGE] = "every byte 0xa5",
};

static void bw_build(enum bw_case c, struct pair *p, struct ibv_mr *other,
		     uint8_t *w, size_t size)
{
	struct rnic_sqe *sqe = (struct rnic_sqe *)w;
	struct rnic_data_sge *sge = sqe->sge;

	memset(w, 0, size);
	sqe->ctrl.opcode = RNIC_SQE_OP_SEND;
	sqe->ctrl.flags = RNIC_SQE_F_SIGNALED;
	sqe->ctrl.num_sge = 1;
	sqe->ctrl.length = htole32(64);
	sge->addr = htole64((uintptr_t)p->buf[0] + OFF_SSRC);
	sge->len = htole32(64);
	sge->lkey = htole32(p->mr[0]->lkey);
	switch (c) {
	case BW_CONTROL:
	case BW_NUM:
		break;
	case BW_OPCODE:
		sqe->ctrl.opcode = 0x3f;
		break;
	case BW_NUM_SGE:
		sqe->ctrl.num_sge = 255;
		break;
	case BW_FLAGS:
		sqe->ctrl.flags = 0xf1;
		break;
	case BW_RESERVED:
		sqe->ctrl.reserved0 = 0x5a;
		sqe->ctrl.reserved1 = htole32(0xdeadbeef);
		sqe->seg.raw[31] = 0x77;
		break;
	case BW_LENGTH:
		sqe->ctrl.length = htole32(65);
		break;
	case BW_INLINE_LEN:
		sqe->ctrl.flags |= RNIC_SQE_F_INLINE;
		sqe->ctrl.num_sge = 0;
		sqe->ctrl.length = htole32(4000);
		break;
	case BW_LKEY_WILD:
		sge->lkey = htole32(0xffffff00);
		break;
	case BW_LKEY_ZERO:
		sge->lkey = 0;
		break;
	case BW_LKEY_OTHER_PD:
		sge->addr = htole64((uintptr_t)other->addr);
		sge->lkey = htole32(other->lkey);
		break;
	case BW_SGE_OOB:
		sge->addr = htole64((uintptr_t)p->buf[0] + BUF_LEN - 32);
		break;
	case BW_RKEY_OTHER_PD:
		sqe->ctrl.opcode = RNIC_SQE_OP_WRITE;
		sqe->seg.rdma.remote_addr = htole64((uintptr_t)other->addr);
		sqe->seg.rdma.rkey = htole32(other->rkey);
		break;
	case BW_REG_MR:
		sqe->ctrl.opcode = RNIC_SQE_OP_REG_MR;
		sqe->ctrl.num_sge = 0;
		sqe->ctrl.length = 0;
		sqe->ctrl.key = htole32((p->mr[0]->lkey & ~0xffU) |
					((p->mr[0]->lkey + 1) & 0xff));
		sqe->seg.reg_mr.iova = htole64((uintptr_t)p->buf[0]);
		sqe->seg.reg_mr.length = htole64(4096);
		sqe->seg.reg_mr.pbl_addr = htole64(0x1000);
		sqe->seg.reg_mr.npages = htole16(1);
		sqe->seg.reg_mr.page_log2 = 12;
		sqe->seg.reg_mr.access = RNIC_ACCESS_ALL;
		memset(sge, 0, sizeof(*sge));
		break;
	case BW_LOCAL_INV:
		sqe->ctrl.opcode = RNIC_SQE_OP_LOCAL_INV;
		sqe->ctrl.num_sge = 0;
		sqe->ctrl.length = 0;
		sqe->ctrl.key = htole32(p->mr[0]->lkey);
		memset(sge, 0, sizeof(*sge));
		break;
	case BW_GARBAGE:
		memset(w, 0xa5, size);
		break;
	}
}

static const char *qp_state_str(struct ibv_qp *qp)
{
	static const char *const s[] = {
		"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR",
	};
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &init))
		return "unknown (query failed)";
	return a.qp_state < ARRAY_SIZE(s) ? s[a.qp_state] : "?";
}

/*
 * @mr (of d->pd) still takes a WRITE under its rkey: a REG_MR or LOCAL_INV
 * that the device wrongly ran would have changed or invalidated it, which
 * the completions alone do not show (the provider refuses their CQEs).
 */
static bool mr_still_valid(struct dev *d, struct ibv_mr *mr, uint8_t *dst)
{
	struct pair *q = pair_create(d);
	struct ibv_sge sge;
	struct ibv_send_wr wr = {
		.wr_id = 5, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;
	bool ok = false;

	if (!q)
		return false;
	sge = (struct ibv_sge){ (uintptr_t)q->buf[0], 256, q->mr[0]->lkey };
	wr.wr.rdma.remote_addr = (uintptr_t)dst;
	wr.wr.rdma.rkey = mr->rkey;
	pat_fill(q->buf[0], 256, 0xabc);
	memset(dst, 0, 256);
	if (!ibv_post_send(q->qp[0], &wr, &bad) && cq_wait(q->cq[0], &wc, 1) == 1 &&
	    wc.status == IBV_WC_SUCCESS && !pat_bad(dst, 256, 0xabc))
		ok = true;
	pair_destroy(q);
	return ok;
}

/*
 * One malformed WQE on a new pair, then a well-formed SEND after it: the
 * bad WQE must complete in error (or its CQE be refused by the provider,
 * which then moves the QP to ERR), and the SEND after it be flushed. A
 * SEND that succeeds means the device ran or skipped the bad WQE.
 */
static void bw_one(struct dev *d, enum bw_case c, struct ibv_mr *other)
{
	struct ibv_sge sge;
	struct ibv_send_wr good = {
		.wr_id = WRID_GOOD, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;
	const char *name = bw_names[c];
	struct ibv_wc wc[4];
	struct pair *p;
	uint8_t *w = NULL;
	size_t size;
	int n, i, err, got_bad = -1, got_good = -1;
	char what[160];

	p = pair_create(d);
	if (!p)
		return;
	size = (size_t)1 << to_rqp(p->qp[0])->sq.wqe_log2;
	w = malloc(size);
	if (!w) {
		fail("out of memory");
		goto out;
	}
	sge.addr = (uintptr_t)p->buf[0] + OFF_SSRC;
	sge.length = 64;
	sge.lkey = p->mr[0]->lkey;
	pat_fill(p->buf[0] + OFF_SSRC, 64, 0xc0ffee + c);
	/* a receive for each SEND, so that one that gets through completes */
	if (post_recv(p, 1, 10) || post_recv(p, 1, 11)) {
		fail("%s: post_recv", name);
		goto out;
	}
	if (c != BW_CONTROL) {
		victim(d, qp_id(p->qp[0]));
		victim(d, qp_id(p->qp[1]));
	}
	bw_build(c, p, other, w, size);
	err = raw_post(d, p->qp[0], w, WRID_BAD);
	if (!err)
		err = ibv_post_send(p->qp[0], &good, &bad);
	if (err) {
		fail("%s: post: %s", name, strerror(err));
		goto out;
	}
	/* until the good SEND's completion, whatever it is */
	n = 0;
	while (got_good < 0 && n < (int)ARRAY_SIZE(wc)) {
		if (!cq_wait(p->cq[0], &wc[n], 1))
			break;
		if (wc[n].wr_id == WRID_GOOD)
			got_good = n;
		else if (wc[n].wr_id == WRID_BAD)
			got_bad = n;
		n++;
	}
	if (got_bad >= 0)
		snprintf(what, sizeof(what), "bad WQE: %s (vendor_err %u)",
			 ibv_wc_status_str(wc[got_bad].status), wc[got_bad].vendor_err);
	else
		snprintf(what, sizeof(what), "bad WQE: no CQE (the provider refused it)");
	if (got_good < 0) {
		fail("%s: no completion of the SEND after it within %d ms (%s; QP %s)",
		     name, opt.timeout_ms, what, qp_state_str(p->qp[0]));
		goto out;
	}
	if (c == BW_CONTROL) {
		if (got_bad < 0 || wc[got_bad].status || wc[got_good].status) {
			fail("%s: %s, SEND after it %s", name, what,
			     ibv_wc_status_str(wc[got_good].status));
			goto out;
		}
		n = cq_wait(p->cq[1], wc, 2);
		for (i = 0; i < n; i++)
			if (wc[i].status)
				break;
		if (n != 2 || i != n || pat_bad(p->buf[1] + OFF_RDST, 64, 0xc0ffee + c)) {
			fail("%s: the receiver got %d good of 2 or wrong bytes", name, i);
			goto out;
		}
		note("%-52s ok: both SENDs arrived, bytes verified", name);
		goto out;
	}
	if (got_bad >= 0 && wc[got_bad].status == IBV_WC_SUCCESS) {
		fail("%s: completed successfully", name);
		goto out;
	}
	if (wc[got_good].status == IBV_WC_SUCCESS) {
		fail("%s: %s, but the SEND after it succeeded: the QP did not stop", name, what);
		goto out;
	}
	if ((c == BW_REG_MR || c == BW_LOCAL_INV) &&
	    !mr_still_valid(d, p->mr[0], p->buf[0] + OFF_WDST)) {
		fail("%s: %s, but our MR no longer takes a WRITE under its key: the device ran it",
		     name, what);
		goto out;
	}
	note("%-52s ok: %s; SEND after it %s; QP %s", name, what,
	     ibv_wc_status_str(wc[got_good].status), qp_state_str(p->qp[0]));
out:
	free(w);
	pair_destroy(p);
}

static void mode_bad_wqe(struct dev *d)
{
	struct ibv_pd *pd2;
	struct ibv_mr *other = NULL;
	struct pair *by;
	void *obuf = NULL;
	long long e0 = counter("wqe_errors"), k0 = counter("key_violations");
	int c;

	by = pair_create(d);
	if (!by || !xfer(by, 0, 1, "bystander pair before"))
		return;
	pd2 = ibv_alloc_pd(d->ctx);
	if (!pd2 || posix_memalign(&obuf, 4096, 4096)) {
		fail("a second PD: %s", strerror(errno));
		obuf = NULL;
		goto out;
	}
	memset(obuf, 0x3c, 4096);
	other = ibv_reg_mr(pd2, obuf, 4096, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!other) {
		fail("ibv_reg_mr on the second PD: %s", strerror(errno));
		goto out;
	}
	for (c = 0; c < BW_NUM; c++)
		bw_one(d, c, other);
	for (c = 0; c < 4096; c++) {
		if (((uint8_t *)obuf)[c] != 0x3c) {
			fail("the other PD's MR was written (byte %d)", c);
			break;
		}
	}
	xfer(by, 1, 2, "bystander pair after");
	events_check(d);
	if (e0 >= 0 && k0 >= 0)
		note("counters: wqe_errors %+lld, key_violations %+lld",
		     counter("wqe_errors") - e0, counter("key_violations") - k0);
out:
	if (other)
		ibv_dereg_mr(other);
	free(obuf);
	if (pd2)
		ibv_dealloc_pd(pd2);
}

/* ------------------------------------------------------------------------
 * bad-db
 */

/* The slots of this context's queues in @dbp */
static void slots_used(struct dev *d, struct rnic_dbp *dbp, bool *used)
{
	struct rnic_qp *qp;
	struct rnic_cq *cq;
	int i, j;

	memset(used, 0, RNIC_DBP_SLOTS * sizeof(*used));
	for (i = 0; i < MAX_PAIRS; i++) {
		if (!d->pairs[i])
			continue;
		for (j = 0; j < 2; j++) {
			cq = to_rcq(d->pairs[i]->cq[j]);
			qp = to_rqp(d->pairs[i]->qp[j]);
			if (cq->dbp == dbp)
				used[cq->db_off / 4] = true;
			if (qp->sq.dbp == dbp)
				used[qp->sq.db_off / 4] = true;
			if (qp->rq.dbp == dbp && qp->rq.db_off != RNIC_DB_NONE)
				used[qp->rq.db_off / 4] = true;
		}
	}
}

/*
 * Every slot number of the page that is not one of our queues', and some
 * beyond the page, in the kick ring. With the kick register mapped the
 * entries go after the provider's and are kicked; without it the kernel is
 * the ring's writer, and they are written where the device will read next
 * (kick_ci) and kicked through another context's page (a kick makes the
 * device read every page of that kick value).
 */
static void bogus_kicks(struct dev *d, struct pair *by)
{
	static const uint16_t beyond[] = { 512, 1000, 0x7fff, 0xffff };
	struct rnic_dbp *dbp = to_rqp(by->qp[0])->sq.dbp;
	bool used[RNIC_DBP_SLOTS];
	uint16_t e[RNIC_DBP_KICK_DEPTH];
	unsigned int n = 0, i, j, batch;
	long long b0 = counter("bad_kicks"), o0 = counter("kick_overflows");
	long long b1, o1;

	slots_used(d, dbp, used);
	for (i = 0; i < RNIC_DBP_SLOTS; i++)
		if (!used[i])
			e[n++] = i;
	for (i = 0; i < ARRAY_SIZE(beyond) && n < ARRAY_SIZE(e); i++)
		e[n++] = beyond[i];
	if (d->rctx->kick_reg) {
		for (i = 0; i < n; i += batch) {
			batch = n - i < 128 ? n - i : 128;
			kick_entries(d->rctx, dbp, e + i, batch);
			if (!kick_drained(dbp, dbp->kick_pi)) {
				fail("bogus kicks: the device did not consume the kick ring within %d ms (kick_ci %u, kick_pi %u)",
				     opt.timeout_ms, kick_ci(dbp), dbp->kick_pi);
				return;
			}
		}
	} else {
		struct dev d2;
		struct ibv_cq *cq2;
		uint16_t ci = kick_ci(dbp);
		uint8_t *page = (uint8_t *)dbp->va;

		if (dev_open(&d2))
			return;
		cq2 = ibv_create_cq(d2.ctx, 4, NULL, NULL, 0);
		if (!cq2) {
			fail("ibv_create_cq on a second context: %s", strerror(errno));
			dev_close(&d2);
			return;
		}
		for (i = 0; i < n; i += batch) {
			batch = n - i < 128 ? n - i : 128;
			for (j = 0; j < batch; j++)
				mmio_write16_le(page + offsetof(struct rnic_db_page, kick) +
						((uint16_t)(ci + j) % RNIC_DBP_KICK_DEPTH) * 2,
						htole16(e[i + j]));
			ci += batch;
			mmio_flush_writes();
			mmio_write32_le(page + offsetof(struct rnic_db_page, kick_pi),
					htole32(ci));
			mmio_flush_writes();
			ibv_req_notify_cq(cq2, 0);
			if (!kick_drained(dbp, ci)) {
				note("bogus kicks: a kick of another page did not make the device read ours (kick_ci %u, ours %u); the next kick of ours will",
				     kick_ci(dbp), ci);
				break;
			}
		}
		ibv_destroy_cq(cq2);
		dev_close(&d2);
	}
	/* past ib_core's cache of the counters (RDMA_HW_STATS_DEFAULT_LIFESPAN) */
	nap_us(100000);
	b1 = counter("bad_kicks");
	o1 = counter("kick_overflows");
	if (b0 < 0 || b1 < 0) {
		note("bogus kicks: %u entries; bad_kicks not readable", n);
		return;
	}
	note("bogus kicks: %u entries naming no queue of ours; bad_kicks %lld -> %lld (%+lld), kick_overflows %+lld",
	     n, b0, b1, b1 - b0, o1 - o0);
	if (d->rctx->kick_reg && b1 - b0 < n)
		fail("bad_kicks rose by %lld, not by the %u bogus entries", b1 - b0, n);
}

enum bd_case { BD_SQ_PI, BD_RQ_BITS, BD_CQ_CI, BD_NUM };

static const char *const bd_names[BD_NUM] = {
	[BD_SQ_PI] = "SQ producer index beyond the depth",
	[BD_RQ_BITS] = "RQ slot with undefined bits",
	[BD_CQ_CI] = "CQ consumer index beyond the producer",
};

/* One bad slot value on a new pair: that queue, and only it, fails */
static void bd_one(struct dev *d, enum bd_case c)
{
	struct pair *p = pair_create(d);
	struct rnic_qp *qp;
	struct rnic_cq *cq;
	enum ibv_event_type want;
	struct ibv_qp *vqp = NULL;
	uint64_t obj;
	uint32_t v;
	int err;

	if (!p)
		return;
	switch (c) {
	case BD_SQ_PI:
		qp = to_rqp(p->qp[0]);
		pthread_spin_lock(&qp->sq.lock);
		v = (uint16_t)(qp->sq.pi + (1U << qp->sq.log2_depth) + 1);
		err = slot_ring(d, qp->sq.dbp, qp->sq.db_off, v, p->qp[0], false, NULL);
		pthread_spin_unlock(&qp->sq.lock);
		want = IBV_EVENT_QP_FATAL;
		vqp = p->qp[0];
		obj = qp_id(vqp);
		break;
	case BD_RQ_BITS:
		qp = to_rqp(p->qp[1]);
		pthread_spin_lock(&qp->rq.lock);
		v = 0xdead0000U | qp->rq.pi;
		err = slot_ring(d, qp->rq.dbp, qp->rq.db_off, v, p->qp[1], true, NULL);
		pthread_spin_unlock(&qp->rq.lock);
		want = IBV_EVENT_QP_FATAL;
		vqp = p->qp[1];
		obj = qp_id(vqp);
		break;
	default:
		cq = to_rcq(p->cq[0]);
		pthread_spin_lock(&cq->lock);
		v = (uint16_t)(cq->ci + 1000);
		err = slot_ring(d, cq->dbp, cq->db_off, v, NULL, false, p->cq[0]);
		pthread_spin_unlock(&cq->lock);
		want = IBV_EVENT_CQ_ERR;
		obj = cq_id(p->cq[0]);
		/* its QP may fail with it: a completion it cannot write */
		victim(d, qp_id(p->qp[0]));
		break;
	}
	victim(d, obj);
	if (err) {
		fail("%s: the kick: %s", bd_names[c], strerror(err));
		goto out;
	}
	if (!event_wait(d, want, obj)) {
		fail("%s (slot value %#x): no %s within %d ms", bd_names[c], v,
		     ibv_event_type_str(want), opt.timeout_ms);
		goto out;
	}
	note("%-40s ok: slot %#x -> %s%s%s", bd_names[c], v, ibv_event_type_str(want),
	     vqp ? ", QP " : "", vqp ? qp_state_str(vqp) : "");
	/* the other QP of a QP error's pair still runs: its peer is gone only */
out:
	pair_destroy(p);
}

static void mode_bad_db(struct dev *d)
{
	struct pair *by;
	long long bd0 = counter("bad_kicks");
	int c;

	note("kick: %s", d->rctx->kick_reg ? "the register is mapped (RNIC_UCTX_F_KICK_MMAP)" :
					    "through the kernel");
	by = pair_create(d);
	if (!by || !xfer(by, 0, 1, "bystander pair before"))
		return;
	bogus_kicks(d, by);
	xfer(by, 1, 2, "bystander pair after bogus kicks");
	for (c = 0; c < BD_NUM; c++)
		bd_one(d, c);
	xfer(by, 0, 3, "bystander pair after bad slots");
	xfer(by, 1, 4, "bystander pair after bad slots");
	events_check(d);
	if (bd0 >= 0)
		note("bad_kicks now %lld", counter("bad_kicks"));
}

/* ------------------------------------------------------------------------
 * bad-mr
 */

static void mr_refused(struct dev *d, const char *what, void *addr, size_t len,
		       int access)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_mr(d->pd, addr, len, access);
	if (mr) {
		fail("%s: registered (key %#x)", what, mr->lkey);
		ibv_dereg_mr(mr);
		return;
	}
	note("%-54s ok: refused, %s", what, strerror(errno));
}

static void mode_bad_mr(struct dev *d)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *m, *ro;
	struct ibv_mr *mr;
	struct pair *p;
	int rw = IBV_ACCESS_LOCAL_WRITE;

	/* unmapped: a range that was mapped and is not any more */
	m = mmap(NULL, 16 * pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		fail("mmap: %s", strerror(errno));
		return;
	}
	mr_refused(d, "PROT_NONE mapping, LOCAL_WRITE", m, 16 * pg, rw);
	/*
	 * Without write access, ib_umem before Linux 6.2 pins with FOLL_FORCE
	 * (as ptrace reads), which a PROT_NONE private mapping allows: the
	 * process's own pages, so either answer is right.
	 */
	mr = ibv_reg_mr(d->pd, m, 16 * pg, 0);
	note("%-54s ok: %s", "PROT_NONE mapping, no access",
	     mr ? "registered (FOLL_FORCE pinning, Linux < 6.2)" : strerror(errno));
	if (mr && ibv_dereg_mr(mr))
		fail("ibv_dereg_mr: %s", strerror(errno));
	munmap(m, 16 * pg);
	mr_refused(d, "unmapped range, LOCAL_WRITE", m, 16 * pg, rw);
	mr_refused(d, "unmapped range, no access", m, 16 * pg, 0);
	mr_refused(d, "wild user address 0x7ead00000000", (void *)0x7ead00000000UL,
		   4 * pg, 0);
	mr_refused(d, "kernel address 0xffff888000000000",
		   (void *)0xffff888000000000UL, 4 * pg, 0);
	mr_refused(d, "range that wraps around", (void *)(uintptr_t)-pg, 2 * pg, 0);

	/* half mapped: the second page is a hole */
	m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		fail("mmap: %s", strerror(errno));
		return;
	}
	munmap(m + pg, pg);
	memset(m, 1, pg);
	mr_refused(d, "first page mapped, second not", m, 2 * pg, rw);
	munmap(m, pg);

	/* read-only: no LOCAL_WRITE, and nothing that implies it */
	ro = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro == MAP_FAILED) {
		fail("mmap: %s", strerror(errno));
		return;
	}
	pat_fill(ro, 4 * pg, 77);
	if (mprotect(ro, 4 * pg, PROT_READ)) {
		fail("mprotect: %s", strerror(errno));
		return;
	}
	mr_refused(d, "read-only mapping, LOCAL_WRITE", ro, 4 * pg, rw);
	mr_refused(d, "read-only mapping, LOCAL_WRITE|REMOTE_WRITE", ro, 4 * pg,
		   rw | IBV_ACCESS_REMOTE_WRITE);
	mr_refused(d, "REMOTE_WRITE without LOCAL_WRITE", ro, 4 * pg,
		   IBV_ACCESS_REMOTE_WRITE);
	mr_refused(d, "ON_DEMAND (ODP, not offered)", ro, 4 * pg,
		   IBV_ACCESS_ON_DEMAND | rw);

	/* what is allowed: a read-only MR as a SEND's source, verified */
	p = pair_create(d);
	if (!p)
		goto out;
	mr = ibv_reg_mr(d->pd, ro, 4 * pg, 0);
	if (!mr) {
		fail("read-only mapping, no access: refused (%s), must register",
		     strerror(errno));
	} else {
		struct ibv_sge sge = { (uintptr_t)ro, XFER, mr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = 7, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		}, *bad;
		struct ibv_wc wc;

		memset(p->buf[1] + OFF_RDST, 0, XFER);
		if (post_recv(p, 1, 8) || ibv_post_send(p->qp[0], &wr, &bad))
			fail("read-only MR: post");
		else if (cq_wait(p->cq[0], &wc, 1) != 1 || wc.status)
			fail("read-only MR as a SEND source: no successful completion");
		else if (cq_wait(p->cq[1], &wc, 1) != 1 || wc.status ||
			 pat_bad(p->buf[1] + OFF_RDST, XFER, 77))
			fail("read-only MR as a SEND source: receive failed or bytes differ");
		else
			note("%-54s ok: registered, a SEND from it verified",
			     "read-only mapping, no access");
		if (ibv_dereg_mr(mr))
			fail("ibv_dereg_mr: %s", strerror(errno));
	}

	/* an MR whose memory is unmapped while registered: pinned, no harm */
	m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		fail("mmap: %s", strerror(errno));
		goto out;
	}
	memset(m, 0x11, 2 * pg);
	mr = ibv_reg_mr(d->pd, m, 2 * pg, rw | IBV_ACCESS_REMOTE_WRITE);
	munmap(m, 2 * pg);
	if (!mr) {
		fail("MR to unmap: %s", strerror(errno));
	} else {
		struct ibv_sge sge = { (uintptr_t)p->buf[0] + OFF_WSRC, (uint32_t)pg,
				       p->mr[0]->lkey };
		struct ibv_send_wr wr = {
			.wr_id = 9, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		}, *bad;
		struct ibv_wc wc;
		struct ibv_qp *qp = p->qp[0];

		/* the WRITE goes to the other side's QP, which owns the MR's PD */
		wr.wr.rdma.remote_addr = (uintptr_t)m;
		wr.wr.rdma.rkey = mr->rkey;
		if (ibv_post_send(qp, &wr, &bad))
			fail("WRITE into an unmapped MR: post");
		else if (cq_wait(p->cq[0], &wc, 1) != 1)
			fail("WRITE into an MR whose memory was unmapped: no completion within %d ms",
			     opt.timeout_ms);
		else
			note("%-54s ok: %s", "WRITE into an MR whose memory was unmapped",
			     ibv_wc_status_str(wc.status));
		if (ibv_dereg_mr(mr))
			fail("ibv_dereg_mr after munmap: %s", strerror(errno));
	}
	pair_destroy(p);
	p = pair_create(d);
	if (p) {
		xfer(p, 0, 11, "a new pair after the refused MRs");
		xfer(p, 1, 12, "a new pair after the refused MRs");
		pair_destroy(p);
	}
	events_check(d);
out:
	munmap(ro, 4 * pg);
}

/* ------------------------------------------------------------------------
 * killed
 */

/* rdma resource show DEV: pd cq qp mr ctx, or false */
static bool resources(long long r[5])
{
	static const char *const names[5] = { "pd", "cq", "qp", "mr", "ctx" };
	char cmd[128], line[512], *tok, *save, *prev = NULL;
	bool found = false;
	FILE *f;
	int i;

	snprintf(cmd, sizeof(cmd), "rdma resource show 2>/dev/null");
	f = popen(cmd, "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char key[64];

		snprintf(key, sizeof(key), " %s:", opt.dev);
		if (!strstr(line, key))
			continue;
		for (i = 0; i < 5; i++)
			r[i] = -1;
		prev = NULL;
		for (tok = strtok_r(line, " \n", &save); tok;
		     tok = strtok_r(NULL, " \n", &save)) {
			for (i = 0; prev && i < 5; i++)
				if (!strcmp(prev, names[i]))
					r[i] = atoll(tok);
			prev = tok;
		}
		found = true;
	}
	pclose(f);
	return found;
}

/*
 * The child: its own context and pair, WRITEs and SENDs kept in flight
 * (the SQ full, receives reposted), told to the parent after the first
 * verified transfer; runs until killed.
 */
static void __attribute__((noreturn)) killed_child(int fd)
{
	struct ibv_sge ws, ss;
	struct ibv_send_wr wr[2], *bad;
	struct ibv_wc wc[16];
	struct dev d;
	struct pair *p;
	int inflight = 0, recvs = 0, i, n;

	if (dev_open(&d))
		_exit(3);
	p = pair_create(&d);
	if (!p || !xfer(p, 0, 21, "child"))
		_exit(3);
	for (; recvs < QP_WR; recvs++)
		if (post_recv(p, 1, 100))
			_exit(4);
	if (write(fd, "R", 1) != 1)
		_exit(5);
	ws = (struct ibv_sge){ (uintptr_t)p->buf[0] + OFF_WSRC, XFER, p->mr[0]->lkey };
	ss = (struct ibv_sge){ (uintptr_t)p->buf[0] + OFF_SSRC, XFER, p->mr[0]->lkey };
	for (;;) {
		while (inflight + 2 <= QP_WR && recvs > 0) {
			memset(wr, 0, sizeof(wr));
			wr[0].wr_id = 1;
			wr[0].next = &wr[1];
			wr[0].sg_list = &ws;
			wr[0].num_sge = 1;
			wr[0].opcode = IBV_WR_RDMA_WRITE;
			wr[0].send_flags = IBV_SEND_SIGNALED;
			wr[0].wr.rdma.remote_addr = (uintptr_t)p->buf[1] + OFF_WDST;
			wr[0].wr.rdma.rkey = p->mr[1]->rkey;
			wr[1].wr_id = 2;
			wr[1].sg_list = &ss;
			wr[1].num_sge = 1;
			wr[1].opcode = IBV_WR_SEND;
			wr[1].send_flags = IBV_SEND_SIGNALED;
			if (ibv_post_send(p->qp[0], wr, &bad))
				_exit(6);
			inflight += 2;
			recvs--;
		}
		n = ibv_poll_cq(p->cq[0], 16, wc);
		for (i = 0; i < n; i++)
			if (wc[i].status)
				_exit(7);
		inflight -= n > 0 ? n : 0;
		n = ibv_poll_cq(p->cq[1], 16, wc);
		for (i = 0; i < n; i++) {
			if (wc[i].status)
				_exit(8);
			if (!post_recv(p, 1, 100))
				recvs++;
		}
	}
}

static void mode_killed(void)
{
	long long r0[5], r1[5];
	bool have0, have1 = false;
	const char *names[5] = { "pd", "cq", "qp", "mr", "ctx" };
	struct pollfd pf;
	int fds[2], status, i;
	int64_t end;
	pid_t pid, w;
	char c;

	have0 = resources(r0);
	if (pipe(fds)) {
		fail("pipe: %s", strerror(errno));
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		fail("fork: %s", strerror(errno));
		return;
	}
	if (!pid) {
		close(fds[0]);
		killed_child(fds[1]);
	}
	close(fds[1]);
	pf = (struct pollfd){ .fd = fds[0], .events = POLLIN };
	if (poll(&pf, 1, opt.timeout_ms) != 1 || read(fds[0], &c, 1) != 1) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		close(fds[0]);
		if (WIFEXITED(status))
			fail("the child failed before its traffic ran (exit %d)",
			     WEXITSTATUS(status));
		else
			fail("the child did not start its traffic within %d ms",
			     opt.timeout_ms);
		return;
	}
	close(fds[0]);
	nap_us((long)opt.kill_ms * 1000);
	/* still running: it did not die of an error of its own */
	w = waitpid(pid, &status, WNOHANG);
	if (w == pid) {
		fail("the child's traffic stopped before the kill (exit %d)",
		     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return;
	}
	kill(pid, SIGKILL);
	end = now_ms() + opt.timeout_ms;
	while ((w = waitpid(pid, &status, WNOHANG)) == 0 && now_ms() < end)
		nap_us(10000);
	if (w != pid) {
		fail("the child was not reaped within %d ms of SIGKILL", opt.timeout_ms);
		return;
	}
	note("child %d SIGKILLed after %d ms with WRITEs and SENDs in flight", pid,
	     opt.kill_ms);
	/* what it held goes with its file; give the kernel the timeout for it */
	if (have0) {
		end = now_ms() + opt.timeout_ms;
		do {
			have1 = resources(r1);
			for (i = 0; have1 && i < 5; i++)
				if (r1[i] > r0[i])
					break;
			if (have1 && i == 5)
				break;
			nap_us(100000);
		} while (now_ms() < end);
		for (i = 0; have1 && i < 5; i++)
			if (r1[i] > r0[i])
				fail("%s: %lld before the child, %lld after it was reaped",
				     names[i], r0[i], r1[i]);
		if (have1)
			note("resources before/after: pd %lld/%lld cq %lld/%lld qp %lld/%lld mr %lld/%lld ctx %lld/%lld",
			     r0[0], r1[0], r0[1], r1[1], r0[2], r1[2], r0[3], r1[3],
			     r0[4], r1[4]);
	}
	if (!have0 || !have1)
		note("rdma resource show: not readable, resources not compared");
	fresh_check("a new context after the kill");
}

/* ------------------------------------------------------------------------
 * bad-kick, traffic
 */

static void mode_bad_kick(struct dev *d)
{
	uint32_t peer = d->rctx->kick & 0xffff0000U;
	struct pair *by;
	unsigned int v;

	if (!d->rctx->kick_reg) {
		skipped = "the kick register is not mapped (no RNIC_UCTX_F_KICK_MMAP): the kernel kicks";
		return;
	}
	by = pair_create(d);
	if (!by || !xfer(by, 0, 1, "bystander pair before"))
		return;
	/* every vector of the device's peer, twice; the kick itself 64 times */
	for (v = 0; v < 32; v++)
		mmio_write32_le(d->rctx->kick_reg, htole32(peer | (v & 0xffff)));
	mmio_write32_le(d->rctx->kick_reg, htole32(peer | 0xffff));
	for (v = 0; v < 64; v++)
		mmio_write32_le(d->rctx->kick_reg, htole32(d->rctx->kick));
	xfer(by, 1, 2, "bystander pair after");
	xfer(by, 0, 3, "bystander pair after");
	events_check(d);
	note("kick register: vectors 0..31 and 0xffff of peer %u, the kick 64 times",
	     peer >> 16);
	note("a vector the device does not serve is counted in bad_doorbells and is a DEVICE_ERROR event (hardware.rst, \"Doorbells\"): see ethtool -S and the guest log");
}

static void mode_traffic(struct dev *d)
{
	int64_t end = now_ms() + (int64_t)opt.seconds * 1000;
	struct pair *p = pair_create(d);
	uint32_t n = 0;

	if (!p)
		return;
	while (now_ms() < end && !failures) {
		if (!xfer(p, n & 1, 1000 + n, "traffic"))
			break;
		n++;
	}
	events_check(d);
	if (!failures)
		note("%u transfers (WRITE and SEND of %d bytes each) verified in %d s",
		     n, XFER, opt.seconds);
}

/* ------------------------------------------------------------------------ */

static const char *ok_msg(void)
{
	if (!strcmp(mode_name, "bad-wqe"))
		return "every malformed WQE failed its own QP only; the bystander pair and a new context verified";
	if (!strcmp(mode_name, "bad-db"))
		return "bogus kick entries ignored, each bad slot failed its own queue only; the bystander pair and a new context verified";
	if (!strcmp(mode_name, "bad-mr"))
		return "every bad range refused; a read-only MR and a new pair verified";
	if (!strcmp(mode_name, "killed"))
		return "child killed in flight and reaped, nothing left behind, a new context verified";
	if (skipped)
		return skipped;
	if (!strcmp(mode_name, "bad-kick"))
		return "any kick value left the bystander pair and a new context verified";
	return "every transfer verified";
}

static void usage(void)
{
	fprintf(stderr,
		"usage: rnic_hostile [-d DEV] [-i PORT] [-g GID_INDEX] [-T TIMEOUT_MS]\n"
		"                    [-t SECONDS] [-k KILL_MS] MODE\n"
		"MODE: bad-wqe | bad-db | bad-mr | killed | bad-kick | traffic\n"
		"  -d  device (rnic0)   -i  port (1)\n"
		"  -g  GID index (default: the port's IPv4 address as RoCE v2, else the best)\n"
		"  -T  timeout of every wait in ms (10000)\n"
		"  -t  traffic: seconds (10)   -k  killed: ms before SIGKILL (1000)\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct dev d;
	int c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getopt(argc, argv, "d:i:g:T:t:k:h")) != -1) {
		switch (c) {
		case 'd': opt.dev = optarg; break;
		case 'i': opt.port = atoi(optarg); break;
		case 'g': opt.gid_index = atoi(optarg); break;
		case 'T': opt.timeout_ms = atoi(optarg); break;
		case 't': opt.seconds = atoi(optarg); break;
		case 'k': opt.kill_ms = atoi(optarg); break;
		default: usage();
		}
	}
	if (optind != argc - 1 || opt.timeout_ms <= 0 || opt.port <= 0)
		usage();
	mode_name = argv[optind];
	if (strcmp(mode_name, "bad-wqe") && strcmp(mode_name, "bad-db") &&
	    strcmp(mode_name, "bad-mr") && strcmp(mode_name, "killed") &&
	    strcmp(mode_name, "bad-kick") && strcmp(mode_name, "traffic"))
		usage();
	signal(SIGPIPE, SIG_IGN);

	memset(&d, 0, sizeof(d));
	if (!strcmp(mode_name, "killed")) {
		mode_killed();
	} else if (!dev_open(&d)) {
		char gid[INET6_ADDRSTRLEN] = "?";

		inet_ntop(AF_INET6, d.gid.raw, gid, sizeof(gid));
		note("%s port %d, GID index %d (%s), kick %s", opt.dev, opt.port,
		     d.gid_index, gid, d.rctx->kick_reg ? "mapped" : "through the kernel");
		if (!strcmp(mode_name, "bad-wqe"))
			mode_bad_wqe(&d);
		else if (!strcmp(mode_name, "bad-db"))
			mode_bad_db(&d);
		else if (!strcmp(mode_name, "bad-mr"))
			mode_bad_mr(&d);
		else if (!strcmp(mode_name, "bad-kick"))
			mode_bad_kick(&d);
		else
			mode_traffic(&d);
	}
	dev_close(&d);
	if (failures) {
		printf("hostile %s: FAIL %s%s\n", mode_name, fail_why,
		       failures > 1 ? " (and more, above)" : "");
		return 1;
	}
	if (strcmp(mode_name, "killed"))
		if (!fresh_check("a new context afterwards")) {
			printf("hostile %s: FAIL %s\n", mode_name, fail_why);
			return 1;
		}
	printf("hostile %s: ok: %s\n", mode_name, ok_msg());
	return 0;
}
