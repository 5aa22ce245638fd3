#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# strace -f -e ioctl of a HAL client shows real ioctl system calls on
# davinci_manager with the real command numbers: the 'Z' bind (0x5a00) of
# TSDRV, SVM and PROF fds, TRS_RES_ID_ALLOC, TRS_SQCQ_ALLOC, DEVMM_SVM_ALLOC
# + ADVISE, FREE_PAGES, and TRS_SQCQ_SEND in ioctl mode (none in uio mode).
set -u
. "$(dirname "$0")/../lib/model.sh"
model_start --cards 1 || exit 1
client=$MODEL_BIN/npu_halclient
fail() { echo "FAIL: $*"; exit 1; }

for mode in ioctl uio; do
	log=$MODEL_TMP/strace.$mode
	NPU_MODEL_SQ_MODE=$mode strace -f -y -X raw -e trace=ioctl -o "$log" \
		"$client" run --streams 1 --tasks 8 --batch 2 --alloc 4096 --prof >"$MODEL_TMP/out.$mode" ||
		fail "$mode: client failed: $(cat "$MODEL_TMP/out.$mode")"
	/usr/bin/python3 - "$log" "$mode" "$MODEL_MNT" <<'PY' || exit 1
import re, sys
log, mode, mnt = sys.argv[1:]
calls = []
for line in open(log):
    m = re.search(r"ioctl\((\d+)<([^>]*)>, (0x[0-9a-f]+), (0x[0-9a-f]+)\) = (-?\d+)", line)
    if m:
        calls.append((m.group(2), int(m.group(3), 16), int(m.group(5))))
mgr = mnt + "/davinci_manager"
def fail(msg):
    print("FAIL: %s: %s" % (mode, msg)); sys.exit(1)
if not calls:
    fail("no ioctl calls traced")
if any(path != mgr for path, _, _ in calls):
    fail("ioctl on something other than davinci_manager: %s" % {p for p, _, _ in calls})
cmds = [c for _, c, r in calls if r == 0]
if cmds.count(0x5a00) != 3:
    fail("expected 3 binds (TSDRV, SVM, PROF), saw %d" % cmds.count(0x5a00))
for c in (0xc02c5800, 0xc060580f, 0x41584d03, 0x41584d0d, 0x41584d04, 0x402c5801, 0x40345810):
    if c not in cmds:
        fail("command 0x%x not seen" % c)
sends = cmds.count(0x40405813)
if mode == "ioctl" and sends != 4:
    fail("ioctl mode: %d TRS_SQCQ_SEND for 4 batches" % sends)
if mode == "uio" and sends:
    fail("uio mode issued %d TRS_SQCQ_SEND" % sends)
print("%s: %d ioctls on davinci_manager, commands ok" % (mode, len(calls)))
PY
done
model_alive || fail "daemon died"
echo "PASS"
