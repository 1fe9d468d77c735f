// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory regions.  A user MR pins its pages (ib_umem) and keeps a page
 * array; the DMA MR of a kernel PD covers kernel virtual addresses (the
 * device uses virtual DMA) and allows local access only.  lkey == rkey:
 * the low 8 bits are a tag that changes with every registration, the rest
 * is the index in the device's xarray, so a stale key misses.
 *
 * Lookups run under RCU on the datapath and check key, PD, access rights
 * and bounds every time; deregistration unpublishes the key and waits for
 * a grace period before unpinning, so a copy in progress always finishes
 * on pinned pages.
 */
#include <linux/highmem.h>
#include <linux/overflow.h>
#include <linux/random.h>
#include <rdma/ib_umem.h>

#include "metaroce.h"

#define MROCE_KEY_TAG_BITS	8

static int mr_publish(struct mroce_dev *mdev, struct mroce_mr *mr)
{
	u32 idx;
	int err;

	if (atomic_inc_return(&mdev->num_mrs) > MROCE_MAX_MR) {
		atomic_dec(&mdev->num_mrs);
		return -ENOMEM;
	}
	/*
	 * The lowest free index keeps the xarray, looked up per packet, as
	 * shallow as the live regions allow.  The tag moves on with every
	 * registration, so the key of a region just deregistered does not
	 * name the next one at its index (until 256 more registrations).
	 */
	err = xa_alloc(&mdev->mrs, &idx, NULL,
		       XA_LIMIT(1, (1u << (32 - MROCE_KEY_TAG_BITS)) - 1),
		       GFP_KERNEL);
	if (err < 0) {
		atomic_dec(&mdev->num_mrs);
		return err;
	}
	mr->ibmr.lkey = idx << MROCE_KEY_TAG_BITS |
			((u32)atomic_inc_return(&mdev->mr_tag) &
			 ((1u << MROCE_KEY_TAG_BITS) - 1));
	mr->ibmr.rkey = mr->ibmr.lkey;
	/* Visible to lookups only once complete. */
	xa_store(&mdev->mrs, idx, mr, GFP_KERNEL);
	return 0;
}

static void mr_unpublish(struct mroce_dev *mdev, struct mroce_mr *mr)
{
	xa_erase(&mdev->mrs, mr->ibmr.lkey >> MROCE_KEY_TAG_BITS);
	synchronize_rcu();
	atomic_dec(&mdev->num_mrs);
}

struct ib_mr *mroce_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct mroce_dev *mdev = to_mdev(ibpd->device);
	struct mroce_mr *mr;
	int err;

	/* No global rkey: remote access needs a registered region. */
	if (access & ~IB_ACCESS_LOCAL_WRITE)
		return ERR_PTR(-EOPNOTSUPP);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->mdev = mdev;
	mr->pd = to_mpd(ibpd);
	mr->kind = MROCE_MR_DMA;
	mr->access = access;
	mr->length = U64_MAX;
	err = mr_publish(mdev, mr);
	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

struct ib_mr *mroce_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata)
{
	struct mroce_dev *mdev = to_mdev(ibpd->device);
	struct sg_page_iter iter;
	struct ib_umem *umem;
	struct mroce_mr *mr;
	unsigned long i = 0;
	int err;

	if (access & ~(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
		       IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC))
		return ERR_PTR(-EOPNOTSUPP);
	if (!length || length > MROCE_MAX_MR_SIZE || iova + length < iova)
		return ERR_PTR(-EINVAL);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	umem = ib_umem_get(ibpd->device, start, length, access);
	if (IS_ERR(umem)) {
		err = PTR_ERR(umem);
		goto err_free;
	}
	mr->npages = ib_umem_num_pages(umem);
	mr->pages = kvmalloc_array(mr->npages, sizeof(*mr->pages), GFP_KERNEL_ACCOUNT);
	if (!mr->pages) {
		err = -ENOMEM;
		goto err_umem;
	}
	for_each_sgtable_page(&umem->sgt_append.sgt, &iter, 0) {
		if (i == mr->npages)
			break;
		mr->pages[i++] = sg_page_iter_page(&iter);
	}
	if (i != mr->npages) {
		err = -EFAULT;
		goto err_pages;
	}
	mr->mdev = mdev;
	mr->pd = to_mpd(ibpd);
	mr->kind = MROCE_MR_USER;
	mr->access = access;
	mr->iova = iova;
	mr->length = length;
	mr->offset = ib_umem_offset(umem);
	mr->umem = umem;
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	err = mr_publish(mdev, mr);
	if (err)
		goto err_pages;
	return &mr->ibmr;

err_pages:
	kvfree(mr->pages);
err_umem:
	ib_umem_release(umem);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

int mroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct mroce_mr *mr = to_mmr(ibmr);

