// SPDX-License-Identifier: GPL-2.0
/*
 * ivshmem server (see ivshmem.h).
 *
 * Every message is an 8-byte little-endian signed value, optionally with
 * one file descriptor (SCM_RIGHTS). On connect the guest is sent, in this
 * order: the protocol version (0); its peer id; -1 with the shared-memory
 * fd; the model's id once per vector, each with a model eventfd (a
 * connect notification for peer 0); and last its own id once per vector,
 * each with the eventfd it will be interrupted through. The connection
 * then carries nothing until QEMU closes it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "platform/ivshmem.h"

#define IVS_PROTOCOL_VERSION	0

static int send_msg(int sock, int64_t val, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct msghdr msg = { 0 };
	struct cmsghdr *cmsg;
	uint8_t le[8];
	struct iovec iov;
	ssize_t n;
	int i;

	for (i = 0; i < 8; i++)
		le[i] = (uint8_t)((uint64_t)val >> (8 * i));
	iov.iov_base = le;
	iov.iov_len = sizeof(le);
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (fd >= 0) {
		memset(cbuf, 0, sizeof(cbuf));
		msg.msg_control = cbuf;
		msg.msg_controllen = sizeof(cbuf);
		cmsg = CMSG_FIRSTHDR(&msg);
		cmsg->cmsg_level = SOL_SOCKET;
		cmsg->cmsg_type = SCM_RIGHTS;
		cmsg->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
	}
	do {
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == sizeof(le) ? 0 : -EIO;
}

static void close_guest_efds(struct ivs *s)
{
	unsigned int v;

	for (v = 0; v < IVS_MAX_VECTORS; v++) {
		if (s->guest_efd[v] >= 0)
			close(s->guest_efd[v]);
		s->guest_efd[v] = -1;
	}
}

int ivs_init(struct ivs *s, const char *path, size_t shm_size,
	     unsigned int nvec, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	unsigned int v;
	int ret;

	memset(s, 0, sizeof(*s));
	s->listen_fd = s->conn_fd = s->shm_fd = -1;
	for (v = 0; v < IVS_MAX_VECTORS; v++)
		s->model_efd[v] = s->guest_efd[v] = -1;
	if (!nvec || nvec > IVS_MAX_VECTORS) {
		snprintf(err, errlen, "vectors must be 1..%d", IVS_MAX_VECTORS);
		return -EINVAL;
	}
	if (shm_size < 4096 || (shm_size & (shm_size - 1))) {
		snprintf(err, errlen,
			 "shared memory size %zu is not a power of two >= 4096",
			 shm_size);
		return -EINVAL;
	}
	if (path && strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "socket path too long: %s", path);
		return -ENAMETOOLONG;
	}
	s->nvec = nvec;
	s->shm_size = shm_size;
	s->shm_fd = memfd_create("rnicsim-bar2", MFD_CLOEXEC);
	if (s->shm_fd < 0 || ftruncate(s->shm_fd, (off_t)shm_size) < 0) {
		ret = -errno;
		snprintf(err, errlen, "shared memory: %s", strerror(errno));
		goto fail;
	}
	s->shm = mmap(NULL, shm_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		      s->shm_fd, 0);
	if (s->shm == MAP_FAILED) {
		s->shm = NULL;
		ret = -errno;
		snprintf(err, errlen, "mmap shared memory: %s",
			 strerror(errno));
		goto fail;
	}
	for (v = 0; v < nvec; v++) {
		s->model_efd[v] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (s->model_efd[v] < 0) {
			ret = -errno;
			snprintf(err, errlen, "eventfd: %s", strerror(errno));
			goto fail;
		}
	}
	if (!path)
		return 0;	/* tests that drive the fds directly */

	s->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
			      SOCK_CLOEXEC, 0);
	if (s->listen_fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "socket: %s", strerror(errno));
		goto fail;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	/* Replace a stale socket, but never some other kind of file. */
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			ret = -EEXIST;
			snprintf(err, errlen, "%s exists and is not a socket",
				 path);
			goto fail;
		}
		unlink(path);
	}
	if (bind(s->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(s->listen_fd, 4) < 0) {
		ret = -errno;
		snprintf(err, errlen, "listen on %s: %s", path,
			 strerror(errno));
		goto fail;
	}
	s->path = strdup(path);
	return 0;
fail:
	ivs_fini(s);
	return ret;
}

