#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# tools/vm/fetch-kernel.sh SUITE DIR [DEBARCH]
#
# Puts Debian SUITE's (bullseye, bookworm) DEBARCH (amd64, the default, or
# arm64) kernel into DIR:
#   DIR/vmlinuz            the kernel image
#   DIR/modules/           the modules the guest loads (fuse.ko), uncompressed
#   DIR/release            the kernel release (uname -r)
#   DIR/config             its configuration
# from Debian's archive, through a private apt configuration under DIR/apt
# (its own sources list, lists and cache: the host's apt state is untouched).
# A DIR that already holds them is left as it is: a second run downloads
# nothing.
set -eu
suite=$1
dir=$2
arch=${3:-amd64}
[ -s "$dir/vmlinuz" ] && [ -s "$dir/release" ] && [ -d "$dir/modules" ] && exit 0

mkdir -p "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial" "$dir/debs"
dir=$(cd "$dir" && pwd)
echo "deb [arch=$arch signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]" \
	"http://deb.debian.org/debian $suite main" >"$dir/apt/sources.list"
: >"$dir/apt/status"
apt_opts=(-o "Dir::Etc::sourcelist=$dir/apt/sources.list" -o "Dir::Etc::sourceparts=-"
	  -o "Dir::State::Lists=$dir/apt/lists" -o "Dir::State::status=$dir/apt/status"
	  -o "Dir::Cache=$dir/apt/cache" -o "APT::Architecture=$arch"
	  -o "APT::Architectures::=$arch" -o "APT::Sandbox::User=root")
if ! ls "$dir"/apt/lists/*_Packages >/dev/null 2>&1; then
	apt-get "${apt_opts[@]}" -qq update
fi
# linux-image-$arch is the metapackage: its Depends names the versioned image.
image=$(apt-cache "${apt_opts[@]}" depends "linux-image-$arch" |
	sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n 1)
if [ -z "$image" ]; then
	echo "fetch-kernel: no linux-image-$arch in $suite" >&2
	exit 2
fi
if ! ls "$dir"/debs/"${image}"_*.deb >/dev/null 2>&1; then
	(cd "$dir/debs" && apt-get "${apt_opts[@]}" -qq download "$image")
fi
deb=$(ls "$dir"/debs/"${image}"_*.deb | head -n 1)
rm -rf "$dir/x"
mkdir -p "$dir/x"
dpkg-deb -x "$deb" "$dir/x"
release=${image#linux-image-}
mods="$dir/x/lib/modules/$release"
[ -d "$mods" ] || mods="$dir/x/usr/lib/modules/$release"
rm -rf "$dir/modules"
mkdir -p "$dir/modules"
for m in fuse; do
	f=$(find "$mods" -name "$m.ko*" | head -n 1)
	if [ -z "$f" ]; then
		echo "fetch-kernel: $m.ko not in $deb" >&2
		exit 2
	fi
	case "$f" in
	*.ko.xz) xz -dc "$f" >"$dir/modules/$m.ko" ;;
	*.ko.zst) zstd -qdc "$f" >"$dir/modules/$m.ko" ;;
	*) cp "$f" "$dir/modules/$m.ko" ;;
	esac
done
cp "$dir/x/boot/vmlinuz-$release" "$dir/vmlinuz.tmp"
cp "$dir/x/boot/config-$release" "$dir/config"
rm -rf "$dir/x"
echo "$release" >"$dir/release"
mv "$dir/vmlinuz.tmp" "$dir/vmlinuz"
