#!/bin/sh
# Regenerates the libm_exact expected files from gcc-built musl of the sysroots' version:
#   libm_exact.expected           the host's musl-gcc (Debian's musl-tools, x86_64)
#   libm_exact.<triple>.expected  Debian's musl-dev of another architecture, where its libm
#                                 takes other code paths (aarch64 defines __FP_FAST_FMA: log2
#                                 and pow use fma and differ in directed rounding modes);
#                                 written only where it differs from the x86_64 one
#   libm_exact.i686-linux-musl.expected musl built here by the host's gcc -m32 with i686-linux-musl's
#                                 SSE2 flags (Debian's i386 musl uses the x87: see below)
#   libm_exact.powerpc-linux-musl.expected musl built here by Debian's powerpc cross gcc
#                                 (gcc-powerpc-linux-gnu; Debian has no powerpc musl)
# The Debian packages come from the archive this machine's apt uses (never named here),
# verified by apt (signed Release files, hashes; tests/lib/debian-deb.sh); the
# test program is compiled with the built sysroot's clang and linked with Debian's gcc-built
# libc.a, start files and the sysroot's compiler-rt builtins (long double helpers).
# Usage: tests/sysroot/libm-reference.sh (make libm-reference); needs the sysroots of the
# architectures below built (a target without one is skipped and its file left alone).
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SRC=$ROOT/tests/sysroot/libm_exact.c
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
command -v musl-gcc >/dev/null || { echo "musl-gcc is missing: apt-get install musl-tools" >&2; exit 1; }
musl-gcc -O2 -static -o "$T/ref" "$SRC" -lm
"$T/ref" >"$ROOT/tests/sysroot/libm_exact.expected"
echo "libm_exact.expected: host musl-gcc $(dpkg-query -W -f='${Version}' musl-dev)"

