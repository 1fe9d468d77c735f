// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Module parameters and the configuration of new connections.
 *
 * The core's mroce_cfg_default() is tuned for hardware-like fabrics
 * (microsecond RTTs, precise timers).  A software endpoint, and above all
 * a QEMU/TCG guest, sees RTTs of hundreds of microseconds that jump to
 * tens of milliseconds when the CPUs are busy (softirq work waits behind
 * busy-polling applications), and coarse timers, so the defaults below are
 * larger: a 20 ms RTO floor (with 5 ms, bulk transfers in the test VM saw
 * dozens of spurious RTOs per run, each resetting a path's window and
 * resending all it had in flight), a 50 ms initial RTO, a 100 us delayed
 * ACK, and a pacer burst of 64 packets (a timer cannot release a packet
 * every few microseconds there).  Writable parameters apply to connections
 * created afterwards.
 */
#include <linux/module.h>

#include "metaroce.h"

unsigned short mroce_udp_port = MROCE_UDP_PORT_DEFAULT;
/* Read-only: every netns socket must use the same port for its lifetime. */
module_param_named(udp_port, mroce_udp_port, ushort, 0444);
MODULE_PARM_DESC(udp_port, "UDP port of the MetaRoCE transport (default 4797)");

static unsigned int npaths = 4;
module_param(npaths, uint, 0644);
MODULE_PARM_DESC(npaths, "paths (UDP source ports) per connection, 1-64 (default 4)");

static unsigned int dupthresh = 3;
module_param(dupthresh, uint, 0644);
MODULE_PARM_DESC(dupthresh, "psn distance that proves a loss on a path (default 3)");

static unsigned int ack_every = 4;
module_param(ack_every, uint, 0644);
MODULE_PARM_DESC(ack_every, "acknowledge a path after this many packets (default 4)");

static unsigned int ack_delay_us = 100;
module_param(ack_delay_us, uint, 0644);
MODULE_PARM_DESC(ack_delay_us, "delayed ACK, microseconds (default 100)");

static unsigned int ack_hold_us;
module_param(ack_hold_us, uint, 0644);
MODULE_PARM_DESC(ack_hold_us, "how long a message's ACK may wait for an answer to carry it, microseconds, at most ack_delay_us (default 0: never)");

static unsigned int ack_bodies;
module_param(ack_bodies, uint, 0644);
MODULE_PARM_DESC(ack_bodies, "put owed ACKs on outgoing data packets that have room (default 0)");

static unsigned int rto_init_us = 50000;
module_param(rto_init_us, uint, 0644);
MODULE_PARM_DESC(rto_init_us, "initial retransmission timeout, microseconds (default 50000)");

static unsigned int rto_min_us = 20000;
module_param(rto_min_us, uint, 0644);
MODULE_PARM_DESC(rto_min_us, "minimum retransmission timeout, microseconds (default 20000)");

static unsigned int rto_max_ms = 500;
module_param(rto_max_ms, uint, 0644);
MODULE_PARM_DESC(rto_max_ms, "maximum retransmission timeout, milliseconds (default 500)");

static unsigned int tlp_min_us = 2000;
module_param(tlp_min_us, uint, 0644);
MODULE_PARM_DESC(tlp_min_us, "minimum tail-loss probe timeout, microseconds (default 2000)");

static unsigned int probe_interval_us = 10000;
module_param(probe_interval_us, uint, 0644);
MODULE_PARM_DESC(probe_interval_us, "interval of path probes, microseconds (default 10000)");

static unsigned int dead_ms = 2000;
module_param(dead_ms, uint, 0644);
MODULE_PARM_DESC(dead_ms, "no progress this long with data outstanding (and 3 rounds of RTOs): peer unreachable, milliseconds (default 2000)");

static unsigned int epoch_ms = 50;
module_param(epoch_ms, uint, 0644);
MODULE_PARM_DESC(epoch_ms, "path health epoch, milliseconds (default 50)");

