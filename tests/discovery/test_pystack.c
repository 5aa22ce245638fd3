// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_pystack: CPython 3.11 offsets found in /usr/bin/python3's machine
 * code, checked on a live interpreter (thread list, frames, code objects read
 * through /proc/PID/mem) against what that interpreter says about itself
 * (threading.get_ident(), id(code), co_positions()).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "discovery/pystack.h"

#define PYTHON "/usr/bin/python3"

/* The live interpreter: main thread blocked in inner() -> sys.stdin.read(), one helper thread. */
static const char script[] =
	"import sys, threading\n"
	"ev = threading.Event()\n"
	"def helper():\n"
	"    ev.wait()\n"
	"t = threading.Thread(target=helper); t.start()\n"
	"def inner(a, b):\n"
	"    x = a + b\n"
	"    for i in range(3):\n"
	"        x += i\n"
	"    print('ready', flush=True)\n"
	"    return sys.stdin.read()\n"
	"def outer():\n"
	"    return inner(1, 2)\n"
	"print('main', threading.get_ident())\n"
	"print('helper', t.ident)\n"
	"for c in (inner.__code__, outer.__code__):\n"
	"    print('code', id(c), c.co_name, c.co_firstlineno, c.co_filename)\n"
	"    for i, p in enumerate(c.co_positions()):\n"
	"        print('pos', id(c), i, p[0] if p[0] is not None else -1)\n"
	"print('innercall', inner.__code__.co_firstlineno + 5)\n"
	"print('outercall', outer.__code__.co_firstlineno + 1)\n"
	"outer()\n"
	"ev.set()\n";

struct live {
	pid_t pid;
	int to_py;
	FILE *from_py;
	unsigned long main_ident, helper_ident;
	uint64_t code_inner, code_outer;
	int inner_call_line, outer_call_line;
	struct {
		uint64_t code;
		int unit, line;
	} pos[4096];
	int npos;
};

static struct live L;

/*
 * "ready" is flushed from inside print(), before print() returns, so the main
 * thread may still be at line 10 when the parent reads it. Wait until the main
 * thread (task PID) is blocked in read() on fd 0: that read is made only by
 * sys.stdin.read() at line 11 (stdin is read nowhere else) and the parent never
 * writes to the pipe, so from then on the stack is parked at inner() line 11.
 * Polls /proc/PID/task/PID/syscall every millisecond; gives up (setup fails)
 * only if the child exits or has not got there after 60 s.
 */
static int wait_blocked_in_stdin_read(pid_t pid)
{
	struct timespec ms = { 0, 1000000 };
	char path[64], buf[256] = "";
	int i;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, pid);
	for (i = 0; i < 60000; i++) {
		long nr;
		unsigned long arg0;
		ssize_t len;
		int fd = open(path, O_RDONLY);

		if (fd < 0)
			return -1; /* the child is gone */
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len > 0) {
			buf[len] = 0;
			if (sscanf(buf, "%ld 0x%lx", &nr, &arg0) == 2 && nr == SYS_read &&
			    arg0 == 0)
				return 0;
		}
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return -1;
		nanosleep(&ms, NULL);
	}
	fprintf(stderr, "python3 %d not blocked in read(0) after 60 s: %s\n", pid, buf);
	return -1;
}

static int setup(void **state)
{
	int to_py[2], from_py[2];
	char line[4096];

	if (pipe(to_py) || pipe(from_py))
		return -1;
	L.pid = fork();
	if (L.pid < 0)
		return -1;
	if (L.pid == 0) {
		dup2(to_py[0], 0);
		dup2(from_py[1], 1);
		close(to_py[1]);
		close(from_py[0]);
		execl(PYTHON, PYTHON, "-c", script, (char *)NULL);
		_exit(127);
	}
	close(to_py[0]);
	close(from_py[1]);
	L.to_py = to_py[1];
	L.from_py = fdopen(from_py[0], "r");
	while (fgets(line, sizeof(line), L.from_py)) {
		unsigned long long c;
		int a, b;
		char name[64];

		if (!strncmp(line, "ready", 5))
			return wait_blocked_in_stdin_read(L.pid);
		if (sscanf(line, "main %lu", &L.main_ident) == 1 ||
		    sscanf(line, "helper %lu", &L.helper_ident) == 1 ||
		    sscanf(line, "innercall %d", &L.inner_call_line) == 1 ||
		    sscanf(line, "outercall %d", &L.outer_call_line) == 1)
			continue;
		if (sscanf(line, "code %llu %63s", &c, name) == 2) {
			if (!strcmp(name, "inner"))
				L.code_inner = c;
			else
				L.code_outer = c;
		} else if (sscanf(line, "pos %llu %d %d", &c, &a, &b) == 3 && L.npos < 4096) {
			L.pos[L.npos].code = c;
			L.pos[L.npos].unit = a;
			L.pos[L.npos++].line = b;
		}
	}
	return -1;
}

