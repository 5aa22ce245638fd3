# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Several processes on one daemon with two cards, and the profiling channel
served to any process:

* two clients run at the same time, one per card; a third process reads
  channel 50 of card 1 only; each client also reads its own card.  Every
  reader gets exactly the start/end records of the tasks of its card (the
  observer sees client 1's tasks, none of client 0's), and the two cards'
  counters use different offsets and are converted correctly;
* a (counter, CLOCK_MONOTONIC) pair from halGetDeviceInfo agrees with the
  daemon's published counter parameters and lies between the times the
  client read around it;
* a reader that falls behind loses records, and says so: records read plus
  records dropped equals twice the tasks run.
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from npu_model import ModelDaemon, read_journal  # noqa: E402


def check(cond, msg):
    if not cond:
        print("FAIL:", msg)
        sys.exit(1)


def start_reader(m, dev, ms, expect=0, wait_stdin=False):
    cmd = [m.bin("npu_halclient"), "prof", "--dev", str(dev), "--ms", str(ms)]
    if expect:
        cmd += ["--expect", str(expect)]
    if wait_stdin:
        cmd += ["--wait-stdin"]
    p = subprocess.Popen(cmd, env=m.env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    check(p.stderr.readline().strip() == "prof: started", "reader on dev %d did not start" % dev)
    return p


def two_cards(m):
    tasks = 200
    observer = start_reader(m, 1, 15000, expect=2 * tasks)
    clients = [subprocess.Popen([m.bin("npu_halclient"), "run", "--dev", str(d), "--tasks", str(tasks),
                                 "--batch", "7", "--flops", "100000000", "--prof",
                                 "--alloc", str((d + 1) << 20)],
                                env=m.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for d in (0, 1)]
    res = []
    for c in clients:
        out, err = c.communicate(timeout=60)
        check(c.returncode == 0, "client failed: %s %s" % (out, err))
        res.append(json.loads(out))
    out, err = observer.communicate(timeout=60)
    check(observer.returncode == 0, "observer failed: %s" % err)
    obs = json.loads(out)
    info = m.info()
    m.proc.terminate()
    m.proc.wait(10)
    execs = [f for k, f in read_journal(m.journal_dir) if k == "exec"]
    for d in (0, 1):
        mine = [e for e in execs if int(e["dev"]) == d]
        check(len(mine) == tasks and all(int(e["pid"]) == res[d]["pid"] for e in mine),
              "card %d ran %d tasks of its client" % (d, len(mine)))
        want = sorted([(0, int(e["stream"]), int(e["task"]), int(e["c0"])) for e in mine] +
                      [(1, int(e["stream"]), int(e["task"]), int(e["c1"])) for e in mine])
        got = sorted((r[0], r[2], r[3], r[4]) for r in res[d]["records"])
        check(got == want, "client %d's own records differ from card %d's exec lines" % (d, d))
        if d == 1:
            got_obs = sorted((r[0], r[2], r[3], r[4]) for r in obs["records"])
            check(got_obs == want, "the observer's records of card 1 differ from its exec lines")
        off = info["dev%d.syscnt_offset" % d]
        freq = info["dev%d.syscnt_freq_hz" % d]
        base = info["dev%d.syscnt_base_ns" % d]
        for e in mine:
            t1 = base + (int(e["c1"]) - off) * 1e9 / freq
            check(abs(t1 - int(e["t1"])) <= 1e9 / freq + 1, "card %d counter conversion" % d)
        check(res[d]["mem"] == hex(0x100000000000 + (d << 40)), "card %d VA %s" % (d, res[d]["mem"]))
    check(info["dev0.syscnt_offset"] != info["dev1.syscnt_offset"], "cards share a counter offset")
    check(obs["dropped"] == 0, "observer dropped %d" % obs["dropped"])
    print("two cards: %d tasks each, records match on both, observer ok" % tasks)


def clock_pair(m):
    info = m.info()
    for d in (0, 1):
        out = subprocess.run([m.bin("npu_halclient"), "clock", "--dev", str(d)], env=m.env(),
                             capture_output=True, text=True, timeout=10)
        check(out.returncode == 0, "clock failed: %s" % out.stderr)
        c = json.loads(out.stdout)
        freq = info["dev%d.syscnt_freq_hz" % d]
        check(c["freq_khz"] * 1000 == freq, "frequency in kHz")
        check(c["before_ns"] <= c["mono_ns"] <= c["after_ns"], "pair time outside the call")
        expect = info["dev%d.syscnt_offset" % d] + (c["mono_ns"] - info["dev%d.syscnt_base_ns" % d]) * freq // 10**9
        check(abs(c["counter"] - expect) <= 1, "pair counter %d, expected %d" % (c["counter"], expect))
        check(c["counter"] > info["dev%d.syscnt_offset" % d] > 0, "counter starts at a non-zero offset")
    print("clock pair ok on both cards")


def drops(m):
    tasks = 40000		# 80000 records > the 65536 a session holds
    # The reader opens its session, then reads nothing until the storm is over.
    slow = start_reader(m, 0, 2000, expect=2 * tasks, wait_stdin=True)
    out = subprocess.run([m.bin("npu_halclient"), "run", "--tasks", str(tasks), "--batch", "16",
                          "--flops", "0", "--bytes", "0"], env=m.env(), capture_output=True, text=True,
                         timeout=120)
    check(out.returncode == 0, "storm client failed: %s" % out.stderr)
    t_done = time.time()
    out, err = slow.communicate("go\n", timeout=60)
    check(slow.returncode == 0, "slow reader failed: %s" % err)
    r = json.loads(out)
    n = len(r["records"])
    check(r["dropped"] > 0, "a reader that fell behind dropped nothing (%d records)" % n)
    check(n + r["dropped"] == 2 * tasks, "read %d + dropped %d != %d" % (n, r["dropped"], 2 * tasks))
    check(n == 65536, "the session should have held exactly its ring (%d)" % n)
    check(r["flush_len"] == 65536 * 64, "halProfDataFlush said %d bytes" % r["flush_len"])
    starts = sum(1 for x in r["records"] if x[0] == 0)
    check(starts * 2 == n, "records lost in halves (a start without its end)")
    print("slow reader: %d read, %d dropped (%.1fs after the storm)" % (n, r["dropped"], time.time() - t_done))


def main():
    with ModelDaemon(cards=2, journal=True) as m:
        clock_pair(m)
        two_cards(m)
    with ModelDaemon(cards=1, card="launch_us=1") as m:
        drops(m)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
