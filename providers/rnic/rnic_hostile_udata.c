// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic_hostile: bad-udata (rnic_hostile.c says what the program is for).
 *
 * The driver data of create_cq, create_qp and create_srq
 * (include/uapi/rdma/rnic-abi.h) written as librnic never would: too
 * short, longer with bytes that are not zero, reserved bytes set, no room
 * for the response, rings missing, unaligned, unmapped or too small for
 * what the request asks. The uverbs commands go straight through
 * libibverbs' ibv_cmd_*() with our own buffers. Each must fail with the
 * errno the driver documents (EINVAL; EFAULT where the memory is not
 * there), and nothing may be left of it: rdma resource show counts the
 * same before and after. Every object kind is also created once with the
 * same buffers and a correct request, and once with a longer request whose
 * extra bytes are zero (a newer provider's), so that a refusal is the
 * field's doing, not a mistake of ours.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rnic_abi.h"
#include "rnic_hostile.h"

/* depth 16, one SGE: what every request below asks for */
#define REQ_LOG2	4
#define REQ_WR		((1U << REQ_LOG2) - 1)

/* a request with room for bytes after the driver's struct */
struct cq_req {
	struct rnic_create_cq c;
	uint8_t tail[16];
};

struct qp_req {
	struct rnic_create_qp c;
	uint8_t tail[16];
};

struct srq_req {
	struct rnic_create_srq c;
	uint8_t tail[16];
};

static int refusals;

/* @err from an ibv_cmd_*(): the errno it means (they return either form) */
static int cmd_errno(int err)
{
	return err < 0 ? -err : err;
}

static bool refused(const char *what, int err, int want)
{
	err = cmd_errno(err);
	if (!err) {
		fail("%s: created", what);
		return false;
	}
	if (err != want) {
		fail("%s: refused with %s, not %s", what, strerror(err), strerror(want));
		return false;
	}
	note("%-58s ok: %s", what, strerror(err));
	refusals++;
	return true;
}

/* A request that must create: the correct one, or it with a zero tail */
static bool created(const char *kind, int err, bool tail)
{
	char what[80];

	snprintf(what, sizeof(what), "%s, %s", kind,
		 tail ? "16 zero bytes after the request" : "a correct request");
	if (err) {
		fail("%s: %s%s", what, strerror(cmd_errno(err)),
		     tail ? " (a newer provider's must pass)" : "");
		return false;
	}
	note("%-58s ok: created, destroyed", what);
	return true;
}

static void *ring(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		fail("mmap of %zu bytes: %s", len, strerror(errno));
		return NULL;
	}
	memset(p, 0, len);
	return p;
}

/* ------------------------------------------------------------------------
 * create_cq
 */

static int cq_try(struct dev *d, struct cq_req *r, size_t drv_len,
		  size_t resp_len)
{
	struct rnic_create_cq_resp resp;
	struct ibv_cq cq;
	int err;

	memset(&cq, 0, sizeof(cq));
	memset(&resp, 0, sizeof(resp));
	err = ibv_cmd_create_cq(d->ctx, REQ_WR, NULL, 0, &cq, &r->c.ibv_cmd,
				sizeof(r->c.ibv_cmd) + drv_len, &resp.ibv_resp,
				resp_len);
	if (!err && ibv_cmd_destroy_cq(&cq))
		fail("create_cq: destroying a CQ made to be destroyed failed");
	return err;
}

static void cq_base(struct cq_req *r, void *cq_ring)
{
	memset(r, 0, sizeof(*r));
	r->c.ring_va = (uintptr_t)cq_ring;
	r->c.log2_depth = REQ_LOG2;
}

