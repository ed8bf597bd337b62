// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic ABI 2.0: QP attributes between the verbs and MODIFY_QP/QUERY_QP.
 *
 * The device checks each MODIFY_QP against its transition table and
 * fails a bad one as a whole; the driver checks the request first so a
 * verbs caller gets the errno ib_core's own rules give (IBA table 91, as
 * ib_modify_qp_is_ok() encodes it), and the device's check only has to
 * catch a driver whose idea of the QP's state is stale. Every enum that
 * crosses the interface is mapped by name, never by value, in both
 * directions, and every value the device returns is range-checked.
 */
#include <kunit/visibility.h>
#include <linux/string.h>
#include <rdma/ib_verbs.h>

#include "rnic_compat.h"
#include "rnic_ib_qp_attr.h"

/* ib_qp_attr_mask bits MODIFY_QP carries, and what each becomes */
static const struct {
	u32 ib;
	u32 hw;
} rnic_ib_attr_bits[] = {
	{ IB_QP_STATE,			RNIC_QP_ATTR_STATE },
	{ IB_QP_ACCESS_FLAGS,		RNIC_QP_ATTR_ACCESS },
	{ IB_QP_PKEY_INDEX,		RNIC_QP_ATTR_PKEY_INDEX },
	{ IB_QP_QKEY,			RNIC_QP_ATTR_QKEY },
	{ IB_QP_AV,			RNIC_QP_ATTR_PATH },
	{ IB_QP_PATH_MTU,		RNIC_QP_ATTR_PATH_MTU },
	{ IB_QP_TIMEOUT,		RNIC_QP_ATTR_TIMEOUT },
	{ IB_QP_RETRY_CNT,		RNIC_QP_ATTR_RETRY_CNT },
	{ IB_QP_RNR_RETRY,		RNIC_QP_ATTR_RNR_RETRY },
	{ IB_QP_RQ_PSN,			RNIC_QP_ATTR_RQ_PSN },
	{ IB_QP_MAX_QP_RD_ATOMIC,	RNIC_QP_ATTR_MAX_RD_ATOMIC },
	{ IB_QP_MIN_RNR_TIMER,		RNIC_QP_ATTR_MIN_RNR_TIMER },
	{ IB_QP_SQ_PSN,			RNIC_QP_ATTR_SQ_PSN },
	{ IB_QP_MAX_DEST_RD_ATOMIC,	RNIC_QP_ATTR_MAX_DEST_RD_ATOMIC },
	{ IB_QP_DEST_QPN,		RNIC_QP_ATTR_DEST_QPN },
	{ IB_QP_EN_SQD_ASYNC_NOTIFY,	RNIC_QP_ATTR_SQD_NOTIFY },
};

/*
 * Attributes the driver takes without passing them on: the port (there
 * is one) and the migration state (no alternate path: always MIGRATED).
 * The current state is the driver's to send (rnic_ib_modify_qp_cmd()).
 */
#define RNIC_IB_ATTR_CONSUMED	(IB_QP_CUR_STATE | IB_QP_PORT |		\
				 IB_QP_PATH_MIG_STATE)

/**
 * rnic_ib_qp_type() - device QP type of a verbs QP type
 * @type: the verbs QP type
 *
 * Return: enum rnic_qp_type_hw, or -EOPNOTSUPP (UC, XRC, raw, SMI).
 */
int rnic_ib_qp_type(enum ib_qp_type type)
{
	switch (type) {
	case IB_QPT_RC:
		return RNIC_QPT_RC;
	case IB_QPT_UD:
		return RNIC_QPT_UD;
	case IB_QPT_GSI:
		return RNIC_QPT_GSI;
	default:
		return -EOPNOTSUPP;
	}
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_qp_type);

/**
 * rnic_ib_qp_state() - device QP state of a verbs QP state
 * @state: the verbs state
 *
 * Return: enum rnic_qp_state_hw, or -EINVAL for SQE (the device never
 * enters it and refuses transitions to and from it) and unknown values.
 */
