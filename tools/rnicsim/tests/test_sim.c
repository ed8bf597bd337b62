// SPDX-License-Identifier: GPL-2.0
/*
 * The event loop end to end with a fake device: QEMU connects and gets
 * the handshake, a doorbell eventfd reaches the device's doorbell, a
 * raised interrupt reaches the guest's eventfd, frames cross the wire
 * both ways through fault injection and pcap, the control socket works
 * while all this runs, and a disconnect resets the device.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "frames.h"
#include "pcapread.h"
#include "pkt/pkt.h"
#include "qemu_peer.h"
#include "platform/sim.h"
#include "test.h"

struct fake_dev {
	int doorbells[IVS_MAX_VECTORS];
	int resets, links, rx;
	bool link;
	uint8_t last_rx[2048];
	size_t last_rx_len;
	uint64_t tick_at;
	int ticks;
	int tx_holds;		/* tx hold calls that reached it */
	bool tx_hold, tx_refuse;
	int aq_holds, fatals;	/* aq hold and fatal calls that reached it */
	bool aq_hold, aq_refuse;
	int fatal_ret;		/* what fatal returns */
	uint32_t fatal_reason;	/* the last one asked for (0: default) */
};

static void fd_doorbell(void *d, unsigned int v)
{
	struct fake_dev *f = d;

	if (v < IVS_MAX_VECTORS)
		f->doorbells[v]++;
}

static void fd_wire_rx(void *d, const uint8_t *fr, size_t len)
{
	struct fake_dev *f = d;

	f->rx++;
	f->last_rx_len = len;
	memcpy(f->last_rx, fr, len < sizeof(f->last_rx) ? len :
	       sizeof(f->last_rx));
}

static void fd_set_link(void *d, bool up)
{
	struct fake_dev *f = d;

	f->links++;
	f->link = up;
}

static int fd_tx_hold(void *d, bool hold)
{
	struct fake_dev *f = d;

	f->tx_holds++;
	if (f->tx_refuse)
		return -EOPNOTSUPP;
	f->tx_hold = hold;
	return 0;
}

static int fd_aq_hold(void *d, bool hold)
{
	struct fake_dev *f = d;

	f->aq_holds++;
	if (f->aq_refuse)
		return -EOPNOTSUPP;
	f->aq_hold = hold;
	return 0;
}

static int fd_fatal(void *d, uint32_t *reason)
{
	struct fake_dev *f = d;

	f->fatals++;
	f->fatal_reason = *reason;
	if (f->fatal_ret)
		return f->fatal_ret;
	if (!*reason)
		*reason = 6;	/* as the device's default */
	return 0;
}

static uint64_t fd_tick(void *d, uint64_t now)
{
	struct fake_dev *f = d;

	f->ticks++;
	(void)now;
	return f->tick_at;
}

static void fd_reset(void *d)
{
	struct fake_dev *f = d;

	f->resets++;
}

static void fd_dump(void *d, void (*out)(void *, const char *), void *ctx)
{
	(void)d;
	out(ctx, "dev_fake_counter 7");
	out(ctx, "ok_looking_name 1");	/* must not end the reply */
}

static const struct sim_dev_ops fake_ops = {
	.doorbell = fd_doorbell,
	.wire_rx = fd_wire_rx,
	.set_link = fd_set_link,
	.tx_hold = fd_tx_hold,
	.aq_hold = fd_aq_hold,
	.fatal = fd_fatal,
	.tick = fd_tick,
	.reset = fd_reset,
	.dump_counters = fd_dump,
};

static void spin(struct sim *s, int n)
{
	while (n--)
		sim_run_once(s, 10);
}

static int ctl_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	if (strlen(path) >= sizeof(sa.sun_path))
		return -1;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Send one command, run the loop, collect the whole reply. */
