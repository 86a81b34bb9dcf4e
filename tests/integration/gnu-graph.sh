#!/bin/sh
# The shape of the GNU runtimes' graph, on toy stages (the real one is make check-gnu): a source
# that is an archive inside a download (Debian's gcc orig tarball), fetched over loopback and
# verified before it is used; a stage compiled by a tools stage while the target's compiler
# stays the host clang (stage `toolchain`); a target overriding that choice (stage_toolchain);
# bootstrap headers superseded by the full ones; and a combination made by substitution,
# sharing the stages it has in common.
. "$(dirname "$0")/../lib/common.sh"
start_server
P=$T/p
mkdir -p "$P/targets" "$P/stages" "$P/sources" "$P/patches" "$T/inner/cc-1" "$T/outer/cc-pkg"

# an archive of archives: the inner one is what the source is
write_toy_compiler "$T/inner/cc-1/gnucc" gnucc
tar -C "$T/inner" -czf "$T/outer/cc-pkg/cc-1.tar.gz" cc-1
echo "not the compiler" >"$T/outer/cc-pkg/other.txt"
tar -C "$T/outer" -cJf "$T/www/cc_1.orig.tar.xz" cc-pkg
OUTER=$(sha256 "$T/www/cc_1.orig.tar.xz")
INNER=$(sha256 "$T/outer/cc-pkg/cc-1.tar.gz")
write_cc_source() {   # write_cc_source MEMBER MEMBER_SHA256
	cat >"$P/sources/cc.yaml" <<EOT
name: cc
version: "1"
origins:
  - url: $BASE/ok/cc_1.orig.tar.xz
    sha256: $OUTER
member: $1
member-sha256: $2
EOT
}
write_cc_source cc-pkg/cc-1.tar.gz "$(echo "$INNER" | tr 0-9a-f 1-9a-f0 | cut -c1-64)"

cat >"$P/stages/gnucc.yaml" <<'EOT'
name: gnucc
sources: [cc]
installs: tools
provides:
  cc: bin/${triple}-gnucc
steps:
  - mkdir -p ${destdir}/bin && cp ${src}/gnucc ${destdir}/bin/${triple}-gnucc
EOT
# the C library is a fact of each target (`libc: toylibc`): a new one needs no change in C
cat >"$P/stages/toylibc-headers.yaml" <<'EOT'
name: toylibc-headers
steps:
  - mkdir -p ${destdir}/usr/include && echo bootstrap >${destdir}/usr/include/stubs.h && echo same >${destdir}/usr/include/api.h
EOT
cat >"$P/stages/toylibc.yaml" <<'EOT'
name: toylibc
depends: [libc-headers]
toolchain: [gnucc]
supersedes: [libc-headers]
steps:
  - grep -q bootstrap ${sysroot}/usr/include/stubs.h
  - mkdir -p ${destdir}/usr/include ${destdir}/usr/lib && echo full >${destdir}/usr/include/stubs.h && echo same >${destdir}/usr/include/api.h
  - echo 'int x;' >x.c && ${cc} -c x.c -o ${destdir}/usr/lib/libc.o
EOT
cat >"$P/stages/other-libc.yaml" <<'EOT'
name: other-libc
steps:
  - mkdir -p ${destdir}/usr/lib && echo other >${destdir}/usr/lib/libc.o
EOT
cat >"$P/stages/runtime.yaml" <<'EOT'
name: runtime
depends: [libc]
steps:
  - mkdir -p ${destdir}/usr/lib && cat ${sysroot}/usr/lib/libc.o >${destdir}/usr/lib/runtime.txt && echo "${cc}" >>${destdir}/usr/lib/runtime.txt
EOT
for name in gnu combo host; do
	cat >"$P/targets/$name.yaml" <<'EOT'
triple: aarch64-unknown-linux-gnu
libc: toylibc
qemu: qemu-aarch64-static
stages: [runtime]
EOT
done
echo 'substitute: {libc: other-libc}' >>"$P/targets/combo.yaml"
echo 'stage_toolchain: {toylibc: host}' >>"$P/targets/host.yaml"
C="$CROSSROOT -C $P --work $T/work --out $T/sysroots"

run $C build gnu
check "a member that does not match its pin is refused (exit 3)" 3 \
	"member 'cc-pkg/cc-1.tar.gz' of" "has sha256 $INNER, expected"
