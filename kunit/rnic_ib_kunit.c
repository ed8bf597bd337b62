// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for the pure logic behind rnic's ib_device: which RoCE
 * versions the port advertises per roce_mode (ib_core derives the GID
 * types and rdma_cm's accepted default_roce_mode from it), the speed,
 * width and MTU query_port reports, the node GUID, the numeric firmware
 * version, the SET_PORT command that carries the RoCE module
 * parameters, the QP state a device's error event leaves, modify_qp
 * once the device has failed, and the SRQ slot a QP's RESET or destroy
 * reports dropped.
 */
#include <kunit/test.h>
#include <linux/bitmap.h>
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "rnic_hw.h"
#include "rnic_ib.h"
#include "rnic_param.h"
#include "rnic_verbs.h"

static void cap_flags_per_roce_mode(struct kunit *test)
{
	const u32 common = RDMA_CORE_CAP_IB_MAD | RDMA_CORE_CAP_IB_CM |
			   RDMA_CORE_CAP_AF_IB | RDMA_CORE_CAP_ETH_AH;
	u32 f;

	f = rnic_ib_core_cap_flags(RNIC_ROCE_V1);
	KUNIT_EXPECT_TRUE(test, f & RDMA_CORE_CAP_PROT_ROCE);
	KUNIT_EXPECT_FALSE(test, f & RDMA_CORE_CAP_PROT_ROCE_UDP_ENCAP);
	KUNIT_EXPECT_EQ(test, f & common, common);

	f = rnic_ib_core_cap_flags(RNIC_ROCE_V2);
	KUNIT_EXPECT_FALSE(test, f & RDMA_CORE_CAP_PROT_ROCE);
	KUNIT_EXPECT_TRUE(test, f & RDMA_CORE_CAP_PROT_ROCE_UDP_ENCAP);
	KUNIT_EXPECT_EQ(test, f & common, common);

	f = rnic_ib_core_cap_flags(RNIC_ROCE_BOTH);
	KUNIT_EXPECT_TRUE(test, f & RDMA_CORE_CAP_PROT_ROCE);
	KUNIT_EXPECT_TRUE(test, f & RDMA_CORE_CAP_PROT_ROCE_UDP_ENCAP);
	KUNIT_EXPECT_EQ(test, f & common, common);
}

static void cap_flags_are_roce_only(struct kunit *test)
{
	const u32 not_ours = RDMA_CORE_CAP_PROT_IB | RDMA_CORE_CAP_PROT_IWARP |
			     RDMA_CORE_CAP_PROT_RAW_PACKET |
			     RDMA_CORE_CAP_PROT_USNIC | RDMA_CORE_CAP_IB_SMI |
			     RDMA_CORE_CAP_IB_SA | RDMA_CORE_CAP_IW_CM |
			     RDMA_CORE_CAP_OPA_MAD;
	u8 mode;

	for (mode = RNIC_ROCE_V1; mode <= RNIC_ROCE_BOTH; mode++)
		KUNIT_EXPECT_EQ_MSG(test, rnic_ib_core_cap_flags(mode) & not_ours,
				    0, "roce_mode %u", mode);
	KUNIT_EXPECT_EQ(test, rnic_ib_core_cap_flags(0), 0);
}

/* Per-lane signalling rate of an IB speed, Mb/s. */
static u32 lane_mbps(u16 speed)
{
	switch (speed) {
	case IB_SPEED_SDR: return 2500;
	case IB_SPEED_DDR: return 5000;
	case IB_SPEED_QDR: return 10000;
	case IB_SPEED_FDR10: return 10000;
	case IB_SPEED_FDR: return 14000;
	case IB_SPEED_EDR: return 25000;
	case IB_SPEED_HDR: return 50000;
	case IB_SPEED_NDR: return 100000;
#ifdef RNIC_HAVE_IB_SPEED_XDR
	case IB_SPEED_XDR: return 200000;
#endif
	default: return 0;
	}
}

static u32 lanes(u8 width)
{
	switch (width) {
	case IB_WIDTH_1X: return 1;
	case IB_WIDTH_2X: return 2;
	case IB_WIDTH_4X: return 4;
	case IB_WIDTH_8X: return 8;
	case IB_WIDTH_12X: return 12;
	default: return 0;
	}
}

static void speed_width_known_answers(struct kunit *test)
{
	static const struct {
		u32 mbps;
		u16 speed;
		u8 width;
	} kat[] = {
		{ 0, IB_SPEED_SDR, IB_WIDTH_1X },	/* unknown */
		{ 100, IB_SPEED_SDR, IB_WIDTH_1X },
		{ 1000, IB_SPEED_SDR, IB_WIDTH_1X },
		{ 2500, IB_SPEED_SDR, IB_WIDTH_1X },
		{ 5000, IB_SPEED_DDR, IB_WIDTH_1X },
		{ 10000, IB_SPEED_QDR, IB_WIDTH_1X },
		{ 25000, IB_SPEED_EDR, IB_WIDTH_1X },
		{ 30000, IB_SPEED_EDR, IB_WIDTH_1X },	/* not 40 */
		{ 40000, IB_SPEED_QDR, IB_WIDTH_4X },
		{ 50000, IB_SPEED_HDR, IB_WIDTH_1X },
		{ 100000, IB_SPEED_EDR, IB_WIDTH_4X },
		{ 200000, IB_SPEED_HDR, IB_WIDTH_4X },
		{ 400000, IB_SPEED_NDR, IB_WIDTH_4X },
#ifdef RNIC_HAVE_IB_SPEED_XDR
		{ 800000, IB_SPEED_XDR, IB_WIDTH_4X },
		{ U32_MAX, IB_SPEED_XDR, IB_WIDTH_4X },
#else	/* ib_core cannot express 800 Gb/s (rnic_compat.h) */
		{ 800000, IB_SPEED_NDR, IB_WIDTH_4X },
		{ U32_MAX, IB_SPEED_NDR, IB_WIDTH_4X },
#endif
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(kat); i++) {
		u16 speed = 0xffff;
		u8 width = 0xff;

		rnic_ib_speed_width(kat[i].mbps, &speed, &width);
		KUNIT_EXPECT_EQ_MSG(test, speed, kat[i].speed, "%u Mb/s",
				    kat[i].mbps);
		KUNIT_EXPECT_EQ_MSG(test, width, kat[i].width, "%u Mb/s",
				    kat[i].mbps);
	}
}

/*
 * From 2.5 Gb/s up, the reported rate never exceeds the port speed and
 * never falls as the port gets faster.
 */
static void speed_width_never_overstates(struct kunit *test)
{
	u32 prev = 0, mbps;

	for (mbps = 2500; mbps <= 1000000; mbps += 500) {
		u16 speed;
		u8 width;
		u32 rate;

		rnic_ib_speed_width(mbps, &speed, &width);
		rate = lane_mbps(speed) * lanes(width);
		KUNIT_ASSERT_NE_MSG(test, rate, 0, "%u Mb/s: speed %u width %u",
				    mbps, speed, width);
		KUNIT_EXPECT_LE_MSG(test, rate, mbps, "%u Mb/s", mbps);
		KUNIT_EXPECT_GE_MSG(test, rate, prev, "%u Mb/s", mbps);
		prev = rate;
	}
}

static void active_mtu(struct kunit *test)
{
	/* RoCE headers iboe_get_mtu() reserves: GRH+UDP+BTH+XRC+AtomicETH+ICRC */
	const unsigned int hdr = 40 + 8 + 12 + 4 + 28 + 4;

	KUNIT_EXPECT_EQ(test, rnic_ib_active_mtu(1500), IB_MTU_1024);
	KUNIT_EXPECT_EQ(test, rnic_ib_active_mtu(9000), IB_MTU_4096);
	KUNIT_EXPECT_EQ(test, rnic_ib_active_mtu(4096 + hdr), IB_MTU_4096);
	KUNIT_EXPECT_EQ(test, rnic_ib_active_mtu(4096 + hdr - 1), IB_MTU_2048);
	KUNIT_EXPECT_EQ(test, rnic_ib_active_mtu(2048 + hdr), IB_MTU_2048);
	KUNIT_EXPECT_EQ(test, rnic_ib_active_mtu(2048 + hdr - 1), IB_MTU_1024);
	KUNIT_EXPECT_EQ(test, rnic_ib_active_mtu(1024 + hdr), IB_MTU_1024);
	KUNIT_EXPECT_EQ(test, rnic_ib_active_mtu(1024 + hdr - 1), IB_MTU_512);
	KUNIT_EXPECT_EQ(test, rnic_ib_active_mtu(512 + hdr), IB_MTU_512);
	KUNIT_EXPECT_EQ(test, rnic_ib_active_mtu(256 + hdr), IB_MTU_256);
	/* too small for any IB MTU: the smallest one, never 0 */
	KUNIT_EXPECT_EQ(test, rnic_ib_active_mtu(256 + hdr - 1), IB_MTU_256);
	KUNIT_EXPECT_EQ(test, rnic_ib_active_mtu(RNIC_MTU_MIN), IB_MTU_256);
	KUNIT_EXPECT_EQ(test, rnic_ib_active_mtu(0), IB_MTU_256);
	/* no overflow into a negative int */
	KUNIT_EXPECT_EQ(test, rnic_ib_active_mtu(UINT_MAX), IB_MTU_4096);
}

static void guid_from_mac(struct kunit *test)
{
	static const u8 mac1[ETH_ALEN] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
	static const u8 mac2[ETH_ALEN] = { 0x00, 0x1b, 0x21, 0xaa, 0xbb, 0xcc };

	/* modified EUI-64: U/L bit flipped, ff:fe in the middle */
	KUNIT_EXPECT_EQ(test, be64_to_cpu(rnic_ib_guid_from_mac(mac1)),
			0x505400fffe123456ULL);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(rnic_ib_guid_from_mac(mac2)),
			0x021b21fffeaabbccULL);
}

