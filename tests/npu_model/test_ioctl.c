// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_ioctl.c - the driver interface: ioctl numbers and argument sizes equal
 * the reference values (docs/cann_api.md §3, derived from the driver headers
 * with gcc on x86-64), and npu-modeld's dispatcher (modeld/ioctl.c)
 * on in-process cards: the bind protocol, resource ownership, and that
 * malformed requests get the documented errors.  User memory is this
 * process's own, read by the daemon code through process_vm_readv.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "modeld/modeld.h"

/* ---- encoding ----------------------------------------------------------------------- */

static void test_numbers_match_reference(void **state)
{
	assert_int_equal(DAVINCI_INTF_IOCTL_OPEN, 0x5a00);
	assert_int_equal(DAVINCI_INTF_IOCTL_CLOSE, 0x5a01);
	assert_int_equal(TRS_RES_ID_ALLOC, 0xc02c5800);
	assert_int_equal(TRS_RES_ID_FREE, 0x402c5801);
	assert_int_equal(TRS_SQCQ_ALLOC, 0xc060580f);
	assert_int_equal(TRS_SQCQ_FREE, 0x40345810);
	assert_int_equal(TRS_SQCQ_CONFIG, 0x40345811);
	assert_int_equal(TRS_SQCQ_QUERY, 0xc0345812);
	assert_int_equal(TRS_SQCQ_SEND, 0x40405813);
	assert_int_equal(TRS_SQCQ_RECV, 0xc0485814);
	assert_int_equal(DEVMM_SVM_ALLOC, 0x41584d03);
	assert_int_equal(DEVMM_SVM_FREE_PAGES, 0x41584d04);
	assert_int_equal(DEVMM_SVM_MEMCPY, 0xc1584d05);
	assert_int_equal(DEVMM_SVM_ADVISE, 0x41584d0d);
	assert_int_equal(DEVMM_SVM_QUERY_MEM_USEDINFO, 0xc1584d2f);
}

static void test_sizes_match_reference(void **state)
{
	assert_int_equal(sizeof(struct davinci_intf_open_arg), 260);
	assert_int_equal(sizeof(struct trs_res_id_para), 44);
	assert_int_equal(sizeof(struct halSqCqInputInfo), 96);
	assert_int_equal(sizeof(struct halSqCqFreeInfo), 52);
	assert_int_equal(sizeof(struct halSqCqQueryInfo), 52);
	assert_int_equal(sizeof(struct halTaskSendInfo), 64);
	assert_int_equal(sizeof(struct halReportRecvInfo), 72);
	assert_int_equal(sizeof(struct halResourceIdInputInfo), 44);
	assert_int_equal(sizeof(struct devmm_ioctl_arg), 344);
	assert_int_equal(sizeof(rtStarsSqeHeader_t), 8);
	assert_int_equal(sizeof(struct StarsAcsqLog), 64);
	/* The size field of each number is the struct's size. */
	assert_int_equal(_IOC_SIZE(TRS_SQCQ_SEND), sizeof(struct halTaskSendInfo));
	assert_int_equal(_IOC_SIZE(TRS_SQCQ_RECV), sizeof(struct halReportRecvInfo));
	assert_int_equal(_IOC_SIZE(DEVMM_SVM_ALLOC), 344);
	assert_int_equal(offsetof(struct halTaskSendInfo, sqe_addr), 16);
	assert_int_equal(offsetof(struct halTaskSendInfo, sqe_num), 24);
	assert_int_equal(offsetof(struct devmm_ioctl_arg, data), 16);
	assert_int_equal(offsetof(struct StarsAcsqLog, sysCountLow), 8);
}

