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

/*
 * ---- Datapath rings -------------------------------------------------------
 *
 * Every queue shared between the provider and the kernel (SQ, RQ, SRQ, CQ)
 * is a ring of fixed-size entries behind a struct mroce_ring header, in one
 * mmap()ed region.  Indices are free-running 32-bit counters; the slot of
 * index i is i & (entries - 1) (entries is a power of two).  The producer
 * fills a slot, then publishes its index with a store-release; the consumer
 * reads the producer index with a load-acquire.  Each index is written by
 * one side only:
 *
 *   ring  producer (prod)        consumer (cons)          cons advances when
 *   SQ    provider, post_send    kernel, at the doorbell  the send completes
 *   RQ    provider, post_recv    kernel, on arrival       the receive completes
 *   SRQ   provider, post_srq_recv kernel, on arrival      a message claims it
 *   CQ    kernel                 provider, poll_cq        the CQE was polled
 *
 * The kernel bounds every index it reads and copies every entry into kernel
 * memory before validating it; a provider that breaks the rules corrupts
 * only its own queues.
 */
#define MROCE_RING_HDR_SIZE	128

struct mroce_ring {
	__u32 prod;		/* producer index */
	__u32 reserved0[15];
	__u32 cons;		/* consumer index, on its own cache line */
	__u32 reserved1[15];
	/* entries follow at MROCE_RING_HDR_SIZE */
};

/* Where the provider mmap()s a ring: offset on the uverbs fd, and length. */
struct mroce_mmap_info {
	__aligned_u64 offset;
	__u32 size;		/* bytes, header included */
	__u32 reserved;
};

struct mroce_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

/* Send queue entry flags. */
#define MROCE_SQE_SIGNALED	(1 << 0)	/* IBV_SEND_SIGNALED */
#define MROCE_SQE_FENCE		(1 << 1)	/* IBV_SEND_FENCE */
#define MROCE_SQE_SOLICITED	(1 << 2)	/* IBV_SEND_SOLICITED */
#define MROCE_SQE_INLINE	(1 << 3)	/* data inline after the header */

/*
 * Send queue entry: 64 bytes of header, then num_sge struct mroce_sge, or
 * inline_len bytes of data when MROCE_SQE_INLINE.  The stride (a power of
 * two >= 64 + max(16 * max_send_sge, max_inline_data)) is returned at QP
 * creation.  opcode takes the values of enum ibv_wr_opcode (== enum
 * ib_wr_opcode for RC).
 */
struct mroce_sqe {
	__aligned_u64 wr_id;
	__u8 opcode;
	__u8 flags;		/* MROCE_SQE_* */
	__u16 num_sge;
	__u32 imm_data;		/* network byte order, as in ibv_send_wr */
	__aligned_u64 remote_addr;
	__u32 rkey;
	__u32 inline_len;
	__aligned_u64 compare_add;	/* CMP_AND_SWP compare / FETCH_AND_ADD add */
	__aligned_u64 swap;
	__u32 ah;		/* UD: AH handle (reserved for UD QPs) */
	__u32 remote_qpn;	/* UD */
	__u32 remote_qkey;	/* UD */
	__u32 reserved;
	/* struct mroce_sge sge[num_sge], or inline data */
};

/* Receive queue entry: 16 bytes, then num_sge struct mroce_sge. */
struct mroce_rqe {
	__aligned_u64 wr_id;
	__u32 num_sge;
	__u32 reserved;
	/* struct mroce_sge sge[num_sge] */
};

/*
 * Completion queue entry, 64 bytes.  status, opcode and wc_flags take the
 * values of enum ibv_wc_status, enum ibv_wc_opcode and enum ibv_wc_flags
 * (identical to the kernel's ib_wc_* values).
 */
struct mroce_cqe {
	__aligned_u64 wr_id;
	__u8 status;
	__u8 opcode;
	__u16 wc_flags;
	__u32 byte_len;
	__u32 imm_data;		/* network byte order */
	__u32 qp_num;
	__u32 src_qp;
	__u32 vendor_err;
	__u16 pkey_index;
	__u16 slid;
	__u8 sl;
	__u8 dlid_path_bits;
	__u8 network_hdr_type;
	__u8 reserved0;
	__u32 reserved[6];
};

/* ---- Object creation payloads (driver data after the core command) ---- */

struct mroce_create_cq_resp {
	struct mroce_mmap_info ring;
	__u32 entries;		/* CQEs in the ring (>= requested cqe) */
	__u32 reserved;
};

struct mroce_create_qp_resp {
	struct mroce_mmap_info sq;	/* size 0 if the QP has no SQ */
	struct mroce_mmap_info rq;	/* size 0 with an SRQ */
	__u32 sq_entries;
	__u32 sq_stride;	/* bytes per struct mroce_sqe slot */
	__u32 rq_entries;
	__u32 rq_stride;	/* bytes per struct mroce_rqe slot */
	__u32 max_inline;
	__u32 reserved;
};

struct mroce_create_srq_resp {
	struct mroce_mmap_info ring;
	__u32 entries;
	__u32 stride;
};

#endif /* METAROCE_ABI_H */
