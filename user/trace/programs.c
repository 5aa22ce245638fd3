// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * programs.c - probe plans of a target, which BPF programs serve each
 * site, and attaching them (PROBE records for what attached); the loader
 * hook, --step, the PyTorch object and the Level0 launch marks.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "ascbpf_events.h"
#include "schedule.h" /* before the skeleton: its .rodata holds a struct asc_sched */
#include "ascbpf.skel.h"
#include "ascbpf_maps.h"
#include "capture/capture.h"
#include "capture/records.h"
#include "discovery/elfsym.h"
#include "discovery/pytorch.h"
#include "discovery/pystack.h"
#include "lib/log.h"
#include "trace/names.h"
#include "trace/trace_priv.h"

static int probe_add(struct trace *t, uint32_t id, const struct asc_probe_site *s, const char *lib,
		     const char *sym, uint16_t layer, uint16_t kind, pid_t pid)
{
	struct probe_info *pi;

	if (id >= t->nr_probes) {
		size_t n = id + 64;
		struct probe_info *np = realloc(t->probes, n * sizeof(*np));
		uint16_t *nl;

		if (!np)
			return -ENOMEM;
		t->probes = np;
		nl = realloc(t->layers, n * sizeof(*nl));
		if (!nl)
			return -ENOMEM;
		t->layers = nl;
		memset(t->probes + t->nr_probes, 0, (n - t->nr_probes) * sizeof(*np));
		memset(t->layers + t->nr_probes, 0, (n - t->nr_probes) * sizeof(*nl));
		t->nr_probes = n;
	}
	pi = &t->probes[id];
	pi->layer = layer;
	pi->kind = kind;
	pi->flags = s ? s->flags : 0;
	pi->offset = s ? s->attach_offset : 0;
	pi->lib = strdup(lib ? lib : "");
	pi->sym = strdup(sym ? sym : "");
	pi->pid = pid;
	pi->used = 1;
	t->layers[id] = layer;
	t->cons.probe_layer = t->layers;
	t->cons.nr_probe_layer = t->nr_probes;
	return pi->lib && pi->sym ? 0 : -ENOMEM;
}

static int write_probe_rec(struct target *tg, uint32_t id, const struct probe_info *pi)
{
	size_t ll = strlen(pi->lib), sl = strlen(pi->sym);
	size_t size = asc_probe_rec_size(ll, sl);
	struct asc_probe *p = calloc(1, size);
	int err;

	if (!p)
		return -ENOMEM;
	p->hdr.type = ASC_REC_PROBE;
	p->hdr.size = size;
	p->hdr.tgid = tg->pid;
	p->hdr.probe_id = id;
	p->hdr.ts_ns = now_ns(CLOCK_MONOTONIC);
	p->layer = pi->layer;
	p->kind = pi->kind;
	p->flags = pi->flags;
	p->offset = pi->offset;
	p->lib_len = ll;
	p->sym_len = sl;
	memcpy(p->strings, pi->lib, ll + 1);
	memcpy(p->strings + ll + 1, pi->sym, sl + 1);
	err = asc_capture_append(tg->w, p, size);
	free(p);
	return err;
}

/* Which programs serve a site, by its kind. */
static int select_progs(const struct asc_probe_site *site, void *ctx, struct bpf_program **entry,
			struct bpf_program **ret)
{
	struct trace *t = ctx;
	struct ascbpf_bpf *sk = t->skel;
	uint32_t spec_flags = site->spec ? site->spec->flags : 0;
	unsigned int kind = site->spec ? site->spec->kind : ASC_PK_CALL;

