// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Address handles: the kernel resolves and keeps the addresses. */
#include <errno.h>
#include <stdlib.h>

#include "mroce.h"

struct ibv_ah *mroce_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct ib_uverbs_create_ah_resp resp;
	struct ibv_ah *ah;
	int ret;

	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;
	ret = ibv_cmd_create_ah(pd, ah, attr, &resp, sizeof(resp));
	if (ret) {
		free(ah);
		errno = ret;
		return NULL;
	}
	return ah;
}

int mroce_destroy_ah(struct ibv_ah *ah)
{
	int ret = ibv_cmd_destroy_ah(ah);

	if (ret)
		return ret;
	free(ah);
	return 0;
}
