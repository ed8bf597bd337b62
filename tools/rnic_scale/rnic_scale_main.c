// SPDX-License-Identifier: GPL-2.0
/*
 * rnic_scale: how far an RDMA device scales and how it refuses past its
 * limits, through the kernel verbs and rdma_cm only, so that it runs on any
 * RoCE device (rnic, rdma_rxe). Driven through debugfs
 * (Documentation/rnic_scale.rst):
 *
 *   echo "conns addr=10.20.0.1 n=256" > /sys/kernel/debug/rnic_scale/control
 *   echo "limits dev=rnic0" > /sys/kernel/debug/rnic_scale/control
 *   cat /sys/kernel/debug/rnic_scale/results
 *
 * This file is the module: the debugfs interface, the result lines and the
 * limits command. rnic_scale_conn.c and rnic_scale_one.c run the commands
 * over rdma_cm loopback connections.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/inet.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <rdma/ib_verbs.h>
#include <rdma/restrack.h>

#include "rnic_scale.h"

#define SCALE_NR_RESULTS	64	/* a lab test reads new lines by count */
#define SCALE_LINE_LEN		512
#define SCALE_CMD_LEN		512
/* past the advertised maximum: a device that never refuses is reported */
#define SCALE_OVERSHOOT		16U

static DEFINE_MUTEX(scale_cmd_lock);	/* one command at a time */
static DEFINE_MUTEX(scale_res_lock);	/* the result lines */
static struct dentry *scale_dir;
static char scale_results[SCALE_NR_RESULTS][SCALE_LINE_LEN];
static unsigned int scale_nresults;

/**
 * scale_result() - add a result line and print it to the kernel log
 * @cmd: the line's first word, the command
 * @fmt: printf format of the rest (key=value words)
 *
 * The last SCALE_NR_RESULTS lines are kept for the results file.
 */
void scale_result(const char *cmd, const char *fmt, ...)
{
	char *line;
	va_list ap;
	int n;

	mutex_lock(&scale_res_lock);
	line = scale_results[scale_nresults % SCALE_NR_RESULTS];
	n = scnprintf(line, SCALE_LINE_LEN, "%s ", cmd);
	va_start(ap, fmt);
	vsnprintf(line + n, SCALE_LINE_LEN - n, fmt, ap);
	va_end(ap);
	scale_nresults++;
	pr_info("%s\n", line);
	mutex_unlock(&scale_res_lock);
}

/**
 * scale_dev_get() - an RDMA device by name, with a reference
 * @name: the ib_device's name (rnic0, rxe0)
 *
 * Return: the device (release with ib_device_put()) or NULL.
 */
struct ib_device *scale_dev_get(const char *name)
{
	return ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);
}

/**
 * scale_errstr() - an errno's name, for result lines
 * @err: a negative errno, or 0
 * @buf: SCALE_ERR_LEN bytes for an errno without a name here
 *
 * The kernel's own table (%pe) is there only with CONFIG_SYMBOLIC_ERRNAME;
 * these are the refusals a device gives and the failures of a run.
 *
 * Return: "ENOSPC" and the like, "0" for 0, else the number in @buf.
 */