static void test_stars_log_layout(void **state)
{
	struct md_task t;
	struct StarsAcsqLog r[2];
	uint8_t raw[64];
	uint16_t w0;

	memset(&t, 0, sizeof(t));
	t.sqe.header.type = RT_STARS_SQE_TYPE_KS_AIV;
	t.sqe.header.rtStreamId = 513;
	t.sqe.header.taskId = 65535;
	md_stars_log(r, &t, 0x123456789aull, 0x1234567a00ull);
	/* Decode as msprof does: "=4HQHH..." -> word0 low 6 bits func type, >> 10 sqe type. */
	memcpy(raw, &r[1], 64);
	memcpy(&w0, raw, 2);
	assert_int_equal(w0 & 0x3f, ACSQ_TASK_END_FUNC_TYPE);
	assert_int_equal(w0 >> 10, RT_STARS_SQE_TYPE_KS_AIV);
	assert_int_equal(raw[2] | raw[3] << 8, 0x6bd3);
	assert_int_equal(raw[4] | raw[5] << 8, 513);
	assert_int_equal(raw[6] | raw[7] << 8, 65535);
	assert_int_equal(r[0].head.logType, ACSQ_TASK_START_FUNC_TYPE);
	assert_int_equal((uint64_t)r[0].sysCountHigh << 32 | r[0].sysCountLow, 0x123456789aull);
	assert_int_equal((uint64_t)r[1].sysCountHigh << 32 | r[1].sysCountLow, 0x1234567a00ull);
}

/* ---- dispatcher --------------------------------------------------------------------- */

static int setup_cards(void **state)
{
	uint32_t d;

	memset(&md_cfg, 0, sizeof(md_cfg));
	md_cfg.cards = 2;
	md_cfg.cnt_freq_hz = 50000000;
	npu_card_config_default(&md_cfg.card);
	md_cfg.card.hbm_bytes = 64 << 20;
	md_cards = calloc(2, sizeof(*md_cards));
	for (d = 0; d < 2; d++)
		if (md_card_init(&md_cards[d], d, &md_cfg, 0))
			return -1;
	return 0;
}

static int teardown_cards(void **state)
{
	uint32_t d;

	for (d = 0; d < 2; d++)
		md_card_fini(&md_cards[d]);
	free(md_cards);
	md_cards = NULL;
	return 0;
}

/* Issues cmd on f the way the FUSE layer does: in/out buffers of _IOC_SIZE. */
static int ioc(struct md_file *f, uint32_t cmd, void *arg)
{
	struct md_ioctl_req r;
	uint8_t out[512];
	int ret;

	memset(&r, 0, sizeof(r));
	r.pid = getpid();
	r.cmd = cmd;
	r.arg = (uint64_t)(uintptr_t)arg;
	if (_IOC_DIR(cmd) & _IOC_WRITE) {
		r.in = arg;
		r.in_size = _IOC_SIZE(cmd);
	}
	if (_IOC_DIR(cmd) & _IOC_READ) {
		r.out = out;
		r.out_size = _IOC_SIZE(cmd);
	}
	ret = md_ioctl(f, &r);
	if (ret >= 0 && r.out_len)
		memcpy(arg, out, r.out_len);
	return ret;
}

static int bind(struct md_file *f, const char *module, int dev)
{
	struct davinci_intf_open_arg a;

	memset(&a, 0, sizeof(a));
	strcpy(a.module_name, module);
	a.device_id = dev;
	return ioc(f, DAVINCI_INTF_IOCTL_OPEN, &a);
}

static struct md_file manager(void)
{
	return (struct md_file){ .ino = MD_NODE_MANAGER, .pid = getpid() };
}

static void test_bind_protocol(void **state)
{
	struct md_file f = manager(), g = manager(), dv = { .ino = MD_NODE_DAVINCI0 };
	struct davinci_intf_open_arg a;
	struct trs_res_id_para p = { .res_type = DRV_STREAM_ID };

	/* Unbound: no module to forward to. */
	assert_int_equal(ioc(&f, TRS_RES_ID_ALLOC, &p), -ENXIO);
	assert_int_equal(bind(&f, "NOSUCH", 0), -ENODEV);
	assert_int_equal(bind(&f, DAVINCI_MODULE_TSDRV, 2), -ENODEV);
	assert_int_equal(bind(&f, DAVINCI_MODULE_TSDRV, -1), -ENODEV);
	/* The _IO bind argument is read from the caller: a bad pointer is EFAULT. */
	assert_int_equal(ioc(&f, DAVINCI_INTF_IOCTL_OPEN, (void *)8), -EFAULT);
	memset(&a, 'A', sizeof(a));
	a.device_id = 0;
	assert_int_equal(ioc(&f, DAVINCI_INTF_IOCTL_OPEN, &a), -EINVAL); /* no NUL */
	assert_int_equal(bind(&f, DAVINCI_MODULE_TSDRV, 1), 0);
	assert_int_equal(f.module, MD_MOD_TSDRV);
	assert_int_equal(f.module_dev, 1);
	assert_int_equal(bind(&f, DAVINCI_MODULE_SVM, 0), -EBUSY);
	assert_int_equal(ioc(&f, DAVINCI_INTF_IOCTL_GET_MODULE_STATUS, NULL), 1);
	assert_int_equal(ioc(&g, DAVINCI_INTF_IOCTL_GET_MODULE_STATUS, NULL), 0);
	/* A TSDRV fd does not answer SVM or unknown commands; davinciN answers nothing. */
	assert_int_equal(ioc(&f, DEVMM_SVM_ALLOC, &(struct devmm_ioctl_arg){ 0 }), -ENOTTY);
	assert_int_equal(ioc(&f, _IOW('X', 99, int), &(int){ 0 }), -ENOTTY);
	/* Wrong size = another number. */
	assert_int_equal(ioc(&f, _IOWR('X', 0, struct halSqCqInputInfo),
			     &(struct halSqCqInputInfo){ 0 }),
			 -ENOTTY);
	assert_int_equal(ioc(&dv, DAVINCI_INTF_IOCTL_OPEN, &a), -ENOTTY);
	md_file_release(&f);
	md_file_release(&g);
}

