// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * npu-modeld - the simulated Ascend card(s) and driver.
 *
 *   npu-modeld [--mount DIR] [--cards N] [--card SPEC] [--freq-hz F]
 *              [--counter-offset N] [--journal DIR] [--task-timeout-s S] [--no-private]
 *              [--debug]
 *
 * Mounts a FUSE file system at DIR (default /run/npu_model/dev) holding
 * davinci_manager, davinci0..N-1 and npu_model_info, and answers the ioctls
 * of libascend_hal.so on them (npu_ioctl.h).  Runs in the foreground until
 * SIGINT/SIGTERM, then unmounts and removes its shared-memory files.
 * Exit status: 0 after a clean stop, 2 for usage errors, 1 when it cannot
 * start (mount point busy, no /dev/fuse, ...).
 */
#define FUSE_USE_VERSION 312

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fuse_lowlevel.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "modeld.h"
#include "npu_journal.h"

static const char *const usage_text =
	"usage: npu-modeld [options]\n"
	"  --mount DIR           where the device nodes appear\n"
	"                        (default " NPU_MODEL_DEV_DIR_DEFAULT ")\n"
	"  --cards N             number of cards, 1..64 (default 1)\n"
	"  --card SPEC           card speed: key=value,... with keys tflops, vector_tflops,\n"
	"                        aicpu_gflops, hbm_gbps, pcie_gbps, launch_us, hbm_gib\n"
	"  --hbm-mib N           HBM capacity per card in MiB (overrides hbm_gib)\n"
	"  --freq-hz F           device system-counter frequency (default 50000000)\n"
	"  --counter-offset N    counter value at daemon start (default 0x1000000000)\n"
	"  --journal DIR         write DIR/journal.modeld.tsv (exec, oom lines)\n"
	"  --task-timeout-s S    a task longer than S seconds fails at S (default 60)\n"
	"  --cards-per-node N    cards of one simulated node (default: all): HCCS links\n"
	"                        within a node, RDMA (RoCE) between nodes\n"
	"  --link SPEC           link model: hccs_gbps, hccs_us, rdma_gbps, rdma_us\n"
	"                        (GB/s and us latency; default 56, 2, 25, 10)\n"
	"  --slow-link A-B:K     the link between cards A and B is K times slower\n"
	"                        (fault injection; up to 8)\n"
	"  --card-base B         one node of a job: its cards are B.. in the job (links,\n"
	"                        HCCL's devices; --slow-link names them so)\n"
	"  --fabric FILE         notify table shared with the job's other daemons\n"
	"                        (same FILE on each; created by the first)\n"
	"  --clock-offset-ns N   this node's wall-clock error, in npu_model_info for\n"
	"                        libnpu_nodeclock.so (LD_PRELOAD) to add to CLOCK_REALTIME\n"
	"  --no-private          refuse the simulator-only queries (clock pair, drop\n"
	"                        counter): only what a real driver answers\n"
	"  --debug               FUSE debug output\n"
	"Libraries find the nodes through $" NPU_MODEL_DEV_DIR_ENV " (npu_model/README.md).\n";

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || *s == '-')
		return -EINVAL;
	*out = v;
	return 0;
}

/* ---- FUSE file system --------------------------------------------------------------- */

static int node_of(const char *name, uint64_t *ino)
{
	uint64_t n;

	if (!strcmp(name, "davinci_manager")) {
		*ino = MD_NODE_MANAGER;
		return 0;
	}
	if (!strcmp(name, NPU_MODEL_INFO_NAME)) {
		*ino = MD_NODE_INFO;
		return 0;
	}
	if (!strncmp(name, "davinci", 7) && name[7] >= '0' && name[7] <= '9' &&
	    !parse_u64(name + 7, &n) && n < md_cfg.cards && (name[7] != '0' || !name[8])) {
		*ino = MD_NODE_DAVINCI0 + n;
		return 0;
	}
	return -ENOENT;
}

