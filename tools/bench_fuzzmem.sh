#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# tools/bench_fuzzmem.sh - peak RSS (/usr/bin/time) and time of `ascbpf
# convert` and `ascbpf report` (the ordinary build) on the inputs of the fuzz
# corpus of fuzz_convert and fuzz_report ($OUTPUT/fuzz/corpus and seeds:
# record streams, each made into the capture the harness reads with `mkseed
# wrap`), plus a few larger mkcapture captures so that the per-byte term is
# visible.  Prints, per command, the constant (smallest RSS), the largest
# (RSS - constant) / capture bytes over all inputs, and the largest time per
# capture byte: the bound is RSS <= constant + that ratio x bytes.
# FUZZMEM_MAX: corpus inputs taken (400); FUZZMEM_ROWS: file for the raw rows.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
OUTPUT=${OUTPUT:-$top/build}
ascbpf=$OUTPUT/ascbpf
mkseed=$OUTPUT/fuzz/mkseed
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
mkdir -p "$tmp/big"
for a in "--steps 20 --ops 20" "--steps 40 --ops 40 --stacks" "--steps 100 --ops 50"; do
	# shellcheck disable=SC2086 # a list of options
	"$OUTPUT/tests/lib/mkcapture" -o "$tmp/big.cap" $a >/dev/null &&
		"$mkseed" records "$tmp/big.cap" "$tmp/big/mkcapture-${a// /}"
done
for f in "$tmp"/big/* $(find "$OUTPUT/fuzz/corpus/fuzz_convert" "$OUTPUT/fuzz/corpus/fuzz_report" \
		"$OUTPUT/fuzz/seeds/fuzz_convert" -type f 2>/dev/null | sort |
		head -n "${FUZZMEM_MAX:-400}"); do
	"$mkseed" wrap "$f" "$tmp/in.cap" 2>/dev/null || continue
	size=$(stat -c %s "$tmp/in.cap")
	for cmd in convert report; do
		if [ $cmd = convert ]; then
			args=(convert "$tmp/in.cap" -o "$tmp/out" --force)
		else
			args=(report --json "$tmp/in.cap")
		fi
		/usr/bin/time -f "%M %e" -o "$tmp/t" timeout 60 "$ascbpf" "${args[@]}" \
			>/dev/null 2>&1
		read -r rss secs < <(tail -n 1 "$tmp/t") || continue
		case "$rss" in [0-9]*) ;; *) continue ;; esac
		echo "$cmd $size $rss $secs $(basename "$f")"
		rm -rf "$tmp/out"
	done
	n=$((n + 1))
done >"$tmp/rows"
awk -v n="$n" '
{ c = $1; s[c]++; size[c, s[c]] = $2; rss[c, s[c]] = $3; sec[c, s[c]] = $4; name[c, s[c]] = $5
  if (!(c in mn) || $3 < mn[c]) mn[c] = $3
  if (!(c in mx) || $3 > mx[c]) { mx[c] = $3; mxs[c] = $2 }
  if ($2 > bs[c]) bs[c] = $2 }
END {
  printf "# %d inputs (fuzz corpus + 3 larger mkcapture captures), peak RSS by /usr/bin/time\n", n
  for (c in s) {
    r = 0; t = 0
    for (i = 1; i <= s[c]; i++) {
      q = (rss[c, i] - mn[c]) * 1024 / size[c, i]
      if (q > r) { r = q; rf = name[c, i]; rs = size[c, i] }
      u = sec[c, i] * 1e6 / size[c, i]
      if (u > t) { t = u; tf = name[c, i]; ts = size[c, i]; tsec = sec[c, i] }
    }
    printf "%s: %d runs on captures of up to %d bytes; RSS %d..%d KiB (max at %d bytes)\n",
      c, s[c], bs[c], mn[c], mx[c], mxs[c]
    printf "%s: bound RSS <= %d KiB + %.0f x capture bytes (worst: %s, %d bytes)\n",
           c, mn[c], r, rf, rs
    printf "%s: worst time per byte %.1f us/byte (%.2f s, %s, %d bytes)\n", c, t, tsec, tf, ts
  }
}' "$tmp/rows"
cp "$tmp/rows" "${FUZZMEM_ROWS:-/dev/null}"
