// SPDX-License-Identifier: GPL-2.0
/*
 * The ivshmem server, checked from QEMU's side of the socket: message
 * order and values, the descriptors (shared memory, doorbell and
 * interrupt eventfds) and that they are wired the right way round.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "platform/ivshmem.h"
#include "qemu_peer.h"
#include "test.h"

#define NVEC	4

static void sock_path(char *buf, size_t n, const char *name)
{
	snprintf(buf, n, "%s/%s", test_tmpdir(), name);
}

/* Message i of the expected handshake: value and whether an fd comes. */
static void check_handshake(struct qemu_peer *q, unsigned int nvec)
{
	unsigned int v;

	REQUIRE(q->nmsg == 3 + 2 * (int)nvec);
	CHECK_EQ(q->val[0], 0);			/* protocol version */
	CHECK_EQ(q->fd[0], -1);
	CHECK_EQ(q->val[1], IVS_GUEST_ID);	/* the guest's id */
	CHECK_EQ(q->fd[1], -1);
	CHECK_EQ(q->val[2], -1);		/* shared memory */
	CHECK(q->fd[2] >= 0);
	for (v = 0; v < nvec; v++) {
		CHECK_EQ(q->val[3 + v], IVS_MODEL_ID);
		CHECK(q->fd[3 + v] >= 0);
		CHECK_EQ(q->val[3 + nvec + v], IVS_GUEST_ID);
		CHECK(q->fd[3 + nvec + v] >= 0);
	}
}

TEST(ivshmem_handshake)
{
	uint64_t one = 1, cnt = 0;
	struct qemu_peer q;
	char path[256], err[256];
	struct stat st;
	struct ivs s;
	uint8_t *shm;
	unsigned int v;

	sock_path(path, sizeof(path), "ivs-hs.sock");
	REQUIRE(ivs_init(&s, path, 1 << 20, NVEC, err, sizeof(err)) == 0);
	REQUIRE(qp_connect(&q, path) == 0);
	CHECK_EQ(ivs_accept(&s), 1);
	CHECK_EQ(qp_recv(&q, 100, 200), 3 + 2 * NVEC);
	check_handshake(&q, NVEC);
	if (test_failed())
		goto out;

	/* BAR2: the shared memory, its size a power of two. */
	REQUIRE(fstat(q.fd[2], &st) == 0);
	CHECK_EQ(st.st_size, 1 << 20);
	shm = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED,
		   q.fd[2], 0);
	REQUIRE(shm != MAP_FAILED);
	memcpy((uint8_t *)s.shm + 4096, "RNIC", 4);
	CHECK_MEM_EQ(shm + 4096, "RNIC", 4);
	shm[8191] = 0x42;
	CHECK_EQ(((uint8_t *)s.shm)[8191], 0x42);
	munmap(shm, 1 << 20);

	/* Doorbell (0 << 16) | 2 makes QEMU write model eventfd 2. */
	CHECK(write(q.fd[3 + 2], &one, sizeof(one)) == sizeof(one));
	for (v = 0; v < NVEC; v++)
		CHECK_EQ(ivs_doorbell_read(&s, v), v == 2);
	CHECK_EQ(s.doorbells[2], 1);

	/* Raising vector 3 signals the guest's eventfd 3 only. */
	CHECK_EQ(ivs_raise(&s, 3), 0);
	CHECK(read(q.fd[3 + NVEC + 3], &cnt, sizeof(cnt)) == sizeof(cnt));
	CHECK_EQ(cnt, 1);
	CHECK(read(q.fd[3 + NVEC + 1], &cnt, sizeof(cnt)) < 0);
	CHECK_EQ(ivs_raise(&s, NVEC), -EINVAL);
	CHECK_EQ(s.irqs[3], 1);

	/* QEMU exits: the server notices and can take the next guest. */
	qp_close(&q);
	CHECK_EQ(ivs_conn_event(&s), 1);
	CHECK_EQ(s.conn_fd, -1);
	CHECK_EQ(ivs_raise(&s, 0), -ENOTCONN);
	REQUIRE(qp_connect(&q, path) == 0);
	CHECK_EQ(ivs_accept(&s), 1);
	CHECK_EQ(qp_recv(&q, 100, 200), 3 + 2 * NVEC);
	check_handshake(&q, NVEC);
	CHECK_EQ(s.connects, 2);
	CHECK_EQ(s.disconnects, 1);
