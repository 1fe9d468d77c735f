// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Rings shared with the provider: a struct mroce_ring header and fixed-size
 * entries in one vmalloc_user() buffer, mapped through an rdma user mmap
 * entry whose offset goes back in the create response.  The buffer belongs
 * to the mmap entry and is freed with it (mmap_free), after the object is
 * destroyed and the last mapping is gone.  Kernel consumers get the same
 * layout in plain kernel memory.
 */
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <rdma/uverbs_ioctl.h>

#include "metaroce.h"

int mroce_queue_alloc(struct mroce_queue *q, struct ib_udata *udata,
		      u32 entries, u32 stride, struct mroce_mmap_info *mi)
{
	struct mroce_ucontext *uctx;
	struct mroce_mmap *mm;
	int err;

	memset(q, 0, sizeof(*q));
	q->entries = entries;
	q->stride = stride;
	q->size = PAGE_ALIGN(MROCE_RING_HDR_SIZE + (size_t)entries * stride);
	if (!udata) {
		q->hdr = vzalloc(q->size);
		if (!q->hdr)
			return -ENOMEM;
		q->ents = (u8 *)q->hdr + MROCE_RING_HDR_SIZE;
		return 0;
	}

	uctx = rdma_udata_to_drv_context(udata, struct mroce_ucontext, ibuc);
	mm = kzalloc(sizeof(*mm), GFP_KERNEL_ACCOUNT);
	if (!mm)
		return -ENOMEM;
	mm->buf = vmalloc_user(q->size);
	if (!mm->buf) {
		kfree(mm);
		return -ENOMEM;
	}
	err = rdma_user_mmap_entry_insert(&uctx->ibuc, &mm->rdma, q->size);
	if (err) {
		vfree(mm->buf);
		kfree(mm);
		return err;
	}
	q->hdr = mm->buf;
	q->ents = (u8 *)q->hdr + MROCE_RING_HDR_SIZE;
	q->mentry = &mm->rdma;
	mi->offset = rdma_user_mmap_get_offset(&mm->rdma);
	mi->size = q->size;
	mi->reserved = 0;
	return 0;
}

/* The object is gone; a user ring lives on until it is unmapped. */
void mroce_queue_free(struct mroce_queue *q)
{
	if (q->mentry)
		rdma_user_mmap_entry_remove(q->mentry);
	else
		vfree(q->hdr);
	q->mentry = NULL;
	q->hdr = NULL;
	q->ents = NULL;
}

/* Back to empty (QP reset): both indices, whoever owns them. */
void mroce_queue_reset(struct mroce_queue *q)
{
	if (!q->hdr)
		return;
	WRITE_ONCE(q->hdr->prod, 0);
	mroce_ring_store(&q->hdr->cons, 0);
}

int mroce_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *entry;
	struct mroce_mmap *mm;
	int err;

	entry = rdma_user_mmap_entry_get(uctx, vma);
	if (!entry)
		return -EINVAL;
	mm = container_of(entry, struct mroce_mmap, rdma);
	/* The core checked the length against the entry. */
	err = remap_vmalloc_range(vma, mm->buf, 0);
	rdma_user_mmap_entry_put(entry);
	return err;
}

void mroce_mmap_free(struct rdma_user_mmap_entry *entry)
{
	struct mroce_mmap *mm = container_of(entry, struct mroce_mmap, rdma);

	vfree(mm->buf);
	kfree(mm);
}