static int teardown(void **state)
{
	int st;

	close(L.to_py);
	fclose(L.from_py);
	waitpid(L.pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static void test_discover(void **state)
{
	struct asc_py_offsets o;

	assert_int_equal(asc_py_offsets_discover("/usr/bin/python3.11", &o), 0);
	assert_int_equal(o.valid, ASC_PYOFF_ALL);
	print_message("tstate: next %u thread_id %u cframe %u; frame: code %u previous %u "
		      "prev_instr %u owner %u; code: adaptive %u filename %u name %u first %u "
		      "table %u\n",
		      o.ts_next, o.ts_thread_id, o.ts_cframe, o.fr_code, o.fr_previous,
		      o.fr_prev_instr, o.fr_owner, o.co_code_adaptive, o.co_filename, o.co_name,
		      o.co_firstlineno, o.co_linetable);
	/* not an interpreter */
	assert_int_equal(asc_py_offsets_discover("/bin/true", &o), -ENOENT);
	assert_int_equal(asc_py_offsets_discover("/nonexistent", &o), -ENOENT);
}

static int rd(int fd, uint64_t a, void *b, size_t n)
{
	return pread(fd, b, n, a) == (ssize_t)n ? 0 : -1;
}

/* Walk the live interpreter exactly as the BPF program does. */
static void test_live_walk(void **state)
{
	struct asc_py_offsets o;
	char path[4096], mp[64];
	uint64_t bias, interp, ts, main_ts = 0, cframe, frame, code[8];
	int32_t lasti[8];
	int fd, nthreads = 0, seen_main = 0, seen_helper = 0, n = 0;

	assert_int_equal(asc_py_find_image(L.pid, path, sizeof(path), &bias), 0);
	assert_int_equal(asc_py_offsets_discover(path, &o), 0);
	assert_int_equal(o.valid, ASC_PYOFF_ALL);
	snprintf(mp, sizeof(mp), "/proc/%d/mem", L.pid);
	fd = open(mp, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(rd(fd, o.runtime_vaddr + bias + o.rt_interp_head, &interp, 8), 0);
	assert_int_equal(rd(fd, interp + o.is_threads_head, &ts, 8), 0);
	while (ts && nthreads < 16) {
		uint64_t ident;

		assert_int_equal(rd(fd, ts + o.ts_thread_id, &ident, 8), 0);
		if (ident == L.main_ident) {
			seen_main++;
			main_ts = ts;
		}
		seen_helper += ident == L.helper_ident;
		nthreads++;
		assert_int_equal(rd(fd, ts + o.ts_next, &ts, 8), 0);
	}
	assert_int_equal(nthreads, 2);
	assert_int_equal(seen_main, 1);
	assert_int_equal(seen_helper, 1);

	assert_int_equal(rd(fd, main_ts + o.ts_cframe, &cframe, 8), 0);
	assert_int_equal(rd(fd, cframe + o.cf_current_frame, &frame, 8), 0);
	while (frame && n < 8) {
		uint64_t prev_instr;

		assert_int_equal(rd(fd, frame + o.fr_code, &code[n], 8), 0);
		assert_int_equal(rd(fd, frame + o.fr_prev_instr, &prev_instr, 8), 0);
		lasti[n] = (int64_t)(prev_instr - (code[n] + o.co_code_adaptive)) / 2;
		n++;
		assert_int_equal(rd(fd, frame + o.fr_previous, &frame, 8), 0);
	}
	close(fd);
	/* inner, outer, <module> */
	assert_int_equal(n, 3);
	assert_int_equal(code[0], L.code_inner);
	assert_int_equal(code[1], L.code_outer);

	{
		struct asc_pystack_resolver *r = asc_pystack_resolver_new(L.pid, &o);
		char buf[512], want[512];
		int line;

		assert_non_null(r);
		assert_int_equal(asc_pystack_frame(r, code[0], lasti[0], buf, sizeof(buf), &line),
				 0);
		assert_int_equal(line, L.inner_call_line);
		snprintf(want, sizeof(want), "<string>(%d): inner", L.inner_call_line);
		assert_string_equal(buf, want);
		assert_int_equal(asc_pystack_frame(r, code[1], lasti[1], buf, sizeof(buf), &line),
				 0);
		assert_int_equal(line, L.outer_call_line);
		assert_int_equal(asc_pystack_frame(r, code[2], lasti[2], buf, sizeof(buf), &line),
				 0);
		assert_true(strstr(buf, "<string>(") == buf);
		assert_non_null(strstr(buf, "): <module>"));
		/* an address that is no code object */
		assert_int_equal(asc_pystack_frame(r, 8, 0, buf, sizeof(buf), &line), -EFAULT);
		asc_pystack_resolver_free(r);
	}
}

/* Every code unit of two functions: our line table decoding vs co_positions(). */
static void test_linetable_all_units(void **state)
{
	struct asc_py_offsets o;
	struct asc_pystack_resolver *r;
	char path[4096], buf[512];
	uint64_t bias;
	int i, checked = 0;

	assert_int_equal(asc_py_find_image(L.pid, path, sizeof(path), &bias), 0);
	assert_int_equal(asc_py_offsets_discover(path, &o), 0);
	r = asc_pystack_resolver_new(L.pid, &o);
	assert_non_null(r);
	assert_true(L.npos > 20);
	for (i = 0; i < L.npos; i++) {
		int line;

		assert_int_equal(asc_pystack_frame(r, L.pos[i].code, L.pos[i].unit, buf,
						   sizeof(buf), &line),
				 0);
		assert_int_equal(line, L.pos[i].line);
		checked++;
	}
	print_message("%d code units checked\n", checked);
	asc_pystack_resolver_free(r);
}

struct emitted {
	int n;
	char text[8][256];
};

static int collect(const struct asc_pyframe *rec, size_t size, void *ctx)
{
	struct emitted *e = ctx;

	assert_int_equal(rec->hdr.type, ASC_REC_PYFRAME);
	assert_int_equal(size % 8, 0);
	assert_int_equal(rec->hdr.size, size);
	if (e->n < 8)
		snprintf(e->text[e->n], sizeof(e->text[0]), "%s", rec->text);
	e->n++;
	return 0;
}

static const char *lookup_first(uint64_t code, int32_t lasti, void *ctx)
{
	struct emitted *e = ctx;

	return code == L.code_inner ? e->text[0] : code == L.code_outer ? e->text[1] : NULL;
}

static void test_resolve_rec_and_join(void **state)
{
	struct asc_py_offsets o;
	struct asc_pystack_resolver *r;
	struct asc_pystack rec = { 0 };
	struct emitted e = { 0 };
	char path[4096], joined[1024], want[1024];
	uint64_t bias;

	assert_int_equal(asc_py_find_image(L.pid, path, sizeof(path), &bias), 0);
	assert_int_equal(asc_py_offsets_discover(path, &o), 0);
	r = asc_pystack_resolver_new(L.pid, &o);
	assert_non_null(r);
	rec.hdr.type = ASC_REC_PYSTACK;
	rec.nr = 3;
	rec.code[0] = L.code_inner;
	rec.lasti[0] = L.pos[0].unit;
	rec.code[1] = L.code_outer;
	rec.lasti[1] = 0;
	rec.code[2] = 16; /* unreadable: skipped */
	assert_int_equal(asc_pystack_resolve_rec(r, &rec, collect, &e), 2);
	/* the same pairs again: nothing new */
	assert_int_equal(asc_pystack_resolve_rec(r, &rec, collect, &e), 0);
	assert_int_equal(e.n, 2);
	assert_int_equal(asc_pystack_join(&rec, lookup_first, &e, joined, sizeof(joined)),
			 (int)(strlen(e.text[0]) + 1 + strlen(e.text[1])));
	snprintf(want, sizeof(want), "%s;%s", e.text[0], e.text[1]);
	assert_string_equal(joined, want);
	asc_pystack_resolver_free(r);
	assert_null(asc_pystack_resolver_new(999999999, &o));
}

static void test_linetable_bad(void **state)
{
	static const uint8_t not_entry[] = { 0x01, 0x02 };
	static const uint8_t cut_varint[] = { 0x80 | (13 << 3), 0x40 };
	/* one no-column entry of 2 units, +3 lines; then a "no location" entry */
	static const uint8_t ok[] = { 0x80 | (13 << 3) | 1, 6, 0x80 | (15 << 3) };
	int line = 0;

	assert_int_equal(asc_py_linetable_line(not_entry, sizeof(not_entry), 1, 0, &line), -EINVAL);
	assert_int_equal(asc_py_linetable_line(cut_varint, sizeof(cut_varint), 1, 0, &line),
			 -EINVAL);
	assert_int_equal(asc_py_linetable_line(ok, sizeof(ok), 10, 1, &line), 0);
	assert_int_equal(line, 13);
	assert_int_equal(asc_py_linetable_line(ok, sizeof(ok), 10, 2, &line), -ENOENT);
	assert_int_equal(asc_py_linetable_line(ok, sizeof(ok), 10, 5, &line), -ENOENT);
	assert_int_equal(asc_py_linetable_line(ok, sizeof(ok), 10, -1, &line), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_discover),
		cmocka_unit_test(test_linetable_bad),
		cmocka_unit_test(test_live_walk),
		cmocka_unit_test(test_linetable_all_units),
		cmocka_unit_test(test_resolve_rec_and_join),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
