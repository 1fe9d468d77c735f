// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Module parameters, debugfs tunables and the configuration of new
 * connections.
 *
 * Module parameters are what an operator sets for a fabric: the port, the
 * number of paths, the payload size, the inbound capacity, the RTO bounds
 * and when a silent peer counts as gone, and the limits on connections
 * remote hosts may hold.  Settings that only experiments and tests change
 * are files in /sys/kernel/debug/metaroce/tunables/; everything else is a
 * constant.  Every settable value has a range, and a value outside it is
 * refused, at load and when written.  Connection settings are read when a
 * connection is made: a change applies to connections made afterwards.
 *
 * The core's mroce_cfg_default() suits hardware-like fabrics (microsecond
 * RTTs, precise timers).  A software endpoint's RTT jumps from tens of
 * microseconds to milliseconds when its CPUs are busy (softirq work waits
 * behind busy-polling applications), and its timers fire tens of
 * microseconds late, so the defaults here are larger: a 20 ms RTO floor,
 * above a busy host's stalls (a spurious RTO resets a path's window and
 * resends all it had in flight), a 50 ms initial RTO, a 100 us delayed
 * ACK, and a pacer burst of 64 packets.
 */
#include <linux/debugfs.h>
#include <linux/module.h>

#include "metaroce.h"

/*
 * A settable unsigned value and the range it accepts.  Readers use
 * READ_ONCE(): a write may come at any time.  zero_ok: 0 (an "off" or
 * "automatic" setting) is accepted below min.
 */
struct mroce_uint {
	unsigned int *val;
	unsigned int min, max;
	bool zero_ok;
};

static int mroce_uint_set(const struct mroce_uint *u, u64 v)
{
	if (v > u->max || (v < u->min && !(v == 0 && u->zero_ok)))
		return -EINVAL;
	WRITE_ONCE(*u->val, v);
	return 0;
}

static int mroce_param_set(const char *s, const struct kernel_param *kp)
{
	unsigned int v;
	int err = kstrtouint(s, 0, &v);

	return err ? err : mroce_uint_set(kp->arg, v);
}

static int mroce_param_get(char *buf, const struct kernel_param *kp)
{
	const struct mroce_uint *u = kp->arg;

	return scnprintf(buf, PAGE_SIZE, "%u\n", READ_ONCE(*u->val));
}

static const struct kernel_param_ops mroce_param_ops = {
	.set = mroce_param_set,
	.get = mroce_param_get,
};

