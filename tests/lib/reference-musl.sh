# Sourced by tests/sysroot/libm-reference.sh and tests/libc-test/run.sh: gcc-built musl for a
# crossroot target, the reference its clang-built musl is compared with.
#
# ref_musl TARGET DIR STATE: writes the reference's REF_MUSL_FILES (libc.a; libc.so, which is
# the dynamic loader too; the start files) and its headers (DIR/include) into DIR and sets REF_WHAT to where it is from; STATE holds the
# private apt state of deb_fetch (tests/lib/debian-deb.sh). Returns 2 where the target has no
# reference (an architecture with neither a Debian musl nor a Debian cross gcc), 1 on failure.
# The reference is, per target (ref_musl_kind):
#   debian ARCH MULTIARCH   Debian's own gcc-built musl and musl-dev of that architecture,
#                           version 1.2.3 as the sysroots' (verified by apt: signed Release files
#                           and hashes);
#   built PACKAGE|CC|MUSL-TARGET[|CFLAGS]  musl of the sysroot's version and patches, from crossroot's verified
#                           download, built here at -O2 (as Debian builds it) by a gcc of
#                           Debian's, where Debian has no musl of the architecture or none built
#                           as the target is (i686: Debian's i386 musl uses the x87; POWER and
#                           RISC-V: gcc defines __FP_FAST_FMA there and clang does not, so musl's
#                           log2 and pow would take the fma path; -U__FP_FAST_FMA gives them the
#                           path the target's libm takes). The library only: its compiler-rt builtins
#                           are the sysroot's (what libgcc would give: 64-bit division on 32-bit
#                           machines), so one Debian cross gcc serves both byte orders.
. "$ROOT/tests/lib/debian-deb.sh"

REF_MUSL_FILES="libc.a libc.so crt1.o Scrt1.o rcrt1.o crti.o crtn.o"
# every Debian architecture below: deb_fetch's apt state knows the ones of its first call
REF_MUSL_ARCHES="amd64 arm64 armhf mips64el mipsel"

ref_musl_kind() {
	case $1 in
	x86_64-linux-musl) echo "debian amd64 x86_64-linux-musl" ;;
	aarch64-linux-musl) echo "debian arm64 aarch64-linux-musl" ;;
	armv7-rpi2-linux-musleabihf) echo "debian armhf arm-linux-musleabihf" ;;
	mips64el-linux-musl) echo "debian mips64el mips64el-linux-musl" ;;
	mipsel-linux-musl) echo "debian mipsel mipsel-linux-musl" ;;
	# gcc evaluates float in double on s390x in standard C (FLT_EVAL_METHOD 1: musl's float_t
	# is then double), clang in float: fast excess precision gives the float functions the
	# evaluation the target's libm has (Debian's s390x musl differs in 16 functions' last bits)
	s390x-linux-musl) echo "built gcc-s390x-linux-gnu|s390x-linux-gnu-gcc -U__FP_FAST_FMA|s390x-linux-musl|-fexcess-precision=fast" ;;
	i686-linux-musl) echo "built gcc|gcc -m32 -march=pentium4 -mfpmath=sse|i386-linux-musl" ;;
	powerpc-linux-musl) echo "built gcc-powerpc-linux-gnu|powerpc-linux-gnu-gcc -mlong-double-64 -msecure-plt|powerpc-linux-musl" ;;
	powerpc64-linux-musl) echo "built gcc-powerpc64-linux-gnu|powerpc64-linux-gnu-gcc -mabi=elfv2 -mlong-double-64 -U__FP_FAST_FMA|powerpc64-linux-musl" ;;
	powerpc64le-linux-musl) echo "built gcc-powerpc64le-linux-gnu|powerpc64le-linux-gnu-gcc -mlong-double-64 -U__FP_FAST_FMA|powerpc64le-linux-musl" ;;
	riscv64-linux-musl) echo "built gcc-riscv64-linux-gnu|riscv64-linux-gnu-gcc -U__FP_FAST_FMA|riscv64-linux-musl" ;;
	aarch64_be-linux-musl) echo "built gcc-aarch64-linux-gnu|aarch64-linux-gnu-gcc -mbig-endian|aarch64_be-linux-musl" ;;
	armv6-rpi1-linux-musleabihf) echo "built gcc-arm-linux-gnueabihf|arm-linux-gnueabihf-gcc -marm -march=armv6kz+fp -mfpu=vfp -mfloat-abi=hard|arm-linux-musleabihf" ;;
	*) return 2 ;;
	esac
}

