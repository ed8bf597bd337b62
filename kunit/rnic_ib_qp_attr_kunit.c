// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for the ABI 2.0 QP attribute mapping
 * (drivers/rnic_ib_qp_attr.c): the connection sequences rdma_cm and the
 * MAD layer drive, every attribute into its MODIFY_QP field, every
 * transition ib_modify_qp_is_ok() refuses, the ranges, and QUERY_QP
 * results back into ib_qp_attr, including values a faulty device could
 * report.
 */
#include <kunit/test.h>
#include <rdma/ib_verbs.h>

#include "rnic_compat.h"
#include "rnic_ib_qp_attr.h"

#define QPN	0x000123
#define PATH	0x1234000ULL

static const struct rnic_ib_qp_limits lim = {
	.port_mtu = IB_MTU_1024,
	.max_qp_rd_atom = 16,
	.max_qp_dest_rd_atom = 16,
	.pkey_tbl_len = 1,
	.privileged = true,
};

static int modify(struct rnic_aq_modify_qp *cmd, enum ib_qp_type type,
		  enum ib_qp_state cur, const struct ib_qp_attr *attr, int mask)
{
	return rnic_ib_modify_qp_cmd(cmd, QPN, type, cur, attr, mask,
				     (mask & IB_QP_AV) ? PATH : 0, &lim);
}

