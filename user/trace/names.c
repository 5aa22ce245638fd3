// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * names.c - op names and backward node classes into the capture at attach
 * (names.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "ascbpf_events.h"
#include "capture/capture.h"
#include "capture/records.h"
#include "discovery/probes.h"
#include "discovery/pytorch.h"
#include "discovery/seqnr.h"
#include "lib/log.h"
#include "trace/names.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int put_aten_name(struct asc_capture_writer *w, pid_t pid, uint32_t probe_id,
			 const char *name)
{
	size_t len = strlen(name), size = asc_text_rec_size(len);
	struct asc_text *r = calloc(1, size);
	int err;

	if (!r)
		return -ENOMEM;
	r->hdr.type = ASC_REC_ATEN_NAME;
	r->hdr.size = size;
	r->hdr.tgid = pid;
	r->hdr.probe_id = probe_id;
	r->hdr.ts_ns = mono_ns();
	memcpy(r->text, name, len + 1);
	err = asc_capture_append(w, r, size);
	free(r);
	return err;
}

/* Whether a plan before plans[idx] has a site at (path, off): attached by it already. */
static int earlier_site(const struct asc_probe_plan *plans, size_t idx, const char *path,
			uint64_t off)
{
	size_t i, j;

	for (i = 0; i < idx; i++)
		for (j = 0; j < plans[i].nr_sites; j++)
			if (plans[i].sites[j].attach_offset == off &&
			    !strcmp(plans[i].sites[j].path, path))
				return 1;
	return 0;
}

/* Schemas of the libraries of one plan's aten sites (usually one: libtorch_cpu). */
struct schema_cache {
	struct {
		const char *path;
		struct asc_aten_schemas *s; /* NULL: the library has none or is unreadable */
	} e[8];
	size_t n;
};

static const struct asc_aten_schemas *schemas_of(struct schema_cache *sc, const char *path)
{
	struct asc_aten_schemas *s = NULL;
	size_t i;

	for (i = 0; i < sc->n; i++)
		if (!strcmp(sc->e[i].path, path))
			return sc->e[i].s;
	if (*path == '/' && !access(path, R_OK))
		s = asc_aten_schemas_load(path);
	if (sc->n < sizeof(sc->e) / sizeof(sc->e[0])) {
		sc->e[sc->n].path = path;
		sc->e[sc->n++].s = s;
	} else {
		asc_aten_schemas_free(s); /* not kept: looked up again next time */
		s = NULL;
	}
	return s;
}

int asc_trace_write_aten_names(struct asc_capture_writer *w, pid_t pid,
			       const struct asc_probe_plan *plans, size_t idx)
{
	const struct asc_probe_plan *plan = &plans[idx];
	struct schema_cache sc = { .n = 0 };
	struct asc_aten_op *op = malloc(sizeof(*op));
	size_t i;
	int err = 0;

	if (!op)
		return -ENOMEM;
	for (i = 0; i < plan->nr_sites && !err; i++) {
		const struct asc_probe_site *s = &plan->sites[i];
		const struct asc_aten_schemas *sch;

		if (!s->spec || s->spec->kind != ASC_PK_ATEN_OP ||
		    earlier_site(plans, idx, s->path, s->attach_offset))
			continue;
		sch = schemas_of(&sc, s->path);
		/* only an exact (schema) answer: the converter guesses from the symbol itself */
		if (sch && !asc_aten_name(sch, s->sym, op) && op->exact && op->name[0])
			err = put_aten_name(w, pid, s->id, op->name);
		else
			err = put_aten_name(w, pid, s->id, "");
	}
	for (i = 0; i < sc.n; i++)
		asc_aten_schemas_free(sc.e[i].s);
	free(op);
	return err;
}

int asc_trace_write_node_classes(struct asc_capture_writer *w, pid_t pid, const char *lib,
				 uint64_t bias)
{
	struct asc_seqnr_names *nm = asc_seqnr_names_open(lib, bias);
	size_t i, n;
	int err = 0;

	if (!nm) {
		asc_warn("trace: pid %d: cannot read the autograd node classes of %s (%s): "
			 "backward nodes are named torch::autograd::Node\n",
			 pid, lib, strerror(errno));
		return 0;
	}
	n = asc_seqnr_names_count(nm);
	for (i = 0; i < n && !err; i++) {
		uint64_t vaddr, vsize;
		const char *name = asc_seqnr_names_at(nm, i, &vaddr, &vsize);
		size_t len = strlen(name), size = asc_node_class_rec_size(len);
		struct asc_node_class *r = calloc(1, size);

		if (!r) {
			err = -ENOMEM;
			break;
		}
		r->hdr.type = ASC_REC_NODE_CLASS;
		r->hdr.size = size;
		r->hdr.tgid = pid;
		r->hdr.ts_ns = mono_ns();
		r->vaddr = vaddr;
		r->size = vsize;
		memcpy(r->name, name, len + 1);
		err = asc_capture_append(w, r, size);
		free(r);
	}
	asc_seqnr_names_free(nm);
	return err;
}

int asc_trace_write_names(struct asc_capture_writer *w, pid_t pid, const struct asc_pytorch *pt,
			  const struct asc_probe_plan *plans, size_t idx, int first)
{
	const char *lib;
	uint64_t bias;
	int err;

	err = asc_trace_write_aten_names(w, pid, plans, idx);
	if (err || !pt || !first)
		return err;
	lib = asc_pytorch_torch_lib(pt, &bias);
	return lib ? asc_trace_write_node_classes(w, pid, lib, bias) : 0;
}
