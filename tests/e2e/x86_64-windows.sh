#!/bin/sh
# Windows in make check: x86_64-w64-mingw32 built from real sources (mingw-w64 10's headers,
# C runtime and winpthreads, compiler-rt builtins, a libatomic DLL, libunwind + libc++abi +
# libc++ as DLLs and static; about 4 to 5 min cold on 2 cores, the llvm-project tree shared with
# the other end-to-end tests through the cache), its programs run under wine, a user's C and
# C++ programs (DLLs and static), a resource script through windres, a CMake project with
# CTest and a Meson project with meson test, built with nothing but the sysroot's files.
. "$(dirname "$0")/../lib/common.sh"
TARGET=x86_64-w64-mingw32
CACHE=${CROSSROOT_CACHE:-$ROOT/work/cache}
C="$CROSSROOT --work $T/work --out $T/sysroots --cache $CACHE"
S=$T/sysroots/$TARGET
# wine's prefix for this test alone (made by the run wrapper on first use)
WINEPREFIX=$T/wine
export WINEPREFIX

build_and_test $TARGET
check "every program that needs nothing Windows lacks passes" 0 " 0 failed"
for p in hello builtins math fma_flags pthreads tls atomics_c11 cxx_atomic cxx_exceptions \
	cxx_threads cxx_filesystem cxx_format; do
	assert "$p ran under wine, static and as a program with DLLs" \
		sh -c "grep -q '^ok   $p  *static' '$T/out' && grep -q '^ok   $p  *dynamic' '$T/out'"
done
assert "a DLL loaded at run time (LoadLibrary, GetProcAddress, its TLS)" \
	grep -q "^ok   dll_load .*dynamic" "$T/out"
assert "C++ exceptions thrown in a DLL are caught in the program" \
	grep -q "^ok   cxx_exceptions_shared .*dynamic" "$T/out"
assert "programs of what Windows lacks are skipped, with the reason" \
	grep -q "^skip dlopen .*($TARGET has no dlopen)" "$T/out"
assert "Linux's own programs are skipped, with the reason" \
	grep -q "^skip host_isolation .*(a program for Linux only)" "$T/out"
run cat "$T/table.md"
check "the support table names wine and the C library the target names" 0 \
	"| $TARGET | " "mingw-w64" "| wine |"

args_program
# clang's MinGW driver adds LIBRARY_PATH's directories to every link: the wrappers clear it
mkdir -p "$T/badlib"
echo "not an archive" >"$T/badlib/libmingw32.a"
LIBRARY_PATH=$T/badlib run "$S/bin/$TARGET-clang" -O2 "$T/args.c" -o "$T/args.exe"
check "the C wrapper compiles and links with no other flag (and no host LIBRARY_PATH)" 0
run file "$T/args.exe"
check "the program is a 64-bit Windows program" 0 "PE32+ executable" "x86-64"
CROSSROOT_TEST_VAR=yes run "$S/bin/$TARGET-run" "$T/args.exe" "$T/input.txt" two
check "the run wrapper passes arguments, environment and files, and the exit status" 14 \
	"argc=3 last=two var=yes" "read: from the host"
run "$S/bin/$TARGET-run" "$T/nonexistent.exe"
check "a missing program is exit status 127" 127
run "$S/bin/$TARGET-run" "$T/input.txt"
check "a file that is not a Windows program is exit status 126" 126

words_program
for link in dynamic static; do
	flag=
	[ $link = static ] && flag=-static
	run "$S/bin/$TARGET-clang++" -std=c++20 -O2 -DWITH_THREADS $flag "$T/prog.cpp" -o "$T/prog-$link.exe"
	check "the C++ wrapper builds iostreams, fstream, std::filesystem, threads, exceptions ($link)" 0
	run "$S/bin/$TARGET-run" "$T/prog-$link.exe" "$T/words.txt"
	check "the C++ program runs ($link)" 0 "a=1" "b=2" "size 6" "caught: thrown in a thread"
done
run "$S/bin/$TARGET-objdump" -p "$T/prog-dynamic.exe"
check "by default a program imports libc++ and libunwind from their DLLs" 0 \
	"DLL Name: libc++.dll" "DLL Name: libunwind.dll"
run "$S/bin/$TARGET-objdump" -p "$T/prog-static.exe"
assert "-static: no DLL of the sysroot's" sh -c "! grep -q 'DLL Name: lib' '$T/out'"

# a resource script, compiled by the sysroot's windres and linked into the program
cat >"$T/strings.rc" <<'EOT'
#include <winver.h>
STRINGTABLE
BEGIN
	1 "a string from the resources"
END
EOT
cat >"$T/res.c" <<'EOT'
#include <windows.h>
#include <stdio.h>
int main(void)
{
	char text[64];
	int n = LoadStringA(GetModuleHandleA(NULL), 1, text, sizeof text);
	printf("%d: %s\n", n, n > 0 ? text : "(none)");
	return n > 0 ? 0 : 1;
}
EOT
run "$S/bin/$TARGET-windres" "$T/strings.rc" -o "$T/strings.o"
check "windres compiles a resource script that includes the sysroot's headers" 0
run "$S/bin/$TARGET-clang" "$T/res.c" "$T/strings.o" -o "$T/res.exe"
check "the resource object links" 0
run "$S/bin/$TARGET-run" "$T/res.exe"
check "the program reads its resource" 0 "27: a string from the resources"

mkdir -p "$T/cm"
cat >"$T/cm/CMakeLists.txt" <<'EOT'
cmake_minimum_required(VERSION 3.13)
project(windemo C)
enable_testing()
add_executable(args args.c)
add_test(NAME reads-input COMMAND args ${CMAKE_CURRENT_SOURCE_DIR}/input.txt)
set_tests_properties(reads-input PROPERTIES WILL_FAIL TRUE)
EOT
cp "$T/args.c" "$T/input.txt" "$T/cm/"
cmake_ctest "$T/cm"
assert "CMake's executable is args.exe" test -f "$T/cm/build/args.exe"
meson_args_test "files('input.txt')"

finish