static void test_ids_and_ownership(void **state)
{
	struct md_file f = manager(), g = manager();
	struct trs_res_id_para p;

	assert_int_equal(bind(&f, DAVINCI_MODULE_TSDRV, 0), 0);
	assert_int_equal(bind(&g, DAVINCI_MODULE_TSDRV, 0), 0);
	memset(&p, 0, sizeof(p));
	p.res_type = DRV_EVENT_ID;
	assert_int_equal(ioc(&f, TRS_RES_ID_ALLOC, &p), 0);
	assert_int_equal(md_cards[0].ids[DRV_EVENT_ID].used, 1);
	/* Another fd may not free it; bad types and tsids are refused. */
	assert_int_equal(ioc(&g, TRS_RES_ID_FREE, &p), -EPERM);
	p.res_type = DRV_INVALID_ID;
	assert_int_equal(ioc(&f, TRS_RES_ID_ALLOC, &p), -EINVAL);
	p.res_type = -3;
	assert_int_equal(ioc(&f, TRS_RES_ID_ALLOC, &p), -EINVAL);
	p.res_type = DRV_STREAM_ID;
	p.tsid = 1;
	assert_int_equal(ioc(&f, TRS_RES_ID_ALLOC, &p), -EINVAL);
	p.tsid = 0;
	p.res_type = DRV_EVENT_ID;
	p.id = 4000;
	assert_int_equal(ioc(&f, TRS_RES_ID_FREE, &p), -EINVAL);
	p.id = 99999;
	assert_int_equal(ioc(&f, TRS_RES_ID_FREE, &p), -EINVAL);
	/* Releasing the fd reclaims its ids. */
	md_file_release(&f);
	assert_int_equal(md_cards[0].ids[DRV_EVENT_ID].used, 0);
	md_file_release(&g);
}

static struct halSqCqInputInfo sq_input(void)
{
	struct halSqCqInputInfo in;

	memset(&in, 0, sizeof(in));
	in.type = DRV_NORMAL_TYPE;
	in.sqeSize = 64;
	in.cqeSize = 12;
	in.sqeDepth = 1024;
	in.info[0] = 5;
	return in;
}

