// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_costmodel.c - the card speed model (npu_model/common/costmodel.c):
 * roofline kernel time, copy time by direction, card spec parsing.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "npu_cost.h"

static struct npu_card_config card(void)
{
	struct npu_card_config c;

	npu_card_config_default(&c);
	c.cube_tflops = 100.0; /* 1e14 flop/s: 1 Gflop = 10 us */
	c.vector_tflops = 10.0;
	c.aicpu_gflops = 1.0;
	c.hbm_gbps = 1000.0; /* 1 GB = 1 ms */
	c.pcie_gbps = 10.0;
	c.launch_latency_ns = 3000;
	return c;
}

/* Compute-bound matmul: time is latency + flops / peak, bytes do not matter. */
static void test_kernel_compute_bound(void **state)
{
	struct npu_card_config c = card();
	uint64_t t = npu_cost_duration_ns(&c, 1000000000ull, 1000, NPU_TASK_AI_CORE);

	assert_in_range(t, 3000 + 10000, 3000 + 10001);
	/* Doubling the flops doubles the compute part. */
	t = npu_cost_duration_ns(&c, 2000000000ull, 1000, NPU_TASK_AI_CORE);
	assert_in_range(t, 3000 + 20000, 3000 + 20001);
}

/* Memory-bound elementwise: bytes / bandwidth wins over flops / peak. */
static void test_kernel_memory_bound(void **state)
{
	struct npu_card_config c = card();
	/* 1 MB at 1000 GB/s = 1000 ns; 1e6 flop at 10 TFLOPS = 100 ns. */
	uint64_t t = npu_cost_duration_ns(&c, 1000000, 1000000, NPU_TASK_AI_VECTOR_CORE);

	assert_in_range(t, 3000 + 1000, 3000 + 1001);
}

/* The same flops take 10x longer on the vector unit than on the cube here. */
static void test_task_type_peaks(void **state)
{
	struct npu_card_config c = card();
	uint64_t cube = npu_cost_duration_ns(&c, 10000000000ull, 0, NPU_TASK_AI_CORE);
	uint64_t vec = npu_cost_duration_ns(&c, 10000000000ull, 0, NPU_TASK_AI_VECTOR_CORE);
	uint64_t cpu = npu_cost_duration_ns(&c, 1000000ull, 0, NPU_TASK_AI_CPU);

	assert_in_range(cube - 3000, 100000, 100001);
	assert_in_range(vec - 3000, 1000000, 1000001);
	assert_in_range(cpu - 3000, 1000000, 1000001); /* 1e6 flop at 1 GFLOPS = 1 ms */
}

/* An empty kernel still costs the launch latency; events cost only that. */
static void test_latency_floor(void **state)
{
	struct npu_card_config c = card();

	assert_int_equal(npu_cost_duration_ns(&c, 0, 0, NPU_TASK_AI_CORE), 3000);
	assert_int_equal(npu_cost_duration_ns(&c, 123, 456, NPU_TASK_EVENT_RECORD), 3000);
	assert_int_equal(npu_cost_duration_ns(&c, 0, 0, NPU_TASK_EVENT_WAIT), 3000);
}

/* Copies: PCIe for H2D/D2H, HBM (read + write) for D2D, no launch latency. */
static void test_copies(void **state)
{
	struct npu_card_config c = card();

	assert_in_range(npu_cost_copy_ns(&c, 10000000, NPU_COPY_H2D), 1000000, 1000001);
	assert_in_range(npu_cost_copy_ns(&c, 10000000, NPU_COPY_D2H), 1000000, 1000001);
	assert_in_range(npu_cost_copy_ns(&c, 10000000, NPU_COPY_D2D), 20000, 20001);
	assert_in_range(npu_cost_duration_ns(&c, 0, 10000000, NPU_TASK_MEMCPY), 1000000, 1000001);
	assert_int_equal(npu_cost_copy_ns(&c, 0, NPU_COPY_H2D), 0);
}