out:
	qp_close(&q);
	ivs_fini(&s);
	/* The socket file is removed on shutdown. */
	CHECK(access(path, F_OK) < 0);
}

TEST(ivshmem_one_guest_at_a_time)
{
	struct qemu_peer a, b;
	char path[256], err[256];
	struct ivs s;

	sock_path(path, sizeof(path), "ivs-two.sock");
	REQUIRE(ivs_init(&s, path, 4096, 1, err, sizeof(err)) == 0);
	REQUIRE(qp_connect(&a, path) == 0);
	CHECK_EQ(ivs_accept(&s), 1);
	REQUIRE(qp_connect(&b, path) == 0);
	CHECK_EQ(ivs_accept(&s), 0);
	CHECK_EQ(s.rejected, 1);
	/* The second one sees the connection closed, no messages. */
	CHECK_EQ(qp_recv(&b, 1, 200), 0);
	CHECK_EQ(qp_recv(&a, 100, 200), 5);
	qp_close(&a);
	qp_close(&b);
	ivs_fini(&s);
}

TEST(ivshmem_stale_doorbells_dropped)
{
	uint64_t one = 1;
	struct qemu_peer q;
	char path[256], err[256];
	struct ivs s;

	sock_path(path, sizeof(path), "ivs-stale.sock");
	REQUIRE(ivs_init(&s, path, 4096, 2, err, sizeof(err)) == 0);
	REQUIRE(qp_connect(&q, path) == 0);
	CHECK_EQ(ivs_accept(&s), 1);
	qp_recv(&q, 100, 200);
	REQUIRE(q.nmsg == 7);
	CHECK(write(q.fd[3], &one, sizeof(one)) == sizeof(one));
	qp_close(&q);
	CHECK_EQ(ivs_conn_event(&s), 1);
	/* A kick from the old guest must not reach the new one's device. */
	REQUIRE(qp_connect(&q, path) == 0);
	CHECK_EQ(ivs_accept(&s), 1);
	CHECK_EQ(ivs_doorbell_read(&s, 0), 0);
	qp_close(&q);
	ivs_fini(&s);
}

TEST(ivshmem_init_errors)
{
	char path[256], err[256];
	struct ivs s;
	FILE *f;

	sock_path(path, sizeof(path), "ivs-err.sock");
	CHECK_EQ(ivs_init(&s, path, 3 << 20, 1, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "power of two") != NULL);
	CHECK_EQ(ivs_init(&s, path, 4096, 0, err, sizeof(err)), -EINVAL);
	CHECK_EQ(ivs_init(&s, path, 4096, IVS_MAX_VECTORS + 1, err,
			  sizeof(err)), -EINVAL);
	/* Never unlink something that is not a socket. */
	sock_path(path, sizeof(path), "not-a-socket");
	f = fopen(path, "w");
	REQUIRE(f != NULL);
	fclose(f);
	CHECK_EQ(ivs_init(&s, path, 4096, 1, err, sizeof(err)), -EEXIST);
	CHECK(access(path, F_OK) == 0);
	/* A stale socket from a killed run is replaced. */
	sock_path(path, sizeof(path), "stale.sock");
	REQUIRE(ivs_init(&s, path, 4096, 1, err, sizeof(err)) == 0);
	free(s.path);
	s.path = NULL;		/* "crash": leave the socket file behind */
	ivs_fini(&s);
	CHECK(access(path, F_OK) == 0);
	CHECK_EQ(ivs_init(&s, path, 4096, 1, err, sizeof(err)), 0);
	ivs_fini(&s);
}