static void test_sq_send_and_query(void **state)
{
	struct md_file f = manager(), g = manager();
	struct halSqCqInputInfo in = sq_input();
	struct halTaskSendInfo send;
	struct halSqCqQueryInfo q;
	struct npu_sqe sqe[2];
	struct md_card *c = &md_cards[0];

	assert_int_equal(bind(&f, DAVINCI_MODULE_TSDRV, 0), 0);
	assert_int_equal(bind(&g, DAVINCI_MODULE_TSDRV, 0), 0);
	in.sqeSize = 32;
	assert_int_equal(ioc(&f, TRS_SQCQ_ALLOC, &in), -EINVAL);
	in = sq_input();
	in.type = DRV_CALLBACK_TYPE;
	assert_int_equal(ioc(&f, TRS_SQCQ_ALLOC, &in), -EOPNOTSUPP);
	in = sq_input();
	assert_int_equal(ioc(&f, TRS_SQCQ_ALLOC, &in), 0);
	assert_non_null(c->sq[in.sqId]);
	assert_int_equal(c->sq[in.sqId]->stream_id, 5);

	memset(sqe, 0, sizeof(sqe));
	sqe[0].kind = sqe[1].kind = NPU_SQE_KIND_KERNEL;
	sqe[1].header.taskId = 1;
	memset(&send, 0, sizeof(send));
	send.type = DRV_NORMAL_TYPE;
	send.sqId = in.sqId;
	send.sqe_addr = (uint8_t *)sqe;
	send.sqe_num = 2;
	assert_int_equal(ioc(&g, TRS_SQCQ_SEND, &send), -EPERM); /* not g's SQ */
	send.sqe_addr = (uint8_t *)16;
	assert_int_equal(ioc(&f, TRS_SQCQ_SEND, &send), -EFAULT); /* SQEs unreadable */
	send.sqe_addr = (uint8_t *)sqe;
	send.res[3] = 1;
	assert_int_equal(ioc(&f, TRS_SQCQ_SEND, &send), -EINVAL); /* reserved must be zero */
	send.res[3] = 0;
	send.sqe_num = 0;
	assert_int_equal(ioc(&f, TRS_SQCQ_SEND, &send), -EINVAL);
	send.sqe_num = 2;
	send.sqId = 9999;
	assert_int_equal(ioc(&f, TRS_SQCQ_SEND, &send), -EINVAL);
	send.sqId = in.sqId;
	assert_int_equal(ioc(&f, TRS_SQCQ_SEND, &send), 0);
	assert_int_equal(c->sq[in.sqId]->ingested, 2);

	memset(&q, 0, sizeof(q));
	q.type = DRV_NORMAL_TYPE;
	q.sqId = in.sqId;
	q.prop = DRV_SQCQ_PROP_SQ_TAIL;
	assert_int_equal(ioc(&f, TRS_SQCQ_QUERY, &q), 0);
	assert_int_equal(q.value[0], 2);
	q.prop = DRV_SQCQ_PROP_SQ_HEAD;
	assert_int_equal(ioc(&f, TRS_SQCQ_QUERY, &q), 0);
	assert_int_equal(q.value[0], 0);
	q.prop = DRV_SQCQ_PROP_MAX;
	assert_int_equal(ioc(&f, TRS_SQCQ_QUERY, &q), -EOPNOTSUPP);
	/* The fd goes away with tasks queued: the SQ and its tasks are reclaimed. */
	md_file_release(&f);
	assert_null(c->sq[in.sqId]);
	assert_int_equal(c->tasks_dropped, 2);
	assert_int_equal(c->ids[DRV_SQ_ID].used, 0);
	assert_int_equal(c->ids[DRV_CQ_ID].used, 0);
	md_file_release(&g);
}

static void test_cq_recv_timeout_and_report(void **state)
{
	struct md_file f = manager();
	struct halSqCqInputInfo in = sq_input();
	struct halReportRecvInfo rv;
	struct trs_logic_cqe cqe[4];
	struct md_card *c = &md_cards[1];
	struct npu_sqe bad;
	uint64_t deadline;

	assert_int_equal(bind(&f, DAVINCI_MODULE_TSDRV, 1), 0);
	assert_int_equal(ioc(&f, TRS_SQCQ_ALLOC, &in), 0);
	memset(&rv, 0, sizeof(rv));
	rv.type = DRV_NORMAL_TYPE;
	rv.cqId = in.cqId;
	rv.cqe_addr = (uint8_t *)cqe;
	rv.cqe_num = 4;
	rv.timeout = 1;
	assert_int_equal(ioc(&f, TRS_SQCQ_RECV, &rv), -ETIMEDOUT);
	memset(&bad, 0, sizeof(bad));
	bad.kind = 99;
	bad.header.taskId = 17;
	pthread_mutex_lock(&c->lock);
	assert_int_equal(md_sched_submit(c, c->sq[in.sqId], &bad, 1, md_now_ns()), 0);
	md_sched_run(c, md_now_ns() + 1000000000, &deadline);
	pthread_mutex_unlock(&c->lock);
	assert_int_equal(ioc(&f, TRS_SQCQ_RECV, &rv), 0);
	assert_int_equal(rv.report_cqe_num, 1);
	assert_int_equal(cqe[0].task_id, 17);
	rv.cqe_addr = (uint8_t *)8;
	assert_int_equal(ioc(&f, TRS_SQCQ_RECV, &rv), -ETIMEDOUT);
	md_file_release(&f);
}

