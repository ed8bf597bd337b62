// SPDX-License-Identifier: GPL-2.0
/*
 * Fault injection (see fault.h for the spec language).
 *
 * Order for one frame: drop, corrupt, duplicate, then delay or reorder.
 * A reordered frame is held until the next frame in the same direction
 * has gone out (or REORDER_HOLD_NS passed), so it arrives one place late.
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault/fault.h"
#include "pkt/pkt.h"

#define REORDER_HOLD_NS		2000000ull	/* 2 ms */
#define FAULT_MAX_QUEUED	8192
#define PAUSE_DEFAULT_RATE	1000
#define PAUSE_DEFAULT_QUANTA	0xffff

struct fault_frame {
	struct fault_frame *next;
	uint64_t due_ns;
	enum fault_dir dir;
	size_t len;
	uint8_t data[];
};

static const char *const kind_name[FK_NR] = {
	[FK_DROP] = "drop",
	[FK_DUP] = "dup",
	[FK_REORDER] = "reorder",
	[FK_CORRUPT] = "corrupt",
	[FK_DELAY] = "delay",
};

static const char *const dir_name[FAULT_NDIR] = { "tx", "rx" };

/* splitmix64: small, fast, and the same sequence everywhere. */
static uint64_t rng_next(struct fault *f)
{
	uint64_t z = (f->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double rng_unit(struct fault *f)
{
	return (double)(rng_next(f) >> 11) * (1.0 / 9007199254740992.0);
}

void fault_init(struct fault *f, const struct fault_ops *ops, void *ctx,
		uint64_t seed)
{
	static const uint8_t src[6] = { 0x02, 0x52, 0x4e, 0x49, 0x43, 0xfe };

	memset(f, 0, sizeof(*f));
	f->ops = ops;
	f->ctx = ctx;
	f->rng = seed;
	f->queue_last = NULL;
	memcpy(f->pause_src, src, sizeof(src));
}

static void free_queue(struct fault *f)
{
	struct fault_frame *q, *n;
	int d;

	for (q = f->queue; q; q = n) {
		n = q->next;
		free(q);
	}
	f->queue = NULL;
	f->queue_last = NULL;
	f->queued = 0;
	for (d = 0; d < FAULT_NDIR; d++) {
		free(f->held[d]);
		f->held[d] = NULL;
	}
}

void fault_fini(struct fault *f)
{
	free_queue(f);
}

static void emit(struct fault *f, enum fault_dir dir, const uint8_t *frame,
		 size_t len)
{
	if (f->ops && f->ops->emit)
		f->ops->emit(f->ctx, dir, frame, len);
}

static void set_link(struct fault *f, bool down)
{
	if (f->link_down == down)
		return;
	f->link_down = down;
	if (f->ops && f->ops->link)
		f->ops->link(f->ctx, down);
}

/* Emit and free, in order, everything queued or held. */
static void flush_all(struct fault *f)
{
	struct fault_frame *q, *n;
	int d;

	q = f->queue;
	f->queue = NULL;
	f->queue_last = NULL;
	f->queued = 0;
	for (; q; q = n) {
		n = q->next;
		emit(f, q->dir, q->data, q->len);
		free(q);
	}
	for (d = 0; d < FAULT_NDIR; d++) {
		q = f->held[d];
		f->held[d] = NULL;
		if (q)
			emit(f, q->dir, q->data, q->len);
		free(q);
	}
}

void fault_clear(struct fault *f)
{
	memset(f->rule, 0, sizeof(f->rule));
	memset(&f->pause, 0, sizeof(f->pause));
	flush_all(f);
	set_link(f, false);
}

bool fault_active(const struct fault *f)
{
	int d, k;

	for (d = 0; d < FAULT_NDIR; d++)
		for (k = 0; k < FK_NR; k++)
			if (f->rule[d][k].on)
				return true;
	return f->pause.on || f->link_down;
}

/* ---- spec parsing ---- */

static int parse_u64(const char *s, uint64_t *v, const char **end)
{
	char *e;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &e, 0);
	if (errno)
		return -EINVAL;
	*end = e;
	return 0;
}

/* "N%" (rate) or "N" (count) filling @r; the whole string must match. */
static int parse_amount(const char *s, struct fault_rule *r)
{
	const char *end;
	char *e;
	double d;

	if (strchr(s, '%')) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		d = strtod(s, &e);
		if (e == s || strcmp(e, "%") || !isfinite(d) || d < 0 ||
		    d > 100)
			return -EINVAL;
		r->is_count = false;
		r->rate = d / 100.0;
		r->on = d > 0;
		return 0;
	}
	if (parse_u64(s, &r->count, &end) || *end)
		return -EINVAL;
	r->is_count = true;
	r->on = r->count > 0;
	return 0;
}

