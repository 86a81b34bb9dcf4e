# Shared helpers for crossroot's shell tests: a scratch directory removed on exit, a loopback
# fault-injecting HTTP server, a synthetic project, and assertions that report "ok"/"not ok".
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CROSSROOT=${CROSSROOT:-$ROOT/crossroot}
T=$(mktemp -d /tmp/crossroot-test.XXXXXX)
SERVER_PID=
PASSED=0
FAILED=0

cleanup() {
	[ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

ok() { PASSED=$((PASSED + 1)); echo "ok     $*"; }
not_ok() { FAILED=$((FAILED + 1)); echo "not ok $*"; }

# run CMD...: runs it, output in $T/out (stdout+stderr), status in $STATUS
run() {
	"$@" >"$T/out" 2>&1
	STATUS=$?
}

# check NAME EXPECTED_STATUS [PATTERN...]: the last run ended with that status and its
# output contains every pattern (fixed strings)
check() {
	name=$1 want=$2
	shift 2
	if [ "$STATUS" != "$want" ]; then
		not_ok "$name: exit status $STATUS, expected $want"
		sed 's/^/    | /' "$T/out" | tail -25
		return 1
	fi
	for pattern in "$@"; do
		if ! grep -qF -- "$pattern" "$T/out"; then
			not_ok "$name: output lacks '$pattern'"
			sed 's/^/    | /' "$T/out" | tail -25
			return 1
		fi
	done
	ok "$name"
}

# assert NAME COMMAND...: passes when the command succeeds
assert() {
	name=$1
	shift
	if "$@"; then ok "$name"; else not_ok "$name"; fi
}

# start_server: serves $T/www on 127.0.0.1:$PORT with fault modes (see faultserver.py)
start_server() {
	mkdir -p "$T/www"
	python3 "$ROOT/tests/lib/faultserver.py" "$T/www" "$T/port" &
	SERVER_PID=$!
	for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.05; done
	PORT=$(cat "$T/port")
	BASE=http://127.0.0.1:$PORT
}

sha256() { sha256sum "$1" | cut -d' ' -f1; }

# make_tarball NAME VERSION: $T/www/NAME-VERSION.tar.gz holding NAME-VERSION/{data.txt,Makefile}
make_tarball() {
	d=$T/tarball/$1-$2
	mkdir -p "$d"
	echo "$1 $2 data" >"$d/data.txt"
	printf 'all:\n\tcp data.txt out.txt\n' >"$d/Makefile"
	mkdir -p "$T/www"
	tar -C "$T/tarball" -czf "$T/www/$1-$2.tar.gz" "$1-$2"
}

# write_toy_compiler FILE NAME: a shell-script "compiler" that writes "compiled by NAME: <its
# arguments>" into its -o file, for tests of tools stages
write_toy_compiler() {
	mkdir -p "$(dirname "$1")"
	cat >"$1" <<EOT
#!/bin/sh
out=
for a in "\$@"; do [ "\$prev" = -o ] && out=\$a; prev=\$a; done
echo "compiled by $2: \$*" >"\$out"
EOT
	chmod +x "$1"
}

# new_project DIR: a project with one target "toy" and stages on loopback sources
new_project() {
	P=$1
	mkdir -p "$P/targets" "$P/stages" "$P/sources" "$P/patches"
	cat >"$P/targets/toy.yaml" <<EOT
triple: aarch64-unknown-linux-musl
qemu: qemu-aarch64-static
stages: [second]
vars:
  greeting: hello
EOT
}

finish() {
	echo "$(basename "$0"): $PASSED passed, $FAILED failed"
	[ "$FAILED" = 0 ]
}

# build_and_test TARGET: `$C build` then `$C test --table $T/table.md` of the target, whose
# sysroot is $S; the test's output stays in $T/out (and its status in $STATUS) for the caller
build_and_test() {
	run $C build "$1"
	cat "$T/out"
	check "crossroot build $1" 0 "sysroot $1: $S"
	run $C test --table "$T/table.md" "$1"
	cat "$T/out"
}

# cmake_ctest DIR: the CMake project in DIR configured with $S's toolchain file, built, and
# its tests run by CTest (through the toolchain file's emulator, the run wrapper)
cmake_ctest() {
	run cmake -S "$1" -B "$1/build" -DCMAKE_TOOLCHAIN_FILE="$S/share/crossroot/toolchain.cmake"
	check "CMake configures with the toolchain file" 0
	run cmake --build "$1/build"
	check "CMake builds" 0
	run ctest --test-dir "$1/build" --output-on-failure
	check "CTest runs the project's tests through the run wrapper" 0
}

# args_program: $T/args.c, a user's program that prints its argument count, its last argument
# and $CROSSROOT_TEST_VAR, then the first line of the file its first argument names, and exits
# with that line's length (9 if it cannot read it); and $T/input.txt, "from the host" (a
# status of 14)
args_program() {
	cat >"$T/args.c" <<'EOT'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv)
{
	const char *var = getenv("CROSSROOT_TEST_VAR");
	printf("argc=%d last=%s var=%s\n", argc, argv[argc - 1], var ? var : "(none)");
	FILE *f = fopen(argv[1], "r");
	char line[64] = "";
	if (!f || !fgets(line, sizeof line, f))
		return 9;
	printf("read: %s", line);
	return (int)strlen(line);
}
EOT
	echo "from the host" >"$T/input.txt"
}

# words_program: $T/prog.cpp, a user's C++20 program that counts the words of the file its
# argument names and prints the file's size (for $T/words.txt, "b a b": a=1, b=2, size 6); built
# with -DWITH_THREADS it also catches an exception thrown in a std::thread ("caught: thrown in a
# thread")
words_program() {
	cat >"$T/prog.cpp" <<'EOT'
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#ifdef WITH_THREADS
#include <stdexcept>
#include <thread>
#endif
int main(int, char **argv)
{
	std::map<std::string, int> words;
	std::ifstream in(argv[1]);
	for (std::string w; in >> w;)
		words[w]++;
	for (const auto &[w, n] : words)
		std::cout << w << '=' << n << '\n';
	std::cout << "size " << std::filesystem::file_size(argv[1]) << '\n';
#ifdef WITH_THREADS
	std::string caught;
	std::thread t([&] {
		try {
			throw std::runtime_error("thrown in a thread");
		} catch (const std::exception &e) {
			caught = e.what();
		}
	});
	t.join();
	std::cout << "caught: " << caught << '\n';
#endif
	return 0;
}
EOT
	printf 'b a b\n' >"$T/words.txt"
}

# meson_args_test ARG: $T/args.c (and $T/input.txt, if there) as a Meson project built with $S's
# cross file; `meson test` runs the program with ARG (a Meson expression) through the cross
# file's exe_wrapper, and the program prints argc=2 and exits with a nonzero status
meson_args_test() {
	mkdir -p "$T/ms"
	cp "$T/args.c" "$T/ms/"
	if [ -f "$T/input.txt" ]; then cp "$T/input.txt" "$T/ms/"; fi
	cat >"$T/ms/meson.build" <<EOT
project('crossdemo', 'c')
m = meson.get_compiler('c').find_library('m', required: false)
exe = executable('args', 'args.c', dependencies: m)
test('runs-through-the-wrapper', exe, args: [$1], should_fail: true)
EOT
	run meson setup --cross-file "$S/share/crossroot/meson-cross.ini" "$T/ms/build" "$T/ms"
	check "Meson configures with the cross file" 0
	run meson test -C "$T/ms/build"
	check "meson test builds and runs the program through the cross file's exe_wrapper" 0
	assert "the program ran (its output is in Meson's test log)" \
		grep -q "argc=2" "$T/ms/build/meson-logs/testlog.txt"
}

# wait_listen PORT: until something listens on 127.0.0.1:PORT (or any address), at most 10 s.
# Reads /proc/net/tcp: a probe connection would be taken by the listener (qemu's gdb stub
# accepts one debugger only).
wait_listen() {
	hex=$(printf '%04X' "$1")
	for _ in $(seq 200); do
		awk -v p=":$hex" '$2 ~ p"$" && $4 == "0A" { found = 1 } END { exit !found }' /proc/net/tcp && return 0
		sleep 0.05
	done
	return 1
}