	*ret = (spec_flags & ASC_SPEC_NO_RETPROBE) ? NULL : sk->progs.asc_call_exit;
	/* --profile-memory: segment (GE) and driver (APP) allocations as MEM records too */
	if (t->o.profile_memory && kind == ASC_PK_CALL && site->sym) {
		if (!strcmp(site->sym, "rtMalloc")) {
			*entry = sk->progs.asc_ge_alloc_enter;
			*ret = sk->progs.asc_ge_alloc_exit;
			return 0;
		}
		if (!strcmp(site->sym, "halMemAlloc")) {
			*entry = sk->progs.asc_app_alloc_enter;
			*ret = sk->progs.asc_app_alloc_exit;
			return 0;
		}
		if (!strcmp(site->sym, "rtFree")) {
			*entry = sk->progs.asc_ge_free_enter;
			return 0;
		}
		if (!strcmp(site->sym, "halMemFree")) {
			*entry = sk->progs.asc_app_free_enter;
			return 0;
		}
	}
	switch (kind) {
	case ASC_PK_FUNCNAME_GET:
		*entry = sk->progs.asc_funcname_get_enter;
		*ret = sk->progs.asc_funcname_get_exit;
		break;
	case ASC_PK_BINARY_LOAD:
		*entry = sk->progs.asc_binary_load_enter;
		*ret = sk->progs.asc_binary_load_exit;
		break;
	case ASC_PK_FUNCNAME_ENTRY:
		*entry = sk->progs.asc_funcname_entry_enter;
		*ret = sk->progs.asc_funcname_entry_exit;
		break;
	case ASC_PK_FUNCNAME_REG:
		/* a Runtime@ call only at Level2; below, the FUNCNAME at entry is all */
		*entry = sk->progs.asc_funcname_reg_enter;
		if (t->o.level < 2)
			*ret = NULL;
		break;
	case ASC_PK_OPNAME_STDSTR:
		*entry = (site->flags & ASC_PROBE_CXX_OLD_ABI) ? sk->progs.asc_opname_cowstr_enter :
								 sk->progs.asc_opname_stdstr_enter;
		break;
	case ASC_PK_OPNAME_CSTR:
		*entry = sk->progs.asc_opname_cstr_enter;
		break;
	case ASC_PK_ENQUEUE:
		/* Level0: QUEUE (+ OPNAME) at entry only; the Dequeue span is what joins */
		*entry = (site->flags & ASC_PROBE_CXX_OLD_ABI) ? sk->progs.asc_enqueue_cow_enter :
								 sk->progs.asc_enqueue_enter;
		if (t->o.level < 1)
			*ret = NULL;
		break;
	case ASC_PK_DEQUEUE:
		*entry = sk->progs.asc_dequeue_enter;
		break;
	case ASC_PK_SQE_SEND:
		/* hal* calls are Level2; below, the SQE record at entry is all */
		*entry = sk->progs.asc_sqe_send_enter;
		if (t->o.level < 2)
			*ret = NULL;
		break;
	case ASC_PK_MEM_REPORT:
		*entry = sk->progs.asc_mem_report_enter;
		*ret = NULL;
		break;
	case ASC_PK_STEP:
		/* a step ends where the boundary function returns (bpf/ascbpf.bpf.c) */
		*entry = NULL;
		*ret = sk->progs.asc_step_exit;
		break;
	case ASC_PK_ATEN_OP:
		*entry = t->select_pt ? asc_pytorch_aten_prog(t->select_pt) : NULL;
		if (!*entry)
			*entry = sk->progs.asc_call_enter;
		else /* its return reads the sequence counter (user/discovery/seqnr.h) */
			*ret = asc_pytorch_aten_ret_prog(t->select_pt);
		break;
	case ASC_PK_AUTOGRAD_EVAL:
		*entry = t->select_pt ? asc_pytorch_autograd_prog(t->select_pt) :
					sk->progs.asc_call_enter;
		if (t->select_pt)
			*ret = asc_pytorch_autograd_ret_prog(t->select_pt);
		break;
	case ASC_PK_NODE_LAUNCH:
		/* a Runtime@ call at Level2; below, the launch span for Node@launch alone */
		if (t->o.level >= 2) {
			*entry = asc_probe_launch_name_arg(site->sym) == 1 ?
					 sk->progs.asc_call_aicpu_enter :
					 sk->progs.asc_call_enter;
			break;
		}
		*ret = sk->progs.asc_launch_exit;
		/* fall through */
	case ASC_PK_LAUNCH_MARK:
		if (kind == ASC_PK_LAUNCH_MARK)
			*ret = NULL;
		if (asc_probe_launch_name_arg(site->sym) == 1 &&
		    asc_probe_launch_stream_arg(site->sym) == 5) {
			*entry = sk->progs.asc_launch_aicpu; /* names its kernel (arg1) */
			break;
		}
		/* a table: one launch call a line */
		// clang-format off
		switch (asc_probe_launch_stream_arg(site->sym)) {
		case 0: *entry = sk->progs.asc_launch_s0; break;
		case 1: *entry = sk->progs.asc_launch_s1; break;
		case 2: *entry = sk->progs.asc_launch_s2; break;
		case 3: *entry = sk->progs.asc_launch_s3; break;
		case 4: *entry = sk->progs.asc_launch_s4; break;
		case 5: *entry = sk->progs.asc_launch_s5; break;
		default: return 1;	/* a call the table does not know: not attached */
		}
		// clang-format on
		break;
	case ASC_PK_HCCL_OP:
		*entry = sk->progs.asc_hccl_op_enter;
		*ret = sk->progs.asc_hccl_op_exit;
		break;
	case ASC_PK_HCCL_COMM_INIT:
		*entry = site->sym && !strcmp(site->sym, "HcclCommInitClusterInfo") ?
				 sk->progs.asc_hccl_comm_cluster_enter :
				 sk->progs.asc_hccl_comm_root_enter;
		*ret = sk->progs.asc_hccl_comm_exit;
		break;
	case ASC_PK_HCCL_REPORT:
		*entry = sk->progs.asc_hccl_report_enter;
		*ret = NULL;
		break;
	case ASC_PK_HCCL_HASH:
		*entry = sk->progs.asc_hccl_hash_enter;
		*ret = sk->progs.asc_hccl_hash_exit;
		break;
	case ASC_PK_UNWIND_RAISE:
	case ASC_PK_UNWIND_CATCH:
		if (!t->unwind_guard)
			return 1;
		*entry = kind == ASC_PK_UNWIND_RAISE ? sk->progs.asc_unwind_raise :
						       sk->progs.asc_unwind_catch;
		*ret = NULL;
		break;
	case ASC_PK_CALL:
	default:
		*entry = asc_probe_launch_name_arg(site->sym) == 1 ?
				 sk->progs.asc_call_aicpu_enter :
				 sk->progs.asc_call_enter;
		break;
	}
	return 0;
}

