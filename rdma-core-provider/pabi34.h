/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The subset of libibverbs' private provider ABI, IBVERBS_PRIVATE_34
 * (rdma-core v44, Debian 12), that this provider uses.
 *
 * Debian ships no infiniband/driver.h, so these declarations are written by
 * hand from the ABI description (the ABI itself belongs to rdma-core, dual
 * GPL-2.0 / OpenIB BSD).  The layouts must match libibverbs byte for byte;
 * the _Static_asserts pin every offset we rely on to the values of v44's
 * driver.h.  A new PABI renames verbs_register_driver_34, so a mismatched
 * libibverbs fails at dlopen() (and the Makefile refuses to build against
 * one that does not export it) instead of corrupting memory.
 */
#ifndef MROCE_PABI34_H
#define MROCE_PABI34_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

/* ccan/list.h's node: two pointers. */
struct pabi_list_node {
	struct pabi_list_node *next, *prev;
};

enum {
	VERBS_MATCH_SENTINEL = 0,
	VERBS_MATCH_PCI = 1,
	VERBS_MATCH_MODALIAS = 2,
	VERBS_MATCH_DRIVER_ID = 3,
};

struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind;
};

/* One rdma device found in sysfs, handed to match_device/alloc_device. */
struct verbs_sysfs_dev {
	struct pabi_list_node entry;
	void *provider_data;
	const struct verbs_match_ent *match;
	unsigned int flags;
	char sysfs_name[IBV_SYSFS_NAME_MAX];
	dev_t sysfs_cdev;
	char ibdev_name[IBV_SYSFS_NAME_MAX];
	char ibdev_path[IBV_SYSFS_PATH_MAX];
	char modalias[512];
	uint64_t node_guid;
	uint32_t driver_id;
	enum ibv_node_type node_type;
	int ibdev_idx;
	uint32_t num_ports;
	uint32_t abi_ver;
	struct timespec time_created;
};

struct verbs_device;

struct verbs_device_ops {
	const char *name;
	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const struct verbs_match_ent *match_table;
	const struct verbs_device_ops **static_providers;
	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);
	struct verbs_context *(*alloc_context)(struct ibv_device *device,
					       int cmd_fd, void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device,
						int cmd_fd);
	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct verbs_device *device);
};

struct verbs_device {
	struct ibv_device device;	/* must be first */
	const struct verbs_device_ops *ops;
	atomic_int refcount;
	struct pabi_list_node entry;
	struct verbs_sysfs_dev *sysfs;
	uint64_t core_support;
};

/*
 * Every op libibverbs knows, in its (alphabetical) order: verbs_set_ops()
 * reads all of them.  Ops this provider does not implement are typed
 * pabi_op_unused and left NULL; libibverbs then answers EOPNOTSUPP.
 */
typedef void (*pabi_op_unused)(void);

struct verbs_context_ops {
	pabi_op_unused advise_mr;
	pabi_op_unused alloc_dm;
	pabi_op_unused alloc_mw;
	pabi_op_unused alloc_null_mr;
	pabi_op_unused alloc_parent_domain;
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	pabi_op_unused alloc_td;
	pabi_op_unused async_event;
	pabi_op_unused attach_counters_point_flow;
	pabi_op_unused attach_mcast;
	pabi_op_unused bind_mw;
	pabi_op_unused close_xrcd;
	pabi_op_unused cq_event;
	pabi_op_unused create_ah;
	pabi_op_unused create_counters;
	pabi_op_unused create_cq;
	pabi_op_unused create_cq_ex;
	pabi_op_unused create_flow;
	pabi_op_unused create_flow_action_esp;
	pabi_op_unused create_qp;
	pabi_op_unused create_qp_ex;
	pabi_op_unused create_rwq_ind_table;
	pabi_op_unused create_srq;
	pabi_op_unused create_srq_ex;
	pabi_op_unused create_wq;
	pabi_op_unused dealloc_mw;
	int (*dealloc_pd)(struct ibv_pd *pd);
	pabi_op_unused dealloc_td;
	pabi_op_unused dereg_mr;
	pabi_op_unused destroy_ah;
	pabi_op_unused destroy_counters;
	pabi_op_unused destroy_cq;
	pabi_op_unused destroy_flow;
	pabi_op_unused destroy_flow_action;
	pabi_op_unused destroy_qp;
	pabi_op_unused destroy_rwq_ind_table;
	pabi_op_unused destroy_srq;
	pabi_op_unused destroy_wq;
	pabi_op_unused detach_mcast;
	void (*free_context)(struct ibv_context *context);
	pabi_op_unused free_dm;
	pabi_op_unused get_srq_num;
	pabi_op_unused import_dm;
	pabi_op_unused import_mr;
	pabi_op_unused import_pd;
	pabi_op_unused modify_cq;
	pabi_op_unused modify_flow_action_esp;
	pabi_op_unused modify_qp;
	pabi_op_unused modify_qp_rate_limit;
	pabi_op_unused modify_srq;
	pabi_op_unused modify_wq;
	pabi_op_unused open_qp;
	pabi_op_unused open_xrcd;
	pabi_op_unused poll_cq;
	pabi_op_unused post_recv;
	pabi_op_unused post_send;
	pabi_op_unused post_srq_ops;
	pabi_op_unused post_srq_recv;
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr,
			       size_t attr_size);
	pabi_op_unused query_ece;
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
	pabi_op_unused query_qp;
	pabi_op_unused query_qp_data_in_order;
	pabi_op_unused query_rt_values;
	pabi_op_unused query_srq;
	pabi_op_unused read_counters;
	pabi_op_unused reg_dm_mr;
	pabi_op_unused reg_dmabuf_mr;
	pabi_op_unused reg_mr;
	pabi_op_unused req_notify_cq;
	pabi_op_unused rereg_mr;
	pabi_op_unused resize_cq;
	pabi_op_unused set_ece;
	pabi_op_unused unimport_dm;
	pabi_op_unused unimport_mr;
	pabi_op_unused unimport_pd;
};

