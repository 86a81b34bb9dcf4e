#!/bin/sh
# The engine on a synthetic target with sources on a loopback server: fetch fallback, a wrong
# sha256, a failing step, the no-op run, incremental rebuilds and the work directory lock.
. "$(dirname "$0")/../lib/common.sh"
start_server
make_tarball toy 1.0
SUM=$(sha256 "$T/www/toy-1.0.tar.gz")
P=$T/p
new_project "$P"
cat >"$P/sources/toy.yaml" <<EOT
name: toy
version: "1.0"
origins:
  - url: $BASE/404/toy-1.0.tar.gz
    sha256: $SUM
  - url: $BASE/ok/toy-1.0.tar.gz
    sha256: $SUM
EOT
cat >"$P/stages/first.yaml" <<'EOT'
name: first
sources: [toy]
steps:
  - cp ${src}/data.txt out.txt
  - mkdir -p ${destdir}/usr/share/toy && cp out.txt ${destdir}/usr/share/toy/first.txt
EOT
cat >"$P/stages/second.yaml" <<'EOT'
name: second
depends: [first]
steps:
  - test -f ${sysroot}/usr/share/toy/first.txt
  - mkdir -p ${destdir}/usr/share/toy && echo "${greeting} from ${target}" > ${destdir}/usr/share/toy/second.txt
EOT
C="$CROSSROOT -C $P --work $T/work --out $T/sysroots"

run $C build toy
check "build falls back to the next origin after a 404" 0 "$BASE/404/toy-1.0.tar.gz" \
	"fetched toy 1.0" "sha256 verified" "sysroot toy: $T/sysroots/toy"
assert "stage outputs assembled into the sysroot" grep -q "hello from toy" "$T/sysroots/toy/usr/share/toy/second.txt"
assert "clang config generated" grep -q -- "--target=aarch64-unknown-linux-musl" "$T/sysroots/toy/bin/toy.cfg"
assert "download cache holds the verified file under its hash" test -f "$T/work/cache/downloads/$SUM"

start=$(date +%s%N)
run $C build toy
end=$(date +%s%N)
check "second run has nothing to do" 0 "sysroot toy"
ms=$(( (end - start) / 1000000 ))
if [ "$ms" -lt 1000 ]; then ok "no-op run took ${ms} ms (< 1000)"; else not_ok "no-op run took ${ms} ms"; fi
run $C plan toy
check "plan shows everything cached" 0 "first                    cached" "second                   cached"
# libcurl and libarchive (and the ~40 libraries they need) load on first use (lazylib.h)
LD_DEBUG=files $C build toy >"$T/libs" 2>&1
assert "a no-op build loads neither libcurl nor libarchive" \
	sh -c "! grep -E 'file=(libcurl|libarchive)' '$T/libs'"
LD_DEBUG=files $C plan toy >"$T/libs" 2>&1
assert "nor does plan" sh -c "! grep -E 'file=(libcurl|libarchive)' '$T/libs'"

# Changing one input rebuilds exactly what depends on it.
sed -i 's/echo "${greeting} from ${target}"/echo "${greeting} again from ${target}"/' "$P/stages/second.yaml"
run $C plan toy
check "plan names the changed recipe" 0 "first                    cached" "second                   to build" "recipe changed"
run $C build toy
check "only the changed stage is rebuilt" 0 "build   second (toy)"
assert "first was not rebuilt" sh -c "! grep -q 'build   first' $T/out"

# Pruning keeps what the current recipes need and drops the superseded result.
assert "three stage results before pruning" test "$(ls "$T/work/cache/stages" | wc -l)" = 3
run $C prune --keep 0
check "prune drops the superseded result" 0 "pruned 1 stage results and 0 downloads"
run $C plan toy
check "after pruning, everything current is still cached" 0 "first                    cached" "second                   cached"

# A wrong pin: the error names URL, expected and actual hash; nothing enters the cache.
make_tarball bad 2.0
GOOD=$(sha256 "$T/www/bad-2.0.tar.gz")
WRONG=0000000000000000000000000000000000000000000000000000000000000000
cat >"$P/sources/bad.yaml" <<EOT
name: bad
version: "2.0"
origins:
  - url: $BASE/ok/bad-2.0.tar.gz
    sha256: $WRONG