int rnic_ib_qp_state(enum ib_qp_state state)
{
	switch (state) {
	case IB_QPS_RESET:
		return RNIC_QPS_RESET;
	case IB_QPS_INIT:
		return RNIC_QPS_INIT;
	case IB_QPS_RTR:
		return RNIC_QPS_RTR;
	case IB_QPS_RTS:
		return RNIC_QPS_RTS;
	case IB_QPS_SQD:
		return RNIC_QPS_SQD;
	case IB_QPS_ERR:
		return RNIC_QPS_ERR;
	default:
		return -EINVAL;
	}
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_qp_state);

/**
 * rnic_ib_qp_state_to_ib() - verbs QP state of a device QP state
 * @state: a state the device reported (QUERY_QP, MODIFY_QP's response)
 * @ib_state: gets the verbs state
 *
 * Return: 0, or -EIO for a value the device must never report (SQE
 * included).
 */
int rnic_ib_qp_state_to_ib(u8 state, enum ib_qp_state *ib_state)
{
	switch (state) {
	case RNIC_QPS_RESET:
		*ib_state = IB_QPS_RESET;
		break;
	case RNIC_QPS_INIT:
		*ib_state = IB_QPS_INIT;
		break;
	case RNIC_QPS_RTR:
		*ib_state = IB_QPS_RTR;
		break;
	case RNIC_QPS_RTS:
		*ib_state = IB_QPS_RTS;
		break;
	case RNIC_QPS_SQD:
		*ib_state = IB_QPS_SQD;
		break;
	case RNIC_QPS_ERR:
		*ib_state = IB_QPS_ERR;
		break;
	default:
		return -EIO;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_qp_state_to_ib);

/**
 * rnic_ib_pmtu() - device path MTU of a verbs MTU
 * @mtu: IB_MTU_256 .. IB_MTU_4096
 *
 * Return: enum rnic_pmtu, or -EINVAL.
 */
int rnic_ib_pmtu(enum ib_mtu mtu)
{
	switch (mtu) {
	case IB_MTU_256:
		return RNIC_PMTU_256;
	case IB_MTU_512:
		return RNIC_PMTU_512;
	case IB_MTU_1024:
		return RNIC_PMTU_1024;
	case IB_MTU_2048:
		return RNIC_PMTU_2048;
	case IB_MTU_4096:
		return RNIC_PMTU_4096;
	default:
		return -EINVAL;
	}
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_pmtu);

/**
 * rnic_ib_pmtu_to_ib() - verbs MTU of a device path MTU
 * @pmtu: enum rnic_pmtu, as the device reported it
 * @mtu: gets the verbs MTU
 *
 * Return: 0, or -EIO for a value that is not a path MTU.
 */
int rnic_ib_pmtu_to_ib(u8 pmtu, enum ib_mtu *mtu)
{
	switch (pmtu) {
	case RNIC_PMTU_256:
		*mtu = IB_MTU_256;
		break;
	case RNIC_PMTU_512:
		*mtu = IB_MTU_512;
		break;
	case RNIC_PMTU_1024:
		*mtu = IB_MTU_1024;
		break;
	case RNIC_PMTU_2048:
		*mtu = IB_MTU_2048;
		break;
	case RNIC_PMTU_4096:
		*mtu = IB_MTU_4096;
		break;
	default:
		return -EIO;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_pmtu_to_ib);

/**
 * rnic_ib_qp_access() - device access rights of a QP's verbs access flags
 * @ib_access: ib_qp_attr.qp_access_flags
 *
 * A QP's rights are what incoming requests may do; IB_ACCESS_LOCAL_WRITE
 * means nothing on a QP, but ULPs pass it along with the remote rights
 * (ib_core does not filter it), so it is accepted and dropped.
 *
 * Return: RNIC_ACCESS_REMOTE_* bits, or -EINVAL for other flags.
 */
int rnic_ib_qp_access(int ib_access)
{
	int hw = 0;

	if (ib_access & ~(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			  IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC))
		return -EINVAL;
	if (ib_access & IB_ACCESS_REMOTE_WRITE)
		hw |= RNIC_ACCESS_REMOTE_WRITE;
	if (ib_access & IB_ACCESS_REMOTE_READ)
		hw |= RNIC_ACCESS_REMOTE_READ;
	if (ib_access & IB_ACCESS_REMOTE_ATOMIC)
		hw |= RNIC_ACCESS_REMOTE_ATOMIC;
	return hw;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_qp_access);

/**
 * rnic_ib_qp_access_to_ib() - verbs access flags of a QP's device rights
 * @access: RNIC_ACCESS_REMOTE_* as QUERY_QP reported them
 *
 * Return: IB_ACCESS_REMOTE_* flags, or -EIO for a bit that is not a
 * remote right.
 */
int rnic_ib_qp_access_to_ib(u8 access)
{
	int ib = 0;

	if (access & ~(RNIC_ACCESS_REMOTE_WRITE | RNIC_ACCESS_REMOTE_READ |
		       RNIC_ACCESS_REMOTE_ATOMIC))
		return -EIO;
	if (access & RNIC_ACCESS_REMOTE_WRITE)
		ib |= IB_ACCESS_REMOTE_WRITE;
	if (access & RNIC_ACCESS_REMOTE_READ)
		ib |= IB_ACCESS_REMOTE_READ;
	if (access & RNIC_ACCESS_REMOTE_ATOMIC)
		ib |= IB_ACCESS_REMOTE_ATOMIC;
	return ib;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_qp_access_to_ib);

/* Values the command's fields or the device's limits cannot take */
static int rnic_ib_check_values(enum ib_qp_type type,
				const struct ib_qp_attr *attr, int mask,
				u64 path_addr,
				const struct rnic_ib_qp_limits *lim)
{
	if ((mask & IB_QP_PORT) && attr->port_num != 1)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MIG_STATE) &&
	    attr->path_mig_state != IB_MIG_MIGRATED)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index >= lim->pkey_tbl_len)
		return -EINVAL;
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    rnic_ib_qp_access(attr->qp_access_flags) < 0)
		return -EINVAL;
	/* the device refuses a template it cannot read as 8-byte words */
	if ((mask & IB_QP_AV) && (!path_addr || !IS_ALIGNED(path_addr, 8)))
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (rnic_ib_pmtu(attr->path_mtu) < 0 || attr->path_mtu > lim->port_mtu))
		return -EINVAL;
	/* 5-bit codes of the CM and of the RNR NAK */
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > RNIC_QP_TIMEOUT_MAX)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) &&
	    attr->min_rnr_timer > RNIC_QP_RNR_TIMER_MAX)
		return -EINVAL;
	/* 3-bit counters */
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > RNIC_QP_RETRY_MAX)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) &&
	    attr->rnr_retry > RNIC_QP_RNR_RETRY_INFINITE)
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > lim->max_qp_rd_atom)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > lim->max_qp_dest_rd_atom)
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && attr->dest_qp_num & ~RNIC_BTH_QPN)
		return -EINVAL;
	if ((mask & IB_QP_SQ_PSN) && attr->sq_psn & ~RNIC_BTH_PSN)
		return -EINVAL;
	if ((mask & IB_QP_RQ_PSN) && attr->rq_psn & ~RNIC_BTH_PSN)
		return -EINVAL;
	if (mask & IB_QP_QKEY) {
		/* QP1 receives with the well-known GSI Q_Key only */
		if (type == IB_QPT_GSI && attr->qkey != RNIC_QKEY_GSI)
			return -EINVAL;
		/* controlled Q_Keys are for kernel consumers (IBA 10.2.4) */
		if (type != IB_QPT_GSI && (attr->qkey & RNIC_QKEY_F_CONTROLLED) &&
		    !lim->privileged)
			return -EPERM;
	}
	return 0;
}

