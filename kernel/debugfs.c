// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Per-path telemetry: /sys/kernel/debug/metaroce/<dev>/peers lists every
 * peer of the device and, for each path of its connection, the source
 * port, state, RTT estimate, congestion window, ECN estimate (alpha, in
 * 1/1024), bytes in flight and the packet counters.  Each peer is printed
 * under its lock, so its lines are a consistent snapshot.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "metaroce.h"

static struct dentry *mroce_dbg_root;

static void show_path(struct seq_file *s, const struct mroce_path *p)
{
	const struct mroce_path_stats *ps = &p->stats;

	seq_printf(s,
		   "  path %u sport %u state %s srtt_us %llu rttvar_us %llu rto_us %llu cwnd %u alpha %u inflight %u\n",
		   p->id, p->sport, mroce_path_state_names[p->state & 3],
		   p->rtt.srtt / NSEC_PER_USEC, p->rtt.rttvar / NSEC_PER_USEC,
		   p->rtt.rto / NSEC_PER_USEC, p->cc.cwnd, p->cc.alpha,
		   p->inflight);
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
	u32 i;

	spin_lock_bh(&p->lock);
	if (p->v4)
		seq_printf(s, "peer %pI4 local %pI4", &p->raddr.s6_addr32[3],
			   &p->laddr.s6_addr32[3]);
	else
		seq_printf(s, "peer %pI6c local %pI6c", &p->raddr, &p->laddr);
	seq_printf(s,
		   " conn %u peer_conn %u state %s%s paths %u qps %u inflight %u cwnd %u rate_hint %u rx_hint %u\n",
		   c->id, c->peer_id, mroce_conn_state_names[c->state % 5],
		   p->hashed ? "" : " (unhashed)", c->npaths, p->nqps,
		   c->inflight, c->cc.cwnd, c->rate_hint, c->rx_hint);
	seq_printf(s,
		   "  tx %llu rx %llu retx %llu lost %llu spurious %llu rtos %llu tlps %llu rx_dup %llu\n",
		   c->stats.tx_pkts, c->stats.rx_pkts, c->stats.tx_retx,
		   c->stats.lost, c->stats.spurious, c->stats.rtos,
		   c->stats.tlps, c->stats.rx_dup_dsn);
	for (i = 0; i < c->npaths; i++)
		show_path(s, &c->paths[i]);
	spin_unlock_bh(&p->lock);
}

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
}

void mroce_debugfs_del(struct mroce_dev *mdev)
{
	debugfs_remove_recursive(mdev->dbg);
	mdev->dbg = NULL;
}

void mroce_debugfs_init(void)
{
	mroce_dbg_root = debugfs_create_dir("metaroce", NULL);
}

void mroce_debugfs_exit(void)
{
	debugfs_remove_recursive(mroce_dbg_root);
	mroce_dbg_root = NULL;
}
