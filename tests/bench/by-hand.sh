#!/bin/sh
# Baseline (not a test): the aarch64-linux-musl sysroot built by a plain, sequential shell
# script with the same commands as the recipes, to measure crossroot's overhead against.
# Uses the tarballs of the download cache (work/cache, after `crossroot fetch`).
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
D=${CROSSROOT_CACHE:-$ROOT/work/cache}/downloads
W=$(mktemp -d /tmp/crossroot-byhand.XXXXXX)
trap 'rm -rf "$W"' EXIT
T=aarch64-unknown-linux-musl
B=/usr/lib/llvm-19/bin
S=$W/sysroot
R=$S/usr/lib/clang/19
J=$(nproc)
start=$(date +%s.%N)
lap() { now=$(date +%s.%N); printf '%-28s %6.1f s\n' "$1" "$(echo "$now - ${last:-$start}" | bc)"; last=$now; }
mkdir -p "$W/linux" "$W/llvm" "$W/musl" "$S"
tar -C "$W/musl" --strip-components=1 -xzf "$D/7d5b0b6062521e4627e099e4c9dc8248d32a30285e959b7eecaa780cf8cfd4a4"
for p in "$ROOT"/patches/musl/1.2.3/*; do patch -s -d "$W/musl" -p1 <"$p"; done
l=linux-6.1.176
t=llvm-toolchain-19_19.1.7
(xz -dc -T0 "$D/9aad4025973feea3f0d978e82ab7db97d8d5ce3f59fcc6b1f316153d66e3a504" |
	tar -C "$W/linux" --strip-components=1 -x --wildcards --wildcards-match-slash \
	"$l/Makefile" "$l/scripts/*" "$l/include/uapi/*" "$l/include/linux/compiler_types.h" "$l/usr/include/*" \
	"$l/arch/*/include/uapi/*" "$l/arch/*/Makefile" "$l/arch/*/tools/*" "$l/arch/*/entry/syscalls/*" \
	"$l/arch/*/kernel/syscalls/*" "$l/tools/include/*" "$l/tools/scripts/*") &
xz -dc -T0 "$D/ae498f3bc58ae2d9f64ef5f0c035c4240152bf015a5b7738b15c22e93bdc97ce" |
	tar -C "$W/llvm" --strip-components=1 -x --wildcards --wildcards-match-slash --exclude='*/test/*' \
	"$t/cmake/*" "$t/runtimes/*" "$t/llvm/cmake/*" "$t/llvm/utils/llvm-lit/*" "$t/compiler-rt/*" \
	"$t/libcxx/*" "$t/libcxxabi/*" "$t/libunwind/*"
wait
lap "extract (parallel)"
make -s -C "$W/linux" O="$W/lb" ARCH=arm64 HOSTCC="$B/clang" INSTALL_HDR_PATH="$S/usr" headers_install >/dev/null
lap "linux headers"
CC="$B/clang --target=$T --sysroot=$S -resource-dir=$R -fuse-ld=lld --rtlib=compiler-rt --unwindlib=none"
mkdir -p "$W/mh" && cd "$W/mh"
"$W/musl/configure" --target=$T --prefix=/usr --syslibdir=/lib CC="$CC" AR=$B/llvm-ar RANLIB=$B/llvm-ranlib >/dev/null
make -s DESTDIR="$S" install-headers >/dev/null
lap "musl headers"
mkdir -p "$W/rt" && cd "$W/rt"
cmake -G Ninja -S "$W/llvm/compiler-rt/lib/builtins" -B . -DCMAKE_BUILD_TYPE=Release -DCMAKE_SYSTEM_NAME=Linux \
	-DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_C_COMPILER=$B/clang -DCMAKE_ASM_COMPILER=$B/clang \
	-DCMAKE_C_COMPILER_TARGET=$T -DCMAKE_ASM_COMPILER_TARGET=$T -DCMAKE_SYSROOT="$S" \
	-DCMAKE_AR=$B/llvm-ar -DCMAKE_NM=$B/llvm-nm -DCMAKE_RANLIB=$B/llvm-ranlib \
	-DCMAKE_SHARED_LINKER_FLAGS="-fuse-ld=lld -nostartfiles" -DCMAKE_TRY_COMPILE_TARGET_TYPE=STATIC_LIBRARY \
	-DCMAKE_C_COMPILER_WORKS=ON -DCMAKE_ASM_COMPILER_WORKS=ON -DLLVM_CMAKE_DIR="$W/llvm/llvm/cmake/modules" \
	-DCOMPILER_RT_INSTALL_PATH=/usr/lib/clang/19 -DCOMPILER_RT_DEFAULT_TARGET_ONLY=ON \
	-DLLVM_ENABLE_PER_TARGET_RUNTIME_DIR=ON -DCOMPILER_RT_BUILD_BUILTINS=ON -DCOMPILER_RT_BUILD_CRT=ON \
	-DCOMPILER_RT_BUILD_STANDALONE_LIBATOMIC=ON >/dev/null
ninja -j"$J" >/dev/null && DESTDIR="$S" ninja install >/dev/null
cp -R "$B/../lib/clang/19/include" "$R/"
lap "compiler-rt builtins"
mkdir -p "$W/mb" && cd "$W/mb"
"$W/musl/configure" --target=$T --prefix=/usr --syslibdir=/lib CC="$CC" AR=$B/llvm-ar RANLIB=$B/llvm-ranlib \
	LIBCC="$R/lib/$T/libclang_rt.builtins.a" >/dev/null
make -s -j"$J" >/dev/null 2>&1 && make -s DESTDIR="$S" install-libs >/dev/null
lap "musl"
mkdir -p "$W/cx" && cd "$W/cx"
F="-resource-dir=$R"
cmake -G Ninja -S "$W/llvm/runtimes" -B . -DCMAKE_BUILD_TYPE=Release -DCMAKE_SYSTEM_NAME=Linux -DCMAKE_INSTALL_PREFIX=/usr \
	-DCMAKE_SYSROOT="$S" -DCMAKE_C_COMPILER=$B/clang -DCMAKE_CXX_COMPILER=$B/clang++ -DCMAKE_ASM_COMPILER=$B/clang \
	-DCMAKE_C_COMPILER_TARGET=$T -DCMAKE_CXX_COMPILER_TARGET=$T -DCMAKE_ASM_COMPILER_TARGET=$T \
	-DCMAKE_C_FLAGS="$F" -DCMAKE_CXX_FLAGS="$F" -DCMAKE_ASM_FLAGS="$F" \
	-DCMAKE_EXE_LINKER_FLAGS="-fuse-ld=lld --rtlib=compiler-rt --unwindlib=none" \
	-DCMAKE_SHARED_LINKER_FLAGS="-fuse-ld=lld --rtlib=compiler-rt --unwindlib=none" \
	-DCMAKE_AR=$B/llvm-ar -DCMAKE_NM=$B/llvm-nm -DCMAKE_RANLIB=$B/llvm-ranlib \
	-DCMAKE_C_COMPILER_WORKS=ON -DCMAKE_CXX_COMPILER_WORKS=ON -DLLVM_ENABLE_RUNTIMES="libunwind;libcxxabi;libcxx" \
	-DLLVM_ENABLE_PER_TARGET_RUNTIME_DIR=OFF -DLIBUNWIND_USE_COMPILER_RT=ON -DLIBCXXABI_USE_COMPILER_RT=ON \
	-DLIBCXX_USE_COMPILER_RT=ON -DLIBCXXABI_USE_LLVM_UNWINDER=ON -DLIBCXXABI_ENABLE_STATIC_UNWINDER=ON \
	-DLIBCXXABI_STATICALLY_LINK_UNWINDER_IN_SHARED_LIBRARY=OFF -DLIBCXX_CXX_ABI=libcxxabi \
	-DLIBCXX_ENABLE_ABI_LINKER_SCRIPT=ON -DLIBCXX_STATICALLY_LINK_ABI_IN_STATIC_LIBRARY=ON \
	-DLIBCXX_STATICALLY_LINK_ABI_IN_SHARED_LIBRARY=OFF -DLIBCXX_HAS_MUSL_LIBC=ON \
	-DLIBUNWIND_INCLUDE_TESTS=OFF -DLIBCXXABI_INCLUDE_TESTS=OFF -DLIBCXX_INCLUDE_TESTS=OFF \
	-DLIBCXX_INCLUDE_BENCHMARKS=OFF -DLLVM_INCLUDE_TESTS=OFF -DLLVM_INCLUDE_DOCS=OFF -DLIBCXX_INCLUDE_DOCS=OFF >/dev/null
ninja -j"$J" >/dev/null && DESTDIR="$S" ninja install >/dev/null
lap "libunwind + libc++abi + libc++"
last=$start
lap "total"