static void test_svm_memory(void **state)
{
	struct md_file f = manager(), g = manager();
	struct devmm_ioctl_arg a;
	struct md_card *c = &md_cards[0];

	assert_int_equal(bind(&f, DAVINCI_MODULE_SVM, 0), 0);
	assert_int_equal(bind(&g, DAVINCI_MODULE_SVM, 0), 0);
	memset(&a, 0, sizeof(a));
	a.data.alloc_svm_para.p = 0x100000000000ull;
	a.data.alloc_svm_para.size = 32 << 20;
	assert_int_equal(ioc(&f, DEVMM_SVM_ALLOC, &a), 0);
	a.data.alloc_svm_para.p = 0x100002000000ull;
	assert_int_equal(ioc(&f, DEVMM_SVM_ALLOC, &a), 0);
	/* 64 MiB card: a third 32 MiB range does not fit. */
	a.data.alloc_svm_para.p = 0x100004000000ull;
	assert_int_equal(ioc(&g, DEVMM_SVM_ALLOC, &a), -ENOMEM);
	assert_int_equal(c->hbm.oom_count, 1);
	a.head.devid = 7;
	assert_int_equal(ioc(&f, DEVMM_SVM_ALLOC, &a), -ENODEV);
	a.head.devid = 0;
	memset(&a.data, 0, sizeof(a.data));
	a.data.advise_para.ptr = 0x100000000000ull;
	a.data.advise_para.count = 32 << 20;
	assert_int_equal(ioc(&f, DEVMM_SVM_ADVISE, &a), 0);
	assert_int_equal(ioc(&g, DEVMM_SVM_ADVISE, &a), -EINVAL);
	memset(&a.data, 0, sizeof(a.data));
	a.data.free_pages_para.va = 0x100000000000ull;
	assert_int_equal(ioc(&g, DEVMM_SVM_FREE_PAGES, &a), -EINVAL); /* not g's */
	assert_int_equal(ioc(&f, DEVMM_SVM_FREE_PAGES, &a), 0);
	assert_int_equal(ioc(&f, DEVMM_SVM_FREE_PAGES, &a), -EINVAL); /* twice */
	memset(&a.data, 0, sizeof(a.data));
	assert_int_equal(ioc(&g, DEVMM_SVM_QUERY_MEM_USEDINFO, &a), 0);
	assert_int_equal(NPU_DEVMM_QUERY(&a)->total, 64 << 20);
	assert_int_equal(NPU_DEVMM_QUERY(&a)->used, 32 << 20);
	assert_int_equal(NPU_DEVMM_QUERY(&a)->used_by_caller, 0);
	assert_int_equal(NPU_DEVMM_QUERY(&a)->oom_count, 1);
	/* A process that dies holding memory gives it back. */
	md_file_release(&f);
	assert_int_equal(c->hbm.used, 0);
	md_file_release(&g);
}

/* Channel 50's configuration as msprof passes it: ACSQ task logs enabled. */
static StarsSocLogConfigT stars_cfg = { .acsq_task = TS_PROFILE_COMMAND_TYPE_PROFILING_ENABLE };
/* a macro that expands to an initializer: clang-format takes its braces for a block */
// clang-format off
#define STARS_CTL(dev) { .device_id = (dev), .channel_id = PROF_CHANNEL_STARS_SOC_LOG, \
			 .user_data = (uint64_t)(uintptr_t)&stars_cfg, \
			 .user_data_size = sizeof(stars_cfg) }
// clang-format on

