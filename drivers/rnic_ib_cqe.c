// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic ABI 2.0: completion entries to work completions.
 *
 * Everything in a CQE was written by the device, and the driver trusts
 * none of it (Documentation/hardware-rdma.rst, "Completion entries"): the
 * WQE index is checked against what is outstanding before it indexes the
 * driver's wr_id arrays, and a CQE whose fields contradict each other or
 * the contract is refused whole. The caller drops a refused CQE, counts
 * it and moves the QP to ERR, whose flush then completes the WRs.
 */
#include <kunit/visibility.h>
#include <linux/bitmap.h>
#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <rdma/ib_verbs.h>

#include "rnic_compat.h"
#include "rnic_ib_wqe.h"

/* The contract's status table: the IB status of the same name */
static const u8 rnic_ib_wc_status_map[] = {
	[RNIC_WC_SUCCESS]		= IB_WC_SUCCESS,
	[RNIC_WC_LOC_LEN_ERR]		= IB_WC_LOC_LEN_ERR,
	[RNIC_WC_LOC_QP_OP_ERR]		= IB_WC_LOC_QP_OP_ERR,
	[RNIC_WC_LOC_PROT_ERR]		= IB_WC_LOC_PROT_ERR,
	[RNIC_WC_WR_FLUSH_ERR]		= IB_WC_WR_FLUSH_ERR,
	[RNIC_WC_LOC_ACCESS_ERR]	= IB_WC_LOC_ACCESS_ERR,
	[RNIC_WC_BAD_RESP_ERR]		= IB_WC_BAD_RESP_ERR,
	[RNIC_WC_REM_INV_REQ_ERR]	= IB_WC_REM_INV_REQ_ERR,
	[RNIC_WC_REM_ACCESS_ERR]	= IB_WC_REM_ACCESS_ERR,
	[RNIC_WC_REM_OP_ERR]		= IB_WC_REM_OP_ERR,
	[RNIC_WC_RETRY_EXC_ERR]		= IB_WC_RETRY_EXC_ERR,
	[RNIC_WC_RNR_RETRY_EXC_ERR]	= IB_WC_RNR_RETRY_EXC_ERR,
	[RNIC_WC_FATAL_ERR]		= IB_WC_FATAL_ERR,
	[RNIC_WC_GENERAL_ERR]		= IB_WC_GENERAL_ERR,
};

/**
 * rnic_ib_wc_status() - IB status of a CQE status
 * @status: rnic_rdma_cqe.status, enum rnic_wc_status
 *
 * Return: the IB status of the same name; IB_WC_GENERAL_ERR for a value
 * the contract does not define, so a WR never completes as a success by
 * a device's mistake.
 */
enum ib_wc_status rnic_ib_wc_status(u8 status)
{
	if (status >= ARRAY_SIZE(rnic_ib_wc_status_map))
		return IB_WC_GENERAL_ERR;
	return rnic_ib_wc_status_map[status];
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_wc_status);

/* The contract's opcode table; -EIO for an opcode it does not define */
static int rnic_ib_wc_opcode(u8 opcode, enum ib_wc_opcode *op)
{
	switch (opcode) {
	case RNIC_SQE_OP_SEND:
	case RNIC_SQE_OP_SEND_IMM:
	case RNIC_SQE_OP_SEND_INV:
		*op = IB_WC_SEND;
		break;
	case RNIC_SQE_OP_WRITE:
	case RNIC_SQE_OP_WRITE_IMM:
		*op = IB_WC_RDMA_WRITE;
		break;
	case RNIC_SQE_OP_READ:
		*op = IB_WC_RDMA_READ;
		break;
	case RNIC_SQE_OP_CMP_SWAP:
		*op = IB_WC_COMP_SWAP;
		break;
	case RNIC_SQE_OP_FETCH_ADD:
		*op = IB_WC_FETCH_ADD;
		break;
	case RNIC_SQE_OP_LOCAL_INV:
		*op = IB_WC_LOCAL_INV;
		break;
	case RNIC_SQE_OP_REG_MR:
		*op = IB_WC_REG_MR;
		break;
	case RNIC_CQE_OP_RECV:
		*op = IB_WC_RECV;
		break;
	case RNIC_CQE_OP_RECV_WRITE_IMM:
		*op = IB_WC_RECV_RDMA_WITH_IMM;
		break;
	default:
		return -EIO;
	}
	return 0;
}