const char *scale_errstr(int err, char *buf)
{
	static const struct {
		int err;
		const char *name;
	} names[] = {
		{ 0, "0" }, { -ENOSPC, "ENOSPC" }, { -ENOMEM, "ENOMEM" },
		{ -EINVAL, "EINVAL" }, { -EAGAIN, "EAGAIN" },
		{ -EBUSY, "EBUSY" }, { -EOPNOTSUPP, "EOPNOTSUPP" },
		{ -EIO, "EIO" }, { -ETIMEDOUT, "ETIMEDOUT" },
		{ -EPROTO, "EPROTO" }, { -EILSEQ, "EILSEQ" },
		{ -EADDRINUSE, "EADDRINUSE" }, { -ECONNREFUSED, "ECONNREFUSED" },
		{ -EINTR, "EINTR" }, { -EXDEV, "EXDEV" },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (names[i].err == err)
			return names[i].name;
	snprintf(buf, SCALE_ERR_LEN, "%d", err);
	return buf;
}

/* ------------------------------------------------------------- limits */

enum scale_res {
	SCALE_CQ,
	SCALE_QP,
	SCALE_MR,
	SCALE_PD,
	SCALE_NR_RES,
};

static const char * const scale_res_names[SCALE_NR_RES] = {
	[SCALE_CQ] = "cq",
	[SCALE_QP] = "qp",
	[SCALE_MR] = "mr",
	[SCALE_PD] = "pd",
};

/* One resource's figures: what the device advertises and what it gave. */
struct scale_limit {
	u32 max;		/* ib_device_attr */
	u32 existing;		/* restrack, before the allocations */
	u32 got;		/* allocated before the refusal */
	u64 ms;			/* the allocations and the frees */
	int err;		/* the refusal; 0: none up to max + overshoot */
	bool again;		/* one allocated again after freeing all */
};

/* Everything one limits run holds, freed by scale_limits_free(). */
struct scale_limits {
	struct ib_device *dev;
	struct ib_pd *pd;	/* of the QPs and MRs */
	struct ib_cq *cq;	/* of the QPs */
	void **objs;
	u32 nobjs;
	u32 cap;
	struct scale_limit res[SCALE_NR_RES];
};

/* CQs of the limits run are never armed: nothing to do */
static void scale_cq_comp(struct ib_cq *cq, void *ctx)
{
}

static void scale_cq_event(struct ib_event *ev, void *ctx)
{
	pr_warn("limits: unexpected CQ event %s\n", ib_event_msg(ev->event));
}

static void *scale_res_alloc(struct scale_limits *l, enum scale_res r,
			     u32 i)
{
	struct ib_cq_init_attr ca = {
		.cqe = 1,
		/* spread over the vectors: each may have a CQ limit of its own */
		.comp_vector = i % max(l->dev->num_comp_vectors, 1),
	};
	struct ib_qp_init_attr qa = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = {
			.max_send_wr = 1,
			.max_recv_wr = 1,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.send_cq = l->cq,
		.recv_cq = l->cq,
	};

	switch (r) {
	case SCALE_CQ:
		return ib_create_cq(l->dev, scale_cq_comp, scale_cq_event, NULL, &ca);
	case SCALE_QP:
		return ib_create_qp(l->pd, &qa);
	case SCALE_MR:
		return ib_alloc_mr(l->pd, IB_MR_TYPE_MEM_REG, 1);
	case SCALE_PD:
		return ib_alloc_pd(l->dev, 0);
	default:
		return ERR_PTR(-EINVAL);
	}
}

static void scale_res_free(enum scale_res r, void *obj)
{
	switch (r) {
	case SCALE_CQ:
		ib_destroy_cq(obj);
		break;
	case SCALE_QP:
		ib_destroy_qp(obj);
		break;
	case SCALE_MR:
		ib_dereg_mr(obj);
		break;
	case SCALE_PD:
		ib_dealloc_pd(obj);
		break;
	default:
		break;
	}
}

static void scale_objs_free(struct scale_limits *l, enum scale_res r)
{
	while (l->nobjs)
		scale_res_free(r, l->objs[--l->nobjs]);
}

/*
 * What the device already holds of a resource: restrack counts what
 * ib_core created (the GSI QP and its CQs, rdma_cm's and other clients'
 * PDs). A PD of a device without a local DMA lkey also holds a DMA MR
 * (ib_alloc_pd()'s __internal_mr), which restrack does not list.
 */
static u32 scale_existing(struct ib_device *dev, enum scale_res r)
{
	static const enum rdma_restrack_type rt[SCALE_NR_RES] = {
		[SCALE_CQ] = RDMA_RESTRACK_CQ,
		[SCALE_QP] = RDMA_RESTRACK_QP,
		[SCALE_MR] = RDMA_RESTRACK_MR,
		[SCALE_PD] = RDMA_RESTRACK_PD,
	};
	u32 n = rdma_restrack_count(dev, rt[r], true);

	if (r == SCALE_MR &&
	    !(dev->attrs.kernel_cap_flags & IBK_LOCAL_DMA_LKEY))
		n += rdma_restrack_count(dev, RDMA_RESTRACK_PD, true);
	return n;
}

static u32 scale_attr_max(struct ib_device *dev, enum scale_res r)
{
	switch (r) {
	case SCALE_CQ:
		return dev->attrs.max_cq;
	case SCALE_QP:
		return dev->attrs.max_qp;
	case SCALE_MR:
		return dev->attrs.max_mr;
	case SCALE_PD:
		return dev->attrs.max_pd;
	default:
		return 0;
	}
}

/**
 * scale_fill() - allocate one kind of object until the device refuses
 * @l: the run
 * @r: the resource
 *
 * Allocates up to the advertised maximum plus SCALE_OVERSHOOT (or the
 * cap=), records the count and the errno of the refusal, then frees them
 * all.
 *
 * Return: 0, or -EINTR on a signal.
 */
static int scale_fill(struct scale_limits *l, enum scale_res r)
{
	struct scale_limit *lim = &l->res[r];
	ktime_t t0 = ktime_get();
	void *obj;
	int ret = 0;

	lim->max = scale_attr_max(l->dev, r);
	lim->existing = scale_existing(l->dev, r);
	while (l->nobjs < l->cap) {
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		obj = scale_res_alloc(l, r, l->nobjs);
		if (IS_ERR(obj)) {
			lim->err = PTR_ERR(obj);
			break;
		}
		l->objs[l->nobjs++] = obj;
		if (!(l->nobjs % 1024))
			cond_resched();
	}
	lim->got = l->nobjs;
	scale_objs_free(l, r);
	lim->ms = ktime_ms_delta(ktime_get(), t0);
	return ret;
}

/* After the fill of every kind: one of each again, to prove they came back. */
static void scale_again(struct scale_limits *l)
{
	enum scale_res r;
	void *obj;

	for (r = 0; r < SCALE_NR_RES; r++) {
		obj = scale_res_alloc(l, r, 0);
		l->res[r].again = !IS_ERR(obj);
		if (!IS_ERR(obj))
			scale_res_free(r, obj);
	}
}

static void scale_limits_report(struct scale_limits *l, int ret)
{
	char buf[SCALE_LINE_LEN];
	struct scale_limit *lim;
	size_t len = 0;
	enum scale_res r;

	for (r = 0; r < SCALE_NR_RES; r++) {
		lim = &l->res[r];
		len += scnprintf(buf + len, sizeof(buf) - len,
				 " %s=%u %s_max=%u %s_existing=%u %s_err=%s %s_again=%u %s_ms=%llu",
				 scale_res_names[r], lim->got,
				 scale_res_names[r], lim->max,
				 scale_res_names[r], lim->existing,
				 scale_res_names[r], SCALE_ERR(lim->err),
				 scale_res_names[r], lim->again,
				 scale_res_names[r], lim->ms);
	}
	scale_result("limits", "dev=%s%s status=%s", dev_name(&l->dev->dev),
		     buf, ret ? "error" : "ok");
}

/* cap: at most that many objects of each kind (0: max + overshoot) */
static int scale_limits(const char *name, u32 cap)
{
	struct scale_limits l = {};
	enum scale_res r;
	u32 most = 0;
	int ret;

	l.dev = scale_dev_get(name);
	if (!l.dev)
		return -ENODEV;
	for (r = 0; r < SCALE_NR_RES; r++)
		most = max(most, scale_attr_max(l.dev, r));
	l.cap = cap ?: most + SCALE_OVERSHOOT;
	l.objs = kvcalloc(l.cap, sizeof(*l.objs), GFP_KERNEL);
	l.pd = ib_alloc_pd(l.dev, 0);
	if (!l.objs || IS_ERR(l.pd)) {
		ret = IS_ERR(l.pd) ? PTR_ERR(l.pd) : -ENOMEM;
		l.pd = NULL;
		goto out;
	}
	/*
	 * The CQ of the QPs is made before the CQ fill, so that fill counts
	 * it among the existing ones; the QPs are counted without it.
	 */
	l.cq = scale_res_alloc(&l, SCALE_CQ, 0);
	if (IS_ERR(l.cq)) {
		ret = PTR_ERR(l.cq);
		l.cq = NULL;
		goto out;
	}
	for (r = 0; r < SCALE_NR_RES; r++) {
		ret = scale_fill(&l, r);
		if (ret)
			goto out;
	}
	scale_again(&l);
	scale_limits_report(&l, 0);
out:
	if (ret)
		scale_limits_report(&l, ret);
	if (l.cq)
		ib_destroy_cq(l.cq);
	if (l.pd)
		ib_dealloc_pd(l.pd);
	kvfree(l.objs);
	ib_device_put(l.dev);
	return ret;
}

/* ------------------------------------------------------------ commands */

static int scale_parse_u32(const char *v, u32 min, u32 max, u32 *out)
{
	u32 x;

	if (kstrtou32(v, 0, &x) || x < min || x > max)
		return -EINVAL;
	*out = x;
	return 0;
}

static int scale_parse_addr(const char *v, struct sockaddr_storage *ss)
{
	return inet_pton_with_scope(&init_net, AF_UNSPEC, v, NULL, ss);
}

static int scale_set_port(struct sockaddr_storage *ss, u16 port)
{
	switch (ss->ss_family) {
	case AF_INET:
		((struct sockaddr_in *)ss)->sin_port = htons(port);
		return 0;
	case AF_INET6:
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
		return 0;
	default:
		return -EINVAL;
	}
}

/* One key=value option of any command; -EINVAL for anything unknown. */
static int scale_option(char *kv, struct scale_conn_args *a, char **dev,
			u32 *port, u32 *cap, bool *have_addr)
{
	char *v = strchr(kv, '=');
	u32 x;
	int ret;

	if (!v)
		return -EINVAL;
	*v++ = '\0';
	if (!strcmp(kv, "addr")) {
		*have_addr = true;
		return scale_parse_addr(v, &a->addr);
	}
	if (!strcmp(kv, "dev")) {
		*dev = v;
		return 0;
	}
	if (!strcmp(kv, "port"))
		return scale_parse_u32(v, 1, 65535, port);
	if (!strcmp(kv, "n"))
		return scale_parse_u32(v, 1, SCALE_MAX_CHURN, &a->n);
	if (!strcmp(kv, "size"))
		return scale_parse_u32(v, 4, SCALE_MAX_SIZE, &a->size);
	if (!strcmp(kv, "count"))
		return scale_parse_u32(v, 1, SCALE_MAX_COUNT, &a->count);
	if (!strcmp(kv, "depth"))
		return scale_parse_u32(v, 1, SCALE_MAX_DEPTH, &a->depth);
	if (!strcmp(kv, "pages"))
		return scale_parse_u32(v, 1, 1U << 20, &a->pages);
	if (!strcmp(kv, "timeout"))
		return scale_parse_u32(v, 1, 3600, &a->timeout_s);
	if (!strcmp(kv, "cap"))
		return scale_parse_u32(v, 1, 1U << 24, cap);
	if (!strcmp(kv, "hold")) {
		ret = scale_parse_u32(v, 0, 1, &x);
		a->hold = x;
		return ret;
	}
	return -EINVAL;
}

static int scale_command(char *buf)
{
	struct scale_conn_args a = {
		.n = 1, .size = 1024, .count = 8, .depth = 4, .pages = 16,
		.timeout_s = 120,
	};
	bool have_addr = false;
	char *cmd, *kv, *dev = NULL;
	struct ib_device *ibdev;
	u32 port = SCALE_DEF_PORT, cap = 0;
	int ret;

	cmd = strsep(&buf, " \t");
	if (!cmd || !*cmd)
		return -EINVAL;
	while ((kv = strsep(&buf, " \t"))) {
		if (!*kv)
			continue;
		ret = scale_option(kv, &a, &dev, &port, &cap, &have_addr);
		if (ret) {
			pr_err("%s: bad option '%s'\n", cmd, kv);
			return ret;
		}
	}
	if (have_addr && scale_set_port(&a.addr, port))
		return -EINVAL;
	a.port = port;

	if (!strcmp(cmd, "conns"))
		return have_addr ? scale_conns(&a) : -EDESTADDRREQ;
	if (!strcmp(cmd, "release"))
		return scale_release();
	if (!strcmp(cmd, "mr_churn"))
		return have_addr ? scale_mr_churn(&a) : -EDESTADDRREQ;
	if (!strcmp(cmd, "limits"))
		return dev ? scale_limits(dev, cap) : -ENODEV;
	if (!strcmp(cmd, "cq_overflow") || !strcmp(cmd, "qp_reset")) {
		if (!dev)
			return -ENODEV;
		ibdev = scale_dev_get(dev);
		if (!ibdev)
			return -ENODEV;
		/* without addr=, a.addr is AF_UNSPEC: one of DEV's is used */
		ret = cmd[0] == 'c' ? scale_cq_overflow(ibdev, &a) :
				      scale_qp_reset(ibdev, &a);
		ib_device_put(ibdev);
		return ret;
	}
	pr_err("unknown command '%s'\n", cmd);
	return -EINVAL;
}

static ssize_t scale_control_write(struct file *f, const char __user *ubuf,
				   size_t len, loff_t *ppos)
{
	char *buf;
	int ret;

	if (!len || len >= SCALE_CMD_LEN)
		return -EINVAL;
	buf = memdup_user_nul(ubuf, len);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	strim(buf);
	if (mutex_lock_interruptible(&scale_cmd_lock)) {
		kfree(buf);
		return -EINTR;
	}
	ret = scale_command(buf);
	mutex_unlock(&scale_cmd_lock);
	kfree(buf);
	return ret ? ret : len;
}

static int scale_control_show(struct seq_file *m, void *v)
{
	seq_puts(m, "conns addr=ADDR n=N [port=P] [size=S] [count=C] [depth=D] [timeout=SEC] [hold=0|1]\n"
		    "release\n"
		    "limits dev=DEV [cap=N]\n"
		    "mr_churn addr=ADDR n=N [pages=P] [port=P] [timeout=SEC]\n"
		    "cq_overflow dev=DEV [addr=ADDR] [port=P]\n"
		    "qp_reset dev=DEV [addr=ADDR] [port=P]\n");
	return 0;
}

static int scale_control_open(struct inode *inode, struct file *f)
{
	return single_open(f, scale_control_show, NULL);
}

static const struct file_operations scale_control_fops = {
	.owner = THIS_MODULE,
	.open = scale_control_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = scale_control_write,
};

static int scale_results_show(struct seq_file *m, void *v)
{
	unsigned int i, first;

	mutex_lock(&scale_res_lock);
	first = scale_nresults > SCALE_NR_RESULTS ?
		scale_nresults - SCALE_NR_RESULTS : 0;
	for (i = first; i < scale_nresults; i++)
		seq_printf(m, "%s\n", scale_results[i % SCALE_NR_RESULTS]);
	mutex_unlock(&scale_res_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(scale_results);

static int __init scale_init(void)
{
	scale_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("control", 0600, scale_dir, NULL,
			    &scale_control_fops);
	debugfs_create_file("results", 0400, scale_dir, NULL,
			    &scale_results_fops);
	return 0;
}

static void __exit scale_exit(void)
{
	/* no new command after this; a held conns run is torn down */
	debugfs_remove_recursive(scale_dir);
	mutex_lock(&scale_cmd_lock);
	scale_conn_exit();
	mutex_unlock(&scale_cmd_lock);
}

module_init(scale_init);
module_exit(scale_exit);

MODULE_DESCRIPTION("RDMA scale and limits exerciser (rnic, rxe)");
MODULE_LICENSE("GPL");
