#!/bin/sh
# make check-repro: the reproducibility of a real target (default aarch64-linux-musl). Two
# cold builds, each with its own work directory, stage cache and sysroots at different
# absolute paths, one after the other, must give packages with the same sha256; so must a
# third that restores every stage from the first one's cache. The package is then unpacked
# into another directory as another user (nobody), verified there, and compiles hello.c and
# hello.cpp (dynamic and static) that run under qemu-user. Prints the figures an issue's
# closing note wants: both sha256 sums, the sizes (zstd, xz) and the times.
# Heavy: two full cold builds of the target (LLVM runtimes, musl). Sources come from the
# project's download cache as a mirror when it has them (else from their origins).
# Needs root for the other user (setpriv); REPRO_DIR (default work/repro) holds the builds.
. "$(dirname "$0")/../lib/common.sh"
cd "$ROOT" || exit 1
TARGET=${1:-aarch64-linux-musl}
R=${REPRO_DIR:-$ROOT/work/repro}
PROJECT=${REPRO_PROJECT:-$ROOT}   # another project, to try this script on a toy target
DOWNLOADS=${CROSSROOT_CACHE:-$ROOT/work/cache}/downloads
unset SOURCE_DATE_EPOCH
export CROSSROOT_REMOTE_CACHE_CONFIG=$T/no-remote-cache
: >"$CROSSROOT_REMOTE_CACHE_CONFIG"
MIRROR=
[ -d "$DOWNLOADS" ] && MIRROR="--mirror $DOWNLOADS"
rm -rf "$R"
mkdir -p "$R"

# build NAME: a cold build and package in $R/NAME; its time in $R/NAME.seconds
build() {
	start=$(date +%s)
	run "$CROSSROOT" -C "$PROJECT" --work "$R/$1/work" --cache "$R/$1/cache" --out "$R/$1/sysroots" $MIRROR \
		package "$TARGET" -o "$R/$1/package" ${2:-}
	echo $(( $(date +%s) - start )) >"$R/$1.seconds"
	tail -n 4 "$T/out"
}
build one --xz
check "first cold build and package of $TARGET" 0 "package $TARGET:"
build two
check "second cold build and package (other directories, later)" 0 "package $TARGET:"
ONE=$(ls "$R"/one/package/"$TARGET"-*.tar.zst)
TWO=$(ls "$R"/two/package/"$TARGET"-*.tar.zst)
XZ=$(ls "$R"/one/package/"$TARGET"-*.tar.xz)
assert "the two cold builds give the same package name" test "$(basename "$ONE")" = "$(basename "$TWO")"
assert "and the same sha256" test "$(sha256 "$ONE")" = "$(sha256 "$TWO")"
if [ "$(sha256 "$ONE")" != "$(sha256 "$TWO")" ]; then
	run "$CROSSROOT" verify "$ONE"
	"$CROSSROOT" verify "$TWO" >/dev/null 2>&1
	python3 - "$R/one/package" "$R/two/package" <<'EOT'
import glob, sys
def entries(d):
    m = open(glob.glob(d + "/*.manifest")[0]).read().splitlines()
    return {l.split("\t")[-1]: l for l in m if l[:2] in ("f\t", "l\t", "d\t")}
a, b = entries(sys.argv[1]), entries(sys.argv[2])
for p in sorted(set(a) | set(b)):
    if a.get(p) != b.get(p):
        print("differs:", p)
EOT
fi
start=$(date +%s)
run "$CROSSROOT" -C "$PROJECT" --work "$R/three/work" --cache "$R/one/cache" --out "$R/three/sysroots" $MIRROR \
	package "$TARGET" -o "$R/three/package"
check "a third build restored from the first one's stage cache" 0 "package $TARGET:"
THREE=$(ls "$R"/three/package/"$TARGET"-*.tar.zst)
assert "the restored build gives the same sha256" test "$(sha256 "$THREE")" = "$(sha256 "$ONE")"
echo $(( $(date +%s) - start )) >"$R/three.seconds"

# unpacked elsewhere by another user: verified, then hello.c and hello.cpp under qemu
N=$T/elsewhere   # under /tmp: the project's work/ may be closed to other users
mkdir -p "$N"
chmod 755 "$T"
chown nobody "$N"
AS="setpriv --reuid=nobody --regid=nogroup --clear-groups --reset-env"
printf '#include <stdio.h>\nint main(void){puts("hello from c");return 0;}\n' >"$T/hello.c"
printf '#include <iostream>\n#include <stdexcept>\nint main(){try{throw std::runtime_error("thrown");}catch(const std::exception &e){std::cout << "hello from c++ " << e.what() << std::endl;}}\n' >"$T/hello.cpp"
chmod 644 "$T/hello.c" "$T/hello.cpp"
cp "$ONE" "$T/package.tar.zst"
chmod 644 "$T/package.tar.zst"
run $AS sh -c "cd '$N' && tar -xf '$T/package.tar.zst'"
check "nobody unpacks the package" 0
S=$N/$TARGET
run $AS "$CROSSROOT" verify "$S"
check "nobody verifies the unpacked tree" 0 "verified $S"
for link in dynamic static; do
	flag=
	[ $link = static ] && flag=-static
	run $AS sh -c "cd '$N' && '$S/bin/$TARGET-clang' $flag '$T/hello.c' -o hello-c-$link && '$S/bin/$TARGET-run' ./hello-c-$link"
	check "hello.c ($link) built and run by nobody from the unpacked package" 0 "hello from c"
	run $AS sh -c "cd '$N' && '$S/bin/$TARGET-clang++' $flag '$T/hello.cpp' -o hello-cpp-$link && '$S/bin/$TARGET-run' ./hello-cpp-$link"
	check "hello.cpp ($link) built and run by nobody from the unpacked package" 0 "hello from c++ thrown"
done
run $AS sh -c "'$S/bin/$TARGET-readelf' -l '$N/hello-cpp-dynamic'"
check "the dynamic program asks for the target's loader" 0 "Requesting program interpreter: /lib/ld-musl-"
run sh -c "grep -rlF '$R/one' '$S' || true"
assert "no file of the unpacked package names the first build's directories" test ! -s "$T/out"

size() { stat -c %s "$1"; }
echo "==== check-repro figures for $TARGET"
echo "package           $(basename "$ONE")"
echo "sha256 build one  $(sha256 "$ONE")"
echo "sha256 build two  $(sha256 "$TWO")"
echo "sha256 restored   $(sha256 "$THREE")"
echo "size zstd         $(size "$ONE") bytes"
echo "size xz           $(size "$XZ") bytes ($(sha256 "$XZ"))"
echo "time build one    $(cat "$R/one.seconds") s (cold, with packaging as zstd and xz)"
echo "time build two    $(cat "$R/two.seconds") s (cold, with packaging as zstd)"
echo "time restored     $(cat "$R/three.seconds") s"
finish