static int stat_of(uint64_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_nlink = 1;
	if (ino == MD_NODE_ROOT) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
	} else if (ino == MD_NODE_MANAGER ||
		   (ino >= MD_NODE_DAVINCI0 && ino < MD_NODE_DAVINCI0 + md_cfg.cards)) {
		/* Regular files: a FUSE char device would open the kernel's driver, not us. */
		st->st_mode = S_IFREG | 0666;
	} else if (ino == MD_NODE_INFO) {
		st->st_mode = S_IFREG | 0444;
	} else {
		return -ENOENT;
	}
	return 0;
}

static void fs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;
	uint64_t ino;

	memset(&e, 0, sizeof(e));
	if (parent != MD_NODE_ROOT || node_of(name, &ino)) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	e.ino = ino;
	e.attr_timeout = 3600;
	e.entry_timeout = 3600;
	stat_of(ino, &e.attr);
	fuse_reply_entry(req, &e);
}

static void fs_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;

	(void)fi;
	if (stat_of(ino, &st)) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	fuse_reply_attr(req, &st, 3600);
}

static void fs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	char *buf;
	size_t used = 0;
	off_t i, total = 4 + (off_t)md_cfg.cards;

	(void)fi;
	if (ino != MD_NODE_ROOT) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	buf = calloc(1, size);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	for (i = off; i < total; i++) {
		struct stat st;
		char name[32];
		uint64_t n = i <= 1 ? MD_NODE_ROOT :
			     i == 2 ? MD_NODE_MANAGER :
			     i == 3 ? MD_NODE_INFO :
				      MD_NODE_DAVINCI0 + (uint64_t)(i - 4);
		size_t len;

		if (i == 0)
			strcpy(name, ".");
		else if (i == 1)
			strcpy(name, "..");
		else if (i == 2)
			strcpy(name, "davinci_manager");
		else if (i == 3)
			strcpy(name, NPU_MODEL_INFO_NAME);
		else
			snprintf(name, sizeof(name), "davinci%lld", (long long)(i - 4));
		stat_of(n, &st);
		len = fuse_add_direntry(req, buf + used, size - used, name, &st, i + 1);
		if (len > size - used)
			break;
		used += len;
	}
	fuse_reply_buf(req, buf, used);
	free(buf);
}

static void fs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct md_file *f;
	struct stat st;

	if (stat_of(ino, &st) || ino == MD_NODE_ROOT) {
		fuse_reply_err(req, ino == MD_NODE_ROOT ? EISDIR : ENOENT);
		return;
	}
	if (ino == MD_NODE_INFO && (fi->flags & O_ACCMODE) != O_RDONLY) {
		fuse_reply_err(req, EACCES);
		return;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	f->ino = ino;
	f->refs = 1;
	f->pid = md_tgid_of(fuse_req_ctx(req)->pid);
	if (ino >= MD_NODE_DAVINCI0) {
		struct md_card *c;

		f->dev = (uint32_t)(ino - MD_NODE_DAVINCI0);
		c = &md_cards[f->dev];
		pthread_mutex_lock(&c->lock);
		c->opens++;
		pthread_mutex_unlock(&c->lock);
	}
	if (ino == MD_NODE_INFO && md_info_build(f)) {
		free(f);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)f;
	fi->direct_io = 1;
	fi->nonseekable = ino != MD_NODE_INFO;
	fuse_reply_open(req, fi);
}

static void file_put(struct md_file *f)
{
	if (__atomic_sub_fetch(&f->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		free(f->info);
		free(f);
	}
}

static void fs_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct md_file *f = (struct md_file *)(uintptr_t)fi->fh;

	(void)ino;
	if (f) {
		/* Everything the file owns is reclaimed now, even with an ioctl still running. */
		md_file_release(f);
		file_put(f);
	}
	fuse_reply_err(req, 0);
}

static void fs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct md_file *f = (struct md_file *)(uintptr_t)fi->fh;

	if (ino != MD_NODE_INFO || !f || !f->info) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (off < 0 || (size_t)off >= f->info_len) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	if (size > f->info_len - (size_t)off)
		size = f->info_len - (size_t)off;
	fuse_reply_buf(req, f->info + off, size);
}

static int req_interrupted(void *ctx)
{
	return fuse_req_interrupted((fuse_req_t)ctx);
}

