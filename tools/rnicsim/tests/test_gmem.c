// SPDX-License-Identifier: GPL-2.0
/*
 * Guest RAM: every DMA range is checked against the mapping without
 * overflow, a bad one is refused and counted, and the file is mapped
 * lazily, bounded by the smaller of file and configured size.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "platform/gmem.h"
#include "test.h"

#define RAM	(1u << 20)

TEST(gmem_bounds_and_wrap)
{
	static uint8_t buf[8192];
	struct gmem g;
	int fd;

	gmem_init(&g, NULL, 0);
	/* Nothing mapped yet: -ENODEV, counted apart from bad addresses. */
	CHECK_EQ(gmem_read(&g, 0, buf, 1), -ENODEV);
	CHECK(gmem_ptr(&g, 0, 1) == NULL);
	CHECK_EQ(g.no_mem, 2);
	fd = memfd_create("gmem-test", 0);
	REQUIRE(fd >= 0 && ftruncate(fd, RAM) == 0);
	REQUIRE(gmem_map_fd(&g, fd, RAM) == 0);
	close(fd);

	memset(buf, 0xab, sizeof(buf));
	CHECK_EQ(gmem_write(&g, RAM - 8192, buf, 8192), 0);
	memset(buf, 0, sizeof(buf));
	CHECK_EQ(gmem_read(&g, RAM - 1, buf, 1), 0);
	CHECK_EQ(buf[0], 0xab);
	CHECK_EQ(gmem_read(&g, 0, buf, 0), 0);
	CHECK_EQ(gmem_read(&g, RAM, buf, 0), 0);	/* empty, at the end */
	CHECK(gmem_ptr(&g, RAM - 4096, 4096) == g.base + RAM - 4096);
	CHECK_EQ(g.faults, 0);

	/* Just past the end, wholly past it, and ranges that would wrap. */
	CHECK_EQ(gmem_read(&g, RAM - 1, buf, 2), -EFAULT);
	CHECK_EQ(gmem_read(&g, RAM, buf, 1), -EFAULT);
	CHECK_EQ(gmem_write(&g, UINT64_MAX, buf, 2), -EFAULT);
	CHECK_EQ(gmem_write(&g, UINT64_MAX - 4095, buf, 8192), -EFAULT);
	CHECK_EQ(gmem_read(&g, 4096, buf, SIZE_MAX), -EFAULT);
	CHECK_EQ(gmem_read(&g, 1ull << 63, buf, 16), -EFAULT);
	CHECK(gmem_ptr(&g, RAM - 4095, 4096) == NULL);
	CHECK(gmem_ptr(&g, UINT64_MAX - 7, 16) == NULL);
	CHECK(gmem_ptr(&g, 0, SIZE_MAX) == NULL);
	CHECK_EQ(g.faults, 9);
	/* A refused write touched nothing. */
	CHECK_EQ(g.base[0], 0);
	gmem_fini(&g);
}

TEST(gmem_lazy_file_mapping)
{
	char path[256];
	uint8_t b = 0;
	struct gmem g;
	int fd;

	snprintf(path, sizeof(path), "%s/guest-ram", test_tmpdir());
	gmem_init(&g, path, 256 * 1024);
	/* QEMU has not created the file yet. */
	CHECK_EQ(gmem_map(&g), -ENOENT);
	gmem_try_map(&g, 1);
	CHECK(g.base == NULL);
	fd = open(path, O_RDWR | O_CREAT, 0600);
	REQUIRE(fd >= 0);
	/* Still empty: nothing to map. */
	CHECK_EQ(gmem_map(&g), -ENODATA);
	REQUIRE(ftruncate(fd, 1 << 20) == 0);
	/* Retried at most once a second on the DMA path. */
	gmem_try_map(&g, 2);
	CHECK(g.base == NULL);
	gmem_try_map(&g, 2000000002ull);
	REQUIRE(g.base != NULL);
	/* The configured size bounds DMA even though the file is bigger. */
	CHECK_EQ(g.size, 256 * 1024);
	CHECK_EQ(gmem_read(&g, 256 * 1024, &b, 1), -EFAULT);
	/* What the guest writes is what the model reads, and back. */
	REQUIRE(pwrite(fd, "guest", 5, 4096) == 5);
	CHECK_MEM_EQ(g.base + 4096, "guest", 5);
	CHECK_EQ(gmem_write(&g, 100, "model", 5), 0);
	{
		char rb[5];

		REQUIRE(pread(fd, rb, 5, 100) == 5);
		CHECK_MEM_EQ(rb, "model", 5);
	}
	gmem_unmap(&g);
	/* A file smaller than configured: never map past its end. */
	REQUIRE(ftruncate(fd, 64 * 1024) == 0);
	CHECK_EQ(gmem_map(&g), 0);
	CHECK_EQ(g.size, 64 * 1024);
	close(fd);
	gmem_fini(&g);
}
