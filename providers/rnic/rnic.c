// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * librnic: device matching and the user context.
 *
 * rnic is an out-of-tree driver, so the kernel reports no RDMA_DRIVER_*
 * id for it (RDMA_DRIVER_UNKNOWN): libibverbs finds the provider by the
 * device name ("rnic%d") or by the PCI id. The PCI id is ivshmem's
 * (1af4:1110), which other ivshmem users share, so a PCI match counts
 * only for a device whose PCI function the rnic driver is bound to.
 *
 * The context maps its first doorbell page now and, when the kernel
 * allows it, the page of the kick register; further doorbell pages are
 * mapped as objects name them (rnic_db.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rnic.h"
#include "rnic_abi.h"

static void rnic_free_context(struct ibv_context *ibctx);

static const struct verbs_context_ops rnic_ctx_ops = {
	.alloc_pd = rnic_alloc_pd,
	.cq_event = rnic_cq_event,
	.create_ah = rnic_create_ah,
	.create_cq = rnic_create_cq,
	.create_qp = rnic_create_qp,
	.create_srq = rnic_create_srq,
	.dealloc_pd = rnic_dealloc_pd,
	.dereg_mr = rnic_dereg_mr,
	.destroy_ah = rnic_destroy_ah,
	.destroy_cq = rnic_destroy_cq,
	.destroy_qp = rnic_destroy_qp,
	.destroy_srq = rnic_destroy_srq,
	.free_context = rnic_free_context,
	.modify_cq = rnic_modify_cq,
	.modify_qp = rnic_modify_qp,
	.modify_srq = rnic_modify_srq,
	.poll_cq = rnic_poll_cq,
	.post_recv = rnic_post_recv,
	.post_send = rnic_post_send,
	.post_srq_recv = rnic_post_srq_recv,
	.query_device_ex = rnic_query_device,
	.query_port = rnic_query_port,
	.query_qp = rnic_query_qp,
	.query_srq = rnic_query_srq,
	.reg_mr = rnic_reg_mr,
	.req_notify_cq = rnic_req_notify_cq,
};

/* What the kernel answered must be usable before anything is mapped */
static int rnic_check_ctx_resp(struct rnic_context *ctx,
			       const struct rnic_alloc_context_resp *resp)
{
	if (resp->db_page_size < sizeof(struct rnic_db_page) ||
	    resp->db_page_size % ctx->page_size)
		return EPROTO;
	if (resp->max_sqe_log2 < RNIC_SQE_LOG2_MIN ||
	    resp->max_rqe_log2 < RNIC_RQE_LOG2_MIN)
		return EPROTO;
	if ((resp->flags & RNIC_UCTX_F_KICK_MMAP) &&
	    (resp->kick_off & 3 || resp->kick_off + 4 > ctx->page_size))
		return EPROTO;
	return 0;
}

/* The device limits the provider sizes queues by, asked once */
static int rnic_query_limits(struct rnic_context *ctx)
{
	struct ibv_device_attr_ex attr;
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	int err;

	memset(&attr, 0, sizeof(attr));
	err = ibv_cmd_query_device_any(&ctx->ibv_ctx.context, NULL, &attr,
				       sizeof(attr), &resp, &resp_size);
	if (err)
		return err;
	ctx->lim.max_qp_wr = attr.orig_attr.max_qp_wr;
	ctx->lim.max_sge = attr.orig_attr.max_sge;
	ctx->lim.max_cqe = attr.orig_attr.max_cqe;
	ctx->lim.max_srq_wr = attr.orig_attr.max_srq_wr;
	ctx->lim.max_srq_sge = attr.orig_attr.max_srq_sge;
	ctx->lim.atomics = attr.orig_attr.atomic_cap != IBV_ATOMIC_NONE;
	return 0;
}

static struct verbs_context *rnic_alloc_context(struct ibv_device *ibdev,
						int cmd_fd, void *private_data)
{
	struct rnic_alloc_context_resp resp;
	struct rnic_alloc_context cmd;
	struct rnic_context *ctx;
	long page_size = sysconf(_SC_PAGESIZE);
	int err;

	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, ibv_ctx,
					   RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;
	ctx->page_size = page_size > 0 ? (size_t)page_size : 4096;
	pthread_mutex_init(&ctx->dbp_mutex, NULL);
	pthread_mutex_init(&ctx->qp_mutex, NULL);
	list_head_init(&ctx->dbps);

	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	if (ibv_cmd_get_context(&ctx->ibv_ctx, &cmd.ibv_cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp)))
		goto err_free;
	/* refused in the response (rnic-abi.h): closing frees it */
	if (resp.status) {
		verbs_err(&ctx->ibv_ctx, "rnic: %s refuses a new context: %s\n",
			  ibdev->name, resp.status == EIO ?
			  "the device failed; reload rnic (modprobe -r rnic; modprobe rnic)" :
			  strerror(resp.status));
		errno = resp.status;
		goto err_free;
	}
	err = rnic_check_ctx_resp(ctx, &resp);
	if (err) {
		verbs_err(&ctx->ibv_ctx, "rnic: the kernel's context response is not usable (doorbell page %u bytes, WQE sizes 2^%u/2^%u, kick at %#x)\n",
			  resp.db_page_size, resp.max_sqe_log2,
			  resp.max_rqe_log2, resp.kick_off);
		errno = err;
		goto err_free;
	}
	ctx->flags = resp.flags;
	ctx->kick = resp.kick;
	ctx->db_page_size = resp.db_page_size;
	ctx->max_sqe_log2 = resp.max_sqe_log2 < RNIC_SQE_LOG2_MAX ?
			    resp.max_sqe_log2 : RNIC_SQE_LOG2_MAX;
	ctx->max_rqe_log2 = resp.max_rqe_log2 < RNIC_RQE_LOG2_MAX ?
			    resp.max_rqe_log2 : RNIC_RQE_LOG2_MAX;
	ctx->max_inline = resp.max_inline;

	verbs_set_ops(&ctx->ibv_ctx, &rnic_ctx_ops);
	if (rnic_query_limits(ctx))
		goto err_free;
	/* the first page: a broken mapping fails here, not at the first CQ */
	if (!rnic_dbp_get(ctx, resp.db_key))
		goto err_unmap;
	if (ctx->flags & RNIC_UCTX_F_KICK_MMAP) {
		/* readable for the read that orders kick_pi (rnic_db.c) */
		ctx->kick_page = mmap(NULL, ctx->page_size,
				      PROT_READ | PROT_WRITE, MAP_SHARED,
				      cmd_fd, resp.kick_key);
		if (ctx->kick_page == MAP_FAILED) {
			ctx->kick_page = NULL;
			goto err_unmap;
		}
		ctx->kick_reg = (uint8_t *)ctx->kick_page + resp.kick_off;
	}
	return &ctx->ibv_ctx;

err_unmap:
	rnic_dbp_unmap_all(ctx);
err_free:
	verbs_uninit_context(&ctx->ibv_ctx);
	pthread_mutex_destroy(&ctx->dbp_mutex);
	pthread_mutex_destroy(&ctx->qp_mutex);
	free(ctx);
	return NULL;
}