#define MROCE_PARAM(name, var, lo, hi, zero, desc)			\
	static struct mroce_uint mroce_param_##name = {			\
		.val = &(var), .min = (lo), .max = (hi), .zero_ok = (zero), \
	};								\
	module_param_cb(name, &mroce_param_ops, &mroce_param_##name, 0644); \
	MODULE_PARM_DESC(name, desc)

/* Module parameters: what an operator sets (Documentation/parameters.md). */

unsigned short mroce_udp_port = MROCE_UDP_PORT_DEFAULT;
/* Read-only: every netns socket must use the same port for its lifetime. */
module_param_named(udp_port, mroce_udp_port, ushort, 0444);
MODULE_PARM_DESC(udp_port, "UDP port of the MetaRoCE transport, 1-65535, the same on every host (default 4797)");

static unsigned int npaths = 4;
MROCE_PARAM(npaths, npaths, 1, MROCE_MAX_PATHS, false,
	    "paths (UDP source ports) per connection, 1-64: about the number of equal-cost routes between two hosts (default 4)");

unsigned int mroce_payload_max;
MROCE_PARAM(max_payload, mroce_payload_max, MROCE_MIN_PAYLOAD,
	    MROCE_MAX_PAYLOAD, true,
	    "largest data payload per packet, bytes, 256-65535, for a path whose MTU is below the netdev's (default 0: what the netdev MTU allows)");

unsigned int mroce_capacity_mbps;
MROCE_PARAM(capacity_mbps, mroce_capacity_mbps, 1, UINT_MAX, true,
	    "inbound capacity the receiver shares among its senders, Mbit/s (default 0: the netdev's speed; unknown speed: no rate hints)");

static unsigned int rto_init_us = 50000;
MROCE_PARAM(rto_init_us, rto_init_us, 100, 10 * USEC_PER_SEC, false,
	    "initial retransmission timeout, microseconds, 100-10000000, within rto_min_us..rto_max_ms (default 50000)");

static unsigned int rto_min_us = 20000;
MROCE_PARAM(rto_min_us, rto_min_us, 100, 10 * USEC_PER_SEC, false,
	    "minimum retransmission timeout, microseconds, 100-10000000: above the fabric's RTT under load (default 20000)");

static unsigned int rto_max_ms = 500;
MROCE_PARAM(rto_max_ms, rto_max_ms, 1, 60 * MSEC_PER_SEC, false,
	    "maximum retransmission timeout, milliseconds, 1-60000, at least rto_min_us (default 500)");

static unsigned int dead_ms = 2000;
MROCE_PARAM(dead_ms, dead_ms, 100, 3600 * MSEC_PER_SEC, false,
	    "no progress this long with data outstanding (and 3 rounds of RTOs): peer unreachable, its QPs fail, milliseconds, 100-3600000 (default 2000)");

unsigned int mroce_max_peers = 1024;
MROCE_PARAM(max_peers, mroce_max_peers, 0, 1 << 20, false,
	    "connections per device remote hosts may open, 0-1048576 (default 1024)");

unsigned int mroce_host_ce_pkts = 64;
MROCE_PARAM(host_ce_pkts, mroce_host_ce_pkts, 1, 1000000, true,
	    "take packets as CE-marked while this CPU's input backlog holds more, so senders slow down before it drops: below netdev_max_backlog (default 64, 0: never)");

unsigned int mroce_idle_peer_s = 60;
MROCE_PARAM(idle_peer_s, mroce_idle_peer_s, 0, UINT_MAX, false,
	    "a connection without QPs and silent this long is closed, seconds (default 60, 0: never)");

/*
 * Debugfs tunables (/sys/kernel/debug/metaroce/tunables/): behaviour that
 * experiments compare and tests switch; the defaults are what a host runs.
 */

static unsigned int ack_every = 4;
static unsigned int ack_delay_us = 100;
static unsigned int ack_hold_us;
static unsigned int ack_bodies;
static unsigned int tlp_min_us = 2000;
static unsigned int probe_interval_us = 10000;
static unsigned int epoch_ms = 50;
unsigned int mroce_share_epoch_us = 1000;
unsigned int mroce_share_grants = 1;
unsigned int mroce_tx_zerocopy = 1;
/*
 * A deadline a millisecond or more away (a loss timer, an epoch) of a
 * connection that is not losing and has at most a request or response in
 * flight may fire this much late.  With a tick or more such a deadline
 * goes on the timer wheel, which fires it less than two ticks late and
 * never reprograms the clock event device (peer.c): a ping-pong's
 * tail-loss probe deadline moves with every message, and on an hrtimer
 * each move may reprogram it, a costly register write (a VM exit on a
 * virtualised host).  A bulk transfer keeps exact timers: a tail loss
 * found a tick late stalls a window for many RTTs.  0: the timer slack
 * for every deadline.
 */
static unsigned int far_slack_us = USEC_PER_SEC / HZ;

#define MROCE_TUNABLE(name, var, lo, hi)				\
	{ #name, { .val = &(var), .min = (lo), .max = (hi) } }

static const struct mroce_tunable {
	const char *name;
	struct mroce_uint u;
} mroce_tunables[] = {
	/* acknowledge a path after this many packets */
	MROCE_TUNABLE(ack_every, ack_every, 1, MROCE_PATH_WINDOW),
	/* delayed ACK, microseconds */
	MROCE_TUNABLE(ack_delay_us, ack_delay_us, 0, USEC_PER_SEC),
	/* a message's ACK may wait this long for an answer to carry it, us */
	MROCE_TUNABLE(ack_hold_us, ack_hold_us, 0, USEC_PER_SEC),
	/* put owed ACKs on outgoing data packets that have room */
	MROCE_TUNABLE(ack_bodies, ack_bodies, 0, 1),
	/* minimum tail-loss probe timeout, microseconds */
	MROCE_TUNABLE(tlp_min_us, tlp_min_us, 0, 10 * USEC_PER_SEC),
	/* interval of path probes, microseconds */
	MROCE_TUNABLE(probe_interval_us, probe_interval_us, USEC_PER_MSEC,
		      60 * USEC_PER_SEC),
	/* path health epoch, milliseconds */
	MROCE_TUNABLE(epoch_ms, epoch_ms, 1, 60 * MSEC_PER_SEC),
	/* the receiver's fair share epoch, microseconds */
	MROCE_TUNABLE(share_epoch_us, mroce_share_epoch_us, 10,
		      60 * USEC_PER_SEC),
	/* grant a connection a peer opens a first rate in the ACCEPT */
	MROCE_TUNABLE(share_grants, mroce_share_grants, 0, 1),
	/* send payloads in registered memory as page references */
	MROCE_TUNABLE(tx_zerocopy, mroce_tx_zerocopy, 0, 1),
	/* slack of far deadlines of a connection that is not losing */
	MROCE_TUNABLE(far_slack_us, far_slack_us, 0, USEC_PER_SEC),
};

static int mroce_tunable_get(void *data, u64 *val)
{
	const struct mroce_uint *u = data;

	*val = READ_ONCE(*u->val);
	return 0;
}

static int mroce_tunable_set(void *data, u64 val)
{
	return mroce_uint_set(data, val);
}

DEFINE_DEBUGFS_ATTRIBUTE(mroce_tunable_fops, mroce_tunable_get,
			 mroce_tunable_set, "%llu\n");

void mroce_tunables_debugfs(struct dentry *root)
{
	struct dentry *dir = debugfs_create_dir("tunables", root);
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(mroce_tunables); i++)
		debugfs_create_file_unsafe(mroce_tunables[i].name, 0600, dir,
					   (void *)&mroce_tunables[i].u,
					   &mroce_tunable_fops);
}

/*
 * Fixed settings, and why these values.
 *
 * A packet this many psns behind the highest one acknowledged on its path
 * is lost: a path is one route, so a larger distance means loss, not
 * reordering; 3, as TCP, rides out a NIC's or a bond's few-packet
 * reordering.
 */
#define MROCE_DUPTHRESH		3
/*
 * Initial windows, packets: 16 per path (TCP's 10 rounded up: a path is
 * one of several routes of a connection that the peer already answered)
 * and 64 for the connection, 16 on each of the default 4 paths.
 */
#define MROCE_INIT_CWND_PKTS	16
#define MROCE_CONN_CWND_PKTS	64
/*
 * Largest window of a connection, packets: 1024 keeps 8 MiB in flight
 * with 8 KiB payloads, a 10 Gb/s link's bandwidth-delay product at a
 * 6 ms RTT; paths bound it further (npaths * MROCE_PATH_WINDOW).
 */
#define MROCE_MAX_CWND_PKTS	1024
/*
 * A pacing timer fires tens of microseconds late on a busy CPU; the
 * packets it held back then go at once, up to this many, what a NIC's
 * transmit ring absorbs (a window or an empty queue that held the sender
 * earns no burst).
 */
#define MROCE_PACE_BURST_PKTS	64
/*
 * Slack of the connection timers, and how early the pacer lets a packet
 * go: about what a timer interrupt and its softirq take, so a shorter
 * wait gains nothing and costs an interrupt.
 */
#define MROCE_TIMER_SLACK_NS	20000
/*
 * far_slack_us applies while a connection has declared nothing lost for
 * this long, and has at most this much in flight: one request or
 * response; beyond it a bulk transfer needs exact loss timers.
 */
#define MROCE_QUIET_MS		1000
#define MROCE_FAR_FLIGHT_BYTES	4096

void mroce_conn_cfg(struct mroce_dev *mdev, struct mroce_cfg *cfg)
{
	u32 mss = mroce_max_payload(READ_ONCE(mdev->ndev->mtu));

	/* a port without a usable MTU is down: any valid value will do */
	mss = max_t(u32, mss, MROCE_MIN_PAYLOAD);

	mroce_cfg_default(cfg);
	cfg->npaths = clamp_t(u32, READ_ONCE(npaths), 1, MROCE_MAX_PATHS);
	cfg->mss = mss;
	cfg->dupthresh = MROCE_DUPTHRESH;
	cfg->ack_every = max_t(u32, READ_ONCE(ack_every), 1);
	cfg->ack_delay_ns = (u64)READ_ONCE(ack_delay_us) * NSEC_PER_USEC;
	cfg->ack_hold_ns = (u64)READ_ONCE(ack_hold_us) * NSEC_PER_USEC;
	cfg->ack_bodies = !!READ_ONCE(ack_bodies);
	cfg->rto_min_ns = max_t(u64, (u64)READ_ONCE(rto_min_us) *
				NSEC_PER_USEC, 100 * NSEC_PER_USEC);
	cfg->rto_max_ns = max_t(u64, (u64)READ_ONCE(rto_max_ms) *
				NSEC_PER_MSEC, cfg->rto_min_ns);
	cfg->rto_init_ns = clamp_t(u64, (u64)READ_ONCE(rto_init_us) *
				   NSEC_PER_USEC, cfg->rto_min_ns,
				   cfg->rto_max_ns);
	cfg->tlp_min_ns = (u64)READ_ONCE(tlp_min_us) * NSEC_PER_USEC;
	cfg->probe_interval_ns = max_t(u64, (u64)READ_ONCE(probe_interval_us) *
				       NSEC_PER_USEC, NSEC_PER_MSEC);
	cfg->dead_ns = max_t(u64, (u64)READ_ONCE(dead_ms) * NSEC_PER_MSEC,
			     100 * NSEC_PER_MSEC);
	cfg->epoch_ns = max_t(u64, (u64)READ_ONCE(epoch_ms) * NSEC_PER_MSEC,
			      NSEC_PER_MSEC);
	cfg->init_cwnd = MROCE_INIT_CWND_PKTS * mss;
	cfg->conn_init_cwnd = MROCE_CONN_CWND_PKTS * mss;
	cfg->conn_max_cwnd = min_t(u32, MROCE_MAX_CWND_PKTS,
				   cfg->npaths * MROCE_PATH_WINDOW) * mss;
	cfg->conn_init_cwnd = min(cfg->conn_init_cwnd, cfg->conn_max_cwnd);
	/*
	 * A pacing wait shorter than the timer's own slack gains nothing (the
	 * timer may fire that late anyway) and costs a timer interrupt and a
	 * softirq.  Packets built in one pass all see the time the lock was
	 * taken, so without it a pass sent two packets and waited.
	 */
	cfg->pace_slack_ns = MROCE_TIMER_SLACK_NS;
	cfg->timer_slack_ns = cfg->pace_slack_ns;
	cfg->far_slack_ns = (u64)READ_ONCE(far_slack_us) * NSEC_PER_USEC;
	cfg->quiet_ns = (u64)MROCE_QUIET_MS * NSEC_PER_MSEC;
	cfg->far_flight = MROCE_FAR_FLIGHT_BYTES;
	/*
	 * A hint at or above the link's own rate does not pace: the link
	 * spaces the packets.  One sender's hint is the whole capacity, so
	 * a lone sender (as in ib_write_bw) takes no pacing timers at all.
	 * Read when the connection is made, like the MTU.
	 */
	cfg->line_rate = READ_ONCE(mdev->line_rate);
	cfg->pace_burst = MROCE_PACE_BURST_PKTS * mss;
}
