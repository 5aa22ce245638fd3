# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""test_trace_attach.py (mid-run -p attach, a target that exits, two -p
processes at once, each capture holding only its own process's calls) and
test_trace_signals.py (SIGINT/SIGTERM/SIGKILL of ascbpf) again with the
attach cookie's fallback forced (ASCBPF_NO_ATTACH_COOKIE=1), the paths a
5.10 kernel takes: calls in flight at the attach have no filed return site
and must emit nothing, two processes' probes at the same library offsets
must not trade sites, and the extra asc_ret_push probes must detach with
the rest.  Each test checks its own outcome against its targets' journals;
this one fails when either fails."""
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "lib"))
import trace_check as tc  # noqa: E402

env = dict(os.environ, ASCBPF_NO_ATTACH_COOKIE="1")
for t in ("test_trace_attach.py", "test_trace_signals.py"):
    r = subprocess.run([sys.executable, os.path.join(here, t)], env=env, capture_output=True,
                       text=True, timeout=280)
    print(r.stdout[-3000:], end="")
    print(r.stderr[-3000:], end="")
    tc.check(r.returncode == 0 and r.stdout.rstrip().endswith("PASS"),
             "%s with ASCBPF_NO_ATTACH_COOKIE=1 exited %d" % (t, r.returncode))
    print("%s with ASCBPF_NO_ATTACH_COOKIE=1: PASS" % t)
print("PASS")
