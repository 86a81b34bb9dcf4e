#!/bin/sh
# End to end: a real aarch64-linux-musl sysroot from real sources, its programs run under
# qemu-user. Downloads and stage results are shared with the main job's cache
# ($CROSSROOT_CACHE, default work/cache), so a machine that already built it reuses them;
# the work directory and the sysroot are fresh.
. "$(dirname "$0")/../lib/common.sh"
TARGET=aarch64-linux-musl
CACHE=${CROSSROOT_CACHE:-$ROOT/work/cache}
C="$CROSSROOT -C $ROOT --work $T/work --out $T/sysroots --cache $CACHE"
S=$T/sysroots/$TARGET

run $C build $TARGET
check "crossroot build $TARGET" 0 "sysroot $TARGET: $S"
cat "$T/out"

run $C test $TARGET
cat "$T/out"
check "crossroot test $TARGET" 0 " 0 failed"
check "a program of another system's own API is skipped, with the reason" 0 \
	"skip dll_load                     (a program for Windows only)"

# A program's header exempts one qemu from running it (not-run-under), and only that one.
mkdir -p "$T/hdr/tests/sysroot"
for d in targets stages sources patches keys; do ln -s "$ROOT/$d" "$T/hdr/$d"; done
printf '// not-run-under: qemu-aarch64-static: the reason here\nint main(void){return 1;}\n' \
	>"$T/hdr/tests/sysroot/exempt_here.c"
printf '// not-run-under: qemu-ppc-static: another qemu\n#include <stdio.h>\nint main(void){puts("ran");return 0;}\n' \
	>"$T/hdr/tests/sysroot/runs_here.c"
echo ran >"$T/hdr/tests/sysroot/runs_here.expected"
# native: only where the host's CPU runs the target's programs; elsewhere not-run holds
printf '// native: the reason\n// not-run: qemu cannot\nint main(void){return 1;}\n' \
	>"$T/hdr/tests/sysroot/native_only.c"
run $CROSSROOT -C "$T/hdr" --work "$T/hdrwork" --out "$T/sysroots" test --table "$T/notes.md" $TARGET
check "not-run-under: built and linked, not run under the qemu it names" 0 \
	"exempt_here                  static   built and linked; not run: the reason here" \
	"exempt_here                  dynamic  built and linked; not run: the reason here"
assert "the table's cell points to a note that says why it was not run" sh -c \
	"grep -qxF '| exempt_here | built and linked, not run (note 1) |' '$T/notes.md' &&
	 grep -qxF 'Why programs were built and linked but not run:' '$T/notes.md' &&
	 grep -qxF '1. the reason here' '$T/notes.md'"
assert "not-run-under: another qemu's exemption does not apply" sh -c \
	"grep -q '^ok   runs_here  *static\$' $T/out && grep -q '^ok   runs_here  *dynamic\$' $T/out"
if [ "$(uname -m)" != aarch64 ]; then
	check "native: on a host of another architecture, the program is not run" 0 \
		"native_only                  static   built and linked; not run: qemu cannot" \
		"native_only                  dynamic  built and linked; not run: qemu cannot"
fi

# A header line the runner does not understand fails that program, naming the file and line,
# instead of being ignored (the program would run, or be built, as its author did not mean).
mkdir -p "$T/bad/tests/sysroot"
for d in targets stages sources patches keys; do ln -s "$ROOT/$d" "$T/bad/$d"; done
B=$T/bad/tests/sysroot
printf '// link: dynamic\n// not-run-under: qemu-aarch64-static\nint main(void){return 1;}\n' >"$B/no_reason.c"
printf '// requries: c++\nint main(void){return 0;}\n' >"$B/misspelt.c"
printf '// exit: seven\nint main(void){return 7;}\n' >"$B/bad_exit.c"
printf '// link: shared\nint main(void){return 0;}\n' >"$B/bad_link.c"
printf '// system: Windws\nint main(void){return 0;}\n' >"$B/bad_system.c"
run $CROSSROOT -C "$T/bad" --work "$T/badwork" --out "$T/sysroots" test $TARGET
check "wrong headers fail their programs, naming file and line" 1 \
	"FAIL no_reason                    wrong header: $B/no_reason.c:2: 'not-run-under: qemu-aarch64-static': the form is not-run-under: <qemu>: <why>" \
	"FAIL misspelt                     wrong header: $B/misspelt.c:1: unknown header 'requries:'" \
	"FAIL bad_exit                     wrong header: $B/bad_exit.c:1: exit 'seven': an exit status is a number from 0 to 255" \
	"FAIL bad_link                     wrong header: $B/bad_link.c:1: link 'shared': a link is static or dynamic" \
	"FAIL bad_system                   wrong header: $B/bad_system.c:1: system 'Windws': a system is Linux, WASI, Windows or Generic"

