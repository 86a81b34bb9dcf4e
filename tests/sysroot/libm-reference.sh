#!/bin/sh
# Regenerates the libm_exact expected files from gcc-built musl of the sysroots' version
# (tests/lib/reference-musl.sh says which, per target):
#   libm_exact.expected           the host's musl-gcc (Debian's musl-tools, x86_64)
#   libm_exact.<triple>.expected  gcc-built musl of another architecture: Debian's own, or musl
#                                 built here by a Debian cross gcc where Debian has none built
#                                 as the target is. Where it differs from x86_64's: aarch64
#                                 defines __FP_FAST_FMA (log2 and pow use fma and round otherwise
#                                 in directed modes), s390x has its own ceil, floor, round and
#                                 trunc (FE_INEXACT), i686 its own 32-bit paths
#   libm_exact.powerpc-linux-musl.expected  named by the target (below)
# Each is written only where it differs from the x86_64 one (else removed). The test program
# is compiled with the built sysroot's clang and linked with the gcc-built libc.a, start files
# and the sysroot's compiler-rt builtins (long double helpers), then run under the target's
# qemu and CPU model, as crossroot test runs it.
# Usage: tests/sysroot/libm-reference.sh [TARGET...] (make libm-reference); needs the sysroots
# of the targets built (a target without one is skipped and its file left alone).
# A target whose own libm knowingly differs (OWN below) gets libm_exact.<triple>.expected from
# its own sysroot's output (its LLVM 19 variants share it), its reference is the file of its
# LLVM 21 variant, libm_exact.<target>-llvm21.expected (where that target exists), and the
# functions that differ between the two are printed: README's "libm_exact" says why.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SRC=$ROOT/tests/sysroot/libm_exact.c
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
command -v musl-gcc >/dev/null || { echo "musl-gcc is missing: apt-get install musl-tools" >&2; exit 1; }
musl-gcc -O2 -static -o "$T/ref" "$SRC" -lm
"$T/ref" >"$ROOT/tests/sysroot/libm_exact.expected"
echo "libm_exact.expected: host musl-gcc $(dpkg-query -W -f='${Version}' musl-dev)"

. "$ROOT/tests/lib/reference-musl.sh"

# reference TARGET DIR NAME: the program compiled by TARGET's sysroot clang, linked with the
# gcc-built libc.a and start files in DIR, run under the target's qemu and CPU model; its output
# becomes libm_exact.NAME.expected, or that file is removed where the output equals the x86_64
# reference
reference() {
	rs=$ROOT/sysroots/$1 rl=$2
	rtriple=$(sed -n 's/^triple: *//p' "$ROOT/targets/$1.yaml")
	rout=$ROOT/tests/sysroot/libm_exact.$3.expected
	if [ -x "$rs/bin/$1-clang" ]; then
		"$rs/bin/$1-clang" -O2 -c -o "$T/$1.o" "$SRC"
		ld.lld-19 -static -o "$T/$1.ref" "$rl/crt1.o" "$rl/crti.o" "$T/$1.o" "$rl/libc.a" \
			"$rs"/usr/lib/clang/*/lib/"$rtriple"/libclang_rt.builtins.a "$rl/crtn.o"
		"$rs/bin/$1-run" "$T/$1.ref" >"$T/$1.out"
	else
		# no sysroot: the host's clang with the target's triple and flags and the reference's
		# headers, linked with the Debian cross gcc's libgcc, run by the target's qemu and CPU
		rgcc=$(without_sysroot_gcc "$1")
		command -v "$rgcc" >/dev/null ||
			{ echo "$1: $rgcc is missing: apt-get install gcc-${rgcc%-gcc}" >&2; return 1; }
		rflags=$(sed -n 's/^cflags: *\[\(.*\)\].*/\1/p' "$ROOT/targets/$1.yaml" | tr -d ',')
		rqemu=$(sed -n 's/^qemu: *\([^ #]*\).*/\1/p' "$ROOT/targets/$1.yaml")
		rcpu=$(sed -n 's/^qemu_cpu: *\([^ #]*\).*/\1/p' "$ROOT/targets/$1.yaml")
		clang-19 --target="$rtriple" $rflags -O2 -nostdinc -isystem "$rl/include" \
			-isystem "$(clang-19 -print-resource-dir)/include" -c -o "$T/$1.o" "$SRC"
		ld.lld-19 -static -o "$T/$1.ref" "$rl/crt1.o" "$rl/crti.o" "$T/$1.o" "$rl/libc.a" \
			"$($rgcc -print-libgcc-file-name)" "$rl/crtn.o"
		$rqemu ${rcpu:+-cpu "$rcpu"} "$T/$1.ref" >"$T/$1.out"
	fi
	cp "$T/$1.out" "$T/$1.refout"
	case $3 in *-llvm21) if [ ! -f "$ROOT/targets/$3.yaml" ]; then
		echo "$1: $REF_WHAT (no $3 target: kept for the comparison below)"
		return 0
	fi ;; esac
	if cmp -s "$T/$1.out" "$ROOT/tests/sysroot/libm_exact.expected"; then
		rm -f "$rout"
		echo "$1: $REF_WHAT matches the x86_64 reference"
	else
		mv "$T/$1.out" "$rout"
		echo "$(basename "$rout"): $REF_WHAT"
	fi
}

