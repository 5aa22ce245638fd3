#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# README and the man page agree with the program: the usage section of
# README.md is exactly the program's --help texts (tools/readme_usage.sh), the
# man page carries every command's help, `make install` installs ascbpf and
# `man ascbpf` renders, and `ascbpf version` reports the capture version.
set -eu
top=${ASCBPF_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
OUTPUT=${OUTPUT:-$top/build}
bin=$OUTPUT/ascbpf
cd "$top"

if ! diff -u README.md <(tools/readme_usage.sh "$bin" README.md); then
	echo "README.md usage section differs from the --help texts: run tools/readme_usage.sh $bin README.md --write"
	exit 1
fi
echo "README usage section equals --help"

for cmd in $("$bin" --help | awk '/^Commands:/{on=1; next} on && /^  [a-z]/{print $1} on && /^$/{on=0}'); do
	"$bin" "$cmd" --help >/dev/null 2>&1 || { echo "ascbpf $cmd --help exited non-zero"; exit 1; }
	grep -q "ASCBPF $(echo "$cmd" | tr a-z A-Z)" "$OUTPUT/ascbpf.8" || { echo "man page lacks $cmd"; exit 1; }
done

dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
make -s -C "$top" OUTPUT="$OUTPUT" install DESTDIR="$dest" PREFIX=/usr >/dev/null
[ -x "$dest/usr/bin/ascbpf" ] || { echo "make install did not install ascbpf"; exit 1; }
MANWIDTH=100 man -l "$dest/usr/share/man/man8/ascbpf.8" 2>/dev/null | grep -q "ascbpf trace" || {
	echo "installed man page does not render the trace command"; exit 1; }
echo "make install: binary and man page installed and rendered"

want=$(sed -n 's/^#define ASC_CAPTURE_VERSION[[:space:]]*\([0-9]*\).*/\1/p' bpf/ascbpf_events.h)
"$dest/usr/bin/ascbpf" version --json | /usr/bin/python3 -c '
import json, sys
v = json.load(sys.stdin)
print(v)
assert v["capture_format"] == int(sys.argv[1]), (v, sys.argv[1])
assert v["features"]["btf"] and v["features"]["uprobes"], v
' "$want"
echo "version reports the capture format"