void ivs_disconnect(struct ivs *s)
{
	if (s->conn_fd < 0)
		return;
	close(s->conn_fd);
	s->conn_fd = -1;
	close_guest_efds(s);
	s->disconnects++;
}

void ivs_fini(struct ivs *s)
{
	unsigned int v;

	ivs_disconnect(s);
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	s->listen_fd = -1;
	if (s->path) {
		unlink(s->path);
		free(s->path);
		s->path = NULL;
	}
	for (v = 0; v < IVS_MAX_VECTORS; v++) {
		if (s->model_efd[v] >= 0)
			close(s->model_efd[v]);
		s->model_efd[v] = -1;
	}
	if (s->shm)
		munmap(s->shm, s->shm_size);
	s->shm = NULL;
	if (s->shm_fd >= 0)
		close(s->shm_fd);
	s->shm_fd = -1;
}

static int handshake(struct ivs *s, int c)
{
	unsigned int v;
	int ret;

	ret = send_msg(c, IVS_PROTOCOL_VERSION, -1);
	if (!ret)
		ret = send_msg(c, IVS_GUEST_ID, -1);
	if (!ret)
		ret = send_msg(c, -1, s->shm_fd);
	for (v = 0; !ret && v < s->nvec; v++)
		ret = send_msg(c, IVS_MODEL_ID, s->model_efd[v]);
	for (v = 0; !ret && v < s->nvec; v++)
		ret = send_msg(c, IVS_GUEST_ID, s->guest_efd[v]);
	return ret;
}

int ivs_accept(struct ivs *s)
{
	uint64_t junk;
	unsigned int v;
	int c, ret;

	c = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (c < 0)
		return (errno == EAGAIN || errno == EINTR) ? 0 : -errno;
	if (s->conn_fd >= 0) {
		/* One guest per NIC: a second QEMU gets a closed socket. */
		close(c);
		s->rejected++;
		return 0;
	}
	for (v = 0; v < s->nvec; v++) {
		s->guest_efd[v] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (s->guest_efd[v] < 0) {
			ret = -errno;
			goto fail;
		}
		/* Kicks left over from the previous guest mean nothing. */
		while (read(s->model_efd[v], &junk, sizeof(junk)) > 0)
			;
	}
	s->conn_fd = c;
	if (s->on_connect)
		s->on_connect(s->ctx);
	ret = handshake(s, c);
	if (ret) {
		s->conn_fd = -1;
		goto fail;
	}
	s->connects++;
	return 1;
fail:
	close(c);
	close_guest_efds(s);
	s->handshake_errors++;
	return ret == -ENOMEM || ret == -EMFILE || ret == -ENFILE ? ret : 0;
}

int ivs_conn_event(struct ivs *s)
{
	char buf[64];
	ssize_t n;

	if (s->conn_fd < 0)
		return 0;
	/* Whatever QEMU might send is ignored; only EOF matters. */
	for (;;) {
		n = recv(s->conn_fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n > 0)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		break;
	}
	ivs_disconnect(s);
	return 1;
}

uint64_t ivs_doorbell_read(struct ivs *s, unsigned int v)
{
	uint64_t cnt;

	if (v >= s->nvec ||
	    read(s->model_efd[v], &cnt, sizeof(cnt)) != sizeof(cnt))
		return 0;
	s->doorbells[v] += cnt;
	return cnt;
}

int ivs_raise(struct ivs *s, unsigned int v)
{
	uint64_t one = 1;

	if (v >= s->nvec)
		return -EINVAL;
	if (s->guest_efd[v] < 0) {
		s->irqs_no_guest++;
		return -ENOTCONN;
	}
	/* Fails only if the counter would overflow: the IRQ is pending. */
	if (write(s->guest_efd[v], &one, sizeof(one)) < 0 && errno != EAGAIN)
		return -errno;
	s->irqs[v]++;
	return 0;
}