static void fw_ver_from_version_string(struct kunit *test)
{
	/* what rnicsim reports, and the layout mlx5 and libibverbs use */
	KUNIT_EXPECT_EQ(test, rnic_ib_fw_ver("rnicsim 2.0"), 2ULL << 32);
	KUNIT_EXPECT_EQ(test, rnic_ib_fw_ver("rnicsim 2.1.17"),
			2ULL << 32 | 1 << 16 | 17);
	KUNIT_EXPECT_EQ(test, rnic_ib_fw_ver("acme nic fw 10.4"),
			10ULL << 32 | 4 << 16);
	KUNIT_EXPECT_EQ(test, rnic_ib_fw_ver("3"), 3ULL << 32);
	KUNIT_EXPECT_EQ(test, rnic_ib_fw_ver("65535.65535.65535"),
			0xffffffffffffULL);

	/* no version in the last word: unknown, not a guess */
	KUNIT_EXPECT_EQ(test, rnic_ib_fw_ver(""), 0ULL);
	KUNIT_EXPECT_EQ(test, rnic_ib_fw_ver("rnicsim"), 0ULL);
	KUNIT_EXPECT_EQ(test, rnic_ib_fw_ver("rnicsim "), 0ULL);
	KUNIT_EXPECT_EQ(test, rnic_ib_fw_ver("rnicsim 2.0-rc1"), 0ULL);
	KUNIT_EXPECT_EQ(test, rnic_ib_fw_ver("rnicsim ibd.0"), 0ULL);
	KUNIT_EXPECT_EQ(test, rnic_ib_fw_ver("rnicsim 2..0"), 0ULL);
	KUNIT_EXPECT_EQ(test, rnic_ib_fw_ver("rnicsim 2.0."), 0ULL);
	KUNIT_EXPECT_EQ(test, rnic_ib_fw_ver("rnicsim .2"), 0ULL);
	KUNIT_EXPECT_EQ(test, rnic_ib_fw_ver("rnicsim 1.2.3.4"), 0ULL);
	/* a field that does not fit 16 bits would spill into the next */
	KUNIT_EXPECT_EQ(test, rnic_ib_fw_ver("rnicsim 2.65536"), 0ULL);
	KUNIT_EXPECT_EQ(test, rnic_ib_fw_ver("rnicsim 99999999999999999999"),
			0ULL);
}

