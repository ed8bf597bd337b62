// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic_hostile: the modes about the memory and objects a process holds
 * (rnic_hostile.c says what the program is for): bad-mr registers what it
 * must not, killed dies with transfers in flight and leaves nothing behind.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rnic_hostile.h"

/* ------------------------------------------------------------------------
 * bad-mr
 */

static void mr_refused(struct dev *d, const char *what, void *addr, size_t len,
		       int access)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_mr(d->pd, addr, len, access);
	if (mr) {
		fail("%s: registered (key %#x)", what, mr->lkey);
		ibv_dereg_mr(mr);
		return;
	}
	note("%-54s ok: refused, %s", what, strerror(errno));
}

void mode_bad_mr(struct dev *d)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *m, *ro;
	struct ibv_mr *mr;
	struct pair *p;
	int rw = IBV_ACCESS_LOCAL_WRITE;

	/* unmapped: a range that was mapped and is not any more */
	m = mmap(NULL, 16 * pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		fail("mmap: %s", strerror(errno));
		return;
	}
	mr_refused(d, "PROT_NONE mapping, LOCAL_WRITE", m, 16 * pg, rw);
	/*
	 * Without write access, ib_umem before Linux 6.2 pins with FOLL_FORCE
	 * (as ptrace reads), which a PROT_NONE private mapping allows: the
	 * process's own pages, so either answer is right.
	 */
	mr = ibv_reg_mr(d->pd, m, 16 * pg, 0);
	note("%-54s ok: %s", "PROT_NONE mapping, no access",
	     mr ? "registered (FOLL_FORCE pinning, Linux < 6.2)" : strerror(errno));
	if (mr && ibv_dereg_mr(mr))
		fail("ibv_dereg_mr: %s", strerror(errno));
	munmap(m, 16 * pg);
	mr_refused(d, "unmapped range, LOCAL_WRITE", m, 16 * pg, rw);
	mr_refused(d, "unmapped range, no access", m, 16 * pg, 0);
	mr_refused(d, "wild user address 0x7ead00000000", (void *)0x7ead00000000UL,
		   4 * pg, 0);
	mr_refused(d, "kernel address 0xffff888000000000",
		   (void *)0xffff888000000000UL, 4 * pg, 0);
	mr_refused(d, "range that wraps around", (void *)(uintptr_t)-pg, 2 * pg, 0);

	/* half mapped: the second page is a hole */
	m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		fail("mmap: %s", strerror(errno));
		return;
	}
	munmap(m + pg, pg);
	memset(m, 1, pg);
	mr_refused(d, "first page mapped, second not", m, 2 * pg, rw);
	munmap(m, pg);

	/* read-only: no LOCAL_WRITE, and nothing that implies it */
	ro = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro == MAP_FAILED) {
		fail("mmap: %s", strerror(errno));
		return;
	}
	pat_fill(ro, 4 * pg, 77);
	if (mprotect(ro, 4 * pg, PROT_READ)) {
		fail("mprotect: %s", strerror(errno));
		return;
	}
	mr_refused(d, "read-only mapping, LOCAL_WRITE", ro, 4 * pg, rw);
	mr_refused(d, "read-only mapping, LOCAL_WRITE|REMOTE_WRITE", ro, 4 * pg,
		   rw | IBV_ACCESS_REMOTE_WRITE);
	mr_refused(d, "REMOTE_WRITE without LOCAL_WRITE", ro, 4 * pg,
		   IBV_ACCESS_REMOTE_WRITE);
	mr_refused(d, "ON_DEMAND (ODP, not offered)", ro, 4 * pg,
		   IBV_ACCESS_ON_DEMAND | rw);

	/* what is allowed: a read-only MR as a SEND's source, verified */
	p = pair_create(d);
	if (!p)
		goto out;
	mr = ibv_reg_mr(d->pd, ro, 4 * pg, 0);
	if (!mr) {
		fail("read-only mapping, no access: refused (%s), must register",
		     strerror(errno));
	} else {
		struct ibv_sge sge = { (uintptr_t)ro, XFER, mr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = 7, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		}, *bad;
		struct ibv_wc wc;

		memset(p->buf[1] + OFF_RDST, 0, XFER);
		if (post_recv(p, 1, 8) || ibv_post_send(p->qp[0], &wr, &bad))
			fail("read-only MR: post");
		else if (cq_wait(p->cq[0], &wc, 1) != 1 || wc.status)
			fail("read-only MR as a SEND source: no successful completion");
		else if (cq_wait(p->cq[1], &wc, 1) != 1 || wc.status ||
			 pat_bad(p->buf[1] + OFF_RDST, XFER, 77))
			fail("read-only MR as a SEND source: receive failed or bytes differ");
		else
			note("%-54s ok: registered, a SEND from it verified",
			     "read-only mapping, no access");
		if (ibv_dereg_mr(mr))
			fail("ibv_dereg_mr: %s", strerror(errno));
	}

	/* an MR whose memory is unmapped while registered: pinned, no harm */
	m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		fail("mmap: %s", strerror(errno));
		goto out;
	}
	memset(m, 0x11, 2 * pg);
	mr = ibv_reg_mr(d->pd, m, 2 * pg, rw | IBV_ACCESS_REMOTE_WRITE);
	munmap(m, 2 * pg);
	if (!mr) {
		fail("MR to unmap: %s", strerror(errno));
	} else {
		struct ibv_sge sge = { (uintptr_t)p->buf[0] + OFF_WSRC, (uint32_t)pg,
				       p->mr[0]->lkey };
		struct ibv_send_wr wr = {
			.wr_id = 9, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		}, *bad;
		struct ibv_wc wc;
		struct ibv_qp *qp = p->qp[0];

		/* the WRITE goes to the other side's QP, which owns the MR's PD */
		wr.wr.rdma.remote_addr = (uintptr_t)m;
		wr.wr.rdma.rkey = mr->rkey;
		if (ibv_post_send(qp, &wr, &bad))
			fail("WRITE into an unmapped MR: post");
		else if (cq_wait(p->cq[0], &wc, 1) != 1)
			fail("WRITE into an MR whose memory was unmapped: no completion within %d ms",
			     opt.timeout_ms);
		else
			note("%-54s ok: %s", "WRITE into an MR whose memory was unmapped",
			     ibv_wc_status_str(wc.status));
		if (ibv_dereg_mr(mr))
			fail("ibv_dereg_mr after munmap: %s", strerror(errno));
	}
	pair_destroy(p);
	p = pair_create(d);
	if (p) {
		xfer(p, 0, 11, "a new pair after the refused MRs");
		xfer(p, 1, 12, "a new pair after the refused MRs");
		pair_destroy(p);
	}
	events_check(d);