EOT
printf 'name: usesbad\nsources: [bad]\nsteps: [true]\n' >"$P/stages/usesbad.yaml"
printf 'triple: a-b-c\nqemu: q\nstages: [usesbad]\n' >"$P/targets/bad.yaml"
run $C build bad
check "wrong sha256 is an error naming URL, expected and actual" 3 \
	"sha256 mismatch for $BASE/ok/bad-2.0.tar.gz" "expected $WRONG, got $GOOD" "every origin failed"
assert "nothing unverified in the download cache" sh -c \
	"test ! -e $T/work/cache/downloads/$WRONG && test ! -e $T/work/cache/downloads/$GOOD && test -z \"\$(ls $T/work/cache/downloads/tmp)\""

# Corrupted bytes from the server are caught the same way.
sed -i "s|sha256: $WRONG|sha256: $GOOD|; s|/ok/bad|/flip/bad|" "$P/sources/bad.yaml"
run $C build bad
check "corrupted download is refused" 3 "sha256 mismatch" "expected $GOOD"

# A failing step names the stage, the step, the command and the log, and shows its end.
cat >"$P/stages/fails.yaml" <<'EOT'
name: fails
steps:
  - echo preparing
  - echo "about to fail" && ls /no/such/path
EOT
printf 'triple: a-b-c\nqemu: q\nstages: [fails]\n' >"$P/targets/fails.yaml"
run $C build fails
check "failing step is reported with stage, command and log" 1 \
	"stage 'fails' of target 'fails' failed: step 2 of 2 ($P/stages/fails.yaml:4) exited with status 2" \
	"ls /no/such/path" "log: $T/work/logs/fails/fails.log" "about to fail" "No such file or directory"
assert "failed stage left nothing in the stage cache" sh -c "! grep -rqs fails $T/work/cache/stages/*/inputs"
# With -k a target that failed nothing still gets its sysroot; without it, the run stops.
rm -rf "$T/sysroots/toy"
run $C build fails toy
check "without -k the run stops at the failure" 1 "stage 'fails' of target 'fails' failed"
assert "the other target, whole in the stage cache, still got its sysroot" grep -q "sysroot toy: $T/sysroots/toy (ready" "$T/out"
run $C build -k fails toy
check "-k: the target that failed nothing gets its sysroot" 1 "stage 'fails' of target 'fails' failed" \
	"sysroot toy: $T/sysroots/toy (ready"
assert "-k: that sysroot is complete" grep -q "hello again from toy" "$T/sysroots/toy/usr/share/toy/second.txt"
assert "-k: none for the failed target" test ! -e "$T/sysroots/fails"

# Two runs on one work directory: the second fails clearly (or waits with --wait).
cat >"$P/stages/slow.yaml" <<'EOT'
name: slow
steps:
  - sleep 3
  - mkdir -p ${destdir}/x && echo slow > ${destdir}/x/slow
EOT
printf 'triple: a-b-c\nqemu: q\nstages: [slow]\n' >"$P/targets/slow.yaml"
$C build slow >"$T/first.out" 2>&1 &
first=$!
sleep 1
run $C build slow
check "concurrent run on the same work dir is refused" 4 "is in use by another crossroot (pid $first)"
run $C plan slow
check "plan answers while a build runs (it only reads)" 0 "slow                     to build"
run $C build --wait slow
check "--wait waits for the other run, then finds the work done" 0 "waiting for crossroot" "sysroot slow"
wait $first
assert "the first run succeeded" grep -q "sysroot slow" "$T/first.out"
# A target chooses another version of a source (`versions`): sources/toy-2.0.yaml, its own
# patches from patches/toy/2.0/; the other targets keep sources/toy.yaml and their stages.
make_tarball toy 2.0
SUM2=$(sha256 "$T/www/toy-2.0.tar.gz")
printf 'name: toy\nversion: "2.0"\norigins:\n  - url: %s/ok/toy-2.0.tar.gz\n    sha256: %s\n' \
	"$BASE" "$SUM2" >"$P/sources/toy-2.0.yaml"
