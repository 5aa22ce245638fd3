#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# tools/check_self_contained.sh [TOP] - a clone of this repository alone builds,
# documents and tests itself:
#  * no tracked file outside tests/ (and outside docs/history*, which tells
#    what happened) names a path outside the repository: the shared folder
#    that used to sit beside the checkout, or an absolute path into a
#    developer's machine (/work, /home, /root);
#  * no test reads outside the clone: nothing under tests/ names a sibling
#    folder of the checkout, or joins ".." onto the repository's top;
#  * no tracked symbolic link points outside the repository.
# Prints each offending line as FILE:LINE: TEXT.  Exit 0 clean, 1 otherwise.
set -u
top=$(cd "${1:-$(dirname "$0")/..}" && pwd)
cd "$top" || exit 2
git rev-parse --git-dir >/dev/null 2>&1 || { echo "$top is not a git checkout"; exit 2; }
self=tools/check_self_contained.sh
bad=0

# The patterns are spelt in pieces so that this file does not match itself.
up='\.\./'
sib="${up}shared|shared/reference|shared/DESIGN"
abs='(^|[^[:alnum:]_./%$-])/(work|home|root)/'

hits=$(git grep -nIE "$sib|$abs" -- . ":!tests" ":!docs/history*" ":!$self")
if [ -n "$hits" ]; then
	echo "$hits"
	echo "self-contained: the lines above name a path outside the repository"
	bad=1
fi

# tests: a sibling of the checkout, or ".." joined onto the top (TOP/.., "TOP, '..'")
tsib="${up}shared|shared/reference|\"\.\.\", \"shared\"|/work/shared"
tsib="$tsib|(TOP|top)(\}|\b)[\"]?(/\.\.|, \"\.\.\")"
hits=$(git grep -nIE "$tsib" -- tests)
if [ -n "$hits" ]; then
	echo "$hits"
	echo "self-contained: the tests above read outside the clone"
	bad=1
fi

while IFS= read -r l; do
	[ -n "$l" ] || continue
	t=$(readlink "$l")
	case "$t" in /*) r=$t ;; *) r=$(realpath -m "$(dirname "$l")/$t") ;; esac
	case "$r" in "$top"/*) ;; *) echo "$l -> $t: a link out of the repository"; bad=1 ;; esac
done < <(git ls-files -s | awk '$1 == "120000" { print $4 }')

[ "$bad" -eq 0 ] && echo "self-contained: nothing refers outside the repository"
exit "$bad"