/* RESET -> INIT -> RTR -> RTS of an RC QP, as rdma_cm drives it */
static void qp_rc_connect(struct kunit *test)
{
	struct rnic_aq_modify_qp cmd;
	struct ib_qp_attr a = {};
	int mask;

	a.qp_state = IB_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = 1;
	a.qp_access_flags = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
			    IB_ACCESS_REMOTE_WRITE;
	mask = IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_ACCESS_FLAGS;
	memset(&cmd, 0xa5, sizeof(cmd));
	KUNIT_ASSERT_EQ(test, modify(&cmd, IB_QPT_RC, IB_QPS_RESET, &a, mask), 0);
	KUNIT_EXPECT_EQ(test, cmd.hdr.opcode, RNIC_AQ_MODIFY_QP);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.qpn), QPN);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.attr_mask),
			RNIC_QP_ATTR_STATE | RNIC_QP_ATTR_CUR_STATE |
			RNIC_QP_ATTR_PKEY_INDEX | RNIC_QP_ATTR_ACCESS);
	KUNIT_EXPECT_EQ(test, cmd.state, RNIC_QPS_INIT);
	KUNIT_EXPECT_EQ(test, cmd.cur_state, RNIC_QPS_RESET);
	/* LOCAL_WRITE means nothing on a QP */
	KUNIT_EXPECT_EQ(test, cmd.access,
			RNIC_ACCESS_REMOTE_READ | RNIC_ACCESS_REMOTE_WRITE);
	KUNIT_EXPECT_EQ(test, cmd.path_addr, 0);
	KUNIT_EXPECT_EQ(test, cmd.reserved1[0] | cmd.reserved1[1], 0);
	KUNIT_EXPECT_EQ(test, cmd.reserved0[0] | cmd.reserved0[1] |
			cmd.reserved0[2], 0);

	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	a.path_mtu = IB_MTU_1024;
	a.dest_qp_num = 0xabcdef;
	a.rq_psn = 0xfffffe;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 12;
	mask = IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN |
	       IB_QP_RQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER;
	KUNIT_ASSERT_EQ(test, modify(&cmd, IB_QPT_RC, IB_QPS_INIT, &a, mask), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.attr_mask),
			RNIC_QP_ATTR_STATE | RNIC_QP_ATTR_CUR_STATE |
			RNIC_QP_ATTR_PATH | RNIC_QP_ATTR_PATH_MTU |
			RNIC_QP_ATTR_DEST_QPN | RNIC_QP_ATTR_RQ_PSN |
			RNIC_QP_ATTR_MAX_DEST_RD_ATOMIC |
			RNIC_QP_ATTR_MIN_RNR_TIMER);
	KUNIT_EXPECT_EQ(test, cmd.state, RNIC_QPS_RTR);
	KUNIT_EXPECT_EQ(test, cmd.cur_state, RNIC_QPS_INIT);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(cmd.path_addr), PATH);
	KUNIT_EXPECT_EQ(test, cmd.path_mtu, RNIC_PMTU_1024);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.dest_qpn), 0xabcdef);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.rq_psn), 0xfffffe);
	KUNIT_EXPECT_EQ(test, cmd.max_dest_rd_atomic, 16);
	KUNIT_EXPECT_EQ(test, cmd.min_rnr_timer, 12);
	KUNIT_EXPECT_EQ(test, cmd.sq_psn, 0);
	/* a path without its template */
	KUNIT_EXPECT_EQ(test, rnic_ib_modify_qp_cmd(&cmd, QPN, IB_QPT_RC,
						    IB_QPS_INIT, &a, mask, 0,
						    &lim),
			-EINVAL);
	/* a template the device cannot read as 8-byte words */
	KUNIT_EXPECT_EQ(test, rnic_ib_modify_qp_cmd(&cmd, QPN, IB_QPT_RC,
						    IB_QPS_INIT, &a, mask,
						    PATH + 4, &lim),
			-EINVAL);

	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	a.sq_psn = 0x123456;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 16;
	mask = IB_QP_STATE | IB_QP_SQ_PSN | IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
	       IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC;
	KUNIT_ASSERT_EQ(test, modify(&cmd, IB_QPT_RC, IB_QPS_RTR, &a, mask), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.attr_mask),
			RNIC_QP_ATTR_STATE | RNIC_QP_ATTR_CUR_STATE |
			RNIC_QP_ATTR_SQ_PSN | RNIC_QP_ATTR_TIMEOUT |
			RNIC_QP_ATTR_RETRY_CNT | RNIC_QP_ATTR_RNR_RETRY |
			RNIC_QP_ATTR_MAX_RD_ATOMIC);
	KUNIT_EXPECT_EQ(test, cmd.state, RNIC_QPS_RTS);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.sq_psn), 0x123456);
	KUNIT_EXPECT_EQ(test, cmd.timeout, 14);
	KUNIT_EXPECT_EQ(test, cmd.retry_cnt, 7);
	KUNIT_EXPECT_EQ(test, cmd.rnr_retry, 7);
	KUNIT_EXPECT_EQ(test, cmd.max_rd_atomic, 16);

	/* RTS -> SQD with the drain event, then back */
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_SQD;
	a.en_sqd_async_notify = 1;
	KUNIT_ASSERT_EQ(test, modify(&cmd, IB_QPT_RC, IB_QPS_RTS, &a,
				     IB_QP_STATE | IB_QP_EN_SQD_ASYNC_NOTIFY),
			0);
	KUNIT_EXPECT_EQ(test, cmd.state, RNIC_QPS_SQD);
	KUNIT_EXPECT_EQ(test, cmd.sqd_notify, 1);
	KUNIT_EXPECT_TRUE(test, le32_to_cpu(cmd.attr_mask) &
			  RNIC_QP_ATTR_SQD_NOTIFY);
	a.qp_state = IB_QPS_RTS;
	a.cur_qp_state = IB_QPS_SQD;
	a.min_rnr_timer = 1;
	KUNIT_ASSERT_EQ(test, modify(&cmd, IB_QPT_RC, IB_QPS_SQD, &a,
				     IB_QP_STATE | IB_QP_CUR_STATE |
				     IB_QP_MIN_RNR_TIMER), 0);
	KUNIT_EXPECT_EQ(test, cmd.cur_state, RNIC_QPS_SQD);
	/* IB_QP_CUR_STATE must be what the driver believes */
	a.cur_qp_state = IB_QPS_RTS;
	KUNIT_EXPECT_EQ(test, modify(&cmd, IB_QPT_RC, IB_QPS_SQD, &a,
				     IB_QP_STATE | IB_QP_CUR_STATE), -EINVAL);
}