/*
 * UD receive: the sender's address, which ib_init_ah_attr_from_wc() turns
 * into a reply AH. The network type tells it how to parse the 40 header
 * bytes at the start of the buffer, and so which RoCE version to answer
 * on.
 */
static int rnic_ib_wc_ud_src(const struct rnic_rdma_cqe *cqe, u8 flags,
			     struct ib_wc *wc)
{
	u32 src = le32_to_cpu(cqe->src);

	if (!(flags & RNIC_RCQE_F_GRH) || (src & ~(RNIC_RCQE_SRC_QP |
						   RNIC_RCQE_NET)))
		return -EIO;
	switch (FIELD_GET(RNIC_RCQE_NET, src)) {
	case RNIC_RX_CLASS_ROCE_V1:
		wc->network_hdr_type = RDMA_NETWORK_ROCE_V1;
		break;
	case RNIC_RX_CLASS_ROCE_V2_IPV4:
		wc->network_hdr_type = RDMA_NETWORK_IPV4;
		break;
	case RNIC_RX_CLASS_ROCE_V2_IPV6:
		wc->network_hdr_type = RDMA_NETWORK_IPV6;
		break;
	default:
		return -EIO;
	}
	wc->src_qp = FIELD_GET(RNIC_RCQE_SRC_QP, src);
	ether_addr_copy(wc->smac, cqe->smac);
	wc->wc_flags |= IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE |
			IB_WC_WITH_SMAC;
	if (flags & RNIC_RCQE_F_VLAN) {
		u16 tci = le16_to_cpu(cqe->vlan_tci);

		wc->sl = tci >> VLAN_PRIO_SHIFT;
		/*
		 * A priority tag (VID 0, PFC) names no VLAN: ib_core looks
		 * the reply's GID up by this VID, and a non-VLAN netdev's
		 * GIDs have none.
		 */
		if (tci & VLAN_VID_MASK) {
			wc->vlan_id = tci & VLAN_VID_MASK;
			wc->wc_flags |= IB_WC_WITH_VLAN;
		}
	}
	return 0;
}

/*
 * A successful receive: immediate or invalidated key, bytes placed, and
 * for UD the sender. @recv_len bounds the bytes placed by what the WQE
 * offered; a WRITE_IMM's bytes went to an MR, not to the WQE.
 */
static int rnic_ib_wc_recv(const struct rnic_rdma_cqe *cqe, u8 flags, bool ud,
			   u32 recv_len, struct ib_wc *wc)
{
	u32 len = le32_to_cpu(cqe->byte_len);
	bool write_imm = cqe->opcode == RNIC_CQE_OP_RECV_WRITE_IMM;

	if ((flags & RNIC_RCQE_F_IMM) && (flags & RNIC_RCQE_F_INV))
		return -EIO;
	if (write_imm && (ud || !(flags & RNIC_RCQE_F_IMM)))
		return -EIO;
	if (ud != !!(flags & RNIC_RCQE_F_GRH) ||
	    (!ud && (flags & RNIC_RCQE_F_VLAN)) ||
	    (ud && (flags & RNIC_RCQE_F_INV)))
		return -EIO;

	if (ud) {
		/*
		 * The CQE counts the payload; the verbs count the 40-byte
		 * header area too (the MAD layer and IPoIB subtract it).
		 */
		if (len > U32_MAX - RNIC_IB_UD_GRH_LEN)
			return -EIO;
		len += RNIC_IB_UD_GRH_LEN;
		if (rnic_ib_wc_ud_src(cqe, flags, wc))
			return -EIO;
	}
	if (!write_imm && len > recv_len)
		return -EIO;
	wc->byte_len = len;

	if (flags & RNIC_RCQE_F_IMM) {
		wc->ex.imm_data = cqe->imm_data;
		wc->wc_flags |= IB_WC_WITH_IMM;
	} else if (flags & RNIC_RCQE_F_INV) {
		wc->ex.invalidate_rkey = le32_to_cpu(cqe->inv_key);
		wc->wc_flags |= IB_WC_WITH_INVALIDATE;
	}
	wc->pkey_index = le16_to_cpu(cqe->pkey_index);
	return 0;
}