static const struct rnic_params defaults = {
	.roce_mode = RNIC_ROCE_BOTH,
	.roce_udp_port = RNIC_ROCE_V2_PORT_DEFAULT,
	.pfc_prio = RNIC_PFC_OFF,
	.eth_ring_size = RNIC_ETH_RING_DEFAULT,
	.user_kick_map = true,
};

static bool all_zero(const void *p, size_t len)
{
	return !memchr_inv(p, 0, len);
}

static void set_port_defaults(struct kunit *test)
{
	struct rnic_aq_set_port cmd;

	memset(&cmd, 0xa5, sizeof(cmd));
	rnic_ib_build_set_port(&cmd, &defaults, RNIC_CAP_ALL, 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.valid),
			RNIC_PORT_VALID_UDP_PORT | RNIC_PORT_VALID_FLAGS);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(cmd.udp_port), 4791);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.flags), 0);
	/* the netdev's groups and everything reserved stay zero */
	KUNIT_EXPECT_TRUE(test, all_zero(&cmd.hdr, sizeof(cmd.hdr)));
	KUNIT_EXPECT_EQ(test, cmd.mtu, 0);
	KUNIT_EXPECT_TRUE(test, all_zero(cmd.mac, sizeof(cmd.mac)));
	KUNIT_EXPECT_EQ(test, cmd.pfc_prio, 0);
	KUNIT_EXPECT_EQ(test, cmd.pfc_xoff_quanta, 0);
	KUNIT_EXPECT_EQ(test, cmd.pfc_low_wm, 0);
	KUNIT_EXPECT_EQ(test, cmd.pfc_high_wm, 0);
	KUNIT_EXPECT_EQ(test, cmd.reserved0, 0);
	KUNIT_EXPECT_EQ(test, cmd.reserved1, 0);
	KUNIT_EXPECT_TRUE(test, all_zero(cmd.reserved2, sizeof(cmd.reserved2)));
}

