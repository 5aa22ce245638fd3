// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report_input.c - the adapter from a capture, through the correlation layer
 * (user/analysis/correlate.h), to the detectors' plain arrays (user/report/report_detect.h).
 *
 * What is taken, and why:
 *  - kernels: device tasks flagged ASC_CORR_K_COMPUTE (the kernel_details
 *    rows), and SDMA copies marked as such (they overlap compute on another
 *    stream); event record/wait tasks would count waiting as device work.  A
 *    kernel's op is the path of framework ops that launched it, outermost
 *    first ("Optimizer.step#Adam.step > aten::mul_"), so the optimizer and
 *    the TransData call sites can be recognised whatever op was innermost;
 *    its stack is the innermost captured call stack on that path.
 *  - steps: the recorded ones (RECORD, RECORD_AND_SAVE); the others carry
 *    no events because the BPF gate was closed.
 *  - memory: one allocator component, since each has its own totals: PTA
 *    (the caching allocator, what the user's tensors hold), else GE, else
 *    APP.  Frees are made negative whatever sign the record had.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "ascbpf_events.h"
#include "capture/capture.h"
#include "analysis/correlate.h"
#include "lib/log.h"
#include "report/report_detect.h"
#include "schedule.h"

#define ASC_RPT_SDMA_TASK 11 /* STARS SQE type of a memcpy (asc_corr_task_type_name) */

struct source_priv {
	struct asc_corr *corr; /* owned when loaded from a file */
	const struct asc_corr *view;
	char **op_path; /* per op: "outer > ... > inner", built on demand */
	struct asc_rpt_kernel *kernels;
	struct asc_rpt_api *apis;
	struct asc_rpt_queue *queue;
	struct asc_rpt_mem *mem;
	struct asc_rpt_step *steps;
};

static int is_file(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode);
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/*
 * Looks in directory `dir` for captures: the tracer's own ascbpf-PID.cap
 * files first (one per traced process), else {run}_ascend_pt/ascbpf/
 * capture.ascb copies made by convert.  Returns how many were found; the
 * first is in out.
 */
static int scan_dir(const char *dir, int want_cap, char *out, size_t size, char *second,
		    size_t second_size)
{
	char cand[4096];
	struct dirent *de;
	int n = 0;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (want_cap) {
			if (strncmp(de->d_name, "ascbpf-", 7) || !ends_with(de->d_name, ".cap"))
				continue;
			snprintf(cand, sizeof(cand), "%s/%s", dir, de->d_name);
		} else {
			if (!ends_with(de->d_name, "_ascend_pt"))
				continue;
			snprintf(cand, sizeof(cand), "%s/%s/ascbpf/capture.ascb", dir, de->d_name);
		}
		if (!is_file(cand))
			continue;
		if (!n)
			snprintf(out, size, "%s", cand);
		else if (n == 1)
			snprintf(second, second_size, "%s", cand);
		n++;
	}
	closedir(d);
	return n;
}

