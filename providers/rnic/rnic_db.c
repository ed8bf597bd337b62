// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * librnic: doorbell pages, kicks and ring memory.
 *
 * A queue's doorbell is a slot the device placed in one of the context's
 * doorbell pages (struct rnic_db_page). After writing slots, the writer
 * names each slot in the page's kick ring, advances kick_pi and writes
 * the kick value to the kick register, once for the batch
 * (Documentation/hardware-rdma.rst, "Doorbell pages (2.0)"). Slots are
 * the state, kick entries only hints; but a slot written and never named
 * is only seen at the next overflow scan, so every slot write but a CQ's
 * consumer-index-only one is named.
 *
 * The kick ring of a page has one writer at a time: a spinlock per page,
 * held for a few stores. Where the kernel could not map the kick register
 * (it shares its page with something the process must not reach), the
 * provider writes only the slot and asks the kernel to name it and kick:
 * a post_send, post_recv or post_srq_recv with no work requests, a
 * req_notify_cq command for a CQ arm. The kernel is then the kick ring's
 * one writer (drivers/rnic_ib_uctx.c).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <util/mmio.h>
#include <util/udma_barrier.h>

#include "rnic.h"

#define RNIC_DBP_KICK_OFF	offsetof(struct rnic_db_page, kick)
#define RNIC_DBP_KICK_PI_OFF	offsetof(struct rnic_db_page, kick_pi)
#define RNIC_DBP_KICK_CI_OFF	offsetof(struct rnic_db_page, kick_ci)

/**
 * rnic_dbp_get() - the mapping of a doorbell page, by its mmap key
 * @ctx: the context
 * @key: db_key from the context or a create response
 *
 * Each page is mapped once, on first use, and stays mapped until the
 * context goes: pages are few (512 slots each) and a mapping per object
 * would give one kick ring two writers.
 *
 * Return: the page, or NULL with errno set.
 */
struct rnic_dbp *rnic_dbp_get(struct rnic_context *ctx, uint64_t key)
{
	struct rnic_dbp *dbp;
	void *va;

	pthread_mutex_lock(&ctx->dbp_mutex);
	list_for_each(&ctx->dbps, dbp, entry) {
		if (dbp->key == key)
			goto out;
	}
	dbp = calloc(1, sizeof(*dbp));
	if (!dbp)
		goto out;
	/* write only: nothing of the page is ever read back */
	va = mmap(NULL, ctx->db_page_size, PROT_WRITE, MAP_SHARED,
		  ctx->ibv_ctx.context.cmd_fd, key);
	if (va == MAP_FAILED) {
		free(dbp);
		dbp = NULL;
		goto out;
	}
	dbp->key = key;
	dbp->va = va;
	dbp->kick_pi = 0;
	pthread_spin_init(&dbp->lock, PTHREAD_PROCESS_PRIVATE);
	list_add_tail(&ctx->dbps, &dbp->entry);
out:
	pthread_mutex_unlock(&ctx->dbp_mutex);
	return dbp;
}

void rnic_dbp_unmap_all(struct rnic_context *ctx)
{
	struct rnic_dbp *dbp, *next;

	list_for_each_safe(&ctx->dbps, dbp, next, entry) {
		list_del(&dbp->entry);
		munmap(dbp->va, ctx->db_page_size);
		pthread_spin_destroy(&dbp->lock);
		free(dbp);
	}
}

/* A slot offset the kernel returned: 4-byte aligned, inside the slots */
bool rnic_db_off_ok(uint16_t off)
{
	return !(off & 3) && off < RNIC_DBP_SLOTS * sizeof(__le32);
}

/*
 * The page may be mapped write-combining: the contract asks for a store
 * fence between slot writes, kick entries and kick_pi, and before the
 * kick register (hardware-rdma.rst, "User contexts"). On an uncached
 * mapping the fence costs little next to the kick itself.
 */
static inline void rnic_db_fence(void)
{
	mmio_flush_writes();
}

/**
 * rnic_db_write() - write a slot without naming it or kicking
 * @dbp: the page
 * @off: the slot's byte offset
 * @val: the slot value
 *
 * For a CQ consumer index that repeats the last arm: the device reads it
 * when it needs room. For a receive producer index with
 * RNIC_UCTX_F_RQ_PEEK (rnic_db_recv()): the device reads it when it needs
 * a receive WQE.
 */