/* A site of a rescan that an earlier plan of the same target already attached. */
struct rescan_ctx {
	struct trace *t;
	struct target *tg;
	size_t upto_plan;    /* plans [0, upto_plan) are attached */
	const uint8_t *mask; /* NULL, or per site of plans[upto_plan]: 0 = not now */
};

int site_in_earlier_plan(const struct target *tg, size_t nr_plans, const char *path, uint64_t off)
{
	size_t i, j;

	for (i = 0; i < nr_plans; i++)
		for (j = 0; j < tg->plans[i].nr_sites; j++) {
			const struct asc_probe_site *s = &tg->plans[i].sites[j];

			if (s->attach_offset == off && !strcmp(s->path, path))
				return 1;
		}
	return 0;
}

static int select_new(const struct asc_probe_site *site, void *ctx, struct bpf_program **entry,
		      struct bpf_program **ret)
{
	struct rescan_ctx *rc = ctx;

	if (rc->mask && !rc->mask[site - rc->tg->plans[rc->upto_plan].sites])
		return 1;
	if (site_in_earlier_plan(rc->tg, rc->upto_plan, site->path, site->attach_offset))
		return 1;
	return select_progs(site, rc->t, entry, ret);
}

uint32_t families_of(const struct asc_trace_opts *o)
{
	uint32_t f = 0;

	if (o->activities & ASC_ACT_CPU)
		f |= ASC_FAM_FRAMEWORK;
	if (o->activities & ASC_ACT_NPU)
		f |= ASC_FAM_CANN | ASC_FAM_DRIVER;
	if (o->profile_memory)
		f |= ASC_FAM_MEMORY;
	if (!o->step)
		f |= ASC_FAM_STEP;
	return f;
}