static void set_port_udp_port(struct kunit *test)
{
	struct rnic_params p = defaults;
	struct rnic_aq_set_port cmd;

	p.roce_udp_port = 1021;
	rnic_ib_build_set_port(&cmd, &p, RNIC_CAP_ALL, 0);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(cmd.udp_port), 1021);
	KUNIT_EXPECT_TRUE(test, le32_to_cpu(cmd.valid) & RNIC_PORT_VALID_UDP_PORT);
}

static void set_port_pfc(struct kunit *test)
{
	struct rnic_params p = defaults;
	struct rnic_aq_set_port cmd;
	s8 prio;

	for (prio = 0; prio <= RNIC_MAX_PRIO; prio++) {
		p.pfc_prio = prio;
		rnic_ib_build_set_port(&cmd, &p, RNIC_CAP_ALL, 0);
		KUNIT_EXPECT_TRUE(test, le32_to_cpu(cmd.valid) & RNIC_PORT_VALID_PFC);
		KUNIT_EXPECT_TRUE(test, le32_to_cpu(cmd.flags) & RNIC_PORT_F_PFC);
		KUNIT_EXPECT_EQ(test, cmd.pfc_prio, prio);
		/* the device's defaults */
		KUNIT_EXPECT_EQ(test, cmd.pfc_xoff_quanta, 0);
		KUNIT_EXPECT_EQ(test, cmd.pfc_low_wm, 0);
		KUNIT_EXPECT_EQ(test, cmd.pfc_high_wm, 0);
	}

	/* a device without PFC is never asked for it (it would refuse) */
	p.pfc_prio = 3;
	rnic_ib_build_set_port(&cmd, &p, RNIC_CAP_ALL & ~RNIC_CAP_PFC, 0);
	KUNIT_EXPECT_FALSE(test, le32_to_cpu(cmd.valid) & RNIC_PORT_VALID_PFC);
	KUNIT_EXPECT_FALSE(test, le32_to_cpu(cmd.flags) & RNIC_PORT_F_PFC);

	/* pfc_prio=off turns PFC off even if it was on */
	rnic_ib_build_set_port(&cmd, &defaults, RNIC_CAP_ALL, RNIC_PORT_F_PFC);
	KUNIT_EXPECT_FALSE(test, le32_to_cpu(cmd.valid) & RNIC_PORT_VALID_PFC);
	KUNIT_EXPECT_FALSE(test, le32_to_cpu(cmd.flags) & RNIC_PORT_F_PFC);
}

/*
 * The RX ICRC flags belong to ABI 1.0's frame rings; the NIC checks the
 * ICRC in its transport and refuses them, so they are cleared whatever
 * the capabilities say.
 */
