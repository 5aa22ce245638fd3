// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * unwtest.cpp - libunwtest.so and its driver unwtest: C++ exceptions through
 * functions a test puts a return probe on (tests/trace/test_trace_cxx_exceptions.py).
 *
 *   unw_through(i)  calls unw_thrower, which throws: the exception unwinds
 *                   through unw_through's frame (its return probe's slot)
 *   unw_catcher(i)  calls unw_thrower and catches: its own frame is not
 *                   unwound and returns normally
 *
 * `unwtest N` calls each N times and prints "through N caught N" and the
 * loop's own time per iteration (tools/bench_unwind.sh); exit 0 only if
 * every exception was caught where it should be.  Built into
 * libunwtest.so (-DUNW_LIB) and the driver (linked with it).
 */
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <time.h>

extern "C" {
int unw_thrower(int x);
int unw_through(int x);
int unw_catcher(int x);
}

#ifdef UNW_LIB
int unw_thrower(int x)
{
	if (x >= 0)
		throw std::runtime_error("unwtest");
	return x;
}

/* + 1: no tail call, the frame stays on the stack while unw_thrower runs */
int unw_through(int x)
{
	return unw_thrower(x) + 1;
}

int unw_catcher(int x)
{
	try {
		return unw_thrower(x);
	} catch (const std::exception &) {
		return -1;
	}
}
#else
int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10, through = 0, caught = 0;
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < n; i++) {
		try {
			unw_through(i);
		} catch (const std::exception &) {
			through++;
		}
		caught += unw_catcher(i) == -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("through %d caught %d\n", through, caught);
	printf("ns_per_iter %.0f\n",
	       ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / (n > 0 ? n : 1));
	return through == n && caught == n ? 0 : 1;
}
#endif
