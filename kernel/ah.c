// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Address vectors: a RoCE v2 GID pair becomes a pair of IP addresses.  The
 * destination GID is the remote address; the source GID (sgid_index, which
 * ib_core resolved to a GID attribute) is the local address packets leave
 * from.  Used by RC QPs at RTR and by address handles (kernel AHs come with
 * udata == NULL).
 */
#include <net/addrconf.h>
#include <net/ipv6.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>

#include "metaroce.h"

union mroce_sockaddr {
	struct sockaddr sa;
	struct sockaddr_in in;
	struct sockaddr_in6 in6;
};

static void sockaddr_to_in6(const union mroce_sockaddr *s, struct in6_addr *a)
{
	if (s->sa.sa_family == AF_INET)
		ipv6_addr_set_v4mapped(s->in.sin_addr.s_addr, a);
	else
		*a = s->in6.sin6_addr;
}

int mroce_av_resolve(struct mroce_dev *mdev, const struct rdma_ah_attr *attr,
		     struct mroce_av *av)
{
	const struct ib_global_route *grh;
	const struct ib_gid_attr *sgid;
	union mroce_sockaddr s, d;
	int type;

	if (!(rdma_ah_get_ah_flags(attr) & IB_AH_GRH))
		return -EINVAL;
	grh = rdma_ah_read_grh(attr);
	sgid = grh->sgid_attr;
	if (!sgid || sgid->device != &mdev->ibdev)
		return -EINVAL;
	type = rdma_gid_attr_network_type(sgid);
	if (type != RDMA_NETWORK_IPV4 && type != RDMA_NETWORK_IPV6)
		return -EINVAL;

	memset(&s, 0, sizeof(s));
	memset(&d, 0, sizeof(d));
	rdma_gid2ip(&s.sa, &sgid->gid);
	rdma_gid2ip(&d.sa, &grh->dgid);
	if (s.sa.sa_family != d.sa.sa_family)
		return -EINVAL;

	memset(av, 0, sizeof(*av));
	av->v4 = s.sa.sa_family == AF_INET;
	sockaddr_to_in6(&s, &av->saddr);
	sockaddr_to_in6(&d, &av->daddr);
	if (av->v4 ? ipv4_is_multicast(d.in.sin_addr.s_addr) ||
			     ipv4_is_zeronet(d.in.sin_addr.s_addr) :
		     ipv6_addr_is_multicast(&av->daddr) ||
			     ipv6_addr_any(&av->daddr))
		return -EINVAL;
	av->dgid = grh->dgid;
	av->sgid_index = grh->sgid_index;
	av->hop_limit = grh->hop_limit;
	av->tclass = grh->traffic_class;
	av->flow_label = grh->flow_label;
	memcpy(av->dmac, attr->roce.dmac, ETH_ALEN);
	return 0;
}

void mroce_av_to_attr(const struct mroce_av *av, u32 port,
		      struct rdma_ah_attr *attr)
{
	struct ib_global_route *grh;

	memset(attr, 0, sizeof(*attr));
	attr->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(attr, port);
	rdma_ah_set_ah_flags(attr, IB_AH_GRH);
	grh = rdma_ah_retrieve_grh(attr);
	grh->dgid = av->dgid;
	grh->flow_label = av->flow_label;
	grh->sgid_index = av->sgid_index;
	grh->hop_limit = av->hop_limit;
	grh->traffic_class = av->tclass;
	memcpy(attr->roce.dmac, av->dmac, ETH_ALEN);
}

int mroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata)
{
	struct mroce_dev *mdev = to_mdev(ibah->device);
	struct mroce_ah *ah = to_mah(ibah);
	int err;

	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	err = mroce_av_resolve(mdev, init->ah_attr, &ah->av);
	if (err)
		return err;
	if (atomic_inc_return(&mdev->num_ahs) > MROCE_MAX_AH) {
		atomic_dec(&mdev->num_ahs);
		return -ENOMEM;
	}
	return 0;
}

int mroce_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	atomic_dec(&to_mdev(ibah->device)->num_ahs);
	return 0;
}