/**
 * rnic_ib_cqe_to_wc() - decode a CQE into a work completion
 * @cqe: the CQE, its phase already checked and read after a read barrier
 * @ud: the QP the CQE names (by its qpn) is UD or GSI
 * @recv_len: receive CQEs: the bytes the completed receive WQE offered
 *	(the sum of its SGE lengths); ignored for send CQEs
 * @wc: gets every field but wr_id/wr_cqe and qp, which come from the
 *	driver's own arrays and QP lookup
 *
 * Follows the contract's mapping table. An error CQE carries only its
 * flags, opcode, status, syndrome, qpn and wqe_idx; its other fields are
 * not looked at. The syndrome (enum rnic_err_reason) becomes vendor_err.
 * A status the contract does not define is reported as
 * IB_WC_GENERAL_ERR, as the table says, rather than refused: the WR still
 * completes, in error. A UD receive's byte_len includes the 40-byte
 * network header area, as verbs consumers expect.
 *
 * Return: 0, or -EIO for a CQE that is not well-formed: an unknown opcode,
 * flags that do not belong to the opcode or the QP type, a receive longer
 * than its WQE, a UD sender of an unknown network type.
 */
int rnic_ib_cqe_to_wc(const struct rnic_rdma_cqe *cqe, bool ud, u32 recv_len,
		      struct ib_wc *wc)
{
	u8 flags = cqe->flags;
	bool recv = cqe->opcode & RNIC_CQE_OP_RECV_BIT;
	enum ib_wc_opcode op;

	if (rnic_ib_wc_opcode(cqe->opcode, &op))
		return -EIO;
	if (le32_to_cpu(cqe->qpn) & ~RNIC_BTH_QPN)
		return -EIO;
	/* UD and GSI QPs send SEND and SEND_IMM only; SRQs feed receives */
	if (ud && !recv && cqe->opcode != RNIC_SQE_OP_SEND &&
	    cqe->opcode != RNIC_SQE_OP_SEND_IMM)
		return -EIO;
	if (!recv && (flags & RNIC_RCQE_F_SRQ))
		return -EIO;

	wc->status = rnic_ib_wc_status(cqe->status);
	wc->opcode = op;
	wc->vendor_err = cqe->syndrome;
	wc->byte_len = 0;
	wc->ex.imm_data = 0;
	wc->wc_flags = 0;
	wc->src_qp = 0;
	wc->slid = 0;
	wc->sl = 0;
	wc->dlid_path_bits = 0;
	wc->pkey_index = 0;
	wc->port_num = 1;
	wc->vlan_id = 0;
	wc->network_hdr_type = 0;
	eth_zero_addr(wc->smac);
	if (wc->status != IB_WC_SUCCESS)
		return 0;

	if (recv)
		return rnic_ib_wc_recv(cqe, flags, ud, recv_len, wc);
	/* a send CQE reports nothing about a peer */
	if (flags & ~RNIC_RCQE_F_PHASE)
		return -EIO;
	wc->byte_len = le32_to_cpu(cqe->byte_len);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_cqe_to_wc);

/**
 * rnic_ib_cqe_sq_retire() - check a send CQE's WQE index
 * @ci: free-running index of the oldest SQ WQE not yet completed
 * @pi: free-running producer index: WQEs posted
 * @wqe_idx: the CQE's wqe_idx
 *
 * Send CQEs come in SQ order, and a CQE for WQE *i* also retires every
 * unsigned WQE before it, so *i* may be any outstanding WQE: in
 * [@ci, @pi) modulo 2^16. Anything else would make the driver complete
 * WRs that were never posted, or index its wr_id array with a value the
 * device chose.
 *
 * Return: the number of WQEs the CQE completes (1 .. @pi - @ci), the
 * last of which it reports; -EIO for an index not outstanding.
 */
int rnic_ib_cqe_sq_retire(u16 ci, u16 pi, u16 wqe_idx)
{
	u16 n = wqe_idx - ci;

	if (n >= (u16)(pi - ci))
		return -EIO;
	return n + 1;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_cqe_sq_retire);