/* RESET and ERR are reached from anywhere, without CUR_STATE */
static void qp_to_reset_err(struct kunit *test)
{
	static const enum ib_qp_state from[] = {
		IB_QPS_INIT, IB_QPS_RTR, IB_QPS_RTS, IB_QPS_SQD, IB_QPS_ERR,
	};
	struct rnic_aq_modify_qp cmd;
	struct ib_qp_attr a = {};
	int i, t;

	for (t = IB_QPS_RESET; t <= IB_QPS_ERR; t += IB_QPS_ERR) {
		a.qp_state = t;
		for (i = 0; i < ARRAY_SIZE(from); i++) {
			KUNIT_ASSERT_EQ(test, modify(&cmd, IB_QPT_RC, from[i],
						     &a, IB_QP_STATE), 0);
			KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.attr_mask),
					RNIC_QP_ATTR_STATE);
			KUNIT_EXPECT_EQ(test, cmd.state, t == IB_QPS_RESET ?
					RNIC_QPS_RESET : RNIC_QPS_ERR);
			KUNIT_EXPECT_EQ(test, cmd.cur_state, 0);
		}
	}
	/* IBA does not go RESET -> ERR; nor may ERR take attributes */
	KUNIT_EXPECT_EQ(test, modify(&cmd, IB_QPT_RC, IB_QPS_RESET, &a,
				     IB_QP_STATE), -EINVAL);
	a.qkey = 5;
	KUNIT_EXPECT_EQ(test, modify(&cmd, IB_QPT_UD, IB_QPS_RTS, &a,
				     IB_QP_STATE | IB_QP_QKEY), -EINVAL);
}

/* UD and GSI: Q_Key, P_Key index, SQ PSN; the MAD layer's sequence */
static void qp_ud_gsi(struct kunit *test)
{
	struct rnic_aq_modify_qp cmd;
	struct ib_qp_attr a = {};
	struct rnic_ib_qp_limits user = lim;

	a.qp_state = IB_QPS_INIT;
	a.qkey = RNIC_QKEY_GSI;
	KUNIT_ASSERT_EQ(test, modify(&cmd, IB_QPT_GSI, IB_QPS_RESET, &a,
				     IB_QP_STATE | IB_QP_PKEY_INDEX |
				     IB_QP_QKEY), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.qkey), RNIC_QKEY_GSI);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.attr_mask),
			RNIC_QP_ATTR_STATE | RNIC_QP_ATTR_CUR_STATE |
			RNIC_QP_ATTR_PKEY_INDEX | RNIC_QP_ATTR_QKEY);
	/* QP1's Q_Key is the well-known one, on every transition */
	a.qkey = 0x1234;
	KUNIT_EXPECT_EQ(test, modify(&cmd, IB_QPT_GSI, IB_QPS_RESET, &a,
				     IB_QP_STATE | IB_QP_PKEY_INDEX |
				     IB_QP_QKEY), -EINVAL);
	KUNIT_EXPECT_EQ(test, modify(&cmd, IB_QPT_GSI, IB_QPS_INIT, &a,
				     IB_QP_QKEY), -EINVAL);
	/* a UD QP without its Q_Key */
	KUNIT_EXPECT_EQ(test, modify(&cmd, IB_QPT_UD, IB_QPS_RESET, &a,
				     IB_QP_STATE | IB_QP_PKEY_INDEX), -EINVAL);

	a.qp_state = IB_QPS_RTR;
	KUNIT_ASSERT_EQ(test, modify(&cmd, IB_QPT_UD, IB_QPS_INIT, &a,
				     IB_QP_STATE), 0);
	a.qp_state = IB_QPS_RTS;
	a.sq_psn = 0;
	KUNIT_ASSERT_EQ(test, modify(&cmd, IB_QPT_UD, IB_QPS_RTR, &a,
				     IB_QP_STATE | IB_QP_SQ_PSN), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.attr_mask),
			RNIC_QP_ATTR_STATE | RNIC_QP_ATTR_CUR_STATE |
			RNIC_QP_ATTR_SQ_PSN);
	/* RC attributes do not apply to UD */
	KUNIT_EXPECT_EQ(test, modify(&cmd, IB_QPT_UD, IB_QPS_RTR, &a,
				     IB_QP_STATE | IB_QP_SQ_PSN |
				     IB_QP_TIMEOUT), -EINVAL);
	KUNIT_EXPECT_EQ(test, modify(&cmd, IB_QPT_UD, IB_QPS_INIT, &a,
				     IB_QP_AV), -EINVAL);

	/* a controlled Q_Key: kernel PDs only */
	a.qkey = 0x80000001;
	KUNIT_EXPECT_EQ(test, modify(&cmd, IB_QPT_UD, IB_QPS_RTS, &a,
				     IB_QP_QKEY), 0);
	KUNIT_EXPECT_EQ(test, rnic_ib_modify_qp_cmd(&cmd, QPN, IB_QPT_UD,
						    IB_QPS_RTS, &a, IB_QP_QKEY,
						    0, &user),
			0);
	user.privileged = false;
	KUNIT_EXPECT_EQ(test, rnic_ib_modify_qp_cmd(&cmd, QPN, IB_QPT_UD,
						    IB_QPS_RTS, &a, IB_QP_QKEY,
						    0, &user),
			-EPERM);
	a.qkey = 0x7fffffff;
	KUNIT_EXPECT_EQ(test, rnic_ib_modify_qp_cmd(&cmd, QPN, IB_QPT_UD,
						    IB_QPS_RTS, &a, IB_QP_QKEY,
						    0, &user),
			0);
}