static void set_port_no_icrc(struct kunit *test)
{
	struct rnic_aq_set_port cmd;

	rnic_ib_build_set_port(&cmd, &defaults, RNIC_CAP_ICRC, 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.flags), 0);

	rnic_ib_build_set_port(&cmd, &defaults, RNIC_CAP_ALL,
			       RNIC_PORT_F_RX_ICRC_CHECK |
			       RNIC_PORT_F_RX_ICRC_DELIVER_BAD);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.flags), 0);
}

/* The flags word is written whole: the netdev's bits must survive. */
static void set_port_keeps_netdev_flags(struct kunit *test)
{
	struct rnic_aq_set_port cmd;

	rnic_ib_build_set_port(&cmd, &defaults, RNIC_CAP_ALL,
			       RNIC_PORT_F_RX_VLAN_STRIP | RNIC_PORT_F_PFC |
			       RNIC_PORT_F_RX_ICRC_DELIVER_BAD);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.flags), RNIC_PORT_F_RX_VLAN_STRIP);

	/* bits the contract does not define are never sent */
	rnic_ib_build_set_port(&cmd, &defaults, 0, (u32)~RNIC_PORT_F_ALL);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.flags), 0);
}

struct qp_event_ctx {
	struct work_struct work;
	struct rnic_ib_qp *qp;
};

/* What the event work does for a QP_FATAL, QP_REQ_ERR or QP_ACCESS_ERR */
static void qp_event_work(struct work_struct *work)
{
	rnic_ib_qp_dev_err(container_of(work, struct qp_event_ctx, work)->qp);
}

/*
 * The device's error event moves the QP to ERR under the QP's state lock:
 * a modify_qp that holds the lock across its command and then writes the
 * device's answer (RTS here) must not overwrite the ERR, which comes after
 * it. A QP reset since the event stays in RESET.
 */
static void qp_dev_err_event(struct kunit *test)
{
	struct qp_event_ctx *ctx;
	struct rnic_ib_qp *qp;

	qp = kunit_kzalloc(test, sizeof(*qp), GFP_KERNEL);
	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, qp);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	mutex_init(&qp->state_lock);
	ctx->qp = qp;
	INIT_WORK(&ctx->work, qp_event_work);

	/* modify_qp RTR -> RTS in progress: the event waits for it */
	mutex_lock(&qp->state_lock);
	qp->state = IB_QPS_RTR;
	schedule_work(&ctx->work);
	msleep(50);
	KUNIT_EXPECT_EQ(test, READ_ONCE(qp->state), IB_QPS_RTR);
	WRITE_ONCE(qp->state, IB_QPS_RTS);
	mutex_unlock(&qp->state_lock);
	flush_work(&ctx->work);
	KUNIT_EXPECT_EQ(test, qp->state, IB_QPS_ERR);

	/* the event of a QP reset since: its error is gone with the reset */
	qp->state = IB_QPS_RESET;
	rnic_ib_qp_dev_err(qp);
	KUNIT_EXPECT_EQ(test, qp->state, IB_QPS_RESET);
	qp->state = IB_QPS_SQD;
	rnic_ib_qp_dev_err(qp);
	KUNIT_EXPECT_EQ(test, qp->state, IB_QPS_ERR);
	mutex_destroy(&qp->state_lock);
}

/*
 * A QP with its locks and error work ready and one CQ for both queues,
 * its ring empty: RESET scrubs nothing.
 */
static struct rnic_ib_qp *kernel_qp(struct kunit *test, u32 qpn)
{
	struct rnic_ib_cq *cq;
	struct rnic_ib_qp *qp;

	qp = kunit_kzalloc(test, sizeof(*qp), GFP_KERNEL);
	cq = kunit_kzalloc(test, sizeof(*cq), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, qp);
	KUNIT_ASSERT_NOT_NULL(test, cq);
	cq->log2_depth = 2;
	cq->ring = kunit_kcalloc(test, 4, sizeof(*cq->ring), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, cq->ring);
	spin_lock_init(&cq->lock);
	spin_lock_init(&qp->sq.lock);
	spin_lock_init(&qp->rq.lock);
	rnic_ib_qp_init_sync(qp);
	qp->ibqp.send_cq = &cq->ibcq;
	qp->ibqp.recv_cq = &cq->ibcq;
	qp->ibqp.qp_num = qpn;
	return qp;
}