/**
 * rnic_ib_cqe_rq_check() - check a receive CQE's RQ WQE index
 * @ci: free-running index of the oldest RQ WQE not yet completed
 * @pi: free-running producer index: WQEs posted
 * @wqe_idx: the CQE's wqe_idx
 *
 * Receive WQEs of an RQ complete in order, every one with a CQE.
 *
 * Return: 0 if @wqe_idx is the next WQE and one is outstanding, else -EIO.
 */
int rnic_ib_cqe_rq_check(u16 ci, u16 pi, u16 wqe_idx)
{
	return ci != pi && wqe_idx == ci ? 0 : -EIO;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_cqe_rq_check);

/**
 * rnic_ib_cqe_srq_check() - check a receive CQE's SRQ slot
 * @slot: the CQE's wqe_idx (with RNIC_RCQE_F_SRQ)
 * @depth: the SRQ's number of slots
 * @busy: bitmap of @depth bits, set for the slots holding a posted WQE
 *
 * SRQ completions of different QPs come out of posting order, so the
 * only order there is to check is ownership: the slot is one the driver
 * gave the device and has not had back.
 *
 * Return: 0, or -EIO for a slot out of range or not in use.
 */
int rnic_ib_cqe_srq_check(u16 slot, u32 depth, const unsigned long *busy)
{
	return slot < depth && test_bit(slot, busy) ? 0 : -EIO;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_cqe_srq_check);

/**
 * rnic_ib_cqe_qp_check() - is a CQE's QP one of the polled CQ's
 * @cqe: the CQE, its phase checked
 * @cqn: the CQ it was read from
 * @send_cqn: the send CQ of the QP the CQE names
 * @recv_cqn: that QP's receive CQ
 *
 * A QP completes its sends on its send CQ and its receives on its
 * receive CQ. A CQE that names a QP of another CQ says nothing about
 * that QP's queues: the device got the QPN or the CQ wrong, so the caller
 * must neither retire that QP's WQEs nor fail the QP, whose owner may be
 * another ULP. The caller looked the QPN up; a QPN with reserved bits
 * set is no QP's, so that lookup fails on it.
 *
 * Return: 0, or -EXDEV if the CQE's direction puts it on another CQ.
 */
int rnic_ib_cqe_qp_check(const struct rnic_rdma_cqe *cqe, u32 cqn,
			 u32 send_cqn, u32 recv_cqn)
{
	bool recv = cqe->opcode & RNIC_CQE_OP_RECV_BIT;

	return (recv ? recv_cqn : send_cqn) == cqn ? 0 : -EXDEV;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_cqe_qp_check);

/**
 * rnic_ib_cqe_scrub() - mark the CQEs a reset or destroyed QP left in a CQ
 * @ring: the CQ's ring of (1 << @log2_depth) CQEs
 * @log2_depth: log2 of its depth
 * @ci: its consumer index
 * @qpn: the QP that went to RESET or was destroyed
 * @srq_busy: the busy bitmap of the QP's SRQ, or NULL without one
 * @srq_depth: that SRQ's number of slots
 *
 * A QP in RESET has no work requests and its indices restart at 0: a CQE
 * it left unpolled would later complete a new work request with an old
 * status, or be refused and move the re-initialised QP to ERR. A
 * destroyed QP's would name a QPN that nothing (or, once the device
 * reuses it, another QP) owns. Each such
 * CQE the device has written (from @ci up to the first whose phase is not
 * yet this lap's) gets the QPN RNIC_IB_CQE_QPN_SCRUBBED, which poll_cq
 * drops; an SRQ receive among them gives its slot back. The device only
 * writes past those CQEs, so marking them in place races with nothing;
 * the caller holds the CQ's lock (and the SRQ's).
 *
 * Return: the number of CQEs marked.
 */
