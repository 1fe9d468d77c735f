// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Receiver half of a path: which psns arrived.  The state is a cumulative
 * point and a 256-bit ring (bit psn % 256) for the psns above it.
 *
 * Retransmissions travel with new psns, so holes are never filled by the
 * packet that left them.  The sender never has more than 256 unresolved
 * psns on a path, so a psn q proves that everything at or below q - 256 is
 * resolved at the sender (acknowledged or given up): the cumulative point
 * is dragged up to q - 255 and stale holes disappear on their own.
 */
#include "path.h"

static inline bool ring_test(const u64 *bits, u32 psn)
{
	u32 pos = psn % MROCE_PATH_WINDOW;

	return bits[pos / 64] >> (pos % 64) & 1;
}

static inline void ring_set(u64 *bits, u32 psn)
{
	u32 pos = psn % MROCE_PATH_WINDOW;

	bits[pos / 64] |= 1ull << (pos % 64);
}

static inline void ring_clear(u64 *bits, u32 psn)
{
	u32 pos = psn % MROCE_PATH_WINDOW;

	bits[pos / 64] &= ~(1ull << (pos % 64));
}

/*
 * out bit i = in bit (i + r) % 256.  Straight-line and branch-free: the
 * word loop with a zero-shift branch cost ~80 instructions per call, once
 * per path block an ACK carries and once per block it acknowledges.
 * (hi << 1 << (63 - s) is hi << (64 - s), and 0 when s is 0.)
 */
_Static_assert(MROCE_SACK_WORDS == 4, "rotate_right is unrolled for 4 words");
static inline void rotate_right(const u64 in[MROCE_SACK_WORDS], u32 r,
				u64 out[MROCE_SACK_WORDS])
{
	u32 q = r / 64 % MROCE_SACK_WORDS, s = r % 64, t = 63 - s;
	u64 w0 = in[q], w1 = in[(q + 1) % MROCE_SACK_WORDS];
	u64 w2 = in[(q + 2) % MROCE_SACK_WORDS];
	u64 w3 = in[(q + 3) % MROCE_SACK_WORDS];

	out[0] = w0 >> s | w1 << 1 << t;
	out[1] = w1 >> s | w2 << 1 << t;
	out[2] = w2 >> s | w3 << 1 << t;
	out[3] = w3 >> s | w0 << 1 << t;
}

enum mroce_sack_result mroce_sack_check(const struct mroce_path *p, u32 psn)
{
	u32 d = psn - p->rcv_cum;

	if ((s32)d < 0)
		return MROCE_SACK_LATE;
	/* the forced advance clears psn's bit (that of psn - 256): news */
	if (d >= MROCE_PATH_WINDOW)
		return MROCE_SACK_FAR;
	return ring_test(p->rcv_bits, psn) ? MROCE_SACK_DUP : MROCE_SACK_NEW;
}

void mroce_sack_commit(struct mroce_path *p, u32 psn)
{
	u32 d = psn - p->rcv_cum;

	if ((s32)d >= 0 && d >= MROCE_PATH_WINDOW) {
		u32 floor = psn - (MROCE_PATH_WINDOW - 1);

		if (floor - p->rcv_cum >= MROCE_PATH_WINDOW)
			memset(p->rcv_bits, 0, sizeof(p->rcv_bits));
		else
			for (; p->rcv_cum != floor; p->rcv_cum++)
				ring_clear(p->rcv_bits, p->rcv_cum);
		p->rcv_cum = floor;
	}
	ring_set(p->rcv_bits, psn);
	while (ring_test(p->rcv_bits, p->rcv_cum)) {
		ring_clear(p->rcv_bits, p->rcv_cum);
		p->rcv_cum++;
	}
}

enum mroce_sack_result mroce_sack_rx(struct mroce_path *p, u32 psn)
{
	enum mroce_sack_result r = mroce_sack_check(p, psn);

	if (r == MROCE_SACK_NEW || r == MROCE_SACK_FAR) {
		mroce_sack_commit(p, psn);
		return MROCE_SACK_NEW;
	}
	return r;
}

void mroce_sack_fill(const struct mroce_path *p, struct mroce_ack_path *ap,
		     u64 now)
{
	ap->path = p->id;
	ap->cum_psn = p->rcv_cum;
	ap->echo_ts = p->rcv_last_ts;
	ap->ack_delay = (u32)MROCE_MIN(now - p->rcv_last_ns, 0xffffffffull);
	ap->ce_count = p->rcv_ce;
	ap->rcv_count = p->rcv_count;
	rotate_right(p->rcv_bits, (p->rcv_cum + 1) % MROCE_PATH_WINDOW,
		     ap->sack);
}

void mroce_sack_put(const struct mroce_path *p, void *buf, u64 now)
{
	struct mroce_ack_path ap;

	mroce_sack_fill(p, &ap, now);
	mroce_wire_put_ack_path(&ap, buf);
}

void mroce_sack_to_ring(const u64 in[MROCE_SACK_WORDS], u32 base,
			u64 out[MROCE_SACK_WORDS])
{
	u32 r = base % MROCE_PATH_WINDOW;

	rotate_right(in, (MROCE_PATH_WINDOW - r) % MROCE_PATH_WINDOW, out);
}