static void fs_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg,
		     struct fuse_file_info *fi, unsigned flags, const void *in_buf, size_t in_bufsz,
		     size_t out_bufsz)
{
	struct md_file *f = (struct md_file *)(uintptr_t)fi->fh;
	struct md_ioctl_req r;
	uint8_t out[512];
	int ret;

	(void)ino;
	if (flags & FUSE_IOCTL_COMPAT) {
		fuse_reply_err(req, ENOSYS);
		return;
	}
	memset(&r, 0, sizeof(r));
	r.pid = fuse_req_ctx(req)->pid;
	r.cmd = cmd;
	r.arg = (uint64_t)(uintptr_t)arg;
	r.in = in_bufsz ? in_buf : NULL;
	r.in_size = in_bufsz;
	r.out = out_bufsz ? out : NULL;
	r.out_size = out_bufsz < sizeof(out) ? out_bufsz : sizeof(out);
	r.interrupted = req_interrupted;
	r.ctx = req;
	if (f) {
		__atomic_add_fetch(&f->refs, 1, __ATOMIC_ACQ_REL);
		ret = md_ioctl(f, &r);
		file_put(f);
	} else {
		ret = -EBADF;
	}
	if (ret < 0)
		fuse_reply_err(req, -ret);
	else
		fuse_reply_ioctl(req, ret, r.out_len ? out : NULL, r.out_len);
}

static const struct fuse_lowlevel_ops md_ops = {
	.lookup = fs_lookup,
	.getattr = fs_getattr,
	.readdir = fs_readdir,
	.open = fs_open,
	.release = fs_release,
	.read = fs_read,
	.ioctl = fs_ioctl,
};

/* ---- main --------------------------------------------------------------------------- */

static int mkdir_p(const char *path)
{
	char buf[PATH_MAX];
	size_t i, len = strlen(path);

	if (len == 0 || len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, len + 1);
	for (i = 1; i <= len; i++) {
		if (buf[i] == '/' || buf[i] == '\0') {
			char ch = buf[i];

			buf[i] = '\0';
			if (mkdir(buf, 0755) && errno != EEXIST)
				return -errno;
			buf[i] = ch;
		}
	}
	return 0;
}