static void warn_missing(const struct target *tg, const struct asc_probe_plan *plan)
{
	size_t i;

	for (i = 0; i < plan->nr_missing; i++) {
		const struct asc_probe_missing *m = &plan->missing[i];

		if (m->spec && (m->spec->flags & ASC_SPEC_OPTIONAL))
			continue;
		if (m->spec && !strcmp(m->reason, "library not mapped"))
			continue; /* the library may be dlopened later */
		if (!strcmp(m->reason, ASC_PROBE_COMPAT_REASON))
			continue; /* traced in libacl_rt.so */
		asc_warn("trace: pid %d: %s:%s not attached: %s\n", tg->pid,
			 m->spec ? m->spec->lib : "?", m->spec ? m->spec->sym : "?", m->reason);
	}
	/* the symbol mode of each library read with a separate debug file (the other mode is
	 * the default: .dynsym, or the library's own .symtab) */
	for (i = 0; i < plan->nr_libs; i++)
		if (plan->libs_debug[i])
			asc_info("trace: pid %d: %s: debug symbols from %s\n", tg->pid,
				 plan->libs_seen[i], plan->libs_debug[i]);
}

/* Also for sequence numbers (user/discovery/seqnr.h): whenever aten ops are traced. */
static int wants_pytorch(const struct asc_trace_opts *o)
{
	return (o->activities & ASC_ACT_CPU) || o->record_shapes || o->with_stack || o->step_py ||
	       o->profile_memory;
}

/*
 * Real PyTorch (user/discovery/pytorch.h): when the plan has aten op sites and
 * shapes, Python stacks, PyTorch memory (--profile-memory) or --step-py are
 * asked for, the PyTorch BPF object is opened for this process and shares
 * our ring buffer, gates and stats.  Anything it cannot discover is switched
 * off there with a warning.  1 if it was opened by this call (the caller
 * writes its description once the aten sites are added), else 0.
 */
/*
 * A Python job's default step boundary (no --step, no --step-py): every call
 * of a Python function named "step" with aten ops in it, which is how each
 * torch.optim optimizer's (and torch_npu's fused ones') optimizer.step() and
 * a job's own profiler's prof.step() are named.  Tried wherever the PyTorch
 * object is opened anyway; a C++ job (no interpreter) keeps the probe
 * table's torch::optim step instead.
 */
#define DEFAULT_STEP_PY "step"

static int default_step_py(const struct asc_trace_opts *o)
{
	return !o->step && !o->step_py;
}