mkdir -p "$P/patches/toy/2.0"
printf -- '--- a/data.txt\n+++ b/data.txt\n@@ -1 +1 @@\n-toy 2.0 data\n+toy 2.0 data, patched\n' \
	>"$P/patches/toy/2.0/0001-data.patch"
sed 's/^stages:.*/stages: [second]\nversions: {toy: "2.0"}/' "$P/targets/toy.yaml" >"$P/targets/toy2.yaml"
run $C build toy toy2
check "versions: both targets build" 0 "fetched toy 2.0" "sysroot toy2"
assert "versions: the chosen version, patched" grep -qx "toy 2.0 data, patched" "$T/sysroots/toy2/usr/share/toy/first.txt"
assert "versions: the other target keeps its own" grep -qx "toy 1.0 data" "$T/sysroots/toy/usr/share/toy/first.txt"
run $C plan toy toy2
check "versions: nothing left to do" 0 "first                    cached"
printf 'name: toy\nversion: "3.0"\norigins:\n  - url: %s/ok/toy-3.0.tar.gz\n    sha256: %s\n' \
	"$BASE" "$SUM2" >"$P/sources/toy-2.5.yaml"
sed 's/"2.0"/"2.5"/' "$P/targets/toy2.yaml" >"$P/targets/toy25.yaml"
run $C plan toy25
check "versions: a file that holds another version is refused" 2 \
	"$P/sources/toy-2.5.yaml:1:7: name 'toy' and version '3.0' do not match the file name 'toy-2.5'"
sed 's/{toy: "2.0"}/{toy: "9"}/' "$P/targets/toy2.yaml" >"$P/targets/toy9.yaml"
run $C plan toy9
check "versions: a version without a file" 2 "$P/targets/toy9.yaml:4:11" "toy-9.yaml"
sed 's/{toy: "2.0"}/{toy: "2.0", other: "1"}/' "$P/targets/toy2.yaml" >"$P/targets/unused.yaml"
printf 'name: other\nversion: "1"\norigins:\n  - url: %s/ok/x\n    sha256: %s\n' "$BASE" "$SUM2" >"$P/sources/other-1.yaml"
run $C plan unused
check "versions: a source no stage uses" 2 "$P/targets/unused.yaml:4:11: versions names source 'other', which no stage of target 'unused' uses"
# A target's own patch set (`patches: {toy: fix-one}`): patches/toy/1.0/fix-one/ applies to its
# tree after the version's patches; the other targets keep their tree and their keys.
mkdir -p "$P/patches/toy/1.0/fix-one"
printf -- '--- a/data.txt\n+++ b/data.txt\n@@ -1 +1 @@\n-toy 1.0 data\n+toy 1.0 data, fixed for one\n' \
	>"$P/patches/toy/1.0/fix-one/0001-data.patch"
sed 's/^stages:.*/stages: [second]\npatches: {toy: fix-one}/' "$P/targets/toy.yaml" >"$P/targets/toyp.yaml"
run $C build toy toyp
check "patches: both targets build" 0 "sysroot toyp" "first (toy)                                  cached"
assert "patches: the target's tree has its patch set" grep -qx "toy 1.0 data, fixed for one" "$T/sysroots/toyp/usr/share/toy/first.txt"
assert "patches: the other target keeps its tree, not rebuilt" sh -c \
	"grep -qx 'toy 1.0 data' $T/sysroots/toy/usr/share/toy/first.txt && ! grep -q 'build   first (toy)' $T/out"
