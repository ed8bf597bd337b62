/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fault injection between the device and the wire, both directions.
 *
 * SPEC is a comma-separated list of items, applied in order:
 *
 *	[tx.|rx.]drop=AMOUNT		drop the frame
 *	[tx.|rx.]dup=AMOUNT		send it twice (also "duplicate")
 *	[tx.|rx.]reorder=AMOUNT		hold it back behind the next frame
 *	[tx.|rx.]corrupt=AMOUNT		flip a payload byte (ICRC then fails)
 *	[tx.|rx.]delay=TIME[@AMOUNT]	deliver it TIME later (all frames
 *					without @AMOUNT)
 *	link=down|up			force the link down / release it
 *	pause=PRIO:RATE/s[:qQUANTA]	PFC XOFF storm into the device's RX
 *	pause=PRIO:COUNT[:qQUANTA]	COUNT XOFF frames, 1000 per second
 *	pause=off
 *	seed=N				restart the PRNG
 *
 * AMOUNT is a rate ("1%", "0.5%") or a count ("5": the next 5 frames);
 * 0 or 0% turns the fault off. Without tx./rx. an item applies to each
 * direction separately (so drop=5 drops 5 frames each way). TIME is
 * N with ns, us, ms or s (ms if no unit). QUANTA defaults to 0xffff.
 *
 * Decisions come from a seeded PRNG, so a run with the same --seed and
 * the same traffic injects the same faults.
 */
#ifndef RNICSIM_FAULT_H
#define RNICSIM_FAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum fault_dir { FAULT_TX = 0, FAULT_RX = 1, FAULT_NDIR };
enum fault_kind {
	FK_DROP, FK_DUP, FK_REORDER, FK_CORRUPT, FK_DELAY, FK_NR
};

struct fault_rule {
	bool on;
	bool is_count;
	double rate;		/* probability, 0..1 */
	uint64_t count;		/* frames left */
	uint64_t delay_ns;	/* FK_DELAY */
};

struct fault_pause {
	bool on;
	uint8_t prio;
	uint16_t quanta;
	uint64_t interval_ns;
	uint64_t left;		/* frames left; UINT64_MAX: until cleared */
	uint64_t next_ns;
};

struct fault_frame;

struct fault_ops {
	/* A frame leaves fault injection (to the tap for TX, device for RX). */
	void (*emit)(void *ctx, enum fault_dir dir, const uint8_t *frame,
		     size_t len);
	/* The forced link state changed (link=down / link=up / clear). */
	void (*link)(void *ctx, bool forced_down);
};

struct fault {
	const struct fault_ops *ops;
	void *ctx;
	uint64_t rng;
	struct fault_rule rule[FAULT_NDIR][FK_NR];
	struct fault_pause pause;
	bool link_down;
	uint8_t pause_src[6];
	/* delayed frames, in due order, and the one frame held per dir */
	struct fault_frame *queue, *queue_last;
	unsigned int queued;
	struct fault_frame *held[FAULT_NDIR];
	/* counters */
	uint64_t hits[FAULT_NDIR][FK_NR];
	uint64_t pause_sent;
	uint64_t queue_overflow;
};

void fault_init(struct fault *f, const struct fault_ops *ops, void *ctx,
		uint64_t seed);
/* Free queued frames without emitting them. */
void fault_fini(struct fault *f);

/*
 * Apply SPEC (all or nothing). 0, or -EINVAL with the reason in @err.
 * @now_ns starts pause storms.
 */
int fault_parse(struct fault *f, const char *spec, uint64_t now_ns,
		char *err, size_t errlen);
/* Turn everything off, release held/delayed frames now, link up. */
void fault_clear(struct fault *f);
/* True if any rule, storm or forced link-down is active. */
bool fault_active(const struct fault *f);

/*
 * Whether fault_process() in direction @dir uses its clock argument (a
 * delay or reorder rule is on); if not, the caller may pass 0 and save
 * a clock read per frame.
 */
bool fault_needs_clock(const struct fault *f, enum fault_dir dir);

/* A frame enters fault injection; it is emitted now, later, or never. */
void fault_process(struct fault *f, enum fault_dir dir, const uint8_t *frame,
		   size_t len, uint64_t now_ns);
/*
 * Emit what is due (delayed and held frames, pause frames); returns the
 * next absolute deadline in ns, or 0 for none.
 */
uint64_t fault_poll(struct fault *f, uint64_t now_ns);

/* "name value" lines. */
void fault_dump(const struct fault *f,
		void (*out)(void *ctx, const char *line), void *ctx);
/* The current settings as a spec (for "ok" replies and logs). */
void fault_describe(const struct fault *f, char *buf, size_t size);

#endif /* RNICSIM_FAULT_H */