# reference TARGET LIBDIR QEMU WHAT: the program compiled by TARGET's sysroot clang, linked with
# the gcc-built libc.a and start files in LIBDIR (and the sysroot's compiler-rt builtins: long
# double helpers) and run under QEMU with the target's CPU model (as crossroot test runs it);
# its output becomes libm_exact.<NAME>.expected (NAME: the target's triple, or what the fifth
# argument says), or that file is removed where the output equals the x86_64 reference. WHAT
# says where LIBDIR is from.
reference() {
	rs=$ROOT/sysroots/$1 rl=$2
	rtriple=$(sed -n 's/^triple: *//p' "$ROOT/targets/$1.yaml")
	rcpu=$(sed -n 's/^qemu_cpu: *\([^ #]*\).*/\1/p' "$ROOT/targets/$1.yaml")
	"$rs/bin/$1-clang" -O2 -c -o "$T/$1.o" "$SRC"
	ld.lld-19 -static -o "$T/$1.ref" "$rl/crt1.o" "$rl/crti.o" "$T/$1.o" "$rl/libc.a" \
		"$rs"/usr/lib/clang/*/lib/"$rtriple"/libclang_rt.builtins.a "$rl/crtn.o"
	rout=$ROOT/tests/sysroot/libm_exact.${5:-$rtriple}.expected
	$3 ${rcpu:+-cpu "$rcpu"} "$T/$1.ref" >"$T/$1.out"
	if cmp -s "$T/$1.out" "$ROOT/tests/sysroot/libm_exact.expected"; then
		rm -f "$rout"
		echo "$1: $4 matches the x86_64 reference"
	else
		mv "$T/$1.out" "$rout"
		echo "$(basename "$rout"): $4"
	fi
}

# have_sysroot TARGET: its sysroot is built; else it is skipped, its file left alone
have_sysroot() {
	[ -x "$ROOT/sysroots/$1/bin/$1-clang" ] && return 0
	echo "$1: no sysroot, skipped (crossroot build $1)" >&2
	return 1
}

. "$ROOT/tests/lib/debian-deb.sh"
VERSION=$(dpkg-query -W -f='${Version}' musl-dev)
# Debian architecture, multiarch directory, crossroot target, qemu. Not ppc64el: gcc defines
# __FP_FAST_FMA there and clang does not, so Debian's log2 and pow take musl's fma path and ours
# the generic one (x86_64's); they differ in 9 directed-rounding calls of 102,400.
while read -r debarch multiarch target qemu; do
	[ -f "$ROOT/targets/$target.yaml" ] || continue
	have_sysroot "$target" || continue
	deb=$(deb_fetch "$T/apt" "arm64 mips64el mipsel" "musl-dev:$debarch=$VERSION" "$T")
	dpkg-deb -x "$deb" "$T/$debarch"
	reference "$target" "$T/$debarch/usr/lib/$multiarch" "$qemu" \
		"Debian's gcc-built musl-dev $VERSION ($debarch)"
done <<'EOT'
arm64 aarch64-linux-musl aarch64-linux-musl qemu-aarch64-static
mips64el mips64el-linux-musl mips64el-linux-musl qemu-mips64el-static
mipsel mipsel-linux-musl mipsel-linux-musl qemu-mipsel-static
EOT

# Where Debian has no musl of the architecture, or none built as the target is, the reference
# is musl of the sysroot's version and patches, from crossroot's verified download, built here
# for that target (so its file is named by the target, not the triple: powerpc's GCC converts
# integers to double as clang 19 does, giving -0 for 0 when rounding down, which crossroot's
# LLVM 21 no longer does; powerpc-linux-musl-llvm21 compares with the x86_64 reference)
# by a gcc of Debian's (only the library: the program is compiled by the sysroot's clang and
# linked with its compiler-rt builtins, as above), at -O2 as Debian builds musl (at musl's own
# -Os, gcc saves registers through libgcc routines on some architectures: see powerpc's file).
# built_reference TARGET PACKAGE "CC" MUSL-TARGET QEMU WHAT (PACKAGE: Debian's, holding CC)
built_reference() {
	have_sysroot "$1" || return 0
	command -v "${3%% *}" >/dev/null || { echo "$1: ${3%% *} is missing: apt-get install $2" >&2; return 1; }
	version=$(sed -n 's/^version: *"*\([^"]*\)"*$/\1/p' "$ROOT/sources/musl.yaml")
	sum=$(sed -n 's/^ *sha256: *//p' "$ROOT/sources/musl.yaml" | head -1)
	tarball=${CROSSROOT_CACHE:-$ROOT/work/cache}/downloads/$sum
	[ -f "$tarball" ] || { echo "$tarball: musl's verified download is missing (crossroot build $1)" >&2; return 1; }
	echo "$sum  $tarball" | sha256sum -c --quiet - || { echo "$tarball: not musl's pinned sha256 $sum" >&2; return 1; }
	mkdir "$T/musl-$1"
	tar -xzf "$tarball" -C "$T/musl-$1" --strip-components=1
	for p in "$ROOT"/patches/musl/"$version"/*.patch; do patch -s -p1 -d "$T/musl-$1" <"$p"; done
	(cd "$T/musl-$1" && CC="$3" CFLAGS=-O2 ./configure --target="$4" --disable-shared >/dev/null &&
		make -s -j"$(nproc)" AR=llvm-ar-19 RANLIB=llvm-ranlib-19 lib/libc.a lib/crt1.o \
			lib/crti.o lib/crtn.o) >"$T/musl-$1.log" 2>&1 ||
		{ echo "$1: building the reference musl failed; the end of its log:" >&2
		  tail -20 "$T/musl-$1.log" >&2; return 1; }
	reference "$1" "$T/musl-$1/lib" "$5" "musl $version built by $6" "$1"
}

# i686-linux-musl does its floating point in SSE2 registers (-mfpmath=sse, see its target
# file); Debian's i386 musl uses the x87 unit, so it is no reference: the host's gcc with the
# target's flags (gcc rounds x87 and SSE arithmetic as C says, -fexcess-precision=standard).
built_reference i686-linux-musl gcc "gcc -m32 -march=pentium4 -mfpmath=sse" i386-linux-musl \
	qemu-i386-static "the host's gcc -m32 -mfpmath=sse"
# 32-bit PowerPC: Debian has no powerpc musl (the port is not an official architecture); its
# powerpc cross gcc (package gcc-powerpc-linux-gnu) with musl's 64-bit long double
built_reference powerpc-linux-musl gcc-powerpc-linux-gnu "powerpc-linux-gnu-gcc -mlong-double-64 -msecure-plt" \
	powerpc-linux-musl qemu-ppc-static "Debian's powerpc-linux-gnu-gcc"