out:
	munmap(ro, 4 * pg);
}

/* ------------------------------------------------------------------------
 * killed
 */

const char *const res_names[RES_KINDS] = { "pd", "cq", "qp", "mr", "ctx" };

/* rdma resource show's counts of -d's device, as res_names, or false */
bool resources(long long r[RES_KINDS])
{
	char cmd[128], line[512], *tok, *save, *prev = NULL;
	bool found = false;
	FILE *f;
	int i;

	snprintf(cmd, sizeof(cmd), "rdma resource show 2>/dev/null");
	f = popen(cmd, "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char key[64];

		snprintf(key, sizeof(key), " %s:", opt.dev);
		if (!strstr(line, key))
			continue;
		for (i = 0; i < RES_KINDS; i++)
			r[i] = -1;
		prev = NULL;
		for (tok = strtok_r(line, " \n", &save); tok;
		     tok = strtok_r(NULL, " \n", &save)) {
			for (i = 0; prev && i < RES_KINDS; i++)
				if (!strcmp(prev, res_names[i]))
					r[i] = atoll(tok);
			prev = tok;
		}
		found = true;
	}
	pclose(f);
	return found;
}

/* The note line of two resources() readings */
void resources_note(const long long before[RES_KINDS], const long long after[RES_KINDS])
{
	note("resources before/after: pd %lld/%lld cq %lld/%lld qp %lld/%lld mr %lld/%lld ctx %lld/%lld",
	     before[0], after[0], before[1], after[1], before[2], after[2],
	     before[3], after[3], before[4], after[4]);
}

/*
 * The child: its own context and pair, WRITEs and SENDs kept in flight
 * (the SQ full, receives reposted), told to the parent after the first
 * verified transfer; runs until killed.
 */
