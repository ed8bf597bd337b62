// SPDX-License-Identifier: GPL-2.0
/*
 * The bottom of the RC engine: what the requester, the completer and the
 * responder share (counters, emit, completions, the timer deadline, the
 * wake) and the error state every one of them may put the QP in. It
 * calls none of the rc_*.c files above it: it asks the roles whether they
 * have something to send, and flushes them, through qp->roles.
 */
#include <errno.h>

#include "transport/rc.h"

void rc_count(struct rc_qp *qp, unsigned int stat, u64 n)
{
	int q = -1;

	qp->stats[stat] += n;
	if (qp->port_stats)
		qp->port_stats[stat] += n;
	/* The per-QP list repeats some port counters. */
	switch (stat) {
	case RNIC_RDMA_STAT_retransmits:
		q = RNIC_QP_STAT_retransmits;
		break;
	case RNIC_RDMA_STAT_local_ack_timeouts:
		q = RNIC_QP_STAT_local_ack_timeouts;
		break;
	case RNIC_RDMA_STAT_rnr_naks_sent:
		q = RNIC_QP_STAT_rnr_naks_sent;
		break;
	case RNIC_RDMA_STAT_rnr_naks_rcvd:
		q = RNIC_QP_STAT_rnr_naks_rcvd;
		break;
	case RNIC_RDMA_STAT_nak_seq_sent:
		q = RNIC_QP_STAT_nak_seq_sent;
		break;
	case RNIC_RDMA_STAT_nak_seq_rcvd:
		q = RNIC_QP_STAT_nak_seq_rcvd;
		break;
	case RNIC_RDMA_STAT_duplicate_requests:
		q = RNIC_QP_STAT_duplicate_requests;
		break;
	case RNIC_RDMA_STAT_out_of_sequence:
		q = RNIC_QP_STAT_out_of_sequence;
		break;
	}
	if (q >= 0)
		qp->qp_stats[q] += n;
}

int rc_emit(struct rc_qp *qp, const u8 *pkt, size_t len)
{
	int rc = qp->ops->emit(qp, pkt, len);

	if (rc == -EAGAIN)
		return rc;
	/* Lost on a down link counts as sent: the timers recover it. */
	qp->qp_stats[RNIC_QP_STAT_tx_packets]++;
	qp->qp_stats[RNIC_QP_STAT_tx_bytes] += len;
	return 0;
}

void rc_complete(struct rc_qp *qp, const struct rc_cqe *cqe)
{
	if (qp->cq_dead)
		return;
	if (cqe->status == RNIC_WC_WR_FLUSH_ERR)
		RC_STAT_INC(qp, cqe_flushed);
	else if (cqe->status != RNIC_WC_SUCCESS)
		RC_STAT_INC(qp, cqe_errors);
	if (qp->ops->complete(qp, cqe) < 0) {
		/*
		 * The CQ is overrun or in error: nothing more can be
		 * reported through it, so the QP dies with QP_FATAL.
		 */
		qp->cq_dead = true;
		rc_engine_fatal(qp, RNIC_ERR_CQ_ERROR, 0);
	}
}

u32 rc_npsn(const struct rc_qp *qp, u32 len)
{
	/* A zero-length message is one packet without payload. */
	if (!len)
		return 1;
	return (u32)(((u64)len + qp->mtu - 1) / qp->mtu);
}

u8 rc_sge_copy(struct rc_qp *qp, enum rc_mem_op op, const struct rc_sge *sge,
	       unsigned int num, u32 off, void *buf, u32 len)
{
	u8 *p = buf;
	unsigned int i;
	u8 syn;

	for (i = 0; i < num && len; i++) {
		u32 n;

		if (off >= sge[i].len) {
			off -= sge[i].len;
			continue;
		}
		n = min_t(u32, sge[i].len - off, len);
		syn = qp->ops->mem(qp, op, sge[i].lkey, sge[i].addr + off,
				   p, n);
		if (syn)
			return syn;
		p += n;
		len -= n;
		off = 0;
	}
	/* Callers check lengths first; running out is a malformed WQE. */
	return len ? RNIC_ERR_BAD_WQE : 0;
}

void rc_set_state(struct rc_qp *qp, u8 state)
{
	u8 old = qp->state;

	qp->state = state;
	if (old != state && qp->ops->state_changed)
		qp->ops->state_changed(qp, old, state);
}

void rc_timer_update(struct rc_qp *qp)
{
	u64 a = qp->req.ack_deadline, r = qp->req.rnr_deadline, d;

	d = a && r ? min_t(u64, a, r) : a | r;
	if (d != qp->timer_armed) {
		qp->timer_armed = d;
		qp->ops->timer_set(qp, d);
	}
}

bool rc_tx_pending(const struct rc_qp *qp)
{
	return qp->roles->resp_pending(qp) || qp->roles->req_pending(qp);
}

void rc_kick(struct rc_qp *qp)
{
	if (rc_tx_pending(qp))
		qp->ops->wake(qp);
}

void rc_enter_err(struct rc_qp *qp)
{
	if (qp->in_err || qp->state == RNIC_QPS_ERR)
		return;
	qp->in_err = true;
	rc_set_state(qp, RNIC_QPS_ERR);
	qp->req.ack_deadline = 0;
	qp->req.rnr_deadline = 0;
	qp->req.rnr_wait = false;
	rc_timer_update(qp);
	/* Queued responses die with the QP; a final NAK still goes out. */
	qp->resp.q_head = qp->resp.q_tail;
	qp->roles->req_flush(qp);
	qp->roles->resp_flush(qp);
	/* An SRQ-attached QP has now completed every WQE it took. */
	if (qp->srq)
		qp->ops->event(qp, RNIC_EQE_LAST_WQE_REACHED, 0, 0);
	qp->in_err = false;
	rc_kick(qp);
}

void rc_engine_fatal(struct rc_qp *qp, u8 reason, u64 info)
{
	qp->ops->event(qp, RNIC_EQE_QP_FATAL, reason, info);
	if (qp->state != RNIC_QPS_ERR) {
		RC_STAT_INC(qp, qp_errors);
		rc_enter_err(qp);
	}
}
