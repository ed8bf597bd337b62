// SPDX-License-Identifier: GPL-2.0
/*
 * Control socket server and client (see ctl.h). Commands are parsed
 * here and carried out through ctl_ops, so the protocol is testable
 * without the rest of the simulator.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "platform/ctl.h"

#define CTL_HELP "commands: fault SPEC | fault | fault clear | link down|up" \
		 " | rx hold|release | tx hold|release | aq hold|release" \
		 " | fatal [REASON] | arm-peek on|off | counters" \
		 " | pcap start FILE | pcap stop | quit"

static void reply(ctl_out_fn out, void *octx, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void reply(ctl_out_fn out, void *octx, const char *fmt, ...)
{
	char line[CTL_LINE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	out(octx, line);
}

struct data_filter {
	ctl_out_fn out;
	void *octx;
};

/* Keep data lines from being mistaken for the final status line. */
static void data_line(void *p, const char *line)
{
	struct data_filter *df = p;

	if (!strncmp(line, "ok", 2) || !strncmp(line, "error", 5))
		reply(df->out, df->octx, "_%s", line);
	else
		df->out(df->octx, line);
}

/* Split off the first word of @s; returns the rest (may be ""). */
static char *word(char *s, char **rest)
{
	char *w;

	while (*s == ' ' || *s == '\t')
		s++;
	w = s;
	while (*s && *s != ' ' && *s != '\t')
		s++;
	if (*s)
		*s++ = '\0';
	while (*s == ' ' || *s == '\t')
		s++;
	*rest = s;
	return w;
}

/* A fatal reason: decimal or 0x hex, 1..UINT32_MAX, nothing after it */
static int parse_reason(const char *s, uint32_t *reason)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		if (!isxdigit((unsigned char)s[2]))	/* no sign, no space */
			return -1;
		v = strtoull(s + 2, &end, 16);
	} else {
		v = strtoull(s, &end, 10);
	}
	if (errno || *end || !v || v > UINT32_MAX)
		return -1;
	*reason = (uint32_t)v;
	return 0;
}

