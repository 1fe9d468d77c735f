// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Device counters, exported by ib_core as
 * /sys/class/infiniband/<dev>/hw_counters/<name> and by
 * "rdma statistic show link <dev>/1".  Glue counters (rejections before a
 * connection is found, transmit failures, ring errors) are kept in the
 * device; the transport's own counters live in each connection and stream
 * and are summed when read, plus those of connections already gone.
 */
#include "metaroce.h"

/* The transport's connection counters, by field. */
#define CONN_STAT(f, n) { .name = n, .off = offsetof(struct mroce_conn_stats, f) }
static const struct {
	const char *name;
	size_t off;
} mroce_conn_stat[] = {
	CONN_STAT(rx_pkts, "rx_pkts"),
	CONN_STAT(rx_bytes, "rx_bytes"),
	CONN_STAT(rx_data, "rx_data"),
	CONN_STAT(rx_acks, "rx_acks"),
	CONN_STAT(rx_dup_dsn, "rx_dup"),
	CONN_STAT(rx_drop_state, "rx_drop_state"),
	CONN_STAT(rx_drop_path, "rx_drop_path"),
	CONN_STAT(rx_drop_dsn, "rx_drop_dsn"),
	CONN_STAT(rx_drop_psn, "rx_drop_psn"),
	CONN_STAT(rx_drop_msn, "rx_drop_msn"),
	CONN_STAT(rx_dsn_jumps, "rx_dsn_jumps"),
	CONN_STAT(rx_drop_stream, "rx_drop_stream"),
	CONN_STAT(rx_drop_ack, "rx_drop_ack"),
	CONN_STAT(rx_failed_conn, "rx_failed_conn"),
	CONN_STAT(tx_pkts, "tx_pkts"),
	CONN_STAT(tx_bytes, "tx_bytes"),
	CONN_STAT(tx_data, "tx_data"),
	CONN_STAT(tx_retx, "tx_retransmits"),
	CONN_STAT(tx_acks, "tx_acks"),
	CONN_STAT(tx_ctrl, "tx_ctrl"),
	CONN_STAT(lost, "lost"),
	CONN_STAT(spurious, "spurious_retransmits"),
	CONN_STAT(rtos, "rtos"),
	CONN_STAT(tlps, "tail_loss_probes"),
	CONN_STAT(path_replaced, "paths_replaced"),
	CONN_STAT(pace_waits, "pace_waits"),
	CONN_STAT(hint_limited, "hint_limited"),
	CONN_STAT(tx_ack_bodies, "tx_ack_bodies"),
	CONN_STAT(rx_ack_bodies, "rx_ack_bodies"),
	CONN_STAT(ack_holds, "ack_holds"),
	CONN_STAT(rx_challenged, "rx_challenged"),
	CONN_STAT(tx_challenges, "tx_challenges"),
	CONN_STAT(rx_proven_end, "rx_proven_end"),
};

/* Counters of the glue (enum mroce_cnt), then these, then the others. */
#define MROCE_STAT_CONN		MROCE_NUM_GLUE_CNT
#define MROCE_STAT_RX_DUP_PATH	(MROCE_STAT_CONN + ARRAY_SIZE(mroce_conn_stat))
#define MROCE_STAT_RNR_NAK_SENT	(MROCE_STAT_RX_DUP_PATH + 1)
#define MROCE_STAT_RNR_NAK_RCVD	(MROCE_STAT_RX_DUP_PATH + 2)
#define MROCE_STAT_PEERS	(MROCE_STAT_RX_DUP_PATH + 3)
#define MROCE_STAT_QPS		(MROCE_STAT_RX_DUP_PATH + 4)
#define MROCE_STAT_TX_ZEROCOPY	(MROCE_STAT_RX_DUP_PATH + 5)
#define MROCE_STAT_TX_COPIED	(MROCE_STAT_RX_DUP_PATH + 6)
#define MROCE_NUM_STATS		(MROCE_STAT_RX_DUP_PATH + 7)

static const char *const mroce_glue_stat[MROCE_NUM_GLUE_CNT] = {
	[MROCE_CNT_RX_SHORT] = "rx_drop_short",
	[MROCE_CNT_RX_VERSION] = "rx_drop_version",
	[MROCE_CNT_RX_OPCODE] = "rx_drop_opcode",
	[MROCE_CNT_RX_RESERVED] = "rx_drop_reserved",
	[MROCE_CNT_RX_FLAGS] = "rx_drop_flags",
	[MROCE_CNT_RX_LENGTH] = "rx_drop_length",
	[MROCE_CNT_RX_FIELD] = "rx_drop_field",
	[MROCE_CNT_RX_UNKNOWN_CONN] = "rx_unknown_conn",
	[MROCE_CNT_RX_WRONG_ADDR] = "rx_wrong_addr",
	[MROCE_CNT_RX_OPEN_DROPPED] = "rx_open_dropped",
	[MROCE_CNT_RX_HOST_CE] = "rx_host_ce",
	[MROCE_CNT_RESET_SENT] = "resets_sent",
	[MROCE_CNT_RESET_LIMITED] = "resets_limited",
	[MROCE_CNT_RX_CONNECT_UNPROVEN] = "rx_connect_unproven",
	[MROCE_CNT_CHALLENGE_SENT] = "challenges_sent",
	[MROCE_CNT_CHALLENGE_LIMITED] = "challenges_limited",
	[MROCE_CNT_TX_NOMEM] = "tx_nomem",
	[MROCE_CNT_TX_NO_ROUTE] = "tx_no_route",
	[MROCE_CNT_TX_LOCAL_ERR] = "tx_local_err",
	[MROCE_CNT_CQ_OVERFLOW] = "cq_overflow",
	[MROCE_CNT_BAD_RING] = "bad_ring_index",
	[MROCE_CNT_BAD_WQE] = "bad_wqe",
	[MROCE_CNT_RX_BAD_RSN] = "rx_bad_rsn",
	[MROCE_CNT_PEER_LOCK_WAITS] = "peer_lock_waits",
	[MROCE_CNT_DB_TIMER_AFTER] = "db_timer_after",
	[MROCE_CNT_CONN_FAILED] = "conn_failed",
	[MROCE_CNT_QP_REHOMED] = "qps_rehomed",
};

