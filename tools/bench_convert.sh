#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# tools/bench_convert.sh [EVENTS] [RUNS] [TYPES]
#
# Benchmark of `ascbpf convert` (not a test: nothing is asserted).  Writes a
# synthetic capture of about EVENTS records (default 5000000) with
# tests/lib/mkcapture, converts it RUNS times (default 5) at Level1 for each
# export type of TYPES (default "text db": --export-type text, then db), and
# prints per type the median conversion throughput (records per second), the
# median peak resident memory per record and the output's bytes per record.
# Targets (issue 4): >= 1 M events/s and < 100 bytes resident per event.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
OUTPUT=${OUTPUT:-$top/build}
events=${1:-5000000}
runs=${2:-5}
ascbpf=$OUTPUT/ascbpf
mkcap=$OUTPUT/tests/lib/mkcapture
for b in "$ascbpf" "$mkcap"; do
	[ -x "$b" ] || { echo "bench_convert: $b missing: run make" >&2; exit 2; }
done
[ -x /usr/bin/time ] || { echo "bench_convert: /usr/bin/time is needed (apt-get install time)" >&2; exit 2; }

work=$(mktemp -d /tmp/bench_convert.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$mkcap" -o "$work/c.ascb" --truth "$work/truth.json" --events "$events" --ops 50
records=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["records"])' \
	"$work/truth.json")
echo "capture: $records records, $(stat -c %s "$work/c.ascb") bytes"

for type in ${3:-text db}; do
	results=()
	for i in $(seq "$runs"); do
		rm -rf "$work/out"
		/usr/bin/time -f "%e %M" -o "$work/time" "$ascbpf" convert "$work/c.ascb" \
			-o "$work/out" --level 1 --export-type "$type" 2>/dev/null
		read -r secs kb <"$work/time"
		bytes=$(du -sb --exclude=ascbpf "$work/out" | cut -f1)
		results+=("$secs $kb $bytes")
		echo "$type run $i: ${secs} s, peak RSS ${kb} KiB, output ${bytes} bytes"
	done
	printf '%s\n' "${results[@]}" | /usr/bin/python3 -c '
import statistics, sys
records = int(sys.argv[1])
rows = [tuple(map(float, l.split())) for l in sys.stdin if l.strip()]
secs = statistics.median(r[0] for r in rows)
kb = statistics.median(r[1] for r in rows)
out = statistics.median(r[2] for r in rows)
print("median %s: %.0f events/s, %.1f bytes resident per event, %.1f output bytes per "
      "event (%d runs)" % (sys.argv[2], records / secs, kb * 1024 / records, out / records,
                           len(rows)))
' "$records" "$type"
done
