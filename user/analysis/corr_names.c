// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * corr_names.c - names of probes, aten and framework ops and kernel types;
 * the demangler and torch's native frame format (correlate.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ascbpf_events.h"
#include "ascend/rt_launch.h"
#include "analysis/correlate.h"
#include "analysis/corr_build.h"
#include "capture/records.h"
#include "lib/ranges.h"

static const struct {
	const char *sym;
	uint8_t producer;
	int8_t stream_arg;
} producers[] = {
	{ "aclrtLaunchKernelWithHostArgs", PROD_KERNEL, 2 },
	{ "aclrtLaunchKernelWithConfig", PROD_KERNEL, 4 },
	{ "aclrtLaunchKernel", PROD_KERNEL, 4 },
	{ "rtsLaunchKernelWithHostArgs", PROD_KERNEL, 2 },
	{ "rtKernelLaunch", PROD_KERNEL, 5 },
	{ "aclrtRecordEvent", PROD_EVENT_RECORD, 1 },
	{ "rtEventRecord", PROD_EVENT_RECORD, 1 },
	{ "aclrtStreamWaitEvent", PROD_EVENT_WAIT, 0 },
	{ "rtStreamWaitEvent", PROD_EVENT_WAIT, 0 },
	{ "aclrtMemcpyAsync", PROD_COPY, 5 },
	{ "rtMemcpyAsync", PROD_COPY, 5 },
	{ "aclrtMemsetAsync", PROD_COPY, 4 },
	{ "rtMemsetAsync", PROD_COPY, 4 },
	/* CANN 8.x/9.x launch paths (include/ascend/rt_launch.h) */
	{ "rtKernelLaunchWithFlagV2", PROD_KERNEL, RT_STREAM_ARG_rtKernelLaunchWithFlagV2 },
	{ "rtKernelLaunchWithHandleV2", PROD_KERNEL, RT_STREAM_ARG_rtKernelLaunchWithHandleV2 },
	{ "rtLaunchKernelByFuncHandleV3", PROD_KERNEL, RT_STREAM_ARG_rtLaunchKernelByFuncHandleV3 },
	{ "rtsLaunchKernelWithConfig", PROD_KERNEL, RT_STREAM_ARG_rtsLaunchKernelWithConfig },
	{ "rtsLaunchKernelWithDevArgs", PROD_KERNEL, RT_STREAM_ARG_rtsLaunchKernelWithDevArgs },
	{ "rtCpuKernelLaunchWithFlag", PROD_KERNEL, RT_STREAM_ARG_rtCpuKernelLaunchWithFlag },
	{ "rtAicpuKernelLaunchExWithArgs", PROD_KERNEL,
	  RT_STREAM_ARG_rtAicpuKernelLaunchExWithArgs },
	{ "rtKernelLaunchEx", PROD_KERNEL, RT_STREAM_ARG_rtKernelLaunchEx },
	{ "rtMemcpyAsyncEx", PROD_COPY, RT_STREAM_ARG_rtMemcpyAsyncEx },
};

/* ---- names ---- */

/*
 * "aten::<op>" from at::_ops::<op>_<overload>::call, mangled
 * (_ZN2at4_ops<len><name>4call...) or plain; NULL if sym is not one.
 */
static size_t aten_name(const char *sym, char *out, size_t outlen)
{
	const char *p, *name = NULL;
	size_t n = 0, cut;
	char *end;

	if (!strncmp(sym, "_ZN2at4_ops", 11)) {
		n = strtoul(sym + 11, &end, 10);
		if (!n || strlen(end) < n)
			return 0;
		name = end;
	} else if (!strncmp(sym, "at::_ops::", 10)) {
		name = sym + 10;
		p = strstr(name, "::");
		n = p ? (size_t)(p - name) : strlen(name);
	} else {
		return 0;
	}
	/* drop the overload: the last "_X..." with X upper case, or "_out" */
	for (cut = n; cut > 1; cut--) {
		if (name[cut - 1] != '_' || cut == n)
			continue;
		if ((name[cut] >= 'A' && name[cut] <= 'Z') ||
		    (n - cut == 3 && !memcmp(name + cut, "out", 3))) {
			n = cut - 1;
			break;
		}
	}
	if (n + 7 > outlen)
		n = outlen - 7;
	memcpy(out, "aten::", 6);
	memcpy(out + 6, name, n);
	out[6 + n] = '\0';
	return n + 6;
}

/*
 * A framework op that is not an at::_ops entry (torch_npu's custom ops such
 * as at_npu::native::custom_ops::npu_format_cast): torch_npu registers those
 * as "npu::<name>".  Other nested names become "ns::...::name".
 */
