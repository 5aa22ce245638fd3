// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * profiler_info.c - profiler_info.json and profiler_metadata.json of a run
 * directory.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ascbpf_events.h"
#include "analysis/correlate.h"
#include "convert/conv.h"
#include "convert/db_export.h"
#include "lib/csv_writer.h"
#include "lib/json_writer.h"
#include "lib/log.h"

/* The env variables profiler_metadata.json and META_DATA's ENV_VARIABLES list, NULL-ended. */
const char *const conv_env_names[] = {
	"ASCEND_GLOBAL_LOG_LEVEL", "HCCL_RDMA_TC",	     "HCCL_RDMA_SL",
	"ACLNN_CACHE_LIMIT",	   "HOST_CACHE_CAPACITY",    "ASCEND_ENHANCE_ENABLE",
	"PYTORCH_NPU_ALLOC_CONF",  "ASCEND_LAUNCH_BLOCKING", NULL,
};

/* ---- profiler_info / metadata ---- */

static const char *cfg(const struct conv *v, const char *key, const char *def)
{
	const char *s = asc_corr_config(v->c, key);

	return s ? s : def;
}

static const char *jbool(const struct conv *v, const char *key)
{
	const char *s = cfg(v, key, "0");

	return (!strcmp(s, "1") || !strcmp(s, "true")) ? "true" : "false";
}

void conv_profiler_info(struct conv *v)
{
	const struct asc_corr *c = v->c;
	const struct asc_corr_info *in = &c->info;
	const char *acts = cfg(v, "activities", "cpu,npu");
	const char *sched = asc_corr_config(c, "schedule");
	char name[64];
	struct asc_out o;
	int rank = in->rank;

	/* torch_npu: profiler_info_{rank}.json with "rank_id" when a rank is known */
	if (rank >= 0)
		snprintf(name, sizeof(name), "profiler_info_%d.json", rank);
	else
		snprintf(name, sizeof(name), "profiler_info.json");
	if (conv_open_out(v, &o, v->dir, name)) {
		v->err = -EIO;
		return;
	}
	asc_out_puts(&o, "{\n    \"config\": {\n        \"common_config\": {\n"
			 "            \"activities\": [");
	{
		int n = 0;

		if (strstr(acts, "cpu"))
			asc_out_printf(&o, "%s\n                \"ProfilerActivity.CPU\"",
				       n++ ? "," : "");
		if (strstr(acts, "npu"))
			asc_out_printf(&o, "%s\n                \"ProfilerActivity.NPU\"",
				       n++ ? "," : "");
		asc_out_puts(&o, n ? "\n            ],\n" : "],\n");
	}
	/* schedule: "wait=W,warmup=U,active=A,repeat=R,skip_first=S" as traced */
	if (sched && *sched) {
		static const char *const keys[] = { "wait",   "active",	    "warmup",
						    "repeat", "skip_first", NULL };
		int k;

		asc_out_puts(&o, "            \"schedule\": {");
		for (k = 0; keys[k]; k++) {
			const char *p = strstr(sched, keys[k]);
			long val = 0;

			while (p && p != sched && p[-1] != ',')
				p = strstr(p + 1, keys[k]);
			if (p && p[strlen(keys[k])] == '=')
				val = strtol(p + strlen(keys[k]) + 1, NULL, 10);
			asc_out_printf(&o, "%s\n                \"%s\": %ld", k ? "," : "", keys[k],
				       val);
		}
		asc_out_puts(&o, "\n            },\n");
	} else {
		asc_out_puts(&o, "            \"schedule\": {},\n");
	}
	asc_out_printf(&o,
		       "            \"record_shapes\": %s,\n"
		       "            \"profile_memory\": %s,\n"
		       "            \"with_stack\": %s,\n            \"with_flops\": false,\n"
		       "            \"with_modules\": %s\n        },\n",
		       jbool(v, "record_shapes"), jbool(v, "profile_memory"),
		       jbool(v, "with_stack"), jbool(v, "with_modules"));
	asc_out_printf(
		&o,
		"        \"experimental_config\": {\n"
		"            \"_profiler_level\": \"Level%d\",\n"
		"            \"_aic_metrics\": \"%s\",\n"
		"            \"_l2_cache\": false,\n            \"_msprof_tx\": false,\n"
		"            \"_data_simplification\": true,\n"
		"            \"record_op_args\": false,\n"
		"            \"_export_type\": %s,\n            \"_op_attr\": false,\n"
		"            \"_gc_detect_threshold\": null\n        }\n    },\n",
		v->level, v->level == 0 ? "ACL_AICORE_NONE" : "ACL_AICORE_PIPE_UTILIZATION",
		v->export_type == ASC_EXPORT_DB ?
			"\"db\"" :
		v->export_type == ASC_EXPORT_TEXT ?
			"\"text\"" :
			"[\n                \"text\",\n                \"db\"\n            ]");
	asc_out_printf(&o,
		       "    \"start_info\": {\n        \"syscnt_enable\": %s,\n"
		       "        \"freq\": %llu,\n        \"start_cnt\": %llu,\n"
		       "        \"start_monotonic\": %lld\n    },\n",
		       in->have_devclock ? "true" : "false",
		       (unsigned long long)(in->devclock_freq_hz / 1000000),
		       (unsigned long long)in->devclock_counter, (long long)in->devclock_mono_ns);
	asc_out_printf(&o,
		       "    \"end_info\": {\n        \"collectionTimeEnd\": %lld,\n"
		       "        \"MonotonicTimeEnd\": %lld\n    }",
		       (long long)in->end_wall_ns, (long long)in->end_mono_ns);
	if (rank >= 0)
		asc_out_printf(&o, ",\n    \"rank_id\": %d", rank);
	asc_out_puts(&o, "\n}");
	conv_close_out(v, &o, name);
}

/*
 * profiler_metadata.json: when the capture carries the env (config
 * "env.NAME=value") or joined a communicator (parallel_group_info,
 * comm_files.c).
 */
void conv_profiler_metadata(struct conv *v)
{
	struct asc_out o;
	char key[64];
	int i, any = 0;

	for (i = 0; conv_env_names[i]; i++) {
		snprintf(key, sizeof(key), "env.%s", conv_env_names[i]);
		if (asc_corr_config(v->c, key))
			any = 1;
	}
	if (!any && !(v->comm && v->comm->nr_groups))
		return;
	if (conv_open_out(v, &o, v->dir, "profiler_metadata.json")) {
		v->err = -EIO;
		return;
	}
	asc_out_puts(&o, "{\"ENV_VARIABLES\": {");
	for (i = 0; conv_env_names[i]; i++) {
		snprintf(key, sizeof(key), "env.%s", conv_env_names[i]);
		asc_out_printf(&o, "%s\"%s\": ", i ? ", " : "", conv_env_names[i]);
		asc_json_cstr(&o, cfg(v, key, ""));
	}
	asc_out_putc(&o, '}');
	conv_parallel_group_info(v, &o);
	asc_out_putc(&o, '}');
	conv_close_out(v, &o, "profiler_metadata.json");
}
