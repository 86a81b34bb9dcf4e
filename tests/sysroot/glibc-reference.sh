#!/bin/sh
# Regenerates the expected files of the glibc targets from Debian's gcc-built glibc of the same
# version: the programs whose output is the C library's own choice (libm's last bits and
# exception flags, printf's %a of subnormals, MB_CUR_MAX, EUC-KR without the UHC extension)
# are built with the target's sysroot and run under qemu once with Debian's libc6 of that
# architecture (from the archive this machine's apt uses, never named here) and once with the
# sysroot's own glibc. The Debian run's output becomes <name>.<triple>.expected; the two must
# agree, or the script stops naming the program (our glibc would not compute as Debian's does).
# Usage: tests/sysroot/glibc-reference.sh (make glibc-reference); needs the sysroots built.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$ROOT/tests/lib/debian-deb.sh"
VERSION=$(dpkg-query -W -f='${Version}' libc6)
status=0
# Debian architecture, crossroot target, qemu
while read -r debarch target qemu; do
	S=$ROOT/sysroots/$target
	triple=$(sed -n 's/^triple: *//p' "$ROOT/targets/$target.yaml")
	# the target's CPU model, as crossroot test runs it (glibc picks some libm routines by it)
	cpu=$(sed -n 's/^qemu_cpu: *\([^ #]*\).*/\1/p' "$ROOT/targets/$target.yaml")
	if [ ! -x "$S/bin/$target-clang" ]; then
		echo "$target: no sysroot, skipped (crossroot build $target)" >&2
		continue
	fi
	deb=$(deb_fetch "$T/apt" "arm64 armhf" "libc6:$debarch=$VERSION" "$T")
	dpkg-deb -x "$deb" "$T/$debarch"
	for name in libm_exact math iconv_euckr stdio_locale; do
		flags=$(sed -n 's|^// flags: ||p' "$ROOT/tests/sysroot/$name.c")
		# shellcheck disable=SC2086
		"$S/bin/$target-clang" -O2 $flags -o "$T/$name" "$ROOT/tests/sysroot/$name.c" -lm
		# a failing run is a difference too (its status is part of what is compared)
		$qemu ${cpu:+-cpu "$cpu"} -L "$T/$debarch" "$T/$name" >"$T/$name.debian" 2>&1 || echo "[exit status $?]" >>"$T/$name.debian"
		$qemu ${cpu:+-cpu "$cpu"} -L "$S" "$T/$name" >"$T/$name.ours" 2>&1 || echo "[exit status $?]" >>"$T/$name.ours"
		if grep -q '^\[exit status' "$T/$name.debian"; then
			echo "$target: $name fails with Debian's libc6 $VERSION ($debarch):" >&2
			tail -3 "$T/$name.debian" >&2
			status=1
			continue
		fi
		if ! cmp -s "$T/$name.debian" "$T/$name.ours"; then
			echo "$target: $name differs from Debian's libc6 $VERSION ($debarch):" >&2
			diff "$T/$name.debian" "$T/$name.ours" | head -10 >&2
			status=1
			continue
		fi
		cp "$T/$name.debian" "$ROOT/tests/sysroot/$name.$triple.expected"
		echo "$name.$triple.expected: Debian's libc6 $VERSION ($debarch), and ours the same"
	done
done <<'EOT'
arm64 aarch64-linux-gnu qemu-aarch64-static
armhf armv7-rpi2-linux-gnueabihf qemu-arm-static
amd64 x86_64-linux-gnu-libcxx qemu-x86_64-static
EOT
exit $status