static void bad_cq(struct dev *d, uint8_t *cq_ring, uint8_t *hole)
{
	const size_t drv = sizeof(struct rnic_ucreate_cq);
	const size_t rsp = sizeof(struct rnic_create_cq_resp);
	struct cq_req r;

	cq_base(&r, cq_ring);
	if (!created("create_cq", cq_try(d, &r, drv, rsp), false))
		return;
	created("create_cq", cq_try(d, &r, drv + sizeof(r.tail), rsp), true);

	cq_base(&r, cq_ring);
	refused("create_cq, request cut to its ring address", cq_try(d, &r, 8, rsp), EINVAL);
	refused("create_cq, no driver request at all", cq_try(d, &r, 0, rsp), EINVAL);
	r.tail[9] = 0x5a;
	refused("create_cq, a non-zero byte after the request",
		cq_try(d, &r, drv + sizeof(r.tail), rsp), EINVAL);
	cq_base(&r, cq_ring);
	r.c.reserved[3] = 1;
	refused("create_cq, a reserved byte set", cq_try(d, &r, drv, rsp), EINVAL);
	cq_base(&r, cq_ring);
	refused("create_cq, no room for the driver's response",
		cq_try(d, &r, drv, sizeof(struct ib_uverbs_create_cq_resp)), EINVAL);
	r.c.ring_va = 0;
	refused("create_cq, no ring", cq_try(d, &r, drv, rsp), EINVAL);
	r.c.ring_va = (uintptr_t)cq_ring + 64;
	refused("create_cq, ring not page aligned", cq_try(d, &r, drv, rsp), EINVAL);
	cq_base(&r, cq_ring);
	r.c.log2_depth = REQ_LOG2 - 1;
	refused("create_cq, ring of 8 CQEs for 15", cq_try(d, &r, drv, rsp), EINVAL);
	r.c.log2_depth = 1;
	refused("create_cq, ring of 2 CQEs", cq_try(d, &r, drv, rsp), EINVAL);
	r.c.log2_depth = 40;
	refused("create_cq, ring of 2^40 CQEs", cq_try(d, &r, drv, rsp), EINVAL);
	cq_base(&r, hole);
	refused("create_cq, ring in unmapped memory", cq_try(d, &r, drv, rsp), EFAULT);
}

/* ------------------------------------------------------------------------
 * create_qp (RC, its own RQ)
 */

static int qp_try(struct dev *d, struct ibv_cq *cq, struct qp_req *r,
		  size_t drv_len, size_t resp_len)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = REQ_WR, .max_recv_wr = REQ_WR,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct rnic_create_qp_resp resp;
	struct ibv_qp qp;
	int err;

	memset(&qp, 0, sizeof(qp));
	memset(&resp, 0, sizeof(resp));
	err = ibv_cmd_create_qp(d->pd, &qp, &attr, &r->c.ibv_cmd,
				sizeof(r->c.ibv_cmd) + drv_len, &resp.ibv_resp,
				resp_len);
	if (!err && ibv_cmd_destroy_qp(&qp))
		fail("create_qp: destroying a QP made to be destroyed failed");
	return err;
}

static void qp_base(struct qp_req *r, void *sq, void *rq)
{
	memset(r, 0, sizeof(*r));
	r->c.sq_va = (uintptr_t)sq;
	r->c.rq_va = (uintptr_t)rq;
	r->c.sq_log2_depth = REQ_LOG2;
	r->c.sqe_log2 = RNIC_SQE_LOG2_MIN;	/* 48 + 16 bytes: one SGE */
	r->c.rq_log2_depth = REQ_LOG2;
	r->c.rqe_log2 = RNIC_RQE_LOG2_MIN;	/* 16 + 16 bytes: one SGE */
}

static void bad_qp(struct dev *d, uint8_t *sq, uint8_t *rq, uint8_t *hole)
{
	const size_t drv = sizeof(struct rnic_ucreate_qp);
	const size_t rsp = sizeof(struct rnic_create_qp_resp);
	struct ibv_cq *cq;
	struct qp_req r;

	cq = ibv_create_cq(d->ctx, 2 * REQ_WR, NULL, NULL, 0);
	if (!cq) {
		fail("ibv_create_cq for the QPs: %s", strerror(errno));
		return;
	}
	qp_base(&r, sq, rq);
	if (!created("create_qp", qp_try(d, cq, &r, drv, rsp), false))
		goto out;
	created("create_qp", qp_try(d, cq, &r, drv + sizeof(r.tail), rsp), true);

	refused("create_qp, request cut to its SQ address", qp_try(d, cq, &r, 8, rsp), EINVAL);
	r.tail[0] = 1;
	refused("create_qp, a non-zero byte after the request",
		qp_try(d, cq, &r, drv + sizeof(r.tail), rsp), EINVAL);
	qp_base(&r, sq, rq);
	r.c.reserved = 1;
	refused("create_qp, the reserved word set", qp_try(d, cq, &r, drv, rsp), EINVAL);
	qp_base(&r, sq, rq);
	refused("create_qp, no room for the driver's response",
		qp_try(d, cq, &r, drv, sizeof(struct ib_uverbs_create_qp_resp)), EINVAL);
	r.c.sq_log2_depth = REQ_LOG2 - 1;
	refused("create_qp, SQ of 8 WQEs for 15 WRs", qp_try(d, cq, &r, drv, rsp), EINVAL);
	qp_base(&r, sq, rq);
	r.c.rq_log2_depth = REQ_LOG2 - 1;
	refused("create_qp, RQ of 8 WQEs for 15 WRs", qp_try(d, cq, &r, drv, rsp), EINVAL);
	qp_base(&r, sq, rq);
	r.c.sqe_log2 = RNIC_SQE_LOG2_MIN - 1;
	refused("create_qp, SQ WQEs below the device's smallest", qp_try(d, cq, &r, drv, rsp),
		EINVAL);
	qp_base(&r, sq, rq);
	r.c.rqe_log2 = 20;
	refused("create_qp, RQ WQEs of 1 MiB", qp_try(d, cq, &r, drv, rsp), EINVAL);
	qp_base(&r, sq, rq);
	r.c.rq_va = (uintptr_t)rq + 8;
	refused("create_qp, RQ not page aligned", qp_try(d, cq, &r, drv, rsp), EINVAL);
	qp_base(&r, hole, rq);
	refused("create_qp, SQ in unmapped memory", qp_try(d, cq, &r, drv, rsp), EFAULT);
out:
	if (ibv_destroy_cq(cq))
		fail("ibv_destroy_cq: %s", strerror(errno));
}