static void ctl_cmd(struct sim *s, int fd, const char *cmd, char *reply,
		    size_t size)
{
	size_t used = 0;
	ssize_t n;
	int i;
	char *last;

	reply[0] = '\0';
	if (send(fd, cmd, strlen(cmd), 0) < 0 || send(fd, "\n", 1, 0) < 0)
		return;
	for (i = 0; i < 100; i++) {
		spin(s, 1);
		n = recv(fd, reply + used, size - 1 - used, MSG_DONTWAIT);
		if (n > 0)
			used += (size_t)n;
		reply[used] = '\0';
		if (used && reply[used - 1] == '\n') {
			reply[used - 1] = '\0';
			last = strrchr(reply, '\n');
			last = last ? last + 1 : reply;
			reply[used - 1] = '\n';
			if (!strncmp(last, "ok", 2) ||
			    !strncmp(last, "error", 5))
				return;
		}
	}
}

TEST(sim_guest_doorbell_irq_and_reset)
{
	static struct fake_dev dev;
	uint64_t one = 1, cnt = 0;
	struct sim_opts o;
	struct qemu_peer q;
	char err[256], sock[256];
	static struct sim s;
	char *argv[] = { "rnicsim", "--socket", sock, NULL };
	int v;

	memset(&dev, 0, sizeof(dev));
	snprintf(sock, sizeof(sock), "%s/sim.sock", test_tmpdir());
	REQUIRE(opts_parse(&o, 3, argv, err, sizeof(err)) == 0);
	REQUIRE(sim_init(&s, &o, err, sizeof(err)) == 0);
	sim_attach_dev(&s, &fake_ops, &dev);
	CHECK_EQ(dev.links, 1);
	CHECK(!dev.link);	/* no tap: no carrier */

	REQUIRE(qp_connect(&q, sock) == 0);
	spin(&s, 2);
	CHECK_EQ(dev.resets, 1);
	CHECK_EQ(qp_recv(&q, 100, 500), 3 + 2 * 8);
	REQUIRE(q.nmsg == 19);

	/* The guest's Doorbell write (0 << 16) | 5 reaches the device. */
	CHECK(write(q.fd[3 + 5], &one, sizeof(one)) == sizeof(one));
	spin(&s, 2);
	for (v = 0; v < 8; v++)
		CHECK_EQ(dev.doorbells[v], v == 5);
	CHECK(dev.ticks >= 2);	/* ticked after the activity */

	/* plat_raise_irq(1) signals the guest's vector-1 eventfd. */
	sim_raise_irq(&s, 1);
	CHECK(read(q.fd[3 + 8 + 1], &cnt, sizeof(cnt)) == sizeof(cnt));
	CHECK_EQ(cnt, 1);

	/* QEMU goes away: the device is reset, the next guest is served. */
	qp_close(&q);
	spin(&s, 2);
	CHECK_EQ(dev.resets, 2);
	CHECK_EQ(s.ivs.conn_fd, -1);
	REQUIRE(qp_connect(&q, sock) == 0);
	spin(&s, 2);
	CHECK_EQ(qp_recv(&q, 100, 500), 19);
	CHECK_EQ(dev.resets, 3);
	qp_close(&q);
	sim_fini(&s);
	CHECK(access(sock, F_OK) < 0);
}

