// SPDX-License-Identifier: GPL-2.0
/*
 * rnic_perf: an in-kernel RDMA verbs exerciser and benchmark.
 *
 * Driven through debugfs (Documentation/rnic_perf.rst):
 *
 *   echo "server addr=10.20.0.1 port=18515" > /sys/kernel/debug/rnic_perf/control
 *   echo "client addr=10.20.0.1 port=18515 op=write size=65536 depth=16 count=1000 verify=1" \
 *	> /sys/kernel/debug/rnic_perf/control
 *   cat /sys/kernel/debug/rnic_perf/results
 *
 * A client connects with rdma_cm (RC), tells the server the test in the
 * connect private data, learns the server's fast-registered buffer from an
 * INFO message and runs SEND, SEND_WITH_IMM, RDMA WRITE, WRITE_WITH_IMM,
 * RDMA READ, CMP_SWAP or FETCH_ADD, keeping up to depth operations in
 * flight.  Every byte is checked against a pattern derived from the
 * iteration number; throughput, message rate and per-operation latency
 * (post to completion) are reported.
 *
 * This file: the debugfs control and results files, the command parser
 * and the module's init and exit (rnic_perf.h lists the other files).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/inet.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "rnic_perf.h"

const char * const perf_op_names[PERF_NR_OPS] = {
	[PERF_SEND] = "send",
	[PERF_SEND_IMM] = "send_imm",
	[PERF_WRITE] = "write",
	[PERF_WRITE_IMM] = "write_imm",
	[PERF_READ] = "read",
	[PERF_CMP_SWAP] = "cmp_swap",
	[PERF_FETCH_ADD] = "fetch_add",
};

const char * const perf_fault_names[PERF_NR_FAULTS] = {
	[PERF_FAULT_NONE] = "none",
	[PERF_FAULT_RKEY] = "rkey",
	[PERF_FAULT_NORECV] = "norecv",
	[PERF_FAULT_FLUSH] = "flush",
	[PERF_FAULT_SHORT] = "short",
};

const char * const perf_inv_names[PERF_NR_INVS] = {
	[PERF_INV_NONE] = "none",
	[PERF_INV_LOCAL] = "local",
	[PERF_INV_REMOTE] = "remote",
};

DEFINE_MUTEX(perf_lock);		/* servers, conns, results */
static DEFINE_MUTEX(perf_client_lock);	/* one client run at a time */
struct workqueue_struct *perf_wq;
static struct dentry *perf_dir;
static char perf_results[PERF_NR_RESULTS][PERF_LINE_LEN];
static unsigned int perf_nresults;

void perf_result_add(const char *line)
{
	mutex_lock(&perf_lock);
	strscpy(perf_results[perf_nresults % PERF_NR_RESULTS], line, PERF_LINE_LEN);
	perf_nresults++;
	mutex_unlock(&perf_lock);
	pr_info("%s\n", line);
}

static int perf_parse_u32(const char *v, u32 min, u32 max, u32 *out)
{
	u32 x;

	if (kstrtou32(v, 0, &x) || x < min || x > max)
		return -EINVAL;
	*out = x;
	return 0;
}

/* sge= and rx_sge=: a count, or "max" for the device's limit */
static int perf_parse_sge(const char *v, u32 *out)
{
	if (!strcmp(v, "max")) {
		*out = PERF_SGE_DEV;
		return 0;
	}
	return perf_parse_u32(v, 1, PERF_MAX_SGE, out);
}

static int perf_parse_addr(const char *v, u16 port, struct sockaddr_storage *ss)
{
	char p[8];

	snprintf(p, sizeof(p), "%u", port);
	return inet_pton_with_scope(&init_net, AF_UNSPEC, v, p, ss);
}

