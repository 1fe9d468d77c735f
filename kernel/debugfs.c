// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Per-path telemetry: /sys/kernel/debug/metaroce/<dev>/peers lists every
 * peer of the device and, for each path of its connection, the source
 * port, state, RTT estimate, congestion window, ECN estimate (alpha, in
 * 1/1024), bytes in flight and the packet counters.  .../streams dumps
 * the connection's sequence state and every QP's stream with its
 * outstanding messages, for diagnosing stalls.  Each peer is printed
 * under its lock, so its lines are a consistent snapshot.
 * /sys/kernel/debug/metaroce/tunables/ holds the settings that experiments
 * and tests change (params.c).
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "metaroce.h"

static struct dentry *mroce_dbg_root;

static void show_path(struct seq_file *s, const struct mroce_path_info *p)
{
	const struct mroce_path_stats *ps = &p->stats;

	seq_printf(s,
		   "  path %u sport %u state %s srtt_us %llu rttvar_us %llu min_rtt_us %llu reo_us %llu rto_us %llu cwnd %u alpha %u inflight %u\n",
		   p->id, p->sport, mroce_path_state_names[p->state & 3],
		   p->srtt_ns / NSEC_PER_USEC, p->rttvar_ns / NSEC_PER_USEC,
		   p->min_rtt_ns / NSEC_PER_USEC, p->reo_ns / NSEC_PER_USEC,
		   p->rto_ns / NSEC_PER_USEC, p->cwnd, p->alpha, p->inflight);
	seq_printf(s,
		   "    tx %llu tx_bytes %llu acked %llu lost %llu retx %llu spurious %llu rtos %llu tlps %llu replaced %llu probes %llu ce %llu rx %llu rx_dup %llu rx_late %llu rx_ce %llu\n",
		   ps->tx_pkts, ps->tx_bytes, ps->acked_pkts, ps->lost_pkts,
		   ps->retx_pkts, ps->spurious, ps->rtos, ps->tlps,
		   ps->replaced, ps->probes, ps->ce_pkts, ps->rx_pkts,
		   ps->rx_dup, ps->rx_late, ps->rx_ce);
}

static void show_peer(struct seq_file *s, struct mroce_peer *p)
{
	const struct mroce_conn *c = p->conn;
	struct mroce_conn_stats cs;
	struct mroce_conn_info ci;
	struct mroce_path_info pi;
	u32 i;

	spin_lock_bh(&p->lock);
	mroce_conn_get_stats(c, &cs);
	mroce_conn_get_info(c, &ci);
	if (p->v4)
		seq_printf(s, "peer %pI4 local %pI4", &p->raddr.s6_addr32[3],
			   &p->laddr.s6_addr32[3]);
	else
		seq_printf(s, "peer %pI6c local %pI6c", &p->raddr, &p->laddr);
	seq_printf(s,
		   " conn %u peer_conn %u state %s%s fail %s paths %u qps %u inflight %u cwnd %u rate_hint %u%s rx_hint %u\n",
		   ci.id, ci.peer_id, mroce_conn_state_names[ci.state % 5],
		   p->hashed ? "" : " (unhashed)",
		   ci.fail_reason ? mroce_err_name(ci.fail_reason) : "-", ci.npaths,
		   p->nqps, ci.inflight, ci.cwnd, ci.rate_hint,
		   ci.hint_paced ? " (paced)" : "", ci.rx_hint);
	seq_printf(s,
		   "  tx %llu rx %llu retx %llu lost %llu spurious %llu rtos %llu tlps %llu rx_dup %llu\n",
		   cs.tx_pkts, cs.rx_pkts, cs.tx_retx, cs.lost, cs.spurious,
		   cs.rtos, cs.tlps, cs.rx_dup_dsn);
	for (i = 0; i < ci.npaths && mroce_conn_get_path_info(c, i, &pi); i++)
		show_path(s, &pi);
	spin_unlock_bh(&p->lock);
}

