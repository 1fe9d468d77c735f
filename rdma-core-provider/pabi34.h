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

/* Provider-side object wrappers libibverbs knows the layout of. */
enum pabi_mr_type {
	PABI_MR_TYPE_MR = 0,
};

struct verbs_mr {
	struct ibv_mr ibv_mr;
	int mr_type;		/* enum ibv_mr_type of driver.h */
	int access;
};

struct verbs_xrcd;

struct verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask;	/* VERBS_QP_* */
	struct verbs_xrcd *xrcd;
};

enum {
	VERBS_QP_XRCD = 1 << 0,
	VERBS_QP_EX = 1 << 1,
};

struct verbs_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
};

struct verbs_srq {
	struct ibv_srq srq;
	enum ibv_srq_type srq_type;
	struct verbs_xrcd *xrcd;
	struct ibv_cq *cq;
	uint32_t srq_num;
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
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd, struct ibv_ah_attr *attr);
	pabi_op_unused create_counters;
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector);
	struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *context,
					  struct ibv_cq_init_attr_ex *attr);
	pabi_op_unused create_flow;
	pabi_op_unused create_flow_action_esp;
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *attr);
	pabi_op_unused create_rwq_ind_table;
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *attr);
	pabi_op_unused create_srq_ex;
	pabi_op_unused create_wq;
	pabi_op_unused dealloc_mw;
	int (*dealloc_pd)(struct ibv_pd *pd);
	pabi_op_unused dealloc_td;
	int (*dereg_mr)(struct verbs_mr *vmr);
	int (*destroy_ah)(struct ibv_ah *ah);
	pabi_op_unused destroy_counters;
	int (*destroy_cq)(struct ibv_cq *cq);
	pabi_op_unused destroy_flow;
	pabi_op_unused destroy_flow_action;
	int (*destroy_qp)(struct ibv_qp *qp);
	pabi_op_unused destroy_rwq_ind_table;
	int (*destroy_srq)(struct ibv_srq *srq);
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
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask);
	pabi_op_unused modify_qp_rate_limit;
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr,
			  int attr_mask);
	pabi_op_unused modify_wq;
	pabi_op_unused open_qp;
	pabi_op_unused open_xrcd;
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);
	pabi_op_unused post_srq_ops;
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			     struct ibv_recv_wr **bad_wr);
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr,
			       size_t attr_size);
	pabi_op_unused query_ece;
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr);
	pabi_op_unused query_qp_data_in_order;
	pabi_op_unused query_rt_values;
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr);
	pabi_op_unused read_counters;
	pabi_op_unused reg_dm_mr;
	pabi_op_unused reg_dmabuf_mr;
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access);
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
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

/*
 * Commands whose core payload ends in a flexible array: the storage is the
 * header plus the kernel struct's fixed part; libibverbs fills it in.
 */
#define PABI_CMD(name, kstruct)						\
	struct name {							\
		struct ib_uverbs_cmd_hdr hdr;				\
		__u8 core[sizeof(struct kstruct)];			\
	} __attribute__((aligned(8)))

/* Extended commands: the header carries the ex header too. */
#define PABI_CMD_EX(name, kstruct)					\
	struct name {							\
		struct ib_uverbs_cmd_hdr hdr;				\
		struct ib_uverbs_ex_cmd_hdr ex_hdr;			\
		__u8 core[sizeof(struct kstruct)];			\
	} __attribute__((aligned(8)))

PABI_CMD(ibv_reg_mr, ib_uverbs_reg_mr);
PABI_CMD(ibv_create_cq, ib_uverbs_create_cq);
PABI_CMD(ibv_create_qp, ib_uverbs_create_qp);
PABI_CMD(ibv_modify_qp, ib_uverbs_modify_qp);
PABI_CMD(ibv_query_qp, ib_uverbs_query_qp);
PABI_CMD(ibv_create_srq, ib_uverbs_create_srq);
PABI_CMD(ibv_modify_srq, ib_uverbs_modify_srq);
PABI_CMD(ibv_query_srq, ib_uverbs_query_srq);
PABI_CMD_EX(ibv_create_cq_ex, ib_uverbs_ex_create_cq);

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

int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
		   uint64_t hca_va, int access, struct verbs_mr *vmr,
		   struct ibv_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size);
