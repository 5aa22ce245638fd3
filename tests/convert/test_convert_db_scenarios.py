#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""test_convert_db.py's checks of `--export-type db` (schema, string ids, the
journal, the text output of the same capture) on more npu_train scenarios:
multi-stream at Level2 (Runtime@ calls in CANN_API), launch-storm at Level1
(batched submissions), transdata at Level0, and a --schedule of two
RECORD_AND_SAVE cycles (each *_ascend_pt with its own databases holding its
cycle's steps).  A separate file so that each stays within the suite's
per-test timeout."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import test_convert_db as t  # noqa: E402

if __name__ == "__main__":
    sys.exit(t.main(t.SCENARIO_PARTS))