/* What ib_modify_qp_is_ok() refuses, and what rnic does not implement */
static void qp_refused(struct kunit *test)
{
	struct rnic_aq_modify_qp cmd, before;
	struct ib_qp_attr a = {};

	memset(&cmd, 0x5a, sizeof(cmd));
	before = cmd;
	/* RESET -> RTR skips INIT */
	a.qp_state = IB_QPS_RTR;
	KUNIT_EXPECT_EQ(test, modify(&cmd, IB_QPT_RC, IB_QPS_RESET, &a,
				     IB_QP_STATE), -EINVAL);
	/* INIT -> RTR without the required path */
	KUNIT_EXPECT_EQ(test, modify(&cmd, IB_QPT_RC, IB_QPS_INIT, &a,
				     IB_QP_STATE | IB_QP_PATH_MTU), -EINVAL);
	/* SQE: never entered, never left */
	a.qp_state = IB_QPS_SQE;
	KUNIT_EXPECT_EQ(test, modify(&cmd, IB_QPT_RC, IB_QPS_RTS, &a,
				     IB_QP_STATE), -EINVAL);
	a.qp_state = IB_QPS_RTS;
	KUNIT_EXPECT_EQ(test, modify(&cmd, IB_QPT_UD, IB_QPS_SQE, &a,
				     IB_QP_STATE), -EINVAL);
	a.qp_state = 7;
	KUNIT_EXPECT_EQ(test, modify(&cmd, IB_QPT_RC, IB_QPS_RTS, &a,
				     IB_QP_STATE), -EINVAL);
	/* CUR_STATE is not allowed leaving INIT (IBA) */
	a.qp_state = IB_QPS_INIT;
	a.cur_qp_state = IB_QPS_INIT;
	KUNIT_EXPECT_EQ(test, modify(&cmd, IB_QPT_RC, IB_QPS_INIT, &a,
				     IB_QP_STATE | IB_QP_CUR_STATE), -EINVAL);
	/* SQD -> SQD path MTU: allowed by the contract, not by IBA */
	a.qp_state = IB_QPS_SQD;
	a.path_mtu = IB_MTU_512;
	KUNIT_EXPECT_EQ(test, modify(&cmd, IB_QPT_RC, IB_QPS_SQD, &a,
				     IB_QP_STATE | IB_QP_PATH_MTU), -EINVAL);
	/* unimplemented: alternate path, rate limit, QP resize; UC, XRC */
	KUNIT_EXPECT_EQ(test, modify(&cmd, IB_QPT_RC, IB_QPS_RTS, &a,
				     IB_QP_ALT_PATH), -EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, modify(&cmd, IB_QPT_RC, IB_QPS_RTS, &a,
				     IB_QP_RATE_LIMIT), -EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, modify(&cmd, IB_QPT_RC, IB_QPS_RTS, &a,
				     IB_QP_CAP), -EOPNOTSUPP);
	a.qp_state = IB_QPS_ERR;
	KUNIT_EXPECT_EQ(test, modify(&cmd, IB_QPT_UC, IB_QPS_RTS, &a,
				     IB_QP_STATE), -EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, modify(&cmd, IB_QPT_XRC_INI, IB_QPS_RTS, &a,
				     IB_QP_STATE), -EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, rnic_ib_modify_qp_cmd(&cmd, 0x1000000, IB_QPT_RC,
						    IB_QPS_RTS, &a, IB_QP_STATE,
						    0, &lim),
			-EINVAL);
	KUNIT_EXPECT_MEMEQ(test, &cmd, &before, sizeof(cmd));
}