ref_musl() {
	rm_target=$1 rm_dir=$2 rm_state=$3
	rm_kind=$(ref_musl_kind "$rm_target") || return 2
	mkdir -p "$rm_dir"
	case $rm_kind in
	debian\ *)
		set -- $rm_kind
		rm_version=$(sed -n 's/^version: *"*\([^"]*\)"*$/\1/p' "$ROOT/sources/musl.yaml")
		rm_debver=$(apt-cache policy musl-dev 2>/dev/null | sed -n 's/^ *Candidate: *//p')
		case $rm_debver in "$rm_version"-*) ;; *)
			echo "$rm_target: Debian's musl is $rm_debver, the sysroots' $rm_version: no reference" >&2
			return 2 ;;
		esac
		mkdir -p "$rm_dir/deb"
		for p in musl-dev musl; do
			deb=$(deb_fetch "$rm_state" "$REF_MUSL_ARCHES" "$p:$2=$rm_debver" "$rm_dir/deb") || return 1
			dpkg-deb -x "$deb" "$rm_dir/deb/root"
		done
		cp "$rm_dir/deb/root/lib/$3/libc.so" "$rm_dir/libc.so" || return 1
		cp -r "$rm_dir/deb/root/usr/include/$3" "$rm_dir/include" || return 1
		for f in $REF_MUSL_FILES; do
			[ "$f" = libc.so ] || cp "$rm_dir/deb/root/usr/lib/$3/$f" "$rm_dir/$f" || return 1
		done
		REF_WHAT="Debian's gcc-built musl $rm_debver ($2)"
		;;
	built\ *)
		rm_kind=${rm_kind#built }
		rm_pkg=${rm_kind%%|*} rm_rest=${rm_kind#*|}
		rm_cc=${rm_rest%%|*} rm_rest=${rm_rest#*|}
		rm_mt=${rm_rest%%|*} rm_cflags=
		[ "$rm_mt" = "$rm_rest" ] || rm_cflags=${rm_rest#*|}
		command -v "${rm_cc%% *}" >/dev/null ||
			{ echo "$rm_target: ${rm_cc%% *} is missing: apt-get install $rm_pkg" >&2; return 1; }
		rm_version=$(sed -n 's/^ *musl: *\([0-9.]*\).*/\1/p' "$ROOT/targets/$rm_target.yaml" | head -1)
		[ -n "$rm_version" ] || rm_version=$(sed -n 's/^version: *"*\([^"]*\)"*$/\1/p' "$ROOT/sources/musl.yaml")
		rm_sum=$(grep -A3 "releases/musl-$rm_version.tar.gz\$" "$ROOT/sources/musl.yaml" $ROOT/sources/musl-*.yaml 2>/dev/null |
			sed -n 's/.*sha256: *//p' | head -1)
		rm_tarball=${CROSSROOT_CACHE:-$ROOT/work/cache}/downloads/$rm_sum
		[ -n "$rm_sum" ] && [ -f "$rm_tarball" ] ||
			{ echo "$rm_target: musl $rm_version's verified download is missing (crossroot fetch $rm_target)" >&2; return 1; }
		echo "$rm_sum  $rm_tarball" | sha256sum -c --quiet - ||
			{ echo "$rm_tarball: not musl $rm_version's pinned sha256 $rm_sum" >&2; return 1; }
		rm_builtins=$(ls "$ROOT"/sysroots/"$rm_target"/usr/lib/clang/*/lib/*/libclang_rt.builtins.a 2>/dev/null | head -1)
		# no sysroot: the cross gcc's own libgcc
		[ -n "$rm_builtins" ] || rm_builtins=$(${rm_cc} -print-libgcc-file-name)
		[ -f "$rm_builtins" ] || { echo "$rm_target: no compiler-rt builtins in its sysroot (crossroot build $rm_target)" >&2; return 1; }
		mkdir "$rm_dir/src"
		tar -xzf "$rm_tarball" -C "$rm_dir/src" --strip-components=1
		for p in "$ROOT"/patches/musl/"$rm_version"/*.patch; do patch -s -p1 -d "$rm_dir/src" <"$p" || return 1; done
		(cd "$rm_dir/src" && CC="$rm_cc" CFLAGS="-O2${rm_cflags:+ $rm_cflags}" LIBCC="$rm_builtins" ./configure --target="$rm_mt" >/dev/null &&
			make -s -j"$(nproc)" AR=llvm-ar-19 RANLIB=llvm-ranlib-19 $(for f in $REF_MUSL_FILES; do echo lib/$f; done)) >"$rm_dir/build.log" 2>&1 ||
			{ echo "$rm_target: building the reference musl failed; the end of $rm_dir/build.log:" >&2
			  tail -20 "$rm_dir/build.log" >&2; return 1; }
		for f in $REF_MUSL_FILES; do cp "$rm_dir/src/lib/$f" "$rm_dir/$f"; done
		make -s -C "$rm_dir/src" install-headers DESTDIR="$rm_dir/hdr" prefix=/ >>"$rm_dir/build.log" 2>&1 &&
			mv "$rm_dir/hdr/include" "$rm_dir/include" || return 1
		REF_WHAT="musl $rm_version built by Debian's gcc $(${rm_cc%% *} -dumpfullversion 2>/dev/null || echo ?) ($rm_cc${rm_cflags:+ $rm_cflags})"
		;;
	esac
}