static unsigned int init_cwnd_pkts = 16;
module_param(init_cwnd_pkts, uint, 0644);
MODULE_PARM_DESC(init_cwnd_pkts, "initial congestion window of a path, packets (default 16)");

static unsigned int conn_cwnd_pkts = 64;
module_param(conn_cwnd_pkts, uint, 0644);
MODULE_PARM_DESC(conn_cwnd_pkts, "initial congestion window of a connection, packets (default 64)");

static unsigned int pace_burst_pkts = 64;
module_param(pace_burst_pkts, uint, 0644);
MODULE_PARM_DESC(pace_burst_pkts, "packets the pacer lets go back to back (default 64: coarse software timers)");

static unsigned int max_cwnd_pkts = 1024;
module_param(max_cwnd_pkts, uint, 0644);
MODULE_PARM_DESC(max_cwnd_pkts, "largest congestion window of a connection, packets (default 1024)");

static unsigned int mroce_timer_slack_ns = 20000;
module_param_named(timer_slack_ns, mroce_timer_slack_ns, uint, 0644);
MODULE_PARM_DESC(timer_slack_ns, "slack of the connection timers, and how early the pacer lets a packet go, nanoseconds (default 20000)");

/*
 * A deadline a millisecond or more away (a loss timer, an epoch) of a
 * connection that has declared nothing lost for quiet_ms and has at most
 * far_flight_bytes in flight may fire this much late.  With a tick or
 * more such a deadline goes on the timer wheel, which fires it less than
 * two ticks late and never reprograms the clock event device (peer.c): a
 * lossless ping-pong moved its tail-loss probe's hrtimer once per
 * millisecond and side, and each move cost the iteration it fell in
 * 10-30 us in the TCG guest.  A bulk transfer keeps exact timers through
 * far_flight_bytes; with a tick for every connection, lossless
 * ib_write_bw fell in half of the benchmark rounds (design.md 8).
 */
static unsigned int mroce_far_slack_us = USEC_PER_SEC / HZ;
module_param_named(far_slack_us, mroce_far_slack_us, uint, 0644);
MODULE_PARM_DESC(far_slack_us, "slack of connection deadlines 1 ms or more away while the connection is not losing and has little in flight, microseconds (default a tick: 1000000 / HZ; a tick or more: the timer wheel, less than two ticks late; 0: timer_slack_ns)");

static unsigned int far_flight_bytes = 4096;
module_param(far_flight_bytes, uint, 0644);
MODULE_PARM_DESC(far_flight_bytes, "a connection with more bytes than this in flight keeps exact far deadlines (default 4096: one request or response)");

static unsigned int quiet_ms = 1000;
module_param(quiet_ms, uint, 0644);
MODULE_PARM_DESC(quiet_ms, "a connection that declared nothing lost for this long gets far_slack_us (default 1000)");

/*
 * Data and ACKs of one connection received at once on two CPUs, each under
 * one of the peer's two locks, and doorbells that do not wait for a data
 * receipt (design.md, section 8); off: both locks for everything, as one
 * lock.
 */
unsigned int mroce_lock_split = 7;
module_param_named(lock_split, mroce_lock_split, uint, 0644);
MODULE_PARM_DESC(lock_split, "1: data under the receive lock alone, 2: ACKs under the send lock alone, 4: doorbells under the send lock alone; a sum for more (default 7)");

unsigned int mroce_tx_budget = 32;
module_param_named(tx_budget, mroce_tx_budget, uint, 0644);
MODULE_PARM_DESC(tx_budget, "packets built per connection before yielding (default 32)");

unsigned int mroce_tx_zerocopy = 1;
module_param_named(tx_zerocopy, mroce_tx_zerocopy, uint, 0644);
MODULE_PARM_DESC(tx_zerocopy, "send payloads in registered user memory without copying them (default 1)");

unsigned int mroce_capacity_mbps;
module_param_named(capacity_mbps, mroce_capacity_mbps, uint, 0644);
MODULE_PARM_DESC(capacity_mbps, "inbound capacity for the fair share, Mbit/s (default 0: the netdev's speed; unknown speed: no rate hints)");