/* Every value one past its range, on a transition that allows it */
static void qp_ranges(struct kunit *test)
{
	struct rnic_aq_modify_qp cmd;
	struct ib_qp_attr a;
	int rtr = IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN |
		  IB_QP_RQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER;
	int rts = IB_QP_STATE | IB_QP_SQ_PSN | IB_QP_TIMEOUT |
		  IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC;

#define RTR_BAD(field, val) do {					\
	memset(&a, 0, sizeof(a));					\
	a.qp_state = IB_QPS_RTR;					\
	a.path_mtu = IB_MTU_256;					\
	a.field = (val);						\
	KUNIT_EXPECT_EQ_MSG(test, modify(&cmd, IB_QPT_RC, IB_QPS_INIT,	\
					 &a, rtr), -EINVAL, #field);	\
} while (0)
#define RTS_BAD(field, val) do {					\
	memset(&a, 0, sizeof(a));					\
	a.qp_state = IB_QPS_RTS;					\
	a.field = (val);						\
	KUNIT_EXPECT_EQ_MSG(test, modify(&cmd, IB_QPT_RC, IB_QPS_RTR,	\
					 &a, rts), -EINVAL, #field);	\
} while (0)

	RTR_BAD(path_mtu, IB_MTU_2048);		/* above the port's MTU */
	RTR_BAD(path_mtu, 0);
	RTR_BAD(dest_qp_num, 0x1000000);
	RTR_BAD(rq_psn, 0x1000000);
	RTR_BAD(max_dest_rd_atomic, 17);
	RTR_BAD(min_rnr_timer, 32);
	RTS_BAD(sq_psn, 0x1000000);
	RTS_BAD(timeout, 32);
	RTS_BAD(retry_cnt, 8);
	RTS_BAD(rnr_retry, 8);
	RTS_BAD(max_rd_atomic, 17);
#undef RTR_BAD
#undef RTS_BAD

	/* the largest values are fine */
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	a.path_mtu = IB_MTU_1024;
	a.dest_qp_num = 0xffffff;
	a.rq_psn = 0xffffff;
	a.min_rnr_timer = 31;
	KUNIT_EXPECT_EQ(test, modify(&cmd, IB_QPT_RC, IB_QPS_INIT, &a, rtr), 0);

	/* INIT attributes: port, P_Key index, access rights */
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_INIT;
	a.port_num = 2;
	KUNIT_EXPECT_EQ(test, modify(&cmd, IB_QPT_RC, IB_QPS_RESET, &a,
				     IB_QP_STATE | IB_QP_PKEY_INDEX |
				     IB_QP_PORT | IB_QP_ACCESS_FLAGS), -EINVAL);
	a.port_num = 1;
	a.pkey_index = 1;
	KUNIT_EXPECT_EQ(test, modify(&cmd, IB_QPT_RC, IB_QPS_RESET, &a,
				     IB_QP_STATE | IB_QP_PKEY_INDEX |
				     IB_QP_PORT | IB_QP_ACCESS_FLAGS), -EINVAL);
	a.pkey_index = 0;
	a.qp_access_flags = IB_ACCESS_MW_BIND;
	KUNIT_EXPECT_EQ(test, modify(&cmd, IB_QPT_RC, IB_QPS_RESET, &a,
				     IB_QP_STATE | IB_QP_PKEY_INDEX |
				     IB_QP_PORT | IB_QP_ACCESS_FLAGS), -EINVAL);
	/* no alternate path: the migration state can only be MIGRATED */
	memset(&a, 0, sizeof(a));
	a.path_mig_state = IB_MIG_REARM;
	KUNIT_EXPECT_EQ(test, modify(&cmd, IB_QPT_RC, IB_QPS_RTS, &a,
				     IB_QP_PATH_MIG_STATE), -EINVAL);
	a.path_mig_state = IB_MIG_MIGRATED;
	KUNIT_EXPECT_EQ(test, modify(&cmd, IB_QPT_RC, IB_QPS_RTS, &a,
				     IB_QP_PATH_MIG_STATE), 0);
	/* RTS -> RTS with nothing the device needs: state unchanged */
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.attr_mask),
			RNIC_QP_ATTR_CUR_STATE);
	KUNIT_EXPECT_EQ(test, cmd.cur_state, RNIC_QPS_RTS);
}

