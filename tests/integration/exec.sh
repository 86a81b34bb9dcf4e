#!/bin/sh
# crossroot exec: in a session of its own, aarch64-linux-musl programs run when executed
# directly (by a shell script, by python3's subprocess, by CTest's old-style add_test naming
# the program's path), as root and as an unprivileged user, with their own ids; the host's
# binfmt_misc is the same before, during and after; sessions of two targets run side by side,
# and one session can hold both; the exit status is the command's, 125 when no session could
# be made (each refusal), 126 and 127 when the command cannot run. Then the sysroot's other
# files for projects' own harnesses: toolchain.cmake's binary tools, env.sh's build-machine
# compilers (config.guess, where one is installed) and the DejaGnu board (where runtest is).
# Needs the real sysroot (built from the shared stage cache, $CROSSROOT_CACHE, as tests/e2e
# does), qemu-user and Linux 6.7 or later.
. "$(dirname "$0")/../lib/common.sh"
TARGET=aarch64-linux-musl
if ! command -v qemu-aarch64-static >/dev/null || ! command -v qemu-riscv64-static >/dev/null; then
	echo "skip   exec (needs qemu-aarch64-static and qemu-riscv64-static)"
	finish
	exit $?
fi
kernel=$(uname -r)
if [ "$(printf '%s\n6.7\n' "${kernel%%-*}" | sort -V | head -n 1)" != 6.7 ]; then
	echo "skip   exec (Linux $kernel gives user namespaces no binfmt_misc of their own; 6.7 does)"
	finish
	exit $?
fi
CACHE=${CROSSROOT_CACHE:-$ROOT/work/cache}
OUT=$T/sysroots
C="$CROSSROOT -C $ROOT --work $T/work --out $OUT --cache $CACHE"
run $C build $TARGET
check "the $TARGET sysroot" 0 "sysroot $TARGET: $OUT/$TARGET"
S=$OUT/$TARGET
chmod 755 "$T"   # the unprivileged user reads the sysroots and works in $T/s
# nor can it reach a checkout under a private directory (a CI clone in a 0700 mktemp
# directory): every session runs a copy of crossroot over a copy of the recipes
mkdir -p "$T/proj"
for d in targets stages sources patches keys; do cp -R "$ROOT/$d" "$T/proj/"; done
cp "$CROSSROOT" "$T/crossroot"
chmod -R a+rX "$T/proj" "$T/crossroot"
XR="$T/crossroot -C $T/proj --out $OUT"

