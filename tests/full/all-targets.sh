#!/bin/sh
# Every target in targets/, built and tested for real (make check-all; 6 to 7 hours cold on
# 2 cores plus about 2.5 hours per LLVM version built from source, 25 min when every stage is
# cached). Uses the project's own work/ and sysroots/ so the results stay usable.
# Checks what `file` and `readelf` say of produced binaries: machine, ABI, interpreter.
. "$(dirname "$0")/../lib/common.sh"
cd "$ROOT" || exit 1
C="$CROSSROOT"

run $C build --all
cat "$T/out"
check "crossroot build --all" 0
mkdir -p "$ROOT/docs"
run $C test --all --table "$ROOT/docs/targets.md"
cat "$T/out"
check "crossroot test --all (support table in docs/targets.md)" 0 "support table written to"
assert "no test failed" sh -c "! grep -q '^FAIL' $T/out"

printf '#include <stdio.h>\nint main(void){puts("hello");return 0;}\n' >"$T/hello.c"
printf '#include <iostream>\nint main(){std::cout << "hello c++" << std::endl;}\n' >"$T/hello.cpp"

# target  file(1) machine  interpreter  qemu
while read -r target machine interp qemu; do
	S=$ROOT/sysroots/$target
	"$S/bin/$target-clang" "$T/hello.c" -o "$T/$target-c" &&
	"$S/bin/$target-clang++" "$T/hello.cpp" -o "$T/$target-cxx" &&
	"$S/bin/$target-clang++" -static "$T/hello.cpp" -o "$T/$target-cxx-static"
	run file "$T/$target-c" "$T/$target-cxx" "$T/$target-cxx-static"
	check "$target: file shows $machine" 0 "$machine" "interpreter $interp" "statically linked"
	run readelf -d "$T/$target-cxx"
	check "$target: C++ program needs the sysroot's libc++, libc++abi, libunwind and libc" 0 \
		"[libc++.so.1]" "[libc++abi.so.1]" "[libunwind.so.1]" "[libc.so]"
	assert "$target: no libgcc_s or libstdc++" sh -c "! grep -Eq 'libgcc|libstdc' $T/out"
	run $qemu -L "$S" "$T/$target-cxx"
	check "$target: dynamic C++ runs" 0 "hello c++"
	run $qemu "$T/$target-cxx-static"
	check "$target: static C++ runs without the sysroot" 0 "hello c++"
	assert "$target: loader link is relative" test "$(readlink "$S$interp")" = ../usr/lib/libc.so
done <<'EOT'
x86_64-linux-musl x86-64 /lib/ld-musl-x86_64.so.1 qemu-x86_64-static
aarch64-linux-musl aarch64 /lib/ld-musl-aarch64.so.1 qemu-aarch64-static
armv7-rpi2-linux-musleabihf EABI5 /lib/ld-musl-armhf.so.1 qemu-arm-static
riscv64-linux-musl RISC-V /lib/ld-musl-riscv64.so.1 qemu-riscv64-static
armv6-rpi1-linux-musleabihf EABI5 /lib/ld-musl-armhf.so.1 qemu-arm-static
powerpc64le-linux-musl LSB /lib/ld-musl-powerpc64le.so.1 qemu-ppc64le-static
powerpc64-linux-musl MSB /lib/ld-musl-powerpc64.so.1 qemu-ppc64-static
loongarch64-linux-musl LoongArch /lib/ld-musl-loongarch64.so.1 qemu-loongarch64-static
riscv32-linux-musl 32-bit /lib/ld-musl-riscv32.so.1 qemu-riscv32-static
i686-linux-musl 80386 /lib/ld-musl-i386.so.1 qemu-i386-static
s390x-linux-musl S/390 /lib/ld-musl-s390x.so.1 qemu-s390x-static
aarch64_be-linux-musl MSB /lib/ld-musl-aarch64_be.so.1 qemu-aarch64_be-static
mips64el-linux-musl MIPS64 /lib/ld-musl-mips64el.so.1 qemu-mips64el-static
mipsel-linux-musl MIPS32 /lib/ld-musl-mipsel.so.1 qemu-mipsel-static
powerpc-linux-musl PowerPC /lib/ld-musl-powerpc.so.1 qemu-ppc-static
EOT

for target in powerpc64le-linux-musl powerpc64-linux-musl; do
	run file "$T/$target-c"
	check "$target: 64-bit PowerPC with the ELFv2 ABI (what musl requires)" 0 "64-bit PowerPC" \
		"OpenPOWER ELF V2 ABI"
done

# Raspberry Pi 2: the code really uses Cortex-A7, NEON-VFPv4, hard float and Thumb-2, in the
# test program and in the runtimes themselves. Objects carry the calling convention as an
# attribute (Tag_ABI_VFP_args); linked files carry it in the ELF header flags (lld keeps the
# attributes of one input only, so a library's Tag_ABI_VFP_args may be absent).
S=$ROOT/sysroots/armv7-rpi2-linux-musleabihf
BUILTINS=$S/usr/lib/clang/19/lib/armv7-unknown-linux-musleabihf/libclang_rt.builtins.a
for f in "$T/armv7-rpi2-linux-musleabihf-cxx" "$S/usr/lib/libc++.so.1" "$S/usr/lib/libc.so" \
	"$BUILTINS"; do
	run readelf -A "$f"
	check "armv7 attributes of $(basename "$f")" 0 'Tag_CPU_name: "cortex-a7"' \
		"Tag_CPU_arch: v7" "Tag_THUMB_ISA_use: Thumb-2" "Tag_FP_arch: VFPv4" \
		"Tag_Advanced_SIMD_arch: NEONv1 with Fused-MAC"
done
run readelf -A "$BUILTINS"
check "armv7 builtins pass floats in VFP registers" 0 "Tag_ABI_VFP_args: VFP registers"
assert "no builtins object uses another float calling convention" sh -c \
	"! grep 'Tag_ABI_VFP_args' $T/out | grep -vq 'VFP registers'"
for f in "$T/armv7-rpi2-linux-musleabihf-cxx" "$S/usr/lib/libc++.so.1" "$S/usr/lib/libc.so"; do
	run readelf -h "$f"
	check "armv7 $(basename "$f") is hard-float EABI5" 0 "Version5 EABI, hard-float ABI"
done
run readelf -h "$T/riscv64-linux-musl-c"
check "riscv64 uses the LP64D ABI" 0 "RVC, double-float ABI"
finish