static void qp_enum_maps(struct kunit *test)
{
	static const struct {
		enum ib_qp_state ib;
		u8 hw;
	} states[] = {
		{ IB_QPS_RESET, RNIC_QPS_RESET }, { IB_QPS_INIT, RNIC_QPS_INIT },
		{ IB_QPS_RTR, RNIC_QPS_RTR }, { IB_QPS_RTS, RNIC_QPS_RTS },
		{ IB_QPS_SQD, RNIC_QPS_SQD }, { IB_QPS_ERR, RNIC_QPS_ERR },
	};
	static const struct {
		enum ib_mtu ib;
		u8 hw;
	} mtus[] = {
		{ IB_MTU_256, RNIC_PMTU_256 }, { IB_MTU_512, RNIC_PMTU_512 },
		{ IB_MTU_1024, RNIC_PMTU_1024 }, { IB_MTU_2048, RNIC_PMTU_2048 },
		{ IB_MTU_4096, RNIC_PMTU_4096 },
	};
	enum ib_qp_state s;
	enum ib_mtu m;
	int i;

	for (i = 0; i < ARRAY_SIZE(states); i++) {
		KUNIT_EXPECT_EQ(test, rnic_ib_qp_state(states[i].ib),
				states[i].hw);
		KUNIT_ASSERT_EQ(test, rnic_ib_qp_state_to_ib(states[i].hw, &s),
				0);
		KUNIT_EXPECT_EQ(test, s, states[i].ib);
	}
	KUNIT_EXPECT_EQ(test, rnic_ib_qp_state(IB_QPS_SQE), -EINVAL);
	KUNIT_EXPECT_EQ(test, rnic_ib_qp_state_to_ib(RNIC_QPS_SQE, &s), -EIO);
	KUNIT_EXPECT_EQ(test, rnic_ib_qp_state_to_ib(7, &s), -EIO);
	for (i = 0; i < ARRAY_SIZE(mtus); i++) {
		KUNIT_EXPECT_EQ(test, rnic_ib_pmtu(mtus[i].ib), mtus[i].hw);
		KUNIT_ASSERT_EQ(test, rnic_ib_pmtu_to_ib(mtus[i].hw, &m), 0);
		KUNIT_EXPECT_EQ(test, m, mtus[i].ib);
		KUNIT_EXPECT_EQ(test, rnic_pmtu_bytes(mtus[i].hw),
				ib_mtu_enum_to_int(mtus[i].ib));
	}
	KUNIT_EXPECT_EQ(test, rnic_ib_pmtu(0), -EINVAL);
	KUNIT_EXPECT_EQ(test, rnic_ib_pmtu(6), -EINVAL);
	KUNIT_EXPECT_EQ(test, rnic_ib_pmtu_to_ib(0, &m), -EIO);
	KUNIT_EXPECT_EQ(test, rnic_ib_pmtu_to_ib(6, &m), -EIO);

	KUNIT_EXPECT_EQ(test, rnic_ib_qp_type(IB_QPT_RC), RNIC_QPT_RC);
	KUNIT_EXPECT_EQ(test, rnic_ib_qp_type(IB_QPT_UD), RNIC_QPT_UD);
	KUNIT_EXPECT_EQ(test, rnic_ib_qp_type(IB_QPT_GSI), RNIC_QPT_GSI);
	KUNIT_EXPECT_EQ(test, rnic_ib_qp_type(IB_QPT_SMI), -EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, rnic_ib_qp_type(IB_QPT_UC), -EOPNOTSUPP);

	for (i = 0; i < 8; i++) {
		int ib = (i & 1 ? IB_ACCESS_REMOTE_WRITE : 0) |
			 (i & 2 ? IB_ACCESS_REMOTE_READ : 0) |
			 (i & 4 ? IB_ACCESS_REMOTE_ATOMIC : 0);
		int hw = rnic_ib_qp_access(ib);

		KUNIT_ASSERT_GE(test, hw, 0);
		KUNIT_EXPECT_EQ(test, rnic_ib_qp_access_to_ib(hw), ib);
		KUNIT_EXPECT_EQ(test, rnic_ib_qp_access(ib |
							IB_ACCESS_LOCAL_WRITE),
				hw);
	}
	KUNIT_EXPECT_EQ(test, rnic_ib_qp_access(IB_ZERO_BASED), -EINVAL);
	KUNIT_EXPECT_EQ(test, rnic_ib_qp_access_to_ib(RNIC_ACCESS_LOCAL_WRITE),
			-EIO);
	KUNIT_EXPECT_EQ(test, rnic_ib_qp_access_to_ib(0x10), -EIO);
}