static void rnic_free_context(struct ibv_context *ibctx)
{
	struct rnic_context *ctx = to_rctx(ibctx);
	unsigned int i;

	if (ctx->kick_page)
		munmap(ctx->kick_page, ctx->page_size);
	rnic_dbp_unmap_all(ctx);
	for (i = 0; i < ARRAY_SIZE(ctx->qp_table); i++)
		free(ctx->qp_table[i]);
	pthread_mutex_destroy(&ctx->dbp_mutex);
	pthread_mutex_destroy(&ctx->qp_mutex);
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
}

static struct verbs_device *rnic_device_alloc(struct verbs_sysfs_dev *sysfs_dev)
{
	struct rnic_device *dev;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	return &dev->ibv_dev;
}

static void rnic_device_free(struct verbs_device *vdev)
{
	free(container_of(vdev, struct rnic_device, ibv_dev));
}

/* Whether the rnic kernel driver is the one bound to the device's PCI function */
static bool rnic_pci_driver_is_rnic(const struct verbs_sysfs_dev *sysfs_dev)
{
	char path[PATH_MAX], link[PATH_MAX];
	const char *base;
	ssize_t n;

	if (snprintf(path, sizeof(path), "%s/device/driver",
		     sysfs_dev->ibdev_path) >= (int)sizeof(path))
		return false;
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return false;
	link[n] = 0;
	base = strrchr(link, '/');
	return !strcmp(base ? base + 1 : link, "rnic");
}

/*
 * Called after the table match, whatever it found. A name match is the
 * rnic driver's "rnic%d"; 1af4:1110 is any ivshmem device, so the PCI
 * match is trusted only with an rnic name or with the rnic driver bound.
 */
static bool rnic_match_device(struct verbs_sysfs_dev *sysfs_dev)
{
	const struct verbs_match_ent *m = sysfs_dev->match;

	if (!m)
		return false;
	if (!strncmp(sysfs_dev->ibdev_name, "rnic", 4))
		return true;
	return m->kind == VERBS_MATCH_PCI && rnic_pci_driver_is_rnic(sysfs_dev);
}

static const struct verbs_match_ent rnic_match_table[] = {
	VERBS_NAME_MATCH("rnic", NULL),
	VERBS_PCI_MATCH(RNIC_PCI_VENDOR_ID, RNIC_PCI_DEVICE_ID, NULL),
	{},
};

static const struct verbs_device_ops rnic_dev_ops = {
	.name = "rnic",
	.match_min_abi_version = RNIC_UVERBS_ABI_VERSION,
	.match_max_abi_version = RNIC_UVERBS_ABI_VERSION,
	.match_table = rnic_match_table,
	.match_device = rnic_match_device,
	.alloc_device = rnic_device_alloc,
	.uninit_device = rnic_device_free,
	.alloc_context = rnic_alloc_context,
};

PROVIDER_DRIVER(rnic, rnic_dev_ops);
