#!/bin/sh
# Compiler launchers (--launcher): ccache gives a fresh work directory (a new CI runner) every
# compile of an earlier build at the same path, distcc sends compiles to distccd hosts on loopback, ccache+distcc sends ccache's misses
# there; every result is byte for byte the local build's, and no stage key changes.
. "$(dirname "$0")/../lib/common.sh"
for tool in ccache distcc distccd cmake; do
	command -v $tool >/dev/null || { echo "launcher.sh: $tool is not installed (make deps)"; exit 1; }
done
P=$T/p
new_project "$P"
cat >"$P/targets/toy.yaml" <<'EOT'
triple: aarch64-unknown-linux-musl
qemu: qemu-aarch64-static
stages: [objs, cmk]
EOT
# a make-based stage compiling with ${cc}, and a CMake one compiling through its toolchain file
cat >"$P/stages/objs.yaml" <<'EOT'
name: objs
steps:
  - |
    for i in 1 2 3 4 5 6 7 8; do printf 'int f%s(int x) { return x * %s + 1; }\n' $i $i >f$i.c; done
    printf 'all: f1.o f2.o f3.o f4.o f5.o f6.o f7.o f8.o\n%%.o: %%.c\n\t$(CC) -O2 -c $< -o $@\n' >Makefile
  - make CC="${cc}"
  - echo "job budget ${jobs}"
  - mkdir -p ${destdir}/usr/lib && ${ar} rc ${destdir}/usr/lib/libobjs.a f1.o f2.o f3.o f4.o f5.o f6.o f7.o f8.o
EOT
cat >"$P/stages/cmk.yaml" <<'EOT'
name: cmk
steps:
  - |
    mkdir -p s
    for i in 1 2 3 4; do printf 'int g%s(int x) { return x - %s; }\n' $i $i >s/g$i.c; done
    printf 'cmake_minimum_required(VERSION 3.13)\nproject(cmk C)\nadd_library(cmk STATIC g1.c g2.c g3.c g4.c)\ninstall(TARGETS cmk ARCHIVE DESTINATION lib)\n' >s/CMakeLists.txt
  - >-
    cmake -S s -B b -G "Unix Makefiles" -DCMAKE_TOOLCHAIN_FILE=${cmake_toolchain}
    -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_TRY_COMPILE_TARGET_TYPE=STATIC_LIBRARY
  - make -C b VERBOSE=1 && make -C b DESTDIR=${destdir} install
EOT
export CCACHE_DIR=$T/ccache DISTCC_DIR=$T/distcc DISTCC_FALLBACK=0 DISTCC_BACKOFF_PERIOD=0
unset CCACHE_BASEDIR CCACHE_PREFIX DISTCC_HOSTS CROSSROOT_LAUNCHER
mkdir -p "$DISTCC_DIR"
build() {   # build WORK_NAME [options]: a cold build of toy in its own work directory
	w=$1
	shift
	run $CROSSROOT -C "$P" --work "$T/$w" --out "$T/out-$w" "$@" build toy
}
libs() { cat "$T/out-$1/toy/usr/lib/libobjs.a" "$T/out-$1/toy/usr/lib/libcmk.a" | sha256sum; }
stat_of() { ccache --print-stats | awk -v k="$1" '$1 == k { print $2 }'; }

build local
check "a build without a launcher" 0 "sysroot toy"
run $CROSSROOT -C "$P" --work "$T/local" plan toy
cp "$T/out" "$T/plan-plain"
run $CROSSROOT -C "$P" --work "$T/local" --launcher ccache plan toy
assert "stage keys are the same with a launcher" cmp -s "$T/out" "$T/plan-plain"
assert "plan says all is cached" grep -q "cached" "$T/out"