/*
 * Once the device has failed, modify_qp answers ERR and RESET without it
 * (ib_drain_qp() needs ERR), refuses what the device would, and fails the
 * rest; an SRQ-attached QP entering ERR gets the LAST_WQE_REACHED the
 * device will not raise. RESET drops the WRs: the indices restart at 0.
 */
static void qp_modify_after_fatal(struct kunit *test)
{
	struct ib_qp_attr attr = {};
	struct rnic_ib_srq *srq;
	struct rnic_ib_qp *qp;
	bool last_wqe;

	qp = kernel_qp(test, 5);
	srq = kunit_kzalloc(test, sizeof(*srq), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, srq);

	mutex_lock(&qp->state_lock);
	/* RTS -> ERR: done, no SRQ so no LAST_WQE_REACHED; the WRs stay */
	qp->state = IB_QPS_RTS;
	qp->sq.pi = 7;
	qp->sq.ci = 3;
	attr.qp_state = IB_QPS_ERR;
	KUNIT_EXPECT_EQ(test, rnic_ib_modify_qp_fatal(qp, &attr, IB_QP_STATE,
						      &last_wqe), 0);
	KUNIT_EXPECT_EQ(test, qp->state, IB_QPS_ERR);
	KUNIT_EXPECT_FALSE(test, last_wqe);
	KUNIT_EXPECT_EQ(test, qp->sq.pi - qp->sq.ci, 4);
	/* no state in the mask, or any state but ERR and RESET: no device */
	KUNIT_EXPECT_EQ(test, rnic_ib_modify_qp_fatal(qp, &attr, IB_QP_QKEY,
						      &last_wqe), -EIO);
	attr.qp_state = IB_QPS_RTS;
	KUNIT_EXPECT_EQ(test, rnic_ib_modify_qp_fatal(qp, &attr, IB_QP_STATE,
						      &last_wqe), -EIO);
	KUNIT_EXPECT_EQ(test, qp->state, IB_QPS_ERR);
	/* ERR -> RESET: the WRs are dropped, the indices restart */
	qp->rq.pi = 9;
	qp->rq.ci = 8;
	attr.qp_state = IB_QPS_RESET;
	KUNIT_EXPECT_EQ(test, rnic_ib_modify_qp_fatal(qp, &attr, IB_QP_STATE,
						      &last_wqe), 0);
	KUNIT_EXPECT_EQ(test, qp->state, IB_QPS_RESET);
	KUNIT_EXPECT_EQ(test, qp->sq.pi, 0);
	KUNIT_EXPECT_EQ(test, qp->sq.ci, 0);
	KUNIT_EXPECT_EQ(test, qp->rq.pi, 0);
	KUNIT_EXPECT_EQ(test, qp->rq.ci, 0);
	/* RESET -> ERR is refused, as the device refuses it */
	attr.qp_state = IB_QPS_ERR;
	KUNIT_EXPECT_EQ(test, rnic_ib_modify_qp_fatal(qp, &attr, IB_QP_STATE,
						      &last_wqe), -EINVAL);
	KUNIT_EXPECT_EQ(test, qp->state, IB_QPS_RESET);

	/* with an SRQ: LAST_WQE_REACHED on entering ERR, not when in it */
	qp->srq = srq;
	qp->state = IB_QPS_RTR;
	KUNIT_EXPECT_EQ(test, rnic_ib_modify_qp_fatal(qp, &attr, IB_QP_STATE,
						      &last_wqe), 0);
	KUNIT_EXPECT_TRUE(test, last_wqe);
	KUNIT_EXPECT_EQ(test, rnic_ib_modify_qp_fatal(qp, &attr, IB_QP_STATE,
						      &last_wqe), 0);
	KUNIT_EXPECT_FALSE(test, last_wqe);
	mutex_unlock(&qp->state_lock);
	mutex_destroy(&qp->state_lock);
}

static u64 qp_errs_by_driver(struct rnic_ibdev *ibd)
{
	return atomic64_read(&ibd->stats[RNIC_IB_STAT_qp_err_by_driver]);
}

/*
 * A bad CQE's QP goes to ERR from a work (poll_cq cannot sleep), which
 * may run after destroy_qp has begun: its MODIFY_QP would then reach the
 * device after DESTROY_QP and move whichever QP got the QPN since. Once
 * destroy_qp has set @destroying, the work sends nothing, also when it
 * was already waiting for the state lock. The device here has failed,
 * so that a modify is answered in software and shows in the QP's state.
 */