static int parse_time(const char *s, uint64_t *ns)
{
	static const struct {
		const char *unit;
		uint64_t mul;
	} units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 },
		{ "s", 1000000000 }, { "", 1000000 },
	};
	const char *end;
	uint64_t v;
	size_t i;

	if (parse_u64(s, &v, &end))
		return -EINVAL;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(end, units[i].unit)) {
			/* Cap at an hour: anything longer is a typo. */
			if (v > 3600000000000ull / units[i].mul)
				return -EINVAL;
			*ns = v * units[i].mul;
			return 0;
		}
	}
	return -EINVAL;
}

/* pause=PRIO:RATE/s[:qQUANTA] | PRIO:COUNT[:qQUANTA] | off */
static int parse_pause(const char *s, struct fault_pause *p, uint64_t now)
{
	uint64_t prio, n, q = PAUSE_DEFAULT_QUANTA;
	const char *end;

	memset(p, 0, sizeof(*p));
	if (!strcmp(s, "off"))
		return 0;
	if (parse_u64(s, &prio, &end) || prio > 7 || *end != ':')
		return -EINVAL;
	if (parse_u64(end + 1, &n, &end) || !n)
		return -EINVAL;
	if (!strncmp(end, "/s", 2)) {
		if (n > 10000000)
			return -EINVAL;
		p->interval_ns = 1000000000ull / n;
		p->left = UINT64_MAX;
		end += 2;
	} else {
		p->interval_ns = 1000000000ull / PAUSE_DEFAULT_RATE;
		p->left = n;
	}
	if (*end == ':') {
		if (end[1] != 'q' || parse_u64(end + 2, &q, &end) ||
		    q > 0xffff)
			return -EINVAL;
	}
	if (*end)
		return -EINVAL;
	p->on = true;
	p->prio = (uint8_t)prio;
	p->quanta = (uint16_t)q;
	p->next_ns = now;
	return 0;
}

static int kind_of(const char *key)
{
	int k;

	if (!strcmp(key, "duplicate"))
		return FK_DUP;
	for (k = 0; k < FK_NR; k++)
		if (!strcmp(key, kind_name[k]))
			return k;
	return -1;
}

