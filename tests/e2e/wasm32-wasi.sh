#!/bin/sh
# WebAssembly in make check: wasm32-wasi built from real sources (wasi-libc, compiler-rt's
# bare-metal builtins, libc++ without exceptions and threads; about 1 min cold on 2 cores, the
# llvm-project tree shared with the other end-to-end tests through the cache), its programs run
# under Node.js's WASI, a user's C and C++ programs, a CMake project with CTest and a Meson
# project with meson test, built with nothing but the sysroot's files.
. "$(dirname "$0")/../lib/common.sh"
TARGET=wasm32-wasi
CACHE=${CROSSROOT_CACHE:-$ROOT/work/cache}
C="$CROSSROOT --work $T/work --out $T/sysroots --cache $CACHE"
S=$T/sysroots/$TARGET

build_and_test $TARGET
# Node.js 18 (Debian 12's) follows symbolic links wrongly in its WASI: cxx_filesystem's
# stat through a link and remove_all fail there, and nothing else does
node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$node_major" -ge 20 ]; then
	check "every program that needs nothing WASI lacks passes" 0 " 0 failed" "ok   cxx_filesystem"
else
	assert "Node.js $node_major: only cxx_filesystem fails (its WASI's symbolic links)" \
		sh -c "! grep '^FAIL' '$T/out' | grep -v '^FAIL cxx_filesystem '"
fi
for p in hello builtins iconv_euckr stdio_locale byte_order cxx_format cxx_iostream_locale; do
	assert "$p ran under node" grep -q "^ok   $p " "$T/out"
done
assert "programs that need threads, fenv or exceptions are skipped, with the reason" \
	grep -q "^skip pthreads .*($TARGET has no threads)" "$T/out"
run cat "$T/table.md"
check "the support table names WASI's runner and the C library the target names" 0 \
	"Node.js (WASI preview 1)" "| $TARGET | builtins wasi-libc libc++abi libc++ |"

args_program
run "$S/bin/$TARGET-clang" -O2 "$T/args.c" -o "$T/args.wasm"
check "the C wrapper compiles and links with no other flag" 0
run file "$T/args.wasm"
check "the program is a WebAssembly module" 0 "WebAssembly"
CROSSROOT_TEST_VAR=yes run "$S/bin/$TARGET-run" "$T/args.wasm" "$T/input.txt" two
check "the run wrapper passes arguments, environment and files, and the exit status" 14 \
	"argc=3 last=two var=yes" "read: from the host"
run "$S/bin/$TARGET-run" "$T/nonexistent.wasm"
check "a missing program is exit status 127" 127
run "$S/bin/$TARGET-run" "$T/input.txt"
check "a file that is not WebAssembly is exit status 126" 126

words_program
run "$S/bin/$TARGET-clang++" -std=c++20 -O2 "$T/prog.cpp" -o "$T/prog.wasm"
check "the C++ wrapper builds iostreams, fstream and std::filesystem" 0
run "$S/bin/$TARGET-run" "$T/prog.wasm" "$T/words.txt"
check "the C++ program runs" 0 "a=1" "b=2" "size 6"
printf 'int main() { try { throw 1; } catch (int) { return 0; } }\n' >"$T/throw.cpp"
run "$S/bin/$TARGET-clang++" "$T/throw.cpp" -o "$T/throw.wasm"
check "C++ exceptions are a compile error, not a link error" 1
assert "no module was written for the program that throws" test ! -e "$T/throw.wasm"

mkdir -p "$T/cm"
cat >"$T/cm/CMakeLists.txt" <<'EOT'
cmake_minimum_required(VERSION 3.13)
project(wasmdemo C)
enable_testing()
add_executable(args args.c)
add_test(NAME reads-input COMMAND args ${CMAKE_CURRENT_SOURCE_DIR}/input.txt)
set_tests_properties(reads-input PROPERTIES WILL_FAIL TRUE)
EOT
cp "$T/args.c" "$T/input.txt" "$T/cm/"
cmake_ctest "$T/cm"
assert "CMake's executable is args.wasm" test -f "$T/cm/build/args.wasm"
meson_args_test "files('input.txt')"

finish