/**
 * rnic_ib_modify_qp_cmd() - build MODIFY_QP from a verbs modify_qp request
 * @cmd: the admin command to fill (its hdr.cmd_id is the admin queue's)
 * @qpn: the QP
 * @type: its verbs type
 * @cur: the state the driver believes the QP is in
 * @attr: the verbs attributes
 * @mask: IB_QP_* present in @attr
 * @path_addr: with IB_QP_AV: DMA address of the struct rnic_hdr_tmpl the
 *	caller built from @attr->ah_attr (rnic_ib_tmpl_build()); else 0
 * @lim: the device's limits and the QP's PD privilege
 *
 * The request is checked as ib_core's rules say (ib_modify_qp_is_ok()),
 * plus what the device does not implement (SQE, alternate paths) and
 * the value ranges of the command and of the device's limits.
 *
 * The command carries CUR_STATE = @cur for every transition but those to
 * RESET and ERR: if the device moved the QP to ERR on its own, a request
 * validated against a stale @cur fails with BAD_TRANSITION and the
 * response's state lets the driver resync, instead of being applied from
 * a state nobody checked it against. Moves to RESET and ERR are valid
 * from every state and must not fail that way (ib_drain_qp() moves a QP
 * the device may already have failed to ERR).
 *
 * Return: 0; -EINVAL for a request the verbs rules or the ranges refuse
 * (or whose IB_QP_CUR_STATE is not @cur); -EOPNOTSUPP for a QP type or an
 * attribute rnic does not implement; -EPERM for a controlled Q_Key on a
 * QP whose PD is not privileged. @cmd is not written on error.
 */
