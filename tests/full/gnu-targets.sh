#!/bin/sh
# make check-gnu: the GNU half of the runtime matrix built and tested for real - glibc, libgcc,
# libstdc++ and GNU libatomic (binutils 2.40, GCC 12.2.0, glibc 2.36), and the mixed
# combinations (glibc with the LLVM runtimes and every sanitizer runtime on aarch64 and x86_64).
# Cold, about 170 minutes on 2 cores (GCC's compiler is built once per target triple: aarch64
# glibc, armv7 glibc, aarch64 musl, x86_64 glibc; the three aarch64 targets took 62 min, armv7
# 50 min, x86_64 about 60); results stay in the project's work/ and stage cache, so a second
# run only tests: 4 minutes.
# Usage: tests/full/gnu-targets.sh [TARGET...] (default: the five below)
. "$(dirname "$0")/../lib/common.sh"
cd "$ROOT" || exit 1
C="$CROSSROOT"
TARGETS=${*:-aarch64-linux-gnu armv7-rpi2-linux-gnueabihf aarch64-linux-musl-libstdcxx aarch64-linux-gnu-libcxx x86_64-linux-gnu-libcxx}

start=$(date +%s)
run $C build $TARGETS
cat "$T/out"
check "crossroot build (the GNU targets)" 0
echo "build took $(( $(date +%s) - start )) s"
run $C test $TARGETS
cat "$T/out"
check "crossroot test (the GNU targets)" 0
assert "no test failed" sh -c "! grep -q '^FAIL' $T/out"
# glibc with the LLVM runtimes: the sanitizer programs compiler-rt builds only for glibc
# were not skipped, and thread_cancel ran, which needs the libgcc_s.so.1 glibc loads
case " $TARGETS " in *" aarch64-linux-gnu-libcxx "*)
	awk '/testing aarch64-linux-gnu-libcxx:/ {on = 1; next} /testing / {on = 0} on' "$T/out" >"$T/libcxx-out"
	for prog in asan hwasan msan tsan cfi safestack ubsan_standalone thread_cancel; do
		assert "aarch64-linux-gnu-libcxx: $prog passes (ASan, HWASan, MSan: built and linked, qemu cannot host them)" grep -q "^ok   $prog " "$T/libcxx-out"
	done
esac
# on an x86_64 host, the x86_64 sanitizer programs qemu cannot host run natively, through the
# sysroot's loader: ASan, LSan, MSan and TSan report for real
case " $TARGETS " in *" x86_64-linux-gnu-libcxx "*)
	awk '/testing x86_64-linux-gnu-libcxx:/ {on = 1; next} /testing / {on = 0} on' "$T/out" >"$T/x86-out"
	for prog in cfi safestack ubsan_standalone ubsan_minimal scudo thread_cancel; do
		assert "x86_64-linux-gnu-libcxx: $prog passes" grep -q "^ok   $prog " "$T/x86-out"
	done
	if [ "$(uname -m)" = x86_64 ]; then
		for prog in asan lsan msan tsan fuzzer; do
			assert "x86_64-linux-gnu-libcxx: $prog passes, run natively" grep -q "^ok   $prog  *dynamic (run natively)\$" "$T/x86-out"
		done
	fi
esac

printf '#include <stdio.h>\nint main(void){puts("hello");return 0;}\n' >"$T/hello.c"
printf '#include <iostream>\n#include <stdexcept>\nint main(){try{throw std::runtime_error("thrown");}catch(const std::exception &e){std::cout << "hello c++ " << e.what() << std::endl;}}\n' >"$T/hello.cpp"