static int parse_item(struct fault *f, char *item, uint64_t now, char *err,
		      size_t errlen)
{
	char *key = item, *val = strchr(item, '='), *at;
	int d, k, dmin = 0, dmax = FAULT_NDIR - 1;
	struct fault_rule r = { 0 };
	uint64_t seed;
	const char *end;

	if (!val) {
		snprintf(err, errlen, "'%s': expected key=value", item);
		return -EINVAL;
	}
	*val++ = '\0';
	if (!strcmp(key, "link")) {
		if (strcmp(val, "down") && strcmp(val, "up"))
			goto bad_value;
		set_link(f, !strcmp(val, "down"));
		return 0;
	}
	if (!strcmp(key, "pause")) {
		if (parse_pause(val, &f->pause, now))
			goto bad_value;
		return 0;
	}
	if (!strcmp(key, "seed")) {
		if (parse_u64(val, &seed, &end) || *end)
			goto bad_value;
		f->rng = seed;
		return 0;
	}
	if (!strncmp(key, "tx.", 3) || !strncmp(key, "rx.", 3)) {
		dmin = dmax = key[0] == 't' ? FAULT_TX : FAULT_RX;
		key += 3;
	}
	k = kind_of(key);
	if (k < 0) {
		snprintf(err, errlen, "unknown fault '%s'", key);
		return -EINVAL;
	}
	if (k == FK_DELAY) {
		at = strchr(val, '@');
		if (at)
			*at++ = '\0';
		if (parse_time(val, &r.delay_ns))
			goto bad_value;
		if (at) {
			if (parse_amount(at, &r))
				goto bad_value;
		} else {
			r.rate = 1.0;
			r.on = true;
		}
		if (!r.delay_ns)
			r.on = false;
	} else if (parse_amount(val, &r)) {
		goto bad_value;
	}
	for (d = dmin; d <= dmax; d++)
		f->rule[d][k] = r;
	return 0;
bad_value:
	snprintf(err, errlen, "bad value '%s' for %s", val, key);
	return -EINVAL;
}

int fault_parse(struct fault *f, const char *spec, uint64_t now_ns,
		char *err, size_t errlen)
{
	struct fault trial;
	char *copy, *item, *save;
	int ret = 0;

	if (!spec || !*spec) {
		snprintf(err, errlen, "empty fault spec");
		return -EINVAL;
	}
	/*
	 * Parse into a copy of the settings without side effects (no link
	 * callbacks, no frames), so a bad item leaves everything as it was.
	 */
	memcpy(&trial, f, sizeof(trial));
	trial.ops = NULL;
	copy = strdup(spec);
	if (!copy)
		return -ENOMEM;
	save = copy;
	while (!ret && (item = strsep(&save, ","))) {
		if (!*item) {
			snprintf(err, errlen, "empty item in '%s'", spec);
			ret = -EINVAL;
		} else {
			ret = parse_item(&trial, item, now_ns, err, errlen);
		}
	}
	free(copy);
	if (ret)
		return ret;
	memcpy(f->rule, trial.rule, sizeof(f->rule));
	f->pause = trial.pause;
	f->rng = trial.rng;
	set_link(f, trial.link_down);
	return 0;
}

/* ---- the datapath ---- */

static bool hit(struct fault *f, enum fault_dir dir, enum fault_kind k)
{
	struct fault_rule *r = &f->rule[dir][k];

	if (!r->on)
		return false;
	if (r->is_count) {
		if (--r->count == 0)
			r->on = false;
	} else if (r->rate < 1.0 && rng_unit(f) >= r->rate) {
		return false;
	}
	f->hits[dir][k]++;
	return true;
}

/*
 * Flip one byte the ICRC covers: inside the RoCE payload if there is one,
 * else in the BTH (never resv8a, which is masked), else near the end of a
 * non-RoCE frame (past the usual headers).
 */
static void corrupt(struct fault *f, uint8_t *frame, size_t len)
{
	struct pkt_info info;
	size_t lo, hi, pos;

	if (!len)
		return;
	switch (pkt_classify(frame, len, PKT_ROCE_V2_PORT, &info)) {
	case PKT_CLASS_ROCE_V1:
	case PKT_CLASS_ROCE_V2_IPV4:
	case PKT_CLASS_ROCE_V2_IPV6:
		lo = info.bth_off + 12;
		hi = info.icrc_off;
		if (lo >= hi) {
			lo = info.bth_off + 5;	/* QPN, A, PSN */
			hi = info.bth_off + 12;
		}
		break;
	default:
		lo = len > 42 ? 42 : len - 1;
		hi = len;
		break;
	}
	pos = lo + (size_t)(rng_next(f) % (hi - lo));
	frame[pos] ^= (uint8_t)(rng_next(f) | 1);
}