printf '#include <stdio.h>\nint main(void){puts("hello");return 0;}\n' >"$T/hello.c"
run "$S/bin/$TARGET-clang" "$T/hello.c" -o "$T/h"
check "wrapper compiles with no other flag" 0
run qemu-aarch64-static -L "$S" "$T/h"
check "dynamic hello runs under qemu" 0 hello
run "$S/bin/$TARGET-clang" -static "$T/hello.c" -o "$T/hs"
check "static link" 0
run qemu-aarch64-static "$T/hs"
check "static hello runs under qemu without the sysroot" 0 hello
run readelf -d "$T/h"
check "dynamic hello needs only the new libc" 0 "Shared library: [libc.so]"
assert "no other NEEDED entry" test "$(grep -c NEEDED "$T/out")" = 1
run readelf -l "$T/h"
check "interpreter is musl's loader in the sysroot's convention" 0 "[Requesting program interpreter: /lib/ld-musl-aarch64.so.1]"
run file "$T/h" "$T/hs"
check "file sees aarch64 binaries" 0 "ARM aarch64" "statically linked" "dynamically linked"

# Every input of the link comes from the new sysroot: never the host's libraries or libgcc.
"$S/bin/$TARGET-clang" -c "$T/hello.c" -o "$T/hello.o"
run "$S/bin/$TARGET-clang" "$T/hello.o" -o "$T/h2" -Wl,--trace
check "link trace" 0
if grep -v "^$T/" "$T/out" | grep -q .; then
	not_ok "inputs from outside the sysroot:"; grep -v "^$T/" "$T/out" | sed 's/^/    | /'
else
	ok "every link input is inside the sysroot"
fi
assert "no libgcc anywhere in the link" sh -c "! grep -q libgcc $T/out"

# C++ runtimes, shared: one copy of each in a process. libc++.so.1 needs libc++abi.so.1, which
# needs libunwind.so.1, and neither carries the other's code (two copies of __cxa_* or of
# the unwinder in one process break exceptions and terminate handlers).
L=$S/usr/lib
run readelf -d "$L/libc++.so.1"
check "libc++.so.1 needs libc++abi.so.1 and libunwind.so.1" 0 "[libc++abi.so.1]" "[libunwind.so.1]"
run readelf -d "$L/libc++abi.so.1"
check "libc++abi.so.1 needs libunwind.so.1" 0 "[libunwind.so.1]"
assert "libc++.so.1 does not define libc++abi's or libunwind's symbols" sh -c \
	"! llvm-nm-19 -D --defined-only '$L/libc++.so.1' | grep -Eq ' (__cxa_throw|_Unwind_RaiseException)\$'"
assert "libc++abi.so.1 defines __cxa_throw" sh -c "llvm-nm-19 -D --defined-only '$L/libc++abi.so.1' | grep -q ' __cxa_throw\$'"
printf '#include <iostream>\nint main(){std::cout << "hello c++" << std::endl;}\n' >"$T/hello.cpp"
run "$S/bin/$TARGET-clang++" "$T/hello.cpp" -o "$T/hcxx"
check "clang++ wrapper compiles with no other flag" 0
run readelf -d "$T/hcxx"
check "a C++ program needs the sysroot's runtimes" 0 "[libc++.so.1]" "[libc++abi.so.1]" "[libc.so]"
assert "no libgcc_s or libstdc++" sh -c "! grep -Eq 'libgcc|libstdc' $T/out"
run qemu-aarch64-static -L "$S" "$T/hcxx"
check "dynamic C++ hello runs" 0 "hello c++"

# 16-byte atomics need libatomic: the toolchain links it where needed, users never add
# -latomic (upstream clang still asks them to: llvm-project issue 73361).
cat >"$T/atomic16.cpp" <<'EOT'
#include <atomic>
#include <cstdio>
struct pair { long a, b; };
int main() {
	std::atomic<pair> p{{1, 2}};
	pair want{1, 2};
	bool swapped = p.compare_exchange_strong(want, pair{3, 4});
	std::printf("%d %ld %ld\n", swapped, p.load().a, p.load().b);
}
EOT
for mode in dynamic static; do
	flag=; [ $mode = static ] && flag=-static
	run "$S/bin/$TARGET-clang++" $flag "$T/atomic16.cpp" -o "$T/atomic16-$mode"
	check "16-byte std::atomic links without -latomic ($mode)" 0
	run qemu-aarch64-static -L "$S" "$T/atomic16-$mode"
	check "16-byte std::atomic runs ($mode)" 0 "1 3 4"