void rnic_db_write(struct rnic_dbp *dbp, uint16_t off, uint32_t val)
{
	/*
	 * the CQEs were read before the device may reuse their entries, the
	 * receive WQEs written before the device may read them
	 */
	udma_to_device_barrier();
	mmio_write32_le((uint8_t *)dbp->va + off, htole32(val));
}

/*
 * With RNIC_UCTX_F_KICK_CI the device reads kick_pi again after each
 * store of kick_ci, a full barrier between: a kick_ci short of @prev (the
 * kick_pi before our entry) means it will read our entry without a kick,
 * and the kick (a VM exit and a wake-up of the device) is saved. kick_pi
 * must reach the device before kick_ci is read, or both sides may read
 * the other's old value and the page stalls: a read of the kick register
 * flushes the posted store (PCI ordering), which a fence alone does not
 * under QEMU 7.2's TCG (it drops a one-vCPU guest's barriers although the
 * model runs beside it; the register read takes QEMU's lock).
 */
static bool rnic_db_kick_needed(struct rnic_context *ctx, uint8_t *page,
				uint16_t prev)
{
	uint16_t ci;

	if (!(ctx->flags & RNIC_UCTX_F_KICK_CI))
		return true;
	atomic_thread_fence(memory_order_seq_cst);
	(void)mmio_read32(ctx->kick_reg);
	ci = mmio_read32(page + RNIC_DBP_KICK_CI_OFF) & RNIC_DBP_KICK_PI;
	return ci == prev;
}

/**
 * rnic_db_ring() - write a slot, name it in the kick ring and kick
 * @ctx: the context
 * @dbp: the page the slot is in
 * @off: the slot's byte offset
 * @val: the slot value
 *
 * The caller wrote its WQEs (or consumed its CQEs) before, and holds the
 * queue's lock, so one queue's slot values reach the page in order.
 * Without RNIC_UCTX_F_KICK_MMAP only the slot is written here: the kernel
 * names it and kicks when the caller asks (rnic_kick_qp() and friends).
 *
 * Return: true if the device was kicked, or will read the entry without
 * a kick (rnic_db_kick_needed()); false if the caller must kick through
 * the kernel.
 */
bool rnic_db_ring(struct rnic_context *ctx, struct rnic_dbp *dbp,
		  uint16_t off, uint32_t val)
{
	uint8_t *page = (uint8_t *)dbp->va;
	uint16_t entry, prev;

	/* the WQEs (host memory, read by DMA) before the slot */
	udma_to_device_barrier();
	if (!ctx->kick_reg) {
		mmio_write32_le(page + off, htole32(val));
		return false;
	}
	pthread_spin_lock(&dbp->lock);
	mmio_write32_le(page + off, htole32(val));
	prev = dbp->kick_pi;
	entry = prev % RNIC_DBP_KICK_DEPTH;
	rnic_db_fence();
	mmio_write16_le(page + RNIC_DBP_KICK_OFF + entry * sizeof(__le16),
			htole16(off / sizeof(__le32)));
	dbp->kick_pi++;
	/* the entry before kick_pi */
	rnic_db_fence();
	mmio_write32_le(page + RNIC_DBP_KICK_PI_OFF,
			htole32(FIELD_PREP(RNIC_DBP_KICK_PI, dbp->kick_pi)));
	if (rnic_db_kick_needed(ctx, page, prev)) {
		/* kick_pi before the kick */
		rnic_db_fence();
		mmio_write32_le(ctx->kick_reg, htole32(ctx->kick));
	}
	pthread_spin_unlock(&dbp->lock);
	return true;
}

/**
 * rnic_db_recv() - ring a receive slot (an RQ's or an SRQ's)
 * @ctx: the context
 * @dbp: the page the slot is in
 * @off: the slot's byte offset
 * @val: the slot value
 * @quiet: the device need not be told (a QP not in ERR by our own modify,
 *	or an SRQ)
 *
 * With RNIC_UCTX_F_RQ_PEEK the device reads a receive slot itself when it
 * runs out of the WQEs it knows of, and each heartbeat for a QP in ERR:
 * the slot alone is written, no kick entry, no kick, no system call where
 * the kick register is not mapped. A receive on a QP the process moved to
 * ERR is still rung as any slot (@quiet false), so its flush completion
 * comes at once rather than at the device's next heartbeat. Same locking
 * rule and return value as rnic_db_ring().
 */
bool rnic_db_recv(struct rnic_context *ctx, struct rnic_dbp *dbp,
		  uint16_t off, uint32_t val, bool quiet)
{
	if (!quiet || !(ctx->flags & RNIC_UCTX_F_RQ_PEEK))
		return rnic_db_ring(ctx, dbp, off, val);
	rnic_db_write(dbp, off, val);
	return true;
}