TEST(sim_wire_faults_pcap_and_ctl)
{
	static struct fake_dev dev;
	static struct sim s;
	char err[256], sock[256], ctl[256], pcap[256], reply[8192];
	uint8_t fr[256], rb[2048];
	struct pcapread_frame pf;
	struct pcapread *pr;
	struct sim_opts o;
	struct pkt_info info;
	int sv[2], c, i, n;
	size_t len;
	char *argv[] = { "rnicsim", "--socket", sock, "--ctl", ctl,
			 "--pcap", pcap, "--seed", "5", NULL };

	memset(&dev, 0, sizeof(dev));
	snprintf(sock, sizeof(sock), "%s/w.sock", test_tmpdir());
	snprintf(ctl, sizeof(ctl), "%s/w.ctl", test_tmpdir());
	snprintf(pcap, sizeof(pcap), "%s/w.pcap", test_tmpdir());
	REQUIRE(opts_parse(&o, 9, argv, err, sizeof(err)) == 0);
	REQUIRE(sim_init(&s, &o, err, sizeof(err)) == 0);
	sim_attach_dev(&s, &fake_ops, &dev);
	REQUIRE(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, sv) == 0);
	REQUIRE(sim_attach_wire_fd(&s, sv[0]) == 0);
	CHECK(dev.link);

	/* TX: device -> wire. */
	len = tf_roce(fr, TF_V2_IPV4, 100, -1, PKT_ROCE_V2_PORT);
	CHECK_EQ(sim_wire_tx(&s, fr, len), 0);
	CHECK_EQ(recv(sv[1], rb, sizeof(rb), 0), (ssize_t)len);
	CHECK_MEM_EQ(rb, fr, len);
	CHECK_EQ(sim_wire_tx(&s, fr, 3), -EINVAL);

	/* RX: wire -> device. */
	CHECK_EQ(send(sv[1], fr, len, 0), (ssize_t)len);
	spin(&s, 2);
	CHECK_EQ(dev.rx, 1);
	CHECK_EQ(dev.last_rx_len, len);

	/* Faults set over the control socket while traffic runs. */
	c = ctl_connect(ctl);
	REQUIRE(c >= 0);
	ctl_cmd(&s, c, "fault rx.corrupt=1,tx.drop=2", reply, sizeof(reply));
	CHECK(!strncmp(reply, "ok", 2));
	CHECK(strstr(reply, "tx.drop=2") != NULL);
	for (i = 0; i < 3; i++)
		CHECK_EQ(sim_wire_tx(&s, fr, len), 0);
	n = 0;
	while (recv(sv[1], rb, sizeof(rb), MSG_DONTWAIT) > 0)
		n++;
	CHECK_EQ(n, 1);
	CHECK_EQ(send(sv[1], fr, len, 0), (ssize_t)len);
	spin(&s, 2);
	CHECK_EQ(dev.rx, 2);
	pkt_classify(dev.last_rx, dev.last_rx_len, PKT_ROCE_V2_PORT, &info);
	CHECK(!pkt_icrc_ok(dev.last_rx, &info));

	/* Link down: TX refused, RX dropped, device told; then up again. */
	ctl_cmd(&s, c, "link down", reply, sizeof(reply));
	CHECK(!strncmp(reply, "ok", 2));
	CHECK(!dev.link);
	CHECK_EQ(sim_wire_tx(&s, fr, len), -ENETDOWN);
	CHECK_EQ(send(sv[1], fr, len, 0), (ssize_t)len);
	spin(&s, 2);
	CHECK_EQ(dev.rx, 2);
	ctl_cmd(&s, c, "link up", reply, sizeof(reply));
	CHECK(dev.link);

	/* rx hold: this fake device has no receive buffer to hold */
	ctl_cmd(&s, c, "rx hold", reply, sizeof(reply));
	CHECK(!strncmp(reply, "error", 5));
	ctl_cmd(&s, c, "rx sideways", reply, sizeof(reply));
	CHECK(strstr(reply, "usage: rx hold|release") != NULL);

	/* tx hold reaches the device; a device refusing it says why */
	dev.tx_refuse = true;
	ctl_cmd(&s, c, "tx hold", reply, sizeof(reply));
	CHECK(!strcmp(reply, "error tx hold needs a device serving ABI 2.0 "
		      "(rnicsim without --signature-abi)\n"));
	CHECK(!dev.tx_hold);
	dev.tx_refuse = false;
	ctl_cmd(&s, c, "tx hold", reply, sizeof(reply));
	CHECK(!strcmp(reply, "ok tx hold\n"));
	CHECK(dev.tx_hold);
	ctl_cmd(&s, c, "tx release", reply, sizeof(reply));
	CHECK(!strcmp(reply, "ok tx release\n"));
	CHECK(!dev.tx_hold);
	ctl_cmd(&s, c, "tx", reply, sizeof(reply));
	CHECK(!strcmp(reply, "error usage: tx hold|release\n"));
	ctl_cmd(&s, c, "tx hold now", reply, sizeof(reply));
	CHECK(!strcmp(reply, "error usage: tx hold|release\n"));
	CHECK_EQ(dev.tx_holds, 3);

	/* aq hold and fatal reach the device; refusals say why */
	dev.aq_refuse = true;
	ctl_cmd(&s, c, "aq hold", reply, sizeof(reply));
	CHECK(!strcmp(reply, "error aq hold needs a device serving ABI 2.0 "
		      "(rnicsim without --signature-abi)\n"));
	dev.aq_refuse = false;
	ctl_cmd(&s, c, "aq hold", reply, sizeof(reply));
	CHECK(!strcmp(reply, "ok aq hold\n"));
	CHECK(dev.aq_hold);
	ctl_cmd(&s, c, "aq release", reply, sizeof(reply));
	CHECK(!strcmp(reply, "ok aq release\n"));
	CHECK(!dev.aq_hold);
	ctl_cmd(&s, c, "aq held", reply, sizeof(reply));
	CHECK(!strcmp(reply, "error usage: aq hold|release\n"));
	CHECK_EQ(dev.aq_holds, 3);
	ctl_cmd(&s, c, "fatal", reply, sizeof(reply));
	CHECK(!strcmp(reply, "ok fatal 6\n"));
	CHECK_EQ(dev.fatal_reason, 0);
	ctl_cmd(&s, c, "fatal 0x10", reply, sizeof(reply));
	CHECK(!strcmp(reply, "ok fatal 16\n"));
	CHECK_EQ(dev.fatal_reason, 16);
	dev.fatal_ret = -EALREADY;
	ctl_cmd(&s, c, "fatal 7", reply, sizeof(reply));
	CHECK(!strcmp(reply, "error fatal: the device is already fatal "
		      "(a reset recovers it)\n"));
	dev.fatal_ret = -EOPNOTSUPP;
	ctl_cmd(&s, c, "fatal", reply, sizeof(reply));
	CHECK(!strcmp(reply, "error fatal needs a device serving ABI 2.0 "
		      "(rnicsim without --signature-abi)\n"));
	dev.fatal_ret = 0;
	ctl_cmd(&s, c, "fatal 0", reply, sizeof(reply));
	CHECK(!strcmp(reply, "error usage: fatal [REASON] "
		      "(REASON 1..4294967295)\n"));
	CHECK_EQ(dev.fatals, 4);

	/* Pause storm into the device's RX. */
	ctl_cmd(&s, c, "fault pause=2:3", reply, sizeof(reply));
	CHECK(!strncmp(reply, "ok", 2));
	for (i = 0; i < 100 && s.fault.pause_sent < 3; i++)
		spin(&s, 1);
	CHECK_EQ(s.fault.pause_sent, 3);
	CHECK_EQ(pkt_classify(dev.last_rx, dev.last_rx_len, PKT_ROCE_V2_PORT,
			      &info), PKT_CLASS_PFC);

	/* Counters: platform, fault and device lines, then ok. */
	ctl_cmd(&s, c, "counters", reply, sizeof(reply));
	CHECK(strstr(reply, "\nplat_tx_frames 4\n") != NULL);
	CHECK(strstr(reply, "\nplat_tx_link_down 1\n") != NULL);
	CHECK(strstr(reply, "\nplat_rx_link_down 1\n") != NULL);
	CHECK(strstr(reply, "\nfault_tx_drop 2\n") != NULL);
	CHECK(strstr(reply, "\nfault_rx_corrupt 1\n") != NULL);
	CHECK(strstr(reply, "\nfault_pause_frames 3\n") != NULL);
	CHECK(strstr(reply, "\ndev_fake_counter 7\n") != NULL);
	CHECK(strstr(reply, "\n_ok_looking_name 1\n") != NULL);
	CHECK(strstr(reply, "\nok\n") != NULL);

	ctl_cmd(&s, c, "fault clear", reply, sizeof(reply));
	CHECK(!strcmp(reply, "ok\n"));
	ctl_cmd(&s, c, "fault drop=lots", reply, sizeof(reply));
	CHECK(!strncmp(reply, "error ", 6));
	ctl_cmd(&s, c, "frobnicate", reply, sizeof(reply));
	CHECK(!strncmp(reply, "error unknown command", 21));
	ctl_cmd(&s, c, "pcap stop", reply, sizeof(reply));
	CHECK(!strcmp(reply, "ok\n"));

	/* The pcap holds what crossed the wire: 2 sent, 2 received, 3 PFC. */
	pr = pcapread_open(pcap, err, sizeof(err));
	REQUIRE(pr != NULL);
	n = 0;
	while (pcapread_next(pr, &pf, err, sizeof(err)) == 1) {
		CHECK_EQ(pf.linktype, 1);
		if (n == 0) {
			CHECK_EQ(pf.len, len);
			CHECK_MEM_EQ(pf.data, fr, len);
		}
		n++;
	}
	pcapread_close(pr);
	CHECK_EQ(n, 7);

	ctl_cmd(&s, c, "quit", reply, sizeof(reply));
	CHECK(!strcmp(reply, "ok bye\n"));
	CHECK(s.quit);
	CHECK_EQ(sim_run(&s), 0);	/* returns at once */
	close(c);
	close(sv[1]);
	sim_fini(&s);
	CHECK(access(ctl, F_OK) < 0);
}

