/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Guest RAM as the model's DMA target: QEMU's memory-backend-file
 * (share=on) mapped into rnicsim. A DMA address is a guest-physical
 * address, which equals the file offset for guests of up to 2 GiB.
 */
#ifndef RNICSIM_GMEM_H
#define RNICSIM_GMEM_H

#include <stddef.h>
#include <stdint.h>

struct gmem {
	char *path;		/* NULL: set up with gmem_map_fd() only */
	uint64_t limit;		/* --guest-mem-size; 0: the file's size */
	uint8_t *base;		/* NULL while unmapped */
	uint64_t size;		/* bytes mapped: the DMA bound */
	uint64_t next_try_ns;	/* lazy mapping: when to stat again */
	/* counters */
	uint64_t faults;	/* DMA to a range outside guest RAM */
	uint64_t no_mem;	/* DMA while no guest RAM was mapped */
	uint64_t read_bytes, write_bytes;
};

void gmem_init(struct gmem *g, const char *path, uint64_t limit);
/*
 * Map the file now. 0 on success (or already mapped), -ENOENT while QEMU
 * has not created it, another negative errno otherwise.
 */
int gmem_map(struct gmem *g);
/* Map @size bytes of an open file (tests and the benchmark). */
int gmem_map_fd(struct gmem *g, int fd, uint64_t size);
/* Map if not mapped and not tried within the last second (DMA path). */
void gmem_try_map(struct gmem *g, uint64_t now_ns);
void gmem_unmap(struct gmem *g);
void gmem_fini(struct gmem *g);

/*
 * Bounds-checked access: [gpa, gpa + len) must lie inside the mapping,
 * computed without overflow. -EFAULT (and a count) if not, -ENODEV when
 * nothing is mapped; nothing is touched on error.
 */
int gmem_read(struct gmem *g, uint64_t gpa, void *buf, size_t len);
int gmem_write(struct gmem *g, uint64_t gpa, const void *buf, size_t len);
void *gmem_ptr(struct gmem *g, uint64_t gpa, size_t len);

#endif /* RNICSIM_GMEM_H */
