// SPDX-License-Identifier: GPL-2.0
/*
 * The real rnicsim binary with the real device model, driven from the
 * QEMU side of the ivshmem socket the way a guest would: BAR2 holds the
 * signature, a Doorbell eventfd kick makes the device act on a register
 * write, an admin command DMAs through the guest RAM file and completes
 * with an MSI-X (the guest's eventfd), the control socket answers, and
 * SIGTERM shuts it down cleanly.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rnic_hw.h>

#include "qemu_peer.h"
#include "test.h"

#define E2E_RAM		(4u << 20)
#define E2E_VEC		4

static bool wait_for(const char *path, int ms)
{
	struct timespec ts = { 0, 10000000 };

	while (ms > 0 && access(path, F_OK)) {
		nanosleep(&ts, NULL);
		ms -= 10;
	}
	return access(path, F_OK) == 0;
}

static u32 r32(const u8 *bar, unsigned int off)
{
	__le32 v;

	memcpy(&v, bar + off, 4);
	return le32_to_cpu(v);
}

static void w32(u8 *bar, unsigned int off, u32 val)
{
	__le32 v = cpu_to_le32(val);

	memcpy(bar + off, &v, 4);
}

/* The admin queue and event queue registers, queues in guest RAM */
static void program_queues(u8 *bar)
{
	w32(bar, RNIC_REG_AQ_SQ_BASE_LO, 0x10000);
	w32(bar, RNIC_REG_AQ_CQ_BASE_LO, 0x11000);
	w32(bar, RNIC_REG_AQ_CFG, 2);
	w32(bar, RNIC_REG_EQ_BASE_LO, 0x12000);
	w32(bar, RNIC_REG_EQ_CFG, 2);
}

/* What the guest's BAR0 Doorbell write of (0 << 16) | vec does. */
static void kick(struct qemu_peer *q, unsigned int vec)
{
	uint64_t one = 1;

	if (write(q->fd[3 + vec], &one, sizeof(one)) != sizeof(one))
		test_fail(__FILE__, __LINE__, "kick %u: %s", vec,
			  strerror(errno));
}

/* Wait for the device to raise MSI-X vector @vec. */
static bool irq(struct qemu_peer *q, unsigned int vec, int ms)
{
	struct pollfd p = { .fd = q->fd[3 + E2E_VEC + vec], .events = POLLIN };
	uint64_t cnt;

	if (poll(&p, 1, ms) != 1)
		return false;
	return read(p.fd, &cnt, sizeof(cnt)) == sizeof(cnt) && cnt > 0;
}

static bool status_is(u8 *bar, u32 want, int ms)
{
	struct timespec ts = { 0, 1000000 };

	while (ms-- > 0) {
		if (r32(bar, RNIC_REG_STATUS) == want)
			return true;
		nanosleep(&ts, NULL);
	}
	return false;
}

static int run_ctl(const char *bin, const char *ctl, const char *cmd,
		   char *out, size_t size)
{
	char line[512];
	FILE *p;
	size_t used = 0;

	snprintf(line, sizeof(line), "%s --ctl-cmd %s %s", bin, ctl, cmd);
	p = popen(line, "r");
	if (!p)
		return -1;
	used = fread(out, 1, size - 1, p);
	out[used] = '\0';
	return pclose(p);
}