struct hooked {
	int n;
	size_t len;
};

static void wire_hooked(void *ctx, const uint8_t *frame, size_t len)
{
	struct hooked *h = ctx;

	(void)frame;
	h->n++;
	h->len = len;
}

/*
 * The in-process wire (--bench=abi2): frames leave TX fault injection
 * into the hook, come in through sim_wire_rx() to the device, and the
 * link is up while the hook is attached unless a fault forces it down.
 */
TEST(sim_wire_hook)
{
	static struct fake_dev dev;
	static struct sim s;
	char err[256];
	char *argv[] = { "rnicsim", "--bench", "--fault", "tx.drop=1", NULL };
	struct hooked h = {};
	struct sim_opts o;
	uint8_t fr[256];
	size_t len;

	memset(&dev, 0, sizeof(dev));
	REQUIRE(opts_parse(&o, 4, argv, err, sizeof(err)) == 0);
	REQUIRE(sim_init(&s, &o, err, sizeof(err)) == 0);
	sim_attach_dev(&s, &fake_ops, &dev);
	CHECK(!dev.link);
	sim_attach_wire_hook(&s, wire_hooked, &h);
	CHECK(dev.link);
	len = tf_roce(fr, TF_V2_IPV4, 100, -1, PKT_ROCE_V2_PORT);
	CHECK_EQ(sim_wire_tx(&s, fr, len), 0);	/* dropped by the fault */
	CHECK_EQ(h.n, 0);
	CHECK_EQ(sim_wire_tx(&s, fr, len), 0);
	CHECK_EQ(h.n, 1);
	CHECK_EQ(h.len, len);
	sim_wire_rx(&s, fr, len);
	CHECK_EQ(dev.rx, 1);
	CHECK_EQ(dev.last_rx_len, len);
	CHECK_EQ(s.rx_frames, 1);
	CHECK_EQ(s.tx_frames, 2);
	s.dev_ops = NULL;
	sim_fini(&s);
}