static void qp_query(struct kunit *test)
{
	struct rnic_qp_query q = {};
	struct ib_qp_attr a;

	q.state = RNIC_QPS_SQD;
	q.path_mtu = RNIC_PMTU_4096;
	q.access = RNIC_ACCESS_REMOTE_READ | RNIC_ACCESS_REMOTE_ATOMIC;
	q.flags = RNIC_QPQ_F_SQ_DRAINING | RNIC_QPQ_F_SQD_NOTIFY |
		  RNIC_QPQ_F_PATH;
	q.sq_psn = cpu_to_le32(0xabcdef);
	q.rq_psn = cpu_to_le32(0x123);
	q.qkey = cpu_to_le32(0x11223344);
	q.dest_qpn = cpu_to_le32(0x777);
	q.timeout = 31;
	q.retry_cnt = 6;
	q.rnr_retry = 7;
	q.min_rnr_timer = 12;
	q.max_rd_atomic = 4;
	q.max_dest_rd_atomic = 8;
	q.pkey_index = cpu_to_le16(0);
	memset(&a, 0xa5, sizeof(a));
	KUNIT_ASSERT_EQ(test, rnic_ib_query_qp_attr(&q, IB_QPT_RC, &a), 0);
	KUNIT_EXPECT_EQ(test, a.qp_state, IB_QPS_SQD);
	KUNIT_EXPECT_EQ(test, a.cur_qp_state, IB_QPS_SQD);
	KUNIT_EXPECT_EQ(test, a.path_mtu, IB_MTU_4096);
	KUNIT_EXPECT_EQ(test, a.qp_access_flags,
			IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC);
	KUNIT_EXPECT_EQ(test, a.sq_psn, 0xabcdef);
	KUNIT_EXPECT_EQ(test, a.rq_psn, 0x123);
	KUNIT_EXPECT_EQ(test, a.qkey, 0x11223344);
	KUNIT_EXPECT_EQ(test, a.dest_qp_num, 0x777);
	KUNIT_EXPECT_EQ(test, a.timeout, 31);
	KUNIT_EXPECT_EQ(test, a.retry_cnt, 6);
	KUNIT_EXPECT_EQ(test, a.rnr_retry, 7);
	KUNIT_EXPECT_EQ(test, a.min_rnr_timer, 12);
	KUNIT_EXPECT_EQ(test, a.max_rd_atomic, 4);
	KUNIT_EXPECT_EQ(test, a.max_dest_rd_atomic, 8);
	KUNIT_EXPECT_EQ(test, a.pkey_index, 0);
	KUNIT_EXPECT_EQ(test, a.port_num, 1);
	KUNIT_EXPECT_EQ(test, a.sq_draining, 1);
	KUNIT_EXPECT_EQ(test, a.en_sqd_async_notify, 1);
	KUNIT_EXPECT_EQ(test, a.path_mig_state, IB_MIG_MIGRATED);

	/* a UD QP has no path MTU */
	q.path_mtu = 0;
	KUNIT_EXPECT_EQ(test, rnic_ib_query_qp_attr(&q, IB_QPT_UD, &a), 0);
	KUNIT_EXPECT_EQ(test, a.path_mtu, 0);
	q.path_mtu = RNIC_PMTU_1024;
	KUNIT_EXPECT_EQ(test, rnic_ib_query_qp_attr(&q, IB_QPT_UD, &a), -EIO);
	q.path_mtu = 0;
	/* an RC QP past INIT must have one */
	KUNIT_EXPECT_EQ(test, rnic_ib_query_qp_attr(&q, IB_QPT_RC, &a), -EIO);
	q.state = RNIC_QPS_INIT;
	KUNIT_EXPECT_EQ(test, rnic_ib_query_qp_attr(&q, IB_QPT_RC, &a), 0);
	q.path_mtu = RNIC_PMTU_256;

	/* values a device must not report */
#define QUERY_BAD(field, val) do {					\
	struct rnic_qp_query bad = q;					\
	bad.field = (val);						\
	KUNIT_EXPECT_EQ_MSG(test, rnic_ib_query_qp_attr(&bad, IB_QPT_RC, &a), \
			    -EIO, #field);				\
} while (0)
	QUERY_BAD(state, RNIC_QPS_SQE);
	QUERY_BAD(state, 9);
	QUERY_BAD(path_mtu, 6);
	QUERY_BAD(access, RNIC_ACCESS_LOCAL_WRITE);
	QUERY_BAD(sq_psn, cpu_to_le32(0x1000000));
	QUERY_BAD(rq_psn, cpu_to_le32(0x1000000));
	QUERY_BAD(dest_qpn, cpu_to_le32(0x1000000));
	QUERY_BAD(timeout, 32);
	QUERY_BAD(retry_cnt, 8);
	QUERY_BAD(rnr_retry, 8);
	QUERY_BAD(min_rnr_timer, 32);
#undef QUERY_BAD
}

static struct kunit_case rnic_ib_qp_attr_cases[] = {
	KUNIT_CASE(qp_rc_connect),
	KUNIT_CASE(qp_to_reset_err),
	KUNIT_CASE(qp_ud_gsi),
	KUNIT_CASE(qp_refused),
	KUNIT_CASE(qp_ranges),
	KUNIT_CASE(qp_enum_maps),
	KUNIT_CASE(qp_query),
	{}
};

static struct kunit_suite rnic_ib_qp_attr_suite = {
	.name = "rnic_ib_qp_attr",
	.test_cases = rnic_ib_qp_attr_cases,
};

kunit_test_suite(rnic_ib_qp_attr_suite);
