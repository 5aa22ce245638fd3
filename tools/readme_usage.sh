#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# tools/readme_usage.sh ASCBPF [README]
#
# Prints README with the part between <!-- usage:begin --> and
# <!-- usage:end --> replaced by the program's own help texts (`ascbpf
# --help`, then `ascbpf CMD --help` for every command).  `--write` as the
# third argument rewrites README in place.  tests/repo/test_docs.sh
# checks that README equals this output, so README and --help agree.
set -eu
bin=$1
readme=${2:-README.md}

gen() {
	echo '### `ascbpf --help`'
	echo
	echo '```'
	"$bin" --help
	echo '```'
	for cmd in $("$bin" --help | awk '/^Commands:/{on=1; next} on && /^  [a-z]/{print $1} on && /^$/{on=0}'); do
		echo
		echo "### \`ascbpf $cmd --help\`"
		echo
		echo '```'
		"$bin" "$cmd" --help 2>&1
		echo '```'
	done
}

body=$(gen)
out=$(awk -v body="$body" '
	/<!-- usage:begin -->/ { print; print body; skip = 1; next }
	/<!-- usage:end -->/ { skip = 0 }
	!skip { print }' "$readme")
if [ "${3:-}" = --write ]; then
	printf '%s\n' "$out" >"$readme"
else
	printf '%s\n' "$out"
fi