/* Removes the shared-memory files of daemons that died without cleaning up (SIGKILL). */
static void remove_stale_shm(void)
{
	DIR *d = opendir("/dev/shm");
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[300];
		unsigned dev;
		int pid;

		if (sscanf(e->d_name, "npu_model.%d.dev%u", &pid, &dev) != 2 || pid <= 0)
			continue;
		if (kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(path, sizeof(path), "/dev/shm/%s", e->d_name);
		unlink(path);
	}
	closedir(d);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mount", required_argument, NULL, 'm' },
		{ "cards", required_argument, NULL, 'n' },
		{ "card", required_argument, NULL, 'c' },
		{ "hbm-mib", required_argument, NULL, 'H' },
		{ "freq-hz", required_argument, NULL, 'f' },
		{ "counter-offset", required_argument, NULL, 'o' },
		{ "journal", required_argument, NULL, 'j' },
		{ "task-timeout-s", required_argument, NULL, 't' },
		{ "debug", no_argument, NULL, 'd' },
		{ "no-private", no_argument, NULL, 'P' },
		{ "cards-per-node", required_argument, NULL, 'N' },
		{ "link", required_argument, NULL, 'L' },
		{ "slow-link", required_argument, NULL, 'S' },
		{ "card-base", required_argument, NULL, 'B' },
		{ "fabric", required_argument, NULL, 'F' },
		{ "clock-offset-ns", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *fargv[8];
	int fargc = 0, debug = 0, opt, rc = 1, err;
	uint64_t v, hbm_mib = 0;
	struct fuse_args args;
	struct fuse_session *se = NULL;
	struct fuse_loop_config *lc = NULL;
	uint32_t d, started = 0, inited = 0;
	struct stat st;

	md_cfg.cards = 1;
	md_cfg.mount = NPU_MODEL_DEV_DIR_DEFAULT;
	md_cfg.cnt_freq_hz = 50000000;
	md_cfg.cnt_offset = 0x1000000000ull;
	npu_card_config_default(&md_cfg.card);
	md_link_defaults();
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'm':
			md_cfg.mount = optarg;
			break;
		case 'n':
			if (parse_u64(optarg, &v) || v < 1 || v > NPU_MODEL_MAX_CARDS) {
				fprintf(stderr, "npu-modeld: --cards wants 1..%d, not '%s'\n",
					NPU_MODEL_MAX_CARDS, optarg);
				return 2;
			}
			md_cfg.cards = (uint32_t)v;
			break;
		case 'c':
			if (npu_card_config_parse(&md_cfg.card, optarg)) {
				fprintf(stderr,
					"npu-modeld: bad --card '%s' (keys: tflops, "
					"vector_tflops, aicpu_gflops, hbm_gbps, pcie_gbps, "
					"launch_us, hbm_gib; positive numbers)\n",
					optarg);
				return 2;
			}
			break;
		case 'H':
			if (parse_u64(optarg, &hbm_mib) || hbm_mib == 0 || hbm_mib > (1ull << 30)) {
				fprintf(stderr, "npu-modeld: bad --hbm-mib '%s'\n", optarg);
				return 2;
			}
			break;
		case 'f':
			if (parse_u64(optarg, &v) || v < 1000 || v > 10000000000ull) {
				fprintf(stderr,
					"npu-modeld: --freq-hz wants 1000..1e10, not '%s'\n",
					optarg);
				return 2;
			}
			md_cfg.cnt_freq_hz = v;
			break;
		case 'o':
			if (parse_u64(optarg, &v) || v > (1ull << 62)) {
				fprintf(stderr, "npu-modeld: bad --counter-offset '%s'\n", optarg);
				return 2;
			}
			md_cfg.cnt_offset = v;
			break;
		case 'j':
			md_cfg.journal = optarg;
			break;
		case 't':
			if (parse_u64(optarg, &v) || v < 1 || v > 86400) {
				fprintf(stderr,
					"npu-modeld: --task-timeout-s wants 1..86400, "
					"not '%s'\n",
					optarg);
				return 2;
			}
			md_cfg.task_timeout_ns = v * 1000000000ull;
			break;
		case 'd':
			debug = 1;
			break;
		case 'P':
			md_cfg.no_private = 1;
			break;
		case 'N':
			if (parse_u64(optarg, &v) || v < 1 || v > NPU_MODEL_MAX_CARDS) {
				fprintf(stderr,
					"npu-modeld: --cards-per-node wants 1..%d, not "
					"'%s'\n",
					NPU_MODEL_MAX_CARDS, optarg);
				return 2;
			}
			md_cfg.cards_per_node = (uint32_t)v;
			break;
		case 'L':
			if (md_link_parse(optarg)) {
				fprintf(stderr,
					"npu-modeld: bad --link '%s' (keys: hccs_gbps, "
					"hccs_us, rdma_gbps, rdma_us; positive numbers)\n",
					optarg);
				return 2;
			}
			break;
		case 'S':
			if (md_slow_link_parse(optarg)) {
				fprintf(stderr,
					"npu-modeld: bad --slow-link '%s' (A-B:K, cards "
					"A != B, K >= 1, at most %d)\n",
					optarg, MD_MAX_SLOW_LINKS);
				return 2;
			}
			break;
		case 'B':
			if (parse_u64(optarg, &v) || v >= NPU_MODEL_MAX_CARDS) {
				fprintf(stderr, "npu-modeld: --card-base wants 0..%d, not '%s'\n",
					NPU_MODEL_MAX_CARDS - 1, optarg);
				return 2;
			}
			md_cfg.card_base = (uint32_t)v;
			break;
		case 'F':
			md_cfg.fabric = optarg;
			break;
		case 'C': {
			char *end;
			long long off;

			errno = 0;
			off = strtoll(optarg, &end, 0);
			if (errno || end == optarg || *end || off > 3600000000000ll ||
			    off < -3600000000000ll) {
				fprintf(stderr,
					"npu-modeld: --clock-offset-ns wants -3.6e12..3.6e12, "
					"not '%s'\n",
					optarg);
				return 2;
			}
			md_cfg.clock_offset_ns = off;
			break;
		}
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			fputs(usage_text, stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "npu-modeld: unexpected argument '%s'\n%s", argv[optind],
			usage_text);
		return 2;
	}
	if (hbm_mib)
		md_cfg.card.hbm_bytes = hbm_mib << 20;
	if (md_cfg.card_base + md_cfg.cards > NPU_MODEL_MAX_CARDS ||
	    (md_cfg.card_base && !md_cfg.fabric)) {
		fprintf(stderr, "npu-modeld: --card-base needs --fabric and base + cards <= %d\n",
			NPU_MODEL_MAX_CARDS);
		return 2;
	}
	if (md_cfg.journal) {
		err = mkdir_p(md_cfg.journal);
		if (!err)
			err = npu_journal_open_dir(md_cfg.journal, "modeld");
		if (err) {
			fprintf(stderr, "npu-modeld: cannot open journal in '%s': %s\n",
				md_cfg.journal, strerror(-err));
			return 1;
		}
	}

	if (stat(md_cfg.mount, &st) && errno == ENOTCONN) {
		/* A daemon that died left its mount behind: take it away. */
		umount2(md_cfg.mount, MNT_DETACH);
	}
	err = mkdir_p(md_cfg.mount);
	if (!err && (stat(md_cfg.mount, &st) || !S_ISDIR(st.st_mode)))
		err = -ENOTDIR;
	if (err) {
		fprintf(stderr, "npu-modeld: cannot use mount point '%s': %s\n", md_cfg.mount,
			strerror(-err));
		return 1;
	}
	remove_stale_shm();
	md_cards = calloc(md_cfg.cards, sizeof(*md_cards));
	if (!md_cards || (err = md_link_init(md_cfg.cards))) {
		fprintf(stderr, "npu-modeld: %s%s: %s\n", md_cfg.fabric ? "--fabric " : "",
			md_cfg.fabric ? md_cfg.fabric : "", strerror(md_cards ? -err : ENOMEM));
		return 1;
	}
	for (d = 0; d < md_cfg.cards; d++) {
		err = md_card_init(&md_cards[d], d, &md_cfg, 1);
		inited++;
		if (!err)
			err = md_card_start(&md_cards[d]);
		if (err) {
			fprintf(stderr, "npu-modeld: card %u: %s (%s)\n", d, strerror(-err),
				md_cards[d].uio_path);
			goto out_cards;
		}
		started++;
	}

	fargv[fargc++] = argv[0];
	fargv[fargc++] = "-o";
	fargv[fargc++] = getuid() == 0 ? "fsname=npu-modeld,subtype=npu_model,allow_other" :
					 "fsname=npu-modeld,subtype=npu_model";
	if (debug)
		fargv[fargc++] = "-d";
	fargv[fargc] = NULL;
	args = (struct fuse_args)FUSE_ARGS_INIT(fargc, fargv);
	se = fuse_session_new(&args, &md_ops, sizeof(md_ops), NULL);
	if (!se) {
		fprintf(stderr, "npu-modeld: cannot create the FUSE session\n");
		goto out_cards;
	}
	if (fuse_set_signal_handlers(se)) {
		fprintf(stderr, "npu-modeld: cannot install signal handlers\n");
		goto out_session;
	}
	if (fuse_session_mount(se, md_cfg.mount)) {
		fprintf(stderr,
			"npu-modeld: cannot mount on '%s' (busy? another daemon? /dev/fuse?)\n",
			md_cfg.mount);
		goto out_signals;
	}
	fprintf(stderr, "npu-modeld: %u card(s) at %s, pid %d\n", md_cfg.cards, md_cfg.mount,
		(int)getpid());
	lc = fuse_loop_cfg_create();
	if (!lc) {
		fprintf(stderr, "npu-modeld: out of memory\n");
		goto out_unmount;
	}
	fuse_loop_cfg_set_max_threads(lc, 64);
	fuse_loop_cfg_set_idle_threads(lc, 8);
	rc = fuse_session_loop_mt(se, lc) < 0 ? 1 : 0;
	fuse_loop_cfg_destroy(lc);
out_unmount:
	fuse_session_unmount(se);
out_signals:
	fuse_remove_signal_handlers(se);
out_session:
	fuse_session_destroy(se);
out_cards:
	for (d = 0; d < started; d++)
		md_card_stop(&md_cards[d]);
	for (d = 0; d < inited; d++)
		md_card_fini(&md_cards[d]);
	free(md_cards);
	npu_journal_flush();
	return rc;
}