static struct rdma_stat_desc mroce_stat_descs[MROCE_NUM_STATS];

/* The names, once: the descriptor table is static for ib_core's sysfs. */
void mroce_stats_init(void)
{
	unsigned int i;

	for (i = 0; i < MROCE_NUM_GLUE_CNT; i++)
		mroce_stat_descs[i].name = mroce_glue_stat[i];
	for (i = 0; i < ARRAY_SIZE(mroce_conn_stat); i++)
		mroce_stat_descs[MROCE_STAT_CONN + i].name =
			mroce_conn_stat[i].name;
	mroce_stat_descs[MROCE_STAT_RX_DUP_PATH].name = "rx_dup_path";
	mroce_stat_descs[MROCE_STAT_RNR_NAK_SENT].name = "rnr_nak_sent";
	mroce_stat_descs[MROCE_STAT_RNR_NAK_RCVD].name = "rnr_nak_rcvd";
	mroce_stat_descs[MROCE_STAT_PEERS].name = "peers";
	mroce_stat_descs[MROCE_STAT_QPS].name = "qps";
	mroce_stat_descs[MROCE_STAT_TX_ZEROCOPY].name = "tx_zerocopy";
	mroce_stat_descs[MROCE_STAT_TX_COPIED].name = "tx_copied";
}

/* The connection counters are all u64; summed as an array. */
static_assert(sizeof(struct mroce_conn_stats) % sizeof(u64) == 0);

static void conn_add(struct mroce_conn_stats *sum,
		     const struct mroce_conn_stats *s)
{
	u64 *d = (u64 *)sum;
	const u64 *v = (const u64 *)s;
	size_t i;

	for (i = 0; i < sizeof(*s) / sizeof(u64); i++)
		d[i] += v[i];
}

/*
 * Everything a peer counted, into @r.  Both peer locks are held, or the
 * peer is dead (no timer, no input, no QPs: nothing counts any more).
 */
static void peer_sum(const struct mroce_peer *p, struct mroce_retired *r)
{
	const struct mroce_conn *c = p->conn;
	const struct mroce_qp *qp;
	struct mroce_stream_stats ss;
	struct mroce_path_info pi;
	unsigned int bkt;
	struct mroce_conn_stats cs;
	u32 i;

	lockdep_assert(p->dead || lockdep_is_held(&p->lock));

	mroce_conn_get_stats(c, &cs);
	conn_add(&r->conn, &cs);
	for (i = 0; mroce_conn_get_path_info(c, i, &pi); i++)
		r->rx_dup_path += pi.stats.rx_dup;
	r->rnr_sent += p->rnr_sent;
	r->rnr_rcvd += p->rnr_rcvd;
	r->tx_zerocopy += p->tx_zerocopy;
	r->tx_copied += p->tx_copied;
	hash_for_each(p->qps, bkt, qp, peer_node) {
		mroce_stream_get_stats(qp->st, &ss);
		r->rnr_sent += ss.rnr_sent;
		r->rnr_rcvd += ss.rnr_rcvd;
	}
}

/* A peer is being freed: keep its counts.  peers_mutex held. */
void mroce_retire_peer(struct mroce_dev *mdev, const struct mroce_peer *p)
{
	lockdep_assert_held(&mdev->peers_mutex);
	peer_sum(p, &mdev->retired);
}

struct rdma_hw_stats *mroce_alloc_hw_device_stats(struct ib_device *ibdev)
{
	return rdma_alloc_hw_stats_struct(mroce_stat_descs, MROCE_NUM_STATS,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

int mroce_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port, int index)
{
	struct mroce_dev *mdev = to_mdev(ibdev);
	struct mroce_retired sum;
	struct mroce_peer *p;
	int i;

	for (i = 0; i < MROCE_NUM_GLUE_CNT; i++)
		stats->value[i] = atomic64_read(&mdev->cnt[i]);

	mutex_lock(&mdev->peers_mutex);
	sum = mdev->retired;
	list_for_each_entry(p, &mdev->peer_list, node) {
		spin_lock_bh(&p->lock);
		peer_sum(p, &sum);
		spin_unlock_bh(&p->lock);
	}
	stats->value[MROCE_STAT_PEERS] = mdev->npeers;
	mutex_unlock(&mdev->peers_mutex);

	for (i = 0; i < ARRAY_SIZE(mroce_conn_stat); i++)
		stats->value[MROCE_STAT_CONN + i] =
			*(const u64 *)((const u8 *)&sum.conn +
				       mroce_conn_stat[i].off);
	stats->value[MROCE_STAT_RX_DUP_PATH] = sum.rx_dup_path;
	stats->value[MROCE_STAT_RNR_NAK_SENT] = sum.rnr_sent;
	stats->value[MROCE_STAT_RNR_NAK_RCVD] = sum.rnr_rcvd;
	stats->value[MROCE_STAT_QPS] = atomic_read(&mdev->num_qps);
	stats->value[MROCE_STAT_TX_ZEROCOPY] = sum.tx_zerocopy;
	stats->value[MROCE_STAT_TX_COPIED] = sum.tx_copied;
	return MROCE_NUM_STATS;
}
