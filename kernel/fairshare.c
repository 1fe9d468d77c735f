// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The receiver fair share of a device (kernel/core/share.c does the
 * arithmetic): every epoch the device's inbound capacity is divided among
 * the connections sending to it, and each connection's ACKs carry its share
 * as a rate hint.  The capacity is the capacity_mbps parameter or, when it
 * is 0, the netdev's link speed; an unknown speed means no hints at all.
 *
 * share_lock keeps the member list stable for the epoch, which only reads
 * the members' counters and writes their hint (a word the connection reads
 * under its own lock; a stale hint for one ACK is harmless).
 */
#include <linux/ethtool.h>
#include <linux/rtnetlink.h>

#include "metaroce.h"

/*
 * An epoch with at most one sender: look again this many epochs later.
 * One sender's share is the whole capacity, whatever its rate; a second
 * one lowers the hint at its first packet (mroce_share_rx), not at the
 * epoch.  Every epoch is a timer interrupt and a softirq on a CPU that
 * may be busy polling, and a latency-bound exchange whose packet meets
 * one waits for it, so epochs run only while they can change a hint:
 * none with at most one member (mroce_share_wants_epochs()), and rarely
 * with one sender.
 */
#define MROCE_SHARE_IDLE_EPOCHS	10

static u64 share_epoch_ns(void)
{
	return max_t(u64, (u64)READ_ONCE(mroce_share_epoch_us) *
		     NSEC_PER_USEC, 10 * NSEC_PER_USEC);
}

static enum hrtimer_restart share_timer_fn(struct hrtimer *t)
{
	struct mroce_dev *mdev = container_of(t, struct mroce_dev,
					      share_timer);
	u64 epoch = share_epoch_ns();
	bool run;

	spin_lock(&mdev->share_lock);
	mroce_share_set_epoch(mdev->share, epoch);
	mroce_share_epoch(mdev->share, ktime_get_ns());
	run = mroce_share_wants_epochs(mdev->share);
	if (!run)
		mroce_share_pause(mdev->share);
	else if (mroce_share_get_nactive(mdev->share) <= 1)
		epoch *= MROCE_SHARE_IDLE_EPOCHS;
	mdev->share_armed = run;
	spin_unlock(&mdev->share_lock);
	if (!run)
		return HRTIMER_NORESTART;
	hrtimer_forward_now(t, ns_to_ktime(epoch));
	return HRTIMER_RESTART;
}

/*
 * Not hrtimer_active(): that is still true while the callback returns
 * NORESTART, so a connection joining then would find no timer.  Starting
 * the timer while its callback runs is allowed; the NORESTART then leaves
 * the new expiry queued.
 */
static void share_kick(struct mroce_dev *mdev)
{
	lockdep_assert_held(&mdev->share_lock);
	if (mroce_share_wants_epochs(mdev->share) && !mdev->share_armed) {
		mdev->share_armed = true;
		mroce_share_resume(mdev->share, ktime_get_ns());
		hrtimer_start(&mdev->share_timer,
			      ns_to_ktime(share_epoch_ns()),
			      HRTIMER_MODE_REL_SOFT);
	}
}

void mroce_share_setup(struct mroce_dev *mdev)
{
	spin_lock_init(&mdev->share_lock);
	mroce_share_init(mdev->share, 0, share_epoch_ns(), ktime_get_ns());
	hrtimer_init(&mdev->share_timer, CLOCK_MONOTONIC,
		     HRTIMER_MODE_REL_SOFT);
	mdev->share_timer.function = share_timer_fn;
}

void mroce_share_add(struct mroce_dev *mdev, struct mroce_conn *conn)
{
	spin_lock_bh(&mdev->share_lock);
	/* a change of the parameter applies from the next connection on */
	mroce_share_set_grants(mdev->share,
			       !!READ_ONCE(mroce_share_grants));
	mroce_share_join(mdev->share, conn);
	share_kick(mdev);
	spin_unlock_bh(&mdev->share_lock);
}

void mroce_share_del(struct mroce_dev *mdev, struct mroce_conn *conn)
{
	spin_lock_bh(&mdev->share_lock);
	mroce_share_leave(conn);
	spin_unlock_bh(&mdev->share_lock);
}

void mroce_share_stop(struct mroce_dev *mdev)
{
	hrtimer_cancel(&mdev->share_timer);
}

/* Under RTNL (the link speed is read through ethtool). */
void mroce_share_set_capacity(struct mroce_dev *mdev)
{
	struct ethtool_link_ksettings ks;
	u64 cap = 0, mbps = READ_ONCE(mroce_capacity_mbps), link = 0;

	ASSERT_RTNL();
	if (!__ethtool_get_link_ksettings(mdev->ndev, &ks) &&
	    ks.base.speed != SPEED_UNKNOWN)
		link = ks.base.speed;
	if (!mbps)
		mbps = link;
	cap = mbps * 1000000 / 8;
	/* what new connections' pacers compare hints with (params.c) */
	WRITE_ONCE(mdev->line_rate, (u32)min_t(u64, link * 125, U32_MAX - 1));
	spin_lock_bh(&mdev->share_lock);
	mdev->capacity = cap;
	mroce_share_set_inbound(mdev->share, cap);
	share_kick(mdev);
	spin_unlock_bh(&mdev->share_lock);
}