# target  interpreter  qemu  C++ libraries it must need  libraries it must not need
while read -r target interp qemu needs needs_not; do
	case " $TARGETS " in *" $target "*) ;; *) continue ;; esac
	S=$ROOT/sysroots/$target
	"$S/bin/$target-clang" "$T/hello.c" -o "$T/$target-c" &&
	"$S/bin/$target-clang++" "$T/hello.cpp" -o "$T/$target-cxx" &&
	"$S/bin/$target-clang++" -static "$T/hello.cpp" -o "$T/$target-cxx-static"
	run "$S/bin/$target-readelf" -l -d "$T/$target-cxx"
	check "$target: C++ program asks for $interp" 0 "[Requesting program interpreter: $interp]"
	for lib in $(echo "$needs" | tr , ' '); do
		check "$target: C++ program needs $lib" 0 "[$lib]"
	done
	for lib in $(echo "$needs_not" | tr , ' '); do
		assert "$target: C++ program does not need $lib" sh -c "! grep -qF '[$lib' $T/out"
	done
	assert "$target: the loader is the sysroot's own" test -e "$S$interp"
	run $qemu -L "$S" "$T/$target-cxx"
	check "$target: dynamic C++ runs (exception caught)" 0 "hello c++ thrown"
	run $qemu "$T/$target-cxx-static"
	check "$target: static C++ runs without the sysroot" 0 "hello c++ thrown"
	assert "$target: GCC and binutils are not in the sysroot" sh -c "! ls $S/bin | grep -Eq -- '-(gcc|g\+\+|as|ld\.bfd)\$' && test ! -e $S/toolchain"
	# GNU-only assembler directives (pixman's NEON code): clang's integrated assembler rejects
	# them; -fno-integrated-as finds the sysroot's GNU as (gnu-as stage) with no flag
	case $target in *-libcxx) continue ;; esac
	case $target in arm*) printf '\t.syntax unified\n' ;; esac >"$T/$target-func.S"
	printf '\t.text\n\t.globl answer\n\t.type answer, %%function\n\t.func answer\nanswer:\n' >>"$T/$target-func.S"
	case $target in
	aarch64*) printf '\tmov w0, #42\n\tret\n' ;;
	*) printf '\tmovs r0, #42\n\tbx lr\n' ;;
	esac >>"$T/$target-func.S"
	printf '\t.endfunc\n\t.section .note.GNU-stack,"",%%progbits\n' >>"$T/$target-func.S"
	printf '#include <stdio.h>\nint answer(void);\nint main(void){printf("answer %%d\\n", answer());return 0;}\n' >"$T/$target-main.c"
	run "$S/bin/$target-clang" -c "$T/$target-func.S" -o "$T/$target-func.o"
	check "$target: the integrated assembler rejects .func" 1 "unknown directive"
	run "$S/bin/$target-clang" -fno-integrated-as -v "$T/$target-main.c" "$T/$target-func.S" -o "$T/$target-gas"
	check "$target: -fno-integrated-as assembles it" 0
	assert "$target: with the sysroot's GNU as" grep -Eq "^ *\"$S/(bin/\.\./)?usr/[^\"]*/bin/as\"" "$T/out"
	run $qemu -L "$S" "$T/$target-gas"
	check "$target: and the program runs" 0 "answer 42"
done <<'EOT'
aarch64-linux-gnu /lib/ld-linux-aarch64.so.1 qemu-aarch64-static libstdc++.so.6,libc.so.6 libc++
armv7-rpi2-linux-gnueabihf /lib/ld-linux-armhf.so.3 qemu-arm-static libstdc++.so.6,libc.so.6 libc++
aarch64-linux-musl-libstdcxx /lib/ld-musl-aarch64.so.1 qemu-aarch64-static libstdc++.so.6,libc.so libc++,libc.so.6
aarch64-linux-gnu-libcxx /lib/ld-linux-aarch64.so.1 qemu-aarch64-static libc++.so.1,libc.so.6 libstdc++,libgcc_s
x86_64-linux-gnu-libcxx /lib64/ld-linux-x86-64.so.2 qemu-x86_64-static libc++.so.1,libc.so.6 libstdc++,libgcc_s
EOT
for target in aarch64-linux-gnu armv7-rpi2-linux-gnueabihf; do
	case " $TARGETS " in *" $target "*) ;; *) continue ;; esac
	assert "$target: the sysroot has its own ld.so.cache" test -s "$ROOT/sysroots/$target/etc/ld.so.cache"
	assert "$target: clang is told libgcc and libstdc++" sh -c "grep -qx -- '--rtlib=libgcc' $ROOT/sysroots/$target/bin/$target.cfg && grep -qx -- '-stdlib=libstdc++' $ROOT/sysroots/$target/bin/$target.cfg"
done
case " $TARGETS " in *" armv7-rpi2-linux-gnueabihf "*)
	run "$ROOT/sysroots/armv7-rpi2-linux-gnueabihf/bin/armv7-rpi2-linux-gnueabihf-readelf" -A "$ROOT/sysroots/armv7-rpi2-linux-gnueabihf/usr/lib/libstdc++.so.6"
	check "armv7: libstdc++ is built for the Pi 2 (VFPv4, hard float)" 0 "TagName: FP_arch" "Description: VFPv4" "TagName: ABI_VFP_args" "Description: AAPCS VFP"
esac
finish