struct hold_rec {
	int rx, tx, aq, fatal, peek;	/* calls */
	bool rx_hold, tx_hold, aq_hold, arm_peek;
	uint32_t reason;	/* the last fatal's, as asked (0: default) */
	char out[1024];
};

static int rec_rx_hold(void *ctx, bool hold, char *msg, size_t len)
{
	struct hold_rec *r = ctx;

	(void)msg;
	(void)len;
	r->rx++;
	r->rx_hold = hold;
	return 0;
}

static int rec_tx_hold(void *ctx, bool hold, char *msg, size_t len)
{
	struct hold_rec *r = ctx;

	r->tx++;
	if (r->tx > 3) {
		snprintf(msg, len, "tx hold: refused");
		return -EIO;
	}
	r->tx_hold = hold;
	return 0;
}

static int rec_aq_hold(void *ctx, bool hold, char *msg, size_t len)
{
	struct hold_rec *r = ctx;

	(void)msg;
	(void)len;
	r->aq++;
	r->aq_hold = hold;
	return 0;
}

static int rec_arm_peek(void *ctx, bool peek, char *msg, size_t len)
{
	struct hold_rec *r = ctx;

	(void)msg;
	(void)len;
	r->peek++;
	r->arm_peek = peek;
	return 0;
}

static int rec_fatal(void *ctx, uint32_t *reason, char *msg, size_t len)
{
	struct hold_rec *r = ctx;

	(void)msg;
	(void)len;
	r->fatal++;
	r->reason = *reason;
	if (!*reason)
		*reason = 6;
	return 0;
}