int rnic_ib_modify_qp_cmd(struct rnic_aq_modify_qp *cmd, u32 qpn,
			  enum ib_qp_type type, enum ib_qp_state cur,
			  const struct ib_qp_attr *attr, int mask,
			  u64 path_addr, const struct rnic_ib_qp_limits *lim)
{
	u32 known = RNIC_IB_ATTR_CONSUMED, hw_mask = 0;
	enum ib_qp_state new;
	int i, err;

	for (i = 0; i < ARRAY_SIZE(rnic_ib_attr_bits); i++)
		known |= rnic_ib_attr_bits[i].ib;
	if (mask & ~known)
		return -EOPNOTSUPP;
	if (rnic_ib_qp_type(type) < 0)
		return -EOPNOTSUPP;
	if (qpn & ~RNIC_BTH_QPN)
		return -EINVAL;

	new = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	if (rnic_ib_qp_state(cur) < 0 || rnic_ib_qp_state(new) < 0)
		return -EINVAL;
	if ((mask & IB_QP_CUR_STATE) && attr->cur_qp_state != cur)
		return -EINVAL;
	if (!ib_modify_qp_is_ok(cur, new, type, mask))
		return -EINVAL;
	err = rnic_ib_check_values(type, attr, mask, path_addr, lim);
	if (err)
		return err;

	memset(cmd, 0, sizeof(*cmd));
	cmd->hdr.opcode = RNIC_AQ_MODIFY_QP;
	cmd->qpn = cpu_to_le32(qpn);
	for (i = 0; i < ARRAY_SIZE(rnic_ib_attr_bits); i++)
		if (mask & rnic_ib_attr_bits[i].ib)
			hw_mask |= rnic_ib_attr_bits[i].hw;
	if (new != IB_QPS_RESET && new != IB_QPS_ERR) {
		hw_mask |= RNIC_QP_ATTR_CUR_STATE;
		cmd->cur_state = rnic_ib_qp_state(cur);
	}
	cmd->attr_mask = cpu_to_le32(hw_mask);

	if (mask & IB_QP_STATE)
		cmd->state = rnic_ib_qp_state(new);
	if (mask & IB_QP_AV)
		cmd->path_addr = cpu_to_le64(path_addr);
	if (mask & IB_QP_SQ_PSN)
		cmd->sq_psn = cpu_to_le32(attr->sq_psn);
	if (mask & IB_QP_RQ_PSN)
		cmd->rq_psn = cpu_to_le32(attr->rq_psn);
	if (mask & IB_QP_QKEY)
		cmd->qkey = cpu_to_le32(attr->qkey);
	if (mask & IB_QP_DEST_QPN)
		cmd->dest_qpn = cpu_to_le32(attr->dest_qp_num);
	if (mask & IB_QP_PATH_MTU)
		cmd->path_mtu = rnic_ib_pmtu(attr->path_mtu);
	if (mask & IB_QP_ACCESS_FLAGS)
		cmd->access = rnic_ib_qp_access(attr->qp_access_flags);
	if (mask & IB_QP_TIMEOUT)
		cmd->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		cmd->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		cmd->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_MIN_RNR_TIMER)
		cmd->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		cmd->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		cmd->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_PKEY_INDEX)
		cmd->pkey_index = cpu_to_le16(attr->pkey_index);
	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		cmd->sqd_notify = !!attr->en_sqd_async_notify;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_modify_qp_cmd);