# ccache: a cold build fills it; a fresh work directory at the same path (a new CI runner with
# the ccache directory restored) compiles nothing
hits() { echo $(( $(stat_of direct_cache_hit) + $(stat_of preprocessed_cache_hit) )); }
build cc --launcher ccache
check "build with --launcher ccache" 0 "sysroot toy"
N=$(stat_of cache_miss)
assert "ccache saw the 12 compiles (8 by make, 4 and CMake's ABI check by CMake): $N misses" test "$N" -ge 12
assert "CMake compiles through CMAKE_C_COMPILER_LAUNCHER" grep -q "$(command -v ccache) .*-o CMakeFiles/cmk.dir/g1.c.o" "$T/cc/logs/toy/cmk.log"
assert "make compiles through \${cc}" grep -q "^$(command -v ccache) .*-c f1.c -o f1.o" "$T/cc/logs/toy/objs.log"
mv "$T/cc" "$T/cc.first"
build cc --launcher ccache
check "a cold build in a fresh work directory" 0 "sysroot toy"
assert "every compile of it came from ccache ($(hits) hits, still $(stat_of cache_miss) misses)" test "$(hits)" = "$N" -a "$(stat_of cache_miss)" = "$N"
assert "the libraries are the local build's, byte for byte" test "$(libs cc)" = "$(libs local)"
rm -rf "$T/cc"
CROSSROOT_LAUNCHER=ccache build cc
check "\$CROSSROOT_LAUNCHER=ccache" 0
assert "it used ccache too" test "$(hits)" = $((2 * N))

# A patch to one file of a source compiles that file again and takes the rest from ccache: the
# compile lines name the stage's own link to the tree (${src}), not the tree's keyed name, and
# the debug info (-g) names the same paths as before
mkdir -p "$T/tarball/lib-1.0"
for i in 1 2 3 4 5 6; do printf 'int h%s(int x) { return x + %s; }\n' $i $i >"$T/tarball/lib-1.0/h$i.c"; done
tar -C "$T/tarball" -czf "$T/lib-1.0.tar.gz" lib-1.0
cat >"$P/sources/lib.yaml" <<EOT
name: lib
version: "1.0"
origins:
  - url: file://$T/lib-1.0.tar.gz
    sha256: $(sha256 "$T/lib-1.0.tar.gz")
EOT
cat >"$P/stages/srcobjs.yaml" <<'EOT'
name: srcobjs
sources: [lib]
steps:
  - for f in ${src}/*.c; do ${cc} -g -O1 -c "$f" -o "$(basename "$f" .c).o" || exit 1; done
  - echo "src is ${src}"
  - mkdir -p ${destdir}/usr/lib && ${ar} rc ${destdir}/usr/lib/liblib.a h1.o h2.o h3.o h4.o h5.o h6.o
EOT
printf 'triple: aarch64-unknown-linux-musl\nqemu: qemu-aarch64-static\nstages: [srcobjs]\n' >"$P/targets/lib.yaml"
export CCACHE_DIR=$T/ccache-patch
run $CROSSROOT -C "$P" --work "$T/pw" --out "$T/out-pw" --launcher ccache build lib
check "a source's stage built with ccache" 0 "sysroot lib"
assert "\${src} is the stage's link to the tree" grep -qx "src is $T/pw/build/lib/srcobjs/src" "$T/pw/logs/lib/srcobjs.log"
M0=$(stat_of cache_miss) H0=$(hits)
mkdir -p "$P/patches/lib/1.0"
cat >"$P/patches/lib/1.0/0001-h4.diff" <<'EOT'
--- a/h4.c
+++ b/h4.c
@@ -1 +1 @@
-int h4(int x) { return x + 4; }
+int h4(int x) { return x - 4; }
EOT
run $CROSSROOT -C "$P" --work "$T/pw" --out "$T/out-pw" --launcher ccache build lib
check "the same stage rebuilt after a patch" 0 "sysroot lib"
assert "the patch is in a new tree" grep -q "x - 4" "$T"/pw/src/lib-1.0-*/h4.c
assert "debug info names the sources by the stage's link" \
	grep -q "/crossroot/build/lib/srcobjs/src" "$T/out-pw/lib/usr/lib/liblib.a"
assert "only the patched file compiled again ($(( $(stat_of cache_miss) - M0 )) miss, $(( $(hits) - H0 )) hits)" \
	test $(( $(stat_of cache_miss) - M0 )) = 1 -a $(( $(hits) - H0 )) = 5
run $CROSSROOT -C "$P" --work "$T/pw-plain" --out "$T/out-pw-plain" build lib
assert "the library is the one built without ccache in another work directory, byte for byte" \
	cmp "$T/out-pw/lib/usr/lib/liblib.a" "$T/out-pw-plain/lib/usr/lib/liblib.a"
