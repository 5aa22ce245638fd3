# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The daemon dies while it is serving a client's ioctl, made deterministic.

test_modeld_errors.py kills npu-modeld at a moment chosen by the clock, so
whether the client has an ioctl in flight then is down to scheduling (it
failed once under load in session 2).  FUSE answers the two cases
differently: a request the daemon was serving when it died gets
ECONNABORTED, every later one ENOTCONN.  Here the daemon is stopped
(SIGSTOP) before it is killed, for longer than the HAL's 200 ms alive-check
period, so the client's next ioctl (the SQ-head query of its sync loop in
ioctl mode, the alive check in uio mode) is surely pending in the kernel
when the daemon dies.  In both submission modes the client must see what it
sees when the daemon was already gone: exit 1, DRV_ERROR_NO_DEVICE, the
"went away" message said once, no hang.
"""
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from npu_model import BIN, ModelDaemon  # noqa: E402

DRV_ERROR_NO_DEVICE = 1


def check(cond, msg):
    if not cond:
        print("FAIL:", msg)
        sys.exit(1)


def aborted_in_flight(mode):
    m = ModelDaemon().start()
    victim = None
    try:
        # 10 tasks of 1 s each on the default card: the client waits in its sync loop
        victim = subprocess.Popen([os.path.join(BIN, "npu_halclient"), "run", "--tasks", "10",
                                   "--batch", "10", "--flops", str(280 * 10**12)],
                                  env=m.env(NPU_MODEL_SQ_MODE=mode), stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while m.info()["dev0.sqs"] != 1:
            check(victim.poll() is None, "%s: the client ended before its SQ existed" % mode)
            check(time.monotonic() < deadline, "%s: the client made no SQ in 60 s" % mode)
            time.sleep(0.01)
        # tasks of 1 s: after the SQ, the submission; then the sync loop
        time.sleep(0.2)
        m.proc.send_signal(signal.SIGSTOP)
        time.sleep(0.6)		# 3 alive-check periods: the client's ioctl is now pending
        m.proc.send_signal(signal.SIGKILL)
        m.proc.wait()
        out, err = victim.communicate(timeout=60)
        print("%s: exit %d, %s | %s" % (mode, victim.returncode, out.strip(), err.strip()))
        check(victim.returncode == 1, "%s: client exit %d" % (mode, victim.returncode))
        res = json.loads(out)
        check(not res["ok"] and res["ret"] == DRV_ERROR_NO_DEVICE,
              "%s: an ioctl aborted by the daemon's death gave %s, not DRV_ERROR_NO_DEVICE" %
              (mode, res))
        check(err.count("went away") == 1, "%s: message %r" % (mode, err))
    finally:
        if victim and victim.poll() is None:
            victim.kill()
            victim.wait()
        m.stop()
    print("%s: the ioctl in flight at the daemon's death ends as 'daemon gone'" % mode)


def main():
    for mode in ("uio", "ioctl"):
        aborted_in_flight(mode)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
