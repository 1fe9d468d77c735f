// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Device counters, exported by ib_core as
 * /sys/class/infiniband/<dev>/hw_counters/<name>.
 */
#include "metaroce.h"

enum mroce_counter {
	MROCE_CNT_RX_NO_DATAPATH,
	MROCE_NUM_COUNTERS,
};

static const struct rdma_stat_desc mroce_counter_descs[] = {
	[MROCE_CNT_RX_NO_DATAPATH].name = "rx_no_datapath",
};

static_assert(ARRAY_SIZE(mroce_counter_descs) == MROCE_NUM_COUNTERS);

struct rdma_hw_stats *mroce_alloc_hw_device_stats(struct ib_device *ibdev)
{
	return rdma_alloc_hw_stats_struct(mroce_counter_descs,
					  MROCE_NUM_COUNTERS,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

int mroce_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port, int index)
{
	struct mroce_dev *mdev = to_mdev(ibdev);

	stats->value[MROCE_CNT_RX_NO_DATAPATH] =
		atomic64_read(&mdev->rx_no_datapath);
	return MROCE_NUM_COUNTERS;
}