static void rec_out(void *octx, const char *line)
{
	struct hold_rec *r = octx;
	size_t n = strlen(r->out);

	snprintf(r->out + n, sizeof(r->out) - n, "%s\n", line);
}

static const char *run(struct ctl *c, struct hold_rec *r, const char *line)
{
	r->out[0] = '\0';
	ctl_execute(c, line, rec_out, r);
	return r->out;
}

/* The parser: rx and tx hold|release, each to its own op, and the help. */
TEST(ctl_rx_tx_hold_commands)
{
	struct ctl_ops ops = { .rx_hold = rec_rx_hold,
			       .tx_hold = rec_tx_hold };
	struct hold_rec r = {};
	struct ctl c;
	char err[64];

	REQUIRE(ctl_init(&c, NULL, &ops, &r, err, sizeof(err)) == 0);
	CHECK(!strcmp(run(&c, &r, "tx hold"), "ok tx hold\n"));
	CHECK(r.tx_hold && !r.rx_hold);
	CHECK(!strcmp(run(&c, &r, "  tx hold \r\n"), "ok tx hold\n"));
	CHECK(r.tx_hold);
	CHECK(!strcmp(run(&c, &r, "tx release"), "ok tx release\n"));
	CHECK(!r.tx_hold);
	CHECK_EQ(r.tx, 3);
	CHECK_EQ(r.rx, 0);
	CHECK(!strcmp(run(&c, &r, "rx hold"), "ok rx hold\n"));
	CHECK(r.rx_hold && !r.tx_hold);
	CHECK_EQ(r.tx, 3);
	CHECK(!strcmp(run(&c, &r, "tx hold"), "error tx hold: refused\n"));
	CHECK(!strcmp(run(&c, &r, "tx"), "error usage: tx hold|release\n"));
	CHECK(!strcmp(run(&c, &r, "tx Hold"),
		      "error usage: tx hold|release\n"));
	CHECK(!strcmp(run(&c, &r, "tx release all"),
		      "error usage: tx hold|release\n"));
	CHECK(!strcmp(run(&c, &r, "rx on"), "error usage: rx hold|release\n"));
	CHECK_EQ(r.tx, 4);
	CHECK(strstr(run(&c, &r, "help"), " | tx hold|release | ") != NULL);
	CHECK(strstr(run(&c, &r, "txx hold"), "error unknown command") ==
	      r.out);
	CHECK_EQ(c.errors, 6);

	/* A server without the op says so. */
	ops.tx_hold = NULL;
	CHECK(!strcmp(run(&c, &r, "tx hold"),
		      "error tx hold is not available\n"));
	ctl_fini(&c);
}