TEST(e2e_rnicsim_binary_with_device)
{
	char bin[4200], sock[300], ctl[300], ram[300], log[300], vec[8];
	char out[16384];
	const struct rnic_sig *sig;
	struct rnic_acqe *c;
	union rnic_aq_entry e;
	struct rnic_device_attr *attr;
	struct qemu_peer q = { .sock = -1 };
	u8 *bar = MAP_FAILED, *mem = MAP_FAILED;
	int fd, status;
	ssize_t n;
	pid_t pid;

	/* The rnicsim built alongside this test binary. */
	n = readlink("/proc/self/exe", bin, sizeof(bin) - 16);
	REQUIRE(n > 0);
	bin[n] = '\0';
	strcpy(strrchr(bin, '/'), "/rnicsim");
	if (access(bin, X_OK)) {
		test_fail(__FILE__, __LINE__, "%s not built", bin);
		return;
	}
	snprintf(sock, sizeof(sock), "%s/e2e.sock", test_tmpdir());
	snprintf(ctl, sizeof(ctl), "%s/e2e.ctl", test_tmpdir());
	snprintf(ram, sizeof(ram), "%s/e2e-ram", test_tmpdir());
	snprintf(log, sizeof(log), "%s/e2e.log", test_tmpdir());
	snprintf(vec, sizeof(vec), "%d", E2E_VEC);
	/* The guest RAM file, as QEMU's memory-backend-file makes it. */
	fd = open(ram, O_RDWR | O_CREAT | O_TRUNC, 0600);
	REQUIRE(fd >= 0 && ftruncate(fd, E2E_RAM) == 0);
	mem = mmap(NULL, E2E_RAM, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	REQUIRE(mem != MAP_FAILED);

	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		execl(bin, bin, "--socket", sock, "--ctl", ctl, "--guest-mem",
		      ram, "--guest-mem-size", "4M", "--vectors", vec,
		      "--log", log, (char *)NULL);
		_exit(127);
	}
	if (!wait_for(ctl, 5000)) {
		test_fail(__FILE__, __LINE__, "rnicsim did not start");
		goto out;
	}
	REQUIRE(qp_connect(&q, sock) == 0);
	if (qp_recv(&q, 3 + 2 * E2E_VEC, 2000) != 3 + 2 * E2E_VEC) {
		test_fail(__FILE__, __LINE__, "handshake: %d messages", q.nmsg);
		goto out;
	}
	bar = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED,
		   q.fd[2], 0);
	if (bar == MAP_FAILED) {
		test_fail(__FILE__, __LINE__, "mmap BAR2: %s", strerror(errno));
		goto out;
	}
	/* What the driver checks before writing anything. */
	sig = (const void *)(bar + RNIC_SIG_OFF);
	CHECK_EQ(le32_to_cpu(sig->magic), RNIC_SIG_MAGIC);
	/* rnicsim serves 2.0 alone */
	CHECK_EQ(le16_to_cpu(sig->abi_major), RNIC_ABI2_MAJOR);
	CHECK_EQ(le16_to_cpu(sig->abi_compat), BIT(RNIC_ABI2_MAJOR));
	CHECK_EQ(le32_to_cpu(sig->shm_size), 1 << 20);
	CHECK_MEM_EQ(sig->mac, "\x02\x00\x00\x00\x00\x01", 6);

	/* Reset, then enable with an admin queue in guest RAM. */
	w32(bar, RNIC_REG_CTRL, RNIC_CTRL_RESET);
	kick(&q, RNIC_DB_VEC_CTRL);
	CHECK(status_is(bar, RNIC_STATUS_RESET_DONE, 2000));
	memset(mem, 0, E2E_RAM);
	program_queues(bar);
	/* Enable asking for 1.0 (CTRL.ABI 0) is refused, and logged */
	w32(bar, RNIC_REG_CTRL, RNIC_CTRL_ENABLE);
	kick(&q, RNIC_DB_VEC_CTRL);
	CHECK(status_is(bar, RNIC_STATUS_FATAL, 2000));
	CHECK_EQ(r32(bar, RNIC_REG_FATAL_REASON), RNIC_FATAL_BAD_ABI);
	w32(bar, RNIC_REG_CTRL, RNIC_CTRL_RESET);
	kick(&q, RNIC_DB_VEC_CTRL);
	CHECK(status_is(bar, RNIC_STATUS_RESET_DONE, 2000));
	program_queues(bar);
	w32(bar, RNIC_REG_CTRL, RNIC_CTRL_ENABLE |
	    FIELD_PREP(RNIC_CTRL_ABI, RNIC_ABI2_MAJOR));
	kick(&q, RNIC_DB_VEC_CTRL);
	CHECK(status_is(bar, RNIC_STATUS_ENABLED |
			FIELD_PREP(RNIC_STATUS_ABI, RNIC_ABI2_MAJOR), 2000));

	/* QUERY_DEVICE: DMA both ways, completion, MSI-X vector 0. */
	memset(&e, 0, sizeof(e));
	e.query.hdr.opcode = RNIC_AQ_QUERY_DEVICE;
	e.query.hdr.cmd_id = cpu_to_le16(77);
	e.query.buf_addr = cpu_to_le64(0x20000);
	e.query.buf_len = cpu_to_le32(sizeof(*attr));
	memcpy(mem + 0x10000, &e, sizeof(e));
	w32(bar, RNIC_DB_SLOT_OFF(RNIC_DB_SLOT_ADMIN_SQ), 1);
	kick(&q, RNIC_DB_VEC_ADMIN);
	CHECK(irq(&q, 0, 2000));
	c = (struct rnic_acqe *)(mem + 0x11000);
	CHECK_EQ(rnic_acqe_phase(c), 1);
	CHECK_EQ(c->status, RNIC_AQ_SUCCESS);
	CHECK_EQ(le16_to_cpu(c->cmd_id), 77);
	attr = (struct rnic_device_attr *)(mem + 0x20000);
	CHECK_EQ(le16_to_cpu(attr->abi_major), RNIC_ABI2_MAJOR);
	CHECK_EQ(le16_to_cpu(attr->num_msix), E2E_VEC);

	/* A command pointing outside guest RAM fails, rnicsim survives. */
	e.query.hdr.cmd_id = cpu_to_le16(78);
	e.query.buf_addr = cpu_to_le64(~0ull - 8);
	memcpy(mem + 0x10000 + RNIC_AQ_ENTRY_SIZE, &e, sizeof(e));
	w32(bar, RNIC_DB_SLOT_OFF(RNIC_DB_SLOT_ADMIN_SQ), 2);
	kick(&q, RNIC_DB_VEC_ADMIN);
	CHECK(irq(&q, 0, 2000));
	CHECK_EQ(c[1].status, RNIC_AQ_BAD_ADDR);

	CHECK_EQ(run_ctl(bin, ctl, "counters", out, sizeof(out)), 0);
	CHECK(strstr(out, "plat_guest_connected 1\n") != NULL);
	CHECK(strstr(out, "plat_doorbell_v1 2\n") != NULL);
	CHECK(strstr(out, "plat_irq_v0 2\n") != NULL);
	CHECK(strstr(out, "plat_guest_mem_mapped 4194304\n") != NULL);
	CHECK(strstr(out, "\nok\n") != NULL);
	CHECK_EQ(run_ctl(bin, ctl, "bogus", out, sizeof(out)) >> 8, 1);
