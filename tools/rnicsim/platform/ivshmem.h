/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ivshmem server side (QEMU docs/specs/ivshmem-spec.txt): BAR2 shared
 * memory, one guest connection at a time, the model as peer 0 with one
 * eventfd per vector (the guest's Doorbell writes land there) and the
 * guest's own per-vector eventfds (the model writes them to raise MSI-X).
 */
#ifndef RNICSIM_IVSHMEM_H
#define RNICSIM_IVSHMEM_H

#include <stddef.h>
#include <stdint.h>

#define IVS_MODEL_ID	0
#define IVS_GUEST_ID	1
#define IVS_MAX_VECTORS	64

struct ivs {
	char *path;		/* the listening socket, unlinked at fini */
	int listen_fd;
	int conn_fd;		/* -1: no guest */
	int shm_fd;
	void *shm;
	size_t shm_size;
	unsigned int nvec;
	int model_efd[IVS_MAX_VECTORS];	/* doorbells: guest -> model */
	int guest_efd[IVS_MAX_VECTORS];	/* interrupts: model -> guest */
	/*
	 * Called for a new guest before it is sent anything, so the device
	 * is in its power-on state before the guest can touch BAR2.
	 */
	void (*on_connect)(void *ctx);
	void *ctx;
	/* counters */
	uint64_t connects, disconnects, rejected, handshake_errors;
	uint64_t doorbells[IVS_MAX_VECTORS];
	uint64_t irqs[IVS_MAX_VECTORS];
	uint64_t irqs_no_guest;
};

/*
 * Create the shared memory (@shm_size, a power of two), the model's
 * eventfds and the listening socket at @path (a stale socket file there is
 * replaced). 0 or a negative errno with a reason in @err.
 */
int ivs_init(struct ivs *s, const char *path, size_t shm_size,
	     unsigned int nvec, char *err, size_t errlen);
void ivs_fini(struct ivs *s);

/*
 * The listening socket is readable: accept and run the handshake.
 * Returns 1 if a guest is now connected, 0 if the connection was refused
 * (another guest is connected, or the handshake failed), -errno on error.
 */
int ivs_accept(struct ivs *s);
/*
 * The guest connection is readable or hung up. QEMU never sends anything,
 * so this means it went away: returns 1 if the guest is now disconnected.
 */
int ivs_conn_event(struct ivs *s);
void ivs_disconnect(struct ivs *s);

/* Model eventfd @v fired: consume it; returns the number of kicks. */
uint64_t ivs_doorbell_read(struct ivs *s, unsigned int v);
/* Raise guest vector @v; -ENOTCONN without a guest, -EINVAL bad vector. */
int ivs_raise(struct ivs *s, unsigned int v);

#endif /* RNICSIM_IVSHMEM_H */