int asc_rpt_find_capture(const char *path, char *out, size_t size)
{
	char cand[4096], second[4096] = "";
	struct stat st;
	int n, pass;

	if (stat(path, &st)) {
		asc_err("report: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	if (S_ISREG(st.st_mode)) {
		if ((size_t)snprintf(out, size, "%s", path) >= size)
			return -ENAMETOOLONG;
		return 0;
	}
	if (!S_ISDIR(st.st_mode)) {
		asc_err("report: %s is neither a capture file nor an output directory\n", path);
		return -EINVAL;
	}
	snprintf(cand, sizeof(cand), "%s/ascbpf/capture.ascb", path);
	if (!is_file(cand))
		snprintf(cand, sizeof(cand), "%s/capture.ascb", path);
	if (is_file(cand)) {
		if ((size_t)snprintf(out, size, "%s", cand) >= size)
			return -ENAMETOOLONG;
		return 0;
	}
	for (pass = 1; pass >= 0; pass--) {
		n = scan_dir(path, pass, out, size, second, sizeof(second));
		if (n < 0) {
			asc_err("report: %s: %s\n", path, strerror(-n));
			return n;
		}
		if (n == 1)
			return 0;
		if (n > 1) {
			asc_err("report: %s holds %d captures (%s, %s%s): name one\n", path, n, out,
				second, n > 2 ? ", ..." : "");
			return -EINVAL;
		}
	}
	asc_err("report: no capture in %s (looked for ascbpf/capture.ascb, capture.ascb, "
		"ascbpf-PID.cap and *_ascend_pt/ascbpf/capture.ascb)\n",
		path);
	return -ENOENT;
}

/*
 * The qualified name of a mangled C++ function ("_ZN6at_npu6native10custom_ops
 * 15npu_format_castERKN2at6TensorEl" -> "at_npu::native::custom_ops::
 * npu_format_cast"): the nested name only, no arguments, which is what a
 * call site is named by.  Anything else is copied; out holds size bytes.
 */
static const char *plain_name(const char *name, char *out, size_t size)
{
	const char *p = name + 3;
	size_t len = 0;

	if (strncmp(name, "_ZN", 3))
		return name;
	while (*p == 'K' || *p == 'V' || *p == 'r') /* cv-qualifiers of a member function */
		p++;
	while (*p >= '1' && *p <= '9') {
		char *end;
		unsigned long n = strtoul(p, &end, 10);

		if (n == 0 || strnlen(end, n) < n || len + n + 3 > size)
			return name;
		if (len) {
			memcpy(out + len, "::", 2);
			len += 2;
		}
		memcpy(out + len, end, n);
		len += n;
		p = end + n;
	}
	if (*p != 'E' || !len)
		return name;
	out[len] = 0;
	return out;
}

int asc_rpt_run_steps(const char *capture, int64_t **steps, size_t *n)
{
	static const char suffix[] = "/ascbpf/capture.ascb";
	char path[4096], line[4096];
	size_t len = strlen(capture), cap = 0, col = 0, k;
	int64_t *v = NULL;
	char *tok, *save;
	FILE *f;

	*steps = NULL;
	*n = 0;
	if (len < sizeof(suffix) || strcmp(capture + len - (sizeof(suffix) - 1), suffix))
		return 0;
	snprintf(path, sizeof(path), "%.*s/ASCEND_PROFILER_OUTPUT/step_trace_time.csv",
		 (int)(len - (sizeof(suffix) - 1)), capture);
	f = fopen(path, "r");
	if (!f)
		return 0;
	/* the header names the column: "Step,..." before 7.1, "Device_id,Step,..." after */
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return 0;
	}
	for (tok = strtok_r(line, ",\r\n", &save), k = 0; tok;
	     tok = strtok_r(NULL, ",\r\n", &save), k++)
		if (!strcmp(tok, "Step"))
			break;
	if (!tok) {
		fclose(f);
		return 0;
	}
	col = k;
	while (fgets(line, sizeof(line), f)) {
		char *end, *p = line;

		for (k = 0; k < col && p; k++) {
			p = strchr(p, ',');
			if (p)
				p++;
		}
		if (!p || *p < '0' || *p > '9')
			continue;
		if (*n == cap) {
			int64_t *nv = realloc(v, (cap = cap ? 2 * cap : 16) * sizeof(*v));

			if (!nv) {
				free(v);
				fclose(f);
				*n = 0;
				return -ENOMEM;
			}
			v = nv;
		}
		v[(*n)++] = strtoll(p, &end, 10);
	}
	fclose(f);
	*steps = v;
	return 0;
}

/* "outer > ... > inner" for op i (step ranges left out); NULL for -1 or on ENOMEM. */
static const char *op_path(struct source_priv *p, int32_t i)
{
	const struct asc_corr *c = p->view;
	static char plain[64][256];
	const char *names[64];
	size_t n = 0, len = 0, k;
	int32_t j;
	char *s;

	if (i < 0 || (size_t)i >= c->nr_ops)
		return NULL;
	if (p->op_path[i])
		return p->op_path[i];
	for (j = i; j >= 0 && (size_t)j < c->nr_ops && n < 64; j = c->ops[j].parent) {
		const char *name = asc_corr_str(c, c->ops[j].name);

		if ((c->ops[j].flags & ASC_CORR_O_STEP) || !*name)
			continue;
		name = plain_name(name, plain[n], sizeof(plain[n]));
		names[n++] = name;
		len += strlen(name) + 3;
		if (c->ops[j].parent == j)
			break;
	}
	if (!n)
		return NULL;
	s = malloc(len + 1);
	if (!s)
		return NULL;
	s[0] = 0;
	for (k = n; k-- > 0;) {
		strcat(s, names[k]);
		if (k)
			strcat(s, " > ");
	}
	p->op_path[i] = s;
	return s;
}

/* The innermost non-empty call stack on op i's path, or NULL. */
static const char *op_stack(const struct asc_corr *c, int32_t i)
{
	size_t hops = 0;

	while (i >= 0 && (size_t)i < c->nr_ops && hops++ < 64) {
		if (c->ops[i].stack) {
			const char *s = asc_corr_str(c, c->ops[i].stack);

			if (*s)
				return s;
		}
		i = c->ops[i].parent;
	}
	return NULL;
}