static int perf_command(char *buf)
{
	struct perf_args a = {
		.op = PERF_SEND, .size = 4096, .depth = 8, .count = 1000,
		.nsge = 1, .tos = -1, .verify = true, .retry = 7, .rnr_retry = 7,
		.resp_res = -1,
	};
	char *cmd, *tok, *addr = NULL, *src = NULL, *v;
	const char *hint;
	u32 port = PERF_DEF_PORT, x;
	int ret = 0, i;

	buf = strim(buf);
	cmd = strsep(&buf, " \t");
	if (!cmd || !*cmd)
		return -EINVAL;
	if (!strcmp(cmd, "stop")) {
		perf_stop_all();
		return 0;
	}
	if (strcmp(cmd, "server") && strcmp(cmd, "client")) {
		pr_err("unknown command '%s' (server, client, stop)\n", cmd);
		return -EINVAL;
	}
	while ((tok = strsep(&buf, " \t"))) {
		if (!*tok)
			continue;
		v = strchr(tok, '=');
		if (!v) {
			pr_err("'%s': expected key=value\n", tok);
			return -EINVAL;
		}
		*v++ = '\0';
		hint = "";
		if (!strcmp(tok, "addr")) {
			addr = v;
		} else if (!strcmp(tok, "src")) {
			src = v;
		} else if (!strcmp(tok, "port")) {
			ret = perf_parse_u32(v, 1, 65535, &port);
		} else if (!strcmp(tok, "op")) {
			for (i = 0; i < PERF_NR_OPS; i++)
				if (!strcmp(v, perf_op_names[i]))
					break;
			a.op = i;
			ret = i < PERF_NR_OPS ? 0 : -EINVAL;
		} else if (!strcmp(tok, "size")) {
			ret = perf_parse_u32(v, 1, PERF_MAX_SIZE, &a.size);
		} else if (!strcmp(tok, "depth")) {
			ret = perf_parse_u32(v, 1, PERF_MAX_DEPTH, &a.depth);
		} else if (!strcmp(tok, "count")) {
			ret = perf_parse_u32(v, 1, PERF_MAX_COUNT, &a.count);
		} else if (!strcmp(tok, "sge")) {
			ret = perf_parse_sge(v, &a.nsge);
			hint = " (1..255 or max)";
		} else if (!strcmp(tok, "rx_sge")) {
			ret = perf_parse_sge(v, &a.rx_sge);
			a.rx_sge_max = !ret && a.rx_sge == PERF_SGE_DEV;
			hint = " (1..255 or max)";
		} else if (!strcmp(tok, "offset")) {
			ret = perf_parse_u32(v, 0, PAGE_SIZE - 1, &a.offset);
			hint = " (0..PAGE_SIZE-1)";
		} else if (!strcmp(tok, "tos")) {
			ret = perf_parse_u32(v, 0, 255, &x);
			a.tos = x;
		} else if (!strcmp(tok, "verify")) {
			ret = kstrtobool(v, &a.verify);
		} else if (!strcmp(tok, "corrupt")) {
			ret = perf_parse_u32(v, 1, PERF_MAX_COUNT, &a.corrupt);
		} else if (!strcmp(tok, "inline")) {
			ret = kstrtobool(v, &a.inl);
		} else if (!strcmp(tok, "fault")) {
			for (i = 0; i < PERF_NR_FAULTS; i++)
				if (!strcmp(v, perf_fault_names[i]))
					break;
			a.fault = i;
			ret = i < PERF_NR_FAULTS ? 0 : -EINVAL;
		} else if (!strcmp(tok, "inv")) {
			for (i = 0; i < PERF_NR_INVS; i++)
				if (!strcmp(v, perf_inv_names[i]))
					break;
			a.inv = i;
			ret = i < PERF_NR_INVS ? 0 : -EINVAL;
		} else if (!strcmp(tok, "retry")) {
			ret = perf_parse_u32(v, 0, 7, &a.retry);
		} else if (!strcmp(tok, "rnr_retry")) {
			ret = perf_parse_u32(v, 0, 7, &a.rnr_retry);
		} else if (!strcmp(tok, "qp")) {
			a.ud = !strcmp(v, "ud");
			ret = a.ud || !strcmp(v, "rc") ? 0 : -EINVAL;
		} else if (!strcmp(tok, "srq")) {
			ret = kstrtobool(v, &a.srq);
		} else if (!strcmp(tok, "srq_limit")) {
			ret = perf_parse_u32(v, 1, PERF_MAX_COUNT, &a.srq_limit);
		} else if (!strcmp(tok, "rtr")) {
			ret = kstrtobool(v, &a.rtr);
		} else if (!strcmp(tok, "resp_res")) {
			ret = perf_parse_u32(v, 0, PERF_MAX_RESP_RES, &x);
			a.resp_res = x;
			hint = " (0..16)";
		} else if (!strcmp(tok, "hold")) {
			ret = perf_parse_u32(v, 0, PERF_MAX_HOLD_MS, &a.hold_ms);
			hint = " (0..60000 ms)";
		} else {
			ret = -EINVAL;
		}
		if (ret) {
			pr_err("bad option %s=%s%s\n", tok, v, hint);
			return -EINVAL;
		}
	}
	if (!addr) {
		pr_err("%s: addr= is required\n", cmd);
		return -EINVAL;
	}
	ret = perf_parse_addr(addr, port, &a.addr);
	if (ret) {
		pr_err("bad address '%s'\n", addr);
		return ret;
	}
	if (!strcmp(cmd, "server"))
		return perf_server_start(&a.addr);

	if (src) {
		ret = perf_parse_addr(src, 0, &a.src);
		if (ret) {
			pr_err("bad source address '%s'\n", src);
			return ret;
		}
		a.has_src = true;
	}
	/* the inline size is the device's to grant (perf_conn_setup) */
	if (a.inl && (perf_op_is_atomic(a.op) || a.op == PERF_READ)) {
		pr_err("inline needs a send or write\n");
		return -EINVAL;
	}
	if ((a.ud || a.srq) && (!perf_op_is_send(a.op) ||
				a.fault != PERF_FAULT_NONE ||
				(a.ud && (a.nsge != 1 || a.rx_sge > 1 || a.rx_sge_max)))) {
		pr_err("qp=ud and srq=1 take op=send or send_imm and no fault; qp=ud sge=1 rx_sge=1\n");
		return -EINVAL;
	}
	/* the server moves its own RC QP (perf_qp_to()) */
	if ((a.rtr || a.resp_res >= 0) && (a.ud || a.srq)) {
		pr_err("rtr= and resp_res= take qp=rc without srq\n");
		return -EINVAL;
	}
	/* only SEND data lands in the server's receives */
	if ((a.rx_sge || a.rx_sge_max) && !perf_op_is_send(a.op)) {
		pr_err("rx_sge= takes op=send or send_imm\n");
		return -EINVAL;
	}
	/* an atomic's target, 8 bytes at the region's start, is aligned */
	if (a.offset % 8 && perf_op_is_atomic(a.op)) {
		pr_err("offset=%u: atomics need a multiple of 8\n", a.offset);
		return -EINVAL;
	}
	/* default: the limit event half way through the run */
	if (a.srq && !a.srq_limit)
		a.srq_limit = a.count / 2 + 1;
	if ((a.fault == PERF_FAULT_RKEY && perf_op_is_send(a.op)) ||
	    (a.fault == PERF_FAULT_NORECV && !perf_op_is_send(a.op)) ||
	    (a.fault == PERF_FAULT_SHORT && !perf_op_is_send(a.op))) {
		pr_err("fault=%s does not apply to op=%s\n",
		       perf_fault_names[a.fault], perf_op_names[a.op]);
		return -EINVAL;
	}
	if (a.inv != PERF_INV_NONE &&
	    ((a.op != PERF_WRITE && a.op != PERF_READ) || a.ud ||
	     a.fault != PERF_FAULT_NONE)) {
		pr_err("inv=%s takes op=write or read, qp=rc and no fault\n",
		       perf_inv_names[a.inv]);
		return -EINVAL;
	}
	if (a.fault == PERF_FAULT_SHORT && a.size <= sizeof(struct perf_ctrl)) {
		pr_err("fault=short needs size above %zu\n", sizeof(struct perf_ctrl));
		return -EINVAL;
	}
	if (perf_op_is_atomic(a.op)) {
		a.nsge = 1;
		a.size = 8;
	}
	if (mutex_lock_interruptible(&perf_client_lock))
		return -EINTR;
	ret = perf_client(&a);
	mutex_unlock(&perf_client_lock);
	return ret;
}