assert "nothing was extracted from it" sh -c "! ls '$T/work/src' 2>/dev/null | grep -q '^cc-'"

write_cc_source cc-pkg/missing.tar.gz "$INNER"
run $C build gnu
check "a member the archive does not have is refused (exit 3)" 3 "has no member 'cc-pkg/missing.tar.gz'"

write_cc_source cc-pkg/cc-1.tar.gz "$INNER"
run $C build gnu
check "the member is verified and used" 0 "build   gnucc (gnu)" "build   toylibc (gnu)" "build   runtime (gnu)"
assert "the member is in the download cache under its own sha256" test -f "$T/work/cache/downloads/$INNER"
assert "libc was compiled by the tools stage" grep -q "compiled by gnucc: --sysroot=" "$T/sysroots/gnu/usr/lib/libc.o"
assert "runtime, with no toolchain of its own, uses the host clang" grep -q "clang --target=aarch64-unknown-linux-gnu" "$T/sysroots/gnu/usr/lib/runtime.txt"
assert "the full headers supersede the bootstrap ones" grep -qx full "$T/sysroots/gnu/usr/include/stubs.h"
assert "the target's compiler is still clang" grep -q "clang" "$T/sysroots/gnu/bin/gnu-clang"
assert "the tools stage is not shipped" test ! -e "$T/sysroots/gnu/toolchain"

run $C build host
check "stage_toolchain: host builds libc with clang instead" 0 "build   toylibc (host)"
assert "libc compiled by the host clang (an object, not the tools stage's text)" sh -c "! grep -q 'compiled by gnucc' '$T/sysroots/host/usr/lib/libc.o' && test -s '$T/sysroots/host/usr/lib/libc.o'"
run $C plan host
check "the host-built libc does not depend on gnucc" 0 "toylibc                  cached"
assert "host's plan has no gnucc" sh -c "! grep -q gnucc '$T/out'"

run $C build combo
check "a substituted stage replaces the other everywhere in the graph" 0 "build   other-libc (combo)" "build   runtime (combo)"
assert "combo's runtime saw other-libc" grep -q "^other" "$T/sysroots/combo/usr/lib/runtime.txt"
assert "combo has no libc stage of its own" sh -c "! grep -q ' toylibc (combo)' '$T/out'"
assert "combo shares libc-headers with gnu? no: it never needs them" sh -c "! grep -q 'toylibc-headers (combo)' '$T/out'"

# a second target with the same machine shares the stages' results (keys do not hold the name)
cp "$P/targets/gnu.yaml" "$P/targets/gnu2.yaml"
run $C build gnu2
check "a target with the same machine and stages builds nothing" 0 "sysroot gnu2"
assert "nothing was built for gnu2" sh -c "! grep -q '^build ' '$T/out'"

# ${libc} is the target's fact; a stage needing the role on a target without one is refused
printf 'name: which\nsteps:\n  - mkdir -p ${destdir}/usr/share && echo ${libc} >${destdir}/usr/share/libc\n' >"$P/stages/which.yaml"
printf 'triple: aarch64-unknown-linux-musl\nlibc: toylibc\nqemu: qemu-aarch64-static\nstages: [which]\n' >"$P/targets/which.yaml"
run $C build which
check "\${libc} is the target's libc, whatever the triple says" 0 "sysroot which"
assert "(toylibc)" grep -qx toylibc "$T/sysroots/which/usr/share/libc"
printf 'triple: aarch64-unknown-linux-gnu\nqemu: qemu-aarch64-static\nstages: [runtime]\n' >"$P/targets/nolibc.yaml"
run $C plan nolibc
check "a stage needing the libc role on a target that names no libc is refused, naming both" 2 \
	"stage 'runtime' depends on the role 'libc'" "nolibc.yaml"

# two targets that share stages, built in one run: each shared stage is built once
for name in tw1 tw2; do
	sed 's/^stages:/cflags: [-O1]\nstages:/' "$P/targets/gnu.yaml" >"$P/targets/$name.yaml"
done
run $C build tw1 tw2
check "two targets sharing stages build in one run" 0 "sysroot tw1" "sysroot tw2"
assert "the shared libc was built once" test "$(grep -c '^build   toylibc (tw' "$T/out")" = 1
assert "the other target took it from the cache" grep -q "cached  toylibc (tw[12]): built for tw[12] in this run" "$T/out"
finish