static void test_parse(void **state)
{
	struct npu_card_config c = card();

	assert_int_equal(npu_card_config_parse(&c, "tflops=50,hbm_gbps=800,launch_us=1.5,"
						   "hbm_gib=2"),
			 0);
	assert_true(c.cube_tflops == 50.0);
	assert_true(c.hbm_gbps == 800.0);
	assert_int_equal(c.launch_latency_ns, 1500);
	assert_int_equal(c.hbm_bytes, 2ull << 30);
	assert_true(c.vector_tflops == 10.0); /* untouched keys keep their value */
	assert_int_equal(npu_card_config_parse(&c, ""), 0);
}

static void test_parse_rejects(void **state)
{
	struct npu_card_config c = card(), before = card();
	static const char *const bad[] = {
		"tflops",  "tflops=",	 "tflops=abc",	"tflops=-1", "tflops=0",
		"bogus=1", "tflops=1,,", "hbm_gbps=1x", "=5",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(npu_card_config_parse(&c, bad[i]), -EINVAL);
		assert_memory_equal(&c, &before, sizeof(c));
	}
	assert_int_equal(npu_card_config_parse(&c, NULL), -EINVAL);
}

static void test_names(void **state)
{
	assert_string_equal(npu_task_type_name(NPU_TASK_AI_CORE), "AI_CORE");
	assert_string_equal(npu_task_type_name(NPU_TASK_AI_VECTOR_CORE), "AI_VECTOR_CORE");
	assert_string_equal(npu_task_type_name(NPU_TASK_AI_CPU), "AI_CPU");
	assert_string_equal(npu_task_type_name(NPU_TASK_MEMCPY), "MEMCPY");
	assert_string_equal(npu_task_type_name(-1), "UNKNOWN");
	assert_string_equal(npu_task_type_name(NPU_TASK_TYPE_MAX), "UNKNOWN");
}

static struct npu_shape shp(int ndim, int64_t a, int64_t b, int64_t c, int64_t d)
{
	struct npu_shape s = { .ndim = ndim, .dims = { a, b, c, d }, .elem_size = 2 };

	return s;
}

/* MatMul [M,K]x[K,N]: 2MNK flops on the cube, bytes = both inputs + output. */
static void test_op_matmul(void **state)
{
	struct npu_shape in[2] = { shp(2, 128, 256, 0, 0), shp(2, 256, 512, 0, 0) };
	struct npu_shape out = shp(2, 128, 512, 0, 0);
	struct npu_op_cost c;

	assert_int_equal(npu_op_cost("MatMulV2", in, 2, &out, 1, &c), 0);
	assert_string_equal(c.kernel, "MatMulV2");
	assert_int_equal(c.task_type, NPU_TASK_AI_CORE);
	assert_int_equal(c.flops, 2ull * 128 * 512 * 256);
	assert_int_equal(c.bytes, 2ull * (128 * 256 + 256 * 512 + 128 * 512));
	assert_in_range(c.block_dim, 1, NPU_AIC_CORES);
	/* Batched: [B,M,K] x [K,N] multiplies the flops by B. */
	in[0] = (struct npu_shape){ .ndim = 3, .dims = { 4, 128, 256 }, .elem_size = 2 };
	assert_int_equal(npu_op_cost("BatchMatMulV2", in, 2, &out, 1, &c), 0);
	assert_int_equal(c.flops, 4ull * 2 * 128 * 512 * 256);
	/* Inner dimensions that differ are refused. */
	in[1] = shp(2, 100, 512, 0, 0);
	assert_int_equal(npu_op_cost("MatMulV2", in, 2, &out, 1, &c), -EINVAL);
}

