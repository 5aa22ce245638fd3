#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# tools/lint.sh [--shrink | --list] - `make lint`:
#  1. 100 columns (a tab counts to the next multiple of 8) in every tracked C,
#     Python and shell source.  tools/lint-long-lines.txt holds, per file, how
#     many longer lines it had when the rule came in ("COUNT FILE"): a file may
#     not have more than that (a file not listed: none).  When a file has fewer,
#     lint says so and --shrink lowers its count (it never raises one).
#  2. clang-format conformance (.clang-format) of every tracked C source and
#     header under the folders of $cfdirs; `--list` prints those files (what
#     `make format` rewrites in place).  A table that must stay as written is
#     fenced by `// clang-format off` / `// clang-format on` with its reason.
# Exit 0 clean, 1 when a rule is broken, 2 when clang-format is missing.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
base=tools/lint-long-lines.txt
# the folders whose C sources clang-format checks (npu_model's one C++ file is
# not C and keeps C++ idioms the kernel style would undo)
cfdirs="user bpf include tests npu_model tools"
CLANG_FORMAT=${CLANG_FORMAT:-clang-format}
cf_files() {
	local d pats=()
	for d in $cfdirs; do pats+=("$d/*.c" "$d/*.h"); done
	git ls-files -- "${pats[@]}"
}
if [ "${1:-}" = --list ]; then
	cf_files
	exit 0
fi
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

# clang-format conformance: one clang-format run over all the files, then the
# files it named, each with its first complaints
mapfile -t cfs < <(cf_files)
if [ ${#cfs[@]} -gt 0 ]; then
	if ! command -v "$CLANG_FORMAT" >/dev/null; then
		echo "lint: $CLANG_FORMAT not found (tools/setup.sh installs clang-format)"
		exit 2
	fi
	if ! out=$("$CLANG_FORMAT" --style=file --dry-run -Werror "${cfs[@]}" 2>&1); then
		violation='s/^\([^:]*\):[0-9]*:[0-9]*: error: .*-Wclang-format-violations.*/\1/p'
		unformatted=$(sed -n "$violation" <<<"$out" | sort -u)
		n=0
		for f in $unformatted; do
			# the first complaints of the first few files; then only the names
			[ $((n++)) -lt 3 ] && grep -m 2 -A 2 "^$f:" <<<"$out"
			echo "$f: not as clang-format writes it (make format FILES=$f)"
		done
		[ -n "$unformatted" ] || head -n 20 <<<"$out"
		echo "lint: ${#cfs[@]} files checked by clang-format, $(wc -w <<<"$unformatted")" \
			"not as it writes them (\`make format\` rewrites all of them)"
		bad=1
	fi
fi
[ "$bad" -eq 0 ] && echo "lint: clean"
exit "$bad"