int ibv_cmd_dereg_mr(struct verbs_mr *vmr);
int ibv_cmd_create_cq(struct ibv_context *context, int cqe,
		      struct ibv_comp_channel *channel, int comp_vector,
		      struct ibv_cq *cq, struct ibv_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_create_cq_ex(struct ibv_context *context,
			 const struct ibv_cq_init_attr_ex *cq_attr,
			 struct verbs_cq *cq, struct ibv_create_cq_ex *cmd,
			 size_t cmd_size,
			 struct ib_uverbs_ex_create_cq_resp *resp,
			 size_t resp_size, uint32_t cmd_flags);
int ibv_cmd_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int ibv_cmd_destroy_cq(struct ibv_cq *cq);
int ibv_cmd_create_qp_ex(struct ibv_context *context, struct verbs_qp *qp,
			 struct ibv_qp_init_attr_ex *attr_ex,
			 struct ibv_create_qp *cmd, size_t cmd_size,
			 struct ib_uverbs_create_qp_resp *resp,
			 size_t resp_size);
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct ibv_modify_qp *cmd,
		      size_t cmd_size);
int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *qp_attr,
		     int attr_mask, struct ibv_qp_init_attr *qp_init_attr,
		     struct ibv_query_qp *cmd, size_t cmd_size);
int ibv_cmd_destroy_qp(struct ibv_qp *qp);
int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq,
		       struct ibv_srq_init_attr *attr,
		       struct ibv_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp,
		       size_t resp_size);
int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		       int srq_attr_mask, struct ibv_modify_srq *cmd,
		       size_t cmd_size);
int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		      struct ibv_query_srq *cmd, size_t cmd_size);
int ibv_cmd_destroy_srq(struct ibv_srq *srq);
int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah,
		      struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp, size_t resp_size);
int ibv_cmd_destroy_ah(struct ibv_ah *ah);

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

PABI_SIZE(verbs_mr, 56);
PABI_OFF(verbs_mr, mr_type, 48);
PABI_OFF(verbs_mr, access, 52);
PABI_OFF(verbs_qp, comp_mask, sizeof(struct ibv_qp_ex));
PABI_OFF(verbs_qp, xrcd, sizeof(struct ibv_qp_ex) + 8);
PABI_SIZE(verbs_cq, sizeof(struct ibv_cq_ex));
PABI_OFF(verbs_srq, srq_type, sizeof(struct ibv_srq));
PABI_OFF(verbs_srq, srq_num, sizeof(struct ibv_srq) + 24);
PABI_OFF(verbs_context_ops, create_ah, 13 * 8);
PABI_OFF(verbs_context_ops, create_cq, 15 * 8);
PABI_OFF(verbs_context_ops, create_cq_ex, 16 * 8);
PABI_OFF(verbs_context_ops, create_qp, 19 * 8);
PABI_OFF(verbs_context_ops, create_qp_ex, 20 * 8);
PABI_OFF(verbs_context_ops, create_srq, 22 * 8);
PABI_OFF(verbs_context_ops, dereg_mr, 28 * 8);
PABI_OFF(verbs_context_ops, destroy_ah, 29 * 8);
PABI_OFF(verbs_context_ops, destroy_cq, 31 * 8);
PABI_OFF(verbs_context_ops, destroy_qp, 34 * 8);
PABI_OFF(verbs_context_ops, destroy_srq, 36 * 8);
PABI_OFF(verbs_context_ops, modify_qp, 47 * 8);
PABI_OFF(verbs_context_ops, modify_srq, 49 * 8);
PABI_OFF(verbs_context_ops, poll_cq, 53 * 8);
PABI_OFF(verbs_context_ops, post_recv, 54 * 8);
PABI_OFF(verbs_context_ops, post_send, 55 * 8);
PABI_OFF(verbs_context_ops, post_srq_recv, 57 * 8);
PABI_OFF(verbs_context_ops, query_qp, 61 * 8);
PABI_OFF(verbs_context_ops, query_srq, 64 * 8);
PABI_OFF(verbs_context_ops, reg_mr, 68 * 8);
PABI_OFF(verbs_context_ops, req_notify_cq, 69 * 8);
PABI_SIZE(ibv_reg_mr, 8 + 40);
PABI_SIZE(ibv_create_cq, 8 + 32);
PABI_SIZE(ibv_create_qp, 8 + 56);
PABI_SIZE(ibv_modify_qp, 8 + 112);
PABI_SIZE(ibv_query_qp, 8 + 16);
PABI_SIZE(ibv_create_srq, 8 + 32);
PABI_SIZE(ibv_modify_srq, 8 + 16);
PABI_SIZE(ibv_query_srq, 8 + 16);
PABI_SIZE(ibv_create_cq_ex, 8 + 16 + 32);

#endif /* MROCE_PABI34_H */
