#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# tests/fuzz/seeds.sh - the seed corpus of each harness, made from our own
# build ($OUTPUT), never downloaded:
#   fuzz_capture          captures written by tests/lib/mkcapture (one per
#                         variant of its options)
#   fuzz_convert/report   the records of those captures (mkseed records)
#   fuzz_elf              seed_elf.so (eager + stripped) and the smallest
#                         npu_model library
#   fuzz_insn             the first bytes of functions of ascbpf and the
#                         npu_model libraries (mkseed funcs)
#   fuzz_ioctl            one input per command the decoder knows (mkseed ioctl)
# Writes $OUTPUT/fuzz/seeds/<harness>/, replacing what was there.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
OUTPUT=${OUTPUT:-$top/build}
seeds=$OUTPUT/fuzz/seeds
mkseed=$OUTPUT/fuzz/mkseed
mkcapture=$OUTPUT/tests/lib/mkcapture

rm -rf "$seeds"
mkdir -p "$seeds"/{fuzz_capture,fuzz_convert,fuzz_report,fuzz_elf,fuzz_insn,fuzz_ioctl}

i=0
while read -r opts; do
	cap=$seeds/fuzz_capture/mkcapture-$i.cap
	# shellcheck disable=SC2086 # opts is a list of options
	"$mkcapture" -o "$cap" --steps 3 --ops 3 $opts >/dev/null
	"$mkseed" records "$cap" "$seeds/fuzz_convert/mkcapture-$i.rec"
	cp "$seeds/fuzz_convert/mkcapture-$i.rec" "$seeds/fuzz_report/"
	i=$((i + 1))
done <<'VARIANTS'

--level0
--stacks --pystacks --shapes
--funcnames --batch 3
--no-end --truncate-last
--schedule 1,1,1,2,2
--level0 --launch-marks 2
--node-launch --weird-names
--no-queue --task-start 65530
--no-steps --events 40
VARIANTS

cp "$OUTPUT/fuzz/seed_elf.so" "$seeds/fuzz_elf/seed_elf.so"
strip -s -o "$seeds/fuzz_elf/seed_elf-stripped.so" "$OUTPUT/fuzz/seed_elf.so"
strip --strip-debug -o "$seeds/fuzz_elf/libacl_op_compiler.so" \
	"$OUTPUT/npu_model/lib/libacl_op_compiler.so"

"$mkseed" funcs "$OUTPUT/ascbpf" "$seeds/fuzz_insn" 150
for lib in libascendcl libruntime libopapi; do
	"$mkseed" funcs "$OUTPUT/npu_model/lib/$lib.so" "$seeds/fuzz_insn" 50
done
"$mkseed" funcs "$OUTPUT/fuzz/seed_elf.so" "$seeds/fuzz_insn" 10

"$mkseed" ioctl "$seeds/fuzz_ioctl"

for d in "$seeds"/*/; do
	n=$(find "$d" -type f | wc -l)
	[ "$n" -gt 0 ] || { echo "seeds: no seed for $(basename "$d")" >&2; exit 1; }
done