out:
	if (bar != MAP_FAILED)
		munmap(bar, 1 << 20);
	munmap(mem, E2E_RAM);
	qp_close(&q);
	kill(pid, SIGTERM);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* Clean shutdown removes both sockets. */
	CHECK(access(sock, F_OK) < 0);
	CHECK(access(ctl, F_OK) < 0);
	{
		FILE *f = fopen(log, "r");
		bool said = false;

		while (f && fgets(out, sizeof(out), f))
			said |= strstr(out, "asks for ABI 1.0, which is not "
				       "served") != NULL;
		if (f)
			fclose(f);
		CHECK(said);
	}
	if (test_failed()) {
		FILE *f = fopen(log, "r");

		while (f && fgets(out, sizeof(out), f))
			fprintf(stderr, "# rnicsim log: %s", out);
		if (f)
			fclose(f);
	}
}

/*
 * The same binary with --abi2 (a no-op old scripts may still give): the
 * 2.0 signature, enable, a doorbell page.
 */
TEST(e2e_rnicsim_binary_abi2)
{
	char bin[4200], sock[300], ctl[300], ram[300], log[300], vec[8];
	char out[16384];
	const struct rnic_sig *sig;
	struct rnic_acqe2 *c;
	struct rnic_aq_query_obj qo;
	struct rnic_aq_alloc_db_page ap;
	struct rnic_rdma_caps *caps;
	struct qemu_peer q = { .sock = -1 };
	u8 *bar = MAP_FAILED, *mem = MAP_FAILED;
	unsigned int page_off, kickval;
	int fd, status;
	ssize_t n;
	pid_t pid;

	n = readlink("/proc/self/exe", bin, sizeof(bin) - 16);
	REQUIRE(n > 0);
	bin[n] = '\0';
	strcpy(strrchr(bin, '/'), "/rnicsim");
	if (access(bin, X_OK)) {
		test_fail(__FILE__, __LINE__, "%s not built", bin);
		return;
	}
	snprintf(sock, sizeof(sock), "%s/e2e2.sock", test_tmpdir());
	snprintf(ctl, sizeof(ctl), "%s/e2e2.ctl", test_tmpdir());
	snprintf(ram, sizeof(ram), "%s/e2e2-ram", test_tmpdir());
	snprintf(log, sizeof(log), "%s/e2e2.log", test_tmpdir());
	snprintf(vec, sizeof(vec), "%d", E2E_VEC);
	fd = open(ram, O_RDWR | O_CREAT | O_TRUNC, 0600);
	REQUIRE(fd >= 0 && ftruncate(fd, E2E_RAM) == 0);
	mem = mmap(NULL, E2E_RAM, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	REQUIRE(mem != MAP_FAILED);

	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		execl(bin, bin, "--socket", sock, "--ctl", ctl, "--guest-mem",
		      ram, "--guest-mem-size", "4M", "--vectors", vec,
		      "--log", log, "--abi2", (char *)NULL);
		_exit(127);
	}
	if (!wait_for(ctl, 5000)) {
		test_fail(__FILE__, __LINE__, "rnicsim did not start");
		goto out;
	}
	REQUIRE(qp_connect(&q, sock) == 0);
	if (qp_recv(&q, 3 + 2 * E2E_VEC, 2000) != 3 + 2 * E2E_VEC) {
		test_fail(__FILE__, __LINE__, "handshake: %d messages", q.nmsg);
		goto out;
	}
	bar = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED,
		   q.fd[2], 0);
	if (bar == MAP_FAILED) {
		test_fail(__FILE__, __LINE__, "mmap BAR2: %s", strerror(errno));
		goto out;
	}
	sig = (const void *)(bar + RNIC_SIG_OFF);
	CHECK_EQ(le16_to_cpu(sig->abi_major), RNIC_ABI2_MAJOR);
	CHECK_EQ(le16_to_cpu(sig->abi_compat), BIT(2));
	CHECK(le32_to_cpu(sig->caps) & RNIC_CAP_TRANSPORT);

	w32(bar, RNIC_REG_CTRL, RNIC_CTRL_RESET);
	kick(&q, RNIC_DB_VEC_CTRL);
	CHECK(status_is(bar, RNIC_STATUS_RESET_DONE, 2000));
	memset(mem, 0, E2E_RAM);
	program_queues(bar);
	w32(bar, RNIC_REG_CTRL, RNIC_CTRL_ENABLE |
	    FIELD_PREP(RNIC_CTRL_ABI, RNIC_ABI2_MAJOR));
	kick(&q, RNIC_DB_VEC_CTRL);
	CHECK(status_is(bar, RNIC_STATUS_ENABLED |
			FIELD_PREP(RNIC_STATUS_ABI, 2), 2000));

	/* QUERY_RDMA_CAPS and ALLOC_DB_PAGE */
	memset(&qo, 0, sizeof(qo));
	qo.hdr.opcode = RNIC_AQ_QUERY_RDMA_CAPS;
	qo.hdr.cmd_id = cpu_to_le16(1);
	qo.buf_addr = cpu_to_le64(0x20000);
	qo.buf_len = cpu_to_le32(sizeof(*caps));
	memcpy(mem + 0x10000, &qo, sizeof(qo));
	memset(&ap, 0, sizeof(ap));
	ap.hdr.opcode = RNIC_AQ_ALLOC_DB_PAGE;
	ap.hdr.cmd_id = cpu_to_le16(2);
	memcpy(mem + 0x10000 + RNIC_AQ_ENTRY_SIZE, &ap, sizeof(ap));
	w32(bar, RNIC_DB_SLOT_OFF(RNIC_DB_SLOT_ADMIN_SQ), 2);
	kick(&q, RNIC_DB_VEC_ADMIN);
	CHECK(irq(&q, 0, 2000));
	c = (struct rnic_acqe2 *)(mem + 0x11000);
	CHECK_EQ(c[0].status, RNIC_AQ_SUCCESS);
	CHECK_EQ(le32_to_cpu(c[0].resp.query.len), sizeof(*caps));
	caps = (struct rnic_rdma_caps *)(mem + 0x20000);
	CHECK_EQ(le16_to_cpu(caps->max_eq), E2E_VEC - 1);
	CHECK_EQ(c[1].status, RNIC_AQ_SUCCESS);
	page_off = le32_to_cpu(caps->db_base) +
		   (le32_to_cpu(c[1].resp.db_page.page) << caps->db_page_log2);
	kickval = le32_to_cpu(c[1].resp.db_page.kick);
	CHECK_EQ(FIELD_GET(RNIC_IVSHMEM_DB_PEER, kickval), RNIC_MODEL_PEER_ID);

	/* A kick entry naming no slot: the device reads it and counts it. */
	bar[page_off + 0x800] = 7;
	w32(bar, page_off + 0xc00, 1);
	kick(&q, FIELD_GET(RNIC_IVSHMEM_DB_VECTOR, kickval));
	{
		struct timespec ts = { 0, 1000000 };
		int ms = 2000;

		while (ms-- > 0 && r32(bar, page_off + 0xc40) != 1)
			nanosleep(&ts, NULL);
	}
	CHECK_EQ(r32(bar, page_off + 0xc40), 1);
	CHECK_EQ(run_ctl(bin, ctl, "counters", out, sizeof(out)), 0);
	CHECK(strstr(out, "rdma_kicks 1\n") != NULL);
	CHECK(strstr(out, "rdma_bad_kicks 1\n") != NULL);
out:
	if (bar != MAP_FAILED)
		munmap(bar, 1 << 20);
	munmap(mem, E2E_RAM);
	qp_close(&q);
	kill(pid, SIGTERM);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	if (test_failed()) {
		FILE *f = fopen(log, "r");

		while (f && fgets(out, sizeof(out), f))
			fprintf(stderr, "# rnicsim log: %s", out);
		if (f)
			fclose(f);
	}
}
