/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rnic RoCE datapath internals: shared by rnic_roce.c (rings, xmit, RX
 * dispatch), rnic_ud.c, rnic_rc_req.c, rnic_rc_comp.c, rnic_rc_resp.c,
 * rnic_transport.c and rnic_hw_stats.c. The verbs layer sees only
 * rnic_verbs.h.
 */
#ifndef _RNIC_ROCE_H_
#define _RNIC_ROCE_H_

#include <linux/atomic.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <rdma/ib_verbs.h>

#include "rnic_hdr.h"
#include "rnic_stats.h"

struct rnic_dev;
struct rnic_qp;
struct rnic_av;
struct rnic_mr;
struct rnic_send_wqe;
struct rnic_wqe_sge;
struct rnic_recv_wqe;

/* AETH syndrome (IBA 9.7.5.1): type in bits 6:5, value in bits 4:0 */
#define RNIC_AETH_TYPE_ACK	0
#define RNIC_AETH_TYPE_RNR	1
#define RNIC_AETH_TYPE_NAK	3
#define RNIC_AETH_NO_CREDIT	0x1f	/* ACK: credit count not valid */

enum rnic_nak_code {
	RNIC_NAK_PSN_SEQ	= 0,
	RNIC_NAK_INV_REQ	= 1,
	RNIC_NAK_REM_ACCESS	= 2,
	RNIC_NAK_REM_OP		= 3,
	RNIC_NAK_INV_RD_REQ	= 4,
};

/* How a responder sees a request's PSN (IBA 9.7.3) */
enum rnic_psn_class {
	RNIC_PSN_NEW,		/* the expected PSN */
	RNIC_PSN_DUPLICATE,	/* before it: re-ACK / replay */
	RNIC_PSN_OUT_OF_SEQ,	/* after it: NAK sequence error */
};

/* Where a packet stands in its message */
#define RNIC_SEG_FIRST		BIT(0)
#define RNIC_SEG_LAST		BIT(1)

/* Requester: an ACK is asked for at least every this many packets */
#define RNIC_ACK_REQ_EVERY	16
/* Responder: ACK at the latest after this many unacknowledged packets */
#define RNIC_ACK_COALESCE	16
/* Requester: packets in flight before it waits for ACKs */
#define RNIC_REQ_WINDOW		64
/* Responder resources kept per QP (READ/atomic replay) */
#define RNIC_RESP_RES		16
/* Largest payload copied into the header slot instead of mapped */
#define RNIC_TX_INLINE_ROOM	256
/* GSI QP's well-known Q_Key */
#define RNIC_GSI_QKEY		0x80010000U

/* Pure decisions (rnic_transport.c), KUnit-tested */
enum rnic_psn_class rnic_psn_classify(u32 psn, u32 expected);
u8 rnic_aeth_ack(void);
u8 rnic_aeth_rnr(u8 timer);
u8 rnic_aeth_nak(enum rnic_nak_code code);
u8 rnic_aeth_type(u8 syndrome);
u8 rnic_aeth_value(u8 syndrome);
u32 rnic_rnr_timer_us(u8 timer);
enum ib_wc_status rnic_nak_wc_status(u8 code);
u64 rnic_retrans_timeout_ns(u8 timeout);
u32 rnic_pkts_for_len(u32 len, u32 mtu);
int rnic_req_opcode(enum ib_wr_opcode op, unsigned int seg);
u8 rnic_read_resp_opcode(unsigned int seg);
unsigned int rnic_seg_pos(u32 idx, u32 npkts);
u16 rnic_udp_sport(u32 flow_label, u32 lqpn, u32 rqpn);
enum ib_wc_opcode rnic_wr_to_wc_opcode(enum ib_wr_opcode op);

/**
 * struct rnic_xmit - one frame to send
 * @pkt: every header field; rnic_roce_pkt_init() fills the addressing
 * @len: payload bytes
 * @pd: with @sge: the PD the lkeys must belong to
 * @sge: payload from local SGEs (requester), starting @offset bytes in
 * @num_sge: entries of @sge
 * @offset: see @sge
 * @mr: payload from an MR already validated (responder READ), at @iova
 * @iova: see @mr
 * @kbuf: payload from kernel memory (inline data)
 * @qp: UD: the QP whose WQE @wqe_idx completes when the frame is sent
 * @wqe_idx: see @qp
 */
struct rnic_xmit {
	struct rnic_pkt pkt;
	u32 len;
	struct ib_pd *pd;
	const struct rnic_wqe_sge *sge;
	u32 num_sge;
	u32 offset;
	struct rnic_mr *mr;
	u64 iova;
	const void *kbuf;
	struct rnic_qp *qp;
	u32 wqe_idx;
};

/* rnic_roce.c */
void rnic_roce_stat_add(struct rnic_dev *rdev, enum rnic_roce_stat s, u64 n);
void rnic_roce_stats_read(struct rnic_dev *rdev, u64 *vals);
void rnic_roce_pkt_init(struct rnic_dev *rdev, struct rnic_pkt *pkt,
			const struct rnic_av *av, u16 udp_sport);
int rnic_roce_xmit(struct rnic_dev *rdev, struct rnic_xmit *x);
int rnic_roce_wait_tx(struct rnic_dev *rdev);
spinlock_t *rnic_roce_atomic_lock(struct rnic_dev *rdev);
struct workqueue_struct *rnic_roce_wq(struct rnic_dev *rdev);

static inline void rnic_roce_stat_inc(struct rnic_dev *rdev,
				      enum rnic_roce_stat s)
{
	rnic_roce_stat_add(rdev, s, 1);
}

/* rnic_ud.c */
void rnic_ud_send(struct rnic_qp *qp);
void rnic_ud_recv(struct rnic_qp *qp, const struct rnic_pkt *pkt,
		  const u8 *frame, u16 vlan_tci, bool vlan);

/* rnic_rc_req.c */
void rnic_rc_req_run(struct rnic_qp *qp);
void rnic_rc_req_rewind(struct rnic_qp *qp, u32 psn);
void rnic_rc_retrans_timer(struct timer_list *t);
void rnic_rc_rnr_timer(struct timer_list *t);
void rnic_rc_timer_update(struct rnic_qp *qp);
void rnic_rc_timer_soon(struct rnic_qp *qp);

/* rnic_rc_comp.c */
void rnic_rc_comp_recv(struct rnic_qp *qp, const struct rnic_pkt *pkt,
		       const u8 *frame);
void rnic_sq_complete(struct rnic_qp *qp);
void rnic_sq_fail(struct rnic_qp *qp, struct rnic_send_wqe *wqe,
		  enum ib_wc_status status);
void rnic_ud_tx_done(struct rnic_qp *qp, u32 wqe_idx);

/* rnic_rc_resp.c */
void rnic_rc_resp_recv(struct rnic_qp *qp, const struct rnic_pkt *pkt,
		       const u8 *frame);

/* rnic_transport.c */
void rnic_qp_fatal(struct rnic_qp *qp, enum ib_event_type event);
struct rnic_recv_wqe *rnic_resp_wqe_store(struct rnic_qp *qp);
int rnic_copy_to_sges(struct rnic_qp *qp, const struct rnic_wqe_sge *sge,
		      u32 num_sge, u32 offset, const void *src, u32 len);

#endif /* _RNIC_ROCE_H_ */
