#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# `make lint` (tools/lint.sh): this tree is clean; in a scratch repository a
# line over 100 columns (a tab counting to the next multiple of 8) in a C,
# Python or shell file fails, naming the line; a file's count in
# tools/lint-long-lines.txt allows that many and no more; --shrink lowers a
# count and never raises one; a C source or header under user/, bpf/,
# include/, tests/, npu_model/ or tools/ fails unless clang-format
# (.clang-format) leaves it as it is, except between clang-format off/on.
set -u
top=${ASCBPF_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d /tmp/ascbpf-lint.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

out=$("$top/tools/lint.sh" 2>&1) || { echo "$out"; fail "this tree does not pass make lint"; }
echo "$out"

r=$tmp/repo
mkdir -p "$r/tools" "$r/src"
cp "$top/tools/lint.sh" "$r/tools/" && cp "$top/.clang-format" "$r/"
long=$(printf 'x%.0s' $(seq 1 95))
printf 'int f(void)\n{\n\treturn 0;\n}\n' > "$r/src/ok.c"
printf '# %s\n' "$long" > "$r/src/a.py"	# 97 columns
git -C "$r" init -q && git -C "$r" add -A
lint() { "$r/tools/lint.sh" "$@" 2>&1; }
o=$(lint) || { echo "$o"; fail "a clean scratch tree fails"; }

printf '\t\t/* %s */\n' "$long" > "$r/src/b.c" && git -C "$r" add src/b.c	# 16 + 101
o=$(lint) && fail "a C line of 117 columns passes"
grep -q "src/b.c:1: 117 columns" <<<"$o" || { echo "$o"; fail "the long line is not named"; }
echo "ok: a tab-indented C line over 100 columns fails"
printf 'echo %s123\n' "$long" > "$r/src/c.sh" && git -C "$r" add src/c.sh	# 103
o=$(lint) && fail "a shell line of 103 columns passes"
echo "ok: a shell line over 100 columns fails"

printf '# known\n1 src/b.c\n2 src/c.sh\n' > "$r/tools/lint-long-lines.txt"
o=$(lint) || { echo "$o"; fail "lines within the file's allowance fail"; }
grep -q "fewer long lines" <<<"$o" || { echo "$o"; fail "unused allowance not reported"; }
o=$(lint --shrink) || { echo "$o"; fail "--shrink fails"; }
grep -q "^1 src/c.sh$" "$r/tools/lint-long-lines.txt" || fail "--shrink did not lower src/c.sh"
grep -q "^1 src/b.c$" "$r/tools/lint-long-lines.txt" || fail "--shrink changed src/b.c"
echo "ok: the allowance holds, --shrink lowers it"
printf 'echo %s456\n' "$long" >> "$r/src/c.sh"
o=$(lint) && fail "a second long line passes with an allowance of one"
echo "ok: one more long line than allowed fails"
git -C "$r" rm -qf src/c.sh src/b.c

mkdir -p "$r/user" "$r/include"
printf 'int f(void)\n{\n\treturn 0;\n}\n' > "$r/user/ok.c"
printf '// clang-format off\nint  t[] = {  1,2 };\n// clang-format on\n' > "$r/include/t.h"
git -C "$r" add user include
o=$(lint) || { echo "$o"; fail "conforming files (one with a clang-format off table) fail"; }
lint --list | grep -qx user/ok.c || fail "--list does not name user/ok.c"
lint --list | grep -q src/ && fail "--list names a file outside the checked folders"
printf 'int g(void) {  return 1; }\n' > "$r/user/bad.c" && git -C "$r" add user/bad.c
o=$(lint) && fail "a C file clang-format would change passes"
grep -q "user/bad.c: not as clang-format writes it" <<<"$o" || { echo "$o"; fail "not named"; }
grep -q "user/ok.c: not as" <<<"$o" && { echo "$o"; fail "a conforming file is named"; }
echo "ok: clang-format conformance of every C file in the checked folders"
echo "PASS: make lint catches long lines and unformatted C files"