static struct fault_frame *frame_copy(enum fault_dir dir, const uint8_t *data,
				      size_t len, uint64_t due)
{
	struct fault_frame *q = malloc(sizeof(*q) + len);

	if (!q)
		return NULL;
	q->next = NULL;
	q->due_ns = due;
	q->dir = dir;
	q->len = len;
	memcpy(q->data, data, len);
	return q;
}

/* Insert in due order; equal deadlines keep arrival order. */
static void enqueue(struct fault *f, struct fault_frame *q)
{
	struct fault_frame **pp;

	if (!f->queue_last || f->queue_last->due_ns <= q->due_ns) {
		/* The usual case: one fixed delay, so deadlines only grow. */
		if (f->queue_last)
			f->queue_last->next = q;
		else
			f->queue = q;
		f->queue_last = q;
	} else {
		for (pp = &f->queue; (*pp)->due_ns <= q->due_ns;
		     pp = &(*pp)->next)
			;
		q->next = *pp;
		*pp = q;
	}
	f->queued++;
}

static void release_held(struct fault *f, enum fault_dir dir)
{
	struct fault_frame *q = f->held[dir];

	if (!q)
		return;
	f->held[dir] = NULL;
	emit(f, dir, q->data, q->len);
	free(q);
}

bool fault_needs_clock(const struct fault *f, enum fault_dir dir)
{
	return dir < FAULT_NDIR && (f->rule[dir][FK_DELAY].on ||
				    f->rule[dir][FK_REORDER].on);
}

void fault_process(struct fault *f, enum fault_dir dir, const uint8_t *frame,
		   size_t len, uint64_t now_ns)
{
	uint8_t *copy = NULL;
	struct fault_frame *q;
	int n = 1, i;

	if (dir >= FAULT_NDIR)
		return;
	if (hit(f, dir, FK_DROP))
		return;
	if (f->rule[dir][FK_CORRUPT].on && hit(f, dir, FK_CORRUPT)) {
		/* Never write to the caller's buffer. */
		copy = malloc(len ? len : 1);
		if (!copy)
			return;
		memcpy(copy, frame, len);
		corrupt(f, copy, len);
		frame = copy;
	}
	if (hit(f, dir, FK_DUP))
		n = 2;
	if (f->rule[dir][FK_DELAY].on && hit(f, dir, FK_DELAY)) {
		for (i = 0; i < n; i++) {
			q = NULL;
			if (f->queued < FAULT_MAX_QUEUED)
				q = frame_copy(dir, frame, len, now_ns +
					       f->rule[dir][FK_DELAY].delay_ns);
			if (q) {
				enqueue(f, q);
			} else {
				f->queue_overflow++;
				emit(f, dir, frame, len);
			}
		}
		goto out;
	}
	if (!f->held[dir] && f->rule[dir][FK_REORDER].on &&
	    hit(f, dir, FK_REORDER)) {
		f->held[dir] = frame_copy(dir, frame, len,
					  now_ns + REORDER_HOLD_NS);
		if (f->held[dir]) {
			if (n == 2)
				emit(f, dir, frame, len);
			goto out;
		}
	}
	for (i = 0; i < n; i++)
		emit(f, dir, frame, len);
	/* The held frame goes out behind the one that overtook it. */
	release_held(f, dir);
out:
	free(copy);
}

static void send_pause(struct fault *f)
{
	uint16_t quanta[8] = { 0 };
	uint8_t buf[64];
	size_t len;

	quanta[f->pause.prio] = f->pause.quanta;
	len = pkt_pfc_build(buf, f->pause_src, (uint8_t)(1u << f->pause.prio),
			    quanta);
	f->pause_sent++;
	emit(f, FAULT_RX, buf, len);
}

