#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# tools/vm/mkinitramfs.sh OUT.cpio MODULES_DIR TESTS...
#
# The guest's whole root file system, one uncompressed newc cpio (the kernel
# unpacks it into its rootfs; no disk image, no root privileges needed):
#   /init                       tools/vm/init (mounts, loads fuse, runs, powers off)
#   /bin/busybox + applets      Debian's busybox-static: the shell and the tools
#   bash, python3 (+ stdlib), nm, fusermount3 and every shared library they
#                               and the build's binaries need, copied from this host
#                               (ldd), so the guest runs exactly what was tested here
#   $TOP (the same absolute path as here): the tracked sources and $OUTPUT,
#                               so the tests find ascbpf, the BPF objects and npu_model
#   /vm/tests                   the chosen integration tests + their helpers
#   /vm/modules                 MODULES_DIR (fuse.ko of the guest's kernel)
#   /vm/prebuilt, gcc           trace_check's target programs, built here; the guest's
#                               gcc is a stand-in that hands them out (tools/vm/gcc-prebuilt)
# ASCBPF_VM_TORCH=1 adds python3-torch (libtorch and its dependencies) for the
# Python job.
set -eu
out=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
mods=$(cd "$2" && pwd)
shift 2
top=$(cd "$(dirname "$0")/../.." && pwd)
OUTPUT=${OUTPUT:-$top/build}
OUTPUT=$(cd "$OUTPUT" && pwd)
stage=$out.stage
rm -rf "$stage"
mkdir -p "$stage"/{bin,sbin,etc,proc,sys,dev,tmp,run,root,vm/tests,vm/modules,vm/prebuilt}
mkdir -p "$stage/usr/bin" "$stage/usr/sbin"

