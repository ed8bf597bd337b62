// SPDX-License-Identifier: GPL-2.0
/*
 * The RC engine's QP: state transitions (MODIFY_QP), the inputs the
 * device calls (doorbells, RX, the timer, QP_FATAL) and the transmit
 * arbiter between responder and requester. It dispatches to the roles
 * (rc_req.c, rc_comp.c, rc_resp.c); what they share is rc_base.c.
 */
#include <string.h>

#include "transport/rc.h"

/* ------------------------------------------------------------------------
 * Error state the device decides (the engine's own is in rc_base.c)
 */

void rc_fatal(struct rc_qp *qp, u8 reason, u64 info)
{
	if (qp->state == RNIC_QPS_RESET)
		return;
	if (reason == RNIC_ERR_CQ_ERROR)
		qp->cq_dead = true;
	qp->ops->event(qp, RNIC_EQE_QP_FATAL, reason, info);
	rc_enter_err(qp);
}

/* ------------------------------------------------------------------------
 * Creation and MODIFY_QP
 */

static void rc_reset(struct rc_qp *qp)
{
	qp->path_mtu = 0;
	qp->mtu = 256;
	qp->access = 0;
	qp->timeout = 0;
	qp->retry_cnt = 0;
	qp->rnr_retry = 0;
	qp->min_rnr_timer = 0;
	qp->max_rd_atomic = 0;
	qp->max_dest_rd_atomic = 0;
	qp->sqd_notify = 0;
	qp->dest_qpn = 0;
	qp->cq_dead = false;
	qp->in_err = false;
	rc_req_reset(qp, 0);
	rc_resp_reset(qp, 0);
	qp->req.ack_deadline = 0;
	qp->req.rnr_deadline = 0;
	rc_timer_update(qp);
}

/* What rc_base.c calls of the roles (see struct rc_roles) */
static const struct rc_roles rc_roles = {
	.req_pending = rc_req_pending,
	.resp_pending = rc_resp_pending,
	.req_flush = rc_req_flush,
	.resp_flush = rc_resp_flush,
};

void rc_qp_init(struct rc_qp *qp, const struct rc_ops *ops, void *priv,
		u32 qpn)
{
	memset(qp, 0, sizeof(*qp));
	qp->roles = &rc_roles;
	qp->ops = ops;
	qp->priv = priv;
	qp->qpn = qpn & RC_PSN_MASK;
	qp->pkey = RNIC_PKEY_DEFAULT;
	qp->state = RNIC_QPS_RESET;
	qp->mtu = 256;
}

#define A(x)	RNIC_QP_ATTR_##x

struct rc_trans {
	u8 from;
	u8 to;
	u32 req;
	u32 opt;
};

/* The RC rows of hardware-rdma.rst's MODIFY_QP table (RESET/ERR aside). */
static const struct rc_trans rc_trans[] = {
	{ RNIC_QPS_RESET, RNIC_QPS_INIT, A(PKEY_INDEX) | A(ACCESS), 0 },
	{ RNIC_QPS_INIT, RNIC_QPS_INIT, 0, A(PKEY_INDEX) | A(ACCESS) },
	{ RNIC_QPS_INIT, RNIC_QPS_RTR,
	  A(PATH) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN) |
	  A(MAX_DEST_RD_ATOMIC) | A(MIN_RNR_TIMER),
	  A(PKEY_INDEX) | A(ACCESS) },
	{ RNIC_QPS_RTR, RNIC_QPS_RTS,
	  A(SQ_PSN) | A(TIMEOUT) | A(RETRY_CNT) | A(RNR_RETRY) |
	  A(MAX_RD_ATOMIC),
	  A(ACCESS) | A(MIN_RNR_TIMER) },
	{ RNIC_QPS_RTS, RNIC_QPS_RTS, 0, A(ACCESS) | A(MIN_RNR_TIMER) },
	{ RNIC_QPS_RTS, RNIC_QPS_SQD, 0, A(SQD_NOTIFY) },
	{ RNIC_QPS_SQD, RNIC_QPS_RTS, 0, A(ACCESS) | A(MIN_RNR_TIMER) },
	{ RNIC_QPS_SQD, RNIC_QPS_SQD, 0,
	  A(PATH) | A(TIMEOUT) | A(RETRY_CNT) | A(RNR_RETRY) |
	  A(MAX_RD_ATOMIC) | A(MAX_DEST_RD_ATOMIC) | A(ACCESS) |
	  A(PKEY_INDEX) | A(MIN_RNR_TIMER) },
};

bool rc_sq_draining(const struct rc_qp *qp)
{
	return qp->state == RNIC_QPS_SQD &&
	       qp->req.una_idx != qp->req.next_idx;
}