void ctl_execute(struct ctl *c, const char *line, ctl_out_fn out, void *octx)
{
	const struct ctl_ops *ops = c->ops;
	struct data_filter df = { out, octx };
	char buf[CTL_LINE_MAX], msg[512], *cmd, *rest, *arg;
	size_t n;

	snprintf(buf, sizeof(buf), "%s", line);
	n = strlen(buf);
	while (n && (buf[n - 1] == '\r' || buf[n - 1] == '\n' ||
		     buf[n - 1] == ' '))
		buf[--n] = '\0';
	cmd = word(buf, &rest);
	c->commands++;
	msg[0] = '\0';

	if (!strcmp(cmd, "fault")) {
		if (!*rest) {
			ops->fault_show(c->ctx, msg, sizeof(msg));
			reply(out, octx, "ok %s", msg);
		} else if (!strcmp(rest, "clear")) {
			ops->fault_clear(c->ctx);
			reply(out, octx, "ok");
		} else if (ops->fault_set(c->ctx, rest, msg, sizeof(msg))) {
			goto error;
		} else {
			reply(out, octx, "ok %s", msg);
		}
	} else if (!strcmp(cmd, "link")) {
		if (strcmp(rest, "down") && strcmp(rest, "up")) {
			snprintf(msg, sizeof(msg), "usage: link down|up");
			goto error;
		}
		ops->link(c->ctx, !strcmp(rest, "up"));
		reply(out, octx, "ok link %s", rest);
	} else if (!strcmp(cmd, "rx") || !strcmp(cmd, "tx") ||
		   !strcmp(cmd, "aq")) {
		int (*fn)(void *ctx, bool hold, char *msg, size_t len) =
			cmd[0] == 't' ? ops->tx_hold :
			cmd[0] == 'a' ? ops->aq_hold : ops->rx_hold;

		if (strcmp(rest, "hold") && strcmp(rest, "release")) {
			snprintf(msg, sizeof(msg), "usage: %s hold|release",
				 cmd);
			goto error;
		}
		if (!fn) {
			snprintf(msg, sizeof(msg), "%s hold is not available",
				 cmd);
			goto error;
		}
		if (fn(c->ctx, !strcmp(rest, "hold"), msg, sizeof(msg)))
			goto error;
		reply(out, octx, "ok %s %s", cmd, rest);
	} else if (!strcmp(cmd, "fatal")) {
		uint32_t reason = 0;	/* the device's default */

		if (*rest && parse_reason(rest, &reason)) {
			snprintf(msg, sizeof(msg),
				 "usage: fatal [REASON] (REASON 1..4294967295)");
			goto error;
		}
		if (!ops->fatal) {
			snprintf(msg, sizeof(msg), "fatal is not available");
			goto error;
		}
		if (ops->fatal(c->ctx, &reason, msg, sizeof(msg)))
			goto error;
		reply(out, octx, "ok fatal %u", reason);
	} else if (!strcmp(cmd, "arm-peek")) {
		if (strcmp(rest, "on") && strcmp(rest, "off")) {
			snprintf(msg, sizeof(msg), "usage: arm-peek on|off");
			goto error;
		}
		if (!ops->arm_peek) {
			snprintf(msg, sizeof(msg), "arm-peek is not available");
			goto error;
		}
		if (ops->arm_peek(c->ctx, !strcmp(rest, "on"), msg,
				  sizeof(msg)))
			goto error;
		reply(out, octx, "ok arm-peek %s", rest);
	} else if (!strcmp(cmd, "counters") && !*rest) {
		ops->counters(c->ctx, data_line, &df);
		reply(out, octx, "ok");
	} else if (!strcmp(cmd, "pcap")) {
		arg = word(rest, &rest);
		if (!strcmp(arg, "start") && *rest) {
			if (ops->pcap_start(c->ctx, rest, msg, sizeof(msg)))
				goto error;
			reply(out, octx, "ok pcap %s", rest);
		} else if (!strcmp(arg, "stop") && !*rest) {
			ops->pcap_stop(c->ctx);
			reply(out, octx, "ok");
		} else {
			snprintf(msg, sizeof(msg), "usage: pcap start FILE|stop");
			goto error;
		}
	} else if (!strcmp(cmd, "help")) {
		reply(out, octx, "ok %s", CTL_HELP);
	} else if (!strcmp(cmd, "quit") && !*rest) {
		reply(out, octx, "ok bye");
		ops->quit(c->ctx);
	} else if (!*cmd) {
		snprintf(msg, sizeof(msg), "empty command");
		goto error;
	} else {
		snprintf(msg, sizeof(msg), "unknown command '%.64s' (%s)", cmd,
			 CTL_HELP);
		goto error;
	}
	return;
error:
	c->errors++;
	reply(out, octx, "error %s", msg[0] ? msg : "failed");
}

int ctl_init(struct ctl *c, const char *path, const struct ctl_ops *ops,
	     void *ctx, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int i, ret;

	memset(c, 0, sizeof(*c));
	c->ops = ops;
	c->ctx = ctx;
	c->listen_fd = -1;
	for (i = 0; i < CTL_MAX_CLIENTS; i++)
		c->client[i].fd = -1;
	if (!path)
		return 0;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "control socket path too long: %s", path);
		return -ENAMETOOLONG;
	}
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, errlen, "%s exists and is not a socket",
				 path);
			return -EEXIST;
		}
		unlink(path);
	}
	c->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
			      SOCK_CLOEXEC, 0);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (c->listen_fd < 0 ||
	    bind(c->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(c->listen_fd, 8) < 0) {
		ret = -errno;
		snprintf(err, errlen, "control socket %s: %s", path,
			 strerror(errno));
		if (c->listen_fd >= 0)
			close(c->listen_fd);
		c->listen_fd = -1;
		return ret;
	}
	c->path = strdup(path);
	return 0;
}

void ctl_fini(struct ctl *c)
{
	int i;

	for (i = 0; i < CTL_MAX_CLIENTS; i++) {
		if (c->client[i].fd >= 0)
			close(c->client[i].fd);
		c->client[i].fd = -1;
	}
	if (c->listen_fd >= 0)
		close(c->listen_fd);
	c->listen_fd = -1;
	if (c->path) {
		unlink(c->path);
		free(c->path);
		c->path = NULL;
	}
}

