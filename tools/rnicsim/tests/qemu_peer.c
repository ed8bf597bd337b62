// SPDX-License-Identifier: GPL-2.0
/* A minimal ivshmem client acting as QEMU (see qemu_peer.h). */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "qemu_peer.h"

int qp_connect(struct qemu_peer *q, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int i;

	memset(q, 0, sizeof(*q));
	for (i = 0; i < QP_MAX_MSGS; i++)
		q->fd[i] = -1;
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	q->sock = socket(AF_UNIX, SOCK_STREAM, 0);
	if (q->sock < 0)
		return -errno;
	if (connect(q->sock, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(q->sock);
		q->sock = -1;
		return -errno;
	}
	return 0;
}

/*
 * Like QEMU, read exactly 8 bytes per message; a descriptor arrives with
 * the first byte of its message.
 */
int qp_recv(struct qemu_peer *q, int want, int timeout_ms)
{
	char cbuf[CMSG_SPACE(sizeof(int) * 4)];
	struct pollfd pfd = { .fd = q->sock, .events = POLLIN };
	struct cmsghdr *c;
	struct msghdr msg;
	struct iovec iov;
	uint8_t b[8];
	ssize_t n;
	int i, fd;

	while (q->nmsg < want && q->nmsg < QP_MAX_MSGS) {
		if (poll(&pfd, 1, timeout_ms) <= 0)
			break;
		memset(&msg, 0, sizeof(msg));
		iov.iov_base = b;
		iov.iov_len = sizeof(b);
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		msg.msg_control = cbuf;
		msg.msg_controllen = sizeof(cbuf);
		n = recvmsg(q->sock, &msg, MSG_WAITALL | MSG_CMSG_CLOEXEC);
		if (n != sizeof(b))
			break;
		fd = -1;
		for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
			if (c->cmsg_level == SOL_SOCKET &&
			    c->cmsg_type == SCM_RIGHTS)
				memcpy(&fd, CMSG_DATA(c), sizeof(int));
		q->val[q->nmsg] = 0;
		for (i = 7; i >= 0; i--)
			q->val[q->nmsg] = (int64_t)((uint64_t)q->val[q->nmsg]
						    << 8 | b[i]);
		q->fd[q->nmsg] = fd;
		q->nmsg++;
	}
	return q->nmsg;
}

void qp_close(struct qemu_peer *q)
{
	int i;

	for (i = 0; i < q->nmsg; i++)
		if (q->fd[i] >= 0)
			close(q->fd[i]);
	if (q->sock >= 0)
		close(q->sock);
	q->sock = -1;
	q->nmsg = 0;
}