/* The parser: aq hold|release, fatal [REASON], their usage errors */
TEST(ctl_aq_hold_and_fatal_commands)
{
	static const char *const bad_fatal[] = {
		"fatal 0", "fatal 00", "fatal 0x0", "fatal 4294967296",
		"fatal 0x100000000", "fatal 99999999999999999999999",
		"fatal -1", "fatal +1", "fatal 6x", "fatal 0x", "fatal x6",
		"fatal internal", "fatal 1 2", "fatal 1.5", "fatal 0x-1",
		"fatal 0x+5", "fatal 0x 5", "fatal 0xg",
	};
#define N_BAD	(sizeof(bad_fatal) / sizeof(bad_fatal[0]))
	static const char usage[] =
		"error usage: fatal [REASON] (REASON 1..4294967295)\n";
	struct ctl_ops ops = { .rx_hold = rec_rx_hold,
			       .tx_hold = rec_tx_hold,
			       .aq_hold = rec_aq_hold,
			       .fatal = rec_fatal };
	struct hold_rec r = {};
	struct ctl c;
	char err[64];
	unsigned int i;

	REQUIRE(ctl_init(&c, NULL, &ops, &r, err, sizeof(err)) == 0);
	CHECK(!strcmp(run(&c, &r, "aq hold"), "ok aq hold\n"));
	CHECK(r.aq_hold && !r.rx_hold && !r.tx_hold);
	CHECK(!strcmp(run(&c, &r, " aq  hold \r\n"), "ok aq hold\n"));
	CHECK(!strcmp(run(&c, &r, "aq release"), "ok aq release\n"));
	CHECK(!r.aq_hold);
	CHECK_EQ(r.aq, 3);
	CHECK(r.rx == 0 && r.tx == 0 && r.fatal == 0);
	CHECK(!strcmp(run(&c, &r, "aq"), "error usage: aq hold|release\n"));
	CHECK(!strcmp(run(&c, &r, "aq Hold"),
		      "error usage: aq hold|release\n"));
	CHECK(!strcmp(run(&c, &r, "aq hold now"),
		      "error usage: aq hold|release\n"));
	CHECK_EQ(r.aq, 3);

	CHECK(!strcmp(run(&c, &r, "fatal"), "ok fatal 6\n"));
	CHECK_EQ(r.reason, 0);		/* the device's default asked for */
	CHECK(!strcmp(run(&c, &r, "fatal 3"), "ok fatal 3\n"));
	CHECK_EQ(r.reason, 3);
	CHECK(!strcmp(run(&c, &r, "  fatal\t0x2A \r\n"), "ok fatal 42\n"));
	CHECK(!strcmp(run(&c, &r, "fatal 010"), "ok fatal 10\n"));
	CHECK(!strcmp(run(&c, &r, "fatal 4294967295"),
		      "ok fatal 4294967295\n"));
	CHECK(!strcmp(run(&c, &r, "fatal 0xffffffff"),
		      "ok fatal 4294967295\n"));
	CHECK_EQ(r.fatal, 6);
	for (i = 0; i < N_BAD; i++)
		if (strcmp(run(&c, &r, bad_fatal[i]), usage))
			test_fail(__FILE__, __LINE__, "%s: %s", bad_fatal[i],
				  r.out);
	CHECK_EQ(r.fatal, 6);		/* none reached the device */
	CHECK(strstr(run(&c, &r, "fatall"), "error unknown command") ==
	      r.out);
	CHECK(strstr(run(&c, &r, "help"),
		     " | aq hold|release | fatal [REASON] | ") != NULL);
	CHECK_EQ(c.errors, 3 + N_BAD + 1);

	/* A server without the ops says so. */
	ops.aq_hold = NULL;
	ops.fatal = NULL;
	CHECK(!strcmp(run(&c, &r, "aq hold"),
		      "error aq hold is not available\n"));
	CHECK(!strcmp(run(&c, &r, "fatal"), "error fatal is not available\n"));
	CHECK(!strcmp(run(&c, &r, "fatal 0"), usage));
	ctl_fini(&c);
#undef N_BAD
}

