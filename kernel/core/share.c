// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Max-min fair division of a receiver's inbound capacity (see share.h).
 * Water-filling in two linear passes: senders using less than the equal
 * share keep what they use, the rest split what remains.  Two passes are
 * an approximation of the full fixed point that is exact for the common
 * cases (all greedy, or a few light senders beside greedy ones), and keep
 * the epoch O(senders).
 */
#include "internal.h"

void mroce_share_init(struct mroce_share *s, u64 capacity, u64 epoch_ns,
		      u64 now)
{
	memset(s, 0, sizeof(*s));
	s->capacity = capacity;
	s->epoch_ns = epoch_ns ? epoch_ns : 100000;
	s->epoch_start = now;
	s->hint = MROCE_RATE_NONE;
	mroce_list_init(&s->conns);
}

void mroce_share_join(struct mroce_share *s, struct mroce_conn *c)
{
	c->share = s;
	c->share_prev = c->rx_data_bytes;
	c->share_epoch = s->epoch_id - 1;	/* its first data counts */
	c->rx_hint = s->hint;
	mroce_list_add_tail(&c->share_node, &s->conns);
	s->nmembers++;
}

void mroce_share_leave(struct mroce_conn *c)
{
	if (!c->share)
		return;
	mroce_list_del(&c->share_node);
	c->share->nmembers--;
	c->share = NULL;
	c->rx_hint = MROCE_RATE_NONE;
}

void mroce_share_rx(struct mroce_share *s, struct mroce_conn *c)
{
	u32 n, hint;

	if (c->share_epoch == s->epoch_id)
		return;
	c->share_epoch = s->epoch_id;
	n = ++s->cur_active;
	if (!s->capacity || n <= s->nactive)
		return;
	hint = (u32)MROCE_MIN(mroce_div64(mroce_div64(s->capacity, n), 1000),
			      0xfffffffeull);
	if (hint && hint < s->hint)
		s->hint = hint;
}

u32 mroce_share_grant(struct mroce_share *s, struct mroce_conn *c)
{
	u64 g;
	u32 hint;

	if (!s->grants || !s->capacity)
		return 0;
	mroce_share_rx(s, c);
	g = mroce_div64(mroce_div64(s->capacity,
				    MROCE_MAX(MROCE_MAX(s->cur_active,
							s->nmembers), 1u)),
			1000);
	hint = mroce_share_hint(s);
	if (hint != MROCE_RATE_NONE && hint < g)
		g = hint;
	return (u32)MROCE_MAX(MROCE_MIN(g, 0xfffffffeull), 1ull);
}

static u64 member_rate(struct mroce_conn *c, u64 elapsed)
{
	u64 bytes = c->rx_data_bytes - c->share_prev;

	return mroce_div64(bytes * NS_PER_SEC, elapsed);
}

void mroce_share_epoch(struct mroce_share *s, u64 now)
{
	u64 elapsed = now - s->epoch_start, fair = 0, light = 0, rate;
	u32 n = 0, nlight = 0, pass, hint;
	struct mroce_list *pos;
	struct mroce_conn *c;

	if (!elapsed)
		return;
	for (pos = s->conns.next; pos != &s->conns; pos = pos->next) {
		c = mroce_list_entry(pos, struct mroce_conn, share_node);
		c->share_rate = member_rate(c, elapsed);
		c->share_prev = c->rx_data_bytes;
		if (c->share_rate)
			n++;
	}
	s->nactive = n;
	s->cur_active = 0;
	s->epoch_id++;
	s->epoch_start = now;
	s->epochs++;
	if (!s->capacity || !n) {
		s->hint = MROCE_RATE_NONE;
		goto apply;
	}

	fair = mroce_div64(s->capacity, n);
	for (pass = 0; pass < 2 && n > nlight; pass++) {
		light = 0;
		nlight = 0;
		for (pos = s->conns.next; pos != &s->conns; pos = pos->next) {
			c = mroce_list_entry(pos, struct mroce_conn,
					     share_node);
			rate = c->share_rate;
			/*
			 * Clearly below its share for two epochs running: it is
			 * not the bottleneck.  One epoch is not enough: right
			 * after an incast many senders are held back by their
			 * windows or by loss repair, not by lack of data.
			 */
			if (rate && rate < fair - fair / 8 && c->share_light) {
				light += rate;
				nlight++;
			}
		}
		if (nlight < n && light < s->capacity)
			fair = mroce_div64(s->capacity - light, n - nlight);
	}
	/*
	 * After an epoch in which we drained a queue, keep 1/32 of the port
	 * spare: at exactly the port, senders a window holds back to the
	 * ACK clock run a little above their hints, and the queue creeps
	 * back above the marking threshold.
	 */
	if (s->drained)
		fair -= fair / 32;
	hint = (u32)MROCE_MIN(mroce_div64(fair, 1000), 0xfffffffeull);
	s->hint = hint ? hint : 1;
	/*
	 * Remember who was light against the equal share, for next epoch.
	 * Not in an epoch in which we cut the hints to drain our queue: the
	 * senders were held back by us, and the water-fill would hand the
	 * few that were not what the others did not use, and refill it.
	 */
	fair = mroce_div64(s->capacity, n);
	for (pos = s->conns.next; pos != &s->conns; pos = pos->next) {
		c = mroce_list_entry(pos, struct mroce_conn, share_node);
		c->share_light = !s->drained && c->share_rate &&
				 c->share_rate < fair - fair / 8;
	}
apply:
	s->drained = 0;
	for (pos = s->conns.next; pos != &s->conns; pos = pos->next) {
		c = mroce_list_entry(pos, struct mroce_conn, share_node);
		c->rx_hint = s->hint;
	}
}

void mroce_share_pause(struct mroce_share *s)
{
	struct mroce_list *pos;
	struct mroce_conn *c;

	s->hint = MROCE_RATE_NONE;
	s->nactive = 0;
	s->cur_active = 0;
	s->drained = 0;
	s->epoch_id++;		/* every member's next data counts anew */
	for (pos = s->conns.next; pos != &s->conns; pos = pos->next) {
		c = mroce_list_entry(pos, struct mroce_conn, share_node);
		c->rx_hint = MROCE_RATE_NONE;
		c->share_light = 0;
	}
}

void mroce_share_resume(struct mroce_share *s, u64 now)
{
	struct mroce_list *pos;
	struct mroce_conn *c;

	s->epoch_start = now;
	for (pos = s->conns.next; pos != &s->conns; pos = pos->next) {
		c = mroce_list_entry(pos, struct mroce_conn, share_node);
		c->share_prev = c->rx_data_bytes;
	}
}

size_t mroce_share_size(void)
{
	return sizeof(struct mroce_share);
}

u64 mroce_share_deadline(const struct mroce_share *s)
{
	return s->epoch_start + s->epoch_ns;
}

bool mroce_share_wants_epochs(const struct mroce_share *s)
{
	return s->capacity && s->nmembers > 1;
}

void mroce_share_set_inbound(struct mroce_share *s, u64 capacity)
{
	s->capacity = capacity;
}

void mroce_share_set_epoch(struct mroce_share *s, u64 epoch_ns)
{
	s->epoch_ns = epoch_ns;
}

void mroce_share_set_grants(struct mroce_share *s, bool grants)
{
	s->grants = grants;
}

u32 mroce_share_get_nactive(const struct mroce_share *s)
{
	return s->nactive;
}
