// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Mapping the rings the kernel allocated: every size in a create response
 * is checked before the ring is used, so a kernel/provider mismatch fails
 * the create with EPROTO instead of corrupting memory.
 */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mroce.h"

/* Upper bound on entries per ring, far above any device limit. */
#define MROCE_RING_MAX_ENTRIES (1u << 24)

int mroce_ring_map(struct mroce_uring *r, int cmd_fd,
		   const struct mroce_mmap_info *mi, uint32_t num,
		   uint32_t stride, uint32_t min_stride)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t need;
	void *p;

	if (!num || num > MROCE_RING_MAX_ENTRIES || (num & (num - 1)))
		return EPROTO;
	if (stride < min_stride || stride % 8)
		return EPROTO;
	need = MROCE_RING_HDR_SIZE + (uint64_t)num * stride;
	if (mi->size < need || (page > 0 && mi->offset % (uint64_t)page))
		return EPROTO;

	p = mmap(NULL, mi->size, PROT_READ | PROT_WRITE, MAP_SHARED, cmd_fd,
		 (off_t)mi->offset);
	if (p == MAP_FAILED)
		return errno;
	r->hdr = p;
	r->entries = (uint8_t *)p + MROCE_RING_HDR_SIZE;
	r->map_len = mi->size;
	r->num = num;
	r->stride = stride;
	return 0;
}

void mroce_ring_unmap(struct mroce_uring *r)
{
	if (r->hdr)
		munmap(r->hdr, r->map_len);
	r->hdr = NULL;
	r->num = 0;
}