/*
 * The kick through the kernel for a QP's send slot: a post_send command
 * with no work requests, as rxe's provider rings its doorbell (the kernel
 * names the QP's receive slot too). Written directly on the command fd,
 * so it imports nothing Debian 12's libibverbs lacks.
 */
static int rnic_kick_qp_send(struct ibv_qp *ibqp)
{
	struct ib_uverbs_post_send_resp resp;
	struct ibv_post_send cmd;

	memset(&cmd, 0, sizeof(cmd));
	cmd.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	cmd.hdr.in_words = sizeof(cmd) / 4;
	cmd.hdr.out_words = sizeof(resp) / 4;
	cmd.response = (uintptr_t)&resp;
	cmd.qp_handle = ibqp->handle;
	cmd.wr_count = 0;
	cmd.sge_count = 0;
	cmd.wqe_size = sizeof(struct ibv_send_wr);
	if (write(ibqp->context->cmd_fd, &cmd, sizeof(cmd)) != sizeof(cmd))
		return errno ? errno : EIO;
	return 0;
}

/* The receive slot alone: a post_recv command with no work requests */
static int rnic_kick_qp_recv(struct ibv_qp *ibqp)
{
	struct ib_uverbs_post_recv_resp resp;
	struct ibv_post_recv cmd;

	memset(&cmd, 0, sizeof(cmd));
	cmd.hdr.command = IB_USER_VERBS_CMD_POST_RECV;
	cmd.hdr.in_words = sizeof(cmd) / 4;
	cmd.hdr.out_words = sizeof(resp) / 4;
	cmd.response = (uintptr_t)&resp;
	cmd.qp_handle = ibqp->handle;
	cmd.wr_count = 0;
	cmd.sge_count = 0;
	cmd.wqe_size = sizeof(struct ibv_recv_wr);
	if (write(ibqp->context->cmd_fd, &cmd, sizeof(cmd)) != sizeof(cmd))
		return errno ? errno : EIO;
	return 0;
}

int rnic_kick_qp(struct ibv_qp *ibqp, bool recv)
{
	return recv ? rnic_kick_qp_recv(ibqp) : rnic_kick_qp_send(ibqp);
}

/* The same for an SRQ's slot: a post_srq_recv with no work requests */
int rnic_kick_srq(struct ibv_srq *ibsrq)
{
	struct ib_uverbs_post_srq_recv_resp resp;
	struct ibv_post_srq_recv cmd;

	memset(&cmd, 0, sizeof(cmd));
	cmd.hdr.command = IB_USER_VERBS_CMD_POST_SRQ_RECV;
	cmd.hdr.in_words = sizeof(cmd) / 4;
	cmd.hdr.out_words = sizeof(resp) / 4;
	cmd.response = (uintptr_t)&resp;
	cmd.srq_handle = ibsrq->handle;
	cmd.wr_count = 0;
	cmd.sge_count = 0;
	cmd.wqe_size = sizeof(struct ibv_recv_wr);
	if (write(ibsrq->context->cmd_fd, &cmd, sizeof(cmd)) != sizeof(cmd))
		return errno ? errno : EIO;
	return 0;
}

/**
 * rnic_ring_alloc() - memory for a ring the kernel will pin
 * @ctx: the context
 * @bytes: the ring's size
 * @alloc: gets the size allocated
 *
 * Page aligned (the contract's rings are page lists) and whole pages, so
 * that no other data shares a page the device writes or that fork()
 * must not copy (ibv_dontfork_range works on pages). Zeroed: a CQ ring's
 * phase bits start as "not yet written".
 *
 * Return: the ring, or NULL with errno set.
 */
void *rnic_ring_alloc(struct rnic_context *ctx, size_t bytes, size_t *alloc)
{
	size_t size = align(bytes, ctx->page_size);
	void *ring;
	int err;

	err = posix_memalign(&ring, ctx->page_size, size);
	if (err) {
		errno = err;
		return NULL;
	}
	memset(ring, 0, size);
	err = ibv_dontfork_range(ring, size);
	if (err) {
		free(ring);
		errno = err;
		return NULL;
	}
	*alloc = size;
	return ring;
}

void rnic_ring_free(void *ring, size_t alloc)
{
	if (!ring)
		return;
	ibv_dofork_range(ring, alloc);
	free(ring);
}