done
run "$S/bin/$TARGET-clang" "$T/hello.c" -o "$T/h3"
run readelf -d "$T/h3"
assert "a program without atomics does not need libatomic" sh -c "! grep -q atomic '$T/out'"

# The sysroot carries its own loader path file, so a host's (Debian's musl package installs
# /etc/ld-musl-<arch>.path) never steers its programs under qemu -L.
assert "the sysroot has its own /etc/ld-musl-aarch64.path" test -s "$S/etc/ld-musl-aarch64.path"
HOSTPATH=/etc/ld-musl-aarch64.path
if [ "$(id -u)" = 0 ] && [ ! -e "$HOSTPATH" ]; then
	echo /nonexistent >"$HOSTPATH"
	run qemu-aarch64-static -L "$S" "$T/hcxx"
	rm -f "$HOSTPATH"
	check "a host loader path file does not leak into qemu runs" 0 "hello c++"
else
	echo "skip   host loader path file (needs root and no $HOSTPATH on the host)"
fi

# The CMake toolchain file: a project builds with it alone, and pkg-config never reads the
# host's .pc files (the host has libcrypto.pc: libssl-dev is one of crossroot's packages)
mkdir -p "$T/cm"
cat >"$T/cm/CMakeLists.txt" <<'EOT'
cmake_minimum_required(VERSION 3.16)
project(cm C)
find_package(PkgConfig REQUIRED)
pkg_check_modules(CRYPTO libcrypto)
message(STATUS "pkg-config: ${PKG_CONFIG_EXECUTABLE}; libcrypto found: '${CRYPTO_FOUND}'")
add_executable(cm main.c)
EOT
printf '#include <stdio.h>\nint main(void){puts("cmake ok");return 0;}\n' >"$T/cm/main.c"
run cmake -S "$T/cm" -B "$T/cm/b" -DCMAKE_TOOLCHAIN_FILE="$S/share/crossroot/toolchain.cmake"
check "CMake uses the sysroot's pkg-config, which does not find the host's libcrypto" 0 \
	"pkg-config: $S/bin/$TARGET-pkg-config; libcrypto found: ''"
run cmake --build "$T/cm/b"
check "the CMake project builds" 0
run qemu-aarch64-static -L "$S" "$T/cm/b/cm"
check "and runs" 0 "cmake ok"

# A staged dependency chain, as users build one: a shared library installed with DESTDIR into
# a staging directory (not the sysroot), then a CMake project that finds it through
# pkg-config and CMAKE_FIND_ROOT_PATH and runs its test with ctest, under qemu.
ST=$T/staging
mkdir -p "$T/dep" "$ST/usr/include" "$ST/usr/lib/pkgconfig"
printf 'int dep_answer(void);\n' >"$ST/usr/include/dep.h"
printf 'int dep_answer(void) { return 42; }\n' >"$T/dep/dep.c"
run "$S/bin/$TARGET-clang" -shared -fPIC -Wl,-soname,libdep.so.1 "$T/dep/dep.c" -o "$ST/usr/lib/libdep.so.1"
check "a shared library for the staging directory" 0
ln -sf libdep.so.1 "$ST/usr/lib/libdep.so"
printf 'prefix=/usr\nincludedir=${prefix}/include\nlibdir=${prefix}/lib\nName: dep\nDescription: d\nVersion: 1\nCflags: -I${includedir}\nLibs: -L${libdir} -ldep\n' >"$ST/usr/lib/pkgconfig/dep.pc"
mkdir -p "$T/use"
cat >"$T/use/CMakeLists.txt" <<'EOT'
cmake_minimum_required(VERSION 3.16)
project(use C)
find_package(PkgConfig REQUIRED)
pkg_check_modules(DEP REQUIRED IMPORTED_TARGET dep)
add_executable(use main.c)
target_link_libraries(use PkgConfig::DEP)
enable_testing()
add_test(NAME answer COMMAND use)
set_tests_properties(answer PROPERTIES PASS_REGULAR_EXPRESSION "answer 42")
EOT
printf '#include <stdio.h>\n#include <dep.h>\nint main(void){printf("answer %%d\\n", dep_answer());return 0;}\n' >"$T/use/main.c"
run cmake -S "$T/use" -B "$T/use/b" -DCMAKE_TOOLCHAIN_FILE="$S/share/crossroot/toolchain.cmake" \
	-DCMAKE_FIND_ROOT_PATH="$ST"