/* Conv2D: 2 * N*O*Ho*Wo * C*kh*kw. */
static void test_op_conv(void **state)
{
	struct npu_shape in[2] = { shp(4, 8, 3, 32, 32), shp(4, 16, 3, 3, 3) };
	struct npu_shape out = shp(4, 8, 16, 30, 30);
	struct npu_shape bwd[3] = { in[0], in[1], out };
	struct npu_op_cost c, b;

	assert_int_equal(npu_op_cost("Conv2D", in, 2, &out, 1, &c), 0);
	assert_int_equal(c.flops, 2ull * 8 * 16 * 30 * 30 * 3 * 3 * 3);
	assert_int_equal(c.task_type, NPU_TASK_AI_CORE);
	assert_int_equal(npu_op_cost("Conv2DBackpropFilter", bwd, 3, &in[1], 1, &b), 0);
	assert_int_equal(b.flops, c.flops);
	assert_int_equal(npu_op_cost("Conv2D", in, 1, &out, 1, &c), -EINVAL);
}

/* Elementwise and data movement: vector unit, flops per element, bytes of all operands. */
static void test_op_vector(void **state)
{
	struct npu_shape a = shp(2, 1024, 1024, 0, 0);
	struct npu_shape in[2] = { a, a };
	struct npu_op_cost c, big;
	struct npu_card_config cfg = card();

	assert_int_equal(npu_op_cost("Add", in, 2, &a, 1, &c), 0);
	assert_int_equal(c.task_type, NPU_TASK_AI_VECTOR_CORE);
	assert_int_equal(c.flops, 1024ull * 1024);
	assert_int_equal(c.bytes, 3ull * 1024 * 1024 * 2);
	assert_int_equal(npu_op_cost("TransData", in, 1, &a, 1, &c), 0);
	assert_int_equal(c.flops, 0);
	assert_int_equal(c.bytes, 2ull * 1024 * 1024 * 2);
	assert_int_equal(npu_op_cost("NonZero", in, 1, &a, 1, &c), 0);
	assert_int_equal(c.task_type, NPU_TASK_AI_CPU);
	/* Device time grows with the shape. */
	assert_int_equal(npu_op_cost("Gelu", in, 1, &a, 1, &c), 0);
	a.dims[0] *= 8;
	assert_int_equal(npu_op_cost("Gelu", &a, 1, &a, 1, &big), 0);
	assert_true(npu_cost_duration_ns(&cfg, big.flops, big.bytes, big.task_type) >
		    4 * (npu_cost_duration_ns(&cfg, c.flops, c.bytes, c.task_type) - 3000));
	assert_int_equal(npu_op_cost("NoSuchOp", in, 1, &a, 1, &c), -EINVAL);
	assert_int_equal(npu_op_cost("Add", in, 2, NULL, 0, &c), -EINVAL);
}

static void test_op_names(void **state)
{
	const char *const *k = npu_op_cost_kernels();
	static const char *const required[] = { "Add",	       "Mul",	     "MatMulV2",
						"Relu",	       "Gelu",	     "SoftmaxV2",
						"LayerNormV3", "Conv2D",     "Cast",
						"TransData",   "ApplyAdamW", "ForeachMulScalar" };
	struct npu_shape a = shp(1, 64, 0, 0, 0), two[3] = { a, a, a };
	struct npu_op_cost c;
	int n = 0;

	for (; k[n]; n++)
		;
	assert_true(n >= 12);
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		int found = 0;

		for (int j = 0; j < n; j++)
			found |= !strcmp(k[j], required[i]);
		assert_true(found);
	}
	/* Every listed kernel costs something with plausible operands (or refuses cleanly). */
	for (int j = 0; j < n; j++) {
		int r = npu_op_cost(k[j], two, 3, &a, 1, &c);

		assert_true(r == 0 || r == -EINVAL);
		if (!r)
			assert_true(c.block_dim >= 1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel_compute_bound),
		cmocka_unit_test(test_kernel_memory_bound),
		cmocka_unit_test(test_task_type_peaks),
		cmocka_unit_test(test_latency_floor),
		cmocka_unit_test(test_copies),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_rejects),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_op_matmul),
		cmocka_unit_test(test_op_conv),
		cmocka_unit_test(test_op_vector),
		cmocka_unit_test(test_op_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
