/* Test-only LD_PRELOAD fake of libibverbs: one RoCE port, every work request
 * completes at once. Enough to run perftest's TCP exchange for real. */
#define _GNU_SOURCE
#include <infiniband/verbs.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <stdint.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>

#define MAXQ 65536
struct fcq { struct ibv_cq cq; struct ibv_wc q[MAXQ]; unsigned head, tail; pthread_mutex_t m; };
static struct ibv_device dev;
static struct ibv_device *devlist[2];
static uint32_t next_qpn = 0x11, next_key = 0x52d;

static void push(struct fcq *c, struct ibv_wc *wc) {
	pthread_mutex_lock(&c->m);
	c->q[c->tail++ % MAXQ] = *wc;
	pthread_mutex_unlock(&c->m);
}

static int f_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc) {
	struct fcq *c = (struct fcq *)cq; int k = 0;
	pthread_mutex_lock(&c->m);
	while (k < n && c->head != c->tail) wc[k++] = c->q[c->head++ % MAXQ];
	pthread_mutex_unlock(&c->m);
	return k;
}
static int f_req_notify(struct ibv_cq *cq, int solicited) { return 0; }
static int f_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad) {
	for (; wr; wr = wr->next) {
		if (getenv("FAKE_TRACE")) fprintf(stderr, "[fake] post_send op %d len %u raddr %#llx rkey %#x\n", wr->opcode, wr->num_sge ? wr->sg_list[0].length : 0, (unsigned long long)wr->wr.rdma.remote_addr, wr->wr.rdma.rkey);
		if (!(wr->send_flags & IBV_SEND_SIGNALED)) continue;
		struct ibv_wc wc = {0};
		wc.wr_id = wr->wr_id; wc.status = IBV_WC_SUCCESS; wc.qp_num = qp->qp_num;
		wc.opcode = wr->opcode == IBV_WR_RDMA_READ ? IBV_WC_RDMA_READ :
			    wr->opcode == IBV_WR_SEND ? IBV_WC_SEND : IBV_WC_RDMA_WRITE;
		push((struct fcq *)qp->send_cq, &wc);
	}
	return 0;
}
static int f_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad) {
	for (; wr; wr = wr->next) {
		struct ibv_wc wc = {0};
		wc.wr_id = wr->wr_id; wc.status = IBV_WC_SUCCESS; wc.qp_num = qp->qp_num;
		wc.opcode = IBV_WC_RECV; wc.byte_len = wr->num_sge ? wr->sg_list[0].length : 0;
		push((struct fcq *)qp->recv_cq, &wc);
	}
	return 0;
}

