// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * trace_target.c - a tiny traced process for the test_trace_* tests,
 * independent of npu_model: built three ways by tests/lib/trace_lib.sh
 *
 *   -DTT_ACL    libascendcl.so: aclInit, aclrtMalloc, aclrtFree,
 *               aclrtSynchronizeStream (names from the probe table)
 *   -DTT_STEP   libtorch_cpu.so and libtorch_npu.so (one source, built twice): the
 *               step boundary torch::optim::AdamW::step(LossClosure), which tt
 *               calls from libtorch_cpu.so, and OpCommand::RunOpApiV2 (from
 *               libtorch_npu.so)
 *   (neither)   the program: tt STEPS CALLS_PER_STEP SLEEP_US [dlopen-after-ms];
 *               TT_OPNAMES=N adds N OpCommand::RunOpApiV2 calls per step with a
 *               readable name and N with a name in a page never touched
 *
 * Ground truth: with TT_JOURNAL=FILE every library call appends
 * "name<TAB>tid<TAB>t0<TAB>t1<TAB>ret" (CLOCK_MONOTONIC ns, t0 on entry, t1
 * just before return) and every step boundary "step<TAB>tid<TAB>t<TAB>t<TAB>index"
 * at the return of the optimizer step that ends each iteration: step index - 1
 * ends, step index starts (step 0 starts with the trace).
 * The tests compare ascbpf's capture with it; ascbpf never reads it.
 *
 * The lines are buffered in memory (TT_JBUF bytes per library) and written by
 * tt_journal_flush(), which the program calls between calls: after aclInit and
 * at the end of every step, libtorch_npu.so's lines first and the step line
 * last, so the file stays in call order.  A write(2) between t1 and the
 * return would sit inside the interval the tests measure (probe to the
 * target's own clock read): its return to user space is where a waiting
 * task preempts the target (PREEMPT_NONE), and an ext4
 * stall (journal commit, dirty throttling) of the shared disk lands there too;
 * measured with a busy loop on one core, that write was the exit side's p99
 * (6-21 us, against 1-3 us on the entry side).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(TT_ACL) || defined(TT_STEP)
static pthread_mutex_t jlock = PTHREAD_MUTEX_INITIALIZER;
static FILE *jf;
static int jinit;

static uint64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* 8 MiB: a step of the busiest test (10000 call pairs, ~1.2 MB) never fills it */
#define TT_JBUF (8u << 20)

static void journal(const char *name, uint64_t t0, uint64_t t1, long ret)
{
	pthread_mutex_lock(&jlock);
	if (!jinit) {
		const char *p = getenv("TT_JOURNAL");

		jinit = 1;
		if (p)
			jf = fopen(p, "a");
		/*
		 * our own buffer: glibc ignores the size when setvbuf is given NULL
		 * (4 KiB, flushed mid-line, and the two libraries' lines interleave)
		 */
		if (jf) {
			char *b = malloc(TT_JBUF);

			if (!b || setvbuf(jf, b, _IOFBF, TT_JBUF)) {
				free(b);
				setvbuf(jf, NULL, _IOLBF, 0); /* whole lines still */
			}
		}
	}
	if (jf)
		fprintf(jf, "%s\t%ld\t%llu\t%llu\t%ld\n", name, (long)syscall(SYS_gettid),
			(unsigned long long)t0, (unsigned long long)t1, ret);
	pthread_mutex_unlock(&jlock);
}

/* Writes the buffered journal lines; called by tt between calls, never probed. */
void tt_journal_flush(void)
{
	pthread_mutex_lock(&jlock);
	if (jf)
		fflush(jf);
	pthread_mutex_unlock(&jlock);
}
#endif

#ifdef TT_ACL
int aclInit(const char *cfg)
{
	uint64_t t0 = now();

	(void)cfg;
	journal("aclInit", t0, now(), 0);
	return 0;
}

int aclrtMalloc(void **p, size_t size, int policy)
{
	uint64_t t0 = now();

	(void)policy;
	*p = malloc(size);
	journal("aclrtMalloc", t0, now(), 0);
	return 0;
}

int aclrtFree(void *p)
{
	uint64_t t0 = now();

	free(p);
	journal("aclrtFree", t0, now(), 0);
	return 0;
}

int aclrtSynchronizeStream(void *s)
{
	uint64_t t0 = now();

	journal("aclrtSynchronizeStream", t0, now(), s ? 1 : 0);
	return s ? 1 : 0;
}
#elif defined(TT_STEP)
static long step_index;

/*
 * torch::optim::AdamW::step(std::function<at::Tensor()>): at::Tensor comes
 * back through the hidden pointer ret, the closure by reference; neither is
 * touched here.
 */
void *_ZN5torch5optim5AdamW4stepESt8functionIFN2at6TensorEvEE(void *ret, void *self,
							      const void *closure)
{
	uint64_t t;

	(void)self;
	(void)closure;
	/* at its return, as npu_model's: step_index ends, step_index + 1 starts */
	t = now();
	journal("step", t, t, ++step_index);
	return ret;
}

/* libstdc++'s std::string: data pointer, length, then the short-string buffer. */
struct tt_string {
	const char *data;
	size_t len;
	char local[16];
};

/*
 * at_npu::native::OpCommand::RunOpApiV2(const std::string &, const
 * std::function<int()> &, bool): journals the name's length only and never
 * reads the name, so a name in a page the process never touched stays
 * unmapped (the probe's read of it faults).
 */
void _ZN6at_npu6native9OpCommand10RunOpApiV2ERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEERKSt8functionIFivEEb(
	const struct tt_string *name, const void *fn, _Bool sync)
{
	uint64_t t0 = now();

	(void)fn;
	(void)sync;
	journal("RunOpApiV2", t0, now(), (long)name->len);
}
#else
typedef int (*malloc_fn)(void **, size_t, int);
typedef int (*free_fn)(void *);
typedef int (*init_fn)(const char *);
typedef int (*sync_fn)(void *);
typedef void *(*step_fn)(void *ret, void *self, const void *closure);
typedef void (*flush_fn)(void);

/* RunOpApiV2 (TT_STEP above) */
struct tt_string {
	const char *data;
	size_t len;
	char local[16];
};
typedef void (*runop_fn)(const struct tt_string *, const void *, _Bool);
#define TT_RESIDENT_OP "tt_resident_op" /* 14 bytes: in the short-string buffer */

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	long steps, calls, i, j, n = 0;
	int sleep_us, dlopen_ms = -1;
	void *acl, *stp, *cpu;
	malloc_fn m;
	free_fn f;
	init_fn in;
	sync_fn sy;
	step_fn st;
	flush_fn acl_flush, step_flush, cpu_flush;
	char tensor[8];
	runop_fn runop;
	struct tt_string resident = { NULL, sizeof(TT_RESIDENT_OP) - 1, TT_RESIDENT_OP }, unmapped;
	long opnames = 0;
	const char *dir;
	char path[4096];
	struct timespec t_start, t_end;

	if (argc < 4) {
		fprintf(stderr, "usage: tt STEPS CALLS_PER_STEP SLEEP_US [DLOPEN_AFTER_MS]\n");
		return 2;
	}
	steps = atol(argv[1]);
	calls = atol(argv[2]);
	sleep_us = atoi(argv[3]);
	if (argc > 4)
		dlopen_ms = atoi(argv[4]);
	signal(SIGTERM, on_term);
	dir = getenv("TT_LIBDIR");
	if (!dir)
		dir = ".";
	snprintf(path, sizeof(path), "%s/libtorch_cpu.so", dir);
	cpu = dlopen(path, RTLD_NOW);
	snprintf(path, sizeof(path), "%s/libtorch_npu.so", dir);
	stp = dlopen(path, RTLD_NOW);
	if (dlopen_ms >= 0) {
		/*
		 * libascendcl.so comes later, as torch_npu dlopens libopapi.so; the
		 * tracer attaches it asynchronously, so wait a moment before using it
		 */
		printf("ready %d\n", getpid());
		fflush(stdout);
		usleep(dlopen_ms * 1000);
	}
	snprintf(path, sizeof(path), "%s/libascendcl.so", dir);
	acl = dlopen(path, RTLD_NOW);
	if (dlopen_ms >= 0)
		usleep(300 * 1000);
	if (!acl || !stp || !cpu) {
		fprintf(stderr, "tt: %s\n", dlerror());
		return 1;
	}
	m = (malloc_fn)dlsym(acl, "aclrtMalloc");
	f = (free_fn)dlsym(acl, "aclrtFree");
	in = (init_fn)dlsym(acl, "aclInit");
	sy = (sync_fn)dlsym(acl, "aclrtSynchronizeStream");
	st = (step_fn)dlsym(cpu, "_ZN5torch5optim5AdamW4stepESt8functionIFN2at6TensorEvEE");
	acl_flush = (flush_fn)dlsym(acl, "tt_journal_flush");
	step_flush = (flush_fn)dlsym(stp, "tt_journal_flush");
	cpu_flush = (flush_fn)dlsym(cpu, "tt_journal_flush");
	if (!acl_flush || !step_flush || !cpu_flush) {
		fprintf(stderr, "tt: no tt_journal_flush in the libraries (rebuild them)\n");
		return 1;
	}
	runop = (runop_fn)dlsym(stp, "_ZN6at_npu6native9OpCommand10RunOpApiV2ERKNSt7__cxx1112"
				     "basic_stringIcSt11char_traitsIcESaIcEEERKSt8functionIFivEEb");
	/*
	 * TT_OPNAMES=N: N RunOpApiV2 calls per step with a name the process
	 * wrote (resident) and N with a name in an anonymous page it never
	 * touched (not mapped until first use: a BPF read of it faults).
	 */
	if (getenv("TT_OPNAMES"))
		opnames = atol(getenv("TT_OPNAMES"));
	resident.data = resident.local;
	unmapped.len = 20;
	unmapped.data = opnames ? mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0) :
				  NULL;
	if (opnames && !runop) {
		fprintf(stderr, "tt: no RunOpApiV2 in libtorch_npu.so\n");
		return 1;
	}
	if (unmapped.data == MAP_FAILED) {
		perror("tt: mmap");
		return 1;
	}
	if (dlopen_ms < 0) {
		printf("ready %d\n", getpid());
		fflush(stdout);
	}
	in(NULL);
	acl_flush();
	clock_gettime(CLOCK_MONOTONIC, &t_start);
	for (i = 0; (steps < 0 || i < steps) && !stop; i++) {
		for (j = 0; j < opnames; j++) {
			runop(&resident, NULL, 0);
			runop(&unmapped, NULL, 0);
		}
		for (j = 0; j < calls && !stop; j++) {
			void *p;

			m(&p, 64 + j, 0);
			f(p);
			n++;
			if (sleep_us)
				usleep(sleep_us);
		}
		sy(NULL);
		st(tensor, NULL, NULL); /* the optimizer step ends the iteration (step i) */
		step_flush();		/* the step's op names, its acl calls, then its end */
		acl_flush();
		cpu_flush();
	}
	clock_gettime(CLOCK_MONOTONIC, &t_end);
	printf("done steps=%ld pairs=%ld loop_ns=%lld\n", i, n,
	       (long long)(t_end.tv_sec - t_start.tv_sec) * 1000000000ll +
		       (t_end.tv_nsec - t_start.tv_nsec));
	return 0;
}
#endif