# a toy riscv64 target (a sysroot of wrappers; its program is freestanding), and a toy target
# of the host's own machine, in a project that also has the real targets
P=$T/p
new_project "$P"
for d in targets stages sources patches keys; do
	mkdir -p "$P/$d"
	for f in "$T/proj/$d"/*; do ln -s "$f" "$P/$d/"; done
done
echo 'steps: ["mkdir -p ${destdir}/usr/lib"]' >"$P/stages/second.yaml"
printf 'triple: riscv64-unknown-linux-musl\nqemu: qemu-riscv64-static\nstages: [second]\n' >"$P/targets/rv.yaml"
printf 'triple: x86_64-unknown-linux-musl\nqemu: qemu-x86_64-static\nstages: [second]\n' >"$P/targets/native.yaml"
X="$T/crossroot -C $P --work $T/pwork --out $OUT"
run $X build toy rv native
check "toy sysroots" 0 "sysroot rv"

# the programs and the harnesses, in $T/s
mkdir -p "$T/s/ctest" "$T/cmaketools"
cat >"$T/s/prog.c" <<'EOT'
#include <stdio.h>
#include <stdlib.h>
#include <sys/utsname.h>
int main(int argc, char **argv)
{
	struct utsname u;
	uname(&u);
	printf("ran %s on %s%s\n", argc > 1 ? argv[1] : "-", u.machine,
	       getenv("CROSSROOT_RUN_EMULATOR") ? " (with the emulator's mark)" : "");
	return argc > 2 ? atoi(argv[2]) : 0;
}
EOT
run "$S/bin/$TARGET-clang" "$T/s/prog.c" -o "$T/s/prog"
check "a dynamic $TARGET program" 0
clang-19 --target=riscv64-linux-musl -march=rv64gc -ffreestanding -nostdlib -static -fuse-ld=lld -O1 \
	"$ROOT/tests/data/hello-riscv64.c" -o "$T/s/rvprog"
cp "$T/s/prog.c" "$T/s/ctest/prog.c"
cat >"$T/s/ctest/CMakeLists.txt" <<'EOT'
cmake_minimum_required(VERSION 3.13)
project(exectest C)
enable_testing()
add_executable(prog prog.c)
# old-style add_test naming the program's path: CTest runs it itself, never through the
# emulator, as a project's own harness does
add_test(by_path ${CMAKE_CURRENT_BINARY_DIR}/prog ctest)
set_tests_properties(by_path PROPERTIES PASS_REGULAR_EXPRESSION "ran ctest on aarch64")
add_test(by_script sh -c "${CMAKE_CURRENT_BINARY_DIR}/prog script-in-ctest")
set_tests_properties(by_script PROPERTIES PASS_REGULAR_EXPRESSION "ran script-in-ctest on aarch64")
EOT
run cmake -S "$T/s/ctest" -B "$T/s/ctest/build" -DCMAKE_TOOLCHAIN_FILE="$S/share/crossroot/toolchain.cmake"
check "CMake configures the test project" 0
run cmake --build "$T/s/ctest/build"
check "and builds it" 0
printf '#!/bin/sh\n./prog "$@"\n' >"$T/s/script.sh"
cat >"$T/s/session.sh" <<'EOT'
#!/bin/sh
# in a session: a target program run by this shell, by Python and by CTest
cd "$(dirname "$0")" || exit 90
out=$1
./prog direct 2>&1 >"$out.direct"
sh ./script.sh script >"$out.script" 2>&1
python3 -c 'import subprocess, sys; r = subprocess.run(["./prog", "python", "5"]); sys.exit(r.returncode)' \
	>"$out.python" 2>&1
echo "python status $?" >>"$out.python"
cp -R ctest/build "$out.ctest-build"   # CTest writes its logs there
ctest --test-dir "$out.ctest-build" --output-on-failure >"$out.ctest" 2>&1
echo "ctest status $?" >>"$out.ctest"
id -u >"$out.uid"
touch "$out.made"
exit 7
EOT
chmod +x "$T/s/session.sh"
chmod -R a+rwX "$T/s"

B=/proc/sys/fs/binfmt_misc
host_binfmt() { for f in "$B"/*; do echo "== $f"; cat "$f"; done; }
host_binfmt >"$T/binfmt.before" 2>&1

# the same checks as root and, where this runs as root, as nobody
session_checks() {   # session_checks WHO UID PREFIX COMMAND...
	who=$1 uid=$2 out=$3
	shift 3
	run "$@" $XR exec $TARGET -- "$T/s/session.sh" "$out"
	check "$who: the command's exit status is crossroot's" 7
	assert "$who: a shell runs the program directly, under qemu" grep -qx "ran direct on aarch64" "$out.direct"
	assert "$who: a script it runs runs it" grep -qx "ran script on aarch64" "$out.script"
	assert "$who: so does python3's subprocess, with its status" \
		sh -c "grep -qx 'ran python on aarch64' '$out.python' && grep -qx 'python status 5' '$out.python'"
	assert "$who: and CTest's old-style add_test (path and script)" grep -qx "ctest status 0" "$out.ctest"
	assert "$who: the program never sees the emulator's mark" \
		sh -c "! grep -q mark '$out.direct' '$out.script' '$out.python' '$out.ctest'"
	assert "$who: the user keeps their uid" grep -qx "$uid" "$out.uid"
	assert "$who: files made inside are theirs" test "$(stat -c %u "$out.made")" = "$uid"
}
session_checks root 0 "$T/s/root"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	session_checks nobody 65534 "$T/s/nobody" setpriv --reuid=65534 --regid=65534 --clear-groups
	NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
else
	echo "skip   an unprivileged user's session (needs root and setpriv)"
	NOBODY=
fi

# side by side: an aarch64 session stays open while a riscv64 one runs; each runs only its own
# target's programs (the host's entries, if any, do not apply inside either)
$NOBODY $XR exec $TARGET -- sh -c \
	"cd '$T/s' && ./prog first >side.a64; ./rvprog >side.rv-in-a64 2>&1; touch side.open;
	 while [ ! -e side.close ]; do sleep 0.1; done; ./prog second >>side.a64" &
first=$!
for _ in $(seq 300); do [ -e "$T/s/side.open" ] && break; sleep 0.1; done
assert "side by side: the first session is open" test -e "$T/s/side.open"
host_binfmt >"$T/binfmt.during" 2>&1
run $NOBODY $X exec rv -- sh -c "cd '$T/s' && ./rvprog second-session && ./prog x"
assert "side by side: the riscv64 session runs riscv64 programs" grep -qx second-session "$T/out"
assert "  (and not aarch64 ones)" test "$STATUS" != 0 -a -z "$(grep 'ran x' "$T/out")"
touch "$T/s/side.close"
wait $first
assert "  (and the aarch64 session ran its program before and after)" \
	test "$(cat "$T/s/side.a64")" = "$(printf 'ran first on aarch64\nran second on aarch64')"
assert "  (but not the riscv64 one)" sh -c "! grep -qx riscv64 '$T/s/side.rv-in-a64'"
assert "the host's binfmt_misc is the same during a session" cmp -s "$T/binfmt.before" "$T/binfmt.during"
run $X exec rv $TARGET -- sh -c "cd '$T/s' && ./rvprog both && ./prog both"
check "one session with two targets runs both" 0 "both" "ran both on aarch64"

# what fails, and how
run $XR exec $TARGET -- sh -c 'kill -TERM $$'
check "a command killed by a signal: the shell's 128 + N" 143
run $XR exec $TARGET -- "$T/nosuch"
check "a command that is not there: 127" 127
printf 'not a program\n' >"$T/notexec"
run $XR exec $TARGET -- "$T/notexec"
check "a command that cannot be executed: 126" 126
run $XR exec $TARGET true
check "no -- before the command: no session (125)" 125 "usage: crossroot exec"
run $XR exec nosuch-target -- true
check "an unknown target: 125" 125
run $CROSSROOT -C "$ROOT" --out "$T/elsewhere" exec $TARGET -- true
check "a target not built: 125" 125 "build the target first"
run $X exec native -- true
check "a target the host runs itself: 125" 125 "this host runs x86_64 programs itself"
run $X exec toy $TARGET -- true
check "two targets of one machine: 125" 125 "are both aarch64 programs"
mkdir -p "$T/fakeqemu"
cp "$T/s/prog" "$T/fakeqemu/qemu-aarch64-static"
run env PATH="$T/fakeqemu:$PATH" $XR exec $TARGET -- true
check "an emulator that is itself a target program: 125" 125 "is itself a program for aarch64"
run timeout 60 $XR exec $TARGET -- sh -c \
	"PATH='$T/fakeqemu':\$PATH '$T/s/prog' loop"
check "  (found only inside, the run wrapper stops it: 126, no loop)" 126 "itself a program for"
run unshare --user --map-root-user sh -c \
	"echo 0 >/proc/sys/user/max_user_namespaces && $XR exec $TARGET -- true"
check "no user namespace allowed: 125, naming what is missing and crossroot binfmt" 125 \
	"user.max_user_namespaces" "crossroot binfmt TARGET"
if [ "$(id -u)" = 0 ]; then
	run unshare --mount sh -c "mount -t tmpfs none /proc/sys/fs &&
		$XR exec $TARGET -- true"
	check "no binfmt_misc to mount: 125, naming it" 125 "no binfmt_misc to mount at '/proc/sys/fs/binfmt_misc'"
fi
host_binfmt >"$T/binfmt.after" 2>&1
assert "the host's binfmt_misc is the same after every session" cmp -s "$T/binfmt.before" "$T/binfmt.after"

# The other generated files that projects' own harnesses need. CMake: every binary tool the
# toolchain file leaves to CMake is found in PATH (the host's llvm-strip, ld.lld, ...).
cat >"$T/cmaketools/CMakeLists.txt" <<'EOT'
cmake_minimum_required(VERSION 3.13)
project(tools C CXX)
foreach(v AR RANLIB NM OBJCOPY OBJDUMP STRIP READELF ADDR2LINE LINKER C_COMPILER_AR
          C_COMPILER_RANLIB CXX_COMPILER_AR CXX_COMPILER_RANLIB)
  message(STATUS "tool ${v}=${CMAKE_${v}}")
endforeach()
EOT
run cmake -S "$T/cmaketools" -B "$T/cmaketools/build" -DCMAKE_TOOLCHAIN_FILE="$S/share/crossroot/toolchain.cmake"
check "CMake: every binary tool is the sysroot's" 0 "tool AR=$S/bin/$TARGET-ar" "tool RANLIB=$S/bin/$TARGET-ranlib" \
	"tool NM=$S/bin/$TARGET-nm" "tool OBJCOPY=$S/bin/$TARGET-objcopy" "tool OBJDUMP=$S/bin/$TARGET-objdump" \
	"tool STRIP=$S/bin/$TARGET-strip" "tool READELF=$S/bin/$TARGET-readelf" \
	"tool ADDR2LINE=$S/bin/$TARGET-addr2line" "tool LINKER=$S/bin/$TARGET-ld" \
	"tool C_COMPILER_AR=$S/bin/$TARGET-ar" "tool C_COMPILER_RANLIB=$S/bin/$TARGET-ranlib" \
	"tool CXX_COMPILER_AR=$S/bin/$TARGET-ar" "tool CXX_COMPILER_RANLIB=$S/bin/$TARGET-ranlib"
assert "  (and each of them reads the target program)" sh -c "for t in nm objdump readelf strip objcopy addr2line; do
	'$S/bin/$TARGET-'\$t --help >/dev/null 2>&1 || exit 1; done; '$S/bin/$TARGET-readelf' -h '$T/s/prog' >/dev/null"

# env.sh: the build machine's compilers for what a build runs on this machine; config.guess
# (which asks CC_FOR_BUILD) names this machine, not the target's libc
cat >"$T/forbuild.sh" <<EOT
. "$S/share/crossroot/env.sh"
cd "$T" || exit 1
printf '#include <stdio.h>\\nint main(void) { puts("built for the build machine"); return 0; }\\n' >fb.c
\$CC_FOR_BUILD fb.c -o fb-cc && ./fb-cc
cp fb.c fb.cc && \$CXX_FOR_BUILD fb.cc -o fb-cxx && ./fb-cxx
\$CPP_FOR_BUILD fb.c | grep -q 'int main' && echo "preprocessed for the build machine"
[ "\$BUILD_CC" = "\$CC_FOR_BUILD" ] && [ "\$BUILD_CXX" = "\$CXX_FOR_BUILD" ] && [ "\$BUILD_CPP" = "\$CPP_FOR_BUILD" ] &&
	echo "BUILD_* are the same"
EOT
run env -u CC_FOR_BUILD -u CXX_FOR_BUILD -u CPP_FOR_BUILD -u BUILD_CC -u BUILD_CXX -u BUILD_CPP dash "$T/forbuild.sh"
check "env.sh: CC_FOR_BUILD, CXX_FOR_BUILD, CPP_FOR_BUILD and BUILD_* make build-machine programs" 0 \
	"built for the build machine" "preprocessed for the build machine" "BUILD_* are the same"
assert "  (native ones)" sh -c "'$T/fb-cc' >/dev/null && '$T/fb-cxx' >/dev/null"
run env CC_FOR_BUILD=my-cc dash -c ". '$S/share/crossroot/env.sh' && echo \"\$CC_FOR_BUILD \$BUILD_CC\""
check "env.sh: a CC_FOR_BUILD already chosen stays" 0 "my-cc my-cc"
guess=
for g in /usr/share/misc/config.guess /usr/share/dejagnu/libexec/config.guess; do
	[ -f "$g" ] && guess=$g && break
done
if [ -n "$guess" ]; then
	run env -u CC_FOR_BUILD -u HOST_CC -u CC sh "$guess"
	check "config.guess without env.sh" 0
	cp "$T/out" "$T/guess.plain"
	run env -u CC_FOR_BUILD -u HOST_CC dash -c ". '$S/share/crossroot/env.sh' && sh '$guess'"
	check "config.guess after env.sh" 0
	assert "  (names the same build machine)" cmp -s "$T/out" "$T/guess.plain"
else
	echo "skip   config.guess after env.sh (no config.guess here)"
fi

# DejaGnu: the board compiles with the sysroot and runs through the run wrapper, with the
# arguments, the exit status and the library path of the testsuite's own build tree
if command -v runtest >/dev/null; then
	mkdir -p "$T/dg/testsuite/board.run" "$T/dg/obj"
	cp "$T/s/prog.c" "$T/dg/testsuite/board.run/prog.c"
	printf 'int greeting(void) { return 42; }\n' >"$T/dg/testsuite/board.run/lib.c"
	printf 'int greeting(void);\nint main(void) { return greeting() == 42 ? 0 : 1; }\n' \
		>"$T/dg/testsuite/board.run/uses-lib.c"
	cat >"$T/dg/testsuite/board.run/board.exp" <<'EOT'
set dir [pwd]
set src [file join $srcdir $subdir]
proc passed {name} {
    pass $name
    set f [open passed a]
    puts $f $name
    close $f
}
if {[target_compile $src/prog.c $dir/prog executable {}] ne ""} { fail "compile" } else { passed "compile" }
set result [remote_load target $dir/prog "dejagnu 0"]
set f [open $dir/run-output w]
puts $f [lindex $result 1]
close $f
if {[lindex $result 0] eq "pass"} { passed "run" } else { fail "run" }
set result [remote_load target $dir/prog "failing 3"]
if {[lindex $result 0] eq "fail"} { passed "exit status" } else { fail "exit status" }
# a library of the build tree, found through the testsuite's ld_library_path
file mkdir $dir/lib
target_compile $src/lib.c $dir/lib/libgreet.so executable {additional_flags=-shared additional_flags=-fPIC}
target_compile $src/uses-lib.c $dir/uses-lib executable "ldflags=-L$dir/lib libs=-lgreet"
set ::ld_library_path $dir/lib
set result [remote_load target $dir/uses-lib]
if {[lindex $result 0] eq "pass"} { passed "build-tree library" } else { fail "build-tree library" }
EOT
	run sh -c "cd '$T/dg/obj' && DEJAGNU='$S/share/crossroot/dejagnu/site.exp' runtest --tool board \
		--srcdir ../testsuite --target_board=$TARGET"
	check "DejaGnu: runtest with the board passes every test" 0
	assert "DejaGnu: the program ran under qemu, with its arguments" grep -qx "ran dejagnu on aarch64" "$T/dg/obj/run-output"
	assert "DejaGnu: all four tests ran" test "$(cat "$T/dg/obj/passed" 2>/dev/null | wc -l)" = 4
else
	echo "skip   the DejaGnu board (no runtest; tools/install-deps installs dejagnu)"
fi
finish
