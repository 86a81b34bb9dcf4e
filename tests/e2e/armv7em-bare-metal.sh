#!/bin/sh
# Bare metal in make check: armv7em-none-eabihf (Cortex-M4F) built from real sources (compiler-rt's
# bare-metal builtins, picolibc, libunwind + libc++abi + libc++ without exceptions and threads;
# about 2 min 30 s cold on 2 cores), its programs run on qemu-system-arm's mps2-an386 board
# through semihosting, and a user's C and C++ programs, a CMake project with CTest and a Meson
# project with meson test, built with nothing but the sysroot's files.
. "$(dirname "$0")/../lib/common.sh"
TARGET=armv7em-none-eabihf
CACHE=${CROSSROOT_CACHE:-$ROOT/work/cache}
C="$CROSSROOT --work $T/work --out $T/sysroots --cache $CACHE"
S=$T/sysroots/$TARGET

build_and_test $TARGET
check "every program that needs nothing bare metal lacks passes" 0 " 0 failed"
for p in hello builtins stdio_locale iconv_euckr cxx_format cxx_iostream_locale; do
	assert "$p ran on the board" grep -q "^ok   $p " "$T/out"
done
assert "programs that need an operating system are skipped, with the reason" \
	grep -q "^skip pthreads .*($TARGET has no threads)" "$T/out"
run cat "$T/table.md"
check "the support table names the board and the pieces" 0 \
	"qemu-system-arm -M mps2-an386 -cpu cortex-m4 (semihosting)" \
	"| $TARGET | builtins picolibc libunwind libc++abi libc++ |"

# --table FILE keeps the targets an earlier run tested and this one did not (the file is the
# table of the last run that tested each target); this target's old column is replaced
cat >"$T/merged.md" <<EOT
| target | pieces | programs ran |
|---|---|---|
| earlier-target | headers musl | qemu-user (qemu-x \| y) |
| $TARGET | old pieces | old runner |

| program | earlier-target | $TARGET |
|---|---|---|
| hello | ok (kernel) | FAIL: old |
| gone_program | skip: a \| b | FAIL: old |
| hello_again | built and linked, not run (note 2) | FAIL: old |

Why programs were built and linked but not run:

1. a reason no cell names any more
2. the emulator cannot host it
EOT
run $C test --table "$T/merged.md" $TARGET
check "test --table over an earlier table" 0 "support table written to $T/merged.md"
run cat "$T/merged.md"
check "the earlier target's row and cells are kept, this target's replaced" 0 \
	"| earlier-target | headers musl | qemu-user (qemu-x \| y) |" \
	"| $TARGET | builtins picolibc libunwind libc++abi libc++ | qemu-system-arm -M mps2-an386" \
	"| program | earlier-target | $TARGET |" "| hello | ok (kernel) | ok |" \
	"| gone_program | skip: a \| b | - |" "| pthreads | - | skip: $TARGET has no threads |" \
	"| hello_again | built and linked, not run (note 1) | - |" \
	"Why programs were built and linked but not run:" "1. the emulator cannot host it"
assert "a note no cell names is gone" sh -c "! grep -q 'no cell names' '$T/merged.md'"
assert "no cell of the earlier run is left for this target" sh -c "! grep -q 'FAIL: old\|old pieces' '$T/merged.md'"

cat >"$T/args.c" <<'EOT'
#include <math.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv)
{
	volatile float two = 2.0f;
	float root = sqrtf(two);
	unsigned bits;
	memcpy(&bits, &root, sizeof bits);
	printf("argc=%d last=%s sqrtf(2)=%08x %.3f\n", argc, argv[argc - 1], bits, (double)root);
	return argc + 10;
}
EOT
run "$S/bin/$TARGET-clang" -O2 "$T/args.c" -o "$T/args" -lm
check "the C wrapper compiles and links a firmware image with no other flag" 0
run readelf -A "$T/args"
check "the code is the Cortex-M4F's" 0 'Tag_CPU_name: "cortex-m4"' "Tag_CPU_arch: v7E-M" \
	"Tag_CPU_arch_profile: Microcontroller" "Tag_ABI_VFP_args: VFP registers"
run "$S/bin/$TARGET-run" "$T/args" one two
check "the run wrapper passes arguments and the exit status" 13 \
	"argc=3 last=two sqrtf(2)=3fb504f3 1.414"
run "$S/bin/$TARGET-run" "$T/nonexistent"
check "a missing program is exit status 127" 127
run "$S/bin/$TARGET-run" "$T/args.c"
check "a file that is not a program is exit status 126" 126
# gdb on the board: the run wrapper's -g PORT waits at reset for the sysroot's gdb
run "$S/bin/$TARGET-clang" -g -O0 "$T/args.c" -o "$T/args-g" -lm
check "a debug build links" 0
port=$((20000 + $$ % 20000))
"$S/bin/$TARGET-run" -g "$port" "$T/args-g" one >"$T/board.out" 2>&1 &
board=$!
wait_listen "$port"
run timeout 120 "$S/bin/$TARGET-gdb" -batch -ex "target remote 127.0.0.1:$port" -ex "break main" \
	-ex continue -ex "print argc" -ex continue "$T/args-g"
check "the sysroot's gdb stops the program at main on the board and reads its arguments" 0 \
	"Breakpoint 1, main" '$1 = 2' "exited with code 014"
wait "$board"
assert "the board ran the program to its end under gdb" grep -q "argc=2 last=one" "$T/board.out"
run $C binfmt $TARGET
assert "binfmt refuses a bare-metal target" test "$STATUS" != 0
assert "binfmt says why" grep -q "bare metal" "$T/out"

cat >"$T/prog.cpp" <<'EOT'
#include <algorithm>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>
int main()
{
	std::istringstream in("b a b c b");
	std::map<std::string, int> words;
	for (std::string w; in >> w;)
		words[w]++;
	std::vector<std::pair<std::string, int>> sorted(words.begin(), words.end());
	std::sort(sorted.begin(), sorted.end(), [](auto &x, auto &y) { return x.second > y.second; });
	for (const auto &[w, n] : sorted)
		std::cout << w << '=' << n << '\n';
	return 0;
}
EOT
run "$S/bin/$TARGET-clang++" -std=c++20 -O2 "$T/prog.cpp" -o "$T/prog"
check "the C++ wrapper builds iostreams, containers and algorithms" 0
run "$S/bin/$TARGET-run" "$T/prog"
check "the C++ program runs on the board" 0 "b=3"
printf 'int main() { try { throw 1; } catch (int) { return 0; } }\n' >"$T/throw.cpp"
run "$S/bin/$TARGET-clang++" "$T/throw.cpp" -o "$T/throw"
check "C++ exceptions are a compile error, not a link error" 1

mkdir -p "$T/cm"
cat >"$T/cm/CMakeLists.txt" <<'EOT'
cmake_minimum_required(VERSION 3.13)
project(baremetal C)
enable_testing()
add_executable(args args.c)
target_link_libraries(args m)
add_test(NAME runs-on-the-board COMMAND args x)
# its exit status is argc + 10: the output decides
set_tests_properties(runs-on-the-board PROPERTIES PASS_REGULAR_EXPRESSION "argc=2 last=x")
EOT
cp "$T/args.c" "$T/cm/"
cmake_ctest "$T/cm"
meson_args_test "'x'"

finish
