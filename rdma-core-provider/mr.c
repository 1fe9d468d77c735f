// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Memory registration: the kernel pins the pages; lkey == rkey. */
#include <errno.h>
#include <stdlib.h>

#include "mroce.h"

struct ibv_mr *mroce_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			    uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;
	struct verbs_mr *vmr;
	int ret;

	/*
	 * Optional access flags (relaxed ordering, which perftest asks for)
	 * are hints a device may ignore; a software device has nothing to
	 * relax, so they never reach the kernel.
	 */
	access &= ~IBV_ACCESS_OPTIONAL_RANGE;
	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	ret = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

int mroce_dereg_mr(struct verbs_mr *vmr)
{
	int ret = ibv_cmd_dereg_mr(vmr);

	if (ret)
		return ret;
	free(vmr);
	return 0;
}