static const char *str_or_null(const struct asc_corr *c, uint32_t id)
{
	const char *s = id ? asc_corr_str(c, id) : NULL;

	return s && *s ? s : NULL;
}

static int pick_mem_component(const struct asc_corr *c)
{
	static const int order[] = { ASC_MEM_PTA, ASC_MEM_GE, ASC_MEM_APP, ASC_MEM_WORKSPACE };
	size_t i, k;

	for (k = 0; k < sizeof(order) / sizeof(order[0]); k++)
		for (i = 0; i < c->nr_mems; i++)
			if (c->mems[i].component == order[k])
				return order[k];
	return -1;
}

/*
 * The last step has no next step to end it: the correlation layer runs it to
 * the end of the trace, teardown included (frees, destroys, the time until
 * the tracer stopped).  A training step ends with the synchronisation that
 * waits for its kernels, so the last step is cut at the end of the first
 * device synchronisation that returns after its last kernel ended (or after
 * that kernel, without one); with no kernel it is left as it is.
 */
static int64_t last_step_end(const struct asc_corr *c, int64_t start, int64_t end)
{
	int64_t last = 0, sync = 0;
	size_t i;

	for (i = 0; i < c->nr_kernels; i++)
		if (c->kernels[i].start_ns >= start && c->kernels[i].start_ns < end &&
		    c->kernels[i].end_ns > last)
			last = c->kernels[i].end_ns;
	if (!last)
		return end;
	for (i = 0; i < c->nr_calls; i++) {
		const struct asc_corr_call *a = &c->calls[i];

		if (a->start_ns >= start && a->end_ns >= last && a->end_ns < end &&
		    (!sync || a->end_ns < sync) && asc_rpt_is_sync_api(asc_corr_str(c, a->name)))
			sync = a->end_ns;
	}
	if (sync)
		last = sync;
	return last < end ? last + 1 : end;
}

static int step_kept(const struct asc_rpt_source *src, int64_t step)
{
	size_t i;

	/* events outside every step (start-up, teardown) belong to every run */
	if (!src->nr_only_steps || step < 0)
		return 1;
	for (i = 0; i < src->nr_only_steps; i++)
		if (src->only_steps[i] == step)
			return 1;
	return 0;
}

static int is_recorded_step(const struct asc_rpt_source *src, int64_t step)
{
	size_t i;

	for (i = 0; i < src->in.nr_steps; i++)
		if (src->in.steps[i].id == step)
			return 1;
	return 0;
}

static int in_recorded_step(const struct asc_rpt_source *src, int64_t ts)
{
	size_t i;

	for (i = 0; i < src->in.nr_steps; i++)
		if ((uint64_t)ts >= src->in.steps[i].start_ns &&
		    (uint64_t)ts < src->in.steps[i].end_ns)
			return 1;
	return 0;
}

/* The recorded steps (the run directory's only, when it names them). */
static void take_steps(const struct asc_corr *c, struct asc_rpt_source *src, struct source_priv *p)
{
	size_t i, n;

	for (i = 0, n = 0; i < c->nr_steps; i++) {
		const struct asc_corr_step *s = &c->steps[i];
		int64_t end = s->end_ns;

		if (!asc_sched_recording(s->state) || s->start_ns < 0 || s->end_ns <= s->start_ns ||
		    !step_kept(src, (int64_t)s->step))
			continue;
		if (i == c->nr_steps - 1)
			end = last_step_end(c, s->start_ns, s->end_ns);
		p->steps[n].id = (int64_t)s->step;
		p->steps[n].start_ns = (uint64_t)s->start_ns;
		p->steps[n].end_ns = (uint64_t)end;
		n++;
	}
	src->in.steps = p->steps;
	src->in.nr_steps = n;
}

/* Compute kernels and SDMA copies of the kept steps, with their op and API. */
static void take_kernels(const struct asc_corr *c, struct asc_rpt_source *src,
			 struct source_priv *p)
{
	size_t i, n, compute = 0;