/**
 * rnic_ib_query_qp_attr() - verbs attributes of a QUERY_QP result
 * @q: the result the device wrote
 * @type: the QP's verbs type
 * @attr: gets the state, path MTU (RC), access flags, PSNs, Q_Key,
 *	destination QPN, timers, retry counts, RD/atomic depths, P_Key
 *	index, port and the SQ drain state; ah_attr and cap are the
 *	caller's (the device does not return the path: the driver keeps
 *	the attributes it built the template from)
 *
 * Return: 0, or -EIO for a value the device must not report (an unknown
 * state or SQE, a path MTU that is none on an RC QP or any on a UD QP,
 * rights that are not remote rights, PSNs, QPNs, codes or counts out of
 * range).
 */
int rnic_ib_query_qp_attr(const struct rnic_qp_query *q, enum ib_qp_type type,
			  struct ib_qp_attr *attr)
{
	enum ib_qp_state state;
	enum ib_mtu mtu = 0;
	u32 sq_psn = le32_to_cpu(q->sq_psn), rq_psn = le32_to_cpu(q->rq_psn);
	u32 dqpn = le32_to_cpu(q->dest_qpn);
	int access;

	if (rnic_ib_qp_state_to_ib(q->state, &state))
		return -EIO;
	/* a UD QP has no path MTU; an RC QP has one from INIT->RTR on */
	if (type != IB_QPT_RC && q->path_mtu)
		return -EIO;
	if (q->path_mtu && rnic_ib_pmtu_to_ib(q->path_mtu, &mtu))
		return -EIO;
	if (type == IB_QPT_RC && !q->path_mtu && state != IB_QPS_RESET &&
	    state != IB_QPS_INIT && state != IB_QPS_ERR)
		return -EIO;
	access = rnic_ib_qp_access_to_ib(q->access);
	if (access < 0)
		return -EIO;
	if (((sq_psn | rq_psn | dqpn) & ~RNIC_BTH_PSN) ||
	    q->timeout > RNIC_QP_TIMEOUT_MAX ||
	    q->retry_cnt > RNIC_QP_RETRY_MAX ||
	    q->rnr_retry > RNIC_QP_RNR_RETRY_INFINITE ||
	    q->min_rnr_timer > RNIC_QP_RNR_TIMER_MAX)
		return -EIO;

	attr->qp_state = state;
	attr->cur_qp_state = state;
	attr->path_mtu = mtu;
	attr->path_mig_state = IB_MIG_MIGRATED;
	attr->qkey = le32_to_cpu(q->qkey);
	attr->rq_psn = rq_psn;
	attr->sq_psn = sq_psn;
	attr->dest_qp_num = dqpn;
	attr->qp_access_flags = access;
	attr->pkey_index = le16_to_cpu(q->pkey_index);
	attr->alt_pkey_index = 0;
	attr->en_sqd_async_notify = !!(q->flags & RNIC_QPQ_F_SQD_NOTIFY);
	attr->sq_draining = !!(q->flags & RNIC_QPQ_F_SQ_DRAINING);
	attr->max_rd_atomic = q->max_rd_atomic;
	attr->max_dest_rd_atomic = q->max_dest_rd_atomic;
	attr->min_rnr_timer = q->min_rnr_timer;
	attr->port_num = 1;
	attr->timeout = q->timeout;
	attr->retry_cnt = q->retry_cnt;
	attr->rnr_retry = q->rnr_retry;
	attr->alt_port_num = 0;
	attr->alt_timeout = 0;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_query_qp_attr);