static ssize_t perf_control_write(struct file *f, const char __user *ubuf,
				  size_t len, loff_t *ppos)
{
	char *buf;
	int ret;

	if (len > 512)
		return -E2BIG;
	buf = memdup_user_nul(ubuf, len);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	ret = perf_command(buf);
	kfree(buf);
	return ret ? ret : len;
}

static int perf_control_show(struct seq_file *m, void *v)
{
	int i;

	seq_puts(m, "commands:\n"
		 "  server addr=ADDR [port=N]\n"
		 "  client addr=ADDR [port=N] [src=ADDR] [op=OP] [size=N] [depth=N] [count=N]\n"
		 "         [sge=N|max] [rx_sge=N|max] [offset=N] [inline=0|1] [verify=0|1]\n"
		 "         [tos=N] [corrupt=ITER] [retry=0-7] [rnr_retry=0-7]\n"
		 "         [fault=none|rkey|norecv|flush|short] [qp=rc|ud] [srq=0|1]\n"
		 "         [srq_limit=N] [inv=none|local|remote]\n"
		 "  stop\n"
		 "ops:");
	for (i = 0; i < PERF_NR_OPS; i++)
		seq_printf(m, " %s", perf_op_names[i]);
	seq_puts(m, "\nlistening:");
	perf_servers_show(m);
	seq_putc(m, '\n');
	return 0;
}

static int perf_control_open(struct inode *inode, struct file *f)
{
	return single_open(f, perf_control_show, NULL);
}

static const struct file_operations perf_control_fops = {
	.owner = THIS_MODULE,
	.open = perf_control_open,
	.read = seq_read,
	.write = perf_control_write,
	.llseek = seq_lseek,
	.release = single_release,
};

static int perf_results_show(struct seq_file *m, void *v)
{
	unsigned int i, first;

	mutex_lock(&perf_lock);
	first = perf_nresults > PERF_NR_RESULTS ? perf_nresults - PERF_NR_RESULTS : 0;
	for (i = first; i < perf_nresults; i++)
		seq_printf(m, "%s\n", perf_results[i % PERF_NR_RESULTS]);
	mutex_unlock(&perf_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(perf_results);

static int __init perf_init(void)
{
	perf_wq = alloc_workqueue("rnic_perf", WQ_UNBOUND, 0);
	if (!perf_wq)
		return -ENOMEM;
	perf_dir = debugfs_create_dir("rnic_perf", NULL);
	debugfs_create_file("control", 0600, perf_dir, NULL, &perf_control_fops);
	debugfs_create_file("results", 0400, perf_dir, NULL, &perf_results_fops);
	return 0;
}

static void __exit perf_exit(void)
{
	debugfs_remove_recursive(perf_dir);
	perf_stop_all();
	destroy_workqueue(perf_wq);
}

module_init(perf_init);
module_exit(perf_exit);

MODULE_AUTHOR("rnic developers");
MODULE_DESCRIPTION("In-kernel RDMA verbs exerciser and benchmark (rdma_cm, RC)");
MODULE_LICENSE("GPL");