static int setup_pytorch(struct trace *t, struct target *tg, const struct asc_probe_plan *plan)
{
	struct asc_pytorch_opts po = {
		.record_shapes = t->o.record_shapes,
		.with_stack = t->o.with_stack,
		.step_py = default_step_py(&t->o) ? DEFAULT_STEP_PY : t->o.step_py,
		.step_py_default = default_step_py(&t->o),
		.profile_memory = t->o.profile_memory,
		.prepare_prog = asc_attach_prepare_multi,
	};
	struct asc_sched none = {};
	struct asc_py_offsets off;
	char path[PATH_MAX];
	uint64_t bias;
	size_t i;
	int err;

	if (tg->pt || tg->pt_failed || !wants_pytorch(&t->o))
		return 0;
	for (i = 0; i < plan->nr_sites; i++)
		if (plan->sites[i].spec && plan->sites[i].spec->kind == ASC_PK_ATEN_OP)
			break;
	if (i == plan->nr_sites && !t->o.step_py)
		return 0;
	tg->pt_failed = 1;
	if (t->skel->rodata->no_attach_cookie) {
		/* its programs take their sites from cookies (bpf/pytorch.bpf.c) */
		asc_warn("trace: pid %d: PyTorch hooks need bpf_get_attach_cookie (kernel "
			 "5.15): no shapes or Python stacks\n",
			 tg->pid);
		return 0;
	}
	tg->pt = asc_pytorch_open(tg->pid, &po);
	if (!tg->pt) {
		asc_warn("trace: pid %d: PyTorch hooks unavailable (%s): no shapes or Python "
			 "stacks\n",
			 tg->pid, strerror(errno));
		return 0;
	}
	err = asc_pytorch_load(tg->pt, bpf_map__fd(t->skel->maps.events),
			       bpf_map__fd(t->skel->maps.tgids), bpf_map__fd(t->skel->maps.stats),
			       t->o.sched.enabled ? &t->o.sched : &none);
	if (err) {
		asc_warn("trace: pid %d: cannot load the PyTorch BPF object: %s\n", tg->pid,
			 strerror(-err));
		asc_pytorch_close(tg->pt);
		tg->pt = NULL;
		return 0;
	}
	tg->pt_failed = 0;
	if (t->o.step_py && asc_pytorch_attach_step_py(tg->pt))
		asc_warn("trace: pid %d: --step-py %s: cannot attach the Python entry probe\n",
			 tg->pid, t->o.step_py);
	if (po.step_py_default && !asc_pytorch_attach_step_py(tg->pt)) {
		/* its boundaries go to the tgids map only: this process leaves the fast path */
		t->step_py_active = 1;
		if (t->skel->bss->fast_tgid == (__u32)tg->pid)
			__atomic_store_n(&t->skel->bss->fast_tgid, 0, __ATOMIC_RELEASE);
	}
	/* c10::reportMemoryUsageToProfiler; the warning of a failure is its own */
	if (t->o.profile_memory)
		asc_pytorch_attach_memory(tg->pt);
	if (t->o.with_stack && !asc_py_find_image(tg->pid, path, sizeof(path), &bias) &&
	    !asc_py_offsets_discover(path, &off) && (off.valid & ASC_PYOFF_CODE))
		tg->pyres = asc_pystack_resolver_new(tg->pid, &off);
	return 1;
}

/* The CONFIG lines of the PyTorch discovery, after its aten sites are added. */
static void describe_pytorch(struct target *tg)
{
	if (tg->w) {
		char *desc = calloc(1, 4096);

		if (desc && asc_pytorch_describe(tg->pt, desc, 4096) >= 0) {
			char *line, *save = NULL;

			for (line = strtok_r(desc, "\n", &save); line;
			     line = strtok_r(NULL, "\n", &save))
				append_text(tg, ASC_REC_CONFIG, 0, line);
		}
		free(desc);
	}
}

/*
 * Attaches the sites of tg->plans[idx] that no earlier plan had and, with a
 * mask, only those whose mask byte is set (lazyops.c); writes their PROBE
 * records.  The number attached, or -errno.
 */
int attach_sites(struct trace *t, struct target *tg, size_t idx, const uint8_t *mask)
{
	struct asc_probe_plan *plan = &tg->plans[idx];
	struct rescan_ctx rc = { t, tg, idx, mask };
	int *errs = NULL;
	uint16_t kind;
	size_t i;
	int n;

	if (plan->nr_sites) {
		errs = calloc(plan->nr_sites, sizeof(*errs));
		if (!errs)
			return -ENOMEM;
		for (i = 0; i < plan->nr_sites; i++)
			errs[i] = 1; /* stays 1 where select_new skipped the site */
	}
	t->select_pt = tg->pt;
	n = asc_attach_plan(t->set, plan, 0, select_new, &rc, tg->pid, errs);
	t->select_pt = NULL;
	if (n < 0) {
		free(errs);
		return n;
	}
	for (i = 0; i < plan->nr_sites; i++) {
		const struct asc_probe_site *s = &plan->sites[i];
		const struct asc_probe_spec *sp = s->spec;

		if (errs[i] == 1 || (mask && !mask[i]))
			continue; /* asc_attach_plan reports 0 for the sites it skipped */
		/*
		 * select_new skipped it (an earlier plan attached the same place):
		 * asc_attach_plan reports 0 for skipped sites, but this id has no
		 * link, so no probe_info and no PROBE record of its own.
		 */
		if (idx && site_in_earlier_plan(tg, idx, s->path, s->attach_offset))
			continue;
		if (errs[i] < 0) {
			asc_warn("trace: pid %d: %s at %s+0x%llx not attached: %s\n", tg->pid,
				 s->sym, s->path, (unsigned long long)s->attach_offset,
				 strerror(-errs[i]));
			continue;
		}
		kind = sp ? sp->kind : ASC_PK_CALL;
		if (kind == ASC_PK_NODE_LAUNCH && t->o.level >= 2)
			kind = ASC_PK_CALL; /* traced as a plain call there (select_progs) */
		if (probe_add(t, s->id, s, s->path, s->sym, sp ? sp->layer : 0, kind, tg->pid)) {
			free(errs);
			return -ENOMEM;
		}
		t->probes[s->id].flags = s->flags;
		if (tg->w)
			write_probe_rec(tg, s->id, &t->probes[s->id]);
		tg->nr_attached++;
	}
	free(errs);
	asc_dbg("trace: pid %d: plan %zu attached %d of %zu sites%s\n", tg->pid, idx, n,
		plan->nr_sites, mask ? " (a selection)" : "");
	return n;
}