check "CMake finds the staged library through pkg-config (CMAKE_FIND_ROOT_PATH alone)" 0
run cmake --build "$T/use/b"
check "the project links against the staged library" 0
run sh -c "cd '$T/use/b' && ctest --output-on-failure"
check "ctest runs the test under qemu with the staged library" 0 "100% tests passed"
# A project asking for an old CMake (policies OLD, as zlib's) with old-style add_test(name exe)
mkdir -p "$T/old"
cat >"$T/old/CMakeLists.txt" <<'EOT'
cmake_minimum_required(VERSION 2.8.12)
project(old C)
add_executable(old main.c)
enable_testing()
add_test(old old first)
set_tests_properties(old PROPERTIES PASS_REGULAR_EXPRESSION "argument first")
EOT
printf '#include <stdio.h>\nint main(int c, char **v){printf("argument %%s\\n", c > 1 ? v[1] : "none");return 0;}\n' >"$T/old/main.c"
run cmake -S "$T/old" -B "$T/old/b" -DCMAKE_TOOLCHAIN_FILE="$S/share/crossroot/toolchain.cmake" -Wno-dev -Wno-deprecated
check "a project asking for CMake 2.8.12 configures with the toolchain file" 0
run sh -c "cmake --build '$T/old/b' && cd '$T/old/b' && ctest --output-on-failure"
check "its old-style add_test runs under qemu" 0 "100% tests passed"
run "$S/bin/$TARGET-run" --staging "$ST" "$T/use/b/use"
check "so does $TARGET-run --staging" 0 "answer 42"
run sh -c ". '$S/share/crossroot/env.sh' && \$CC -print-prog-name=ld"
check "libtool's question for the linker names the target's (env.sh)" 0 "$S/bin/aarch64-unknown-linux-musl-ld"

# Meson 1.0 with the cross file alone: the staged dependency through pkg-config, the test
# run by meson test through the exe_wrapper
if command -v meson >/dev/null; then
	mkdir -p "$T/ms"
	cat >"$T/ms/meson.build" <<'EOT'
project('ms', 'c')
dep = dependency('dep')
exe = executable('ms', 'main.c', dependencies: dep)
test('answer', exe)
EOT
	cp "$T/use/main.c" "$T/ms/main.c"
	run env CROSSROOT_STAGING="$ST" meson setup --cross-file "$S/share/crossroot/meson-cross.ini" "$T/ms/b" "$T/ms"
	check "Meson finds the staged dependency with the cross file" 0 "Run-time dependency dep found: YES"
	run env CROSSROOT_STAGING="$ST" meson test -C "$T/ms/b"
	check "meson test runs the program under qemu" 0 "Ok:                 1"
else
	echo "skip   Meson (not installed)"
fi

# crossroot install: the staged library becomes part of the sysroot, no flag needed any more
run $C install $TARGET "$ST"
check "crossroot install lays the staging directory over the sysroot" 0 "sysroot $TARGET"
run "$S/bin/$TARGET-clang" "$T/use/main.c" -ldep -o "$T/use-installed"
check "installed headers and libraries need no flag" 0
run "$S/bin/$TARGET-run" "$T/use-installed"
check "and the run wrapper finds the library" 0 "answer 42"

# gdb on a dynamic program: shared libraries come from the sysroot
if command -v gdb-multiarch >/dev/null; then
	"$S/bin/$TARGET-clang" -g -O0 "$T/hello.c" -o "$T/hg"
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	"$S/bin/$TARGET-run" -g "$port" "$T/hg" >"$T/hg.out" 2>&1 &
	wait_listen "$port"
	run timeout 120 "$S/bin/$TARGET-gdb" -batch -ex "target remote 127.0.0.1:$port" -ex 'break main' \
		-ex continue -ex 'info sharedlibrary' -ex 'info line strlen' -ex continue "$T/hg"
	wait
	check "gdb stops in main of a dynamic program" 0 "Breakpoint 1, main" "exited normally"
	assert "its libc is the sysroot's" grep -q "$S/lib/ld-musl-aarch64.so.1\|$S/usr/lib/libc.so" "$T/out"
	# musl's DWARF, split into usr/lib/debug by the stage, found by its build ID
	assert "gdb has musl's lines (split debug information)" grep -q 'of "src/string/strlen.c"\|of ".*/src/string/strlen.c"' "$T/out"
	assert "libc.so itself carries no DWARF" sh -c "! $S/bin/$TARGET-readelf -S -W $S/usr/lib/libc.so | grep -q ' .debug_info'"
	# libc++'s containers shown by libc++'s own printers, which <target>-gdb loads
	cat >"$T/containers.cpp" <<'EOT'