static void qp_err_work_after_destroy(struct kunit *test)
{
	struct rnic_ibdev *ibd;
	struct rnic_ib_qp *qp;

	ibd = kunit_kzalloc(test, sizeof(*ibd), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ibd);
	qp = kernel_qp(test, 7);
	ibd->fatal = true;
	qp->ibqp.device = &ibd->ibdev;

	/* a live QP: the work moves it to ERR and counts it */
	qp->state = IB_QPS_RTS;
	rnic_ib_qp_set_err(qp);
	flush_work(&qp->err_work);
	KUNIT_EXPECT_EQ(test, qp->state, IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, qp_errs_by_driver(ibd), 1);

	/* scheduled after destroy_qp began: nothing sent */
	qp->state = IB_QPS_RTS;
	mutex_lock(&qp->state_lock);
	qp->destroying = true;
	mutex_unlock(&qp->state_lock);
	rnic_ib_qp_set_err(qp);
	flush_work(&qp->err_work);
	KUNIT_EXPECT_EQ(test, qp->state, IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, qp_errs_by_driver(ibd), 1);

	/* scheduled before, waiting on the lock while destroy_qp takes it */
	qp->destroying = false;
	mutex_lock(&qp->state_lock);
	rnic_ib_qp_set_err(qp);
	msleep(50);
	qp->destroying = true;
	mutex_unlock(&qp->state_lock);
	flush_work(&qp->err_work);
	KUNIT_EXPECT_EQ(test, qp->state, IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, qp_errs_by_driver(ibd), 1);
	mutex_destroy(&qp->state_lock);
}

static u64 bad_srq_drops(struct rnic_ibdev *ibd)
{
	return atomic64_read(&ibd->stats[RNIC_IB_STAT_bad_srq_drops]);
}

/*
 * A MODIFY_QP to RESET or a DESTROY_QP whose response names an SRQ slot
 * dropped frees that slot, the first free one post_srq_recv then finds;
 * no CQE will. A report the QP cannot have made (out of range, a slot
 * not busy, a QP not reset, no SRQ) is counted and changes nothing.
 */