static void test_prof_sessions(void **state)
{
	struct md_file f = manager(), g = manager();
	struct npu_prof_ctl ctl = STARS_CTL(0);
	struct npu_prof_ctl bare = { .device_id = 0, .channel_id = PROF_CHANNEL_STARS_SOC_LOG };
	struct md_file h = manager();
	struct npu_prof_read_arg rd;
	struct StarsAcsqLog buf[8];
	struct md_card *c = &md_cards[0];
	struct md_task t;
	int i;

	assert_int_equal(bind(&f, DAVINCI_MODULE_PROF, 0), 0);
	assert_int_equal(bind(&g, DAVINCI_MODULE_PROF, 0), 0);
	assert_int_equal(ioc(&f, NPU_PROF_IOCTL_START, &ctl), 0);
	assert_int_equal(ioc(&f, NPU_PROF_IOCTL_START, &ctl), -EBUSY);
	assert_int_equal(ioc(&g, NPU_PROF_IOCTL_START, &ctl), 0);
	/* h starts without a configuration: a session, but no task records (below) */
	assert_int_equal(bind(&h, DAVINCI_MODULE_PROF, 0), 0);
	bare.user_data_size = 12; /* no StarsSocLogConfigT is 12 bytes */
	bare.user_data = (uint64_t)(uintptr_t)&stars_cfg;
	assert_int_equal(ioc(&h, NPU_PROF_IOCTL_START, &bare), -EINVAL);
	bare.user_data_size = 0;
	bare.user_data = 0;
	assert_int_equal(ioc(&h, NPU_PROF_IOCTL_START, &bare), 0);
	ctl.channel_id = PROF_CHANNEL_HWTS_LOG;
	assert_int_equal(ioc(&f, NPU_PROF_IOCTL_START, &ctl), -EOPNOTSUPP);
	ctl.device_id = 5;
	assert_int_equal(ioc(&f, NPU_PROF_IOCTL_START, &ctl), -ENODEV);
	memset(&t, 0, sizeof(t));
	pthread_mutex_lock(&c->lock);
	for (i = 0; i < 3; i++) {
		t.sqe.header.taskId = (uint16_t)i;
		md_prof_emit_task(c, &t);
	}
	pthread_mutex_unlock(&c->lock);
	memset(&rd, 0, sizeof(rd));
	rd.channel_id = PROF_CHANNEL_STARS_SOC_LOG;
	rd.buf = (uint64_t)(uintptr_t)buf;
	rd.buf_size = 4 * 64 + 10; /* whole records only */
	assert_int_equal(ioc(&f, NPU_PROF_IOCTL_READ, &rd), 0);
	assert_int_equal(rd.bytes, 4 * 64);
	assert_int_equal(rd.pending, 2);
	assert_int_equal(buf[2].taskId, 1);
	assert_int_equal(buf[3].head.logType, ACSQ_TASK_END_FUNC_TYPE);
	/* A bad buffer loses nothing. */
	rd.buf = 8;
	assert_int_equal(ioc(&f, NPU_PROF_IOCTL_READ, &rd), -EFAULT);
	rd.buf = (uint64_t)(uintptr_t)buf;
	assert_int_equal(ioc(&f, NPU_PROF_IOCTL_READ, &rd), 0);
	assert_int_equal(rd.bytes, 2 * 64);
	assert_int_equal(buf[0].taskId, 2);
	/* g has its own copy of all six records. */
	rd.buf_size = sizeof(buf);
	assert_int_equal(ioc(&g, NPU_PROF_IOCTL_READ, &rd), 0);
	assert_int_equal(rd.bytes, 6 * 64);
	assert_int_equal(rd.dropped, 0);
	assert_int_equal(ioc(&h, NPU_PROF_IOCTL_READ, &rd), 0);
	assert_int_equal(rd.bytes, 0);
	assert_int_equal(rd.pending, 0);
	md_file_release(&h);
	md_file_release(&f);
	assert_int_equal(c->prof_active, 1);
	md_file_release(&g);
	assert_int_equal(c->prof_active, 0);
}

static void test_prof_overflow_counts_drops(void **state)
{
	struct md_file f = manager();
	struct npu_prof_ctl ctl = STARS_CTL(1);
	struct npu_prof_read_arg rd;
	struct md_card *c = &md_cards[1];
	struct md_task t;
	uint32_t i, tasks = NPU_PROF_RING_RECORDS / 2 + 10;

	assert_int_equal(bind(&f, DAVINCI_MODULE_PROF, 0), 0);
	assert_int_equal(ioc(&f, NPU_PROF_IOCTL_START, &ctl), 0);
	memset(&t, 0, sizeof(t));
	pthread_mutex_lock(&c->lock);
	for (i = 0; i < tasks; i++)
		md_prof_emit_task(c, &t);
	pthread_mutex_unlock(&c->lock);
	memset(&rd, 0, sizeof(rd));
	rd.device_id = 1;
	rd.channel_id = PROF_CHANNEL_STARS_SOC_LOG;
	assert_int_equal(ioc(&f, NPU_PROF_IOCTL_READ, &rd), 0);
	assert_int_equal(rd.dropped, 20);
	assert_int_equal(rd.pending, NPU_PROF_RING_RECORDS);
	md_file_release(&f);
}

