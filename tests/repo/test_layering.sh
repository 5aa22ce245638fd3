#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The include rules and the simulator boundary (tools/check_layering.py):
# this tree passes with its allow-list (tools/layering-allow.txt); then a
# scratch tree with one planted case per rule must fail naming it, an
# allowed include must pass, a comment must not count, and an allow-list
# entry whose violation is gone must fail (the list only shrinks).
set -u
top=${ASCBPF_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
py=${PYTHON:-/usr/bin/python3}
check=$top/tools/check_layering.py
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d /tmp/ascbpf-layer.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

out=$("$py" "$check" --top "$top" 2>&1) ||
	{ echo "$out"; fail "this tree breaks the include rules"; }
echo "$out"

r=$tmp/repo
mkdir -p "$r"/user/{lib,arch,discovery,trace,capture,analysis,convert,report} "$r/bpf" \
	"$r/npu_model/include"
for room in lib arch discovery trace capture analysis convert report; do
	echo "/* $room */" > "$r/user/$room/$room.h"
done
echo "/* contract */" > "$r/bpf/ascbpf_events.h"
echo "/* sim */" > "$r/npu_model/include/ascend_hal.h"
echo "/* cli */" > "$r/user/commands.h"
cat > "$r/user/trace/ok.c" <<'C'
#include "lib/lib.h"
#include "arch/arch.h"
#include "discovery/discovery.h"
#include "capture/capture.h"
#include "trace/trace.h"
#include "ascbpf_events.h"
#include "commands.h"
#include "ascbpf.skel.h"
/* comments may name NPU_MODEL_DEV_DIR and #include "convert/convert.h" */
C
printf '#include "%s/%s.h"\n' convert convert report report trace trace > "$r/user/main.c"
printf '#include "analysis/analysis.h"\n#include "lib/lib.h"\n' > "$r/user/report/ok.c"
printf '#include "capture/capture.h"\n' > "$r/user/analysis/ok.c"
: > "$r/allow.txt"
run() { "$py" "$r/check_layering.py" --top "$r" --allow "$r/allow.txt"; }
cp "$check" "$r/"
o=$(run 2>&1) || { echo "$o"; fail "allowed includes fail"; }

plant() {	# FILE TEXT WANT
	printf '%s\n' "$2" > "$r/$1"
	local o
	o=$(run 2>&1) && fail "not caught: $1: $2"
	grep -qF "$3" <<<"$o" || { echo "$o"; fail "the failure does not say $3"; }
	rm -f "$r/$1"
	echo "ok: caught $1: $2"
}
plant user/lib/bad.c '#include "trace/trace.h"' "user/lib/bad.c: include: trace/trace.h"
plant user/discovery/bad.c '#include "capture/capture.h"' "include: capture/capture.h"
plant user/analysis/bad.c '#include "discovery/discovery.h"' "include: discovery/discovery.h"
plant user/convert/bad.c '#include "report/report.h"' "include: report/report.h"
plant user/capture/bad.c '#include "arch/arch.h"' "include: arch/arch.h"
plant user/trace/bad.c '#include "../../npu_model/include/ascend_hal.h"' "include: ../../npu_model"
plant bpf/bad.bpf.c '#include "../user/lib/lib.h"' "bpf/bad.bpf.c: include"
plant user/trace/env.c 'static const char *e = "NPU_MODEL_DEV_DIR";' \
	"simulator-only: NPU_MODEL_DEV_DIR"
plant user/trace/q.c 'long q = 0x4e50;' "simulator-only: 0x4e50"
plant user/analysis/p.c 'unsigned c = IOWR('"'P'"', 2, 40);' "simulator-only: IOWR('P'"
plant user/trace/i.c 'int t = NPU_INFO_TYPE_SYS_COUNT;' "simulator-only: NPU_INFO_TYPE_SYS_COUNT"

# an allowed violation passes; once fixed, its entry fails until deleted
echo '#include "convert/convert.h"' > "$r/user/trace/known.c"
echo "user/trace/known.c include convert/convert.h	# issue N" > "$r/allow.txt"
o=$(run 2>&1) || { echo "$o"; fail "an allow-listed violation fails"; }
rm "$r/user/trace/known.c"
o=$(run 2>&1) && fail "a stale allow-list entry passes"
grep -q "allow.txt:1: fixed, delete this entry" <<<"$o" ||
	{ echo "$o"; fail "stale entry message"; }
echo "ok: allow-listed violation passes, a stale entry fails"
echo "user/trace/known.c include convert/convert.h" > "$r/allow.txt"
o=$(run 2>&1) && fail "an allow-list entry without its issue passes"
echo "ok: an entry without its issue is refused"
echo "PASS: the include rules and the simulator boundary are enforced"