static size_t framework_op_name(const char *sym, char *out, size_t outlen)
{
	const char *p = sym + 3, *last = NULL;
	size_t len = 0, n, lastn = 0;
	int npu = !strncmp(sym, "_ZN6at_npu", 10);
	char *end;

	if (strncmp(sym, "_ZN", 3))
		return 0;
	out[0] = '\0';
	while (*p >= '1' && *p <= '9') {
		n = strtoul(p, &end, 10);
		if (strlen(end) < n)
			return 0;
		last = end;
		lastn = n;
		if (!npu && len + n + 3 < outlen) {
			len += snprintf(out + len, outlen - len, "%s%.*s", len ? "::" : "", (int)n,
					end);
		}
		p = end + n;
	}
	if (!last)
		return 0;
	if (npu)
		len = snprintf(out, outlen, "npu::%.*s", (int)lastn, last);
	return len < outlen ? len : outlen - 1;
}

int corr_add_probe(struct asc_corr *c, struct priv *p, const struct asc_probe *pr)
{
	uint32_t id = pr->hdr.probe_id;
	struct probe_info *pi;
	const char *sym = asc_probe_sym(pr);
	char buf[256];

	/*
	 * The tracer numbers its probes densely from 0, so a capture holding N
	 * PROBE records names ids below N; the slack covers records of damaged
	 * frames.  A larger id is a bad record: the table stays linear in the
	 * input, never id-sized (a 2 KB capture asked for 2.7 GB).
	 */
	if (id >= p->nr_probe_recs + ASC_CORR_PROBE_SLACK) {
		c->info.bad_records++;
		return 0;
	}
	p->nr_probe_recs++;
	if (grow_array((void **)&p->probes, &p->probes_cap, (size_t)id + 1, sizeof(*p->probes)))
		return -ENOMEM;
	if (id >= p->nr_probes) {
		memset(p->probes + p->nr_probes, 0, (id + 1 - p->nr_probes) * sizeof(*p->probes));
		p->nr_probes = id + 1;
	}
	pi = &p->probes[id];
	pi->known = 1;
	pi->layer = pr->layer;
	pi->kind = pr->kind;
	pi->sym = strtab_cstr(&p->strs, sym);
	pi->lib = strtab_cstr(&p->strs, asc_probe_lib(pr));
	pi->named = pr->kind != ASC_PK_ATEN_OP;
	if (pr->kind == ASC_PK_ATEN_OP)
		p->have_aten_probes = 1;
	if (pr->kind == ASC_PK_AUTOGRAD_EVAL) /* each range is renamed by its SEQNR record */
		pi->name = strtab_cstr(&p->strs, "autograd::engine::evaluate_function");
	else if (pr->kind == ASC_PK_ATEN_OP && aten_name(sym, buf, sizeof(buf)))
		pi->name = strtab_cstr(&p->strs, buf); /* refined on first use */
	else if (pr->kind == ASC_PK_ATEN_OP && framework_op_name(sym, buf, sizeof(buf)))
		pi->name = strtab_cstr(&p->strs, buf);
	else
		pi->name = pi->sym;
	if (pr->layer == ASC_LAYER_HCCL)
		pi->level = ASC_CORR_LEVEL_HCCL; /* an API call, no kernel launch */
	if (pr->layer == ASC_LAYER_CANN) {
		pi->level = !strncmp(sym, "rt", 2) ? ASC_CORR_LEVEL_RUNTIME : ASC_CORR_LEVEL_ACL;
		pi->is_launch_api = (!strncmp(sym, "aclnn", 5) &&
				     !strstr(sym, "GetWorkspaceSize")) ||
				    !strncmp(sym, "aclopCompileAndExecute", 22) ||
				    !strncmp(sym, "aclopExecute", 12);
		pi->is_kernel_launch = !strncmp(sym, "aclrtLaunchKernel", 17) ||
				       !strncmp(sym, "rtKernelLaunch", 14) ||
				       !strncmp(sym, "rtsLaunchKernel", 15) ||
				       !strncmp(sym, "rtLaunchKernel", 14) ||
				       !strcmp(sym, "rtCpuKernelLaunchWithFlag") ||
				       !strcmp(sym, "rtAicpuKernelLaunchExWithArgs");
		if (!strcmp(sym, "rtCpuKernelLaunchWithFlag"))
			pi->handle_arg = RT_NAME_ARG_rtCpuKernelLaunchWithFlag;
		if (!strcmp(sym, "rtAicpuKernelLaunchExWithArgs"))
			pi->handle_arg = RT_NAME_ARG_rtAicpuKernelLaunchExWithArgs;
		pi->stream_arg = -1;
		for (size_t i = 0; i < sizeof(producers) / sizeof(producers[0]); i++) {
			if (strncmp(sym, producers[i].sym, strlen(producers[i].sym)))
				continue;
			/* a variant not in the table (aclrtLaunchKernelV2) keeps no stream */
			if (!pi->producer)
				pi->producer = producers[i].producer;
			if (!strcmp(sym, producers[i].sym)) { /* the exact entry wins */
				pi->producer = producers[i].producer;
				pi->stream_arg = producers[i].stream_arg;
				break;
			}
		}
		if (pi->is_kernel_launch && !pi->producer)
			pi->producer = PROD_KERNEL;
		/* LAUNCH records only: the span of a Node@launch, never an API event */
		if (pr->kind == ASC_PK_NODE_LAUNCH)
			pi->level = ASC_CORR_LEVEL_NODE;
	}
	return 0;
}

