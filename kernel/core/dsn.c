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

static inline bool bit_test(const u64 *bits, u32 n, u32 mask)
{
	n &= mask;
	return bits[n / 64] >> (n % 64) & 1;
}

static inline void bit_set(u64 *bits, u32 n, u32 mask)
{
	n &= mask;
	bits[n / 64] |= 1ull << (n % 64);
}

static inline void bit_clear(u64 *bits, u32 n, u32 mask)
{
	n &= mask;
	bits[n / 64] &= ~(1ull << (n % 64));
}

#define DSN_MASK	(MROCE_DSN_WINDOW - 1)

bool mroce_dsn_tx_acked(const struct mroce_conn *c, u32 dsn)
{
	if (mroce_seq_lt(dsn, c->tx_dsn_una))
		return true;
	if (!mroce_seq_lt(dsn, c->tx_dsn_nxt))
		return false;
	return bit_test(c->tx_dsn_acked, dsn, DSN_MASK);
}

bool mroce_dsn_tx_ack(struct mroce_conn *c, u32 dsn)
{
	u32 d = dsn - c->tx_dsn_una;

	/* outside [una, nxt) is old or never sent */
	if (d >= c->tx_dsn_nxt - c->tx_dsn_una ||
	    bit_test(c->tx_dsn_acked, dsn, DSN_MASK))
		return false;
	if (d) {	/* una itself is still missing: nothing to advance */
		bit_set(c->tx_dsn_acked, dsn, DSN_MASK);
		return true;
	}
	c->tx_dsn_una++;
	while (c->tx_dsn_una != c->tx_dsn_nxt &&
	       bit_test(c->tx_dsn_acked, c->tx_dsn_una, DSN_MASK)) {
		bit_clear(c->tx_dsn_acked, c->tx_dsn_una, DSN_MASK);
		c->tx_dsn_una++;
	}
	return true;
}

enum mroce_dsn_rx mroce_dsn_rx(struct mroce_conn *c, u32 dsn)
{
	u32 d = dsn - c->rx_dsn_base;

	if ((s32)d < 0)
		return MROCE_DSN_DUP;
	if (d >= c->cfg.dsn_window) {
		/*
		 * The sender never has a dsn at or beyond its oldest
		 * unresolved one plus the window, so this dsn proves every
		 * dsn up to dsn - window resolved there (received, or
		 * abandoned because its message no longer needed it): drag
		 * the window up, forgetting abandoned holes.  (More than 2^31
		 * ahead counts as behind: a duplicate, above.)
		 */
		u32 floor = dsn - (c->cfg.dsn_window - 1);

		if (floor - c->rx_dsn_base >= c->cfg.dsn_window)
			memset(c->rx_dsn_bits, 0, sizeof(c->rx_dsn_bits));
		else
			for (; c->rx_dsn_base != floor; c->rx_dsn_base++)
				bit_clear(c->rx_dsn_bits, c->rx_dsn_base,
					  DSN_MASK);
		c->rx_dsn_base = floor;
		c->stats.rx_dsn_jumps++;
	}
	if (bit_test(c->rx_dsn_bits, dsn, DSN_MASK))
		return MROCE_DSN_DUP;
	bit_set(c->rx_dsn_bits, dsn, DSN_MASK);
	while (bit_test(c->rx_dsn_bits, c->rx_dsn_base, DSN_MASK)) {
		bit_clear(c->rx_dsn_bits, c->rx_dsn_base, DSN_MASK);
		c->rx_dsn_base++;
	}
	return MROCE_DSN_NEW;
}