	mr_unpublish(mr->mdev, mr);
	if (mr->umem) {
		ib_umem_release(mr->umem);
		kvfree(mr->pages);
	}
	kfree(mr);
	return 0;
}

/*
 * The region behind @key if it belongs to @pd, grants @access (0 for a
 * local read) and covers [iova, iova + len).  Caller holds rcu_read_lock()
 * for as long as it uses the result.
 */
struct mroce_mr *mroce_mr_lookup(struct mroce_dev *mdev, u32 key,
				 struct mroce_pd *pd, int access, u64 iova,
				 u64 len)
{
	struct mroce_mr *mr;
	u64 end;

	RCU_LOCKDEP_WARN(!rcu_read_lock_any_held(),
			 "MR lookup outside an RCU read-side section");
	mr = xa_load(&mdev->mrs, key >> MROCE_KEY_TAG_BITS);
	if (!mr || mr->ibmr.lkey != key || mr->pd != pd)
		return NULL;
	if ((mr->access & access) != access)
		return NULL;
	if (mr->kind == MROCE_MR_DMA)
		return mr;
	if (check_add_overflow(iova, len, &end) || iova < mr->iova ||
	    end > mr->iova + mr->length)
		return NULL;
	return mr;
}

/* Page and offset in it of @iova; the lookup checked the bounds. */
static struct page *mr_page(struct mroce_mr *mr, u64 iova, u32 *off)
{
	u64 pos = iova - mr->iova + mr->offset;

	*off = pos & ~PAGE_MASK;
	return mr->pages[pos >> PAGE_SHIFT];
}

void mroce_mr_copy_in(struct mroce_mr *mr, u64 iova, const void *src,
		      u32 len)
{
	u32 off, n;
	void *va;

	if (mr->kind == MROCE_MR_DMA) {
		memcpy((void *)(uintptr_t)iova, src, len);
		return;
	}
	while (len) {
		struct page *pg = mr_page(mr, iova, &off);

		n = min_t(u32, len, PAGE_SIZE - off);
		va = kmap_local_page(pg);
		memcpy(va + off, src, n);
		kunmap_local(va);
		iova += n;
		src += n;
		len -= n;
	}
}

void mroce_mr_copy_out(struct mroce_mr *mr, u64 iova, void *dst, u32 len)
{
	u32 off, n;
	void *va;

	if (mr->kind == MROCE_MR_DMA) {
		memcpy(dst, (void *)(uintptr_t)iova, len);
		return;
	}
	while (len) {
		struct page *pg = mr_page(mr, iova, &off);

		n = min_t(u32, len, PAGE_SIZE - off);
		va = kmap_local_page(pg);
		memcpy(dst, va + off, n);
		kunmap_local(va);
		iova += n;
		dst += n;
		len -= n;
	}
}

/* Place @len bytes of @skb at @off into the region: the one copy. */
int mroce_mr_copy_skb(struct mroce_mr *mr, u64 iova,
		      const struct sk_buff *skb, u32 off, u32 len)
{
	u32 poff, n;
	void *va;
	int err;

	if (mr->kind == MROCE_MR_DMA)
		return skb_copy_bits(skb, off, (void *)(uintptr_t)iova, len);
	while (len) {
		struct page *pg = mr_page(mr, iova, &poff);

		n = min_t(u32, len, PAGE_SIZE - poff);
		va = kmap_local_page(pg);
		err = skb_copy_bits(skb, off, va + poff, n);
		kunmap_local(va);
		if (err)
			return err;
		iova += n;
		off += n;
		len -= n;
	}
	return 0;
}

/*
 * Append [iova, iova + len) of the region to @skb as page fragments, each
 * holding a reference on its page: the payload is sent without a copy (the
 * receiver's placement is then the only one).  The pages stay valid while
 * the skb lives, even if the region is deregistered meanwhile; their
 * contents may change only if the application reuses the buffer before
 * the work request completes, which verbs leaves undefined anyway.
 * -EAGAIN: not possible here (kernel memory, or no fragment slot left);
 * the caller copies instead.
 */