# without_sysroot_gcc TARGET: the Debian cross gcc whose libgcc links the program where the
# target's sysroot is not built (its musl is GCC-built: a cold build is about 40 minutes), so
# its reference needs no sysroot
without_sysroot_gcc() {
	case $1 in
	mipsel-linux-musl) echo mipsel-linux-gnu-gcc ;;
	mips64el-linux-musl) echo mips64el-linux-gnuabi64-gcc ;;
	powerpc-linux-musl) echo powerpc-linux-gnu-gcc ;;
	*) return 1 ;;
	esac
}

# The targets whose libm knowingly differs from gcc-built musl: armv7 and armv6 compiled by
# clang 19 give zeros of the wrong sign in FE_DOWNWARD (its strict int-to-double conversion)
OWN="armv7-rpi2-linux-musleabihf armv6-rpi1-linux-musleabihf"

# own TARGET: libm_exact.<triple>.expected from the sysroot's own libm (the program linked as
# crossroot test links it: every LLVM 19 variant of the triple shares it, as armv7-c-only's in
# make check), and the functions where it differs from the reference's output
own() {
	rs=$ROOT/sysroots/$1
	otriple=$(sed -n 's/^triple: *//p' "$ROOT/targets/$1.yaml")
	"$rs/bin/$1-clang" -O2 -static -o "$T/$1.own" "$SRC" -lm
	"$rs/bin/$1-run" "$T/$1.own" >"$ROOT/tests/sysroot/libm_exact.$otriple.expected"
	echo "libm_exact.$otriple.expected: $1's own libm; differs from the reference in:" \
		$(diff "$T/$1.refout" "$ROOT/tests/sysroot/libm_exact.$otriple.expected" | sed -n 's/^> \([^ ]*\).*/\1/p')
}

if [ $# -eq 0 ]; then
	set -- $(cd "$ROOT/targets" && ls *.yaml | sed 's/\.yaml$//')
fi
for target; do
	ref_musl_kind "$target" >/dev/null || continue
	[ "$target" != x86_64-linux-musl ] || continue   # the host's musl-gcc, above
	if [ ! -x "$ROOT/sysroots/$target/bin/$target-clang" ] && ! without_sysroot_gcc "$target" >/dev/null; then
		echo "$target: no sysroot, skipped (crossroot build $target)" >&2
		continue
	fi
	ref_musl "$target" "$T/ref-$target" "$T/apt" || { echo "$target: no reference" >&2; continue; }
	# named by the triple, so the target's variants compiled by another LLVM share it; powerpc's
	# by the target: its own musl is GCC-built as the reference is, and GCC converts integers
	# to double as clang 19 does (0 is -0 when rounding down), which LLVM 21 does not
	name=$(sed -n 's/^triple: *//p' "$ROOT/targets/$target.yaml")
	[ "$target" != powerpc-linux-musl ] || name=$target
	# a target whose libm knowingly differs: the reference is what its LLVM 21 variant must give
	case " $OWN " in *" $target "*) name=$target-llvm21 ;; esac
	reference "$target" "$T/ref-$target" "$name"
	case " $OWN " in *" $target "*) own "$target" ;; esac
done

# RV32: Debian has no gcc for it. Its reference is composed of gcc-built references' lines:
# RISC-V's (riscv64's, which equals x86_64's: tininess after rounding, no fma paths) for every
# function but those returning long, 32 bits here, which come from the 32-bit i686 reference
# (armhf's and armv6's give the same lines: musl's 32-bit lrint and lround are C, and their
# flags the conversion's)
if [ -f "$ROOT/targets/riscv32-linux-musl.yaml" ] && [ -f "$ROOT/tests/sysroot/libm_exact.i686-unknown-linux-musl.expected" ]; then
	awk 'NR == FNR { if ($1 ~ /^l(rint|round)f?$/) long[$1] = $0; next }
	     { print ($1 in long) ? long[$1] : $0 }' \
		"$ROOT/tests/sysroot/libm_exact.i686-unknown-linux-musl.expected" \
		"$ROOT/tests/sysroot/libm_exact.expected" >"$ROOT/tests/sysroot/libm_exact.riscv32-unknown-linux-musl.expected"
	echo "libm_exact.riscv32-unknown-linux-musl.expected: riscv64's (x86_64's), with i686's lines of the functions that return long"
fi