u8 rc_modify_check(const struct rc_qp *qp, const struct rc_attr *attr)
{
	u32 mask = attr->mask, extra;
	u8 to = mask & A(STATE) ? attr->state : qp->state;
	const struct rc_trans *t = NULL;
	unsigned int i;

	if (mask & ~RNIC_QP_ATTR_ALL)
		return RNIC_AQ_BAD_ATTR_MASK;
	if (to > RNIC_QPS_ERR ||
	    (mask & A(CUR_STATE) && attr->cur_state > RNIC_QPS_ERR))
		return RNIC_AQ_BAD_PARAM;
	if (mask & A(CUR_STATE) && attr->cur_state != qp->state)
		return RNIC_AQ_BAD_TRANSITION;
	/* This device never enters SQE, and refuses to pretend it does. */
	if (to == RNIC_QPS_SQE || qp->state == RNIC_QPS_SQE)
		return RNIC_AQ_BAD_TRANSITION;
	/* IBA table 91: RESET goes to INIT or stays; never to ERR. */
	if (qp->state == RNIC_QPS_RESET && to == RNIC_QPS_ERR)
		return RNIC_AQ_BAD_TRANSITION;
	extra = mask & ~(A(STATE) | A(CUR_STATE));
	if (to == RNIC_QPS_RESET || to == RNIC_QPS_ERR) {
		if (!(mask & A(STATE)) && extra)
			return RNIC_AQ_BAD_TRANSITION;
		return extra ? RNIC_AQ_BAD_ATTR_MASK : RNIC_AQ_SUCCESS;
	}
	for (i = 0; i < ARRAY_SIZE(rc_trans); i++)
		if (rc_trans[i].from == qp->state && rc_trans[i].to == to)
			t = &rc_trans[i];
	if (!t)
		return RNIC_AQ_BAD_TRANSITION;
	if ((extra & t->req) != t->req || (extra & ~(t->req | t->opt)))
		return RNIC_AQ_BAD_ATTR_MASK;
	if (mask & A(PATH_MTU) && !rnic_pmtu_bytes(attr->path_mtu))
		return RNIC_AQ_BAD_PARAM;
	if (mask & A(ACCESS) && attr->access & ~RNIC_ACCESS_ALL)
		return RNIC_AQ_BAD_PARAM;
	if (mask & A(TIMEOUT) && attr->timeout > RNIC_QP_TIMEOUT_MAX)
		return RNIC_AQ_BAD_PARAM;
	if (mask & A(RETRY_CNT) && attr->retry_cnt > RNIC_QP_RETRY_MAX)
		return RNIC_AQ_BAD_PARAM;
	if (mask & A(RNR_RETRY) && attr->rnr_retry > RNIC_QP_RETRY_MAX)
		return RNIC_AQ_BAD_PARAM;
	if (mask & A(MIN_RNR_TIMER) &&
	    attr->min_rnr_timer > RNIC_QP_RNR_TIMER_MAX)
		return RNIC_AQ_BAD_PARAM;
	if (mask & A(MAX_RD_ATOMIC) && attr->max_rd_atomic > RC_MAX_RD_ATOMIC)
		return RNIC_AQ_BAD_PARAM;
	if (mask & A(MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > RC_MAX_RD_ATOMIC)
		return RNIC_AQ_BAD_PARAM;
	if (mask & A(SQD_NOTIFY) && attr->sqd_notify > 1)
		return RNIC_AQ_BAD_PARAM;
	if ((mask & A(SQ_PSN) && attr->sq_psn > RC_PSN_MASK) ||
	    (mask & A(RQ_PSN) && attr->rq_psn > RC_PSN_MASK) ||
	    (mask & A(DEST_QPN) && attr->dest_qpn > RC_PSN_MASK))
		return RNIC_AQ_BAD_PARAM;
	/* SQD->SQD may change the path only once nothing is in flight. */
	if (qp->state == RNIC_QPS_SQD && to == RNIC_QPS_SQD && extra &&
	    rc_sq_draining(qp))
		return RNIC_AQ_BAD_STATE;
	return RNIC_AQ_SUCCESS;
}

static void rc_check_drained(struct rc_qp *qp)
{
	if (qp->state == RNIC_QPS_SQD && !rc_sq_draining(qp) &&
	    qp->sqd_notify && !qp->req.drained_sent) {
		qp->req.drained_sent = true;
		qp->ops->event(qp, RNIC_EQE_SQ_DRAINED, 0, 0);
	}
}

u8 rc_modify(struct rc_qp *qp, const struct rc_attr *attr)
{
	u32 mask = attr->mask;
	u8 from = qp->state, to = mask & A(STATE) ? attr->state : qp->state;
	u8 st = rc_modify_check(qp, attr);

	if (st != RNIC_AQ_SUCCESS)
		return st;
	if (to == RNIC_QPS_RESET) {
		rc_reset(qp);
		rc_set_state(qp, RNIC_QPS_RESET);
		return RNIC_AQ_SUCCESS;
	}
	if (to == RNIC_QPS_ERR) {
		rc_enter_err(qp);
		return RNIC_AQ_SUCCESS;
	}
	if (from == RNIC_QPS_RESET)
		rc_reset(qp);
	if (mask & A(ACCESS))
		qp->access = attr->access;
	if (mask & A(PATH_MTU)) {
		qp->path_mtu = attr->path_mtu;
		qp->mtu = rnic_pmtu_bytes(attr->path_mtu);
	}
	if (mask & A(DEST_QPN))
		qp->dest_qpn = attr->dest_qpn;
	if (mask & A(RQ_PSN))
		rc_resp_reset(qp, attr->rq_psn);
	if (mask & A(MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic != qp->max_dest_rd_atomic) {
		/* A new ring size: forget the replay state of the old one. */
		qp->max_dest_rd_atomic = attr->max_dest_rd_atomic;
		memset(qp->resp.res, 0, sizeof(qp->resp.res));
		qp->resp.res_next = 0;
	}
	if (mask & A(MIN_RNR_TIMER))
		qp->min_rnr_timer = attr->min_rnr_timer;
	if (mask & A(SQ_PSN))
		rc_req_reset(qp, attr->sq_psn);
	if (mask & A(TIMEOUT))
		qp->timeout = attr->timeout;
	if (mask & A(RETRY_CNT)) {
		qp->retry_cnt = attr->retry_cnt;
		qp->req.retry_left = attr->retry_cnt;
	}
	if (mask & A(RNR_RETRY)) {
		qp->rnr_retry = attr->rnr_retry;
		qp->req.rnr_left = attr->rnr_retry;
	}
	if (mask & A(MAX_RD_ATOMIC))
		qp->max_rd_atomic = attr->max_rd_atomic;
	if (from != RNIC_QPS_SQD && to == RNIC_QPS_SQD) {
		qp->sqd_notify = mask & A(SQD_NOTIFY) ? attr->sqd_notify : 0;
		qp->req.drained_sent = false;
	}
	rc_set_state(qp, to);
	rc_check_drained(qp);
	rc_kick(qp);
	return RNIC_AQ_SUCCESS;
}

/* ------------------------------------------------------------------------
 * Inputs
 */

void rc_sq_doorbell(struct rc_qp *qp)
{
	qp->req.sq_more = true;
	if (qp->state == RNIC_QPS_ERR)
		rc_req_flush(qp);
	else
		rc_kick(qp);
}

void rc_rq_doorbell(struct rc_qp *qp)
{
	if (qp->state == RNIC_QPS_ERR && !qp->srq)
		rc_resp_flush(qp);
}

void rc_rx(struct rc_qp *qp, const u8 *pkt, size_t len)
{
	struct rc_hdr h;

	if (qp->state != RNIC_QPS_RTR && qp->state != RNIC_QPS_RTS &&
	    qp->state != RNIC_QPS_SQD)
		return;
	if (rc_pkt_parse(pkt, len, &h) || h.dest_qpn != qp->qpn)
		return;
	qp->qp_stats[RNIC_QP_STAT_rx_packets]++;
	qp->qp_stats[RNIC_QP_STAT_rx_bytes] += len;
	if (h.opcode >= RC_OP_READ_RESP_FIRST && h.opcode <= RC_OP_ATOMIC_ACK)
		rc_comp_rx(qp, &h);
	else
		rc_resp_rx(qp, &h);
	rc_check_drained(qp);
	rc_kick(qp);
}

void rc_timer(struct rc_qp *qp)
{
	/*
	 * The device's timer has fired and is spent: whatever the deadline
	 * is now, tell the device (even "none").
	 */
	qp->timer_armed = ~0ULL;
	if (qp->state == RNIC_QPS_RTS || qp->state == RNIC_QPS_SQD)
		rc_comp_timer(qp, qp->ops->now_ns(qp));
	rc_timer_update(qp);
	rc_check_drained(qp);
	rc_kick(qp);
}

void rc_timer_defer(struct rc_qp *qp, u64 ns)
{
	if (qp->req.ack_deadline)
		qp->req.ack_deadline += ns;
	if (qp->req.rnr_deadline)
		qp->req.rnr_deadline += ns;
	rc_timer_update(qp);
}

unsigned int rc_tx(struct rc_qp *qp, unsigned int budget)
{
	unsigned int n = 0;

	while (n < budget) {
		bool resp_first = qp->resp.tx_turn;
		int rc;

		/* Alternate, so neither side starves the other. */
		rc = resp_first ? rc_resp_tx_one(qp) : rc_req_tx_one(qp);
		if (rc == 0)
			rc = resp_first ? rc_req_tx_one(qp) :
					  rc_resp_tx_one(qp);
		else
			qp->resp.tx_turn = !resp_first;
		if (rc <= 0)
			break;
		n++;
	}
	rc_check_drained(qp);
	return n;
}

u32 rc_sq_psn(const struct rc_qp *qp)
{
	return qp->req.next_psn;
}

u32 rc_rq_psn(const struct rc_qp *qp)
{
	return qp->resp.epsn;
}