int mroce_mr_attach(struct mroce_mr *mr, u64 iova, u32 len,
		    struct sk_buff *skb)
{
	struct skb_shared_info *sh = skb_shinfo(skb);
	skb_frag_t *last;
	struct page *pg;
	u32 off, n;

	if (mr->kind == MROCE_MR_DMA)
		return -EAGAIN;
	while (len) {
		pg = mr_page(mr, iova, &off);
		n = min_t(u32, len, PAGE_SIZE - off);
		last = sh->nr_frags ? &sh->frags[sh->nr_frags - 1] : NULL;
		if (last && skb_frag_page(last) == pg &&
		    skb_frag_off(last) + skb_frag_size(last) == off) {
			skb_frag_size_add(last, n);
		} else {
			if (sh->nr_frags >= MAX_SKB_FRAGS)
				return -EAGAIN;
			get_page(pg);
			skb_fill_page_desc(skb, sh->nr_frags, pg, off, n);
		}
		skb->len += n;
		skb->data_len += n;
		skb->truesize += n;
		iova += n;
		len -= n;
	}
	return 0;
}

/*
 * The 8-byte word at @iova (8-byte aligned, so within one page), mapped;
 * the caller passes *map to kunmap_local() when done.
 */
u64 *mroce_mr_atomic_ptr(struct mroce_mr *mr, u64 iova, void **map)
{
	struct page *pg;
	u32 off;

	if (mr->kind == MROCE_MR_DMA) {
		*map = NULL;
		return (u64 *)(uintptr_t)iova;
	}
	pg = mr_page(mr, iova, &off);
	*map = kmap_local_page(pg);
	return *map + off;
}

/*
 * Scatter/gather lists of local memory (send and receive buffers).  Each
 * chunk is looked up when it is used: key, PD, access and bounds.
 */

/*
 * Read @len bytes at @offset of the list (a local read): copied into @dst,
 * or, when @skb is given, attached to it as page fragments
 * (mroce_mr_attach; -EAGAIN: copy instead).  -EFAULT if a chunk's region
 * is gone.
 */
int mroce_sgl_read(struct mroce_dev *mdev, struct mroce_pd *pd,
		   const struct mroce_sge *sgl, u32 n, u32 offset, void *dst,
		   struct sk_buff *skb, u32 len)
{
	struct mroce_mr *mr;
	u32 i, chunk;
	int err = 0;

	for (i = 0; i < n && len; i++) {
		if (offset >= sgl[i].length) {
			offset -= sgl[i].length;
			continue;
		}
		chunk = min(len, sgl[i].length - offset);
		rcu_read_lock();
		mr = mroce_mr_lookup(mdev, sgl[i].lkey, pd, 0,
				     sgl[i].addr + offset, chunk);
		if (!mr)
			err = -EFAULT;
		else if (skb)
			err = mroce_mr_attach(mr, sgl[i].addr + offset, chunk,
					      skb);
		else
			mroce_mr_copy_out(mr, sgl[i].addr + offset, dst, chunk);
		rcu_read_unlock();
		if (err)
			return err;
		if (dst)
			dst += chunk;
		len -= chunk;
		offset = 0;
	}
	return len ? -EINVAL : 0;
}

/*
 * Write @len bytes at @offset of the list (a local write): from @skb at
 * @off, or from @src when @skb is NULL.
 */
int mroce_sgl_write(struct mroce_dev *mdev, struct mroce_pd *pd,
		    const struct mroce_sge *sgl, u32 n, u32 offset,
		    const struct sk_buff *skb, u32 off, const void *src,
		    u32 len)
{
	struct mroce_mr *mr;
	u32 i, chunk;
	int err = 0;

	for (i = 0; i < n && len; i++) {
		if (offset >= sgl[i].length) {
			offset -= sgl[i].length;
			continue;
		}
		chunk = min(len, sgl[i].length - offset);
		rcu_read_lock();
		mr = mroce_mr_lookup(mdev, sgl[i].lkey, pd,
				     IB_ACCESS_LOCAL_WRITE,
				     sgl[i].addr + offset, chunk);
		if (!mr)
			err = -EFAULT;
		else if (skb)
			err = mroce_mr_copy_skb(mr, sgl[i].addr + offset, skb,
						off, chunk);
		else
			mroce_mr_copy_in(mr, sgl[i].addr + offset, src, chunk);
		rcu_read_unlock();
		if (err)
			return err;
		if (skb)
			off += chunk;
		else
			src += chunk;
		len -= chunk;
		offset = 0;
	}
	return len ? -EINVAL : 0;
}