/* Attaches tg->plans[idx] (without uprobe_multi only the aten ops used so far: lazyops.c). */
int attach_plan(struct trace *t, struct target *tg, size_t idx)
{
	struct asc_probe_plan *plan = &tg->plans[idx];
	uint8_t *mask;
	int opened, n;

	opened = setup_pytorch(t, tg, plan);
	if (tg->pt)
		asc_pytorch_add_sites(tg->pt, plan);
	if (opened)
		describe_pytorch(tg);
	if (tg->w) /* what names ops and nodes at convert time, before the sites fire */
		asc_trace_write_names(tg->w, tg->pid, tg->pt, tg->plans, idx, opened);
	mask = lazy_plan_mask(t, tg, idx);
	n = attach_sites(t, tg, idx, mask);
	free(mask);
	if (n >= 0 && idx == 0)
		warn_missing(tg, plan);
	return n;
}

/* Appends lib to the ", "-separated list in buf (len bytes) unless it is there already. */
void lib_list_add(char *buf, size_t len, size_t *pos, const char *lib)
{
	if (*pos >= len - 1 || strstr(buf, lib))
		return;
	*pos += snprintf(buf + *pos, len - *pos, "%s%s", *pos ? ", " : "", lib);
}

int plan_target(struct trace *t, struct target *tg, int quiet_enoent)
{
	struct asc_probe_plan *np;
	int err;

	np = realloc(tg->plans, (tg->nr_plans + 1) * sizeof(*np));
	if (!np)
		return -ENOMEM;
	tg->plans = np;
	memset(&tg->plans[tg->nr_plans], 0, sizeof(*np));
	err = asc_probe_plan_build_level(tg->pid, asc_probe_table, t->families, t->o.level,
					 t->next_id, &tg->plans[tg->nr_plans]);
	/* only the unwind guard's sites: kept for a --step LIB:SYMBOL site's return probe */
	if (err == -ENOENT && tg->plans[tg->nr_plans].nr_sites && t->o.step &&
	    strchr(t->o.step, ':'))
		err = 0;
	if (err == -ENOENT && !quiet_enoent) {
		const struct asc_probe_plan *p = &tg->plans[tg->nr_plans];
		char libs[512] = "";
		size_t i, pos = 0;

		for (i = 0; i < p->nr_missing && pos < sizeof(libs) - 1; i++)
			if (p->missing[i].spec && p->missing[i].spec->lib)
				lib_list_add(libs, sizeof(libs), &pos, p->missing[i].spec->lib);
		asc_err("trace: pid %d (%s) has no Ascend libraries mapped; looked for: %s\n",
			tg->pid, tg->comm, libs[0] ? libs : "(the probe table is empty)");
	} else if (err == -ESRCH) {
		asc_err("trace: pid %d: no such process\n", tg->pid);
	} else if (err && err != -ENOENT) {
		asc_err("trace: pid %d: cannot resolve probes: %s\n", tg->pid, strerror(-err));
	}
	if (err) {
		asc_probe_plan_free(&tg->plans[tg->nr_plans]);
		return err;
	}
	t->next_id += tg->plans[tg->nr_plans].nr_sites;
	tg->nr_plans++;
	return 0;
}

