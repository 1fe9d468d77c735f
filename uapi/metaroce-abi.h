/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * MetaRoCE user/kernel ABI, shared by metaroce.ko and libmetaroce-rdmav34.so.
 *
 * Versioning: MROCE_ABI_VERSION is published three ways and all three must
 * agree: as the uverbs ABI version of the ib_device (libibverbs compares it
 * with the provider's match range), in the sysfs attribute
 * /sys/class/infiniband/<dev>/metaroce_abi (the provider claims a device only
 * if that file exists and holds its version) and in the ucontext request
 * (the kernel refuses a context from any other version).  Any incompatible
 * change of a struct below bumps it; fields are only ever appended, and
 * reserved fields must be zero.
 */
#ifndef METAROCE_ABI_H
#define METAROCE_ABI_H

#include <linux/types.h>

#define MROCE_ABI_VERSION 1

/* Name of the ib_device sysfs attribute the provider matches on. */
#define MROCE_SYSFS_ABI_ATTR "metaroce_abi"

/* Default UDP destination port of the transport (module parameter udp_port). */
#define MROCE_UDP_PORT_DEFAULT 4797

/* Driver payload of IB_USER_VERBS_CMD_GET_CONTEXT (alloc_ucontext). */
struct mroce_alloc_ucontext_req {
	__u32 abi_version;	/* MROCE_ABI_VERSION of the provider */
	__u32 reserved;		/* must be zero */
};

struct mroce_alloc_ucontext_resp {
	__u32 abi_version;	/* MROCE_ABI_VERSION of the kernel */
	__u16 udp_port;		/* UDP port the device's netns socket is bound to */
	__u16 reserved;
};

#endif /* METAROCE_ABI_H */