static void test_prof_poll(void **state)
{
	struct md_file f = manager();
	struct npu_prof_ctl ctl = STARS_CTL(1);
	struct npu_prof_poll_arg pa;
	struct prof_poll_info pi[4];
	struct md_card *c = &md_cards[1];
	struct md_task t;
	uint64_t t0;

	assert_int_equal(bind(&f, DAVINCI_MODULE_PROF, 0), 0);
	assert_int_equal(ioc(&f, NPU_PROF_IOCTL_START, &ctl), 0);
	memset(&pa, 0, sizeof(pa));
	pa.num = 4;
	pa.out = (uint64_t)(uintptr_t)pi;
	pa.timeout_ms = 30;
	/* Nothing to read: waits out the timeout, reports none. */
	t0 = md_now_ns();
	assert_int_equal(ioc(&f, NPU_PROF_IOCTL_POLL, &pa), 0);
	assert_int_equal(pa.ready, 0);
	assert_true(md_now_ns() - t0 >= 30000000ull);
	memset(&t, 0, sizeof(t));
	pthread_mutex_lock(&c->lock);
	md_prof_emit_task(c, &t);
	pthread_mutex_unlock(&c->lock);
	memset(pi, 0xff, sizeof(pi));
	pa.timeout_ms = 0;
	assert_int_equal(ioc(&f, NPU_PROF_IOCTL_POLL, &pa), 0);
	assert_int_equal(pa.ready, 1);
	assert_int_equal(pi[0].device_id, 1);
	assert_int_equal(pi[0].channel_id, PROF_CHANNEL_STARS_SOC_LOG);
	pa.out = 8;
	assert_int_equal(ioc(&f, NPU_PROF_IOCTL_POLL, &pa), -EFAULT);
	pa.num = 0;
	assert_int_equal(ioc(&f, NPU_PROF_IOCTL_POLL, &pa), -EINVAL);
	md_file_release(&f);
}

/* A file released while one of its ioctls was still running gets nothing more. */
static void test_released_file_allocates_nothing(void **state)
{
	struct md_file t = manager(), s = manager();
	struct trs_res_id_para p = { .res_type = DRV_STREAM_ID };
	struct halSqCqInputInfo in = sq_input();
	struct devmm_ioctl_arg a;

	assert_int_equal(bind(&t, DAVINCI_MODULE_TSDRV, 0), 0);
	assert_int_equal(bind(&s, DAVINCI_MODULE_SVM, 0), 0);
	md_file_release(&t);
	md_file_release(&s);
	assert_int_equal(ioc(&t, TRS_RES_ID_ALLOC, &p), -EBADF);
	assert_int_equal(ioc(&t, TRS_SQCQ_ALLOC, &in), -EBADF);
	memset(&a, 0, sizeof(a));
	a.data.alloc_svm_para.p = 0x100000000000ull;
	a.data.alloc_svm_para.size = 4096;
	assert_int_equal(ioc(&s, DEVMM_SVM_ALLOC, &a), -EBADF);
	assert_int_equal(md_cards[0].ids[DRV_STREAM_ID].used, 0);
	assert_int_equal(md_cards[0].hbm.used, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_numbers_match_reference),
		cmocka_unit_test(test_sizes_match_reference),
		cmocka_unit_test(test_stars_log_layout),
		cmocka_unit_test(test_bind_protocol),
		cmocka_unit_test(test_ids_and_ownership),
		cmocka_unit_test(test_sq_send_and_query),
		cmocka_unit_test(test_cq_recv_timeout_and_report),
		cmocka_unit_test(test_svm_memory),
		cmocka_unit_test(test_prof_sessions),
		cmocka_unit_test(test_prof_overflow_counts_drops),
		cmocka_unit_test(test_prof_poll),
		cmocka_unit_test(test_released_file_allocates_nothing),
	};

	return cmocka_run_group_tests(tests, setup_cards, teardown_cards);
}