int ctl_accept(struct ctl *c)
{
	static const char busy[] = "error too many control clients\n";
	int fd, i;

	fd = accept4(c->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return -1;
	for (i = 0; i < CTL_MAX_CLIENTS; i++) {
		if (c->client[i].fd < 0) {
			c->client[i].fd = fd;
			c->client[i].used = 0;
			return fd;
		}
	}
	if (send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL) < 0)
		(void)0;	/* it is being closed anyway */
	close(fd);
	return -1;
}

struct client_out {
	int fd;
	bool failed;
};

static void client_write(void *p, const char *line)
{
	struct client_out *co = p;
	char buf[CTL_LINE_MAX + 1];
	size_t len, off = 0;
	ssize_t n;

	if (co->failed)
		return;
	len = (size_t)snprintf(buf, sizeof(buf), "%s\n", line);
	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	/*
	 * Replies are small and the client is waiting for them; a client
	 * that lets its socket fill up is dropped rather than waited for.
	 */
	while (off < len) {
		n = send(co->fd, buf + off, len - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			co->failed = true;
			return;
		}
		off += (size_t)n;
	}
}

static void drop_client(struct ctl_client *cl)
{
	close(cl->fd);
	cl->fd = -1;
	cl->used = 0;
}

bool ctl_client_event(struct ctl *c, int fd)
{
	struct client_out co = { .fd = fd };
	struct ctl_client *cl = NULL;
	char *nl, *start;
	ssize_t n;
	int i;

	for (i = 0; i < CTL_MAX_CLIENTS; i++)
		if (c->client[i].fd == fd)
			cl = &c->client[i];
	if (!cl)
		return false;
	for (;;) {
		n = recv(fd, cl->buf + cl->used, sizeof(cl->buf) - 1 - cl->used,
			 MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return true;
		if (n <= 0) {
			drop_client(cl);
			return false;
		}
		cl->used += (size_t)n;
		cl->buf[cl->used] = '\0';
		start = cl->buf;
		while ((nl = strchr(start, '\n'))) {
			*nl = '\0';
			ctl_execute(c, start, client_write, &co);
			start = nl + 1;
			/* quit may have torn everything down */
			if (cl->fd < 0)
				return false;
		}
		cl->used -= (size_t)(start - cl->buf);
		memmove(cl->buf, start, cl->used);
		if (co.failed || cl->used == sizeof(cl->buf) - 1) {
			/* broken pipe, or a line longer than we accept */
			if (!co.failed)
				client_write(&co, "error line too long");
			drop_client(cl);
			return false;
		}
	}
}

static bool is_final(const char *line)
{
	return !strcmp(line, "ok") || !strncmp(line, "ok ", 3) ||
	       !strncmp(line, "error", 5);
}

int ctl_run_client(const char *path, const char *cmd)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[CTL_LINE_MAX * 4], *nl, *start;
	size_t used = 0;
	ssize_t n;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path) || strchr(cmd, '\n')) {
		fprintf(stderr, "rnicsim: bad control socket path or command\n");
		return 2;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "rnicsim: cannot connect to %s: %s\n", path,
			strerror(errno));
		return 2;
	}
	if (send(fd, cmd, strlen(cmd), MSG_NOSIGNAL) < 0 ||
	    send(fd, "\n", 1, MSG_NOSIGNAL) < 0) {
		fprintf(stderr, "rnicsim: send to %s: %s\n", path,
			strerror(errno));
		close(fd);
		return 2;
	}
	for (;;) {
		n = recv(fd, buf + used, sizeof(buf) - 1 - used, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		used += (size_t)n;
		buf[used] = '\0';
		start = buf;
		while ((nl = strchr(start, '\n'))) {
			*nl = '\0';
			printf("%s\n", start);
			if (is_final(start)) {
				close(fd);
				return strncmp(start, "ok", 2) ? 1 : 0;
			}
			start = nl + 1;
		}
		used -= (size_t)(start - buf);
		memmove(buf, start, used);
		if (used == sizeof(buf) - 1)
			used = 0;	/* an absurd line: drop it */
	}
	close(fd);
	fprintf(stderr, "rnicsim: %s closed the connection without a reply\n",
		path);
	return 2;
}