static void __attribute__((noreturn)) killed_child(int fd)
{
	struct ibv_sge ws, ss;
	struct ibv_send_wr wr[2], *bad;
	struct ibv_wc wc[16];
	struct dev d;
	struct pair *p;
	int inflight = 0, recvs = 0, i, n;

	if (dev_open(&d))
		_exit(3);
	p = pair_create(&d);
	if (!p || !xfer(p, 0, 21, "child"))
		_exit(3);
	for (; recvs < QP_WR; recvs++)
		if (post_recv(p, 1, 100))
			_exit(4);
	if (write(fd, "R", 1) != 1)
		_exit(5);
	ws = (struct ibv_sge){ (uintptr_t)p->buf[0] + OFF_WSRC, XFER, p->mr[0]->lkey };
	ss = (struct ibv_sge){ (uintptr_t)p->buf[0] + OFF_SSRC, XFER, p->mr[0]->lkey };
	for (;;) {
		while (inflight + 2 <= QP_WR && recvs > 0) {
			memset(wr, 0, sizeof(wr));
			wr[0].wr_id = 1;
			wr[0].next = &wr[1];
			wr[0].sg_list = &ws;
			wr[0].num_sge = 1;
			wr[0].opcode = IBV_WR_RDMA_WRITE;
			wr[0].send_flags = IBV_SEND_SIGNALED;
			wr[0].wr.rdma.remote_addr = (uintptr_t)p->buf[1] + OFF_WDST;
			wr[0].wr.rdma.rkey = p->mr[1]->rkey;
			wr[1].wr_id = 2;
			wr[1].sg_list = &ss;
			wr[1].num_sge = 1;
			wr[1].opcode = IBV_WR_SEND;
			wr[1].send_flags = IBV_SEND_SIGNALED;
			if (ibv_post_send(p->qp[0], wr, &bad))
				_exit(6);
			inflight += 2;
			recvs--;
		}
		n = ibv_poll_cq(p->cq[0], 16, wc);
		for (i = 0; i < n; i++)
			if (wc[i].status)
				_exit(7);
		inflight -= n > 0 ? n : 0;
		n = ibv_poll_cq(p->cq[1], 16, wc);
		for (i = 0; i < n; i++) {
			if (wc[i].status)
				_exit(8);
			if (!post_recv(p, 1, 100))
				recvs++;
		}
	}
}

void mode_killed(void)
{
	long long r0[RES_KINDS], r1[RES_KINDS];
	bool have0, have1 = false;
	struct pollfd pf;
	int fds[2], status, i;
	int64_t end;
	pid_t pid, w;
	char c;

	have0 = resources(r0);
	if (pipe(fds)) {
		fail("pipe: %s", strerror(errno));
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		fail("fork: %s", strerror(errno));
		return;
	}
	if (!pid) {
		close(fds[0]);
		killed_child(fds[1]);
	}
	close(fds[1]);
	pf = (struct pollfd){ .fd = fds[0], .events = POLLIN };
	if (poll(&pf, 1, opt.timeout_ms) != 1 || read(fds[0], &c, 1) != 1) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		close(fds[0]);
		if (WIFEXITED(status))
			fail("the child failed before its traffic ran (exit %d)",
			     WEXITSTATUS(status));
		else
			fail("the child did not start its traffic within %d ms",
			     opt.timeout_ms);
		return;
	}
	close(fds[0]);
	nap_us((long)opt.kill_ms * 1000);
	/* still running: it did not die of an error of its own */
	w = waitpid(pid, &status, WNOHANG);
	if (w == pid) {
		fail("the child's traffic stopped before the kill (exit %d)",
		     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return;
	}
	kill(pid, SIGKILL);
	end = now_ms() + opt.timeout_ms;
	while ((w = waitpid(pid, &status, WNOHANG)) == 0 && now_ms() < end)
		nap_us(10000);
	if (w != pid) {
		fail("the child was not reaped within %d ms of SIGKILL", opt.timeout_ms);
		return;
	}
	note("child %d SIGKILLed after %d ms with WRITEs and SENDs in flight", pid,
	     opt.kill_ms);
	/* what it held goes with its file; give the kernel the timeout for it */
	if (have0) {
		end = now_ms() + opt.timeout_ms;
		do {
			have1 = resources(r1);
			for (i = 0; have1 && i < RES_KINDS; i++)
				if (r1[i] > r0[i])
					break;
			if (have1 && i == RES_KINDS)
				break;
			nap_us(100000);
		} while (now_ms() < end);
		for (i = 0; have1 && i < RES_KINDS; i++)
			if (r1[i] > r0[i])
				fail("%s: %lld before the child, %lld after it was reaped",
				     res_names[i], r0[i], r1[i]);
		if (have1)
			resources_note(r0, r1);
	}
	if (!have0 || !have1)
		note("rdma resource show: not readable, resources not compared");
	fresh_check("a new context after the kill");
}