unsigned int mroce_share_epoch_us = 1000;
module_param_named(share_epoch_us, mroce_share_epoch_us, uint, 0644);
MODULE_PARM_DESC(share_epoch_us, "fair share epoch, microseconds (default 1000)");

unsigned int mroce_share_grants = 1;
module_param_named(share_grants, mroce_share_grants, uint, 0644);
MODULE_PARM_DESC(share_grants, "grant a connection a peer opens a first rate in the ACCEPT: capacity / our connections (default 1; 0: no grants)");

unsigned int mroce_idle_peer_s = 60;
module_param_named(idle_peer_s, mroce_idle_peer_s, uint, 0644);
MODULE_PARM_DESC(idle_peer_s, "a connection without QPs and silent this long is closed, seconds (default 60, 0: never)");

unsigned int mroce_host_ce_pkts = 64;
module_param_named(host_ce_pkts, mroce_host_ce_pkts, uint, 0644);
MODULE_PARM_DESC(host_ce_pkts, "take packets as CE-marked while this CPU's input backlog holds more (default 64, 0: never)");

unsigned int mroce_payload_max;
module_param_named(max_payload, mroce_payload_max, uint, 0644);
MODULE_PARM_DESC(max_payload, "largest data payload per packet, bytes (default 0: what the netdev MTU allows, up to 65535)");

unsigned int mroce_max_peers = 1024;
module_param_named(max_peers, mroce_max_peers, uint, 0644);
MODULE_PARM_DESC(max_peers, "connections per device the remote side may open (default 1024)");

void mroce_conn_cfg(struct mroce_dev *mdev, struct mroce_cfg *cfg)
{
	u32 mss = mroce_max_payload(READ_ONCE(mdev->ndev->mtu));

	/* a port without a usable MTU is down: any valid value will do */
	mss = max_t(u32, mss, MROCE_MIN_PAYLOAD);

	mroce_cfg_default(cfg);
	cfg->npaths = clamp_t(u32, READ_ONCE(npaths), 1, MROCE_MAX_PATHS);
	cfg->mss = mss;
	cfg->dupthresh = clamp_t(u32, READ_ONCE(dupthresh), 1,
				 MROCE_PATH_WINDOW - 1);
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
	cfg->init_cwnd = clamp_t(u32, READ_ONCE(init_cwnd_pkts), 1, 256) * mss;
	cfg->conn_init_cwnd = clamp_t(u32, READ_ONCE(conn_cwnd_pkts), 1,
				      16384) * mss;
	cfg->conn_max_cwnd = min_t(u32, clamp_t(u32, READ_ONCE(max_cwnd_pkts),
						 4, 16384),
				   cfg->npaths * MROCE_PATH_WINDOW) * mss;
	cfg->conn_init_cwnd = min(cfg->conn_init_cwnd, cfg->conn_max_cwnd);
	/*
	 * A pacing wait shorter than the timer's own slack gains nothing (the
	 * timer may fire that late anyway) and costs a timer interrupt and a
	 * softirq.  Packets built in one pass all see the time the lock was
	 * taken, so without it a pass sent two packets and waited.
	 */
	cfg->pace_slack_ns = READ_ONCE(mroce_timer_slack_ns);
	cfg->timer_slack_ns = cfg->pace_slack_ns;
	cfg->far_slack_ns = (u64)READ_ONCE(mroce_far_slack_us) * NSEC_PER_USEC;
	cfg->quiet_ns = (u64)READ_ONCE(quiet_ms) * NSEC_PER_MSEC;
	cfg->far_flight = READ_ONCE(far_flight_bytes);
	/*
	 * A hint at or above the link's own rate does not pace: the link
	 * spaces the packets.  One sender's hint is the whole capacity, so
	 * a lone sender (as in ib_write_bw) takes no pacing timers at all.
	 * Read when the connection is made, like the MTU.
	 */
	cfg->line_rate = READ_ONCE(mdev->line_rate);
	cfg->pace_burst = clamp_t(u32, READ_ONCE(pace_burst_pkts), 1, 1024) *
			  mss;
}
