#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The repository is self-contained (tools/check_self_contained.sh): nothing
# outside tests/ names a path outside it, no test reads outside the clone, no
# tracked link leaves it.  Run on this tree (must pass), then on a scratch
# repository with one planted case per rule (each must fail, naming the
# file), and with the same text where it is allowed (tests/ data, docs/history).
set -u
top=${ASCBPF_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
check=$top/tools/check_self_contained.sh
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d /tmp/ascbpf-selfc.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

out=$("$check" "$top" 2>&1) || { echo "$out"; fail "this tree refers outside the repository"; }
echo "$out"

# a scratch repository: clean, then one planted case at a time
r=$tmp/repo
mkdir -p "$r/tools" "$r/docs" "$r/tests/x" "$r/user"
cp "$check" "$r/tools/"
echo "int main(void) { return 0; }" > "$r/user/a.c"
echo "fake stack frame: /work/train.py(40)" > "$r/tests/x/data.txt"
# the planted paths are spelt in pieces, so that this file does not match itself
u=.. sh=shared
echo "was at $u/$sh/DESIGN.md" > "$r/docs/history.md"
git -C "$r" init -q && git -C "$r" add -A
"$r/tools/check_self_contained.sh" "$r" >/dev/null || fail "a clean scratch tree fails"

plant() {	# FILE TEXT WANT: add FILE with TEXT, expect a failure naming WANT
	printf '%s\n' "$2" > "$r/$1" && git -C "$r" add "$1"
	local o
	o=$("$r/tools/check_self_contained.sh" "$r" 2>&1) && fail "not caught: $1: $2"
	grep -q "$3" <<<"$o" || { echo "$o"; fail "the failure does not name $3"; }
	git -C "$r" rm -qf "$1"
	echo "ok: caught $1: $2"
}
plant README.md "see $u/$sh/DESIGN.md" "README.md:1:"
plant user/b.c "/* facts: $sh/reference/cann_api_surface.md */" "user/b.c:1:"
plant tools/x.sh "data=/work/$sh/samples" "tools/x.sh:1:"
plant docs/y.md "clone into /home/me/src" "docs/y.md:1:"
plant tests/x/t.py "S = os.path.join(TOP, \"$u\", \"$sh\", \"reference\")" "tests/x/t.py:1:"
plant tests/x/u.sh "cat \"\$top/$u/other/file\"" "tests/x/u.sh:1:"
ln -s /etc/passwd "$r/user/link" && git -C "$r" add user/link
o=$("$r/tools/check_self_contained.sh" "$r" 2>&1) && fail "a link out of the repository not caught"
grep -q "user/link" <<<"$o" || fail "the link failure does not name it"
echo "ok: caught user/link -> /etc/passwd"
echo "PASS: the repository refers to nothing outside it, and each kind of reference is caught"
