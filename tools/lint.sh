#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# tools/lint.sh [--shrink] - `make lint`:
#  1. 100 columns (a tab counts to the next multiple of 8) in every tracked C,
#     Python and shell source.  tools/lint-long-lines.txt holds, per file, how
#     many longer lines it had when the rule came in ("COUNT FILE"): a file may
#     not have more than that (a file not listed: none).  When a file has fewer,
#     lint says so and --shrink lowers its count (it never raises one).
#  2. clang-format conformance (.clang-format) of the files listed in
#     tools/clang-format-files.txt, one path a line; `make format` rewrites files
#     in place, after which they can be listed.
# Exit 0 clean, 1 when a rule is broken, 2 when clang-format is missing.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
base=tools/lint-long-lines.txt
cflist=tools/clang-format-files.txt
CLANG_FORMAT=${CLANG_FORMAT:-clang-format}
shrink=0
[ "${1:-}" = --shrink ] && shrink=1
bad=0

# FILE COUNT for every source with lines over 100 columns, and the lines themselves
# (into a report outside the tree, so an interrupted run leaves nothing in it)
report=$(mktemp "${TMPDIR:-/tmp}/ascbpf-lint.XXXXXX") || exit 2
trap 'rm -f "$report"' EXIT
counts=$(git ls-files -z -- '*.c' '*.h' '*.py' '*.sh' | xargs -0 awk -v report="$report" '
	FNR == 1 && NR > 1 { if (n) print prev, n; n = 0 }
	{ prev = FILENAME; w = 0
	  for (i = 1; i <= length($0); i++) w = substr($0, i, 1) == "\t" ? w + 8 - w % 8 : w + 1
	  if (w > 100) { n++; printf "%s:%d: %d columns\n", FILENAME, FNR, w >> report } }
	END { if (n) print prev, n }')
declare -A allowed=()
if [ -f "$base" ]; then
	while read -r c f; do
		case "$c" in '#'* | '') continue ;; esac
		allowed[$f]=$c
	done <"$base"
fi
declare -A now=()
while read -r f c; do
	[ -n "$f" ] || continue
	now[$f]=$c
	a=${allowed[$f]:-0}
	if [ "$c" -gt "$a" ]; then
		grep "^$f:" "$report"
		echo "$f: $c lines over 100 columns (allowed: $a)"
		bad=1
	fi
done <<<"$counts"
lower=()
for f in "${!allowed[@]}"; do
	c=${now[$f]:-0}
	[ "$c" -lt "${allowed[$f]}" ] && lower+=("$f")
done
if [ ${#lower[@]} -gt 0 ]; then
	if [ "$shrink" -eq 1 ]; then
		tmp=$(mktemp "$top/tools/.lint-long-lines.XXXXXX")
		while IFS= read -r l; do
			read -r c f <<<"$l"
			case "$c" in '#'* | '') echo "$l"; continue ;; esac
			n=${now[$f]:-0}
			# an if, not `[ ] && printf`: a last file at 0 would fail the loop (no mv)
			if [ "$n" -gt 0 ]; then
				printf '%s %s\n' "$n" "$f"
			fi
		done <"$base" >"$tmp" && mv "$tmp" "$base" || { rm -f "$tmp"; exit 2; }
		echo "lint: lowered the counts of ${#lower[@]} file(s) in $base"
	else
		echo "lint: ${#lower[@]} file(s) have fewer long lines than $base allows:" \
			"tools/lint.sh --shrink lowers their counts"
	fi
fi

# clang-format conformance of the listed files
if [ -f "$cflist" ] && grep -qv '^\s*\(#\|$\)' "$cflist"; then
	if ! command -v "$CLANG_FORMAT" >/dev/null; then
		echo "lint: $CLANG_FORMAT not found (tools/setup.sh installs clang-format)"
		exit 2
	fi
	while read -r f; do
		case "$f" in '#'* | '') continue ;; esac
		if [ ! -f "$f" ]; then
			echo "$cflist: $f does not exist"
			bad=1
		elif ! out=$("$CLANG_FORMAT" --style=file --dry-run -Werror "$f" 2>&1); then
			head -n 20 <<<"$out"
			echo "$f: not as clang-format writes it (make format FILES=$f)"
			bad=1
		fi
	done <"$cflist"
fi
[ "$bad" -eq 0 ] && echo "lint: clean"
exit "$bad"
