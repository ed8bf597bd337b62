/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The simulator around the device model: one event loop over the ivshmem
 * server, the guest's connection, the doorbell eventfds, the tap, the
 * control socket and the timers, plus the platform services the device
 * uses (DMA, interrupts, wire TX). main.c binds these to platform.h and
 * device.h; the unit tests drive them with a fake device.
 */
#ifndef RNICSIM_SIM_H
#define RNICSIM_SIM_H

#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform/ctl.h"
#include "fault/fault.h"
#include "platform/gmem.h"
#include "platform/ivshmem.h"
#include "platform/opts.h"
#include "fault/pcap.h"
#include "platform/tap.h"

/* What the loop calls in the device (device.h, or a test's fake). */
struct sim_dev_ops {
	void (*doorbell)(void *dev, unsigned int vector);
	void (*wire_rx)(void *dev, const uint8_t *frame, size_t len);
	void (*set_link)(void *dev, bool up);
	/* optional: 0 or -errno (rdev_rx_hold()) */
	int (*rx_hold)(void *dev, bool hold);
	/* optional: 0 or -errno (rdev_tx_hold()) */
	int (*tx_hold)(void *dev, bool hold);
	/* optional: 0 or -errno (rdev_aq_hold()) */
	int (*aq_hold)(void *dev, bool hold);
	/* optional: 0 or -errno; *reason 0 asks for the default (rdev_fatal()) */
	int (*fatal)(void *dev, uint32_t *reason);
	/* optional: 0 or -errno (rdev_set_arm_peek()) */
	int (*arm_peek)(void *dev, bool peek);
	uint64_t (*tick)(void *dev, uint64_t now_ns);
	void (*reset)(void *dev);
	void (*dump_counters)(void *dev, void (*out)(void *ctx,
						      const char *line),
			      void *ctx);
};

struct sim {
	const struct sim_opts *opts;
	struct ivs ivs;
	struct gmem gmem;
	struct tap tap;
	struct pcap pcap;
	struct fault fault;
	struct ctl ctl;
	int epfd;
	const struct sim_dev_ops *dev_ops;
	void *dev;
	/* An in-process wire instead of the tap (sim_attach_wire_hook) */
	void (*wire_hook)(void *ctx, const uint8_t *frame, size_t len);
	void *wire_ctx;
	bool link_up;		/* as last told to the device */
	bool quit;
	uint64_t dev_deadline;	/* from dev tick; 0: none */
	uint64_t fault_deadline;
	uint64_t carrier_poll_ns;
	int tx_err;		/* result of the frame being sent now */
	/* counters */
	uint64_t tx_frames, tx_bytes, tx_link_down, tx_bad_len, tx_wire_err;
	uint64_t rx_frames, rx_bytes, rx_link_down;
	uint64_t link_changes;
};

/* Set by SIGINT/SIGTERM handlers in main; the loop checks it. */
extern volatile sig_atomic_t sim_stop_signal;

int sim_init(struct sim *s, const struct sim_opts *o, char *err,
	     size_t errlen);
/* Connect the device; tells it the current link state. */
void sim_attach_dev(struct sim *s, const struct sim_dev_ops *ops, void *dev);
/* One loop iteration, waiting at most @max_wait_ms. <0 on fatal error. */
int sim_run_once(struct sim *s, int max_wait_ms);
/* Loop until quit (control socket) or a signal. */
int sim_run(struct sim *s);
void sim_fini(struct sim *s);
/* Use a datagram fd (socketpair) as the wire instead of a tap. */
int sim_attach_wire_fd(struct sim *s, int fd);
/*
 * Or an in-process wire: every frame that leaves TX fault injection (and
 * is written to pcap) goes to @hook; frames come back in by sim_wire_rx.
 * The link is up while a hook is attached (and no fault forces it down).
 */
void sim_attach_wire_hook(struct sim *s,
			  void (*hook)(void *ctx, const uint8_t *frame,
				       size_t len), void *ctx);
/* A frame arrives from the wire: counters, RX fault injection, pcap, device */
void sim_wire_rx(struct sim *s, const uint8_t *frame, size_t len);

/* Platform services (platform.h semantics). */
uint64_t sim_now_ns(void);
int sim_dma_read(struct sim *s, uint64_t gpa, void *buf, size_t len);
int sim_dma_write(struct sim *s, uint64_t gpa, const void *buf, size_t len);
void *sim_dma_ptr(struct sim *s, uint64_t gpa, size_t len);
void sim_raise_irq(struct sim *s, unsigned int vector);
int sim_wire_tx(struct sim *s, const uint8_t *frame, size_t len);
void sim_wire_batch(struct sim *s);
void sim_wire_flush(struct sim *s);
void sim_vlog(const char *fmt, va_list ap);
void sim_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Every platform counter as "name value" lines, then the device's. */
void sim_dump_counters(struct sim *s, void (*out)(void *ctx, const char *l),
		       void *ctx);

#endif /* RNICSIM_SIM_H */
