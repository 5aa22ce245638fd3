# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""As root, ascbpf never writes through a link it did not create (issue 19).

Links another user (nobody) planted in a shared, sticky output directory,
pointing at files and a directory outside it, at each name ascbpf writes:

* trace's capture DIR/ascbpf-PID.cap (attach by pid, so the name is known
  before the trace starts) and --capture FILE;
* convert's run directory {worker}_{pid}_{stamp}_ascend_pt (the name is
  predictable: learned from a first conversion of the same capture), and,
  in a run directory planted as a real directory, profiler_info.json,
  profiler_metadata.json and ASCEND_PROFILER_OUTPUT inside it;
* convert --export chrome's FILE (.json and .json.gz);
* a directory on the way of -o (convert and trace) that is such a link.

Without --force each is refused (non-zero exit, a message); with --force the
link itself is replaced by ascbpf's own file or directory.  Either way the
files and the directory outside the output directory keep their bytes, mode
and mtime, and the directory outside stays empty.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402

MKCAP = os.path.join(tc.OUTPUT, "tests", "lib", "mkcapture")
NOBODY = 65534


def snapshot(paths):
    out = {}
    for p in paths:
        st = os.lstat(p)
        body = open(p, "rb").read() if os.path.isfile(p) else tuple(sorted(os.listdir(p)))
        out[p] = (st.st_mode, st.st_mtime_ns, st.st_size, body)
    return out


def plant(target, link):
    """A symlink owned by another user, as an attacker would leave it."""
    if os.path.lexists(link):
        os.unlink(link)
    os.symlink(target, link)
    os.lchown(link, NOBODY, NOBODY)


def run(args, expect_ok, label):
    r = tc.run_ascbpf(args, timeout=180)
    if expect_ok:
        tc.check(r.returncode == 0, "%s: exit %d, expected 0" % (label, r.returncode))
    else:
        tc.check(r.returncode != 0 and r.stderr.strip(),
                 "%s: exit %d with '%s', expected a refusal" % (label, r.returncode,
                                                                 r.stderr.strip()))
    return r