declare -A seen=()
# copy FILE (and the link chain leading to it) to the same path in the stage
copy_path() {
	local f=$1 t
	while :; do
		[ -n "${seen[$f]:-}" ] && return 0
		seen[$f]=1
		mkdir -p "$stage$(dirname "$f")"
		if [ -L "$f" ]; then
			cp -P "$f" "$stage$f"
			t=$(readlink "$f")
			case "$t" in /*) ;; *) t=$(dirname "$f")/$t ;; esac
			f=$t
		else
			cp "$f" "$stage$f"
			return 0
		fi
	done
}
# copy an ELF file and every shared library ldd resolves for it
copy_elf() {
	local f=$1 lib
	copy_path "$f"
	for lib in $(ldd "$f" 2>/dev/null | awk '/=> \//{print $3} /^\t\/[^ ]* \(/{print $1}'); do
		copy_path "$lib"
		# /lib is a link to usr/lib on Debian 12: keep both spellings working
		copy_path "$(readlink -f "$lib")"
	done
}

# Debian 12 is merged-/usr: /lib, /lib64, /bin, /sbin are links into /usr.
mkdir -p "$stage/usr/lib" "$stage/usr/lib64"
for l in lib lib64; do
	[ -L /$l ] && ln -sfn "usr/$l" "$stage/$l"
done
rmdir "$stage/bin" "$stage/sbin" && ln -s usr/bin "$stage/bin" && ln -s usr/sbin "$stage/sbin"

cp /bin/busybox "$stage/usr/bin/busybox"
for a in $(/bin/busybox --list); do
	[ -e "$stage/usr/bin/$a" ] || ln -s busybox "$stage/usr/bin/$a"
done
# GNU tools over busybox's applets where the tests' scripts use GNU options
for b in /usr/bin/bash /usr/bin/python3.11 /usr/bin/nm /usr/bin/fusermount3 /usr/sbin/bpftool \
	 $(dpkg -L coreutils findutils sed grep mawk procps |
	   grep '^/usr/bin/[^/]*$\|^/bin/[^/]*$' |
	   sed 's|^/bin/|/usr/bin/|' | sort -u); do
	[ -f "$b" ] && [ ! -L "$b" ] || continue
	rm -f "$stage$b"
	copy_elf "$b"
done
ln -sf python3.11 "$stage/usr/bin/python3"
ln -sf bash "$stage/usr/bin/sh.bash"
# the Python standard library without its tests and GUI parts; lib-dynload's modules need libs
(cd / && find usr/lib/python3.11 \( -name test -o -name tests -o -name idlelib -o -name tkinter \
	-o -name turtledemo -o -name ensurepip -o -name 'config-3.11-*' \) -prune -o -print) |
	(cd / && cpio -pdm --quiet "$stage")
for so in /usr/lib/python3.11/lib-dynload/*.so; do copy_elf "$so"; done
if [ "${ASCBPF_VM_TORCH:-0}" = 1 ]; then
	for d in /usr/lib/python3/dist-packages/torch /usr/lib/python3/dist-packages/numpy \
		 /usr/lib/python3/dist-packages/typing_extensions.py; do
		(cd / && find "${d#/}" \( -path '*/numpy/*/tests' -o -path '*/torch/bin/test_*' \) \
			-prune -o -print) |
			(cd / && cpio -pdm --quiet "$stage")
	done
	# the extension modules `import torch` loads (not every .so of the tree: some
	# pull in GDAL, ffmpeg and more through optional parts)
	for so in /usr/lib/python3/dist-packages/torch/lib/*; do	# links into /usr/lib
		[ -e "$so" ] && copy_path "$so"	# some links dangle (packages not installed)
	done
	for so in /usr/lib/python3/dist-packages/torch/bin/torch_shm_manager \
		  /usr/lib/python3/dist-packages/torch/_C*.so \
		  $(find /usr/lib/python3/dist-packages/numpy -name '*.so' -type f); do
		copy_elf "$so"
	done
fi

# the tree under test, at the same path, and the build
(cd "$top" && git ls-files -z) | (cd "$top" && cpio -0pdm --quiet "$stage$top")
mkdir -p "$stage$OUTPUT"
(cd "$OUTPUT" && find . \( -name test-logs -o -name vm -o -name '*.d' \
	-o -name '*.o' ! -name '*.bpf.o' \) -prune \
	-o -print) | (cd "$OUTPUT" && cpio -pdm --quiet "$stage$OUTPUT")
for f in $(find "$OUTPUT" \( -name vm -o -name test-logs \) -prune -o -type f -perm -u+x -print); do
	file -b "$f" | grep -q '^ELF' && copy_elf "$f"
done
for f in $(find "$OUTPUT" \( -name vm -o -name test-logs \) -prune -o -name '*.so*' -type f \
	   -print); do
	copy_elf "$f"
done

# The chosen tests (found in their room, tests/ROOM/NAME) in /vm/tests, which
# init runs one by one; /vm/lib (their ../lib) holds links to tests/lib's
# helpers in the tree and copies of other tests a chosen one imports.
mkdir -p "$stage/vm/lib"
for f in "$top"/tests/lib/*; do
	ln -s "$f" "$stage/vm/lib/"
done
for t in "$@"; do
	src=$(ls "$top"/tests/*/"$t" 2>/dev/null | head -n 1)
	if [ -z "$src" ]; then
		echo "mkinitramfs: no test $t in tests/*/" >&2
		exit 2
	fi
	cp "$src" "$stage/vm/tests/"
	for m in $(sed -n 's/^import \(test_[a-z0-9_]*\).*/\1/p' "$src"); do
		cp "$(dirname "$src")/$m.py" "$stage/vm/lib/"
	done
done
cp "$mods"/*.ko "$stage/vm/modules/"

# trace_check.build()'s three target programs, built here with its own flags
src=$top/tests/lib/trace_target.c
pre=$stage/vm/prebuilt
gcc -O2 -g -Wall -Werror -shared -fPIC -DTT_ACL -o "$pre/libascendcl.so" "$src" -lpthread
gcc -O2 -g -Wall -Werror -shared -fPIC -DTT_STEP -o "$pre/libtorch_npu.so" "$src" -lpthread
gcc -O2 -g -Wall -Werror -o "$pre/tt" "$src" -ldl -lpthread
for f in "$stage"/vm/prebuilt/*; do
	for lib in $(ldd "$f" | awk '/=> \//{print $3}'); do
		copy_path "$lib"
		copy_path "$(readlink -f "$lib")"
	done
done
install -m 0755 "$top/tools/vm/gcc-prebuilt" "$stage/usr/bin/gcc"
install -m 0755 "$top/tools/vm/init" "$stage/init"
cp "$top"/tools/vm/cmd.* "$stage/vm/"
echo "root:x:0:0:root:/root:/bin/sh" >"$stage/etc/passwd"
echo "root:x:0:" >"$stage/etc/group"
echo "$top" >"$stage/vm/top"
echo "$OUTPUT" >"$stage/vm/output"

(cd "$stage" && find . -print | cpio -o -H newc --quiet) >"$out.tmp"
mv "$out.tmp" "$out"
rm -rf "$stage"