/* The parser: arm-peek on|off, its usage error, a server without it */
TEST(ctl_arm_peek_command)
{
	static const char usage[] = "error usage: arm-peek on|off\n";
	struct ctl_ops ops = { .arm_peek = rec_arm_peek };
	struct hold_rec r = {};
	struct ctl c;
	char err[64];

	REQUIRE(ctl_init(&c, NULL, &ops, &r, err, sizeof(err)) == 0);
	CHECK(!strcmp(run(&c, &r, "arm-peek off"), "ok arm-peek off\n"));
	CHECK(r.peek == 1 && !r.arm_peek);
	CHECK(!strcmp(run(&c, &r, " arm-peek  on \r\n"), "ok arm-peek on\n"));
	CHECK(r.peek == 2 && r.arm_peek);
	CHECK(!strcmp(run(&c, &r, "arm-peek"), usage));
	CHECK(!strcmp(run(&c, &r, "arm-peek OFF"), usage));
	CHECK(!strcmp(run(&c, &r, "arm-peek off now"), usage));
	CHECK(!strcmp(run(&c, &r, "arm-peek 0"), usage));
	CHECK_EQ(r.peek, 2);		/* none of those reached the device */
	CHECK(strstr(run(&c, &r, "help"), " | arm-peek on|off | ") != NULL);
	ops.arm_peek = NULL;
	CHECK(!strcmp(run(&c, &r, "arm-peek off"),
		      "error arm-peek is not available\n"));
	CHECK_EQ(c.errors, 5);
	ctl_fini(&c);
}

/*
 * The batched wire (what a --tap simulator uses): the frames of one turn
 * of the loop leave together at its end, in order; frames read in a batch
 * reach the device in the order they came; the counters say so.
 */
TEST(sim_wire_batched)
{
	static struct fake_dev dev;
	static struct sim s;
	char err[256], sock[256], ctl[256], reply[8192];
	char *argv[] = { "rnicsim", "--socket", sock, "--ctl", ctl, NULL };
	uint8_t fr[256], rb[2048];
	struct sim_opts o;
	int sv[2], c, i;
	size_t len;

	memset(&dev, 0, sizeof(dev));
	snprintf(sock, sizeof(sock), "%s/b.sock", test_tmpdir());
	snprintf(ctl, sizeof(ctl), "%s/b.ctl", test_tmpdir());
	REQUIRE(opts_parse(&o, 5, argv, err, sizeof(err)) == 0);
	REQUIRE(sim_init(&s, &o, err, sizeof(err)) == 0);
	sim_attach_dev(&s, &fake_ops, &dev);
	REQUIRE(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, sv) == 0);
	REQUIRE(sim_attach_wire_fd(&s, sv[0]) == 0);
	sim_wire_batch(&s);
	REQUIRE(s.tap.tx_ring != NULL);

	len = tf_roce(fr, TF_V2_IPV4, 100, -1, PKT_ROCE_V2_PORT);
	for (i = 0; i < 3; i++) {
		fr[len - 5] = (uint8_t)i;	/* payload, before the ICRC */
		CHECK_EQ(sim_wire_tx(&s, fr, len), 0);
	}
	CHECK_EQ(recv(sv[1], rb, sizeof(rb), MSG_DONTWAIT), -1);
	spin(&s, 1);
	for (i = 0; i < 3; i++) {
		CHECK_EQ(recv(sv[1], rb, sizeof(rb), MSG_DONTWAIT),
			 (ssize_t)len);
		CHECK_EQ(rb[len - 5], i);
	}
	CHECK_EQ(s.tap.tx_frames, 3);
	CHECK_EQ(s.tap.tx_flushes, 1);

	for (i = 0; i < 20; i++) {
		fr[len - 5] = (uint8_t)(0x80 + i);
		CHECK_EQ(send(sv[1], fr, len, 0), (ssize_t)len);
	}
	spin(&s, 2);
	CHECK_EQ(dev.rx, 20);
	CHECK_EQ(dev.last_rx[len - 5], 0x80 + 19);
	CHECK_EQ(s.tap.rx_frames, 20);
	/* batches of 2, 4 and 8 reads, then 16 of which 6 found a frame */
	CHECK_EQ(s.tap.rx_calls, 4);

	c = ctl_connect(ctl);
	REQUIRE(c >= 0);
	ctl_cmd(&s, c, "counters", reply, sizeof(reply));
	CHECK(strstr(reply, "plat_wire_tx_batched 1\n") != NULL);
	CHECK(strstr(reply, "plat_wire_tx_flushes 1\n") != NULL);
	CHECK(strstr(reply, "plat_wire_rx_calls 4\n") != NULL);
	close(c);
	close(sv[1]);
	s.dev_ops = NULL;
	sim_fini(&s);
}
