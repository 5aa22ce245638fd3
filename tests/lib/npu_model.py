# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""tests/lib/npu_model.py - a private npu-modeld for one Python test.

    sys.path.insert(0, os.path.join(os.environ["ASCBPF_TOP"], "tests", "lib"))
    from npu_model import ModelDaemon, read_journal
    with ModelDaemon(cards=2, journal=True, hbm_mib=64) as m:
        subprocess.run([m.bin("npu_halclient"), "run"], env=m.env(), check=True)
        info = m.info()              # dict of npu_model_info
        lines = read_journal(m.journal_dir)   # [(kind, {key: value}), ...]

The daemon mounts its nodes under a tempfile.mkdtemp() directory; env()
returns os.environ plus NPU_MODEL_DEV_DIR.  Leaving the block stops the
daemon (SIGTERM, then SIGKILL), unmounts and removes the directory, also
when the test raised.
"""
import glob
import os
import shutil
import signal
import subprocess
import tempfile
import time

TOP = os.environ.get("ASCBPF_TOP") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.environ.get("OUTPUT") or os.path.join(TOP, "build")
BIN = os.path.join(OUT, "npu_model", "bin")


class ModelDaemon:
    def __init__(self, cards=1, journal=False, card=None, hbm_mib=None, extra=()):
        self.cards = cards
        self.want_journal = journal
        self.card = card
        self.hbm_mib = hbm_mib
        self.extra = list(extra)
        self.proc = None
        self.tmp = None

    def bin(self, name):
        return os.path.join(BIN, name)

    def start(self):
        self.tmp = tempfile.mkdtemp(prefix="npu_model.")
        self.mnt = os.path.join(self.tmp, "dev")
        self.journal_dir = os.path.join(self.tmp, "journal") if self.want_journal else None
        self.log_path = os.path.join(self.tmp, "modeld.log")
        cmd = [self.bin("npu-modeld"), "--mount", self.mnt, "--cards", str(self.cards)]
        if self.journal_dir:
            cmd += ["--journal", self.journal_dir]
        if self.card:
            cmd += ["--card", self.card]
        if self.hbm_mib:
            cmd += ["--hbm-mib", str(self.hbm_mib)]
        cmd += self.extra
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT)
        info = os.path.join(self.mnt, "npu_model_info")
        for _ in range(200):
            if self.proc.poll() is not None:
                raise RuntimeError("npu-modeld exited: " + open(self.log_path).read())
            try:
                with open(info) as f:
                    if "cards=" in f.read():
                        return self
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError("npu-modeld did not come up: " + open(self.log_path).read())

    def env(self, **more):
        e = dict(os.environ)
        e["NPU_MODEL_DEV_DIR"] = self.mnt
        e.update({k: str(v) for k, v in more.items()})
        return e

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def info(self):
        with open(os.path.join(self.mnt, "npu_model_info")) as f:
            out = {}
            for line in f:
                k, _, v = line.rstrip("\n").partition("=")
                out[k] = int(v) if v.lstrip("-").isdigit() else v
            return out

    def stop(self):
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
                try:
                    self.proc.wait(5)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
            self.proc = None
            self.log.close()
        if self.tmp:
            with open("/proc/mounts") as f:
                if (" %s " % self.mnt) in f.read():
                    subprocess.call(["fusermount3", "-u", "-z", self.mnt],
                                    stderr=subprocess.DEVNULL)
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False


def read_journal(path, pid=None):
    """All records of the journal files in directory `path`: [(kind, {key: str})]; with pid,
    only that process's (ascbpf's own reader of the device channel journals its HAL calls
    too when the variable is in its environment)."""
    out = []
    pat = "journal.%s.tsv" % (pid if pid is not None else "*")
    for name in sorted(glob.glob(os.path.join(path, pat))):
        with open(name) as f:
            for line in f:
                if line.startswith("#") or not line.strip():
                    continue
                kind, *fields = line.rstrip("\n").split("\t")
                out.append((kind, dict(fv.split("=", 1) for fv in fields)))
    return out