uint64_t fault_poll(struct fault *f, uint64_t now_ns)
{
	uint64_t next = 0;
	struct fault_frame *q;
	int d, burst = 0;

	while (f->queue && f->queue->due_ns <= now_ns) {
		q = f->queue;
		f->queue = q->next;
		if (!f->queue)
			f->queue_last = NULL;
		f->queued--;
		emit(f, q->dir, q->data, q->len);
		free(q);
	}
	if (f->queue)
		next = f->queue->due_ns;
	for (d = 0; d < FAULT_NDIR; d++) {
		if (f->held[d] && f->held[d]->due_ns <= now_ns)
			release_held(f, d);
		if (f->held[d] && (!next || f->held[d]->due_ns < next))
			next = f->held[d]->due_ns;
	}
	/*
	 * Pause storm: catch up on missed intervals, but in bounded bursts
	 * so a stalled loop cannot turn into a flood.
	 */
	while (f->pause.on && f->pause.next_ns <= now_ns && burst++ < 64) {
		send_pause(f);
		f->pause.next_ns += f->pause.interval_ns;
		if (f->pause.left != UINT64_MAX && --f->pause.left == 0)
			f->pause.on = false;
	}
	if (f->pause.on && f->pause.next_ns <= now_ns)
		f->pause.next_ns = now_ns + f->pause.interval_ns;
	if (f->pause.on && (!next || f->pause.next_ns < next))
		next = f->pause.next_ns;
	return next;
}

void fault_dump(const struct fault *f,
		void (*out)(void *ctx, const char *line), void *ctx)
{
	char line[96];
	int d, k;

	for (d = 0; d < FAULT_NDIR; d++) {
		for (k = 0; k < FK_NR; k++) {
			snprintf(line, sizeof(line), "fault_%s_%s %" PRIu64,
				 dir_name[d], kind_name[k], f->hits[d][k]);
			out(ctx, line);
		}
	}
	snprintf(line, sizeof(line), "fault_pause_frames %" PRIu64,
		 f->pause_sent);
	out(ctx, line);
	snprintf(line, sizeof(line), "fault_queue_overflow %" PRIu64,
		 f->queue_overflow);
	out(ctx, line);
	snprintf(line, sizeof(line), "fault_queued %u", f->queued);
	out(ctx, line);
	snprintf(line, sizeof(line), "fault_link_forced_down %d",
		 f->link_down);
	out(ctx, line);
}

static void append(char *buf, size_t size, size_t *pos, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void append(char *buf, size_t size, size_t *pos, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*pos >= size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *pos, size - *pos, fmt, ap);
	va_end(ap);
	if (n > 0)
		*pos += (size_t)n;
}

static void describe_amount(char *buf, size_t size, size_t *pos,
			    const struct fault_rule *r)
{
	if (r->is_count)
		append(buf, size, pos, "%" PRIu64, r->count);
	else
		append(buf, size, pos, "%g%%", r->rate * 100.0);
}

void fault_describe(const struct fault *f, char *buf, size_t size)
{
	const struct fault_rule *r;
	size_t pos = 0;
	int d, k;

	buf[0] = '\0';
	for (d = 0; d < FAULT_NDIR; d++) {
		for (k = 0; k < FK_NR; k++) {
			r = &f->rule[d][k];
			if (!r->on)
				continue;
			append(buf, size, &pos, "%s%s.%s=", pos ? "," : "",
			       dir_name[d], kind_name[k]);
			if (k == FK_DELAY) {
				append(buf, size, &pos, "%" PRIu64 "us@",
				       r->delay_ns / 1000);
			}
			describe_amount(buf, size, &pos, r);
		}
	}
	if (f->pause.on) {
		append(buf, size, &pos, "%spause=%u:", pos ? "," : "",
		       f->pause.prio);
		if (f->pause.left == UINT64_MAX)
			append(buf, size, &pos, "%" PRIu64 "/s",
			       (uint64_t)(1000000000ull / f->pause.interval_ns));
		else
			append(buf, size, &pos, "%" PRIu64, f->pause.left);
		append(buf, size, &pos, ":q%u", f->pause.quanta);
	}
	if (f->link_down)
		append(buf, size, &pos, "%slink=down", pos ? "," : "");
	if (!pos)
		append(buf, size, &pos, "none");
}