/*
 * --step LIB:SYMBOL: one STEP site resolved here (the probe table is not
 * involved).  The library is matched by basename in the target's maps.
 */
int attach_custom_step(struct trace *t, struct target *tg)
{
	char lib[256], host[PATH_MAX];
	const char *colon = strchr(t->o.step, ':');
	const struct asc_elf_symbol *sym;
	struct asc_attach_site site;
	struct asc_maps maps;
	struct asc_elf *elf = NULL;
	const char *path = NULL;
	uint64_t off, inode = 0;
	size_t i;
	int err, n;

	snprintf(lib, sizeof(lib), "%.*s", (int)(colon - t->o.step), t->o.step);
	err = asc_maps_read(tg->pid, &maps);
	if (err)
		return err;
	for (i = 0; i < maps.nr; i++)
		if (maps.entries[i].path && asc_lib_name_matches(maps.entries[i].path, lib)) {
			path = maps.entries[i].path;
			inode = maps.entries[i].inode;
			break;
		}
	if (!path && lib[0] == '/' && !access(lib, R_OK))
		path = lib;
	if (!path) {
		if (!tg->is_child)
			asc_warn("trace: --step: %s is not mapped in pid %d; no step boundaries\n",
				 lib, tg->pid);
		asc_maps_free(&maps);
		return 0;
	}
	err = asc_maps_host_path(tg->pid, path, path == lib ? 0 : inode, host, sizeof(host));
	asc_maps_free(&maps);
	if (err)
		return err;
	err = asc_elf_open(host, &elf);
	if (err) {
		asc_err("trace: --step: cannot read %s: %s\n", host, strerror(-err));
		return err;
	}
	sym = asc_elf_find(elf, colon + 1);
	if (!sym || asc_elf_vaddr_to_off(elf, sym->vaddr, &off)) {
		asc_warn("trace: --step: symbol %s not found in %s; no step boundaries\n",
			 colon + 1, host);
		asc_elf_close(elf);
		return 0;
	}
	asc_elf_close(elf);
	site.path = host;
	site.offset = off;
	site.cookie = t->next_id;
	n = asc_attach_uprobes(t->set, t->skel->progs.asc_step_exit, true, tg->pid, &site, 1, NULL);
	if (n != 1) {
		asc_warn("trace: --step: cannot attach %s\n", t->o.step);
		return 0;
	}
	tg->step_attached = 1;
	probe_add(t, t->next_id, NULL, host, colon + 1, ASC_LAYER_PYTHON, ASC_PK_STEP, tg->pid);
	t->probes[t->next_id].offset = off;
	if (tg->w)
		write_probe_rec(tg, t->next_id, &t->probes[t->next_id]);
	t->next_id++;
	return 0;
}

/*
 * The dynamic loader (ld.so) of pid: its r_brk hook _dl_debug_state, found
 * by asc_probe_find_loader() in maps_pid (ascbpf itself for a child that has
 * not exec'd yet) and placed as any probe.
 * Every link-map change after this returns reaches on_loader(); the caller
 * plans after it, so a library mapped before the hook was live is seen then.
 */
int attach_loader_hook(struct trace *t, pid_t pid, pid_t maps_pid)
{
	char host[PATH_MAX];
	struct asc_attach_site site;
	uint64_t off;
	uint32_t flags;
	int err, n;

	err = asc_probe_find_loader(maps_pid, host, sizeof(host), &off, &flags);
	if (err == -ESRCH)
		return err;
	if (err) {
		asc_warn("trace: pid %d: cannot hook its dynamic loader (%s); libraries loaded "
			 "later are not traced\n",
			 pid, strerror(-err));
		return 0;
	}
	site.path = host;
	site.offset = off;
	site.cookie = ASC_LOADER_PROBE_ID;
	n = asc_attach_uprobes(t->set, t->skel->progs.asc_loader_enter, false, pid, &site, 1, NULL);
	if (n != 1)
		asc_warn("trace: pid %d: cannot hook the dynamic loader (%s); libraries loaded "
			 "later are not traced\n",
			 pid, host);
	else
		asc_dbg("trace: pid %d: loader hook on %s+0x%llx\n", pid, host,
			(unsigned long long)off);
	return 0;
}