CCACHE_BASEDIR=/ run $CROSSROOT -C "$P" --work "$T/pw-bd" --out "$T/out-pw-bd" --launcher ccache build lib
check "a build with the user's CCACHE_BASEDIR" 0 "sysroot lib"
assert "base_dir is kept off (it would rewrite the compile lines): the same bytes" \
	cmp "$T/out-pw-bd/lib/usr/lib/liblib.a" "$T/out-pw-plain/lib/usr/lib/liblib.a"
# a CCACHE_DIR inside the work directory, not made yet: steps hide the work directory, so it
# must exist to be shown again
CCACHE_DIR=$T/pw-in/ccache-here run $CROSSROOT -C "$P" --work "$T/pw-in" --out "$T/out-pw-in" --launcher ccache build lib
check "a CCACHE_DIR inside the work directory that did not exist" 0 "sysroot lib"
assert "ccache wrote its results there" sh -c "find $T/pw-in/ccache-here -type f -name '*R' | grep -q ."
rm -rf "$P/stages/srcobjs.yaml" "$P/sources/lib.yaml" "$P/targets/lib.yaml" "$P/patches/lib"
export CCACHE_DIR=$T/ccache

# distcc: two distccd on loopback addresses, allowed exactly the host clang (absolute paths)
CLANG=$(sed -n 's/^\$ make CC="\([^ ]*\) .*/\1/p' "$T/local/logs/toy/objs.log")
assert "the host clang the stages compile with: '$CLANG'" test -x "$CLANG"
printf '%s\n%s++\n' "$CLANG" "$CLANG" >"$T/cmdlist"
chmod 644 "$T/cmdlist"
chmod 755 "$T"
DPIDS=
port=$((20000 + $$ % 20000))
for addr in 127.0.0.2 127.0.0.3; do
	DISTCC_CMDLIST=$T/cmdlist distccd --daemon --no-detach --listen $addr --port $port \
		--allow 127.0.0.0/8 --log-stderr --log-level info 2>"$T/distccd-$addr.log" &
	DPIDS="$DPIDS $!"
done
trap 'kill $DPIDS 2>/dev/null; cleanup' EXIT
trap 'exit 130' INT TERM
wait_listen $port
sleep 0.3
export DISTCC_HOSTS="127.0.0.2:$port/2 127.0.0.3:$port/2"
build dcc --launcher distcc
check "build with --launcher distcc" 0 "sysroot toy"
compiled() { grep -c "COMPILE_OK" "$T/distccd-$1.log"; }
a=$(compiled 127.0.0.2) b=$(compiled 127.0.0.3)
assert "all $N compiles went to the distccd hosts ($a and $b)" test $((a + b)) = "$N"
assert "both hosts compiled" test "$a" -gt 0 -a "$b" -gt 0
assert "the job budget grew by the 4 remote slots" grep -qx "job budget $(( $(nproc) + 4 ))" "$T/dcc/logs/toy/objs.log"
assert "the libraries are the local build's, byte for byte" test "$(libs dcc)" = "$(libs local)"
run $CROSSROOT -C "$P" --work "$T/dcc2" -j 3 --launcher distcc build toy
assert "--jobs is kept as given" grep -qx "job budget 3" "$T/dcc2/logs/toy/objs.log"

# ccache over distcc: ccache's misses are compiled on the hosts
export CCACHE_DIR=$T/ccache2
before=$(( $(compiled 127.0.0.2) + $(compiled 127.0.0.3) ))
build both --launcher ccache+distcc
check "build with --launcher ccache+distcc" 0
after=$(( $(compiled 127.0.0.2) + $(compiled 127.0.0.3) ))
assert "ccache's $N misses were compiled by distccd ($((after - before)))" test $((after - before)) = "$N" -a "$(stat_of cache_miss)" = "$N"
assert "the libraries are the local build's, byte for byte" test "$(libs both)" = "$(libs local)"

# errors
run $CROSSROOT -C "$P" --work "$T/e" --launcher sccache build toy
check "an unknown launcher" 2 "unknown compiler launcher 'sccache'"
DISTCC_HOSTS= DISTCC_DIR=$T/empty run $CROSSROOT -C "$P" --work "$T/e" --launcher distcc build toy
check "distcc without hosts" 2 "found no distcc hosts"
PATH=/nonexistent run $CROSSROOT -C "$P" --work "$T/e" --launcher ccache build toy
check "ccache not installed" 2 "needs 'ccache', which is not in PATH"
finish