/*
 * Legacy write() command layouts: the command header followed by the core
 * payload of <rdma/ib_user_verbs.h> (spelled out, because those structs end
 * in flexible arrays).  A provider's driver payload follows directly.
 */
struct ibv_get_context {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
};

struct ibv_query_port {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__u8 port_num;
	__u8 reserved[7];
};

struct ibv_alloc_pd {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
};

/* Exported by libibverbs.so.1 with version IBVERBS_PRIVATE_34. */
void verbs_register_driver_34(const struct verbs_device_ops *ops);
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);
void verbs_uninit_context(struct verbs_context *context);
void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops);
int ibv_read_ibdev_sysfs_file(char *buf, size_t size,
			      struct verbs_sysfs_dev *sysfs_dev,
			      const char *fnfmt, ...)
	__attribute__((format(printf, 4, 5)));
int ibv_cmd_get_context(struct verbs_context *context,
			struct ibv_get_context *cmd, size_t cmd_size,
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);
int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp,
			     size_t *resp_size);
int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr,
		       struct ibv_query_port *cmd, size_t cmd_size);
int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd,
		     struct ibv_alloc_pd *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_pd(struct ibv_pd *pd);

/* Offsets of rdma-core v44 on LP64 (x86_64). */
#define PABI_OFF(t, m, v) \
	_Static_assert(offsetof(struct t, m) == (v), #t "." #m " offset")
#define PABI_SIZE(t, v) _Static_assert(sizeof(struct t) == (v), #t " size")

PABI_SIZE(pabi_list_node, 16);
PABI_SIZE(verbs_match_ent, 24);
PABI_OFF(verbs_match_ent, u, 8);
PABI_OFF(verbs_match_ent, kind, 20);
PABI_SIZE(verbs_sysfs_dev, 992);
PABI_OFF(verbs_sysfs_dev, flags, 32);
PABI_OFF(verbs_sysfs_dev, sysfs_name, 36);
PABI_OFF(verbs_sysfs_dev, sysfs_cdev, 104);
PABI_OFF(verbs_sysfs_dev, ibdev_name, 112);
PABI_OFF(verbs_sysfs_dev, ibdev_path, 176);
PABI_OFF(verbs_sysfs_dev, modalias, 432);
PABI_OFF(verbs_sysfs_dev, node_guid, 944);
PABI_OFF(verbs_sysfs_dev, abi_ver, 968);
PABI_OFF(verbs_sysfs_dev, time_created, 976);
PABI_SIZE(verbs_device_ops, 72);
PABI_OFF(verbs_device_ops, match_device, 32);
PABI_OFF(verbs_device_ops, alloc_context, 40);
PABI_OFF(verbs_device_ops, alloc_device, 56);
PABI_OFF(verbs_device_ops, uninit_device, 64);
PABI_SIZE(verbs_device, 712);
PABI_OFF(verbs_device, ops, 664);
PABI_OFF(verbs_device, sysfs, 696);
PABI_SIZE(verbs_context_ops, 76 * sizeof(void *));
PABI_OFF(verbs_context_ops, alloc_pd, 40);
PABI_OFF(verbs_context_ops, dealloc_pd, 208);
PABI_OFF(verbs_context_ops, free_context, 312);
PABI_OFF(verbs_context_ops, query_device_ex, 464);
PABI_OFF(verbs_context_ops, query_port, 480);
PABI_SIZE(ibv_get_context, 16);
PABI_SIZE(ibv_query_port, 24);
PABI_SIZE(ibv_alloc_pd, 16);

#endif /* MROCE_PABI34_H */