unsigned int rnic_ib_cqe_scrub(struct rnic_rdma_cqe *ring, u8 log2_depth,
			       u16 ci, u32 qpn, unsigned long *srq_busy,
			       u32 srq_depth)
{
	u32 depth = BIT(log2_depth), i;
	struct rnic_rdma_cqe *cqe;
	unsigned int n = 0;
	u16 slot;

	for (i = 0; i < depth; i++, ci++) {
		cqe = &ring[ci & (depth - 1)];
		if (rnic_rdma_cqe_phase(cqe) != rnic_ring_phase(ci, log2_depth))
			break;
		/* the rest of the entry only after its phase */
		dma_rmb();
		if ((le32_to_cpu(cqe->qpn) & RNIC_BTH_QPN) != qpn ||
		    le32_to_cpu(cqe->qpn) == RNIC_IB_CQE_QPN_SCRUBBED)
			continue;
		slot = le16_to_cpu(cqe->wqe_idx);
		if (srq_busy && (cqe->opcode & RNIC_CQE_OP_RECV_BIT) &&
		    (cqe->flags & RNIC_RCQE_F_SRQ) && slot < srq_depth)
			clear_bit(slot, srq_busy);
		cqe->qpn = cpu_to_le32(RNIC_IB_CQE_QPN_SCRUBBED);
		n++;
	}
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_cqe_scrub);

/**
 * rnic_ib_eqe_scrub() - mark the entries of a destroyed CQ in its EQ
 * @ring: the completion EQ's ring of (1 << @log2_depth) entries
 * @log2_depth: log2 of its depth
 * @ci: its consumer index
 * @cqn: the CQ being destroyed
 *
 * The device may have written a COMPLETION entry for the CQ that its EQ's
 * interrupt has not consumed yet: marked with the CQN
 * RNIC_IB_EQE_CQN_SCRUBBED, it is dropped, so that an entry naming no CQ
 * is always the device's error, and the CQN, once the device reuses it,
 * does not get an event of its predecessor. The caller keeps the EQ's
 * interrupt handler, its only consumer, from running; the device only
 * writes past these entries.
 *
 * Return: the number of entries marked.
 */
unsigned int rnic_ib_eqe_scrub(struct rnic_eqe *ring, u8 log2_depth, u16 ci,
			       u32 cqn)
{
	u32 depth = BIT(log2_depth), i;
	struct rnic_eqe *eqe;
	unsigned int n = 0;

	for (i = 0; i < depth; i++, ci++) {
		eqe = &ring[ci & (depth - 1)];
		if (rnic_eqe_phase(eqe) != rnic_ring_phase(ci, log2_depth))
			break;
		/* the rest of the entry only after its phase */
		dma_rmb();
		if (eqe->type != RNIC_EQE_COMPLETION ||
		    le32_to_cpu(eqe->data) != cqn)
			continue;
		eqe->data = cpu_to_le32(RNIC_IB_EQE_CQN_SCRUBBED);
		n++;
	}
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_eqe_scrub);

/**
 * rnic_ib_wq_flush() - complete a queue's outstanding WRs in software
 * @ci: free-running index of the queue's oldest WQE not completed; moved
 *	past each WQE completed here
 * @pi: its free-running producer index
 * @wrid: the queue's wr_id array
 * @mask: its depth minus one (a power of two minus one)
 * @recv: a receive queue (opcode IB_WC_RECV), else a send queue
 * @qp: the QP, for each completion's qp
 * @wc: where the completions go
 * @num: room in @wc
 *
 * Once the device has failed and stopped, no CQE will ever complete the
 * WQEs it had, nor those posted after: a ULP waiting for them (RDS's
 * shutdown, ib_drain_qp()) would wait forever. Each is completed here, in
 * posting order, with IB_WC_WR_FLUSH_ERR, as IB flushes a QP in error:
 * unsignalled sends too. Like a flush CQE, the completion carries only
 * its wr_id, status, opcode and QP.
 *
 * Return: the number of completions written, at most @num.
 */
int rnic_ib_wq_flush(u16 *ci, u16 pi, const u64 *wrid, u32 mask, bool recv,
		     struct ib_qp *qp, struct ib_wc *wc, int num)
{
	int n = 0;

	for (; n < num && *ci != pi; n++, (*ci)++) {
		memset(&wc[n], 0, sizeof(wc[n]));
		wc[n].wr_id = wrid[*ci & mask];
		wc[n].status = IB_WC_WR_FLUSH_ERR;
		wc[n].opcode = recv ? IB_WC_RECV : IB_WC_SEND;
		wc[n].qp = qp;
	}
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_wq_flush);