static void qp_srq_slot_dropped(struct kunit *test)
{
	const u8 f = RNIC_AQ_QP_F_SRQ_DROPPED;
	struct rnic_ibdev *ibd;
	struct rnic_ib_srq *srq;
	struct rnic_ib_qp *qp;

	ibd = kunit_kzalloc(test, sizeof(*ibd), GFP_KERNEL);
	qp = kunit_kzalloc(test, sizeof(*qp), GFP_KERNEL);
	srq = kunit_kzalloc(test, sizeof(*srq), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ibd);
	KUNIT_ASSERT_NOT_NULL(test, qp);
	KUNIT_ASSERT_NOT_NULL(test, srq);
	srq->log2_depth = 3;
	srq->busy = kunit_kcalloc(test, BITS_TO_LONGS(8), sizeof(long),
				  GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, srq->busy);
	spin_lock_init(&srq->lock);
	qp->srq = srq;
	qp->ibqp.qp_num = 7;
	/* every slot posted: post_srq_recv would find none */
	bitmap_fill(srq->busy, 8);

	/* no flag: nothing dropped, whatever srq_slot holds */
	KUNIT_EXPECT_EQ(test, rnic_ib_qp_srq_dropped(ibd, qp, 0, 5, true), 0);
	KUNIT_EXPECT_EQ(test, find_first_zero_bit(srq->busy, 8), 8);
	/* slot 5 dropped: free again, and the one posting takes next */
	KUNIT_EXPECT_EQ(test, rnic_ib_qp_srq_dropped(ibd, qp, f, 5, true), 0);
	KUNIT_EXPECT_EQ(test, find_first_zero_bit(srq->busy, 8), 5);
	KUNIT_EXPECT_EQ(test, bitmap_weight(srq->busy, 8), 7);
	KUNIT_EXPECT_EQ(test, bad_srq_drops(ibd), 0);

	/* out of range: counted, ignored, no write outside the bitmap */
	KUNIT_EXPECT_EQ(test, rnic_ib_qp_srq_dropped(ibd, qp, f, 8, true),
			-EIO);
	KUNIT_EXPECT_EQ(test, rnic_ib_qp_srq_dropped(ibd, qp, f, 0xffff, true),
			-EIO);
	KUNIT_EXPECT_EQ(test, bad_srq_drops(ibd), 2);
	/* slot 5 again: not the device's to drop any more */
	KUNIT_EXPECT_EQ(test, rnic_ib_qp_srq_dropped(ibd, qp, f, 5, true),
			-EIO);
	KUNIT_EXPECT_EQ(test, bad_srq_drops(ibd), 3);
	/* a QP not reset or destroyed keeps its WQE: slot 2 stays busy */
	KUNIT_EXPECT_EQ(test, rnic_ib_qp_srq_dropped(ibd, qp, f, 2, false),
			-EIO);
	KUNIT_EXPECT_TRUE(test, test_bit(2, srq->busy));
	KUNIT_EXPECT_EQ(test, bad_srq_drops(ibd), 4);
	/* a QP with no SRQ has no slot to drop */
	qp->srq = NULL;
	KUNIT_EXPECT_EQ(test, rnic_ib_qp_srq_dropped(ibd, qp, f, 2, true),
			-EIO);
	KUNIT_EXPECT_EQ(test, bad_srq_drops(ibd), 5);
	KUNIT_EXPECT_EQ(test, bitmap_weight(srq->busy, 8), 7);
	KUNIT_EXPECT_EQ(test, find_first_zero_bit(srq->busy, 8), 5);

	/*
	 * A user SRQ: the slot is the process's to free, through modify_qp's
	 * response (qp->udropped); the kernel's bitmap is not its own.
	 */
	qp->srq = srq;
	srq->uctx = kunit_kzalloc(test, sizeof(*srq->uctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, srq->uctx);
	KUNIT_EXPECT_EQ(test, rnic_ib_qp_srq_dropped(ibd, qp, 0, 3, true), 0);
	KUNIT_EXPECT_FALSE(test, qp->udropped);
	KUNIT_EXPECT_EQ(test, rnic_ib_qp_srq_dropped(ibd, qp, f, 7, true), 0);
	KUNIT_EXPECT_TRUE(test, qp->udropped);
	KUNIT_EXPECT_EQ(test, qp->udropped_slot, 7);
	KUNIT_EXPECT_EQ(test, bitmap_weight(srq->busy, 8), 7);
	KUNIT_EXPECT_EQ(test, bad_srq_drops(ibd), 5);
	/* out of the SRQ, or from a QP that keeps its WQE: refused */
	qp->udropped = false;
	KUNIT_EXPECT_EQ(test, rnic_ib_qp_srq_dropped(ibd, qp, f, 8, true),
			-EIO);
	KUNIT_EXPECT_EQ(test, rnic_ib_qp_srq_dropped(ibd, qp, f, 1, false),
			-EIO);
	KUNIT_EXPECT_FALSE(test, qp->udropped);
	KUNIT_EXPECT_EQ(test, bad_srq_drops(ibd), 7);
}

static struct kunit_case rnic_ib_cases[] = {
	KUNIT_CASE(cap_flags_per_roce_mode),
	KUNIT_CASE(cap_flags_are_roce_only),
	KUNIT_CASE(speed_width_known_answers),
	KUNIT_CASE(speed_width_never_overstates),
	KUNIT_CASE(active_mtu),
	KUNIT_CASE(guid_from_mac),
	KUNIT_CASE(fw_ver_from_version_string),
	KUNIT_CASE(set_port_defaults),
	KUNIT_CASE(set_port_udp_port),
	KUNIT_CASE(set_port_pfc),
	KUNIT_CASE(set_port_no_icrc),
	KUNIT_CASE(set_port_keeps_netdev_flags),
	KUNIT_CASE(qp_dev_err_event),
	KUNIT_CASE(qp_modify_after_fatal),
	KUNIT_CASE(qp_err_work_after_destroy),
	KUNIT_CASE(qp_srq_slot_dropped),
	{}
};

static struct kunit_suite rnic_ib_suite = {
	.name = "rnic_ib",
	.test_cases = rnic_ib_cases,
};

kunit_test_suite(rnic_ib_suite);