	for (i = 0; i < c->nr_kernels; i++)
		if (c->kernels[i].flags & ASC_CORR_K_COMPUTE)
			compute++;
	for (i = 0, n = 0; i < c->nr_kernels; i++) {
		const struct asc_corr_kernel *k = &c->kernels[i];
		struct asc_rpt_kernel *out = &p->kernels[n];
		int32_t op = k->op;

		/*
		 * Compute kernels, and SDMA copies (task type 11) for the stream
		 * overlap; event record/wait tasks only wait.  A capture whose
		 * tasks carry no compute flag at all is taken whole as compute.
		 */
		if (!compute || (k->flags & ASC_CORR_K_COMPUTE))
			out->kind = ASC_RPT_K_COMPUTE;
		else if (k->task_type == ASC_RPT_SDMA_TASK)
			out->kind = ASC_RPT_K_COPY;
		else
			continue;
		if (k->start_ns < 0 || k->end_ns < k->start_ns || !step_kept(src, k->step))
			continue;
		/*
		 * Tasks of steps the schedule did not record reach the capture
		 * through the device channel, without a launch: only the
		 * recorded steps' tasks are taken (one without a step when it
		 * ran inside a recorded step).
		 */
		if (src->in.nr_steps && (k->step < 0 ? !in_recorded_step(src, k->start_ns) :
						       !is_recorded_step(src, k->step)))
			continue;
		if (op < 0 && k->api >= 0 && (size_t)k->api < c->nr_calls)
			op = c->calls[k->api].op;
		out->start_ns = (uint64_t)k->start_ns;
		out->end_ns = (uint64_t)k->end_ns;
		out->step = k->step;
		out->stream = k->stream;
		out->submit_ns = k->submit_ns > 0 ? (uint64_t)k->submit_ns : 0;
		out->has_op_step = op >= 0 && (size_t)op < c->nr_ops && c->ops[op].step >= 0;
		out->op_step = out->has_op_step ? c->ops[op].step : k->step;
		out->name = str_or_null(c, k->name);
		out->type = str_or_null(c, k->type);
		out->op = op_path(p, op);
		out->stack = op_stack(c, op);
		if (k->api >= 0 && (size_t)k->api < c->nr_calls)
			out->api = str_or_null(c, c->calls[k->api].name);
		if (!(k->flags & ASC_CORR_K_MATCHED))
			src->unmatched_kernels++;
		n++;
	}
	src->in.kernels = p->kernels;
	src->in.nr_kernels = n;
}

/* CANN calls of the kept steps (not Node@launch spans), inner sync/alloc calls marked. */
static void take_apis(const struct asc_corr *c, struct asc_rpt_source *src, struct source_priv *p)
{
	size_t i, n;

	for (i = 0, n = 0; i < c->nr_calls; i++) {
		const struct asc_corr_call *a = &c->calls[i];

		if (a->start_ns < 0 || a->end_ns < a->start_ns || !step_kept(src, a->step))
			continue;
		if (a->level == ASC_CORR_LEVEL_NODE)
			continue; /* a Node@launch span only: not an API call of this level */
		p->apis[n].start_ns = (uint64_t)a->start_ns;
		p->apis[n].end_ns = (uint64_t)a->end_ns;
		p->apis[n].step = a->step;
		p->apis[n].tid = a->tid;
		p->apis[n].name = str_or_null(c, a->name);
		p->apis[n].op = op_path(p, a->op);
		p->apis[n].ret = a->ret;
		if (a->parent >= 0 && (size_t)a->parent < c->nr_calls) {
			const char *outer = asc_corr_str(c, c->calls[a->parent].name);
			const char *name = p->apis[n].name;

			if ((asc_rpt_is_sync_api(name) && asc_rpt_is_sync_api(outer)) ||
			    (asc_rpt_is_alloc_api(name) && asc_rpt_is_alloc_api(outer)))
				p->apis[n].flags |= ASC_RPT_API_INNER;
		}
		p->apis[n].stack = op_stack(c, a->op);
		n++;
	}
	src->in.apis = p->apis;
	src->in.nr_apis = n;
}

/* Task-queue slots of the kept steps. */
static void take_queue(const struct asc_corr *c, struct asc_rpt_source *src, struct source_priv *p)
{
	size_t i, n;

	for (i = 0, n = 0; i < c->nr_queues; i++) {
		if (!step_kept(src, c->queues[i].step))
			continue;
		p->queue[n].enqueue_ns = c->queues[i].enq_start_ns > 0 ?
						 (uint64_t)c->queues[i].enq_start_ns :
						 0;
		p->queue[n].dequeue_ns = c->queues[i].deq_start_ns > 0 ?
						 (uint64_t)c->queues[i].deq_start_ns :
						 0;
		p->queue[n].correlation_id = c->queues[i].correlation_id;
		n++;
	}
	src->in.queue = p->queue;
	src->in.nr_queue = n;
}

