# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""tests/lib/checks.py - checks that record a failure and go on, for tests that
report every mismatch of a run before they fail:

    from checks import check, failures, us_str
    check(got == want, "kernel rows: %d, want %d" % (got, want))
    sys.exit(1 if failures else 0)

failures is the one list of this process (every importer shares it)."""

failures = []


def check(cond, msg):
    """Prints and records msg when cond is false; returns cond."""
    if not cond:
        failures.append(msg)
        print("FAIL:", msg)
    return cond


def us_str(ns):
    """ns as torch_npu's microsecond string with 3 decimals."""
    s = str(ns)
    return "0." + s.zfill(3) if len(s) <= 3 else s[:-3] + "." + s[-3:]