static void show_stream(struct seq_file *s, const struct mroce_stream *st)
{
	struct mroce_stream_info si;
	struct mroce_txmsg_info t;
	struct mroce_rxmsg_info r;
	u32 msn;

	mroce_stream_get_info(st, &si);
	seq_printf(s,
		   " stream %u peer %u state %u tx_una %u tx_next %u tx_end %u rd_inflight %u frontier %u poll_at %llu rx_next %u failing %u rnr_slots %u resp %u+%u sched %d wait %d wake_at %llu poll %d\n",
		   si.id, si.peer, si.state, si.tx_una, si.tx_next,
		   si.tx_end, si.rd_inflight, si.frontier, si.poll_at,
		   si.rx_next, si.failing, si.rnr_slots, si.resp_head,
		   si.resp_count, si.sched, si.waiting, si.wake_at,
		   si.polling);
	for (msn = si.tx_una; msn != si.tx_end; msn++) {
		if (!mroce_stream_get_txmsg_info(st, msn, &t))
			continue;
		seq_printf(s,
			   "  tx msn %u op %u len %u state %u sent %u acked %u acked_last %u resp %u attempt %u resend_at %llu rnr_left %u retry_left %u\n",
			   t.msn, t.op, t.len, t.state, t.sent, t.acked,
			   t.acked_last, t.resp, t.attempt, t.resend_at,
			   t.rnr_left, t.retry_left);
	}
	for (msn = si.rx_next; msn != si.rx_next + MROCE_STREAM_WINDOW;
	     msn++) {
		if (!mroce_stream_get_rxmsg_info(st, msn, &r))
			continue;
		seq_printf(s,
			   "  rx msn %u op %u total %u got %u state %u attempt %u claimed %u status %u\n",
			   r.msn, r.op, r.total, r.got, r.state, r.attempt,
			   r.claimed, r.status);
	}
}

/* Every stream of every peer with its messages: for stalls. */
static void show_peer_streams(struct seq_file *s, struct mroce_peer *p)
{
	struct mroce_conn *c = p->conn;
	struct mroce_conn_info ci;
	struct mroce_qp *qp;
	unsigned int bkt;
	u64 next;

	spin_lock_bh(&p->lock);
	next = mroce_conn_next_timer(c);
	mroce_conn_get_info(c, &ci);
	seq_printf(s,
		   "conn %u state %u timer_at %llu wheel_in %ld now %llu next_timer %llu dsn nxt %u una %u window %u rx_base %u retx %u..%u ack_at %llu paced %u pace_next %llu inflight %u cwnd %u sched %d waitq %d pollq %d ackq %d\n",
		   ci.id, ci.state, p->timer_at,
		   timer_pending(&p->wheel) ?
		   (long)(p->wheel.expires - jiffies) : -1L, ktime_get_ns(),
		   next, ci.tx_dsn_nxt, ci.tx_dsn_una, ci.tx_dsn_window,
		   ci.rx_dsn_base, ci.retx_head, ci.retx_tail, ci.ack_at,
		   ci.paced, ci.pace_next_ns, ci.inflight, ci.cwnd, ci.sched,
		   ci.waitq, ci.pollq, ci.ackq);
	hash_for_each(p->qps, bkt, qp, peer_node) {
		seq_printf(s, " qp %u state %d sq_next %u sq_cons %u\n",
			   qp->ibqp.qp_num, qp->state, qp->sq_next,
			   qp->sq_cons);
		if (qp->st)
			show_stream(s, qp->st);
	}
	spin_unlock_bh(&p->lock);
}

static int streams_show(struct seq_file *s, void *unused)
{
	struct mroce_dev *mdev = s->private;
	struct mroce_peer *p;

	mutex_lock(&mdev->peers_mutex);
	list_for_each_entry(p, &mdev->peer_list, node)
		show_peer_streams(s, p);
	mutex_unlock(&mdev->peers_mutex);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(streams);

static int peers_show(struct seq_file *s, void *unused)
{
	struct mroce_dev *mdev = s->private;
	struct mroce_peer *p;

	mutex_lock(&mdev->peers_mutex);
	list_for_each_entry(p, &mdev->peer_list, node)
		show_peer(s, p);
	mutex_unlock(&mdev->peers_mutex);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(peers);

void mroce_debugfs_add(struct mroce_dev *mdev)
{
	if (IS_ERR_OR_NULL(mroce_dbg_root))
		return;
	mdev->dbg = debugfs_create_dir(dev_name(&mdev->ibdev.dev),
				       mroce_dbg_root);
	if (IS_ERR(mdev->dbg)) {
		mdev->dbg = NULL;
		return;
	}
	debugfs_create_file("peers", 0400, mdev->dbg, mdev, &peers_fops);
	debugfs_create_file("streams", 0400, mdev->dbg, mdev, &streams_fops);
}

void mroce_debugfs_del(struct mroce_dev *mdev)
{
	debugfs_remove_recursive(mdev->dbg);
	mdev->dbg = NULL;
}

void mroce_debugfs_init(void)
{
	mroce_dbg_root = debugfs_create_dir("metaroce", NULL);
	mroce_tunables_debugfs(mroce_dbg_root);
}

void mroce_debugfs_exit(void)
{
	debugfs_remove_recursive(mroce_dbg_root);
	mroce_dbg_root = NULL;
}