/* Davinci fds open before we attached: module learned from their first ioctl. */
void prefill_fds(struct trace *t, pid_t pid)
{
	char dir[64], link[PATH_MAX], target[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int fd = bpf_map__fd(t->skel->maps.fdmod);

	snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		struct asc_fd_key key;
		__u32 mod = ASC_MOD_UNKNOWN;
		const char *base;
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%s", dir, de->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		base = strrchr(target, '/');
		base = base ? base + 1 : target;
		if (strncmp(base, "davinci", 7))
			continue;
		key.tgid = pid;
		key.fd = atoi(de->d_name);
		bpf_map_update_elem(fd, &key, &mod, BPF_NOEXIST);
		asc_dbg("trace: pid %d: fd %u is %s (bound earlier)\n", pid, key.fd, target);
	}
	closedir(d);
}

/*
 * Level0 and batched submissions: at Level0 no launch is probed, so the
 * tasks of one halSqTaskSend carrying several SQEs cannot be split among the
 * queue slots that made them (docs/convert.md).  When a process's first
 * batched send is seen (sink_record; the SQE program wakes us for the first
 * one of the trace), its task-making runtime calls get an entry-only LAUNCH
 * probe (asc_probe_launch_marks[]), which feeds the converter's
 * pending-launch FIFO.  Processes that never batch attach nothing more.
 * CONFIG "level0.launch_marks_ns=T" is the time the attach began: tasks
 * launched before it stay unattributed (counted), never attributed wrongly.
 */
void attach_launch_marks(struct trace *t)
{
	int i;

	for (i = 0; i < t->nr_targets; i++) {
		struct target *tg = &t->targets[i];
		struct asc_probe_plan *np;
		char buf[64];
		int err;

		if (tg->launch_marks != LAUNCH_MARKS_WANTED || tg->gone)
			continue;
		tg->launch_marks = LAUNCH_MARKS_ON;
		if (!(t->o.activities & ASC_ACT_CPU) || !(t->families & ASC_FAM_CANN))
			continue; /* no ops or slots to join the tasks to */
		np = realloc(tg->plans, (tg->nr_plans + 1) * sizeof(*np));
		if (!np)
			continue;
		tg->plans = np;
		memset(&tg->plans[tg->nr_plans], 0, sizeof(*np));
		err = asc_probe_plan_build_level(tg->pid, asc_probe_launch_marks, ASC_FAM_CANN, 0,
						 t->next_id, &tg->plans[tg->nr_plans]);
		if (err || !tg->plans[tg->nr_plans].nr_sites) {
			asc_warn("trace: pid %d: batched submissions at Level0, but no launch call "
				 "to mark (%s): their kernels keep no op\n",
				 tg->pid, err ? strerror(-err) : "libruntime.so lacks them");
			asc_probe_plan_free(&tg->plans[tg->nr_plans]);
			continue;
		}
		t->next_id += tg->plans[tg->nr_plans].nr_sites;
		tg->nr_plans++;
		snprintf(buf, sizeof(buf), "level0.launch_marks_ns=%llu",
			 (unsigned long long)now_ns(CLOCK_MONOTONIC));
		pthread_mutex_lock(&capture_lock);
		if (tg->w)
			append_text(tg, ASC_REC_CONFIG, 0, buf);
		pthread_mutex_unlock(&capture_lock);
		err = attach_plan(t, tg, tg->nr_plans - 1);
		asc_dbg("trace: pid %d: batched submissions: %d launch marks attached\n", tg->pid,
			err);
	}
}