struct ibv_device **ibv_get_device_list(int *num) {
	strcpy(dev.name, "rxe0"); strcpy(dev.dev_name, "uverbs0");
	strcpy(dev.dev_path, "/sys/class/infiniband_verbs/uverbs0");
	strcpy(dev.ibdev_path, "/sys/class/infiniband/rxe0");
	dev.node_type = IBV_NODE_CA; dev.transport_type = IBV_TRANSPORT_IB;
	devlist[0] = &dev; devlist[1] = NULL;
	if (num) *num = 1;
	return devlist;
}
void ibv_free_device_list(struct ibv_device **l) {}
const char *ibv_get_device_name(struct ibv_device *d) { return d->name; }
__be64 ibv_get_device_guid(struct ibv_device *d) { return 0; }
struct ibv_context *ibv_open_device(struct ibv_device *d) {
	struct ibv_context *c = calloc(1, sizeof(struct verbs_context) + 4096);
	struct verbs_context *vc = (struct verbs_context *)c;
	c = &vc->context;
	c->device = d; c->cmd_fd = -1; c->async_fd = -1; c->num_comp_vectors = 1;
	c->abi_compat = NULL; /* not extended: inline _ex verbs fall back or fail */
	c->ops.poll_cq = f_poll_cq; c->ops.req_notify_cq = f_req_notify;
	c->ops.post_send = f_post_send; c->ops.post_recv = f_post_recv;
	pthread_mutex_init(&c->mutex, NULL);
	return c;
}
int ibv_close_device(struct ibv_context *c) { return 0; }
int ibv_query_device(struct ibv_context *c, struct ibv_device_attr *a) {
	memset(a, 0, sizeof *a);
	strcpy(a->fw_ver, "0.0.0"); a->vendor_id = 0xffffff; a->vendor_part_id = 0;
	a->max_mr_size = ~0ull; a->page_size_cap = 0xfffff000; a->max_qp = 1 << 16;
	a->max_qp_wr = 16384; a->max_sge = 32; a->max_sge_rd = 32; a->max_cq = 1 << 16;
	a->max_cqe = 32767; a->max_mr = 1 << 16; a->max_pd = 1 << 16;
	a->max_qp_rd_atom = 128; a->max_qp_init_rd_atom = 128; a->max_res_rd_atom = 258048;
	a->max_srq = 1 << 16; a->max_srq_wr = 16384; a->max_srq_sge = 27; a->max_pkeys = 64;
	a->phys_port_cnt = 1;
	return 0;
}
int (ibv_query_port)(struct ibv_context *c, uint8_t port, struct _compat_ibv_port_attr *pa) {
	struct ibv_port_attr *a = (struct ibv_port_attr *)pa;
	memset(a, 0, offsetof(struct ibv_port_attr, flags));
	a->state = IBV_PORT_ACTIVE; a->max_mtu = IBV_MTU_4096;
	a->active_mtu = getenv("FAKE_MTU") ? atoi(getenv("FAKE_MTU")) : IBV_MTU_1024;
	a->gid_tbl_len = 2; a->port_cap_flags = 0x10000; a->max_msg_sz = 0x80000000;
	a->pkey_tbl_len = 1; a->active_width = 1; a->active_speed = 1; a->phys_state = 5;
	a->link_layer = IBV_LINK_LAYER_ETHERNET;
	return 0;
}
static void gid_of(int index, union ibv_gid *g) {
	memset(g, 0, sizeof *g);
	if (index == 0) { g->raw[0] = 0xfe; g->raw[1] = 0x80; g->raw[8] = 0x02; g->raw[15] = 0x0f; }
	else { g->raw[10] = 0xff; g->raw[11] = 0xff; g->raw[12] = 10; g->raw[13] = 0; g->raw[14] = 2; g->raw[15] = 15; }
}
int ibv_query_gid(struct ibv_context *c, uint8_t port, int index, union ibv_gid *g) { gid_of(index, g); return 0; }
int _ibv_query_gid_ex(struct ibv_context *c, uint32_t port, uint32_t index, struct ibv_gid_entry *e, uint32_t flags, size_t sz) {
	memset(e, 0, sz); gid_of(index, &e->gid); e->gid_index = index; e->port_num = port;
	e->gid_type = IBV_GID_TYPE_ROCE_V2; e->ndev_ifindex = 2; return 0;
}
int ibv_query_pkey(struct ibv_context *c, uint8_t port, int index, __be16 *pkey) { *pkey = 0xffff; return 0; }
struct ibv_pd *ibv_alloc_pd(struct ibv_context *c) { struct ibv_pd *p = calloc(1, sizeof *p); p->context = c; return p; }
int ibv_dealloc_pd(struct ibv_pd *p) { return 0; }
static struct ibv_mr *mk_mr(struct ibv_pd *pd, void *addr, size_t len) {
	struct ibv_mr *m = calloc(1, sizeof *m);
	m->context = pd->context; m->pd = pd; m->addr = addr; m->length = len;
	m->lkey = m->rkey = next_key++;
	return m;
}
struct ibv_mr *(ibv_reg_mr)(struct ibv_pd *pd, void *addr, size_t len, int access) { return mk_mr(pd, addr, len); }
struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t len, uint64_t iova, unsigned int access) { return mk_mr(pd, addr, len); }
int ibv_dereg_mr(struct ibv_mr *m) { return 0; }
struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *c) { struct ibv_comp_channel *ch = calloc(1, sizeof *ch); ch->context = c; ch->fd = -1; return ch; }
int ibv_destroy_comp_channel(struct ibv_comp_channel *ch) { return 0; }
struct ibv_cq *ibv_create_cq(struct ibv_context *c, int cqe, void *ctx, struct ibv_comp_channel *ch, int vec) {
	struct fcq *f = calloc(1, sizeof *f); pthread_mutex_init(&f->m, NULL);
	f->cq.context = c; f->cq.cqe = cqe; f->cq.cq_context = ctx; f->cq.channel = ch;
	return &f->cq;
}
int ibv_destroy_cq(struct ibv_cq *cq) { return 0; }
struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *a) {
	struct ibv_qp *q = calloc(1, sizeof *q);
	q->context = pd->context; q->pd = pd; q->send_cq = a->send_cq; q->recv_cq = a->recv_cq;
	q->srq = a->srq; q->qp_type = a->qp_type; q->qp_num = next_qpn++; q->state = IBV_QPS_RESET;
	q->qp_context = a->qp_context;
	pthread_mutex_init(&q->mutex, NULL); pthread_cond_init(&q->cond, NULL);
	return q;
}
int ibv_modify_qp(struct ibv_qp *q, struct ibv_qp_attr *a, int mask) {
	if (mask & IBV_QP_STATE) q->state = a->qp_state;
	if (getenv("FAKE_TRACE")) fprintf(stderr, "[fake] modify_qp mask %#x state %d mtu %d dqpn %#x rq_psn %#x sq_psn %#x timeout %d retry %d rnr %d max_rd %d max_dest_rd %d min_rnr %d\n",
		mask, a->qp_state, a->path_mtu, a->dest_qp_num, a->rq_psn, a->sq_psn, a->timeout, a->retry_cnt, a->rnr_retry, a->max_rd_atomic, a->max_dest_rd_atomic, a->min_rnr_timer);
	return 0;
}
int ibv_query_qp(struct ibv_qp *q, struct ibv_qp_attr *a, int mask, struct ibv_qp_init_attr *ia) { memset(a, 0, sizeof *a); a->qkey = 0x11111111; return 0; }
int ibv_destroy_qp(struct ibv_qp *q) { return 0; }
struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *a) { struct ibv_ah *h = calloc(1, sizeof *h); h->context = pd->context; h->pd = pd; return h; }
int ibv_destroy_ah(struct ibv_ah *h) { return 0; }
struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *a) { errno = EOPNOTSUPP; return NULL; }
int ibv_destroy_srq(struct ibv_srq *s) { return 0; }
int ibv_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq, void **ctx) { return -1; }
void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int n) {}