def main():
    d = tempfile.mkdtemp(prefix="test_output_links.")
    try:
        outside = os.path.join(d, "outside")
        os.mkdir(outside)
        victim = os.path.join(outside, "victim")
        victim2 = os.path.join(outside, "victim2")
        vdir = os.path.join(outside, "vdir")
        for p, body in ((victim, b"precious\n"), (victim2, b"also precious\n")):
            with open(p, "wb") as f:
                f.write(body)
        os.mkdir(vdir)
        before = snapshot([victim, victim2, vdir, outside])

        def unchanged(label):
            tc.check(snapshot([victim, victim2, vdir, outside]) == before,
                     "%s: something outside the output directory changed" % label)

        shared = os.path.join(d, "shared")	# a /tmp-like directory: sticky, everyone writes
        os.mkdir(shared)
        os.chmod(shared, 0o1777)

        # ---- convert: the run directory, files inside it, --export chrome ----
        cap = os.path.join(d, "c.ascb")
        subprocess.run([MKCAP, "-o", cap, "--truth", os.path.join(d, "c.json"), "--steps", "2",
                        "--ops", "2"], check=True)
        learn = os.path.join(d, "learn")
        run(["convert", cap, "-o", learn], True, "first conversion")
        runname = os.listdir(learn)[0]
        info = [n for n in os.listdir(os.path.join(learn, runname))
                if n.startswith("profiler_info")][0]
        rund = os.path.join(shared, runname)

        plant(vdir, rund)
        run(["convert", cap, "-o", shared], False, "run dir link")
        unchanged("run dir link")
        run(["convert", cap, "-o", shared, "--force"], True, "run dir link --force")
        unchanged("run dir link --force")
        tc.check(not os.path.islink(rund) and os.path.isdir(rund),
                 "run dir link --force: the link was not replaced by a directory")
        json.load(open(os.path.join(rund, info)))

        # a run directory planted as a real directory holding links at the names inside it
        shutil.rmtree(rund)
        os.mkdir(rund)
        os.chown(rund, NOBODY, NOBODY)
        os.chmod(rund, 0o777)
        plant(victim, os.path.join(rund, info))
        plant(victim2, os.path.join(rund, "profiler_metadata.json"))
        plant(vdir, os.path.join(rund, "ASCEND_PROFILER_OUTPUT"))
        run(["convert", cap, "-o", shared], False, "links inside the run dir")
        unchanged("links inside the run dir")
        run(["convert", cap, "-o", shared, "--force"], True, "links inside the run dir --force")
        unchanged("links inside the run dir --force")
        for n in (info, "profiler_metadata.json"):
            p = os.path.join(rund, n)
            tc.check(not os.path.islink(p), "%s still a link after --force" % n)
            json.load(open(p))
        apo = os.path.join(rund, "ASCEND_PROFILER_OUTPUT")
        tc.check(not os.path.islink(apo) and os.path.isfile(os.path.join(apo, "trace_view.json")),
                 "ASCEND_PROFILER_OUTPUT not replaced by a directory of the output")

        for name in ("trace.json", "trace.json.gz"):
            out = os.path.join(shared, name)
            plant(victim, out)
            run(["convert", cap, "--export", "chrome", "-o", out], False, "chrome " + name)
            unchanged("chrome " + name)
            run(["convert", cap, "--export", "chrome", "-o", out, "--force"], True,
                "chrome %s --force" % name)
            unchanged("chrome %s --force" % name)
            tc.check(os.path.isfile(out) and not os.path.islink(out),
                     "chrome %s: the link was not replaced" % name)
        # a link another user planted on the way of -o: not followed, with or without --force
        hop = os.path.join(shared, "hop")
        plant(vdir, hop)
        for force in ([], ["--force"]):
            r = run(["convert", cap, "-o", os.path.join(hop, "res")] + force, False,
                    "link in the -o path " + " ".join(force))
            tc.check(r.returncode == 2 and "not followed" in r.stderr,
                     "link in the -o path: exit %d, expected 2" % r.returncode)
            unchanged("link in the -o path " + " ".join(force))
        os.unlink(hop)

        leftovers = [n for n in os.listdir(shared) if ".tmp." in n]
        tc.check(not leftovers, "temporary files left behind: %s" % leftovers)

        # ---- trace: DIR/ascbpf-PID.cap and --capture FILE ----
        tc.build(d)
        t = tc.Target(d, [-1, 20, 500])
        try:
            tdir = os.path.join(shared, "t")
            os.mkdir(tdir)
            os.chmod(tdir, 0o1777)
            capname = os.path.join(tdir, "ascbpf-%d.cap" % t.pid)
            plant(victim, capname)
            # a directory holding a link is not empty: refused without --force
            run(["trace", "-p", str(t.pid), "-o", tdir, "--duration", "1", "--no-convert"],
                False, "capture link")
            unchanged("capture link")
            run(["trace", "-p", str(t.pid), "-o", tdir, "--duration", "1", "--no-convert",
                 "--force"], True, "capture link --force")
            unchanged("capture link --force")
            tc.check(os.path.isfile(capname) and not os.path.islink(capname),
                     "capture link --force: the link was not replaced")
            tc.records(capname)	# a capture ascbpf dump reads

            plant(vdir, os.path.join(shared, "hop"))
            r = run(["trace", "-p", str(t.pid), "-o", os.path.join(shared, "hop"), "--duration",
                     "1", "--no-convert", "--force"], False, "trace -o a planted link")
            tc.check(r.returncode == 2 and "not followed" in r.stderr,
                     "trace -o a planted link: exit %d" % r.returncode)
            unchanged("trace -o a planted link")

            capfile = os.path.join(shared, "given.cap")
            plant(victim2, capfile)
            empty = os.path.join(d, "empty")
            run(["trace", "-p", str(t.pid), "-o", empty, "--duration", "1", "--no-convert",
                 "--capture", capfile], False, "--capture link")
            unchanged("--capture link")
            run(["trace", "-p", str(t.pid), "-o", empty, "--duration", "1", "--no-convert",
                 "--capture", capfile, "--force"], True, "--capture link --force")
            unchanged("--capture link --force")
            tc.check(os.path.isfile(capfile) and not os.path.islink(capfile),
                     "--capture link --force: the link was not replaced")
            tc.records(capfile)
        finally:
            t.stop()
        print("PASS: no write through a planted link, with and without --force")
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
