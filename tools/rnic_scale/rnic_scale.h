/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rnic_scale: scale and limits of an RDMA device (Documentation/rnic_scale.rst).
 *
 * rnic_scale_main.c is the module: debugfs, the result lines and the
 * limits command; rnic_scale_conn.c makes rdma_cm loopback connections and
 * runs conns over many of them, rnic_scale_one.c mr_churn and cq_overflow
 * over one.
 */
#ifndef RNIC_SCALE_H
#define RNIC_SCALE_H

#include <linux/socket.h>
#include <linux/types.h>

struct ib_device;

#define SCALE_DEF_PORT		18600
#define SCALE_MAX_CONNS		2048U
#define SCALE_MAX_SIZE		SZ_64K
#define SCALE_MAX_DEPTH		64U
#define SCALE_MAX_COUNT		100000U
#define SCALE_MAX_CHURN		1000000U

/* The options of the commands that connect, parsed by rnic_scale_main.c. */
struct scale_conn_args {
	struct sockaddr_storage addr;	/* AF_UNSPEC: none given */
	u16 port;
	u32 n;			/* conns: connections; mr_churn: registrations */
	u32 size;
	u32 count;
	u32 depth;
	u32 pages;		/* mr_churn: the page list of each MR */
	u32 timeout_s;		/* the connect and the traffic phases */
	bool hold;		/* conns: keep them until "release" */
};

__printf(2, 3) void scale_result(const char *cmd, const char *fmt, ...);
const char *scale_errstr(int err, char *buf);
#define SCALE_ERR_LEN		16
/* an errno's name (or number) for a result line, valid in the statement */
#define SCALE_ERR(err)		scale_errstr((err), (char [SCALE_ERR_LEN]) { 0 })
struct ib_device *scale_dev_get(const char *name);

int scale_conns(const struct scale_conn_args *a);
int scale_release(void);
int scale_mr_churn(const struct scale_conn_args *a);
int scale_cq_overflow(struct ib_device *dev, const struct scale_conn_args *a);
int scale_qp_reset(struct ib_device *dev, const struct scale_conn_args *a);
void scale_conn_exit(void);

#endif /* RNIC_SCALE_H */
