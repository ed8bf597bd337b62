// SPDX-License-Identifier: GPL-2.0
/*
 * Guest RAM mapping and bounds-checked DMA (see gmem.h).
 *
 * rnicsim starts before QEMU, so the RAM file may not exist yet: it is
 * mapped when the guest connects, or lazily on the first DMA, and
 * unmapped when the guest goes away (the next VM may use a new file).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "platform/gmem.h"

#define GMEM_RETRY_NS	1000000000ull

void gmem_init(struct gmem *g, const char *path, uint64_t limit)
{
	memset(g, 0, sizeof(*g));
	g->path = path ? strdup(path) : NULL;
	g->limit = limit;
}

int gmem_map_fd(struct gmem *g, int fd, uint64_t size)
{
	void *base;

	if (!size || size > SIZE_MAX)
		return -EINVAL;
	gmem_unmap(g);
	base = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED,
		    fd, 0);
	if (base == MAP_FAILED)
		return -errno;
	g->base = base;
	g->size = size;
	return 0;
}

int gmem_map(struct gmem *g)
{
	struct stat st;
	uint64_t size;
	int fd, ret;

	if (g->base)
		return 0;
	if (!g->path)
		return -ENODEV;
	fd = open(g->path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto out;
	}
	/*
	 * Never map past the end of the file: touching such a page would
	 * SIGBUS. The DMA bound is the smaller of file and configured size.
	 */
	size = (uint64_t)st.st_size;
	if (g->limit && g->limit < size)
		size = g->limit;
	if (!size) {
		ret = -ENODATA;
		goto out;
	}
	ret = gmem_map_fd(g, fd, size);
out:
	close(fd);
	return ret;
}

void gmem_try_map(struct gmem *g, uint64_t now_ns)
{
	if (g->base || !g->path || now_ns < g->next_try_ns)
		return;
	g->next_try_ns = now_ns + GMEM_RETRY_NS;
	gmem_map(g);
}

void gmem_unmap(struct gmem *g)
{
	if (g->base)
		munmap(g->base, (size_t)g->size);
	g->base = NULL;
	g->size = 0;
	g->next_try_ns = 0;
}

void gmem_fini(struct gmem *g)
{
	gmem_unmap(g);
	free(g->path);
	g->path = NULL;
}

/* The one bounds check: written so that gpa + len cannot wrap. */
static int gmem_check(struct gmem *g, uint64_t gpa, size_t len)
{
	if (!g->base) {
		g->no_mem++;
		return -ENODEV;
	}
	if ((uint64_t)len > g->size || gpa > g->size - (uint64_t)len) {
		g->faults++;
		return -EFAULT;
	}
	return 0;
}

int gmem_read(struct gmem *g, uint64_t gpa, void *buf, size_t len)
{
	int ret = gmem_check(g, gpa, len);

	if (ret)
		return ret;
	memcpy(buf, g->base + gpa, len);
	g->read_bytes += len;
	return 0;
}

int gmem_write(struct gmem *g, uint64_t gpa, const void *buf, size_t len)
{
	int ret = gmem_check(g, gpa, len);

	if (ret)
		return ret;
	memcpy(g->base + gpa, buf, len);
	g->write_bytes += len;
	return 0;
}

void *gmem_ptr(struct gmem *g, uint64_t gpa, size_t len)
{
	if (gmem_check(g, gpa, len))
		return NULL;
	return g->base + gpa;
}
