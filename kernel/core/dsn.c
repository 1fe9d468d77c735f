// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Data sequence numbers make delivery exactly-once.  Every new stream
 * packet gets the connection's next dsn; a retransmission keeps it (while
 * getting a new psn on whatever path carries it).  The receiver keeps a
 * window of dsns it has seen and drops a packet whose dsn it has seen
 * before, so nothing is placed twice and no atomic runs twice, however many
 * copies the paths deliver.  The sender keeps the same window of
 * acknowledged dsns, so a queued retransmission of something that got
 * through after all is dropped before it is sent.
 */
#include "internal.h"


/*
 * What @dsn is to the receive window [base, base + window), changing
 * nothing.  Below the window, a dsn counts as a duplicate for one window:
 * the sender never sends a dsn a window below its oldest unresolved one,
 * which is at most a window below our base; anything older is no packet
 * of this connection's recent past.  Above it, by less than
 * MROCE_DSN_JUMP_MAX, a jump over dsns the sender abandoned; further is
 * out of window.
 */
enum mroce_dsn_rx mroce_dsn_check(const struct mroce_conn *c, u32 dsn)
{
	u32 d = dsn - c->rx_dsn_base;

	if (d < c->cfg.dsn_window)
		return mroce_bit_test(c->rx_dsn_bits, dsn, MROCE_DSN_MASK) ?
		       MROCE_DSN_DUP : MROCE_DSN_NEW;
	if ((s32)d < 0)
		return -d <= c->cfg.dsn_window ? MROCE_DSN_DUP :
						 MROCE_DSN_OUTSIDE;
	return d < MROCE_DSN_JUMP_MAX ? MROCE_DSN_JUMP : MROCE_DSN_OUTSIDE;
}

void mroce_dsn_commit(struct mroce_conn *c, u32 dsn)
{
	u32 d = dsn - c->rx_dsn_base;

	if (d >= c->cfg.dsn_window) {
		/*
		 * The sender never has a dsn at or beyond its oldest
		 * unresolved one plus the window, so this dsn proves every
		 * dsn up to dsn - window resolved there (received, or
		 * abandoned because its message no longer needed it): drag
		 * the window up, forgetting abandoned holes.  That clears
		 * dsn's own bit (that of dsn - window).
		 */
		u32 floor = dsn - (c->cfg.dsn_window - 1);

		if (floor - c->rx_dsn_base >= c->cfg.dsn_window)
			memset(c->rx_dsn_bits, 0, sizeof(c->rx_dsn_bits));
		else
			for (; c->rx_dsn_base != floor; c->rx_dsn_base++)
				mroce_bit_clear(c->rx_dsn_bits, c->rx_dsn_base,
					  MROCE_DSN_MASK);
		c->rx_dsn_base = floor;
		c->stats.rx_dsn_jumps++;
	}
	mroce_bit_set(c->rx_dsn_bits, dsn, MROCE_DSN_MASK);
	while (mroce_bit_test(c->rx_dsn_bits, c->rx_dsn_base, MROCE_DSN_MASK)) {
		mroce_bit_clear(c->rx_dsn_bits, c->rx_dsn_base, MROCE_DSN_MASK);
		c->rx_dsn_base++;
	}
}

enum mroce_dsn_rx mroce_dsn_rx(struct mroce_conn *c, u32 dsn)
{
	enum mroce_dsn_rx r = mroce_dsn_check(c, dsn);

	if (r != MROCE_DSN_NEW && r != MROCE_DSN_JUMP)
		return r;
	mroce_dsn_commit(c, dsn);
	return MROCE_DSN_NEW;
}

/* Clearing their bits a word at a time: a bit loop was ~15 per dsn. */
void mroce_dsn_tx_advance(struct mroce_conn *c)
{
	u32 una = c->tx_dsn_una + 1, left = c->tx_dsn_nxt - una, pos, s, k;
	u64 *w, run;

	while (left) {
		pos = una & MROCE_DSN_MASK;
		s = pos % 64;
		w = &c->tx_dsn_acked[pos / 64];
		/* acknowledged dsns from una on, up to the word's end */
		run = ~(*w >> s);
		k = run ? mroce_ctz64(run) : 64;
		k = MROCE_MIN(MROCE_MIN(k, 64 - s), left);
		if (!k)
			break;
		*w &= ~((k == 64 ? ~0ull : (1ull << k) - 1) << s);
		una += k;
		left -= k;
		if (s + k < 64)
			break;	/* stopped at a gap or at tx_dsn_nxt */
	}
	c->tx_dsn_una = una;
}