printf 'name: picky\nsources: [toy]\nunsupported: {aarch64: toy needs a fix there}\nsteps: [true]\n' >"$P/stages/picky.yaml"
printf 'triple: aarch64-unknown-linux-musl\nqemu: q\nstages: [picky]\n' >"$P/targets/pk1.yaml"
run $C plan pk1
check "patches: an unsupported architecture stops at plan time" 2 "stage 'picky' cannot be built for aarch64-unknown-linux-musl" "toy needs a fix there"
printf 'triple: aarch64-unknown-linux-musl\nqemu: q\nstages: [picky]\npatches: {toy: fix-one}\n' >"$P/targets/pk2.yaml"
run $C plan pk2
check "patches: a target that patches the stage's source for itself may build it" 0 "picky                    to build"
# fixed_in: a later version of the stage's first source builds the architecture
printf 'name: picky\nsources: [toy]\nunsupported:\n  aarch64: {why: toy 1 lacks it, fixed_in: "2.0"}\nsteps: [true]\n' >"$P/stages/picky.yaml"
run $C plan pk1
check "unsupported fixed_in: the older version stops at plan time" 2 "toy 1 lacks it"
printf 'triple: aarch64-unknown-linux-musl\nqemu: q\nstages: [picky]\nversions: {toy: "2.0"}\n' >"$P/targets/pk3.yaml"
run $C plan pk3
check "unsupported fixed_in: the version that has it builds" 0 "picky                    to build"
printf 'name: picky\nsources: [toy]\nunsupported:\n  aarch64: {why: x, fixed: "2.0"}\nsteps: [true]\n' >"$P/stages/picky.yaml"
run $C plan pk3
check "unsupported: an unknown key in an entry" 2 "picky.yaml:4:21: unknown key 'fixed'"
sed 's/fix-one/fix-two/' "$P/targets/toyp.yaml" >"$P/targets/toyq.yaml"
run $C plan toyq
check "patches: a patch set without a directory" 2 "$P/targets/toyq.yaml:4:10: patch set 'fix-two' of toy 1.0: no directory $P/patches/toy/1.0/fix-two"
sed 's/{toy: fix-one}/{toy: fix-one, other: fix-one}/' "$P/targets/toyp.yaml" >"$P/targets/toyr.yaml"
run $C plan toyr
check "patches: an unknown source" 2 "$P/targets/toyr.yaml:4:10: unknown source 'other'"
sed 's/version: "1"/version: "1.0"/' "$P/sources/other-1.yaml" >"$P/sources/other.yaml"
mkdir -p "$P/patches/other/1.0/fix-one"
run $C plan toyr
check "patches: a source no stage uses" 2 "$P/targets/toyr.yaml:4:10: patches names source 'other', which no stage of target 'toyr' uses"
# `machine:` - of the target's machine only the listed facts enter a stage's key: two targets
# that differ elsewhere (triple, cflags) share the stage, built once; another linux_arch does not.
cat >"$P/stages/hdrs.yaml" <<'EOT'
name: hdrs
machine: [linux_arch]
steps:
  - mkdir -p ${destdir}/usr/include && echo "arch ${linux_arch}" > ${destdir}/usr/include/arch.h
EOT
printf 'triple: aarch64-unknown-linux-musl\nqemu: q\nlinux_arch: arm64\nstages: [hdrs]\n' >"$P/targets/h1.yaml"
printf 'triple: aarch64-unknown-linux-gnu\nqemu: q\nlinux_arch: arm64\ncflags: [-O1]\nstages: [hdrs]\n' >"$P/targets/h2.yaml"
printf 'triple: riscv64-unknown-linux-musl\nqemu: q\nlinux_arch: riscv\nstages: [hdrs]\n' >"$P/targets/h3.yaml"
run $C build h1 h2 h3
check "machine: three targets build" 0 "sysroot h1" "sysroot h2" "sysroot h3"
assert "machine: the two arm64 targets share one build ($(grep -c '^build   hdrs' $T/out) builds for 3 targets)" \
	test "$(grep -c '^build   hdrs' "$T/out")" = 2
