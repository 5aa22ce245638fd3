// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_db_export - the --export-type values, and the db schema tables' own
 * invariants (tests/convert/test_convert_db.py checks them against
 * docs/db_schema.md): every table has its columns, no column twice, at most
 * one primary key, each ENUM_* table with unique ids, and the id ranges of
 * STRING_IDS apart.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "convert/db_export.h"
#include "convert/db_schema.h"

static void test_export_type(void **state)
{
	assert_int_equal(asc_export_type_parse("text"), ASC_EXPORT_TEXT);
	assert_int_equal(asc_export_type_parse("db"), ASC_EXPORT_DB);
	assert_int_equal(asc_export_type_parse("text,db"), ASC_EXPORT_TEXT | ASC_EXPORT_DB);
	assert_int_equal(asc_export_type_parse("db,text"), ASC_EXPORT_TEXT | ASC_EXPORT_DB);
	assert_int_equal(asc_export_type_parse(""), -EINVAL);
	assert_int_equal(asc_export_type_parse("Text"), -EINVAL);
	assert_int_equal(asc_export_type_parse("text,"), -EINVAL);
	assert_int_equal(asc_export_type_parse("db,db"), -EINVAL);
}

static void test_tables(void **state)
{
	int t, i, j, pk;

	for (t = 0; t < ASC_DBT_NR; t++) {
		const struct asc_db_table *tb = &asc_db_tables[t];

		assert_non_null(tb->name);
		assert_true(tb->nr_cols >= 2);
		for (i = pk = 0; i < tb->nr_cols; i++) {
			pk += tb->cols[i].pk;
			assert_true(!strcmp(tb->cols[i].type, "INTEGER") ||
				    !strcmp(tb->cols[i].type, "TEXT") ||
				    !strcmp(tb->cols[i].type, "NUMERIC"));
			for (j = 0; j < i; j++)
				assert_string_not_equal(tb->cols[i].name, tb->cols[j].name);
		}
		assert_true(pk <= 1);
	}
	/* the join keys msprof-analyze uses */
	assert_string_equal(asc_db_tables[ASC_DBT_TASK].cols[3].name, "connectionId");
	assert_string_equal(asc_db_tables[ASC_DBT_CANN_API].cols[4].name, "connectionId");
	assert_int_equal(asc_db_tables[ASC_DBT_CANN_API].cols[4].pk, 1);
	assert_string_equal(asc_db_tables[ASC_DBT_PYTORCH_API].cols[0].type, "TEXT");
}

static void test_enums(void **state)
{
	int e, i, j, api = -1;

	assert_true(asc_db_nr_enums >= 9);
	for (e = 0; e < asc_db_nr_enums; e++) {
		const struct asc_db_enum_table *t = &asc_db_enums[e];

		assert_int_equal(strncmp(t->table, "ENUM_", 5), 0);
		if (!strcmp(t->table, "ENUM_API_TYPE"))
			api = e;
		for (i = 0; i < t->nr_rows; i++)
			for (j = 0; j < i; j++)
				assert_int_not_equal(t->rows[i].id, t->rows[j].id);
	}
	assert_true(api >= 0);
	for (i = 0; i < asc_db_enums[api].nr_rows; i++) {
		const struct asc_db_enum *r = &asc_db_enums[api].rows[i];

		if (r->id == ASC_DB_API_NODE)
			assert_string_equal(r->name, "node");
		if (r->id == ASC_DB_API_TORCH_OP)
			assert_string_equal(r->name, "op");
	}
	assert_true(ASC_DB_STR_FWK < ASC_DB_STR_MEM && ASC_DB_CONN_FWK > ASC_DB_STR_MEM);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_export_type),
		cmocka_unit_test(test_tables),
		cmocka_unit_test(test_enums),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
