#!/bin/sh
# crossroot binfmt: a target program executed directly runs under qemu through the run wrapper
# (build-tree library paths kept, the host's dropped); --remove undoes it; one entry per
# machine; a target the host runs natively is refused. Needs root (binfmt_misc is global).
. "$(dirname "$0")/../lib/common.sh"
if [ "$(id -u)" != 0 ] || ! command -v qemu-aarch64-static >/dev/null; then
	echo "skip   binfmt (needs root and qemu-aarch64-static)"
	finish
	exit $?
fi
P=$T/p
new_project "$P"
echo 'name: second
steps: ["mkdir -p ${destdir}/usr/lib"]' >"$P/stages/second.yaml"
cp "$P/targets/toy.yaml" "$P/targets/toy2.yaml"
printf 'triple: x86_64-unknown-linux-musl\nqemu: qemu-x86_64-static\nstages: [second]\n' >"$P/targets/native.yaml"
C="$CROSSROOT -C $P --work $T/work --out $T/sysroots"
run $C build toy toy2 native
check "toy sysroots" 0 "sysroot toy"
S=$T/sysroots/toy
B=/proc/sys/fs/binfmt_misc
trap '$C binfmt --remove toy toy2 >/dev/null 2>&1; cleanup' EXIT

clang-19 --target=aarch64-linux-musl -ffreestanding -nostdlib -static -fuse-ld=lld -O1 \
	"$ROOT/tests/data/envprint-aarch64.c" -o "$T/envprint"
run "$T/envprint" before
assert "unregistered, the program does not run on the host" test "$STATUS" != 0 -a -z "$(grep -x before "$T/out")"

run $C binfmt toy
check "register" 0 "binfmt: aarch64 programs now run through $S/bin/toy-run" "--remove toy"
assert "the entry names the run wrapper" grep -qx "interpreter $S/bin/toy-run" "$B/crossroot-toy"
run env LD_LIBRARY_PATH="/usr/lib/x86_64-linux-gnu:$T/bt/.libs" "$T/envprint" direct 'two words'
check "executed directly, it runs under qemu" 0 "direct" "two words"
assert "a build tree's library path passes, the host's does not" grep -qx "LD_LIBRARY_PATH=$T/bt/.libs" "$T/out"

# a build step that runs a target program (a configure check) sees it fail, binfmt or not
cat >"$P/stages/probe.yaml" <<EOT
name: probe
steps:
  - mkdir -p \${destdir}/usr && if $T/envprint; then echo ran >\${destdir}/usr/probe; else echo refused >\${destdir}/usr/probe; fi
EOT
sed 's/^stages: .*/stages: [probe]/' "$P/targets/toy.yaml" >"$P/targets/probe.yaml"
run $C build probe
check "a stage with a configure-like check" 0
assert "target programs do not run inside build steps" grep -qx refused "$T/sysroots/probe/usr/probe"
# Steps do not see the sysroots, where the registered run wrapper lives: the kernel finds no
# interpreter. Where steps cannot be sandboxed, the wrapper itself refuses (CROSSROOT_STAGE).
assert "and the log says why" grep -q "do not run inside crossroot's build steps (stage probe)\|envprint: not found" "$T/work/logs/probe/probe.log"

run $C binfmt toy2
check "another target of the same machine replaces the entry" 0 "crossroot-toy2 replaces crossroot-toy"
assert "only one entry" test ! -e "$B/crossroot-toy" -a -e "$B/crossroot-toy2"
run "$T/envprint" via-toy2
check "and runs it" 0 via-toy2

# a registration the kernel refuses (a run wrapper path past binfmt_misc's 1920-byte line)
# leaves the entry it would have replaced in place
LONG=$T/$(printf 'l%.0s' $(seq 250))/$(printf 'o%.0s' $(seq 250))/$(printf 'n%.0s' $(seq 250))
LONG=$LONG/$(printf 'g%.0s' $(seq 250))/$(printf 'p%.0s' $(seq 250))/$(printf 'a%.0s' $(seq 250))
LONG=$LONG/$(printf 't%.0s' $(seq 250))/$(printf 'h%.0s' $(seq 200))
mkdir -p "$LONG/toy/bin"
cp "$S/bin/toy-run" "$LONG/toy/bin/toy-run"
run $CROSSROOT -C "$P" --work "$T/work" --out "$LONG" binfmt toy
check "a refused registration is an error" 1
assert "  (and the entry it would have replaced is still registered, as it was)" \
	grep -qx "interpreter $T/sysroots/toy2/bin/toy2-run" "$B/crossroot-toy2"
run "$T/envprint" still-toy2
check "  (and still runs programs)" 0 still-toy2

run $C binfmt --remove toy2
check "remove" 0 "binfmt: removed crossroot-toy2"
assert "the entry is gone" test ! -e "$B/crossroot-toy2"
run "$T/envprint" after
assert "the program no longer runs" test "$STATUS" != 0 -a -z "$(grep -x after "$T/out")"
run $C binfmt --remove toy2
check "removing again says so" 0 "was not registered"

run $C binfmt native
check "a target the host runs natively is refused" 1 "this host runs x86_64 programs itself"
assert "no entry for it" test ! -e "$B/crossroot-native"
run $C build --remove toy
check "--remove belongs to binfmt" 2 "--remove is for 'crossroot binfmt'"
finish