assert "machine: each sysroot has its arch's headers" sh -c "grep -qx 'arch arm64' $T/sysroots/h2/usr/include/arch.h && grep -qx 'arch riscv' $T/sysroots/h3/usr/include/arch.h"
# a machine-keyed stage's steps cannot learn the target's name from any path they see
cat >"$P/stages/leaky.yaml" <<'EOT'
name: leaky
machine: [linux_arch]
steps:
  - mkdir -p ${destdir}/usr && echo "${sysroot} ${build} ${destdir} ${tools} $PWD $(pwd)" > ${destdir}/usr/leak
  - cat ../toolchain.cmake >> ${destdir}/usr/leak 2>/dev/null || true; ls .. ../.. >> ${destdir}/usr/leak
EOT
printf 'triple: aarch64-unknown-linux-musl\nqemu: q\nlinux_arch: arm64\nstages: [leaky]\n' >"$P/targets/alphatgt.yaml"
printf 'triple: aarch64-unknown-linux-gnu\nqemu: q\nlinux_arch: arm64\nstages: [leaky]\n' >"$P/targets/betatgt.yaml"
run $C build alphatgt betatgt
check "machine: a stage that writes its paths builds" 0 "sysroot alphatgt" "sysroot betatgt"
assert "machine: it is built once for both targets" test "$(grep -c '^build   leaky' "$T/out")" = 1
# a target's sysroot is assembled when its last stage is done, while another target still builds
cat >"$P/stages/quick.yaml" <<'EOT'
name: quick
steps:
  - mkdir -p ${destdir}/usr && echo quick > ${destdir}/usr/quick
EOT
cat >"$P/stages/lagging.yaml" <<'EOT'
name: lagging
steps:
  - sleep 3; mkdir -p ${destdir}/usr && echo lagging > ${destdir}/usr/lagging
EOT
printf 'triple: aarch64-unknown-linux-musl\nqemu: q\nstages: [quick]\n' >"$P/targets/early.yaml"
printf 'triple: aarch64-unknown-linux-musl\nqemu: q\nstages: [lagging]\n' >"$P/targets/late.yaml"
run $C build -j2 early late
check "two targets, one slow" 0 "sysroot early: $T/sysroots/early (ready; the run goes on)"
assert "the quick target's sysroot came before the slow stage was done" \
	test "$(grep -n 'sysroot early.*ready' "$T/out" | cut -d: -f1)" -lt "$(grep -n '^done    lagging' "$T/out" | cut -d: -f1)"
assert "both sysroots are there at the end" test -f "$T/sysroots/early/usr/quick" -a -f "$T/sysroots/late/usr/lagging"
# a target found whole in the stage cache is assembled before the other's stages start
rm -rf "$T/sysroots/early"
sed -i 's/sleep 3;/sleep 2;/' "$P/stages/lagging.yaml"
run $C build -j2 early late
check "the cached target and the one to build" 0 "sysroot early: $T/sysroots/early (ready; the run goes on)"
assert "the cached target's sysroot came before the slow stage was built" \
	test "$(grep -n 'sysroot early.*ready' "$T/out" | cut -d: -f1)" -lt "$(grep -n '^build   lagging' "$T/out" | cut -d: -f1)"
assert "machine: no path its steps see names the target" \
	sh -c "test -s $T/sysroots/betatgt/usr/leak && ! grep -q -e alphatgt -e betatgt $T/sysroots/betatgt/usr/leak"
printf 'name: badmachine\nmachine: [linux_arch]\nsteps:\n  - echo ${linux_arch}\n  - echo ${triple}\n' >"$P/stages/badmachine.yaml"
printf 'triple: aarch64-unknown-linux-musl\nqemu: q\nlinux_arch: arm64\nstages: [badmachine]\n' >"$P/targets/bm.yaml"
run $C plan bm
check "machine: a step using a fact it does not list is refused at its line" 2 \
	"$P/stages/badmachine.yaml:5:5: this step uses \${triple}, which carries the target's triple; 'machine' must list it"
printf 'name: badfact\nmachine: [kernel]\nsteps: [true]\n' >"$P/stages/badfact.yaml"
printf 'triple: aarch64-unknown-linux-musl\nqemu: q\nstages: [badfact]\n' >"$P/targets/bf.yaml"
run $C plan bf
check "machine: an unknown fact" 2 "$P/stages/badfact.yaml:2:10: machine lists facts of the target's machine"
finish