#include <cstdio>
#include <map>
#include <string>
#include <vector>
int main() {
	std::vector<int> v{1, 2, 3};
	std::string s = "a string longer than the short buffer";
	std::map<int, std::string> m{{1, "one"}, {2, "two"}};
	std::printf("%zu %zu %zu\n", v.size(), s.size(), m.size());
	return 0;
}
EOT
	"$S/bin/$TARGET-clang++" -g -O0 "$T/containers.cpp" -o "$T/containers"
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	"$S/bin/$TARGET-run" -g "$port" "$T/containers" >"$T/containers.out" 2>&1 &
	wait_listen "$port"
	# as a user's shell would run it: Python free to write bytecode next to what it imports
	run env -u PYTHONDONTWRITEBYTECODE timeout 120 "$S/bin/$TARGET-gdb" -batch \
		-ex "target remote 127.0.0.1:$port" -ex 'break 10' -ex continue -ex 'print v' -ex 'print s' \
		-ex 'print m' -ex 'info line __cxa_throw' -ex continue "$T/containers"
	wait
	assert "gdb has libc++abi's lines (split debug information)" grep -q 'cxa_exception.cpp' "$T/out"
	check "gdb shows libc++ containers through libc++'s printers" 0 \
		"std::vector of length 3, capacity 3 = {1, 2, 3}" '"a string longer than the short buffer"' \
		'std::map with 2 elements = {[1] = "one", [2] = "two"}' "exited normally"
	# (the printers' bytecode, naming this sysroot's path, made the package refuse it)
	assert "loading the printers wrote nothing into the sysroot" sh -c "! find '$S' -name __pycache__ | grep -q ."
fi

# Profile-guided optimisation and coverage, when the sysroot has the sanitizers stage
if ls "$S"/usr/lib/clang/*/lib/*/libclang_rt.profile.a >/dev/null 2>&1; then
	cat >"$T/pgo.c" <<'EOT'
#include <stdio.h>
static int f(int i) { return i % 3 ? i : -i; }
int main(void) { long s = 0; for (int i = 0; i < 100000; i++) s += f(i); printf("%ld\n", s); return 0; }
EOT
	run "$S/bin/$TARGET-clang" -O2 -fprofile-instr-generate "$T/pgo.c" -o "$T/pgo"
	check "-fprofile-instr-generate links with no other flag" 0
	run sh -c "cd '$T' && LLVM_PROFILE_FILE='$T/pgo.profraw' '$S/bin/$TARGET-run' '$T/pgo'"
	check "the instrumented program runs" 0
	run llvm-profdata-19 merge -o "$T/pgo.profdata" "$T/pgo.profraw"
	check "llvm-profdata reads the profile written under qemu" 0
	run "$S/bin/$TARGET-clang" -O2 -fprofile-instr-use="$T/pgo.profdata" -Werror=profile-instr-unprofiled \
		-Werror=profile-instr-out-of-date "$T/pgo.c" -o "$T/pgo-opt"
	check "a rebuild uses it" 0
	mkdir -p "$T/cov"
	cp "$T/pgo.c" "$T/cov/cov.c"
	run sh -c "cd '$T/cov' && '$S/bin/$TARGET-clang' --coverage -c cov.c -o cov.o && '$S/bin/$TARGET-clang' --coverage cov.o -o cov && '$S/bin/$TARGET-run' ./cov"
	check "--coverage: the program runs" 0
	run sh -c "cd '$T/cov' && llvm-cov-19 gcov cov.c"
	check "llvm-cov gcov reads its .gcda" 0 "File 'cov.c'" "Lines executed:100.00% of"
else
	echo "skip   profile and coverage (no sanitizers stage in $TARGET)"
fi

# a package: no file of the sysroot may name this build's directories (libomp's assertions
# did, through a recipe's CMAKE_CXX_FLAGS that dropped -ffile-prefix-map), and it verifies
mkdir -p "$T/pkg"
run $C package -o "$T/pkg" $TARGET
check "crossroot package $TARGET: no file names a build directory" 0
run $CROSSROOT verify "$(ls "$T"/pkg/$TARGET-*.tar.zst)"
check "the package verifies against its manifest" 0

start=$(date +%s%N)
run $C build $TARGET
end=$(date +%s%N)
ms=$(( (end - start) / 1000000 ))
check "second build succeeds" 0 "sysroot $TARGET"
assert "second build rebuilt nothing" sh -c "! grep -q '^build ' $T/out"
if [ "$ms" -lt 1000 ]; then ok "no-op build took ${ms} ms (< 1000)"; else not_ok "no-op build took ${ms} ms"; fi
finish