/* ------------------------------------------------------------------------
 * create_srq
 */

static int srq_try(struct dev *d, struct srq_req *r, size_t drv_len,
		   size_t resp_len)
{
	struct ibv_srq_init_attr attr = {
		.attr = { .max_wr = REQ_WR, .max_sge = 1 },
	};
	struct rnic_create_srq_resp resp;
	struct ibv_srq srq;
	int err;

	memset(&srq, 0, sizeof(srq));
	memset(&resp, 0, sizeof(resp));
	err = ibv_cmd_create_srq(d->pd, &srq, &attr, &r->c.ibv_cmd,
				 sizeof(r->c.ibv_cmd) + drv_len, &resp.ibv_resp,
				 resp_len);
	if (!err && ibv_cmd_destroy_srq(&srq))
		fail("create_srq: destroying an SRQ made to be destroyed failed");
	return err;
}

static void srq_base(struct srq_req *r, void *wqes, void *idx)
{
	memset(r, 0, sizeof(*r));
	r->c.wqe_va = (uintptr_t)wqes;
	r->c.idx_va = (uintptr_t)idx;
	r->c.log2_depth = REQ_LOG2;
	r->c.rqe_log2 = RNIC_RQE_LOG2_MIN;
}

static void bad_srq(struct dev *d, uint8_t *wqes, uint8_t *idx, uint8_t *hole)
{
	const size_t drv = sizeof(struct rnic_ucreate_srq);
	const size_t rsp = sizeof(struct rnic_create_srq_resp);
	struct srq_req r;

	srq_base(&r, wqes, idx);
	if (!created("create_srq", srq_try(d, &r, drv, rsp), false))
		return;
	created("create_srq", srq_try(d, &r, drv + sizeof(r.tail), rsp), true);

	refused("create_srq, request cut to its WQE ring address", srq_try(d, &r, 8, rsp),
		EINVAL);
	r.tail[15] = 0x80;
	refused("create_srq, a non-zero byte after the request",
		srq_try(d, &r, drv + sizeof(r.tail), rsp), EINVAL);
	srq_base(&r, wqes, idx);
	r.c.reserved[5] = 1;
	refused("create_srq, a reserved byte set", srq_try(d, &r, drv, rsp), EINVAL);
	srq_base(&r, wqes, idx);
	r.c.log2_depth = REQ_LOG2 - 1;
	refused("create_srq, ring of 8 WQEs for 15 WRs", srq_try(d, &r, drv, rsp), EINVAL);
	srq_base(&r, wqes, NULL);
	refused("create_srq, no index ring", srq_try(d, &r, drv, rsp), EINVAL);
	srq_base(&r, hole, idx);
	refused("create_srq, WQE ring in unmapped memory", srq_try(d, &r, drv, rsp), EFAULT);
}

void mode_bad_udata(struct dev *d)
{
	long long before[RES_KINDS], after[RES_KINDS];
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *mem, *hole;
	bool have;
	int i;

	have = resources(before);
	/* five rings of a page each, then a hole where a sixth was */
	mem = ring(6 * pg);
	if (!mem)
		return;
	hole = mem + 5 * pg;
	if (munmap(hole, pg)) {
		fail("munmap: %s", strerror(errno));
		munmap(mem, 6 * pg);
		return;
	}
	bad_cq(d, mem, hole);
	bad_qp(d, mem + pg, mem + 2 * pg, hole);
	bad_srq(d, mem + 3 * pg, mem + 4 * pg, hole);
	munmap(mem, 5 * pg);
	note("%d requests refused as the driver documents", refusals);

	/* a refused create leaves nothing, in the kernel or on the device */
	if (!have || !resources(after)) {
		fail("rdma resource show: not readable, resources not compared");
	} else {
		for (i = 0; i < RES_KINDS; i++)
			if (after[i] != before[i])
				fail("%s: %lld before the requests, %lld after", res_names[i],
				     before[i], after[i]);
		resources_note(before, after);
	}
	events_check(d);
}
