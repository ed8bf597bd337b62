// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic_hostile: the device every mode runs on (rnic_hostile.c says what
 * the program is for). Opening it with a thread that reads and keeps its
 * async events, checking those events against what a mode attacked, its
 * port counters; the RC pairs in loopback, the data pattern, the verified
 * transfers, and a new context's check that the device still serves.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rnic_hostile.h"

/* ------------------------------------------------------------------------
 * The device, its async events, its counters
 */

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

struct ibv_context *ctx_open(int *err, char *why, size_t len)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list) {
		*err = errno;
		snprintf(why, len, "ibv_get_device_list: %s", strerror(*err));
		return NULL;
	}
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), opt.dev))
			break;
	if (i == n) {
		*err = ENODEV;
		snprintf(why, len, "no verbs device %s (is librnic installed?)", opt.dev);
		ibv_free_device_list(list);
		return NULL;
	}
	ctx = ibv_open_device(list[i]);
	*err = ctx ? 0 : errno;
	ibv_free_device_list(list);
	if (!ctx)
		snprintf(why, len, "ibv_open_device %s: %s", opt.dev, strerror(*err));
	return ctx;
}

int dev_open(struct dev *d)
{
	const struct verbs_device_ops *ops;
	char why[256];
	int err, fl;

	memset(d, 0, sizeof(*d));
	d->ctx = ctx_open(&err, why, sizeof(why));
	if (!d->ctx) {
		fail("%s", why);
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

uint64_t qp_id(struct ibv_qp *qp)
{
	return ID_QP | qp->qp_num;
}

uint64_t cq_id(struct ibv_cq *cq)
{
	return ID_CQ | to_rcq(cq)->cqn;
}

void victim(struct dev *d, uint64_t id)
{
	if (d->nvictims < (int)ARRAY_SIZE(d->victims))
		d->victims[d->nvictims++] = id;
}

bool event_seen(struct dev *d, enum ibv_event_type type, uint64_t id)
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
bool event_wait(struct dev *d, enum ibv_event_type type, uint64_t id)
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
void events_check(struct dev *d)
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
long long counter(const char *name)
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

static uint8_t pat_byte(uint32_t seed, uint32_t i)
{
	uint32_t x = seed * 0x9e3779b1U ^ (i + 1) * 0x85ebca77U;

	x ^= x >> 15;
	x *= 0x2c1b3c6dU;
	x ^= x >> 12;
	return (uint8_t)x;
}

void pat_fill(uint8_t *p, size_t len, uint32_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pat_byte(seed, (uint32_t)i);
}

size_t pat_bad(const uint8_t *p, size_t len, uint32_t seed)
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

const char *_Atomic under_way = "";

void pair_teardown(struct pair *p, report_fn report)
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
		under_way = "ibv_destroy_qp";
		if (p->qp[i] && ibv_destroy_qp(p->qp[i]))
			report("ibv_destroy_qp: %s", strerror(errno));
		p->qp[i] = NULL;
	}
	for (i = 0; i < 2; i++) {
		under_way = "ibv_destroy_cq";
		if (p->cq[i] && ibv_destroy_cq(p->cq[i]))
			report("ibv_destroy_cq: %s", strerror(errno));
		under_way = "ibv_dereg_mr";
		if (p->mr[i] && ibv_dereg_mr(p->mr[i]))
			report("ibv_dereg_mr: %s", strerror(errno));
		free(p->buf[i]);
	}
	free(p);
}

void pair_destroy(struct pair *p)
{
	pair_teardown(p, fail);
}

/* Two RC QPs of @d connected to each other, each with its own CQ */
struct pair *pair_create(struct dev *d)
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
 * Up to @n completions of @cq into @wc within -T; *@err: what
 * ibv_poll_cq returned if it failed, else 0. Return: how many.
 */
static int cq_poll_wait(struct ibv_cq *cq, struct ibv_wc *wc, int n, int *err)
{
	int64_t end = now_ms() + opt.timeout_ms;
	int got = 0, r;

	*err = 0;
	while (got < n) {
		r = ibv_poll_cq(cq, n - got, wc + got);
		if (r < 0) {
			*err = r;
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

/* Up to @n completions of @cq into @wc within -T. Return: how many. */
int cq_wait(struct ibv_cq *cq, struct ibv_wc *wc, int n)
{
	int err, got = cq_poll_wait(cq, wc, n, &err);

	if (err)
		fail("ibv_poll_cq: %d", err);
	return got;
}

int post_recv(struct pair *p, int side, uint64_t wrid)
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

enum xfer_end xfer_try(struct pair *p, int s, uint32_t seed, char *why, size_t len)
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
		snprintf(why, len, "post: %s", strerror(err));
		return XFER_REFUSED;
	}
	n = cq_poll_wait(p->cq[s], wc, 2, &err);
	if (err) {
		snprintf(why, len, "ibv_poll_cq: %d", err);
		return XFER_REFUSED;
	}
	if (n < 2) {
		snprintf(why, len, "%d of 2 send completions within %d ms", n, opt.timeout_ms);
		return XFER_TIMEOUT;
	}
	if (wc[0].status || wc[1].status) {
		snprintf(why, len, "send completions %s, %s",
			 ibv_wc_status_str(wc[0].status), ibv_wc_status_str(wc[1].status));
		return XFER_ERROR;
	}
	n = cq_poll_wait(p->cq[t], wc, 1, &err);
	if (err) {
		snprintf(why, len, "ibv_poll_cq: %d", err);
		return XFER_REFUSED;
	}
	if (n < 1) {
		snprintf(why, len, "no receive completion within %d ms", opt.timeout_ms);
		return XFER_TIMEOUT;
	}
	if (wc[0].status || wc[0].byte_len != XFER) {
		snprintf(why, len, "receive completion %s, %u bytes",
			 ibv_wc_status_str(wc[0].status), wc[0].byte_len);
		return wc[0].status ? XFER_ERROR : XFER_WRONG;
	}
	b1 = pat_bad(p->buf[t] + OFF_WDST, XFER, seed * 2);
	b2 = pat_bad(p->buf[t] + OFF_RDST, XFER, seed * 2 + 1);
	if (b1 || b2) {
		snprintf(why, len, "%zu bytes of the WRITE and %zu of the SEND differ", b1, b2);
		return XFER_WRONG;
	}
	return XFER_OK;
}

/* A WRITE then a SEND from side @s to the other, both checked, byte by byte */
bool xfer(struct pair *p, int s, uint32_t seed, const char *what)
{
	char why[256];

	if (xfer_try(p, s, seed, why, sizeof(why)) == XFER_OK)
		return true;
	fail("%s: %s", what, why);
	return false;
}

void dev_teardown(struct dev *d, report_fn report)
{
	int i;

	for (i = 0; i < MAX_PAIRS; i++)
		pair_teardown(d->pairs[i], report);
	under_way = "ibv_dealloc_pd";
	if (d->pd && ibv_dealloc_pd(d->pd))
		report("ibv_dealloc_pd: %s", strerror(errno));
	d->pd = NULL;
	if (d->ev_running) {
		under_way = "stopping the async event thread";
		d->ev_stop = true;
		pthread_join(d->ev_thread, NULL);
		d->ev_running = false;
	}
	under_way = "ibv_close_device";
	if (d->ctx && ibv_close_device(d->ctx))
		report("ibv_close_device: %s", strerror(errno));
	d->ctx = NULL;
}

void dev_close(struct dev *d)
{
	dev_teardown(d, fail);
}

/* Transfers both ways on a new pair of a new context, then all closed */
bool fresh_check(const char *what)
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
