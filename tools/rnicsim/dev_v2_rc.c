// SPDX-License-Identifier: GPL-2.0
/*
 * rnicsim device model, ABI 2.0: where RC QPs meet the RC transport
 * engine. Until the engine is wired in, an RC QP runs only the local
 * operations of its SQ (REG_MR, LOCAL_INV) and stops at the first WQE
 * that needs the wire; received RC packets are dropped here.
 */
#include <errno.h>

#include "dev_v2.h"

int v2_rc_create(struct rdev *d, struct v2_qp *qp)
{
	(void)d;
	(void)qp;
	return 0;
}

void v2_rc_destroy(struct rdev *d, struct v2_qp *qp)
{
	(void)d;
	(void)qp;
}

void v2_rc_modified(struct rdev *d, struct v2_qp *qp, u8 old_state,
		    u32 attr_mask)
{
	(void)d;
	(void)qp;
	(void)old_state;
	(void)attr_mask;
}

/* An RC WQE that fails moves the QP to ERR; its CQE is the report. */
static bool rc_fail(struct rdev *d, struct v2_qp *qp, const struct v2_swqe *w,
		    u8 status, u8 syndrome)
{
	v2_sq_complete(d, qp, w->idx, w->opcode, status, syndrome, 0, true);
	v2_qp_fatal(d, qp, 0, syndrome, w->idx);
	return false;
}

bool v2_rc_send_step(struct rdev *d, struct v2_qp *qp)
{
	struct v2_swqe w;
	u8 syn;

	if (qp->state != RNIC_QPS_RTS || qp->sq_next == qp->sq_pi)
		return false;
	syn = v2_sq_fetch(d, qp, qp->sq_next, &w);
	if (syn == RNIC_ERR_DMA_OOB) {
		v2_qp_fatal(d, qp, RNIC_EQE_QP_FATAL, RNIC_ERR_DMA_OOB,
			    v2_ring_addr(&qp->sq, qp->sq_next));
		return false;
	}
	if (syn)
		return rc_fail(d, qp, &w, RNIC_WC_LOC_QP_OP_ERR, syn);
	if (w.opcode != RNIC_SQE_OP_LOCAL_INV && w.opcode != RNIC_SQE_OP_REG_MR)
		return false;	/* needs the transport engine */
	syn = v2_local_op(d, qp, &w);
	if (syn) {
		V2_INC(d, key_violations);
		return rc_fail(d, qp, &w, RNIC_WC_LOC_QP_OP_ERR, syn);
	}
	v2_sq_complete(d, qp, w.idx, w.opcode, RNIC_WC_SUCCESS, 0, 0,
		       w.flags & RNIC_SQE_F_SIGNALED);
	return qp->sq_next != qp->sq_pi;
}

void v2_rc_recv(struct rdev *d, struct v2_qp *qp, struct v2_pkt *pkt)
{
	(void)d;
	(void)qp;
	(void)pkt;
}

u64 v2_rc_tick(struct rdev *d, u64 now)
{
	(void)d;
	(void)now;
	return 0;
}

bool v2_rc_sq_busy(struct rdev *d, struct v2_qp *qp)
{
	(void)d;
	(void)qp;
	return false;
}

void v2_rc_stop(struct rdev *d, struct v2_qp *qp)
{
	(void)d;
	(void)qp;
}

void v2_rc_query(struct rdev *d, struct v2_qp *qp, struct rnic_qp_query *q)
{
	(void)d;
	(void)qp;
	(void)q;
}