/*
 * torch's name of aten op probe id ("aten::transpose" for
 * at::_ops::transpose_int): the ATEN_NAME record the tracer wrote from the
 * schemas of the traced library, where they named it, else the symbol
 * heuristic of corr_add_probe().  Done on the first ENTER of the probe.
 */
void corr_name_aten_probe(struct priv *p, uint32_t id)
{
	uint64_t name;

	p->probes[id].named = 1;
	if (asc_u64map_get(&p->aten_names, id, &name))
		p->probes[id].name = (uint32_t)name;
}

static int cmp_class(const void *x, const void *y)
{
	const struct node_class *a = x, *b = y;

	if (a->vaddr != b->vaddr)
		return a->vaddr < b->vaddr ? -1 : 1;
	return a->name < b->name ? -1 : a->name > b->name;
}

/* The class of the node whose vptr this is (NODE_CLASS records), or NULL. */
const char *corr_node_class(const struct asc_corr *c, struct priv *p, uint64_t vptr)
{
	size_t i, j;
	long k;

	if (!p->classes_sorted) {
		/* the tracer writes one class per address; of duplicates one is kept */
		qsort(p->classes, p->nr_classes, sizeof(*p->classes), cmp_class);
		for (i = j = 0; i < p->nr_classes; i++)
			if (!j || p->classes[j - 1].vaddr != p->classes[i].vaddr)
				p->classes[j++] = p->classes[i];
		p->nr_classes = j;
		p->classes_sorted = 1;
	}
	k = asc_range_find(p->classes, p->nr_classes, sizeof(*p->classes),
			   offsetof(struct node_class, vaddr), offsetof(struct node_class, size),
			   vptr);
	return k < 0 ? NULL : asc_corr_str(c, p->classes[k].name);
}

uint32_t corr_type_from_name(struct priv *p, const char *name)
{
	if (!strncmp(name, "aclnn", 5) && name[5])
		return strtab_cstr(&p->strs, name + 5);
	return strtab_cstr(&p->strs, name);
}

/*
 * libstdc++'s demangler.  Weak: only the ascbpf binary links libstdc++ (see
 * README, Dependencies); a program without it (a unit test) leaves the
 * names mangled.
 */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status)
	__attribute__((weak));

size_t asc_corr_demangle(const char *sym, char *out, size_t outlen)
{
	char *d = NULL;
	int st = -1;

	if (!outlen)
		return 0;
	if (__cxa_demangle && !strncmp(sym, "_Z", 2))
		d = __cxa_demangle(sym, NULL, NULL, &st);
	snprintf(out, outlen, "%s", d && !st ? d : sym);
	free(d);
	return strlen(out);
}

/*
 * A native frame as torch prints a frame, "file(line): function": ascbpf
 * knows no line numbers, so file is the library (its full path when a probe
 * of the capture names the same file), line 0 (what torch's own dladdr
 * symboliser reports for a frame without debug information) and function
 * the demangled symbol, or the file offset ("0x1a2b") when the address had
 * no symbol.  sym is a SYMBOL text, "lib!symbol+0xoff" or "lib+0xoff"; a
 * text already in that form ("path(12): func", from a resolver that knows
 * lines) is kept as it is.
 */
void asc_corr_native_frame(const char *sym, const char *libpath, char *out, size_t outlen)
{
	const char *bang = strchr(sym, '!'), *plus, *par = strstr(sym, "): ");
	char lib[256], fn[512], name[400];
	size_t n;

	if (!outlen)
		return;
	if (par && par > sym && (!bang || bang > par)) {
		const char *q = par;

		while (q > sym && q[-1] >= '0' && q[-1] <= '9')
			q--;
		if (q < par && q > sym && q[-1] == '(') {
			snprintf(out, outlen, "%s", sym);
			return;
		}
	}
	if (bang) {
		n = (size_t)(bang - sym);
		plus = strrchr(bang + 1, '+');
		snprintf(name, sizeof(name), "%.*s",
			 (int)(plus ? (size_t)(plus - bang - 1) : strlen(bang + 1)), bang + 1);
		asc_corr_demangle(name, fn, sizeof(fn));
	} else {
		plus = strrchr(sym, '+');
		n = plus ? (size_t)(plus - sym) : strlen(sym);
		snprintf(fn, sizeof(fn), "%s", plus ? plus + 1 : "??");
	}
	snprintf(lib, sizeof(lib), "%.*s", (int)(n < sizeof(lib) ? n : sizeof(lib) - 1), sym);
	snprintf(out, outlen, "%s(0): %s", libpath && *libpath ? libpath : lib, fn);
}