/* Allocator events of the component the report reads (pick_mem_component). */
static void take_mem(const struct asc_corr *c, struct asc_rpt_source *src, struct source_priv *p)
{
	size_t i, n;

	src->mem_component = pick_mem_component(c);
	for (i = 0, n = 0; i < c->nr_mems; i++) {
		const struct asc_corr_mem *m = &c->mems[i];
		int64_t size = m->size;

		if (m->component != src->mem_component || m->ts_ns < 0 || !step_kept(src, m->step))
			continue;
		if (m->data_type != ASC_MEM_MALLOC && size > 0)
			size = -size;
		p->mem[n].ts_ns = (uint64_t)m->ts_ns;
		p->mem[n].ptr = m->ptr;
		p->mem[n].size = size;
		p->mem[n].total_allocated = m->total_allocated;
		p->mem[n].total_reserved = m->total_reserved;
		p->mem[n].op = op_path(p, m->op);
		n++;
	}
	src->in.mem = p->mem;
	src->in.nr_mem = n;
}

static int build(const struct asc_corr *c, struct asc_rpt_source *src)
{
	struct source_priv *p;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	src->priv = p;
	p->view = c;
	p->op_path = calloc(c->nr_ops + 1, sizeof(*p->op_path));
	p->kernels = calloc(c->nr_kernels + 1, sizeof(*p->kernels));
	p->apis = calloc(c->nr_calls + 1, sizeof(*p->apis));
	p->queue = calloc(c->nr_queues + 1, sizeof(*p->queue));
	p->mem = calloc(c->nr_mems + 1, sizeof(*p->mem));
	p->steps = calloc(c->nr_steps + 1, sizeof(*p->steps));
	if (!p->op_path || !p->kernels || !p->apis || !p->queue || !p->mem || !p->steps) {
		asc_rpt_source_free(src);
		return -ENOMEM;
	}

	src->pid = c->info.pid;
	src->rank = c->info.rank;
	src->device = c->info.device;
	src->steps_in_capture = c->nr_steps;
	src->kernels_in_capture = c->nr_kernels;

	src->bpf_drops = c->info.bpf_drops;
	src->devtask_drops = c->info.devtask_drops;
	src->lost = c->info.lost;
	src->damaged = c->info.damaged;
	snprintf(src->damage, sizeof(src->damage), "%s", c->info.damage);

	take_steps(c, src, p);
	take_kernels(c, src, p);
	take_apis(c, src, p);
	take_queue(c, src, p);
	take_mem(c, src, p);
	return 0;
}

int asc_rpt_source_from_corr(const struct asc_corr *c, struct asc_rpt_source *src)
{
	const int64_t *only = src->only_steps;
	size_t nr_only = src->nr_only_steps;

	memset(src, 0, sizeof(*src));
	src->only_steps = only;
	src->nr_only_steps = nr_only;
	return build(c, src);
}

int asc_rpt_source_load(const char *capture, struct asc_rpt_source *src)
{
	const int64_t *only = src->only_steps;
	size_t nr_only = src->nr_only_steps;
	struct asc_capture_reader *r;
	struct source_priv *p;
	struct asc_corr *c;
	int err;

	memset(src, 0, sizeof(*src));
	src->only_steps = only;
	src->nr_only_steps = nr_only;
	r = asc_capture_open(capture);
	if (!r) {
		err = -errno;
		asc_err("report: cannot read %s: %s\n", capture, strerror(errno));
		return err;
	}
	c = asc_corr_build(r);
	err = c ? 0 : -errno;
	asc_capture_free(r);
	if (!c) {
		asc_err("report: %s: %s\n", capture, strerror(-err));
		return err;
	}
	err = build(c, src);
	if (err) {
		asc_corr_free(c);
		return err;
	}
	p = src->priv;
	p->corr = c;
	snprintf(src->capture, sizeof(src->capture), "%s", capture);
	return 0;
}

void asc_rpt_source_free(struct asc_rpt_source *src)
{
	struct source_priv *p = src->priv;
	size_t i;

	if (p) {
		if (p->op_path)
			for (i = 0; i < p->view->nr_ops; i++)
				free(p->op_path[i]);
		free(p->op_path);
		free(p->kernels);
		free(p->apis);
		free(p->queue);
		free(p->mem);
		free(p->steps);
		if (p->corr)
			asc_corr_free(p->corr);
		free(p);
	}
	memset(src, 0, sizeof(*src));
}
