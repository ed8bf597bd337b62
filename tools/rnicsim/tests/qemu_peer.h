/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The QEMU side of the ivshmem protocol, for tests: connect to the
 * server socket and collect its messages and file descriptors.
 */
#ifndef RNICSIM_TEST_QEMU_PEER_H
#define RNICSIM_TEST_QEMU_PEER_H

#include <stdint.h>

#define QP_MAX_MSGS	160

struct qemu_peer {
	int sock;
	int nmsg;
	int64_t val[QP_MAX_MSGS];
	int fd[QP_MAX_MSGS];	/* -1 when the message had none */
};

/* Connect to @path; 0 or -errno. */
int qp_connect(struct qemu_peer *q, const char *path);
/*
 * Receive until @want messages arrived (or EOF / @timeout_ms). Returns
 * the number of messages received so far.
 */
int qp_recv(struct qemu_peer *q, int want, int timeout_ms);
void qp_close(struct qemu_peer *q);

#endif /* RNICSIM_TEST_QEMU_PEER_H */
